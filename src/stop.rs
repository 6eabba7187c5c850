//! The STOP brake: presence refuses new turns. Each writer appends one JSON
//! line `{at, reason}` (O_NOFOLLOW, fsynced), so the last line names who
//! braked. `.stop.lock`, an atomic mkdir, serializes every STOP update and
//! refuses rather than waits. Processing stops trust STOP only after
//! verifying it is a file this process could have written.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};

use crate::ground::error::{quiet_io, JournalError, Result, ThrownCode};
use crate::ground::files::exists;
use crate::ground::journal::{Journal, STOP, STOP_LOCK};
use crate::ground::json::{str_eq, units, Doc, Scalar};
use crate::ground::stamp::Stamp;
use crate::ground::text::{decode_utf8, js_trim};
use crate::ground::time::is_canonical_iso;

/// What `recover` writes, and the only STOP line it will remove.
pub const RECOVER_REASON: &str = "recover";

/// The largest STOP a processing stop will read.
const STOP_MAX: u64 = 65536;

/// `stopRequested`.
pub fn requested(j: &Journal) -> bool {
  exists(&j.stop())
}

/// Runs `action` holding `.stop.lock`. A failure to remove the lock
/// afterwards replaces whatever the action returned. The STOP mark
/// (src/ground/mark.rs) is held from before the mkdir to after the rmdir,
/// so that a `.stop.lock` no mark covers is proved left over (#34): no age
/// can tell, since a paused update holds it for as long as it is paused.
/// The mark never waits, so nothing another process does, stopped or not,
/// holds up a brake (#44): only `.stop.lock` itself, as in the reference.
pub fn with_lock<T, E: From<JournalError>>(j: &Journal, action: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
  let _mark = crate::ground::mark::take(j);
  let lock = j.stop_lock();
  if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&lock) {
    LOCK_CAUSE.set(crate::ground::error::fs_code(&e));
    return Err(JournalError::failed("STOP update is locked; refusing").into());
  }
  let out = action();
  match std::fs::remove_dir(&lock) {
    Ok(()) => out,
    Err(e) => Err(quiet_io(&e, &j.named(STOP_LOCK), "remove").into()),
  }
}

thread_local! {
  /// Why this thread's last `.stop.lock` mkdir failed. The refusal is
  /// journal.mjs's words whatever the cause ("locked"), so the real one
  /// (EEXIST, or ENOSPC, EDQUOT, EROFS, EMFILE...) is kept here for the
  /// command to name (#34).
  static LOCK_CAUSE: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// The errno name of this thread's last failed `.stop.lock` mkdir, taken
/// (so asked once per refusal).
pub fn lock_cause() -> Option<String> {
  LOCK_CAUSE.take()
}

/// What `.stop.lock` is, judged by the STOP mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopLock {
  /// None.
  Absent,
  /// Left by a STOP update that did not finish: no live update of this
  /// package holds the mark while it exists.
  Left,
  /// Present while a live update of this package holds the mark: one in
  /// progress, or stopped inside (`mark::holders` names it).
  Held,
  /// Present, and no proof: the mark cannot be asked here (a journal
  /// directory that cannot be read, no OFD locks), or a `journal.mjs`
  /// process, which takes no mark, may be inside an update.
  Unproven,
}

impl StopLock {
  pub fn name(self) -> &'static str {
    match self {
      StopLock::Absent => "absent",
      StopLock::Left => "left",
      StopLock::Held => "held",
      StopLock::Unproven => "unproven",
    }
  }
}

/// Whether `.stop.lock` is left over; never waits. docs/lock.md argues the
/// order: `.stop.lock` found and held open (j2), then the mark asked (j3),
/// then the directory found still linked (j4). An update that made it
/// marked before its mkdir and unmarks after its rmdir, so if it is alive
/// at j3 it is seen, and if it finished before j3 the directory was
/// unlinked before j4.
pub fn left(j: &Journal) -> StopLock {
  judge(j).0
}

