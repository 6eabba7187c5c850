//! Write-once turn records, `turns/<id>.json`. A record is linked into
//! place exclusively, so a second writer of the same id is refused, never
//! merged. A refusal names the turn by its id, never by host path (PR
//! #1916, #1873).
//!
//! A record appears whole or not at all (#10, beyond the reference): it is
//! written into an unnamed inode (O_TMPFILE) in the record's directory and
//! only then linked to its name. The reference creates the name first and
//! writes it after, so a process interrupted in between (a signal, a
//! terminated Worker, kill -9, a full disk) leaves an empty or partial
//! record, and from then on listTurns and countTurnsOn refuse "not valid
//! JSON" until a person deletes it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use nix::libc;

use crate::ground::error::{fs_code, quiet_fs, quiet_io, JournalError, Result};
use crate::ground::files::{exists, open_dir, Link};
use crate::ground::journal::Journal;
use crate::ground::json::Doc;
use crate::ground::paths::turn_label;
use crate::ground::text::decode_utf8;

/// A record being made: `create` made its inode, `finish` writes it and
/// gives it its name. Dropped unfinished (the caller returned early, the
/// process died), it leaves nothing: the inode has no name, or only a
/// temporary one that `list` never reads.
pub struct Draft {
  file: File,
  path: String,
  /// The temporary name, where the file system has no O_TMPFILE.
  temp: Option<String>,
}

/// The directory `path` (already joined) is in.
fn parent(path: &str) -> &str {
  match path.rfind('/') {
    Some(0) => "/",
    Some(i) => &path[..i],
    None => ".",
  }
}

/// Starts the record at `path` (its id already checked against TURN_ID by
/// the caller's `turnPath`). Refuses as the reference's exclusive create
/// (`openSync(path, "wx", 0o600)`) would, and at the same point, before the
/// record's text is made: anything already at the path (a file, directory,
/// FIFO or a symlink, dangling or not) is EEXIST; a missing or unwritable
/// directory fails with the reference's errno. The lstat is what makes
/// "already exists" come before JSON.stringify, as the reference's open
/// does; `finish` links exclusively, so a record made meanwhile still wins.
pub fn create(path: &str) -> std::io::Result<Draft> {
  match std::fs::symlink_metadata(path) {
    Ok(_) => return Err(std::io::ErrorKind::AlreadyExists.into()),
    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
    Err(e) => return Err(e),
  }
  let dir = parent(path);
  if NAMED.load(Ordering::Relaxed) {
    return named(path, dir);
  }
  match unnamed(dir) {
    Ok(file) => Ok(Draft {
      file,
      path: path.to_string(),
      temp: None,
    }),
    // No O_TMPFILE on this file system (EOPNOTSUPP), or a kernel that
    // predates it and sees O_DIRECTORY | O_WRONLY (EISDIR).
    Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => named(path, dir),
    Err(e) => Err(e),
  }
}

/// An inode with no name in `dir`, 0600 under the umask (O_TMPFILE).
#[cfg(target_os = "linux")]
fn unnamed(dir: &str) -> std::io::Result<File> {
  OpenOptions::new().write(true).mode(0o600).custom_flags(libc::O_TMPFILE).open(dir)
}

/// No O_TMPFILE (macOS): every record goes under a temporary name first.
#[cfg(not(target_os = "linux"))]
fn unnamed(_dir: &str) -> std::io::Result<File> {
  Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP))
}

/// Distinct temporary names within this process (the pid tells processes
/// apart).
static TEMP: AtomicU64 = AtomicU64::new(0);

/// Whether linkat(AT_EMPTY_PATH) is still worth trying in this process.
#[cfg(target_os = "linux")]
static EMPTY_PATH: AtomicBool = AtomicBool::new(true);

/// Set once an unnamed inode could be linked neither directly nor through
/// /proc: every later record goes under a temporary name from the start,
/// instead of trying both links again each time.
static NAMED: AtomicBool = AtomicBool::new(false);

