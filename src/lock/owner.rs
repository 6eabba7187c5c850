//! The owner record, `run.lock/owner.json` `{pid, start, boot, at}`, as
//! `readPid` reads it: a pid that is a positive integer, and a start and
//! boot kept only where they are of the identity syntax. A record that
//! cannot be read or has no usable pid is `Invalid`, which fails closed.
//! Also what a judgement of a lock rests on (`Record`, `Judged`).
//!
//! The ownership ladder: the reference's `ownerState`, asked of a parsed
//! record or (through `OwnerView`) of a JavaScript one, and the refusal an
//! existing lock gives a new claim. Only a verified live owner is ever
//! signaled; an owner whose identity cannot be proven refuses everything.

use crate::ground::error::{JournalError, Result};
use crate::ground::journal::Journal;
use crate::ground::json::{Doc, Scalar};
use crate::ground::stamp::Stamp;
use crate::ground::text::{decode_utf8, js_number};
use crate::identity::{valid_boot, valid_start};

/// The owner record a judgement rests on (the removal compares with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
  /// No owner.json (`existsSync` false).
  Absent,
  /// The file the record was read from.
  File(Stamp),
  /// A record that could not be opened or read: it never allows a removal.
  Unread,
}

/// One lock as it was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Judged {
  /// `run.lock` itself when it was judged; `None` when nothing was there.
  pub lock: Option<Stamp>,
  pub record: Record,
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

impl Owner {
  /// Whether this record is `pid`'s (`rec.pid === pid`, the test of
  /// `clearPid` and of a claim releasing itself); `pid` is `None` when the
  /// caller's pid is not a number.
  pub(super) fn names(&self, pid: Option<f64>) -> bool {
    matches!((self, pid), (Owner::Valid { pid: owner, .. }, Some(pid)) if *owner == pid)
  }
}

/// `readPid`: `None` when there is no record file (the STOP-gated
/// publication interval).
pub fn read_pid(j: &Journal) -> Option<Owner> {
  read_owner(j).0
}

/// `readPid`, with the file the record was read from. The record is read by
/// path, as the reference reads it (one descriptor), and a removal proves
/// afterwards, by `fstatat` on the directory it holds, that this file is the
/// one in it (#10).
pub(super) fn read_owner(j: &Journal) -> (Option<Owner>, Record) {
  let path = j.owner();
  // files::open refuses a record that is not a regular file (a FIFO would
  // block): it exists, so it is an unreadable record (#10). Its fstat is
  // also the record's stamp: device and inode cannot change while the
  // descriptor is open, so the file stamped is the file read.
  let (file, st) = match crate::ground::files::open_stat(&path, crate::ground::files::Access::Read, 0) {
    Ok(opened) => opened,
    Err(e) if crate::ground::files::missing(&e, &path) => return (None, Record::Absent),
    Err(_) => return (Some(Owner::Invalid), Record::Unread),
  };
  match crate::ground::files::to_end(&file) {
    Ok(bytes) => (Some(parse_owner(&decode_utf8(bytes))), Record::File(Stamp::of(&st))),
    Err(_) => (Some(Owner::Invalid), Record::Unread),
  }
}

pub(super) fn parse_owner(text: &str) -> Owner {
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

/// The record's pid as a refusal prints it (the reference's `${rec.pid}`).
pub(super) fn pid_text(rec: &Option<Owner>) -> String {
  match rec {
    Some(Owner::Valid { pid, .. }) => js_number(*pid),
    _ => "undefined".into(),
  }
}

/// How a refusal of a lock whose owner is gone says what to do.
pub const UNLOCK_HINT: &str = "if no connector is running for this binding, run `scripts/discord.sh unlock <binding>`";

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
  pub fn is(&self, want: &str) -> bool {
    matches!(self, Field::Str(u) if u.iter().copied().eq(want.encode_utf16()))
  }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
  pub start: Field,
  pub boot: Field,
}

