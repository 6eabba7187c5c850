//! The hold a repair takes (`discord-journal repair --apply`): a dead
//! owner's lock cleared and a claim without the STOP gate, under the guard,
//! its mark made exclusive (docs/lock.md's "A repair's hold and release").

use std::fs::File;

use nix::fcntl::{Flock, FlockArg};

use super::owner::{read_pid, refusal, state_of, Identity, Owner, OwnerState, Seams};
use super::unlock::{clear_pid, unlock_after_stop, Unlocked};
use super::{claim::hold, guard::guarded};
use crate::ground::error::{JournalError, Result};
use crate::ground::files::{open_dir, Link};
use crate::ground::journal::Journal;

/// How the binding is held while a repair changes it: by a run.lock this
/// repair made, with its own owner record, released after (a repair killed
/// midway leaves a dead owner's lock, which the next repair or `recover`
/// clears). The run.lock directory is flocked while the repair holds it,
/// which is how a second repair knows it is one (a kill releases it).
#[derive(Debug)]
pub struct RepairHold {
  pid: f64,
  /// The pid of the dead owner whose lock was cleared to make this one.
  pub took_over: Option<String>,
  only: Option<Flock<File>>,
}

impl RepairHold {
  /// Holds the binding for a repair, as a claim holds it but STOP or no
  /// STOP. A dead owner's lock (or one whose pid is another process now)
  /// is cleared first, as `unlock` clears it (u3 to u7, without STOP), so
  /// that no `recover` can clear it during the repair and let a connector
  /// start in its middle. Refuses (exit 3) while another repair runs, and
  /// while a live owner holds it, or one whose record is missing,
  /// unreadable or unverifiable, as a claim would. The judgement, the
  /// clearing and the claim are one operation under the lock guard (c1,
  /// docs/lock.md): no `recover` or claim runs between them.
  pub fn take(j: &Journal, now_iso: &str) -> Result<RepairHold> {
    guarded(j, || {
      if running(j) {
        return Err(JournalError::brake(
          "another repair is running for this binding; let it finish (a repair holds the binding until it is done)",
        ));
      }
      let mut system = System;
      let mut took_over = None;
      if crate::ground::files::exists(&j.lock()) {
        match state_of(read_pid(j).as_ref(), &mut system)? {
          OwnerState::Dead | OwnerState::Mismatch => {
            if let Unlocked::Cleared(Some(Owner::Valid { pid, .. })) = unlock_after_stop(j, &mut system)? {
              took_over = Some(format!("{pid}"));
            }
          }
          _ => return Err(refusal(j, &mut system)?),
        }
      }
      let pid = f64::from(std::process::id());
      let (Some(start), Some(boot)) = (crate::identity::process_start(&format!("{pid}")), crate::identity::boot_id()) else {
        return Err(JournalError::failed(
          "cannot read this process's start time or the boot id from /proc; refusing to hold the binding for the repair",
        ));
      };
      let text = serde_json::json!({ "pid": pid as u64, "start": start, "boot": boot, "at": now_iso }).to_string();
      let held = hold(j, pid, &mut system, || Ok(text))?; // c2 to c7 and c9: no STOP gate
      Ok(RepairHold {
        pid,
        took_over,
        only: held.and_then(mark),
      })
    })
  }

  /// Releases the hold: its mark handed to the holders' list, so that the
  /// release is a holder's own, which no stopped process can hold up (#44).
  pub fn release(self, j: &Journal) -> Result<()> {
    if let Some(marked) = self.only {
      super::held::keep(marked);
    }
    clear_pid(j, Some(self.pid))
  }
}

/// The seams' defaults, for the command's own operations, which take no
/// test seam: identity read from /proc, nothing before a removal.
pub struct System;

impl Seams for System {
  type Error = JournalError;
  fn identity(&mut self, pid: f64) -> Result<Identity> {
    Ok(Identity::of(pid))
  }
  fn before_remove(&mut self) -> Result<()> {
    Ok(())
  }
}

/// Whether run.lock is a directory a repair holds flocked: a shared
/// flock, taken for an instant, is refused. Probes do not exclude one
/// another; a repair marking its lock in that instant tries again
/// (`mark`). Another process's exclusive flock on run.lock would read as a
/// repair: only a message tells it, since a live owner is refused alike.
pub fn running(j: &Journal) -> bool {
  let Ok(lock) = open_dir(&j.lock(), Link::NoFollow) else {
    return false;
  };
  matches!(
    Flock::lock(lock, FlockArg::LockSharedNonblock),
    Err((_, nix::errno::Errno::EWOULDBLOCK))
  )
}

/// Marks the run.lock this repair made as a repair's: its claim's shared
/// flock made exclusive, kept while it holds the binding. A probe
/// (`running`) holds a shared one for an instant, so the mark is tried
/// again for a while rather than lost to a probe that met it (#34); a flock
/// that stays held by another (no repair: the guard admits one) leaves it
/// shared, which only a message tells. A conversion that fails may leave
/// no flock at all (flock(2) is not atomic there), so the last attempt goes
/// back to a shared one.
fn mark(held: Flock<File>) -> Option<Flock<File>> {
  for _ in 0..200 {
    match held.relock(FlockArg::LockExclusiveNonblock) {
      Ok(()) => return Some(held),
      Err(nix::errno::Errno::EWOULDBLOCK) => std::thread::sleep(std::time::Duration::from_millis(1)),
      Err(_) => break,
    }
  }
  held.relock(FlockArg::LockSharedNonblock).ok().map(|()| held)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::testutil::TempDir;

  #[test]
  fn a_second_repair_at_once_is_refused() {
    let d = TempDir::new();
    let first = RepairHold::take(&d.journal(), "2021-01-01T00:00:00.000Z").expect("first");
    assert!(matches!(
      RepairHold::take(&d.journal(), "2021-01-01T00:00:00.000Z"),
      Err(JournalError::Discord { exit_code: 3, ref message }) if message.starts_with("another repair is running")
    ));
    first.release(&d.journal()).expect("released");
    let again = RepairHold::take(&d.journal(), "2021-01-01T00:00:00.000Z").expect("after the first");
    again.release(&d.journal()).expect("released");
  }
}
