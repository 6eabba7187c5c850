//! The run lock. One directory, `<dir>/run.lock`, is the ownership
//! primitive: mkdir is atomic, so two starts cannot both create it. The
//! owner record `{pid, start, boot, at}` is published inside it by
//! write-then-rename. Nothing reclaims a lock on its own: a lock without a
//! record, or whose owner is dead or a reused pid, refuses `run` until an
//! operator runs `unlock`.
//!
//! STOP is the quiescence gate that serializes `unlock` with every claim:
//! `unlock` writes STOP before it inspects or touches the lock, and a claim
//! re-checks STOP after publishing its record and releases itself if STOP
//! is there. So no claim made during an unlock can stand, and `unlock` only
//! removes a lock whose owner is verified dead or can no longer be held.
//! Automatic reclaim and compare-then-restore were rejected in review
//! (#1509): a rename proves nothing about which directory it moved.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::time::Duration;

use crate::error::{fs_code, quiet_fs, quiet_io, JournalError, Result};
use crate::identity::{valid_boot, valid_start};
use crate::json::{Doc, Scalar};
use crate::lines::{decode_utf8, exists};
use crate::paths::{journal_label, under};
use crate::stop;
use crate::text::js_number;

pub const UNLOCK_HINT: &str = "if no connector is running for this binding, run `scripts/discord.sh unlock <binding>`";

pub fn lock_path(dir: &str) -> String {
  under(dir, &["run.lock"])
}

pub fn owner_path(dir: &str) -> String {
  under(dir, &["run.lock", "owner.json"])
}

/// The published owner record, as `readPid` reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Owner {
  /// A record file that cannot be read, parsed, or has no usable pid: an
  /// owner whose identity cannot be established, which fails closed.
  Invalid,
  /// `start` and `boot` are `None` where the record's value is not of the
  /// identity syntax (an older or corrupt record).
  Valid {
    pid: f64,
    start: Option<String>,
    boot: Option<String>,
  },
}

/// `readPid`: `None` when there is no record file (the STOP-gated
/// publication interval).
pub fn read_pid(dir: &str) -> Option<Owner> {
  let path = owner_path(dir);
  match crate::files::read(&path) {
    Ok(bytes) => Some(parse_owner(&decode_utf8(bytes))),
    Err(e) if crate::files::missing(&e, &path) => None,
    Err(_) => Some(Owner::Invalid),
  }
}

/// `readPid` of the lock directory held open: the record of that directory,
/// whatever the path names by now.
fn read_pid_in(lock: &File) -> Option<Owner> {
  // files::open_at refuses a record that is not a regular file (a FIFO
  // would block): it exists, so it is an unreadable record (#10).
  let file = match crate::files::open_at(lock, "owner.json", 0) {
    Ok(file) => file,
    Err(e) if matches!(e.raw_os_error(), Some(nix::libc::ENOENT | nix::libc::ENOTDIR)) => return None,
    // existsSync's question, asked in this directory: a record that cannot
    // be resolved (a dangling link, a loop) is no record.
    Err(_) => {
      let there = nix::unistd::faccessat(lock, "owner.json", nix::unistd::AccessFlags::F_OK, nix::fcntl::AtFlags::empty());
      return there.is_ok().then_some(Owner::Invalid);
    }
  };
  match crate::files::to_end(&file) {
    Ok(bytes) => Some(parse_owner(&decode_utf8(bytes))),
    Err(_) => Some(Owner::Invalid),
  }
}

fn parse_owner(text: &str) -> Owner {
  let Some(doc) = Doc::parse(text) else { return Owner::Invalid };
  let pid = match doc.get("pid") {
    Some(Scalar::Num(n)) if n.is_finite() && n.fract() == 0.0 && *n > 0.0 => *n,
    _ => return Owner::Invalid,
  };
  let text_of = |key: &str, valid: fn(&str) -> bool| doc.get_str(key).and_then(|u| String::from_utf16(&u).ok()).filter(|s| valid(s));
  Owner::Valid {
    pid,
    start: text_of("start", valid_start),
    boot: text_of("boot", valid_boot),
  }
}

/// run.lock held open as a directory, so that what a removal decided on is
/// what it removes. `None` when it is not a directory (or is gone).
fn hold(dir: &str) -> Option<File> {
  OpenOptions::new()
    .read(true)
    .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW)
    .open(lock_path(dir))
    .ok()
}

