//! A process's start time as another time namespace reads it (#44): the
//! kernel shows /proc/<pid>/stat's start time shifted by the boottime
//! offset of the reader's time namespace, so a connector in a container
//! with a time namespace of its own records another number than the host
//! reads for it. Compared here, from both namespaces' offsets.

use super::{process_start, valid_start};

/// What a candidate's start time says of a record's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Seen {
  Same,
  Other,
  /// Its time namespace's offset, or this one's, cannot be read: it may be
  /// the owner.
  Unsure,
}

/// A candidate's start time compared with a record's `start`. The start
/// time /proc/<pid>/stat shows is the process's start in ticks since boot
/// shifted by the boottime offset of the reader's time namespace (#44): a
/// connector in a time namespace records its own reading, and this
/// process reads another number for it. A reading here that is not the
/// record's is therefore compared as the candidate's own namespace reads
/// it (`reads_as`).
pub(super) fn seen(here: u32, start: &str, clock: &mut Option<Clock>) -> Seen {
  let pid = here.to_string();
  let Some(now) = process_start(&pid) else {
    return Seen::Other;
  };
  if now == start {
    return Seen::Same;
  }
  // A record's start of another spelling than the kernel's is no reading.
  let (Ok(now), true, Ok(there)) = (now.parse::<u64>(), valid_start(start), start.parse::<u64>()) else {
    return Seen::Other;
  };
  let Clock::Ns { link, offset, tick } = clock.get_or_insert_with(Clock::here) else {
    return Seen::Other;
  };
  match std::fs::read_link(format!("/proc/{pid}/ns/time")) {
    // This process's time namespace: read alike.
    Ok(theirs) if link.as_ref() == Some(&theirs) => return Seen::Other,
    Err(e) if gone(&e) => return Seen::Other,
    _ => {}
  }
  match (boottime_offset(&pid), *offset, *tick) {
    (Offset::Ns(theirs), Offset::Ns(mine), Some(tick)) if reads_as(now, there, theirs - mine, tick) => Seen::Same,
    (Offset::Ns(_), Offset::Ns(_), Some(_)) | (Offset::Gone, ..) => Seen::Other,
    _ => Seen::Unsure,
  }
}

/// This process's time namespace: its link, its boottime offset and a
/// clock tick in nanoseconds. `None`: a kernel without time namespaces,
/// where every process reads one clock.
pub(super) enum Clock {
  None,
  Ns {
    link: Option<std::path::PathBuf>,
    offset: Offset,
    tick: Option<u64>,
  },
}

impl Clock {
  fn here() -> Clock {
    match std::fs::read_link("/proc/self/ns/time") {
      Err(e) if e.kind() == std::io::ErrorKind::NotFound => Clock::None,
      link => Clock::Ns {
        link: link.ok(),
        offset: match boottime_offset("self") {
          Offset::Gone => Offset::Unreadable,
          o => o,
        },
        tick: tick_ns(),
      },
    }
  }
}

/// A process's boottime offset in nanoseconds, or why there is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Offset {
  Ns(i128),
  Gone,
  Unreadable,
}

/// An error of a /proc read whose process is gone.
fn gone(e: &std::io::Error) -> bool {
  e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(nix::errno::Errno::ESRCH as i32)
}

/// The boottime offset of the time namespace of process `pid` ("self" or a
/// number). /proc/<pid>/timens_offsets, which anyone may read, shows the
/// namespace its children get: its own, unless it left its namespace for
/// its children's and has not run exec since; where its `ns/time` and
/// `ns/time_for_children` can be read and differ, that is seen, and the
/// offset is unreadable.
fn boottime_offset(pid: &str) -> Offset {
  let link = |leaf: &str| std::fs::read_link(format!("/proc/{pid}/ns/{leaf}"));
  if let (Ok(active), Ok(children)) = (link("time"), link("time_for_children")) {
    if active != children {
      return Offset::Unreadable;
    }
  }
  match std::fs::read(format!("/proc/{pid}/timens_offsets")) {
    Ok(text) => boottime_ns(&text).map_or(Offset::Unreadable, Offset::Ns),
    Err(e) if gone(&e) => Offset::Gone,
    Err(_) => Offset::Unreadable,
  }
}

/// The boottime offset in a timens_offsets file (`boottime <s> <ns>`; the
/// clock's id, 7, before Linux 5.7 named it), in nanoseconds.
pub fn boottime_ns(text: &[u8]) -> Option<i128> {
  std::str::from_utf8(text).ok()?.lines().find_map(|line| {
    let mut f = line.split_ascii_whitespace();
    let (Some("boottime" | "7"), Some(s), Some(ns), None) = (f.next(), f.next(), f.next(), f.next()) else {
      return None;
    };
    let (s, ns) = (s.parse::<i64>().ok()?, ns.parse::<i64>().ok()?);
    (0..1_000_000_000)
      .contains(&ns)
      .then(|| i128::from(s) * 1_000_000_000 + i128::from(ns))
  })
}

/// A clock tick (1 / sysconf(_SC_CLK_TCK) s, the unit of the start time) in
/// nanoseconds, where it is a whole number of them (on Linux, 100 ticks a
/// second).
fn tick_ns() -> Option<u64> {
  let hz = u64::try_from(nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok()??).ok()?;
  (hz > 0 && 1_000_000_000 % hz == 0).then(|| 1_000_000_000 / hz)
}

