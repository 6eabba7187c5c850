//! `discord-journal repair`: the way out of a crash that the readers
//! refuse, without a person editing JSONL by hand. The policy of careful
//! append-only logs:
//!
//! - a line cut short (`judge::Damage::Cut`, wherever it stands: an
//!   append after it writes on a line of its own, see `lines::append`), a
//!   run of zero bytes, and a last line without its newline that does not
//!   parse are interrupted appends: each is set aside, its bytes kept;
//! - a line of whitespace alone (`Blank`) holds no record: it is set aside
//!   as they are, its bytes kept;
//! - a record file with another name (a hard link, only a hand makes one)
//!   is written anew as a file of its own, every line kept, and the other
//!   name keeps the old file: each binding then reads and appends to its
//!   own, and no record of either is lost (the binding is held meanwhile,
//!   so no append of its own can go to the old file);
//! - an empty or cut turn record is a write that never finished: it is set
//!   aside whole, as is one of whitespace alone;
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

use serde_json::{json, Value};

use crate::ground::error::{quiet_io, Result};
use crate::ground::files::{open_dir, open_dir_at, Link};
use crate::ground::journal::Journal;
use crate::ground::stamp::Stamp;
use crate::operator::judge::Damage;

mod apply;
mod pause;
mod plan;
mod run;

pub use apply::{apply, clean, Done};
pub use plan::plan;
pub use run::{run, Outcome};

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
  /// The file has another name (a hard link): it is written anew, as a
  /// file of this name's own.
  pub shared: bool,
  /// The inode and size when planned: a file that changed since is
  /// not mended from this plan.
  pub stamp: (Stamp, u64),
}

impl FilePlan {
  pub fn aside_bytes(&self) -> u64 {
    self.aside.iter().map(|a| a.end - a.start).sum()
  }
  fn changes(&self) -> bool {
    !self.aside.is_empty() || self.terminate || self.shared
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
  /// Lines and turn records that are JSON `null`: whole JSON, so a repair
  /// leaves them, though a reader that reads a field of each refuses them.
  pub nulls: Vec<Null>,
}

/// A line (or turn record, line 1) that is JSON `null`.
#[derive(Clone, Debug, PartialEq)]
pub struct Null {
  pub file: String,
  pub line: usize,
}

impl Plan {
  pub fn changes(&self) -> bool {
    self.files.iter().any(FilePlan::changes) || !self.turns.is_empty()
  }
}

/// The journal directory, held open: every step of a repair is taken
/// relative to it, so a directory swapped for another at its path meanwhile
/// is not the one written into.
pub struct Opened {
  fd: File,
}

impl Opened {
  /// The journal to plan or repair.
  pub fn open(j: &Journal) -> Result<Opened> {
    Ok(Opened { fd: open_journal(j)? })
  }

  /// A descriptor of its own for a listing, so that no read position is
  /// shared with another (a listing through a dup sees what the last one
  /// left).
  fn listing(&self, name: &str) -> std::io::Result<nix::dir::Dir> {
    open_dir_at(&self.fd, name, Link::Follow)
      .and_then(nix::dir::Dir::from_fd)
      .map_err(Into::into)
  }
}

fn open_journal(j: &Journal) -> Result<File> {
  open_dir(j.dir(), Link::Follow).map_err(|e| quiet_io(&e, "the journal directory", "read"))
}

/// What a file is and how long: its inode, its size.
fn stamp_of(f: &File) -> std::io::Result<(Stamp, u64)> {
  let st = nix::sys::stat::fstat(f)?;
  Ok((Stamp::of(&st), st.st_size as u64))
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
        "shared": f.shared,
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
      "nulls": self.nulls.iter().map(|n| json!({ "file": n.file, "line": n.line })).collect::<Vec<_>>(),
    })
  }
}

#[cfg(test)]
mod tests {
  use super::apply::quarantine;
  use super::*;
  use crate::ground::journal::Journal;
  use crate::testutil::TempDir;

  fn planned(d: &TempDir) -> Plan {
    plan(&Opened::open(&d.journal()).expect("open")).expect("plan")
  }

  fn repaired(d: &TempDir) -> Vec<Done> {
    let j = Opened::open(&d.journal()).expect("open");
    let p = plan(&j).expect("plan");
    apply(&j, &p, "T", &mut |_| {}).expect("apply")
  }