/// What `identity(pid)` reported for one field, as far as `===` with a
/// record's start or boot (a string) can tell.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
  Null,
  Str(Vec<u16>),
  /// Anything else, undefined included: never null, never equal.
  Other,
}

impl Field {
  fn is(&self, want: &str) -> bool {
    matches!(self, Field::Str(u) if u.iter().copied().eq(want.encode_utf16()))
  }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
  pub start: Field,
  pub boot: Field,
}

/// The owner states. Only `Live` is ever signaled; `Unknown` and `Invalid`
/// refuse everything (never signaled, removed or claimed over); `Dead`
/// lets unlock clear the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerState {
  Absent,
  Invalid,
  Dead,
  Unknown,
  Mismatch,
  Live,
}

impl OwnerState {
  pub fn as_str(self) -> &'static str {
    match self {
      OwnerState::Absent => "absent",
      OwnerState::Invalid => "invalid",
      OwnerState::Dead => "dead",
      OwnerState::Unknown => "unknown",
      OwnerState::Mismatch => "mismatch",
      OwnerState::Live => "live",
    }
  }
}

/// The reference's ownerState ladder over any record: each step asks the
/// record one question, in the reference's order, so a JavaScript record
/// (whose getters and seams run in that order) and a parsed one share it.
pub trait OwnerView {
  type Error;
  fn is_null(&mut self) -> Result<bool, Self::Error>;
  fn invalid(&mut self) -> Result<bool, Self::Error>;
  fn alive(&mut self) -> Result<bool, Self::Error>;
  /// `rec.start === null || rec.boot === null`.
  fn lacks_identity(&mut self) -> Result<bool, Self::Error>;
  /// Asks the identity seam; `None` when it reports a null start or boot,
  /// else whether both match the record.
  fn identity_matches(&mut self) -> Result<Option<bool>, Self::Error>;
}

pub fn owner_state<V: OwnerView>(v: &mut V) -> Result<OwnerState, V::Error> {
  Ok(if v.is_null()? {
    OwnerState::Absent
  } else if v.invalid()? {
    OwnerState::Invalid
  } else if !v.alive()? {
    OwnerState::Dead
  } else if v.lacks_identity()? {
    OwnerState::Unknown
  } else {
    match v.identity_matches()? {
      None => OwnerState::Unknown,
      Some(true) => OwnerState::Live,
      Some(false) => OwnerState::Mismatch,
    }
  })
}

/// The test seams of the lock operations: `identity` and `beforeRemove`.
pub trait Seams {
  type Error: From<JournalError>;
  fn identity(&mut self, pid: f64) -> Result<Identity, Self::Error>;
  fn before_remove(&mut self) -> Result<(), Self::Error>;
}

/// A parsed record with the seams, as an OwnerView.
struct Parsed<'a, S> {
  rec: Option<&'a Owner>,
  seams: &'a mut S,
}

impl<S: Seams> OwnerView for Parsed<'_, S> {
  type Error = S::Error;
  fn is_null(&mut self) -> Result<bool, S::Error> {
    Ok(self.rec.is_none())
  }
  fn invalid(&mut self) -> Result<bool, S::Error> {
    Ok(matches!(self.rec, Some(Owner::Invalid)))
  }
  fn alive(&mut self) -> Result<bool, S::Error> {
    Ok(matches!(self.rec, Some(Owner::Valid { pid, .. }) if crate::identity::pid_alive(*pid)))
  }
  fn lacks_identity(&mut self) -> Result<bool, S::Error> {
    Ok(!matches!(
      self.rec,
      Some(Owner::Valid {
        start: Some(_),
        boot: Some(_),
        ..
      })
    ))
  }
  fn identity_matches(&mut self) -> Result<Option<bool>, S::Error> {
    let Some(Owner::Valid {
      pid,
      start: Some(start),
      boot: Some(boot),
    }) = self.rec
    else {
      return Ok(None);
    };
    let now = self.seams.identity(*pid)?;
    if now.start == Field::Null || now.boot == Field::Null {
      return Ok(None);
    }
    Ok(Some(now.start.is(start) && now.boot.is(boot)))
  }
}

pub fn state_of<S: Seams>(rec: Option<&Owner>, seams: &mut S) -> Result<OwnerState, S::Error> {
  owner_state(&mut Parsed { rec, seams })
}

fn pid_text(rec: &Option<Owner>) -> String {
  match rec {
    Some(Owner::Valid { pid, .. }) => js_number(*pid),
    _ => "undefined".into(),
  }
}

