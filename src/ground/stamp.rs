//! "Is this the same inode?", asked one way: the lock's judgements, the
//! guard's re-entry, a `.stop.lock` proved left, a repair's plan and its
//! quarantine. While an inode is held open its number goes to no other.

use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;

use nix::sys::stat::{fstat, FileStat, SFlag};

/// What names one inode while it exists: its device, inode number and
/// whether it is a directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
  dev: u64,
  ino: u64,
  pub dir: bool,
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

  /// The open file's own inode.
  pub fn of_fd(fd: impl AsFd) -> Option<Stamp> {
    fstat(fd).ok().map(|st| Stamp::of(&st))
  }

  /// `path` itself (a final symlink not followed), if anything is there.
  pub fn at(path: &str) -> Option<Stamp> {
    std::fs::symlink_metadata(path).ok().map(|m| Stamp::of_meta(&m))
  }
}
