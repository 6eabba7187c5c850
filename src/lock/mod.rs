//! The run lock. One directory, `<dir>/run.lock`, is the ownership
//! primitive: mkdir is atomic, so two starts cannot both create it. The
//! owner record `{pid, start, boot, at}` is written to a temporary file in
//! it and linked as `owner.json`, which fails if a record is there: it
//! appears whole, and only one claim can publish into one directory.
//! Nothing reclaims a lock on its own: a lock without a record, or whose
//! owner is dead or a reused pid, refuses `run` until an operator runs
//! `unlock`.
//!
//! STOP is the quiescence gate that serializes `unlock` with every claim:
//! `unlock` writes STOP before it inspects or touches the lock, and a claim
//! re-checks STOP after publishing its record and releases itself if STOP
//! is there. So no claim made during an unlock can stand, and `unlock` only
//! removes a lock whose owner is verified dead or can no longer be held.
//! Automatic reclaim and compare-then-restore were rejected in review
//! (#1509): a rename proves nothing about which directory it moved.
//!
//! `owner` reads the record, `state` judges its owner (the ladder and the
//! test seams), `claim` is `writePid`, `remove` removes a judged lock by
//! descriptor; here are the operations that judge a lock and remove it.

use crate::ground::error::{quiet_io, JournalError, Result, ThrownCode};
use crate::ground::files::exists;
use crate::ground::paths::journal_label;
use crate::stop;

mod claim;
mod owner;
mod remove;
mod stamp;
mod state;

pub use crate::ground::guard::guarded;
pub use claim::{claim, hold};
use owner::pid_text;
use owner::read_owner;
pub use owner::{lock_path, owner_path, read_pid, Owner};
use remove::{judge, judge_at};
pub use state::{owner_state, refusal, state_of, Field, Identity, OwnerState, OwnerView, Seams};

pub const UNLOCK_HINT: &str = "if no connector is running for this binding, run `scripts/discord.sh unlock <binding>`";

/// A removal that failed, as the operation that attempted it refuses.
fn lock_refusal(dir: &str, e: &std::io::Error) -> JournalError {
  quiet_io(e, &format!("run.lock in {}", journal_label(dir)), "remove")
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
/// unreadable owner; otherwise runs `beforeRemove` and removes the lock
/// that was judged (whatever the path names by then is not removed: #10).
pub fn unlock_after_stop<S: Seams>(dir: &str, seams: &mut S) -> Result<Unlocked, S::Error> {
  let path = lock_path(dir);
  // The judgement's lstat also answers the reference's `existsSync(lock)`
  // where it can: no name is no lock, and a name that is not a link exists
  // (the readers take a successful open as existsSync's yes alike, see
  // files::missing). Only a link (existsSync follows it: a dangling one is
  // no lock) or a failure other than ENOENT asks access(2) as well.
  let at = std::fs::symlink_metadata(&path);
  let present = match &at {
    Ok(meta) => !meta.file_type().is_symlink() || exists(&path),
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
    Err(_) => exists(&path),
  };
  if !present {
    return Ok(Unlocked::NoLock);
  }
  let (rec, judged) = judge_at(dir, at.ok().map(|meta| remove::Stamp::of_meta(&meta)));
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
  remove::remove(dir, &judged, None, 10).map_err(|e| lock_refusal(dir, &e))?;
  Ok(Unlocked::Cleared(rec))
}

/// `clearPid`: removes the lock when its record names `pid`; the lock
/// removed is the one whose record was read (#10).
pub fn clear_pid(dir: &str, pid: Option<f64>) -> Result<()> {
  guarded(dir, || {
    let (rec, judged) = judge(dir);
    if rec.is_some_and(|rec| rec.names(pid)) {
      remove::remove(dir, &judged, None, 0).map_err(|e| lock_refusal(dir, &e))?;
    }
    Ok(())
  })
}

/// `unlock`: `request_stop` writes its STOP line (the reference's
/// `requestStop(dir, reason)`), then the lock is judged and removed, all
/// under the guard, so that no claim, release or recover of this package
/// runs between the STOP and the removal.
pub fn unlock<S: Seams>(dir: &str, seams: &mut S, request_stop: impl FnOnce() -> Result<(), S::Error>) -> Result<Unlocked, S::Error> {
  guarded(dir, || {
    request_stop()?;
    unlock_after_stop(dir, seams)
  })
}

/// `stopTarget`: the verified live owner to signal, or `None`. Never a pid
/// whose identity cannot be proven.
pub fn stop_target<S: Seams>(rec: Option<Owner>, seams: &mut S) -> Result<Option<f64>, S::Error> {
  Ok(match (state_of(rec.as_ref(), seams)?, rec) {
    (OwnerState::Live, Some(Owner::Valid { pid, .. })) => Some(pid),
    _ => None,
  })
}

/// The seams' defaults, for the command's own operations, which take no
/// test seam: identity read from /proc, nothing before a removal.
pub struct System;

impl Seams for System {
  type Error = JournalError;
  fn identity(&mut self, pid: f64) -> Result<Identity> {
    let pid = format!("{pid}");
    let field = |s: Option<String>| s.map_or(Field::Null, |s| Field::Str(s.encode_utf16().collect()));
    Ok(Identity {
      start: field(crate::identity::process_start(&pid)),
      boot: field(crate::identity::boot_id()),
    })
  }
  fn before_remove(&mut self) -> Result<()> {
    Ok(())
  }
}

/// What `recover` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Recovered {
  Clean,
  Cleared,
}

