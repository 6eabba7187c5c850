//! A repair carried out: each quarantine written and synced before its
//! file changes, each file truncated or written anew beside itself and
//! renamed over, every step through the journal's directory descriptor.

use std::fs::File;
use std::io::Write;

use nix::fcntl::{openat, renameat, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::{unlinkat, UnlinkatFlags};

use super::{stamp_of, FilePlan, Opened, Plan, TurnPlan};
use crate::ground::error::{quiet_io, JournalError, Result};
use crate::ground::files::{open_dir_at, Link};
use crate::ground::stamp::Stamp;

/// How long a repair waits for an append that moves to finish before it
/// refuses (one that does not move ends the wait within about a second).
const HOLD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

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
pub fn apply(j: &Opened, plan: &Plan, stamp: &str, step: &mut dyn FnMut(&str)) -> Result<Vec<Done>> {
  let mut done = Vec::new();
  apply_into(j, plan, stamp, step, &mut done)?;
  Ok(done)
}

/// `apply`, with what it finished in `done` as it goes: where a later file
/// fails, the caller still says which were mended (#34).
pub fn apply_into(j: &Opened, plan: &Plan, stamp: &str, step: &mut dyn FnMut(&str), done: &mut Vec<Done>) -> Result<()> {
  if let Some(f) = plan.files.iter().find(|f| f.link && f.changes()) {
    return Err(JournalError::failed(format!(
      "{} is a symlink: a repair changes only the journal's own files, and nothing was changed. Mend the file it leads to by hand, or put the file itself in its place",
      f.name
    )));
  }
  for f in plan.files.iter().filter(|f| f.changes()) {
    let refuse = |e: std::io::Error| quiet_io(&e, f.name, "repair");
    // One descriptor for the check and every read after it: the file mended
    // is the file checked. Its flock is held from the check to the mend: an
    // append (which takes it too, #31) lands before the check, which then
    // sees the file changed, or after the mend (on the mended file), never
    // in between where the truncation or the rename would drop it.
    let source = crate::ground::files::open_at(&j.fd, f.name, 0).map_err(refuse)?;
    // The wait is an append's (#64): from its first look on, a holder that
    // does not move, or one this process cannot see (whether it moves
    // cannot be told, and the binding is held meanwhile), ends it, named.
    let start = std::time::Instant::now();
    let meta = source.metadata().ok();
    let mut watch =
      crate::ground::lockers::Watch::new(start + crate::lines::FIRST_LOOK, crate::lines::LOOK_EVERY, || meta.clone()).ending_on_unseen();
    let mut give_up = |now| watch.give_up(now);
    let source = match crate::ground::files::flock_until(source, start + HOLD_PATIENCE, &mut give_up) {
      Ok(source) => source,
      Err(crate::ground::files::Unflocked::Failed(e)) => return Err(refuse(e)),
      Err(crate::ground::files::Unflocked::TimedOut) => {
        let holders = watch.holders();
        let hidden = crate::ground::holder::Holder::hidden();
        let h = holders.first().unwrap_or(&hidden);
        return Err(JournalError::failed(format!(
          "{} is held by another process, {}, which holds its append lock and has not let go; nothing of it was changed, and the binding was let go. {}, then run the repair again",
          f.name,
          h.describe(),
          crate::ground::text::capitalized(&h.remedy())
        )));
      }
    };
    let source = source.file();
    if stamp_of(source).map_err(refuse)? != f.stamp {
      return Err(JournalError::failed(format!(
        "{} changed while the repair read it (something wrote to it, though the binding was held); nothing of it was changed: run the repair again",
        f.name
      )));
    }
    let quarantine = if f.aside.is_empty() {
      None
    } else {
      let q = quarantine(j, f, source, stamp).map_err(refuse)?;
      step(&format!("quarantined {}", f.name));
      Some(q)
    };
    // A rewrite renamed over a file with another name leaves that name the
    // old file, whole: what a shared file's split is for. No append of
    // this binding's waits on the old file meanwhile (the binding is held);
    // another name's appender of this package appends to the old file,
    // which stays that name's.
    let mended = if f.truncate {
      open_rw(j, f.name).and_then(|file| {
        file.set_len(f.aside[0].start)?;
        file.sync_all()
      })
    } else {
      rewrite(j, f, source, step)
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
  Ok(())
}

/// Sets a turn record aside: moved whole into the journal directory
/// (`turns-<file>.aside-<stamp>`, never over anything there), or, where
/// only zero bytes follow its whole text, the zeros to such a file and the
/// record written anew without them.
fn set_aside_turn(j: &Opened, t: &TurnPlan, stamp: &str) -> std::io::Result<String> {
  let turns = File::from(open_dir_at(&j.fd, "turns", Link::Follow)?);
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
            .is_ok_and(|st| Stamp::of(&st) == Stamp::of(&record))
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
      let record = crate::ground::files::open_at(&turns, &t.file, 0)?;
      let zeros = [(body, t.size)];
      // A repair killed after it set the zeros aside and before it wrote
      // the record anew left them in a quarantine already: that one is
      // kept, not a second copy made (#31).
      let prefix = format!("turns-{}.aside-", t.file);
      let mut made = None;
      for name in entries(j, ".")? {
        if name.starts_with(&prefix) && holds(j, &name, &record, &zeros)? {
          made = Some(name);
          break;
        }
      }
      let name = match made {
        Some(name) => name,
        None => {
          publish(&j.fd, &q, false, |out| copy_sparse(&record, out, &zeros))?;
          q
        }
      };
      let mut text = Vec::new();
      copy_ranges(&record, &mut text, &[(0, body)])?;
      publish(&turns, &t.file, true, |out| out.write_all(&text))?;
      name
    }
  })
}

