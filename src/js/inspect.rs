//! Internal exports for the operator's command (not journal.mjs's, and not
//! in entry.js, like `appendLine`): the scans of `src/operator/inspect.rs`, as JSON
//! text that the command parses. A refusal is thrown as the readers throw
//! it.

use napi::Env;
use napi_derive::napi;

use super::records::JournalFile;
use super::{export, Dir, Val};
use serde_json::json;

use crate::operator::{inspect, repair};
use crate::stop;

/// What `.stop.lock` is, judged under the lock guard: `"absent"`,
/// `"left"` (proved left over by an update that died) or `"unproven"`.
#[napi(js_name = "stopLockLeft")]
pub fn stop_lock_left<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| Ok(js.str(stop::left(dir.fs())?.name())?))
}

/// Why the last STOP update of this thread was refused as "locked": the
/// errno name of its `.stop.lock` mkdir (`"EEXIST"` where another update
/// holds it), or `null`.
#[napi(js_name = "stopLockCause")]
pub fn stop_lock_cause(env: &Env) -> napi::Result<Val<'_>> {
  export(env, |js| match stop::lock_cause() {
    Some(code) => Ok(js.str(&code)?),
    None => Ok(js.null()?),
  })
}

/// Whether a repair holds the binding: run.lock flocked by one.
#[napi(js_name = "repairRunning")]
pub fn repair_running<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| Ok(js.boolean(repair::running(dir.fs()))?))
}

/// The record files, in the order the command lists them: the one
/// definition the command reads (`src/operator/repair/mod.rs`'s `RECORD_FILES`).
#[napi(js_name = "recordFiles")]
pub fn record_files<'e>(env: &'e Env) -> napi::Result<Val<'e>> {
  export(env, |js| Ok(js.str(&json!(repair::RECORD_FILES).to_string())?))
}

/// Every line of a record file judged; `null` when there is no file.
#[napi(js_name = "scanLines")]
pub fn scan_lines<'e>(env: &'e Env, dir: Dir<'e>, file: JournalFile) -> napi::Result<Val<'e>> {
  export(env, |js| match inspect::scan_lines(dir.fs(), file.name())? {
    Some(scan) => Ok(js.str(&scan.to_json().to_string())?),
    None => Ok(js.null()?),
  })
}

/// Every turn record judged.
#[napi(js_name = "scanTurns")]
pub fn scan_turns<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| Ok(js.str(&inspect::scan_turns(dir.fs())?.to_json().to_string())?))
}

/// `discord-journal repair`: the plan (`apply` false, nothing changed), or
/// the repair carried out with the binding held. JSON text: `{ applied,
/// tookOver, cleaned, plan, done, stopLock }` (`tookOver`: the pid of a
/// dead owner whose lock was cleared to hold the binding; `stopLock`: what
/// `.stop.lock` was, and a `left` one is removed first with --apply);
/// `applied` is false and `plan.corrupt` not empty where corruption
/// refused it.
#[napi(js_name = "repair")]
pub fn repair<'e>(env: &'e Env, dir: Dir<'e>, apply: bool) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let d = dir.fs();
    if !apply {
      let plan = repair::plan(&repair::Journal::open(d)?)?;
      let stop_lock = stop::left(d)?.name();
      return Ok(
        js.str(
          &json!({ "applied": false, "tookOver": null, "cleaned": [], "plan": plan.to_json(), "done": [], "stopLock": stop_lock })
            .to_string(),
        )?,
      );
    }
    let j = repair::Journal::open(d)?;
    // A .stop.lock that an update which died left refuses every STOP
    // update (#34): removed first, under the guard that proves it left.
    let stop_lock = stop::clear_left(d)?;
    let noted = |e: crate::ground::error::JournalError| match stop_lock {
      stop::StopLock::Left => e.with_note(".stop.lock, left by a STOP update that did not finish, was removed first"),
      _ => e,
    };
    let now = js.now_iso()?;
    let stamp: String = now.chars().filter(|c| !matches!(c, '-' | ':')).collect();
    let held = repair::hold(d, &now).map_err(noted)?;
    pause("held");
    let mut mended = Vec::new();
    let outcome = (|| {
      let cleaned = repair::clean(&j)?;
      let plan = repair::plan(&j)?;
      if !plan.corrupt.is_empty() {
        return Ok((cleaned, plan, None));
      }
      repair::apply_into(&j, &plan, &stamp, &mut pause, &mut mended)?;
      Ok::<_, crate::ground::error::JournalError>((cleaned, plan, Some(std::mem::take(&mut mended))))
    })();
    let released = repair::release(d, &held);
    // A failure says what was changed before it (#34): the files mended,
    // a dead owner's lock cleared to hold the binding, a .stop.lock removed.
    let outcome = outcome.map_err(|e| noted(repair::stopped(e, &mended, held.took_over.as_deref())));
    let (cleaned, plan, done) = outcome?;
    released?;
    let applied = done.is_some();
    let done: Vec<_> = done
      .unwrap_or_default()
      .into_iter()
      .map(|d| json!({ "file": d.file, "quarantine": d.quarantine }))
      .collect();
    Ok(js.str(
      &json!({ "applied": applied, "tookOver": held.took_over, "cleaned": cleaned, "plan": plan.to_json(), "done": done, "stopLock": stop_lock.name() })
        .to_string(),
    )?)
  })
}

/// The repair's test seam: with `DISCORD_JOURNAL_REPAIR_PAUSE` naming a
/// step (`held`, `quarantined <file>`, `written <file>`, `mended <file>`),
/// the process says so on stderr when it gets there and waits to be killed,
/// so that a test can kill it between any two steps.
fn pause(step: &str) {
  let Some(want) = std::env::var_os("DISCORD_JOURNAL_REPAIR_PAUSE") else {
    return;
  };
  if want.to_str().is_some_and(|w| step.starts_with(w)) {
    eprintln!("repair paused: {step}");
    loop {
      std::thread::sleep(std::time::Duration::from_secs(60));
    }
  }
}
