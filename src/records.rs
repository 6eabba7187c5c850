//! What the readers of the record files keep and decide: inbox ids, the
//! outbox's latest state per nonce, the daily ceiling's counts, notices, and
//! whole lines for drops and reloads. Each reader is a `Fold`, fed once per
//! appended line (see `incremental`).
//!
//! JavaScript reads fields with `e.id`, so a line that is JSON `null` throws
//! a TypeError when the reader reaches it (after every line parsed: a line
//! that does not parse wins). Every comparison is `===`: strings by UTF-16
//! code units, numbers by value (-0 equals 0), a fresh object never equal.

use std::collections::HashMap;

use crate::ground::error::{JournalError, Result};
use crate::ground::json::{units, Doc, Scalar};
use crate::read::incremental::{Fold, Line, Pieces};
use crate::read::keys::Keys;

mod outbox;
pub use outbox::{Delivery, Outbox, OUTBOX_STATUS};

/// The status the lines of the outbox `file` (`size` bytes, held under its
/// append flock) appended since `mark` (`"dev:ino:size"` of the file
/// before an earlier read) give the delivery `nonce`, where it is one that
/// waits no more: `resolve`'s second look (#64). The merge is the readers'
/// (the last line with a `status` decides), so reading from the mark on
/// gives the status now, given that the earlier read found it waiting
/// ("intent" or "unknown"). Where the file is no longer the one marked (a
/// repair renamed another over it) or is shorter, it is read whole. A line
/// that does not parse refuses, as every reader of the file would.
pub fn status_since(file: &std::fs::File, size: u64, mark: Option<&str>, nonce: &str) -> Result<Option<serde_json::Value>> {
  use std::os::unix::fs::{FileExt, MetadataExt};
  let meta = file
    .metadata()
    .map_err(|e| crate::ground::error::quiet_io(&e, crate::lines::OUTBOX, "read"))?;
  let marked = mark.and_then(|m| {
    let mut parts = m.split(':').map(|p| p.parse::<u64>().ok());
    match (parts.next()??, parts.next()??, parts.next()??) {
      (dev, ino, at) if dev == meta.dev() && ino == meta.ino() && at <= size => Some(at),
      _ => None,
    }
  });
  // A mark inside a line (a long line's write seen a page at a time) is
  // no start of one: then the whole file.
  let starts_line = |at: u64| {
    let mut b = [0u8; 1];
    at == 0 || (file.read_at(&mut b, at - 1).ok() == Some(1) && b[0] == b'\n')
  };
  let from = marked.filter(|&at| starts_line(at)).unwrap_or(0);
  let mut bytes = vec![0u8; usize::try_from(size - from).map_err(|_| JournalError::failed("outbox.jsonl: too large to read"))?];
  file
    .read_exact_at(&mut bytes, from)
    .map_err(|e| crate::ground::error::quiet_io(&e, crate::lines::OUTBOX, "read"))?;
  let mut status: Option<serde_json::Value> = None;
  for (at, line) in bytes.split(|b| *b == b'\n').enumerate() {
    if line.is_empty() {
      continue;
    }
    let parsed: serde_json::Value = serde_json::from_slice(line).map_err(|_| {
      JournalError::failed(format!(
        "{}: a line appended while resolve read the file is not valid JSON (line {} after byte {from})",
        crate::lines::OUTBOX,
        at + 1
      ))
    })?;
    if parsed.get("nonce").and_then(serde_json::Value::as_str) == Some(nonce) {
      if let Some(s) = parsed.get("status") {
        status = Some(s.clone());
      }
    }
  }
  Ok(status.filter(|s| !matches!(s.as_str(), Some("intent" | "unknown"))))
}

/// An argument as `===` sees it when compared with a parsed JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Cmp {
  Undefined,
  Null,
  Bool(bool),
  Num(f64),
  Str(Vec<u16>),
  /// An object, function, symbol or BigInt: equal to no parsed value.
  Other,
}

