//! Internal exports for the operator's command (not journal.mjs's, and not
//! in entry.js, like `appendLine`): the scans of `src/operator/inspect.rs`, as JSON
//! text that the command parses. A refusal is thrown as the readers throw
//! it.

use napi::Env;
use napi_derive::napi;

use super::identity::opt_str;
use super::records::JournalFile;
use super::{export, Dir, Val};
use serde_json::json;

use crate::operator::{inspect, repair};
use crate::stop;

/// What `.stop.lock` is, judged by the STOP mark: `"absent"`, `"held"` (a live
/// update holds it: `stopLockHolders` names it),
/// `"left"` (proved left over by an update that died) or `"unproven"`.
#[napi(js_name = "stopLockLeft")]
pub fn stop_lock_left<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| Ok(js.str(stop::left(dir.journal()).name())?))
}

/// Why the last STOP update of this thread was refused as "locked": the
/// errno name of its `.stop.lock` mkdir (`"EEXIST"` where another update
/// holds it), or `null`.
#[napi(js_name = "stopLockCause")]
pub fn stop_lock_cause(env: &Env) -> napi::Result<Val<'_>> {
  export(env, |js| opt_str(js, stop::lock_cause()))
}

/// Who holds what another operation would wait for, as the kernel shows
/// it (#44), as JSON text: `{guard, lock, stopLock}`, each a process
/// `{pid, state, command, stalled, is, fix}` or null: the lock guard's
/// holder (a start, release, unlock, recover or repair inside it), the
/// live process holding run.lock marked, and a STOP update inside
/// `.stop.lock`; and `records`, each record file's append lock holder by
/// the file's name, where one holds it (#55).
///
/// `before`: the JSON text of a look made a moment before (this export's
/// own answer), or null. Each holder is then settled against the one it
/// gave for the same lock (`holder::settle`): one that neither had a
/// thread runnable nor gained CPU time between the two looks reads as not
/// moving ("idle", or "traced" under a tracer). The command's second look
/// (#64).
#[napi(js_name = "holders")]
pub fn holders<'e>(env: &'e Env, dir: Dir<'e>, before: Option<String>) -> napi::Result<Val<'e>> {
  use crate::ground::holder::{settle, Holder};
  let before: serde_json::Value = before.and_then(|b| serde_json::from_str(&b).ok()).unwrap_or_default();
  // The first holder of a lock, settled against the look before.
  // Every holder of the lock is kept in the answer (`all`), so that the
  // second look settles each against itself, whichever is named first.
  let first = |mut seen: Vec<Holder>, which: &str| {
    let earlier: Vec<Holder> = before
      .get("guard")
      .filter(|_| which == "guard")
      .or_else(|| before.get("records").and_then(|r| r.get(which)))
      .and_then(|h| h.get("all"))
      .and_then(serde_json::Value::as_array)
      .map(|all| all.iter().filter_map(Holder::from_json).collect())
      .unwrap_or_default();
    settle(&earlier, &mut seen);
    let all: Vec<serde_json::Value> = seen.iter().map(Holder::to_json).collect();
    let mut named = seen.into_iter().next()?.to_json();
    named["all"] = serde_json::Value::Array(all);
    Some(named)
  };
  export(env, |js| {
    let j = dir.journal();
    let one = |h: Option<crate::ground::holder::Holder>| h.map_or(serde_json::Value::Null, |h| h.to_json());
    let stop_lock = match stop::left(j) {
      stop::StopLock::Held => crate::ground::mark::holders(j)
        .first()
        .map(|pid| crate::ground::holder::process(*pid)),
      _ => None,
    };
    let out = json!({
      "guard": first(crate::lock::guard::holders(j), "guard").unwrap_or_default(),
      "lock": one(crate::lock::holder(j)),
      "stopLock": one(stop_lock),
      "records": crate::lines::RECORD_FILES
        .iter()
        .filter_map(|name| Some((name.to_string(), first(crate::ground::lockers::holders_at(&j.file(name)), name)?)))
        .collect::<serde_json::Map<_, _>>(),
    });
    Ok(js.str(&out.to_string())?)
  })
}

/// Why the journal's lock guard cannot be had here, or `null` (#44).
#[napi(js_name = "unguarded")]
pub fn unguarded<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| opt_str(js, crate::lock::guard::unguarded(dir.journal())))
}

/// Whether a repair holds the binding: run.lock flocked by one.
#[napi(js_name = "repairRunning")]
pub fn repair_running<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| Ok(js.boolean(crate::lock::repair_running(dir.journal()))?))
}

/// The record files, in their one order: the command's list (`lines::record_files`).
#[napi(js_name = "recordFiles")]
pub fn record_files<'e>(env: &'e Env) -> napi::Result<Val<'e>> {
  export(env, |js| Ok(js.str(&json!(crate::lines::RECORD_FILES).to_string())?))
}

/// Every line of a record file judged; `null` when there is no file.
#[napi(js_name = "scanLines")]
pub fn scan_lines<'e>(env: &'e Env, dir: Dir<'e>, file: JournalFile) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let scan = inspect::scan_lines(dir.journal(), file.name())?;
    opt_str(js, scan.map(|scan| scan.to_json().to_string()))
  })
}

/// Every turn record judged.
#[napi(js_name = "scanTurns")]
pub fn scan_turns<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| Ok(js.str(&inspect::scan_turns(dir.journal())?.to_json().to_string())?))
}

/// `discord-journal repair`: the plan (`apply` false, nothing changed), or
/// the repair carried out with the binding held (`repair::run`), as the
/// JSON text `Outcome::to_json` makes. The time that stamps it is this
/// realm's `new Date().toISOString()`.
#[napi(js_name = "repair")]
pub fn repair<'e>(env: &'e Env, dir: Dir<'e>, apply: bool) -> napi::Result<Val<'e>> {
  export(env, |js| {
    Ok(js.str(&repair::run(dir.journal(), apply, || js.now_iso())?.to_json().to_string())?)
  })
}

/// Where `outbox.jsonl` ends now, as `"dev:ino:size"` (null where there is
/// no such file): taken by `resolve` before its read, so that its second
/// look (`appendOutcome`) reads only what was appended after it (#64).
#[napi(js_name = "outboxMark")]
pub fn outbox_mark<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  use std::os::unix::fs::MetadataExt;
  export(env, |js| {
    let meta = std::fs::metadata(dir.journal().file(crate::lines::OUTBOX)).ok();
    opt_str(js, meta.map(|m| format!("{}:{}:{}", m.dev(), m.ino(), m.size())))
  })
}

/// `resolve`'s append (#64): the outcome line `line` for `nonce`, appended
/// to `outbox.jsonl` under its append flock unless a line appended since
/// `mark` (`outboxMark`'s, taken before resolve's read) gave the delivery a
/// status other than "intent" or "unknown": that status is then returned,
/// as JSON text, and nothing is written; null where the line was written.
#[napi(js_name = "appendOutcome")]
pub fn append_outcome<'e>(env: &'e Env, dir: Dir<'e>, nonce: String, line: String, mark: Option<String>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let found = crate::lines::append_unless(dir.journal(), crate::lines::OUTBOX, &line, |file, size| {
      crate::records::status_since(file, size, mark.as_deref(), &nonce)
    })?;
    opt_str(js, found.map(|status| status.to_string()))
  })
}
