//! The cgroup freezers, v1 and v2, as this process's mounts show them: a
//! holder frozen (what `docker pause` does) does not move, and is named
//! frozen with the command that thaws it (#64). v1: the `freezer`
//! controller's `freezer.state` (FROZEN, or FREEZING on the way); v2:
//! `cgroup.events`'s `frozen 1`, thawed by the `cgroup.freeze` of the
//! cgroup that asked it (the process's own or an ancestor's).

use std::sync::OnceLock;

/// Where the v2 hierarchy and the v1 freezer are mounted, with the
/// cgroup each mount's root is (`/` unless a namespace's).
struct Mounts {
  v2: Option<(String, String)>,
  v1: Option<(String, String)>,
}

fn mounts() -> &'static Mounts {
  static M: OnceLock<Mounts> = OnceLock::new();
  M.get_or_init(|| {
    let mut m = Mounts { v2: None, v1: None };
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
      return m;
    };
    for line in info.lines() {
      // id parent dev root mountpoint options [optional…] - fstype source super
      let Some((left, right)) = line.split_once(" - ") else { continue };
      let left: Vec<&str> = left.split(' ').collect();
      let right: Vec<&str> = right.split(' ').collect();
      let (Some(root), Some(at), Some(kind)) = (left.get(3), left.get(4), right.first()) else {
        continue;
      };
      let pair = Some((unescape(at), unescape(root)));
      if *kind == "cgroup2" && m.v2.is_none() {
        m.v2 = pair;
      } else if *kind == "cgroup" && m.v1.is_none() && right.get(2).is_some_and(|o| o.split(',').any(|o| o == "freezer")) {
        m.v1 = pair;
      }
    }
    m
  })
}

/// mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
  let b = s.as_bytes();
  let mut out = Vec::with_capacity(b.len());
  let mut i = 0;
  while i < b.len() {
    if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
      out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
      i += 4;
    } else {
      out.push(b[i]);
      i += 1;
    }
  }
  String::from_utf8_lossy(&out).into_owned()
}

/// The directory of the cgroup `path` under the mount `(at, root)`, where
/// it is inside the mount (no `..`).
fn dir(mount: &(String, String), path: &str) -> Option<String> {
  if !path.starts_with('/') || path.split('/').any(|p| p == "..") {
    return None;
  }
  let (at, root) = mount;
  let rel = if root == "/" {
    path
  } else {
    path.strip_prefix(root.as_str()).filter(|r| r.is_empty() || r.starts_with('/'))?
  };
  Some(format!("{at}{rel}").trim_end_matches('/').to_string())
}

/// A shell word for a path (quoted where it needs to be).
fn word(p: &str) -> String {
  if p.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-:@".contains(&b)) {
    p.to_string()
  } else {
    format!("'{}'", p.replace('\'', "'\\''"))
  }
}

/// The command that thaws the process `pid`'s cgroup where it is frozen,
/// else `None`.
pub fn frozen(pid: u32) -> Option<String> {
  let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
  let m = mounts();
  for line in cgroups.lines() {
    let mut parts = line.splitn(3, ':');
    let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
      continue;
    };
    if controllers.is_empty() {
      let Some(dir) = m.v2.as_ref().and_then(|v2| dir(v2, path)) else {
        continue;
      };
      let events = std::fs::read_to_string(format!("{dir}/cgroup.events")).unwrap_or_default();
      if !events.lines().any(|l| l == "frozen 1") {
        continue;
      }
      // The freeze may be an ancestor's: thaw the nearest that asks it.
      let mut at = dir.clone();
      let top = m.v2.as_ref().map(|(a, _)| a.clone()).unwrap_or_default();
      loop {
        if std::fs::read_to_string(format!("{at}/cgroup.freeze")).is_ok_and(|f| f.trim() == "1") {
          return Some(format!("echo 0 > {}", word(&format!("{at}/cgroup.freeze"))));
        }
        match at.rfind('/') {
          Some(cut) if at.len() > top.len() => at.truncate(cut),
          _ => return Some(format!("echo 0 > {}", word(&format!("{dir}/cgroup.freeze")))),
        }
      }
    }
    if controllers.split(',').any(|c| c == "freezer") {
      let Some(dir) = m.v1.as_ref().and_then(|v1| dir(v1, path)) else {
        continue;
      };
      let state = std::fs::read_to_string(format!("{dir}/freezer.state")).unwrap_or_default();
      if matches!(state.trim(), "FROZEN" | "FREEZING") {
        return Some(format!("echo THAWED > {}", word(&format!("{dir}/freezer.state"))));
      }
    }
  }
  None
}