/// The draft under a temporary name in `dir`: a leading dot (never a
/// TURN_ID) and no `.json` suffix, so `list` (which reads `*.json`) never
/// reads it, created exclusively 0600 under the umask.
fn named(path: &str, dir: &str) -> std::io::Result<Draft> {
  let mut tries = 0;
  loop {
    let temp = format!("{dir}/.turn-{}-{}.tmp", std::process::id(), TEMP.fetch_add(1, Ordering::Relaxed));
    match OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp) {
      Ok(file) => {
        return Ok(Draft {
          file,
          path: path.to_string(),
          temp: Some(temp),
        })
      }
      // A temporary left by a process that died with this pid.
      Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 16 => tries += 1,
      Err(e) => return Err(e),
    }
  }
}

impl Draft {
  /// Writes `text` whole, then links the record into place, exclusively
  /// (EEXIST when a record appeared meanwhile). A failed write links
  /// nothing: no record rather than a torn one (the reference leaves a
  /// partial file). The descriptor is closed on return.
  pub fn finish(mut self, text: &[u8]) -> std::io::Result<()> {
    self.file.write_all(text)?;
    crate::ground::durable::file(&self.file)?;
    match self.temp.take() {
      Some(temp) => link_named(&temp, &self.path)?,
      None => self.link_unnamed(text)?,
    }
    crate::ground::durable::dir(parent(&self.path))
  }

  /// Names the O_TMPFILE inode with linkat(2), which fails EEXIST on
  /// anything at the path. AT_EMPTY_PATH on the descriptor is the direct
  /// way, permitted to the file's opener since Linux 6.10 (before, only with
  /// CAP_DAC_READ_SEARCH: ENOENT otherwise); a process where it is not
  /// permitted links /proc/self/fd/N with AT_SYMLINK_FOLLOW, the documented
  /// unprivileged way, from then on (resolving /proc costs a few µs). Without
  /// /proc, the text goes under a temporary name instead.
  fn link_unnamed(&self, text: &[u8]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if EMPTY_PATH.load(Ordering::Relaxed) {
      match nix::unistd::linkat(
        &self.file,
        "",
        nix::fcntl::AT_FDCWD,
        self.path.as_str(),
        nix::fcntl::AtFlags::AT_EMPTY_PATH,
      ) {
        Ok(()) => return Ok(()),
        // Not permitted here, or the directory is gone: /proc tells which.
        Err(nix::errno::Errno::ENOENT) => {
          let linked = self.link_proc(text);
          if linked.is_ok() {
            EMPTY_PATH.store(false, Ordering::Relaxed);
          }
          return linked;
        }
        Err(e) => return Err(e.into()),
      }
    }
    self.link_proc(text)
  }

  fn link_proc(&self, text: &[u8]) -> std::io::Result<()> {
    let proc = format!("/proc/self/fd/{}", self.file.as_raw_fd());
    let linked = nix::unistd::linkat(
      nix::fcntl::AT_FDCWD,
      proc.as_str(),
      nix::fcntl::AT_FDCWD,
      self.path.as_str(),
      nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
    );
    match linked {
      Ok(()) => Ok(()),
      Err(nix::errno::Errno::ENOENT) if !crate::ground::files::exists("/proc/self/fd") => {
        NAMED.store(true, Ordering::Relaxed);
        named(&self.path, parent(&self.path))?.finish(text)
      }
      Err(e) => Err(e.into()),
    }
  }
}

/// A draft dropped before it was linked leaves no temporary behind (an
/// export that returned early, a write that failed): nothing else would
/// ever remove it.
impl Drop for Draft {
  fn drop(&mut self) {
    if let Some(temp) = self.temp.take() {
      let _ = std::fs::remove_file(temp);
    }
  }
}

/// Links the temporary `temp` to `path` (never following a symlink at
/// either, failing EEXIST on anything at `path`), then removes the
/// temporary, linked or not.
fn link_named(temp: &str, path: &str) -> std::io::Result<()> {
  let linked = std::fs::hard_link(temp, path);
  let removed = std::fs::remove_file(temp);
  linked?;
  removed
}

/// The refusal of a second writer: `shown` is the id as the template
/// `${id}` spells it.
pub fn exists_refusal(shown: &str) -> JournalError {
  JournalError::failed(format!("turn record already exists: {shown}"))
}

