//! A set of strings as `===` compares them (by UTF-16 code units), kept in
//! one arena: what the read cache keeps per outbox nonce and per admitted
//! id (#32). A map of owned strings costs an allocation per key (a 19-unit
//! id took about 100 bytes); here a key is its bytes, its start, and a
//! 4-byte slot of the table.
//!
//! A key's units are written one unit at a time, each as UTF-8 writes a
//! code point below U+10000 (1 to 3 bytes, a surrogate as any other
//! unit): a prefix-free code, so two keys' bytes are equal exactly when
//! their units are, lone surrogates included.

use std::hash::BuildHasher;

use hashbrown::HashTable;

#[derive(Clone, Default)]
pub struct Keys {
  bytes: Vec<u8>,
  /// Where key `i` starts in `bytes`; it ends where `i + 1` starts.
  starts: Vec<usize>,
  /// Indexes of keys, by the hash of their bytes.
  table: HashTable<u32>,
  hasher: std::hash::RandomState,
}

/// Appends `units`' code to `out`.
fn encode(units: &[u16], out: &mut Vec<u8>) {
  for &u in units {
    match u {
      0..0x80 => out.push(u as u8),
      0x80..0x800 => out.extend_from_slice(&[0xc0 | (u >> 6) as u8, 0x80 | (u & 0x3f) as u8]),
      _ => out.extend_from_slice(&[0xe0 | (u >> 12) as u8, 0x80 | ((u >> 6) & 0x3f) as u8, 0x80 | (u & 0x3f) as u8]),
    }
  }
}

impl Keys {
  pub fn len(&self) -> usize {
    self.starts.len()
  }

  pub fn is_empty(&self) -> bool {
    self.starts.is_empty()
  }

  fn key(&self, i: usize) -> &[u8] {
    let start = self.starts.get(i).copied().unwrap_or(0);
    let end = self.starts.get(i + 1).copied().unwrap_or(self.bytes.len());
    self.bytes.get(start..end).unwrap_or_default()
  }

  /// The index of `units`, added if it is new, and whether it was; `None`
  /// past 2^32 keys (memory runs out long before).
  pub fn insert(&mut self, units: &[u16]) -> Option<(usize, bool)> {
    let start = self.bytes.len();
    encode(units, &mut self.bytes);
    let hash = self.hasher.hash_one(&self.bytes[start..]);
    let found = {
      let (bytes, starts) = (&self.bytes, &self.starts);
      let key = |i: usize| {
        let s = starts.get(i).copied().unwrap_or(0);
        let e = starts.get(i + 1).copied().unwrap_or(start);
        bytes.get(s..e).unwrap_or_default()
      };
      self.table.find(hash, |&i| key(i as usize) == &bytes[start..]).copied()
    };
    if let Some(i) = found {
      self.bytes.truncate(start);
      return Some((i as usize, false));
    }
    let Ok(i) = u32::try_from(self.starts.len()) else {
      self.bytes.truncate(start);
      return None;
    };
    self.starts.push(start);
    let (bytes, starts, hasher) = (&self.bytes, &self.starts, &self.hasher);
    self.table.insert_unique(hash, i, |&j| {
      let s = starts.get(j as usize).copied().unwrap_or(0);
      let e = starts.get(j as usize + 1).copied().unwrap_or(bytes.len());
      hasher.hash_one(bytes.get(s..e).unwrap_or_default())
    });
    Some((i as usize, true))
  }

  /// The index of `units`, if it is a key.
  pub fn find(&self, units: &[u16]) -> Option<usize> {
    let mut code = Vec::with_capacity(units.len());
    encode(units, &mut code);
    let hash = self.hasher.hash_one(&code[..]);
    self.table.find(hash, |&i| self.key(i as usize) == &code[..]).map(|&i| i as usize)
  }

  /// Gives back the room the arena, its starts and the table grew into.
  pub fn shrink(&mut self) {
    crate::read::room::shrink(&mut self.bytes);
    crate::read::room::shrink(&mut self.starts);
    let (bytes, starts, hasher) = (&self.bytes, &self.starts, &self.hasher);
    self.table.shrink_to(crate::read::room::spare(self.table.len()), |&j| {
      let s = starts.get(j as usize).copied().unwrap_or(0);
      let e = starts.get(j as usize + 1).copied().unwrap_or(bytes.len());
      hasher.hash_one(bytes.get(s..e).unwrap_or_default())
    });
  }

  /// The bytes held on the heap.
  pub fn heap(&self) -> usize {
    // A table slot is its value and one control byte.
    self.bytes.capacity() + self.starts.capacity() * size_of::<usize>() + self.table.capacity() * (size_of::<u32>() + 1)
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn u(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
  }

  #[test]
  fn equal_exactly_when_the_units_are() {
    let mut k = Keys::default();
    assert_eq!(k.insert(&u("a")), Some((0, true)));
    assert_eq!(k.insert(&u("ab")), Some((1, true)));
    assert_eq!(k.insert(&u("a")), Some((0, false)));
    assert_eq!(k.insert(&u("")), Some((2, true)));
    assert_eq!(k.insert(&u("")), Some((2, false)));
    // A pair, its two halves alone, and the halves the other way round.
    let pair = u("😀");
    assert_eq!(k.insert(&pair), Some((3, true)));
    assert_eq!(k.insert(&pair[..1]), Some((4, true)));
    assert_eq!(k.insert(&pair[1..]), Some((5, true)));
    assert_eq!(k.insert(&[pair[1], pair[0]]), Some((6, true)));
    assert_eq!(k.insert(&u("é\u{7ff}\u{800}\u{ffff}")), Some((7, true)));
    assert_eq!(k.insert(&u("é\u{7ff}\u{800}\u{ffff}")), Some((7, false)));
    assert_eq!(k.find(&pair), Some(3));
    assert_eq!(k.find(&u("b")), None);
    assert_eq!(k.len(), 8);
  }

  #[test]
  fn many_keys_grow_the_table_and_stay_found() {
    let mut k = Keys::default();
    for i in 0..10_000 {
      assert_eq!(k.insert(&u(&format!("{i}"))), Some((i, true)));
    }
    for i in (0..10_000).rev() {
      assert_eq!(k.find(&u(&format!("{i}"))), Some(i));
      assert_eq!(k.insert(&u(&format!("{i}"))), Some((i, false)));
    }
    // Its bytes, start and slot, and the room each vector has grown to.
    assert!(k.heap() < 10_000 * 32, "{} bytes", k.heap());
  }
}
