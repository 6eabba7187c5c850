//! Write-once turn records, `turns/<id>.json`. A record is created with
//! O_EXCL, so a second writer of the same id is refused, never merged. A
//! refusal names the turn by its id, never by host path (PR #1916, #1873).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;

use crate::error::{fs_code, quiet_fs, quiet_io, JournalError, Result};
use crate::json::Doc;
use crate::lines::{decode_utf8, exists};
use crate::paths::{journal_label, turn_label, under};

/// Creates the record file (its id already checked against TURN_ID by
/// the caller's `turnPath`), failing exclusively: a file, directory or
/// symlink already at the path is EEXIST.
pub fn create(path: &str) -> std::io::Result<File> {
  OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

/// The refusal of a second writer: `shown` is the id as the template
/// `${id}` spells it.
pub fn exists_refusal(shown: &str) -> JournalError {
  JournalError::failed(format!("turn record already exists: {shown}"))
}

/// Any other failure to create or write a record, by `String(id)`.
pub fn write_refusal(err: &std::io::Error, id: &str) -> JournalError {
  quiet_io(err, &turn_label(id), "write")
}

/// Writes a created record's text; the file is closed on return.
pub fn write(mut file: File, text: &str) -> std::io::Result<()> {
  file.write_all(text.as_bytes())
}

/// A failure while making the record's text (a JavaScript exception, by its
/// `code` when that is a string) after the file was created.
pub fn text_failed(id: &str, code: Option<&str>) -> JournalError {
  quiet_fs(code, &turn_label(id), "write")
}

/// A record's text as parseJsonFileText sees it (one leading U+FEFF dropped),
/// checked to parse.
pub fn read_text(path: &str, id: &str) -> Result<String> {
  let bytes = std::fs::read(path).map_err(|e| quiet_io(&e, &turn_label(id), "read"))?;
  let mut text = decode_utf8(bytes);
  if text.starts_with('\u{feff}') {
    text.drain(..'\u{feff}'.len_utf8());
  }
  if Doc::parse(&text).is_none() {
    return Err(JournalError::failed(format!("{}: not valid JSON", turn_label(id))));
  }
  Ok(text)
}

/// Every `*.json` record under `dir/turns`, in the order Node's readdirSync
/// lists them (libuv sorts names by bytes), each checked to parse; the
/// first that cannot be read or parsed refuses the whole list.
pub fn list(dir: &str) -> Result<Vec<String>> {
  let turns = under(dir, &["turns"]);
  if !exists(&turns) {
    return Ok(Vec::new());
  }
  let refuse = |e: &std::io::Error| {
    quiet_fs(
      fs_code(e).as_deref(),
      &format!("the turns directory in {}", journal_label(dir)),
      "read",
    )
  };
  let mut names: Vec<Vec<u8>> = Vec::new();
  for entry in std::fs::read_dir(&turns).map_err(|e| refuse(&e))? {
    names.push(entry.map_err(|e| refuse(&e))?.file_name().as_bytes().to_vec());
  }
  names.sort();
  let mut texts = Vec::new();
  for name in names {
    // Node hands out names decoded as UTF-8 (invalid bytes as U+FFFD) and
    // opens what it handed out.
    let name = decode_utf8(name);
    if let Some(id) = name.strip_suffix(".json") {
      texts.push(read_text(&under(&turns, &[&name]), id)?);
    }
  }
  Ok(texts)
}
