//! Process identity beyond the pid number: the start time from
//! /proc/<pid>/stat (ticks since boot as the reader's time namespace counts
//! them, which a reused pid cannot reproduce within one boot and one time
//! namespace; across two, `seen` compares them) and the boot id (so the
//! same pid and ticks after a reboot do not match either). A value that is
//! not of the exact syntax the kernel prints is not an identity and reads
//! as absent.

use uuid::Uuid;

use crate::ground::text::decode_utf8;
use crate::ground::text::js_trim;

/// `validStart`: canonical unsigned decimal, no leading zero, at most 2^64-1.
pub fn valid_start(v: &str) -> bool {
  let b = v.as_bytes();
  (1..=20).contains(&b.len()) && b[0] != b'0' && b.iter().all(u8::is_ascii_digit) && v.parse::<u64>().is_ok()
}

/// A UUID in the kernel's lowercase, hyphenated spelling.
fn lower_hyphenated(v: &str) -> Option<Uuid> {
  let u = Uuid::try_parse(v).ok()?;
  (v.len() == 36 && u.hyphenated().to_string() == v).then_some(u)
}

/// `validBoot`: the UUID form of /proc/sys/kernel/random/boot_id.
pub fn valid_boot(v: &str) -> bool {
  lower_hyphenated(v).is_some()
}

/// `PROCESSING_GENERATION`: a lowercase version-4 UUID of the RFC 4122 variant.
pub fn valid_generation(v: &str) -> bool {
  lower_hyphenated(v).is_some_and(|u| u.get_version_num() == 4 && u.get_variant() == uuid::Variant::RFC4122)
}

/// `processStart(pid)` for `pid` already made a string: the 22nd field of
/// /proc/<pid>/stat, counted after the last ")" so a comm with spaces or
/// parentheses cannot shift it.
///
/// Read on every call, as the reference reads it, our own pid included: a
/// kept value would answer where the reference's read fails (no descriptor
/// free), and `writePid` would then claim where the reference refuses (#10).
pub fn process_start(pid: &str) -> Option<String> {
  let stat = decode_utf8(read_proc(&format!("/proc/{pid}/stat"))?);
  let after = stat.rfind(')').map_or(1, |i| i + 2);
  let start = stat.get(after..).unwrap_or("").split(' ').nth(19)?;
  valid_start(start).then(|| start.to_string())
}

/// A /proc file (it reports no size). Both files this reads are one line
/// that the kernel hands over whole in the first read, so a first read
/// that ends the line, with room to spare, is the whole file: the read to
/// the end that would return nothing is skipped. Anything else is read to
/// the end, as the reference reads it.
fn read_proc(path: &str) -> Option<Vec<u8>> {
  use std::io::Read;
  let mut file = std::fs::File::open(path).ok()?;
  let mut buf = vec![0; 4096];
  let n = file.read(&mut buf).ok()?;
  buf.truncate(n);
  if n == 4096 || buf.last() != Some(&b'\n') {
    file.read_to_end(&mut buf).ok()?;
  }
  Some(buf)
}

/// `bootId()`, read on every call as the reference reads it (see
/// `process_start`).
pub fn boot_id() -> Option<String> {
  let text = decode_utf8(read_proc("/proc/sys/kernel/random/boot_id")?);
  let id = js_trim(&text);
  valid_boot(id).then(|| id.to_string())
}

/// `pidAlive` for a number: `process.kill(pid, 0)` succeeds or fails with
/// EPERM. Node refuses a pid that is not an int32 before any system call,
/// which reads as not alive.
pub fn pid_alive(pid: f64) -> bool {
  if !(pid.fract() == 0.0 && pid >= f64::from(i32::MIN) && pid <= f64::from(i32::MAX)) {
    return false;
  }
  match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None) {
    Ok(()) => true,
    Err(e) => e == nix::errno::Errno::EPERM,
  }
}

