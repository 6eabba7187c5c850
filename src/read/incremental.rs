//! Incremental reads of the append-only line files. The journal's files only
//! grow, and the connector reads some of them on every inbound message, so a
//! reader keeps what it learned from the lines it parsed (a `Fold`) and, on
//! the next call, parses only what was appended since.
//!
//! It may never answer what a fresh read would not: every call reads the
//! whole file and proves the part already parsed unchanged (`proof`: a keyed
//! XXH3-128, on two cores for a large file); any difference (truncation, a file
//! replaced by rename, an in-place rewrite of any size) starts over from the
//! first byte. Reading and hashing are the only work that grows with the
//! whole file. Only complete lines (up to the last
//! newline) are kept: a line still being written is parsed fresh each call.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

use crate::ground::error::{quiet_io, JournalError, Result};
use crate::ground::journal::Journal;
use crate::ground::json::Doc;
use crate::read::cache;
pub use crate::read::cache::kept_bytes;
pub use crate::read::pieces::{Piece, Pieces};
use crate::read::proof::{self, Extending, Proof};

/// One parsed line as a fold sees it.
pub struct Line<'a> {
  /// 1-based line number.
  pub n: usize,
  pub doc: Doc<'a>,
  /// The file offset of the line's text, when its bytes are its text.
  base: Option<usize>,
}

impl Line<'_> {
  /// A part of the line's text (a range of `doc.src`) as a Piece.
  pub fn piece(&self, r: Range<usize>) -> Piece {
    match self.base {
      Some(b) => Piece::Span(b + r.start..b + r.end),
      None => Piece::Owned(self.doc.src.get(r).unwrap_or_default().into()),
    }
  }

  /// The whole line.
  pub fn all(&self) -> Piece {
    self.piece(0..self.doc.src.len())
  }

  /// Line `n`, whose text is the file's bytes from `base` on (for tests of
  /// the folds).
  #[cfg(test)]
  pub fn at(n: usize, doc: Doc<'_>, base: usize) -> Line<'_> {
    Line { n, doc, base: Some(base) }
  }
}

/// What a reader keeps from the lines it has parsed, in order.
pub trait Fold: Default + Clone + Send + 'static {
  /// Whether the fold keeps `Piece`s that point into the file's bytes, so
  /// that its answer needs the whole file in memory. A fold that keeps only
  /// values of its own (the per-message counters) lets a read stream the
  /// part already parsed through a small buffer: the hash is all it needs.
  const SPANS: bool = true;
  /// Whether the connector reads it on every inbound message: the cache
  /// keeps such a fold before any other (`cache`, #66).
  const HOT: bool = false;
  fn line(&mut self, line: &Line<'_>);
  /// The bytes it holds on the heap, counted against the cache's budget.
  fn heap(&self) -> usize;
  /// Gives back the room its vectors grew into, but an eighth
  /// (`room::spare`): once a whole file is folded (#32), and where its
  /// growth would push others out of the cache (#66).
  fn shrink(&mut self) {}
}

#[derive(Default)]
struct Entry<F> {
  /// Bytes parsed: always just after a newline.
  parsed: usize,
  proof: Proof,
  /// Lines (newlines) in the parsed part.
  lines: usize,
  /// The first line that does not parse: it decides every later read.
  invalid: Option<usize>,
  fold: F,
}

type Key = cache::Key;

/// An entry's size: its fold's heap, its key, and the entry and the cache's slot.
fn size_of_entry<F: Fold>(key: &Key, entry: &Entry<F>) -> usize {
  entry.fold.heap() + key.1.capacity() + size_of::<Entry<F>>() + cache::SLOT
}

fn take<F: Fold>(key: &Key) -> Entry<F> {
  cache::take(key)
    .and_then(|b| b.downcast::<Entry<F>>().ok())
    .map_or_else(Entry::default, |b| *b)
}

fn put<F: Fold>(key: Key, mut entry: Entry<F>) {
  let mut bytes = size_of_entry(&key, &entry);
  // A fold that appends grew may be past the room left for it by its
  // vectors' slack alone (each doubles when full): kept without it, it may
  // fit beside the others, whose next calls would fold their whole files
  // again (#47: 690 ms; #66: readers in turn evicted each other).
  if bytes > cache::free() {
    entry.fold.shrink();
    bytes = size_of_entry(&key, &entry);
  }
  cache::keep(key, bytes, F::HOT, Box::new(entry));
}

