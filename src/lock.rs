//! The run lock. One directory, `<dir>/run.lock`, is the ownership
//! primitive: mkdir is atomic, so two starts cannot both create it. The
//! owner record `{pid, start, boot, at}` is published inside it by
//! write-then-rename. Nothing reclaims a lock on its own: a lock without a
//! record, or whose owner is dead or a reused pid, refuses `run` until an
//! operator runs `unlock`.
//!
//! STOP is the quiescence gate that serializes `unlock` with every claim:
//! `unlock` writes STOP before it inspects or touches the lock, and a claim
//! re-checks STOP after publishing its record and releases itself if STOP
//! is there. So no claim made during an unlock can stand, and `unlock` only
//! removes a lock whose owner is verified dead or can no longer be held.
//! Automatic reclaim and compare-then-restore were rejected in review
//! (#1509): a rename proves nothing about which directory it moved.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::time::Duration;

use crate::error::{fs_code, quiet_fs, quiet_io, JournalError, Result};
use crate::identity::{valid_boot, valid_start};
use crate::json::{Doc, Scalar};
use crate::lines::{decode_utf8, exists};
use crate::paths::{journal_label, under};
use crate::stop;
use crate::text::js_number;

pub const UNLOCK_HINT: &str = "if no connector is running for this binding, run `scripts/discord.sh unlock <binding>`";

pub fn lock_path(dir: &str) -> String {
  under(dir, &["run.lock"])
}

pub fn owner_path(dir: &str) -> String {
  under(dir, &["run.lock", "owner.json"])
}

/// The published owner record, as `readPid` reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Owner {
  /// A record file that cannot be read, parsed, or has no usable pid: an
  /// owner whose identity cannot be established, which fails closed.
  Invalid,
  /// `start` and `boot` are `None` where the record's value is not of the
  /// identity syntax (an older or corrupt record).
  Valid {
    pid: f64,
    start: Option<String>,
    boot: Option<String>,
  },
}

/// `readPid`: `None` when there is no record file (the STOP-gated
/// publication interval).
pub fn read_pid(dir: &str) -> Option<Owner> {
  let path = owner_path(dir);
  if !exists(&path) {
    return None;
  }
  let Ok(bytes) = std::fs::read(&path) else {
    return Some(Owner::Invalid);
  };
  let text = decode_utf8(bytes);
  let Some(doc) = Doc::parse(&text) else {
    return Some(Owner::Invalid);
  };
  let pid = match doc.get("pid") {
    Some(Scalar::Num(n)) if n.is_finite() && n.fract() == 0.0 && *n > 0.0 => *n,
    _ => return Some(Owner::Invalid),
  };
  let text_of = |key: &str, valid: fn(&str) -> bool| doc.get_str(key).and_then(|u| String::from_utf16(&u).ok()).filter(|s| valid(s));
  Some(Owner::Valid {
    pid,
    start: text_of("start", valid_start),
    boot: text_of("boot", valid_boot),
  })
}

/// What `identity(pid)` reported for one field, as far as `===` with a
/// record's start or boot (a string) can tell.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
  Null,
  Str(Vec<u16>),
  /// Anything else, undefined included: never null, never equal.
  Other,
}

impl Field {
  fn is(&self, want: &str) -> bool {
    matches!(self, Field::Str(u) if u.iter().copied().eq(want.encode_utf16()))
  }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
  pub start: Field,
  pub boot: Field,
}

/// The owner states. Only `Live` is ever signaled; `Unknown` and `Invalid`
/// refuse everything (never signaled, removed or claimed over); `Dead`
/// lets unlock clear the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerState {
  Absent,
  Invalid,
  Dead,
  Unknown,
  Mismatch,
  Live,
}

impl OwnerState {
  pub fn as_str(self) -> &'static str {
    match self {
      OwnerState::Absent => "absent",
      OwnerState::Invalid => "invalid",
      OwnerState::Dead => "dead",
      OwnerState::Unknown => "unknown",
      OwnerState::Mismatch => "mismatch",
      OwnerState::Live => "live",
    }
  }
}

