//! What the operator's command (`discord-journal check`, `status`) sees of
//! a journal's files: every line of a record file and every turn record,
//! judged by the readers' own rule (`incremental::line_text`, then
//! `json::Doc::parse`), read through the readers' own opens (a file that is
//! not a regular file is refused by name, never waited on or read without
//! end). Where the readers stop at the first bad line, this goes on and
//! names each, with what kind of damage it is:
//!
//! - `Cut`: the line ends inside a JSON text (`cut::is_cut`), perhaps
//!   followed by zero bytes: an append cut short by a kill or a power loss;
//! - `Zeros`: zero bytes alone, or after a whole JSON text: blocks the file
//!   system allocated but never wrote;
//! - `Torn`: the last line, without its newline, and not JSON: an append
//!   that stopped mid-write (what it wrote may not be what it meant);
//! - `Invalid`: anything else, which no more bytes could mend: corruption.
//!
//! A record file is read line by line through a buffer, so its size is
//! bounded by nothing but its longest line, and a run of zero bytes is
//! counted, never held.

use std::fs::File;
use std::io::Read;

use serde_json::{json, Value};

use crate::ground::error::{fs_code, quiet_fs, quiet_io, Result};
use crate::ground::files::{open_dir, open_dir_at, Link};
use crate::ground::json::Doc;
use crate::ground::paths::{journal_label, turn_label, under};
use crate::ground::text::decode_utf8;
use crate::operator::cut::is_cut;
use crate::read::incremental::line_text;

/// What is wrong with a line or a record that the readers refuse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Damage {
  Cut,
  Zeros,
  Torn,
  Invalid,
}

