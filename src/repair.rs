//! `discord-journal repair`: the way out of a crash that the readers
//! refuse, without a person editing JSONL by hand. The policy of careful
//! append-only logs:
//!
//! - a line cut short (`inspect::Damage::Cut`, wherever it stands: an
//!   append after it writes on a line of its own, see `lines::append`), a
//!   run of zero bytes, and a last line without its newline that does not
//!   parse are interrupted appends: each is set aside, its bytes kept;
//! - an empty or cut turn record is a write that never finished: it is set
//!   aside whole;
//! - any other line that does not parse is corruption: nothing is changed,
//!   and the repair refuses, naming it;
//! - every whole record stays where it was, byte for byte; a whole last
//!   line without its newline gets one.
//!
//! What is set aside goes to a quarantine file in the journal directory
//! (`<file>.aside-<UTC time>`, mode 0600; no reader reads it), written
//! under a temporary name, synced and renamed into place before the record
//! file changes. A record file whose damage is only its tail is truncated;
//! any other is written whole beside it, synced, renamed over it, and the
//! directory synced. So a kill at any step leaves the old file or the
//! mended one, and the bytes set aside are in one of them or in the
//! quarantine. Every step is taken through the journal directory held open.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;

use nix::fcntl::{openat, renameat, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::{unlinkat, UnlinkatFlags};
use serde_json::{json, Value};

use crate::error::{quiet_io, JournalError, Result};
use crate::inspect::{judge, Damage};
use crate::lines::{ADMISSIONS, DROPS, INBOX, NOTICES, OUTBOX, RELOADS};
use crate::lock::{self, OwnerState, System};

/// The record files, in the order a repair takes them.
pub const RECORD_FILES: [&str; 6] = [INBOX, OUTBOX, DROPS, ADMISSIONS, NOTICES, RELOADS];

/// A part of a record file set aside.
#[derive(Clone, Debug, PartialEq)]
pub struct Aside {
  /// 1-based line number, as the readers number lines.
  pub line: usize,
  /// The bytes set aside (with the newline after them, where one is).
  pub start: u64,
  pub end: u64,
  pub damage: Damage,
}

/// A line that is corruption: the repair refuses and changes nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct Corrupt {
  pub file: String,
  pub line: usize,
  pub offset: u64,
  pub length: u64,
  pub head: Vec<u8>,
}

/// What a repair does to one record file.
#[derive(Debug, Default, PartialEq)]
pub struct FilePlan {
  pub name: &'static str,
  pub size: u64,
  /// Records (lines that parse) kept.
  pub kept: usize,
  pub aside: Vec<Aside>,
  /// The file is cut at `aside[0].start`: all that is set aside is its tail.
  pub truncate: bool,
  /// The last line is whole but has no newline: one is added.
  pub terminate: bool,
  /// The file is a symlink: a repair changes only the journal's own files.
  pub link: bool,
  /// Device, inode and size when planned: a file that changed since is
  /// not mended from this plan.
  pub stamp: (u64, u64, u64),
}

impl FilePlan {
  pub fn aside_bytes(&self) -> u64 {
    self.aside.iter().map(|a| a.end - a.start).sum()
  }
  fn changes(&self) -> bool {
    !self.aside.is_empty() || self.terminate
  }
}

/// A turn record set aside: whole, or (`keep`) only the zero bytes after
/// its whole text, which stays.
#[derive(Debug, PartialEq)]
pub struct TurnPlan {
  pub file: String,
  pub size: u64,
  pub damage: Damage,
  pub keep: Option<u64>,
}

/// Everything a repair would do, or why it refuses.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
  pub files: Vec<FilePlan>,
  pub turns: Vec<TurnPlan>,
  pub corrupt: Vec<Corrupt>,
}

impl Plan {
  pub fn changes(&self) -> bool {
    self.files.iter().any(FilePlan::changes) || !self.turns.is_empty()
  }
}

