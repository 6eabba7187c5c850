//! Exports for the run lock: readPid, ownerState, ownerAlive, writePid,
//! unlock, recover, stopTarget, clearPid.

use napi::{sys, Env};
use napi_derive::napi;

use super::identity::{alive_of, call_identity, field, opt_str, start_of};
use super::stop::{append_stop, own_stop_line};
use super::{after, export, keep, number_arg, options, Dir, Js, JsResult, Thrown, Val};
use crate::ground::error::{JournalError, ThrownCode};
use crate::ground::text::js_number;
use crate::ground::time;
use crate::identity;
use crate::lock::{self, Field, Identity, Owner, OwnerState, OwnerView, Recovered, Seams, Unlocked};

#[napi(js_name = "readPid")]
pub fn read_pid<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| owner_object(js, lock::read_pid(dir.journal()).as_ref()))
}

#[napi(js_name = "ownerState")]
pub fn owner_state<'e>(env: &'e Env, rec: Val<'e>, opts: Val<'e>) -> napi::Result<&'static str> {
  export(env, |js| state_of(js, rec, opts).map(OwnerState::as_str))
}

#[napi(js_name = "ownerAlive")]
pub fn owner_alive<'e>(env: &'e Env, rec: Val<'e>, opts: Val<'e>) -> napi::Result<bool> {
  export(env, |js| state_of(js, rec, opts).map(|s| s == OwnerState::Live))
}

#[napi(js_name = "writePid")]
pub fn write_pid<'e>(env: &'e Env, dir: Val<'e>, pid: Val<'e>, opts: Val<'e>) -> napi::Result<()> {
  export(env, |js| claim(js, dir, pid, opts))
}

#[napi]
pub fn unlock<'e>(env: &'e Env, dir: Val<'e>, opts: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let [before_remove, identity, reason] = options(js, opts, ["beforeRemove", "identity", "reason"])?;
    let reason = reason.map_or_else(|| js.str("unlock"), Ok)?;
    let d = Dir::from(js, dir)?;
    let unlocked = lock::unlock(d.journal(), &mut JsSeams::new(js, identity, before_remove), || {
      append_stop(js, &d, reason).map(drop)
    });
    match unlocked? {
      Unlocked::NoLock => Ok(js.boolean(false)?),
      Unlocked::Cleared(rec) => owner_object(js, rec.as_ref()),
    }
  })
}

#[napi]
pub fn recover<'e>(env: &'e Env, dir: Val<'e>, opts: Val<'e>) -> napi::Result<&'static str> {
  export(env, |js| {
    let [identity, before_remove] = options(js, opts, ["identity", "beforeRemove"])?;
    let d = Dir::from(js, dir)?;
    let mut thrown = None;
    let recovered = lock::recover(d.journal(), &mut JsSeams::new(js, identity, before_remove), |reason| {
      keep(&mut thrown, own_stop_line(js, reason))
    });
    Ok(match after(thrown, recovered)? {
      Recovered::Clean => "clean",
      Recovered::Cleared => "cleared",
    })
  })
}

#[napi(js_name = "stopTarget")]
pub fn stop_target<'e>(env: &'e Env, dir: Dir<'e>, opts: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let rec = lock::read_pid(dir.journal());
    let [identity] = options(js, opts, ["identity"])?;
    Ok(lock::stop_target(rec, &mut JsSeams::new(js, identity, None))?.map_or_else(|| js.null(), |pid| js.number(pid))?)
  })
}

#[napi(js_name = "clearPid")]
pub fn clear_pid<'e>(env: &'e Env, dir: Dir<'e>, pid: Val<'e>) -> napi::Result<()> {
  export(env, |js| Ok(lock::clear_pid(dir.journal(), number_arg(js, pid)?)?))
}

/// The seams of one call, as the reference received them.
struct JsSeams<'e> {
  js: Js<'e>,
  identity: Option<Val<'e>>,
  before_remove: Option<Val<'e>>,
}

impl<'e> JsSeams<'e> {
  fn new(js: Js<'e>, identity: Option<Val<'e>>, before_remove: Option<Val<'e>>) -> JsSeams<'e> {
    JsSeams {
      js,
      identity,
      before_remove,
    }
  }
}

impl<'e> Seams for JsSeams<'e> {
  type Error = Thrown;

  fn identity(&mut self, pid: f64) -> JsResult<Identity> {
    let js = self.js;
    if self.identity.is_none() {
      return Ok(Identity::of(pid));
    }
    let now = call_identity(js, self.identity, js.number(pid)?)?;
    Ok(Identity {
      start: field(js, js.prop(now, "start")?)?,
      boot: field(js, js.prop(now, "boot")?)?,
    })
  }

  fn alive(&mut self, pid: f64) -> JsResult<bool> {
    alive_of(self.js, self.js.number(pid)?)
  }

