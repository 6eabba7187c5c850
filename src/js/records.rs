//! Exports for the record files: inbox, outbox, drops, admissions, reloads,
//! notices, and ensureJournal.

use std::ops::Range;
use std::sync::Arc;

use napi::{sys, Env};
use napi_derive::napi;

use super::{date_arg, export, Dir, Js, JsResult, Texts, Thrown, Val};
use crate::ground::error::{fs_code, JournalError};
use crate::lines;
use crate::read::incremental;
use crate::read::part::{Part, Shared};
use crate::records::{Admissions, AllLines, Delivery, Inbox, Notices, Outbox};

/// Texts that are pieces of the file's bytes, which they own.
struct Pieces<'a> {
  name: &'static str,
  file: Shared,
  pieces: &'a incremental::Pieces,
}

impl Texts for Pieces<'_> {
  fn len(&self) -> usize {
    self.pieces.len()
  }
  fn label(&self, _: usize) -> String {
    self.name.into()
  }
  fn size(&self, i: usize) -> usize {
    self.pieces.bytes(i, &self.file).len()
  }
  fn write(&mut self, i: usize, out: &mut Part) {
    if let Some(p) = self.pieces.get(i) {
      out.piece(&p, &self.file);
    }
  }
  fn whole(&self, i: usize) -> Option<&[u8]> {
    Some(self.pieces.bytes(i, &self.file))
  }
  fn share(&mut self, i: usize) -> Option<(Shared, Range<usize>)> {
    self.pieces.span(i).map(|r| (Arc::clone(&self.file), r))
  }
}

#[napi(js_name = "ensureJournal")]
pub fn ensure_journal<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |_| {
    let turns = dir.journal().turns();
    // A journal without turns/ is guarded by its directory's flock until
    // turns/ exists: it is made under that flock (src/lock/guard.rs).
    let _guard = crate::lock::guard::making_turns(dir.journal())?;
    mkdir_p(&turns)?;
    Ok(dir.val())
  })
}

/// Whether this thread's last `ensureJournal` failed where the runtime's
/// recursive mkdirSync would spin without end (#35): index.js then throws
/// the addon's error instead of asking the runtime for its own.
#[napi(js_name = "mkdirSpun")]
pub fn mkdir_spun(env: &Env) -> napi::Result<bool> {
  export(env, |_| Ok(crate::ground::files::mkdir_spun()))
}

/// `mkdirSync(path, { recursive: true, mode: 0o700 })`, with Node's errors.
fn mkdir_p(path: &str) -> Result<(), JournalError> {
  crate::ground::files::mkdir_p(path, 0o700).map_err(|e| match e.raw_os_error() {
    Some(errno) => JournalError::Node {
      code: fs_code(&e).unwrap_or_default(),
      errno,
      syscall: "mkdir",
      path: path.to_string(),
    },
    // Node refuses a path with a NUL byte before any system call.
    None => JournalError::null_bytes(),
  })
}

/// The files `appendLine` may write, a variant a row of `record_files`, its
/// number its place in `RECORD_FILES` (how internal.js maps a name). Exported
/// (an object of names to numbers): index.js names a file by this definition.
macro_rules! journal_file {
  ($($file:ident $name:literal $variant:ident,)*) => {
    #[napi]
    pub enum JournalFile {
      $($variant,)*
    }
    #[cfg(test)]
    const EVERY_FILE: [JournalFile; lines::RECORD_FILES.len()] = [$(JournalFile::$variant),*];
  };
}
lines::record_files!(journal_file);

impl JournalFile {
  pub(super) fn name(self) -> &'static str {
    lines::RECORD_FILES[self as usize]
  }
}

