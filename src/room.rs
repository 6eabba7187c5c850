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
//! costs a page fault per page, where the heap's reused buffer costs none.
//! After a cold read of a large file, the heap's free pages are given back.

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

/// Gives the pages the C heap holds free back to the system, after a cold
/// read of a large file: glibc returns memory from the top of its heap
/// alone, so what a fold's growth, an answer and the folds evicted to make
/// room freed below a live allocation stays resident. A process serving 8
/// bindings under a 300 MiB limit held 115 MiB after a collection without
/// this, 96 with it, journal.mjs about 61 plus the budget of 38 (#32).
/// musl and macOS return free memory themselves.
pub fn give_back(read: usize) {
  if read < LARGE {
    return;
  }
  #[cfg(all(target_os = "linux", target_env = "gnu"))]
  // SAFETY: malloc_trim takes no pointer; glibc locks each arena while it
  // walks it, as any allocation does.
  unsafe {
    nix::libc::malloc_trim(0);
  }
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
