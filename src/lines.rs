//! Append-only line files (`*.jsonl`): one JSON text per line, appended
//! with one write each, read back whole. A line that does not parse refuses
//! the whole read, naming the file and line number but never the path.

use std::fs::File;
use std::io::{Seek, Write};

use crate::error::{quiet_io, JournalError, Result};
use crate::paths;

/// The journal's line files, by name.
pub const INBOX: &str = "inbox.jsonl";
pub const OUTBOX: &str = "outbox.jsonl";
pub const DROPS: &str = "drops.jsonl";
pub const ADMISSIONS: &str = "admissions.jsonl";
pub const NOTICES: &str = "notices.jsonl";
pub const RELOADS: &str = "reloads.jsonl";

/// `existsSync(path)`: access(F_OK); any failure reads as absent.
pub fn exists(path: &str) -> bool {
  nix::unistd::access(path, nix::unistd::AccessFlags::F_OK).is_ok()
}

/// Appends `line` and a newline to `dir/name`, creating it 0600 (under the
/// umask). One write(2) of the whole line, so concurrent appenders under
/// O_APPEND never interleave within a line.
pub fn append(dir: &str, name: &str, line: &str) -> Result<()> {
  if line.contains('\n') {
    return Err(JournalError::failed("journal line must not contain a newline"));
  }
  let path = paths::under(dir, &[name]);
  let mut buf = Vec::with_capacity(line.len() + 1);
  buf.extend_from_slice(line.as_bytes());
  buf.push(b'\n');
  let mut file = crate::files::open(&path, crate::files::Access::Append, 0).map_err(|e| quiet_io(&e, name, "append to"))?;
  write_line(&mut file, &buf).map_err(|e| quiet_io(&e, name, "append to"))
}

/// Writes a whole line, or none of it: when the file system fills (or
/// fails) part-way, the part already written is cut off again, so a full
/// disk refuses one append instead of tearing a line that would make every
/// later read of the file refuse. Beyond the reference, which leaves the
/// torn line; it changes no result of an append that succeeds.
pub(crate) fn write_line(file: &mut File, buf: &[u8]) -> std::io::Result<()> {
  let mut written = 0;
  while written < buf.len() {
    match file.write(&buf[written..]) {
      Ok(0) => return Err(rollback(file, written, std::io::ErrorKind::WriteZero.into())),
      Ok(n) => written += n,
      Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
      Err(e) => return Err(rollback(file, written, e)),
    }
  }
  Ok(())
}

/// Cuts off the `written` bytes of a failed line when nothing was appended
/// after them (the file still ends where our write left off).
fn rollback(file: &mut File, written: usize, err: std::io::Error) -> std::io::Error {
  if written > 0 {
    if let (Ok(end), Ok(meta)) = (file.stream_position(), file.metadata()) {
      if meta.len() == end {
        let _ = file.set_len(end - written as u64);
      }
    }
  }
  err
}

/// Node's `buffer.toString("utf8")`: each maximal invalid subpart becomes
/// one U+FFFD (WHATWG), which is also what Rust's lossy decoding does.
pub fn decode_utf8(bytes: Vec<u8>) -> String {
  match String::from_utf8(bytes) {
    Ok(s) => s,
    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn append_writes_one_line_0600() {
    use std::os::unix::fs::PermissionsExt;
    let d = crate::testutil::TempDir::new();
    append(d.path(), INBOX, r#"{"id":"1"}"#).expect("append");
    append(d.path(), INBOX, "2").expect("append");
    let path = format!("{}/{INBOX}", d.path());
    assert_eq!(std::fs::read_to_string(&path).expect("file"), "{\"id\":\"1\"}\n2\n");
    let umask = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    nix::sys::stat::umask(umask);
    assert_eq!(
      std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777,
      0o600 & !umask.bits()
    );
  }

  #[test]
  fn append_refusals() {
    let d = crate::testutil::TempDir::new();
    std::fs::create_dir(format!("{}/{OUTBOX}", d.path())).expect("mkdir");
    assert_eq!(
      append(d.path(), OUTBOX, "1"),
      Err(JournalError::failed("could not append to outbox.jsonl (EISDIR)"))
    );
    assert_eq!(
      append(d.path(), INBOX, "a\nb"),
      Err(JournalError::failed("journal line must not contain a newline"))
    );
  }

  #[test]
  fn lossy_decoding_is_whatwg() {
    assert_eq!(
      decode_utf8(vec![b'a', 0xff, 0xed, 0xa0, 0x80, b'b']),
      "a\u{fffd}\u{fffd}\u{fffd}\u{fffd}b"
    );
    assert_eq!(decode_utf8(vec![0xf0, 0x9f, 0x98, b'x']), "\u{fffd}x");
  }
}