/// The judgement, and `.stop.lock` held open where it is a directory.
fn judge(j: &Journal) -> (StopLock, Option<std::os::fd::OwnedFd>) {
  use nix::errno::Errno;
  let lock = j.stop_lock();
  let held = match crate::ground::files::open_dir_path(&lock) {
    Ok(fd) => fd,
    Err(Errno::ENOENT) => return (StopLock::Absent, None),
    // Not a directory: no update made it (each makes a directory), and no
    // update can be inside it (its mkdir would have failed).
    Err(Errno::ENOTDIR | Errno::ELOOP) => return (StopLock::Left, None),
    Err(_) => return (StopLock::Unproven, None),
  };
  // An update takes the mark only where its user may read the journal
  // directory (a mode of 0300 lets it make .stop.lock all the same): one
  // whose maker could not, is not proved by the mark's absence.
  if !maker_could_mark(j, &held) {
    return (StopLock::Unproven, None);
  }
  match crate::ground::mark::marked(j) {
    None => return (StopLock::Unproven, None),
    Some(true) => return (StopLock::Held, None),
    Some(false) => {}
  }
  match nix::sys::stat::fstat(&held) {
    Ok(st) if st.st_nlink > 0 => (StopLock::Left, Some(held)),
    // Removed by its update since j2: gone.
    Ok(_) => (StopLock::Absent, None),
    Err(_) => (StopLock::Unproven, None),
  }
}

/// Whether the user who made `.stop.lock` (its owner) may open the
/// journal directory for reading, as the STOP mark needs (by its mode
/// bits; root may).
fn maker_could_mark(j: &Journal, held: &std::os::fd::OwnedFd) -> bool {
  let (Ok(lock), Ok(journal)) = (nix::sys::stat::fstat(held), nix::sys::stat::stat(j.itself().as_str())) else {
    return false;
  };
  let mode = journal.st_mode;
  if lock.st_uid == 0 {
    return true;
  }
  if lock.st_uid == journal.st_uid {
    return mode & 0o400 != 0;
  }
  if lock.st_gid == journal.st_gid {
    return mode & 0o040 != 0;
  }
  mode & 0o004 != 0
}

/// Removes `.stop.lock` where it is proved left over (`left`); what it
/// found. The caller holds the lock guard, so no other repair runs
/// between the proof and the removal, and no update can begin meanwhile
/// (its mkdir fails while `.stop.lock` is there); the name is removed only
/// while it is the directory held since the proof. An empty directory alone
/// is removed (rmdir): anything else stays for a person to look at, and
/// that is refused.
pub fn clear_left(j: &Journal) -> Result<StopLock> {
  let (found, held) = judge(j);
  if found == StopLock::Left {
    let path = j.stop_lock();
    let same = held
      .as_ref()
      .is_none_or(|fd| Stamp::of_fd(fd).is_some_and(|s| Stamp::at(&path) == Some(s)));
    if same {
      std::fs::remove_dir(&path).map_err(|e| quiet_io(&e, &j.named(STOP_LOCK), "remove"))?;
    }
  }
  Ok(found)
}

/// Appends one STOP line. The file is opened (and so created) before the
/// line is made, as the reference does; `line` fails with the `code` of
/// whatever it threw.
pub fn append(j: &Journal, line: impl FnOnce() -> Result<String, ThrownCode>) -> Result<String> {
  let path = j.stop();
  let (file, size) = crate::ground::files::open_sized(&path, crate::ground::files::Access::Append, nix::libc::O_NOFOLLOW)
    .map_err(|e| quiet_io(&e, &j.named(STOP), "write"))?;
  let mut text = line().map_err(|code| code.refusal(&j.named(STOP), "write"))?;
  text.push('\n');
  write_synced(file, &text).map_err(|e| quiet_io(&e, &j.named(STOP), "write"))?;
  // The line is synced always (as in the reference); its name only opted in.
  if size == 0 {
    crate::ground::durable::dir(j.dir()).map_err(|e| quiet_io(&e, &j.named(STOP), "write"))?;
  }
  Ok(path)
}

