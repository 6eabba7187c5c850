//! Append-only line files (`*.jsonl`): one JSON text per line, appended
//! with one write each, read back whole. A line that does not parse refuses
//! the whole read, naming the file and line number but never the path.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use crate::error::{quiet_io, JournalError, Result};
use crate::paths;

/// The journal's line files, by name.
pub const INBOX: &str = "inbox.jsonl";
pub const OUTBOX: &str = "outbox.jsonl";
pub const DROPS: &str = "drops.jsonl";
pub const ADMISSIONS: &str = "admissions.jsonl";
pub const NOTICES: &str = "notices.jsonl";
pub const RELOADS: &str = "reloads.jsonl";

/// `existsSync(path)`: access(F_OK); any failure reads as absent.
pub fn exists(path: &str) -> bool {
  nix::unistd::access(path, nix::unistd::AccessFlags::F_OK).is_ok()
}

/// Appends `line` and a newline to `dir/name`, creating it 0600 (under the
/// umask). One write(2) of the whole line, so concurrent appenders under
/// O_APPEND never interleave within a line.
pub fn append(dir: &str, name: &str, line: &str) -> Result<()> {
  if line.contains('\n') {
    return Err(JournalError::failed("journal line must not contain a newline"));
  }
  let path = paths::under(dir, &[name]);
  let mut buf = Vec::with_capacity(line.len() + 1);
  buf.extend_from_slice(line.as_bytes());
  buf.push(b'\n');
  OpenOptions::new()
    .append(true)
    .create(true)
    .mode(0o600)
    .open(&path)
    .and_then(|mut f| f.write_all(&buf))
    .map_err(|e| quiet_io(&e, name, "append to"))
}

/// Node's `buffer.toString("utf8")`: each maximal invalid subpart becomes
/// one U+FFFD (WHATWG), which is also what Rust's lossy decoding does.
pub fn decode_utf8(bytes: Vec<u8>) -> String {
  match String::from_utf8(bytes) {
    Ok(s) => s,
    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn tmp() -> (crate::testutil::TempDir, String) {
    let d = crate::testutil::TempDir::new();
    let p = d.path().to_string();
    (d, p)
  }

  #[test]
  fn append_then_read() {
    let (_d, dir) = tmp();
    append(&dir, INBOX, r#"{"id":"1"}"#).expect("append");
    append(&dir, INBOX, "\u{feff}2").expect("append");
    let n = with_lines(&dir, INBOX, |docs| Ok(docs.len())).expect("read");
    assert_eq!(n, 2);
    let bytes = std::fs::read(format!("{dir}/{INBOX}")).expect("file");
    assert_eq!(bytes, "{\"id\":\"1\"}\n\u{feff}2\n".as_bytes());
  }

  #[test]
  fn first_bad_line_is_named() {
    let (_d, dir) = tmp();
    std::fs::write(format!("{dir}/{DROPS}"), "1\n\n{bad\n[\n").expect("write");
    let err = with_lines(&dir, DROPS, |_| Ok(())).expect_err("refused");
    assert_eq!(err, JournalError::failed("drops.jsonl:3: not valid JSON"));
  }

  #[test]
  fn missing_is_empty_and_directory_refuses() {
    let (_d, dir) = tmp();
    assert_eq!(with_lines(&dir, OUTBOX, |d| Ok(d.len())).expect("empty"), 0);
    std::fs::create_dir(format!("{dir}/{OUTBOX}")).expect("mkdir");
    assert_eq!(
      with_lines(&dir, OUTBOX, |d| Ok(d.len())),
      Err(JournalError::failed("could not read outbox.jsonl (EISDIR)"))
    );
    assert_eq!(
      append(&dir, OUTBOX, "1"),
      Err(JournalError::failed("could not append to outbox.jsonl (EISDIR)"))
    );
  }

  #[test]
  fn lossy_decoding_and_newline_refusal() {
    assert_eq!(
      decode_utf8(vec![b'a', 0xff, 0xed, 0xa0, 0x80, b'b']),
      "a\u{fffd}\u{fffd}\u{fffd}\u{fffd}b"
    );
    assert_eq!(
      append("/nonexistent", INBOX, "a\nb"),
      Err(JournalError::failed("journal line must not contain a newline"))
    );
  }
}