/// The journal directory, held open: every step of a repair is taken
/// relative to it, so a directory swapped for another at its path meanwhile
/// is not the one written into.
pub struct Journal {
  fd: File,
  /// An exclusive flock(2) on the directory while a repair changes it:
  /// two repairs never run at once (a kill releases it).
  _only: Option<nix::fcntl::Flock<File>>,
}

impl Journal {
  /// The journal to plan a repair of.
  pub fn open(dir: &str) -> Result<Journal> {
    Ok(Journal {
      fd: open_dir(dir)?,
      _only: None,
    })
  }

  /// The journal to repair: refused (exit 3) while another repair runs.
  pub fn exclusive(dir: &str) -> Result<Journal> {
    let fd = open_dir(dir)?;
    let only = match nix::fcntl::Flock::lock(open_dir(dir)?, nix::fcntl::FlockArg::LockExclusiveNonblock) {
      Ok(only) => only,
      Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
        return Err(JournalError::brake(
          "another repair is running for this binding; let it finish (a repair holds the binding until it is done)",
        ))
      }
      Err((_, e)) => return Err(quiet_io(&e.into(), "the journal directory", "lock")),
    };
    Ok(Journal { fd, _only: Some(only) })
  }

  /// A descriptor of its own for a listing, so that no read position is
  /// shared with another (a listing through a dup sees what the last one
  /// left).
  fn listing(&self, name: &str) -> std::io::Result<nix::dir::Dir> {
    nix::dir::Dir::openat(
      &self.fd,
      name,
      OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
      Mode::empty(),
    )
    .map_err(Into::into)
  }
}

fn open_dir(dir: &str) -> Result<File> {
  std::fs::OpenOptions::new()
    .read(true)
    .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_CLOEXEC)
    .open(dir)
    .map_err(|e| quiet_io(&e, "the journal directory", "read"))
}

/// Plans the repair of the journal: reads every record file and turn
/// record, changes nothing.
pub fn plan(j: &Journal) -> Result<Plan> {
  let mut plan = Plan::default();
  for name in RECORD_FILES {
    if let Some(file) = plan_file(j, name, &mut plan.corrupt)? {
      plan.files.push(file);
    }
  }
  plan.turns = plan_turns(j, &mut plan.corrupt)?;
  Ok(plan)
}

