//! The verdict on a line of a record file or on a turn record, by the
//! readers' own rule (`incremental::line_text`, then `json::Doc::parse`),
//! and what kind of damage it is where they refuse it:
//!
//! - `Cut`: the line ends inside a JSON text (`cut::is_cut`), perhaps
//!   followed by zero bytes: an append cut short by a kill or a power loss;
//! - `Zeros`: zero bytes alone, or after a whole JSON text: blocks the file
//!   system allocated but never wrote;
//! - `Blank`: whitespace alone (what `trim()` empties: spaces, tabs, a
//!   stray `\r`, a BOM), perhaps followed by zero bytes: no record, and
//!   nothing a record needs;
//! - `Torn`: the last line, without its newline, and not JSON: an append
//!   that stopped mid-write (what it wrote may not be what it meant);
//! - `Invalid`: anything else, which no more bytes could mend: corruption.
//!
//! Lines are read through a buffer, so a file is bounded by nothing but its
//! longest line, and a run of zero bytes is counted, never held. The scans
//! that name each bad line are `inspect`'s; a repair plans from the same
//! verdicts.

use std::fs::File;
use std::io::Read;

use crate::ground::error::{quiet_io, Result};
use crate::ground::json::Doc;
use crate::ground::text::js_trim;
use crate::operator::cut::is_cut;
use crate::read::incremental::line_text;

/// Bytes of a bad line kept, to show it.
pub const HEAD: usize = 60;

/// What is wrong with a line or a record that the readers refuse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Damage {
  Cut,
  Zeros,
  Blank,
  Torn,
  Invalid,
}

impl Damage {
  pub fn name(self) -> &'static str {
    match self {
      Damage::Cut => "cut",
      Damage::Zeros => "zeros",
      Damage::Blank => "blank",
      Damage::Torn => "torn",
      Damage::Invalid => "invalid",
    }
  }
}

/// The readers' verdict on one line's bytes (no newline): `None` when it
/// parses, else what kind of damage it is.
pub fn judge(chunk: &[u8]) -> Option<Damage> {
  if Doc::parse(&line_text(chunk).0).is_some() {
    return None;
  }
  let body = &chunk[..body_end(chunk)];
  if body.is_empty() {
    return Some(Damage::Zeros);
  }
  let text = line_text(body).0;
  if body.len() < chunk.len() && Doc::parse(&text).is_some() {
    return Some(Damage::Zeros);
  }
  Some(damage_of(&text))
}

/// What a refused text with no zero byte in it is: whitespace alone (a
/// blank line holds no record, though more bytes could make it JSON, so
/// it is neither corruption nor a cut), the beginning of a JSON text, or
/// corruption.
fn damage_of(text: &str) -> Damage {
  if js_trim(text).is_empty() {
    Damage::Blank
  } else if is_cut(text) {
    Damage::Cut
  } else {
    Damage::Invalid
  }
}

/// Where a run of zero bytes at the end of `bytes` begins (their length
/// when there is none): what a power loss leaves after the last write.
pub fn body_end(bytes: &[u8]) -> usize {
  bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1)
}

/// One line of a record file, as the readers number it. A run of zero
/// bytes is counted, never held (#34: a power loss can leave gigabytes of
/// them, and the readers refuse such a line without holding it): the line
/// is its `body` (the bytes before a run of zeros at its end), the length
/// of that run, and its first bytes.
pub struct RawLine<'a> {
  /// 1-based (empty lines count).
  pub n: usize,
  /// Where it starts, and where it ends after its newline.
  pub offset: u64,
  pub end: u64,
  /// Its length, without the newline.
  pub len: u64,
  /// Its first `HEAD` bytes.
  pub head: &'a [u8],
  /// The line before the zero bytes at its end; empty where a zero byte
  /// comes before a byte that is not (`inner`).
  pub body: &'a [u8],
  /// Whether a zero byte comes before a byte that is not: no JSON text has
  /// one (not even in a string), nor does any text more bytes could make
  /// JSON, so the line is corrupt however long it is.
  pub inner: bool,
  /// Whether a newline follows it (only the last line may lack one).
  pub terminated: bool,
}

impl RawLine<'_> {
  /// The readers' verdict on the line: `judge` of its bytes, made from the
  /// parts kept.
  pub fn judge(&self) -> Option<Damage> {
    if self.inner {
      return Some(Damage::Invalid);
    }
    if self.body.len() as u64 == self.len {
      return judge(self.body);
    }
    // Zeros at the end: never JSON with them, and the body decides.
    if self.body.is_empty() || Doc::parse(&line_text(self.body).0).is_some() {
      return Some(Damage::Zeros);
    }
    Some(damage_of(&line_text(self.body).0))
  }
}

/// The line being read: its first bytes, its body, the zeros after it.
#[derive(Default)]
struct Reading {
  head: Vec<u8>,
  body: Vec<u8>,
  len: u64,
  zeros: u64,
  inner: bool,
}

impl Reading {
  /// Ready for the next line, its buffers' room kept.
  fn reset(&mut self) {
    self.head.clear();
    self.body.clear();
    (self.len, self.zeros, self.inner) = (0, 0, false);
  }

