//! What the readers of the record files keep and decide: inbox ids, the
//! outbox's latest state per nonce, the daily ceiling's counts, notices, and
//! whole lines for drops and reloads. Each reader is a `Fold`, fed once per
//! appended line (see `incremental`).
//!
//! JavaScript reads fields with `e.id`, so a line that is JSON `null` throws
//! a TypeError when the reader reaches it (after every line parsed: a line
//! that does not parse wins). Every comparison is `===`: strings by UTF-16
//! code units, numbers by value (-0 equals 0), a fresh object never equal.

use std::collections::{HashMap, HashSet};

use crate::error::{JournalError, Result};
use crate::incremental::{Fold, Line, Piece};
use crate::json::{str_eq, units, Doc, Scalar, Top};

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
  if null {
    return Err(JournalError::read_of_null(key));
  }
  Ok(())
}

/// readInboxIds: the string ids' JSON tokens in line order (the JavaScript
/// Set they become keeps the first of duplicates).
#[derive(Clone, Default)]
pub struct Inbox {
  ids: Vec<Piece>,
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
}

impl Inbox {
  pub fn ids(&self) -> Result<&[Piece]> {
    null_read(self.null, "id")?;
    Ok(&self.ids)
  }
}

/// countAdmissionsOn: for each day prefix (`at.slice(0, 10)`), the distinct
/// ids admitted.
#[derive(Clone, Default)]
pub struct Admissions {
  by_day: HashMap<Vec<u16>, HashSet<Vec<u16>>>,
  null: bool,
}

impl Fold for Admissions {
  const SPANS: bool = false;

  fn line(&mut self, l: &Line<'_>) {
    if l.doc.is_null() {
      self.null = true;
    } else if let (Some(id), Some(mut at)) = (l.doc.get_str("id"), l.doc.get_str("at")) {
      at.truncate(10);
      self.by_day.entry(at).or_default().insert(id);
    }
  }
}

