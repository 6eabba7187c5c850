//! `recover`, the supervised pre-start: a crashed run's lock cleared, with
//! the STOP it writes for that removed after, while every operator brake
//! holds (docs/operators.md).

use crate::ground::error::{JournalError, Result, ThrownCode};
use crate::ground::files::exists;
use crate::ground::guard::guarded;
use crate::ground::paths::journal_label;
use crate::stop;

use super::owner::{lock_path, read_owner};
use super::remove;
use super::state::{refusal, state_of, OwnerState, Seams};
use super::unlock::unlock_after_stop;

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
  // A lock a live process holds marked (a release in progress, or an owner
  // this process cannot judge) is refused before recover's STOP is written.
  let path = lock_path(dir);
  if let Some(lock) = remove::Stamp::at(&path).filter(|s| s.is_dir()) {
    if let Err(who) = super::held::vacant(&path, lock, std::time::Duration::ZERO) {
      return Err(super::claim::held_refusal(&who).into());
    }
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

#[cfg(test)]
mod tests {
  use super::*;
  use crate::lock::fixtures::*;
  use crate::testutil::TempDir;

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
