//! readOutbox and unresolvedOutbox's fold: each nonce's lines, merged as
//! the reference's spreads merge them (`{...prev, ...e, intentAt}`), kept
//! as pieces of the file, and the deliveries still unresolved.

use std::ops::Range;

use super::null_read;
use crate::ground::error::{JournalError, Result};
use crate::ground::json::{str_eq, units, Scalar, Top};
use crate::read::incremental::{Fold, Line, Packed, Piece, Pieces};
use crate::read::keys::Keys;
use crate::read::part::{Part, Shared};

/// The outbox's statuses, as the reference's `OUTBOX_STATUS` lists them:
/// the addon exports this array (frozen), and index.js checks an
/// `appendOutbox` entry against it.
pub const OUTBOX_STATUS: [&str; 4] = ["intent", "confirmed", "refused", "unknown"];

/// One nonce of the outbox: where its lines' members are and what the
/// merged record `{...prev, ...e, intentAt}` needs; its nonce and its first
/// line's `at` are in the outbox's `nonces` and `intent_ats` at `i` (#32:
/// 20 bytes a delivery).
#[derive(Clone, Copy)]
pub struct Delivery {
  i: u32,
  /// Its first and last line's members in `Outbox::members`.
  first: u32,
  last: u32,
  /// Its place in `Outbox::open` while its merged status is "intent" or
  /// "unknown" (the last line with a status decides); `NONE` otherwise.
  open_at: u32,
  /// The first line's `at` is an object or array and no later line has an
  /// `at`: the merged record's `at` and `intentAt` are then one and the
  /// same object (the spreads carry `at` on, `intentAt` is `first.at`),
  /// which two parsed copies are not (#10).
  pub shares_at: bool,
  /// The first line has an `at`; without one intentAt is undefined.
  has_at: bool,
}

/// readOutbox: deliveries in first-seen order of their nonce. Each line's
/// members are one entry of a flat list, linked to the same nonce's next
/// line, and the nonces are one arena (`Keys`): a reader of millions of
/// lines keeps no allocation per nonce (#10, #32: the fold is part of the
/// read's peak memory, and what the cache keeps).
#[derive(Clone, Default)]
pub struct Outbox {
  /// The nonces' units: key `i` is delivery `i`'s.
  index: Keys,
  deliveries: Vec<Delivery>,
  /// Each delivery's nonce token (the Map key) and first line's `at`
  /// value (empty where it has none).
  nonces: Pieces,
  intent_ats: Pieces,
  /// A line's members (`"k": v, ...` without the braces), and the entry of
  /// the same nonce's next line (`NONE` for the last).
  members: Pieces,
  next: Vec<u32>,
  /// The unresolved deliveries, in no order: unresolvedOutbox asks for a
  /// few thousand of a million deliveries, and a walk of them all cost a
  /// tenth of its call (#25).
  open: Vec<u32>,
  null: bool,
  /// More than 2^32 nonces or lines: never reached, since memory runs out
  /// first; refused rather than answered wrong.
  full: bool,
}

const NONE: u32 = u32::MAX;

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
    // A line with a nonce is an object with at least that member.
    let Top::Obj(members) = &doc.top else { return };
    let (Some(a), Some(b)) = (members.first(), members.last()) else {
      return;
    };
    let (Some((at, new)), Ok(entry)) = (self.index.insert(&units(doc.src, raw)), u32::try_from(self.next.len())) else {
      self.full = true;
      return;
    };
    if entry == NONE {
      self.full = true;
      return;
    }
    self.members.push(l.piece(a.span.start..b.span.end));
    self.next.push(NONE);
    let first_at = doc.member("at");
    if new {
      self.nonces.push(l.piece(nonce.value_span.clone()));
      self
        .intent_ats
        .push(first_at.map_or(Piece::Span(0..0), |m| l.piece(m.value_span.clone())));
      self.deliveries.push(Delivery {
        i: at as u32,
        first: entry,
        last: entry,
        shares_at: first_at.is_some_and(|m| matches!(m.value, Scalar::Obj | Scalar::Arr)),
        has_at: first_at.is_some(),
        open_at: NONE,
      });
    } else if let Some(d) = self.deliveries.get_mut(at) {
      if let Some(n) = self.next.get_mut(d.last as usize) {
        *n = entry;
      }
      d.last = entry;
      d.shares_at &= first_at.is_none();
    }
    if let Some(status) = doc.get("status") {
      let open = matches!(status, Scalar::Str(s) if str_eq(doc.src, s, "intent") || str_eq(doc.src, s, "unknown"));
      self.set_open(at, open);
    }
  }

  fn heap(&self) -> usize {
    self.index.heap()
      + self.deliveries.capacity() * size_of::<Delivery>()
      + self.nonces.heap()
      + self.intent_ats.heap()
      + self.members.heap()
      + (self.next.capacity() + self.open.capacity()) * size_of::<u32>()
  }

  fn shrink(&mut self) {
    self.index.shrink();
    crate::read::room::shrink(&mut self.deliveries);
    self.nonces.shrink();
    self.intent_ats.shrink();
    self.members.shrink();
    crate::read::room::shrink(&mut self.next);
    crate::read::room::shrink(&mut self.open);
  }
}

