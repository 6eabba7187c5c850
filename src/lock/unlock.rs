//! `unlock`, its judgement and removal after STOP (which `recover` and a
//! repair's hold reuse), `clearPid` and `stopTarget`: the operations that
//! judge a lock's owner and remove the lock that was judged (#10).

use super::guard::guarded;
use crate::ground::error::{JournalError, Result};
use crate::ground::files::exists;
use crate::ground::journal::Journal;

use super::held;
use super::owner::{pid_text, state_of, Owner, OwnerState, Seams};
use super::remove::{self, judge, judge_at, lock_refusal};

/// What `unlock` did when it did not refuse.
#[derive(Debug, PartialEq)]
pub enum Unlocked {
  /// There was no lock (`false`).
  NoLock,
  /// The lock was removed; the record it held (`null` for none).
  Cleared(Option<Owner>),
}

/// `unlock` after STOP was written: refuses a live, unverifiable or
/// unreadable owner; otherwise runs `beforeRemove` and removes the lock
/// that was judged (whatever the path names by then is not removed: #10).
pub fn unlock_after_stop<S: Seams>(j: &Journal, seams: &mut S) -> Result<Unlocked, S::Error> {
  let path = j.lock();
  // u3, after a young lock's moment to publish. The judgement's lstat also
  // answers the reference's `existsSync(lock)` where it can: no name is no
  // lock, and a name that is not a link exists (the readers take a
  // successful open as existsSync's yes alike, see files::missing). Only a
  // link (existsSync follows it: a dangling one is no lock) or a failure
  // other than ENOENT asks access(2) as well.
  let at = settle(j);
  let present = match &at {
    Ok(meta) => !meta.file_type().is_symlink() || exists(&path),
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
    Err(_) => exists(&path),
  };
  if !present {
    return Ok(Unlocked::NoLock);
  }
  let (rec, judged) = judge_at(j, at.ok().map(|meta| remove::Stamp::of_meta(&meta)));
  let pid = pid_text(&rec); // u4 below
  let record = j.named("run.lock/owner.json");
  let refuse = |why: String| JournalError::failed(format!("refusing to unlock: {why}"));
  let why = match state_of(rec.as_ref(), seams)? {
    OwnerState::Live => format!("the connector is running (pid {pid}); use stop, and unlock only a lock whose owner is gone"),
    OwnerState::Unknown => format!("pid {pid} is alive and its identity cannot be verified; nothing removed. Stop that process first"),
    OwnerState::Invalid => format!("the owner record cannot be read; nothing removed. Inspect {record} by hand"),
    _ => String::new(),
  };
  if !why.is_empty() {
    return Err(refuse(why).into());
  }
  // u5: no live process of this package is in the lock removed: its
  // holder's mark (held.rs) is taken exclusively, kept through the removal.
  let vacant = held::vacant_judged(j, &judged).map_err(|who| {
    let remedy = crate::ground::text::capitalized(&who.remedy());
    refuse(format!(
      "run.lock is held by {}, which is starting or releasing this binding; nothing removed. {remedy}",
      who.describe()
    ))
  })?;
  seams.before_remove()?; // u6
  remove::remove(j, &judged, vacant, 10).map_err(|e| lock_refusal(j, &e))?; // u7, its flock kept to the end
  Ok(Unlocked::Cleared(rec))
}

/// The longest a judgement waits on a lock without a record.
const CLAIMANT_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// `run.lock` as the judgement sees it, after a moment's wait where it is a
/// directory without a record that changed less than `CLAIMANT_GRACE` ago:
/// most likely a claim being made by a process that takes no guard
/// (`journal.mjs`'s `writePid`, between its `mkdir` and its rename; a claim
/// of this package holds its mark and is refused by `vacant`). STOP is
/// written by now, so given that moment the claimant publishes, meets STOP
/// at its gate and releases, or publishes a record that the judgement then
/// reads. Removed at once, it writes on by path into whatever `run.lock` is
/// next, another claim's: two records in one lock, and a lock no process
/// holds (docs/lock.md, "A journal.mjs process"). The age decides only
/// whether to wait, never what is judged; a lock older than the grace (a
/// crashed claim's, as a supervisor's `recover` meets it) is judged at once.
fn settle(j: &Journal) -> std::io::Result<std::fs::Metadata> {
  let begun = std::time::Instant::now();
  loop {
    let at = std::fs::symlink_metadata(j.lock());
    let Ok(meta) = &at else { return at };
    if !meta.is_dir() || begun.elapsed() >= CLAIMANT_GRACE || !young(meta) {
      return at;
    }
    if std::fs::symlink_metadata(j.owner()).is_ok() {
      return at;
    }
    std::thread::sleep(std::time::Duration::from_millis(2));
  }
}

/// Whether the directory changed (made, or an entry added or removed) less
/// than `CLAIMANT_GRACE` ago by the system clock; a change dated in the
/// future counts as young, and the wait stays bounded by its own clock.
fn young(meta: &std::fs::Metadata) -> bool {
  use std::os::unix::fs::MetadataExt;
  let changed = std::time::Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec().clamp(0, 999_999_999) as u32);
  let now = std::time::SystemTime::now()
    .duration_since(std::time::UNIX_EPOCH)
    .unwrap_or_default();
  now.checked_sub(changed).is_none_or(|age| age < CLAIMANT_GRACE)
}

/// How long a holder's release waits for the guard before it goes on
/// without: a guarded operation is a few system calls, so only a holder
/// that is stopped or paused keeps it longer.
const RELEASE_PATIENCE: std::time::Duration = std::time::Duration::from_millis(250);

