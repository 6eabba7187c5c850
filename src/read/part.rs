//! The text of one part of a reader's `JSON.parse` (#10), with its huge
//! strings left out. A string value of at least `HUGE` bytes that is plain
//! ASCII (no escape, so its bytes are its characters) is written as `""`
//! and kept as a range of the bytes it was read from. Once the part is
//! parsed, the boundary puts in its place a string that shares those bytes
//! instead of a copy of them (where the part's strings are less than half
//! of their file, a copy of their own: `held`). A file of one huge line is
//! then held once, not twice: the reference holds it as a buffer and the
//! string decoded from it, then as that string and the value parsed from
//! it.
//!
//! Exact by proof, never by trust: `Part::finish` finds where `JSON.parse`
//! puts each left-out string by a scan of the whole part's text, as a path
//! of indices and keys from the part's array. A string that a later member
//! of the same name replaces, in its object or in any object on its path,
//! is dropped, as JSON.parse drops it (the last of a name wins). Where the
//! scan cannot decide (a key with an escape after a key on the path, or a
//! key on the path with one) the part is written back whole.

use std::ops::Range;
use std::sync::Arc;

use crate::read::incremental::Piece;

/// Bytes that texts are read from, shared with the strings made of them.
pub type Shared = Arc<Vec<u8>>;

/// The shortest string left out: below it, a copy costs less than the
/// scan, the finalizer and the bytes (`held`) of a string of its own.
pub const HUGE: usize = 16 << 20;

/// V8's `String::kMaxLength` on 64-bit platforms: 2**29 - 24 code units
/// (Node's `buffer.constants.MAX_STRING_LENGTH`).
pub const MAX_STRING: usize = (1 << 29) - 24;

/// A left-out string: the offset of its `""` in the part's text, and its
/// characters.
struct Hole {
  at: usize,
  file: Shared,
  range: Range<usize>,
}

/// One step from the part's array to a left-out string.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
  Index(u32),
  Key(String),
}

/// A string to put where `path` leads in the parsed part: `file[range]`.
pub struct Huge {
  pub path: Vec<Step>,
  pub file: Shared,
  pub range: Range<usize>,
}

/// A part's text as it is written.
pub struct Part {
  buf: Vec<u8>,
  holes: Vec<Hole>,
  /// The shortest string left out (`usize::MAX`: none).
  min: usize,
  /// Room could not be had: the part is refused.
  oom: bool,
}

/// A part's text, to parse, and the strings to put into the result.
pub struct Finished {
  pub text: Vec<u8>,
  pub huge: Vec<Huge>,
}

impl Part {
  /// A part of `size` bytes of text, written into `spare` (a buffer kept
  /// from the last part). Below `HUGE` its room is reserved exactly, at
  /// once; a larger part may leave strings out and grows as it is written,
  /// so no room is reserved for what is left out. `None`: no room.
  pub fn new(spare: Vec<u8>, size: usize) -> Option<Part> {
    Part::leaving_out(spare, size, HUGE)
  }

  fn leaving_out(mut buf: Vec<u8>, size: usize, min: usize) -> Option<Part> {
    buf.clear();
    let min = if size >= min { min } else { usize::MAX };
    if min == usize::MAX {
      buf.try_reserve_exact(size).ok()?;
    }
    Some(Part {
      buf,
      holes: Vec::new(),
      min,
      oom: false,
    })
  }

  pub fn push(&mut self, b: u8) {
    self.extend(&[b]);
  }

  pub fn extend(&mut self, bytes: &[u8]) {
    if self.buf.try_reserve(bytes.len()).is_err() {
      self.oom = true;
      return;
    }
    self.buf.extend_from_slice(bytes);
  }

  /// Appends a piece's text, whose bytes are in `file` when it is a span.
  pub fn piece(&mut self, p: &Piece, file: &Shared) {
    match p {
      Piece::Span(r) => self.shared(file, r.clone()),
      Piece::Owned(s) => self.extend(s.as_bytes()),
    }
  }

  /// Appends a whole text of its own (a turn record's), shared if it holds
  /// a string that is left out.
  pub fn owned(&mut self, text: Vec<u8>) {
    if text.len() < self.min {
      return self.extend(&text);
    }
    let len = text.len();
    self.shared(&Arc::new(text), 0..len);
  }