impl Outbox {
  fn answerable(&self) -> Result<()> {
    null_read(self.null, "nonce")?;
    match self.full {
      true => Err(JournalError::failed("could not read outbox.jsonl (ENOMEM)")),
      false => Ok(()),
    }
  }

  pub fn deliveries(&self) -> Result<&[Delivery]> {
    self.answerable()?;
    Ok(&self.deliveries)
  }

  /// The unresolved deliveries, in first-seen order.
  pub fn unresolved(&self) -> Result<Vec<&Delivery>> {
    self.answerable()?;
    Ok(self.open_in_order().filter_map(|i| self.deliveries.get(i)).collect())
  }

  fn open_in_order(&self) -> impl Iterator<Item = usize> {
    let mut open = self.open.clone();
    open.sort_unstable();
    open.into_iter().map(|i| i as usize)
  }

  /// A delivery's nonce token.
  pub fn nonce(&self, d: &Delivery) -> Piece {
    self.nonces.get(d.i as usize).unwrap_or(Piece::Span(0..0))
  }

  /// A delivery's nonce token's bytes.
  pub fn nonce_bytes<'a>(&'a self, d: &Delivery, file: &'a [u8]) -> &'a [u8] {
    self.nonces.bytes(d.i as usize, file)
  }

  fn intent_at(&self, d: &Delivery) -> Option<Piece> {
    d.has_at.then(|| self.intent_ats.get(d.i as usize)).flatten()
  }

  /// Marks delivery `at` unresolved or not, keeping `open` in step.
  fn set_open(&mut self, at: usize, open: bool) {
    let Some(d) = self.deliveries.get_mut(at) else { return };
    if d.unresolved() == open {
      return;
    }
    if open {
      d.open_at = self.open.len() as u32;
      self.open.push(at as u32);
    } else {
      let place = std::mem::replace(&mut d.open_at, NONE) as usize;
      if place < self.open.len() {
        self.open.swap_remove(place);
        if let Some(&moved) = self.open.get(place) {
          if let Some(m) = self.deliveries.get_mut(moved as usize) {
            m.open_at = place as u32;
          }
        }
      }
    }
  }

  /// The deliveries `picked`, alone and with their pieces moved into
  /// `packed`'s bytes: an outbox whose merged records are theirs, made
  /// from the bytes `read_picked` kept. `None` if a piece was not kept.
  pub fn packed(&self, picked: &[&Delivery], packed: &Packed) -> Option<Outbox> {
    let mut out = Outbox::default();
    for d in picked {
      let first = out.next.len() as u32;
      for m in self.members_of(d) {
        let at = out.next.len() as u32;
        if let Some(prev) = out.next.last_mut().filter(|_| at > first) {
          *prev = at;
        }
        out.members.push(packed.piece(&m)?);
        out.next.push(NONE);
      }
      let i = out.deliveries.len();
      // Not kept, and never asked for: unresolvedOutbox's records carry
      // no Map key.
      out.nonces.push(packed.piece(&self.nonce(d)).unwrap_or(Piece::Owned("".into())));
      out.intent_ats.push(match self.intent_at(d) {
        Some(p) => packed.piece(&p)?,
        None => Piece::Span(0..0),
      });
      out.deliveries.push(Delivery {
        i: i as u32,
        first,
        last: (out.next.len() as u32).saturating_sub(1),
        shares_at: d.shares_at,
        has_at: d.has_at,
        open_at: NONE,
      });
      out.set_open(i, d.unresolved());
    }
    Some(out)
  }

