//! `discord-journal repair` as one call: the plan alone, or the binding
//! held, leftovers cleaned, the plan made and carried out, and the binding
//! released, with a failure saying what was changed before it (#34).

use serde_json::{json, Value};

use super::{clean, pause, plan, Done, Opened, Plan};
use crate::ground::error::JournalError;
use crate::ground::journal::Journal;
use crate::lock::{guarded, RepairHold};
use crate::stop::{self, StopLock};

/// What a repair found and did.
#[derive(Debug)]
pub struct Outcome {
  /// The pid of a dead owner whose lock was cleared to hold the binding.
  pub took_over: Option<String>,
  /// Leftovers of an earlier repair removed (`clean`).
  pub cleaned: Vec<String>,
  pub plan: Plan,
  /// The files mended; `None` where nothing was applied: a plan alone, or
  /// one that corruption refused (`plan.corrupt` not empty).
  pub done: Option<Vec<Done>>,
  /// What `.stop.lock` was; a `Left` one was removed first when applying.
  pub stop_lock: StopLock,
}

impl Outcome {
  /// The JSON text the command parses (`cli/repair.js`): `{ applied,
  /// tookOver, cleaned, plan, done, stopLock }`.
  pub fn to_json(&self) -> Value {
    let done: Vec<_> = self
      .done
      .iter()
      .flatten()
      .map(|d| json!({ "file": d.file, "quarantine": d.quarantine }))
      .collect();
    json!({ "applied": self.done.is_some(), "tookOver": self.took_over, "cleaned": self.cleaned, "plan": self.plan.to_json(), "done": done, "stopLock": self.stop_lock.name() })
  }
}

/// The plan (`apply` false: nothing changed), or the repair carried out
/// with the binding held. `now` (the time as `toISOString` writes it) is
/// asked for only when applying, after the journal is opened and a left
/// `.stop.lock` removed: it stamps the owner record and the quarantine
/// files. Its error type is the caller's, so that the boundary can ask
/// JavaScript's own `Date`.
pub fn run<E: From<JournalError>>(j: &Journal, apply: bool, now: impl FnOnce() -> Result<String, E>) -> Result<Outcome, E> {
  if !apply {
    let plan = plan(&Opened::open(j)?)?;
    let stop_lock = stop::left(j);
    return Ok(Outcome {
      took_over: None,
      cleaned: Vec::new(),
      plan,
      done: None,
      stop_lock,
    });
  }
  let opened = Opened::open(j)?;
  // A .stop.lock that an update which died left refuses every STOP
  // update (#34): removed first, under the guard that proves it left.
  let stop_lock = guarded(j, || stop::clear_left(j))?;
  let noted = |e: JournalError| match stop_lock {
    StopLock::Left => e.with_note(".stop.lock, left by a STOP update that did not finish, was removed first"),
    _ => e,
  };
  let now = now()?;
  let stamp: String = now.chars().filter(|c| !matches!(c, '-' | ':')).collect();
  let held = RepairHold::take(j, &now).map_err(noted)?;
  pause::at("held");
  let mut mended = Vec::new();
  let outcome = (|| {
    let cleaned = clean(&opened)?;
    let plan = plan(&opened)?;
    if !plan.corrupt.is_empty() {
      return Ok((cleaned, plan, None));
    }
    super::apply::apply_into(&opened, &plan, &stamp, &mut pause::at, &mut mended)?;
    Ok::<_, JournalError>((cleaned, plan, Some(std::mem::take(&mut mended))))
  })();
  let took_over = held.took_over.clone();
  let released = held.release(j);
  // A failure says what was changed before it (#34): the files mended,
  // a dead owner's lock cleared to hold the binding, a .stop.lock removed.
  let (cleaned, plan, done) = outcome.map_err(|e| noted(stopped(e, &mended, took_over.as_deref())))?;
  released?;
  Ok(Outcome {
    took_over,
    cleaned,
    plan,
    done,
    stop_lock,
  })
}