/// A line's text as every reader parses it: decoded as Node decodes it
/// (each invalid sequence as U+FFFD), one leading U+FEFF dropped; and the
/// bytes that U+FEFF took. The command's scan (`inspect`) judges lines
/// through this too, so that it cannot disagree with the readers.
pub fn line_text(chunk: &[u8]) -> (Cow<'_, str>, usize) {
  match String::from_utf8_lossy(chunk) {
    Cow::Borrowed(text) => match text.strip_prefix('\u{feff}') {
      Some(rest) => (Cow::Borrowed(rest), 3),
      None => (Cow::Borrowed(text), 0),
    },
    Cow::Owned(mut text) => {
      let skip = if text.starts_with('\u{feff}') { 3 } else { 0 };
      text.drain(..skip);
      (Cow::Owned(text), skip)
    }
  }
}

/// Feeds the non-empty lines of the file's bytes `range` (which ends just
/// after a newline, or at the end of the file) to `fold`, numbering from
/// `first`; `data` holds the file from offset `origin` on. Returns the
/// number of the first line that does not parse.
fn feed<F: Fold>(fold: &mut F, data: &[u8], origin: usize, range: Range<usize>, first: usize) -> Option<usize> {
  let mut start = range.start;
  for (n, chunk) in (first..).zip(data[range.start - origin..range.end - origin].split(|&b| b == b'\n')) {
    let end = start + chunk.len();
    if !chunk.is_empty() {
      let (text, skip) = line_text(chunk);
      let borrowed = matches!(text, Cow::Borrowed(_));
      let Some(doc) = Doc::parse(&text) else { return Some(n) };
      fold.line(&Line {
        n,
        doc,
        base: borrowed.then_some(start + skip),
      });
    }
    start = end + 1;
  }
  None
}

/// Reads the journal's `name` through its cache, answering `f(file bytes,
/// fold)` (no bytes for a fold without spans), `Ok(None)` with no file; a
/// line that does not parse refuses with `<name>:<n>: not valid JSON`. `f`
/// owns the bytes, to free them once it has made its answer (#10: a
/// reader's peak is the file and its result, not the file twice).
pub fn read<F: Fold, R, E: From<JournalError>>(
  j: &Journal,
  name: &str,
  f: impl FnOnce(Vec<u8>, &F) -> Result<R, E>,
) -> Result<Option<R>, E> {
  let Some((file, size, key)) = open::<F>(j, name)? else {
    return Ok(None);
  };
  let entry: Entry<F> = take(&key);
  whole(file, size, key, entry, name, f).map(Some)
}

/// The file, its size when opened and its cache key; `None` where it is not.
fn open<F: Fold>(j: &Journal, name: &str) -> Result<Option<(File, u64, Key)>> {
  let path = j.file(name);
  match crate::ground::files::open_sized(&path, crate::ground::files::Access::Read, 0) {
    Ok((file, size)) => Ok(Some((file, size, (std::any::TypeId::of::<F>(), path)))),
    Err(e) if crate::ground::files::missing(&e, &path) => Ok(None),
    Err(e) => Err(quiet_io(&e, name, "read")),
  }
}

/// Some of a file's bytes, packed: each kept range of the file at its
/// place in `bytes`, in file order.
pub struct Packed {
  pub bytes: Vec<u8>,
  /// (file start, file end, start in `bytes`), sorted and apart.
  map: Vec<(usize, usize, usize)>,
}

impl Packed {
  /// The whole file: every range is where it is.
  fn whole(bytes: Vec<u8>) -> Packed {
    let map = vec![(0, bytes.len(), 0)];
    Packed { bytes, map }
  }

  /// Adds bytes that sit in the file at `at`, after all added before.
  fn push(&mut self, at: usize, bytes: &[u8]) {
    match self.map.last_mut() {
      Some(last) if last.1 == at => last.1 += bytes.len(),
      _ => self.map.push((at, at + bytes.len(), self.bytes.len())),
    }
    self.bytes.extend_from_slice(bytes);
  }

  /// Where the file's bytes `r` are in `bytes`, if they were kept.
  pub fn at(&self, r: &Range<usize>) -> Option<Range<usize>> {
    let i = self.map.partition_point(|m| m.1 < r.end);
    let &(start, end, to) = self.map.get(i)?;
    (start <= r.start && r.end <= end).then(|| to + (r.start - start)..to + (r.end - start))
  }

