//! Seams and records the claim, unlock and recover tests share.

use super::claim::claim;
use super::owner::{Field, Identity, Owner, Seams};
use crate::ground::error::{JournalError, Result};
use crate::ground::journal::Journal;

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

/// The owner record `claim_as_me` publishes.
pub fn my_record() -> Owner {
  Owner::Valid {
    pid: ME,
    start: Some("5".into()),
    boot: Some(BOOT.into()),
  }
}

/// A claim by pid 1 with start "5".
pub fn claim_as_me(j: &Journal, seams: &mut Fixed) -> Result<()> {
  claim(j, Some(ME), seams, None, || Ok(record(ME, "5")))
}
