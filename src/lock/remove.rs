//! Removal of a judged run.lock, by descriptor only (#10). `unlock`,
//! `recover`, `clearPid` and a claim that releases itself judge one lock
//! (the directory `lstat` saw and the owner record read from it) and remove
//! that one: its entries through its own descriptor, recursively (each
//! subdirectory opened with O_NOFOLLOW | O_DIRECTORY, never followed), then
//! its name through the journal directory's descriptor, only while that name
//! still is the judged directory. No path through `run.lock` is ever walked
//! after the judgement, so a `run.lock` swapped for a symlink (by a seam or
//! by another process, at any moment) cannot make a removal reach outside
//! the journal: the reference's `rmSync` walks such paths and deletes the
//! link's target subtree when it loses the race.
//!
//! A removal works with one descriptor free, as the reference's does: the
//! judged lock and the journal directory are held together only when a
//! second descriptor can be had; otherwise the held lock is emptied and
//! closed before the journal directory is opened. A subdirectory costs one
//! more per level, as it does in the reference.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{open, AtFlags, Flock, OFlag, AT_FDCWD};
use nix::sys::stat::{fstatat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};

use crate::ground::error::{quiet_io, JournalError};
use crate::ground::files::{open_dir_at, Link};
use crate::ground::journal::Journal;

use super::owner::{read_owner, Owner};
pub use super::owner::{Judged, Record};
pub use crate::ground::stamp::Stamp;

/// Subdirectories deeper than this (only a hand makes any) are refused
/// rather than recursed into without bound.
const MAX_DEPTH: usize = 1024;

/// What a remover holds of the judged directory, given to the removal.
pub enum Holding {
  None,
  /// Open: a claim's own, its descriptor used up by the first attempt.
  Open(File),
  /// Flocked (a remover's, a holder's mark): a duplicate serves, the flock stays.
  Flocked(Flock<File>),
}

/// Removes the judged lock, retrying the failures Node's `rmSync` retries
/// (`max_retries` times, 20 ms more each time), through the judged
/// directory the remover `held` open, if it did, on the first attempt.
///
/// What was judged and is no longer there (the name now holds another
/// directory, a link, or nothing; the directory holds another record) is
/// left alone: that is another claim's lock, or something a hand put there.
pub fn remove(j: &Journal, judged: &Judged, held: Holding, max_retries: u32) -> std::io::Result<()> {
  let (mut held, flocked) = match held {
    Holding::None => (None, None),
    Holding::Open(file) => (Some(OwnedFd::from(file)), None),
    Holding::Flocked(file) => (file.try_clone().ok().map(Into::into), Some(file)),
  };
  let Some(lock) = judged.lock else { return Ok(()) };
  let mut attempt = 0;
  let removed = loop {
    attempt += 1;
    let err = match remove_once(j, lock, (attempt == 1).then_some(judged.record), held.take()) {
      Ok(()) => break Ok(()),
      Err(e) => e,
    };
    let transient = matches!(err, Errno::EBUSY | Errno::EMFILE | Errno::ENFILE | Errno::ENOTEMPTY | Errno::EPERM);
    if !transient || attempt > max_retries {
      break Err(err.into());
    }
    std::thread::sleep(Duration::from_millis(20 * u64::from(attempt)));
  };
  // p4 (and u7's end): D closed, its mark or flock dropped only now.
  drop(flocked);
  removed
}

/// One attempt. `record` is checked on the first attempt only: the first
/// emptying removes the record it proved.
fn remove_once(j: &Journal, lock: Stamp, record: Option<Record>, held: Option<OwnedFd>) -> nix::Result<()> {
  if !lock.dir {
    return unlink_name(j, lock);
  }
  let held = match held {
    Some(fd) => fd,
    None => match open_dir_at(AT_FDCWD, j.lock().as_str(), Link::NoFollow) {
      Ok(fd) => fd,
      Err(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP) => return Ok(()),
      Err(e) => return Err(e),
    },
  };
  // The directory opened is the one judged: the name may hold another
  // directory since (removed and claimed again, or renamed in), whose
  // entries are not this removal's to unlink.
  if Stamp::of_fd(&held) != Some(lock) {
    return Ok(());
  }
  match record {
    // The directory still holds the record judged: another record (a claim
    // published into an ownerless lock after the judgement) is not removed.
    Some(record) if !holds(&held, record) => Ok(()),
    Some(record) => remove_judged(j, lock, record, held),
    None => {
      empty_held(held)?;
      unlink_name(j, lock)
    }
  }
}

