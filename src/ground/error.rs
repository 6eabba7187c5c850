//! The one error type of the journal logic. Each variant is one kind of
//! JavaScript exception the reference lets reach its caller; the napi
//! boundary's `export` (src/js/export.rs) is the one place that turns it
//! into that exception. The messages V8 and Node word themselves (a read
//! of null, a destructuring, a path argument) are made here, each once.

use std::fmt;
use std::io;

pub type Result<T, E = JournalError> = std::result::Result<T, E>;

/// Exit status of a refusal a supervisor must not retry (the reference's
/// `BRAKE_EXIT`): STOP is present or the binding is held.
pub const BRAKE_EXIT: i32 = 3;

#[derive(Debug, Clone, PartialEq)]
pub enum JournalError {
  /// A `DiscordError`: a refusal whose message is part of the contract.
  Discord { message: String, exit_code: i32 },
  /// Node's own `Error` from an fs call the reference does not wrap
  /// (`ensureJournal`'s mkdir): only the class and `code` are contract.
  Node {
    code: String,
    errno: i32,
    syscall: &'static str,
    path: String,
  },
  /// A `TypeError` the reference lets escape: a property read of null or
  /// undefined, or Node's argument validation (then `code` is set).
  Type { message: String, code: Option<&'static str> },
  /// A `RangeError`: an invalid date.
  Range { message: String },
}

impl JournalError {
  /// `new DiscordError(message)`: exit code 1, "operation failed".
  pub fn failed(message: impl Into<String>) -> Self {
    JournalError::Discord {
      message: message.into(),
      exit_code: 1,
    }
  }

  /// A refusal with `BRAKE_EXIT`.
  pub fn brake(message: impl Into<String>) -> Self {
    JournalError::Discord {
      message: message.into(),
      exit_code: BRAKE_EXIT,
    }
  }

  /// A refusal with `note` said after it (what was changed before it); any
  /// other error as it is.
  pub fn with_note(self, note: &str) -> Self {
    match self {
      JournalError::Discord { message, exit_code } => JournalError::Discord {
        message: format!("{message}\n{note}"),
        exit_code,
      },
      other => other,
    }
  }

  /// V8's TypeError for reading `key` of null.
  pub fn read_of_null(key: &str) -> Self {
    Self::type_error(format!("Cannot read properties of null (reading '{key}')"))
  }

  /// V8's TypeError for reading `key` of undefined.
  pub fn read_of_undefined(key: &str) -> Self {
    Self::type_error(format!("Cannot read properties of undefined (reading '{key}')"))
  }

  /// V8's TypeError for calling a value that is not a function, named as
  /// the reference's source names it.
  pub fn not_a_function(name: &str) -> Self {
    Self::type_error(format!("{name} is not a function"))
  }

  /// V8's TypeError for `const { key } = source` where `source` evaluated
  /// to null or undefined (`what`).
  pub fn destructure(key: &str, source: &str, what: &str) -> Self {
    Self::type_error(format!("Cannot destructure property '{key}' of '{source}' as it is {what}."))
  }

  /// Node's ERR_INVALID_ARG_VALUE for a path with a NUL byte, refused
  /// before any system call.
  pub fn null_bytes() -> Self {
    JournalError::Type {
      message: "The argument 'path' must be a string, Uint8Array, or URL without null bytes.".into(),
      code: Some("ERR_INVALID_ARG_VALUE"),
    }
  }

  /// Node's ERR_INVALID_ARG_TYPE for a path that is not a string (Node's
  /// own message, with the value described, is preferred where the
  /// boundary can have `path.join` make it).
  pub fn path_not_string() -> Self {
    JournalError::Type {
      message: "The \"path\" argument must be of type string".into(),
      code: Some("ERR_INVALID_ARG_TYPE"),
    }
  }

  /// The binary called without index.js's `__setup`.
  pub fn not_loaded() -> Self {
    Self::type_error("discord-journal: load the package through index.js".into())
  }

  fn type_error(message: String) -> Self {
    JournalError::Type { message, code: None }
  }

  pub fn invalid_date() -> Self {
    JournalError::Range {
      message: "Invalid time value".into(),
    }
  }
}

/// What a JavaScript step the core called back into threw (the clock,
/// JSON.stringify and a toJSON), as the reference's `quietFs` knows it: by
/// its `code` when that is a string, else nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct ThrownCode(pub Option<String>);

impl ThrownCode {
  /// `quietFs(thrown, label, verb)`.
  pub fn refusal(&self, label: &str, verb: &str) -> JournalError {
    quiet_fs(self.0.as_deref(), label, verb)
  }
}

impl fmt::Display for JournalError {
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match self {
      JournalError::Discord { message, .. } | JournalError::Type { message, .. } | JournalError::Range { message } => f.write_str(message),
      JournalError::Node {
        code,
        errno,
        syscall,
        path,
      } => write!(f, "{code}: {}, {syscall} '{path}'", uv_message(*errno)),
    }
  }
}

