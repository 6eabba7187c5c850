//! The claim (`writePid`): mkdir of run.lock, the record published into
//! the directory this claim made and holds by descriptor, then the STOP
//! gate. Every way a claim can lose its directory to an unlock or recover
//! running at the same moment ends in a refusal, never in two owners.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

use crate::ground::error::{quiet_io, JournalError, Result, ThrownCode};
use crate::ground::files::{open_dir, Link};
use crate::ground::journal::Journal;
use crate::stop;

use nix::fcntl::Flock;
use std::time::Instant;

use super::guard::guarded;
use super::owner::{parse_owner, refusal, Seams};
use super::remove::{self, lock_refusal, Holding, Judged, Record, Stamp};
use crate::ground::holder::Holder;

/// `writePid` after the claimant's identity was read: creates the lock,
/// publishes the record `owner_text()` makes (failing with the `code` of
/// what it threw), then applies the STOP gate. `pid` is the claimant's pid
/// when it is a number (what `clearPid` compares with `===`).
///
/// `early` is the record's text where it is known before the mkdir without
/// running any JavaScript (the default clock, a number pid: nothing the
/// reference does between its mkdir and its write can be seen to move).
/// Then the record is written and synced before the guard and the mkdir,
/// in an unnamed file of the journal directory (O_TMPFILE), and linked into
/// the directory the claim made at once: `run.lock` holds no record only
/// for the few calls between its mkdir and that link, not for an fsync
/// (#44: a `journal.mjs` recover clears a lock without a record, and met an
/// addon's claim there three times as often as its own).
pub fn claim<S: Seams>(
  j: &Journal,
  pid: Option<f64>,
  seams: &mut S,
  early: Option<String>,
  owner_text: impl FnOnce() -> Result<String, ThrownCode>,
) -> Result<(), S::Error> {
  // c0 where it can; c1, c2 to c9 inside, c10 as `guarded` returns. The
  // mark stays while the claim stands: its release finds it (held.rs).
  let mut written = early.and_then(|text| prewrite(j, &text).map(|file| (file, text)));
  let marked = guarded(j, || claim_gated(j, pid, seams, owner_text, true, written.take()))?;
  if let Some(marked) = marked {
    super::held::keep(marked);
  }
  Ok(())
}

/// A claim without the STOP gate: the binding held by a process that takes
/// no turn (`discord-journal repair`), STOP or no STOP, so that no
/// connector can claim it meanwhile. Released with `clear_pid`. Returns
/// the directory held, open with its shared mark (none where a descriptor
/// or a flock could not be had).
pub fn hold<S: Seams>(
  j: &Journal,
  pid: f64,
  seams: &mut S,
  owner_text: impl FnOnce() -> Result<String, ThrownCode>,
) -> Result<Option<Flock<File>>, S::Error> {
  guarded(j, || claim_gated(j, Some(pid), seams, owner_text, false, None))
}