/// The processes of the PID namespaces below this one whose pid there is
/// `pid`: their pids here, found as the scan of /proc goes (`NSpid` in
/// /proc/<pid>/status lists a process's pid in each namespace it belongs
/// to, this one first). A connector in a container records its pid in its
/// own namespace; seen from the host that number is another process or
/// none (#30).
pub fn inner_pids(pid: f64) -> Below {
  let want = (pid.fract() == 0.0 && pid > 0.0 && pid <= f64::from(u32::MAX)).then_some(pid as u64);
  Below::new(want)
}

#[cfg(target_os = "linux")]
pub use below::Below;

#[cfg(target_os = "linux")]
mod below {
  use std::io::Read;
  use std::os::fd::OwnedFd;

  use nix::dir::{Dir, OwningIter};
  use nix::fcntl::OFlag;
  use rustix::fs::{openat, readlinkat_raw, Mode, OFlags};
  use rustix::io::Errno;

  /// The scan `inner_pids` makes: one `readlinkat` of each process's
  /// namespace link, and a read of the status of those of other
  /// namespaces into one buffer; no allocation per process.
  pub struct Below {
    want: u64,
    scan: Option<Scan>,
  }

  struct Scan {
    proc: OwnedFd,
    entries: OwningIter,
    /// This process's PID namespace link.
    mine: Vec<u8>,
    /// The namespaces already found to hold a process with the pid: a pid
    /// names one process in its namespace, so their others are not read.
    found: Vec<Vec<u8>>,
    status: Vec<u8>,
  }

  impl Below {
    pub(super) fn new(want: Option<u64>) -> Below {
      let scan = want.and_then(|_| {
        let proc = rustix::fs::open("/proc", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).ok()?;
        let mine = std::fs::read_link("/proc/self/ns/pid").ok()?.into_os_string().into_encoded_bytes();
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let entries = Dir::open("/proc", flags, nix::sys::stat::Mode::empty()).ok()?.into_iter();
        Some(Scan {
          proc,
          entries,
          mine,
          found: Vec::new(),
          status: Vec::with_capacity(4096),
        })
      });
      Below {
        want: want.unwrap_or(0),
        scan,
      }
    }
  }

  impl Iterator for Below {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
      let scan = self.scan.as_mut()?;
      loop {
        // A directory that cannot be read further ends the scan, as std's
        // read_dir ends at its first error.
        let Some(Ok(entry)) = scan.entries.next() else {
          self.scan = None;
          return None;
        };
        let name = entry.file_name().to_bytes();
        let Some(here) = std::str::from_utf8(name).ok().and_then(|n| n.parse::<u32>().ok()) else {
          continue;
        };
        if let Some(ns) = scan.has(name, self.want) {
          if let Some(ns) = ns {
            scan.found.push(ns);
          }
          return Some(here);
        }
      }
    }
  }

  impl Scan {
    /// Whether the process of /proc/`name` has the pid `want` in a
    /// namespace below this one; then its namespace link, where it can be
    /// read.
    fn has(&mut self, name: &[u8], want: u64) -> Option<Option<Vec<u8>>> {
      let mut path = [0u8; 32];
      let mut link = [0u8; 64];
      // Most processes share this one's namespace: one read of the
      // namespace link each (no status read) rules them out. The link of
      // another user's process is not this user's to read (EACCES): its
      // status, which anyone may read, says it instead; a process gone
      // meanwhile is skipped.
      let ns = match readlinkat_raw(&self.proc, at(&mut path, name, b"/ns/pid")?, &mut link) {
        Ok(n) if n < link.len() => {
          let ns = &link[..n];
          if ns == self.mine.as_slice() || self.found.iter().any(|f| f == ns) {
            return None;
          }
          Some(ns)
        }
        Err(Errno::NOENT | Errno::SRCH) => return None,
        Ok(_) | Err(_) => None,
      };
      let status = openat(
        &self.proc,
        at(&mut path, name, b"/status")?,
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
      )
      .ok()?;
      read_whole(std::fs::File::from(status), &mut self.status)?;
      let from = memchr::memmem::find(&self.status, b"\nNSpid:")? + 7;
      let line = self.status[from..].split(|b| *b == b'\n').next()?;
      let (count, last) = line
        .split(|b| b.is_ascii_whitespace())
        .filter_map(|f| std::str::from_utf8(f).ok()?.parse::<u64>().ok())
        .fold((0, None), |(count, _), id| (count + 1, Some(id)));
      (count >= 2 && last == Some(want)).then(|| ns.map(<[u8]>::to_vec))
    }
  }

  /// A /proc file into `buf`, as `read_proc` reads one: a first read that
  /// ends the line with room to spare is the whole file.
  fn read_whole(mut file: std::fs::File, buf: &mut Vec<u8>) -> Option<()> {
    buf.clear();
    buf.resize(4096, 0);
    let n = file.read(buf).ok()?;
    buf.truncate(n);
    if n == 4096 || buf.last() != Some(&b'\n') {
      file.read_to_end(buf).ok()?;
    }
    Some(())
  }

  /// The path of /proc/`name``leaf` relative to /proc.
  fn at<'p>(path: &'p mut [u8; 32], name: &[u8], leaf: &[u8]) -> Option<&'p [u8]> {
    let out = path.get_mut(..name.len() + leaf.len())?;
    let (head, tail) = out.split_at_mut(name.len());
    head.copy_from_slice(name);
    tail.copy_from_slice(leaf);
    Some(out)
  }
}