  fn push(&mut self, mut bytes: &[u8]) {
    let room = HEAD.saturating_sub(self.head.len());
    self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    self.len += bytes.len() as u64;
    while !self.inner && !bytes.is_empty() {
      let z = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
      self.zeros += z as u64;
      bytes = &bytes[z..];
      if bytes.is_empty() {
        break;
      }
      if self.zeros > 0 {
        self.inner = true;
        self.body.clear();
        break;
      }
      let run = memchr::memchr(0, bytes).unwrap_or(bytes.len());
      self.body.extend_from_slice(&bytes[..run]);
      bytes = &bytes[run..];
    }
  }
}

/// A turn record judged as `judge_record` judges its bytes, read a buffer
/// at a time, a run of zeros counted and never held (#34).
pub struct Record {
  pub damage: Option<Damage>,
  pub size: u64,
  /// The length of the record before a run of zeros at its end.
  pub body: u64,
  /// Its first bytes.
  pub head: Vec<u8>,
  /// Whether it is whole and JSON `null`: it parses, but countTurnsOn,
  /// reading its startedAt, refuses it (#34).
  pub null: bool,
}

/// Whether `bytes`, which parse, are the JSON text `null`. Asked of every
/// line a scan or a plan keeps, so a line that does not end in `null`
/// (before JSON's whitespace) is told without a second parse.
pub fn is_null(bytes: &[u8]) -> bool {
  let end = bytes
    .iter()
    .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    .map_or(0, |i| i + 1);
  bytes[..end].ends_with(b"null") && Doc::parse(&line_text(bytes).0).is_some_and(|d| d.is_null())
}

/// Reads and judges the turn record `file`.
pub fn judge_file(mut file: File) -> std::io::Result<Record> {
  let mut chunk = vec![0u8; 1 << 20];
  let mut r = Reading::default();
  loop {
    match file.read(&mut chunk) {
      Ok(0) => break,
      Ok(got) => r.push(&chunk[..got]),
      Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
      Err(e) => return Err(e),
    }
  }
  let line = RawLine {
    n: 1,
    offset: 0,
    end: r.len,
    len: r.len,
    head: &r.head,
    body: &r.body,
    inner: r.inner,
    terminated: true,
  };
  let damage = if r.len == 0 { Some(Damage::Cut) } else { line.judge() };
  let body = if r.inner { r.len } else { r.body.len() as u64 };
  Ok(Record {
    null: damage.is_none() && is_null(&r.body),
    damage,
    size: r.len,
    body,
    head: r.head,
  })
}