  fn identity_matches(&mut self, pid: f64, start: &str, boot: &str) -> JsResult<Option<bool>> {
    if self.identity.is_none() {
      let now = self.identity(pid)?;
      if now.start == Field::Null || now.boot == Field::Null {
        return Ok(None);
      }
      return Ok(Some(now.start.is(start) && now.boot.is(boot)));
    }
    // The seam's answer is read as the reference reads it, getters and all.
    let js = self.js;
    let now = call_identity(js, self.identity, js.number(pid)?)?;
    let null = sys::ValueType::napi_null;
    if js.is(js.prop(now, "start")?, null)? || js.is(js.prop(now, "boot")?, null)? {
      return Ok(None);
    }
    if !field(js, js.prop(now, "start")?)?.is(start) {
      return Ok(Some(false));
    }
    Ok(Some(field(js, js.prop(now, "boot")?)?.is(boot)))
  }

  fn before_remove(&mut self) -> JsResult<()> {
    let js = self.js;
    let Some(f) = self.before_remove else { return Ok(()) };
    if !js.truthy(f)? {
      return Ok(());
    }
    if !js.is(f, sys::ValueType::napi_function)? {
      return Err(JournalError::not_a_function("beforeRemove").into());
    }
    js.call(f, js.undefined()?, &[])?;
    Ok(())
  }
}

/// `readPid`'s result as JavaScript.
fn owner_object<'e>(js: Js<'e>, rec: Option<&Owner>) -> JsResult<Val<'e>> {
  match rec {
    None => Ok(js.null()?),
    Some(Owner::Invalid) => {
      let o = js.object()?;
      js.set(o, "invalid", js.boolean(true)?)?;
      Ok(o)
    }
    Some(Owner::Valid { pid, start, boot }) => {
      let o = js.object()?;
      js.set(o, "pid", js.number(*pid)?)?;
      js.set(o, "start", opt_str(js, start.clone())?)?;
      js.set(o, "boot", opt_str(js, boot.clone())?)?;
      Ok(o)
    }
  }
}

/// A record handed in from JavaScript, read field by field as the
/// reference's ownerState reads it.
struct JsOwner<'e> {
  js: Js<'e>,
  rec: Val<'e>,
  identity: Option<Val<'e>>,
  /// `rec.pid` as `pidAlive` read it.
  pid: Option<Val<'e>>,
}

impl<'e> OwnerView for JsOwner<'e> {
  type Error = Thrown;
  fn is_null(&mut self) -> JsResult<bool> {
    self.js.is(self.rec, sys::ValueType::napi_null)
  }
  fn invalid(&mut self) -> JsResult<bool> {
    Ok(self.js.truthy(self.js.prop(self.rec, "invalid")?)?)
  }
  fn alive(&mut self) -> JsResult<bool> {
    let pid = self.js.get(self.rec, "pid")?;
    self.pid = Some(pid);
    alive_of(self.js, pid)
  }
  fn lacks_identity(&mut self) -> JsResult<bool> {
    let js = self.js;
    Ok(js.is(js.get(self.rec, "start")?, sys::ValueType::napi_null)? || js.is(js.get(self.rec, "boot")?, sys::ValueType::napi_null)?)
  }
  fn identity_matches(&mut self) -> JsResult<Option<bool>> {
    let js = self.js;
    if self.identity.is_none() {
      // identityOf, without making its object: the same reads, compared here.
      let start = start_of(js, js.get(self.rec, "pid")?)?;
      let Some((start, boot)) = start.zip(identity::boot_id()) else {
        return Ok(None);
      };
      let is = |v: Val<'e>, want: &str| field(js, v).map(|f| f == Field::Str(want.encode_utf16().collect()));
      return Ok(Some(
        is(js.get(self.rec, "start")?, &start)? && is(js.get(self.rec, "boot")?, &boot)?,
      ));
    }
    let now = call_identity(js, self.identity, js.get(self.rec, "pid")?)?;
    let null = sys::ValueType::napi_null;
    if js.is(js.prop(now, "start")?, null)? || js.is(js.prop(now, "boot")?, null)? {
      return Ok(None);
    }
    Ok(Some(
      js.strict_equals(js.get(now, "start")?, js.get(self.rec, "start")?)?
        && js.strict_equals(js.get(now, "boot")?, js.get(self.rec, "boot")?)?,
    ))
  }
  fn elsewhere(&mut self) -> JsResult<bool> {
    let js = self.js;
    let Some(pid) = self.pid else { return Ok(false) };
    if !js.is(pid, sys::ValueType::napi_number)? {
      return Ok(false);
    }
    // The record's start and boot are read again only where a process of a
    // namespace below has its pid (never, outside containers), so a record
    // with getters sees the reference's reads everywhere else.
    let mut candidates = identity::inner_pids(js.number_value(pid)?).peekable();
    if candidates.peek().is_none() {
      return Ok(false);
    }
    let (Some(start), Some(boot)) = (js.string_of(js.get(self.rec, "start")?)?, js.string_of(js.get(self.rec, "boot")?)?) else {
      return Ok(false);
    };
    Ok(identity::elsewhere(candidates, &start, &boot).is_some())
  }
  fn same_in_its_clock(&mut self) -> JsResult<bool> {
    let js = self.js;
    let Some(pid) = self.pid else { return Ok(false) };
    if !js.is(pid, sys::ValueType::napi_number)? {
      return Ok(false);
    }
    // The record is read again only for a pid in another time namespace
    // (never, outside containers): everywhere else, the reference's reads.
    let pid = js.number_value(pid)?;
    if !identity::in_other_time_ns(pid) {
      return Ok(false);
    }
    let (Some(start), Some(boot)) = (js.string_of(js.get(self.rec, "start")?)?, js.string_of(js.get(self.rec, "boot")?)?) else {
      return Ok(false);
    };
    Ok(identity::same_in_its_clock(pid, &start, &boot))
  }
}

