//! Opt-in durability: with `DISCORD_JOURNAL_FSYNC=1` in the environment
//! (read once, at the first write), every append to a record file, turn
//! record, STOP line and owner record is on disk before the call returns:
//! the file's data synced, and the directory synced where the call created
//! the name. Unset, no system call is added. docs/durability.md says what
//! a power loss can take under each setting.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::OnceLock;

/// Whether writes are synced.
pub fn on() -> bool {
  static ON: OnceLock<bool> = OnceLock::new();
  *ON.get_or_init(|| std::env::var_os("DISCORD_JOURNAL_FSYNC").is_some_and(|v| v == "1"))
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
  std::fs::OpenOptions::new()
    .read(true)
    .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_CLOEXEC)
    .open(path)
}
