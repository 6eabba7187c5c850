//! Who holds a lock, asked of the kernel: a wait that cannot end at once
//! names the process it waits for, with its state and command line, and
//! the command that frees it (#44). The holder of a flock(2) is read from
//! `/proc/locks`, matched by the locked inode; nothing is guessed from a
//! file's age. A process stopped by a signal (a paused container, Ctrl-Z, a
//! cgroup freezer) or by a debugger never finishes on its own, so a waiter
//! that finds one stopped gives up early rather than wait its whole bound.

use std::os::unix::fs::MetadataExt;

/// The state of a process, from field 3 of `/proc/PID/stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
  /// Running, sleeping or in an uninterruptible wait (R, S, D, I, W).
  Running,
  /// Stopped by a signal (T), or frozen by a cgroup freezer.
  Stopped,
  /// Stopped by a debugger or tracer (t).
  Traced,
  /// Dead and not yet reaped by its parent (Z).
  Zombie,
  /// Anything else, or unreadable.
  Unknown,
}

/// A process holding a lock, as the kernel shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
  /// Its pid in this process's namespace; 0 where it is not visible from
  /// here (a process of a namespace above, or one `/proc` hides).
  pub pid: u32,
  pub run: Run,
  /// Its command line, arguments joined by spaces (empty where unreadable).
  pub command: String,
}

impl Holder {
  /// A process that will not take its next step until someone acts.
  pub fn stalled(&self) -> bool {
    matches!(self.run, Run::Stopped | Run::Traced)
  }

  /// "pid 12 (stopped: node connector.js)".
  pub fn describe(&self) -> String {
    if self.pid == 0 {
      return "a process this one cannot see (another PID namespace, or a /proc that hides it)".into();
    }
    let run = match self.run {
      Run::Running => "running",
      Run::Stopped => "stopped",
      Run::Traced => "stopped by a debugger or tracer",
      Run::Zombie => "dead, not yet reaped by its parent",
      Run::Unknown => "state unknown",
    };
    if self.command.is_empty() {
      format!("pid {} ({run})", self.pid)
    } else {
      format!("pid {} ({run}: {})", self.pid, self.command)
    }
  }

  /// As the command shows it: `{pid, state, command, stalled, is, fix}`.
  pub fn to_json(&self) -> serde_json::Value {
    let state = match self.run {
      Run::Running => "running",
      Run::Stopped => "stopped",
      Run::Traced => "traced",
      Run::Zombie => "zombie",
      Run::Unknown => "unknown",
    };
    serde_json::json!({
      "pid": self.pid,
      "state": state,
      "command": self.command,
      "stalled": self.stalled(),
      "is": self.describe(),
      "fix": self.remedy(),
    })
  }

  /// The command that lets it finish, or what to wait for.
  pub fn remedy(&self) -> String {
    match self.run {
      Run::Stopped => format!("`kill -CONT {}` lets it finish", self.pid),
      Run::Traced => format!(
        "detach the debugger or tracer from pid {0} (or `kill -CONT {0}` where the tracer passes signals on) to let it finish",
        self.pid
      ),
      _ if self.pid == 0 => "let that process finish, or stop it".into(),
      _ => format!("wait for pid {} to finish", self.pid),
    }
  }
}

/// Reads a process's state and command line. The state is its threads':
/// stopped only where every one is (`/proc/PID/stat` shows the first
/// thread alone, and a tracer may stop one thread for a moment while
/// another, a Worker, holds the lock).
pub fn process(pid: u32) -> Holder {
  let mut run = None;
  if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
    for task in tasks.flatten() {
      let one = state(&task.path().join("stat"));
      run = Some(match (run, one) {
        (None, one) => one,
        (Some(Run::Traced), Run::Stopped) | (Some(Run::Stopped), Run::Traced) => Run::Traced,
        (Some(all), one) if all == one => all,
        (Some(Run::Zombie), _) | (_, Run::Zombie) => Run::Running,
        (Some(_), Run::Unknown) | (Some(Run::Unknown), _) => Run::Unknown,
        _ => Run::Running,
      });
    }
  }
  let run = run.unwrap_or_else(|| state(std::path::Path::new(&format!("/proc/{pid}/stat"))));
  // A task frozen by the cgroup freezer shows S (v2): its cgroup says it
  // is frozen.
  let run = if run == Run::Running && frozen(pid) { Run::Stopped } else { run };
  let command = std::fs::read(format!("/proc/{pid}/cmdline"))
    .map(|raw| {
      let text = String::from_utf8_lossy(&raw);
      let joined = text.trim_end_matches('\0').replace('\0', " ");
      crate::ground::text::printable(&joined, 200)
    })
    .unwrap_or_default();
  Holder { pid, run, command }
}

