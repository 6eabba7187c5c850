//! The seams' defaults, for the command's own operations (`repair`'s
//! hold), which take no test seam.

use crate::ground::error::{JournalError, Result};

use super::state::{Identity, Seams};

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
