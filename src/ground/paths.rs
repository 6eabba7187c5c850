//! Paths and names as the reference builds them: Node's `path.posix.join`
//! and `basename` (the returned strings are part of the contract, so their
//! normalization is Node's to the character), and the two name rules
//! (`BINDING_NAME`, `TURN_ID`) that decide what a refusal may say.
//!
//! The algorithms look only at `/` and `.`, so they run on UTF-8 bytes for
//! the file system and on UTF-16 code units where a returned string must
//! keep a lone surrogate that UTF-8 cannot carry.

/// A code unit of a path string: a UTF-8 byte or a UTF-16 unit.
pub trait Unit: Copy + PartialEq {
  const SLASH: Self;
  const DOT: Self;
}

impl Unit for u8 {
  const SLASH: u8 = b'/';
  const DOT: u8 = b'.';
}

impl Unit for u16 {
  const SLASH: u16 = b'/' as u16;
  const DOT: u16 = b'.' as u16;
}

/// Whether `path` is already what `normalize` makes of it and stays so with
/// a plain segment appended: not empty, no empty, `.` or `..` segment, and
/// no trailing slash. Joining names to such a path is concatenation.
pub fn is_normal<T: Unit>(path: &[T]) -> bool {
  if path.is_empty() || path.last() == Some(&T::SLASH) {
    return false;
  }
  let start = usize::from(path[0] == T::SLASH);
  path[start..]
    .split(|&c| c == T::SLASH)
    .all(|seg| !seg.is_empty() && seg != [T::DOT] && seg != [T::DOT, T::DOT])
}

/// `path.posix.join(...parts)` for string parts.
pub fn join<T: Unit>(parts: &[&[T]]) -> Vec<T> {
  let mut joined: Vec<T> = Vec::new();
  for part in parts.iter().filter(|p| !p.is_empty()) {
    if !joined.is_empty() {
      joined.push(T::SLASH);
    }
    joined.extend_from_slice(part);
  }
  if joined.is_empty() {
    return vec![T::DOT];
  }
  normalize(&joined)
}

/// `path.posix.normalize` of a non-empty path.
fn normalize<T: Unit>(path: &[T]) -> Vec<T> {
  let absolute = path.first() == Some(&T::SLASH);
  let trailing = path.last() == Some(&T::SLASH);
  let mut out = normalize_segments(path, !absolute);
  if out.is_empty() {
    if absolute {
      return vec![T::SLASH];
    }
    return if trailing { vec![T::DOT, T::SLASH] } else { vec![T::DOT] };
  }
  if trailing {
    out.push(T::SLASH);
  }
  if absolute {
    out.insert(0, T::SLASH);
  }
  out
}

/// Node's `normalizeString`: resolves `.` and `..` segments and collapses
/// repeated slashes, keeping leading `..` only for a relative path.
fn normalize_segments<T: Unit>(path: &[T], allow_above_root: bool) -> Vec<T> {
  let mut res: Vec<T> = Vec::new();
  let mut last_segment_length = 0usize;
  let mut last_slash: isize = -1;
  let mut dots: i32 = 0;
  let mut code = T::DOT;
  for i in 0..=path.len() {
    if i < path.len() {
      code = path[i];
    } else if code == T::SLASH {
      break;
    } else {
      code = T::SLASH;
    }
    let ii = i as isize;
    if code == T::SLASH {
      if last_slash == ii - 1 || dots == 1 {
        // an empty or `.` segment
      } else if dots == 2 {
        let res_ends_in_dotdot = res.len() >= 2 && last_segment_length == 2 && res[res.len() - 1] == T::DOT && res[res.len() - 2] == T::DOT;
        if !res_ends_in_dotdot {
          if res.len() > 2 {
            match res.iter().rposition(|&c| c == T::SLASH) {
              None => {
                res.clear();
                last_segment_length = 0;
              }
              Some(at) => {
                res.truncate(at);
                last_segment_length =
                  (res.len() as isize - 1 - res.iter().rposition(|&c| c == T::SLASH).map_or(-1, |p| p as isize)) as usize;
              }
            }
            last_slash = ii;
            dots = 0;
            continue;
          } else if !res.is_empty() {
            res.clear();
            last_segment_length = 0;
            last_slash = ii;
            dots = 0;
            continue;
          }
        }
        if allow_above_root {
          if !res.is_empty() {
            res.push(T::SLASH);
          }
          res.extend_from_slice(&[T::DOT, T::DOT]);
          last_segment_length = 2;
        }
      } else {
        let segment = &path[(last_slash + 1) as usize..i];
        if !res.is_empty() {
          res.push(T::SLASH);
        }
        res.extend_from_slice(segment);
        last_segment_length = (ii - last_slash - 1) as usize;
      }
      last_slash = ii;
      dots = 0;
    } else if code == T::DOT && dots != -1 {
      dots += 1;
    } else {
      dots = -1;
    }
  }
  res
}

/// `path.posix.basename(path)`: the last segment, trailing slashes ignored.
pub fn basename(path: &str) -> &str {
  let trimmed = path.trim_end_matches('/');
  match trimmed.rfind('/') {
    Some(at) => &trimmed[at + 1..],
    None => trimmed,
  }
}

