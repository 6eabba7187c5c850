//! What an append cut short leaves: a line that `JSON.parse` refuses but
//! that is the beginning of a text it would accept (the input ends inside a
//! value, with nothing wrong before the end), as against corruption, which
//! no more bytes could mend. `judge` tells the two apart with it; the
//! grammar is `json`'s, `JSON.parse`'s exactly.

/// Whether `src`, which `JSON.parse` refuses, is the beginning of a text it
/// would accept: the text ends inside a value with nothing wrong before its
/// end. That is what an append cut short leaves (a kill in the middle of a
/// write of more than a page, a power loss), as against corruption, which
/// no more bytes could mend. Text of whitespace alone is not a cut.
pub fn is_cut(src: &str) -> bool {
  let b = src.as_bytes();
  // What the next byte (after whitespace) must be.
  #[derive(Clone, Copy, PartialEq)]
  enum Want {
    Value,
    /// Just after `[`.
    ValueOrClose,
    /// Just after `{`.
    KeyOrClose,
    /// After `,` in an object.
    Key,
    Colon,
    CommaOrClose,
    End,
  }
  let mut want = Want::Value;
  // true: inside an object.
  let mut stack: Vec<bool> = Vec::new();
  let mut i = 0;
  let mut started = false;
  loop {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
      i += 1;
    }
    let Some(&c) = b.get(i) else {
      return started && want != Want::End;
    };
    started = true;
    let after = |stack: &Vec<bool>| if stack.is_empty() { Want::End } else { Want::CommaOrClose };
    match (want, c) {
      (Want::ValueOrClose, b']') | (Want::KeyOrClose, b'}') => {
        stack.pop();
        i += 1;
        want = after(&stack);
      }
      (Want::Value | Want::ValueOrClose, b'{') => {
        stack.push(true);
        i += 1;
        want = Want::KeyOrClose;
      }
      (Want::Value | Want::ValueOrClose, b'[') => {
        stack.push(false);
        i += 1;
        want = Want::ValueOrClose;
      }
      (Want::Value | Want::ValueOrClose | Want::KeyOrClose | Want::Key, b'"') => match string_end(b, i + 1) {
        Scan::Done(end) => {
          i = end;
          want = if matches!(want, Want::KeyOrClose | Want::Key) {
            Want::Colon
          } else {
            after(&stack)
          };
        }
        Scan::Short => return true,
        Scan::Bad => return false,
      },
      (Want::Value | Want::ValueOrClose, b't' | b'f' | b'n') => {
        let word: &[u8] = match c {
          b't' => b"true",
          b'f' => b"false",
          _ => b"null",
        };
        let rest = &b[i..];
        if rest.len() < word.len() {
          return word.starts_with(rest);
        }
        if !rest.starts_with(word) {
          return false;
        }
        i += word.len();
        want = after(&stack);
      }
      (Want::Value | Want::ValueOrClose, b'-' | b'0'..=b'9') => match number_end(b, i) {
        Scan::Done(end) => {
          i = end;
          want = after(&stack);
        }
        Scan::Short => return true,
        Scan::Bad => return false,
      },
      (Want::Colon, b':') => {
        i += 1;
        want = Want::Value;
      }
      (Want::CommaOrClose, b',') => {
        i += 1;
        want = if stack.last() == Some(&true) { Want::Key } else { Want::Value };
      }
      (Want::CommaOrClose, b'}' | b']') if (c == b'}') == (stack.last() == Some(&true)) => {
        stack.pop();
        i += 1;
        want = after(&stack);
      }
      _ => return false,
    }
  }
}

/// How a token scanned for `is_cut` ends: where it ends, at the end of the
/// text before it could, or with a byte no text allows there.
enum Scan {
  Done(usize),
  Short,
  Bad,
}

/// The end of the string whose content starts at `i`.
fn string_end(b: &[u8], mut i: usize) -> Scan {
  loop {
    let Some(&c) = b.get(i) else { return Scan::Short };
    i += 1;
    match c {
      b'"' => return Scan::Done(i),
      b'\\' => match b.get(i) {
        None => return Scan::Short,
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 1,
        Some(b'u') => {
          i += 1;
          for _ in 0..4 {
            match b.get(i) {
              None => return Scan::Short,
              Some(h) if h.is_ascii_hexdigit() => i += 1,
              Some(_) => return Scan::Bad,
            }
          }
        }
        Some(_) => return Scan::Bad,
      },
      0x00..=0x1f => return Scan::Bad,
      _ => {}
    }
  }
}

/// The end of the number that starts at `i`; `Short` where the text ends
/// where a digit must follow (`-`, `1.`, `1e`, `1e+`).
fn number_end(b: &[u8], mut i: usize) -> Scan {
  let digits = |i: &mut usize| {
    let from = *i;
    while b.get(*i).is_some_and(u8::is_ascii_digit) {
      *i += 1;
    }
    *i > from
  };
  let need_digits = |i: &mut usize| match b.get(*i) {
    None => Err(Scan::Short),
    Some(d) if d.is_ascii_digit() => {
      digits(i);
      Ok(())
    }
    Some(_) => Err(Scan::Bad),
  };
  if b.get(i) == Some(&b'-') {
    i += 1;
  }
  match b.get(i) {
    None => return Scan::Short,
    Some(b'0') => i += 1,
    Some(b'1'..=b'9') => {
      digits(&mut i);
    }
    Some(_) => return Scan::Bad,
  }
  if b.get(i) == Some(&b'.') {
    i += 1;
    if let Err(s) = need_digits(&mut i) {
      return s;
    }
  }
  if let Some(b'e' | b'E') = b.get(i) {
    i += 1;
    if let Some(b'+' | b'-') = b.get(i) {
      i += 1;
    }
    if let Err(s) = need_digits(&mut i) {
      return s;
    }
  }
  Scan::Done(i)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ground::json::Doc;

  fn ok(s: &str) -> bool {
    Doc::parse(s).is_some()
  }

  #[test]
  fn a_cut_is_a_beginning_of_a_valid_text() {
    let whole = [
      r#"{"id":"m2","at":"2026-12-01T00:00:00.000Z","n":-1.5e+3,"o":[true,false,null,{"a":"\u00e9\n"}]}"#,
      "[1,[2,[3]],{}]",
      "\"s\"",
      "-0.25E-7",
      " { \"a\" : [ ] } ",
    ];
    for text in whole {
      assert!(ok(text));
      // Every beginning that does not parse is a cut (one that parses,
      // such as `-0` of `-0.25`, is a whole text).
      for end in 1..text.len() {
        let head = &text[..end];
        if !ok(head) && !head.trim().is_empty() {
          assert!(is_cut(head), "{head:?}");
        }
      }
    }
    for bad in [
      "{bad",
      "[1,]",
      "01",
      "1 2",
      "{\"a\"}",
      "\"\t",
      "\"\\x",
      "\"\\u12g",
      "tx",
      "nulx",
      "[1]]",
      "{\"a\":1}x",
      "1.x",
      "1e+x",
      "",
      " ",
      "\r",
      "\u{feff}{",
    ] {
      assert!(!ok(bad));
      assert!(!is_cut(bad), "{bad:?}");
    }
    let deep = "[".repeat(100_000);
    assert!(is_cut(&deep));
  }
}