/// The first attempt on a directory proved to be the judged one and to hold
/// the judged record. It does not read the directory: a judged lock holds
/// its record and nothing else (a claim unlinks its temporary file before
/// it returns), so the record is unlinked by name and the name removed
/// while the directory is still held. Only a directory that holds more (a
/// claim still publishing, a hand's files: rmdir says ENOTEMPTY) or whose
/// name is no longer it is read and emptied through the descriptor held,
/// so every outcome is the one emptying first gives; the common case saves
/// the read (fdopendir's fstat and two fcntl, two getdents64, a rewind).
///
/// The two descriptors are held together only when both can be had: with
/// one free, the journal's open fails EMFILE, and the removal then goes in
/// the order that needs one at a time (empty, close, open the journal).
fn remove_judged(j: &Journal, lock: Stamp, record: Record, held: OwnedFd) -> nix::Result<()> {
  if let Record::File(_) = record {
    // p2 (and u7's first): the record unlinked through D's descriptor; the
    // name, never followed: a record that is a link goes as a link.
    gone_too(unlinkat(&held, c"owner.json", UnlinkatFlags::NoRemoveDir))?;
  }
  let journal = match open_journal(j) {
    Ok(fd) => fd,
    Err(Errno::EMFILE | Errno::ENFILE) => {
      empty_held(held)?;
      return unlink_name(j, lock);
    }
    Err(e) => return Err(e),
  };
  // p3: the name run.lock removed through the journal's descriptor, while
  // it is still D.
  match rmdir_if_judged(&journal, lock) {
    // Renamed away and something else put at the name: the judged
    // directory is emptied through its descriptor, the name left.
    Ok(false) => {
      drop(journal);
      empty_held(held)
    }
    Ok(true) => Ok(()),
    Err(Errno::ENOTEMPTY) => {
      drop(journal);
      empty_held(held)?;
      unlink_name(j, lock)
    }
    Err(e) => Err(e),
  }
}

/// Empties the directory held, then closes it (before the journal directory
/// is opened: one descriptor at a time).
fn empty_held(held: OwnedFd) -> nix::Result<()> {
  let mut entries = Dir::from_fd(held)?;
  empty(&mut entries, 0)
}

/// The journal directory, as a place to unlink in: O_PATH (macOS: O_SEARCH),
/// which needs search permission alone, as the reference's rmSync by path
/// does (a journal of mode 0300 can be cleaned by its owner; #22).
fn open_journal(j: &Journal) -> nix::Result<OwnedFd> {
  #[cfg(target_os = "linux")]
  const SEARCH: OFlag = OFlag::O_PATH;
  #[cfg(target_vendor = "apple")]
  const SEARCH: OFlag = OFlag::O_SEARCH;
  open(j.itself().as_str(), SEARCH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())
}

/// Removes the name `run.lock` through the journal directory's descriptor,
/// only while it still is the judged inode.
fn unlink_name(j: &Journal, lock: Stamp) -> nix::Result<()> {
  let journal = match open_journal(j) {
    Ok(fd) => fd,
    Err(Errno::EMFILE | Errno::ENFILE) => return unlink_by_path(j, lock),
    Err(e) => return Err(e),
  };
  rmdir_if_judged(&journal, lock).map(|_| ())
}