fn write_synced(mut file: File, text: &str) -> std::io::Result<()> {
  crate::lines::write_line(&mut file, text.as_bytes())?;
  file.sync_all()
}

/// `removeStop`.
fn remove(j: &Journal) -> Result<()> {
  std::fs::remove_file(j.stop()).map_err(|e| quiet_io(&e, &j.named(STOP), "remove"))
}

/// `clearStop`: removes STOP if it exists.
pub fn clear(j: &Journal) -> Result<()> {
  if requested(j) {
    remove(j)?;
  }
  Ok(())
}

/// `clearStop` right after a `read` that found STOP (one line, so its open
/// succeeded): that open answered the `existsSync` clearStop asks (the
/// readers take a successful open as its yes, see files::missing), so only
/// the unlink is made. A STOP removed between the read and the unlink is
/// the interleaving where it went before the existsSync: not there, nothing
/// to do.
pub fn clear_read(j: &Journal) -> Result<()> {
  match std::fs::remove_file(j.stop()) {
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
    done => done.map_err(|e| quiet_io(&e, &j.named(STOP), "remove")),
  }
}

/// One STOP line as `readStop` returns it: the parsed value when it is an
/// object with a string reason, else `{reason: null}` (not written by this
/// code, so never treated as ours).
pub struct StopLine {
  /// The line's JSON text, when it is kept as parsed.
  pub text: Option<String>,
}

impl StopLine {
  pub fn reason_is(&self, reason: &str) -> bool {
    let Some(text) = &self.text else { return false };
    let Some(doc) = Doc::parse(text) else { return false };
    matches!(doc.get("reason"), Some(Scalar::Str(s)) if str_eq(doc.src, s, reason))
  }
}

/// `readStop`: the lines as written, oldest first; blank lines (by
/// JavaScript's trim) skipped.
pub fn read(j: &Journal) -> Result<Vec<StopLine>> {
  let path = j.stop();
  let bytes = match crate::ground::files::read(&path) {
    Ok(bytes) => bytes,
    Err(e) if crate::ground::files::missing(&e, &path) => return Ok(Vec::new()),
    Err(e) => return Err(quiet_io(&e, &j.named(STOP), "read")),
  };
  let text = decode_utf8(bytes);
  Ok(
    text
      .split('\n')
      .filter(|l| !js_trim(l).is_empty())
      .map(|l| {
        let kept = Doc::parse(l)
          .is_some_and(|d| matches!(d.top, crate::ground::json::Top::Obj(_)) && matches!(d.get("reason"), Some(Scalar::Str(_))));
        StopLine {
          text: kept.then(|| l.to_string()),
        }
      })
      .collect(),
  )
}

/// Whether STOP is exactly one line that `recover` wrote.
pub fn is_ours(lines: &[StopLine]) -> bool {
  lines.len() == 1 && lines[0].reason_is(RECOVER_REASON)
}

/// The STOP lines of a verified STOP: a regular file owned by this uid,
/// mode 0600, at most 64 KiB, strict UTF-8 (a leading BOM dropped, as
/// TextDecoder does), every non-empty line JSON. `Some([])` when there is
/// none; `None` when it cannot be verified (a file of another kind is
/// refused by `files::open`, as the reference's own fstat refuses it).
pub fn processing_rows(j: &Journal) -> Option<Vec<String>> {
  let file = match crate::ground::files::open(
    &j.stop(),
    crate::ground::files::Access::Read,
    nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK,
  ) {
    Ok(f) => f,
    Err(e) => return (e.kind() == std::io::ErrorKind::NotFound).then(Vec::new),
  };
  let meta = file.metadata().ok()?;
  if !meta.is_file() || meta.uid() != nix::unistd::getuid().as_raw() || meta.mode() & 0o7777 != 0o600 || meta.size() > STOP_MAX {
    return None;
  }
  let mut buf = Vec::with_capacity(STOP_MAX as usize + 1);
  file.take(STOP_MAX + 1).read_to_end(&mut buf).ok()?;
  if buf.len() as u64 > STOP_MAX {
    return None;
  }
  let text = String::from_utf8(buf).ok()?;
  let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
  let rows: Vec<String> = text.split('\n').filter(|l| !l.is_empty()).map(str::to_string).collect();
  rows.iter().all(|r| Doc::parse(r).is_some()).then_some(rows)
}

