//! How an export is written, and the one exit where a Rust error becomes a
//! JavaScript exception. Every export is one expression:
//!
//! ```ignore
//! #[napi(js_name = "readDrops")]
//! pub fn read_drops<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
//!   export(env, |js| read_all(js, &dir, lines::DROPS))
//! }
//! ```
//!
//! The body returns `JsResult`; `export` throws what it failed with. An
//! argument napi-rs converts (`Dir`) fails through the same exit, `fail`.
//! napi-rs's own conversion of an `Err` is not used: it reads `cause` and
//! coerces a status into a generic Error, where the reference's caller
//! sees a `DiscordError`, a Node error with its `code`, or the very
//! exception a seam or getter threw.

use napi::Env;

use super::thrown::{JsResult, Thrown};
use super::{heap, realm, Js};
use crate::ground::error::{JournalError, ThrownCode};

/// Runs an export's body with the env of its call and ends the call: its
/// value, or the exception now pending.
pub fn export<'e, T>(env: &'e Env, body: impl FnOnce(Js<'e>) -> JsResult<T>) -> napi::Result<T> {
  let js = Js::new(env);
  let out = body(js).map_err(|e| fail(js, e));
  heap::settle();
  out
}

/// The exception for `e`, made pending, and the error that ends the call
/// with it (see `ended`). In an env that can no longer run JavaScript
/// nothing is thrown: nothing could catch it, and the call only has to
/// return for the termination to go on. Also the end of an argument's
/// conversion (`Dir`), which napi-rs makes before the export's body runs.
pub fn fail(js: Js, e: Thrown) -> napi::Error {
  let raised = match e {
    Thrown::Pending => Ok(()),
    Thrown::Terminating => Err(Thrown::Terminating),
    Thrown::Journal(e) => {
      // A journal error raised while an exception is pending replaced it,
      // as a `finally` that throws does (`.stop.lock` that cannot be
      // removed after the action threw): the later error is the one thrown.
      match if js.pending() { js.take_exception().map(drop) } else { Ok(()) } {
        Ok(()) => js.throw_error(e),
        Err(other) => Err(other.into()),
      }
    }
    // Readers have already named their file (`Thrown::reading`); what is
    // left is still a refusal, never a bare N-API status (#10).
    Thrown::Napi(status) => js.throw_error(JournalError::failed(format!(
      "discord-journal: a JavaScript value could not be made (N-API status {status})"
    ))),
  };
  match raised {
    Ok(()) | Err(Thrown::Pending) => ended(),
    Err(Thrown::Terminating) => terminated(js),
    Err(_) => napi::Error::from_reason("discord-journal: could not raise an error"),
  }
}

impl<'e> Js<'e> {
  /// The JavaScript value of a journal error, thrown.
  fn throw_error(self, e: JournalError) -> JsResult<()> {
    let v = match &e {
      JournalError::Discord { message, exit_code } => {
        let ctor = self.kept(self.realm()?.discord_error)?;
        self.construct(ctor, &[self.str(message)?, self.number(f64::from(*exit_code))?])?
      }
      JournalError::Node {
        code,
        errno,
        syscall,
        path,
      } => {
        // Node's own fs error: its keys in Node's order (UVException).
        let err = self.error(None, &e.to_string())?;
        self.set(err, "errno", self.number(f64::from(-errno))?)?;
        self.set(err, "code", self.str(code)?)?;
        self.set(err, "syscall", self.str(syscall)?)?;
        self.set(err, "path", self.str(path)?)?;
        err
      }
      JournalError::Type { message, code } => self.type_error(*code, message)?,
      JournalError::Range { message } => self.range_error(message)?,
    };
    self.throw(v);
    Ok(())
  }
}

/// The end of a call whose exception (if any) is already pending: napi-rs
/// sees an exception pending and throws nothing of its own. In an env that
/// is terminating nothing is pending; napi-rs then tries to throw an empty
/// Error, which N-API refuses there, so nothing reaches JavaScript either.
fn ended() -> napi::Error {
  napi::Error::new(napi::Status::PendingException, "")
}

/// The end of a call in an env that can no longer run JavaScript: nothing
/// is thrown, and index.js is told to stop the thread.
fn terminated<'e>(js: Js<'e>) -> napi::Error {
  realm::raise_ended(js);
  ended()
}

/// For a callback of the Rust core, which knows a failed step only by a
/// `code`: an end that is no code (a termination, an exception thrown while
/// reading the code) is kept in `thrown`, for the export to return once the
/// core has returned, and the core sees a failure.
pub fn keep<T>(thrown: &mut Option<Thrown>, r: JsResult<Result<T, ThrownCode>>) -> Result<T, ThrownCode> {
  r.unwrap_or_else(|e| {
    *thrown = Some(e);
    Err(ThrownCode(None))
  })
}

/// The export's end after a core call that took callbacks through `keep`:
/// what a callback kept comes first, as it ended the step the core failed.
pub fn after<T>(thrown: Option<Thrown>, r: Result<T, impl Into<Thrown>>) -> JsResult<T> {
  match thrown {
    Some(e) => Err(e),
    None => r.map_err(Into::into),
  }
}