fn claim_gated<S: Seams>(
  j: &Journal,
  pid: Option<f64>,
  seams: &mut S,
  owner_text: impl FnOnce() -> Result<String, ThrownCode>,
  gate: bool,
  written: Option<(File, String)>,
) -> Result<Option<Flock<File>>, S::Error> {
  let lock = j.lock();
  let waited = Instant::now();
  // c2: mkdir run.lock.
  while let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&lock) {
    if e.kind() != std::io::ErrorKind::AlreadyExists {
      return Err(quiet_io(&e, &j.named(crate::ground::journal::LOCK), "create").into());
    }
    // A lock without a record that a live process holds marked is a
    // release in progress (or a claim of a process that takes no guard):
    // waited for, as the guard waits, and named if it does not end.
    match releasing(j, waited) {
      Releasing::Gone => continue,
      Releasing::No => return Err(refusal(j, seams)?.into()),
      Releasing::Stuck(who) => return Err(held_refusal(&who).into()),
    }
  }
  // The directory this claim created, held open at once: the record is
  // published into it by descriptor, never by path. Between the mkdir and
  // the link an unlock may remove this directory and another claimant
  // create a new one at the same path; a publish by path would then
  // overwrite that claimant's record (and this claim's STOP gate would
  // remove its lock). Into a removed directory, the publish fails instead.
  let mine = open_dir(&lock, Link::NoFollow); // c3's open; its stamp and mark after c4
  let label = j.named("run.lock/owner.json");
  let (written, text) = match written {
    Some((file, text)) => (Some(file), text),
    None => (None, owner_text().map_err(|code| code.refusal(&label, "write"))?), // c4
  };
  let mine = mine.and_then(|held| match Stamp::of_fd(&held) {
    Some(stamp) => Ok((held, stamp)),
    None => Err(std::io::Error::from(nix::errno::Errno::EBADF)),
  });
  let mut made = match mine {
    Ok((held, stamp)) => Made {
      stamp,
      marked: super::held::mark(&held), // c3's mark
      held: Some(held),
    },
    Err(e) => {
      // No descriptor for it (only a thread taking the last one between the
      // identity's reads and this open gets here): the directory goes while
      // it is still run.lock and holds no record (#10).
      if let Some(stamp) = Stamp::at(&lock) {
        let judged = Judged {
          lock: Some(stamp),
          record: Record::Absent,
        };
        let _ = remove::remove(j, &judged, Holding::None, 0);
      }
      return Err(quiet_io(&e, &label, "write").into());
    }
  };
  // c5, c6 and c7 (c6 alone for a record written early).
  let published = match written {
    Some(file) => link_written(j, &made, file),
    None => publish(j, &mut made, &text),
  };
  let record = match published {
    Ok(record) => record,
    Err(Unpublished::Lost) => return Err(lost_claim().into()),
    Err(Unpublished::Fault(e, linked)) => {
      // A fault (a full disk, an I/O error) leaves no half-made claim: the
      // directory this claim made is removed again while it is still
      // run.lock and holds no record but this claim's, so the next start is
      // not refused "without an owner record". Beyond the reference, which
      // leaves it for `unlock`; the refusal is the same.
      let judged = Judged {
        lock: Some(made.stamp),
        record: linked.map_or(Record::Absent, Record::File),
      };
      let _ = remove::remove(j, &judged, made.held.take().map_or(Holding::None, Holding::Open), 0);
      return Err(quiet_io(&e, &label, "write").into());
    }
  };
  let judged = Judged {
    lock: Some(made.stamp),
    record: Record::File(record),
  };
  // The gate: STOP written before this point (by `stop` or `unlock`) means
  // this claim must not stand, however it interleaved with an unlock. The
  // claim releases the directory it made (`clearPid`), not whatever the
  // path names by now; the record in it is the one this claim wrote (c8).
  if gate && stop::requested(j) {
    if parse_owner(&text).names(pid) {
      remove::remove(j, &judged, made.held.take().map_or(Holding::None, Holding::Open), 0).map_err(|e| lock_refusal(j, &e))?;
    }
    return Err(JournalError::brake(format!("STOP is present in {}; remove it to run", j.label())).into());
  }
  // c9, beyond the reference: the claim stands only if its directory still is
  // run.lock and still holds its record. `recover` removes an ownerless lock
  // and then removes its own STOP; a claim that published into that lock
  // after recover judged it, and reached this gate after the STOP was gone,
  // would otherwise stand without a lock, and a second claimant with it.
  let standing = Stamp::at(&j.lock()) == Some(made.stamp) && made.held.as_ref().is_some_and(|h| remove::holds(h, judged.record));
  if !standing {
    return Err(lost_claim().into());
  }
  Ok(made.marked)
}

/// What a lock found by a claim's mkdir is doing.
enum Releasing {
  /// Gone meanwhile: the mkdir is tried again.
  Gone,
  /// Not a release in progress: refused as the reference refuses.
  No,
  /// A live process holds it without a record past the guard's patience,
  /// or stopped.
  Stuck(Holder),
}

/// Whether run.lock is a lock without a record that a live process holds
/// marked, and if so waits (up to the guard's patience since `since`) for
/// it to go.
fn releasing(j: &Journal, since: Instant) -> Releasing {
  let path = j.lock();
  // The last look at its holders, so that one that does not move is seen
  // across two slices.
  let mut last = Vec::new();
  loop {
    let Some(stamp) = Stamp::at(&path) else { return Releasing::Gone };
    // A record (published meanwhile, or there all along) is judged as the
    // reference judges it.
    if !stamp.dir || crate::ground::files::exists(&j.owner()) {
      return Releasing::No;
    }
    let left = super::guard::PATIENCE.saturating_sub(since.elapsed());
    // A slice at a time, so that a record published meanwhile is seen.
    match super::held::vacant(&path, stamp, left.min(SLICE), &mut last) {
      Ok(_) if Stamp::at(&path).is_none() => return Releasing::Gone,
      Ok(_) => return Releasing::No,
      Err(_) if Stamp::at(&path).is_none() => return Releasing::Gone,
      Err(who) if who.stalled() || left <= SLICE => return Releasing::Stuck(who),
      Err(_) => {}
    }
  }
}

