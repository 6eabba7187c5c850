//! Exports for the record files: inbox, outbox, drops, admissions, reloads,
//! notices, and the journal's paths and labels.

use napi::{sys, Env};
use napi_derive::napi;

use super::{done, Dir, Js, JsResult, Val};
use crate::error::{fs_code, JournalError};
use crate::incremental;
use crate::lines;
use crate::paths;
use crate::records::{Admissions, AllLines, Inbox, Notices, Outbox};

#[napi(js_name = "ensureJournal")]
pub fn ensure_journal(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  let result = (|| {
    let d = Dir::from(js, dir)?;
    let turns = paths::under(d.fs(), &["turns"]);
    mkdir_p(&turns)?;
    Ok(dir)
  })();
  done(js, result)
}

/// `mkdirSync(path, { recursive: true, mode: 0o700 })`, with Node's errors.
fn mkdir_p(path: &str) -> Result<(), JournalError> {
  use std::os::unix::fs::DirBuilderExt;
  std::fs::DirBuilder::new()
    .recursive(true)
    .mode(0o700)
    .create(path)
    .map_err(|e| match e.raw_os_error() {
      Some(errno) => JournalError::Node {
        code: fs_code(&e).unwrap_or_default(),
        errno,
        syscall: "mkdir",
        path: path.to_string(),
      },
      // Node refuses a path with a NUL byte before any system call.
      None => JournalError::Type {
        message: "The argument 'path' must be a string, Uint8Array, or URL without null bytes.".into(),
        code: Some("ERR_INVALID_ARG_VALUE"),
      },
    })
}

/// `typeof entry[key] === "string"`, reading the field as JavaScript does.
fn string_field(js: Js, entry: Val, key: &str) -> JsResult<Option<String>> {
  let v = js.prop(entry, key)?;
  js.string_of(v)
}

/// `appendLine(join(dir, name), entry)`: the path is made (and `dir`
/// checked) before the record is stringified.
fn append(js: Js, dir: Val, name: &'static str, entry: Val) -> JsResult<()> {
  let d = Dir::from(js, dir)?;
  let Some(line) = js.stringify(entry)? else {
    return Err(
      JournalError::Type {
        message: "Cannot read properties of undefined (reading 'includes')".into(),
        code: None,
      }
      .into(),
    );
  };
  Ok(lines::append(d.fs(), name, &line)?)
}

#[napi(js_name = "appendInbox")]
pub fn append_inbox(env: Env, dir: Val, entry: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  let result = (|| {
    // `typeof entry.id !== "string" || entry.id.length === 0` reads id twice.
    let ok = string_field(js, entry, "id")?.is_some() && string_field(js, entry, "id")?.is_some_and(|id| !id.is_empty());
    if !ok {
      return Err(JournalError::failed("inbox entry needs a message id").into());
    }
    append(js, dir, lines::INBOX, entry)
  })();
  done(js, result)
}

#[napi(js_name = "readInboxIds")]
pub fn read_inbox_ids(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  let result = (|| {
    let d = Dir::from(js, dir)?;
    let ids = incremental::read::<Inbox, _, super::Thrown>(d.fs(), lines::INBOX, |file, inbox| {
      let ids = inbox.ids()?;
      js.parse_array(ids.len(), |i, buf| buf.extend_from_slice(ids[i].bytes(file)))
    })?;
    let ids = match ids {
      Some(ids) => ids,
      None => js.array(0)?,
    };
    js.new_set(ids)
  })();
  done(js, result)
}

const OUTBOX_STATUSES: [&str; 4] = ["intent", "confirmed", "refused", "unknown"];

#[napi(js_name = "appendOutbox")]
pub fn append_outbox(env: Env, dir: Val, entry: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  let result = (|| {
    let status = string_field(js, entry, "status")?;
    if !status.is_some_and(|s| OUTBOX_STATUSES.contains(&s.as_str())) {
      return Err(JournalError::failed(format!("outbox status must be one of {}", OUTBOX_STATUSES.join(", "))).into());
    }
    let ok = string_field(js, entry, "nonce")?.is_some() && string_field(js, entry, "nonce")?.is_some_and(|n| !n.is_empty());
    if !ok {
      return Err(JournalError::failed("outbox entry needs a nonce").into());
    }
    append(js, dir, lines::OUTBOX, entry)
  })();
  done(js, result)
}

/// The outbox's merged records in one JSON.parse: `[[nonce, record], ...]`
/// for a Map, or `[record, ...]` of the unresolved ones. A record whose
/// intentAt is undefined is mended after the parse.
fn outbox(js: Js, dir: Val, unresolved_only: bool) -> JsResult<Val> {
  let d = Dir::from(js, dir)?;
  let parsed = incremental::read::<Outbox, _, super::Thrown>(d.fs(), lines::OUTBOX, |file, outbox| {
    let picked: Vec<_> = outbox.deliveries()?.iter().filter(|g| g.unresolved || !unresolved_only).collect();
    let mut mend = Vec::new();
    let parsed = js.parse_array(picked.len(), |i, buf| {
      let delivery = picked[i];
      if !unresolved_only {
        buf.push(b'[');
        buf.extend_from_slice(delivery.nonce.bytes(file));
        buf.push(b',');
      }
      if delivery.merged(file, buf) {
        mend.push(i as u32);
      }
      if !unresolved_only {
        buf.push(b']');
      }
    })?;
    for i in mend {
      let mut record = js.get_index(parsed, i)?;
      if !unresolved_only {
        record = js.get_index(record, 1)?;
      }
      js.set(record, "intentAt", js.undefined()?)?;
    }
    Ok(parsed)
  })?;
  match parsed {
    Some(parsed) => Ok(parsed),
    None => js.array(0),
  }
}

