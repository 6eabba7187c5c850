//! Opening and reading journal files. Every open of a journal file (the
//! `*.jsonl` files, turn records, STOP, owner.json) goes through `open` or
//! `open_at`, which refuse a file that is not a regular file (#10): a FIFO
//! would block the open (or the read) forever and a device such as
//! /dev/zero would be read without bound, where the reference hangs or
//! grows until it runs out of memory. Beyond the reference; a regular file,
//! a symlink to one, a directory and a missing file keep their outcomes.
//!
//! Every directory the crate opens to list, lock, sync or hold as a base
//! goes through `open_dir` or `open_dir_at`: O_DIRECTORY, so a FIFO or file
//! put at the name is ENOTDIR and never waited on, close-on-exec, and a
//! final link followed or not as the caller says.
//!
//! Whole reads of small files: std's `fs::read` and `File::read_to_end`
//! first ask the file its size (statx, then lseek): two system calls more
//! than a record of a few hundred bytes needs, and /proc files report no
//! size anyway. These read into room for a page and grow only if the file
//! is larger.

use std::fs::{File, OpenOptions};
use std::io::{Error, Read, Result};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;

use nix::fcntl::OFlag;
use nix::libc;
use nix::sys::stat::FileStat;

pub use crate::ground::flock::{flock_until, flock_until_closed, flock_within, Flocked, Unflocked};

/// Whether a directory's open follows a final symlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
  Follow,
  /// O_NOFOLLOW: a link at the name is ELOOP (a run.lock swapped for one).
  NoFollow,
}

fn dir_flags(link: Link) -> OFlag {
  let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
  match link {
    Link::Follow => flags,
    Link::NoFollow => flags | OFlag::O_NOFOLLOW,
  }
}

/// The directory at `path`, opened for reading.
pub fn open_dir(path: &str, link: Link) -> Result<File> {
  OpenOptions::new().read(true).custom_flags(dir_flags(link).bits()).open(path)
}

/// The directory at `path` itself (a final link not followed), held for
/// its identity only: O_PATH on Linux, which needs no permission on it.
pub fn open_dir_path(path: &str) -> nix::Result<std::os::fd::OwnedFd> {
  #[cfg(target_os = "linux")]
  let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
  #[cfg(not(target_os = "linux"))]
  let flags = dir_flags(Link::NoFollow);
  nix::fcntl::open(path, flags, nix::sys::stat::Mode::empty())
}

/// Whether one descriptor more than `fd` can still be had. The reference
/// works with one free descriptor, and so must every operation here: what
/// this package takes beyond it (the guard, the STOP mark, a holder's mark,
/// a remover's flock, a record written early) is taken only where the
/// operation's own would still be free after it.
pub fn spare(fd: impl AsFd) -> bool {
  nix::unistd::dup(fd).is_ok()
}

/// The directory `name` in the directory `dir` holds open (`AT_FDCWD` for a
/// path), opened for reading; nix's error, for callers that match errnos.
pub fn open_dir_at<P: ?Sized + nix::NixPath>(dir: impl AsFd, name: &P, link: Link) -> nix::Result<std::os::fd::OwnedFd> {
  nix::fcntl::openat(dir, name, dir_flags(link), nix::sys::stat::Mode::empty())
}

/// Room for a typical record in one read.
const FIRST: usize = 4096;

/// The refusal of a journal file that is not a regular file or a
/// directory. `fs_code` names it `EFTYPE`, libuv's "inappropriate file type
/// or format", so the reference's quietFs wording reads
/// `could not read inbox.jsonl (EFTYPE)`: Linux has no errno that says it.
#[derive(Debug)]
pub struct NotRegular;

impl std::fmt::Display for NotRegular {
  fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    f.write_str("not a regular file")
  }
}

impl std::error::Error for NotRegular {}

/// Whether `err` is the refusal of a file that is not a regular file.
pub fn is_not_regular(err: &Error) -> bool {
  err.get_ref().is_some_and(|e| e.is::<NotRegular>())
}

fn not_regular() -> Error {
  Error::other(NotRegular)
}

