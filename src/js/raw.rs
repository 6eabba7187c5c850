//! The N-API calls the boundary makes, each wrapped once: with strings.rs
//! (the strings) and napi-rs's conversion traits for `Val` (value.rs) and
//! `Dir` (args.rs), which dereference nothing, the crate's only `unsafe`.
//! It knows N-API alone: a failed call is a `Fault`, which the layers
//! above make a `Thrown`, and the env's instance data is any `Kept`.
//! Every function here passes the env of the call in progress and values
//! that belong to that call's handle scope.
//!
//! Why raw N-API and not napi-rs's wrappers (`Env`, `Unknown`, `JsObject`,
//! `Error`), which cover the same calls:
//! - **Order of effects.** The reference's semantics are in the order it
//!   reads a getter, converts with ToString, or calls toJSON; napi-rs's
//!   typed arguments and `get_named_property::<T>` convert on the way in
//!   (a `String` argument refuses a number, an object's getter runs at
//!   conversion), so the boundary takes `Val` and converts each value
//!   where the reference does.
//! - **Exceptions as thrown.** napi-rs turns an `Err` into an exception by
//!   building a generic Error (reading `cause`, coercing a status into a
//!   message); a seam's or getter's own exception must reach the caller
//!   unchanged, and a journal error must become a `DiscordError` with its
//!   `exitCode` (src/js/export.rs).
//! - **A terminated env.** Each call's status is checked here, once, to
//!   tell a pending exception from a terminating env (`Fault`), which
//!   napi-rs reports alike.
//! - **Cost.** The exports are called per message; these wrappers add no
//!   allocation or registry lookup (napi-rs's instance-data getter checks
//!   a process-wide registry on each call).

use std::marker::PhantomData;
use std::ptr;

use napi::sys;

use super::Val;

/// Why an N-API call failed, as N-API tells it: an exception is pending,
/// the env can no longer run JavaScript (a terminated Worker), or another
/// status with no exception. The layers above make it a `Thrown`.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
  Pending,
  Terminating,
  Status(sys::napi_status),
}

/// The env of the current call. Copy: it is only a handle.
#[derive(Clone, Copy)]
pub struct Js<'e> {
  pub(super) env: sys::napi_env,
  call: PhantomData<&'e napi::Env>,
}

macro_rules! napi_call {
  ($js:expr, $f:ident($($arg:expr),*)) => {{
    // SAFETY: `$js.env` is the env of the call in progress and every value
    // passed was handed to that call or created in it; out-pointers point
    // at locals that outlive the call.
    let status = unsafe { sys::$f($js.env, $($arg),*) };
    $js.check(status)
  }};
}
pub(super) use napi_call;

/// `napi_call!` whose last argument is an out-pointer to a local that
/// starts as `$init`: its value once the call succeeded.
macro_rules! napi_out {
  ($js:expr, $init:expr, $f:ident($($arg:expr),*)) => {{
    let mut out = $init;
    napi_call!($js, $f($($arg,)* &mut out)).map(|()| out)
  }};
}

impl<'e> Js<'e> {
  pub fn new(env: &'e napi::Env) -> Js<'e> {
    Js {
      env: env.raw(),
      call: PhantomData,
    }
  }

  /// The env napi-rs hands an argument's conversion (`FromNapiValue`):
  /// that of the call in progress.
  pub(super) fn of_call(env: sys::napi_env) -> Js<'e> {
    Js { env, call: PhantomData }
  }

  pub(super) fn check(self, status: sys::napi_status) -> Result<(), Fault> {
    if status == sys::Status::napi_ok {
      return Ok(());
    }
    if self.pending() {
      Err(Fault::Pending)
    } else if !self.can_run() {
      Err(Fault::Terminating)
    } else {
      Err(Fault::Status(status))
    }
  }

