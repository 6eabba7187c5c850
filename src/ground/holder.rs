//! Who holds a lock, asked of the kernel: a wait that cannot end at once
//! names the process it waits for, with its state and command line, and
//! the command that frees it (#44). The holder of a flock(2) is found by
//! the open file description that holds it, not only by the pid that took
//! it (#64): `/proc/locks` lists the lock by its inode, and every process
//! whose `/proc/PID/fdinfo` lists the lock on one of its descriptors holds
//! it (a child that inherited it, the taker long gone). Nothing is guessed
//! from a file's age. A holder that does not move (every thread stopped by
//! a signal or a debugger, its cgroup frozen, or asleep with no CPU time
//! gained between two looks) never lets go on its own, so a waiter that
//! finds one gives up early rather than wait its whole bound; a holder it
//! cannot see (another PID namespace, another user's process) is said to
//! be one, never named wrongly. docs/lock.md gives what each look reads
//! and costs.

/// The state of a process, from its threads' `stat` and its cgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
  /// Running, sleeping or in an uninterruptible wait (R, S, D, I, W), and
  /// not seen idle across two looks.
  Running,
  /// Every thread stopped by a signal (T).
  Stopped,
  /// Stopped by a debugger or tracer (t, every thread stopped); after a
  /// second look, one that gained no CPU time (`strace -f` shows `t` at
  /// every system call of a process that works: it gains CPU time and
  /// reads as running).
  Traced,
  /// Frozen by a cgroup freezer (v1 `freezer.state`, v2 `cgroup.events`):
  /// what `docker pause` does. `Holder::thaw` says what thaws it.
  Frozen,
  /// No thread runnable (R, D) at either of two looks and no CPU time
  /// gained between them: asleep on something other than this lock (a
  /// `flock FILE sleep 40`), so not moving towards letting go.
  Idle,
  /// Dead and not yet reaped by its parent (Z).
  Zombie,
  /// The lock is held and no holder is visible from here: a process of
  /// another PID namespace (this one a container's), or one whose
  /// descriptors this process may not read.
  Hidden,
  /// The pid that took the lock is alive, but its descriptors may not be
  /// read here (another user's process, without ptrace rights): whether it
  /// still holds the lock, and what it is, cannot be told.
  Unread,
  /// Anything else, or unreadable.
  Unknown,
}

/// A process holding a lock, as the kernel shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
  /// Its pid in this process's namespace; 0 where none is visible from
  /// here (`Run::Hidden`).
  pub pid: u32,
  pub run: Run,
  /// Its command line, arguments joined by spaces (empty where unreadable).
  pub command: String,
  /// The command that thaws its cgroup, where it is frozen.
  pub thaw: Option<String>,
  /// What a second look compares (`settle`): whether a thread was
  /// runnable (R or D), and the CPU time of its threads, in nanoseconds.
  pub busy: bool,
  pub cpu: u64,
  /// Whether a thread was stopped by a tracer (`t`) while others were not:
  /// a tracer holding one thread (`tSSSS`); not moving, it is traced.
  pub tracer: bool,
}

impl Holder {
  /// A holder that is seen and nothing more (`Hidden`, `Unread`, or a pid
  /// seen with nothing readable).
  pub(crate) fn bare(pid: u32, run: Run) -> Holder {
    Holder {
      pid,
      run,
      command: String::new(),
      thaw: None,
      busy: false,
      cpu: 0,
      tracer: false,
    }
  }

  /// The lock held, and no holder visible from here.
  pub fn hidden() -> Holder {
    Holder::bare(0, Run::Hidden)
  }

  /// A process that will not take its next step until someone acts, or
  /// does not move towards it (`Idle`).
  pub fn stalled(&self) -> bool {
    matches!(self.run, Run::Stopped | Run::Traced | Run::Frozen | Run::Idle)
  }