  /// A piece of the file as a piece of `bytes`.
  pub fn piece(&self, p: &Piece) -> Option<Piece> {
    match p {
      Piece::Span(r) => self.at(r).map(Piece::Span),
      Piece::Owned(s) => Some(Piece::Owned(s.clone())),
    }
  }
}

/// `read` for an answer that needs only some of the file's bytes, which
/// `wanted` names (file ranges) from the fold that will answer: the
/// unresolved deliveries of a large outbox (#25). The bytes appended since
/// the last call are read and folded first; then the part parsed before is
/// proved unchanged as `read` proves it, and the wanted bytes in it are
/// kept from the very reads the proof hashed, so there is no moment between
/// the check and the copy for the file to change in. `f` gets those bytes
/// and the appended ones, packed (the whole file where the read is whole:
/// the first, and after any change to the old part, which starts over).
pub fn read_picked<F: Fold, R, E: From<JournalError>>(
  j: &Journal,
  name: &str,
  wanted: impl Fn(&F) -> Vec<Range<usize>>,
  f: impl FnOnce(Packed, &F) -> Result<R, E>,
) -> Result<Option<R>, E> {
  let Some((mut file, size, key)) = open::<F>(j, name)? else {
    return Ok(None);
  };
  let refuse = |e: std::io::Error| E::from(quiet_io(&e, name, "read"));
  let mut entry: Entry<F> = take(&key);
  let old = entry.parsed;
  // Nothing parsed yet (or a line that refuses every read): read whole.
  // Any part parsed is proved through the small buffer at every size: a
  // whole read copies the file into a buffer as large, which cost a
  // 100,000-line outbox 8 ms a call against 2 (#47).
  if old == 0 || entry.invalid.is_some() {
    return whole(file, size, key, entry, name, |bytes, fold| f(Packed::whole(bytes), fold)).map(Some);
  }
  file.seek(SeekFrom::Start(old as u64)).map_err(refuse)?;
  let mut new = Vec::new();
  read_appended(&mut file, &mut new).map_err(refuse)?;
  let end = old + new.len();
  let complete = new.iter().rposition(|&b| b == b'\n').map_or(old, |i| old + i + 1);
  // Folded before the proof, since what is wanted depends on them; the
  // entry is dropped below if the old part turns out changed.
  let invalid = feed(&mut entry.fold, &new, old, old..complete, entry.lines + 1);
  let first = entry.lines + 1 + count_lines(&new[..complete - old]);
  let tail = unfinished(&entry.fold, invalid, &new, old, complete..end, first);
  let mut keep: Vec<Range<usize>> = match &tail {
    Ok(Some(fold)) => wanted(fold),
    _ => wanted(&entry.fold),
  };
  keep.retain(|r| r.start < old);
  keep.sort_by_key(|r| r.start);
  // One range where they touch or overlap (a line's members and its `at`).
  let keep = keep.into_iter().fold(Vec::<Range<usize>>::new(), |mut merged, r| {
    match merged.last_mut() {
      Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
      _ => merged.push(r),
    }
    merged
  });
  let (proved, kept) = proof::check_file_keeping(&file, &entry.proof, &keep).map_err(refuse)?;
  let Some(mut proof) = proved else {
    file.rewind().map_err(refuse)?;
    return whole(file, size, key, Entry::default(), name, |bytes, fold| f(Packed::whole(bytes), fold)).map(Some);
  };
  let mut data = Packed {
    bytes: Vec::with_capacity(kept.iter().map(|(_, b)| b.len()).sum::<usize>() + new.len()),
    map: Vec::new(),
  };
  for (at, bytes) in &kept {
    data.push(*at, bytes);
  }
  data.push(old, &new);
  if complete > old {
    proof.update(&new[..complete - old]);
    entry.lines += count_lines(&new[..complete - old]);
    entry.parsed = complete;
    entry.invalid = invalid;
  }
  entry.proof = proof.finish();
  let answer = answer(name, &entry, tail, data, f);
  put(key, entry);
  answer.map(Some)
}

