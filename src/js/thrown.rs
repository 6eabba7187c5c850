//! Why a call did not return, for the layers above the raw N-API calls: a
//! journal error still to be thrown, a JavaScript exception already
//! pending, an N-API status with no exception, or an env that can no
//! longer run JavaScript. `export.rs` ends a call with it.

use napi::sys;

use super::raw::Fault;
use crate::ground::error::JournalError;

/// Why a call did not return: a journal error still to be thrown, or a
/// JavaScript exception already pending (from a seam, a getter, toJSON...),
/// which must reach the caller as it was thrown.
pub enum Thrown {
  Journal(JournalError),
  Pending,
  /// An N-API call failed without an exception (a value V8 would not
  /// make); surfaced as a DiscordError, naming the file where one is read.
  Napi(sys::napi_status),
  /// The env can no longer run JavaScript (a terminated Worker): the call
  /// ends at once, with no further step on the file system and no error of
  /// its own, so the termination goes on (#10).
  Terminating,
}

pub type JsResult<T> = Result<T, Thrown>;

impl From<JournalError> for Thrown {
  fn from(e: JournalError) -> Self {
    Thrown::Journal(e)
  }
}

impl Thrown {
  /// A failure of the reader of the file `label`: an N-API call that failed
  /// without an exception (a string or an array V8 would not make) becomes
  /// a refusal naming the file, never a bare N-API status (#10).
  pub fn reading(self, label: &str) -> Thrown {
    match self {
      Thrown::Napi(_) => crate::ground::error::quiet_fs(None, label, "read").into(),
      other => other,
    }
  }
}

/// A reader's refusal when the memory for its result cannot be had.
pub fn out_of_memory(label: &str) -> Thrown {
  crate::ground::error::quiet_fs(Some("ENOMEM"), label, "read").into()
}

impl From<Fault> for Thrown {
  fn from(f: Fault) -> Self {
    match f {
      Fault::Pending => Thrown::Pending,
      Fault::Terminating => Thrown::Terminating,
      Fault::Status(status) => Thrown::Napi(status),
    }
  }
}
