//! Opt-in durability: with `DISCORD_JOURNAL_FSYNC=1` in the environment
//! (read once, when the module loads), every append to a record file, turn
//! record, STOP line and owner record is on disk before the call returns:
//! the file's data synced, and the directory synced where the call created
//! the name. Unset, no system call is added. docs/durability.md says what
//! a power loss can take under each setting.

use std::fs::File;
use std::sync::OnceLock;

use crate::ground::files::{open_dir, Link};

pub const VAR: &str = "DISCORD_JOURNAL_FSYNC";

/// Whether writes are synced; off where the setting is refused (`setting`
/// says why, at load).
pub fn on() -> bool {
  setting().unwrap_or(false)
}

/// The setting: unset, empty or `0` off, `1` on; anything else (`true`,
/// `yes`) is refused, since taking it as off would leave a host believing
/// its writes durable (#34). Read once: the environment at the first ask.
pub fn setting() -> crate::ground::error::Result<bool> {
  static ON: OnceLock<std::result::Result<bool, String>> = OnceLock::new();
  ON.get_or_init(|| match std::env::var_os(VAR) {
    None => Ok(false),
    Some(v) => match v.to_str() {
      Some("" | "0") => Ok(false),
      Some("1") => Ok(true),
      _ => Err(format!(
        "{VAR} must be 1 (every write on disk before it returns) or 0 (the default), not {:?}: set it to 1 or unset it",
        v.to_string_lossy()
      )),
    },
  })
  .clone()
  .map_err(crate::ground::error::JournalError::failed)
}

/// Syncs the file's data (fdatasync) when durability is on.
pub fn file(f: &File) -> std::io::Result<()> {
  if on() {
    f.sync_data()?;
  }
  Ok(())
}

/// Syncs the directory `path`, so that a name created in it survives a
/// power loss, when durability is on.
pub fn dir(path: &str) -> std::io::Result<()> {
  if on() {
    held_dir(path)?.sync_all()?;
  }
  Ok(())
}

/// Syncs a directory held open, when durability is on.
pub fn dir_fd(d: &File) -> std::io::Result<()> {
  if on() {
    d.sync_all()?;
  }
  Ok(())
}

fn held_dir(path: &str) -> std::io::Result<File> {
  open_dir(path, Link::Follow)
}
