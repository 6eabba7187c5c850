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
//! This file is the door: the rooms below, and what each lends the rest
//! of the crate. `guard` orders this package's operations on the lock,
//! `owner` reads the record and judges its owner (the ladder and the
//! test seams), `claim` is `writePid`, `remove` removes a judged lock by
//! descriptor, `unlock` and `recover` are the operations that judge a lock
//! and remove it, `repair` the hold a repair takes (and `System`, the seams
//! of the command's own operations).

mod claim;
#[cfg(test)]
mod fixtures;
pub mod guard;
mod held;
mod owner;
mod recover;
mod remove;
mod repair;
mod unlock;

pub use claim::claim;
pub use guard::guarded;
pub use held::holder;
pub use owner::{owner_state, Field, Identity, OwnerState, OwnerView, Seams, UNLOCK_HINT};
pub use owner::{read_pid, Owner};
pub use recover::{recover, Recovered};
pub use repair::{running as repair_running, RepairHold};
pub use unlock::{clear_pid, stop_target, unlock, Unlocked};