/// A buffer with room for the file's bytes from `from` on, as its size
/// said when it was opened (the read grows it if the file grew): a
/// cold read's room or a warm one's (`room`).
fn room_for(size: u64, from: usize, cold: bool) -> std::io::Result<Vec<u8>> {
  let len = usize::try_from(size).unwrap_or(usize::MAX).saturating_sub(from);
  let room = if cold {
    crate::read::room::buffer(len)
  } else {
    crate::read::room::warm(len)
  };
  room.ok_or_else(|| std::io::ErrorKind::OutOfMemory.into())
}

/// Reads what was appended since the part parsed (the file from its
/// offset to its end, most often nothing) into `buf`. Through `Take`,
/// which has no size hint: `File`'s own `read_to_end` asks fstat and lseek
/// for one on every call, two system calls for a read that is most often
/// one of nothing. (A whole file is read by `File`'s, whose hint makes it
/// one read, where `Take` reads 8 KiB, then twice as much each time.)
fn read_appended(file: &mut File, buf: &mut Vec<u8>) -> std::io::Result<usize> {
  std::io::Read::take(file, u64::MAX).read_to_end(buf)
}

fn count_lines(bytes: &[u8]) -> usize {
  bytes.iter().filter(|&&b| b == b'\n').count()
}

/// The fold that answers when the file ends in a line still being written
/// (bytes `range` of `data`, which holds the file from `origin` on): the
/// kept one with that line fed to a copy, never kept. `Ok(None)` when there
/// is no such line or a line before it did not parse; `Err` with the line's
/// number when it does not parse.
fn unfinished<F: Fold>(
  fold: &F,
  invalid: Option<usize>,
  data: &[u8],
  origin: usize,
  range: Range<usize>,
  first: usize,
) -> Result<Option<F>, usize> {
  if invalid.is_some() || range.is_empty() {
    return Ok(None);
  }
  let mut fold = fold.clone();
  match feed(&mut fold, data, origin, range, first) {
    Some(bad) => Err(bad),
    None => Ok(Some(fold)),
  }
}

/// `f`'s answer from the fold that answers, or the refusal of the first
/// line that does not parse.
fn answer<F: Fold, D, R, E: From<JournalError>>(
  name: &str,
  entry: &Entry<F>,
  tail: Result<Option<F>, usize>,
  data: D,
  f: impl FnOnce(D, &F) -> Result<R, E>,
) -> Result<R, E> {
  match (entry.invalid, tail) {
    (Some(n), _) | (None, Err(n)) => Err(not_json(name, n).into()),
    (None, Ok(Some(fold))) => f(data, &fold),
    (None, Ok(None)) => f(data, &entry.fold),
  }
}

/// Reads the whole file for `entry` (proving its parsed part unchanged, or
/// starting over) and answers with `f`.
fn whole<F: Fold, R, E: From<JournalError>>(
  mut file: File,
  size: u64,
  key: Key,
  mut entry: Entry<F>,
  name: &str,
  f: impl FnOnce(Vec<u8>, &F) -> Result<R, E>,
) -> Result<R, E> {
  let refuse = |e: std::io::Error| E::from(quiet_io(&e, name, "read"));
  // Folded from nothing: the first read, one the cache could not keep, or
  // a file whose parsed part changed (below). Only such a read shrinks its
  // fold and gives the heap back: a warm one that reads from byte 0 (its
  // fold keeps spans) extends what was kept (#66).
  let mut fresh = entry.parsed == 0;
  // `data` is the file from `origin` on: from the end of the parsed part
  // when it was streamed and proved unchanged, else the whole file.
  let streamed = !F::SPANS && entry.parsed > 0;
  let mut proved = match streamed {
    true => proof::check_file(&file, &entry.proof).map_err(refuse)?,
    false => None,
  };
  let origin = if proved.is_some() { entry.parsed } else { 0 };
  if origin > 0 {
    file.seek(SeekFrom::Start(origin as u64)).map_err(refuse)?;
  }
  // A file folded from nothing (the first read, or one the cache could
  // not keep) is read into room given back when it is freed (#32); a warm
  // read's buffer is the allocator's to reuse, as it was last call.
  let mut data = room_for(size, origin, fresh).map_err(refuse)?;
  match origin {
    0 => file.read_to_end(&mut data),
    _ => read_appended(&mut file, &mut data),
  }
  .map_err(refuse)?;
  if !streamed {
    proved = proof::check_bytes(&data, &entry.proof);
  }
  if proved.is_none() {
    entry = Entry::default();
    proved = Some(Extending::default());
    fresh = true;
  }
  let end = origin + data.len();
  let complete = data
    .iter()
    .rposition(|&b| b == b'\n')
    .map_or(0, |i| origin + i + 1)
    .max(entry.parsed);
  if let Some(mut proof) = proved.filter(|_| complete > entry.parsed) {
    if entry.invalid.is_none() {
      entry.invalid = feed(&mut entry.fold, &data, origin, entry.parsed..complete, entry.lines + 1);
    }
    let new = &data[entry.parsed - origin..complete - origin];
    proof.update(new);
    entry.lines += count_lines(new);
    entry.parsed = complete;
    entry.proof = proof.finish();
  }
  // A last line without its newline is parsed for this answer only.
  let tail = unfinished(&entry.fold, entry.invalid, &data, origin, complete..end, entry.lines + 1);
  if !F::SPANS {
    data = Vec::new();
  }
  let answer = answer(name, &entry, tail, data, f);
  // A fold made from the first byte is kept without the slack of its
  // growth; one extended by appends keeps its room for the next ones.
  if fresh {
    entry.fold.shrink();
  }
  put(key, entry);
  // The read's transient buffers, and any folds evicted for this one, are
  // free by the call's end; glibc would keep most of them resident.
  if fresh {
    crate::read::room::churned(end);
  }
  answer
}

