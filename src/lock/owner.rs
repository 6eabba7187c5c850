//! The owner record, `run.lock/owner.json` `{pid, start, boot, at}`, as
//! `readPid` reads it: a pid that is a positive integer, and a start and
//! boot kept only where they are of the identity syntax. A record that
//! cannot be read or has no usable pid is `Invalid`, which fails closed.
//! Also what a judgement of a lock rests on (`Record`, `Judged`).

use crate::ground::journal::Journal;
use crate::ground::json::{Doc, Scalar};
use crate::ground::text::decode_utf8;
use crate::ground::text::js_number;
use crate::identity::{valid_boot, valid_start};

use crate::ground::stamp::Stamp;

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