/// How long a claim waits on a marked lock before it looks for its record
/// again.
const SLICE: std::time::Duration = std::time::Duration::from_millis(500);

/// The refusal of a claim, recover or unlock that met a lock a live process
/// holds without a record: a start or a release in progress, or stopped.
pub(super) fn held_refusal(who: &Holder) -> JournalError {
  JournalError::brake(format!(
    "run.lock is held by {}, which is starting or releasing this binding and has no owner record in it yet or any more; refusing. {}",
    who.describe(),
    crate::ground::text::capitalized(&who.remedy())
  ))
}

/// The directory a claim made (run.lock when it made it): what it is, and
/// the descriptor it is held by (none for the moment a single free
/// descriptor is needed for the record).
struct Made {
  stamp: Stamp,
  /// The shared flock that marks it held by a live process (held.rs).
  marked: Option<Flock<File>>,
  held: Option<File>,
}

/// Why a record was not published.
enum Unpublished {
  /// Another claim holds this directory too, or it is no longer run.lock.
  Lost,
  /// A fault, and the record this claim linked before it (if it did).
  Fault(std::io::Error, Option<Stamp>),
}

/// A claim that lost its directory to an unlock or recover running at the
/// same moment (only a race reaches this; the reference would stand).
fn lost_claim() -> JournalError {
  JournalError::failed("run.lock was removed while this start claimed it (an unlock or recover ran meanwhile); start again")
}

/// The record's temporary name, in the claimed directory.
const TMP: &str = "owner.json.tmp";

/// Write-then-link of owner.json inside the claimed directory: the record
/// appears whole, as a rename makes it, but only if no record is there yet,
/// so two claims that ended up holding one directory (one's mkdir, then an
/// unlock removing it and the other's mkdir, before the first opened it)
/// cannot both publish. The temporary file is created exclusively too: two
/// such claims sharing it would each write into the other's record. Returns
/// the record's file.
///
/// With one descriptor free (the held directory takes it), the temporary
/// file is created by path, as the reference creates it, and the directory
/// opened again; the record is linked only if that directory is the one
/// this claim made and the temporary file in it is the one just written
/// (#10). A temporary file that went elsewhere (run.lock swapped meanwhile)
/// is left there: no path to it is one this claim may trust.
fn publish(j: &Journal, made: &mut Made, text: &str) -> Result<Stamp, Unpublished> {
  use nix::errno::Errno;
  use nix::fcntl::{openat, OFlag};
  use nix::sys::stat::Mode;
  let fault = |e: std::io::Error| Unpublished::Fault(e, None);
  let Some(held) = &made.held else {
    return Err(fault(Errno::EBADF.into()));
  };
  // c5: created exclusively, written, synced.
  let created = openat(
    held,
    TMP,
    OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC,
    Mode::from_bits_truncate(0o600),
  );
  let record = match created {
    Ok(fd) => match write_record(File::from(fd), text) {
      Ok(record) => record,
      Err(e) => {
        // The temporary file is this claim's (created exclusively).
        let _ = nix::unistd::unlinkat(held, TMP, nix::unistd::UnlinkatFlags::NoRemoveDir);
        return Err(fault(e));
      }
    },
    Err(Errno::EEXIST) => return Err(Unpublished::Lost),
    Err(Errno::EMFILE | Errno::ENFILE) => {
      made.held = None;
      let path = j.in_lock(TMP);
      let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(path);
      let file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(Unpublished::Lost),
        Err(e) => return Err(fault(e)),
      };
      let record = write_record(file, text).map_err(fault)?;
      let again = open_dir(&j.lock(), Link::NoFollow).map_err(|_| Unpublished::Lost)?;
      let there = nix::sys::stat::fstatat(&again, TMP, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).map(|st| Stamp::of(&st));
      if Stamp::of_fd(&again) != Some(made.stamp) {
        // Another claim's directory by now: the temporary file this claim
        // put in it, if it is there, is unlinked through its descriptor so
        // that claim can still publish.
        if there == Ok(record) {
          let _ = nix::unistd::unlinkat(&again, TMP, nix::unistd::UnlinkatFlags::NoRemoveDir);
        }
        return Err(Unpublished::Lost);
      }
      made.held = Some(again);
      if there != Ok(record) {
        return Err(Unpublished::Lost);
      }
      record
    }
    Err(e) => return Err(fault(e.into())),
  };
  let Some(held) = &made.held else {
    return Err(fault(Errno::EBADF.into()));
  };
  let linked = nix::unistd::linkat(held, TMP, held, "owner.json", nix::fcntl::AtFlags::empty());
  // c6 linked it; c7: the temporary file is this claim's: it goes whether
  // or not the record was linked.
  let removed = nix::unistd::unlinkat(held, TMP, nix::unistd::UnlinkatFlags::NoRemoveDir);
  match linked {
    Ok(()) => {}
    Err(Errno::EEXIST) => return Err(Unpublished::Lost),
    Err(e) => return Err(fault(e.into())),
  }
  removed.map_err(|e| Unpublished::Fault(e.into(), Some(record)))?;
  synced(j, held, record)
}