  /// "pid 12 (stopped: node connector.js)".
  pub fn describe(&self) -> String {
    match self.run {
      Run::Hidden if in_child_namespace() => {
        return "a process this container cannot see (outside its PID namespace)".into();
      }
      Run::Hidden => return "a process whose descriptors this one may not read (another user's)".into(),
      Run::Unread => {
        return format!(
          "a process whose descriptors this one may not read (pid {} took the lock; another user's, or no ptrace rights here)",
          self.pid
        )
      }
      _ => {}
    }
    let run = match self.run {
      Run::Running => "running",
      Run::Stopped => "stopped",
      Run::Traced => "stopped by a debugger or tracer",
      Run::Frozen => "frozen by its cgroup's freezer",
      Run::Idle => "asleep, no CPU time between two looks",
      Run::Zombie => "dead, not yet reaped by its parent",
      _ => "state unknown",
    };
    if self.command.is_empty() {
      format!("pid {} ({run})", self.pid)
    } else {
      format!("pid {} ({run}: {})", self.pid, self.command)
    }
  }

  /// As the command shows it: `{pid, state, command, stalled, is, fix,
  /// busy, cpu}` (the last two for `settle`'s second look).
  pub fn to_json(&self) -> serde_json::Value {
    serde_json::json!({
      "pid": self.pid,
      "state": self.state(),
      "command": self.command,
      "stalled": self.stalled(),
      "is": self.describe(),
      "fix": self.remedy(),
      "busy": self.busy,
      "cpu": self.cpu.to_string(),
      "tracer": self.tracer,
    })
  }

  /// The state's name in `to_json`.
  fn state(&self) -> &'static str {
    match self.run {
      Run::Running => "running",
      Run::Stopped => "stopped",
      Run::Traced => "traced",
      Run::Frozen => "frozen",
      Run::Idle => "idle",
      Run::Zombie => "zombie",
      Run::Hidden => "hidden",
      Run::Unread => "unread",
      Run::Unknown => "unknown",
    }
  }

  /// A holder as `to_json` wrote it (the command's first look, handed
  /// back for its second: `settle`).
  pub fn from_json(v: &serde_json::Value) -> Option<Holder> {
    let run = match v.get("state")?.as_str()? {
      "running" => Run::Running,
      "stopped" => Run::Stopped,
      "traced" => Run::Traced,
      "frozen" => Run::Frozen,
      "idle" => Run::Idle,
      "zombie" => Run::Zombie,
      "hidden" => Run::Hidden,
      "unread" => Run::Unread,
      _ => Run::Unknown,
    };
    Some(Holder {
      pid: u32::try_from(v.get("pid")?.as_u64()?).ok()?,
      run,
      command: v.get("command")?.as_str()?.to_string(),
      thaw: None,
      busy: v.get("busy")?.as_bool()?,
      cpu: v.get("cpu")?.as_str()?.parse().ok()?,
      tracer: v.get("tracer").and_then(serde_json::Value::as_bool).unwrap_or(false),
    })
  }

  /// The command that lets it finish, or what to wait for.
  pub fn remedy(&self) -> String {
    match self.run {
      Run::Stopped => format!("`kill -CONT {}` lets it finish", self.pid),
      Run::Frozen => match &self.thaw {
        Some(thaw) => format!("`{thaw}` thaws its cgroup (`docker unpause` where a container was paused), and it finishes"),
        None => "thaw its cgroup (`docker unpause` where a container was paused), and it finishes".into(),
      },
      Run::Traced => format!(
        "detach the debugger or tracer from pid {0} (or `kill -CONT {0}` where the tracer passes signals on) to let it finish",
        self.pid
      ),
      Run::Idle => format!(
        "pid {0} keeps the lock while it waits on something else: let it finish, or end it (`kill {0}`) where its work is not needed",
        self.pid
      ),
      Run::Hidden if in_child_namespace() => {
        "run `status` from the host (outside this container's PID namespace), which names it and what frees it".into()
      }
      Run::Hidden | Run::Unread => {
        "run `status` as root or as that process's user, which names it and what frees it (or wait for it to finish)".into()
      }
      _ => format!("wait for pid {} to finish", self.pid),
    }
  }
}

/// Whether this process is in a PID namespace below the machine's (a
/// container's): its namespace is not the initial one (whose inode the
/// kernel fixes, `PROC_PID_INIT_INO`), or its `NSpid` lists more than one
/// pid (a `/proc` mounted by an ancestor namespace shows them).
fn in_child_namespace() -> bool {
  const INIT: &str = "pid:[4026531836]";
  if std::fs::read_link("/proc/self/ns/pid").is_ok_and(|l| l.as_os_str() != INIT) {
    return true;
  }
  std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
    s.lines()
      .find_map(|l| l.strip_prefix("NSpid:"))
      .is_some_and(|pids| pids.split_whitespace().count() > 1)
  })
}