impl Identity {
  /// The reference's default `identityOf(pid)`, read from /proc now: the
  /// one builder that `System` and the boundary's seams (where no
  /// `identity` seam is given) share. The pid is written as `String(pid)`
  /// writes it, as the reference's `/proc/${pid}/stat` does.
  pub fn of(pid: f64) -> Identity {
    let field = |s: Option<String>| s.map_or(Field::Null, |s| Field::Str(s.encode_utf16().collect()));
    Identity {
      start: field(crate::identity::process_start(&js_number(pid))),
      boot: field(crate::identity::boot_id()),
    }
  }
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
  /// Whether the record's owner, gone or another process here, is alive in
  /// a PID namespace below this one: a process there has the record's pid
  /// and, under this boot, its start time as its own time namespace reads
  /// it, or one whose namespace's offset cannot be read
  /// (identity::elsewhere).
  fn elsewhere(&mut self) -> Result<bool, Self::Error>;
  /// Whether the record's pid here, in another time namespace, is its
  /// owner by the start time that namespace reads (identity::same_in_its_clock).
  fn same_in_its_clock(&mut self) -> Result<bool, Self::Error>;
}

pub fn owner_state<V: OwnerView>(v: &mut V) -> Result<OwnerState, V::Error> {
  Ok(if v.is_null()? {
    OwnerState::Absent
  } else if v.invalid()? {
    OwnerState::Invalid
  } else if !v.alive()? {
    // Beyond the reference, which calls such an owner gone: a connector in
    // a container, seen from the host, is unknown here, so that nothing
    // clears its lock or signals the pid it recorded (docs/lock.md).
    if v.elsewhere()? {
      OwnerState::Unknown
    } else {
      OwnerState::Dead
    }
  } else if v.lacks_identity()? {
    OwnerState::Unknown
  } else {
    match v.identity_matches()? {
      None => OwnerState::Unknown,
      Some(true) => OwnerState::Live,
      // Beyond the reference, which calls it another process: a connector
      // in a time namespace of its own recorded its own reading (#55).
      Some(false) if v.same_in_its_clock()? => OwnerState::Live,
      Some(false) if v.elsewhere()? => OwnerState::Unknown,
      Some(false) => OwnerState::Mismatch,
    }
  })
}

/// The test seams of the lock operations: `identity` and `beforeRemove`.
pub trait Seams {
  type Error: From<JournalError>;
  fn identity(&mut self, pid: f64) -> Result<Identity, Self::Error>;
  fn before_remove(&mut self) -> Result<(), Self::Error>;
  /// `pidAlive(pid)`: the kernel's answer, or (in JavaScript) the
  /// `process.kill` of the moment's.
  fn alive(&mut self, pid: f64) -> Result<bool, Self::Error> {
    Ok(crate::identity::pid_alive(pid))
  }
  /// For `now = identity(pid)`: `now.start === null || now.boot === null`
  /// (then `None`), else `now.start === start && now.boot === boot`. A seam
  /// whose answer has getters reads each field as the reference does:
  /// `start` twice, and `boot` twice where `start` matches.
  fn identity_matches(&mut self, pid: f64, start: &str, boot: &str) -> Result<Option<bool>, Self::Error> {
    let now = self.identity(pid)?;
    if now.start == Field::Null || now.boot == Field::Null {
      return Ok(None);
    }
    Ok(Some(now.start.is(start) && now.boot.is(boot)))
  }
  /// Whether a record's owner is alive in a PID namespace below this one
  /// (`identity::owner_elsewhere`): a scan of /proc.
  fn elsewhere(&mut self, pid: f64, start: &str, boot: &str) -> Result<bool, Self::Error> {
    Ok(crate::identity::owner_elsewhere(pid, start, boot).is_some())
  }
}

