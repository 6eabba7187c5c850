//! What a fold keeps of a line's text: a `Piece`, a span of the file's
//! bytes where the line was valid UTF-8 (so its bytes are its text), else
//! the decoded text; and `Pieces`, many of them packed (#32).

use std::ops::Range;

/// Where a piece of text is: a span of the file's bytes when the line was
/// valid UTF-8 (so its bytes are its text), else the decoded text itself.
#[derive(Clone, Debug)]
pub enum Piece {
  Span(Range<usize>),
  Owned(Box<str>),
}

impl Piece {
  /// Its range of the file, when it is one.
  pub fn range(&self) -> Option<Range<usize>> {
    match self {
      Piece::Span(r) => Some(r.clone()),
      Piece::Owned(_) => None,
    }
  }

  pub fn bytes<'a>(&'a self, file: &'a [u8]) -> &'a [u8] {
    match self {
      Piece::Span(r) => file.get(r.clone()).unwrap_or_default(),
      Piece::Owned(s) => s.as_bytes(),
    }
  }
}

/// Pieces as a fold keeps them: 12 bytes each (a span's start and length
/// in three u32s, where a `Piece` takes 24); the rare other piece (the
/// decoded text of a line that is not valid UTF-8, a span of 4 GiB) aside
/// (#32).
#[derive(Clone, Default)]
pub struct Pieces {
  spans: Vec<[u32; 3]>,
  aside: Vec<Piece>,
}

/// The length that marks a piece kept aside: its start is its place there.
const ASIDE: u32 = u32::MAX;

impl Pieces {
  pub fn push(&mut self, p: Piece) {
    let span = match &p {
      Piece::Span(r) => u32::try_from(r.len())
        .ok()
        .filter(|&n| n != ASIDE)
        .map(|len| [r.start as u32, (r.start as u64 >> 32) as u32, len]),
      Piece::Owned(_) => None,
    };
    let span = span.unwrap_or_else(|| {
      let at = self.aside.len() as u64;
      self.aside.push(p);
      [at as u32, (at >> 32) as u32, ASIDE]
    });
    self.spans.push(span);
  }

  pub fn get(&self, i: usize) -> Option<Piece> {
    let &[lo, hi, len] = self.spans.get(i)?;
    let at = ((hi as u64) << 32 | lo as u64) as usize;
    Some(match len {
      ASIDE => self.aside.get(at)?.clone(),
      _ => Piece::Span(at..at + len as usize),
    })
  }

  /// Piece `i`'s bytes: of `file`, or its own text.
  pub fn bytes<'a>(&'a self, i: usize, file: &'a [u8]) -> &'a [u8] {
    match self.spans.get(i) {
      Some(&[at, _, ASIDE]) => self.aside.get(at as usize).map_or(&[], |p| p.bytes(file)),
      Some(_) => self.get(i).and_then(|p| file.get(p.range()?)).unwrap_or_default(),
      None => &[],
    }
  }

  /// Piece `i`'s range of the file, unless it was kept aside.
  pub fn span(&self, i: usize) -> Option<Range<usize>> {
    self.get(i)?.range()
  }

  pub fn len(&self) -> usize {
    self.spans.len()
  }

  pub fn is_empty(&self) -> bool {
    self.spans.is_empty()
  }

  pub fn iter(&self) -> impl Iterator<Item = Piece> + '_ {
    (0..self.len()).filter_map(|i| self.get(i))
  }

  pub fn shrink(&mut self) {
    crate::read::room::shrink(&mut self.spans);
    crate::read::room::shrink(&mut self.aside);
  }

  /// The bytes held on the heap.
  pub fn heap(&self) -> usize {
    let text = |p: &Piece| match p {
      Piece::Owned(s) => s.len(),
      Piece::Span(_) => 0,
    };
    self.spans.capacity() * 12 + self.aside.capacity() * size_of::<Piece>() + self.aside.iter().map(text).sum::<usize>()
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn pieces_are_kept_as_they_were_given() {
    let big = 5usize << 30;
    let given = [
      Piece::Span(3..9),
      Piece::Owned("\u{fffd}x".into()),
      Piece::Span(big..big + 7),
      Piece::Span(0..0),
      Piece::Span(1..1 + big),
      Piece::Span(10..10 + u32::MAX as usize),
    ];
    let mut kept = Pieces::default();
    for p in &given {
      kept.push(p.clone());
    }
    let back: Vec<String> = kept.iter().map(|p| format!("{p:?}")).collect();
    let want: Vec<String> = given.iter().map(|p| format!("{p:?}")).collect();
    assert_eq!(back, want);
    let file = b"0123456789";
    assert_eq!(kept.bytes(0, file), b"345678");
    assert_eq!(kept.bytes(1, file), "\u{fffd}x".as_bytes());
    assert_eq!(kept.bytes(2, file), b"", "past the bytes given");
    assert_eq!((kept.span(0), kept.span(1)), (Some(3..9), None));
    assert_eq!(kept.aside.len(), 3, "the decoded text and the two spans of 4 GiB or more");
  }
}