/// Whether a process whose start time reads `here` ticks in one time
/// namespace can read `there` in another, whose boottime offset is `ahead`
/// nanoseconds more. The kernel shows (start + the reader's offset) / tick,
/// the sum in wrapping 64-bit nanoseconds (a negative offset can pass a
/// start from before the namespace). `here` places that sum within one
/// tick, so `there` is one number where `ahead` is whole ticks, and one of
/// two neighbours where it is not.
pub fn reads_as(here: u64, there: u64, ahead: i128, tick: u64) -> bool {
  const WRAP: i128 = 1 << 64;
  let tick = i128::from(tick);
  // The sums here that show `here`.
  let lo = i128::from(here) * tick;
  let hi = (lo + tick - 1).min(WRAP - 1);
  if tick == 0 || lo > hi {
    return false;
  }
  // The same instants there, wrapped as the kernel wraps them.
  let (a, b) = ((lo + ahead).rem_euclid(WRAP), (hi + ahead).rem_euclid(WRAP));
  let there = i128::from(there);
  if a <= b {
    (a / tick..=b / tick).contains(&there)
  } else {
    (a / tick..=(WRAP - 1) / tick).contains(&there) || (0..=b / tick).contains(&there)
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  /// What the kernel shows, measured (#44): a process read from the first
  /// time namespace and from one whose boottime is offset, with 100 ticks a
  /// second.
  #[test]
  fn a_start_time_read_in_another_time_namespace() {
    const TICK: u64 = 10_000_000;
    const S: i128 = 1_000_000_000;
    // Whole ticks: one number, both ways.
    assert!(reads_as(49409, 149409, 1000 * S, TICK));
    assert!(reads_as(149409, 49409, -1000 * S, TICK));
    assert!(!reads_as(49409, 149408, 1000 * S, TICK) && !reads_as(49409, 149410, 1000 * S, TICK));
    assert!(reads_as(58320, 48320, -100 * S, TICK));
    // The same namespace (no offset): only the same number.
    assert!(reads_as(7, 7, 0, TICK) && !reads_as(7, 8, 0, TICK) && !reads_as(8, 7, 0, TICK));
    // Not whole ticks: two neighbours (5.505 s; -5.005 s; 7 ms), the one shown among them.
    for (here, shown, ahead) in [
      (69094, 69645, 5_505_000_000),
      (69516, 69015, -5_005_000_000),
      (69725, 69726, 7_000_000),
    ] {
      let low = u64::try_from((i128::from(here) * i128::from(TICK) + ahead).div_euclid(i128::from(TICK))).expect("low");
      let seen: Vec<u64> = (low.saturating_sub(3)..low + 4)
        .filter(|t| reads_as(here, *t, ahead, TICK))
        .collect();
      assert_eq!(seen, vec![low, low + 1], "{here} {ahead}");
      assert!(seen.contains(&shown));
    }
    // A negative offset that passes the start wraps, as the kernel's sum does:
    // started 1 s after boot, read 5 s behind: (2^64 - 4e9 ns) / tick.
    let wrapped = ((1u128 << 64) - 4_000_000_000) / u128::from(TICK);
    let wrapped = u64::try_from(wrapped).expect("ticks");
    assert!(reads_as(100, wrapped, -5 * S, TICK));
    assert!(reads_as(wrapped, 100, 5 * S, TICK));
    assert!(!reads_as(100, 0, -5 * S, TICK));
    // At the ends of the range, no overflow.
    assert!(!reads_as(u64::MAX, 1, S, TICK));
    assert!(!reads_as(0, 5, 0, 0));
  }

  #[test]
  fn boottime_offsets() {
    let at = |s: &str| boottime_ns(s.as_bytes());
    assert_eq!(
      at("monotonic           0         0\nboottime         1000         0\n"),
      Some(1_000_000_000_000)
    );
    assert_eq!(
      at("monotonic           0         0\nboottime           -6 995000000\n"),
      Some(-5_005_000_000)
    );
    assert_eq!(at("1 0 0\n7 5 500\n"), Some(5_000_000_500));
    assert_eq!(at("monotonic 5 0\n"), None);
    assert_eq!(at("boottime 1 1000000000\n"), None);
    assert_eq!(at("boottime 1 -1\n"), None);
    assert_eq!(at("boottime 1\n"), None);
    assert_eq!(at("boottime 1 0 0\n"), None);
    assert_eq!(at(""), None);
    assert_eq!(
      at("boottime 9223372036854775807 999999999\n"),
      Some(9_223_372_036_854_775_807 * 1_000_000_000 + 999_999_999)
    );
  }

  #[test]
  fn this_process_reads_its_own_offset() {
    // A kernel with time namespaces shows it; the one that starts this test
    // is most often in the first (offset 0).
    if std::path::Path::new("/proc/self/timens_offsets").exists() {
      assert!(matches!(boottime_offset("self"), Offset::Ns(_)));
    }
    assert!(matches!(boottime_offset("0"), Offset::Gone));
    assert_eq!(tick_ns().map(|t| 1_000_000_000 % t), Some(0));
  }
}
