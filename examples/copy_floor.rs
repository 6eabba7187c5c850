//! The floor of the readers that read a file whole (#25, #47): the bytes a
//! proof must look at, copied out of the page cache with `pread` in the
//! proof's own chunks, on the proof's threads, with no hash and no parse.
//! Nothing that sees every rewrite of a file can read less. Each file is
//! opened and closed in each run, as every call must (a descriptor kept
//! open does not see the file renamed over). With `--append FILE`, each
//! run first appends one line to FILE as `journal.mjs` does (open with
//! O_APPEND, one write, close): the per-message path's append, the least
//! an append can be. Prints the median and the fastest of RUNS runs in
//! milliseconds, as JSON.
//!
//!   cargo run --release --example copy_floor -- RUNS THREADS [--append FILE] FILE...
#![forbid(unsafe_code)]
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::time::Instant;

const CHUNK: usize = 256 << 10;

fn copy(file: &File, from: u64, to: u64, buf: &mut [u8]) -> std::io::Result<u64> {
  let (mut at, mut sum) = (from, 0u64);
  while at < to {
    let want = ((to - at) as usize).min(buf.len());
    let got = file.read_at(&mut buf[..want], at)?;
    if got == 0 {
      break;
    }
    // One byte a chunk, so that the copy cannot be left out.
    sum = sum.wrapping_add(u64::from(buf[got - 1]));
    at += got as u64;
  }
  Ok(sum)
}

fn main() -> std::io::Result<()> {
  let args: Vec<String> = std::env::args().skip(1).collect();
  let usage = || std::io::Error::other("usage: copy_floor RUNS THREADS [--append FILE] FILE...");
  let runs: usize = args.first().and_then(|a| a.parse().ok()).filter(|&n| n > 0).ok_or_else(usage)?;
  let threads: u64 = args.get(1).and_then(|a| a.parse().ok()).ok_or_else(usage)?;
  let (append, paths) = match args.get(2).map(String::as_str) {
    Some("--append") => (Some(args.get(3).ok_or_else(usage)?), &args[4..]),
    _ => (None, &args[2..]),
  };
  let line = b"{\"id\":\"floor\",\"at\":\"2024-01-30T12:00:00.000Z\"}\n";
  let mut times = Vec::with_capacity(runs);
  // A file read on this thread reuses one buffer: a small file's floor is
  // then its copy, not a thread's start and a fresh buffer's page faults.
  let mut buf = vec![0; CHUNK];
  for _ in 0..runs {
    let t = Instant::now();
    if let Some(path) = append {
      std::fs::OpenOptions::new().append(true).create(true).open(path)?.write_all(line)?;
    }
    for path in paths {
      let file = &File::open(path)?;
      let len = file.metadata()?.len();
      if len < 16 << 20 {
        copy(file, 0, len, &mut buf)?;
        continue;
      }
      std::thread::scope(|s| -> std::io::Result<()> {
        let parts: Vec<_> = (0..threads)
          .map(|i| {
            let (from, to) = (len * i / threads, len * (i + 1) / threads);
            s.spawn(move || copy(file, from, to, &mut vec![0; CHUNK]))
          })
          .collect();
        for p in parts {
          p.join().map_err(|_| std::io::Error::other("a copy thread panicked"))??;
        }
        Ok(())
      })?;
    }
    times.push(t.elapsed().as_secs_f64() * 1e3);
  }
  times.sort_by(f64::total_cmp);
  let bytes: u64 = paths.iter().map(|p| std::fs::metadata(p).map_or(0, |m| m.len())).sum();
  println!(
    "{{\"medianMs\":{:.3},\"minMs\":{:.3},\"bytes\":{bytes}}}",
    times[times.len() / 2],
    times[0]
  );
  Ok(())
}
