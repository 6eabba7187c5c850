//! Room for the buffer a cold read holds for a moment (a file folded from
//! nothing), asked of the allocator so that it is given back when freed
//! (#32). glibc's malloc serves a request at or above its mmap threshold
//! with a mapping of its own and unmaps it on free; but the free of such a
//! mapping up to 32 MiB raises the threshold to its size, and the heap
//! then keeps up to twice that much freed memory instead of returning it:
//! a process that read 8 bindings' 28 MB inboxes kept 80 MiB after a
//! collection with nothing cached. A large buffer is therefore asked for
//! with more than 32 MiB of room: always a mapping of its own, whose free
//! never moves the threshold. Room is address space, not memory: pages
//! never written are never resident. Other allocators (musl, macOS) map
//! large requests anyway. A warm read does not use it: a fresh mapping
//! costs a page fault per page, where the heap's reused buffer costs none
//! (`warm`).
//! After a cold read of a large file, the call's end gives the heap's free
//! pages back (`churned`).

use std::sync::atomic::{AtomicBool, Ordering};

/// Below this, a buffer takes its size: the threshold it may train is
/// small, and so is what the heap keeps.
const LARGE: usize = 1 << 20;

/// Above glibc's highest dynamic mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX
/// on 64-bit targets).
const MAPPED: usize = (32 << 20) + (1 << 12);

/// An empty buffer with room for `len` bytes (and, for a large one, more);
/// `None` when no room can be had.
pub fn buffer(len: usize) -> Option<Vec<u8>> {
  let mut buf = Vec::new();
  reserve(&mut buf, len).then_some(buf)
}

/// Room for `more` bytes in `buf`, as `buffer` gives it; false where none
/// can be had.
pub fn reserve(buf: &mut Vec<u8>, more: usize) -> bool {
  let Some(need) = buf.len().checked_add(more) else {
    return false;
  };
  if need <= buf.capacity() {
    return true;
  }
  let room = if need >= LARGE { need.max(MAPPED) } else { need };
  buf.try_reserve_exact(room - buf.len()).is_ok() || buf.try_reserve_exact(more).is_ok()
}

/// An empty buffer for a warm read of `len` bytes: a large one with room
/// to spare, in steps (#47). The file grows by a line or so between calls,
/// and a request a little larger than the buffer glibc last freed is above
/// the threshold that free set: it was mapped afresh on every call, a page
/// fault per page (readOutbox of 100,000 lines: 6% of its time). An eighth
/// more, rounded up to an eighth of the next power of two, asks the same
/// room of call after call as the file grows, which the heap then reuses.
pub fn warm(len: usize) -> Option<Vec<u8>> {
  let room = if len >= LARGE {
    let step = len.checked_next_power_of_two().map_or(1 << 20, |p| p / 8);
    len.saturating_add(len / 8).div_ceil(step).saturating_mul(step)
  } else {
    len
  };
  let mut buf = Vec::new();
  buf.try_reserve_exact(room).is_ok().then_some(buf)
}

/// The room a fold's vector keeps when it is shrunk: an eighth more than
/// its length. Shrunk to fit, the next append would double it (the
/// vector's growth), and a fold shrunk again to stay within the cache's
/// budget would then be copied twice on every call; with an eighth to
/// spare, a file of a million lines takes 125,000 appends before that
/// (#66).
pub fn spare(len: usize) -> usize {
  len.saturating_add(len / 8)
}

/// Shrinks `v` to its length and an eighth (`spare`).
pub fn shrink<T>(v: &mut Vec<T>) {
  v.shrink_to(spare(v.len()));
}

/// Whether a cold read of a large file ran since the boundary last asked:
/// its transient buffers, the answer it made and any folds evicted for it
/// are freed by the end of the call, and glibc keeps most of that resident
/// (it returns memory from the top of its heap alone). The napi boundary
/// gives the heap's free pages back then (src/js/heap.rs, #32): a process
/// serving 8 bindings under a 300 MiB limit held 115 MiB after a
/// collection without it, 96 with it, journal.mjs about 61 plus the budget
/// of 38.
static CHURNED: AtomicBool = AtomicBool::new(false);

/// Marks a cold read of `read` bytes: one of 1 MiB or more churns the heap.
pub fn churned(read: usize) {
  if read >= LARGE {
    CHURNED.store(true, Ordering::Relaxed);
  }
}

/// Whether the heap churned since the last call, and clears it.
pub fn take_churned() -> bool {
  CHURNED.swap(false, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn small_buffers_take_their_size_and_large_ones_are_mapped() {
    assert_eq!(buffer(100).expect("room").capacity(), 100);
    assert!(buffer(LARGE).expect("room").capacity() >= MAPPED);
    assert!(buffer(MAPPED * 2).expect("room").capacity() >= MAPPED * 2);
    let mut b = buffer(10).expect("room");
    b.extend_from_slice(b"0123456789");
    assert!(reserve(&mut b, LARGE));
    assert!(b.capacity() >= MAPPED);
    assert_eq!(b, b"0123456789");
    assert!(!reserve(&mut b, usize::MAX));
  }
}