/// Removes `run.lock` from the journal directory held if it still is the
/// judged inode; whether the name was the judged one.
fn rmdir_if_judged(journal: &OwnedFd, lock: Stamp) -> nix::Result<bool> {
  let name = c"run.lock";
  // The name still is the judged inode: the directory may have been
  // renamed away since it was opened and another lock (or a hand's link)
  // put in its place. Asked through the journal's descriptor, so this check
  // and the unlinkat below name the same directory entry even if a path
  // above it is swapped.
  match fstatat(journal, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
    Ok(st) if Stamp::of(&st) == lock => {}
    Ok(_) | Err(Errno::ENOENT) => return Ok(false),
    Err(e) => return Err(e),
  }
  // Between this check and the unlinkat another process can rename the
  // judged directory away and put something else at the name. rmdir then
  // meets a link or a file (ENOTDIR: a link is never followed), a directory
  // with entries (ENOTEMPTY: the judged directory is emptied, the name found
  // no longer ours and left), or an empty directory, which it removes: an empty directory in
  // the journal, holding no record, whose claimant (if any) holds it by
  // descriptor and so fails to publish or is refused as lost. Nothing
  // outside the journal is reachable from one unlinkat on a name in it.
  let flag = if lock.dir {
    UnlinkatFlags::RemoveDir
  } else {
    // A judged link or file (a hand's): the name is unlinked, never followed.
    UnlinkatFlags::NoRemoveDir
  };
  gone_too(unlinkat(journal, name, flag)).map(|()| true)
}

/// An unlink that finds its name gone already did what it was asked.
fn gone_too(unlinked: nix::Result<()>) -> nix::Result<()> {
  match unlinked {
    Err(Errno::ENOENT) => Ok(()),
    done => done,
  }
}

/// The journal directory cannot be opened for want of a descriptor (the
/// held lock's one was just given back, so only another thread can have
/// taken it): the name is checked and removed by path. rmdir(2) and
/// unlink(2) act on the final name itself and never follow it, so the only
/// path walked is the journal directory's own.
fn unlink_by_path(j: &Journal, lock: Stamp) -> nix::Result<()> {
  let path = j.lock();
  if Stamp::at(&path) != Some(lock) {
    return Ok(());
  }
  let flag = if lock.dir {
    UnlinkatFlags::RemoveDir
  } else {
    UnlinkatFlags::NoRemoveDir
  };
  gone_too(unlinkat(AT_FDCWD, path.as_str(), flag))
}

/// Whether the directory held open still holds the judged record: the same
/// file (a record is linked once and never rewritten), or still none as
/// `existsSync` asks it (a dangling link or a loop is none). The read
/// follows a link, so this does too.
pub fn holds(lock: impl AsFd, record: Record) -> bool {
  let name = c"owner.json";
  match record {
    Record::Absent => nix::unistd::faccessat(lock, name, nix::unistd::AccessFlags::F_OK, AtFlags::empty()).is_err(),
    Record::File(stamp) => fstatat(lock, name, AtFlags::empty()).is_ok_and(|st| Stamp::of(&st) == stamp),
    Record::Unread => false,
  }
}

/// Unlinks every entry of a directory held open, a subdirectory through its
/// own descriptor (opened without following a link), so a name swapped for
/// a link at any moment is unlinked, never followed.
fn empty(dir: &mut Dir, depth: usize) -> nix::Result<()> {
  let names = dir
    .iter()
    .map(|e| e.map(|e| e.file_name().to_owned()))
    .filter(|n| n.as_ref().map_or(true, |n| !matches!(n.to_bytes(), b"." | b"..")))
    .collect::<nix::Result<Vec<CString>>>()?;
  for name in names {
    match unlinkat(&*dir, name.as_c_str(), UnlinkatFlags::NoRemoveDir) {
      Err(Errno::EISDIR) => remove_subdir(dir, &name, depth + 1)?,
      unlinked => gone_too(unlinked)?,
    }
  }
  Ok(())
}

fn remove_subdir(parent: &Dir, name: &CStr, depth: usize) -> nix::Result<()> {
  if depth > MAX_DEPTH {
    return Err(Errno::ELOOP);
  }
  match open_dir_at(parent, name, Link::NoFollow).and_then(Dir::from_fd) {
    Ok(mut sub) => empty(&mut sub, depth)?,
    Err(Errno::ENOENT) => return Ok(()),
    // Swapped for a link or a file since the unlink said "directory": that
    // name is unlinked below.
    Err(Errno::ENOTDIR | Errno::ELOOP) => {}
    Err(e) => return Err(e),
  }
  match unlinkat(parent, name, UnlinkatFlags::RemoveDir) {
    Err(Errno::ENOTDIR) => gone_too(unlinkat(parent, name, UnlinkatFlags::NoRemoveDir)),
    done => gone_too(done),
  }
}

