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

/// One nonce of the outbox: its lines' members in order and what the merged
/// record `{...prev, ...e, intentAt}` needs.
#[derive(Clone)]
pub struct Delivery {
  /// The nonce's JSON token, as the Map key.
  pub nonce: Piece,
  members: Vec<Piece>,
  /// The first line's `at` value; none: intentAt is undefined.
  intent_at: Option<Piece>,
  /// The merged status is "intent" or "unknown" (the last line with a
  /// status decides).
  pub unresolved: bool,
}

/// readOutbox: deliveries in first-seen order of their nonce.
#[derive(Clone, Default)]
pub struct Outbox {
  index: HashMap<Vec<u16>, usize>,
  deliveries: Vec<Delivery>,
  null: bool,
}

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
    let at = match self.index.get(&key) {
      Some(&i) => i,
      None => {
        self.index.insert(key, self.deliveries.len());
        self.deliveries.push(Delivery {
          nonce: l.piece(nonce.value_span.clone()),
          members: Vec::new(),
          intent_at: doc.member("at").map(|m| l.piece(m.value_span.clone())),
          unresolved: false,
        });
        self.deliveries.len() - 1
      }
    };
    let d = &mut self.deliveries[at];
    if let Top::Obj(members) = &doc.top {
      if let (Some(a), Some(b)) = (members.first(), members.last()) {
        d.members.push(l.piece(a.span.start..b.span.end));
      }
    }
    if let Some(status) = doc.get("status") {
      d.unresolved = matches!(status, Scalar::Str(s) if str_eq(doc.src, s, "intent") || str_eq(doc.src, s, "unknown"));
    }
  }
}

impl Outbox {
  pub fn deliveries(&self) -> Result<&[Delivery]> {
    null_read(self.null, "nonce")?;
    Ok(&self.deliveries)
  }
}