/// The record written and synced in an unnamed file of the journal
/// directory, ready to be linked (`link_written`); `None` where that cannot
/// be had (no O_TMPFILE here, one descriptor free, a full disk): the claim
/// then writes it as `publish` does, after its mkdir, where a fault is
/// reported as the reference reports it.
fn prewrite(j: &Journal, text: &str) -> Option<File> {
  #[cfg(target_os = "linux")]
  {
    use nix::fcntl::{open, OFlag};
    use nix::sys::stat::Mode;
    let fd = open(
      j.itself().as_str(),
      OFlag::O_TMPFILE | OFlag::O_WRONLY | OFlag::O_CLOEXEC,
      Mode::from_bits_truncate(0o600),
    )
    .ok()?;
    let file = File::from(fd);
    // The claim still needs descriptors for its directory and the journal's.
    crate::ground::files::spare(&file).then_some(())?;
    write_record(file.try_clone().ok()?, text).ok()?;
    Some(file)
  }
  #[cfg(not(target_os = "linux"))]
  {
    let _ = (j, text);
    None
  }
}

/// Links a record `prewrite` made into the directory this claim made, as
/// `owner.json` (fails if a record is there: another claim shares it).
fn link_written(j: &Journal, made: &Made, file: File) -> Result<Stamp, Unpublished> {
  use nix::errno::Errno;
  let fault = |e: std::io::Error| Unpublished::Fault(e, None);
  let Some(held) = &made.held else {
    return Err(fault(Errno::EBADF.into()));
  };
  let record = Stamp::of_fd(&file).ok_or_else(|| fault(Errno::EBADF.into()))?;
  use std::os::fd::AsRawFd;
  let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd()); // c6 links it
  match nix::unistd::linkat(
    nix::fcntl::AT_FDCWD,
    proc_path.as_str(),
    held,
    "owner.json",
    nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
  ) {
    Ok(()) => {}
    Err(Errno::EEXIST) => return Err(Unpublished::Lost),
    Err(e) => return Err(fault(e.into())),
  }
  synced(j, held, record)
}

/// The record linked, `record`, after the syncs its directories need. No
/// fsync of the directory after the link unless durability is asked for
/// (#14): a power loss that drops the link leaves a lock without a record,
/// which `recover` clears; see docs/durability.md.
fn synced(j: &Journal, held: &File, record: Stamp) -> Result<Stamp, Unpublished> {
  let fault = |e| Unpublished::Fault(e, Some(record));
  crate::ground::durable::dir_fd(held).map_err(fault)?;
  if crate::ground::durable::on() {
    crate::ground::durable::dir(j.dir()).map_err(fault)?;
  }
  Ok(record)
}

