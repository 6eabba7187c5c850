//! `recover`, the supervised pre-start: a crashed run's lock cleared, with
//! the STOP it writes for that removed after, while every operator brake
//! holds (docs/operators.md).

use super::guard::guarded;
use crate::ground::error::{JournalError, Result, ThrownCode};
use crate::ground::files::exists;
use crate::ground::journal::Journal;
use crate::stop;

use super::owner::{identified, read_owner, refusal, state_of, Identity, OwnerState, Seams};
use super::remove;
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
  j: &Journal,
  seams: &mut S,
  stop_line: impl FnOnce(&str) -> Result<String, ThrownCode>,
) -> Result<Recovered, S::Error> {
  let mut seams = Prescanned::before_guard(j, seams); // r0
  guarded(j, || recover_guarded(j, &mut seams, stop_line)) // r1, r2 to r6 inside, r7 as it returns
}

/// The seams, with the namespace scan for the owner record made before the
/// guard was taken (#44: a scan of 2,000 processes takes tens of ms, which
/// every claim of the binding would otherwise wait behind, twice). Inside
/// the guard, the same record's "alive elsewhere?" is answered from it: a
/// process that was nowhere does not come back with the record's start
/// time (its pid and start are a past process's, which no new process
/// shares), and one that was found is asked again, alone, and scanned for
/// afresh where it has gone. Any other record is scanned for as before.
struct Prescanned<'a, S> {
  seams: &'a mut S,
  /// The record scanned for (pid, start, boot), and the process found.
  scanned: Option<((u64, String, String), Option<u32>)>,
}

impl<'a, S: Seams> Prescanned<'a, S> {
  fn before_guard(j: &Journal, seams: &'a mut S) -> Self {
    let (rec, _) = read_owner(j);
    let scanned = identified(rec.as_ref()).and_then(|(pid, start, boot)| {
      // An owner alive here by its identity needs no scan.
      let here = Identity::of(pid);
      if crate::identity::pid_alive(pid) && here.start.is(start) && here.boot.is(boot) {
        return None;
      }
      let found = crate::identity::owner_elsewhere(pid, start, boot);
      Some(((pid.to_bits(), start.to_owned(), boot.to_owned()), found))
    });
    Prescanned { seams, scanned }
  }
}

impl<S: Seams> Seams for Prescanned<'_, S> {
  type Error = S::Error;
  fn identity(&mut self, pid: f64) -> Result<Identity, S::Error> {
    self.seams.identity(pid)
  }
  fn before_remove(&mut self) -> Result<(), S::Error> {
    self.seams.before_remove()
  }
  fn alive(&mut self, pid: f64) -> Result<bool, S::Error> {
    self.seams.alive(pid)
  }
  fn identity_matches(&mut self, pid: f64, start: &str, boot: &str) -> Result<Option<bool>, S::Error> {
    self.seams.identity_matches(pid, start, boot)
  }
  fn elsewhere(&mut self, pid: f64, start: &str, boot: &str) -> Result<bool, S::Error> {
    match &self.scanned {
      Some(((p, s, b), found)) if *p == pid.to_bits() && s == start && b == boot => match found {
        None => Ok(false),
        Some(here) if crate::identity::elsewhere([*here], start, boot).is_some() => Ok(true),
        Some(_) => self.seams.elsewhere(pid, start, boot),
      },
      _ => self.seams.elsewhere(pid, start, boot),
    }
  }
}

