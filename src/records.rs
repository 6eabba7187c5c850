//! What the readers of the record files decide, on parsed lines: inbox ids,
//! the outbox's latest state per nonce, the daily ceiling's counts, notices.
//! JavaScript reads fields with `e.id`, so a line that is JSON `null` throws
//! a TypeError when reached, and every comparison is `===`: strings by
//! UTF-16 code units, numbers by value, a fresh object never equal.

use std::collections::HashSet;

use crate::error::{JournalError, Result};
use crate::json::{str_eq, units, Doc, Scalar};

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

/// `doc[key] === want`.
pub fn field_is(doc: &Doc<'_>, key: &str, want: &Cmp) -> bool {
  match (doc.get(key), want) {
    (None, Cmp::Undefined) => true,
    (Some(Scalar::Null), Cmp::Null) => true,
    (Some(Scalar::Bool(a)), Cmp::Bool(b)) => a == b,
    (Some(Scalar::Num(a)), Cmp::Num(b)) => a == b,
    (Some(Scalar::Str(s)), Cmp::Str(b)) => units(doc.src, s) == *b,
    _ => false,
  }
}

/// Reading a field of each line in turn: the TypeError a `null` line raises.
fn fields_of(doc: &Doc<'_>, key: &str) -> Result<()> {
  if doc.is_null() {
    return Err(JournalError::read_of_null(key));
  }
  Ok(())
}

/// `typeof doc[key] === "string" && doc[key].slice(0, 10) === date`.
fn day_is(doc: &Doc<'_>, key: &str, date: &[u16]) -> bool {
  match doc.get(key) {
    Some(Scalar::Str(s)) => {
      let u = units(doc.src, s);
      u[..u.len().min(10)] == *date
    }
    _ => false,
  }
}

