//! Incremental reads of the append-only line files. The journal's files only
//! grow, and the connector reads some of them on every inbound message, so a
//! reader keeps what it learned from the lines it parsed (a `Fold`) and, on
//! the next call, parses only what was appended since.
//!
//! It may never answer what a fresh read would not: every call reads the
//! whole file and hashes (BLAKE3) the part already parsed; any difference
//! (truncation, a file replaced by rename, an in-place rewrite of any size)
//! starts over from the first byte. Reading and hashing are the only work
//! that grows with the whole file. Only complete lines (up to the last
//! newline) are kept: a line still being written is parsed fresh each call.

use std::any::Any;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Mutex;

use crate::error::{quiet_io, JournalError, Result};
use crate::json::Doc;
use crate::lines::exists;
use crate::paths;

/// Where a piece of text is: a span of the file's bytes when the line was
/// valid UTF-8 (so its bytes are its text), else the decoded text itself.
#[derive(Clone, Debug)]
pub enum Piece {
  Span(Range<usize>),
  Owned(Box<str>),
}

impl Piece {
  pub fn bytes<'a>(&'a self, file: &'a [u8]) -> &'a [u8] {
    match self {
      Piece::Span(r) => file.get(r.clone()).unwrap_or_default(),
      Piece::Owned(s) => s.as_bytes(),
    }
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
}

/// What a reader keeps from the lines it has parsed, in order.
pub trait Fold: Default + Clone + Send + 'static {
  fn line(&mut self, line: &Line<'_>);
}

struct Entry<F> {
  /// Bytes parsed: always just after a newline.
  parsed: usize,
  hash: blake3::Hash,
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
      hash: blake3::hash(b""),
      lines: 0,
      invalid: None,
      fold: F::default(),
    }
  }
}

type Key = (std::any::TypeId, String);
static CACHE: Mutex<Option<HashMap<Key, Box<dyn Any + Send>>>> = Mutex::new(None);
/// Entries kept at most: a process serves a handful of bindings.
const MAX_ENTRIES: usize = 64;

fn take<F: Fold>(key: &Key) -> Entry<F> {
  let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
  let found = guard.get_or_insert_with(HashMap::new).remove(key);
  found
    .and_then(|b| b.downcast::<Entry<F>>().ok())
    .map_or_else(Entry::default, |b| *b)
}

fn put<F: Fold>(key: Key, entry: Entry<F>) {
  let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
  let map = guard.get_or_insert_with(HashMap::new);
  if map.len() >= MAX_ENTRIES {
    map.clear();
  }
  map.insert(key, Box::new(entry));
}

/// Feeds the non-empty lines of `file[range]` (which ends just after a
/// newline, or at the end of the file) to `fold`, numbering from `first`;
/// returns the number of the first line that does not parse.
fn feed<F: Fold>(fold: &mut F, file: &[u8], range: Range<usize>, first: usize) -> Option<usize> {
  let mut start = range.start;
  let mut n = first;
  for chunk in file[range.clone()].split(|&b| b == b'\n') {
    let end = start + chunk.len();
    if !chunk.is_empty() {
      let text = String::from_utf8_lossy(chunk);
      let borrowed = matches!(text, std::borrow::Cow::Borrowed(_));
      let (text, skip) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, 3),
        None => (&*text, 0),
      };
      let Some(doc) = Doc::parse(text) else { return Some(n) };
      fold.line(&Line {
        n,
        doc,
        base: borrowed.then_some(start + skip),
      });
    }
    start = end + 1;
    n += 1;
  }
  None
}

/// A file's bytes as read, with one spare byte in front so that a JSON
/// array of its lines can be built in place.
pub struct Bytes {
  buf: Vec<u8>,
}

impl Bytes {
  fn read(path: &str) -> std::io::Result<Bytes> {
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata().map_or(0, |m| m.len() as usize);
    let mut buf = Vec::with_capacity(size + 2);
    buf.push(b'[');
    std::io::Read::read_to_end(&mut file, &mut buf)?;
    Ok(Bytes { buf })
  }

  pub fn file(&self) -> &[u8] {
    &self.buf[1..]
  }

  /// `[p1,p2,...]` of pieces of this file. When every piece is a span (they
  /// come in file order, one per line, so each starts after the previous
  /// one's newline) the text is compacted into the file's own buffer: no
  /// second copy of a large file.
  pub fn into_array(mut self, pieces: &[Piece]) -> Vec<u8> {
    if !pieces.iter().all(|p| matches!(p, Piece::Span(_))) {
      return crate::records::array_text(self.file(), pieces);
    }
    let mut w = 1;
    for p in pieces {
      if let Piece::Span(r) = p {
        let (start, end) = (r.start + 1, r.end + 1);
        self.buf.copy_within(start..end, w);
        w += end - start;
        self.buf[w] = b',';
        w += 1;
      }
    }
    if pieces.is_empty() {
      w += 1;
    }
    self.buf[w - 1] = b']';
    self.buf.truncate(w);
    self.buf
  }
}

/// Reads `dir/name` through its cache and answers with `f(file bytes, fold)`;
/// `Ok(None)` when the file does not exist. A line that does not parse
/// refuses the read with `<name>:<n>: not valid JSON`.
pub fn read<F: Fold, R>(dir: &str, name: &str, f: impl FnOnce(Bytes, &F) -> Result<R>) -> Result<Option<R>> {
  let path = paths::under(dir, &[name]);
  if !exists(&path) {
    return Ok(None);
  }
  let data = Bytes::read(&path).map_err(|e| quiet_io(&e, name, "read"))?;
  let bytes = data.file();
  let key: Key = (std::any::TypeId::of::<F>(), path);
  let mut entry: Entry<F> = take(&key);
  let mut hasher = blake3::Hasher::new();
  let prefix_ok = entry.parsed <= bytes.len() && {
    hasher.update(&bytes[..entry.parsed]);
    hasher.finalize() == entry.hash
  };
  if !prefix_ok {
    entry = Entry::default();
    hasher = blake3::Hasher::new();
  }
  let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1).max(entry.parsed);
  if complete > entry.parsed {
    if entry.invalid.is_none() {
      entry.invalid = feed(&mut entry.fold, bytes, entry.parsed..complete, entry.lines + 1);
    }
    hasher.update(&bytes[entry.parsed..complete]);
    entry.lines += bytes[entry.parsed..complete].iter().filter(|&&b| b == b'\n').count();
    entry.parsed = complete;
    entry.hash = hasher.finalize();
  }
  // A last line without its newline is parsed for this answer only.
  let tail = match entry.invalid {
    None if complete < bytes.len() => {
      let mut fold = entry.fold.clone();
      match feed(&mut fold, bytes, complete..bytes.len(), entry.lines + 1) {
        Some(bad) => Err(bad),
        None => Ok(Some(fold)),
      }
    }
    _ => Ok(None),
  };
  let answer = match (entry.invalid, tail) {
    (Some(n), _) | (None, Err(n)) => Err(not_json(name, n)),
    (None, Ok(Some(fold))) => f(data, &fold),
    (None, Ok(None)) => f(data, &entry.fold),
  };
  put(key, entry);
  answer.map(Some)
}

fn not_json(name: &str, n: usize) -> JournalError {
  JournalError::failed(format!("{name}:{n}: not valid JSON"))
}