/// `run.lock` as it is now, and the owner record read from it by path (the
/// reference's `readPid`, with the file it read): what a removal acts on.
pub fn judge(j: &Journal) -> (Option<Owner>, Judged) {
  judge_at(j, Stamp::at(&j.lock()))
}

/// `judge`, with `run.lock` as the caller's lstat just saw it.
pub fn judge_at(j: &Journal, lock: Option<Stamp>) -> (Option<Owner>, Judged) {
  let (rec, record) = read_owner(j);
  (rec, Judged { lock, record })
}

/// A removal that failed, as the operation that attempted it refuses.
pub(super) fn lock_refusal(j: &Journal, e: &std::io::Error) -> JournalError {
  quiet_io(e, &j.named(crate::ground::journal::LOCK), "remove")
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::journal::Journal;
  use crate::testutil::TempDir;
  use std::fs::File;
  use std::os::unix::fs::symlink;

  /// The record file opened by path, stamped.
  fn stamped(file: &File) -> Record {
    Stamp::of_fd(file).map_or(Record::Unread, Record::File)
  }

  fn judged_now(dir: &str) -> Judged {
    let lock = format!("{dir}/run.lock");
    let record = match File::open(format!("{lock}/owner.json")) {
      Ok(f) => stamped(&f),
      Err(_) => Record::Absent,
    };
    Judged {
      lock: Stamp::at(&lock),
      record,
    }
  }

  /// A journal directory below `d` (not made) and its run.lock path.
  fn journal(d: &TempDir) -> (String, String) {
    let dir = format!("{}/j", d.path());
    let lock = format!("{dir}/run.lock");
    (dir, lock)
  }

  /// An outside directory with a canary file and subtree.
  fn outside(d: &TempDir) -> String {
    let out = format!("{}/outside", d.path());
    std::fs::create_dir_all(format!("{out}/sub/deeper")).expect("outside");
    std::fs::write(format!("{out}/canary"), "c").expect("canary");
    std::fs::write(format!("{out}/sub/canary"), "c").expect("canary");
    std::fs::write(format!("{out}/sub/deeper/canary"), "c").expect("canary");
    out
  }

  fn intact(out: &str) -> bool {
    ["canary", "sub/canary", "sub/deeper/canary"]
      .iter()
      .all(|f| std::fs::read_to_string(format!("{out}/{f}")).is_ok_and(|s| s == "c"))
  }

  #[test]
  fn nested_directories_are_removed() {
    let d = TempDir::new();
    let (dir, lock) = journal(&d);
    std::fs::create_dir_all(format!("{lock}/a/b/c")).expect("nested");
    std::fs::write(format!("{lock}/owner.json"), "{}").expect("record");
    std::fs::write(format!("{lock}/a/b/c/f"), "x").expect("file");
    std::fs::write(format!("{lock}/a/g"), "x").expect("file");
    remove(&Journal::new(&dir), &judged_now(&dir), Holding::None, 0).expect("removed");
    assert!(Stamp::at(&lock).is_none());
  }

  #[test]
  fn a_symlinked_subdirectory_is_unlinked_not_followed() {
    let d = TempDir::new();
    let (out, (dir, lock)) = (outside(&d), journal(&d));
    std::fs::create_dir_all(format!("{lock}/real")).expect("lock");
    symlink(&out, format!("{lock}/link")).expect("link");
    symlink(format!("{out}/sub"), format!("{lock}/real/link")).expect("link");
    remove(&Journal::new(&dir), &judged_now(&dir), Holding::None, 0).expect("removed");
    assert!(Stamp::at(&lock).is_none());
    assert!(intact(&out));
  }

  #[test]
  fn run_lock_swapped_for_a_link_after_the_judgement_is_left() {
    let d = TempDir::new();
    let (out, (dir, lock)) = (outside(&d), journal(&d));
    std::fs::create_dir_all(format!("{lock}/sub")).expect("lock");
    let judged = judged_now(&dir);
    std::fs::rename(&lock, format!("{dir}/moved")).expect("away");
    symlink(&out, &lock).expect("swap");
    remove(&Journal::new(&dir), &judged, Holding::None, 10).expect("nothing judged is there");
    assert!(intact(&out));
    assert!(std::fs::symlink_metadata(&lock).is_ok_and(|m| m.file_type().is_symlink()));
  }

  /// The held directory renamed away and a link put in its place: the
  /// held one is emptied through its descriptor, the link stays.
  #[test]
  fn a_held_directory_moved_away_is_emptied_and_the_link_in_its_place_stays() {
    let d = TempDir::new();
    let (out, (dir, lock)) = (outside(&d), journal(&d));
    std::fs::create_dir_all(format!("{lock}/sub")).expect("lock");
    std::fs::write(format!("{lock}/sub/canary"), "mine").expect("file");
    let judged = judged_now(&dir);
    let held = File::open(&lock).expect("held");
    std::fs::rename(&lock, format!("{dir}/moved")).expect("away");
    symlink(&out, &lock).expect("swap");
    remove(&Journal::new(&dir), &judged, Holding::Open(held), 0).expect("removed");
    assert!(intact(&out));
    assert_eq!(std::fs::read_dir(format!("{dir}/moved")).expect("moved").count(), 0);
  }

  /// The record is unlinked first; what else the held directory holds is
  /// emptied through its descriptor whether or not its name is still there.
  #[test]
  fn a_held_directory_with_more_than_its_record_is_emptied_moved_or_not() {
    for moved in [false, true] {
      let d = TempDir::new();
      let (out, (dir, lock)) = (outside(&d), journal(&d));
      std::fs::create_dir_all(format!("{lock}/sub")).expect("lock");
      std::fs::write(format!("{lock}/owner.json"), "{}").expect("record");
      std::fs::write(format!("{lock}/extra"), "x").expect("file");
      let judged = judged_now(&dir);
      let held = File::open(&lock).expect("held");
      if moved {
        std::fs::rename(&lock, format!("{dir}/moved")).expect("away");
        symlink(&out, &lock).expect("swap");
      }
      remove(&Journal::new(&dir), &judged, Holding::Open(held), 0).expect("removed");
      assert!(intact(&out));
      if moved {
        assert_eq!(std::fs::read_dir(format!("{dir}/moved")).expect("moved").count(), 0);
        assert!(std::fs::symlink_metadata(&lock).is_ok_and(|m| m.file_type().is_symlink()));
      } else {
        assert!(Stamp::at(&lock).is_none());
      }
    }
  }

  #[test]
  fn another_record_or_another_directory_is_left() {
    let d = TempDir::new();
    let (dir, lock) = journal(&d);
    std::fs::create_dir_all(&lock).expect("lock");
    let absent = judged_now(&dir);
    std::fs::write(format!("{lock}/owner.json"), "{}").expect("a record published since");
    remove(&Journal::new(&dir), &absent, Holding::None, 0).expect("left");
    assert!(std::fs::read(format!("{lock}/owner.json")).is_ok());
    let judged = judged_now(&dir);
    std::fs::remove_dir_all(&lock).expect("gone");
    std::fs::create_dir_all(&lock).expect("another claim's");
    remove(&Journal::new(&dir), &judged, Holding::None, 0).expect("left");
    assert!(Stamp::at(&lock).is_some());
  }

  /// existsSync's "no record": a record that is a link in a loop, or
  /// dangling, is none, and the lock goes.
  #[test]
  fn a_record_that_is_a_loop_or_dangling_is_none() {
    for target in ["owner.json", "nowhere"] {
      let d = TempDir::new();
      let (dir, lock) = journal(&d);
      std::fs::create_dir_all(&lock).expect("lock");
      symlink(format!("{lock}/{target}"), format!("{lock}/owner.json")).expect("link");
      let judged = Judged {
        lock: Stamp::at(&lock),
        record: Record::Absent,
      };
      remove(&Journal::new(&dir), &judged, Holding::None, 0).expect("removed");
      assert!(Stamp::at(&lock).is_none(), "{target}");
    }
  }

  #[test]
  fn a_judged_link_is_unlinked_only() {
    let d = TempDir::new();
    let (out, (dir, lock)) = (outside(&d), journal(&d));
    std::fs::create_dir_all(&dir).expect("journal");
    symlink(&out, &lock).expect("link");
    remove(&Journal::new(&dir), &judged_now(&dir), Holding::None, 0).expect("unlinked");
    assert!(Stamp::at(&lock).is_none());
    assert!(intact(&out));
  }
}