/// `path.join(dir, ...names)` for the file system, from a UTF-8 dir.
pub fn under(dir: &str, names: &[&str]) -> String {
  // A normal dir and relative normal names join by concatenation (the
  // common case: no allocation but the result's).
  if is_normal(dir.as_bytes()) && names.iter().all(|n| !n.starts_with('/') && is_normal(n.as_bytes())) {
    let mut out = String::with_capacity(dir.len() + names.iter().map(|n| n.len() + 1).sum::<usize>());
    out.push_str(dir);
    for name in names {
      out.push('/');
      out.push_str(name);
    }
    return out;
  }
  let mut parts: Vec<&[u8]> = vec![dir.as_bytes()];
  parts.extend(names.iter().map(|n| n.as_bytes()));
  // join only moves whole segments of valid UTF-8 input around.
  String::from_utf8(join(&parts)).unwrap_or_default()
}

/// `BINDING_NAME`: /^[a-z0-9][a-z0-9_-]{0,62}$/.
pub fn is_binding_name(name: &str) -> bool {
  let b = name.as_bytes();
  (1..=63).contains(&b.len())
    && matches!(b[0], b'a'..=b'z' | b'0'..=b'9')
    && b[1..].iter().all(|c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

/// `TURN_ID`: /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.
pub fn is_turn_id(id: &str) -> bool {
  let b = id.as_bytes();
  (1..=128).contains(&b.len())
    && b[0].is_ascii_alphanumeric()
    && b[1..].iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// Where a refusal says a binding's journal is: its place under the data
/// root when the directory carries a valid binding name, never the host
/// path (#1873). `dir` is `String(dir)`.
pub fn journal_label(dir: &str) -> String {
  let name = basename(dir);
  if is_binding_name(name) {
    format!("discord/{name} under the data root")
  } else {
    "the binding's journal directory".into()
  }
}

/// How a refusal names a turn: by its id when it passes `TURN_ID` (a listed
/// file's name may not), never by path (PR #1916, #1873).
pub fn turn_label(id: &str) -> String {
  if is_turn_id(id) {
    format!("turn record {id}")
  } else {
    "turn record".into()
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn j(parts: &[&str]) -> String {
    let parts: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
    String::from_utf8(join(&parts)).expect("utf8")
  }

  #[test]
  fn under_is_join_for_every_shape() {
    let dirs = [
      "/a/b",
      "a",
      "/",
      "",
      ".",
      "..",
      "a/../b",
      "a//b",
      "/a/",
      "x/.",
      "./x",
      "/tmp/discord/alpha",
    ];
    let names: [&[&str]; 7] = [
      &["turns", "x.json"],
      &["STOP"],
      &["a/b"],
      &["/abs"],
      &[".."],
      &["x", ""],
      &["run.lock", "owner.json"],
    ];
    for dir in dirs {
      for n in names {
        let mut parts = vec![dir];
        parts.extend_from_slice(n);
        assert_eq!(under(dir, n), j(&parts), "{dir:?} {n:?}");
      }
    }
  }

  #[test]
  fn join_normalizes_as_node_does() {
    assert_eq!(j(&["/a/b", "STOP"]), "/a/b/STOP");
    assert_eq!(j(&["/a/b/", "STOP"]), "/a/b/STOP");
    assert_eq!(j(&["", "STOP"]), "STOP");
    assert_eq!(j(&["", ""]), ".");
    assert_eq!(j(&["a//b/./c/..", "x"]), "a/b/x");
    assert_eq!(j(&["../../a", "turns"]), "../../a/turns");
    assert_eq!(j(&["/../a", "turns"]), "/a/turns");
    assert_eq!(j(&["a", "..", ".."]), "..");
    assert_eq!(j(&["a/", "turns", "x/"]), "a/turns/x/");
    assert_eq!(j(&["/", ""]), "/");
    assert_eq!(j(&["./", ""]), "./");
    assert_eq!(j(&["..a/..", "b"]), "b");
    assert_eq!(j(&["ab/../../c/d/..", "e"]), "../c/e");
  }

  #[test]
  fn normal_paths() {
    for p in ["/a/b", "a", "/a/.b", "a/..b", "/x/\u{e9}"] {
      assert!(is_normal(p.as_bytes()), "{p}");
      assert_eq!(j(&[p, "STOP"]), format!("{p}/STOP"));
    }
    for p in ["", "/", "a/", "a//b", "./a", "a/.", "a/../b", "..", "/..", "//a"] {
      assert!(!is_normal(p.as_bytes()), "{p}");
    }
  }

  #[test]
  fn basename_and_labels() {
    assert_eq!(basename("/data/discord/alpha/"), "alpha");
    assert_eq!(basename("alpha"), "alpha");
    assert_eq!(basename("/"), "");
    assert_eq!(journal_label("/data/discord/alpha"), "discord/alpha under the data root");
    assert_eq!(journal_label("/data/discord/Not Valid"), "the binding's journal directory");
    assert_eq!(journal_label(""), "the binding's journal directory");
  }

  #[test]
  fn name_rules() {
    assert!(is_turn_id("t-1.a_b"));
    assert!(is_turn_id(&"a".repeat(128)));
    assert!(!is_turn_id(&"a".repeat(129)));
    assert!(!is_turn_id("../x"));
    assert!(!is_turn_id(".a"));
    assert!(is_binding_name("a"));
    assert!(!is_binding_name("A"));
    assert!(!is_binding_name(&"a".repeat(64)));
    assert_eq!(turn_label("x/y"), "turn record");
  }
}
