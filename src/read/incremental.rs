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

use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Mutex;

use crate::ground::error::{quiet_io, JournalError, Result};
use crate::ground::json::Doc;
use crate::ground::paths;
use crate::read::budget;
use crate::read::proof::{self, Extending, Proof};

/// Where a piece of text is: a span of the file's bytes when the line was
/// valid UTF-8 (so its bytes are its text), else the decoded text itself.
#[derive(Clone, Debug)]
pub enum Piece {
  Span(Range<usize>),
  Owned(Box<str>),
}

impl Piece {
  /// Its range of the file, when it is one.
  pub fn range(&self) -> Option<Range<usize>> {
    match self {
      Piece::Span(r) => Some(r.clone()),
      Piece::Owned(_) => None,
    }
  }

  pub fn bytes<'a>(&'a self, file: &'a [u8]) -> &'a [u8] {
    match self {
      Piece::Span(r) => file.get(r.clone()).unwrap_or_default(),
      Piece::Owned(s) => s.as_bytes(),
    }
  }
}

/// Pieces as a fold keeps them: 12 bytes each (a span's start and length
/// in three u32s, where a `Piece` takes 24); the rare other piece (the
/// decoded text of a line that is not valid UTF-8, a span of 4 GiB) aside
/// (#32).
#[derive(Clone, Default)]
pub struct Pieces {
  spans: Vec<[u32; 3]>,
  aside: Vec<Piece>,
}

/// The length that marks a piece kept aside: its start is its place there.
const ASIDE: u32 = u32::MAX;

impl Pieces {
  pub fn push(&mut self, p: Piece) {
    let span = match &p {
      Piece::Span(r) => u32::try_from(r.len())
        .ok()
        .filter(|&n| n != ASIDE)
        .map(|len| [r.start as u32, (r.start as u64 >> 32) as u32, len]),
      Piece::Owned(_) => None,
    };
    let span = span.unwrap_or_else(|| {
      let at = self.aside.len() as u64;
      self.aside.push(p);
      [at as u32, (at >> 32) as u32, ASIDE]
    });
    self.spans.push(span);
  }

  pub fn get(&self, i: usize) -> Option<Piece> {
    let &[lo, hi, len] = self.spans.get(i)?;
    let at = ((hi as u64) << 32 | lo as u64) as usize;
    Some(match len {
      ASIDE => self.aside.get(at)?.clone(),
      _ => Piece::Span(at..at + len as usize),
    })
  }

  /// Piece `i`'s bytes: of `file`, or its own text.
  pub fn bytes<'a>(&'a self, i: usize, file: &'a [u8]) -> &'a [u8] {
    match self.spans.get(i) {
      Some(&[at, _, ASIDE]) => self.aside.get(at as usize).map_or(&[], |p| p.bytes(file)),
      Some(_) => self.get(i).and_then(|p| file.get(p.range()?)).unwrap_or_default(),
      None => &[],
    }
  }

  /// Piece `i`'s range of the file, unless it was kept aside.
  pub fn span(&self, i: usize) -> Option<Range<usize>> {
    self.get(i)?.range()
  }

  pub fn len(&self) -> usize {
    self.spans.len()
  }

  pub fn is_empty(&self) -> bool {
    self.spans.is_empty()
  }

  pub fn iter(&self) -> impl Iterator<Item = Piece> + '_ {
    (0..self.len()).filter_map(|i| self.get(i))
  }

  pub fn shrink(&mut self) {
    self.spans.shrink_to_fit();
    self.aside.shrink_to_fit();
  }

  /// The bytes held on the heap.
  pub fn heap(&self) -> usize {
    let text = |p: &Piece| match p {
      Piece::Owned(s) => s.len(),
      Piece::Span(_) => 0,
    };
    self.spans.capacity() * 12 + self.aside.capacity() * size_of::<Piece>() + self.aside.iter().map(text).sum::<usize>()
  }
}

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
  fn line(&mut self, line: &Line<'_>);
  /// The bytes it holds on the heap, counted against the cache's budget.
  fn heap(&self) -> usize;
  /// Gives back the room its vectors grew into, once a whole file is
  /// folded: it is kept exactly as large as its lines need (#32).
  fn shrink(&mut self) {}
}

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