/// A field's value as a key that is equal exactly when `===` holds;
/// containers (never `===` to anything from another parse) have none.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
  Undefined,
  Null,
  Bool(bool),
  Num(u64),
  Str(Vec<u16>),
}

fn num_key(n: f64) -> Option<Key> {
  // -0 === 0; NaN (never parsed, but an argument can be one) equals nothing.
  (!n.is_nan()).then(|| Key::Num(if n == 0.0 { 0 } else { n.to_bits() }))
}

fn field_key(doc: &Doc<'_>, name: &str) -> Option<Key> {
  match doc.get(name) {
    None => Some(Key::Undefined),
    Some(Scalar::Null) => Some(Key::Null),
    Some(Scalar::Bool(b)) => Some(Key::Bool(*b)),
    Some(Scalar::Num(n)) => num_key(*n),
    Some(Scalar::Str(s)) => Some(Key::Str(units(doc.src, s))),
    Some(Scalar::Arr | Scalar::Obj) => None,
  }
}

fn cmp_key(c: &Cmp) -> Option<Key> {
  match c {
    Cmp::Undefined => Some(Key::Undefined),
    Cmp::Null => Some(Key::Null),
    Cmp::Bool(b) => Some(Key::Bool(*b)),
    Cmp::Num(n) => num_key(*n),
    Cmp::Str(s) => Some(Key::Str(s.clone())),
    Cmp::Other => None,
  }
}

fn null_read(null: bool, key: &str) -> Result<()> {
  (!null).then_some(()).ok_or_else(|| JournalError::read_of_null(key))
}

/// readInboxIds: the string ids' JSON tokens in line order (the JavaScript
/// Set they become keeps the first of duplicates).
#[derive(Clone, Default)]
pub struct Inbox {
  ids: Pieces,
  null: bool,
}

impl Fold for Inbox {
  fn line(&mut self, l: &Line<'_>) {
    if l.doc.is_null() {
      self.null = true;
    } else if let Some(m) = l.doc.member("id").filter(|m| matches!(m.value, Scalar::Str(_))) {
      self.ids.push(l.piece(m.value_span.clone()));
    }
  }

  fn heap(&self) -> usize {
    self.ids.heap()
  }

  fn shrink(&mut self) {
    self.ids.shrink();
  }
}

impl Inbox {
  pub fn ids(&self) -> Result<&Pieces> {
    null_read(self.null, "id")?;
    Ok(&self.ids)
  }
}

/// countAdmissionsOn: for each day prefix (`at.slice(0, 10)`), the distinct
/// ids admitted, as one arena of keys a day (#32).
#[derive(Clone, Default)]
pub struct Admissions {
  by_day: HashMap<Vec<u16>, Keys>,
  null: bool,
  /// More than 2^32 ids in a day: see `Outbox::full`.
  full: bool,
}

impl Fold for Admissions {
  const SPANS: bool = false;
  const HOT: bool = true;

  fn line(&mut self, l: &Line<'_>) {
    if l.doc.is_null() {
      self.null = true;
    } else if let (Some(id), Some(mut at)) = (l.doc.get_str("id"), l.doc.get_str("at")) {
      at.truncate(10);
      self.full |= self.by_day.entry(at).or_default().insert(&id).is_none();
    }
  }

  fn heap(&self) -> usize {
    let slot = size_of::<(Vec<u16>, Keys)>() + 1;
    self.by_day.capacity() * slot + self.by_day.iter().map(|(d, k)| d.capacity() * 2 + k.heap()).sum::<usize>()
  }

  fn shrink(&mut self) {
    self.by_day.values_mut().for_each(Keys::shrink);
  }
}

impl Admissions {
  /// Only a string date can equal a slice of one.
  pub fn count_on(&self, date: Option<&[u16]>) -> Result<usize> {
    null_read(self.null, "id")?;
    if self.full {
      return Err(JournalError::failed("could not read admissions.jsonl (ENOMEM)"));
    }
    Ok(date.and_then(|d| self.by_day.get(d)).map_or(0, Keys::len))
  }
}

