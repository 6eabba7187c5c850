//! The STOP mark: a shared open-file-description lock (`F_OFD_SETLK`,
//! `F_RDLCK`, byte 0) on the journal directory, held by every STOP update
//! of this package from before it makes `.stop.lock` to after it removes
//! it (#44). Read locks never wait on one another, and no process can hold
//! a write lock on a directory (it cannot open one for writing), so taking
//! the mark never waits: a brake set by an operator cannot be held up by
//! any other process, stopped or not. What the mark gives is a witness:
//! `F_OFD_GETLK` tells whether any live update holds it, which proves a
//! `.stop.lock` left by an update that died (src/stop.rs, `left`). These
//! locks are apart from flock(2) (the lock guard, an operator's `flock
//! DIR`), and the kernel drops them with the last descriptor, at death too.
//!
//! Where the mark cannot be had (a journal directory that cannot be opened
//! for reading, a kernel or file system without OFD locks, macOS, the last
//! free descriptor) the update runs unmarked, as the reference's does, and
//! a judge that cannot ask says "unproven"; one that can, and finds no
//! mark, may call an unmarked update's `.stop.lock` left: only a process at
//! its descriptor limit makes one, and its update lasts a few calls.

use std::fs::File;

use super::journal::Journal;

/// A mark held until dropped (closing the descriptor drops the lock).
pub struct Mark {
  _held: Option<File>,
}

impl Mark {
  pub fn held(&self) -> bool {
    self._held.is_some()
  }
}

/// The journal directory, opened for reading (OFD locks need a descriptor
/// with read access).
fn open(j: &Journal) -> Option<File> {
  crate::ground::files::open_dir(&j.itself(), crate::ground::files::Link::Follow).ok()
}

#[cfg(target_os = "linux")]
fn region(kind: nix::libc::c_int) -> nix::libc::flock {
  nix::libc::flock {
    l_type: kind as nix::libc::c_short,
    l_whence: nix::libc::SEEK_SET as nix::libc::c_short,
    l_start: 0,
    l_len: 1,
    l_pid: 0,
  }
}

/// Takes the mark of the journal; never waits.
pub fn take(j: &Journal) -> Mark {
  #[cfg(target_os = "linux")]
  if let Some(file) = open(j) {
    // The update itself needs one (STOP).
    if !crate::ground::files::spare(&file) {
      return Mark { _held: None };
    }
    let region = region(nix::libc::F_RDLCK);
    if nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_OFD_SETLK(&region)).is_ok() {
      return Mark { _held: Some(file) };
    }
  }
  #[cfg(not(target_os = "linux"))]
  let _ = open(j);
  Mark { _held: None }
}

/// Whether a live process holds the journal's mark: `None` where that
/// cannot be asked here.
pub fn marked(j: &Journal) -> Option<bool> {
  #[cfg(target_os = "linux")]
  {
    let file = open(j)?;
    let mut region = region(nix::libc::F_WRLCK);
    nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_OFD_GETLK(&mut region)).ok()?;
    Some(i32::from(region.l_type) != nix::libc::F_UNLCK)
  }
  #[cfg(not(target_os = "linux"))]
  {
    let _ = open(j)?;
    None
  }
}

/// The pids of the processes whose open descriptors hold the journal's
/// mark: OFD locks show no pid in /proc/locks, so each process's
/// descriptors are asked (`/proc/PID/fdinfo`, which lists the locks held
/// through each). Only processes this one may look into are found.
pub fn holders(j: &Journal) -> Vec<u32> {
  use std::os::unix::fs::MetadataExt;
  let Ok(meta) = std::fs::metadata(j.itself()) else {
    return Vec::new();
  };
  let key = crate::ground::lockers::inode_key(meta.dev(), meta.ino());
  let Ok(procs) = std::fs::read_dir("/proc") else {
    return Vec::new();
  };
  let mut found = Vec::new();
  for p in procs.flatten() {
    let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
      continue;
    };
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
      continue;
    };
    let holds = fds.flatten().any(|fd| {
      std::fs::read_to_string(fd.path()).is_ok_and(|info| {
        info
          .lines()
          .any(|l| l.starts_with("lock:") && l.contains("OFDLCK") && l.contains(" READ ") && l.split_whitespace().any(|f| f == key))
      })
    });
    if holds {
      found.push(pid);
    }
  }
  found
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::testutil::TempDir;

  #[test]
  fn a_mark_is_seen_while_held_and_never_waits() {
    let d = TempDir::new();
    let j = d.journal();
    assert_eq!(marked(&j), Some(false));
    let one = take(&j);
    assert!(one.held());
    // A second mark is taken at once: marks never exclude one another.
    let two = take(&j);
    assert!(two.held());
    assert_eq!(marked(&j), Some(true));
    assert_eq!(holders(&j), [std::process::id()]);
    drop(one);
    assert_eq!(marked(&j), Some(true));
    drop(two);
    assert_eq!(marked(&j), Some(false));
    // Apart from flock: an operator's flock on the directory changes nothing.
    let file = std::fs::File::open(d.path()).expect("open");
    let _flocked = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).expect("flock");
    assert!(take(&j).held());
  }
}
