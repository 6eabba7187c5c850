//! Exports for process identity and the run lock: readPid, ownerState,
//! writePid, unlock, recover, stopTarget, clearPid.

use napi::{sys, Env};
use napi_derive::napi;

use super::stop::{own_stop_line, request_stop};
use super::{done, keep, options, Dir, Js, JsResult, Thrown, Val};
use crate::error::JournalError;
use crate::identity::{self, boot_id, process_start};
use crate::lock::{self, owner_state, Field, Identity, Owner, OwnerView, Recovered, Seams, Unlocked};
use crate::text::js_number;
use crate::time;

/// `processStart(pid)`: the template `/proc/${pid}/stat` runs inside the
/// reference's try, so a pid that cannot become a string reads as null.
fn start_of(js: Js, pid: Val) -> JsResult<Option<String>> {
  // A read of /proc, the one step of these exports that takes time.
  js.alive()?;
  if js.is(pid, sys::ValueType::napi_number)? {
    return Ok(process_start(&js_number(js.number_value(pid)?)));
  }
  let text = match js.to_string(pid) {
    Ok(s) => js.utf8(s)?,
    Err(Thrown::Pending) => {
      js.take_exception()?;
      return Ok(None);
    }
    Err(e) => return Err(e),
  };
  Ok(process_start(&text))
}

fn opt_str(js: Js, s: Option<String>) -> JsResult<Val> {
  match s {
    Some(s) => js.str(&s),
    None => js.null(),
  }
}

#[napi(js_name = "processStart")]
pub fn process_start_export(env: Env, pid: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, start_of(js, pid).and_then(|s| opt_str(js, s)))
}

#[napi(js_name = "bootId")]
pub fn boot_id_export(env: Env) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, js.alive().and_then(|()| opt_str(js, boot_id())))
}

/// `identityOf(pid)`: `{start, boot}`.
fn identity_object(js: Js, pid: Val) -> JsResult<Val> {
  let start = start_of(js, pid)?;
  let obj = js.object()?;
  js.set(obj, "start", opt_str(js, start)?)?;
  js.set(obj, "boot", opt_str(js, boot_id())?)?;
  Ok(obj)
}

#[napi(js_name = "identityOf")]
pub fn identity_of(env: Env, pid: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, identity_object(js, pid))
}

/// A seam's result as `now = identity(pid)`; `identity` is the seam, or
/// `None` for the default (`identityOf`).
fn call_identity(js: Js, identity: Option<Val>, pid: Val) -> JsResult<Val> {
  match identity {
    None => identity_object(js, pid),
    Some(f) => {
      if !js.is(f, sys::ValueType::napi_function)? {
        return Err(
          JournalError::Type {
            message: "identity is not a function".into(),
            code: None,
          }
          .into(),
        );
      }
      js.call(f, js.undefined()?, &[pid])
    }
  }
}

fn field(js: Js, v: Val) -> JsResult<Field> {
  Ok(match js.type_of(v)? {
    sys::ValueType::napi_null => Field::Null,
    sys::ValueType::napi_string => Field::Str(js.units(v)?),
    _ => Field::Other,
  })
}

/// The seams of one call, as the reference received them.
struct JsSeams {
  js: Js,
  identity: Option<Val>,
  before_remove: Option<Val>,
}

impl Seams for JsSeams {
  type Error = Thrown;

  fn identity(&mut self, pid: f64) -> JsResult<Identity> {
    let js = self.js;
    if self.identity.is_none() {
      let pid = js_number(pid);
      let as_field = |s: Option<String>| s.map_or(Field::Null, |s| Field::Str(s.encode_utf16().collect()));
      return Ok(Identity {
        start: as_field(process_start(&pid)),
        boot: as_field(boot_id()),
      });
    }
    let now = call_identity(js, self.identity, js.number(pid)?)?;
    Ok(Identity {
      start: field(js, js.prop(now, "start")?)?,
      boot: field(js, js.prop(now, "boot")?)?,
    })
  }

  fn before_remove(&mut self) -> JsResult<()> {
    let js = self.js;
    let Some(f) = self.before_remove else { return Ok(()) };
    if !js.truthy(f)? {
      return Ok(());
    }
    if !js.is(f, sys::ValueType::napi_function)? {
      return Err(
        JournalError::Type {
          message: "beforeRemove is not a function".into(),
          code: None,
        }
        .into(),
      );
    }
    js.call(f, js.undefined()?, &[])?;
    Ok(())
  }
}