/// `identity::same_in_its_clock` of a record that has all three fields.
fn same_in_its_clock(rec: Option<&Owner>) -> bool {
  identified(rec)
    .is_some_and(|(pid, start, boot)| crate::identity::in_other_time_ns(pid) && crate::identity::same_in_its_clock(pid, start, boot))
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
    match self.rec {
      Some(Owner::Valid { pid, .. }) => self.seams.alive(*pid),
      _ => Ok(false),
    }
  }
  fn lacks_identity(&mut self) -> Result<bool, S::Error> {
    Ok(identified(self.rec).is_none())
  }
  fn identity_matches(&mut self) -> Result<Option<bool>, S::Error> {
    let Some((pid, start, boot)) = identified(self.rec) else {
      return Ok(None);
    };
    self.seams.identity_matches(pid, start, boot)
  }
  fn elsewhere(&mut self) -> Result<bool, S::Error> {
    let Some((pid, start, boot)) = identified(self.rec) else {
      return Ok(false);
    };
    self.seams.elsewhere(pid, start, boot)
  }
  fn same_in_its_clock(&mut self) -> Result<bool, S::Error> {
    Ok(same_in_its_clock(self.rec))
  }
}

/// A record's pid, start and boot, where it has all three.
pub(super) fn identified(rec: Option<&Owner>) -> Option<(f64, &str, &str)> {
  match rec {
    Some(Owner::Valid {
      pid,
      start: Some(start),
      boot: Some(boot),
    }) => Some((*pid, start, boot)),
    _ => None,
  }
}

pub fn state_of<S: Seams>(rec: Option<&Owner>, seams: &mut S) -> Result<OwnerState, S::Error> {
  owner_state(&mut Parsed { rec, seams })
}

/// Why an existing lock refuses a new claim. Always a brake.
pub fn refusal<S: Seams>(j: &Journal, seams: &mut S) -> Result<JournalError, S::Error> {
  let existing = read_pid(j);
  let pid = pid_text(&existing);
  Ok(JournalError::brake(match state_of(existing.as_ref(), seams)? {
    OwnerState::Absent => format!("run.lock exists without an owner record: a start is in progress or was interrupted; {UNLOCK_HINT}"),
    OwnerState::Invalid => format!(
      "run.lock has an owner record that cannot be read; refusing. Inspect run.lock/owner.json in {} by hand",
      j.label()
    ),
    OwnerState::Live => format!("another connector is running for this binding (pid {pid})"),
    OwnerState::Unknown => format!("run.lock belongs to pid {pid}, which is alive but whose identity cannot be verified; refusing"),
    OwnerState::Dead | OwnerState::Mismatch => {
      format!("run.lock belongs to pid {pid}, which is gone or is a different process now; {UNLOCK_HINT}")
    }
  }))
}

#[cfg(test)]
mod tests {
  use super::*;

  /// A valid record of `pid` with no identity.
  fn bare(pid: f64) -> Owner {
    Owner::Valid {
      pid,
      start: None,
      boot: None,
    }
  }

