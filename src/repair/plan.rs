//! The plan of a repair: every record file and turn record read and judged,
//! nothing changed.

use std::fs::File;
use std::io::{BufRead, BufReader};

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;

use super::{stamp_of, Aside, Corrupt, FilePlan, Journal, Plan, TurnPlan, RECORD_FILES};
use crate::error::{quiet_io, Result};
use crate::inspect::{judge, Damage};

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
