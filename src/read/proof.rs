//! The proof that the part of a line file a reader already parsed is
//! unchanged (#14). An incremental read may never answer what a fresh read
//! would not, and no file-system signal sees every rewrite (a write through
//! a shared mapping changes no timestamp until writeback; on a tmpfs, never),
//! so every byte of the parsed part is read and hashed on every call.
//!
//! The parsed part is hashed in fixed segments of `SEG` bytes, so that
//! segments can be checked on several cores at once and the proof extended
//! by appends without hashing the old part twice. The segments sit at fixed
//! offsets, so the list of their hashes determines the bytes (up to the
//! hash's collisions). The file is read with `pread`, never mapped: a
//! mapping of a file that another process truncates kills the reader with
//! SIGBUS. Each `pread` is hashed while its bytes are still in the cache.
//!
//! The hash is XXH3-128 under a secret drawn for this process (#25), about
//! eight times BLAKE3's speed, so that the proof costs little more than the
//! copy out of the page cache. Its strength, for what it guards: a rewrite
//! of the parsed part that keeps every segment's hash. A change by accident
//! (a torn write, an editor, a restore) does so with a chance of about
//! 2^-128 per segment. A writer that means to must find bytes whose hash
//! under a secret it does not know matches a value it never sees: the
//! secret and the hashes stay in this process's memory, and one who can
//! read that can already change the connector's answers by writing to it.
//! XXH3 is not a MAC against one who knows the secret, and nothing here
//! needs one. (BLAKE3, its predecessor here, is cryptographic, and cost
//! more than the copy itself.)

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use twox_hash::XxHash3_128 as Xxh3;

/// Bytes per segment.
pub const SEG: usize = 4 << 20;
/// Bytes per `pread`: small enough to be hashed while still in the cache.
const CHUNK: usize = 256 << 10;
/// Below this many bytes one thread checks: a thread costs more to start
/// than it saves.
const PARALLEL_MIN: usize = 16 << 20;
/// Threads at most, whatever the machine has: hashing is bound by memory
/// bandwidth long before.
const THREADS_MAX: usize = 4;

/// This process's secret, drawn once: 192 bytes (XXH3's default length)
/// from SipHash-1-3 under std's `RandomState`, whose 128-bit key comes from
/// the operating system's random source.
fn secret() -> &'static [u8] {
  static SECRET: OnceLock<Vec<u8>> = OnceLock::new();
  SECRET.get_or_init(|| {
    use std::hash::BuildHasher;
    let keyed = std::collections::hash_map::RandomState::new();
    (0..24u64).flat_map(|i| keyed.hash_one(i).to_le_bytes()).collect()
  })
}

/// A hasher under this process's secret.
fn hasher() -> Xxh3 {
  match Xxh3::with_seed_and_secret(0, secret()) {
    Ok(h) => h,
    // 192 bytes is above XXH3's minimum of 136, so this is never reached.
    Err(_) => Xxh3::with_seed(0),
  }
}

/// The hashes of the parsed part: one per whole segment, then the hash of
/// the last, partial segment.
#[derive(Clone, Debug, PartialEq)]
pub struct Proof {
  segs: Vec<u128>,
  tail: u128,
  len: usize,
}

impl Default for Proof {
  fn default() -> Self {
    Proof {
      segs: Vec::new(),
      tail: hasher().finish_128(),
      len: 0,
    }
  }
}

impl Proof {
  /// The proved length.
  pub fn len(&self) -> usize {
    self.len
  }

  pub fn is_empty(&self) -> bool {
    self.len == 0
  }

  /// A proof of `bytes` (what a fresh read parsed).
  pub fn of(bytes: &[u8]) -> Proof {
    let mut p = Extending::default();
    p.update(bytes);
    p.finish()
  }
}

/// A proof being extended by appended bytes.
pub struct Extending {
  segs: Vec<u128>,
  hasher: Xxh3,
  len: usize,
}

impl Default for Extending {
  fn default() -> Self {
    Extending {
      segs: Vec::new(),
      hasher: hasher(),
      len: 0,
    }
  }
}

impl Extending {
  pub fn update(&mut self, mut bytes: &[u8]) {
    while !bytes.is_empty() {
      let room = SEG - self.len % SEG;
      let (now, rest) = bytes.split_at(room.min(bytes.len()));
      self.hasher.write(now);
      self.len += now.len();
      if self.len.is_multiple_of(SEG) {
        self.segs.push(self.hasher.finish_128());
        self.hasher = hasher();
      }
      bytes = rest;
    }
  }