/// noticeOn: the first line of each (kind, date) pair, and the first null
/// line; `some()` stops at a match, so a null line after it is never read.
#[derive(Clone, Default)]
pub struct Notices {
  first: HashMap<(Key, Key), usize>,
  first_null: Option<usize>,
  seen: usize,
}

impl Fold for Notices {
  const SPANS: bool = false;
  const HOT: bool = true;

  fn line(&mut self, l: &Line<'_>) {
    let at = self.seen;
    self.seen += 1;
    if l.doc.is_null() {
      self.first_null.get_or_insert(at);
    } else if let (Some(k), Some(d)) = (field_key(&l.doc, "kind"), field_key(&l.doc, "date")) {
      self.first.entry((k, d)).or_insert(at);
    }
  }

  fn heap(&self) -> usize {
    let units = |k: &Key| match k {
      Key::Str(s) => s.capacity() * 2,
      _ => 0,
    };
    let slot = size_of::<((Key, Key), usize)>() + 1;
    self.first.capacity() * slot + self.first.keys().map(|(k, d)| units(k) + units(d)).sum::<usize>()
  }
}

impl Notices {
  pub fn on(&self, kind: &Cmp, date: &Cmp) -> Result<bool> {
    let hit = match (cmp_key(kind), cmp_key(date)) {
      (Some(k), Some(d)) => self.first.get(&(k, d)).copied(),
      _ => None,
    };
    match (hit, self.first_null) {
      (Some(i), Some(z)) if i < z => Ok(true),
      (Some(_), None) => Ok(true),
      (_, Some(_)) => Err(JournalError::read_of_null("kind")),
      (None, None) => Ok(false),
    }
  }
}

/// readDrops, readReloads: every line, for one JSON.parse of them all.
#[derive(Clone, Default)]
pub struct AllLines {
  pub lines: Pieces,
}

impl Fold for AllLines {
  fn line(&mut self, l: &Line<'_>) {
    self.lines.push(l.all());
  }

  fn heap(&self) -> usize {
    self.lines.heap()
  }

  fn shrink(&mut self) {
    self.lines.shrink();
  }
}

/// What countTurnsOn needs of a turn record: `None` for a record that is
/// JSON `null` (reading its startedAt throws), else the first ten code
/// units of a string startedAt.
pub fn started_day(doc: &Doc<'_>) -> Option<Option<Vec<u16>>> {
  if doc.is_null() {
    return None;
  }
  Some(doc.get_str("startedAt").map(|mut s| {
    s.truncate(10);
    s
  }))
}

/// countTurnsOn: `typeof t.startedAt === "string" && t.startedAt.slice(0,
/// 10) === date`, over every record (after all were read).
pub fn count_started_on(started: &[Option<Option<Vec<u16>>>], date: Option<&[u16]>) -> Result<usize> {
  started.iter().try_fold(0, |n, day| match day {
    Some(day) => Ok(n + usize::from(date.is_some() && day.as_deref() == date)),
    None => Err(JournalError::read_of_null("startedAt")),
  })
}

#[cfg(test)]
mod tests {

