//! Append-only line files (`*.jsonl`): one JSON text per line, appended
//! with one write each, read back whole. A line that does not parse refuses
//! the whole read, naming the file and line number but never the path.

use std::fs::File;
use std::io::{Seek, Write};

use crate::ground::error::{quiet_io, JournalError, Result};
use crate::ground::journal::Journal;

/// The record files, described once: a row gives a file's constant,
/// name and `JournalFile` variant, in the one order all list them (repair,
/// `recordFiles`, `JournalFile`'s numbers). A seventh file is a row here and
/// its readers; each user makes its items with a macro of its own (`$then`).
macro_rules! record_files {
  ($then:ident) => {
    $then! {
      INBOX "inbox.jsonl" Inbox,
      OUTBOX "outbox.jsonl" Outbox,
      DROPS "drops.jsonl" Drops,
      ADMISSIONS "admissions.jsonl" Admissions,
      NOTICES "notices.jsonl" Notices,
      RELOADS "reloads.jsonl" Reloads,
    }
  };
}
pub(crate) use record_files;

macro_rules! names {
  ($($file:ident $name:literal $variant:ident,)*) => {
    $(pub const $file: &str = $name;)*
    pub const RECORD_FILES: [&str; [$($name),*].len()] = [$($file),*];
  };
}
record_files!(names);

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
///
/// Where this thread's last append to the path left the file ending at
/// byte E, one read of the two bytes from E - 1 judges the file instead
/// (#47): exactly one byte, a newline, proves under the flock that the file
/// ends there with a whole line, whatever happened since; the link count,
/// asked too, that a name still holds it (#55). Anything else (more bytes,
/// fewer, another byte, an error) takes the full check above. The
/// remembered end only chooses where to read: the answer is the read's.
pub fn append(j: &Journal, name: &str, line: &str) -> Result<()> {
  append_with(j, name, |buf| {
    buf.extend_from_slice(line.as_bytes());
    Ok::<(), JournalError>(())
  })
}