/// Without /proc, no process is found in a namespace below.
#[cfg(not(target_os = "linux"))]
pub struct Below;

#[cfg(not(target_os = "linux"))]
impl Below {
  fn new(_: Option<u64>) -> Below {
    Below
  }
}

#[cfg(not(target_os = "linux"))]
impl Iterator for Below {
  type Item = u32;
  fn next(&mut self) -> Option<u32> {
    None
  }
}

/// The process of a namespace below this one that a record `{pid, start,
/// boot}` names: its pid here, where one has that pid in its own namespace
/// and, under this boot, the record's start time as its own time namespace
/// reads it, or a start time that cannot be compared (`seen`). The boot is
/// asked first: a record of another boot (a reboot's leftover) costs no
/// scan of /proc.
pub fn owner_elsewhere(pid: f64, start: &str, boot: &str) -> Option<u32> {
  if boot_id().as_deref() != Some(boot) {
    return None;
  }
  confirmed(inner_pids(pid), start)
}

/// `owner_elsewhere` among `candidates` (`inner_pids`): the boot is read
/// only where there is one.
pub fn elsewhere(candidates: impl IntoIterator<Item = u32>, start: &str, boot: &str) -> Option<u32> {
  let mut candidates = candidates.into_iter().peekable();
  if candidates.peek().is_none() || boot_id().as_deref() != Some(boot) {
    return None;
  }
  confirmed(candidates, start)
}

mod timens;
use timens::{seen, Seen};

/// Whether process `pid` of this PID namespace runs in another time
/// namespace than this process: then its start time reads differently
/// here and there (#55). Only such a process is compared in its own
/// clock (`same_in_its_clock`), so nothing changes for any other.
pub fn in_other_time_ns(pid: f64) -> bool {
  let link = |p: &str| std::fs::read_link(format!("/proc/{p}/ns/time"));
  u32::try_from(pid as i64).is_ok_and(|p| f64::from(p) == pid && p > 0)
    && matches!((link(&pid.to_string()), link("self")), (Ok(theirs), Ok(mine)) if theirs != mine)
}