/// Why an existing lock refuses a new claim. Always a brake.
pub fn refusal<S: Seams>(dir: &str, seams: &mut S) -> Result<JournalError, S::Error> {
  let existing = read_pid(dir);
  let pid = pid_text(&existing);
  Ok(JournalError::brake(match state_of(existing.as_ref(), seams)? {
    OwnerState::Absent => format!("run.lock exists without an owner record: a start is in progress or was interrupted; {UNLOCK_HINT}"),
    OwnerState::Invalid => format!(
      "run.lock has an owner record that cannot be read; refusing. Inspect run.lock/owner.json in {} by hand",
      journal_label(dir)
    ),
    OwnerState::Live => format!("another connector is running for this binding (pid {pid})"),
    OwnerState::Unknown => format!("run.lock belongs to pid {pid}, which is alive but whose identity cannot be verified; refusing"),
    OwnerState::Dead | OwnerState::Mismatch => {
      format!("run.lock belongs to pid {pid}, which is gone or is a different process now; {UNLOCK_HINT}")
    }
  }))
}

/// `writePid` after the claimant's identity was read: creates the lock,
/// publishes the record `owner_text()` makes (failing with the `code` of
/// what it threw), then applies the STOP gate. `pid` is the claimant's pid
/// when it is a number (what `clearPid` compares with `===`).
pub fn claim<S: Seams>(
  dir: &str,
  pid: Option<f64>,
  seams: &mut S,
  owner_text: impl FnOnce() -> Result<String, Option<String>>,
) -> Result<(), S::Error> {
  let lock = lock_path(dir);
  if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&lock) {
    if e.kind() != std::io::ErrorKind::AlreadyExists {
      return Err(quiet_io(&e, &format!("run.lock in {}", journal_label(dir)), "create").into());
    }
    return Err(refusal(dir, seams)?.into());
  }
  // The directory this claim created, held open at once: the record is
  // published into it by descriptor, never by path. Between the mkdir and
  // the rename an unlock may remove this directory and another claimant
  // create a new one at the same path; a publish by path would then
  // overwrite that claimant's record (and this claim's STOP gate would
  // remove its lock). Into a removed directory, the publish fails instead.
  let mine = OpenOptions::new()
    .read(true)
    .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW)
    .open(&lock);
  let label = format!("run.lock/owner.json in {}", journal_label(dir));
  let text = owner_text().map_err(|code| quiet_fs(code.as_deref(), &label, "write"))?;
  let mine = mine.map_err(|e| quiet_io(&e, &label, "write"))?;
  if let Err(e) = publish(&mine, &text) {
    if e.kind() == std::io::ErrorKind::AlreadyExists {
      // Another claim is publishing into this directory, or did first: it
      // is not ours.
      return Err(lost_claim().into());
    }
    // A fault (a full disk, an I/O error) leaves no half-made claim: the
    // directory this claim made is removed again while it is still run.lock
    // and holds no record but this claim's, so the next start is not
    // refused "without an owner record". Beyond the reference, which leaves
    // it for `unlock`; the refusal is the same.
    if still_ours(&lock, &mine) && record_in(&mine).map_or(true, |r| is_record(&r, &text)) {
      let _ = remove_held(dir, &mine, 0);
    }
    return Err(quiet_io(&e, &label, "write").into());
  }
  // The gate: STOP written before this point (by `stop` or `unlock`) means
  // this claim must not stand, however it interleaved with an unlock. The
  // claim releases the directory it made (`clearPid`), not whatever the
  // path names by now.
  if stop::requested(dir) {
    if let (Some(Owner::Valid { pid: owner, .. }), Some(pid)) = (read_pid_in(&mine), pid) {
      if owner == pid {
        remove_held(dir, &mine, 0)?;
      }
    }
    return Err(JournalError::brake(format!("STOP is present in {}; remove it to run", journal_label(dir))).into());
  }
  // Beyond the reference: the claim stands only if its directory still is
  // run.lock and still holds its record. `recover` removes an ownerless lock
  // and then removes its own STOP; a claim that published into that lock
  // after recover judged it, and reached this gate after the STOP was gone,
  // would otherwise stand without a lock, and a second claimant with it.
  if !still_held(&lock, &mine, &text) {
    return Err(lost_claim().into());
  }
  Ok(())
}