/// The write half of every `append*` export: index.js checks the entry and
/// calls JSON.stringify (both cost V8 nanoseconds, and each property read
/// through N-API costs more than the check), then hands over the line.
/// `dir` is checked first, as `join(dir, name)` is before the record is
/// stringified: index.js calls this with a non-string `dir` before it
/// stringifies, to get that refusal. `line` is undefined when the record
/// stringifies to nothing (`line.includes` then throws in the reference).
#[napi(js_name = "appendLine")]
pub fn append_line<'e>(env: &'e Env, dir: Dir<'e>, file: JournalFile, line: Val<'e>) -> napi::Result<()> {
  export(env, |js| {
    if !js.is(line, sys::ValueType::napi_string)? {
      return Err(JournalError::read_of_undefined("includes").into());
    }
    lines::append_with(dir.journal(), file.name(), |buf| js.utf8_onto(line, buf).map_err(Thrown::from))
  })
}

#[napi(js_name = "readInboxIds")]
pub fn read_inbox_ids<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let ids = incremental::read::<Inbox, _, Thrown>(dir.journal(), lines::INBOX, |file, inbox| {
      js.parse_array(Pieces {
        name: lines::INBOX,
        file: Arc::new(file),
        pieces: inbox.ids()?,
      })
    })?;
    js.new_set(ids.map_or_else(|| js.array(0), Ok)?)
  })
}

/// The merged records of the outbox's deliveries, each after its nonce
/// for a Map's entries (`nonce, record, nonce, record, ...`), or alone.
struct Merged<'a> {
  file: Shared,
  outbox: &'a Outbox,
  picked: Vec<&'a Delivery>,
  entries: bool,
}

impl Merged<'_> {
  /// The delivery of the `i`-th text, and whether that text is its nonce.
  fn of(&self, i: usize) -> (&Delivery, bool) {
    if self.entries {
      (self.picked[i / 2], i.is_multiple_of(2))
    } else {
      (self.picked[i], false)
    }
  }
}

impl Texts for Merged<'_> {
  fn len(&self) -> usize {
    self.picked.len() * if self.entries { 2 } else { 1 }
  }
  fn label(&self, _: usize) -> String {
    lines::OUTBOX.into()
  }
  fn size(&self, i: usize) -> usize {
    match self.of(i) {
      (d, true) => self.outbox.nonce_bytes(d, &self.file).len(),
      (d, false) => self.outbox.merged_size(d, &self.file),
    }
  }
  fn write(&mut self, i: usize, out: &mut Part) {
    match self.of(i) {
      (d, true) => out.piece(&self.outbox.nonce(d), &self.file),
      (d, false) => {
        self.outbox.merged(d, &self.file, out);
      }
    }
  }
  fn whole(&self, i: usize) -> Option<&[u8]> {
    // A merged record is made of several lines' members.
    match self.of(i) {
      (d, true) => Some(self.outbox.nonce_bytes(d, &self.file)),
      (_, false) => None,
    }
  }
  fn share(&mut self, i: usize) -> Option<(Shared, Range<usize>)> {
    match self.of(i) {
      (d, true) => self.outbox.nonce(d).range().map(|r| (Arc::clone(&self.file), r)),
      (_, false) => None,
    }
  }
}