impl Admissions {
  /// Only a string date can equal a slice of one.
  pub fn count_on(&self, date: Option<&[u16]>) -> Result<usize> {
    null_read(self.null, "id")?;
    Ok(date.and_then(|d| self.by_day.get(d)).map_or(0, HashSet::len))
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

  fn line(&mut self, l: &Line<'_>) {
    let at = self.seen;
    self.seen += 1;
    if l.doc.is_null() {
      self.first_null.get_or_insert(at);
    } else if let (Some(k), Some(d)) = (field_key(&l.doc, "kind"), field_key(&l.doc, "date")) {
      self.first.entry((k, d)).or_insert(at);
    }
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

/// One nonce of the outbox: where its lines' members are and what the
/// merged record `{...prev, ...e, intentAt}` needs.
#[derive(Clone)]
pub struct Delivery {
  /// The nonce's JSON token, as the Map key.
  pub nonce: Piece,
  /// Its first and last line's members in `Outbox::members`.
  first: usize,
  last: usize,
  /// The first line's `at` value; none: intentAt is undefined.
  intent_at: Option<Piece>,
  /// The first line's `at` is an object or array and no later line has an
  /// `at`: the merged record's `at` and `intentAt` are then one and the
  /// same object (the spreads carry `at` on, `intentAt` is `first.at`),
  /// which two parsed copies are not (#10).
  pub shares_at: bool,
  /// The merged status is "intent" or "unknown" (the last line with a
  /// status decides).
  pub unresolved: bool,
}

/// readOutbox: deliveries in first-seen order of their nonce. Each line's
/// members are one entry of a flat list, linked to the same nonce's next
/// line: a reader of millions of lines keeps no allocation per nonce but
/// its key (#10: the fold is part of the read's peak memory).
#[derive(Clone, Default)]
pub struct Outbox {
  index: HashMap<Box<[u16]>, usize>,
  deliveries: Vec<Delivery>,
  /// A line's members (`"k": v, ...` without the braces) and the entry of
  /// the same nonce's next line (`NONE` for the last).
  members: Vec<(Piece, usize)>,
  null: bool,
}

const NONE: usize = usize::MAX;

impl Fold for Outbox {
  fn line(&mut self, l: &Line<'_>) {
    let doc = &l.doc;
    if doc.is_null() {
      self.null = true;
      return;
    }
    let Some(nonce) = doc.member("nonce").filter(|m| matches!(m.value, Scalar::Str(_))) else {
      return;
    };
    let Scalar::Str(raw) = &nonce.value else { return };
    let key = units(doc.src, raw);
    // A line with a nonce is an object with at least that member.
    let Top::Obj(members) = &doc.top else { return };
    let (Some(a), Some(b)) = (members.first(), members.last()) else {
      return;
    };
    let entry = self.members.len();
    self.members.push((l.piece(a.span.start..b.span.end), NONE));
    let first_at = doc.member("at");
    let at = match self.index.get(&key[..]) {
      Some(&i) => {
        let last = self.deliveries[i].last;
        if let Some(m) = self.members.get_mut(last) {
          m.1 = entry;
        }
        self.deliveries[i].last = entry;
        self.deliveries[i].shares_at &= first_at.is_none();
        i
      }
      None => {
        self.index.insert(key.into_boxed_slice(), self.deliveries.len());
        self.deliveries.push(Delivery {
          nonce: l.piece(nonce.value_span.clone()),
          first: entry,
          last: entry,
          intent_at: first_at.map(|m| l.piece(m.value_span.clone())),
          shares_at: first_at.is_some_and(|m| matches!(m.value, Scalar::Obj | Scalar::Arr)),
          unresolved: false,
        });
        self.deliveries.len() - 1
      }
    };
    if let Some(status) = doc.get("status") {
      self.deliveries[at].unresolved = matches!(status, Scalar::Str(s) if str_eq(doc.src, s, "intent") || str_eq(doc.src, s, "unknown"));
    }
  }
}

impl Outbox {
  pub fn deliveries(&self) -> Result<&[Delivery]> {
    null_read(self.null, "nonce")?;
    Ok(&self.deliveries)
  }

  /// A delivery's lines' members, in order.
  fn members_of<'a>(&'a self, d: &Delivery, file: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut next = d.first;
    std::iter::from_fn(move || {
      let (piece, after) = self.members.get(next)?;
      next = *after;
      Some(piece.bytes(file))
    })
  }

  /// The length of `merged`'s text, so that its room can be reserved
  /// exactly (#10).
  pub fn merged_size(&self, d: &Delivery, file: &[u8]) -> usize {
    const INTENT_AT: usize = ",\"intentAt\":".len();
    let intent_at = d.intent_at.as_ref().map_or(4, |p| p.bytes(file).len());
    let (mut size, mut n) = (2, 0);
    for m in self.members_of(d, file) {
      size += m.len() + INTENT_AT + intent_at;
      n += 1;
    }
    size + n.max(1) - 1
  }

  /// Appends the merged record as one JSON object text whose `JSON.parse`
  /// is `{...prev, ...e, intentAt}` folded over the lines: every line's
  /// members in order, each followed by `intentAt` (the first line's `at`).
  /// JSON.parse keeps a repeated key where it first appeared with its last
  /// value, which is what the spreads do. When the first line has no `at`,
  /// intentAt is undefined, which JSON cannot say: the text carries `null`
  /// there and this returns true, for the caller to set it to undefined.
  pub fn merged(&self, d: &Delivery, file: &[u8], out: &mut Vec<u8>) -> bool {
    let intent_at = d.intent_at.as_ref().map_or(&b"null"[..], |p| p.bytes(file));
    out.push(b'{');
    for m in self.members_of(d, file) {
      out.extend_from_slice(m);
      out.extend_from_slice(b",\"intentAt\":");
      out.extend_from_slice(intent_at);
      out.push(b',');
    }
    if out.last() == Some(&b',') {
      out.pop();
    }
    out.push(b'}');
    d.intent_at.is_none()
  }
}

impl Delivery {
  /// Whether the merged record's intentAt is undefined (set after the parse).
  pub fn intent_at_undefined(&self) -> bool {
    self.intent_at.is_none()
  }
}

/// readDrops, readReloads: every line, for one JSON.parse of them all.
#[derive(Clone, Default)]
pub struct AllLines {
  pub lines: Vec<Piece>,
}

impl Fold for AllLines {
  fn line(&mut self, l: &Line<'_>) {
    self.lines.push(l.all());
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
  let mut n = 0;
  for day in started {
    let Some(day) = day else {
      return Err(JournalError::read_of_null("startedAt"));
    };
    n += usize::from(date.is_some() && day.as_deref() == date);
  }
  Ok(n)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::json::Doc;

  /// Feeds each text as a line whose bytes are `file[offset..]`.
  fn outbox(lines: &[&str]) -> (Vec<u8>, Outbox) {
    let file = lines.join("\n").into_bytes();
    let mut fold = Outbox::default();
    let mut at = 0;
    for (n, text) in lines.iter().enumerate() {
      let doc = Doc::parse(text).expect("valid");
      fold.line(&Line::at(n + 1, doc, at));
      at += text.len() + 1;
    }
    (file, fold)
  }

  #[test]
  fn merged_records_are_sized_exactly() {
    let (file, fold) = outbox(&[
      r#"{"nonce":"a","status":"intent","at":"t1"}"#,
      r#"{"nonce":"b","status":"intent"}"#,
      r#"{"nonce":"a","status":"confirmed","at":"t2","messageId":"m"}"#,
      r#"{"nonce":"a","status":"unknown"}"#,
    ]);
    let d = fold.deliveries().expect("no null line");
    let texts: Vec<(String, bool, usize)> = d
      .iter()
      .map(|g| {
        let mut out = Vec::new();
        let undefined = fold.merged(g, &file, &mut out);
        (String::from_utf8(out).expect("utf-8"), undefined, fold.merged_size(g, &file))
      })
      .collect();
    assert_eq!(
      texts[0].0,
      r#"{"nonce":"a","status":"intent","at":"t1","intentAt":"t1","nonce":"a","status":"confirmed","at":"t2","messageId":"m","intentAt":"t1","nonce":"a","status":"unknown","intentAt":"t1"}"#
    );
    assert_eq!(texts[1].0, r#"{"nonce":"b","status":"intent","intentAt":null}"#);
    assert!(!texts[0].1 && texts[1].1);
    for (text, _, size) in &texts {
      assert_eq!(text.len(), *size);
    }
    assert!(d[0].unresolved && d[1].unresolved);
  }

  use crate::testutil::TempDir;

  /// Each nonce's `shares_at`, in first-seen order.
  fn shares(lines: &str) -> Vec<bool> {
    let d = TempDir::new();
    std::fs::write(crate::paths::under(d.path(), &["outbox.jsonl"]), lines).expect("write");
    crate::incremental::read::<Outbox, _, JournalError>(d.path(), "outbox.jsonl", |_, o| {
      Ok(o.deliveries()?.iter().map(|g| g.shares_at).collect())
    })
    .expect("read")
    .expect("file")
  }

  #[test]
  fn intent_at_is_the_first_lines_at_object_until_a_later_at() {
    let lines = [
      r#"{"nonce":"a","at":{"t":1}}"#,
      r#"{"nonce":"a","status":"unknown"}"#,
      r#"{"nonce":"b","at":[1]}"#,
      r#"{"nonce":"b","at":[1]}"#,
      r#"{"nonce":"c","at":"x"}"#,
      r#"{"nonce":"d"}"#,
      r#"{"nonce":"e","at":{"t":1},"at":5}"#,
    ];
    assert_eq!(shares(&(lines.join("\n") + "\n")), [true, false, false, false, false]);
  }
}