  /// resolve's second look (#64): the lines after the mark decide; a file
  /// replaced since the mark, or a mark inside a line, is read whole.
  #[test]
  fn the_status_since_a_mark_is_the_last_line_with_a_status() {
    use std::os::unix::fs::MetadataExt;
    let d = crate::testutil::TempDir::new();
    let path = d.journal().file(crate::lines::OUTBOX);
    std::fs::write(
      &path,
      "{\"nonce\":\"n\",\"status\":\"confirmed\"}\n{\"nonce\":\"n\",\"status\":\"intent\"}\n",
    )
    .expect("write");
    let meta = std::fs::metadata(&path).expect("meta");
    let mark = format!("{}:{}:{}", meta.dev(), meta.ino(), meta.size());
    let look = |mark: &str| {
      let file = std::fs::File::open(&path).expect("open");
      let size = file.metadata().expect("meta").len();
      status_since(&file, size, Some(mark), "n").expect("look")
    };
    assert_eq!(look(&mark), None, "nothing after the mark");
    let mut more = std::fs::read_to_string(&path).expect("read");
    more.push_str("{\"nonce\":\"m\",\"status\":\"refused\"}\n{\"nonce\":\"n\",\"channel\":\"1\"}\n");
    std::fs::write(&path, &more).expect("write");
    assert_eq!(look(&mark), None, "another nonce, and a line without a status");
    more.push_str("{\"nonce\":\"n\",\"status\":\"refused\"}\n");
    std::fs::write(&path, &more).expect("write");
    assert_eq!(look(&mark), Some(serde_json::json!("refused")));
    // Another inode: read whole, the last status decides.
    let other = format!("{}:{}:{}", meta.dev(), meta.ino() + 1, meta.size());
    assert_eq!(look(&other), Some(serde_json::json!("refused")));
    // A mark inside a line: read whole.
    assert_eq!(
      look(&format!("{}:{}:5", meta.dev(), meta.ino())),
      Some(serde_json::json!("refused"))
    );
    more.push_str("{\"nonce\":\"n\",\"status\":\"unknown\"}\n");
    std::fs::write(&path, &more).expect("write");
    assert_eq!(look(&mark), None, "waiting again");
  }
  use super::*;
  use crate::ground::journal::Journal;
  use crate::ground::json::Doc;
  use crate::ground::paths::under;
  use crate::read::part::Part;
  use crate::testutil::{texts, TempDir};

  use crate::lines::{ADMISSIONS, DROPS, INBOX, NOTICES, OUTBOX, RELOADS};

  fn u(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
  }

  /// Writes `text` as `dir/name` and reads it through fold `F`.
  fn read_in<F: Fold, R>(dir: &str, name: &str, text: &[u8], f: impl FnOnce(Vec<u8>, &F) -> Result<R>) -> Result<R> {
    std::fs::write(under(dir, &[name]), text).expect("write");
    crate::read::incremental::read::<F, R, JournalError>(&Journal::new(dir), name, f).map(|r| r.expect("the file exists"))
  }

  /// `read_in` a fresh directory.
  fn read_as<F: Fold, R>(name: &str, text: &[u8], f: impl FnOnce(Vec<u8>, &F) -> Result<R>) -> Result<R> {
    let d = TempDir::new();
    read_in(d.path(), name, text, f)
  }

  fn type_error(key: &str) -> JournalError {
    JournalError::Type {
      message: format!("Cannot read properties of null (reading '{key}')"),
      code: None,
    }
  }

  #[test]
  fn inbox_ids_are_the_string_id_tokens_in_line_order() {
    let text = concat!(
      "{\"id\":\"a\"}\n",
      "{\"id\":5}\n",
      "{\"other\":\"x\"}\n",
      "\"id\"\n",
      "[\"a\"]\n",
      // JSON.parse keeps the last of duplicate keys.
      "{\"id\":\"b\",\"id\":\"c\"}\n",
      "{\"id\":\"x\",\"id\":null}\n",
      "\u{feff}{\"id\":\"\\u0064\"}\n",
      "{\"id\":\"a\"}\n",
      "{\"id\":{\"x\":1}}\n",
      "{\"id\":\"e\"}",
    );
    let ids = read_as::<Inbox, _>(INBOX, text.as_bytes(), |file, i| Ok(texts(&file, i.ids()?)));
    // Duplicates stay: the Set made of them keeps the first.
    assert_eq!(ids.expect("read"), ["\"a\"", "\"c\"", "\"\\u0064\"", "\"a\"", "\"e\""]);
  }