  #[test]
  fn owner_records_parse_as_read_pid_reads_them() {
    assert_eq!(parse_owner("[]"), Owner::Invalid);
    assert_eq!(parse_owner(r#"{"pid":1.5}"#), Owner::Invalid);
    assert_eq!(parse_owner(r#"{"pid":"1"}"#), Owner::Invalid);
    assert_eq!(parse_owner(r#"{"pid":7,"start":"01","boot":"X"}"#), bare(7.0));
    assert_eq!(parse_owner(r#"{"pid":1,"pid":2}"#), bare(2.0));
  }

  const BOOT: &str = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";

  #[test]
  fn a_start_and_boot_of_the_identity_syntax_are_kept() {
    let text = format!(r#"{{"pid":42,"start":"123","boot":"{BOOT}","at":"2021-01-01T00:00:00.000Z"}}"#);
    assert_eq!(
      parse_owner(&text),
      Owner::Valid {
        pid: 42.0,
        start: Some("123".into()),
        boot: Some(BOOT.into())
      }
    );
    // A number where a string is wanted is no identity, not an invalid record.
    assert_eq!(parse_owner(r#"{"pid":42,"start":123}"#), bare(42.0));
    for bad in ["", "{", "null", r#"{"pid":0}"#, r#"{"pid":-3}"#, r#"{"pid":null}"#, r#"{}"#] {
      assert_eq!(parse_owner(bad), Owner::Invalid, "{bad}");
    }
  }

  #[test]
  fn a_record_names_only_its_own_numeric_pid() {
    let rec = parse_owner(r#"{"pid":7}"#);
    assert!(rec.names(Some(7.0)));
    assert!(!rec.names(Some(8.0)));
    assert!(!rec.names(None));
    assert!(!Owner::Invalid.names(Some(7.0)));
  }

  #[test]
  fn the_pid_prints_as_javascript_prints_it() {
    assert_eq!(pid_text(&Some(parse_owner(r#"{"pid":1e21}"#))), "1e+21");
    assert_eq!(pid_text(&Some(parse_owner(r#"{"pid":12}"#))), "12");
    assert_eq!(pid_text(&Some(Owner::Invalid)), "undefined");
    assert_eq!(pid_text(&None), "undefined");
  }
}

#[cfg(test)]
mod ladder_tests {
  use super::*;

  #[test]
  fn identity_of_reads_proc_with_the_pid_as_javascript_writes_it() {
    let me = Identity::of(f64::from(std::process::id()));
    assert!(matches!((&me.start, &me.boot), (Field::Str(_), Field::Str(_))));
    // String(1e21) is "1e+21": no such process, whatever Rust would print.
    assert_eq!(Identity::of(1e21).start, Field::Null);
  }

  /// An OwnerView answering fixed answers, recording the questions asked.
  struct Script {
    answers: [bool; 4],
    identity: Option<bool>,
    asked: Vec<&'static str>,
  }

  impl Script {
    fn ask(&mut self, question: &'static str, i: usize) -> bool {
      self.asked.push(question);
      self.answers[i]
    }
  }

  impl OwnerView for Script {
    type Error = JournalError;
    fn is_null(&mut self) -> Result<bool> {
      Ok(self.ask("null", 0))
    }
    fn invalid(&mut self) -> Result<bool> {
      Ok(self.ask("invalid", 1))
    }
    fn alive(&mut self) -> Result<bool> {
      Ok(self.ask("alive", 2))
    }
    fn lacks_identity(&mut self) -> Result<bool> {
      Ok(self.ask("lacks", 3))
    }
    fn identity_matches(&mut self) -> Result<Option<bool>> {
      self.asked.push("identity");
      Ok(self.identity)
    }
    fn elsewhere(&mut self) -> Result<bool> {
      self.asked.push("elsewhere");
      Ok(false)
    }
    fn same_in_its_clock(&mut self) -> Result<bool> {
      Ok(false)
    }
  }

  fn run(answers: [bool; 4], identity: Option<bool>) -> (OwnerState, Vec<&'static str>) {
    let mut v = Script {
      answers,
      identity,
      asked: Vec::new(),
    };
    let state = owner_state(&mut v).expect("state");
    (state, v.asked)
  }

  /// Each step is asked only when the ones before it passed, in the
  /// reference's order: a JavaScript record's getters run in that order.
  #[test]
  fn the_ladder_asks_in_order_and_stops_at_the_first_answer() {
    use OwnerState::*;
    assert_eq!(run([true, true, true, true], None), (Absent, vec!["null"]));
    assert_eq!(run([false, true, true, true], None), (Invalid, vec!["null", "invalid"]));
    assert_eq!(
      run([false, false, false, true], None),
      (Dead, vec!["null", "invalid", "alive", "elsewhere"])
    );
    assert_eq!(
      run([false, false, true, true], Some(true)),
      (Unknown, vec!["null", "invalid", "alive", "lacks"])
    );
    let all = vec!["null", "invalid", "alive", "lacks", "identity"];
    assert_eq!(run([false, false, true, false], None), (Unknown, all.clone()));
    let mut mismatch = all.clone();
    mismatch.push("elsewhere");
    assert_eq!(run([false, false, true, false], Some(false)), (Mismatch, mismatch));
    assert_eq!(run([false, false, true, false], Some(true)), (Live, all));
  }

  #[test]
  fn a_field_equals_only_the_same_string() {
    assert!(Field::Str("12".encode_utf16().collect()).is("12"));
    assert!(!Field::Str("12".encode_utf16().collect()).is("120"));
    assert!(!Field::Null.is("null"));
    assert!(!Field::Other.is(""));
  }
}
