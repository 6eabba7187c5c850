//! What a judgement of a lock rests on: the inode a name held when it was
//! looked at (`Stamp`), and the owner record read (`Record`). The owner
//! record's reader makes them, the removal compares with them.

use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;

use nix::sys::stat::{fstat, FileStat, SFlag};

/// What names one inode while it exists: its device, inode number and
/// whether it is a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
  dev: u64,
  ino: u64,
  pub(super) dir: bool,
}

impl Stamp {
  #[allow(clippy::unnecessary_cast)] // dev_t is u64 on Linux, i32 on macOS
  pub fn of(st: &FileStat) -> Stamp {
    Stamp {
      dev: st.st_dev as u64,
      ino: st.st_ino,
      dir: st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFDIR.bits(),
    }
  }

  pub fn of_meta(m: &std::fs::Metadata) -> Stamp {
    Stamp {
      dev: m.dev(),
      ino: m.ino(),
      dir: m.is_dir(),
    }
  }

  pub fn is_dir(&self) -> bool {
    self.dir
  }

  /// The open file's own inode.
  pub fn of_fd(fd: impl AsFd) -> Option<Stamp> {
    fstat(fd).ok().map(|st| Stamp::of(&st))
  }

  /// `path` itself (a final symlink not followed), if anything is there.
  pub fn at(path: &str) -> Option<Stamp> {
    std::fs::symlink_metadata(path).ok().map(|m| Stamp::of_meta(&m))
  }
}

/// The owner record a judgement rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
  /// No owner.json (`existsSync` false).
  Absent,
  /// The file the record was read from.
  File(Stamp),
  /// A record that could not be opened or read: it never allows a removal.
  Unread,
}

/// One lock as it was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Judged {
  /// `run.lock` itself when it was judged; `None` when nothing was there.
  pub lock: Option<Stamp>,
  pub record: Record,
}
