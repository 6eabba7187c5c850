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

/// A record's text as parseJsonFileText sees it (one leading U+FEFF
/// dropped), parsed; `f` takes what it needs from it (and the id).
fn parse_with<T>(bytes: std::io::Result<Vec<u8>>, id: &str, f: impl Fn(&str, &str, &Doc<'_>) -> T) -> Result<T> {
  let bytes = bytes.map_err(|e| quiet_io(&e, &turn_label(id), "read"))?;
  let text = decode_utf8(bytes);
  let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
  match Doc::parse(text) {
    Some(doc) => Ok(f(id, text, &doc)),
    None => Err(not_json(id)),
  }
}

/// The text of a record, one leading U+FEFF dropped, not yet parsed.
pub fn read_text(path: &str, id: &str) -> Result<String> {
  let bytes = crate::files::read(path).map_err(|e| quiet_io(&e, &turn_label(id), "read"))?;
  let mut text = decode_utf8(bytes);
  if text.starts_with('\u{feff}') {
    text.drain(..'\u{feff}'.len_utf8());
  }
  Ok(text)
}

/// The refusal of a record that does not parse.
pub fn not_json(id: &str) -> JournalError {
  JournalError::failed(format!("{}: not valid JSON", turn_label(id)))
}

/// Every `*.json` record under `dir/turns`, in the order Node's readdirSync
/// lists them (libuv sorts names by bytes), each read and parsed and handed
/// to `f` with its id; the first (in that order) that cannot be read or
/// parsed refuses the whole list. Records are read on two threads: a
/// journal holds thousands, and each read is a few system calls.
pub fn list<T: Send>(dir: &str, f: impl Fn(&str, &str, &Doc<'_>) -> T + Sync) -> Result<Vec<T>> {
  let mut all = Vec::new();
  list_batches(dir, usize::MAX, f, |batch| {
    all.extend(batch);
    Ok::<(), JournalError>(())
  })?;
  Ok(all)
}

/// `list`, handing the records to `each` `batch` at a time, in order, so
/// that a caller can be done with one batch before the next is read (#10:
/// listTurns then never holds every record's text at once). A record that
/// refuses the list refuses it before `each` sees its batch.
pub fn list_batches<T: Send, E: From<JournalError>>(
  dir: &str,
  batch: usize,
  f: impl Fn(&str, &str, &Doc<'_>) -> T + Sync,
  mut each: impl FnMut(Vec<T>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
  let turns = under(dir, &["turns"]);
  if !exists(&turns) {
    return Ok(());
  }
  let refuse = |e: &std::io::Error| {
    E::from(quiet_fs(
      fs_code(e).as_deref(),
      &format!("the turns directory in {}", journal_label(dir)),
      "read",
    ))
  };
  let mut names: Vec<Vec<u8>> = Vec::new();
  // The listing's descriptor is closed before any record is opened.
  for entry in std::fs::read_dir(&turns).map_err(|e| refuse(&e))? {
    names.push(entry.map_err(|e| refuse(&e))?.file_name().as_bytes().to_vec());
  }
  names.sort();
  // Node hands out names decoded as UTF-8 (invalid bytes as U+FFFD) and
  // opens what it handed out.
  let records: Vec<(String, String)> = names
    .into_iter()
    .map(decode_utf8)
    .filter_map(|name| name.strip_suffix(".json").map(|id| id.to_string()).map(|id| (name, id)))
    .collect();
  // Each record is opened by name relative to the directory held open, so
  // the path is walked once, not once per record. That takes a descriptor
  // more than the reference needs (and the second thread one more): a
  // record that cannot be opened for want of one (EMFILE, ENFILE) sends its
  // batch, and every later one, to be read again one record at a time by
  // path, as the reference reads it, with the directory closed first, so
  // one free descriptor is enough and the answer, refusals included, is the
  // reference's (#10).
  let mut dirfd = std::fs::File::open(&turns).ok();
  for part in records.chunks(batch.max(1)) {
    let fast = dirfd.as_ref().and_then(|d| read_fast(d, part, &f));
    let results = match fast {
      Some(results) => results,
      None => {
        dirfd = None;
        part
          .iter()
          .map(|(name, id)| parse_with(crate::files::read(&under(&turns, &[name])), id, &f))
          .collect()
      }
    };
    each(results.into_iter().collect::<Result<Vec<T>>>()?)?;
  }
  Ok(())
}

/// Reads records through the directory held open, on two threads when there
/// are enough; `None` when one could not be opened for want of a descriptor.
fn read_fast<T: Send>(
  dirfd: &std::fs::File,
  records: &[(String, String)],
  f: &(impl Fn(&str, &str, &Doc<'_>) -> T + Sync),
) -> Option<Vec<Result<T>>> {
  let short = |r: &std::io::Result<Vec<u8>>| matches!(r, Err(e) if matches!(e.raw_os_error(), Some(nix::libc::EMFILE | nix::libc::ENFILE)));
  let read = |part: &[(String, String)]| -> Option<Vec<Result<T>>> {
    part
      .iter()
      .map(|(name, id)| {
        let bytes = crate::files::read_at(dirfd, name);
        (!short(&bytes)).then(|| parse_with(bytes, id, f))
      })
      .collect()
  };
  let (first, second) = records.split_at(records.len() / 2);
  if records.len() < 64 {
    read(records)
  } else {
    std::thread::scope(|s| {
      let other = s.spawn(|| read(second));
      let mut done = read(first)?;
      // A panic in the reader cannot happen without one here; treat it as
      // unreadable rather than unwinding across the boundary.
      done.extend(
        other
          .join()
          .unwrap_or_else(|_| Some(vec![Err(JournalError::failed("could not read turn record (unknown error)"))]))?,
      );
      Some(done)
    })
  }
}
