//! The read cache: what the readers learned of each file, kept between
//! calls within a memory budget (#32), the least recently used going
//! first. `incremental` puts an entry here after each read and takes it
//! back at the next; an entry is any reader's, kept by its fold's type and
//! its file's path.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Mutex;

use crate::read::budget;

/// A file's entry: the reader's fold type, and the file's path.
pub type Key = (TypeId, String);

/// What is kept of one file, with the tick of its last use and its size.
struct Kept {
  tick: u64,
  bytes: usize,
  entry: Box<dyn Any + Send>,
}

/// The entries, within the budget (#32): a connector serves several
/// bindings in one process, often under a memory limit, and what is kept
/// between calls is what journal.mjs does not have.
#[derive(Default)]
struct Cache {
  tick: u64,
  /// The sum of the entries' `bytes`.
  used: usize,
  map: HashMap<Key, Kept>,
  /// The size of each entry last dropped to make room, so that its fold,
  /// made again, finds that room free before it is made: the heap then
  /// holds the budget and one read, not the budget and a new fold besides.
  dropped: HashMap<Key, usize>,
}

/// At most this many sizes of dropped entries are remembered.
const DROPPED_MAX: usize = 4096;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

impl Cache {
  /// The entry for `key`, taken out; on a miss, room is made for the size
  /// its entry had when it was dropped.
  fn take(&mut self, key: &Key, budget: usize) -> Option<Box<dyn Any + Send>> {
    let Some(kept) = self.map.remove(key) else {
      if let Some(bytes) = self.dropped.remove(key).filter(|&b| b <= budget) {
        self.evict(budget - bytes);
      }
      return None;
    };
    self.used -= kept.bytes;
    Some(kept.entry)
  }

  /// Drops the least recently used entries until at most `room` is used.
  fn evict(&mut self, room: usize) {
    while self.used > room {
      let oldest = self.map.iter().min_by_key(|(_, kept)| kept.tick).map(|(k, _)| k.clone());
      let Some((key, gone)) = oldest.and_then(|k| self.map.remove_entry(&k)) else {
        break;
      };
      self.used -= gone.bytes;
      if self.dropped.len() >= DROPPED_MAX {
        self.dropped.clear();
      }
      self.dropped.insert(key, gone.bytes);
    }
  }

  /// Keeps `entry` of `bytes` if it fits `budget`, the least recently
  /// used entries going first to make room; one larger than the whole
  /// budget is dropped (its file is then read whole at each call, as
  /// journal.mjs reads it).
  fn keep(&mut self, key: Key, bytes: usize, entry: Box<dyn Any + Send>, budget: usize) {
    if let Some(old) = self.map.remove(&key) {
      self.used -= old.bytes;
    }
    if bytes > budget {
      return;
    }
    self.evict(budget - bytes);
    self.tick += 1;
    self.used += bytes;
    let tick = self.tick;
    self.map.insert(key, Kept { tick, bytes, entry });
  }
}

/// The room one entry takes in the cache besides itself: its key and slot.
pub const SLOT: usize = size_of::<(Key, Kept)>();

/// The entry for `key`, taken out of the cache (a hit), or None.
pub fn take(key: &Key) -> Option<Box<dyn Any + Send>> {
  let budget = budget::get();
  let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
  guard.get_or_insert_with(Cache::default).take(key, budget)
}

/// Keeps `entry`, of `bytes`, within the budget.
pub fn keep(key: Key, bytes: usize, entry: Box<dyn Any + Send>) {
  let budget = budget::get();
  let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
  guard.get_or_insert_with(Cache::default).keep(key, bytes, entry, budget);
}

/// What is kept now, in bytes (for tests and the benchmark's figures).
pub fn kept_bytes() -> usize {
  CACHE.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map_or(0, |c| c.used)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn the_cache_keeps_within_its_budget_the_most_recently_used() {
    let mut c = Cache::default();
    let key = |n: u32| (TypeId::of::<()>(), format!("/j{n}/t.jsonl"));
    let keys = |c: &Cache| {
      let mut k: Vec<String> = c.map.keys().map(|k| k.1.clone()).collect();
      k.sort();
      k
    };
    for n in 0..4 {
      c.keep(key(n), 100, Box::new(()), 350);
    }
    // The fourth pushed out the first.
    assert_eq!(keys(&c), ["/j1/t.jsonl", "/j2/t.jsonl", "/j3/t.jsonl"]);
    assert_eq!(c.used, 300);
    // A use moves an entry to the front: taken, then kept again.
    let got = c.take(&key(1), 350).expect("kept");
    c.keep(key(1), 100, got, 350);
    c.keep(key(4), 150, Box::new(()), 350);
    assert_eq!(
      keys(&c),
      ["/j1/t.jsonl", "/j3/t.jsonl", "/j4/t.jsonl"],
      "the least recently used went"
    );
    assert_eq!(c.used, 350);
    // An entry larger than the budget is not kept, and evicts nothing.
    c.keep(key(5), 351, Box::new(()), 350);
    assert_eq!(keys(&c), ["/j1/t.jsonl", "/j3/t.jsonl", "/j4/t.jsonl"]);
    // One that grew past it is dropped, its old size no longer counted.
    c.keep(key(1), 400, Box::new(()), 350);
    assert_eq!(
      (keys(&c), c.used),
      (vec!["/j3/t.jsonl".to_string(), "/j4/t.jsonl".to_string()], 250)
    );
    // A budget of 0 keeps nothing.
    c.keep(key(6), 1, Box::new(()), 0);
    assert!(c.take(&key(6), 0).is_none());
  }

  #[test]
  fn a_dropped_entry_read_again_finds_its_room_made_first() {
    let mut c = Cache::default();
    let key = |n: u32| (TypeId::of::<()>(), format!("/j{n}/t.jsonl"));
    for n in 0..3 {
      c.keep(key(n), 100, Box::new(()), 300);
    }
    // j3 pushes out j0, whose size is remembered.
    c.keep(key(3), 100, Box::new(()), 300);
    assert_eq!(c.dropped.get(&key(0)), Some(&100));
    // j0's miss drops j1 before its fold is made again, not after.
    assert!(c.take(&key(0), 300).is_none());
    assert_eq!(c.used, 200);
    assert!(!c.map.contains_key(&key(1)));
    // A miss with nothing remembered drops nothing.
    assert!(c.take(&key(9), 300).is_none());
    assert_eq!(c.used, 200);
  }
}
