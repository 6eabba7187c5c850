//! Append-only line files (`*.jsonl`): one JSON text per line, appended
//! with one write each, read back whole. A line that does not parse refuses
//! the whole read, naming the file and line number but never the path.

use std::fs::File;
use std::io::{Seek, Write};

use crate::ground::error::{quiet_io, JournalError, Result};
use crate::ground::paths;

/// The journal's line files, by name.
pub const INBOX: &str = "inbox.jsonl";
pub const OUTBOX: &str = "outbox.jsonl";
pub const DROPS: &str = "drops.jsonl";
pub const ADMISSIONS: &str = "admissions.jsonl";
pub const NOTICES: &str = "notices.jsonl";
pub const RELOADS: &str = "reloads.jsonl";

/// The record files, in the one order everything lists them: a repair
/// takes them so, the command (through `recordFiles`) lists them so, and
/// the boundary's `JournalFile` numbers them so.
pub const RECORD_FILES: [&str; 6] = [INBOX, OUTBOX, DROPS, ADMISSIONS, NOTICES, RELOADS];

/// Appends `line` and a newline to `dir/name`, creating it 0600 (under the
/// umask). One write(2) of the whole line, so concurrent appenders under
/// O_APPEND never interleave within a line.
///
/// Where the file's last line is cut short (by a kill or a power loss, or
/// written without its newline by hand), the line is written after a
/// newline of its own, so that it never glues onto the cut bytes and is
/// lost with them (#21, beyond the reference, which glues). A last line
/// that JavaScript's `trim()` empties (a BOM an editor saved, a stray `\r`
/// or spaces) is no cut line: the reference's append glues onto it and
/// makes it readable, and so does this (#31). Wherever the file ends with
/// a newline or is empty, which is every case that is not a fault, the
/// bytes are the reference's.
///
/// The tail is judged and the line written holding the file's flock
/// (#31): another appender of this package is then never seen half-way
/// through its line (which the kernel makes visible a page at a time, and
/// which would otherwise be taken for a cut line and get an empty line
/// before ours), and a repair that holds it while it checks and mends the
/// file never cuts off a line appended in between. A file a repair renamed
/// over meanwhile (no name links it any more) is opened again. A file this
/// user may write but not read is appended to as before, unchecked.
pub fn append(dir: &str, name: &str, line: &str) -> Result<()> {
  if line.contains('\n') {
    return Err(JournalError::failed("journal line must not contain a newline"));
  }
  let path = paths::under(dir, &[name]);
  let refuse = |e: std::io::Error| quiet_io(&e, name, "append to");
  let (mut file, size) = open_locked(&path).map_err(refuse)?;
  let cut = size > 0 && cut_tail(file.file(), size);
  let mut buf = Vec::with_capacity(line.len() + 2);
  if cut {
    buf.push(b'\n');
  }
  buf.extend_from_slice(line.as_bytes());
  buf.push(b'\n');
  write_line(file.file_mut(), &buf).map_err(refuse)?;
  crate::ground::durable::file(file.file()).map_err(refuse)?;
  if size == 0 {
    crate::ground::durable::dir(dir).map_err(refuse)?;
  }
  Ok(())
}

/// How long an append waits for the file's flock: an appender holds it for
/// a write, a repair for the check, quarantine and mend of one file.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// The line file opened for appending, flocked, still linked, and its size.
fn open_locked(path: &str) -> std::io::Result<(crate::ground::files::Flocked, u64)> {
  use crate::ground::files::{flock_within, open_path, size_linked, Access, Unflocked};
  let deadline = std::time::Instant::now() + PATIENCE;
  // A repair renames a file over at most once per run; a few rounds are
  // many.
  for _ in 0..8 {
    // O_NOATIME: a read right after a write would otherwise update the
    // access time (relatime), a metadata write per append; it is permitted
    // only to the file's owner (EPERM otherwise: then without it). A file
    // this user may write but not read is opened write-only.
    let opened = match open_path(path, Access::ReadAppend, crate::ground::files::NOATIME) {
      Err(e) if e.raw_os_error() == Some(nix::libc::EPERM) => open_path(path, Access::ReadAppend, 0),
      opened => opened,
    };
    let file = match opened {
      Err(e) if e.raw_os_error() == Some(nix::libc::EACCES) => open_path(path, Access::Append, 0),
      opened => opened,
    }?;
    let locked = flock_within(file, deadline).map_err(|e| match e {
      Unflocked::TimedOut => std::io::Error::from_raw_os_error(nix::libc::EWOULDBLOCK),
      Unflocked::Failed(e) => e,
    })?;
    let (size, linked) = size_linked(locked.file())?;
    if linked {
      return Ok((locked, size));
    }
  }
  Err(std::io::Error::from_raw_os_error(nix::libc::ESTALE))
}