impl std::error::Error for JournalError {}

/// The `code` Node gives an fs failure: libuv's name for the errno, or
/// Node's own code for a path it refuses before any system call.
pub fn fs_code(err: &io::Error) -> Option<String> {
  // A journal file that is not a regular file (#10): libuv's name for
  // "inappropriate file type or format", as no errno says it.
  if crate::ground::files::is_not_regular(err) {
    return Some("EFTYPE".into());
  }
  match err.raw_os_error() {
    Some(errno) => Some(errno_name(errno)),
    // Rust refuses a path with a NUL byte before the system call; Node does too.
    None if err.kind() == io::ErrorKind::InvalidInput => Some("ERR_INVALID_ARG_VALUE".into()),
    None => None,
  }
}

fn errno_name(errno: i32) -> String {
  match nix::errno::Errno::from_raw(errno) {
    // Linux's one number for both, which libuv names ENOTSUP where nix
    // spells it EOPNOTSUPP first (macOS has two numbers, and nix names each).
    #[cfg(target_os = "linux")]
    nix::errno::Errno::EOPNOTSUPP => "ENOTSUP".into(),
    nix::errno::Errno::UnknownErrno => format!("Unknown system error {}", -errno),
    e => format!("{e:?}"),
  }
}

/// libuv's description of an errno (`uv_strerror`), which Node's fs errors
/// carry in their message (`EEXIST: file already exists, mkdir '…'`): the
/// errnos a file system call can fail with. `__test__/files.test.mjs`
/// holds `ensureJournal`'s errors against Node's own `mkdirSync`'s.
pub fn uv_message(errno: i32) -> &'static str {
  use nix::libc::*;
  match errno {
    E2BIG => "argument list too long",
    EACCES => "permission denied",
    EAGAIN => "resource temporarily unavailable",
    EBADF => "bad file descriptor",
    EBUSY => "resource busy or locked",
    ECANCELED => "operation canceled",
    EEXIST => "file already exists",
    EFAULT => "bad address in system call argument",
    EFBIG => "file too large",
    EINTR => "interrupted system call",
    EINVAL => "invalid argument",
    EIO => "i/o error",
    EISDIR => "illegal operation on a directory",
    ELOOP => "too many symbolic links encountered",
    EMFILE => "too many open files",
    EMLINK => "too many links",
    ENAMETOOLONG => "name too long",
    ENFILE => "file table overflow",
    ENODEV => "no such device",
    ENOENT => "no such file or directory",
    ENOMEM => "not enough memory",
    ENOSPC => "no space left on device",
    ENOSYS => "function not implemented",
    ENOTDIR => "not a directory",
    ENOTEMPTY => "directory not empty",
    ENOTSUP => "operation not supported on socket",
    EOVERFLOW => "value too large for defined data type",
    EPERM => "operation not permitted",
    EROFS => "read-only file system",
    ESPIPE => "invalid seek",
    ETXTBSY => "text file is busy",
    EXDEV => "cross-device link not permitted",
    ENXIO => "no such device or address",
    #[cfg(target_os = "linux")]
    EREMOTEIO => "remote I/O error",
    ENOTTY => "inappropriate ioctl for device",
    EILSEQ => "illegal byte sequence",
    ENODATA => "no data available",
    _ => "unknown error",
  }
}

/// The reference's `quietFs(err, label, verb)`: an fs failure told by its
/// label and errno code only, never the host path (#1873).
pub fn quiet_fs(code: Option<&str>, label: &str, verb: &str) -> JournalError {
  JournalError::failed(format!("could not {verb} {label} ({})", code.unwrap_or("unknown error")))
}

/// `quietFs` for an io::Error.
pub fn quiet_io(err: &io::Error, label: &str, verb: &str) -> JournalError {
  quiet_fs(fs_code(err).as_deref(), label, verb)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn codes_are_libuv_names() {
    assert_eq!(fs_code(&io::Error::from_raw_os_error(21)).as_deref(), Some("EISDIR"));
    assert_eq!(fs_code(&io::Error::from_raw_os_error(95)).as_deref(), Some("ENOTSUP"));
    assert_eq!(fs_code(&io::Error::from_raw_os_error(11)).as_deref(), Some("EAGAIN"));
    assert_eq!(fs_code(&io::Error::other("x")), None);
  }

  #[test]
  fn quiet_messages() {
    let e = quiet_io(&io::Error::from_raw_os_error(21), "inbox.jsonl", "append to");
    assert_eq!(e, JournalError::failed("could not append to inbox.jsonl (EISDIR)"));
    assert_eq!(
      quiet_fs(None, "turn record t1", "write"),
      JournalError::failed("could not write turn record t1 (unknown error)")
    );
  }
}
