//! Exports for process identity: processStart, bootId, identityOf and
//! pidAlive, read from /proc on every call (a cache could answer where the
//! reference's read fails, #10).

use napi::{sys, Env};
use napi_derive::napi;

use super::raw::Fault;
use super::{export, Js, JsResult, Val};
use crate::ground::error::JournalError;
use crate::ground::text::js_number;
use crate::identity;
use crate::lock::Field;

#[napi(js_name = "processStart")]
pub fn process_start<'e>(env: &'e Env, pid: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| start_of(js, pid).and_then(|s| opt_str(js, s)))
}

#[napi(js_name = "bootId")]
pub fn boot_id<'e>(env: &'e Env) -> napi::Result<Val<'e>> {
  export(env, |js| js.alive().and_then(|()| opt_str(js, identity::boot_id())))
}

#[napi(js_name = "identityOf")]
pub fn identity_of<'e>(env: &'e Env, pid: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| identity_object(js, pid))
}

#[napi(js_name = "pidAlive")]
pub fn pid_alive<'e>(env: &'e Env, pid: Val<'e>) -> napi::Result<bool> {
  export(env, |js| alive_of(js, pid))
}

/// The command's (not journal.mjs's): the pid here of the process that a
/// record `{pid, start, boot}` names in a PID namespace below this one, or
/// null.
#[napi(js_name = "ownerElsewhere")]
pub fn owner_elsewhere(env: &Env, pid: f64, start: String, boot: String) -> napi::Result<Option<u32>> {
  export(env, |_| Ok(identity::owner_elsewhere(pid, &start, &boot)))
}

/// The command's (#45): the process `pid` as the kernel shows it, as JSON
/// text `{pid, state, command, stalled, is, fix, parent}`, `parent` its
/// parent's `{pid, command}` (who reaps a zombie) or null; null where no
/// such process is visible here.
#[napi(js_name = "processOf")]
pub fn process_of(env: &Env, pid: u32) -> napi::Result<Option<String>> {
  use crate::ground::holder;
  export(env, |_| {
    if pid == 0 || !std::path::Path::new(&format!("/proc/{pid}")).exists() {
      return Ok(None);
    }
    let mut out = holder::process(pid).to_json();
    let parent = holder::parent(pid).filter(|p| *p > 0).map(|p| {
      let h = holder::process(p);
      serde_json::json!({ "pid": p, "command": h.command })
    });
    out["parent"] = parent.unwrap_or(serde_json::Value::Null);
    Ok(Some(out.to_string()))
  })
}

/// The command's: whether this process sees every process of the machine
/// (an owner it cannot see may be alive where it cannot look).
#[napi(js_name = "seesEveryProcess")]
pub fn sees_every_process(env: &Env) -> napi::Result<bool> {
  export(env, |_| Ok(identity::sees_every_process()))
}

/// `processStart(pid)`: the template `/proc/${pid}/stat` runs inside the
/// reference's try, so a pid that cannot become a string reads as null.
pub fn start_of<'e>(js: Js<'e>, pid: Val<'e>) -> JsResult<Option<String>> {
  // A read of /proc, the one step of these exports that takes time.
  js.alive()?;
  if js.is(pid, sys::ValueType::napi_number)? {
    return Ok(identity::process_start(&js_number(js.number_value(pid)?)));
  }
  let text = match js.to_string(pid) {
    Ok(s) => js.utf8(s)?,
    Err(Fault::Pending) => {
      js.take_exception()?;
      return Ok(None);
    }
    Err(e) => return Err(e.into()),
  };
  Ok(identity::process_start(&text))
}

/// A string, or null.
pub fn opt_str<'e>(js: Js<'e>, s: Option<String>) -> JsResult<Val<'e>> {
  Ok(s.map_or_else(|| js.null(), |s| js.str(&s))?)
}

/// `identityOf(pid)`: `{start, boot}`.
fn identity_object<'e>(js: Js<'e>, pid: Val<'e>) -> JsResult<Val<'e>> {
  let start = start_of(js, pid)?;
  let obj = js.object()?;
  js.set(obj, "start", opt_str(js, start)?)?;
  js.set(obj, "boot", opt_str(js, identity::boot_id())?)?;
  Ok(obj)
}

/// A seam's result as `now = identity(pid)`; `identity` is the seam, or
/// `None` for the default (`identityOf`).
pub fn call_identity<'e>(js: Js<'e>, identity: Option<Val<'e>>, pid: Val<'e>) -> JsResult<Val<'e>> {
  match identity {
    None => identity_object(js, pid),
    Some(f) => {
      if !js.is(f, sys::ValueType::napi_function)? {
        return Err(JournalError::not_a_function("identity").into());
      }
      Ok(js.call(f, js.undefined()?, &[pid])?)
    }
  }
}

/// An identity field as the ladder compares it.
pub fn field<'e>(js: Js<'e>, v: Val<'e>) -> JsResult<Field> {
  Ok(match js.type_of(v)? {
    sys::ValueType::napi_null => Field::Null,
    sys::ValueType::napi_string => Field::Str(js.units(v)?),
    _ => Field::Other,
  })
}

/// `pidAlive(pid)`: `process.kill(pid, 0)` succeeds or fails with EPERM,
/// through the `process.kill` of the moment, as the reference calls it: a
/// host's test that replaces it (to fake a live owner) reaches it, and its
/// argument coercion is Node's own.
pub fn alive_of<'e>(js: Js<'e>, pid: Val<'e>) -> JsResult<bool> {
  let process = js.get(js.global()?, "process")?;
  let kill = js.get(process, "kill")?;
  match js.call(kill, process, &[pid, js.number(0.0)?]) {
    Ok(_) => Ok(true),
    Err(Fault::Pending) => {
      let e = js.take_exception()?;
      let code = js.prop(e, "code")?;
      Ok(js.string_of(code)?.is_some_and(|c| c == "EPERM"))
    }
    Err(e) => Err(e.into()),
  }
}
