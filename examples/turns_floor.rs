//! The file part of the floor of `listTurns` and `countTurnsOn` (#47):
//! the turn records' directory listed, then every `*.json` record opened
//! (relative to the directory, so its path is walked once), read to its end
//! and closed, on the readers' threads, with no parse. An answer from the
//! records as they are now cannot read less: any record may have been
//! replaced since the last call, and no file-system signal sees every
//! change (a write through a shared mapping moves no timestamp).
//!
//! With DATE, each record's `startedAt` is found by a byte search and those
//! started on DATE are counted: less than a correct reader does (it must
//! scan each record's structure, and refuse one that is not JSON), so the
//! figure stays a floor. Prints the median and the fastest of RUNS runs in
//! milliseconds, as JSON, with the records, their bytes and the count.
//!
//!   cargo run --release --example turns_floor -- RUNS THREADS DIR [DATE]
#![forbid(unsafe_code)]
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::time::Instant;

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;

/// The text after `"startedAt"`, its separator and opening quote skipped.
fn started(record: &[u8]) -> Option<&[u8]> {
  let key = b"\"startedAt\"";
  let at = memchr::memmem::find(record, key)? + key.len();
  let rest = &record[at..];
  let skip = rest.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b':'))?;
  rest[skip..].strip_prefix(b"\"")
}

/// Reads `file` to its end into `buf` (grown as needed): a read, and the
/// read that finds the end. (`read_to_end` asks the size first: two calls more.)
fn read_all(mut file: File, buf: &mut Vec<u8>) -> std::io::Result<usize> {
  let mut len = 0;
  loop {
    if len == buf.len() {
      buf.resize(buf.len() * 2, 0);
    }
    match file.read(&mut buf[len..])? {
      0 => return Ok(len),
      n => len += n,
    }
  }
}

/// Reads `names` under `dir`; their bytes and how many started on `date`.
fn read(dir: &File, names: &[Vec<u8>], date: Option<&[u8]>) -> std::io::Result<(u64, u64)> {
  let (mut bytes, mut on) = (0u64, 0u64);
  let mut buf = vec![0; 64 << 10];
  for name in names {
    let fd = openat(dir, name.as_slice(), OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty())?;
    let len = read_all(File::from(fd), &mut buf)?;
    bytes += len as u64;
    if let Some(date) = date {
      on += u64::from(started(&buf[..len]).is_some_and(|s| s.starts_with(date)));
    }
  }
  Ok((bytes, on))
}

fn main() -> std::io::Result<()> {
  let args: Vec<String> = std::env::args().skip(1).collect();
  let usage = || std::io::Error::other("usage: turns_floor RUNS THREADS DIR [DATE]");
  let runs: usize = args.first().and_then(|a| a.parse().ok()).filter(|&n| n > 0).ok_or_else(usage)?;
  let threads: usize = args.get(1).and_then(|a| a.parse().ok()).filter(|&n| n > 0).ok_or_else(usage)?;
  let path = args.get(2).ok_or_else(usage)?;
  let date = args.get(3).map(String::as_bytes);
  let mut times = Vec::with_capacity(runs);
  let (mut records, mut bytes, mut on) = (0, 0, 0);
  for _ in 0..runs {
    let t = Instant::now();
    let names: Vec<Vec<u8>> = std::fs::read_dir(path)?
      .map(|e| e.map(|e| e.file_name().as_bytes().to_vec()))
      .filter(|n| n.as_ref().map_or(true, |n| n.ends_with(b".json")))
      .collect::<std::io::Result<_>>()?;
    let dir = File::open(path)?;
    // As the readers split them: a few records are not worth a thread.
    let n = if names.len() < 64 { 1 } else { threads };
    let each = names.len().div_ceil(n).max(1);
    let (b, o) = if n == 1 {
      read(&dir, &names, date)?
    } else {
      std::thread::scope(|s| -> std::io::Result<(u64, u64)> {
        let parts: Vec<_> = names.chunks(each).map(|part| s.spawn(|| read(&dir, part, date))).collect();
        parts.into_iter().try_fold((0, 0), |(b, o), p| {
          let (pb, po) = p.join().map_err(|_| std::io::Error::other("a reading thread panicked"))??;
          Ok((b + pb, o + po))
        })
      })?
    };
    times.push(t.elapsed().as_secs_f64() * 1e3);
    (records, bytes, on) = (names.len(), b, o);
  }
  times.sort_by(f64::total_cmp);
  let count = date.map_or("null".to_string(), |_| on.to_string());
  println!(
    "{{\"medianMs\":{:.3},\"minMs\":{:.3},\"records\":{records},\"bytes\":{bytes},\"on\":{count}}}",
    times[times.len() / 2],
    times[0]
  );
  Ok(())
}