#[napi(js_name = "readOutbox")]
pub fn read_outbox(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, outbox(js, dir, false).and_then(|entries| js.new_map(entries)))
}

#[napi(js_name = "unresolvedOutbox")]
pub fn unresolved_outbox(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, outbox(js, dir, true))
}

/// Every line of a file, parsed: one JSON.parse of the lines as an array.
fn read_all(js: Js, dir: Val, name: &'static str) -> JsResult<Val> {
  let d = Dir::from(js, dir)?;
  let parsed = incremental::read::<AllLines, _, super::Thrown>(d.fs(), name, |file, all| {
    js.parse_array(all.lines.len(), |i, buf| buf.extend_from_slice(all.lines[i].bytes(file)))
  })?;
  match parsed {
    Some(parsed) => Ok(parsed),
    None => js.array(0),
  }
}

#[napi(js_name = "appendDrop")]
pub fn append_drop(env: Env, dir: Val, entry: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  done(js, append(js, dir, lines::DROPS, entry))
}

#[napi(js_name = "readDrops")]
pub fn read_drops(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, read_all(js, dir, lines::DROPS))
}

#[napi(js_name = "appendReload")]
pub fn append_reload(env: Env, dir: Val, entry: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  let result = (|| {
    let outcome = string_field(js, entry, "outcome")?;
    if !outcome.is_some_and(|o| o == "applied" || o == "refused") {
      return Err(JournalError::failed("reload entry needs an outcome").into());
    }
    append(js, dir, lines::RELOADS, entry)
  })();
  done(js, result)
}

#[napi(js_name = "readReloads")]
pub fn read_reloads(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, read_all(js, dir, lines::RELOADS))
}

#[napi(js_name = "appendAdmission")]
pub fn append_admission(env: Env, dir: Val, entry: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  let result = (|| {
    if string_field(js, entry, "id")?.is_none() || string_field(js, entry, "at")?.is_none() {
      return Err(JournalError::failed("admission needs id and at").into());
    }
    append(js, dir, lines::ADMISSIONS, entry)
  })();
  done(js, result)
}

/// A date argument: only a string can equal a slice of one.
fn date_arg(js: Js, date: Val) -> JsResult<Option<Vec<u16>>> {
  if js.is(date, sys::ValueType::napi_string)? {
    Ok(Some(js.units(date)?))
  } else {
    Ok(None)
  }
}

#[napi(js_name = "countAdmissionsOn")]
pub fn count_admissions_on(env: Env, dir: Val, date: Val) -> napi::Result<u32> {
  let js = Js::new(&env);
  let result = (|| {
    let d = Dir::from(js, dir)?;
    let date = date_arg(js, date)?;
    let n = incremental::read::<Admissions, _, JournalError>(d.fs(), lines::ADMISSIONS, |_, a| a.count_on(date.as_deref()))?;
    Ok(n.unwrap_or(0) as u32)
  })();
  done(js, result)
}

#[napi(js_name = "utcDate")]
pub fn utc_date(env: Env, now: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  let result = (|| {
    let iso = js.iso_of(now)?;
    js.str(iso.get(..10).unwrap_or(&iso))
  })();
  done(js, result)
}

#[napi(js_name = "appendNotice")]
pub fn append_notice(env: Env, dir: Val, entry: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  let result = (|| {
    if string_field(js, entry, "kind")?.is_none() || string_field(js, entry, "date")?.is_none() {
      return Err(JournalError::failed("notice needs kind and date").into());
    }
    append(js, dir, lines::NOTICES, entry)
  })();
  done(js, result)
}

#[napi(js_name = "noticeOn")]
pub fn notice_on(env: Env, dir: Val, kind: Val, date: Val) -> napi::Result<bool> {
  let js = Js::new(&env);
  let result = (|| {
    let d = Dir::from(js, dir)?;
    let (kind, date) = (js.cmp(kind)?, js.cmp(date)?);
    Ok(incremental::read::<Notices, _, JournalError>(d.fs(), lines::NOTICES, |_, n| n.on(&kind, &date))?.unwrap_or(false))
  })();
  done(js, result)
}

#[napi(js_name = "stopPath")]
pub fn stop_path(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, Dir::from(js, dir).and_then(|d| d.join(js, &["STOP"])))
}

#[napi(js_name = "lockPath")]
pub fn lock_path(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, Dir::from(js, dir).and_then(|d| d.join(js, &["run.lock"])))
}

#[napi(js_name = "ownerPath")]
pub fn owner_path(env: Env, dir: Val) -> napi::Result<Val> {
  let js = Js::new(&env);
  done(js, Dir::from(js, dir).and_then(|d| d.join(js, &["run.lock", "owner.json"])))
}