/// `processing:<generation>` for a generation that is a string.
pub fn processing_reason(generation: &str) -> Vec<u16> {
  format!("processing:{generation}").encode_utf16().collect()
}

/// `requestProcessingStop` inside the lock: append the line `line` makes
/// for the reason unless a line already carries it. `reason` is the
/// reference's template `processing:${generation}`, evaluated where the
/// reference evaluates it: once, after the rows were verified (a caller
/// whose generation is not a string converts it again there).
pub fn request_processing<E: From<JournalError>>(
  j: &Journal,
  reason: impl FnOnce() -> std::result::Result<Vec<u16>, E>,
  line: impl FnOnce(&[u16]) -> std::result::Result<String, ThrownCode>,
) -> std::result::Result<String, E> {
  with_lock(j, || {
    let rows = processing_rows(j).ok_or_else(|| JournalError::failed("STOP cannot be verified"))?;
    let reason = reason()?;
    let present = rows
      .iter()
      .filter_map(|r| Doc::parse(r))
      .any(|d| matches!(d.get("reason"), Some(Scalar::Str(s)) if units(d.src, s) == reason));
    if !present {
      append(j, || line(&reason))?;
    }
    Ok(j.stop())
  })
}

/// `clearProcessingStop` inside the lock: removes STOP only when every line
/// is exactly `{at, reason}` for this generation with a canonical ISO time.
/// `reason` is evaluated once per line that gets as far as the comparison,
/// in order, as the reference's template inside `rows.some(...)` is.
pub fn clear_processing<E: From<JournalError>>(
  j: &Journal,
  mut reason: impl FnMut() -> std::result::Result<Vec<u16>, E>,
) -> std::result::Result<bool, E> {
  with_lock(j, || {
    let Some(rows) = processing_rows(j) else { return Ok(false) };
    if rows.is_empty() {
      return Ok(false);
    }
    for row in &rows {
      let is_ours = match Doc::parse(row) {
        Some(d) => is_processing_line(&d, &mut reason)?,
        None => false,
      };
      if !is_ours {
        return Ok(false);
      }
    }
    remove(j)?;
    Ok(true)
  })
}

