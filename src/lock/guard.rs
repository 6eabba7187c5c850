//! The lock guard: an exclusive flock(2) on the journal's `turns/`
//! directory, held by every operation of this package that judges and
//! changes `run.lock` (a claim, `unlock`, `recover`, a repair's hold, a
//! release that is not its claimant's own) from its first look at the lock
//! to its last change. Among processes of this package those operations
//! are therefore never interleaved: each runs as if alone, and the
//! protocol only has to be right one operation at a time (and where a
//! process dies inside one, which the kernel answers by dropping its
//! flock). Nothing is written for it: the journal's files stay the
//! reference's. The argument, and what a `journal.mjs` process in the same
//! journal can still do, is in docs/lock.md. `turns/` rather than the
//! journal directory itself: an operator's own scripts may well flock the
//! journal directory (`flock DIR …`), and a start must not wait on them;
//! only a journal without `turns/` is guarded by the directory's flock.
//!
//! A guard is a wait, so what must never wait takes none (#44): the brake
//! (src/ground/mark.rs) and a holder's own release (src/lock/held.rs). A
//! wait here is bounded, ends early on a holder that is stopped, and its
//! refusal names the holder as the kernel shows it (src/ground/holder.rs).
//!
//! Where the guard cannot be had, the operation runs without it, as before
//! it existed, on the defenses that need no guard (a lock removed only
//! while it is the directory and record judged, a claim that stands only
//! while its directory is run.lock with its record): a file system without
//! flock, or the last free descriptor (the reference works with one, and so
//! must a claim). `unguarded` says which, for the command to tell its
//! operator. A `turns/` closed to this process (mode 0300, EACCES) is
//! refused instead: whoever can open it takes its flock, and one running
//! beside them unguarded is the window the guard closes (#55).

use std::cell::RefCell;
use std::fs::File;
use std::time::{Duration, Instant};

use nix::fcntl::Flock;

use crate::ground::error::JournalError;
use crate::ground::files::{open_dir, Flocked, Link, Unflocked};
use crate::ground::holder::Holder;
use crate::ground::journal::Journal;
use crate::ground::lockers::Watch;
use crate::ground::stamp::Stamp;

/// How long an operation waits for another to finish before it refuses.
/// Every operation under the guard is a handful of system calls and at most
/// two fsyncs (and `unlock`'s removal retries, about a second at worst); a
/// holder that takes longer is stopped or paused, and a start that waits
/// on it without end would hang its supervisor.
pub const PATIENCE: Duration = Duration::from_secs(10);

thread_local! {
  /// The `turns/` directories (device, inode) this thread holds the guard
  /// of: an operation that a test seam runs inside another (the same
  /// thread, the same journal) does not wait for its own caller.
  static HELD: RefCell<Vec<Stamp>> = const { RefCell::new(Vec::new()) };
}

/// The guard of one journal, held until dropped.
pub struct Guard {
  held: Option<(Flock<File>, Stamp)>,
}

impl Drop for Guard {
  fn drop(&mut self) {
    if let Some((lock, key)) = self.held.take() {
      HELD.with(|h| {
        let mut h = h.borrow_mut();
        if let Some(at) = h.iter().rposition(|k| *k == key) {
          h.remove(at);
        }
      });
      // Flock's drop unlocks before the descriptor closes, so a child that
      // inherited it (until its exec) does not keep the guard.
      drop(lock);
    }
  }
}

impl Guard {
  /// Whether this operation holds the guard (false where it runs without:
  /// see the module's comment, and inside an operation of this thread
  /// that holds it).
  pub fn held(&self) -> bool {
    self.held.is_some()
  }
}

/// Takes the journal's guard, waiting for another process's operation to
/// end; refuses once it has waited `patience` (`PATIENCE` but for a
/// holder's own release), or sooner once the holder is seen stopped,
/// naming the holder (#44).
pub fn take(j: &Journal, patience: Duration) -> Result<Guard, JournalError> {
  // A journal without turns/ is guarded by a flock on the journal
  // directory itself, for as long as it has none: turns/ is made only
  // under that flock (`making_turns`), so once it exists no holder of the
  // directory's flock is still inside an operation, and every later one
  // takes turns/'s (#44).
  for _ in 0..8 {
    let (file, journal) = match guard_dir(j) {
      Ok(found) => found,
      // turns/ is there but closed to this process: others that can open
      // it take its flock, and one that ran beside them unguarded could
      // interleave with them (#55). Refused, naming the fix.
      Err(Some(e)) if matches!(e.raw_os_error(), Some(nix::libc::EACCES | nix::libc::EPERM)) => {
        return Err(closed(j, &e));
      }
      Err(_) => return Ok(Guard { held: None }),
    };
    let guard = take_on(file, patience)?;
    if journal && guard.held() && turns_made(j) {
      // turns/ was made meanwhile (by a process that takes no guard, or
      // before this flock): its flock is the guard now.
      continue;
    }
    return Ok(guard);
  }
  Ok(Guard { held: None })
}