/// The reference's ownerState ladder over any record: each step asks the
/// record one question, in the reference's order, so a JavaScript record
/// (whose getters and seams run in that order) and a parsed one share it.
pub trait OwnerView {
  type Error;
  fn is_null(&mut self) -> Result<bool, Self::Error>;
  fn invalid(&mut self) -> Result<bool, Self::Error>;
  fn alive(&mut self) -> Result<bool, Self::Error>;
  /// `rec.start === null || rec.boot === null`.
  fn lacks_identity(&mut self) -> Result<bool, Self::Error>;
  /// Asks the identity seam; `None` when it reports a null start or boot,
  /// else whether both match the record.
  fn identity_matches(&mut self) -> Result<Option<bool>, Self::Error>;
}

pub fn owner_state<V: OwnerView>(v: &mut V) -> Result<OwnerState, V::Error> {
  Ok(if v.is_null()? {
    OwnerState::Absent
  } else if v.invalid()? {
    OwnerState::Invalid
  } else if !v.alive()? {
    OwnerState::Dead
  } else if v.lacks_identity()? {
    OwnerState::Unknown
  } else {
    match v.identity_matches()? {
      None => OwnerState::Unknown,
      Some(true) => OwnerState::Live,
      Some(false) => OwnerState::Mismatch,
    }
  })
}

/// The test seams of the lock operations: `identity` and `beforeRemove`.
pub trait Seams {
  type Error: From<JournalError>;
  fn identity(&mut self, pid: f64) -> Result<Identity, Self::Error>;
  fn before_remove(&mut self) -> Result<(), Self::Error>;
}

/// A parsed record with the seams, as an OwnerView.
struct Parsed<'a, S> {
  rec: Option<&'a Owner>,
  seams: &'a mut S,
}

impl<S: Seams> OwnerView for Parsed<'_, S> {
  type Error = S::Error;
  fn is_null(&mut self) -> Result<bool, S::Error> {
    Ok(self.rec.is_none())
  }
  fn invalid(&mut self) -> Result<bool, S::Error> {
    Ok(matches!(self.rec, Some(Owner::Invalid)))
  }
  fn alive(&mut self) -> Result<bool, S::Error> {
    Ok(matches!(self.rec, Some(Owner::Valid { pid, .. }) if crate::identity::pid_alive(*pid)))
  }
  fn lacks_identity(&mut self) -> Result<bool, S::Error> {
    Ok(!matches!(
      self.rec,
      Some(Owner::Valid {
        start: Some(_),
        boot: Some(_),
        ..
      })
    ))
  }
  fn identity_matches(&mut self) -> Result<Option<bool>, S::Error> {
    let Some(Owner::Valid {
      pid,
      start: Some(start),
      boot: Some(boot),
    }) = self.rec
    else {
      return Ok(None);
    };
    let now = self.seams.identity(*pid)?;
    if now.start == Field::Null || now.boot == Field::Null {
      return Ok(None);
    }
    Ok(Some(now.start.is(start) && now.boot.is(boot)))
  }
}

pub fn state_of<S: Seams>(rec: Option<&Owner>, seams: &mut S) -> Result<OwnerState, S::Error> {
  owner_state(&mut Parsed { rec, seams })
}

fn pid_text(rec: &Option<Owner>) -> String {
  match rec {
    Some(Owner::Valid { pid, .. }) => js_number(*pid),
    _ => "undefined".into(),
  }
}