impl<F: Fold> Default for Entry<F> {
  fn default() -> Self {
    Entry {
      parsed: 0,
      proof: Proof::default(),
      lines: 0,
      invalid: None,
      fold: F::default(),
    }
  }
}

type Key = (std::any::TypeId, String);

/// What is kept of one file, with the tick of its last use and its size.
struct Kept {
  tick: u64,
  bytes: usize,
  entry: Box<dyn Any + Send>,
}

/// The entries, within the budget (#32): a connector serves several
/// bindings in one process, often under a memory limit, and what is kept
/// between calls is what journal.mjs does not have.
#[derive(Default)]
struct Cache {
  tick: u64,
  /// The sum of the entries' `bytes`.
  used: usize,
  map: HashMap<Key, Kept>,
  /// The size of each entry last dropped to make room, so that its fold,
  /// made again, finds that room free before it is made: the heap then
  /// holds the budget and one read, not the budget and a new fold besides.
  dropped: HashMap<Key, usize>,
}

/// At most this many sizes of dropped entries are remembered.
const DROPPED_MAX: usize = 4096;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// An entry's size: its fold's heap, its key, and the entry and map slot.
fn size_of_entry<F: Fold>(key: &Key, entry: &Entry<F>) -> usize {
  entry.fold.heap() + key.1.capacity() + size_of::<Entry<F>>() + size_of::<(Key, Kept)>()
}

impl Cache {
  /// The entry for `key`, taken out; on a miss, room is made for the size
  /// its entry had when it was dropped.
  fn take(&mut self, key: &Key, budget: usize) -> Option<Box<dyn Any + Send>> {
    let Some(kept) = self.map.remove(key) else {
      if let Some(bytes) = self.dropped.remove(key).filter(|&b| b <= budget) {
        self.evict(budget - bytes);
      }
      return None;
    };
    self.used -= kept.bytes;
    Some(kept.entry)
  }

  /// Drops the least recently used entries until at most `room` is used.
  fn evict(&mut self, room: usize) {
    while self.used > room {
      let oldest = self.map.iter().min_by_key(|(_, kept)| kept.tick).map(|(k, _)| k.clone());
      let Some((key, gone)) = oldest.and_then(|k| self.map.remove_entry(&k)) else {
        break;
      };
      self.used -= gone.bytes;
      if self.dropped.len() >= DROPPED_MAX {
        self.dropped.clear();
      }
      self.dropped.insert(key, gone.bytes);
    }
  }

  /// Keeps `entry` of `bytes` if it fits `budget`, the least recently
  /// used entries going first to make room; one larger than the whole
  /// budget is dropped (its file is then read whole at each call, as
  /// journal.mjs reads it).
  fn keep(&mut self, key: Key, bytes: usize, entry: Box<dyn Any + Send>, budget: usize) {
    if let Some(old) = self.map.remove(&key) {
      self.used -= old.bytes;
    }
    if bytes > budget {
      return;
    }
    self.evict(budget - bytes);
    self.tick += 1;
    self.used += bytes;
    let tick = self.tick;
    self.map.insert(key, Kept { tick, bytes, entry });
  }
}

fn take<F: Fold>(key: &Key) -> Entry<F> {
  let budget = budget::get();
  let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
  let found = guard.get_or_insert_with(Cache::default).take(key, budget);
  found
    .and_then(|b| b.downcast::<Entry<F>>().ok())
    .map_or_else(Entry::default, |b| *b)
}

fn put<F: Fold>(key: Key, entry: Entry<F>) {
  let bytes = size_of_entry(&key, &entry);
  let budget = budget::get();
  let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
  guard.get_or_insert_with(Cache::default).keep(key, bytes, Box::new(entry), budget);
}

