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

/// Whether a failed open of `path` means "no file", as the reference's
/// `existsSync` before its read would have said: the readers open first and
/// ask this only when the open fails. ENOENT and ENOTDIR answer it at once
/// (asking existsSync again could see a file created meanwhile and call a
/// missing file unreadable); any other failure asks existsSync's question.
pub fn missing(err: &std::io::Error, path: &str) -> bool {
  matches!(err.raw_os_error(), Some(nix::libc::ENOENT | nix::libc::ENOTDIR)) || !crate::lines::exists(path)
}

/// Node's `mkdirSync(path, { recursive: true, mode })`, step for step as
/// node_file.cc's MKDirpSync takes them, so that a failure carries the
/// errno Node reports: where a directory belongs, a file is EEXIST (ENOTDIR
/// when more is to be made under it), and a dangling link or a loop is what
/// the stat of it says (ENOENT, ELOOP).
pub fn mkdir_p(path: &str, mode: u32) -> Result<()> {
  use nix::libc::{EACCES, EEXIST, ENOENT, ENOSPC, ENOTDIR, EPERM};
  use std::os::unix::fs::DirBuilderExt;
  let fail = std::io::Error::from_raw_os_error;
  let mut stack = vec![path.to_string()];
  // Node's loop can revisit a path that keeps failing with ENOENT (a
  // removed working directory); this one gives up instead of spinning.
  for _ in 0..4096 {
    let Some(next) = stack.pop() else { return Ok(()) };
    let mut err = match std::fs::DirBuilder::new().mode(mode).create(&next) {
      Ok(()) => 0,
      Err(e) => e.raw_os_error().ok_or(e)?,
    };
    loop {
      match err {
        0 => {}
        EACCES | ENOSPC | ENOTDIR | EPERM => return Err(fail(err)),
        ENOENT => {
          let dirname = next.rfind('/').map_or(next.as_str(), |i| &next[..i]).to_string();
          if dirname != next {
            stack.push(next.clone());
            stack.push(dirname);
          } else if stack.is_empty() {
            err = EEXIST;
            continue;
          }
        }
        _ => match std::fs::metadata(&next) {
          Ok(meta) if !meta.is_dir() => return Err(fail(if err == EEXIST && !stack.is_empty() { ENOTDIR } else { EEXIST })),
          Ok(_) => {}
          Err(e) => return Err(e),
        },
      }
      break;
    }
  }
  Err(fail(ENOENT))
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
  fn mkdir_p_fails_as_node_does() {
    use std::os::unix::fs::symlink;
    let d = crate::testutil::TempDir::new();
    let code = |p: &str| mkdir_p(p, 0o700).map_err(|e| e.raw_os_error());
    assert_eq!(code(&format!("{}/a/b/c", d.path())), Ok(()));
    assert_eq!(code(&format!("{}/a/b/c", d.path())), Ok(()));
    std::fs::write(format!("{}/file", d.path()), "").expect("file");
    assert_eq!(code(&format!("{}/file", d.path())), Err(Some(nix::libc::EEXIST)));
    assert_eq!(code(&format!("{}/file/x", d.path())), Err(Some(nix::libc::ENOTDIR)));
    symlink(format!("{}/nowhere", d.path()), format!("{}/dangling", d.path())).expect("link");
    assert_eq!(code(&format!("{}/dangling", d.path())), Err(Some(nix::libc::ENOENT)));
    assert_eq!(code(&format!("{}/dangling/x", d.path())), Err(Some(nix::libc::ENOENT)));
    symlink(format!("{}/loop", d.path()), format!("{}/loop", d.path())).expect("loop");
    assert_eq!(code(&format!("{}/loop", d.path())), Err(Some(nix::libc::ELOOP)));
    assert_eq!(code(&format!("{}/loop/x", d.path())), Err(Some(nix::libc::ELOOP)));
    symlink(format!("{}/a", d.path()), format!("{}/to-dir", d.path())).expect("link");
    assert_eq!(code(&format!("{}/to-dir/b/new", d.path())), Ok(()));
  }

  #[test]
  fn reads_proc_files_that_report_no_size() {
    let stat = read("/proc/self/stat").expect("stat");
    assert!(stat.len() > 50, "{}", stat.len());
  }
}