  /// Whether this env may still run JavaScript. Once a Worker is terminated
  /// (or the environment is torn down) N-API refuses, without an exception,
  /// every call that could run any; ToBoolean of undefined is the cheapest
  /// of them. False too while an exception is pending.
  pub fn can_run(self) -> bool {
    let mut undefined = ptr::null_mut();
    let mut b = ptr::null_mut();
    // SAFETY: env of the current call; the out-pointers are locals and
    // `undefined` was just handed out by this env.
    unsafe {
      sys::napi_get_undefined(self.env, &mut undefined);
      sys::napi_coerce_to_bool(self.env, undefined, &mut b) == sys::Status::napi_ok
    }
  }

  pub fn pending(self) -> bool {
    let mut pending = false;
    // SAFETY: env of the current call; the out-pointer is a local.
    unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
    pending
  }

  /// Clears and returns the pending exception, for a caller that handles
  /// it. The exception of a terminated execution is never handed out: in an
  /// env that can no longer run JavaScript the call ends (`Terminating`);
  /// V8's termination of a running script (no JavaScript value, so
  /// napi_typeof refuses it) is put back, to go on unwinding the caller.
  pub fn take_exception(self) -> Result<Val<'e>, Fault> {
    let mut v = ptr::null_mut();
    napi_call!(self, napi_get_and_clear_last_exception(&mut v))?;
    if !self.can_run() {
      return Err(Fault::Terminating);
    }
    let mut t = 0;
    // SAFETY: env of the current call; `v` was just handed out by it and the
    // out-pointer is a local.
    if unsafe { sys::napi_typeof(self.env, v, &mut t) } != sys::Status::napi_ok {
      self.throw(Val::new(v));
      return Err(Fault::Pending);
    }
    Ok(Val::new(v))
  }

  pub fn throw(self, v: Val<'e>) {
    // SAFETY: env of the current call; `v` belongs to it.
    unsafe { sys::napi_throw(self.env, v.0) };
  }

  pub fn type_of(self, v: Val<'e>) -> Result<sys::napi_valuetype, Fault> {
    napi_out!(self, 0, napi_typeof(v.0))
  }

  pub fn undefined(self) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_get_undefined()).map(Val::new)
  }

  pub fn null(self) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_get_null()).map(Val::new)
  }

  pub fn global(self) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_get_global()).map(Val::new)
  }

  pub fn boolean(self, b: bool) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_get_boolean(b)).map(Val::new)
  }

  pub fn number(self, n: f64) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_create_double(n)).map(Val::new)
  }

  pub fn object(self) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_create_object()).map(Val::new)
  }

  pub fn array(self, len: usize) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_create_array_with_length(len)).map(Val::new)
  }

  pub fn number_value(self, v: Val<'e>) -> Result<f64, Fault> {
    napi_out!(self, 0.0, napi_get_value_double(v.0))
  }

  pub fn bool_value(self, v: Val<'e>) -> Result<bool, Fault> {
    napi_out!(self, false, napi_get_value_bool(v.0))
  }

  /// `obj[name]` for a value that is not null or undefined (a primitive
  /// reads through its wrapper, as in JavaScript).
  pub fn get(self, obj: Val<'e>, name: &str) -> Result<Val<'e>, Fault> {
    let key = self.str(name)?;
    napi_out!(self, ptr::null_mut(), napi_get_property(obj.0, key.0)).map(Val::new)
  }

  pub fn set(self, obj: Val<'e>, name: &str, value: Val<'e>) -> Result<(), Fault> {
    let key = self.str(name)?;
    napi_call!(self, napi_set_property(obj.0, key.0, value.0))
  }

  pub fn set_index(self, arr: Val<'e>, i: u32, value: Val<'e>) -> Result<(), Fault> {
    napi_call!(self, napi_set_element(arr.0, i, value.0))
  }

  pub fn get_index(self, arr: Val<'e>, i: u32) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_get_element(arr.0, i)).map(Val::new)
  }

  pub fn freeze(self, obj: Val<'e>) -> Result<(), Fault> {
    napi_call!(self, napi_object_freeze(obj.0))
  }

  /// ToBoolean: never throws.
  pub fn truthy(self, v: Val<'e>) -> Result<bool, Fault> {
    let mut b = ptr::null_mut();
    napi_call!(self, napi_coerce_to_bool(v.0, &mut b))?;
    self.bool_value(Val::new(b))
  }

  /// ToString, as a template literal applies it (throws for a Symbol).
  pub fn to_string(self, v: Val<'e>) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_coerce_to_string(v.0)).map(Val::new)
  }

  pub fn strict_equals(self, a: Val<'e>, b: Val<'e>) -> Result<bool, Fault> {
    napi_out!(self, false, napi_strict_equals(a.0, b.0))
  }

  pub fn call(self, f: Val<'e>, this: Val<'e>, args: &[Val<'e>]) -> Result<Val<'e>, Fault> {
    let argv: Vec<sys::napi_value> = args.iter().map(|a| a.0).collect();
    napi_out!(self, ptr::null_mut(), napi_call_function(this.0, f.0, argv.len(), argv.as_ptr())).map(Val::new)
  }

  pub fn construct(self, ctor: Val<'e>, args: &[Val<'e>]) -> Result<Val<'e>, Fault> {
    let argv: Vec<sys::napi_value> = args.iter().map(|a| a.0).collect();
    napi_out!(self, ptr::null_mut(), napi_new_instance(ctor.0, argv.len(), argv.as_ptr())).map(Val::new)
  }

  pub fn error(self, code: Option<&str>, message: &str) -> Result<Val<'e>, Fault> {
    self.make_error(code, message, ErrorKind::Error)
  }

  pub fn type_error(self, code: Option<&str>, message: &str) -> Result<Val<'e>, Fault> {
    self.make_error(code, message, ErrorKind::Type)
  }

  pub fn range_error(self, message: &str) -> Result<Val<'e>, Fault> {
    self.make_error(None, message, ErrorKind::Range)
  }

  fn make_error(self, code: Option<&str>, message: &str, kind: ErrorKind) -> Result<Val<'e>, Fault> {
    let code = match code {
      Some(c) => self.str(c)?.0,
      None => ptr::null_mut(),
    };
    let msg = self.str(message)?;
    let mut v = ptr::null_mut();
    match kind {
      ErrorKind::Error => napi_call!(self, napi_create_error(code, msg.0, &mut v))?,
      ErrorKind::Type => napi_call!(self, napi_create_type_error(code, msg.0, &mut v))?,
      ErrorKind::Range => napi_call!(self, napi_create_range_error(code, msg.0, &mut v))?,
    }
    Ok(Val::new(v))
  }

  /// A strong reference that keeps `v` alive for the life of the env.
  pub fn keep(self, v: Val<'e>) -> Result<sys::napi_ref, Fault> {
    napi_out!(self, ptr::null_mut(), napi_create_reference(v.0, 1))
  }

  pub fn kept(self, r: sys::napi_ref) -> Result<Val<'e>, Fault> {
    napi_out!(self, ptr::null_mut(), napi_get_reference_value(r)).map(Val::new)
  }

  /// Where the bytes of a Uint8Array are (for V8 an off-heap store from
  /// here on, which does not move).
  pub fn uint8_data(self, v: Val<'e>) -> Result<Option<*mut u8>, Fault> {
    let (mut kind, mut len, mut offset) = (0, 0usize, 0usize);
    let (mut data, mut buffer) = (ptr::null_mut(), ptr::null_mut());
    napi_call!(
      self,
      napi_get_typedarray_info(v.0, &mut kind, &mut len, &mut data, &mut buffer, &mut offset)
    )?;
    Ok((kind == sys::TypedarrayType::uint8_array && len > 0 && !data.is_null()).then_some(data.cast()))
  }

  /// Runs `f` in a handle scope of its own and hands its value out to the
  /// enclosing scope: the values `f` made on the way (a part's text, say)
  /// are garbage once it returns, not held until the export returns, as
  /// the reference's own temporaries are not (#10: listTurns held every
  /// record's text to the end). Only the value `f` returns may be used
  /// after it: the others' handles are gone with the scope.
  pub fn escaping<E: From<Fault>>(self, f: impl FnOnce() -> Result<Val<'e>, E>) -> Result<Val<'e>, E> {
    let mut scope = ptr::null_mut();
    napi_call!(self, napi_open_escapable_handle_scope(&mut scope))?;
    let result = f().and_then(|v| {
      let mut out = ptr::null_mut();
      napi_call!(self, napi_escape_handle(scope, v.0, &mut out))?;
      Ok(Val::new(out))
    });
    // Closed on every way out; a scope left open would hold what it made.
    napi_call!(self, napi_close_escapable_handle_scope(scope))?;
    result
  }

  /// Makes `data` this env's instance data, freed (its references
  /// deleted) when the env is torn down. Data set before in this env (a
  /// second `__setup`) is left as it was: a call may still hold it, and
  /// N-API replaces instance data without finalizing it.
  pub fn set_instance(self, data: Box<dyn Kept>) -> Result<(), Fault> {
    let data = Box::into_raw(Box::new(data));
    let set = napi_call!(self, napi_set_instance_data(data.cast(), Some(drop_instance), ptr::null_mut()));
    if set.is_err() {
      // SAFETY: `data` came from Box::into_raw above and N-API did not take it.
      let data = unsafe { Box::from_raw(data) };
      for r in data.refs() {
        napi_call!(self, napi_delete_reference(r)).ok();
      }
    }
    set
  }

  /// This env's instance data, when it is a `T`: borrowed for the call,
  /// which the env (the data's only owner) outlives.
  pub fn instance<T: 'static>(self) -> Option<&'e T> {
    let mut data = ptr::null_mut();
    napi_call!(self, napi_get_instance_data(&mut data)).ok()?;
    // SAFETY: the only instance data this module sets is a Box<Box<dyn
    // Kept>> (`set_instance`), alive until the env's teardown; a null
    // pointer (none set) reads as None.
    let data = unsafe { data.cast::<Box<dyn Kept>>().as_ref() }?;
    data.as_any().downcast_ref::<T>()
  }
}