/// `recover`, the supervised pre-start: lets a run that crashed start again
/// without a hand, while every operator brake holds. `stop_line(reason)`
/// makes a STOP line for `unlock`'s STOP. docs/operators.md gives each refusal.
pub fn recover<S: Seams>(
  dir: &str,
  seams: &mut S,
  stop_line: impl FnOnce(&str) -> Result<String, ThrownCode>,
) -> Result<Recovered, S::Error> {
  guarded(dir, || recover_guarded(dir, seams, stop_line))
}

fn recover_guarded<S: Seams>(
  dir: &str,
  seams: &mut S,
  stop_line: impl FnOnce(&str) -> Result<String, ThrownCode>,
) -> Result<Recovered, S::Error> {
  let label = journal_label(dir);
  if stop::requested(dir) {
    clear_own_stop(dir, || format!("STOP is present in {label}; the brake is on. Remove it to run"))?;
  }
  // A record opened through run.lock answers the reference's
  // `existsSync(lock)` before its readPid (the readers take a successful
  // open as existsSync's yes, see files::missing); anything else asks it.
  let (rec, record) = read_owner(dir);
  if !matches!(record, remove::Record::File(_)) && !exists(&lock_path(dir)) {
    return Ok(Recovered::Clean);
  }
  let state = state_of(rec.as_ref(), seams)?;
  if matches!(state, OwnerState::Live | OwnerState::Unknown | OwnerState::Invalid) {
    return Err(refusal(dir, seams)?.into());
  }
  stop::with_lock(dir, || stop::append(dir, || stop_line(stop::RECOVER_REASON)))?;
  unlock_after_stop(dir, seams)?;
  clear_own_stop(dir, || {
    format!("STOP was written by an operator while recovering {label}; the brake stays. Remove it to run")
  })?;
  Ok(Recovered::Cleared)
}

/// Removes STOP if it is still only the one line `recover` wrote, else
/// refuses with the brake `brake` says. The check and the removal hold
/// `.stop.lock`, as every STOP writer does, so an operator's `requestStop`
/// cannot land between them and be deleted with recover's own line (#21;
/// the reference reads and removes without it, and deletes such a brake in
/// about 1 of 1,500 racing trials). A `.stop.lock` that another update
/// holds refuses as that update's own would ("STOP update is locked"):
/// a supervisor retries, and then sees the brake.
fn clear_own_stop(dir: &str, brake: impl FnOnce() -> String) -> Result<()> {
  stop::with_lock(dir, || {
    if !stop::is_ours(&stop::read(dir)?) {
      return Err(JournalError::brake(brake()));
    }
    stop::clear_read(dir)
  })
}

/// Seams and records the claim, unlock and recover tests share.
#[cfg(test)]
mod fixtures {
  use super::*;