/// A claim that lost its directory to an unlock or recover running at the
/// same moment (only a race reaches this; the reference would stand).
fn lost_claim() -> JournalError {
  JournalError::failed("run.lock was removed while this start claimed it (an unlock or recover ran meanwhile); start again")
}

/// Whether `lock` (the path) still names the directory held open.
fn still_ours(lock: &str, mine: &File) -> bool {
  use std::os::unix::fs::MetadataExt;
  match (std::fs::symlink_metadata(lock), mine.metadata()) {
    (Ok(now), Ok(held)) => now.dev() == held.dev() && now.ino() == held.ino(),
    _ => false,
  }
}

/// Whether `lock` still names the directory held open, with this claim's
/// record in it.
fn still_held(lock: &str, mine: &File, text: &str) -> bool {
  still_ours(lock, mine) && record_in(mine).is_some_and(|r| is_record(&r, text))
}

/// The bytes of owner.json in the directory held open, if it can be read.
fn record_in(lock: &File) -> Option<Vec<u8>> {
  crate::files::read_at(lock, "owner.json").ok()
}

/// Whether a record's bytes are the one `publish` wrote for `text`.
fn is_record(bytes: &[u8], text: &str) -> bool {
  bytes.strip_suffix(b"\n") == Some(text.as_bytes())
}

/// Write-then-link of owner.json inside the claimed directory: the record
/// appears whole, as a rename makes it, but only if no record is there yet,
/// so two claims that ended up holding one directory (one's mkdir, then an
/// unlock removing it and the other's mkdir, before the first opened it)
/// cannot both publish. The temporary file is created exclusively too: two
/// such claims sharing it would each write into the other's record. Beyond the reference, and changing no result: the
/// record is fsynced before it is linked and the directory after, so after
/// a power loss owner.json is whole or absent, never empty or torn.
fn publish(lock: &File, text: &str) -> std::io::Result<()> {
  use nix::fcntl::{openat, OFlag};
  use nix::sys::stat::Mode;
  use nix::unistd::{linkat, unlinkat, UnlinkatFlags};
  let tmp = openat(
    lock,
    "owner.json.tmp",
    OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC,
    Mode::from_bits_truncate(0o600),
  )?;
  let mut file = File::from(tmp);
  let written = file
    .write_all(format!("{text}\n").as_bytes())
    .and_then(|()| file.sync_all())
    .and_then(|()| Ok(linkat(lock, "owner.json.tmp", lock, "owner.json", nix::fcntl::AtFlags::empty())?));
  drop(file);
  // The temporary file is this claim's (created exclusively): it goes
  // whether or not the record was linked.
  let removed = unlinkat(lock, "owner.json.tmp", UnlinkatFlags::NoRemoveDir);
  written?;
  removed?;
  // A directory fsync can be refused by some file systems; the record stands.
  let _ = lock.sync_all();
  Ok(())
}

/// What `unlock` did when it did not refuse.
#[derive(Debug, PartialEq)]
pub enum Unlocked {
  /// There was no lock (`false`).
  NoLock,
  /// The lock was removed; the record it held (`null` for none).
  Cleared(Option<Owner>),
}

/// `unlock` after STOP was written: refuses a live, unverifiable or
/// unreadable owner; otherwise runs `beforeRemove` and removes the lock.
pub fn unlock_after_stop<S: Seams>(dir: &str, seams: &mut S) -> Result<Unlocked, S::Error> {
  if !exists(&lock_path(dir)) {
    return Ok(Unlocked::NoLock);
  }
  let held = hold(dir);
  let rec = match &held {
    Some(lock) => read_pid_in(lock),
    None => read_pid(dir),
  };
  let pid = pid_text(&rec);
  match state_of(rec.as_ref(), seams)? {
    OwnerState::Live => {
      return Err(
        JournalError::failed(format!(
          "refusing to unlock: the connector is running (pid {pid}); use stop, and unlock only a lock whose owner is gone"
        ))
        .into(),
      )
    }
    OwnerState::Unknown => {
      return Err(
        JournalError::failed(format!(
          "refusing to unlock: pid {pid} is alive and its identity cannot be verified; nothing removed. Stop that process first"
        ))
        .into(),
      )
    }
    OwnerState::Invalid => {
      return Err(
        JournalError::failed(format!(
          "refusing to unlock: the owner record cannot be read; nothing removed. Inspect run.lock/owner.json in {} by hand",
          journal_label(dir)
        ))
        .into(),
      )
    }
    _ => {}
  }
  seams.before_remove()?;
  match &held {
    Some(lock) => remove_held(dir, lock, 10)?,
    None => remove_lock(dir, 10)?,
  }
  Ok(Unlocked::Cleared(rec))
}