/// Any other failure to create or write a record, by `String(id)`.
pub fn write_refusal(err: &std::io::Error, id: &str) -> JournalError {
  quiet_io(err, &turn_label(id), "write")
}

/// A failure while making the record's text (a JavaScript exception, by its
/// `code` when that is a string) after the file was created.
pub fn text_failed(id: &str, code: Option<&str>) -> JournalError {
  quiet_fs(code, &turn_label(id), "write")
}

/// A record's text as parseJsonFileText sees it (one leading U+FEFF
/// dropped), handed to `keep` with the id; `keep` parses it and says `None`
/// when it does not parse.
fn parse_with<T>(bytes: std::io::Result<Vec<u8>>, id: &str, keep: impl Fn(&str, String) -> Option<T>) -> Result<T> {
  keep(id, record_text(bytes, id)?).ok_or_else(|| not_json(id))
}

/// A record's id and its text, which parses, for a listing that keeps the
/// text (the text moves, so a huge record is never copied here).
pub fn id_and_text(id: &str, text: String) -> Option<(String, String)> {
  Doc::parse(&text)?;
  Some((id.to_string(), text))
}

/// The text of a record, one leading U+FEFF dropped, not yet parsed.
pub fn read_text(path: &str, id: &str) -> Result<String> {
  record_text(crate::ground::files::read(path), id)
}

/// A record's bytes as text, one leading U+FEFF dropped, or the refusal
/// of its read.
fn record_text(bytes: std::io::Result<Vec<u8>>, id: &str) -> Result<String> {
  let mut text = decode_utf8(bytes.map_err(|e| quiet_io(&e, &turn_label(id), "read"))?);
  if text.starts_with('\u{feff}') {
    text.drain(..'\u{feff}'.len_utf8());
  }
  Ok(text)
}

/// The refusal of a record that does not parse.
pub fn not_json(id: &str) -> JournalError {
  JournalError::failed(format!("{}: not valid JSON", turn_label(id)))
}