/// Why an existing lock refuses a new claim. Always a brake.
pub fn refusal<S: Seams>(dir: &str, seams: &mut S) -> Result<JournalError, S::Error> {
  let existing = read_pid(dir);
  let pid = pid_text(&existing);
  Ok(JournalError::brake(match state_of(existing.as_ref(), seams)? {
    OwnerState::Absent => format!("run.lock exists without an owner record: a start is in progress or was interrupted; {UNLOCK_HINT}"),
    OwnerState::Invalid => format!(
      "run.lock has an owner record that cannot be read; refusing. Inspect run.lock/owner.json in {} by hand",
      journal_label(dir)
    ),
    OwnerState::Live => format!("another connector is running for this binding (pid {pid})"),
    OwnerState::Unknown => format!("run.lock belongs to pid {pid}, which is alive but whose identity cannot be verified; refusing"),
    OwnerState::Dead | OwnerState::Mismatch => {
      format!("run.lock belongs to pid {pid}, which is gone or is a different process now; {UNLOCK_HINT}")
    }
  }))
}

/// `writePid` after the claimant's identity was read: creates the lock,
/// publishes the record `owner_text()` makes (failing with the `code` of
/// what it threw), then applies the STOP gate. `pid` is the claimant's pid
/// when it is a number (what `clearPid` compares with `===`).
pub fn claim<S: Seams>(
  dir: &str,
  pid: Option<f64>,
  seams: &mut S,
  owner_text: impl FnOnce() -> Result<String, Option<String>>,
) -> Result<(), S::Error> {
  let lock = lock_path(dir);
  if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&lock) {
    if e.kind() != std::io::ErrorKind::AlreadyExists {
      return Err(quiet_io(&e, &format!("run.lock in {}", journal_label(dir)), "create").into());
    }
    return Err(refusal(dir, seams)?.into());
  }
  let label = format!("run.lock/owner.json in {}", journal_label(dir));
  let text = owner_text().map_err(|code| quiet_fs(code.as_deref(), &label, "write"))?;
  publish(&lock, &text).map_err(|e| quiet_io(&e, &label, "write"))?;
  // The gate: STOP written before this point (by `stop` or `unlock`) means
  // this claim must not stand, however it interleaved with an unlock.
  if stop::requested(dir) {
    clear_pid(dir, pid)?;
    return Err(JournalError::brake(format!("STOP is present in {}; remove it to run", journal_label(dir))).into());
  }
  Ok(())
}

/// Write-then-rename of owner.json. Beyond the reference, and changing no
/// result: the record is fsynced before the rename and the directory after
/// it, so a published record survives a power loss whole or not at all.
fn publish(lock: &str, text: &str) -> std::io::Result<()> {
  let tmp = under(lock, &["owner.json.tmp"]);
  let mut file = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
  file.write_all(format!("{text}\n").as_bytes())?;
  file.sync_all()?;
  drop(file);
  std::fs::rename(&tmp, under(lock, &["owner.json"]))?;
  // A directory fsync can be refused by some file systems; the rename stands.
  if let Ok(d) = File::open(lock) {
    let _ = d.sync_all();
  }
  Ok(())
}

/// What `unlock` did when it did not refuse.
#[derive(Debug, PartialEq)]
pub enum Unlocked {
  /// There was no lock (`false`).
  NoLock,
  /// The lock was removed; the record it held (`null` for none).
  Cleared(Option<Owner>),
}

/// `unlock` after STOP was written: refuses a live, unverifiable or
/// unreadable owner; otherwise runs `beforeRemove` and removes the lock.
pub fn unlock_after_stop<S: Seams>(dir: &str, seams: &mut S) -> Result<Unlocked, S::Error> {
  if !exists(&lock_path(dir)) {
    return Ok(Unlocked::NoLock);
  }
  let rec = read_pid(dir);
  let pid = pid_text(&rec);
  match state_of(rec.as_ref(), seams)? {
    OwnerState::Live => {
      return Err(
        JournalError::failed(format!(
          "refusing to unlock: the connector is running (pid {pid}); use stop, and unlock only a lock whose owner is gone"
        ))
        .into(),
      )
    }
    OwnerState::Unknown => {
      return Err(
        JournalError::failed(format!(
          "refusing to unlock: pid {pid} is alive and its identity cannot be verified; nothing removed. Stop that process first"
        ))
        .into(),
      )
    }
    OwnerState::Invalid => {
      return Err(
        JournalError::failed(format!(
          "refusing to unlock: the owner record cannot be read; nothing removed. Inspect run.lock/owner.json in {} by hand",
          journal_label(dir)
        ))
        .into(),
      )
    }
    _ => {}
  }
  seams.before_remove()?;
  remove_lock(dir, 10)?;
  Ok(Unlocked::Cleared(rec))
}