  #[test]
  fn each_reader_refuses_a_null_line_by_the_field_it_reads_and_a_bad_line_by_file_and_number() {
    fn refusal<F: Fold>(name: &str, text: &str, probe: fn(&F) -> Result<()>) -> JournalError {
      read_as::<F, ()>(name, text.as_bytes(), |_, f| probe(f)).expect_err("refused")
    }
    let null = "{}\n\"s\"\n5\nnull\n{}\n";
    assert_eq!(refusal::<Inbox>(INBOX, null, |f| f.ids().map(drop)), type_error("id"));
    assert_eq!(refusal::<Outbox>(OUTBOX, null, |f| f.deliveries().map(drop)), type_error("nonce"));
    assert_eq!(
      refusal::<Admissions>(ADMISSIONS, null, |f| f.count_on(None).map(drop)),
      type_error("id")
    );
    let x = Cmp::Str(u("x"));
    let on_x: fn(&Notices) -> Result<()> = |f| f.on(&Cmp::Str(u("x")), &Cmp::Str(u("x"))).map(drop);
    assert_eq!(refusal::<Notices>(NOTICES, null, on_x), type_error("kind"));
    // `some()` stops at `{}` (its kind and date are undefined) before the null line.
    let found = read_as::<Notices, _>(NOTICES, null.as_bytes(), |_, n| n.on(&Cmp::Undefined, &Cmp::Undefined));
    assert_eq!(found, Ok(true));
    assert_eq!(
      read_as::<Notices, _>(NOTICES, b"{\"kind\":\"x\"}\n", |_, n| n.on(&x, &x)),
      Ok(false)
    );
    // readDrops and readReloads hand null on as a value.
    let all = read_as::<AllLines, _>(DROPS, null.as_bytes(), |file, a| Ok(texts(&file, &a.lines)));
    assert_eq!(all.expect("read"), ["{}", "\"s\"", "5", "null", "{}"]);

    // A line that does not parse wins over a null line before it; empty
    // lines are skipped but counted.
    let bad = "{}\nnull\n\n{]\n{}\n";
    for name in crate::lines::RECORD_FILES {
      let want = JournalError::failed(format!("{name}:4: not valid JSON"));
      let got = match name {
        INBOX => refusal::<Inbox>(name, bad, |f| f.ids().map(drop)),
        OUTBOX => refusal::<Outbox>(name, bad, |f| f.deliveries().map(drop)),
        ADMISSIONS => refusal::<Admissions>(name, bad, |f| f.count_on(None).map(drop)),
        NOTICES => refusal::<Notices>(name, bad, on_x),
        _ => refusal::<AllLines>(name, bad, |_| Ok(())),
      };
      assert_eq!(got, want, "{name}");
    }
  }