/// The refusal of a guarded operation where turns/ cannot be opened.
fn closed(j: &Journal, e: &std::io::Error) -> JournalError {
  let code = crate::ground::error::fs_code(e).unwrap_or_else(|| e.to_string());
  JournalError::failed(format!(
    "{} cannot be opened for reading ({code}), and the journal's lock guard is a flock on it; refusing. `chmod 700` it as the journal's owner, and the guard can be taken",
    j.named(crate::ground::journal::TURNS)
  ))
}

/// Holds what `ensureJournal` must hold while it makes turns/ where the
/// journal has none: the journal directory's flock, so that no operation
/// guarded by it is still inside when turns/ appears (`take`). Nothing
/// where turns/ is there (the common call) or the journal is not made yet.
pub fn making_turns(j: &Journal) -> Result<Guard, JournalError> {
  if turns_made(j) {
    return Ok(Guard { held: None });
  }
  match open_dir(&j.itself(), Link::Follow) {
    Ok(file) => take_on(file, PATIENCE),
    Err(_) => Ok(Guard { held: None }),
  }
}

/// The directory whose flock is the guard, and whether it is the journal
/// directory: turns/ where it opens as a directory, else the journal
/// directory where turns/ is none to open: absent, or a name that leads to
/// no directory (a dangling link, a loop, a file). Those too are guarded by
/// the journal directory until a directory is at turns/: a guard that
/// stood aside for them let claims and recovers run at once, and a
/// recover's STOP line stay behind (#55). `Err(Some(e))`: turns/ cannot
/// be opened otherwise (EACCES), for the caller to name; `Err(None)`: nor
/// can the journal directory.
fn guard_dir(j: &Journal) -> Result<(File, bool), Option<std::io::Error>> {
  use nix::libc::{ELOOP, ENOENT, ENOTDIR};
  match open_dir(&j.turns(), Link::Follow) {
    Ok(file) => Ok((file, false)),
    Err(e) if matches!(e.raw_os_error(), Some(ENOENT | ENOTDIR | ELOOP)) => match open_dir(&j.itself(), Link::Follow) {
      Ok(file) => Ok((file, true)),
      Err(_) => Err(None),
    },
    Err(e) => Err(Some(e)),
  }
}

/// Whether turns/ is a directory now, its flock the guard.
fn turns_made(j: &Journal) -> bool {
  std::fs::metadata(j.turns()).is_ok_and(|m| m.is_dir())
}

/// The flock on `file` (turns/ or the journal directory), waited for.
fn take_on(file: File, patience: Duration) -> Result<Guard, JournalError> {
  let unguarded = Guard { held: None };
  let Ok(meta) = file.metadata() else { return Ok(unguarded) };
  let key = Stamp::of_meta(&meta);
  if HELD.with(|h| h.borrow().contains(&key)) {
    return Ok(unguarded);
  }
  // The operation itself needs one.
  if !crate::ground::files::spare(&file) {
    return Ok(unguarded);
  }
  // Waits for the guard; from `FIRST_LOOK` on the watch asks the kernel
  // who holds it every `LOOK_EVERY`, and a holder that does not move ends
  // the wait (it does not finish on its own).
  let start = Instant::now();
  let mut watch = Watch::new(start + FIRST_LOOK, LOOK_EVERY, || Some(meta.clone()));
  let mut give_up = |now| watch.give_up(now);
  let waited = crate::ground::files::flock_until(file, start + patience, &mut give_up);
  let lock = match waited {
    Ok(Flocked::Held(lock)) => lock,
    // No flock here (ENOLCK, an NFS mount without it): unguarded.
    Ok(Flocked::Unsupported(_)) => return Ok(unguarded),
    Err(Unflocked::Failed(e)) => return Err(crate::ground::error::quiet_io(&e, "the journal's turns directory", "lock")),
    Err(Unflocked::TimedOut) => return Err(busy(&watch.holders())),
  };
  HELD.with(|h| h.borrow_mut().push(key));
  Ok(Guard { held: Some((lock, key)) })
}

/// When a waiter first asks the kernel who holds what it waits for, and
/// how often after: a holder is a few system calls unless it is stopped
/// or paused, so short waits (the common race) read nothing more; one
/// seen stopped then ends the wait (it does not finish on its own).
pub const FIRST_LOOK: Duration = Duration::from_secs(2);
pub const LOOK_EVERY: Duration = Duration::from_millis(500);

/// The refusal of an operation that could not have the guard: who holds it
/// and what frees it.
fn busy(holders: &[Holder]) -> JournalError {
  let hidden = Holder::hidden();
  let h = holders.first().unwrap_or(&hidden);
  JournalError::failed(format!(
    "run.lock or STOP is being changed by another process, {}, which holds the journal's lock guard and has not finished (a start, a release, unlock, recover or a repair); refusing. {}",
    h.describe(),
    crate::ground::text::capitalized(&h.remedy())
  ))
}