  /// The bytes of the file that the unresolved deliveries' merged records
  /// are made of (their lines' members and intentAt), for
  /// `incremental::read_picked` (#25).
  pub fn unresolved_spans(&self) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    for d in self.open_in_order().filter_map(|i| self.deliveries.get(i)) {
      for piece in self.members_of(d).chain(self.intent_at(d)) {
        if let Piece::Span(r) = piece {
          spans.push(r);
        }
      }
    }
    spans
  }

  /// A delivery's lines' members, in order.
  fn members_of<'a>(&'a self, d: &Delivery) -> impl Iterator<Item = Piece> + 'a {
    let mut next = d.first;
    std::iter::from_fn(move || {
      let piece = self.members.get(next as usize)?;
      next = self.next.get(next as usize).copied().unwrap_or(NONE);
      Some(piece)
    })
  }

  /// The length of `merged`'s text with every line's members (#10), so
  /// that its room can be reserved at once: exact where the record is not
  /// merged once, and at least its length where it is (#47).
  pub fn merged_size(&self, d: &Delivery, file: &[u8]) -> usize {
    const INTENT_AT: usize = ",\"intentAt\":".len();
    let intent_at = self.intent_at(d).map_or(4, |p| p.bytes(file).len());
    let (mut size, mut n) = (2, 0);
    for m in self.members_of(d) {
      size += m.bytes(file).len() + INTENT_AT + intent_at;
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
  pub fn merged(&self, d: &Delivery, file: &Shared, out: &mut Part) -> bool {
    let intent_at = self.intent_at(d);
    if let Some(once) = self.merged_once(d, file) {
      out.push(b'{');
      for (k, (key, value)) in once.iter().enumerate() {
        if k > 0 {
          out.push(b',');
        }
        out.extend(key);
        out.push(b':');
        out.extend(value);
      }
      out.push(b'}');
      return intent_at.is_none();
    }
    out.push(b'{');
    for (k, m) in self.members_of(d).enumerate() {
      if k > 0 {
        out.push(b',');
      }
      out.piece(&m, file);
      out.extend(b",\"intentAt\":");
      match &intent_at {
        Some(at) => out.piece(at, file),
        None => out.extend(b"null"),
      }
    }
    out.push(b'}');
    intent_at.is_none()
  }
}

/// Sets `key` to `value` in a record merged once: a key seen before keeps
/// its place; `None` past `ONCE_MAX` keys.
fn set<'a>(once: &mut Vec<(&'a [u8], &'a [u8])>, key: &'a [u8], value: &'a [u8]) -> Option<()> {
  match once.iter().position(|(k, _)| *k == key) {
    Some(at) => once[at].1 = value,
    None if once.len() == ONCE_MAX => return None,
    None => once.push((key, value)),
  }
  Some(())
}

/// Keys at most in a record merged once (`Outbox::merged_once`): each is
/// looked for among those before it.
const ONCE_MAX: usize = 64;

impl Outbox {
  /// The merged record of a delivery of several lines, each key once, at
  /// its first place with its last value (#47): what JSON.parse makes of
  /// every line's members in a row, and what the spreads make, without
  /// handing JSON.parse a repeated key, which takes V8's slow path (a
  /// readOutbox of 100,000 deliveries of two lines each: 3 times the time
  /// of the same records' text without repeats). `None` for a delivery of
  /// one line (its text has no repeat that its line did not have), where a
  /// key holds an escape (two keys' bytes may then differ where their names
  /// do not), where a line's members are not under `HUGE` bytes (left to
  /// the part, which shares a huge string), or past `ONCE_MAX` keys: the
  /// caller then writes every line's members, repeats and all.
  fn merged_once<'a>(&'a self, d: &Delivery, file: &'a [u8]) -> Option<Vec<(&'a [u8], &'a [u8])>> {
    if d.first == d.last {
      return None;
    }
    let intent_at: &[u8] = match d.has_at {
      true => self.intent_ats.bytes(d.i as usize, file),
      false => b"null",
    };
    let mut once: Vec<(&[u8], &[u8])> = Vec::with_capacity(16);
    let mut next = d.first;
    while let Some(i) = (next != NONE).then_some(next as usize) {
      let text = self.members.bytes(i, file);
      if text.len() >= crate::read::part::HUGE {
        return None;
      }
      for m in crate::ground::json::members_of(text)? {
        if m.key.escaped {
          return None;
        }
        set(&mut once, text.get(m.span.start..m.key.span.end + 1)?, text.get(m.value_span)?)?;
      }
      set(&mut once, b"\"intentAt\"", intent_at)?;
      next = self.next.get(i).copied().unwrap_or(NONE);
    }
    Some(once)
  }
}

impl Delivery {
  /// Whether its merged status is "intent" or "unknown".
  pub fn unresolved(&self) -> bool {
    self.open_at != NONE
  }