  pub fn finish(self) -> Proof {
    Proof {
      segs: self.segs,
      tail: self.hasher.finish_128(),
      len: self.len,
    }
  }
}

/// Bytes kept from the file while it was checked: each at its offset.
pub type Kept = Vec<(usize, Vec<u8>)>;

/// Checks the first `proof.len()` bytes of `file` (read with `pread`, so
/// the file's offset does not move). `Some` with the proof ready to be
/// extended when they are unchanged, `None` when they differ or the file is
/// shorter now.
pub fn check_file(file: &File, proof: &Proof) -> std::io::Result<Option<Extending>> {
  check_file_keeping(file, proof, &[]).map(|(proved, _)| proved)
}

/// `check_file`, keeping the bytes of `keep` (ranges sorted by start, below
/// `proof.len()`) from the very reads it hashed: when the check passes, they
/// are bytes of the proved part, with no window in which the file could
/// have changed between the check and the copy.
pub fn check_file_keeping(file: &File, proof: &Proof, keep: &[Range<usize>]) -> std::io::Result<(Option<Extending>, Kept)> {
  check(proof, |range, hasher, buf, kept| {
    let mut at = range.start;
    while at < range.end {
      let want = (range.end - at).min(buf.len());
      match file.read_at(&mut buf[..want], at as u64) {
        Ok(0) => return Ok(false),
        Ok(got) => {
          hasher.write(&buf[..got]);
          keep_from(keep, at, &buf[..got], kept);
          at += got;
        }
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
        Err(e) => return Err(e),
      }
    }
    Ok(true)
  })
}

/// The parts of `keep` within the bytes read at `at`.
fn keep_from(keep: &[Range<usize>], at: usize, bytes: &[u8], kept: &mut Kept) {
  if keep.is_empty() {
    return;
  }
  let end = at + bytes.len();
  // The first range that ends after `at`: ranges sorted by start, and never
  // overlapping, also end in order.
  let first = keep.partition_point(|r| r.end <= at);
  for r in keep[first..].iter().take_while(|r| r.start < end) {
    let (from, to) = (r.start.max(at), r.end.min(end));
    if from < to {
      kept.push((from, bytes[from - at..to - at].to_vec()));
    }
  }
}

/// Checks the first `proof.len()` bytes of `data`, as `check_file` does.
pub fn check_bytes(data: &[u8], proof: &Proof) -> Option<Extending> {
  let checked = check(proof, |range, hasher, _, _| match data.get(range) {
    Some(part) => {
      hasher.write(part);
      Ok(true)
    }
    None => Ok(false),
  });
  checked.ok().and_then(|(proved, _)| proved)
}

/// A segment's range, by index; the index `segs.len()` is the tail.
fn segment(proof: &Proof, i: usize) -> Range<usize> {
  i * SEG..((i + 1) * SEG).min(proof.len)
}

/// Hashes segments `from..to` of the proof through `read`, stopping at the
/// first difference (or when `stop` says another group found one). Returns
/// whether all matched, and the tail's hasher when the group held it.
type Checked = (bool, Option<Xxh3>, Kept);

fn check_group<R>(proof: &Proof, group: Range<usize>, read: &R, stop: &AtomicBool) -> std::io::Result<Checked>
where
  R: Fn(Range<usize>, &mut Xxh3, &mut [u8], &mut Kept) -> std::io::Result<bool>,
{
  CHUNKS.with(|buf| {
    let mut buf = buf.borrow_mut();
    // Room for the part checked, up to a chunk: a small file's check does
    // not zero a chunk's room each call (#47).
    let room = proof.len.saturating_sub(group.start * SEG).clamp(1, CHUNK);
    if buf.len() < room {
      buf.resize(room, 0);
    }
    check_segments(proof, group, read, stop, &mut buf)
  })
}

thread_local! {
  /// The room each thread reads chunks into, kept between checks: the
  /// calling thread's for every call, a helper's for its check.
  static CHUNKS: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn check_segments<R>(proof: &Proof, group: Range<usize>, read: &R, stop: &AtomicBool, buf: &mut [u8]) -> std::io::Result<Checked>
where
  R: Fn(Range<usize>, &mut Xxh3, &mut [u8], &mut Kept) -> std::io::Result<bool>,
{
  let mut tail = None;
  let mut kept = Vec::new();
  for i in group {
    if stop.load(Ordering::Relaxed) {
      return Ok((false, None, Vec::new()));
    }
    let mut hasher = hasher();
    if !read(segment(proof, i), &mut hasher, buf, &mut kept)? {
      return Ok((false, None, Vec::new()));
    }
    let want = proof.segs.get(i).unwrap_or(&proof.tail);
    if hasher.finish_128() != *want {
      stop.store(true, Ordering::Relaxed);
      return Ok((false, None, Vec::new()));
    }
    if i == proof.segs.len() {
      tail = Some(hasher);
    }
  }
  Ok((true, tail, kept))
}

fn threads() -> usize {
  static N: OnceLock<usize> = OnceLock::new();
  *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()).min(THREADS_MAX))
}