  /// Appends `file[range]`, leaving out its huge strings (see `huge`).
  pub fn shared(&mut self, file: &Shared, range: Range<usize>) {
    let text = file.get(range.clone()).unwrap_or_default();
    if text.len() < self.min {
      return self.extend(text);
    }
    let mut copied = 0;
    for (open, close) in huge(text, self.min) {
      self.extend(&text[copied..open]);
      self.holes.push(Hole {
        at: self.buf.len(),
        file: Arc::clone(file),
        range: range.start + open + 1..range.start + close,
      });
      self.extend(b"\"\"");
      copied = close + 1;
    }
    self.extend(&text[copied..]);
  }

  /// The text to parse and where its left-out strings go; `None` when room
  /// could not be had.
  pub fn finish(self) -> Option<Finished> {
    if self.oom {
      return None;
    }
    if self.holes.is_empty() {
      return Some(Finished {
        text: self.buf,
        huge: Vec::new(),
      });
    }
    match locate(&self.buf, &self.holes) {
      Some(places) => {
        let placed: Vec<(Hole, Vec<Step>)> = self.holes.into_iter().zip(places).filter_map(|(h, p)| Some((h, p?))).collect();
        // The bytes of each file that the placed strings are (each range
        // once: an outbox's at and intentAt are the same characters).
        let mut ranges: Vec<(usize, usize, usize)> = placed
          .iter()
          .map(|(h, _)| (Arc::as_ptr(&h.file) as usize, h.range.start, h.range.end))
          .collect();
        ranges.sort_unstable();
        ranges.dedup();
        let of_file = |f: &Shared| -> usize {
          let ptr = Arc::as_ptr(f) as usize;
          ranges.iter().filter(|r| r.0 == ptr).map(|r| r.2 - r.1).sum()
        };
        let mut copies = Vec::new();
        let huge = placed
          .into_iter()
          .map(|(h, path)| {
            let share = of_file(&h.file).saturating_mul(2) >= h.file.len();
            let (file, range) = held(h.file, h.range, share, &mut copies);
            Huge { path, file, range }
          })
          .collect();
        Some(Finished { text: self.buf, huge })
      }
      None => Some(Finished {
        text: filled(&self.buf, &self.holes)?,
        huge: Vec::new(),
      }),
    }
  }
}

/// The strings of `text` that a part leaves out (the offsets of their
/// quotes): values of at least `min` bytes of plain ASCII. The text starts
/// outside any string and never ends between a key and its colon (it is a
/// JSON text, a value, or members), so a string is a key exactly when the
/// next byte but whitespace is a colon.
fn huge(text: &[u8], min: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
  let mut i = 0;
  std::iter::from_fn(move || {
    while let Some(q) = memchr::memchr(b'"', text.get(i..)?) {
      let open = i + q;
      let (close, escaped) = string_end(text, open + 1)?;
      i = close + 1;
      let chars = &text[open + 1..close];
      if !escaped && chars.len() >= min && chars.len() <= MAX_STRING && chars.is_ascii() && !colon_next(&text[i..]) {
        return Some((open, close));
      }
    }
    None
  })
}

/// Whether a part of `text` alone would leave a string out.
pub fn shares(text: &[u8]) -> bool {
  text.len() >= HUGE && huge(text, HUGE).next().is_some()
}

/// The bytes a left-out string holds: its file's, when the strings placed
/// from that file in this part (`share`) are at least half of its bytes,
/// else a copy of its own. A string that a caller keeps then keeps at most
/// twice the part's strings alive, never the whole file (a 16 MiB value
/// among 150 MB of small lines held all 166 MB, read after read), while a
/// line of several huge strings still shares its bytes. Done once the
/// part's strings are placed, so a string that a later member replaces (an
/// outbox's `intentAt` written after each line) is never copied; the same
/// characters placed twice (its `at` and `intentAt`) share one copy. Where
/// no room can be had for a copy, the file is shared.
fn held(file: Shared, range: Range<usize>, share: bool, copies: &mut Vec<(Shared, Range<usize>, Shared)>) -> (Shared, Range<usize>) {
  if share {
    return (file, range);
  }
  if let Some((_, _, copy)) = copies.iter().find(|(f, r, _)| Arc::ptr_eq(f, &file) && *r == range) {
    return (Arc::clone(copy), 0..range.len());
  }
  let mut bytes = Vec::new();
  match (file.get(range.clone()), bytes.try_reserve_exact(range.len())) {
    (Some(chars), Ok(())) => bytes.extend_from_slice(chars),
    _ => return (file, range),
  }
  let copy = Arc::new(bytes);
  copies.push((file, range.clone(), Arc::clone(&copy)));
  (copy, 0..range.len())
}