/// `clearPid`: removes the lock when its record names `pid`.
pub fn clear_pid(dir: &str, pid: Option<f64>) -> Result<()> {
  let Some(lock) = hold(dir) else {
    // Not a directory this process can hold (a link a hand put there, or
    // nothing): judged and removed by path, as the reference does.
    if let (Some(Owner::Valid { pid: owner, .. }), Some(pid)) = (read_pid(dir), pid) {
      if owner == pid {
        remove_lock(dir, 0)?;
      }
    }
    return Ok(());
  };
  if let (Some(Owner::Valid { pid: owner, .. }), Some(pid)) = (read_pid_in(&lock), pid) {
    if owner == pid {
      remove_held(dir, &lock, 0)?;
    }
  }
  Ok(())
}

/// Removes the lock directory held open: its entries by descriptor, then its
/// name, which is removed only while it is empty. Read-then-remove by path
/// (the reference's `rmSync`) can remove a lock another claimant created
/// after this one was judged: an unlock that judged an ownerless lock, or a
/// claimant releasing itself, would then take a standing owner's lock away
/// and let two processes hold the binding (the reliability suite's "recover
/// racing claims" saw it). If the name holds another claimant's published
/// lock by the time it is removed, that lock stays.
fn remove_held(dir: &str, lock: &File, max_retries: u32) -> Result<()> {
  use std::os::unix::fs::MetadataExt;
  let path = lock_path(dir);
  let refuse = |e: std::io::Error| quiet_io(&e, &format!("run.lock in {}", journal_label(dir)), "remove");
  let mut attempt = 0;
  loop {
    attempt += 1;
    empty_held(lock, &path).map_err(refuse)?;
    let err = match std::fs::remove_dir(&path) {
      Ok(()) => return Ok(()),
      Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
      Err(e) => e,
    };
    let same = |m: std::fs::Metadata, h: std::fs::Metadata| m.dev() == h.dev() && m.ino() == h.ino();
    if let (Ok(now), Ok(ours)) = (std::fs::symlink_metadata(&path), lock.metadata()) {
      if !same(now, ours) {
        return Ok(());
      }
    }
    let transient = matches!(
      fs_code(&err).as_deref(),
      Some("EBUSY" | "EMFILE" | "ENFILE" | "ENOTEMPTY" | "EPERM")
    );
    if !transient || attempt > max_retries {
      return Err(refuse(err));
    }
    std::thread::sleep(Duration::from_millis(20 * u64::from(attempt)));
  }
}

/// Unlinks every entry of the held directory (a subdirectory, which only a
/// hand could have put there, by its path under run.lock).
fn empty_held(lock: &File, path: &str) -> std::io::Result<()> {
  use nix::dir::Dir;
  use nix::unistd::{unlinkat, UnlinkatFlags};
  let dup = lock.try_clone()?;
  let mut entries = Dir::from_fd(dup.into()).map_err(std::io::Error::from)?;
  let names: Vec<std::ffi::OsString> = entries
    .iter()
    .filter_map(|e| e.ok())
    .map(|e| std::ffi::OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
    .filter(|n| n != "." && n != "..")
    .collect();
  for name in names {
    match unlinkat(lock, name.as_os_str(), UnlinkatFlags::NoRemoveDir) {
      Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
      Err(nix::errno::Errno::EISDIR) => std::fs::remove_dir_all(std::path::Path::new(path).join(&name))?,
      Err(e) => return Err(e.into()),
    }
  }
  Ok(())
}

/// `rmSync(run.lock, {recursive, force})`, retrying the transient failures
/// Node retries (with `maxRetries` 10 and `retryDelay` 20 for unlock).
fn remove_lock(dir: &str, max_retries: u32) -> Result<()> {
  let lock = lock_path(dir);
  let mut attempt = 0;
  loop {
    attempt += 1;
    let result = match std::fs::symlink_metadata(&lock) {
      Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
      Err(e) => Err(e),
      Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&lock),
      Ok(_) => std::fs::remove_file(&lock),
    };
    let err = match result {
      Ok(()) => return Ok(()),
      Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
      Err(e) => e,
    };
    let transient = matches!(
      fs_code(&err).as_deref(),
      Some("EBUSY" | "EMFILE" | "ENFILE" | "ENOTEMPTY" | "EPERM")
    );
    if !transient || attempt > max_retries {
      return Err(quiet_io(&err, &format!("run.lock in {}", journal_label(dir)), "remove"));
    }
    std::thread::sleep(Duration::from_millis(20 * u64::from(attempt)));
  }
}