/// Hands `each` every line of `file` that is not empty, read through a
/// buffer (so a file is bounded by nothing but its longest run of bytes
/// that are not zero), and returns the file's size. A failed read is
/// refused as the readers refuse it, by `name`.
pub fn each_line(file: File, name: &str, each: impl FnMut(RawLine<'_>)) -> Result<u64> {
  each_line_by(file, name, 1 << 20, each)
}

fn each_line_by(mut file: File, name: &str, chunk: usize, mut each: impl FnMut(RawLine<'_>)) -> Result<u64> {
  let mut chunk = vec![0u8; chunk];
  let mut line = Reading::default();
  let (mut n, mut size, mut start) = (0, 0u64, 0u64);
  let mut emit = |line: &mut Reading, size: u64, start: u64, terminated: bool| {
    n += 1;
    if line.len > 0 {
      each(RawLine {
        n,
        offset: start,
        end: size,
        len: line.len,
        head: &line.head,
        body: &line.body,
        inner: line.inner,
        terminated,
      });
    }
    line.reset();
  };
  loop {
    let got = match file.read(&mut chunk) {
      Ok(0) => break,
      Ok(got) => got,
      Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
      Err(e) => return Err(quiet_io(&e, name, "read")),
    };
    let mut rest = &chunk[..got];
    while let Some(at) = memchr::memchr(b'\n', rest) {
      line.push(&rest[..at]);
      size += at as u64 + 1;
      emit(&mut line, size, start, true);
      start = size;
      rest = &rest[at + 1..];
    }
    size += rest.len() as u64;
    line.push(rest);
  }
  if size > start {
    emit(&mut line, size, start, false);
  }
  Ok(size)
}

/// A turn record's verdict: its whole text is one JSON text (one leading
/// U+FEFF dropped). An empty record is a cut (its write never came).
pub fn judge_record(bytes: &[u8]) -> Option<Damage> {
  if bytes.is_empty() {
    return Some(Damage::Cut);
  }
  judge(bytes)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn null_is_told_as_json_parse_tells_it() {
    for text in ["null", " null\t\r", "\u{feff}null", "\n null \n"] {
      assert!(is_null(text.as_bytes()), "{text:?}");
    }
    for text in ["{\"a\":null}", "[null]", "\"null\"", "nulls", "0", ""] {
      assert!(!is_null(text.as_bytes()), "{text:?}");
    }
  }

  /// Lines read through chunks of any size, zero runs counted, judged as
  /// their whole bytes are judged (`judge`, `body_end`), with their first
  /// bytes and lengths.
  #[test]
  fn lines_with_zero_runs_are_judged_as_their_whole_bytes() {
    let pieces: [&[u8]; 9] = [
      b"{\"id\":\"a\"}",
      b" \r",
      b"\0\0\0",
      b"{\"id\":\"cu",
      b"garbage",
      b"\0",
      b"null",
      b"",
      b"[1,",
    ];
    let d = crate::testutil::TempDir::new();
    let mut seed = 7u64;
    for round in 0..200 {
      let mut lines: Vec<Vec<u8>> = Vec::new();
      for _ in 0..4 {
        let mut l = Vec::new();
        for _ in 0..3 {
          seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
          l.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
        }
        lines.push(l);
      }
      let text = lines.join(&b'\n');
      let path = format!("{}/f{round}", d.path());
      std::fs::write(&path, &text).expect("write");
      for chunk in [1, 2, 5, 64, 1 << 20] {
        let mut seen = Vec::new();
        let size = each_line_by(File::open(&path).expect("open"), "f", chunk, |l| {
          seen.push((
            l.n,
            l.offset,
            l.len,
            l.head.to_vec(),
            l.judge(),
            (!l.inner).then_some(l.body.len()),
            l.terminated,
          ));
        })
        .expect("read");
        assert_eq!(size, text.len() as u64);
        let mut want = Vec::new();
        let mut offset = 0u64;
        for (i, l) in lines.iter().enumerate() {
          let terminated = i + 1 < lines.len();
          if !l.is_empty() {
            let inner = l[..body_end(l)].contains(&0);
            want.push((
              i + 1,
              offset,
              l.len() as u64,
              l[..l.len().min(HEAD)].to_vec(),
              judge(l),
              (!inner).then_some(body_end(l)),
              terminated,
            ));
          }
          offset += l.len() as u64 + 1;
        }
        assert_eq!(seen, want, "chunk {chunk}: {:?}", String::from_utf8_lossy(&text));
      }
      // The same bytes as a turn record, judged whole.
      let r = judge_file(File::open(&path).expect("open")).expect("judge");
      assert_eq!(r.damage, judge_record(&text), "{:?}", String::from_utf8_lossy(&text));
      assert_eq!((r.size, r.head), (text.len() as u64, text[..text.len().min(HEAD)].to_vec()));
      if r.damage == Some(Damage::Zeros) {
        assert_eq!(r.body, body_end(&text) as u64);
      }
    }
  }

  #[test]
  fn a_long_zero_run_is_counted_not_held() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/drops.jsonl", d.path());
    let file = File::create(&path).expect("create");
    std::io::Write::write_all(&mut &file, b"{\"id\":\"a\"}\n{\"id\":\"b\"}").expect("write");
    // 256 MiB of zeros after the record: a hole, which costs no disk.
    let size = 1u64 << 28;
    file.set_len(size).expect("hole");
    drop(file);
    let mut seen = Vec::new();
    each_line(File::open(&path).expect("open"), "drops.jsonl", |l| {
      seen.push((l.n, l.len, l.body.to_vec(), l.judge(), l.inner, l.head.len()));
    })
    .expect("read");
    assert_eq!(
      seen,
      vec![
        (1, 10, b"{\"id\":\"a\"}".to_vec(), None, false, 10),
        (2, size - 11, b"{\"id\":\"b\"}".to_vec(), Some(Damage::Zeros), false, HEAD),
      ]
    );
  }

  #[test]
  fn damage_is_told_apart() {
    assert_eq!(judge(br#"{"id":"m1"}"#), None);
    assert_eq!(judge(b"\xef\xbb\xbf{}\r"), None);
    assert_eq!(judge(br#"{"id":"m2","at":"2026-"#), Some(Damage::Cut));
    assert_eq!(judge(b"{\"id\":\"m2\",\"at\":\"2026-\0\0\0\0"), Some(Damage::Cut));
    assert_eq!(judge(b"\0\0\0\0"), Some(Damage::Zeros));
    assert_eq!(judge(b"{\"id\":\"m2\"}\0\0"), Some(Damage::Zeros));
    assert_eq!(judge(b"{bad"), Some(Damage::Invalid));
    assert_eq!(judge(b"\0\0{\"id\":1}"), Some(Damage::Invalid));
    // Whitespace alone, as trim() has it (a BOM too), zeros after it or not.
    for blank in [&b" "[..], b"\r", b"  \t \r", b"\xef\xbb\xbf", b"\xc2\xa0", b" \r\0\0"] {
      assert_eq!(judge(blank), Some(Damage::Blank), "{blank:?}");
    }
    // Whitespace around something that is not: not blank.
    assert_eq!(judge(b" x "), Some(Damage::Invalid));
    assert_eq!(judge(b"  \0 "), Some(Damage::Invalid));
    assert_eq!(judge(b" \xff"), Some(Damage::Invalid));
    // Cut inside a character of more than one byte.
    assert_eq!(
      judge("{\"a\":\"é".as_bytes().split_last().map(|(_, h)| h).unwrap_or_default()),
      Some(Damage::Cut)
    );
  }
}