/// Reads a process's state, command line and CPU time at one look. The
/// state is its threads': stopped only where every one is
/// (`/proc/PID/stat` shows the first thread alone, and a tracer may stop
/// one thread for a moment while another, a Worker, holds the lock); a
/// frozen cgroup (v1 or v2) makes it frozen whatever its threads show.
pub fn process(pid: u32) -> Holder {
  let mut run = None;
  let mut busy = false;
  let mut tracer = false;
  let mut cpu = 0u64;
  if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
    for task in tasks.flatten() {
      let stat = std::fs::read(task.path().join("stat")).ok();
      let letter = stat.as_deref().and_then(after_comm).and_then(|rest| rest.first().copied());
      busy |= matches!(letter, Some(b'R' | b'D'));
      tracer |= letter == Some(b't');
      cpu = cpu.saturating_add(cpu_of(&task.path(), stat.as_deref()));
      let one = run_of(letter.as_ref());
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
  let thaw = if matches!(run, Run::Zombie | Run::Unknown) {
    None
  } else {
    super::freezer::frozen(pid)
  };
  let run = if thaw.is_some() { Run::Frozen } else { run };
  let command = std::fs::read(format!("/proc/{pid}/cmdline"))
    .map(|raw| {
      let text = String::from_utf8_lossy(&raw);
      let joined = text.trim_end_matches('\0').replace('\0', " ");
      crate::ground::text::printable(&joined, 200)
    })
    .unwrap_or_default();
  Holder {
    pid,
    run,
    command,
    thaw,
    busy,
    cpu,
    tracer,
  }
}

/// A thread's CPU time in nanoseconds: `schedstat`'s first field, or its
/// `stat`'s utime and stime in clock ticks (10 ms) where there is none.
fn cpu_of(task: &std::path::Path, stat: Option<&[u8]>) -> u64 {
  if let Some(ns) = std::fs::read_to_string(task.join("schedstat"))
    .ok()
    .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
  {
    return ns;
  }
  let Some(rest) = stat.and_then(after_comm) else { return 0 };
  // Fields 14 and 15, counted from the state (field 3).
  let mut fields = rest.split(|b| *b == b' ').skip(11);
  let tick = |f: Option<&[u8]>| f.and_then(|f| std::str::from_utf8(f).ok()?.parse::<u64>().ok()).unwrap_or(0);
  (tick(fields.next()) + tick(fields.next())) * 10_000_000
}

/// The second look: a holder seen at both that neither had a thread
/// runnable nor gained CPU time between them is not moving: `Idle`, or
/// `Traced` where a tracer stops it; a traced one that gained CPU time is
/// working under its tracer (`Running`).
pub fn settle(before: &[Holder], now: &mut [Holder]) {
  for h in now.iter_mut() {
    let Some(b) = before.iter().find(|b| b.pid == h.pid && b.pid != 0) else {
      continue;
    };
    let still = !b.busy && !h.busy && b.cpu == h.cpu;
    h.run = match (h.run, still) {
      // A tracer holds one of its threads, and no other moves.
      (Run::Running, true) if h.tracer || b.tracer => Run::Traced,
      (Run::Running, true) => Run::Idle,
      (Run::Traced, false) => Run::Running,
      (run, _) => run,
    };
  }
  // The one to name first: where every holder is stalled, one that will
  // not let go before one that does not move (a stopped child before the
  // `flock` asleep waiting for it); where one moves, that one: the lock
  // goes when it lets go (a `flock F CMD` whose CMD works).
  let all = now.iter().all(Holder::stalled);
  now.sort_by_key(|h| match h.run {
    Run::Stopped | Run::Frozen | Run::Traced => 1,
    Run::Idle => 2,
    _ if all => 3,
    _ => 0,
  });
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

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::lockers::{inode_key, lock_holders};
  use crate::testutil::TempDir;

  #[test]
  fn a_flock_is_found_with_its_holder_and_state() {
    let d = TempDir::new();
    let file = std::fs::File::open(d.path()).expect("open");
    let meta = file.metadata().expect("meta");
    assert!(lock_holders(&meta, false).is_empty());
    let held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).expect("flock");
    let found = lock_holders(&meta, false);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pid, std::process::id());
    assert_eq!(found[0].run, Run::Running);
    assert!(!found[0].stalled());
    assert!(found[0].describe().starts_with(&format!("pid {} (running: ", std::process::id())));
    drop(held);
    assert!(lock_holders(&meta, false).is_empty());
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
      run: seen,
      command: "sleep 30".into(),
      ..Holder::bare(pid, Run::Unknown)
    };
    assert_eq!(h.describe(), format!("pid {pid} (stopped: sleep 30)"));
    assert_eq!(h.remedy(), format!("`kill -CONT {pid}` lets it finish"));
  }

  /// `flock FILE CMD`: the process that took the lock runs (it waits for
  /// its child); the child shares the lock through the descriptor it
  /// inherited, and is found as a holder of its own.
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
    let found = lock_holders(&std::fs::metadata(&path).expect("meta"), false);
    let _ = child.kill();
    let _ = child.wait();
    drop(held);
    // Both hold it (one open file description). This process moves, and
    // may let go: it is named first; the stopped child is found too.
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].pid, std::process::id(), "{found:?}");
    assert_eq!(found[1].pid, pid, "the stopped child: {found:?}");
    assert_eq!(found[1].remedy(), format!("`kill -CONT {pid}` lets it finish"));
  }

  /// The taker gone, a child that inherited the descriptor holds the lock
  /// (#64): found by its `fdinfo`, not by the pid `/proc/locks` gives; asleep,
  /// it reads as running at one look and as idle at the second.
  #[test]
  fn a_sleeping_child_that_inherited_the_lock_is_found_and_read_idle() {
    let d = TempDir::new();
    let path = format!("{}/f", d.path());
    let file = std::fs::File::create(&path).expect("file");
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).expect("flock");
    let mut child = std::process::Command::new("sleep")
      .arg("30")
      .stdin(file.try_clone().expect("dup"))
      .spawn()
      .expect("sleep");
    // This process's descriptors close: the child alone holds the lock.
    drop(file);
    let pid = child.id();
    let meta = std::fs::metadata(&path).expect("meta");
    std::thread::sleep(std::time::Duration::from_millis(50));
    let first = lock_holders(&meta, true);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut second = lock_holders(&meta, true);
    settle(&first, &mut second);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(first.iter().map(|h| (h.pid, h.run)).collect::<Vec<_>>(), vec![(pid, Run::Running)]);
    assert_eq!(second[0].pid, pid);
    assert_eq!(second[0].run, Run::Idle, "{second:?}");
    assert!(second[0].stalled());
    assert_eq!(
      second[0].remedy(),
      format!(
        "pid {pid} keeps the lock while it waits on something else: let it finish, or end it (`kill {pid}`) where its work is not needed"
      )
    );
  }

  /// A holder that works (CPU time gained) is not idle, traced or not.
  #[test]
  fn a_holder_that_gains_cpu_time_moves() {
    let at = |run, busy, cpu| Holder {
      run,
      busy,
      cpu,
      ..Holder::bare(7, Run::Unknown)
    };
    for (before, now, settled) in [
      (at(Run::Running, false, 5), at(Run::Running, false, 5), Run::Idle),
      (at(Run::Running, false, 5), at(Run::Running, false, 6), Run::Running),
      (at(Run::Running, true, 5), at(Run::Running, false, 5), Run::Running),
      (at(Run::Traced, false, 5), at(Run::Traced, false, 9), Run::Running),
      (at(Run::Traced, false, 5), at(Run::Traced, false, 5), Run::Traced),
      (at(Run::Stopped, false, 5), at(Run::Stopped, false, 5), Run::Stopped),
      (
        Holder {
          tracer: true,
          ..at(Run::Running, false, 5)
        },
        at(Run::Running, false, 5),
        Run::Traced,
      ),
    ] {
      let mut seen = [now];
      settle(&[before], &mut seen);
      assert_eq!(seen[0].run, settled);
    }
  }

  #[test]
  fn the_inode_key_is_proc_locks_spelling() {
    // makedev(254, 0) and makedev(8, 17).
    assert_eq!(inode_key(0xfe00, 42), "fe:00:42");
    assert_eq!(inode_key(0x0811, 7), "08:11:7");
  }
}