fn recover_guarded<S: Seams>(
  j: &Journal,
  seams: &mut S,
  stop_line: impl FnOnce(&str) -> Result<String, ThrownCode>,
) -> Result<Recovered, S::Error> {
  let label = j.label(); // r2 next
  if stop::requested(j) {
    clear_own_stop(j, || format!("STOP is present in {label}; the brake is on. Remove it to run"))?;
  }
  // A record opened through run.lock answers the reference's
  // `existsSync(lock)` before its readPid (the readers take a successful
  // open as existsSync's yes, see files::missing); anything else asks it.
  let (rec, record) = read_owner(j); // r3: no lock is clean; else the owner judged, and its mark
  if !matches!(record, remove::Record::File(_)) && !exists(&j.lock()) {
    return Ok(Recovered::Clean);
  }
  let state = state_of(rec.as_ref(), seams)?;
  if matches!(state, OwnerState::Live | OwnerState::Unknown | OwnerState::Invalid) {
    return Err(refusal(j, seams)?.into());
  }
  // A lock a live process holds marked (a release in progress, or an owner
  // this process cannot judge) is refused before recover's STOP is written.
  let path = j.lock();
  if let Some(lock) = remove::Stamp::at(&path).filter(|s| s.dir) {
    if let Err(who) = super::held::vacant(&path, lock, std::time::Duration::ZERO, &mut Vec::new()) {
      return Err(super::claim::held_refusal(&who).into());
    }
  }
  stop::with_lock(j, || stop::append(j, || stop_line(stop::RECOVER_REASON)))?; // r4
  unlock_after_stop(j, seams)?; // r5: u3 to u7; r6 next
  clear_own_stop(j, || {
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
fn clear_own_stop(j: &Journal, brake: impl FnOnce() -> String) -> Result<()> {
  stop::with_lock(j, || {
    if !stop::is_ours(&stop::read(j)?) {
      return Err(JournalError::brake(brake()));
    }
    stop::clear_read(j)
  })
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::lock::fixtures::*;
  use crate::testutil::TempDir;

  /// Seams that count the namespace scans asked of them.
  struct Scans(Fixed, usize);

  impl Seams for Scans {
    type Error = JournalError;
    fn identity(&mut self, pid: f64) -> Result<crate::lock::owner::Identity> {
      self.0.identity(pid)
    }
    fn before_remove(&mut self) -> Result<()> {
      self.0.before_remove()
    }
    fn elsewhere(&mut self, _pid: f64, _start: &str, _boot: &str) -> Result<bool> {
      self.1 += 1;
      Ok(false)
    }
  }

  /// The scan made before the guard answers for the same record inside
  /// it; another record, or an owner found before and gone since, is
  /// scanned for again.
  #[test]
  fn the_namespace_scan_is_made_before_the_guard() {
    let d = TempDir::new();
    std::fs::create_dir(d.journal().lock()).expect("lock");
    let gone = 0x3fff_fff0 as f64; // past pid_max: no process here
    let rec = record(gone, "5");
    std::fs::write(format!("{}/owner.json", d.journal().lock()), rec).expect("record");
    let mut seams = Scans(fixed("5"), 0);
    let mut pre = Prescanned::before_guard(&d.journal(), &mut seams);
    assert!(matches!(pre.scanned, Some((_, None))));
    assert_eq!(pre.elsewhere(gone, "5", BOOT), Ok(false));
    assert_eq!(pre.elsewhere(gone, "6", BOOT), Ok(false));
    pre.scanned = Some(((gone.to_bits(), "5".into(), BOOT.into()), Some(0x3fff_fff1)));
    assert_eq!(pre.elsewhere(gone, "5", BOOT), Ok(false));
    assert_eq!(seams.1, 2);
  }

  #[test]
  fn recover_clears_a_stale_lock_and_its_own_stop() {
    let d = TempDir::new();
    let line = |reason: &str| Ok(format!(r#"{{"at":"2021-01-01T00:00:00.000Z","reason":"{reason}"}}"#));
    assert_eq!(recover(&d.journal(), &mut fixed("5"), line), Ok(Recovered::Clean));
    std::fs::create_dir(d.journal().lock()).expect("ownerless lock");
    assert_eq!(recover(&d.journal(), &mut fixed("5"), line), Ok(Recovered::Cleared));
    assert!(!stop::requested(&d.journal()) && !exists(&d.journal().lock()));
    stop::with_lock(&d.journal(), || stop::append(&d.journal(), || line("operator"))).expect("STOP");
    assert!(matches!(
      recover(&d.journal(), &mut fixed("5"), line),
      Err(JournalError::Discord { exit_code: 3, .. })
    ));
  }
}