fn is_processing_line<E>(d: &Doc<'_>, reason: &mut impl FnMut() -> std::result::Result<Vec<u16>, E>) -> std::result::Result<bool, E> {
  // Object.keys(r).sort().join(",") === "at,reason"; a falsy or non-object
  // row has other keys (or none).
  let Some(mut keys) = d.object_keys() else { return Ok(false) };
  keys.sort();
  let joined: Vec<u16> = keys.join(&(b',' as u16));
  if joined != "at,reason".encode_utf16().collect::<Vec<_>>() {
    return Ok(false);
  }
  let reason = reason()?;
  if !matches!(d.get("reason"), Some(Scalar::Str(s)) if units(d.src, s) == reason) {
    return Ok(false);
  }
  // A non-string `at` never equals the string toISOString returns; and no
  // number beyond the Date range has a String() that Date.parse accepts, so
  // the reference's toISOString cannot throw here.
  Ok(match d.get("at") {
    Some(Scalar::Str(s)) => String::from_utf16(&units(d.src, s)).is_ok_and(|at| is_canonical_iso(&at)),
    _ => false,
  })
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::journal::Journal;
  use crate::ground::paths::under;
  use crate::testutil::TempDir;

  const GEN: &str = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";

  fn line(reason: &str) -> String {
    format!(r#"{{"at":"2021-01-01T00:00:00.000Z","reason":"{reason}"}}"#)
  }

  #[test]
  fn a_refused_update_keeps_the_cause_of_its_mkdir() {
    let d = TempDir::new();
    std::fs::create_dir(format!("{}/turns", d.path())).expect("mkdir");
    std::fs::create_dir(format!("{}/.stop.lock", d.path())).expect("mkdir");
    assert!(with_lock(&d.journal(), || Ok::<_, JournalError>(())).is_err());
    assert_eq!(lock_cause().as_deref(), Some("EEXIST"));
    assert_eq!(lock_cause(), None, "taken once");
    let gone = format!("{}/gone", d.path());
    assert!(with_lock(&Journal::new(&gone), || Ok::<_, JournalError>(())).is_err());
    assert_eq!(lock_cause().as_deref(), Some("ENOENT"));
  }

  #[test]
  fn a_stop_lock_is_held_while_an_update_is_inside_and_left_once_it_died() {
    let d = TempDir::new();
    assert_eq!(left(&d.journal()), StopLock::Absent);
    // An update in progress holds the mark: a judge on another thread does
    // not wait, and calls it held, never left.
    let path = d.path().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    let (back, done) = std::sync::mpsc::channel();
    let judge = std::thread::spawn(move || {
      rx.recv().expect("inside");
      let seen = left(&Journal::new(&path));
      back.send(()).expect("back");
      seen
    });
    with_lock(&d.journal(), || {
      tx.send(()).expect("send");
      done.recv().expect("judged");
      append(&d.journal(), || Ok(line("a")))
    })
    .expect("update");
    assert_eq!(judge.join().expect("judge"), StopLock::Held);
    // The lock guard held by another thread (a start, stopped inside): a
    // brake does not wait for it.
    std::fs::create_dir(under(d.path(), &["turns"])).expect("turns");
    let path = d.path().to_string();
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
      // The guard is an exclusive flock on turns/ (src/lock/guard.rs).
      let turns = std::fs::File::open(under(&path, &["turns"])).expect("turns");
      let guard = nix::fcntl::Flock::lock(turns, nix::fcntl::FlockArg::LockExclusiveNonblock);
      held_tx.send(guard.is_ok()).expect("held");
      let _ = end_rx.recv();
    });
    assert_eq!(held_rx.recv(), Ok(true));
    let began = std::time::Instant::now();
    with_lock(&d.journal(), || append(&d.journal(), || Ok(line("braked")))).expect("brake");
    assert!(began.elapsed() < std::time::Duration::from_secs(1), "the brake waited");
    drop(end_tx);
    holder.join().expect("holder");
    // One that an update left (it died inside): proved, and cleared.
    std::fs::create_dir(under(d.path(), &[".stop.lock"])).expect("left");
    assert_eq!(left(&d.journal()), StopLock::Left);
    assert_eq!(clear_left(&d.journal()), Ok(StopLock::Left));
    assert_eq!(left(&d.journal()), StopLock::Absent);
    with_lock(&d.journal(), || append(&d.journal(), || Ok(line("b")))).expect("updates again");
    // Not a directory: it stays, and the removal says why.
    std::fs::write(under(d.path(), &[".stop.lock"]), "x").expect("file");
    assert!(clear_left(&d.journal()).is_err());
    // A journal directory that cannot be read: no mark, no proof.
    let bare = TempDir::new();
    std::fs::create_dir(under(bare.path(), &[".stop.lock"])).expect("left");
    if nix::unistd::geteuid().is_root() {
      // Root reads any directory: a .stop.lock made by a user who could
      // not (the directory at 0300) is not proved left by the mark's
      // absence.
      let lock = under(bare.path(), &[".stop.lock"]);
      let nobody = (nix::unistd::Uid::from_raw(65534), nix::unistd::Gid::from_raw(65534));
      nix::unistd::chown(lock.as_str(), Some(nobody.0), Some(nobody.1)).expect("chown");
      std::fs::set_permissions(bare.path(), std::os::unix::fs::PermissionsExt::from_mode(0o300)).expect("chmod");
      assert_eq!(left(&bare.journal()), StopLock::Unproven);
      std::fs::set_permissions(bare.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).expect("chmod");
      assert_eq!(
        left(&bare.journal()),
        StopLock::Unproven,
        "another user's, and the directory closed to others"
      );
      std::fs::set_permissions(bare.path(), std::os::unix::fs::PermissionsExt::from_mode(0o705)).expect("chmod");
      assert_eq!(left(&bare.journal()), StopLock::Left);
      return;
    }
    std::fs::set_permissions(bare.path(), std::os::unix::fs::PermissionsExt::from_mode(0o300)).expect("chmod");
    assert_eq!(left(&bare.journal()), StopLock::Unproven);
    assert_eq!(clear_left(&bare.journal()), Ok(StopLock::Unproven));
    std::fs::set_permissions(bare.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).expect("chmod");
    assert!(crate::ground::files::exists(&under(bare.path(), &[".stop.lock"])));
  }

  #[test]
  fn lines_are_appended_under_the_lock() {
    let d = TempDir::new();
    assert!(read(&d.journal()).expect("none").is_empty());
    with_lock(&d.journal(), || append(&d.journal(), || Ok(line("a")))).expect("a");
    with_lock(&d.journal(), || append(&d.journal(), || Ok(line("recover")))).expect("b");
    let lines = read(&d.journal()).expect("read");
    assert!(lines[0].reason_is("a") && lines[1].reason_is("recover"));
    assert!(!is_ours(&lines));
    std::fs::create_dir(under(d.path(), &[".stop.lock"])).expect("held");
    assert_eq!(
      with_lock(&d.journal(), || Ok::<_, JournalError>(())),
      Err(JournalError::failed("STOP update is locked; refusing"))
    );
  }

  #[test]
  fn processing_stops_are_verified_and_exact() {
    let d = TempDir::new();
    let gen = || Ok::<_, JournalError>(processing_reason(GEN));
    request_processing(&d.journal(), gen, |r| Ok(line(&String::from_utf16_lossy(r)))).expect("request");
    request_processing(&d.journal(), gen, |_| unreachable!("already present")).expect("idempotent");
    assert_eq!(processing_rows(&d.journal()).map(|r| r.len()), Some(1));
    let other = || Ok::<_, JournalError>(processing_reason("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"));
    assert_eq!(clear_processing(&d.journal(), other), Ok(false));
    assert_eq!(clear_processing(&d.journal(), gen), Ok(true));
    assert!(!requested(&d.journal()));
    std::fs::write(d.journal().stop(), "{bad\n").expect("write");
    assert_eq!(processing_rows(&d.journal()), None);
  }

  /// The reason is made once per line that reaches the comparison, as the
  /// reference's template is evaluated inside `rows.some(...)`.
  #[test]
  fn a_processing_reason_is_made_where_the_reference_makes_it() {
    use std::os::unix::fs::PermissionsExt;
    let d = TempDir::new();
    let ours = line(&format!("processing:{GEN}"));
    for (text, made, cleared) in [
      (format!("{ours}\n{ours}\n"), 2, true),
      (format!("{ours}\n[1]\n{ours}\n"), 1, false),
      (format!("5\n{ours}\n"), 0, false),
    ] {
      std::fs::write(d.journal().stop(), text).expect("write");
      std::fs::set_permissions(d.journal().stop(), std::fs::Permissions::from_mode(0o600)).expect("chmod");
      let mut n = 0;
      let got = clear_processing(&d.journal(), || {
        n += 1;
        Ok::<_, JournalError>(processing_reason(GEN))
      });
      assert_eq!((got, n), (Ok(cleared), made));
    }
    let mut n = 0;
    std::fs::write(d.journal().stop(), "").expect("empty");
    request_processing(
      &d.journal(),
      || {
        n += 1;
        Ok::<_, JournalError>(processing_reason(GEN))
      },
      |r| Ok(line(&String::from_utf16_lossy(r))),
    )
    .expect("request");
    assert_eq!(n, 1);
  }
}