/// Who holds the journal's guard now, as the kernel shows it (for the
/// command's verdict: a start, a release, unlock, recover or a repair in
/// progress, or stopped inside one).
pub fn holders(j: &Journal) -> Vec<Holder> {
  let Ok((file, _)) = guard_dir(j) else { return Vec::new() };
  let Ok(meta) = file.metadata() else { return Vec::new() };
  let held = matches!(
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockSharedNonblock),
    Err((_, nix::errno::Errno::EWOULDBLOCK))
  );
  crate::ground::lockers::lock_holders(&meta, held)
}
/// Why the journal's guard cannot be had here, or `None` where it can (or
/// the journal cannot be looked at): for the command, which says so when
/// it acts on a journal unguarded (#44).
pub fn unguarded(j: &Journal) -> Option<String> {
  let (file, name) = match guard_dir(j) {
    Ok((file, false)) => (file, "turns/"),
    Ok((file, true)) => (file, "the journal directory"),
    Err(None) => return None,
    Err(Some(e)) => {
      let code = crate::ground::error::fs_code(&e).unwrap_or_else(|| e.to_string());
      return Some(format!(
        "turns/ cannot be opened for reading ({code}), and the guard is a flock on it"
      ));
    }
  };
  match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockSharedNonblock) {
    Err((_, nix::errno::Errno::ENOLCK | nix::errno::Errno::EOPNOTSUPP)) => {
      Some(format!("the file system of {name} has no flock (ENOLCK), and the guard is a flock"))
    }
    _ => None,
  }
}

/// Runs `action` holding the journal's guard.
pub fn guarded<T, E: From<JournalError>>(j: &Journal, action: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
  let _guard = take(j, PATIENCE)?;
  action()
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::testutil::TempDir;

  #[test]
  fn the_guard_excludes_another_holder_and_is_reentrant_on_its_thread() {
    let d = TempDir::new();
    std::fs::create_dir(format!("{}/turns", d.path())).expect("turns");
    let first = take(&d.journal(), PATIENCE).expect("first");
    assert!(first.held());
    // The same thread, inside: not waited for.
    let inner = take(&d.journal(), PATIENCE).expect("inner");
    assert!(!inner.held());
    drop(inner);
    // Another thread waits until the first is dropped.
    let path = d.path().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    let other = std::thread::spawn(move || {
      let g = take(&Journal::new(&path), PATIENCE).expect("other");
      tx.send(g.held()).expect("send");
    });
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "the other thread waits");
    drop(first);
    assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(true));
    other.join().expect("join");
  }

  #[test]
  fn a_journal_that_cannot_be_opened_runs_unguarded() {
    let d = TempDir::new();
    let g = take(&Journal::new(format!("{}/missing", d.path())), PATIENCE).expect("unguarded");
    assert!(!g.held());
    assert_eq!(unguarded(&d.journal()), None);
  }

  /// No turns/: the journal directory's flock guards, and turns/ is made
  /// only under it, so no operation guarded by it is inside once turns/
  /// exists (#44).
  #[test]
  fn a_journal_without_turns_is_guarded_by_its_directory_until_turns_is_made() {
    let d = TempDir::new();
    let first = take(&d.journal(), PATIENCE).expect("first");
    assert!(first.held(), "guarded without turns/");
    let path = d.path().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    let maker = std::thread::spawn(move || {
      let g = making_turns(&Journal::new(&path)).expect("making");
      std::fs::create_dir(format!("{path}/turns")).expect("turns");
      tx.send(()).expect("send");
      drop(g);
    });
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "turns/ waits for the holder");
    drop(first);
    assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(()));
    maker.join().expect("join");
    // From now on turns/'s flock is the guard: the directory's is free.
    let g = take(&d.journal(), PATIENCE).expect("turns");
    assert!(g.held());
    let dir = File::open(d.path()).expect("open");
    assert!(nix::fcntl::Flock::lock(dir, nix::fcntl::FlockArg::LockExclusiveNonblock).is_ok());
    // And making turns/ where it is takes nothing.
    assert!(!making_turns(&d.journal()).expect("nothing").held());
  }

  /// A turns/ that leads to no directory (a dangling link, a file) is
  /// guarded as a journal without turns/: by the journal directory's
  /// flock, which excludes, never by no guard at all (#55).
  #[test]
  fn a_turns_that_is_no_directory_is_guarded_by_the_journal_directory() {
    for make in [
      |t: &str| std::os::unix::fs::symlink(format!("{t}.gone"), t).expect("link"),
      |t: &str| std::fs::write(t, "").expect("file"),
    ] {
      let d = TempDir::new();
      let j = d.journal();
      make(&j.turns());
      let first = take(&j, PATIENCE).expect("first");
      assert!(first.held(), "guarded");
      assert_eq!(unguarded(&j), None);
      let path = d.path().to_string();
      let (tx, rx) = std::sync::mpsc::channel();
      let other = std::thread::spawn(move || {
        let g = take(&Journal::new(path), PATIENCE).expect("other");
        tx.send(g.held()).expect("send");
      });
      assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "the other waits");
      drop(first);
      assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(true));
      other.join().expect("join");
    }
  }
}