fn check<R>(proof: &Proof, read: R) -> std::io::Result<(Option<Extending>, Kept)>
where
  R: Fn(Range<usize>, &mut Xxh3, &mut [u8], &mut Kept) -> std::io::Result<bool> + Sync,
{
  let count = proof.segs.len() + 1;
  let n = if proof.len < PARALLEL_MIN { 1 } else { threads().min(count) };
  let stop = AtomicBool::new(false);
  let groups: Vec<Range<usize>> = (0..n).map(|t| t * count / n..(t + 1) * count / n).collect();
  let results: Vec<std::io::Result<Checked>> = std::thread::scope(|s| {
    let (first, rest) = groups.split_first().map_or((0..0, &[][..]), |(f, r)| (f.clone(), r));
    // The other groups on threads of their own; one that cannot be started
    // (a thread limit) is checked here instead.
    let spawned: Vec<_> = rest
      .iter()
      .map(|g| {
        let (mine, read, stop) = (g.clone(), &read, &stop);
        std::thread::Builder::new()
          .spawn_scoped(s, move || check_group(proof, mine, read, stop))
          .map_err(|_| g.clone())
      })
      .collect();
    let mut results = vec![check_group(proof, first, &read, &stop)];
    for h in spawned {
      results.push(match h {
        Ok(h) => h.join().unwrap_or(Ok((false, None, Vec::new()))),
        Err(g) => check_group(proof, g, &read, &stop),
      });
    }
    results
  });
  let mut tail = None;
  let mut kept = Vec::new();
  for r in results {
    match r? {
      (false, _, _) => return Ok((None, Vec::new())),
      (true, h, k) => {
        tail = h.or(tail);
        kept.extend(k);
      }
    }
  }
  let proved = tail.map(|hasher| Extending {
    segs: proof.segs.clone(),
    hasher,
    len: proof.len,
  });
  Ok((proved, kept))
}

#[cfg(test)]
mod tests {
  use super::*;

  fn bytes(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
  }

  #[test]
  fn a_proof_extended_equals_a_proof_made_at_once() {
    let data = bytes(3 * SEG + 12345);
    for cut in [0, 1, SEG - 1, SEG, SEG + 1, 2 * SEG, data.len()] {
      let mut p = Extending::default();
      p.update(&data[..cut]);
      p.update(&data[cut..]);
      assert_eq!(p.finish(), Proof::of(&data), "cut at {cut}");
    }
  }

  #[test]
  fn any_changed_byte_is_seen_on_every_path() {
    // Large enough to be checked on several threads.
    let data = bytes(PARALLEL_MIN + 3 * SEG + 17);
    let proof = Proof::of(&data);
    let d = crate::testutil::TempDir::new();
    let path = format!("{}/f", d.path());
    std::fs::write(&path, &data).expect("write");
    let file = File::open(&path).expect("open");
    assert!(check_bytes(&data, &proof).is_some());
    assert!(check_file(&file, &proof).expect("read").is_some());
    for at in [0, SEG - 1, SEG, 2 * SEG + 5, data.len() - 1] {
      let mut other = data.clone();
      other[at] ^= 1;
      assert!(check_bytes(&other, &proof).is_none(), "byte {at}");
      std::fs::write(&path, &other).expect("rewrite");
      assert!(check_file(&file, &proof).expect("read").is_none(), "byte {at} in the file");
    }
    std::fs::write(&path, &data[..data.len() - 1]).expect("truncate");
    assert!(check_file(&file, &proof).expect("read").is_none(), "shorter");
    assert!(check_bytes(&data[..SEG], &proof).is_none(), "shorter bytes");
  }

  #[test]
  fn a_checked_proof_extends_as_a_fresh_one() {
    let data = bytes(PARALLEL_MIN + SEG / 2);
    let (old, new) = data.split_at(PARALLEL_MIN + 3);
    let mut p = check_bytes(old, &Proof::of(old)).expect("unchanged");
    p.update(new);
    assert_eq!(p.finish(), Proof::of(&data));
  }
}