  /// Seams answering a fixed identity, counting their calls.
  pub struct Fixed {
    start: &'static str,
    pub calls: usize,
    pub removes: usize,
  }

  impl Seams for Fixed {
    type Error = JournalError;
    fn identity(&mut self, _pid: f64) -> Result<Identity> {
      self.calls += 1;
      Ok(Identity {
        start: Field::Str(self.start.encode_utf16().collect()),
        boot: Field::Str(BOOT.encode_utf16().collect()),
      })
    }
    fn before_remove(&mut self) -> Result<()> {
      self.removes += 1;
      Ok(())
    }
  }

  pub fn fixed(start: &'static str) -> Fixed {
    Fixed {
      start,
      calls: 0,
      removes: 0,
    }
  }

  pub const BOOT: &str = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";
  pub const ME: f64 = 1.0; // pid 1 is alive (and, as root, signalable)

  pub fn record(pid: f64, start: &str) -> String {
    format!(r#"{{"pid":{pid},"start":"{start}","boot":"{BOOT}","at":"2021-01-01T00:00:00.000Z"}}"#)
  }

  /// A claim by pid 1 with start "5".
  pub fn claim_as_me(dir: &str, seams: &mut Fixed) -> Result<()> {
    claim(dir, Some(ME), seams, || Ok(record(ME, "5")))
  }
}

#[cfg(test)]
mod tests {
  use super::fixtures::*;
  use super::*;
  use crate::testutil::TempDir;

  #[test]
  fn unlock_judges_and_clears() {
    let d = TempDir::new();
    let mut live = fixed("5");
    assert_eq!(unlock_after_stop(d.path(), &mut live), Ok(Unlocked::NoLock));
    claim_as_me(d.path(), &mut live).expect("claim");
    assert!(unlock_after_stop(d.path(), &mut live).is_err());
    assert_eq!(live.removes, 0);
    let mut other = fixed("6");
    let cleared = unlock_after_stop(d.path(), &mut other).expect("mismatch clears");
    assert_eq!(
      cleared,
      Unlocked::Cleared(Some(Owner::Valid {
        pid: ME,
        start: Some("5".into()),
        boot: Some(BOOT.into())
      }))
    );
    assert_eq!(other.removes, 1);
    assert!(!exists(&lock_path(d.path())));
  }

  /// existsSync follows a link: a dangling run.lock is no lock and stays; a
  /// link to a directory is a lock, and only the link goes.
  #[test]
  fn unlock_asks_existence_as_exists_sync_does() {
    let d = TempDir::new();
    let lock = lock_path(d.path());
    std::os::unix::fs::symlink(format!("{}/nowhere", d.path()), &lock).expect("dangling");
    assert_eq!(unlock_after_stop(d.path(), &mut fixed("5")), Ok(Unlocked::NoLock));
    assert!(std::fs::symlink_metadata(&lock).is_ok());
    std::fs::remove_file(&lock).expect("unlink");
    let target = format!("{}/target", d.path());
    std::fs::create_dir(&target).expect("target");
    std::os::unix::fs::symlink(&target, &lock).expect("link");
    assert_eq!(unlock_after_stop(d.path(), &mut fixed("5")), Ok(Unlocked::Cleared(None)));
    assert!(std::fs::symlink_metadata(&lock).is_err() && exists(&target));
  }

  #[test]
  fn recover_clears_a_stale_lock_and_its_own_stop() {
    let d = TempDir::new();
    let line = |reason: &str| Ok(format!(r#"{{"at":"2021-01-01T00:00:00.000Z","reason":"{reason}"}}"#));
    assert_eq!(recover(d.path(), &mut fixed("5"), line), Ok(Recovered::Clean));
    std::fs::create_dir(lock_path(d.path())).expect("ownerless lock");
    assert_eq!(recover(d.path(), &mut fixed("5"), line), Ok(Recovered::Cleared));
    assert!(!stop::requested(d.path()) && !exists(&lock_path(d.path())));
    stop::with_lock(d.path(), || stop::append(d.path(), || line("operator"))).expect("STOP");
    assert!(matches!(
      recover(d.path(), &mut fixed("5"), line),
      Err(JournalError::Discord { exit_code: 3, .. })
    ));
  }
}