/// The pid of a process's parent (`PPid` of `/proc/PID/status`): whose
/// child a zombie is, and so who must reap it.
pub fn parent(pid: u32) -> Option<u32> {
  let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
  status
    .lines()
    .find_map(|l| l.strip_prefix("PPid:"))
    .and_then(|v| v.trim().parse().ok())
}

/// One task's state, from field 3 of its `stat`.
fn state(path: &std::path::Path) -> Run {
  std::fs::read(path).map_or(Run::Unknown, |stat| run_of(after_comm(&stat).and_then(|rest| rest.first())))
}

/// A `stat`'s fields from the state on (field 3): the command name in
/// field 2 is in parentheses and may hold any byte, so they follow the last ')'.
fn after_comm(stat: &[u8]) -> Option<&[u8]> {
  stat.iter().rposition(|b| *b == b')').and_then(|at| stat.get(at + 2..))
}

/// The state a `stat` spells with one letter.
fn run_of(letter: Option<&u8>) -> Run {
  match letter {
    Some(b'R' | b'S' | b'D' | b'I' | b'W') => Run::Running,
    Some(b'T') => Run::Stopped,
    Some(b't') => Run::Traced,
    Some(b'Z' | b'X' | b'x') => Run::Zombie,
    _ => Run::Unknown,
  }
}

/// Whether the process's cgroup (v2) is frozen. Its path is as this
/// process's cgroup namespace shows it, read under this process's
/// `/sys/fs/cgroup`; a path through `..` (a cgroup outside this namespace)
/// is not followed. A v1 freezer is not seen: the wait then runs its whole
/// patience, and names the process as running.
fn frozen(pid: u32) -> bool {
  let v2 = |p: &str| {
    std::fs::read_to_string(p)
      .ok()
      .and_then(|text| text.lines().find_map(|l| l.strip_prefix("0::").map(str::to_string)))
  };
  let (Some(path), Some(_)) = (v2(&format!("/proc/{pid}/cgroup")), v2("/proc/self/cgroup")) else {
    return false;
  };
  if !path.starts_with('/') || path.split('/').any(|part| part == "..") {
    return false;
  }
  std::fs::read_to_string(format!("/sys/fs/cgroup{path}/cgroup.events")).is_ok_and(|events| events.lines().any(|l| l == "frozen 1"))
}

/// The holders of a flock(2) on the inode of `meta`, from `/proc/locks`
/// (the lock's waiters, listed with `->`, are not holders).
pub fn flock_holders(meta: &std::fs::Metadata) -> Vec<Holder> {
  let Ok(table) = std::fs::read_to_string("/proc/locks") else {
    return Vec::new();
  };
  let want = inode_key(meta.dev(), meta.ino());
  let mut found: Vec<Holder> = Vec::new();
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
    if inode != want {
      continue;
    }
    let Ok(pid) = pid.parse::<i64>() else { continue };
    let pid = u32::try_from(pid).unwrap_or(0);
    if !found.iter().any(|h| h.pid == pid) {
      found.push(if pid == 0 {
        Holder {
          pid,
          run: Run::Unknown,
          command: String::new(),
        }
      } else {
        let holder = process(pid);
        // The pid /proc/locks names took the flock; a child that inherited
        // the descriptor (`flock FILE CMD`) holds it as much. Where that
        // child is stopped, the lock goes only once it runs again: it is
        // the one to name.
        match holder.run {
          Run::Running => stopped_sharer(pid, &want).unwrap_or(holder),
          _ => holder,
        }
      });
    }
  }
  found
}

