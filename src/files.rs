//! Whole reads of small files: turn records, owner.json, STOP and /proc.
//! std's `fs::read` and `File::read_to_end` first ask the file its size
//! (statx, then lseek): two system calls more than a record of a few
//! hundred bytes needs, and /proc files report no size anyway. These read
//! into room for a page and grow only if the file is larger.

use std::fs::File;
use std::io::{Read, Result};

/// Room for a typical record in one read.
const FIRST: usize = 4096;

/// The whole of an open file, from where it stands to its end.
pub fn to_end(file: &File) -> Result<Vec<u8>> {
  let mut buf = Vec::with_capacity(FIRST);
  // `Take` is a plain reader: its read_to_end does not size the file.
  file.take(u64::MAX).read_to_end(&mut buf)?;
  Ok(buf)
}

/// The whole file at `path`.
pub fn read(path: &str) -> Result<Vec<u8>> {
  to_end(&File::open(path)?)
}

/// The whole file `name` in the directory `dir` (held open).
pub fn read_at(dir: &File, name: &str) -> Result<Vec<u8>> {
  use nix::fcntl::{openat, OFlag};
  let fd = openat(dir, name, OFlag::O_RDONLY | OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty())?;
  to_end(&File::from(fd))
}

/// Whether a failed open says nothing is at the path (ENOENT, ENOTDIR): what
/// existsSync would have answered at that instant. Asking existsSync again
/// after such a failure could see a file created meanwhile and call a
/// missing file unreadable.
pub fn absent(err: &std::io::Error) -> bool {
  matches!(err.raw_os_error(), Some(nix::libc::ENOENT | nix::libc::ENOTDIR))
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn reads_small_large_and_empty_files() {
    let d = crate::testutil::TempDir::new();
    for size in [0, 1, FIRST - 1, FIRST, FIRST + 1, 5 * FIRST + 3] {
      let path = format!("{}/f{size}", d.path());
      let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
      std::fs::write(&path, &bytes).expect("write");
      assert_eq!(read(&path).expect("read"), bytes);
      let dir = File::open(d.path()).expect("dir");
      assert_eq!(read_at(&dir, &format!("f{size}")).expect("read_at"), bytes);
    }
    assert_eq!(
      read(&format!("{}/missing", d.path())).map_err(|e| e.kind()),
      Err(std::io::ErrorKind::NotFound)
    );
  }

  #[test]
  fn reads_proc_files_that_report_no_size() {
    let stat = read("/proc/self/stat").expect("stat");
    assert!(stat.len() > 50, "{}", stat.len());
  }
}