fn plan_file(j: &Journal, name: &'static str, corrupt: &mut Vec<Corrupt>) -> Result<Option<FilePlan>> {
  let link = nix::sys::stat::fstatat(&j.fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
    .is_ok_and(|st| st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFLNK);
  let file = match crate::files::open_at(&j.fd, name, 0) {
    Ok(file) => file,
    Err(e) if e.raw_os_error() == Some(nix::libc::ENOENT) => return Ok(None),
    Err(e) => return Err(quiet_io(&e, name, "read")),
  };
  let stamp = stamp_of(&file).map_err(|e| quiet_io(&e, name, "read"))?;
  let mut reader = BufReader::with_capacity(1 << 20, file);
  let mut plan = FilePlan {
    name,
    link,
    stamp,
    ..FilePlan::default()
  };
  let mut buf = Vec::new();
  let mut n = 0;
  // Where the last record kept ends (just after its newline), to tell a
  // damaged tail from damage with records after it.
  let mut kept_end = 0u64;
  loop {
    buf.clear();
    let got = reader.read_until(b'\n', &mut buf).map_err(|e| quiet_io(&e, name, "read"))? as u64;
    if got == 0 {
      break;
    }
    n += 1;
    let offset = plan.size;
    plan.size += got;
    let terminated = buf.last() == Some(&b'\n');
    let line = if terminated { &buf[..buf.len() - 1] } else { &buf[..] };
    if line.is_empty() {
      continue;
    }
    let Some(damage) = judge(line) else {
      plan.kept += 1;
      kept_end = plan.size;
      plan.terminate = !terminated;
      continue;
    };
    // A whole record followed by zero bytes: the record stays, the zeros go.
    let body = line.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if damage == Damage::Zeros && body > 0 {
      plan.kept += 1;
      plan.aside.push(Aside {
        line: n,
        start: offset + body as u64,
        end: plan.size,
        damage,
      });
      // The record needs its newline back: only a rewrite gives it one.
      kept_end = u64::MAX;
      continue;
    }
    if damage == Damage::Invalid && terminated {
      corrupt.push(Corrupt {
        file: name.to_string(),
        line: n,
        offset,
        length: line.len() as u64,
        head: line[..line.len().min(60)].to_vec(),
      });
      continue;
    }
    plan.aside.push(Aside {
      line: n,
      start: offset,
      end: plan.size,
      damage: if damage == Damage::Invalid { Damage::Torn } else { damage },
    });
  }
  plan.truncate = plan.aside.first().is_some_and(|a| a.start >= kept_end) && !plan.terminate;
  Ok(Some(plan))
}

/// What a file is and how long: device, inode, size.
fn stamp_of(f: &File) -> std::io::Result<(u64, u64, u64)> {
  let st = nix::sys::stat::fstat(f)?;
  Ok((st.st_dev as u64, st.st_ino as u64, st.st_size as u64))
}

fn plan_turns(j: &Journal, corrupt: &mut Vec<Corrupt>) -> Result<Vec<TurnPlan>> {
  let turns = match openat(
    &j.fd,
    "turns",
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
    Mode::empty(),
  ) {
    Ok(fd) => File::from(fd),
    Err(nix::errno::Errno::ENOENT) => return Ok(Vec::new()),
    Err(e) => return Err(quiet_io(&e.into(), "the turns directory", "read")),
  };
  let mut names = Vec::new();
  let listing = j.listing("turns").map_err(|e| quiet_io(&e, "the turns directory", "read"))?;
  for entry in listing {
    let entry = entry.map_err(|e| quiet_io(&e.into(), "the turns directory", "read"))?;
    let name = entry.file_name().to_bytes();
    if name.ends_with(b".json") {
      names.push(name.to_vec());
    }
  }
  names.sort();
  let mut out = Vec::new();
  for name in names {
    let Ok(name) = String::from_utf8(name) else { continue };
    let bytes = crate::files::read_at(&turns, &name).map_err(|e| quiet_io(&e, &crate::paths::turn_label(&name), "read"))?;
    let damage = if bytes.is_empty() { Some(Damage::Cut) } else { judge(&bytes) };
    // A whole record followed by zero bytes keeps its text.
    let body = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    match damage {
      None => {}
      Some(Damage::Invalid) => corrupt.push(Corrupt {
        file: format!("turns/{name}"),
        line: 1,
        offset: 0,
        length: bytes.len() as u64,
        head: bytes[..bytes.len().min(60)].to_vec(),
      }),
      Some(damage) => out.push(TurnPlan {
        keep: (damage == Damage::Zeros && body > 0).then_some(body as u64),
        file: name,
        size: bytes.len() as u64,
        damage,
      }),
    }
  }
  Ok(out)
}

/// What a repair did to one file: where its set-aside bytes went.
#[derive(Debug, PartialEq)]
pub struct Done {
  pub file: String,
  pub quarantine: Option<String>,
}

/// Carries out `plan` (made while the binding was held), calling `step`
/// after each step (a test seam: it may stop the process there). `stamp`
/// names the quarantine files. Each file is mended whole or not at all; a
/// failure stops the repair, with the files mended before it mended.
pub fn apply(j: &Journal, plan: &Plan, stamp: &str, step: &mut dyn FnMut(&str)) -> Result<Vec<Done>> {
  if let Some(f) = plan.files.iter().find(|f| f.link && f.changes()) {
    return Err(JournalError::failed(format!(
      "{} is a symlink: a repair changes only the journal's own files, and nothing was changed. Mend the file it leads to by hand, or put the file itself in its place",
      f.name
    )));
  }
  let mut done = Vec::new();
  for f in plan.files.iter().filter(|f| f.changes()) {
    let refuse = |e: std::io::Error| quiet_io(&e, f.name, "repair");
    let now = crate::files::open_at(&j.fd, f.name, 0)
      .and_then(|file| stamp_of(&file))
      .map_err(refuse)?;
    if now != f.stamp {
      return Err(JournalError::failed(format!(
        "{} changed while the repair read it (something wrote to it, though the binding was held); nothing of it was changed: run the repair again",
        f.name
      )));
    }
    let quarantine = if f.aside.is_empty() {
      None
    } else {
      let q = quarantine(j, f, stamp).map_err(refuse)?;
      step(&format!("quarantined {}", f.name));
      Some(q)
    };
    let mended = if f.truncate {
      open_rw(j, f.name).and_then(|file| {
        file.set_len(f.aside[0].start)?;
        file.sync_all()
      })
    } else {
      rewrite(j, f, step)
    };
    if let Err(e) = mended {
      // The file is as it was, its bytes all in it: a quarantine made for
      // it now goes again, so that a failed repair changes nothing.
      if let Some((q, true)) = &quarantine {
        let _ = unlinkat(&j.fd, q.as_str(), UnlinkatFlags::NoRemoveDir);
        let _ = sync(&j.fd);
      }
      return Err(refuse(e));
    }
    step(&format!("mended {}", f.name));
    done.push(Done {
      file: f.name.to_string(),
      quarantine: quarantine.map(|(q, _)| q),
    });
  }
  for t in &plan.turns {
    let from = format!("turns/{}", t.file);
    let q = set_aside_turn(j, t, stamp).map_err(|e| quiet_io(&e, &from, "set aside"))?;
    step(&format!("set aside {from}"));
    done.push(Done {
      file: from,
      quarantine: Some(q),
    });
  }
  Ok(done)
}

/// Sets a turn record aside: moved whole into the journal directory
/// (`turns-<file>.aside-<stamp>`, never over anything there), or, where
/// only zero bytes follow its whole text, the zeros to such a file and the
/// record written anew without them.
fn set_aside_turn(j: &Journal, t: &TurnPlan, stamp: &str) -> std::io::Result<String> {
  let turns = File::from(openat(
    &j.fd,
    "turns",
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
    Mode::empty(),
  )?);
  let q = format!("turns-{}.aside-{stamp}", t.file);
  Ok(match t.keep {
    None => {
      // 0600 before it moves, so that a kill leaves no quarantine of another mode.
      nix::sys::stat::fchmodat(
        &turns,
        t.file.as_str(),
        Mode::from_bits_truncate(0o600),
        nix::sys::stat::FchmodatFlags::NoFollowSymlink,
      )?;
      // Linked into place (never over anything there), then unlinked from
      // turns/: a kill between the two leaves the record under both names,
      // one inode, and the next repair finds that link and only unlinks.
      let record = nix::sys::stat::fstatat(&turns, t.file.as_str(), nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)?;
      let prefix = format!("turns-{}.aside-", t.file);
      let linked = entries(j, ".")?.into_iter().find(|name| {
        name.starts_with(&prefix)
          && nix::sys::stat::fstatat(&j.fd, name.as_str(), nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            .is_ok_and(|st| (st.st_dev, st.st_ino) == (record.st_dev, record.st_ino))
      });
      let name = match linked {
        Some(name) => name,
        None => {
          nix::unistd::linkat(&turns, t.file.as_str(), &j.fd, q.as_str(), nix::fcntl::AtFlags::empty())?;
          q.clone()
        }
      };
      sync(&j.fd)?;
      unlinkat(&turns, t.file.as_str(), UnlinkatFlags::NoRemoveDir)?;
      sync(&turns)?;
      name
    }
    Some(body) => {
      let record = crate::files::open_at(&turns, &t.file, 0)?;
      let mut zeros = Vec::new();
      copy_ranges(&record, &mut zeros, &[(body, t.size)])?;
      publish(&j.fd, &q, false, |out| out.write_all(&zeros))?;
      let mut text = Vec::new();
      copy_ranges(&record, &mut text, &[(0, body)])?;
      publish(&turns, &t.file, true, |out| out.write_all(&text))?;
      q
    }
  })
}

fn sync(f: &File) -> std::io::Result<()> {
  f.sync_all()
}

fn open_rw(j: &Journal, name: &str) -> std::io::Result<File> {
  let fd = openat(&j.fd, name, OFlag::O_RDWR | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW, Mode::empty())?;
  Ok(File::from(fd))
}

/// Copies the file's byte ranges `keep` (in order) from `from` to `to`.
fn copy_ranges(from: &File, to: &mut impl Write, keep: &[(u64, u64)]) -> std::io::Result<()> {
  use std::os::unix::fs::FileExt;
  let mut buf = vec![0u8; 1 << 20];
  for &(start, end) in keep {
    let mut at = start;
    while at < end {
      let want = usize::try_from(end - at).unwrap_or(usize::MAX).min(buf.len());
      let got = from.read_at(&mut buf[..want], at)?;
      if got == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
      }
      to.write_all(&buf[..got])?;
      at += got as u64;
    }
  }
  Ok(())
}

/// A new file in the directory, created exclusively 0600.
fn create(dir: &File, name: &str) -> std::io::Result<File> {
  let fd = openat(
    dir,
    name,
    OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW,
    Mode::from_bits_truncate(0o600),
  )?;
  Ok(File::from(fd))
}

/// Writes `fill` to a temporary file, syncs it and renames it to `name`
/// (exclusively where `exclusive`: nothing at `name` is replaced), then
/// syncs the directory. The temporary name starts with `.repair-`, which a
/// later repair removes if a kill left it.
fn publish(dir: &File, name: &str, replace: bool, fill: impl FnOnce(&mut File) -> std::io::Result<()>) -> std::io::Result<()> {
  let temp = format!(".repair-{name}.tmp");
  let _ = unlinkat(dir, temp.as_str(), UnlinkatFlags::NoRemoveDir);
  let mut file = create(dir, &temp)?;
  let written = fill(&mut file).and_then(|()| file.sync_all());
  if let Err(e) = written {
    let _ = unlinkat(dir, temp.as_str(), UnlinkatFlags::NoRemoveDir);
    return Err(e);
  }
  let moved = if replace {
    renameat(dir, temp.as_str(), dir, name).map_err(std::io::Error::from)
  } else {
    // linkat fails on anything at `name`: a quarantine is never replaced.
    nix::unistd::linkat(dir, temp.as_str(), dir, name, nix::fcntl::AtFlags::empty())
      .map_err(std::io::Error::from)
      .and_then(|()| unlinkat(dir, temp.as_str(), UnlinkatFlags::NoRemoveDir).map_err(Into::into))
  };
  if let Err(e) = moved {
    let _ = unlinkat(dir, temp.as_str(), UnlinkatFlags::NoRemoveDir);
    return Err(e);
  }
  sync(dir)
}

/// Writes the parts of `f` set aside to its quarantine file, unless one
/// from an earlier repair that stopped before the file was mended already
/// holds exactly them. Returns its name, and whether it was made now.
fn quarantine(j: &Journal, f: &FilePlan, stamp: &str) -> std::io::Result<(String, bool)> {
  let source = crate::files::open_at(&j.fd, f.name, 0)?;
  // Truncation sets aside the whole tail, empty lines between cut ones too.
  let ranges: Vec<(u64, u64)> = match f.truncate {
    true => vec![(f.aside[0].start, f.size)],
    false => f.aside.iter().map(|a| (a.start, a.end)).collect(),
  };
  let mut wanted = Vec::new();
  copy_ranges(&source, &mut wanted, &ranges)?;
  let prefix = format!("{}.aside-", f.name);
  for name in entries(j, ".")? {
    if name.starts_with(&prefix) && crate::files::read_at(&j.fd, &name).is_ok_and(|b| b == wanted) {
      return Ok((name, false));
    }
  }
  let mut name = format!("{prefix}{stamp}");
  for n in 2.. {
    match publish(&j.fd, &name, false, |out| out.write_all(&wanted)) {
      Ok(()) => break,
      Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => name = format!("{prefix}{stamp}-{n}"),
      Err(e) => return Err(e),
    }
  }
  Ok((name, true))
}

/// Writes the file without the parts set aside (a whole record's newline
/// restored where zeros followed it, and added where the last line lacked
/// one) beside it, and renames it over the file.
fn rewrite(j: &Journal, f: &FilePlan, step: &mut dyn FnMut(&str)) -> std::io::Result<()> {
  let source = crate::files::open_at(&j.fd, f.name, 0)?;
  let mut keep = Vec::new();
  let mut at = 0;
  for a in &f.aside {
    keep.push((at, a.start));
    at = a.end;
  }
  keep.push((at, f.size));
  publish(&j.fd, f.name, true, |out| {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let mut last = None;
    for &(start, end) in &keep {
      if end > start {
        copy_ranges(&source, &mut w, &[(start, end)])?;
        let mut b = [0u8; 1];
        use std::os::unix::fs::FileExt;
        source.read_exact_at(&mut b, end - 1)?;
        last = Some(b[0]);
        // A whole record whose zeros were set aside ends without its newline.
        if b[0] != b'\n' && end < f.size {
          w.write_all(b"\n")?;
          last = Some(b'\n');
        }
      }
    }
    if last.is_some_and(|b| b != b'\n') {
      w.write_all(b"\n")?;
    }
    w.flush()?;
    drop(w);
    step(&format!("written {}", f.name));
    Ok(())
  })
}

/// The names in the journal directory.
fn entries(j: &Journal, name: &str) -> std::io::Result<Vec<String>> {
  let mut names = Vec::new();
  for entry in j.listing(name)? {
    let entry = entry.map_err(std::io::Error::from)?;
    if let Ok(name) = std::str::from_utf8(entry.file_name().to_bytes()) {
      names.push(name.to_string());
    }
  }
  Ok(names)
}

/// Removes the temporary files a repair killed midway left (`.repair-*`):
/// each holds bytes that are still in the file it was made from.
pub fn clean(j: &Journal) -> Result<Vec<String>> {
  let mut removed = Vec::new();
  for dir in [".", "turns"] {
    let names = match entries(j, dir) {
      Ok(names) => names,
      Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir == "turns" => continue,
      Err(e) => return Err(quiet_io(&e, "the journal directory", "read")),
    };
    for name in names {
      if name.starts_with(".repair-") && name.ends_with(".tmp") {
        let path = if dir == "." { name.clone() } else { format!("{dir}/{name}") };
        unlinkat(&j.fd, path.as_str(), UnlinkatFlags::NoRemoveDir).map_err(|e| quiet_io(&e.into(), &path, "remove"))?;
        removed.push(path);
      }
    }
  }
  Ok(removed)
}

impl Plan {
  pub fn to_json(&self) -> Value {
    json!({
      "files": self.files.iter().map(|f| json!({
        "file": f.name,
        "bytes": f.size,
        "kept": f.kept,
        "aside": f.aside.iter().map(|a| json!({
          "line": a.line,
          "offset": a.start,
          "length": a.end - a.start,
          "damage": a.damage.name(),
        })).collect::<Vec<_>>(),
        "asideBytes": f.aside_bytes(),
        "mend": if !f.changes() { "none" } else if f.truncate { "truncate" } else { "rewrite" },
        "terminate": f.terminate,
      })).collect::<Vec<_>>(),
      "turns": self.turns.iter().map(|t| json!({
        "file": format!("turns/{}", t.file),
        "bytes": t.size,
        "damage": t.damage.name(),
        "kept": t.keep,
      })).collect::<Vec<_>>(),
      "corrupt": self.corrupt.iter().map(|c| json!({
        "file": c.file,
        "line": c.line,
        "offset": c.offset,
        "length": c.length,
        "head": String::from_utf8_lossy(&c.head),
      })).collect::<Vec<_>>(),
    })
  }
}

/// How the binding is held while a repair changes it: by a run.lock this
/// repair made, with its own owner record, released after (a repair killed
/// midway leaves a dead owner's lock, which the next repair or `recover`
/// clears).
#[derive(Debug, PartialEq)]
pub struct Held {
  pid: f64,
  /// The pid of the dead owner whose lock was cleared to make this one.
  pub took_over: Option<String>,
}

/// Holds the binding for a repair, as a claim holds it but STOP or no
/// STOP. A dead owner's lock (or one whose pid is another process now) is
/// cleared first, as `unlock` clears it (judged, removed by descriptor),
/// so that no `recover` can clear it during the repair and let a connector
/// start in its middle. Refuses (exit 3) while a live owner holds it, or
/// one whose record is missing, unreadable or unverifiable, as a claim
/// would.
pub fn hold(dir: &str, now_iso: &str) -> Result<Held> {
  let mut system = System;
  let mut took_over = None;
  if crate::lines::exists(&lock::lock_path(dir)) {
    let existing = lock::read_pid(dir);
    match lock::state_of(existing.as_ref(), &mut system)? {
      OwnerState::Dead | OwnerState::Mismatch => {
        if let lock::Unlocked::Cleared(Some(lock::Owner::Valid { pid, .. })) = lock::unlock_after_stop(dir, &mut system)? {
          took_over = Some(format!("{pid}"));
        }
      }
      _ => return Err(lock::refusal(dir, &mut system)?),
    }
  }
  let pid = f64::from(std::process::id());
  let me = format!("{pid}");
  let (Some(start), Some(boot)) = (crate::identity::process_start(&me), crate::identity::boot_id()) else {
    return Err(JournalError::failed(
      "cannot read this process's start time or the boot id from /proc; refusing to hold the binding for the repair",
    ));
  };
  let text = json!({ "pid": pid as u64, "start": start, "boot": boot, "at": now_iso }).to_string();
  lock::hold(dir, pid, &mut system, || Ok(text))?;
  Ok(Held { pid, took_over })
}

/// Releases what `hold` took.
pub fn release(dir: &str, held: &Held) -> Result<()> {
  lock::clear_pid(dir, Some(held.pid))
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::testutil::TempDir;

  fn planned(d: &TempDir) -> Plan {
    plan(&Journal::open(d.path()).expect("open")).expect("plan")
  }

  fn repaired(d: &TempDir) -> Vec<Done> {
    let j = Journal::open(d.path()).expect("open");
    let p = plan(&j).expect("plan");
    apply(&j, &p, "T", &mut |_| {}).expect("apply")
  }

  const A: &str = "{\"id\":\"a\"}\n";
  const B: &str = "{\"id\":\"b\"}\n";

  #[test]
  fn a_cut_tail_is_truncated_and_kept_aside() {
    let d = TempDir::new();
    let path = format!("{}/inbox.jsonl", d.path());
    std::fs::write(&path, format!("{A}{B}{{\"id\":\"c\",\"at\":\"20")).expect("write");
    let p = planned(&d);
    assert!(p.files[0].truncate);
    assert_eq!(p.files[0].kept, 2);
    let done = repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}"));
    let q = done[0].quarantine.clone().expect("quarantine");
    assert_eq!(
      std::fs::read_to_string(format!("{}/{q}", d.path())).expect("q"),
      "{\"id\":\"c\",\"at\":\"20"
    );
    assert!(!planned(&d).changes(), "a second repair finds nothing");
  }

  #[test]
  fn a_cut_line_inside_and_zeros_are_set_aside_by_a_rewrite() {
    let d = TempDir::new();
    let path = format!("{}/outbox.jsonl", d.path());
    let mut bytes = format!("{A}{{\"id\":\"x\n").into_bytes();
    bytes.extend_from_slice(&[0u8; 9]);
    bytes.extend_from_slice(format!("\n{B}{}", A.trim_end()).as_bytes());
    bytes.extend_from_slice(&[0u8; 3]);
    std::fs::write(&path, &bytes).expect("write");
    let p = planned(&d);
    assert!(!p.files[0].truncate);
    assert_eq!(p.files[0].kept, 3);
    repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}{A}"));
  }

  #[test]
  fn corruption_is_reported_and_a_whole_last_line_gets_its_newline() {
    let d = TempDir::new();
    std::fs::write(format!("{}/drops.jsonl", d.path()), format!("{A}{{bad\n{B}")).expect("write");
    let p = planned(&d);
    assert_eq!(p.corrupt.len(), 1);
    assert_eq!((p.corrupt[0].line, p.corrupt[0].offset), (2, 11));
    let d = TempDir::new();
    let path = format!("{}/drops.jsonl", d.path());
    std::fs::write(&path, format!("{A}{}", B.trim_end())).expect("write");
    repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}"));
  }

  #[test]
  fn empty_and_cut_turn_records_are_set_aside_whole() {
    let d = TempDir::new();
    std::fs::create_dir(format!("{}/turns", d.path())).expect("mkdir");
    std::fs::write(format!("{}/turns/a.json", d.path()), "").expect("write");
    std::fs::write(format!("{}/turns/b.json", d.path()), "{\n  \"id\": \"b\"\n}\n").expect("write");
    std::fs::write(format!("{}/turns/c.json", d.path()), "{\n  \"id\": ").expect("write");
    let done = repaired(&d);
    let names: Vec<_> = done.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(names, ["turns/a.json", "turns/c.json"]);
    assert!(std::fs::metadata(format!("{}/turns-c.json.aside-T", d.path())).is_ok());
    assert!(std::fs::metadata(format!("{}/turns/b.json", d.path())).is_ok());
  }

  #[test]
  fn a_truncated_tail_is_set_aside_whole_empty_lines_and_all() {
    let d = TempDir::new();
    let path = format!("{}/inbox.jsonl", d.path());
    std::fs::write(&path, format!("{A}{{\"id\":\"c1\n\n\n{{\"id\":\"c2")).expect("write");
    let done = repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), A);
    let q = done[0].quarantine.clone().expect("quarantine");
    assert_eq!(
      std::fs::read_to_string(format!("{}/{q}", d.path())).expect("q"),
      "{\"id\":\"c1\n\n\n{\"id\":\"c2"
    );
  }

  #[test]
  fn a_turn_record_followed_by_zeros_keeps_its_text() {
    let d = TempDir::new();
    std::fs::create_dir(format!("{}/turns", d.path())).expect("mkdir");
    let text = "{\n  \"startedAt\": \"2026-12-01T00:00:00.000Z\"\n}\n";
    let mut bytes = text.as_bytes().to_vec();
    bytes.extend_from_slice(&[0; 8]);
    std::fs::write(format!("{}/turns/t1.json", d.path()), &bytes).expect("write");
    let done = repaired(&d);
    assert_eq!(std::fs::read_to_string(format!("{}/turns/t1.json", d.path())).expect("read"), text);
    let q = done[0].quarantine.clone().expect("quarantine");
    assert_eq!(std::fs::read(format!("{}/{q}", d.path())).expect("q"), vec![0u8; 8]);
  }

  #[test]
  fn a_repair_stopped_after_its_quarantine_is_not_set_aside_twice() {
    let d = TempDir::new();
    let path = format!("{}/inbox.jsonl", d.path());
    std::fs::write(&path, format!("{A}{{\"id\":\"cut\n{B}")).expect("write");
    let j = Journal::open(d.path()).expect("open");
    let p = plan(&j).expect("plan");
    // The first repair stops once its quarantine is made (a kill there).
    let first = quarantine(&j, &p.files[0], "T1").expect("quarantine");
    assert!(first.1);
    clean(&j).expect("clean");
    let done = apply(&j, &plan(&j).expect("plan"), "T2", &mut |_| {}).expect("apply");
    assert_eq!(done[0].quarantine.as_deref(), Some(first.0.as_str()));
    let asides = std::fs::read_dir(d.path())
      .expect("list")
      .filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().contains(".aside-")))
      .count();
    assert_eq!(asides, 1);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}"));
  }

  #[test]
  fn a_second_repair_at_once_is_refused() {
    let d = TempDir::new();
    let _first = Journal::exclusive(d.path()).expect("first");
    assert!(matches!(
      Journal::exclusive(d.path()),
      Err(JournalError::Discord { exit_code: 3, .. })
    ));
  }
}