/// A stopped descendant of `pid` that shares its flock on the inode `key`
/// (its `/proc/PID/fdinfo` lists the lock), if there is one. The tree is
/// read from each process's parent in `/proc/*/stat`: a pass over the
/// process table, made only for a holder that is running.
fn stopped_sharer(pid: u32, key: &str) -> Option<Holder> {
  let mut procs: Vec<(u32, u32, Run)> = Vec::new();
  for entry in std::fs::read_dir("/proc").ok()?.flatten() {
    let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
      continue;
    };
    let Ok(stat) = std::fs::read(entry.path().join("stat")) else {
      continue;
    };
    let Some(rest) = after_comm(&stat) else {
      continue;
    };
    let mut fields = rest.split(|b| *b == b' ');
    let run = run_of(fields.next().and_then(|f| f.first()));
    if let Some(parent) = fields.next().and_then(|f| std::str::from_utf8(f).ok()?.parse().ok()) {
      procs.push((child, parent, run));
    }
  }
  let mut tree = vec![pid];
  let mut at = 0;
  while let Some(&parent) = tree.get(at) {
    at += 1;
    for &(child, of, run) in &procs {
      if of != parent || tree.contains(&child) {
        continue;
      }
      tree.push(child);
      if matches!(run, Run::Stopped | Run::Traced) && shares(child, key) {
        let found = process(child);
        if found.stalled() {
          return Some(found);
        }
      }
    }
  }
  None
}

/// Whether one of the process's descriptors carries the flock on `key`.
fn shares(pid: u32, key: &str) -> bool {
  let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
    return false;
  };
  fds.flatten().any(|fd| {
    std::fs::read_to_string(fd.path()).is_ok_and(|info| {
      info
        .lines()
        .any(|l| l.starts_with("lock:") && l.contains(" FLOCK ") && l.split_whitespace().any(|f| f == key))
    })
  })
}

/// `/proc/locks`'s name of an inode: major and minor in hex, the inode in
/// decimal.
pub(crate) fn inode_key(dev: u64, ino: u64) -> String {
  let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff);
  let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0xff);
  format!("{major:02x}:{minor:02x}:{ino}")
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::testutil::TempDir;

  #[test]
  fn a_flock_is_found_with_its_holder_and_state() {
    let d = TempDir::new();
    let file = std::fs::File::open(d.path()).expect("open");
    let meta = file.metadata().expect("meta");
    assert!(flock_holders(&meta).is_empty());
    let held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).expect("flock");
    let found = flock_holders(&meta);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pid, std::process::id());
    assert_eq!(found[0].run, Run::Running);
    assert!(!found[0].stalled());
    assert!(found[0].describe().starts_with(&format!("pid {} (running: ", std::process::id())));
    drop(held);
    assert!(flock_holders(&meta).is_empty());
  }

  #[test]
  fn a_stopped_process_is_named_stopped_with_its_remedy() {
    let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
    let pid = child.id();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGSTOP);
    let mut seen = Run::Unknown;
    for _ in 0..200 {
      seen = process(pid).run;
      if seen == Run::Stopped {
        break;
      }
      std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(seen, Run::Stopped);
    let h = Holder {
      pid,
      run: seen,
      command: "sleep 30".into(),
    };
    assert_eq!(h.describe(), format!("pid {pid} (stopped: sleep 30)"));
    assert_eq!(h.remedy(), format!("`kill -CONT {pid}` lets it finish"));
  }

  /// `flock FILE CMD`: the process that took the lock runs (it waits for
  /// its child); the child shares the lock through the descriptor it
  /// inherited. With the child stopped, the child is the holder named.
  #[test]
  fn a_stopped_child_sharing_the_lock_is_the_holder_named() {
    let d = TempDir::new();
    let path = format!("{}/f", d.path());
    let file = std::fs::File::create(&path).expect("file");
    let shared = file.try_clone().expect("dup");
    let held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).expect("flock");
    let mut child = std::process::Command::new("sleep").arg("30").stdin(shared).spawn().expect("sleep");
    let pid = child.id();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGSTOP);
    for _ in 0..200 {
      if process(pid).run == Run::Stopped {
        break;
      }
      std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let found = flock_holders(&std::fs::metadata(&path).expect("meta"));
    let _ = child.kill();
    let _ = child.wait();
    drop(held);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pid, pid, "the stopped child, not this process: {found:?}");
    assert_eq!(found[0].remedy(), format!("`kill -CONT {pid}` lets it finish"));
  }

  #[test]
  fn the_inode_key_is_proc_locks_spelling() {
    // makedev(254, 0) and makedev(8, 17).
    assert_eq!(inode_key(0xfe00, 42), "fe:00:42");
    assert_eq!(inode_key(0x0811, 7), "08:11:7");
  }
}