/// How a journal file is opened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Access {
  /// O_RDONLY.
  Read,
  /// O_WRONLY | O_APPEND | O_CREAT, mode 0600 under the umask: Node's
  /// `appendFileSync(path, data, { mode: 0o600 })` and the STOP writer's
  /// flags.
  Append,
  /// `Append` with O_RDWR in place of O_WRONLY, so that the appender can
  /// read the file's last byte (see `lines::append`).
  ReadAppend,
}

/// Flags added to every open: O_NONBLOCK so that a FIFO's open returns at
/// once (a read-only open succeeds, a write-only one with no reader fails
/// ENXIO) instead of waiting for the other end; O_NOCTTY so that a terminal
/// put in a journal file's place never becomes the controlling terminal.
/// O_CLOEXEC is std's (and given to openat). O_NONBLOCK is left set on a
/// regular file: Linux ignores it for a regular file's read and write
/// (mandatory locking, the one exception, is gone since 5.15), and the
/// descriptor never leaves the call that opened it.
/// O_NOATIME where there is one (Linux): a read that sets no access time.
#[cfg(target_os = "linux")]
pub const NOATIME: libc::c_int = libc::O_NOATIME;
#[cfg(not(target_os = "linux"))]
pub const NOATIME: libc::c_int = 0;

const GUARD: libc::c_int = libc::O_NONBLOCK | libc::O_NOCTTY;

/// Opens the journal file at `path` for `access`, with `extra` flags (the
/// caller's O_NOFOLLOW), and refuses it unless it is a regular file. A
/// directory is EISDIR, as the reference's read or write of it fails. A
/// caller that asks for O_NONBLOCK itself (the reference's processing-stop
/// read does) gets its EWOULDBLOCK, as the reference does.
pub fn open(path: &str, access: Access, extra: libc::c_int) -> Result<File> {
  open_sized(path, access, extra).map(|(file, _)| file)
}

/// `open`, with the size of the file opened.
pub fn open_sized(path: &str, access: Access, extra: libc::c_int) -> Result<(File, u64)> {
  with_size(open_path(path, access, extra)?)
}

/// `open`, with what fstat said of the file opened. Its device, inode and
/// type cannot change while the descriptor is open, so a caller that needs
/// them (the owner record's stamp, #10) asks no second fstat.
pub fn open_stat(path: &str, access: Access, extra: libc::c_int) -> Result<(File, FileStat)> {
  let file = open_path(path, access, extra)?;
  let st = nix::sys::stat::fstat(&file)?;
  judged(st.st_mode)?;
  Ok((file, st))
}

/// Opens the journal file at `path` for `access` without judging it yet:
/// the caller judges it (`size_linked`) once it holds its flock.
pub fn open_path(path: &str, access: Access, extra: libc::c_int) -> Result<File> {
  let attempt = |guard: libc::c_int| {
    let mut o = OpenOptions::new();
    match access {
      Access::Read => o.read(true),
      Access::Append => o.append(true).create(true).mode(0o600),
      Access::ReadAppend => o.read(true).append(true).create(true).mode(0o600),
    };
    o.custom_flags(extra | guard).open(path)
  };
  opened(attempt(GUARD), extra & libc::O_NONBLOCK == 0, || attempt(libc::O_NOCTTY))
}

/// Opens the journal file `name` in the directory `dir` (held open) for
/// reading, as `open` does.
pub fn open_at(dir: &impl AsFd, name: &str, extra: libc::c_int) -> Result<File> {
  open_at_sized(dir, name, extra).map(|(file, _)| file)
}

/// `open_at`, with the size of the file opened.
fn open_at_sized(dir: &impl AsFd, name: &str, extra: libc::c_int) -> Result<(File, u64)> {
  let attempt = |guard: libc::c_int| {
    let flags = OFlag::from_bits_truncate(libc::O_RDONLY | libc::O_CLOEXEC | extra | guard);
    nix::fcntl::openat(dir, name, flags, nix::sys::stat::Mode::empty())
      .map(File::from)
      .map_err(Error::from)
  };
  with_size(opened(attempt(GUARD), extra & libc::O_NONBLOCK == 0, || attempt(libc::O_NOCTTY))?)
}

/// The file opened, judged, with its size.
fn with_size(file: File) -> Result<(File, u64)> {
  let (mode, size) = kind(&file)?;
  judged(mode)?;
  Ok((file, size))
}

