//! The mark a rewrite leaves in the file it renames over (#47): an
//! appender waiting on that file's flock must not find a whole last line
//! at the end it remembers, or it would write into a file no name links.

use std::fs::File;
use std::io::Write;

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;

use super::{FilePlan, Opened};

/// Appends a space to the file a rewrite is about to rename over, as the
/// last step before the rename, holding its flock (#47). An appender that
/// opened it before the rename and waits for the flock judges its tail by
/// reading two bytes at the end its thread's last append left
/// (`lines::append`), and takes the full check unless they are exactly one
/// newline. After the space the file's last byte is no newline, so no end,
/// however old, passes: the appender takes the full check, finds the file
/// unlinked and opens the new one. (A newline here would not do: an end
/// one byte past the size the repair checked, left from before an earlier
/// repair shortened the file, would find it.) Only a file that ends with a
/// newline can pass that read, and only one no other name links is
/// written: a hard-linked file is the other name's and keeps its bytes. A
/// kill between this and the rename leaves a last line of one space in
/// the old file: every reader skips it, `check` names it whitespace alone, the next
/// repair sets it aside, and an append glues onto it as `journal.mjs`'s
/// does. A failed rename takes the space off again (`take_back`). A file
/// the repair may read but not write is one no appender of this user
/// writes either, and is left as it is. Returns the file written and its
/// size before.
pub(super) fn leave_behind(j: &Opened, f: &FilePlan, source: &File) -> std::io::Result<Option<(File, u64)>> {
  use std::os::unix::fs::{FileExt, MetadataExt};
  let st = source.metadata()?;
  let mut last = [0u8; 1];
  if st.nlink() != 1 || st.len() == 0 || source.read_at(&mut last, st.len() - 1)? != 1 || last[0] != b'\n' {
    return Ok(None);
  }
  let fd = match openat(
    &j.fd,
    f.name,
    OFlag::O_WRONLY | OFlag::O_APPEND | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK,
    Mode::empty(),
  ) {
    Ok(fd) => File::from(fd),
    Err(nix::errno::Errno::EACCES | nix::errno::Errno::EPERM) => return Ok(None),
    Err(e) => return Err(e.into()),
  };
  let now = fd.metadata()?;
  if (now.dev(), now.ino()) != (st.dev(), st.ino()) {
    // Not the file checked: the rename replaces whatever is there, and the
    // file checked is no longer at the name for an appender to open.
    return Ok(None);
  }
  (&fd).write_all(b" ")?;
  Ok(Some((fd, st.len())))
}

/// Takes `leave_behind`'s space off again where the rename failed and
/// nothing was appended after it: a failed repair changes nothing.
pub(super) fn take_back(left: Option<(File, u64)>) {
  if let Some((fd, size)) = left {
    if fd.metadata().is_ok_and(|m| m.len() == size + 1) {
      let _ = fd.set_len(size);
    }
  }
}