/// `readPid`'s result as JavaScript.
fn owner_object(js: Js, rec: Option<&Owner>) -> JsResult<Val> {
  match rec {
    None => js.null(),
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

#[napi(js_name = "readPid")]
pub fn read_pid(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(
    js,
    Dir::from(js, dir).and_then(|d| owner_object(js, lock::read_pid(d.fs()).as_ref())),
  )
}

/// `pidAlive(pid)`: `process.kill(pid, 0)` succeeds or fails with EPERM.
/// A number is decided here; any other value goes through Node's own
/// process.kill, whose argument coercion is the contract.
fn pid_alive(js: Js, pid: Val) -> JsResult<bool> {
  if js.is(pid, sys::ValueType::napi_number)? {
    return Ok(identity::pid_alive(js.number_value(pid)?));
  }
  let process = js.get(js.global()?, "process")?;
  let kill = js.get(process, "kill")?;
  match js.call(kill, process, &[pid, js.number(0.0)?]) {
    Ok(_) => Ok(true),
    Err(Thrown::Pending) => {
      let e = js.take_exception()?;
      let code = js.prop(e, "code")?;
      Ok(js.string_of(code)?.is_some_and(|c| c == "EPERM"))
    }
    Err(e) => Err(e),
  }
}

#[napi(js_name = "pidAlive")]
pub fn pid_alive_export(env: Env, pid: Val) -> napi::Result<bool> {
  let js = Js::new(&env);
  done(js, pid_alive(js, pid))
}

/// A record handed in from JavaScript, read field by field as the
/// reference's ownerState reads it.
struct JsOwner {
  js: Js,
  rec: Val,
  identity: Option<Val>,
}

impl OwnerView for JsOwner {
  type Error = Thrown;
  fn is_null(&mut self) -> JsResult<bool> {
    self.js.is(self.rec, sys::ValueType::napi_null)
  }
  fn invalid(&mut self) -> JsResult<bool> {
    self.js.truthy(self.js.prop(self.rec, "invalid")?)
  }
  fn alive(&mut self) -> JsResult<bool> {
    pid_alive(self.js, self.js.get(self.rec, "pid")?)
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
      let Some((start, boot)) = start.zip(boot_id()) else {
        return Ok(None);
      };
      let is = |v: Val, want: &str| field(js, v).map(|f| f == Field::Str(want.encode_utf16().collect()));
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
}

fn state_of(js: Js, rec: Val, opts: Val) -> JsResult<lock::OwnerState> {
  let [identity] = options(js, opts, ["identity"])?;
  owner_state(&mut JsOwner { js, rec, identity })
}

#[napi(js_name = "ownerState")]
pub fn owner_state_export(env: Env, rec: Val, opts: Val) -> napi::Result<&'static str> {
  let js = Js::new(&env);
  done(js, state_of(js, rec, opts).map(lock::OwnerState::as_str))
}

#[napi(js_name = "ownerAlive")]
pub fn owner_alive(env: Env, rec: Val, opts: Val) -> napi::Result<bool> {
  let js = Js::new(&env);
  done(js, state_of(js, rec, opts).map(|s| s == lock::OwnerState::Live))
}

/// `now` of writePid: a default taken at destructuring, or the caller's value.
enum Now {
  Ms(f64),
  Js(Val),
}

/// `JSON.stringify({ pid, start, boot, at: new Date(now).toISOString() })`,
/// failing with the `code` of what it threw.
fn owner_text(js: Js, pid: Val, start: Val, boot: Val, now: &Now) -> JsResult<Result<String, Option<String>>> {
  let fast = (|| -> JsResult<Option<String>> {
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
  })()?;
  if let Some(text) = fast {
    return Ok(Ok(text));
  }
  js.catching(|| {
    let obj = js.object()?;
    js.set(obj, "pid", pid)?;
    js.set(obj, "start", start)?;
    js.set(obj, "boot", boot)?;
    let at = match now {
      Now::Ms(ms) => time::iso(*ms).ok_or(JournalError::invalid_date())?,
      Now::Js(v) => js.iso_of(*v)?,
    };
    js.set(obj, "at", js.str(&at)?)?;
    Ok(js.stringify(obj)?.unwrap_or_default())
  })
}

#[napi(js_name = "writePid")]
pub fn write_pid(env: Env, dir: Val, pid: Val, opts: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  let result = (|| {
    // `{ now = Date.now(), identity = identityOf }`: the default is
    // evaluated before `identity` is read.
    let [now] = options(js, opts, ["now"])?;
    let now = match now {
      Some(v) => Now::Js(v),
      None => Now::Ms(js.now_ms()?),
    };
    let [identity] = options(js, opts, ["identity"])?;
    let id = call_identity(js, identity, pid)?;
    if js.is_nullish(id)? {
      return Err(
        JournalError::Type {
          message: "Cannot destructure property 'start' of 'identity(...)' as it is null or undefined.".into(),
          code: None,
        }
        .into(),
      );
    }
    let (start, boot) = (js.get(id, "start")?, js.get(id, "boot")?);
    let null = sys::ValueType::napi_null;
    if js.is(start, null)? || js.is(boot, null)? {
      return Err(
        JournalError::failed("cannot read this process's start time or the boot id from /proc; refusing to claim the binding").into(),
      );
    }
    let d = Dir::from(js, dir)?;
    let pid_number = if js.is(pid, sys::ValueType::napi_number)? {
      Some(js.number_value(pid)?)
    } else {
      None
    };
    let mut seams = JsSeams {
      js,
      identity,
      before_remove: None,
    };
    let mut thrown = None;
    let claimed = lock::claim(d.fs(), pid_number, &mut seams, || {
      keep(&mut thrown, owner_text(js, pid, start, boot, &now))
    });
    match thrown {
      Some(e) => Err(e),
      None => claimed,
    }
  })();
  done(js, result)
}

#[napi]
pub fn unlock(env: Env, dir: Val, opts: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  let result = (|| {
    let [before_remove, identity, reason] = options(js, opts, ["beforeRemove", "identity", "reason"])?;
    let reason = match reason {
      Some(r) => r,
      None => js.str("unlock")?,
    };
    let d = Dir::from(js, dir)?;
    request_stop(js, &d, reason)?;
    let mut seams = JsSeams {
      js,
      identity,
      before_remove,
    };
    match lock::unlock_after_stop(d.fs(), &mut seams)? {
      Unlocked::NoLock => js.boolean(false),
      Unlocked::Cleared(rec) => owner_object(js, rec.as_ref()),
    }
  })();
  done(js, result)
}

#[napi]
pub fn recover(env: Env, dir: Val, opts: Val) -> napi::Result<&'static str> {
  let js = Js::new(&env);
  let result = (|| {
    let [identity, before_remove] = options(js, opts, ["identity", "beforeRemove"])?;
    let d = Dir::from(js, dir)?;
    let mut seams = JsSeams {
      js,
      identity,
      before_remove,
    };
    let mut thrown = None;
    let recovered = lock::recover(d.fs(), &mut seams, |reason| keep(&mut thrown, own_stop_line(js, reason)));
    if let Some(e) = thrown {
      return Err(e);
    }
    Ok(match recovered? {
      Recovered::Clean => "clean",
      Recovered::Cleared => "cleared",
    })
  })();
  done(js, result)
}

#[napi(js_name = "stopTarget")]
pub fn stop_target(env: Env, dir: Val, opts: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  let result = (|| {
    let d = Dir::from(js, dir)?;
    let rec = lock::read_pid(d.fs());
    let [identity] = options(js, opts, ["identity"])?;
    match lock::stop_target(
      rec,
      &mut JsSeams {
        js,
        identity,
        before_remove: None,
      },
    )? {
      Some(pid) => js.number(pid),
      None => js.null(),
    }
  })();
  done(js, result)
}

#[napi(js_name = "clearPid")]
pub fn clear_pid(env: Env, dir: Val, pid: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  let result = (|| {
    let d = Dir::from(js, dir)?;
    let pid = if js.is(pid, sys::ValueType::napi_number)? {
      Some(js.number_value(pid)?)
    } else {
      None
    };
    Ok(lock::clear_pid(d.fs(), pid)?)
  })();
  done(js, result)
}
