//! Exports for the STOP brake and processing stops.

use napi::Env;
use napi_derive::napi;

use super::{after, export, keep, Dir, Js, JsResult, Val};
use crate::ground::error::{JournalError, ThrownCode};
use crate::{identity, stop};

/// `JSON.stringify({ at: new Date().toISOString(), reason })`, failing with
/// the `code` of what it threw. A string reason is written here (serde_json
/// escapes a well-formed string exactly as JSON.stringify does); any other
/// value goes through V8.
pub fn stop_line<'e>(js: Js<'e>, reason: Val<'e>) -> JsResult<Result<String, ThrownCode>> {
  js.catching(|| {
    let at = js.now_iso()?;
    if let Some(units) = js.string_of(reason)?.map(|_| js.units(reason)).transpose()? {
      if let Ok(text) = String::from_utf16(&units) {
        return Ok(stop_line_text(&at, &text));
      }
    }
    let obj = js.object()?;
    js.set(obj, "at", js.str(&at)?)?;
    js.set(obj, "reason", reason)?;
    Ok(js.stringify(obj)?.unwrap_or_default())
  })
}

/// The STOP line for a reason the addon writes itself, failing with the
/// `code` of what the clock threw.
pub fn own_stop_line<'e>(js: Js<'e>, reason: &str) -> JsResult<Result<String, ThrownCode>> {
  Ok(js.catching(|| js.now_iso())?.map(|at| stop_line_text(&at, reason)))
}

/// The line for a string reason.
pub fn stop_line_text(at: &str, reason: &str) -> String {
  format!("{{\"at\":\"{at}\",\"reason\":{}}}", serde_json::Value::from(reason))
}

/// `requestStop(dir, reason)`: the lock, then STOP opened, then the line
/// (so a STOP that cannot be opened never converts the reason); returns
/// STOP's path.
pub fn append_stop<'e>(js: Js<'e>, dir: &Dir<'e>, reason: Val<'e>) -> JsResult<Val<'e>> {
  stop::with_lock(dir.journal(), || {
    // An exception the line cannot be reduced to a code for (a `code`
    // getter that throws) is the one the call throws.
    let mut thrown = None;
    let appended = stop::append(dir.journal(), || keep(&mut thrown, stop_line(js, reason)));
    after(thrown, appended)
  })?;
  dir.join(js, &["STOP"])
}

#[napi(js_name = "stopRequested")]
pub fn stop_requested<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<bool> {
  export(env, |_| Ok(stop::requested(dir.journal())))
}

#[napi(js_name = "requestStop")]
pub fn request_stop<'e>(env: &'e Env, dir: Dir<'e>, reason: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    // The default applies to undefined only; null is a reason like any other.
    let reason = if js.is(reason, napi::sys::ValueType::napi_undefined)? {
      js.str("stop")?
    } else {
      reason
    };
    append_stop(js, &dir, reason)
  })
}

/// `PROCESSING_GENERATION.test(generation)` (RegExp.test applies ToString).
fn generation<'e>(js: Js<'e>, generation: Val<'e>) -> JsResult<Option<String>> {
  let text = js.utf8(js.to_string(generation)?)?;
  Ok(identity::valid_generation(&text).then_some(text))
}

/// The reference's `processing:${generation}`, made where it is evaluated:
/// a string converts to itself; anything else is converted again, each time.
fn reason<'e>(js: Js<'e>, generation: Val<'e>, checked: &str) -> JsResult<Vec<u16>> {
  if js.is(generation, napi::sys::ValueType::napi_string)? {
    return Ok(stop::processing_reason(checked));
  }
  let mut units: Vec<u16> = "processing:".encode_utf16().collect();
  units.extend(js.units(js.to_string(generation)?)?);
  Ok(units)
}

#[napi(js_name = "requestProcessingStop")]
pub fn request_processing_stop<'e>(env: &'e Env, dir: Val<'e>, gen: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let Some(checked) = generation(js, gen)? else {
      return Err(JournalError::failed("invalid processing generation").into());
    };
    let d = Dir::from(js, dir)?;
    let line = |units: &[u16]| match String::from_utf16(units) {
      Ok(text) => own_stop_line(js, &text),
      // A lone surrogate (only a generation whose toString changes its
      // answer gets here): JSON.stringify escapes it.
      Err(_) => stop_line(js, js.str16(units)?),
    };
    let mut thrown = None;
    let requested = stop::request_processing(d.journal(), || reason(js, gen, &checked), |units| keep(&mut thrown, line(units)));
    after(thrown, requested)?;
    d.join(js, &["STOP"])
  })
}

#[napi(js_name = "clearProcessingStop")]
pub fn clear_processing_stop<'e>(env: &'e Env, dir: Val<'e>, gen: Val<'e>) -> napi::Result<bool> {
  export(env, |js| {
    let Some(checked) = generation(js, gen)? else { return Ok(false) };
    let d = Dir::from(js, dir)?;
    stop::clear_processing(d.journal(), || reason(js, gen, &checked))
  })
}

#[napi(js_name = "clearStop")]
pub fn clear_stop<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<()> {
  export(env, |_| Ok(stop::clear(dir.journal())?))
}

#[napi(js_name = "readStop")]
pub fn read_stop<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let lines = stop::read(dir.journal())?;
    let arr = js.array(lines.len())?;
    for (i, line) in lines.iter().enumerate() {
      let v = match &line.text {
        Some(text) => js.parse(text)?,
        None => {
          let o = js.object()?;
          js.set(o, "reason", js.null()?)?;
          o
        }
      };
      js.set_index(arr, i as u32, v)?;
    }
    Ok(arr)
  })
}