/// readInboxIds: the distinct string ids, first-seen order.
pub fn inbox_ids(docs: &[Doc<'_>]) -> Result<Vec<Vec<u16>>> {
  let mut seen = HashSet::new();
  let mut ids = Vec::new();
  for doc in docs {
    fields_of(doc, "id")?;
    if let Some(id) = doc.get_str("id") {
      if seen.insert(id.clone()) {
        ids.push(id);
      }
    }
  }
  Ok(ids)
}

/// countAdmissionsOn: distinct ids of admissions whose `at` starts with
/// `date` (only a string date can match).
pub fn count_admissions_on(docs: &[Doc<'_>], date: Option<&[u16]>) -> Result<usize> {
  let mut ids = HashSet::new();
  for doc in docs {
    fields_of(doc, "id")?;
    if let (Some(date), Some(id)) = (date, doc.get_str("id")) {
      if day_is(doc, "at", date) {
        ids.insert(id);
      }
    }
  }
  Ok(ids.len())
}

/// countTurnsOn over parsed turn records.
pub fn count_started_on(docs: &[Doc<'_>], date: Option<&[u16]>) -> Result<usize> {
  let mut n = 0;
  for doc in docs {
    fields_of(doc, "startedAt")?;
    if date.is_some_and(|d| day_is(doc, "startedAt", d)) {
      n += 1;
    }
  }
  Ok(n)
}

/// noticeOn: whether some line has `kind === kind && date === date`,
/// stopping at the first match (a `null` line after it is never read).
pub fn notice_on(docs: &[Doc<'_>], kind: &Cmp, date: &Cmp) -> Result<bool> {
  for doc in docs {
    fields_of(doc, "kind")?;
    if field_is(doc, "kind", kind) && field_is(doc, "date", date) {
      return Ok(true);
    }
  }
  Ok(false)
}

/// One nonce of the outbox: its lines in order and what the merged record
/// `{...prev, ...e, intentAt}` says.
pub struct Delivery {
  pub nonce: Vec<u16>,
  lines: Vec<usize>,
}

/// readOutbox's grouping: deliveries in first-seen order of their nonce.
pub fn deliveries(docs: &[Doc<'_>]) -> Result<Vec<Delivery>> {
  let mut out: Vec<Delivery> = Vec::new();
  let mut index: std::collections::HashMap<Vec<u16>, usize> = std::collections::HashMap::new();
  for (i, doc) in docs.iter().enumerate() {
    fields_of(doc, "nonce")?;
    let Some(nonce) = doc.get_str("nonce") else { continue };
    match index.get(&nonce) {
      Some(&at) => out[at].lines.push(i),
      None => {
        index.insert(nonce.clone(), out.len());
        out.push(Delivery { nonce, lines: vec![i] });
      }
    }
  }
  Ok(out)
}

impl Delivery {
  /// The merged record's `status === "intent" || status === "unknown"`:
  /// the last line that has a status decides.
  pub fn unresolved(&self, docs: &[Doc<'_>]) -> bool {
    self.lines.iter().rev().find_map(|&i| {
      let doc = &docs[i];
      doc
        .get("status")
        .map(|s| matches!(s, Scalar::Str(raw) if str_eq(doc.src, raw, "intent") || str_eq(doc.src, raw, "unknown")))
    }) == Some(true)
  }

  /// The merged record as one JSON object text whose `JSON.parse` is
  /// `{...prev, ...e, intentAt}` folded over the lines: every line's members
  /// in order, each followed by `intentAt` (the first line's `at`). JSON.parse
  /// keeps a repeated key where it first appeared with its last value, which
  /// is what the spreads do. When the first line has no `at`, intentAt is
  /// undefined, which JSON cannot say: the text carries `null` there and the
  /// second value is true, for the caller to set it to undefined.
  pub fn merged_text(&self, docs: &[Doc<'_>]) -> (String, bool) {
    let first = &docs[self.lines[0]];
    let (intent_at, undefined) = match first.member("at") {
      Some(m) => (&first.src[m.value_span.clone()], false),
      None => ("null", true),
    };
    let mut text = String::from("{");
    for &i in &self.lines {
      let doc = &docs[i];
      if let crate::json::Top::Obj(members) = &doc.top {
        if let (Some(a), Some(b)) = (members.first(), members.last()) {
          text.push_str(&doc.src[a.span.start..b.span.end]);
          text.push(',');
        }
      }
      text.push_str("\"intentAt\":");
      text.push_str(intent_at);
      text.push(',');
    }
    text.pop();
    text.push('}');
    (text, undefined)
  }
}

/// The texts of all lines as one JSON array text, for one `JSON.parse`
/// that returns what parsing each line would (each line already parsed).
pub fn array_text<'a>(texts: impl Iterator<Item = &'a str>) -> String {
  let mut out = String::from("[");
  for t in texts {
    out.push_str(t);
    out.push(',');
  }
  if out.len() > 1 {
    out.pop();
  }
  out.push(']');
  out
}

#[cfg(test)]
mod tests {
  use super::*;

  fn docs(lines: &[&'static str]) -> Vec<Doc<'static>> {
    lines.iter().map(|l| Doc::parse(l).expect("valid")).collect()
  }

  fn u(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
  }

  #[test]
  fn inbox_ids_distinct_strings_only() {
    let d = docs(&[
      r#"{"id":"1"}"#,
      r#"{"id":2}"#,
      r#"{"id":"1"}"#,
      r#""str""#,
      r#"[1]"#,
      r#"{"id":"\u0033"}"#,
    ]);
    assert_eq!(inbox_ids(&d).expect("ids"), vec![u("1"), u("3")]);
    assert_eq!(inbox_ids(&docs(&["null"])), Err(JournalError::read_of_null("id")));
  }

  #[test]
  fn admissions_slice_code_units() {
    let d = docs(&[
      r#"{"id":"a","at":"2021-01-01T00"}"#,
      r#"{"id":"a","at":"2021-01-01"}"#,
      r#"{"id":"b","at":"2021-01-01x"}"#,
      r#"{"id":"c","at":"2021-01-0"}"#,
    ]);
    assert_eq!(count_admissions_on(&d, Some(&u("2021-01-01"))).expect("count"), 2);
    assert_eq!(count_admissions_on(&d, None).expect("count"), 0);
  }

  #[test]
  fn notice_stops_at_first_match() {
    let d = docs(&[r#"{"kind":"c","date":"d"}"#, "null"]);
    assert_eq!(notice_on(&d, &Cmp::Str(u("c")), &Cmp::Str(u("d"))), Ok(true));
    assert_eq!(
      notice_on(&d, &Cmp::Str(u("x")), &Cmp::Str(u("d"))),
      Err(JournalError::read_of_null("kind"))
    );
    assert_eq!(notice_on(&docs(&["{}"]), &Cmp::Undefined, &Cmp::Undefined), Ok(true));
    assert_eq!(notice_on(&docs(&[r#"{"kind":-0}"#]), &Cmp::Num(0.0), &Cmp::Undefined), Ok(true));
  }

  #[test]
  fn outbox_merge_text() {
    let d = docs(&[
      r#"{"nonce":"a","status":"intent","at":"t1"}"#,
      r#"{"nonce":"b","status":"intent"}"#,
      r#"{"status":"confirmed","nonce":"a","at":"t2"}"#,
    ]);
    let g = deliveries(&d).expect("groups");
    assert_eq!(g.len(), 2);
    assert_eq!(
      g[0].merged_text(&d).0,
      r#"{"nonce":"a","status":"intent","at":"t1","intentAt":"t1","status":"confirmed","nonce":"a","at":"t2","intentAt":"t1"}"#
    );
    assert!(!g[0].unresolved(&d));
    assert_eq!(
      g[1].merged_text(&d),
      (r#"{"nonce":"b","status":"intent","intentAt":null}"#.to_string(), true)
    );
    assert!(g[1].unresolved(&d));
  }
}