/// Whether the file's last line (after its last newline; `size` > 0) is
/// cut short: not ended by a newline, and not something `trim()` empties.
/// A file that cannot be read here is not judged cut.
///
/// The tail is read backwards a chunk at a time and decoded character by
/// character from its end: the first character that is not one `trim()`
/// removes settles it (a cut JSON line has one at its very end), so the
/// work is bounded by the whitespace actually there. Bytes that do not
/// decode are U+FFFD to the reader, which `trim()` keeps: cut.
fn cut_tail(file: &File, size: u64) -> bool {
  use std::os::unix::fs::FileExt;
  let Some(last) = last_byte(file, size) else { return false };
  if last == b'\n' {
    return false;
  }
  if last.is_ascii() && !is_ascii_space(last) {
    return true;
  }
  let mut end = size;
  let mut chunk = vec![0u8; 4096];
  // Continuation bytes met (backwards) whose lead byte is not read yet.
  let mut pending: Vec<u8> = Vec::with_capacity(4);
  while end > 0 {
    let start = end.saturating_sub(chunk.len() as u64);
    let want = usize::try_from(end - start).unwrap_or(chunk.len());
    if file.read_exact_at(&mut chunk[..want], start).is_err() {
      return false;
    }
    for &b in chunk[..want].iter().rev() {
      if b & 0xc0 == 0x80 {
        // A continuation byte: at most three before their lead.
        if pending.len() == 3 {
          return true;
        }
        pending.insert(0, b);
        continue;
      }
      if b.is_ascii() {
        if !pending.is_empty() {
          return true;
        }
        if b == b'\n' {
          return false;
        }
        if !is_ascii_space(b) {
          return true;
        }
        continue;
      }
      pending.insert(0, b);
      let space = std::str::from_utf8(&pending).is_ok_and(|c| c.chars().all(crate::ground::text::is_js_space));
      if !space {
        return true;
      }
      pending.clear();
    }
    end = start;
  }
  // The whole file is the tail: whitespace, unless bytes were left over.
  !pending.is_empty()
}

/// The ASCII characters JavaScript's `trim()` removes (but the newline,
/// which ends a line).
fn is_ascii_space(b: u8) -> bool {
  matches!(b, b'\t' | 0x0b | 0x0c | b'\r' | b' ')
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

  /// `cut_tail` against its definition, on tails of every kind: the bytes
  /// after the last newline, decoded as the reader decodes them, are cut
  /// unless `trim()` empties them.
  #[test]
  fn a_tail_is_cut_unless_trim_empties_it() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/t", d.path());
    let pieces: [&[u8]; 16] = [
      b" ",
      b"\t",
      b"\r",
      b"\x0b",
      b"\x0c",
      b"\n",
      b"x",
      b"}",
      "\u{feff}".as_bytes(),
      "\u{a0}".as_bytes(),
      "\u{3000}".as_bytes(),
      "\u{2028}".as_bytes(),
      "\u{200b}".as_bytes(),
      "\u{180e}".as_bytes(),
      b"\xff",
      b"\x80",
    ];
    let defined = |bytes: &[u8]| {
      let tail = match memchr::memrchr(b'\n', bytes) {
        Some(at) => &bytes[at + 1..],
        None => bytes,
      };
      !tail.is_empty() && !crate::ground::text::js_trim(&crate::ground::text::decode_utf8(tail.to_vec())).is_empty()
    };
    // Every sequence of up to four pieces, and each at the end of a long run of spaces.
    let mut seed = 1u64;
    for _ in 0..5_000 {
      let mut bytes = Vec::new();
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      let mut r = seed;
      for _ in 0..(r % 5) {
        r /= 5;
        bytes.extend_from_slice(pieces[(r % 16) as usize]);
        r /= 16;
      }
      if seed.is_multiple_of(7) {
        let mut long = vec![b' '; 9000];
        long.extend_from_slice(&bytes);
        bytes = long;
      }
      if bytes.is_empty() {
        continue;
      }
      std::fs::write(&path, &bytes).expect("write");
      let file = File::open(&path).expect("open");
      assert_eq!(cut_tail(&file, bytes.len() as u64), defined(&bytes), "{bytes:?}");
    }
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
}