/// `append` of the line `fill` puts into the room it is given (the
/// boundary has V8 write a string's UTF-8 there, with no copy of its own,
/// #47). `fill` runs first, before the newline check and any system call.
pub fn append_with<E: From<JournalError>>(
  j: &Journal,
  name: &str,
  fill: impl FnOnce(&mut Vec<u8>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
  LINE.with(|buf| {
    let mut buf = buf.borrow_mut();
    buf.clear();
    // Byte 0 is the newline written before the line where the file's last
    // line is cut; the line follows it.
    buf.push(b'\n');
    fill(&mut buf)?;
    let written = line_to(j, name, &mut buf);
    // A huge line's room is not kept.
    if buf.capacity() > 1 << 16 {
      *buf = Vec::new();
    }
    written.map_err(E::from)
  })
}

/// `append` of `line` unless `check`, called under the file's flock with
/// the locked file and its size before anything is written, answers
/// `Some`: then nothing is written and its answer is returned. Whatever
/// another appender of this package writes to the file waits for the
/// check, so a decision made on an earlier read can be checked again here
/// against what was appended since (`resolve`, #64).
pub fn append_unless<T>(j: &Journal, name: &str, line: &str, check: impl FnOnce(&File, u64) -> Result<Option<T>>) -> Result<Option<T>> {
  let mut buf = Vec::with_capacity(line.len() + 2);
  buf.push(b'\n');
  buf.extend_from_slice(line.as_bytes());
  checked_line_to(j, name, &mut buf, check)
}

/// Appends the line in `buf[1..]` (byte 0 a newline), as `append` says.
fn line_to(j: &Journal, name: &str, buf: &mut Vec<u8>) -> Result<()> {
  checked_line_to(j, name, buf, |_, _| Ok(None::<()>)).map(|_| ())
}

/// `line_to`, asking `check` under the flock first (`append_unless`).
fn checked_line_to<T>(
  j: &Journal,
  name: &str,
  buf: &mut Vec<u8>,
  check: impl FnOnce(&File, u64) -> Result<Option<T>>,
) -> Result<Option<T>> {
  if memchr::memchr(b'\n', &buf[1..]).is_some() {
    return Err(JournalError::failed("journal line must not contain a newline"));
  }
  buf.push(b'\n');
  let path = j.file(name);
  let refuse = |e: std::io::Error| {
    ends::forget(&path);
    quiet_io(&e, name, "append to")
  };
  // A wait that ended on the lock's holder names it (#55, #64).
  let opened = open_locked(&path, ends::of(&path)).map_err(|e| match e {
    Waited::Held(holders) => {
      ends::forget(&path);
      let hidden = crate::ground::holder::Holder::hidden();
      let h = holders.first().unwrap_or(&hidden);
      quiet_io(&std::io::Error::from_raw_os_error(nix::libc::EWOULDBLOCK), name, "append to").with_note(&format!(
        "{} holds its append lock and has not let go: {}",
        h.describe(),
        h.remedy()
      ))
    }
    Waited::Failed(e) => refuse(e),
  })?;
  let (mut file, size) = (opened.file, opened.size);
  if let Some(found) = check(&file, size)? {
    return Ok(Some(found));
  }
  let line = if opened.cut { &buf[..] } else { &buf[1..] };
  write_line(&mut file, line).map_err(refuse)?;
  // Where the file was judged (a file this user cannot read is not, and
  // gets no end to look at: its read would fail each time).
  if opened.judged {
    ends::set(&path, size + line.len() as u64);
  }
  crate::ground::durable::file(&file).map_err(refuse)?;
  if size == 0 {
    crate::ground::durable::dir(j.dir()).map_err(refuse)?;
  }
  Ok(None)
}

/// Why `open_locked` gave no file.
enum Waited {
  /// The flock's holders kept it past the wait: who they are.
  Held(Vec<crate::ground::holder::Holder>),
  Failed(std::io::Error),
}

impl From<std::io::Error> for Waited {
  fn from(e: std::io::Error) -> Self {
    Waited::Failed(e)
  }
}

thread_local! {
  /// The line and its newlines as written: room kept between appends.
  static LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Where this thread's last append to each path left the file's end: the
/// place `append` reads first. Per thread, so no lock is taken for it (a
/// Worker is a thread of its own); bounded, and emptied when full, since a
/// missing end only costs the full check.
mod ends {
  use std::cell::RefCell;
  use std::collections::HashMap;
  use std::hash::{BuildHasherDefault, Hasher};

  const MOST: usize = 4096;

  /// FNV-1a: the keys are this process's own paths, so no one chooses
  /// them to collide, and it hashes a path in a third of SipHash's time.
  #[derive(Default)]
  struct Fnv(u64);

  impl Hasher for Fnv {
    fn finish(&self) -> u64 {
      self.0
    }
    fn write(&mut self, bytes: &[u8]) {
      let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
      for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
      }
      self.0 = h;
    }
  }

  thread_local! {
    static ENDS: RefCell<HashMap<String, u64, BuildHasherDefault<Fnv>>> = RefCell::new(HashMap::default());
  }

  pub fn of(path: &str) -> Option<u64> {
    ENDS.with(|e| e.borrow().get(path).copied())
  }

  pub fn set(path: &str, end: u64) {
    ENDS.with(|e| {
      let mut e = e.borrow_mut();
      if let Some(at) = e.get_mut(path) {
        *at = end;
        return;
      }
      if e.len() >= MOST {
        e.clear();
      }
      e.insert(path.to_string(), end);
    });
  }

  pub fn forget(path: &str) {
    ENDS.with(|e| e.borrow_mut().remove(path));
  }
}

/// How long an append waits for the file's flock: an appender holds it for
/// a write, a repair for the check, quarantine and mend of one file. A
/// holder seen stopped ends the wait sooner, and the refusal names it (#55).
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// When an append's wait first asks the kernel whether the holder moves,
/// and how often after: a holder that moves takes microseconds (an
/// append) or the mend of one file (a repair), so a wait this long is
/// rare; one on a stopped or frozen holder ends at the first look, one on
/// a holder that does not move (asleep with no CPU time gained, a tracer
/// holding it) at the second: within about a second (#55, #64).
pub const FIRST_LOOK: std::time::Duration = std::time::Duration::from_millis(500);
pub const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// A line file opened for appending and flocked, with its size and
/// whether its last line is cut.
struct Opened {
  /// Flocked until closed (`flock_until_closed`).
  file: File,
  size: u64,
  cut: bool,
  /// Whether the tail was read (a write-only file's is not).
  judged: bool,
}

/// The line file opened for appending, flocked, still linked, and its size.
/// `end`: where the file ended after this thread's last append to it.
fn open_locked(path: &str, mut end: Option<u64>) -> std::result::Result<Opened, Waited> {
  use crate::ground::files::{flock_until_closed, open_path, size_linked, Access, Unflocked};
  let start = std::time::Instant::now();
  let deadline = start + PATIENCE;
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
    let mut watch = crate::ground::lockers::Watch::new(start + FIRST_LOOK, LOOK_EVERY, || std::fs::metadata(path).ok());
    let mut give_up = |now| watch.give_up(now);
    let locked = match flock_until_closed(file, deadline, &mut give_up) {
      Ok(locked) => locked,
      Err(Unflocked::TimedOut) => return Err(Waited::Held(watch.holders())),
      Err(Unflocked::Failed(e)) => return Err(e.into()),
    };
    // The end proves the size and a whole last line, not the name: a file
    // renamed over under the flock (by a repair, or any tool that copies
    // and renames) leaves this one unlinked with its end intact, so the
    // link count is asked too (#55).
    if let Some(end) = end.take().filter(|&end| ends_with_line(&locked, end)) {
      if !size_linked(&locked)?.1 {
        continue;
      }
      return Ok(Opened {
        file: locked,
        size: end,
        cut: false,
        judged: true,
      });
    }
    let (size, linked) = size_linked(&locked)?;
    if linked {
      let tail = if size > 0 { tail_cut(&locked, size) } else { Some(false) };
      return Ok(Opened {
        file: locked,
        size,
        cut: tail.unwrap_or(false),
        judged: tail.is_some(),
      });
    }
  }
  Err(std::io::Error::from_raw_os_error(nix::libc::ESTALE).into())
}

