//! The holder's mark: a claim of this package keeps the `run.lock`
//! directory it made open, with a shared flock(2) on it, from its first
//! look into it (c3) until its release removes it (or its death, when the
//! kernel drops the flock). A flock on run.lock says a live process is in
//! it, whatever its record says or whether it has one yet: a release in
//! progress (its record already unlinked), or an owner in a namespace whose
//! pid and start time this process cannot check. A removal takes an
//! exclusive flock on the directory it judged before it removes it
//! (`vacant`), so no remover of this package removes a lock a live process
//! holds, and a holder's own release needs no lock guard (#44,
//! docs/lock.md): nothing another process does can hold it up.
//!
//! A repair's hold takes the same mark and makes it exclusive (its own,
//! src/operator/repair): the command's probe tells the two apart.

use std::fs::File;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::guard::{FIRST_LOOK, LOOK_EVERY};
use super::owner::Judged;
use super::remove::Holding;
use crate::ground::files::{open_dir, spare, Link};
use crate::ground::holder::{settle, Holder};
use crate::ground::journal::Journal;
use crate::ground::lockers::lock_holders;
use crate::ground::stamp::Stamp;

/// The directories this process holds the binding by, marked: a release
/// finds its own here by the inode it judged.
static HOLDS: Mutex<Vec<Flock<File>>> = Mutex::new(Vec::new());

/// A shared flock on the directory a claim made, `held` open. A probe's
/// instant (an exclusive one by a remover's `vacant`) is waited out for a
/// moment; `None` where it cannot be had (no flock here, or another holds
/// it exclusively: that one is a remover that will find this claim's
/// record, or a hand's).
pub fn mark(held: &File) -> Option<Flock<File>> {
  let mut file = held.try_clone().ok()?;
  // The claim still needs one for its record.
  if !spare(&file) {
    return None;
  }
  for _ in 0..200 {
    match Flock::lock(file, FlockArg::LockSharedNonblock) {
      Ok(marked) => return Some(marked),
      Err((back, Errno::EWOULDBLOCK | Errno::EINTR)) => {
        file = back;
        std::thread::sleep(Duration::from_millis(1));
      }
      Err(_) => return None,
    }
  }
  None
}

/// Keeps a standing claim's mark until its release.
pub fn keep(marked: Flock<File>) {
  let mut holds = HOLDS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
  holds.push(marked);
}

/// The mark of the directory `lock` (the inode a release judged), taken
/// from the kept ones; a kept directory that is no longer linked (removed
/// by a hand) is dropped on the way.
pub fn take(lock: Stamp) -> Option<Flock<File>> {
  let mut holds = HOLDS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
  holds.retain(|h| nix::sys::stat::fstat(&**h).is_ok_and(|st| st.st_nlink > 0));
  let at = holds.iter().position(|h| Stamp::of_fd(&**h) == Some(lock))?;
  Some(holds.swap_remove(at))
}

/// How long a remover waits for a flock on the lock it judged: a status
/// probe's shared flock lasts an instant, a release a few system calls.
const BRIEF: Duration = Duration::from_millis(300);

/// `vacant` of the lock `judged`, as a removal of it holds it.
pub fn vacant_judged(j: &Journal, judged: &Judged) -> Result<Holding, Holder> {
  Ok(match judged.lock {
    Some(lock) if lock.dir => vacant(&j.lock(), lock, Duration::ZERO, &mut Vec::new())?.map_or(Holding::None, Holding::Flocked),
    _ => Holding::None,
  })
}

/// An exclusive flock on the run.lock directory at `path`, if it still is
/// the judged `lock`: `Ok(Some)` held (no live process of this package is
/// in it), `Ok(None)` where it is not the judged directory or there is no
/// flock here, `Err` naming the live process that holds it after `BRIEF`
/// (or `patience`, for a claim that waits for a release to end). Its looks
/// are settled against `last` (the look a wait made before this one, kept
/// across a claim's slices), which it replaces with its own: a holder that
/// does not move is then seen across two calls (#64).
pub fn vacant(path: &str, lock: Stamp, patience: Duration, last: &mut Vec<Holder>) -> Result<Option<Flock<File>>, Holder> {
  let Ok(file) = open_dir(path, Link::NoFollow) else {
    return Ok(None);
  };
  if Stamp::of_fd(&file) != Some(lock) {
    return Ok(None);
  }
  // The removal needs one: without, it goes on the defenses that need none.
  if !spare(&file) {
    return Ok(None);
  }
  let Ok(meta) = file.metadata() else { return Ok(None) };
  let start = Instant::now();
  let mut look = start + FIRST_LOOK;
  let mut file = file;
  let mut own = true;
  loop {
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
      Ok(held) => return Ok(Some(held)),
      Err((back, Errno::EWOULDBLOCK | Errno::EINTR)) => file = back,
      Err(_) => return Ok(None),
    }
    // This process's own mark: a removal it asks for of a lock it holds
    // (judged dead or another process's through a test seam, as the
    // reference would judge it) lets the mark go first.
    if own {
      own = false;
      if take(lock).is_some() {
        continue;
      }
    }
    // The kernel is asked who holds it only once the wait is over, or from
    // `FIRST_LOOK` on, where a holder seen stopped ends it.
    let now = Instant::now();
    let over = now >= start + patience.max(BRIEF);
    if over || now >= look {
      look = now + LOOK_EVERY;
      let mut holders = lock_holders(&meta, true);
      settle(last, &mut holders);
      *last = holders.clone();
      if over || (!holders.is_empty() && holders.iter().all(Holder::stalled)) {
        return Err(holders.into_iter().next().unwrap_or_else(Holder::hidden));
      }
    }
    std::thread::sleep(Duration::from_millis(2));
  }
}

/// The live process that holds the run.lock directory of `dir` marked,
/// as the kernel shows it (none where nothing does, or it is not a
/// directory).
pub fn holder(j: &Journal) -> Option<Holder> {
  let path = j.lock();
  let meta = std::fs::symlink_metadata(&path).ok().filter(|m| m.is_dir())?;
  lock_holders(&meta, false).into_iter().next()
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::testutil::TempDir;

  #[test]
  fn a_marked_lock_is_not_vacant_and_a_release_finds_its_own() {
    let d = TempDir::new();
    let path = format!("{}/run.lock", d.path());
    std::fs::create_dir(&path).expect("lock");
    let stamp = Stamp::at(&path).expect("stamp");
    let file = open_dir(&path, Link::NoFollow).expect("open");
    let marked = mark(&file).expect("mark");
    // A status probe's shared flock goes beside it.
    let probe = Flock::lock(open_dir(&path, Link::NoFollow).expect("open"), FlockArg::LockSharedNonblock);
    assert!(probe.is_ok());
    drop(probe);
    let who = vacant(&path, stamp, Duration::ZERO, &mut Vec::new()).expect_err("held");
    assert_eq!(who.pid, std::process::id());
    keep(marked);
    let again = take(stamp).expect("kept");
    assert!(take(stamp).is_none(), "taken once");
    drop(again);
    drop(file);
    assert!(vacant(&path, stamp, Duration::ZERO, &mut Vec::new()).expect("vacant").is_some());
  }
}