/// The end of the string whose characters start at `from`: the offset of
/// its closing quote, and whether it holds an escape.
fn string_end(text: &[u8], mut from: usize) -> Option<(usize, bool)> {
  let mut escaped = false;
  loop {
    let at = from + memchr::memchr2(b'"', b'\\', text.get(from..)?)?;
    if text[at] == b'"' {
      return Some((at, escaped));
    }
    escaped = true;
    from = at + 2;
  }
}

/// Whether the next byte of `rest` but JSON whitespace is a colon.
fn colon_next(rest: &[u8]) -> bool {
  rest.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')) == Some(&b':')
}

/// The text with each hole's characters written back between its quotes.
fn filled(text: &[u8], holes: &[Hole]) -> Option<Vec<u8>> {
  let size = text.len() + holes.iter().map(|h| h.range.len()).sum::<usize>();
  let mut out = Vec::new();
  out.try_reserve_exact(size).ok()?;
  let mut from = 0;
  for h in holes {
    out.extend_from_slice(&text[from..=h.at]);
    out.extend_from_slice(h.file.get(h.range.clone())?);
    from = h.at + 1;
  }
  out.extend_from_slice(&text[from..]);
  Some(out)
}

/// A container open in the scan.
struct Frame {
  obj: bool,
  /// An array's index of the element being read.
  index: u32,
  /// An object's key being read (the characters' range) and whether it has
  /// an escape; before a colon, the next string is a key.
  key: Option<(Range<usize>, bool)>,
  want_key: bool,
  /// Holes below this object's current key, by index, with that key.
  below: Vec<(usize, Range<usize>)>,
}

/// For each hole, where JSON.parse puts its string (`None`: a later member
/// of a name on its path replaces it); `None` where that cannot be decided.
/// `text` is a valid JSON array (each element parsed before, each hole a
/// string value), scanned once: strings skipped by their quotes, the rest
/// byte by byte.
fn locate(text: &[u8], holes: &[Hole]) -> Option<Vec<Option<Vec<Step>>>> {
  let mut places: Vec<Option<Vec<Step>>> = Vec::with_capacity(holes.len());
  let mut stack: Vec<Frame> = Vec::new();
  let mut i = 0;
  while i < text.len() {
    match text[i] {
      open @ (b'[' | b'{') => stack.push(Frame {
        obj: open == b'{',
        index: 0,
        key: None,
        want_key: open == b'{',
        below: Vec::new(),
      }),
      b']' | b'}' => {
        stack.pop()?;
      }
      b',' => {
        let f = stack.last_mut()?;
        if f.obj {
          f.want_key = true;
        } else {
          f.index = f.index.checked_add(1)?;
        }
      }
      b':' => stack.last_mut()?.want_key = false,
      b'"' => {
        let (close, escaped) = string_end(text, i + 1)?;
        let hole = holes.get(places.len()).is_some_and(|h| h.at == i);
        let f = stack.last_mut()?;
        if f.want_key {
          let key = i + 1..close;
          if hole || (escaped && !f.below.is_empty()) {
            return None;
          }
          for (h, k) in &f.below {
            if text[k.clone()] == text[key.clone()] {
              places[*h] = None;
            }
          }
          f.key = Some((key, escaped));
        } else if hole {
          let h = places.len();
          let mut path = Vec::with_capacity(stack.len());
          for f in &mut stack {
            if f.obj {
              let (key, escaped) = f.key.clone()?;
              if escaped {
                return None;
              }
              path.push(Step::Key(String::from_utf8(text[key.clone()].to_vec()).ok()?));
              f.below.push((h, key));
            } else {
              path.push(Step::Index(f.index));
            }
          }
          places.push(Some(path));
        }
        i = close;
      }
      _ => {}
    }
    i += 1;
  }
  (stack.is_empty() && places.len() == holes.len()).then_some(places)
}

#[cfg(test)]
mod tests {
  use super::*;