/// Whether the file ends at `end` (> 0) with a newline: a read of two
/// bytes from `end - 1` gives exactly one, `\n`. Held under the file's
/// flock, that is the whole of what the full check would find: no other
/// appender of this package is half-way through a line, the size is `end`
/// and the last line is whole. It says nothing of the file's link, which
/// is asked apart (`open_locked`), or of its kind, and needs not to:
/// - a FIFO or a terminal refuses the read (ESPIPE); a device such as
///   /dev/null or /dev/zero reads no bytes or both: the full check then
///   refuses it as before.
fn ends_with_line(file: &File, end: u64) -> bool {
  use std::os::unix::fs::FileExt;
  let mut b = [0u8; 2];
  end > 0 && matches!(file.read_at(&mut b, end - 1), Ok(1)) && b[0] == b'\n'
}

/// Whether the file's last line (after its last newline; `size` > 0) is
/// cut short: not ended by a newline, and not something `trim()` empties.
/// A file that cannot be read here is not judged cut.
#[cfg(test)]
fn cut_tail(file: &File, size: u64) -> bool {
  tail_cut(file, size).unwrap_or(false)
}

/// `cut_tail`, or None where the file could not be read.
///
/// The tail is read backwards a chunk at a time and decoded character by
/// character from its end: the first character that is not one `trim()`
/// removes settles it (a cut JSON line has one at its very end), so the
/// work is bounded by the whitespace actually there. Bytes that do not
/// decode are U+FFFD to the reader, which `trim()` keeps: cut.
fn tail_cut(file: &File, size: u64) -> Option<bool> {
  use std::os::unix::fs::FileExt;
  let last = last_byte(file, size)?;
  if last == b'\n' {
    return Some(false);
  }
  if last.is_ascii() && !is_ascii_space(last) {
    return Some(true);
  }
  let mut end = size;
  let mut chunk = vec![0u8; 4096];
  // Continuation bytes met (backwards) whose lead byte is not read yet.
  let mut pending: Vec<u8> = Vec::with_capacity(4);
  while end > 0 {
    let start = end.saturating_sub(chunk.len() as u64);
    let want = usize::try_from(end - start).unwrap_or(chunk.len());
    if file.read_exact_at(&mut chunk[..want], start).is_err() {
      return None;
    }
    for &b in chunk[..want].iter().rev() {
      if b & 0xc0 == 0x80 {
        // A continuation byte: at most three before their lead.
        if pending.len() == 3 {
          return Some(true);
        }
        pending.insert(0, b);
        continue;
      }
      if b.is_ascii() {
        if !pending.is_empty() {
          return Some(true);
        }
        if b == b'\n' {
          return Some(false);
        }
        if !is_ascii_space(b) {
          return Some(true);
        }
        continue;
      }
      pending.insert(0, b);
      let space = std::str::from_utf8(&pending).is_ok_and(|c| c.chars().all(crate::ground::text::is_js_space));
      if !space {
        return Some(true);
      }
      pending.clear();
    }
    end = start;
  }
  // The whole file is the tail: whitespace, unless bytes were left over.
  Some(!pending.is_empty())
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
  (file.read_at(&mut b, size - 1).ok() == Some(1)).then_some(b[0])
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
    let d = crate::testutil::TempDir::new();
    append(&d.journal(), INBOX, r#"{"id":"1"}"#).expect("append");
    append(&d.journal(), INBOX, "2").expect("append");
    let path = format!("{}/{INBOX}", d.path());
    assert_eq!(std::fs::read_to_string(&path).expect("file"), "{\"id\":\"1\"}\n2\n");
    crate::testutil::assert_0600(&path);
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
    append(&d.journal(), INBOX, r#"{"id":"m3"}"#).expect("append");
    append(&d.journal(), INBOX, r#"{"id":"m4"}"#).expect("append");
    assert_eq!(
      std::fs::read_to_string(&path).expect("file"),
      "{\"id\":\"m1\"}\n{\"id\":\"m2\",\"at\":\"2026-\n{\"id\":\"m3\"}\n{\"id\":\"m4\"}\n"
    );
    // A file this user may write but not read is appended to unchecked.
    std::fs::write(&path, "{\"id\":\"m1\"}\n").expect("whole");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o200)).expect("chmod");
    append(&d.journal(), INBOX, "2").expect("append to a write-only file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    assert_eq!(std::fs::read_to_string(&path).expect("file"), "{\"id\":\"m1\"}\n2\n");
  }

  /// Where the file ends after this thread's last append is read, not
  /// trusted (#47): each change below keeps or moves that end, and the
  /// next append answers as the full check does.
  #[test]
  fn the_end_an_append_left_is_read_again() {
    use std::os::unix::fs::FileExt;
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/{INBOX}", d.path());
    append(&d.journal(), INBOX, "1").expect("append");
    // The newline overwritten in place: the same size, a cut line now.
    std::fs::OpenOptions::new()
      .write(true)
      .open(&path)
      .expect("open")
      .write_all_at(b"x", 1)
      .expect("overwrite");
    append(&d.journal(), INBOX, "2").expect("append");
    assert_eq!(std::fs::read_to_string(&path).expect("file"), "1x\n2\n");
    // Replaced by a file of the same size that ends whole: appended to.
    std::fs::write(format!("{path}.new"), "abcd\n").expect("write");
    std::fs::rename(format!("{path}.new"), &path).expect("rename");
    append(&d.journal(), INBOX, "3").expect("append");
    assert_eq!(std::fs::read_to_string(&path).expect("file"), "abcd\n3\n");
    // Replaced by a FIFO, or a link to /dev/null: refused as before, at once.
    std::fs::remove_file(&path).expect("rm");
    append(&d.journal(), INBOX, "4").expect("append");
    std::fs::remove_file(&path).expect("rm");
    nix::unistd::mkfifo(path.as_str(), nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo");
    assert_eq!(
      append(&d.journal(), INBOX, "4"),
      Err(JournalError::failed("could not append to inbox.jsonl (EFTYPE)"))
    );
    std::fs::remove_file(&path).expect("rm");
    append(&d.journal(), INBOX, "5").expect("append");
    std::fs::remove_file(&path).expect("rm");
    std::os::unix::fs::symlink("/dev/null", &path).expect("symlink");
    assert_eq!(
      append(&d.journal(), INBOX, "6"),
      Err(JournalError::failed("could not append to inbox.jsonl (EFTYPE)"))
    );
  }

  #[test]
  fn append_refusals() {
    let d = crate::testutil::TempDir::new();
    std::fs::create_dir(format!("{}/{OUTBOX}", d.path())).expect("mkdir");
    assert_eq!(
      append(&d.journal(), OUTBOX, "1"),
      Err(JournalError::failed("could not append to outbox.jsonl (EISDIR)"))
    );
    assert_eq!(
      append(&d.journal(), INBOX, "a\nb"),
      Err(JournalError::failed("journal line must not contain a newline"))
    );
  }

  /// A tool that takes the file's flock, copies it and renames the copy
  /// over it (no mark of a repair's) while a thread that appended before
  /// waits to append again: the record lands in the file the name holds,
  /// though the old one still ends where the thread left it (#55).
  #[test]
  fn an_append_waiting_on_a_file_a_tool_renames_over_lands_in_the_new_one() {
    use std::sync::mpsc::channel;
    let d = crate::testutil::TempDir::new();
    let path = d.journal().file(INBOX);
    let (go, wait) = channel::<()>();
    let (appended, first) = channel::<()>();
    let j = d.journal();
    let appender = std::thread::spawn(move || {
      append(&j, INBOX, "{\"id\":\"a\"}")?;
      let _ = appended.send(());
      let _ = wait.recv();
      append(&j, INBOX, "{\"id\":\"b\"}")
    });
    first.recv().expect("first append");
    let held = nix::fcntl::Flock::lock(File::open(&path).expect("open"), nix::fcntl::FlockArg::LockExclusive).expect("flock");
    go.send(()).expect("go");
    // The appender has opened the old file by now, and waits for its flock.
    std::thread::sleep(std::time::Duration::from_millis(100));
    let copy = format!("{path}.copy");
    std::fs::copy(&path, &copy).expect("copy");
    std::fs::rename(&copy, &path).expect("rename");
    drop(held);
    appender.join().expect("join").expect("second append");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "{\"id\":\"a\"}\n{\"id\":\"b\"}\n");
  }
}
