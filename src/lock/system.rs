//! The seams' defaults, for the command's own operations (`repair`'s
//! hold), which take no test seam.

use crate::ground::error::{JournalError, Result};

use super::state::{Field, Identity, Seams};

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
