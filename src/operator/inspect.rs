//! What the operator's command (`discord-journal check`, `status`) sees of
//! a journal's files: every line of a record file and every turn record,
//! judged as the readers judge it (`judge`), read through the readers' own
//! opens (a file that is not a regular file is refused by name, never
//! waited on or read without end). Where the readers stop at the first bad
//! line, this goes on and names each, with what kind of damage it is.

use std::fs::File;

use serde_json::{json, Value};

use crate::ground::error::{fs_code, quiet_fs, quiet_io, Result};
use crate::ground::files::{open_dir, open_dir_at, Link};
use crate::ground::journal::Journal;
use crate::ground::paths::turn_label;
use crate::ground::text::decode_utf8;
use crate::operator::judge::{each_line, is_null, judge_file, Damage};

/// One line the readers refuse.
#[derive(Clone, Debug, PartialEq)]
pub struct BadLine {
  /// 1-based, as the readers number lines (empty lines count).
  pub n: usize,
  /// The byte offset of its first byte, and its length (no newline).
  pub offset: u64,
  pub len: u64,
  pub damage: Damage,
  /// Its first bytes, for the operator to recognise it.
  pub head: Vec<u8>,
}

/// Bad lines named at most; the rest are counted.
pub const MAX_LISTED: usize = 1000;

/// One record file, every line judged.
#[derive(Debug, Default, PartialEq)]
pub struct LineScan {
  pub size: u64,
  /// Lines that are not empty.
  pub lines: usize,
  /// The bad lines, at most `MAX_LISTED`, in order.
  pub bad: Vec<BadLine>,
  pub bad_count: usize,
  /// Lines that are JSON `null` (a reader that reads a field of each line
  /// refuses them), at most `MAX_LISTED`.
  pub nulls: Vec<usize>,
  /// Whether the last line has no newline after it (an append would glue
  /// its record onto it).
  pub unterminated: bool,
}

/// Scans `dir/name`; `None` when the file does not exist. A file that
/// cannot be read is refused as the readers refuse it
/// (`could not read inbox.jsonl (EFTYPE)`).
pub fn scan_lines(j: &Journal, name: &str) -> Result<Option<LineScan>> {
  let path = j.file(name);
  let file = match crate::ground::files::open(&path, crate::ground::files::Access::Read, 0) {
    Ok(file) => file,
    Err(e) if crate::ground::files::missing(&e, &path) => return Ok(None),
    Err(e) => return Err(quiet_io(&e, name, "read")),
  };
  let mut scan = LineScan::default();
  scan.size = each_line(file, name, |l| {
    scan.unterminated |= !l.terminated;
    scan.lines += 1;
    match l.judge() {
      None => {
        if scan.nulls.len() < MAX_LISTED && is_null(l.body) {
          scan.nulls.push(l.n);
        }
      }
      Some(damage) => {
        scan.bad_count += 1;
        if scan.bad.len() < MAX_LISTED {
          scan.bad.push(BadLine {
            n: l.n,
            offset: l.offset,
            len: l.len,
            damage,
            head: l.head.to_vec(),
          });
        }
      }
    }
  })?;
  // The last line, without its newline: torn rather than corrupt.
  if scan.unterminated {
    if let Some(last) = scan
      .bad
      .last_mut()
      .filter(|b| b.offset + b.len == scan.size && b.damage == Damage::Invalid)
    {
      last.damage = Damage::Torn;
    }
  }
  Ok(Some(scan))
}

/// One turn record the readers refuse: what is wrong with it, or the
/// refusal of its read.
#[derive(Debug, PartialEq)]
pub struct BadTurn {
  /// The file name, as Node lists it.
  pub file: String,
  pub size: u64,
  /// `None` when it could not be read (see `refusal`).
  pub damage: Option<Damage>,
  pub refusal: Option<String>,
}

/// Every `*.json` record under `dir/turns`.
#[derive(Debug, Default, PartialEq)]
pub struct TurnScan {
  pub records: usize,
  pub bad: Vec<BadTurn>,
  pub bad_count: usize,
  /// Records that are JSON `null` (countTurnsOn refuses each), at most
  /// `MAX_LISTED`, by file name.
  pub nulls: Vec<String>,
}

/// Scans the turn records in the order the readers list them, each read
/// through the directory held open. No `turns/` is no record.
pub fn scan_turns(j: &Journal) -> Result<TurnScan> {
  let turns = j.turns();
  let refuse = |e: &std::io::Error| quiet_fs(fs_code(e).as_deref(), &j.named("the turns directory"), "read");
  // O_DIRECTORY: a FIFO put where turns/ belongs is ENOTDIR, never waited on.
  let held = match open_dir(&turns, Link::Follow) {
    Ok(held) => held,
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TurnScan::default()),
    Err(e) => return Err(refuse(&e)),
  };
  let names = record_names(&held).map_err(|e| refuse(&e))?;
  let mut scan = TurnScan::default();
  for name in names.into_iter().map(decode_utf8) {
    let Some(id) = name.strip_suffix(".json") else { continue };
    scan.records += 1;
    let judged = crate::ground::files::open_at(&held, &name, 0).and_then(judge_file);
    let (damage, refusal, size) = match judged {
      Ok(r) => {
        if r.null && scan.nulls.len() < MAX_LISTED {
          scan.nulls.push(name.clone());
        }
        (r.damage, None, r.size)
      }
      Err(e) => (None, Some(quiet_io(&e, &turn_label(id), "read").to_string()), 0),
    };
    if damage.is_none() && refusal.is_none() {
      continue;
    }
    scan.bad_count += 1;
    if scan.bad.len() < MAX_LISTED {
      scan.bad.push(BadTurn {
        file: name.clone(),
        size,
        damage,
        refusal,
      });
    }
  }
  Ok(scan)
}

