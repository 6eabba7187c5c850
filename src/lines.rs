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

/// Appends `line` and a newline to `dir/name`, creating it 0600 (under the
/// umask). One write(2) of the whole line, so concurrent appenders under
/// O_APPEND never interleave within a line.
///
/// Where the file does not end with a newline (its last line was cut short
/// by a kill or a power loss, or written without one by hand), the line is
/// written after a newline of its own, so that it never glues onto the cut
/// bytes and is lost with them (#21, beyond the reference, which glues).
/// Wherever the file ends with a newline or is empty, which is every case
/// that is not a fault, the bytes are the reference's. The last byte is
/// read through the same descriptor (one pread); a file this user may
/// write but not read is appended to as before, unchecked.
pub fn append(dir: &str, name: &str, line: &str) -> Result<()> {
  if line.contains('\n') {
    return Err(JournalError::failed("journal line must not contain a newline"));
  }
  let path = paths::under(dir, &[name]);
  let refuse = |e: std::io::Error| quiet_io(&e, name, "append to");
  use crate::files::{open_sized, Access};
  // O_NOATIME: a read right after a write would otherwise update the
  // access time (relatime), a metadata write per append; it is permitted
  // only to the file's owner (EPERM otherwise: then without it). A file
  // this user may write but not read is appended to as before, unchecked.
  let opened = match open_sized(&path, Access::ReadAppend, crate::files::NOATIME) {
    Err(e) if e.raw_os_error() == Some(nix::libc::EPERM) => open_sized(&path, Access::ReadAppend, 0),
    opened => opened,
  };
  let (mut file, size) = match opened {
    Err(e) if e.raw_os_error() == Some(nix::libc::EACCES) => open_sized(&path, Access::Append, 0),
    opened => opened,
  }
  .map_err(refuse)?;
  let cut = size > 0 && last_byte(&file, size).is_some_and(|b| b != b'\n');
  let mut buf = Vec::with_capacity(line.len() + 2);
  if cut {
    buf.push(b'\n');
  }
  buf.extend_from_slice(line.as_bytes());
  buf.push(b'\n');
  write_line(&mut file, &buf).map_err(refuse)?;
  crate::durable::file(&file).map_err(refuse)?;
  if size == 0 {
    crate::durable::dir(dir).map_err(refuse)?;
  }
  Ok(())
}

/// The byte at `size - 1`, where the file could be read there.
fn last_byte(file: &File, size: u64) -> Option<u8> {
  use std::os::unix::fs::FileExt;
  let mut b = [0u8; 1];
  match file.read_at(&mut b, size - 1) {
    Ok(1) => Some(b[0]),
    _ => None,
  }
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
      0o600 & !(umask.bits() as u32)
    );
  }

  #[test]
  fn an_append_never_glues_onto_a_cut_line() {
    use std::os::unix::fs::PermissionsExt;
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/{INBOX}", d.path());
    std::fs::write(&path, "{\"id\":\"m1\"}\n{\"id\":\"m2\",\"at\":\"2026-").expect("cut");
    append(d.path(), INBOX, r#"{"id":"m3"}"#).expect("append");
    append(d.path(), INBOX, r#"{"id":"m4"}"#).expect("append");
    assert_eq!(
      std::fs::read_to_string(&path).expect("file"),
      "{\"id\":\"m1\"}\n{\"id\":\"m2\",\"at\":\"2026-\n{\"id\":\"m3\"}\n{\"id\":\"m4\"}\n"
    );
    // A file this user may write but not read is appended to unchecked.
    std::fs::write(&path, "{\"id\":\"m1\"}\n").expect("whole");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o200)).expect("chmod");
    append(d.path(), INBOX, "2").expect("append to a write-only file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    assert_eq!(std::fs::read_to_string(&path).expect("file"), "{\"id\":\"m1\"}\n2\n");
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