  #[test]
  fn a_file_of_another_kind_is_refused_by_its_name_without_waiting() {
    let d = TempDir::new();
    let fifo = under(d.path(), &[RELOADS]);
    nix::unistd::mkfifo(fifo.as_str(), nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo");
    let got = crate::read::incremental::read::<AllLines, _, JournalError>(&d.journal(), RELOADS, |_, a| Ok(a.lines.len()));
    assert_eq!(got, Err(JournalError::failed("could not read reloads.jsonl (EFTYPE)")));
    std::fs::create_dir(under(d.path(), &[NOTICES])).expect("dir");
    let got = crate::read::incremental::read::<Notices, _, JournalError>(&d.journal(), NOTICES, |_, n| n.on(&Cmp::Null, &Cmp::Null));
    assert_eq!(got, Err(JournalError::failed("could not read notices.jsonl (EISDIR)")));
    let got = crate::read::incremental::read::<Inbox, _, JournalError>(&d.journal(), INBOX, |_, i| Ok(i.ids()?.len()));
    assert_eq!(got, Ok(None), "a missing file reads as none");
  }

  #[test]
  fn admissions_count_distinct_string_ids_by_the_first_ten_units_of_at() {
    let text = concat!(
      "{\"id\":\"a\",\"at\":\"2026-01-02T10:00:00Z\"}\n",
      "{\"id\":\"a\",\"at\":\"2026-01-02T11:00:00Z\"}\n",
      "{\"id\":\"b\",\"at\":\"2026-01-02\"}\n",
      "{\"id\":\"\\u0062\",\"at\":\"2026-01-02T12:00:00Z\"}\n",
      "{\"id\":\"c\",\"at\":\"2026-01-03T00:00:00Z\"}\n",
      "{\"id\":\"a\",\"at\":\"2026-01-03T00:00:00Z\"}\n",
      "{\"id\":7,\"at\":\"2026-01-02T00:00:00Z\"}\n",
      "{\"id\":\"d\",\"at\":20260102}\n",
      "{\"id\":\"e\"}\n",
      "{\"at\":\"2026-01-02\"}\n",
      "{\"id\":\"f\",\"at\":\"2026-01\"}\n",
      "{\"id\":\"g\",\"at\":\"x\",\"at\":\"2026-01-02\"}\n",
      "[\"2026-01-02\"]\n",
      // Ten UTF-16 code units end inside the emoji's surrogate pair.
      "{\"id\":\"h\",\"at\":\"2026-01-0\u{1f600}\"}\n",
    );
    let mut cut = u("2026-01-0");
    cut.push(0xd83d);
    let dates = [
      Some(u("2026-01-02")),
      Some(u("2026-01-03")),
      Some(u("2026-01")),
      Some(u("2026-01-04")),
      Some(u("2026-01-02T10:00:00Z")),
      Some(cut),
      Some(u("2026-01-0\u{1f600}")),
      None,
    ];
    let counts = read_as::<Admissions, _>(ADMISSIONS, text.as_bytes(), |file, a| {
      assert!(file.is_empty(), "the counts keep no text");
      dates.iter().map(|d| a.count_on(d.as_deref())).collect::<Result<Vec<_>>>()
    });
    assert_eq!(counts.expect("read"), [3, 2, 1, 0, 0, 1, 0, 0]);
  }

  #[test]
  fn a_last_line_without_its_newline_counts_until_it_grows_into_a_bad_one() {
    let d = TempDir::new();
    let count = |text: &str| read_in::<Admissions, _>(d.path(), ADMISSIONS, text.as_bytes(), |_, a| a.count_on(Some(&u("2026-01-02"))));
    let first = "{\"id\":\"a\",\"at\":\"2026-01-02\"}\n";
    assert_eq!(count(&format!("{first}{{\"id\":\"b\",\"at\":\"2026-01-02\"}}")), Ok(2));
    let torn = format!("{first}{{\"id\":\"b\",\"at\":\"2026-01-02");
    assert_eq!(count(&torn), Err(JournalError::failed("admissions.jsonl:2: not valid JSON")));
    assert_eq!(count(&format!("{torn}\"}}\n")), Ok(2));
    assert_eq!(count(&format!("{torn}\"}}\n{{\"id\":\"c\",\"at\":\"2026-01-02\"}}\n")), Ok(3));
  }

  #[test]
  fn notices_compare_kind_and_date_as_strict_equality() {
    let text = concat!(
      "{\"kind\":\"ceiling\",\"date\":\"2026-01-02\"}\n",
      "{\"kind\":1,\"date\":0}\n",
      "{\"kind\":true,\"date\":null}\n",
      "{\"kind\":{\"a\":1},\"date\":\"d\"}\n",
      "{\"kind\":[1],\"date\":\"d\"}\n",
      "{\"kind\":\"\\u0063eiling\",\"date\":\"2026-01-03\"}\n",
      "{\"kind\":\"x\",\"kind\":\"last\",\"date\":\"d\"}\n",
      "{\"kind\":\"only\"}\n",
      "5\n",
    );
    let s = |t: &str| Cmp::Str(u(t));
    let cases = [
      (s("ceiling"), s("2026-01-02"), true),
      (s("ceiling"), s("2026-01-03"), true),
      (s("ceiling"), s("2026-01-04"), false),
      (s("ceiling"), s("2026-01-02T00:00:00Z"), false),
      (Cmp::Num(1.0), Cmp::Num(-0.0), true),
      (Cmp::Num(1.0), s("0"), false),
      (s("1"), Cmp::Num(0.0), false),
      (Cmp::Bool(true), Cmp::Null, true),
      (Cmp::Bool(true), Cmp::Undefined, false),
      (Cmp::Bool(false), Cmp::Null, false),
      (Cmp::Other, s("d"), false),
      (s("last"), s("d"), true),
      (s("x"), s("d"), false),
      (s("only"), Cmp::Undefined, true),
      (s("only"), Cmp::Null, false),
      (Cmp::Undefined, Cmp::Undefined, true),
      (Cmp::Num(f64::NAN), Cmp::Num(f64::NAN), false),
    ];
    let got = read_as::<Notices, _>(NOTICES, text.as_bytes(), |_, n| {
      cases.iter().map(|(k, d, _)| n.on(k, d)).collect::<Result<Vec<_>>>()
    });
    let want: Vec<bool> = cases.iter().map(|c| c.2).collect();
    assert_eq!(got.expect("read"), want);
  }

  #[test]
  fn a_null_notice_line_throws_only_when_some_reaches_it() {
    let text = "{\"kind\":\"k\",\"date\":\"1\"}\nnull\n{\"kind\":\"k\",\"date\":\"2\"}\nnull\n";
    let on = |date: &str| read_as::<Notices, _>(NOTICES, text.as_bytes(), |_, n| n.on(&Cmp::Str(u("k")), &Cmp::Str(u(date))));
    assert_eq!(on("1"), Ok(true));
    assert_eq!(on("2"), Err(type_error("kind")));
    assert_eq!(on("3"), Err(type_error("kind")));
  }

  #[test]
  fn the_outbox_keeps_each_nonce_in_first_seen_order_and_its_last_status() {
    let text = concat!(
      "{\"nonce\":\"n1\",\"status\":\"intent\",\"at\":\"t1\"}\n",
      "{\"nonce\":\"n2\",\"status\":\"intent\",\"at\":\"t2\"}\n",
      "{\"nonce\":\"n1\",\"status\":\"confirmed\",\"at\":\"t3\",\"messageId\":\"m1\"}\n",
      "{\"nonce\":\"n3\",\"status\":\"refused\"}\n",
      // No status: the earlier one carries on.
      "{\"nonce\":\"n2\",\"note\":\"retry\"}\n",
      "{\"nonce\":5,\"status\":\"intent\"}\n",
      "{\"status\":\"intent\"}\n",
      "[\"nonce\"]\n",
      // A later intent or unknown reopens a settled nonce.
      "{\"nonce\":\"n3\",\"status\":\"unknown\"}\n",
      "{\"nonce\":\"\\u006e1\",\"status\":null}\n",
      "{\"nonce\":\"n4\",\"nonce\":\"n5\",\"status\":\"intent\"}\n",
      "{\"nonce\":\"n6\",\"status\":\"intent\",\"status\":\"confirmed\"}\n",
      "\u{feff}{\"nonce\":\"n7\", \"status\":\"intent\" }\n",
    );
    let got = read_as::<Outbox, _>(OUTBOX, text.as_bytes(), |file, o| {
      let file = std::sync::Arc::new(file);
      let d = o.deliveries()?;
      let mut merged = Vec::new();
      for g in d {
        let mut out = Part::new(Vec::new(), 0).expect("room");
        let undefined = o.merged(g, &file, &mut out);
        let out = out.finish().expect("room").text;
        assert_eq!(undefined, g.intent_at_undefined());
        assert!(out.len() <= o.merged_size(g, &file));
        merged.push(String::from_utf8(out).expect("utf-8"));
      }
      let nonces: Vec<String> = d
        .iter()
        .map(|g| String::from_utf8_lossy(o.nonce(g).bytes(&file)).into_owned())
        .collect();
      let open: Vec<bool> = d.iter().map(|g| g.unresolved()).collect();
      let undefined: Vec<bool> = d.iter().map(|g| g.intent_at_undefined()).collect();
      Ok((nonces, open, undefined, merged))
    });
    let (nonces, open, undefined, merged) = got.expect("read");
    assert_eq!(nonces, ["\"n1\"", "\"n2\"", "\"n3\"", "\"n5\"", "\"n6\"", "\"n7\""]);
    assert_eq!(open, [false, true, true, true, false, true]);
    assert_eq!(undefined, [false, false, true, true, true, true]);
    // The merged text parses (as JSON.parse would) to the folded record.
    let n1 = Doc::parse(&merged[0]).expect("n1 parses");
    assert_eq!(n1.get_str("intentAt"), Some(u("t1")), "intentAt never moves");
    assert_eq!(n1.get_str("at"), Some(u("t3")));
    assert_eq!(n1.get_str("messageId"), Some(u("m1")));
    assert!(matches!(n1.get("status"), Some(Scalar::Null)));
    let n2 = Doc::parse(&merged[1]).expect("n2 parses");
    assert_eq!((n2.get_str("status"), n2.get_str("note")), (Some(u("intent")), Some(u("retry"))));
    assert_eq!(n2.get_str("intentAt"), Some(u("t2")));
    assert_eq!(merged[5], "{\"nonce\":\"n7\", \"status\":\"intent\",\"intentAt\":null}");
    for (i, m) in merged.iter().enumerate() {
      assert!(Doc::parse(m).is_some(), "{i}: {m}");
    }
  }

  #[test]
  fn an_outbox_line_that_is_not_utf_8_is_merged_from_its_decoded_text() {
    let mut text = b"{\"nonce\":\"n\",\"at\":\"t\"}\n{\"nonce\":\"n\",\"x\":\"".to_vec();
    text.extend_from_slice(b"\xff\"}\n");
    let merged = read_as::<Outbox, _>(OUTBOX, &text, |file, o| {
      let g = &o.deliveries()?[0];
      let file = std::sync::Arc::new(file);
      let mut out = Part::new(Vec::new(), 0).expect("room");
      o.merged(g, &file, &mut out);
      let out = out.finish().expect("room").text;
      assert!(out.len() <= o.merged_size(g, &file));
      Ok(String::from_utf8(out).expect("utf-8"))
    });
    assert_eq!(
      merged.expect("read"),
      "{\"nonce\":\"n\",\"at\":\"t\",\"intentAt\":\"t\",\"x\":\"\u{fffd}\"}"
    );
  }

  #[test]
  fn turns_count_on_the_first_ten_units_of_a_string_started_at() {
    let day = |t: &str| started_day(&Doc::parse(t).expect("valid"));
    assert_eq!(day("null"), None);
    assert_eq!(day("{\"startedAt\":5}"), Some(None));
    assert_eq!(day("\"2026-01-02\""), Some(None));
    assert_eq!(day("{\"startedAt\":\"2026-01-02T03:04:05Z\"}"), Some(Some(u("2026-01-02"))));
    assert_eq!(day("{\"startedAt\":\"2026\"}"), Some(Some(u("2026"))));
    assert_eq!(
      day("{\"startedAt\":\"x\",\"startedAt\":\"2026-01-02Z\"}"),
      Some(Some(u("2026-01-02")))
    );
    let records = [
      "{\"startedAt\":\"2026-01-02T03:04:05Z\"}",
      "{\"startedAt\":\"2026-01-02\"}",
      "{\"startedAt\":20260102}",
      "{}",
      "[1]",
      "{\"startedAt\":\"2026-01-03T00\"}",
      "{\"startedAt\":\"x\",\"startedAt\":\"2026-01-02Z\"}",
    ];
    let started: Vec<_> = records.iter().map(|t| day(t)).collect();
    let count = |s: &[Option<Option<Vec<u16>>>], d: Option<&str>| count_started_on(s, d.map(u).as_deref());
    assert_eq!(count(&started, Some("2026-01-02")), Ok(3));
    assert_eq!(count(&started, Some("2026-01-03")), Ok(1));
    assert_eq!(count(&started, Some("2026-01-02T03:04:05Z")), Ok(0));
    assert_eq!(count(&started, None), Ok(0));
    assert_eq!(count(&[], Some("2026-01-02")), Ok(0));
    // Every record is read before the filter: a null one anywhere throws.
    for at in [0, started.len()] {
      let mut with_null = started.clone();
      with_null.insert(at, None);
      assert_eq!(count(&with_null, Some("2026-01-02")), Err(type_error("startedAt")));
      assert_eq!(count(&with_null, None), Err(type_error("startedAt")));
    }
  }
}