  /// A journal holding `name` with `text`, and that file's path.
  fn journal_with(name: &str, text: impl AsRef<[u8]>) -> (TempDir, String) {
    let d = TempDir::new();
    let path = format!("{}/{name}", d.path());
    std::fs::write(&path, text).expect("write");
    (d, path)
  }

  /// The text set aside by the first file `done` names.
  fn quarantined(d: &TempDir, done: &[Done]) -> String {
    let q = done[0].quarantine.clone().expect("quarantine");
    String::from_utf8_lossy(&std::fs::read(format!("{}/{q}", d.path())).expect("q")).into_owned()
  }

  /// How many entries of the journal directory have a name containing `part`.
  fn entries_with(d: &TempDir, part: &str) -> usize {
    let names = std::fs::read_dir(d.path()).expect("list");
    names
      .filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().contains(part)))
      .count()
  }

  const A: &str = "{\"id\":\"a\"}\n";
  const B: &str = "{\"id\":\"b\"}\n";

  #[test]
  fn a_cut_tail_is_truncated_and_kept_aside() {
    let (d, path) = journal_with("inbox.jsonl", format!("{A}{B}{{\"id\":\"c\",\"at\":\"20"));
    let p = planned(&d);
    assert!(p.files[0].truncate);
    assert_eq!(p.files[0].kept, 2);
    let done = repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}"));
    assert_eq!(quarantined(&d, &done), "{\"id\":\"c\",\"at\":\"20");
    assert!(!planned(&d).changes(), "a second repair finds nothing");
  }

  #[test]
  fn a_cut_line_inside_and_zeros_are_set_aside_by_a_rewrite() {
    let mut bytes = format!("{A}{{\"id\":\"x\n").into_bytes();
    bytes.extend_from_slice(&[0u8; 9]);
    bytes.extend_from_slice(format!("\n{B}{}", A.trim_end()).as_bytes());
    bytes.extend_from_slice(&[0u8; 3]);
    let (d, path) = journal_with("outbox.jsonl", &bytes);
    let p = planned(&d);
    assert!(!p.files[0].truncate);
    assert_eq!(p.files[0].kept, 3);
    repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}{A}"));
  }

  #[test]
  fn lines_of_whitespace_alone_are_set_aside_and_every_record_kept() {
    let (d, path) = journal_with("inbox.jsonl", format!("{A}   \n{B}\r\n \t"));
    let p = planned(&d);
    let aside: Vec<_> = p.files[0].aside.iter().map(|a| (a.line, a.damage)).collect();
    assert_eq!(aside, vec![(2, Damage::Blank), (4, Damage::Blank), (5, Damage::Blank)]);
    assert!(p.corrupt.is_empty() && !p.files[0].truncate);
    let done = repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}"));
    assert_eq!(quarantined(&d, &done), "   \n\r\n \t");
    assert!(!planned(&d).changes(), "a second repair finds nothing");
  }

  /// An appender that knows where its last append left the file (#47),
  /// opening it while a rewrite holds it and waiting for its flock, finds
  /// the file it opened renamed over, and lands in the new one. Fails
  /// without the newline the rewrite leaves behind in the old file: the
  /// appender's read at its end then finds the old file as it left it, and
  /// its record goes into a file no name links.
  #[test]
  fn an_appender_waiting_for_a_file_renamed_over_lands_in_the_new_one() {
    let kept = waiting_appender(|_| {});
    assert_eq!(kept, format!("{A}{B}{{\"id\":\"w1\"}}\n{{\"id\":\"w2\"}}\n"));
  }

  /// The same where the end the appender remembers is one byte past the
  /// file the repair checks (the file was made shorter since, as an
  /// earlier repair makes it): a newline left behind would end the old
  /// file exactly there, and the appender's read would pass.
  #[test]
  fn an_appender_whose_end_is_one_past_the_file_renamed_over_lands_in_the_new_one() {
    let kept = waiting_appender(|path| {
      let end = std::fs::metadata(path).expect("stat").len() as usize;
      let head = format!("{A}{{\"id\":\"cu\n");
      let fill = "p".repeat(end - 1 - head.len() - "{\"id\":\"\"}\n".len());
      std::fs::write(path, format!("{head}{{\"id\":\"{fill}\"}}\n")).expect("shorter");
      assert_eq!(std::fs::metadata(path).expect("stat").len() as usize, end - 1);
    });
    assert!(kept.ends_with("{\"id\":\"w2\"}\n"), "{kept}");
  }

  /// A thread appends once, `between` changes the file, then a rewrite
  /// holds it while the thread appends again: the file's text after.
  /// Fails without the link count the append asks with its read at the end
  /// it remembers (#55): that read finds a whole last line in the old file,
  /// and the record would go into a file no name links.
  fn waiting_appender(between: impl FnOnce(&str)) -> String {
    use std::sync::mpsc::channel;
    let (d, path) = journal_with("inbox.jsonl", format!("{A}{{\"id\":\"cu\n{B}"));
    let (go, wait) = channel::<()>();
    let (appended, first) = channel::<()>();
    let dir = d.path().to_string();
    let appender = std::thread::spawn(move || {
      crate::lines::append(&Journal::new(&dir), "inbox.jsonl", "{\"id\":\"w1\"}")?;
      let _ = appended.send(());
      let _ = wait.recv();
      crate::lines::append(&Journal::new(&dir), "inbox.jsonl", "{\"id\":\"w2\"}")
    });
    first.recv().expect("first append");
    between(&path);
    let j = Opened::open(&d.journal()).expect("open");
    let p = plan(&j).expect("plan");
    assert!(!p.files[0].truncate, "a rewrite");
    apply(&j, &p, "T", &mut |step| {
      if step == "written inbox.jsonl" {
        go.send(()).expect("go");
        // The appender opens the file and waits for its flock.
        std::thread::sleep(std::time::Duration::from_millis(300));
      }
    })
    .expect("apply");
    appender.join().expect("appender").expect("second append");
    std::fs::read_to_string(&path).expect("read")
  }

  #[test]
  fn a_file_with_another_name_is_written_anew_and_the_other_name_keeps_the_old() {
    use std::os::unix::fs::MetadataExt;
    let (d, path) = journal_with("inbox.jsonl", format!("{A}{B}"));
    let other = TempDir::new();
    let theirs = format!("{}/inbox.jsonl", other.path());
    std::fs::hard_link(&path, &theirs).expect("link");
    let p = planned(&d);
    assert!(p.files[0].shared && p.changes() && !p.files[0].truncate);
    let done = repaired(&d);
    assert_eq!(done[0].quarantine, None, "nothing set aside");
    for name in [&path, &theirs] {
      assert_eq!(std::fs::read_to_string(name).expect("read"), format!("{A}{B}"));
      assert_eq!(std::fs::metadata(name).expect("stat").nlink(), 1);
    }
    crate::lines::append(&d.journal(), "inbox.jsonl", "{\"id\":\"c\"}").expect("append");
    assert_eq!(
      std::fs::read_to_string(&theirs).expect("read"),
      format!("{A}{B}"),
      "their file is their own"
    );
    assert!(!planned(&d).changes());
  }

  #[test]
  fn lines_and_turn_records_of_json_null_are_named_and_left() {
    let (d, _) = journal_with("inbox.jsonl", format!("{A}null\n{B}"));
    std::fs::create_dir(format!("{}/turns", d.path())).expect("mkdir");
    std::fs::write(format!("{}/turns/t1.json", d.path()), "null\n").expect("write");
    let p = planned(&d);
    let nulls: Vec<_> = p.nulls.iter().map(|n| (n.file.as_str(), n.line)).collect();
    assert_eq!(nulls, vec![("inbox.jsonl", 2), ("turns/t1.json", 1)]);
    assert!(!p.changes(), "a repair never changes whole JSON");
  }

  #[test]
  fn corruption_is_reported_and_a_whole_last_line_gets_its_newline() {
    let (d, _) = journal_with("drops.jsonl", format!("{A}{{bad\n{B}"));
    let p = planned(&d);
    assert_eq!(p.corrupt.len(), 1);
    assert_eq!((p.corrupt[0].line, p.corrupt[0].offset), (2, 11));
    let (d, path) = journal_with("drops.jsonl", format!("{A}{}", B.trim_end()));
    repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}"));
  }

  #[test]
  fn empty_cut_and_blank_turn_records_are_set_aside_whole() {
    let d = TempDir::new();
    std::fs::create_dir(format!("{}/turns", d.path())).expect("mkdir");
    std::fs::write(format!("{}/turns/a.json", d.path()), "").expect("write");
    std::fs::write(format!("{}/turns/b.json", d.path()), "{\n  \"id\": \"b\"\n}\n").expect("write");
    std::fs::write(format!("{}/turns/c.json", d.path()), "{\n  \"id\": ").expect("write");
    std::fs::write(format!("{}/turns/d.json", d.path()), " \r\n").expect("write");
    let done = repaired(&d);
    let names: Vec<_> = done.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(names, ["turns/a.json", "turns/c.json", "turns/d.json"]);
    assert!(std::fs::metadata(format!("{}/turns-c.json.aside-T", d.path())).is_ok());
    assert!(std::fs::metadata(format!("{}/turns/b.json", d.path())).is_ok());
  }

  #[test]
  fn a_truncated_tail_is_set_aside_whole_empty_lines_and_all() {
    let (d, path) = journal_with("inbox.jsonl", format!("{A}{{\"id\":\"c1\n\n\n{{\"id\":\"c2"));
    let done = repaired(&d);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), A);
    assert_eq!(quarantined(&d, &done), "{\"id\":\"c1\n\n\n{\"id\":\"c2");
  }

  /// A journal whose turns/t1.json is a whole record followed by 8 zeros,
  /// and that record's text.
  fn zero_tailed_turn() -> (TempDir, &'static str) {
    let d = TempDir::new();
    std::fs::create_dir(format!("{}/turns", d.path())).expect("mkdir");
    let text = "{\n  \"startedAt\": \"2026-12-01T00:00:00.000Z\"\n}\n";
    let mut bytes = text.as_bytes().to_vec();
    bytes.extend_from_slice(&[0; 8]);
    std::fs::write(format!("{}/turns/t1.json", d.path()), &bytes).expect("write");
    (d, text)
  }

  #[test]
  fn a_turn_record_followed_by_zeros_keeps_its_text() {
    let (d, text) = zero_tailed_turn();
    let done = repaired(&d);
    assert_eq!(std::fs::read_to_string(format!("{}/turns/t1.json", d.path())).expect("read"), text);
    assert_eq!(quarantined(&d, &done), "\0".repeat(8));
  }

  /// Killed after the zeros were set aside and before the record was
  /// written anew: the next repair keeps that quarantine, makes no second.
  #[test]
  fn a_turn_record_whose_zeros_were_set_aside_already_gets_no_second_copy() {
    let (d, text) = zero_tailed_turn();
    std::fs::write(format!("{}/turns-t1.json.aside-EARLIER", d.path()), [0u8; 8]).expect("quarantine");
    let done = repaired(&d);
    assert_eq!(std::fs::read_to_string(format!("{}/turns/t1.json", d.path())).expect("read"), text);
    assert_eq!(done[0].quarantine.as_deref(), Some("turns-t1.json.aside-EARLIER"));
    assert_eq!(entries_with(&d, "turns-t1.json.aside-"), 1);
  }

  #[test]
  fn a_repair_stopped_after_its_quarantine_is_not_set_aside_twice() {
    let (d, path) = journal_with("inbox.jsonl", format!("{A}{{\"id\":\"cut\n{B}"));
    let j = Opened::open(&d.journal()).expect("open");
    let p = plan(&j).expect("plan");
    // The first repair stops once its quarantine is made (a kill there).
    let source = crate::ground::files::open_at(&j.fd, "inbox.jsonl", 0).expect("open");
    let first = quarantine(&j, &p.files[0], &source, "T1").expect("quarantine");
    assert!(first.1);
    clean(&j).expect("clean");
    let done = apply(&j, &plan(&j).expect("plan"), "T2", &mut |_| {}).expect("apply");
    assert_eq!(done[0].quarantine.as_deref(), Some(first.0.as_str()));
    assert_eq!(entries_with(&d, ".aside-"), 1);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), format!("{A}{B}"));
  }
}