/// What an env keeps as its instance data, and the references to delete
/// with it when the env goes.
pub trait Kept: std::any::Any {
  fn refs(&self) -> Vec<sys::napi_ref>;
  fn as_any(&self) -> &dyn std::any::Any;
}

enum ErrorKind {
  Error,
  Type,
  Range,
}

/// Sets the first byte of a Uint8Array that `uint8_data` located.
pub fn raise_flag(flag: *mut u8) {
  // SAFETY: `flag` points at the first byte of a Uint8Array that the realm
  // holds by a strong reference for the life of its env, and a realm is
  // used only on its env's thread.
  unsafe { flag.write_volatile(1) }
}

/// The finalizer of instance data set by `set_instance`: the env is going,
/// so its references are deleted and the data dropped.
// SAFETY: called by N-API only, with the `data` `set_instance` registered.
unsafe extern "C" fn drop_instance(env: sys::napi_env, data: *mut std::ffi::c_void, _hint: *mut std::ffi::c_void) {
  // SAFETY: `data` is the Box<Box<dyn Kept>> `set_instance` handed to
  // N-API, which calls this once, at the env's teardown, on its thread.
  let data = unsafe { Box::from_raw(data.cast::<Box<dyn Kept>>()) };
  for r in data.refs() {
    // SAFETY: each reference was made in this env and is deleted once.
    unsafe { sys::napi_delete_reference(env, r) };
  }
}