/// `stopTarget`: the verified live owner to signal, or `None`. Never a pid
/// whose identity cannot be proven.
pub fn stop_target<S: Seams>(rec: Option<Owner>, seams: &mut S) -> Result<Option<f64>, S::Error> {
  Ok(match (state_of(rec.as_ref(), seams)?, rec) {
    (OwnerState::Live, Some(Owner::Valid { pid, .. })) => Some(pid),
    _ => None,
  })
}

/// What `recover` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Recovered {
  Clean,
  Cleared,
}

/// `recover`, the supervised pre-start: lets a run that crashed start again
/// without a hand, while every operator brake holds. `stop_line(reason)`
/// makes a STOP line for `unlock`'s STOP. See the README for each refusal.
pub fn recover<S: Seams>(
  dir: &str,
  seams: &mut S,
  stop_line: impl FnOnce(&str) -> Result<String, Option<String>>,
) -> Result<Recovered, S::Error> {
  let label = journal_label(dir);
  if stop::requested(dir) {
    if !stop::is_ours(&stop::read(dir)?) {
      return Err(JournalError::brake(format!("STOP is present in {label}; the brake is on. Remove it to run")).into());
    }
    stop::clear(dir)?;
  }
  if !exists(&lock_path(dir)) {
    return Ok(Recovered::Clean);
  }
  let state = state_of(read_pid(dir).as_ref(), seams)?;
  if matches!(state, OwnerState::Live | OwnerState::Unknown | OwnerState::Invalid) {
    return Err(refusal(dir, seams)?.into());
  }
  stop::with_lock(dir, || stop::append(dir, || stop_line(stop::RECOVER_REASON)))?;
  unlock_after_stop(dir, seams)?;
  if !stop::is_ours(&stop::read(dir)?) {
    return Err(
      JournalError::brake(format!(
        "STOP was written by an operator while recovering {label}; the brake stays. Remove it to run"
      ))
      .into(),
    );
  }
  stop::clear(dir)?;
  Ok(Recovered::Cleared)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::testutil::TempDir;

  /// Seams answering a fixed identity, counting their calls.
  struct Fixed {
    start: &'static str,
    calls: usize,
    removes: usize,
  }

  impl Seams for Fixed {
    type Error = JournalError;
    fn identity(&mut self, _pid: f64) -> Result<Identity> {
      self.calls += 1;
      Ok(Identity {
        start: Field::Str(self.start.encode_utf16().collect()),
        boot: Field::Str(BOOT.encode_utf16().collect()),
      })
    }
    fn before_remove(&mut self) -> Result<()> {
      self.removes += 1;
      Ok(())
    }
  }

  fn fixed(start: &'static str) -> Fixed {
    Fixed {
      start,
      calls: 0,
      removes: 0,
    }
  }

  const BOOT: &str = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";
  const ME: f64 = 1.0; // pid 1 is alive (and, as root, signalable)

  fn record(pid: f64, start: &str) -> String {
    format!(r#"{{"pid":{pid},"start":"{start}","boot":"{BOOT}","at":"2021-01-01T00:00:00.000Z"}}"#)
  }

  #[test]
  fn claim_publishes_and_refuses_a_second_claim() {
    let d = TempDir::new();
    let mut seams = fixed("5");
    claim(d.path(), Some(ME), &mut seams, || Ok(record(ME, "5"))).expect("claim");
    assert_eq!(
      std::fs::read_to_string(owner_path(d.path())).expect("record"),
      record(ME, "5") + "\n"
    );
    assert!(!exists(&under(&lock_path(d.path()), &["owner.json.tmp"])));
    assert_eq!(
      read_pid(d.path()),
      Some(Owner::Valid {
        pid: ME,
        start: Some("5".into()),
        boot: Some(BOOT.into())
      })
    );
    let err = claim(d.path(), Some(ME), &mut seams, || Ok(record(ME, "5"))).expect_err("held");
    assert_eq!(err, JournalError::brake("another connector is running for this binding (pid 1)"));
    assert_eq!(seams.calls, 1);
    clear_pid(d.path(), Some(2.0)).expect("not ours");
    assert!(exists(&lock_path(d.path())));
    clear_pid(d.path(), Some(ME)).expect("ours");
    assert!(!exists(&lock_path(d.path())));
  }

  /// Two claims can end up holding one directory (a mkdir, an unlock
  /// removing it, another mkdir, then the first one's open). Whichever
  /// publishes second is refused as lost and removes nothing, whether the
  /// first is still writing its temporary file or has linked its record.
  #[test]
  fn a_claim_sharing_its_directory_with_another_is_lost_and_removes_nothing() {
    for (other, name) in [("half a record", "owner.json.tmp"), ("{\"pid\":2}", "owner.json")] {
      let d = TempDir::new();
      let lock = lock_path(d.path());
      let err = claim(d.path(), Some(ME), &mut fixed("5"), || {
        std::fs::write(under(&lock, &[name]), other).map_err(|_| None)?;
        Ok(record(ME, "5"))
      })
      .expect_err("lost");
      assert_eq!(err, lost_claim());
      assert_eq!(std::fs::read_to_string(under(&lock, &[name])).expect("the other's file"), other);
      let mut left: Vec<_> = std::fs::read_dir(&lock)
        .expect("lock")
        .map(|e| e.expect("entry").file_name())
        .collect();
      left.sort();
      assert_eq!(left, [name], "only the other claim's file");
    }
  }

  #[test]
  fn the_stop_gate_releases_the_claim() {
    let d = TempDir::new();
    std::fs::write(stop::stop_path(d.path()), "").expect("STOP");
    let mut seams = fixed("5");
    let err = claim(d.path(), Some(ME), &mut seams, || Ok(record(ME, "5"))).expect_err("gated");
    assert!(matches!(err, JournalError::Discord { exit_code: 3, .. }));
    assert!(!exists(&lock_path(d.path())));
  }

  #[test]
  fn unlock_judges_and_clears() {
    let d = TempDir::new();
    let mut live = fixed("5");
    assert_eq!(unlock_after_stop(d.path(), &mut live), Ok(Unlocked::NoLock));
    claim(d.path(), Some(ME), &mut live, || Ok(record(ME, "5"))).expect("claim");
    assert!(unlock_after_stop(d.path(), &mut live).is_err());
    assert_eq!(live.removes, 0);
    let mut other = fixed("6");
    let cleared = unlock_after_stop(d.path(), &mut other).expect("mismatch clears");
    assert_eq!(
      cleared,
      Unlocked::Cleared(Some(Owner::Valid {
        pid: ME,
        start: Some("5".into()),
        boot: Some(BOOT.into())
      }))
    );
    assert_eq!(other.removes, 1);
    assert!(!exists(&lock_path(d.path())));
  }

  #[test]
  fn recover_clears_a_stale_lock_and_its_own_stop() {
    let d = TempDir::new();
    let line = |reason: &str| Ok(format!(r#"{{"at":"2021-01-01T00:00:00.000Z","reason":"{reason}"}}"#));
    assert_eq!(recover(d.path(), &mut fixed("5"), line), Ok(Recovered::Clean));
    std::fs::create_dir(lock_path(d.path())).expect("ownerless lock");
    assert_eq!(recover(d.path(), &mut fixed("5"), line), Ok(Recovered::Cleared));
    assert!(!stop::requested(d.path()) && !exists(&lock_path(d.path())));
    stop::with_lock(d.path(), || stop::append(d.path(), || line("operator"))).expect("STOP");
    assert!(matches!(
      recover(d.path(), &mut fixed("5"), line),
      Err(JournalError::Discord { exit_code: 3, .. })
    ));
  }

  #[test]
  fn owner_records_parse_as_read_pid_reads_them() {
    assert_eq!(parse_owner("[]"), Owner::Invalid);
    assert_eq!(parse_owner(r#"{"pid":1.5}"#), Owner::Invalid);
    assert_eq!(parse_owner(r#"{"pid":"1"}"#), Owner::Invalid);
    assert_eq!(
      parse_owner(r#"{"pid":7,"start":"01","boot":"X"}"#),
      Owner::Valid {
        pid: 7.0,
        start: None,
        boot: None
      }
    );
    assert_eq!(
      parse_owner(r#"{"pid":1,"pid":2}"#),
      Owner::Valid {
        pid: 2.0,
        start: None,
        boot: None
      }
    );
  }
}
