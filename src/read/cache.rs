//! The read cache: what the readers learned of each file, kept between
//! calls within a memory budget (#32). An entry is any reader's, kept by
//! its fold's type and its file's path. `incremental` takes an entry out
//! at each read and puts it back after.
//!
//! What goes when room is needed (#66). A connector calls its readers in
//! turn (per message: admissions and notices; then the inbox's ids, the
//! outbox's unresolved deliveries, the outbox), so plain least-recently-
//! used order drops, at each turn, exactly the fold the next call needs,
//! and one fold's room took others with it: at a million lines per
//! message paid a whole read of two files, its own and another reader's.
//! So:
//! - a fold read on every message (`hot`) is kept before any other: an
//!   entry that is not hot never evicts one that is, and where the room
//!   left beside the hot ones cannot hold it, it is not kept and evicts
//!   nothing (its reader pays one whole read of its own file per call);
//! - room is made by the fewest entries needed: the least recently used
//!   are chosen first (the others before the hot ones), then every chosen
//!   entry whose room the rest already free is spared.

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
  hot: bool,
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
  /// The part of `used` that hot entries take.
  hot: usize,
  map: HashMap<Key, Kept>,
  /// The size (and heat) of each entry last dropped to make room, so that
  /// its fold, made again, finds that room free before it is made: the
  /// heap then holds the budget and one read, not the budget and a new
  /// fold besides.
  dropped: HashMap<Key, (usize, bool)>,
}

/// At most this many sizes of dropped entries are remembered.
const DROPPED_MAX: usize = 4096;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

impl Cache {
  /// The entry for `key`, taken out; on a miss, room is made for the size
  /// its entry had when it was dropped.
  fn take(&mut self, key: &Key, budget: usize) -> Option<Box<dyn Any + Send>> {
    let Some(kept) = self.map.remove(key) else {
      if let Some((bytes, hot)) = self.dropped.remove(key) {
        self.make_room(bytes, hot, budget);
      }
      return None;
    };
    self.used -= kept.bytes;
    if kept.hot {
      self.hot -= kept.bytes;
    }
    Some(kept.entry)
  }

  /// Frees room for an entry of `bytes` (hot or not) within `budget`, by
  /// the fewest entries (module doc); false, evicting nothing, where it
  /// cannot stay.
  fn make_room(&mut self, bytes: usize, hot: bool, budget: usize) -> bool {
    let fixed = if hot { 0 } else { self.hot };
    if bytes > budget.saturating_sub(fixed) {
      return false;
    }
    let need = (self.used + bytes).saturating_sub(budget);
    if need == 0 {
      return true;
    }
    let mut order: Vec<(&Key, &Kept)> = self.map.iter().filter(|(_, k)| hot || !k.hot).collect();
    order.sort_by_key(|(_, k)| (k.hot, k.tick));
    let mut chosen: Vec<(Key, usize)> = Vec::new();
    let mut freed = 0;
    for (key, kept) in order {
      if freed >= need {
        break;
      }
      freed += kept.bytes;
      chosen.push((key.clone(), kept.bytes));
    }
    // The last chosen are the most worth keeping: spared first.
    chosen.reverse();
    chosen.retain(|&(_, b)| match freed - b >= need {
      true => {
        freed -= b;
        false
      }
      false => true,
    });
    for (key, _) in chosen {
      if let Some(gone) = self.map.remove(&key) {
        self.used -= gone.bytes;
        if gone.hot {
          self.hot -= gone.bytes;
        }
        if self.dropped.len() >= DROPPED_MAX {
          self.dropped.clear();
        }
        self.dropped.insert(key, (gone.bytes, gone.hot));
      }
    }
    true
  }