fn sync(f: &File) -> std::io::Result<()> {
  f.sync_all()
}

fn open_rw(j: &Opened, name: &str) -> std::io::Result<File> {
  let fd = openat(&j.fd, name, OFlag::O_RDWR | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW, Mode::empty())?;
  Ok(File::from(fd))
}

/// Hands `each` the byte ranges `keep` of `from`, in order, a buffer at a
/// time (a set-aside run of zeros may be gigabytes long); `each` says
/// whether to go on. Returns whether every range was read to its end.
fn each_chunk(from: &File, keep: &[(u64, u64)], mut each: impl FnMut(&[u8]) -> std::io::Result<bool>) -> std::io::Result<bool> {
  use std::os::unix::fs::FileExt;
  let mut buf = vec![0u8; BUFFER];
  for &(start, end) in keep {
    let mut at = start;
    while at < end {
      let want = usize::try_from(end - at).unwrap_or(usize::MAX).min(buf.len());
      let got = from.read_at(&mut buf[..want], at)?;
      if got == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
      }
      if !each(&buf[..got])? {
        return Ok(false);
      }
      at += got as u64;
    }
  }
  Ok(true)
}

/// Copies the file's byte ranges `keep` (in order) from `from` to `to`.
fn copy_ranges(from: &File, to: &mut impl Write, keep: &[(u64, u64)]) -> std::io::Result<()> {
  each_chunk(from, keep, |bytes| to.write_all(bytes).map(|()| true)).map(drop)
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
pub(super) fn quarantine(j: &Opened, f: &FilePlan, source: &File, stamp: &str) -> std::io::Result<(String, bool)> {
  // Truncation sets aside the whole tail, empty lines between cut ones too.
  let ranges: Vec<(u64, u64)> = match f.truncate {
    true => vec![(f.aside[0].start, f.size)],
    false => f.aside.iter().map(|a| (a.start, a.end)).collect(),
  };
  let prefix = format!("{}.aside-", f.name);
  for name in entries(j, ".")? {
    if name.starts_with(&prefix) && holds(j, &name, source, &ranges)? {
      return Ok((name, false));
    }
  }
  let mut name = format!("{prefix}{stamp}");
  for n in 2.. {
    match publish(&j.fd, &name, false, |out| copy_sparse(source, out, &ranges)) {
      Ok(()) => break,
      Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => name = format!("{prefix}{stamp}-{n}"),
      Err(e) => return Err(e),
    }
  }
  Ok((name, true))
}

/// Whether the journal's file `name` holds exactly the bytes `ranges` of
/// `source`, compared a buffer at a time (a set-aside run of zeros may be
/// gigabytes long).
fn holds(j: &Opened, name: &str, source: &File, ranges: &[(u64, u64)]) -> std::io::Result<bool> {
  use std::os::unix::fs::FileExt;
  let Ok(file) = crate::ground::files::open_at(&j.fd, name, 0) else {
    return Ok(false);
  };
  let want: u64 = ranges.iter().map(|&(s, e)| e - s).sum();
  if file.metadata()?.len() != want {
    return Ok(false);
  }
  let mut theirs = vec![0u8; BUFFER];
  let mut at = 0u64;
  each_chunk(source, ranges, |ours| {
    let same = file.read_exact_at(&mut theirs[..ours.len()], at).is_ok() && theirs[..ours.len()] == *ours;
    at += ours.len() as u64;
    Ok(same)
  })
}

/// Bytes copied at a time.
const BUFFER: usize = 1 << 20;

/// Copies the byte ranges `keep` of `from` to the new file `to`, a buffer
/// at a time, leaving a hole where a whole buffer is zeros (#34): the file
/// reads back the same bytes, and a run of zeros that a power loss left,
/// often itself a hole, costs no disk when it is set aside.
fn copy_sparse(from: &File, to: &mut File, keep: &[(u64, u64)]) -> std::io::Result<()> {
  use std::io::{Seek, SeekFrom};
  let mut len = 0u64;
  each_chunk(from, keep, |bytes| {
    if bytes.iter().all(|&b| b == 0) {
      to.seek(SeekFrom::Current(bytes.len() as i64))?;
    } else {
      to.write_all(bytes)?;
    }
    len += bytes.len() as u64;
    Ok(true)
  })?;
  // A hole at the end has no write to give the file its length.
  to.set_len(len)
}

/// Writes the file without the parts set aside (a whole record's newline
/// restored where zeros followed it, and added where the last line lacked
/// one) beside it, and renames it over the file.
fn rewrite(j: &Opened, f: &FilePlan, source: &File, step: &mut dyn FnMut(&str)) -> std::io::Result<()> {
  let mut keep = Vec::new();
  let mut at = 0;
  for a in &f.aside {
    keep.push((at, a.start));
    at = a.end;
  }
  keep.push((at, f.size));
  publish(&j.fd, f.name, true, |out| {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut *out);
    let mut last = None;
    for &(start, end) in &keep {
      if end > start {
        copy_ranges(source, &mut w, &[(start, end)])?;
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
    out.sync_all()
  })
}

/// The names in the journal directory.
fn entries(j: &Opened, name: &str) -> std::io::Result<Vec<String>> {
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
pub fn clean(j: &Opened) -> Result<Vec<String>> {
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