fn state_of<'e>(js: Js<'e>, rec: Val<'e>, opts: Val<'e>) -> JsResult<OwnerState> {
  let [identity] = options(js, opts, ["identity"])?;
  lock::owner_state(&mut JsOwner {
    js,
    rec,
    identity,
    pid: None,
  })
}

/// `writePid(dir, pid, { now = Date.now(), identity = identityOf })`.
fn claim<'e>(js: Js<'e>, dir: Val<'e>, pid: Val<'e>, opts: Val<'e>) -> JsResult<()> {
  // The default of `now` is evaluated before `identity` is read.
  let [now] = options(js, opts, ["now"])?;
  let now = match now {
    Some(v) => Now::Given(v),
    None => Now::Ms(js.now_ms()?),
  };
  let [identity] = options(js, opts, ["identity"])?;
  let id = call_identity(js, identity, pid)?;
  match js.type_of(id)? {
    sys::ValueType::napi_null => return Err(JournalError::destructure("start", "identity(...)", "null").into()),
    sys::ValueType::napi_undefined => return Err(JournalError::destructure("start", "identity(...)", "undefined").into()),
    _ => {}
  }
  let (start, boot) = (js.get(id, "start")?, js.get(id, "boot")?);
  let null = sys::ValueType::napi_null;
  if js.is(start, null)? || js.is(boot, null)? {
    return Err(
      JournalError::failed("cannot read this process's start time or the boot id from /proc; refusing to claim the binding").into(),
    );
  }
  let d = Dir::from(js, dir)?;
  let pid_number = number_arg(js, pid)?;
  let mut thrown = None;
  // The record's text where it is known without V8 (owner_text_fast): it
  // can then be written before the mkdir (lock::claim).
  let early = owner_text_fast(js, pid, start, boot, &now)?;
  let claimed = lock::claim(d.journal(), pid_number, &mut JsSeams::new(js, identity, None), early, || {
    keep(&mut thrown, owner_text(js, pid, start, boot, &now))
  });
  after(thrown, claimed)
}

/// `now` of writePid: a default taken at destructuring, or the caller's value.
enum Now<'e> {
  Ms(f64),
  Given(Val<'e>),
}

/// `JSON.stringify({ pid, start, boot, at: new Date(now).toISOString() })`,
/// failing with the `code` of what it threw.
fn owner_text<'e>(js: Js<'e>, pid: Val<'e>, start: Val<'e>, boot: Val<'e>, now: &Now) -> JsResult<Result<String, ThrownCode>> {
  if let Some(text) = owner_text_fast(js, pid, start, boot, now)? {
    return Ok(Ok(text));
  }
  js.catching(|| {
    let obj = js.object()?;
    js.set(obj, "pid", pid)?;
    js.set(obj, "start", start)?;
    js.set(obj, "boot", boot)?;
    let at = match now {
      Now::Ms(ms) => time::iso(*ms).ok_or(JournalError::invalid_date())?,
      Now::Given(v) => js.iso_of(*v)?,
    };
    js.set(obj, "at", js.str(&at)?)?;
    Ok(js.stringify(obj)?.unwrap_or_default())
  })
}

/// The record's text made here, where JSON.stringify's answer is known
/// without V8: a number pid, well-formed string identities and the default
/// clock. `None` sends the record through V8.
fn owner_text_fast<'e>(js: Js<'e>, pid: Val<'e>, start: Val<'e>, boot: Val<'e>, now: &Now) -> JsResult<Option<String>> {
  let (Now::Ms(ms), true) = (now, js.is(pid, sys::ValueType::napi_number)?) else {
    return Ok(None);
  };
  let (Some(start), Some(boot)) = (js.string_of(start)?, js.string_of(boot)?) else {
    return Ok(None);
  };
  if start.contains('\u{fffd}') || boot.contains('\u{fffd}') {
    return Ok(None);
  }
  let Some(at) = time::iso(*ms) else { return Ok(None) };
  let n = js.number_value(pid)?;
  let pid = if n.is_finite() { js_number(n) } else { "null".into() };
  let s = |v: &str| serde_json::Value::from(v).to_string();
  Ok(Some(format!(
    "{{\"pid\":{pid},\"start\":{},\"boot\":{},\"at\":\"{at}\"}}",
    s(&start),
    s(&boot)
  )))
}