/// `clearPid`: removes the lock when its record names `pid`; the lock
/// removed is the one whose record was read (#10). A release of a claim
/// this process made and holds marked (held.rs) takes no lock guard: while
/// its mark is held no remover of this package touches the directory, so
/// no other process, stopped inside the guard or not, can hold up a
/// connector's shutdown (#44; the argument is docs/lock.md's "Release").
/// Any other release (a record that names this pid but was not made by
/// this process's claim) is judged again under the guard.
pub fn clear_pid(j: &Journal, pid: Option<f64>) -> Result<()> {
  let (rec, judged) = judge(j); // p1
  if !rec.is_some_and(|rec| rec.names(pid)) {
    return Ok(());
  }
  if let Some(marked) = judged.lock.and_then(held::take) {
    // The guard is asked for a moment all the same: taken, a claim that
    // starts now waits for this release rather than meet a live owner and
    // refuse (a restart's new connector behind its old one); held by a
    // process that does not let go at once (stopped, perhaps), the release
    // goes on without it.
    let _guard = super::guard::take(j, RELEASE_PATIENCE);
    // p2 to p4 (remove.rs): the mark dropped as the removal ends, then
    // the guard, where had, as this returns.
    return remove::remove(j, &judged, remove::Holding::Flocked(marked), 0).map_err(|e| lock_refusal(j, &e));
  }
  guarded(j, || {
    let (rec, judged) = judge(j);
    if !rec.is_some_and(|rec| rec.names(pid)) {
      return Ok(());
    }
    // A lock another live process holds marked is its own, whatever pid
    // its record names (two containers' connectors are each pid 1 in
    // their own namespace): left, as recover and unlock leave it.
    let Ok(vacant) = held::vacant_judged(j, &judged) else {
      return Ok(());
    };
    remove::remove(j, &judged, vacant, 0).map_err(|e| lock_refusal(j, &e))
  })
}

/// `unlock`: `request_stop` writes its STOP line (the reference's
/// `requestStop(j, reason)`), then the lock is judged and removed, all
/// under the guard, so that no claim, release or recover of this package
/// runs between the STOP and the removal.
pub fn unlock<S: Seams>(j: &Journal, seams: &mut S, request_stop: impl FnOnce() -> Result<(), S::Error>) -> Result<Unlocked, S::Error> {
  // u1: the guard, for every step below.
  guarded(j, || {
    request_stop()?; // u2
    unlock_after_stop(j, seams) // u3 to u7
  }) // u8 as `guarded` returns
}

/// `stopTarget`: the verified live owner to signal, or `None`. Never a pid
/// whose identity cannot be proven.
pub fn stop_target<S: Seams>(rec: Option<Owner>, seams: &mut S) -> Result<Option<f64>, S::Error> {
  Ok(match (state_of(rec.as_ref(), seams)?, rec) {
    (OwnerState::Live, Some(Owner::Valid { pid, .. })) => Some(pid),
    _ => None,
  })
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::lock::fixtures::*;
  use crate::testutil::TempDir;

  #[test]
  fn unlock_judges_and_clears() {
    let d = TempDir::new();
    let mut live = fixed("5");
    assert_eq!(unlock_after_stop(&d.journal(), &mut live), Ok(Unlocked::NoLock));
    claim_as_me(&d.journal(), &mut live).expect("claim");
    assert!(unlock_after_stop(&d.journal(), &mut live).is_err());
    assert_eq!(live.removes, 0);
    let mut other = fixed("6");
    let cleared = unlock_after_stop(&d.journal(), &mut other).expect("mismatch clears");
    assert_eq!(cleared, Unlocked::Cleared(Some(my_record())));
    assert_eq!(other.removes, 1);
    assert!(!exists(&d.journal().lock()));
  }

  /// A lock without a record, made a moment ago, is a claim being made by
  /// a process that takes no guard: its record, published within the
  /// grace, is judged (here: live, refused), never removed unseen; an old
  /// one is judged at once.
  #[test]
  fn a_young_lock_without_a_record_is_given_its_claimants_moment() {
    let d = TempDir::new();
    let lock = d.journal().lock();
    std::fs::create_dir(&lock).expect("mkdir");
    let publish = {
      let lock = lock.clone();
      std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::fs::write(format!("{lock}/owner.json"), record(ME, "5") + "\n").expect("publish");
      })
    };
    assert!(unlock_after_stop(&d.journal(), &mut fixed("5")).is_err());
    publish.join().expect("publisher");
    assert!(exists(&format!("{lock}/owner.json")));
    std::fs::remove_file(format!("{lock}/owner.json")).expect("unpublish");
    std::thread::sleep(CLAIMANT_GRACE);
    assert_eq!(unlock_after_stop(&d.journal(), &mut fixed("5")), Ok(Unlocked::Cleared(None)));
    assert!(!exists(&lock));
  }

  /// existsSync follows a link: a dangling run.lock is no lock and stays; a
  /// link to a directory is a lock, and only the link goes.
  #[test]
  fn unlock_asks_existence_as_exists_sync_does() {
    let d = TempDir::new();
    let lock = d.journal().lock();
    std::os::unix::fs::symlink(format!("{}/nowhere", d.path()), &lock).expect("dangling");
    assert_eq!(unlock_after_stop(&d.journal(), &mut fixed("5")), Ok(Unlocked::NoLock));
    assert!(std::fs::symlink_metadata(&lock).is_ok());
    std::fs::remove_file(&lock).expect("unlink");
    let target = format!("{}/target", d.path());
    std::fs::create_dir(&target).expect("target");
    std::os::unix::fs::symlink(&target, &lock).expect("link");
    assert_eq!(unlock_after_stop(&d.journal(), &mut fixed("5")), Ok(Unlocked::Cleared(None)));
    assert!(std::fs::symlink_metadata(&lock).is_err() && exists(&target));
  }
}