/// The outbox's merged records in one JSON.parse: `[nonce, record, ...]`
/// for a Map, or `[record, ...]` of the unresolved ones. After the parse, a
/// record whose intentAt is undefined is mended, and one whose intentAt is
/// its `at` object is given that same object.
fn outbox<'e>(js: Js<'e>, d: &Dir<'e>, unresolved_only: bool) -> JsResult<Val<'e>> {
  let answer = |file: Vec<u8>, outbox: &Outbox, picked: Vec<&Delivery>| -> JsResult<Val<'e>> {
    let mend: Vec<u32> = (0..picked.len() as u32)
      .filter(|&i| picked[i as usize].intent_at_undefined() || picked[i as usize].shares_at)
      .collect();
    let shares: Vec<bool> = mend.iter().map(|&i| picked[i as usize].shares_at).collect();
    let merged = Merged {
      file: Arc::new(file),
      outbox,
      picked,
      entries: !unresolved_only,
    };
    let parsed = js.parse_array(merged)?;
    for (i, shares_at) in mend.into_iter().zip(shares) {
      let at = if unresolved_only {
        i
      } else {
        i.saturating_mul(2).saturating_add(1)
      };
      let record = js.get_index(parsed, at)?;
      let intent_at = if shares_at { js.get(record, "at")? } else { js.undefined()? };
      js.set(record, "intentAt", intent_at)?;
    }
    Ok(parsed)
  };
  // unresolvedOutbox needs the bytes of the unresolved deliveries alone:
  // they are made from those bytes, packed, and an outbox of their own.
  let parsed = match unresolved_only {
    true => incremental::read_picked::<Outbox, _, Thrown>(d.journal(), lines::OUTBOX, Outbox::unresolved_spans, |packed, outbox| {
      let picked = outbox.unresolved()?;
      let alone = outbox
        .packed(&picked, &packed)
        .ok_or_else(|| JournalError::failed("outbox.jsonl: a part of an unresolved delivery was not kept"))?;
      let all = alone.deliveries()?.iter().collect();
      answer(packed.bytes, &alone, all)
    })?,
    false => incremental::read::<Outbox, _, Thrown>(d.journal(), lines::OUTBOX, |file, outbox| {
      answer(file, outbox, outbox.deliveries()?.iter().collect())
    })?,
  };
  Ok(parsed.map_or_else(|| js.array(0), Ok)?)
}

#[napi(js_name = "readOutbox")]
pub fn read_outbox<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| outbox(js, &dir, false).and_then(|entries| js.map_of_pairs(entries)))
}

#[napi(js_name = "unresolvedOutbox")]
pub fn unresolved_outbox<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| outbox(js, &dir, true))
}

/// Every line of a file, parsed: one JSON.parse of the lines as an array.
fn read_all<'e>(js: Js<'e>, d: &Dir<'e>, name: &'static str) -> JsResult<Val<'e>> {
  let parsed = incremental::read::<AllLines, _, Thrown>(d.journal(), name, |file, all| {
    js.parse_array(Pieces {
      name,
      file: Arc::new(file),
      pieces: &all.lines,
    })
  })?;
  Ok(parsed.map_or_else(|| js.array(0), Ok)?)
}

#[napi(js_name = "readDrops")]
pub fn read_drops<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| read_all(js, &dir, lines::DROPS))
}

#[napi(js_name = "readReloads")]
pub fn read_reloads<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| read_all(js, &dir, lines::RELOADS))
}

#[napi(js_name = "countAdmissionsOn")]
pub fn count_admissions_on<'e>(env: &'e Env, dir: Dir<'e>, date: Val<'e>) -> napi::Result<u32> {
  export(env, |js| {
    let date = date_arg(js, date)?;
    let n = incremental::read::<Admissions, _, JournalError>(dir.journal(), lines::ADMISSIONS, |_, a| a.count_on(date.as_deref()))?;
    Ok(n.unwrap_or(0) as u32)
  })
}

#[napi(js_name = "noticeOn")]
pub fn notice_on<'e>(env: &'e Env, dir: Dir<'e>, kind: Val<'e>, date: Val<'e>) -> napi::Result<bool> {
  export(env, |js| {
    let (kind, date) = (js.cmp(kind)?, js.cmp(date)?);
    Ok(incremental::read::<Notices, _, JournalError>(dir.journal(), lines::NOTICES, |_, n| n.on(&kind, &date))?.unwrap_or(false))
  })
}

/// What the read cache holds now and may hold, in bytes (#32): for the
/// tests and the benchmark, through binding.js; not the package's API.
#[napi(js_name = "cacheBytes")]
pub fn cache_bytes(env: &Env) -> napi::Result<Vec<f64>> {
  export(env, |_| {
    Ok(vec![incremental::kept_bytes() as f64, crate::read::budget::get() as f64])
  })
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn each_journal_file_is_named_by_its_place_in_record_files() {
    assert_eq!(EVERY_FILE.map(JournalFile::name), lines::RECORD_FILES);
  }
}