/// The open's outcome, before its file's type is judged.
fn opened(opened: Result<File>, wait: bool, blocking: impl FnOnce() -> Result<File>) -> Result<File> {
  match opened {
    Ok(file) => Ok(file),
    // ENXIO at open is always a file of another kind: a FIFO without a
    // reader opened for writing, a socket, a device with no driver.
    Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Err(not_regular()),
    // Only a regular file under a lease that another process holds refuses
    // a non-blocking open (EWOULDBLOCK). The reference waits for the lease
    // to be broken, and so does this: the type is still judged after.
    Err(e) if wait && e.raw_os_error() == Some(libc::EWOULDBLOCK) => blocking(),
    Err(e) => Err(e),
  }
}

/// The open file judged by the descriptor's own type, so no swap of the
/// name after the open can change what is read.
fn judged(mode: libc::mode_t) -> Result<()> {
  match mode & libc::S_IFMT {
    libc::S_IFREG => Ok(()),
    libc::S_IFDIR => Err(Error::from_raw_os_error(libc::EISDIR)),
    _ => Err(not_regular()),
  }
}

/// The open file's type bits and size. statx(2) asked for just these two
/// costs 0.4 µs on a descriptor just opened on ext4, where an fstat (which
/// fills every field, the block count among them) costs 1.1: the
/// difference is a tenth of an append. Where statx is missing (Linux
/// before 4.11, a seccomp filter that refuses it) or leaves either out,
/// fstat.
#[cfg(target_os = "linux")]
fn kind(file: &File) -> Result<(libc::mode_t, u64)> {
  use rustix::fs::{statx, AtFlags, StatxFlags};
  let wanted = StatxFlags::TYPE | StatxFlags::SIZE;
  match statx(file, "", AtFlags::EMPTY_PATH, wanted) {
    Ok(st) if StatxFlags::from_bits_retain(st.stx_mask).contains(wanted) => Ok((libc::mode_t::from(st.stx_mode), st.stx_size)),
    _ => fstat_kind(file),
  }
}

#[cfg(not(target_os = "linux"))]
fn kind(file: &File) -> Result<(libc::mode_t, u64)> {
  fstat_kind(file)
}

fn fstat_kind(file: &File) -> Result<(libc::mode_t, u64)> {
  let st = nix::sys::stat::fstat(file)?;
  Ok((st.st_mode, u64::try_from(st.st_size).unwrap_or(0)))
}

/// The open journal file judged (a regular file, or refused as `open`
/// refuses it), with its size and whether any name still links it (a file
/// renamed over, as a repair's rewrite replaces it, has none).
pub fn size_linked(file: &File) -> Result<(u64, bool)> {
  let (mode, size, links) = kind_links(file)?;
  judged(mode)?;
  Ok((size, links > 0))
}

#[cfg(target_os = "linux")]
fn kind_links(file: &File) -> Result<(libc::mode_t, u64, u64)> {
  use rustix::fs::{statx, AtFlags, StatxFlags};
  let wanted = StatxFlags::TYPE | StatxFlags::SIZE | StatxFlags::NLINK;
  match statx(file, "", AtFlags::EMPTY_PATH, wanted) {
    Ok(st) if StatxFlags::from_bits_retain(st.stx_mask).contains(wanted) => {
      Ok((libc::mode_t::from(st.stx_mode), st.stx_size, u64::from(st.stx_nlink)))
    }
    _ => fstat_links(file),
  }
}

#[cfg(not(target_os = "linux"))]
fn kind_links(file: &File) -> Result<(libc::mode_t, u64, u64)> {
  fstat_links(file)
}

pub(crate) fn fstat_links(file: &File) -> Result<(libc::mode_t, u64, u64)> {
  let st = nix::sys::stat::fstat(file)?;
  #[allow(clippy::useless_conversion)] // nlink_t is u64 on Linux x64, u32 or u16 elsewhere
  let links = u64::from(st.st_nlink);
  Ok((st.st_mode, u64::try_from(st.st_size).unwrap_or(0), links))
}

