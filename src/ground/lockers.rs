//! Who holds a flock(2), found by the open file description that holds
//! it (#64), and the watch every bounded wait on a journal flock ends
//! through. `/proc/locks` lists the flock by its inode and names the pid
//! that took it; every process whose `/proc/PID/fdinfo` lists the lock on
//! one of its descriptors holds it (a child that inherited the descriptor,
//! the taker perhaps gone). What each look costs is in docs/lock.md.

use std::os::unix::fs::MetadataExt;

use super::holder::{process, settle, Holder, Run};

/// The holders of a flock(2) on the inode of `meta`, at one look: every
/// process with a descriptor of the open file description that holds it
/// (its `/proc/PID/fdinfo` lists the lock), not only the pid that took it,
/// which `/proc/locks` names (a child that inherited the descriptor holds
/// it as much, and the taker may have exited). `held`: the caller knows
/// the lock is held (it was refused it), so a lock `/proc/locks` does not
/// list (held in another PID namespace, whose locks a container's
/// `/proc/locks` leaves out) still gets a holder: `Hidden`. Where neither
/// `/proc/locks` lists it nor the caller was refused, nothing more is read.
pub fn lock_holders(meta: &std::fs::Metadata, held: bool) -> Vec<Holder> {
  let key = inode_key(meta.dev(), meta.ino());
  let listed = listed(&key);
  if listed.is_empty() && !held {
    return Vec::new();
  }
  let (sharers, closed) = sharers(meta.dev(), meta.ino(), &key);
  let mut found: Vec<Holder> = sharers.into_iter().map(process).collect();
  // The pid that took the lock, alive, whose descriptors may not be read.
  for pid in listed {
    if pid != 0 && closed.contains(&pid) && !found.iter().any(|h| h.pid == pid) {
      found.push(Holder::bare(pid, Run::Unread));
    }
  }
  if found.is_empty() {
    found.push(Holder::bare(0, Run::Hidden));
  }
  settle(&[], &mut found);
  found
}

/// The pids `/proc/locks` gives for a flock on the inode `key` (0 for one
/// it shows as 0; the lock's waiters, listed with `->`, are not holders).
fn listed(key: &str) -> Vec<u32> {
  let Ok(table) = std::fs::read_to_string("/proc/locks") else {
    return Vec::new();
  };
  let mut pids = Vec::new();
  for line in table.lines() {
    let mut fields = line.split_whitespace();
    let (Some(_), Some(kind)) = (fields.next(), fields.next()) else {
      continue;
    };
    if kind != "FLOCK" {
      continue;
    }
    let (Some(_), Some(_), Some(pid), Some(inode)) = (fields.next(), fields.next(), fields.next(), fields.next()) else {
      continue;
    };
    if inode != key {
      continue;
    }
    let pid = pid.parse::<i64>().ok().and_then(|p| u32::try_from(p).ok()).unwrap_or(0);
    if !pids.contains(&pid) {
      pids.push(pid);
    }
  }
  pids
}

/// Every process with a descriptor of the file `(dev, ino)` whose
/// `fdinfo` lists the flock on `key`: one pass over the process table,
/// `stat` of each descriptor (through `/proc/PID/fd`), `fdinfo` read only
/// for a descriptor of this file. With the processes whose descriptors may
/// not be read here (another user's, without ptrace rights).
fn sharers(dev: u64, ino: u64, key: &str) -> (Vec<u32>, Vec<u32>) {
  let (mut found, mut closed) = (Vec::new(), Vec::new());
  let Ok(procs) = std::fs::read_dir("/proc") else {
    return (found, closed);
  };
  for entry in procs.flatten() {
    let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
      continue;
    };
    let fds = match std::fs::read_dir(format!("/proc/{pid}/fd")) {
      Ok(fds) => fds,
      Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
        closed.push(pid);
        continue;
      }
      Err(_) => continue,
    };
    let holds = fds.flatten().any(|fd| {
      std::fs::metadata(fd.path()).is_ok_and(|m| m.dev() == dev && m.ino() == ino)
        && std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy())).is_ok_and(|info| {
          info
            .lines()
            .any(|l| l.starts_with("lock:") && l.contains(" FLOCK ") && l.split_whitespace().any(|f| f == key))
        })
    });
    if holds {
      found.push(pid);
    }
  }
  (found, closed)
}