impl Delivery {
  /// Appends the merged record as one JSON object text whose `JSON.parse`
  /// is `{...prev, ...e, intentAt}` folded over the lines: every line's
  /// members in order, each followed by `intentAt` (the first line's `at`).
  /// JSON.parse keeps a repeated key where it first appeared with its last
  /// value, which is what the spreads do. When the first line has no `at`,
  /// intentAt is undefined, which JSON cannot say: the text carries `null`
  /// there and this returns true, for the caller to set it to undefined.
  pub fn merged(&self, file: &[u8], out: &mut Vec<u8>) -> bool {
    let intent_at = self.intent_at.as_ref().map_or(&b"null"[..], |p| p.bytes(file));
    out.push(b'{');
    for m in &self.members {
      out.extend_from_slice(m.bytes(file));
      out.extend_from_slice(b",\"intentAt\":");
      out.extend_from_slice(intent_at);
      out.push(b',');
    }
    if out.last() == Some(&b',') {
      out.pop();
    }
    out.push(b'}');
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

/// `[p1,p2,...]`: pieces of JSON text as one JSON array text.
pub fn array_text(file: &[u8], pieces: &[Piece]) -> Vec<u8> {
  array_of(pieces.iter().map(|p| p.bytes(file)))
}

/// `[t1,t2,...]` of JSON texts.
pub fn array_of<'a>(texts: impl Iterator<Item = &'a [u8]> + Clone) -> Vec<u8> {
  let mut out = Vec::with_capacity(texts.clone().map(|t| t.len() + 1).sum::<usize>() + 2);
  out.push(b'[');
  for t in texts {
    out.extend_from_slice(t);
    out.push(b',');
  }
  if out.len() > 1 {
    out.pop();
  }
  out.push(b']');
  out
}

/// countTurnsOn over parsed turn records: `typeof t.startedAt === "string"
/// && t.startedAt.slice(0, 10) === date`.
pub fn count_started_on(docs: &[Doc<'_>], date: Option<&[u16]>) -> Result<usize> {
  let mut n = 0;
  for doc in docs {
    null_read(doc.is_null(), "startedAt")?;
    if let (Some(date), Some(mut started)) = (date, doc.get_str("startedAt")) {
      started.truncate(10);
      n += usize::from(started == date);
    }
  }
  Ok(n)
}

#[cfg(test)]
mod tests {
  use super::*;

  fn fold<F: Fold>(lines: &[&str]) -> F {
    let mut f = F::default();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let d = crate::testutil::TempDir::new();
    std::fs::write(format!("{}/x.jsonl", d.path()), text).expect("write");
    crate::incremental::read::<F, _>(d.path(), "x.jsonl", |_, got| {
      f = got.clone();
      Ok(())
    })
    .expect("read");
    f
  }

  fn u(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
  }

  #[test]
  fn inbox_keeps_string_id_tokens() {
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/x.jsonl", d.path());
    std::fs::write(
      &path,
      "{\"id\":\"1\"}\n{\"id\":2}\n\"str\"\n[1]\n{\"id\":\"\\u0033\",\"id\":\"4\"}\n",
    )
    .expect("write");
    let text = crate::incremental::read::<Inbox, _>(d.path(), "x.jsonl", |bytes, inbox| {
      let ids = inbox.ids()?.to_vec();
      Ok(bytes.into_array(&ids))
    });
    assert_eq!(
      text.expect("read").map(|t| String::from_utf8(t).expect("utf-8")),
      Some("[\"1\",\"4\"]".to_string())
    );
    assert!(fold::<Inbox>(&["null"]).ids().is_err());
  }

  #[test]
  fn admissions_count_distinct_ids_by_code_units() {
    let a: Admissions = fold(&[
      r#"{"id":"a","at":"2021-01-01T00"}"#,
      r#"{"id":"a","at":"2021-01-01"}"#,
      r#"{"id":"b","at":"2021-01-01x"}"#,
      r#"{"id":"c","at":"2021-01-0"}"#,
      r#"{"id":"d","at":"2021-01-0\ud83d\ude00"}"#,
    ]);
    assert_eq!(a.count_on(Some(&u("2021-01-01"))), Ok(2));
    assert_eq!(a.count_on(Some(&[u("2021-01-0"), vec![0xd83d]].concat())), Ok(1));
    assert_eq!(a.count_on(None), Ok(0));
    assert_eq!(fold::<Admissions>(&["null"]).count_on(None), Err(JournalError::read_of_null("id")));
  }

  #[test]
  fn notices_stop_at_the_first_match() {
    let n: Notices = fold(&[r#"{"kind":"c","date":"d"}"#, "null", r#"{"kind":-0}"#]);
    assert_eq!(n.on(&Cmp::Str(u("c")), &Cmp::Str(u("d"))), Ok(true));
    assert_eq!(n.on(&Cmp::Str(u("x")), &Cmp::Str(u("d"))), Err(JournalError::read_of_null("kind")));
    assert_eq!(n.on(&Cmp::Num(0.0), &Cmp::Undefined), Err(JournalError::read_of_null("kind")));
    let n: Notices = fold(&["{}", r#"{"kind":-0,"date":[]}"#, r#"{"kind":true,"date":null}"#]);
    assert_eq!(n.on(&Cmp::Undefined, &Cmp::Undefined), Ok(true));
    assert_eq!(n.on(&Cmp::Num(0.0), &Cmp::Other), Ok(false));
    assert_eq!(n.on(&Cmp::Bool(true), &Cmp::Null), Ok(true));
    assert_eq!(n.on(&Cmp::Num(f64::NAN), &Cmp::Null), Ok(false));
  }

  #[test]
  fn outbox_merges_as_spreads_do() {
    let d = crate::testutil::TempDir::new();
    std::fs::write(
      format!("{}/x.jsonl", d.path()),
      "{\"nonce\":\"a\",\"status\":\"intent\",\"at\":\"t1\"}\n{\"nonce\":\"b\",\"status\":\"intent\"}\n{\"status\":\"confirmed\",\"nonce\":\"a\",\"at\":\"t2\"}\n",
    )
    .expect("write");
    let got = crate::incremental::read::<Outbox, _>(d.path(), "x.jsonl", |bytes, o| {
      let file = bytes.file();
      Ok(
        o.deliveries()?
          .iter()
          .map(|g| {
            let mut t = Vec::new();
            let undefined = g.merged(file, &mut t);
            (
              String::from_utf8(g.nonce.bytes(file).to_vec()).expect("utf-8"),
              String::from_utf8(t).expect("utf-8"),
              undefined,
              g.unresolved,
            )
          })
          .collect::<Vec<_>>(),
      )
    });
    let got = got.expect("read").expect("exists");
    assert_eq!(got[0].0, "\"a\"");
    assert_eq!(
      got[0].1,
      r#"{"nonce":"a","status":"intent","at":"t1","intentAt":"t1","status":"confirmed","nonce":"a","at":"t2","intentAt":"t1"}"#
    );
    assert!(!got[0].2 && !got[0].3);
    assert_eq!(got[1].1, r#"{"nonce":"b","status":"intent","intentAt":null}"#);
    assert!(got[1].2 && got[1].3);
  }
}