/// The names of the `*.json` records in the turns directory held open, in
/// the order the readers list them (Node's readdirSync sorts by bytes).
pub fn record_names(turns: &File) -> std::io::Result<Vec<Vec<u8>>> {
  let listing = open_dir_at(turns, ".", Link::Follow).and_then(nix::dir::Dir::from_fd)?;
  let mut names = Vec::new();
  for entry in listing {
    let name = entry?.file_name().to_bytes().to_vec();
    if name.ends_with(b".json") {
      names.push(name);
    }
  }
  names.sort();
  Ok(names)
}

/// A bad line's or record's first bytes, as text.
fn head(bytes: &[u8]) -> String {
  String::from_utf8_lossy(bytes).into_owned()
}

impl LineScan {
  pub fn to_json(&self) -> Value {
    json!({
      "size": self.size,
      "lines": self.lines,
      "unterminated": self.unterminated,
      "bad": self.bad.iter().map(|b| json!({
        "line": b.n,
        "offset": b.offset,
        "length": b.len,
        "damage": b.damage.name(),
        "head": head(&b.head),
      })).collect::<Vec<_>>(),
      "badCount": self.bad_count,
      "nulls": self.nulls,
    })
  }
}

impl TurnScan {
  pub fn to_json(&self) -> Value {
    json!({
      "records": self.records,
      "bad": self.bad.iter().map(|b| json!({
        "file": b.file,
        "size": b.size,
        "damage": b.damage.map(Damage::name),
        "refusal": b.refusal,
      })).collect::<Vec<_>>(),
      "badCount": self.bad_count,
      "nulls": self.nulls,
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::error::JournalError;

  #[test]
  fn every_line_is_numbered_as_the_readers_number_it() {
    let d = crate::testutil::TempDir::new();
    std::fs::write(format!("{}/t.jsonl", d.path()), "{\"a\":1}\n\n{bad\nnull\n{\"a\":\n\0\0").expect("write");
    let scan = scan_lines(&d.journal(), "t.jsonl").expect("read").expect("exists");
    assert_eq!(scan.lines, 5);
    assert_eq!(scan.size, 27);
    assert!(scan.unterminated);
    assert_eq!(scan.nulls, vec![4]);
    let bad: Vec<_> = scan.bad.iter().map(|b| (b.n, b.offset, b.len, b.damage)).collect();
    assert_eq!(
      bad,
      vec![(3, 9, 4, Damage::Invalid), (5, 19, 5, Damage::Cut), (6, 25, 2, Damage::Zeros)]
    );
    assert_eq!(scan_lines(&d.journal(), "none.jsonl").expect("read"), None);
  }

  #[test]
  fn a_file_of_another_kind_is_refused_by_name() {
    let d = crate::testutil::TempDir::new();
    nix::unistd::mkfifo(
      format!("{}/t.jsonl", d.path()).as_str(),
      nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .expect("fifo");
    assert_eq!(
      scan_lines(&d.journal(), "t.jsonl"),
      Err(JournalError::failed("could not read t.jsonl (EFTYPE)"))
    );
  }

  #[test]
  fn turn_records_are_judged_whole() {
    let d = crate::testutil::TempDir::new();
    let turns = format!("{}/turns", d.path());
    std::fs::create_dir(&turns).expect("mkdir");
    std::fs::write(format!("{turns}/a.json"), "{\n  \"id\": \"a\"\n}\n").expect("write");
    std::fs::write(format!("{turns}/b.json"), "").expect("write");
    std::fs::write(format!("{turns}/c.json"), "{\n  \"id\": \"c\",\n  \"st").expect("write");
    std::fs::write(format!("{turns}/d.txt"), "").expect("write");
    std::fs::write(format!("{turns}/e.json"), "\u{feff} null \n").expect("write");
    let scan = scan_turns(&d.journal()).expect("scan");
    assert_eq!(scan.records, 4);
    let bad: Vec<_> = scan.bad.iter().map(|b| (b.file.as_str(), b.damage)).collect();
    assert_eq!(bad, vec![("b.json", Some(Damage::Cut)), ("c.json", Some(Damage::Cut))]);
    // Whole JSON, so not bad; countTurnsOn refuses it, so named.
    assert_eq!(scan.nulls, vec!["e.json".to_string()]);
  }
}