  /// Whether the merged record's intentAt is undefined (set after the parse).
  pub fn intent_at_undefined(&self) -> bool {
    !self.has_at
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::json::Doc;
  use crate::ground::paths::under;

  use crate::testutil::TempDir;

  /// Writes `text` as a fresh journal's outbox.jsonl and reads it through the fold.
  fn read_outbox<R>(text: &[u8], f: impl FnOnce(Vec<u8>, &Outbox) -> Result<R>) -> Result<R> {
    let d = TempDir::new();
    std::fs::write(under(d.path(), &["outbox.jsonl"]), text).expect("write");
    crate::read::incremental::read::<Outbox, R, JournalError>(&d.journal(), "outbox.jsonl", f).map(|r| r.expect("the file exists"))
  }

  /// Feeds each text as a line whose bytes are `file[offset..]`.
  fn outbox(lines: &[&str]) -> (Shared, Outbox) {
    let file = std::sync::Arc::new(lines.join("\n").into_bytes());
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
  fn merged_records_keep_repeats_where_a_key_has_an_escape_or_there_are_many() {
    let merged = |lines: &[&str]| {
      let (file, fold) = outbox(lines);
      let d = fold.deliveries().expect("no null line");
      let mut out = Part::new(Vec::new(), 0).expect("room");
      fold.merged(&d[0], &file, &mut out);
      let text = String::from_utf8(out.finish().expect("room").text).expect("utf-8");
      assert_eq!(text.len(), fold.merged_size(&d[0], &file));
      text
    };
    // "\u0061" is "a": only JSON.parse can tell, so it is left the repeats.
    assert_eq!(
      merged(&[r#"{"nonce":"n","a":1}"#, r#"{"nonce":"n","\u0061":2}"#]),
      r#"{"nonce":"n","a":1,"intentAt":null,"nonce":"n","\u0061":2,"intentAt":null}"#
    );
    let many: String = (0..ONCE_MAX).map(|k| format!(",\"k{k}\":{k}")).collect();
    let first = format!(r#"{{"nonce":"n"{many}}}"#);
    let text = merged(&[&first, r#"{"nonce":"n"}"#]);
    assert!(text.ends_with(r#","nonce":"n","intentAt":null}"#), "{text}");
  }

  #[test]
  fn merged_records_are_sized_to_fit() {
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
        let mut out = Part::new(Vec::new(), 0).expect("room");
        let undefined = fold.merged(g, &file, &mut out);
        let text = out.finish().expect("room").text;
        (String::from_utf8(text).expect("utf-8"), undefined, fold.merged_size(g, &file))
      })
      .collect();
    // Each key once, where it first appeared, with its last value: what
    // JSON.parse makes of the three lines' members in a row (#47).
    assert_eq!(
      texts[0].0,
      r#"{"nonce":"a","status":"unknown","at":"t2","intentAt":"t1","messageId":"m"}"#
    );
    assert_eq!(texts[1].0, r#"{"nonce":"b","status":"intent","intentAt":null}"#);
    assert!(!texts[0].1 && texts[1].1);
    // Room for every line's members: the record merged once takes less.
    assert_eq!(texts[0].2, 179);
    assert!(texts[0].0.len() <= texts[0].2);
    assert_eq!(texts[1].0.len(), texts[1].2);
    assert!(d[0].unresolved() && d[1].unresolved());
  }

  /// Each nonce's `shares_at`, in first-seen order.
  fn shares(lines: &str) -> Vec<bool> {
    read_outbox(lines.as_bytes(), |_, o| Ok(o.deliveries()?.iter().map(|g| g.shares_at).collect())).expect("read")
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

  /// `unresolved` answers as a walk of every delivery would, in order,
  /// through nonces opened, settled and reopened in every order.
  #[test]
  fn the_unresolved_list_follows_every_status_change() {
    // Lines with no status, or one that is not a string, keep or settle a
    // delivery as the reference's `includes` would.
    let statuses = [
      "\"intent\"",
      "\"confirmed\"",
      "\"unknown\"",
      "\"failed\"",
      "\"refused\"",
      "null",
      "7",
      "",
    ];
    let mut seed = 0x2545_f491_u64;
    let mut next = |n: u64| {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      seed % n
    };
    for round in 0..40 {
      let mut text = String::new();
      for _ in 0..(round * 7 + 1) {
        let status = match statuses[next(statuses.len() as u64) as usize] {
          "" => String::new(),
          s => format!(",\"status\":{s}"),
        };
        text.push_str(&format!("{{\"nonce\":\"n{}\"{status}}}\n", next(12)));
      }
      let (listed, walked) = read_outbox(text.as_bytes(), |file, o| {
        let nonce = |g: &Delivery| String::from_utf8_lossy(o.nonce(g).bytes(&file)).into_owned();
        let listed: Vec<String> = o.unresolved()?.into_iter().map(nonce).collect();
        let walked: Vec<String> = o.deliveries()?.iter().filter(|g| g.unresolved()).map(nonce).collect();
        // Each listed delivery knows its place in the list.
        for (place, &i) in o.open.iter().enumerate() {
          assert_eq!(o.deliveries[i as usize].open_at as usize, place);
        }
        Ok((listed, walked))
      })
      .expect("read");
      assert_eq!(listed, walked, "{text}");
    }
  }
}