fn not_json(name: &str, n: usize) -> JournalError {
  JournalError::failed(format!("{name}:{n}: not valid JSON"))
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::journal::Journal;
  use crate::ground::json::Scalar;
  use crate::ground::paths::under;

  /// Every line's `n` field, and how many lines the fold was fed.
  #[derive(Clone, Default)]
  struct Seen {
    ns: Vec<f64>,
    fed: usize,
  }

  impl Fold for Seen {
    fn line(&mut self, l: &Line<'_>) {
      self.fed += 1;
      if let Some(Scalar::Num(n)) = l.doc.get("n") {
        self.ns.push(*n);
      }
    }

    fn heap(&self) -> usize {
      self.ns.capacity() * 8
    }
  }

  /// The same fold, read the way a fold without spans is: the parsed part
  /// streamed through the hash, never held.
  #[derive(Clone, Default)]
  struct Streamed(Seen);

  impl Fold for Streamed {
    const SPANS: bool = false;

    fn line(&mut self, l: &Line<'_>) {
      self.0.line(l);
    }

    fn heap(&self) -> usize {
      self.0.heap()
    }
  }

  /// Reads through both paths, which must agree on every answer.
  fn ns(dir: &str) -> Result<Option<(Vec<f64>, usize)>> {
    let held = read::<Seen, _, JournalError>(&Journal::new(dir), "t.jsonl", |_, s| Ok((s.ns.clone(), s.fed)));
    let streamed = read::<Streamed, _, JournalError>(&Journal::new(dir), "t.jsonl", |bytes, s| {
      assert!(bytes.is_empty());
      Ok((s.0.ns.clone(), s.0.fed))
    });
    assert_eq!(held, streamed);
    held
  }

  fn lines(from: usize, to: usize) -> String {
    (from..to).map(|n| format!("{{\"n\":{n}}}\n")).collect()
  }

  #[test]
  fn appends_are_parsed_once() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/t.jsonl", d.path());
    assert!(ns(d.path()).expect("read").is_none());
    std::fs::write(&path, lines(0, 3)).expect("write");
    assert_eq!(ns(d.path()).expect("read"), Some((vec![0.0, 1.0, 2.0], 3)));
    std::fs::write(&path, lines(0, 5)).expect("append");
    // Only the two appended lines reach the fold.
    assert_eq!(ns(d.path()).expect("read"), Some((vec![0.0, 1.0, 2.0, 3.0, 4.0], 5)));
  }

  /// A fold that keeps spans and counts the times it was shrunk.
  #[derive(Clone, Default)]
  struct Shrinks {
    fed: usize,
    shrunk: usize,
  }

  impl Fold for Shrinks {
    fn line(&mut self, _: &Line<'_>) {
      self.fed += 1;
    }

    fn heap(&self) -> usize {
      0
    }

    fn shrink(&mut self) {
      self.shrunk += 1;
    }
  }

  #[test]
  fn only_a_fold_made_from_nothing_is_shrunk() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/t.jsonl", d.path());
    let read = || read::<Shrinks, _, JournalError>(&Journal::new(d.path()), "t.jsonl", |_, s| Ok((s.fed, s.shrunk)));
    // Each answer sees the fold before its call's end shrinks it.
    std::fs::write(&path, lines(0, 3)).expect("write");
    assert_eq!(read().expect("read"), Some((3, 0)));
    // Warm reads, with and without an append, read the file from byte 0
    // (the fold keeps spans) but extend the kept fold: never shrunk (#66).
    std::fs::write(&path, lines(0, 5)).expect("append");
    assert_eq!(read().expect("read"), Some((5, 1)), "the cold read shrank it once");
    assert_eq!(read().expect("read"), Some((5, 1)), "the warm read did not");
    assert_eq!(read().expect("read"), Some((5, 1)));
    // A changed parsed part folds from nothing again, and shrinks.
    std::fs::write(&path, lines(1, 4)).expect("rewrite");
    assert_eq!(read().expect("read"), Some((3, 0)), "a new fold");
    assert_eq!(read().expect("read"), Some((3, 1)), "shrunk once");
  }

  #[test]
  fn any_change_to_the_parsed_part_starts_over() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/t.jsonl", d.path());
    std::fs::write(&path, lines(0, 4)).expect("write");
    ns(d.path()).expect("read");
    // Same size, rewritten in place.
    std::fs::write(&path, lines(0, 4).replace("\"n\":1", "\"n\":7")).expect("rewrite");
    assert_eq!(ns(d.path()).expect("read").map(|r| r.0), Some(vec![0.0, 7.0, 2.0, 3.0]));
    // Truncated.
    std::fs::write(&path, lines(0, 2)).expect("truncate");
    assert_eq!(ns(d.path()).expect("read").map(|r| r.0), Some(vec![0.0, 1.0]));
    // Replaced by rename with a longer file sharing no prefix.
    std::fs::write(format!("{}/new", d.path()), lines(5, 9)).expect("write");
    std::fs::rename(format!("{}/new", d.path()), &path).expect("rename");
    assert_eq!(ns(d.path()).expect("read").map(|r| r.0), Some(vec![5.0, 6.0, 7.0, 8.0]));
  }

  #[test]
  fn a_line_still_being_written_is_not_kept() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/t.jsonl", d.path());
    std::fs::write(&path, "{\"n\":0}\n{\"n\":1}").expect("write");
    assert_eq!(ns(d.path()).expect("read").map(|r| r.0), Some(vec![0.0, 1.0]));
    std::fs::write(&path, "{\"n\":0}\n{\"n\":1}2\n").expect("more of the same line");
    assert_eq!(ns(d.path()), Err(JournalError::failed("t.jsonl:2: not valid JSON")));
    std::fs::write(&path, "{\"n\":0}\n{\"n\":12}\n").expect("complete it");
    assert_eq!(ns(d.path()).expect("read").map(|r| r.0), Some(vec![0.0, 12.0]));
    std::fs::write(&path, "{\"n\":0}\n{\"n\":12}\n{\"n\"").expect("half a line");
    assert_eq!(ns(d.path()), Err(JournalError::failed("t.jsonl:3: not valid JSON")));
  }

  #[test]
  fn the_first_bad_line_decides_until_it_changes() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/t.jsonl", d.path());
    std::fs::write(&path, "1\n\n{bad\n[\n").expect("write");
    assert_eq!(ns(d.path()), Err(JournalError::failed("t.jsonl:3: not valid JSON")));
    std::fs::write(&path, "1\n\n{bad\n[\n2\n").expect("append");
    assert_eq!(ns(d.path()), Err(JournalError::failed("t.jsonl:3: not valid JSON")));
    std::fs::write(&path, "1\n\n{}  \n[]\n2\n").expect("mend");
    assert_eq!(ns(d.path()).expect("read").map(|r| r.1), Some(4));
  }

  #[test]
  fn a_directory_is_a_quiet_refusal() {
    let d = crate::testutil::TempDir::new();
    std::fs::create_dir(format!("{}/t.jsonl", d.path())).expect("mkdir");
    assert_eq!(ns(d.path()), Err(JournalError::failed("could not read t.jsonl (EISDIR)")));
  }

  #[test]
  fn an_entry_is_sized_by_what_its_fold_holds() {
    let d = crate::testutil::TempDir::new();
    let key: Key = (std::any::TypeId::of::<All>(), under(d.path(), &["t.jsonl"]));
    let mut entry = Entry::<All>::default();
    let empty = size_of_entry(&key, &entry);
    for n in 0..1000 {
      entry.fold.0.push(Piece::Span(n * 10..n * 10 + 9));
    }
    let full = size_of_entry(&key, &entry);
    // 12 bytes a piece, and the vector's room.
    assert!((empty + 12_000..=empty + 24_000).contains(&full), "{empty} {full}");
  }

  #[derive(Clone, Default)]
  struct All(Pieces);

  impl Fold for All {
    fn line(&mut self, l: &Line<'_>) {
      self.0.push(l.all());
    }

    fn heap(&self) -> usize {
      self.0.heap()
    }
  }

  fn pieces(dir: &str) -> Vec<String> {
    let got = read::<All, _, JournalError>(&Journal::new(dir), "t.jsonl", |file, all| Ok(crate::testutil::texts(&file, &all.0)));
    got.expect("read").expect("exists")
  }

  #[test]
  fn pieces_are_lines_without_bom_or_newline() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/t.jsonl", d.path());
    std::fs::write(&path, "").expect("write");
    assert!(pieces(d.path()).is_empty());
    std::fs::write(&path, "1\n\n\u{feff}{\"a\":2}\r\n [3]\n4").expect("write");
    assert_eq!(pieces(d.path()), ["1", "{\"a\":2}\r", " [3]", "4"]);
    // An invalid UTF-8 line is carried as decoded text.
    std::fs::write(&path, b"1\n\"\xff\"\n").expect("write");
    assert_eq!(pieces(d.path()), ["1", "\"\u{fffd}\""]);
  }

  /// Every other line, through `read_picked`: only those lines' bytes wanted.
  fn picked(dir: &str) -> Vec<String> {
    let every_other = |all: &All| all.0.iter().step_by(2).collect::<Vec<_>>();
    let got = read_picked::<All, _, JournalError>(
      &Journal::new(dir),
      "t.jsonl",
      |all| every_other(all).iter().filter_map(Piece::range).collect(),
      |packed, all| {
        Ok(
          every_other(all)
            .iter()
            .map(|p| String::from_utf8_lossy(packed.piece(p).expect("kept").bytes(&packed.bytes)).into_owned())
            .collect(),
        )
      },
    );
    got.expect("read").expect("exists")
  }

  /// What a fresh read gives: every other non-empty line.
  fn fresh(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("read");
    text.split('\n').filter(|l| !l.is_empty()).step_by(2).map(str::to_string).collect()
  }

  #[test]
  fn a_picked_read_answers_as_a_fresh_one_through_appends_and_rewrites() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/t.jsonl", d.path());
    let lines = |from: usize, to: usize| (from..to).map(|i| format!("{{\"n\":{i}}}\n")).collect::<String>();
    std::fs::write(&path, lines(0, 50)).expect("write");
    assert_eq!(picked(d.path()), fresh(&path), "first read");
    let append = |text: &str| {
      use std::io::Write;
      std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open")
        .write_all(text.as_bytes())
        .expect("append");
    };
    append(&lines(50, 53));
    assert_eq!(picked(d.path()), fresh(&path), "appended");
    // A last line still being written, valid JSON as it stands, then more.
    append("53");
    assert_eq!(picked(d.path()), fresh(&path), "a line being written");
    append("4\n");
    assert_eq!(picked(d.path()), fresh(&path), "the line completed");
    // A wanted line and an unwanted one rewritten in place, same size.
    for at in ["{\"n\":0}", "{\"n\":1}", "{\"n\":48}"] {
      let text = std::fs::read_to_string(&path).expect("read").replacen(at, &at.replace('n', "m"), 1);
      std::fs::write(&path, &text).expect("rewrite");
      assert_eq!(picked(d.path()), fresh(&path), "{at} rewritten");
    }
    std::fs::write(&path, lines(0, 10)).expect("truncate");
    assert_eq!(picked(d.path()), fresh(&path), "shorter");
    std::fs::write(&path, format!("{}x\n", lines(0, 10))).expect("bad line");
    assert!(read_picked::<All, _, JournalError>(&d.journal(), "t.jsonl", |_| Vec::new(), |_, _| Ok(())).is_err());
  }
}