/// Writes the record and fsyncs it before it is linked, so after a power
/// loss owner.json is whole or absent, never empty or torn (beyond the
/// reference, changing no result). Returns the file; it is closed here.
fn write_record(mut file: File, text: &str) -> std::io::Result<Stamp> {
  file.write_all(format!("{text}\n").as_bytes())?;
  file.sync_all()?;
  Stamp::of_fd(&file).ok_or_else(|| std::io::Error::from(nix::errno::Errno::EBADF))
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::files::exists;
  use crate::ground::paths::under;
  use crate::lock::fixtures::*;
  use crate::lock::owner::read_pid;
  use crate::lock::unlock::clear_pid;
  use crate::testutil::TempDir;

  #[test]
  fn claim_publishes_and_refuses_a_second_claim() {
    let d = TempDir::new();
    let mut seams = fixed("5");
    claim_as_me(&d.journal(), &mut seams).expect("claim");
    assert_eq!(
      std::fs::read_to_string(d.journal().owner()).expect("record"),
      record(ME, "5") + "\n"
    );
    assert!(!exists(&under(&d.journal().lock(), &["owner.json.tmp"])));
    assert_eq!(read_pid(&d.journal()), Some(my_record()));
    let err = claim_as_me(&d.journal(), &mut seams).expect_err("held");
    assert_eq!(err, JournalError::brake("another connector is running for this binding (pid 1)"));
    assert_eq!(seams.calls, 1);
    clear_pid(&d.journal(), Some(2.0)).expect("not ours");
    assert!(exists(&d.journal().lock()));
    clear_pid(&d.journal(), Some(ME)).expect("ours");
    assert!(!exists(&d.journal().lock()));
  }

  /// Two claims can end up holding one directory (a mkdir, an unlock
  /// removing it, another mkdir, then the first one's open). Whichever
  /// publishes second is refused as lost and removes nothing, whether the
  /// first is still writing its temporary file or has linked its record.
  #[test]
  fn a_claim_sharing_its_directory_with_another_is_lost_and_removes_nothing() {
    for (other, name) in [("half a record", "owner.json.tmp"), ("{\"pid\":2}", "owner.json")] {
      let d = TempDir::new();
      let lock = d.journal().lock();
      let err = claim(&d.journal(), Some(ME), &mut fixed("5"), None, || {
        std::fs::write(under(&lock, &[name]), other).map_err(|_| ThrownCode(None))?;
        Ok(record(ME, "5"))
      })
      .expect_err("lost");
      assert_eq!(err, lost_claim());
      assert_eq!(std::fs::read_to_string(under(&lock, &[name])).expect("the other's file"), other);
      assert_eq!(crate::testutil::names(&lock), [name], "only the other claim's file");
    }
  }

  /// A record known before the mkdir is written and synced first, in an
  /// unnamed file, then linked into the directory the claim made.
  #[test]
  fn a_record_written_before_the_mkdir_is_linked_whole() {
    let d = TempDir::new();
    let text = record(ME, "5");
    claim(&d.journal(), Some(ME), &mut fixed("5"), Some(text.clone()), || {
      panic!("the text was known")
    })
    .expect("claim");
    assert_eq!(std::fs::read_to_string(d.journal().owner()).expect("record"), text.clone() + "\n");
    assert_eq!(crate::testutil::names(&d.journal().lock()), ["owner.json"]);
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(d.journal().owner()).expect("meta").permissions());
    assert_eq!(mode & 0o077, 0, "0600 under the umask");
    // Refused (the binding held): nothing is left of the record written.
    let err = claim(&d.journal(), Some(ME), &mut fixed("5"), Some(text), || panic!("not asked")).expect_err("held");
    assert!(matches!(err, JournalError::Discord { exit_code: 3, .. }));
    clear_pid(&d.journal(), Some(ME)).expect("release");
    let entries: Vec<_> = std::fs::read_dir(d.path()).expect("dir").collect();
    assert!(entries.is_empty(), "no file of the claim's stays");
  }

  #[test]
  fn the_stop_gate_releases_the_claim() {
    let d = TempDir::new();
    std::fs::write(d.journal().stop(), "").expect("STOP");
    let mut seams = fixed("5");
    let err = claim_as_me(&d.journal(), &mut seams).expect_err("gated");
    assert!(matches!(err, JournalError::Discord { exit_code: 3, .. }));
    assert!(!exists(&d.journal().lock()));
  }
}