  /// The part `[texts...]` with strings of at least `min` bytes left out:
  /// its text and each string's path and characters.
  fn part(texts: &[&str], min: usize) -> (String, Vec<(Vec<Step>, String)>) {
    let size = texts.iter().map(|t| t.len() + 1).sum::<usize>() + 1;
    let mut p = Part::leaving_out(Vec::new(), size, min).expect("room");
    p.push(b'[');
    for (k, t) in texts.iter().enumerate() {
      if k > 0 {
        p.push(b',');
      }
      let file: Shared = Arc::new(t.as_bytes().to_vec());
      p.shared(&file, 0..t.len());
    }
    p.push(b']');
    let done = p.finish().expect("room");
    let huge = done
      .huge
      .iter()
      .map(|h| (h.path.clone(), String::from_utf8(h.file[h.range.clone()].to_vec()).expect("ascii")))
      .collect();
    (String::from_utf8(done.text).expect("utf-8"), huge)
  }

  fn key(k: &str) -> Step {
    Step::Key(k.into())
  }

  #[test]
  fn plain_ascii_values_are_left_out_with_their_paths() {
    let (text, huge) = part(&[r#"{"a":1,"body":"xxxxxx"}"#, r#"[0,{"k":["yyyyyy"]}]"#, r#""zzzzzz""#], 4);
    assert_eq!(text, r#"[{"a":1,"body":""},[0,{"k":[""]}],""]"#);
    assert_eq!(
      huge,
      vec![
        (vec![Step::Index(0), key("body")], "xxxxxx".into()),
        (vec![Step::Index(1), Step::Index(1), key("k"), Step::Index(0)], "yyyyyy".into()),
        (vec![Step::Index(2)], "zzzzzz".into()),
      ]
    );
  }

  #[test]
  fn short_escaped_non_ascii_strings_and_keys_stay() {
    for t in [r#"{"a":"xyz"}"#, r#"{"a":"xx\"xxxx"}"#, "{\"a\":\"xxxxé\"}", r#"{"xxxxxxxx" : 1}"#] {
      assert_eq!(part(&[t], 4), (format!("[{t}]"), vec![]), "{t}");
    }
  }

  #[test]
  fn a_string_replaced_by_a_later_member_is_dropped() {
    // Its own key repeated, or a key on its path.
    let (text, huge) = part(&[r#"{"a":"xxxxxx","a":2}"#, r#"{"o":{"a":"xxxxxx"},"o":0}"#], 4);
    assert_eq!(text, r#"[{"a":"","a":2},{"o":{"a":""},"o":0}]"#);
    assert!(huge.is_empty());
    // An earlier member of the name is the one replaced; a nested one is
    // another object's.
    let (_, huge) = part(&[r#"{"a":1,"a":"xxxxxx","b":{"a":0}}"#], 4);
    assert_eq!(huge, vec![(vec![Step::Index(0), key("a")], "xxxxxx".into())]);
  }

  #[test]
  fn an_escaped_key_after_the_path_writes_the_part_back_whole() {
    // "\u0061" is "a": whether it replaces the string is not decided here.
    let t = r#"{"a":"xxxxxx","\u0061":1}"#;
    assert_eq!(part(&[t], 4), (format!("[{t}]"), vec![]));
    let t = r#"{"\u0062":{"c":"xxxxxx"}}"#;
    assert_eq!(part(&[t], 4), (format!("[{t}]"), vec![]));
    // Before the path's key, an escaped key changes nothing.
    let (_, huge) = part(&[r#"{"\u0061":1,"a":"xxxxxx"}"#], 4);
    assert_eq!(huge.len(), 1);
  }

  #[test]
  fn small_parts_leave_nothing_out_and_owned_texts_are_shared() {
    let mut p = Part::leaving_out(Vec::new(), 10, 64).expect("room");
    p.owned(br#"["xxxxxx"]"#.to_vec());
    assert!(p.finish().expect("room").huge.is_empty());
    let mut p = Part::leaving_out(Vec::new(), 10, 4).expect("room");
    p.owned(br#"["xxxxxx"]"#.to_vec());
    let done = p.finish().expect("room");
    assert_eq!(done.text, br#"[""]"#);
    assert_eq!(&done.huge[0].file[done.huge[0].range.clone()], b"xxxxxx");
  }

  #[test]
  fn a_part_shares_a_file_only_when_its_strings_are_half_of_it() {
    let shared = |text: &str| {
      let file: Shared = Arc::new(text.as_bytes().to_vec());
      let mut p = Part::leaving_out(Vec::new(), text.len(), 4).expect("room");
      p.shared(&file, 0..text.len());
      let done = p.finish().expect("room");
      done.huge.iter().map(|h| Arc::ptr_eq(&h.file, &file)).collect::<Vec<_>>()
    };
    // Two strings, each under half of the file, together over it.
    assert_eq!(shared(r#"{"a":"xxxxxxxxxxxxxx","b":"yyyyyyyyyyyyyy","n":12345}"#), [true, true]);
    assert_eq!(shared(r#"{"a":"xxxxxxxx","n":1234567890123456789}"#), [false]);
  }

  #[test]
  fn a_string_shares_its_file_only_when_it_is_half_of_it() {
    let file: Shared = Arc::new(br#"{"at":"xxxxxx","n":1,"pad":"-"}"#.to_vec());
    let at = 7..13;
    let mut copies = Vec::new();
    let (own, r) = held(Arc::clone(&file), at.clone(), false, &mut copies);
    assert!(!Arc::ptr_eq(&own, &file));
    assert_eq!((&own[..], r), (&b"xxxxxx"[..], 0..6));
    // The same characters again (an outbox's at and intentAt): one copy.
    let (again, _) = held(Arc::clone(&file), at, false, &mut copies);
    assert!(Arc::ptr_eq(&again, &own));
    let whole: Shared = Arc::new(br#""xxxxxx""#.to_vec());
    let (same, r) = held(Arc::clone(&whole), 1..7, true, &mut copies);
    assert!(Arc::ptr_eq(&same, &whole) && r == (1..7));
  }

  #[test]
  fn filled_writes_every_string_back() {
    let file: Shared = Arc::new(br#"{"a":"xxxxxx","b":"yyyyyy"}"#.to_vec());
    let mut p = Part::leaving_out(Vec::new(), 40, 4).expect("room");
    p.shared(&file, 0..file.len());
    assert_eq!(p.holes.len(), 2);
    assert_eq!(filled(&p.buf, &p.holes).expect("room"), file.to_vec());
  }

  fn next(seed: &mut u64, n: u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed % n
  }

  /// A random JSON text with short strings (some escaped, some not ASCII)
  /// and keys chosen to collide, some of them only once unescaped.
  fn random_text(seed: &mut u64, depth: u32, out: &mut String) {
    const STRINGS: [&str; 7] = ["", "ab", "xxxx", "yyyyy", r"zz\nzz", r"\u0078xxxx", "xxxé"];
    const KEYS: [&str; 6] = ["a", "b", "__proto__", r"\u0061", "7", "xxxxx"];
    let pick = |seed: &mut u64, of: &[&'static str]| of[next(seed, of.len() as u64) as usize];
    match next(seed, if depth == 0 { 3 } else { 6 }) {
      0 => out.push_str(pick(seed, &["1", "null", "-0.5e3", "true"])),
      1 | 2 => out.push_str(&format!("\"{}\"", pick(seed, &STRINGS))),
      3 => {
        out.push('[');
        for k in 0..next(seed, 4) {
          if k > 0 {
            out.push_str(" ,");
          }
          random_text(seed, depth - 1, out);
        }
        out.push(']');
      }
      _ => {
        out.push('{');
        for k in 0..next(seed, 5) {
          if k > 0 {
            out.push(',');
          }
          out.push_str(&format!("\"{}\" : ", pick(seed, &KEYS)));
          random_text(seed, depth - 1, out);
        }
        out.push('}');
      }
    }
  }

  #[test]
  fn the_parsed_part_with_its_strings_put_back_is_the_whole_texts_parse() {
    use serde_json::Value;
    // serde_json keeps the last member of a name, as JSON.parse does.
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    let (mut left_out, mut written_back) = (0, 0);
    for _ in 0..20_000 {
      let mut texts = vec![String::new(), String::new()];
      for t in &mut texts {
        random_text(&mut seed, 4, t);
      }
      let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
      let whole = format!("[{}]", texts.join(","));
      let (small, huge) = part(&refs, 4);
      let mut got: Value = serde_json::from_str(&small).expect("the part parses");
      if small == whole {
        written_back += usize::from(whole.contains("xxxx\"") || whole.contains("yyyyy"));
      }
      left_out += huge.len();
      for (path, chars) in huge {
        let mut at = &mut got;
        for step in &path {
          at = match step {
            Step::Index(i) => &mut at[*i as usize],
            Step::Key(k) => &mut at[k.as_str()],
          };
        }
        assert_eq!(at, &Value::from(""), "{whole}: {path:?}");
        *at = Value::from(chars);
      }
      assert_eq!(got, serde_json::from_str::<Value>(&whole).expect("valid"), "{whole}");
    }
    // Both ways were taken, many times.
    assert!(left_out > 5_000 && written_back > 500, "{left_out} {written_back}");
  }
}
