//! The read cache's memory budget (#32): what the readers keep between
//! calls (`incremental`) stays within it. A host sets it in MiB with
//! `DISCORD_JOURNAL_CACHE_MB` (0 keeps nothing); by default it is 128 MiB,
//! or an eighth of the memory this process may use (its cgroup's limit,
//! else the machine's), whichever is smaller: under a container's limit
//! set for journal.mjs, which keeps nothing, the cache must leave room for
//! the reads themselves (docs/performance.md).

use std::sync::OnceLock;

use crate::ground::error::{JournalError, Result};

pub const VAR: &str = "DISCORD_JOURNAL_CACHE_MB";
const MIB: usize = 1 << 20;
const DEFAULT: usize = 128 * MIB;
/// The largest setting taken: 1 TiB.
const MAX_MB: usize = 1 << 20;

/// The budget in bytes; 0 when the setting is refused (`setting` says why).
pub fn get() -> usize {
  setting().unwrap_or(0)
}

/// The budget in bytes, or the refusal of a setting that is not a whole
/// number of MiB. Read once: the environment is the process's at its
/// first read.
pub fn setting() -> Result<usize> {
  static SET: OnceLock<std::result::Result<usize, String>> = OnceLock::new();
  SET
    .get_or_init(|| match std::env::var_os(VAR) {
      None => Ok(default()),
      Some(v) => parse(&v.to_string_lossy()),
    })
    .clone()
    .map_err(JournalError::failed)
}

fn parse(v: &str) -> std::result::Result<usize, String> {
  let n = match v.bytes().all(|b| b.is_ascii_digit()) && !v.is_empty() {
    true => v.parse::<usize>().ok().filter(|&n| n <= MAX_MB),
    false => None,
  };
  n.map(|n| n * MIB).ok_or_else(|| {
    format!("{VAR} must be a whole number of MiB, 0 to keep nothing between reads (at most {MAX_MB}), not {v:?}: unset it for the default")
  })
}

fn default() -> usize {
  match limit() {
    Some(bytes) => DEFAULT.min(bytes / 8),
    None => DEFAULT,
  }
}

/// The memory this process may use: the smallest limit of its cgroup and
/// the cgroup's ancestors (v2, or v1's memory controller), else the
/// machine's memory; `None` when neither can be read.
fn limit() -> Option<usize> {
  let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
  let mut least: Option<usize> = None;
  for line in cgroups.lines() {
    let mut fields = line.splitn(3, ':');
    let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
      continue;
    };
    let (root, file) = match controllers {
      "" => ("/sys/fs/cgroup", "memory.max"),
      c if c.split(',').any(|c| c == "memory") => ("/sys/fs/cgroup/memory", "memory.limit_in_bytes"),
      _ => continue,
    };
    let mut dir = std::path::PathBuf::from(root);
    let mut dirs = vec![dir.clone()];
    for part in path.split('/').filter(|p| !p.is_empty() && *p != "..") {
      dir.push(part);
      dirs.push(dir.clone());
    }
    for d in dirs {
      let value = std::fs::read_to_string(d.join(file)).unwrap_or_default();
      // "max" (v2) and v1's near-2^63 both say no limit.
      if let Some(n) = value.trim().parse::<u64>().ok().filter(|&n| n < 1 << 60) {
        least = Some(least.map_or(n as usize, |l| l.min(n as usize)));
      }
    }
  }
  least.or_else(machine)
}

fn machine() -> Option<usize> {
  let info = std::fs::read_to_string("/proc/meminfo").ok()?;
  let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
  let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
  Some(kib * 1024)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn a_setting_is_a_whole_number_of_mib() {
    assert_eq!(parse("0"), Ok(0));
    assert_eq!(parse("64"), Ok(64 * MIB));
    assert_eq!(parse("007"), Ok(7 * MIB));
    for bad in ["", " 1", "1.5", "-1", "1e3", "64MB", "0x10", "99999999999999999999999"] {
      let e = parse(bad).expect_err(bad);
      assert!(e.starts_with("DISCORD_JOURNAL_CACHE_MB must be a whole number of MiB"), "{e}");
      assert!(e.ends_with(&format!("not {bad:?}: unset it for the default")), "{e}");
    }
  }

  #[test]
  fn the_default_is_at_most_128_mib_and_an_eighth_of_the_limit() {
    let d = default();
    assert!(d <= DEFAULT);
    if let Some(limit) = limit() {
      assert!(d <= limit / 8);
    }
  }
}