/// What is kept now, in bytes (for tests and the benchmark's figures).
pub fn kept_bytes() -> usize {
  CACHE.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map_or(0, |c| c.used)
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

/// Reads `dir/name` through its cache and answers with `f(file bytes, fold)`
/// (no bytes for a fold without spans); `Ok(None)` when the file does not
/// exist. A line that does not parse refuses the read with
/// `<name>:<n>: not valid JSON`. `f` owns the bytes, so that it can free
/// them as soon as it has made what it returns from them (#10: a reader's
/// peak memory is the file and its result, not the file twice).
pub fn read<F: Fold, R, E: From<JournalError>>(dir: &str, name: &str, f: impl FnOnce(Vec<u8>, &F) -> Result<R, E>) -> Result<Option<R>, E> {
  let Some((file, key)) = open::<F>(dir, name)? else {
    return Ok(None);
  };
  let entry: Entry<F> = take(&key);
  whole(file, key, entry, name, f).map(Some)
}

/// The file and its cache key; `None` when it does not exist.
fn open<F: Fold>(dir: &str, name: &str) -> Result<Option<(File, Key)>> {
  let path = paths::under(dir, &[name]);
  match crate::ground::files::open(&path, crate::ground::files::Access::Read, 0) {
    Ok(file) => Ok(Some((file, (std::any::TypeId::of::<F>(), path)))),
    Err(e) if crate::ground::files::missing(&e, &path) => Ok(None),
    Err(e) => Err(quiet_io(&e, name, "read")),
  }
}

/// Below this many parsed bytes, `read_picked` reads the whole file as
/// `read` does: the copy costs less than keeping the parts apart.
const PICKED_MIN: usize = if cfg!(test) { 1 } else { 16 << 20 };

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
  dir: &str,
  name: &str,
  wanted: impl Fn(&F) -> Vec<Range<usize>>,
  f: impl FnOnce(Packed, &F) -> Result<R, E>,
) -> Result<Option<R>, E> {
  let Some((mut file, key)) = open::<F>(dir, name)? else {
    return Ok(None);
  };
  let refuse = |e: std::io::Error| E::from(quiet_io(&e, name, "read"));
  let mut entry: Entry<F> = take(&key);
  let old = entry.parsed;
  if old < PICKED_MIN || entry.invalid.is_some() {
    return whole(file, key, entry, name, |bytes, fold| f(Packed::whole(bytes), fold)).map(Some);
  }
  file.seek(SeekFrom::Start(old as u64)).map_err(refuse)?;
  let mut new = Vec::new();
  file.read_to_end(&mut new).map_err(refuse)?;
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
    return whole(file, key, Entry::default(), name, |bytes, fold| f(Packed::whole(bytes), fold)).map(Some);
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
/// says now (`read_to_end` grows it if the file grew).
fn room_for(file: &File, from: usize) -> std::io::Result<Vec<u8>> {
  let size = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
  crate::read::room::buffer(size.saturating_sub(from)).ok_or_else(|| std::io::ErrorKind::OutOfMemory.into())
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
  key: Key,
  mut entry: Entry<F>,
  name: &str,
  f: impl FnOnce(Vec<u8>, &F) -> Result<R, E>,
) -> Result<R, E> {
  let refuse = |e: std::io::Error| E::from(quiet_io(&e, name, "read"));
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
  let mut data = match entry.parsed {
    0 => room_for(&file, origin).map_err(refuse)?,
    _ => Vec::new(),
  };
  file.read_to_end(&mut data).map_err(refuse)?;
  if !streamed {
    proved = proof::check_bytes(&data, &entry.proof);
  }
  if proved.is_none() {
    entry = Entry::default();
    proved = Some(Extending::default());
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
  if origin == 0 {
    entry.fold.shrink();
  }
  put(key, entry);
  // The read's transient buffers, and any folds evicted for this one, are
  // free by the call's end; glibc would keep most of them resident.
  if origin == 0 {
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
  use crate::ground::json::Scalar;

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
    let held = read::<Seen, _, JournalError>(dir, "t.jsonl", |_, s| Ok((s.ns.clone(), s.fed)));
    let streamed = read::<Streamed, _, JournalError>(dir, "t.jsonl", |bytes, s| {
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
  fn pieces_are_kept_as_they_were_given() {
    let big = 5usize << 30;
    let given = [
      Piece::Span(3..9),
      Piece::Owned("\u{fffd}x".into()),
      Piece::Span(big..big + 7),
      Piece::Span(0..0),
      Piece::Span(1..1 + big),
      Piece::Span(10..10 + u32::MAX as usize),
    ];
    let mut kept = Pieces::default();
    for p in &given {
      kept.push(p.clone());
    }
    let back: Vec<String> = kept.iter().map(|p| format!("{p:?}")).collect();
    let want: Vec<String> = given.iter().map(|p| format!("{p:?}")).collect();
    assert_eq!(back, want);
    let file = b"0123456789";
    assert_eq!(kept.bytes(0, file), b"345678");
    assert_eq!(kept.bytes(1, file), "\u{fffd}x".as_bytes());
    assert_eq!(kept.bytes(2, file), b"", "past the bytes given");
    assert_eq!((kept.span(0), kept.span(1)), (Some(3..9), None));
    assert_eq!(kept.aside.len(), 3, "the decoded text and the two spans of 4 GiB or more");
  }

  #[test]
  fn the_cache_keeps_within_its_budget_the_most_recently_used() {
    let mut c = Cache::default();
    let key = |n: u32| (std::any::TypeId::of::<Seen>(), format!("/j{n}/t.jsonl"));
    let keys = |c: &Cache| {
      let mut k: Vec<String> = c.map.keys().map(|k| k.1.clone()).collect();
      k.sort();
      k
    };
    for n in 0..4 {
      c.keep(key(n), 100, Box::new(()), 350);
    }
    // The fourth pushed out the first.
    assert_eq!(keys(&c), ["/j1/t.jsonl", "/j2/t.jsonl", "/j3/t.jsonl"]);
    assert_eq!(c.used, 300);
    // A use moves an entry to the front: taken, then kept again.
    let got = c.take(&key(1), 350).expect("kept");
    c.keep(key(1), 100, got, 350);
    c.keep(key(4), 150, Box::new(()), 350);
    assert_eq!(
      keys(&c),
      ["/j1/t.jsonl", "/j3/t.jsonl", "/j4/t.jsonl"],
      "the least recently used went"
    );
    assert_eq!(c.used, 350);
    // An entry larger than the budget is not kept, and evicts nothing.
    c.keep(key(5), 351, Box::new(()), 350);
    assert_eq!(keys(&c), ["/j1/t.jsonl", "/j3/t.jsonl", "/j4/t.jsonl"]);
    // One that grew past it is dropped, its old size no longer counted.
    c.keep(key(1), 400, Box::new(()), 350);
    assert_eq!(
      (keys(&c), c.used),
      (vec!["/j3/t.jsonl".to_string(), "/j4/t.jsonl".to_string()], 250)
    );
    // A budget of 0 keeps nothing.
    c.keep(key(6), 1, Box::new(()), 0);
    assert!(c.take(&key(6), 0).is_none());
  }

  #[test]
  fn a_dropped_entry_read_again_finds_its_room_made_first() {
    let mut c = Cache::default();
    let key = |n: u32| (std::any::TypeId::of::<Seen>(), format!("/j{n}/t.jsonl"));
    for n in 0..3 {
      c.keep(key(n), 100, Box::new(()), 300);
    }
    // j3 pushes out j0, whose size is remembered.
    c.keep(key(3), 100, Box::new(()), 300);
    assert_eq!(c.dropped.get(&key(0)), Some(&100));
    // j0's miss drops j1 before its fold is made again, not after.
    assert!(c.take(&key(0), 300).is_none());
    assert_eq!(c.used, 200);
    assert!(!c.map.contains_key(&key(1)));
    // A miss with nothing remembered drops nothing.
    assert!(c.take(&key(9), 300).is_none());
    assert_eq!(c.used, 200);
  }

  #[test]
  fn an_entry_is_sized_by_what_its_fold_holds() {
    let d = crate::testutil::TempDir::new();
    let key: Key = (std::any::TypeId::of::<All>(), paths::under(d.path(), &["t.jsonl"]));
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
    let got = read::<All, _, JournalError>(dir, "t.jsonl", |file, all| {
      Ok(
        all
          .0
          .iter()
          .map(|p| String::from_utf8_lossy(p.bytes(&file)).into_owned())
          .collect::<Vec<_>>(),
      )
    });
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
      dir,
      "t.jsonl",
      |all| {
        every_other(all)
          .into_iter()
          .filter_map(|p| match p {
            Piece::Span(r) => Some(r),
            Piece::Owned(_) => None,
          })
          .collect()
      },
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
    assert!(read_picked::<All, _, JournalError>(d.path(), "t.jsonl", |_| Vec::new(), |_, _| Ok(())).is_err());
  }
}