/// `clearPid`: removes the lock when its record names `pid`.
pub fn clear_pid(dir: &str, pid: Option<f64>) -> Result<()> {
  if let (Some(Owner::Valid { pid: owner, .. }), Some(pid)) = (read_pid(dir), pid) {
    if owner == pid {
      remove_lock(dir, 0)?;
    }
  }
  Ok(())
}

/// `rmSync(run.lock, {recursive, force})`, retrying the transient failures
/// Node retries (with `maxRetries` 10 and `retryDelay` 20 for unlock).
fn remove_lock(dir: &str, max_retries: u32) -> Result<()> {
  let lock = lock_path(dir);
  let mut attempt = 0;
  loop {
    attempt += 1;
    let result = match std::fs::symlink_metadata(&lock) {
      Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
      Err(e) => Err(e),
      Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&lock),
      Ok(_) => std::fs::remove_file(&lock),
    };
    let err = match result {
      Ok(()) => return Ok(()),
      Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
      Err(e) => e,
    };
    let transient = matches!(
      fs_code(&err).as_deref(),
      Some("EBUSY" | "EMFILE" | "ENFILE" | "ENOTEMPTY" | "EPERM")
    );
    if !transient || attempt > max_retries {
      return Err(quiet_io(&err, &format!("run.lock in {}", journal_label(dir)), "remove"));
    }
    std::thread::sleep(Duration::from_millis(20 * u64::from(attempt)));
  }
}

/// `stopTarget`: the verified live owner to signal, or `None`. Never a pid
/// whose identity cannot be proven.
pub fn stop_target<S: Seams>(rec: Option<Owner>, seams: &mut S) -> Result<Option<f64>, S::Error> {
  Ok(match (state_of(rec.as_ref(), seams)?, rec) {
    (OwnerState::Live, Some(Owner::Valid { pid, .. })) => Some(pid),
    _ => None,
  })
}

/// What `recover` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Recovered {
  Clean,
  Cleared,
}

/// `recover`, the supervised pre-start: lets a run that crashed start again
/// without a hand, while every operator brake holds. `stop_line(reason)`
/// makes a STOP line for `unlock`'s STOP. See the README for each refusal.
pub fn recover<S: Seams>(
  dir: &str,
  seams: &mut S,
  stop_line: impl FnOnce(&str) -> Result<String, Option<String>>,
) -> Result<Recovered, S::Error> {
  let label = journal_label(dir);
  if stop::requested(dir) {
    if !stop::is_ours(&stop::read(dir)?) {
      return Err(JournalError::brake(format!("STOP is present in {label}; the brake is on. Remove it to run")).into());
    }
    stop::clear(dir)?;
  }
  if !exists(&lock_path(dir)) {
    return Ok(Recovered::Clean);
  }
  let state = state_of(read_pid(dir).as_ref(), seams)?;
  if matches!(state, OwnerState::Live | OwnerState::Unknown | OwnerState::Invalid) {
    return Err(refusal(dir, seams)?.into());
  }
  stop::with_lock(dir, || stop::append(dir, || stop_line(stop::RECOVER_REASON)))?;
  unlock_after_stop(dir, seams)?;
  if !stop::is_ours(&stop::read(dir)?) {
    return Err(
      JournalError::brake(format!(
        "STOP was written by an operator while recovering {label}; the brake stays. Remove it to run"
      ))
      .into(),
    );
  }
  stop::clear(dir)?;
  Ok(Recovered::Cleared)
}