impl Damage {
  pub fn name(self) -> &'static str {
    match self {
      Damage::Cut => "cut",
      Damage::Zeros => "zeros",
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
  Some(if is_cut(&text) { Damage::Cut } else { Damage::Invalid })
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
    Some(if is_cut(&line_text(self.body).0) {
      Damage::Cut
    } else {
      Damage::Invalid
    })
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

/// One line the readers refuse.
#[derive(Clone, Debug, PartialEq)]
pub struct BadLine {
  /// 1-based, as the readers number lines (empty lines count).
  pub n: usize,
  /// The byte offset of its first byte, and its length (no newline).
  pub offset: u64,
  pub len: u64,
  pub damage: Damage,
  /// Its first bytes, for the operator to recognise it.
  pub head: Vec<u8>,
}

/// Bad lines named at most; the rest are counted.
pub const MAX_LISTED: usize = 1000;
/// Bytes of a bad line shown.
const HEAD: usize = 60;

/// One record file, every line judged.
#[derive(Debug, Default, PartialEq)]
pub struct LineScan {
  pub size: u64,
  /// Lines that are not empty.
  pub lines: usize,
  /// The bad lines, at most `MAX_LISTED`, in order.
  pub bad: Vec<BadLine>,
  pub bad_count: usize,
  /// Lines that are JSON `null` (a reader that reads a field of each line
  /// refuses them), at most `MAX_LISTED`.
  pub nulls: Vec<usize>,
  /// Whether the last line has no newline after it (an append would glue
  /// its record onto it).
  pub unterminated: bool,
}

/// Scans `dir/name`; `None` when the file does not exist. A file that
/// cannot be read is refused as the readers refuse it
/// (`could not read inbox.jsonl (EFTYPE)`).
pub fn scan_lines(dir: &str, name: &str) -> Result<Option<LineScan>> {
  let path = under(dir, &[name]);
  let file = match crate::ground::files::open(&path, crate::ground::files::Access::Read, 0) {
    Ok(file) => file,
    Err(e) if crate::ground::files::missing(&e, &path) => return Ok(None),
    Err(e) => return Err(quiet_io(&e, name, "read")),
  };
  let mut scan = LineScan::default();
  scan.size = each_line(file, name, |l| {
    scan.unterminated |= !l.terminated;
    scan.lines += 1;
    match l.judge() {
      None => {
        if scan.nulls.len() < MAX_LISTED && is_null(l.body) {
          scan.nulls.push(l.n);
        }
      }
      Some(damage) => {
        scan.bad_count += 1;
        if scan.bad.len() < MAX_LISTED {
          scan.bad.push(BadLine {
            n: l.n,
            offset: l.offset,
            len: l.len,
            damage,
            head: l.head.to_vec(),
          });
        }
      }
    }
  })?;
  // The last line, without its newline: torn rather than corrupt.
  if scan.unterminated {
    if let Some(last) = scan
      .bad
      .last_mut()
      .filter(|b| b.offset + b.len == scan.size && b.damage == Damage::Invalid)
    {
      last.damage = Damage::Torn;
    }
  }
  Ok(Some(scan))
}

/// One turn record the readers refuse: what is wrong with it, or the
/// refusal of its read.
#[derive(Debug, PartialEq)]
pub struct BadTurn {
  /// The file name, as Node lists it.
  pub file: String,
  pub size: u64,
  /// `None` when it could not be read (see `refusal`).
  pub damage: Option<Damage>,
  pub refusal: Option<String>,
}

/// Every `*.json` record under `dir/turns`.
#[derive(Debug, Default, PartialEq)]
pub struct TurnScan {
  pub records: usize,
  pub bad: Vec<BadTurn>,
  pub bad_count: usize,
  /// Records that are JSON `null` (countTurnsOn refuses each), at most
  /// `MAX_LISTED`, by file name.
  pub nulls: Vec<String>,
}

/// Scans the turn records in the order the readers list them, each read
/// through the directory held open. No `turns/` is no record.
pub fn scan_turns(dir: &str) -> Result<TurnScan> {
  let turns = under(dir, &["turns"]);
  let refuse = |e: &std::io::Error| {
    quiet_fs(
      fs_code(e).as_deref(),
      &format!("the turns directory in {}", journal_label(dir)),
      "read",
    )
  };
  // O_DIRECTORY: a FIFO put where turns/ belongs is ENOTDIR, never waited on.
  let held = match open_dir(&turns, Link::Follow) {
    Ok(held) => held,
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TurnScan::default()),
    Err(e) => return Err(refuse(&e)),
  };
  let names = record_names(&held).map_err(|e| refuse(&e))?;
  let mut scan = TurnScan::default();
  for name in names.into_iter().map(decode_utf8) {
    let Some(id) = name.strip_suffix(".json") else { continue };
    scan.records += 1;
    let judged = crate::ground::files::open_at(&held, &name, 0).and_then(judge_file);
    let (damage, refusal, size) = match judged {
      Ok(r) => {
        if r.null && scan.nulls.len() < MAX_LISTED {
          scan.nulls.push(name.clone());
        }
        (r.damage, None, r.size)
      }
      Err(e) => (None, Some(quiet_io(&e, &turn_label(id), "read").to_string()), 0),
    };
    if damage.is_none() && refusal.is_none() {
      continue;
    }
    scan.bad_count += 1;
    if scan.bad.len() < MAX_LISTED {
      scan.bad.push(BadTurn {
        file: name.clone(),
        size,
        damage,
        refusal,
      });
    }
  }
  Ok(scan)
}

/// The names of the `*.json` records in the turns directory held open, in
/// the order the readers list them (Node's readdirSync sorts by bytes).
pub fn record_names(turns: &File) -> std::io::Result<Vec<Vec<u8>>> {
  let listing = open_dir_at(turns, ".", Link::Follow).and_then(nix::dir::Dir::from_fd)?;
  let mut names = Vec::new();
  for entry in listing {
    let name = entry?.file_name().to_bytes().to_vec();
    if name.ends_with(b".json") {
      names.push(name);
    }
  }
  names.sort();
  Ok(names)
}

/// A turn record's verdict: its whole text is one JSON text (one leading
/// U+FEFF dropped). An empty record is a cut (its write never came).
pub fn judge_record(bytes: &[u8]) -> Option<Damage> {
  if bytes.is_empty() {
    return Some(Damage::Cut);
  }
  judge(bytes)
}

/// A bad line's or record's first bytes, as text.
fn head(bytes: &[u8]) -> String {
  String::from_utf8_lossy(bytes).into_owned()
}

impl LineScan {
  pub fn to_json(&self) -> Value {
    json!({
      "size": self.size,
      "lines": self.lines,
      "unterminated": self.unterminated,
      "bad": self.bad.iter().map(|b| json!({
        "line": b.n,
        "offset": b.offset,
        "length": b.len,
        "damage": b.damage.name(),
        "head": head(&b.head),
      })).collect::<Vec<_>>(),
      "badCount": self.bad_count,
      "nulls": self.nulls,
    })
  }
}

impl TurnScan {
  pub fn to_json(&self) -> Value {
    json!({
      "records": self.records,
      "bad": self.bad.iter().map(|b| json!({
        "file": b.file,
        "size": b.size,
        "damage": b.damage.map(Damage::name),
        "refusal": b.refusal,
      })).collect::<Vec<_>>(),
      "badCount": self.bad_count,
      "nulls": self.nulls,
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::error::JournalError;

  /// Lines read through chunks of any size, zero runs counted, judged as
  /// their whole bytes are judged (`judge`, `body_end`), with their first
  /// bytes and lengths.
  #[test]
  fn null_is_told_as_json_parse_tells_it() {
    for text in ["null", " null\t\r", "\u{feff}null", "\n null \n"] {
      assert!(is_null(text.as_bytes()), "{text:?}");
    }
    for text in ["{\"a\":null}", "[null]", "\"null\"", "nulls", "0", ""] {
      assert!(!is_null(text.as_bytes()), "{text:?}");
    }
  }

  #[test]
  fn lines_with_zero_runs_are_judged_as_their_whole_bytes() {
    let pieces: [&[u8]; 8] = [
      b"{\"id\":\"a\"}",
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
    assert_eq!(judge(b" "), Some(Damage::Invalid));
    // Cut inside a character of more than one byte.
    assert_eq!(
      judge("{\"a\":\"é".as_bytes().split_last().map(|(_, h)| h).unwrap_or_default()),
      Some(Damage::Cut)
    );
  }

  #[test]
  fn every_line_is_numbered_as_the_readers_number_it() {
    let d = crate::testutil::TempDir::new();
    std::fs::write(format!("{}/t.jsonl", d.path()), "{\"a\":1}\n\n{bad\nnull\n{\"a\":\n\0\0").expect("write");
    let scan = scan_lines(d.path(), "t.jsonl").expect("read").expect("exists");
    assert_eq!(scan.lines, 5);
    assert_eq!(scan.size, 27);
    assert!(scan.unterminated);
    assert_eq!(scan.nulls, vec![4]);
    let bad: Vec<_> = scan.bad.iter().map(|b| (b.n, b.offset, b.len, b.damage)).collect();
    assert_eq!(
      bad,
      vec![(3, 9, 4, Damage::Invalid), (5, 19, 5, Damage::Cut), (6, 25, 2, Damage::Zeros)]
    );
    assert_eq!(scan_lines(d.path(), "none.jsonl").expect("read"), None);
  }

  #[test]
  fn a_file_of_another_kind_is_refused_by_name() {
    let d = crate::testutil::TempDir::new();
    nix::unistd::mkfifo(
      format!("{}/t.jsonl", d.path()).as_str(),
      nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .expect("fifo");
    assert_eq!(
      scan_lines(d.path(), "t.jsonl"),
      Err(JournalError::failed("could not read t.jsonl (EFTYPE)"))
    );
  }

  #[test]
  fn turn_records_are_judged_whole() {
    let d = crate::testutil::TempDir::new();
    let turns = format!("{}/turns", d.path());
    std::fs::create_dir(&turns).expect("mkdir");
    std::fs::write(format!("{turns}/a.json"), "{\n  \"id\": \"a\"\n}\n").expect("write");
    std::fs::write(format!("{turns}/b.json"), "").expect("write");
    std::fs::write(format!("{turns}/c.json"), "{\n  \"id\": \"c\",\n  \"st").expect("write");
    std::fs::write(format!("{turns}/d.txt"), "").expect("write");
    std::fs::write(format!("{turns}/e.json"), "\u{feff} null \n").expect("write");
    let scan = scan_turns(d.path()).expect("scan");
    assert_eq!(scan.records, 4);
    let bad: Vec<_> = scan.bad.iter().map(|b| (b.file.as_str(), b.damage)).collect();
    assert_eq!(bad, vec![("b.json", Some(Damage::Cut)), ("c.json", Some(Damage::Cut))]);
    // Whole JSON, so not bad; countTurnsOn refuses it, so named.
    assert_eq!(scan.nulls, vec!["e.json".to_string()]);
  }
}