/// The whole of an open file, from where it stands to its end.
pub fn to_end(file: &File) -> Result<Vec<u8>> {
  let mut buf = Vec::with_capacity(FIRST);
  // `Take` is a plain reader: its read_to_end does not size the file.
  file.take(u64::MAX).read_to_end(&mut buf)?;
  Ok(buf)
}

/// A regular file's content as Node's readFileSync reads it: the size
/// its open reported, or less if the file ends first (it does not read on past
/// a file that grew meanwhile); a file that reports no size (0), to its end.
/// The size read exactly also saves the read that would find the end.
fn sized(file: &File, size: u64) -> Result<Vec<u8>> {
  if size == 0 {
    return to_end(file);
  }
  let mut buf = Vec::new();
  buf
    .try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX))
    .map_err(|_| Error::from_raw_os_error(libc::ENOMEM))?;
  // `Take` ends at `size` without asking the file again.
  file.take(size).read_to_end(&mut buf)?;
  Ok(buf)
}

/// The whole journal file at `path` (a regular file: see `open`).
pub fn read(path: &str) -> Result<Vec<u8>> {
  let (file, size) = open_sized(path, Access::Read, 0)?;
  sized(&file, size)
}

/// The whole journal file `name` in the directory `dir` (held open).
pub fn read_at(dir: &File, name: &str) -> Result<Vec<u8>> {
  let (file, size) = open_at_sized(dir, name, 0)?;
  sized(&file, size)
}

/// `existsSync(path)`: access(F_OK); any failure reads as absent.
pub fn exists(path: &str) -> bool {
  nix::unistd::access(path, nix::unistd::AccessFlags::F_OK).is_ok()
}

/// Whether a failed open of `path` means "no file", as the reference's
/// `existsSync` before its read would have said: the readers open first and
/// ask this only when the open fails. ENOENT and ENOTDIR answer it at once
/// (asking existsSync again could see a file created meanwhile and call a
/// missing file unreadable); any other failure asks existsSync's question.
pub fn missing(err: &std::io::Error, path: &str) -> bool {
  // A file of another kind is there (#10).
  !is_not_regular(err) && (matches!(err.raw_os_error(), Some(nix::libc::ENOENT | nix::libc::ENOTDIR)) || !exists(path))
}

/// Node's `mkdirSync(path, { recursive: true, mode })`, step for step as
/// node_file.cc's MKDirpSync takes them, so that a failure carries the
/// errno Node reports: where a directory belongs, a file is EEXIST (ENOTDIR
/// when more is to be made under it), and a dangling link or a loop is what
/// the stat of it says (ENOENT, ELOOP).
pub fn mkdir_p(path: &str, mode: u32) -> Result<()> {
  SPUN.with(|s| s.set(false));
  use libc::{EACCES, EEXIST, ENOENT, ENOSPC, ENOTDIR, EPERM};
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
  // A path whose mkdir keeps failing ENOENT under a parent that exists (a
  // working directory that was removed, a path under /proc): Node's loop
  // would revisit it without end (#35).
  SPUN.with(|s| s.set(true));
  Err(fail(ENOENT))
}