/// One bounded wait's watch of the lock it waits for (#64): from `first`
/// on, every `every`, it looks at the lock's holders (`lock_holders`), the
/// look before settling this one (`settle`), and says give up once every
/// holder is stalled: stopped or frozen at one look; traced or idle (no
/// thread runnable, no CPU time gained) at two. Every wait on a journal
/// flock (the guard, an append, a remover's or a repair's) ends through
/// one, and its refusal names what `holders` says.
pub struct Watch<F> {
  meta: F,
  next: std::time::Instant,
  every: std::time::Duration,
  last: Option<Vec<Holder>>,
  /// Whether a holder that cannot be seen (`Hidden`, `Unread`) ends the
  /// wait too: a waiter that holds the binding meanwhile (a repair) does
  /// not keep it for a holder it cannot judge.
  unseen: bool,
}

impl<F: Fn() -> Option<std::fs::Metadata>> Watch<F> {
  pub fn new(first: std::time::Instant, every: std::time::Duration, meta: F) -> Self {
    Watch {
      meta,
      next: first,
      every,
      last: None,
      unseen: false,
    }
  }

  /// This watch, ending the wait on a holder that cannot be seen as well.
  pub fn ending_on_unseen(mut self) -> Self {
    self.unseen = true;
    self
  }

  /// `flock_until`'s `give_up`: whether to end the wait now.
  pub fn give_up(&mut self, now: std::time::Instant) -> bool {
    if now < self.next {
      return false;
    }
    self.next = now + self.every;
    let seen = self.look();
    let unseen = |h: &Holder| self.unseen && matches!(h.run, Run::Hidden | Run::Unread);
    let over = !seen.is_empty() && seen.iter().all(|h| h.stalled() || unseen(h));
    self.last = Some(seen);
    over
  }

  /// One look, settled against the last.
  fn look(&self) -> Vec<Holder> {
    let Some(meta) = (self.meta)() else { return Vec::new() };
    let mut seen = lock_holders(&meta, true);
    if let Some(last) = &self.last {
      settle(last, &mut seen);
    }
    seen
  }

  /// Who holds the lock now, for the refusal: a look of its own, settled
  /// against the last one the wait made. Where it sees no holder but the
  /// last look did (the holder let go between the wait's last try and this
  /// look), that one's holders, which kept the lock through the wait: a
  /// holder is never said to be unseen for a race at the deadline. None
  /// seen by either: `Hidden`.
  pub fn holders(&self) -> Vec<Holder> {
    let seen = self.look();
    let unseen = |h: &[Holder]| h.iter().all(|h| h.run == Run::Hidden);
    if !unseen(&seen) {
      return seen;
    }
    match &self.last {
      Some(last) if !unseen(last) => last.clone(),
      _ => vec![Holder::bare(0, Run::Hidden)],
    }
  }
}

/// The file at `path` (no link followed, a regular file or a directory)
/// and whether another holds an exclusive flock on it now: a shared flock
/// tried without waiting and let go at once (`status` never waits, #55).
/// A file system without flock holds nothing.
pub fn probe(path: &str) -> Option<(std::fs::Metadata, bool)> {
  use std::os::unix::fs::OpenOptionsExt;
  let file = std::fs::OpenOptions::new()
    .read(true)
    .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
    .open(path)
    .ok()?;
  let meta = file.metadata().ok().filter(|m| m.is_file() || m.is_dir())?;
  let held = matches!(
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockSharedNonblock),
    Err((_, nix::errno::Errno::EWOULDBLOCK))
  );
  Some((meta, held))
}

/// The holders of the lock at `path` now (`probe`, then `lock_holders`).
pub fn holders_at(path: &str) -> Vec<Holder> {
  probe(path).map_or_else(Vec::new, |(meta, held)| lock_holders(&meta, held))
}

/// `/proc/locks`'s name of an inode: major and minor in hex, the inode in
/// decimal.
pub fn inode_key(dev: u64, ino: u64) -> String {
  let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff);
  let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0xff);
  format!("{major:02x}:{minor:02x}:{ino}")
}