/// Whether process `pid`, which the caller found in another time namespace
/// (`in_other_time_ns`), is the record's owner: under this boot, the
/// record's start time as its own namespace reads it. A connector in a time
/// namespace of its own and this PID namespace records a start this
/// process reads otherwise (#55).
pub fn same_in_its_clock(pid: f64, start: &str, boot: &str) -> bool {
  boot_id().as_deref() == Some(boot) && seen(pid as u32, start, &mut None) == Seen::Same
}

/// The first candidate whose start is `start`, where the scan stops, else
/// the first whose start cannot be compared with it.
fn confirmed(candidates: impl Iterator<Item = u32>, start: &str) -> Option<u32> {
  let mut clock = None;
  let mut unsure = None;
  for here in candidates {
    match seen(here, start, &mut clock) {
      Seen::Same => return Some(here),
      Seen::Unsure => {
        unsure.get_or_insert(here);
      }
      Seen::Other => {}
    }
  }
  unsure
}

/// Whether this process sees every process of the machine: it is in the
/// first PID namespace (whose inode number the kernel fixes) and can read
/// other users' /proc entries (no `hidepid`, or root). Elsewhere an owner
/// that looks gone may be alive where this process cannot look.
pub fn sees_every_process() -> bool {
  const INIT_PID_NS: &str = "pid:[4026531836]";
  let first = std::fs::read_link("/proc/self/ns/pid").is_ok_and(|l| l.as_os_str() == INIT_PID_NS);
  first && std::fs::read("/proc/1/status").is_ok()
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn no_process_here_is_found_in_a_namespace_below() {
    // This process is in no namespace below this one.
    let me = std::process::id();
    assert!(!inner_pids(f64::from(me)).any(|p| p == me));
    assert!(inner_pids(0.0).next().is_none() && inner_pids(1.5).next().is_none() && inner_pids(-1.0).next().is_none());
    let start = process_start(&me.to_string()).expect("start");
    let boot = boot_id().expect("boot");
    assert_eq!(elsewhere([], &start, &boot), None);
    // A candidate is confirmed by its start time under this boot, never by its pid alone.
    assert_eq!(elsewhere([me], &start, &boot), Some(me));
    assert_eq!(elsewhere([me], "1", &boot), None);
    assert_eq!(elsewhere([me], &start, "00000000-0000-0000-0000-000000000000"), None);
    // In this process's own time namespace, a start time is compared as read.
    let next = (start.parse::<u64>().expect("ticks") + 1).to_string();
    assert_eq!(elsewhere([me], &next, &boot), None);
  }

  #[test]
  fn start_syntax() {
    assert!(valid_start("1"));
    assert!(valid_start("18446744073709551615"));
    assert!(!valid_start("18446744073709551616"));
    assert!(!valid_start("0"));
    assert!(!valid_start("01"));
    assert!(!valid_start(" 1"));
    assert!(!valid_start("123456789012345678901"));
  }

  #[test]
  fn uuid_syntax() {
    let g = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";
    assert!(valid_boot(g) && valid_generation(g));
    assert!(!valid_boot(&g.to_uppercase()));
    assert!(!valid_boot("0b9c7a524e1f4d2a9c3b6f1e2d3c4b5a"));
    assert!(!valid_boot(&format!("{{{g}}}")));
    assert!(valid_boot("0b9c7a52-4e1f-1d2a-0c3b-6f1e2d3c4b5a"));
    assert!(!valid_generation("0b9c7a52-4e1f-1d2a-9c3b-6f1e2d3c4b5a"));
    assert!(!valid_generation("0b9c7a52-4e1f-4d2a-cc3b-6f1e2d3c4b5a"));
  }

  #[test]
  fn own_process() {
    let me = std::process::id().to_string();
    assert!(process_start(&me).is_some());
    assert!(boot_id().is_some());
    assert!(pid_alive(f64::from(std::process::id())));
    assert!(!pid_alive(1.5));
    assert!(!pid_alive(f64::from(i32::MAX) + 1.0));
    assert!(process_start("0").is_none());
  }
}