/// A repair's failure `e`, said with what it changed before it: the files
/// mended (and where their parts were set aside), and a dead owner's lock
/// it cleared to hold the binding. A refusal that is not a `DiscordError`
/// (none is expected here) is kept as it is.
fn stopped(e: JournalError, mended: &[Done], took_over: Option<&str>) -> JournalError {
  let JournalError::Discord { message, exit_code } = e else {
    return e;
  };
  let mut said = vec![message];
  for d in mended {
    said.push(match &d.quarantine {
      Some(q) => format!("{} was repaired before it stopped (its damaged parts set aside in {q})", d.file),
      None => format!("{} was repaired before it stopped", d.file),
    });
  }
  if let Some(pid) = took_over {
    said.push(format!("run.lock of pid {pid}, which was gone, was cleared to hold the binding"));
  }
  JournalError::Discord {
    message: said.join("\n"),
    exit_code,
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::error::Result;
  use crate::testutil::TempDir;

  const NOW: &str = "2026-01-02T03:04:05.678Z";

  fn journal(inbox: &str) -> TempDir {
    let d = TempDir::new();
    std::fs::create_dir(format!("{}/turns", d.path())).expect("mkdir");
    std::fs::write(format!("{}/inbox.jsonl", d.path()), inbox).expect("write");
    d
  }

  fn now() -> Result<String> {
    Ok(NOW.to_string())
  }

  #[test]
  fn a_plan_alone_changes_nothing_and_never_asks_the_time() {
    let d = journal("{\"id\":\"a\"}\n{\"id\":\"b");
    let out = run(&d.journal(), false, || -> Result<String> { Err(JournalError::failed("asked")) }).expect("plan");
    let json = out.to_json();
    assert_eq!(json["applied"], false);
    assert_eq!(json["tookOver"], Value::Null);
    assert_eq!((json["cleaned"].clone(), json["done"].clone()), (json!([]), json!([])));
    assert_eq!(json["stopLock"], "absent");
    assert_eq!(json["plan"]["files"][0]["mend"], "truncate");
    let inbox = std::fs::read_to_string(format!("{}/inbox.jsonl", d.path())).expect("read");
    assert_eq!(inbox, "{\"id\":\"a\"}\n{\"id\":\"b");
  }

  #[test]
  fn the_json_text_is_the_one_the_command_parses() {
    let d = journal("{\"id\":\"a\"}\n");
    let text = run(&d.journal(), false, now).expect("plan").to_json().to_string();
    assert_eq!(
      text,
      r#"{"applied":false,"cleaned":[],"done":[],"plan":{"corrupt":[],"files":[{"aside":[],"asideBytes":0,"bytes":11,"file":"inbox.jsonl","kept":1,"mend":"none","shared":false,"terminate":false}],"nulls":[],"turns":[]},"stopLock":"absent","tookOver":null}"#
    );
  }

  #[test]
  fn applied_it_mends_stamps_the_quarantine_with_now_and_releases_the_binding() {
    let d = journal("{\"id\":\"a\"}\n{\"id\":\"b");
    let out = run(&d.journal(), true, now).expect("repair");
    let json = out.to_json();
    assert_eq!(json["applied"], true);
    let quarantine = "inbox.jsonl.aside-20260102T030405.678Z";
    assert_eq!(json["done"], json!([{ "file": "inbox.jsonl", "quarantine": quarantine }]));
    assert_eq!(
      std::fs::read_to_string(format!("{}/{quarantine}", d.path())).expect("q"),
      "{\"id\":\"b"
    );
    assert!(!crate::ground::files::exists(&d.journal().lock()), "released");
    let again = run(&d.journal(), true, now).expect("again").to_json();
    assert_eq!((again["applied"].clone(), again["done"].clone()), (json!(true), json!([])));
  }

  #[test]
  fn corruption_refuses_the_repair_with_nothing_changed() {
    let d = journal("{\"id\":\"a\"}\n{bad\n{\"id\":\"b");
    let json = run(&d.journal(), true, now).expect("repair").to_json();
    assert_eq!((json["applied"].clone(), json["done"].clone()), (json!(false), json!([])));
    assert_eq!(json["plan"]["corrupt"][0]["line"], 2);
    let inbox = std::fs::read_to_string(format!("{}/inbox.jsonl", d.path())).expect("read");
    assert_eq!(inbox, "{\"id\":\"a\"}\n{bad\n{\"id\":\"b");
    assert!(!crate::ground::files::exists(&d.journal().lock()), "released");
  }

  #[test]
  fn a_left_stop_lock_is_removed_first_and_said() {
    let d = journal("{\"id\":\"a\"}\n");
    let stop_lock = format!("{}/.stop.lock", d.path());
    std::fs::create_dir(&stop_lock).expect("mkdir");
    assert_eq!(run(&d.journal(), false, now).expect("plan").to_json()["stopLock"], "left");
    assert!(std::fs::metadata(&stop_lock).is_ok(), "a plan removes nothing");
    assert_eq!(run(&d.journal(), true, now).expect("repair").to_json()["stopLock"], "left");
    assert!(std::fs::metadata(&stop_lock).is_err());
  }

  #[test]
  fn a_failure_says_what_was_changed_before_it() {
    let mended = [
      Done {
        file: "inbox.jsonl".into(),
        quarantine: Some("inbox.jsonl.aside-T".into()),
      },
      Done {
        file: "drops.jsonl".into(),
        quarantine: None,
      },
    ];
    let e = stopped(JournalError::failed("no space"), &mended, Some("42"));
    assert_eq!(
      e,
      JournalError::failed(
        "no space\ninbox.jsonl was repaired before it stopped (its damaged parts set aside in inbox.jsonl.aside-T)\ndrops.jsonl was repaired before it stopped\nrun.lock of pid 42, which was gone, was cleared to hold the binding"
      )
    );
  }
}