/// Every `*.json` record under `dir/turns`, in the order Node's readdirSync
/// lists them (libuv sorts names by bytes), each read and parsed and handed
/// to `f` with its id; the first (in that order) that cannot be read or
/// parsed refuses the whole list. Records are read on two threads: a
/// journal holds thousands, and each read is a few system calls.
pub fn list<T: Send>(j: &Journal, f: impl Fn(&str, &str, &Doc<'_>) -> T + Sync) -> Result<Vec<T>> {
  let mut all = Vec::new();
  let keep = |id: &str, text: String| Doc::parse(&text).map(|doc| f(id, &text, &doc));
  list_batches(j, usize::MAX, keep, |batch| {
    all.extend(batch);
    Ok::<(), JournalError>(())
  })?;
  Ok(all)
}

/// `list`, handing the records to `each` `batch` at a time, in order, so
/// that a caller can be done with one batch before the next is read (#10:
/// listTurns then never holds every record's text at once). Each record's
/// text is handed to `keep`, which parses it (`None`: it does not, which
/// refuses the list) and may keep the text itself. A record that refuses
/// the list refuses it before `each` sees its batch.
pub fn list_batches<T: Send, E: From<JournalError>>(
  j: &Journal,
  batch: usize,
  keep: impl Fn(&str, String) -> Option<T> + Sync,
  mut each: impl FnMut(Vec<T>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
  let turns = j.turns();
  if !exists(&turns) {
    return Ok(());
  }
  let refuse = |e: &std::io::Error| E::from(quiet_fs(fs_code(e).as_deref(), &j.named("the turns directory"), "read"));
  let mut names: Vec<Vec<u8>> = Vec::new();
  // The listing's descriptor is closed before any record is opened.
  for entry in std::fs::read_dir(&turns).map_err(|e| refuse(&e))? {
    names.push(entry.map_err(|e| refuse(&e))?.file_name().as_bytes().to_vec());
  }
  names.sort();
  // Node hands out names decoded as UTF-8 (invalid bytes as U+FFFD) and
  // opens what it handed out.
  let records: Vec<(String, String)> = names
    .into_iter()
    .map(decode_utf8)
    .filter_map(|name| name.strip_suffix(".json").map(|id| id.to_string()).map(|id| (name, id)))
    .collect();
  // Each record is opened by name relative to the directory held open, so
  // the path is walked once, not once per record. That takes a descriptor
  // more than the reference needs (and the second thread one more): a
  // record that cannot be opened for want of one (EMFILE, ENFILE) sends its
  // batch, and every later one, to be read again one record at a time by
  // path, as the reference reads it, with the directory closed first, so
  // one free descriptor is enough and the answer, refusals included, is the
  // reference's (#10).
  // O_DIRECTORY, as readdirSync opens it: a FIFO swapped in for turns is
  // ENOTDIR, not an open that waits for a writer (#10).
  let mut dirfd = open_dir(&turns, Link::Follow).ok();
  for part in records.chunks(batch.max(1)) {
    let fast = dirfd.as_ref().and_then(|d| read_fast(d, part, &keep));
    let results = match fast {
      Some(results) => results,
      None => {
        dirfd = None;
        part
          .iter()
          .map(|(name, id)| parse_with(crate::ground::files::read(&j.turn(name)), id, &keep))
          .collect()
      }
    };
    each(results.into_iter().collect::<Result<Vec<T>>>()?)?;
  }
  Ok(())
}

/// Reads records through the directory held open, on two threads when there
/// are enough; `None` when one could not be opened for want of a descriptor.
fn read_fast<T: Send>(
  dirfd: &std::fs::File,
  records: &[(String, String)],
  keep: &(impl Fn(&str, String) -> Option<T> + Sync),
) -> Option<Vec<Result<T>>> {
  let short = |r: &std::io::Result<Vec<u8>>| matches!(r, Err(e) if matches!(e.raw_os_error(), Some(nix::libc::EMFILE | nix::libc::ENFILE)));
  let read = |part: &[(String, String)]| -> Option<Vec<Result<T>>> {
    part
      .iter()
      .map(|(name, id)| {
        let bytes = crate::ground::files::read_at(dirfd, name);
        (!short(&bytes)).then(|| parse_with(bytes, id, keep))
      })
      .collect()
  };
  let (first, second) = records.split_at(records.len() / 2);
  if records.len() < 64 {
    read(records)
  } else {
    std::thread::scope(|s| {
      let other = s.spawn(|| read(second));
      let mut done = read(first)?;
      // A panic in the reader cannot happen without one here; treat it as
      // unreadable rather than unwinding across the boundary.
      done.extend(
        other
          .join()
          .unwrap_or_else(|_| Some(vec![Err(JournalError::failed("could not read turn record (unknown error)"))]))?,
      );
      Some(done)
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::journal::Journal;
  use crate::testutil::{names, TempDir};

  /// A journal with an empty turns directory, and that directory.
  fn turns() -> (TempDir, String) {
    let d = TempDir::new();
    let t = format!("{}/turns", d.path());
    std::fs::create_dir(&t).expect("turns");
    (d, t)
  }

  fn kind(r: std::io::Result<Draft>) -> Option<i32> {
    r.err().and_then(|e| {
      if e.kind() == std::io::ErrorKind::AlreadyExists {
        Some(libc::EEXIST)
      } else {
        e.raw_os_error()
      }
    })
  }

  #[test]
  fn a_record_appears_only_when_finished_0600() {
    let (_d, t) = turns();
    let path = format!("{t}/t1.json");
    let draft = create(&path).expect("create");
    assert!(names(&t).is_empty(), "nothing named before the text is written");
    draft.finish(b"{\"id\":\"t1\"}\n").expect("finish");
    assert_eq!(std::fs::read(&path).expect("record"), b"{\"id\":\"t1\"}\n");
    crate::testutil::assert_0600(&path);
    // Dropped unfinished: no trace at all.
    drop(create(&format!("{t}/t2.json")).expect("create"));
    assert_eq!(names(&t), ["t1.json"]);
    // Finished empty (the stringify that throws): the reference's empty file.
    create(&format!("{t}/t3.json")).expect("create").finish(b"").expect("finish");
    assert_eq!(std::fs::read(format!("{t}/t3.json")).expect("empty"), b"");
  }

  #[test]
  fn a_named_draft_dropped_unfinished_leaves_no_temporary() {
    let (_d, t) = turns();
    let path = format!("{t}/t1.json");
    drop(named(&path, &t).expect("named"));
    assert!(names(&t).is_empty(), "{:?}", names(&t));
    named(&path, &t).expect("named").finish(b"{}\n").expect("finish");
    assert_eq!(names(&t), ["t1.json"]);
  }

  #[test]
  fn creates_refuse_as_an_exclusive_open_would() {
    let (d, t) = turns();
    std::fs::write(format!("{t}/file.json"), "{}").expect("file");
    std::fs::create_dir(format!("{t}/dir.json")).expect("dir");
    std::os::unix::fs::symlink("/nowhere", format!("{t}/dangling.json")).expect("link");
    nix::unistd::mkfifo(format!("{t}/fifo.json").as_str(), nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo");
    for name in ["file", "dir", "dangling", "fifo"] {
      assert_eq!(kind(create(&format!("{t}/{name}.json"))), Some(libc::EEXIST), "{name}");
    }
    assert_eq!(kind(create(&format!("{}/missing/x.json", d.path()))), Some(libc::ENOENT));
    assert_eq!(kind(create(&format!("{t}/file.json/x.json"))), Some(libc::ENOTDIR));
    let nul = create(&format!("{t}/a\0b.json")).err().map(|e| crate::ground::error::fs_code(&e));
    assert_eq!(nul, Some(Some("ERR_INVALID_ARG_VALUE".into())));
  }

  #[test]
  fn a_record_made_meanwhile_wins() {
    let (_d, t) = turns();
    let path = format!("{t}/t1.json");
    let draft = create(&path).expect("create");
    std::fs::write(&path, "theirs").expect("other writer");
    let e = draft.finish(b"ours").expect_err("exclusive");
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&path).expect("record"), b"theirs");
    assert_eq!(names(&t), ["t1.json"]);
  }

  /// Where AT_EMPTY_PATH is not permitted: the link through /proc.
  #[test]
  fn the_proc_link_names_the_inode_exclusively() {
    let (_d, t) = turns();
    let path = format!("{t}/t1.json");
    let mut draft = create(&path).expect("create");
    draft.file.write_all(b"{}\n").expect("write");
    draft.link_proc(b"{}\n").expect("link");
    assert_eq!(std::fs::read(&path).expect("record"), b"{}\n");
    let mut again = create(&format!("{t}/t2.json")).expect("create");
    again.path = path.clone();
    again.file.write_all(b"x").expect("write");
    assert_eq!(again.link_proc(b"x").expect_err("exists").kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(names(&t), ["t1.json"]);
  }

  /// The file-system fallback without O_TMPFILE: a temporary name that the
  /// listing never reads, linked exclusively and then removed.
  #[test]
  fn the_temporary_name_is_never_listed() {
    let (d, t) = turns();
    let path = format!("{t}/t1.json");
    named(&path, &t).expect("named").finish(b"{\"a\":1}\n").expect("finish");
    assert_eq!(names(&t), ["t1.json"]);
    let e = named(&path, &t).expect("named").finish(b"{}").expect_err("exists");
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(names(&t), ["t1.json"]);
    // A writer that died before its link leaves only its temporary name.
    let left = named(&format!("{t}/t2.json"), &t).expect("named");
    std::mem::forget(left);
    let n = names(&t);
    assert_eq!(n.len(), 2);
    assert!(n[0].starts_with(".turn-") && n[0].ends_with(".tmp"), "{n:?}");
    std::fs::write(format!("{t}/{}", n[0]), "torn").expect("torn temporary");
    let listed = list(&d.journal(), |_, text, _| text.to_string()).expect("list");
    assert_eq!(listed, ["{\"a\":1}\n"]);
  }
  fn err(e: JournalError) -> String {
    e.to_string()
  }

  #[test]
  fn of_two_drafts_of_one_id_the_first_to_finish_wins() {
    let (_d, t) = turns();
    let path = format!("{t}/t1.json");
    let (one, two) = (create(&path).expect("first"), create(&path).expect("second"));
    one.finish(b"one").expect("finish");
    assert_eq!(two.finish(b"two").expect_err("exclusive").kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&path).expect("record"), b"one");
    assert_eq!(kind(create(&path)), Some(libc::EEXIST), "a finished record refuses a second create");
    assert_eq!(names(&t), ["t1.json"]);
  }

  #[test]
  fn a_directory_removed_before_finish_refuses_and_leaves_nothing() {
    let (_d, t) = turns();
    let draft = create(&format!("{t}/t1.json")).expect("create");
    std::fs::remove_dir(&t).expect("the unnamed inode is no entry");
    assert_eq!(draft.finish(b"{}").expect_err("gone").raw_os_error(), Some(libc::ENOENT));
    assert!(!exists(&t));
  }

  #[test]
  fn a_temporary_name_in_use_is_passed_over() {
    let (_d, t) = turns();
    // Names a process with this pid may have left: at most 8 of the 16 tries.
    let next = TEMP.load(Ordering::Relaxed);
    let left: Vec<String> = (next..next + 8).map(|n| format!(".turn-{}-{n}.tmp", std::process::id())).collect();
    for name in &left {
      std::fs::write(format!("{t}/{name}"), "left").expect("left");
    }
    let draft = named(&format!("{t}/t1.json"), &t).expect("named");
    let temp = draft.temp.clone().expect("a temporary name");
    assert!(!left.iter().any(|l| temp.ends_with(&format!("/{l}"))), "{temp}");
    draft.finish(b"{}\n").expect("finish");
    let mut want = left.clone();
    want.push("t1.json".into());
    want.sort();
    assert_eq!(names(&t), want);
    for name in &left {
      assert_eq!(std::fs::read(format!("{t}/{name}")).expect("untouched"), b"left");
    }
  }

  #[test]
  fn the_parent_of_a_joined_path() {
    assert_eq!(parent("/a/b/turns/t1.json"), "/a/b/turns");
    assert_eq!(parent("turns/t1.json"), "turns");
    assert_eq!(parent("/t1.json"), "/");
    assert_eq!(parent("t1.json"), ".");
  }

  #[test]
  fn refusals_name_the_turn_by_a_valid_id_only() {
    assert_eq!(exists_refusal("t1"), JournalError::failed("turn record already exists: t1"));
    let eacces = std::io::Error::from_raw_os_error(libc::EACCES);
    assert_eq!(err(write_refusal(&eacces, "t1")), "could not write turn record t1 (EACCES)");
    let enospc = std::io::Error::from_raw_os_error(libc::ENOSPC);
    assert_eq!(err(write_refusal(&enospc, "../x")), "could not write turn record (ENOSPC)");
    assert_eq!(
      text_failed("t1", Some("ERR_X")),
      JournalError::failed("could not write turn record t1 (ERR_X)")
    );
    assert_eq!(err(text_failed("t1", None)), "could not write turn record t1 (unknown error)");
    assert_eq!(not_json("t.1"), JournalError::failed("turn record t.1: not valid JSON"));
    assert_eq!(err(not_json(&"a".repeat(129))), "turn record: not valid JSON");
  }

  #[test]
  fn read_text_drops_one_byte_order_mark() {
    let (_d, t) = turns();
    let path = format!("{t}/t1.json");
    std::fs::write(&path, "\u{feff}\u{feff}{}\n").expect("write");
    assert_eq!(read_text(&path, "t1").expect("read"), "\u{feff}{}\n");
    std::fs::write(&path, b"{\"a\":\"\xff\"}").expect("write");
    assert_eq!(read_text(&path, "t1").expect("read"), "{\"a\":\"\u{fffd}\"}");
    let missing = format!("{t}/t2.json");
    assert_eq!(
      err(read_text(&missing, "t2").expect_err("missing")),
      "could not read turn record t2 (ENOENT)"
    );
    assert_eq!(
      err(read_text(&missing, "a b").expect_err("missing")),
      "could not read turn record (ENOENT)"
    );
  }

  /// Each listed record as (id, text, its `id` field).
  fn listed(dir: &str) -> Result<Vec<(String, String, Option<String>)>> {
    list(&Journal::new(dir), |id, text, doc| {
      (
        id.to_string(),
        text.to_string(),
        doc.get_str("id").map(|u| String::from_utf16_lossy(&u)),
      )
    })
  }

  #[test]
  fn records_are_listed_in_byte_order_and_only_json_names() {
    let (d, t) = turns();
    assert_eq!(listed(d.path()).expect("empty"), []);
    let ids = ["b", "B", "a", "a-b", "a.b", "\u{e9}", "_x", ""];
    for id in ids {
      std::fs::write(format!("{t}/{id}.json"), format!("{{\"id\":\"{id}\"}}\n")).expect("record");
    }
    std::fs::write(format!("{t}/a.json"), "\u{feff}{\"id\":\"a\"}\n").expect("with a mark");
    for other in ["notes.txt", "x.json.bak", "json", ".turn-1-2.tmp", "x.JSON"] {
      std::fs::write(format!("{t}/{other}"), "not json").expect("other");
    }
    std::fs::create_dir(format!("{t}/sub")).expect("sub");
    let got = listed(d.path()).expect("list");
    let order: Vec<&str> = got.iter().map(|r| r.0.as_str()).collect();
    // Bytes, not locale: '-' < '.' < 'B' < '_' < 'a' < 0xC3 (é).
    assert_eq!(order, ["", "B", "_x", "a-b", "a.b", "a", "b", "\u{e9}"]);
    for (id, text, field) in &got {
      assert_eq!(field.as_deref(), Some(id.as_str()));
      assert_eq!(*text, format!("{{\"id\":\"{id}\"}}\n"), "the mark is dropped");
    }
  }

  #[test]
  fn no_turns_directory_lists_nothing_and_one_of_another_kind_refuses_by_journal() {
    let d = TempDir::new();
    let mut calls = 0;
    list_batches(
      &d.journal(),
      2,
      |_, _| Some(()),
      |_| {
        calls += 1;
        Ok::<(), JournalError>(())
      },
    )
    .expect("none");
    assert_eq!(calls, 0);
    std::fs::write(format!("{}/turns", d.path()), "").expect("a file");
    let name = crate::ground::paths::basename(d.path()).to_string();
    assert_eq!(
      err(listed(d.path()).expect_err("not a directory")),
      format!("could not read the turns directory in discord/{name} under the data root (ENOTDIR)")
    );
    let other = format!("{}/Not A Binding", d.path());
    std::fs::create_dir(&other).expect("dir");
    nix::unistd::mkfifo(format!("{other}/turns").as_str(), nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo");
    assert_eq!(
      err(listed(&other).expect_err("a fifo")),
      "could not read the turns directory in the binding's journal directory (ENOTDIR)"
    );
  }

  #[test]
  fn batches_come_in_order_and_a_bad_record_refuses_before_its_batch() {
    let (d, t) = turns();
    for i in 0..5 {
      std::fs::write(format!("{t}/t{i}.json"), format!("{{\"n\":{i}}}")).expect("record");
    }
    let batches = |size: usize| {
      let mut seen: Vec<Vec<String>> = Vec::new();
      list_batches(
        &d.journal(),
        size,
        |id, text| id_and_text(id, text).map(|(id, _)| id),
        |b| {
          seen.push(b);
          Ok::<(), JournalError>(())
        },
      )
      .map(|()| seen)
    };
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(batches(2).expect("list"), [ids(&["t0", "t1"]), ids(&["t2", "t3"]), ids(&["t4"])]);
    assert_eq!(batches(0).expect("list").len(), 5, "a batch holds at least one record");
    assert_eq!(batches(usize::MAX).expect("list"), [ids(&["t0", "t1", "t2", "t3", "t4"])]);
    // The caller's refusal ends the listing.
    let mut calls = 0;
    let stopped = list_batches(
      &d.journal(),
      1,
      |_, _| Some(()),
      |_| {
        calls += 1;
        if calls == 2 {
          return Err(JournalError::failed("stop"));
        }
        Ok(())
      },
    );
    assert_eq!((stopped, calls), (Err(JournalError::failed("stop")), 2));
    // A record that does not parse: the batches before it were handed on,
    // its own never is.
    std::fs::write(format!("{t}/t3.json"), "{\"n\":").expect("torn");
    let mut seen = Vec::new();
    let refused = list_batches(
      &d.journal(),
      2,
      |id, text| id_and_text(id, text).map(|(id, _)| id),
      |b| {
        seen.push(b);
        Ok::<(), JournalError>(())
      },
    );
    assert_eq!(refused, Err(JournalError::failed("turn record t3: not valid JSON")));
    assert_eq!(seen, [ids(&["t0", "t1"])]);
  }

  #[test]
  fn the_first_record_in_order_that_fails_refuses_the_list() {
    let (d, t) = turns();
    // Enough records for the two reading threads.
    for i in 0..150 {
      std::fs::write(format!("{t}/r{i:03}.json"), format!("{{\"id\":\"r{i:03}\"}}")).expect("record");
    }
    let got = listed(d.path()).expect("list");
    assert_eq!(got.len(), 150);
    assert!(got.iter().enumerate().all(|(i, r)| r.0 == format!("r{i:03}")));
    std::fs::write(format!("{t}/r140.json"), "").expect("empty");
    std::fs::write(format!("{t}/r100.json"), "{").expect("torn");
    assert_eq!(err(listed(d.path()).expect_err("bad")), "turn record r100: not valid JSON");
    std::fs::remove_file(format!("{t}/r020.json")).expect("rm");
    std::fs::create_dir(format!("{t}/r020.json")).expect("a directory");
    assert_eq!(err(listed(d.path()).expect_err("bad")), "could not read turn record r020 (EISDIR)");
  }

  #[test]
  fn unreadable_records_refuse_by_their_label() {
    use std::os::unix::ffi::OsStrExt;
    let cases: [(&str, &str); 5] = [
      ("fifo", "could not read turn record fifo (EFTYPE)"),
      ("dangling", "could not read turn record dangling (ENOENT)"),
      ("dir", "could not read turn record dir (EISDIR)"),
      ("-x", "turn record: not valid JSON"),
      ("\u{fffd}", "could not read turn record (ENOENT)"),
    ];
    for (id, want) in cases {
      let (d, t) = turns();
      let path = format!("{t}/{id}.json");
      match id {
        "fifo" => nix::unistd::mkfifo(path.as_str(), nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo"),
        "dangling" => std::os::unix::fs::symlink("/nowhere", &path).expect("link"),
        "dir" => std::fs::create_dir(&path).expect("dir"),
        "-x" => std::fs::write(&path, "not json").expect("record"),
        // A name that is not UTF-8 is opened as Node decodes it, and is not there.
        _ => std::fs::write(std::ffi::OsStr::from_bytes(&[t.as_bytes(), b"/\xff.json"].concat()), "{}").expect("non-UTF-8 name"),
      }
      assert_eq!(err(listed(d.path()).expect_err(id)), want, "{id}");
    }
  }

  #[test]
  fn count_turns_on_reads_every_record() {
    let (d, t) = turns();
    for (id, text) in [
      ("a", "{\"startedAt\":\"2026-01-02T00:00:00Z\"}"),
      ("b", "{\"startedAt\":\"2026-01-03\"}"),
      ("c", "[]"),
    ] {
      std::fs::write(format!("{t}/{id}.json"), text).expect("record");
    }
    let count = |date: &str| {
      let started = list(&d.journal(), |_, _, doc| crate::records::started_day(doc))?;
      crate::records::count_started_on(&started, Some(&date.encode_utf16().collect::<Vec<_>>()))
    };
    assert_eq!(count("2026-01-02"), Ok(1));
    std::fs::write(format!("{t}/0.json"), "null").expect("null record");
    assert_eq!(
      err(count("2026-01-02").expect_err("null")),
      "Cannot read properties of null (reading 'startedAt')"
    );
  }
}