thread_local! {
  /// Whether this thread's last `mkdir_p` gave up where Node's loop spins.
  static SPUN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread's last `mkdir_p` failed where Node's recursive
/// mkdirSync would never return (so its error must not be asked of it).
pub fn mkdir_spun() -> bool {
  SPUN.with(std::cell::Cell::get)
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

  /// statx's type and size are fstat's, for every kind of file the judge
  /// sees (the fallback and the fast path must agree).
  #[test]
  fn kind_is_what_fstat_says() {
    let d = crate::testutil::TempDir::new();
    let reg = format!("{}/f", d.path());
    std::fs::write(&reg, b"12345").expect("write");
    let pipe = format!("{}/p", d.path());
    fifo(&pipe);
    let read_only = |p: &str| OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(p).expect("open");
    for file in [read_only(&reg), read_only(&pipe), read_only(d.path()), read_only("/dev/null")] {
      let (mode, size) = kind(&file).expect("kind");
      let (want_mode, want_size) = fstat_kind(&file).expect("fstat");
      assert_eq!((mode & libc::S_IFMT, size), (want_mode & libc::S_IFMT, want_size));
    }
    assert_eq!(kind(&read_only(&reg)).expect("kind").1, 5);
    // The fast path is the one compared here: this kernel answers statx
    // with both fields.
    #[cfg(target_os = "linux")]
    {
      use rustix::fs::{statx, AtFlags, StatxFlags};
      let wanted = StatxFlags::TYPE | StatxFlags::SIZE;
      let st = statx(read_only(&reg), "", AtFlags::EMPTY_PATH, wanted).expect("statx");
      assert!(StatxFlags::from_bits_retain(st.stx_mask).contains(wanted));
    }
  }

  fn fifo(path: &str) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
  }

  /// Each open returns at once (a blocking open of a FIFO would hang the
  /// test) and refuses the file as EFTYPE.
  #[test]
  fn files_of_other_kinds_are_refused_without_waiting() {
    let d = crate::testutil::TempDir::new();
    let p = format!("{}/inbox.jsonl", d.path());
    fifo(&p);
    let code = |r: Result<File>| r.map(|_| ()).map_err(|e| crate::ground::error::fs_code(&e));
    let eftype = Err(Some("EFTYPE".to_string()));
    assert_eq!(code(open(&p, Access::Read, 0)), eftype);
    // No reader: the non-blocking open fails ENXIO, which is the same refusal.
    assert_eq!(code(open(&p, Access::Append, 0)), eftype);
    // With a reader the open succeeds; the type still refuses it.
    let reader = OpenOptions::new()
      .read(true)
      .custom_flags(libc::O_NONBLOCK)
      .open(&p)
      .expect("reader");
    assert_eq!(code(open(&p, Access::Append, 0)), eftype);
    drop(reader);
    assert_eq!(code(open(&p, Access::Read, libc::O_NOFOLLOW | libc::O_NONBLOCK)), eftype);
    let dir = File::open(d.path()).expect("dir");
    assert_eq!(code(open_at(&dir, "inbox.jsonl", 0)), eftype);
    assert!(is_not_regular(&read(&p).expect_err("fifo")));
    assert!(!missing(&read(&p).expect_err("fifo"), &p));
    // Devices, through a symlink as the readers follow one.
    for dev in ["/dev/zero", "/dev/urandom", "/dev/null"] {
      let link = format!("{}/drops.jsonl", d.path());
      let _ = std::fs::remove_file(&link);
      std::os::unix::fs::symlink(dev, &link).expect("symlink");
      assert_eq!(code(open(&link, Access::Read, 0)), eftype, "{dev}");
      assert_eq!(code(open(&link, Access::Append, 0)), eftype, "{dev}");
      // O_NOFOLLOW callers keep their ELOOP.
      assert_eq!(
        code(open(&link, Access::Append, libc::O_NOFOLLOW)),
        Err(Some("ELOOP".into())),
        "{dev}"
      );
    }
  }

  #[test]
  fn regular_files_directories_and_missing_files_keep_their_outcomes() {
    let d = crate::testutil::TempDir::new();
    let p = format!("{}/f", d.path());
    let code = |r: Result<File>| r.map(|_| ()).map_err(|e| crate::ground::error::fs_code(&e));
    assert_eq!(code(open(&p, Access::Read, 0)), Err(Some("ENOENT".into())));
    assert!(missing(&read(&p).expect_err("missing"), &p));
    let mut f = open(&p, Access::Append, 0).expect("created");
    std::io::Write::write_all(&mut f, b"ab").expect("write");
    crate::testutil::assert_0600(&p);
    std::os::unix::fs::symlink(&p, format!("{}/link", d.path())).expect("link");
    assert_eq!(read(&format!("{}/link", d.path())).expect("through a link"), b"ab");
    std::fs::create_dir(format!("{}/sub", d.path())).expect("mkdir");
    let sub = format!("{}/sub", d.path());
    assert_eq!(code(open(&sub, Access::Read, 0)), Err(Some("EISDIR".into())));
    assert_eq!(code(open(&sub, Access::Append, 0)), Err(Some("EISDIR".into())));
    let dir = File::open(d.path()).expect("dir");
    assert_eq!(code(open_at(&dir, "sub", 0)), Err(Some("EISDIR".into())));
    assert_eq!(read_at(&dir, "f").expect("read_at"), b"ab");
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
