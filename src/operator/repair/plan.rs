//! The plan of a repair: every record file and turn record read and judged,
//! nothing changed.

use std::fs::File;

use super::{stamp_of, Aside, Corrupt, FilePlan, Null, Opened, Plan, TurnPlan};
use crate::ground::error::{quiet_io, Result};
use crate::ground::files::{open_dir_at, Link};
use crate::lines::RECORD_FILES;
use crate::operator::inspect::record_names;
use crate::operator::judge::{each_line, is_null, judge_file, Damage};

/// Plans the repair of the journal: reads every record file and turn
/// record, changes nothing.
pub fn plan(j: &Opened) -> Result<Plan> {
  let mut plan = Plan::default();
  for name in RECORD_FILES {
    if let Some(file) = plan_file(j, name, &mut plan.corrupt, &mut plan.nulls)? {
      plan.files.push(file);
    }
  }
  plan.turns = plan_turns(j, &mut plan.corrupt, &mut plan.nulls)?;
  Ok(plan)
}

fn plan_file(j: &Opened, name: &'static str, corrupt: &mut Vec<Corrupt>, nulls: &mut Vec<Null>) -> Result<Option<FilePlan>> {
  let link = nix::sys::stat::fstatat(&j.fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
    .is_ok_and(|st| st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFLNK);
  let file = match crate::ground::files::open_at(&j.fd, name, 0) {
    Ok(file) => file,
    Err(e) if e.raw_os_error() == Some(nix::libc::ENOENT) => return Ok(None),
    Err(e) => return Err(quiet_io(&e, name, "read")),
  };
  let stamp = stamp_of(&file).map_err(|e| quiet_io(&e, name, "read"))?;
  let (_, _, links) = crate::ground::files::fstat_links(&file).map_err(|e| quiet_io(&e, name, "read"))?;
  let mut plan = FilePlan {
    name,
    link,
    // A link's file is not the journal's own: the repair refuses to change it.
    shared: links > 1 && !link,
    stamp,
    ..FilePlan::default()
  };
  // Where the last record kept ends (just after its newline), to tell a
  // damaged tail from damage with records after it.
  let mut kept_end = 0u64;
  plan.size = each_line(file, name, |l| {
    let Some(damage) = l.judge() else {
      if nulls.len() < crate::operator::inspect::MAX_LISTED && is_null(l.body) {
        nulls.push(Null {
          file: name.to_string(),
          line: l.n,
        });
      }
      plan.kept += 1;
      kept_end = l.end;
      plan.terminate = !l.terminated;
      return;
    };
    // A whole record followed by zero bytes: the record stays, the zeros go.
    let body = l.body.len();
    if damage == Damage::Zeros && body > 0 {
      plan.kept += 1;
      plan.aside.push(Aside {
        line: l.n,
        start: l.offset + body as u64,
        end: l.end,
        damage,
      });
      // The record needs its newline back: only a rewrite gives it one.
      kept_end = u64::MAX;
      return;
    }
    if damage == Damage::Invalid && l.terminated {
      corrupt.push(Corrupt {
        file: name.to_string(),
        line: l.n,
        offset: l.offset,
        length: l.len,
        head: l.head.to_vec(),
      });
      return;
    }
    plan.aside.push(Aside {
      line: l.n,
      start: l.offset,
      end: l.end,
      damage: if damage == Damage::Invalid { Damage::Torn } else { damage },
    });
  })?;
  // A shared file is written anew: a truncation would cut the other name's too.
  plan.truncate = plan.aside.first().is_some_and(|a| a.start >= kept_end) && !plan.terminate && !plan.shared;
  Ok(Some(plan))
}

fn plan_turns(j: &Opened, corrupt: &mut Vec<Corrupt>, nulls: &mut Vec<Null>) -> Result<Vec<TurnPlan>> {
  let turns = match open_dir_at(&j.fd, "turns", Link::Follow) {
    Ok(fd) => File::from(fd),
    Err(nix::errno::Errno::ENOENT) => return Ok(Vec::new()),
    Err(e) => return Err(quiet_io(&e.into(), "the turns directory", "read")),
  };
  let names = record_names(&turns).map_err(|e| quiet_io(&e, "the turns directory", "read"))?;
  let mut out = Vec::new();
  for name in names {
    let Ok(name) = String::from_utf8(name) else { continue };
    let record = crate::ground::files::open_at(&turns, &name, 0)
      .and_then(judge_file)
      .map_err(|e| quiet_io(&e, &crate::ground::paths::turn_label(&name), "read"))?;
    // A whole record followed by zero bytes keeps its text.
    let body = record.body;
    match record.damage {
      None if record.null && nulls.len() < crate::operator::inspect::MAX_LISTED => nulls.push(Null {
        file: format!("turns/{name}"),
        line: 1,
      }),
      None => {}
      Some(Damage::Invalid) => corrupt.push(Corrupt {
        file: format!("turns/{name}"),
        line: 1,
        offset: 0,
        length: record.size,
        head: record.head,
      }),
      Some(damage) => out.push(TurnPlan {
        keep: (damage == Damage::Zeros && body > 0).then_some(body),
        file: name,
        size: record.size,
        damage,
      }),
    }
  }
  Ok(out)
}