  /// Keeps `entry` of `bytes` where it can stay (module doc); one that
  /// cannot is dropped (its file is then read whole at each call, as
  /// journal.mjs reads it).
  fn keep(&mut self, key: Key, bytes: usize, hot: bool, entry: Box<dyn Any + Send>, budget: usize) {
    if let Some(old) = self.map.remove(&key) {
      self.used -= old.bytes;
      if old.hot {
        self.hot -= old.bytes;
      }
    }
    if !self.make_room(bytes, hot, budget) {
      return;
    }
    self.tick += 1;
    self.used += bytes;
    if hot {
      self.hot += bytes;
    }
    let tick = self.tick;
    self.map.insert(key, Kept { tick, bytes, hot, entry });
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

/// Keeps `entry`, of `bytes`, within the budget; a `hot` one (read on
/// every message) before the others.
pub fn keep(key: Key, bytes: usize, hot: bool, entry: Box<dyn Any + Send>) {
  let budget = budget::get();
  let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
  guard.get_or_insert_with(Cache::default).keep(key, bytes, hot, entry, budget);
}

/// The room left in the budget, in bytes: what an entry may take without
/// pushing another out.
pub fn free() -> usize {
  let budget = budget::get();
  let guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
  budget.saturating_sub(guard.as_ref().map_or(0, |c| c.used))
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
      c.keep(key(n), 100, false, Box::new(()), 350);
    }
    // The fourth pushed out the first.
    assert_eq!(keys(&c), ["/j1/t.jsonl", "/j2/t.jsonl", "/j3/t.jsonl"]);
    assert_eq!(c.used, 300);
    // A use moves an entry to the front: taken, then kept again.
    let got = c.take(&key(1), 350).expect("kept");
    c.keep(key(1), 100, false, got, 350);
    c.keep(key(4), 150, false, Box::new(()), 350);
    assert_eq!(
      keys(&c),
      ["/j1/t.jsonl", "/j3/t.jsonl", "/j4/t.jsonl"],
      "the least recently used went"
    );
    assert_eq!(c.used, 350);
    // An entry larger than the budget is not kept, and evicts nothing.
    c.keep(key(5), 351, false, Box::new(()), 350);
    assert_eq!(keys(&c), ["/j1/t.jsonl", "/j3/t.jsonl", "/j4/t.jsonl"]);
    // One that grew past it is dropped, its old size no longer counted.
    c.keep(key(1), 400, false, Box::new(()), 350);
    assert_eq!(
      (keys(&c), c.used),
      (vec!["/j3/t.jsonl".to_string(), "/j4/t.jsonl".to_string()], 250)
    );
    // A budget of 0 keeps nothing.
    c.keep(key(6), 1, false, Box::new(()), 0);
    assert!(c.take(&key(6), 0).is_none());
  }

  #[test]
  fn a_dropped_entry_read_again_finds_its_room_made_first() {
    let mut c = Cache::default();
    let key = |n: u32| (TypeId::of::<()>(), format!("/j{n}/t.jsonl"));
    for n in 0..3 {
      c.keep(key(n), 100, false, Box::new(()), 300);
    }
    // j3 pushes out j0, whose size is remembered.
    c.keep(key(3), 100, false, Box::new(()), 300);
    assert_eq!(c.dropped.get(&key(0)), Some(&(100, false)));
    // j0's miss drops j1 before its fold is made again, not after.
    assert!(c.take(&key(0), 300).is_none());
    assert_eq!(c.used, 200);
    assert!(!c.map.contains_key(&key(1)));
    // A miss with nothing remembered drops nothing.
    assert!(c.take(&key(9), 300).is_none());
    assert_eq!(c.used, 200);
  }

  #[test]
  fn room_is_made_by_the_fewest_entries() {
    let mut c = Cache::default();
    let key = |n: u32| (TypeId::of::<()>(), format!("/j{n}/t.jsonl"));
    // The least recently used is nearly empty: dropping it frees nothing
    // worth its whole read, so the next one alone makes the room (#66).
    c.keep(key(0), 1, false, Box::new(()), 100);
    c.keep(key(1), 40, false, Box::new(()), 100);
    c.keep(key(2), 50, false, Box::new(()), 100);
    c.keep(key(3), 30, false, Box::new(()), 100);
    assert!(c.map.contains_key(&key(0)), "the small one was spared");
    assert!(!c.map.contains_key(&key(1)));
    assert!(c.map.contains_key(&key(2)));
    assert_eq!(c.used, 81);
  }

  #[test]
  fn a_fold_read_on_every_message_is_kept_before_the_others() {
    let mut c = Cache::default();
    let key = |n: u32| (TypeId::of::<()>(), format!("/j{n}/t.jsonl"));
    c.keep(key(0), 30, true, Box::new(()), 100);
    // Not hot and too large for the room beside the hot one: not kept,
    // and nothing evicted for it.
    c.keep(key(1), 80, false, Box::new(()), 100);
    assert!(c.map.contains_key(&key(0)) && !c.map.contains_key(&key(1)));
    assert!(c.dropped.is_empty());
    // A hot one evicts the others first, though the hot one is older.
    c.keep(key(2), 50, false, Box::new(()), 100);
    c.keep(key(3), 40, true, Box::new(()), 100);
    assert!(c.map.contains_key(&key(0)) && c.map.contains_key(&key(3)));
    assert!(!c.map.contains_key(&key(2)));
    assert_eq!((c.used, c.hot), (70, 70));
    // A hot one may evict a hot one where nothing else is left.
    c.keep(key(4), 60, true, Box::new(()), 100);
    assert!(!c.map.contains_key(&key(0)), "the older hot one went");
    assert_eq!((c.used, c.hot), (100, 100));
  }
}
