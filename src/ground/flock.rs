//! An exclusive flock(2) on an open file, waited for within a deadline:
//! the record files' append lock (#31), the lock guard on `turns/` (#30,
//! #44) and a repair's hold of a file take it through here. A file system
//! without flock gives the file back unlocked.

use std::fs::File;
use std::io::Error;
use std::time::Instant;

/// An exclusive flock(2) on an open file, or the file where the file
/// system has none.
pub enum Flocked {
  /// Held until dropped (the lock goes before the descriptor closes).
  Held(nix::fcntl::Flock<File>),
  /// No flock here (ENOLCK, an NFS mount without it): the file, unlocked.
  Unsupported(File),
}

impl Flocked {
  pub fn file(&self) -> &File {
    match self {
      Flocked::Held(held) => held,
      Flocked::Unsupported(file) => file,
    }
  }
  pub fn file_mut(&mut self) -> &mut File {
    match self {
      Flocked::Held(held) => held,
      Flocked::Unsupported(file) => file,
    }
  }
}

/// Why `flock_within` did not take the lock.
#[derive(Debug)]
pub enum Unflocked {
  /// Another holder kept it past the deadline.
  TimedOut,
  /// flock failed otherwise (not a file system without flock).
  Failed(Error),
}

/// Takes an exclusive flock on `file`, waiting until `deadline` for its
/// holder. A file system with no flock (ENOLCK, EOPNOTSUPP: some NFS
/// mounts) gives the file back unlocked.
pub fn flock_within(file: File, deadline: Instant) -> Result<Flocked, Unflocked> {
  flock_until(file, deadline, |_| false)
}

/// `flock_within`, asking `give_up` (with the time now) between tries: the
/// wait ends early, as timed out, once it says so.
pub fn flock_until(file: File, deadline: Instant, give_up: impl FnMut(Instant) -> bool) -> Result<Flocked, Unflocked> {
  use nix::fcntl::{Flock, FlockArg};
  let take = |file| Flock::lock(file, FlockArg::LockExclusiveNonblock).map(Flocked::Held);
  wait(file, deadline, give_up, take, Flocked::Unsupported)
}

/// `flock_within` for a descriptor about to be closed: the lock is not
/// dropped by a call of its own but goes with the descriptor's close (the
/// one system call an append saves by it, #47), so it must be the open
/// file's only descriptor (O_CLOEXEC, never duplicated). A child forked
/// meanwhile by another thread shares it until its exec or exit, and the
/// lock with it (docs/durability.md). The file, locked (or unlocked where
/// the file system has no flock). `give_up` as `flock_until`'s.
pub fn flock_until_closed(file: File, deadline: Instant, give_up: impl FnMut(Instant) -> bool) -> Result<File, Unflocked> {
  use rustix::fs::{flock, FlockOperation};
  let take = |file: File| match flock(&file, FlockOperation::NonBlockingLockExclusive) {
    Ok(()) => Ok(file),
    Err(e) => Err((file, nix::errno::Errno::from_raw(e.raw_os_error()))),
  };
  wait(file, deadline, give_up, take, |file| file)
}

/// Tries `take` until it holds the lock, `deadline` passes or `give_up`
/// says so. Holders keep it for a few system calls, so a waiter first
/// yields, then sleeps from 50 µs, doubling to 20 ms.
fn wait<T>(
  mut file: File,
  deadline: std::time::Instant,
  mut give_up: impl FnMut(std::time::Instant) -> bool,
  take: impl Fn(File) -> std::result::Result<T, (File, nix::errno::Errno)>,
  unsupported: impl Fn(File) -> T,
) -> std::result::Result<T, Unflocked> {
  use nix::errno::Errno;
  use std::time::{Duration, Instant};
  let mut tries = 0u32;
  let mut pause = Duration::from_micros(50);
  loop {
    match take(file) {
      Ok(held) => return Ok(held),
      Err((back, Errno::EWOULDBLOCK | Errno::EINTR)) => {
        let now = Instant::now();
        if now >= deadline || give_up(now) {
          return Err(Unflocked::TimedOut);
        }
        tries += 1;
        if tries <= 50 {
          std::thread::yield_now();
        } else {
          std::thread::sleep(pause);
          pause = (pause * 2).min(Duration::from_millis(20));
        }
        file = back;
      }
      Err((back, Errno::ENOLCK | Errno::EOPNOTSUPP)) => return Ok(unsupported(back)),
      Err((_, e)) => return Err(Unflocked::Failed(e.into())),
    }
  }
}
