//! A validating scanner for one JSON text, with `JSON.parse`'s grammar
//! (ECMA-404) exactly: whitespace is only space, tab, LF and CR; strings may
//! hold lone surrogate escapes; numbers of any size (`1e400` is Infinity);
//! nesting of any depth. It keeps what the journal's readers look at, the top
//! value and, for an object, its members (key, a scalar view of the value,
//! and where both are in the text), so the readers can decide without making
//! JavaScript objects, and hand V8 only the text of what they return.
//!
//! Containers are skipped with an explicit stack, never by recursion: a line
//! nested 100,000 deep must not overflow the native stack (JSON.parse accepts it).

use std::ops::Range;

/// The members of an object's inside (the text between its braces, as
/// an outbox line's members are kept), as `Doc::parse` finds them in the
/// object; `None` where that text is not a list of members.
pub fn members_of(inside: &[u8]) -> Option<Vec<Member>> {
  let mut p = Parser { b: inside, i: 0 };
  let mut members = Vec::new();
  loop {
    members.push(p.member()?);
    p.ws();
    match p.peek() {
      None => return Some(members),
      Some(b',') => p.i += 1,
      Some(_) => return None,
    }
  }
}

/// A string token: the span of its content between the quotes, and whether
/// it holds escapes (so it cannot be compared byte for byte).
#[derive(Clone, Debug)]
pub struct RawStr {
  pub span: Range<usize>,
  pub escaped: bool,
}

/// A member's value as the readers see it: scalars in full, containers by kind.
#[derive(Clone, Debug)]
pub enum Scalar {
  Null,
  Bool(bool),
  Num(f64),
  Str(RawStr),
  Arr,
  Obj,
}

#[derive(Clone, Debug)]
pub struct Member {
  pub key: RawStr,
  pub value: Scalar,
  /// `"key": value`, from the key's opening quote to the value's end.
  pub span: Range<usize>,
  /// The value's own text.
  pub value_span: Range<usize>,
}

/// The top value of a text.
#[derive(Clone, Debug)]
pub enum Top {
  Scalar(Scalar),
  Obj(Vec<Member>),
}

/// One parsed text and the source it points into.
#[derive(Debug)]
pub struct Doc<'a> {
  pub src: &'a str,
  pub top: Top,
}

impl<'a> Doc<'a> {
  /// `JSON.parse(src)`'s verdict; `None` where it throws.
  pub fn parse(src: &'a str) -> Option<Doc<'a>> {
    let mut p = Parser { b: src.as_bytes(), i: 0 };
    p.ws();
    let top = if p.peek() == Some(b'{') {
      Top::Obj(p.top_object()?)
    } else {
      Top::Scalar(p.value()?)
    };
    p.ws();
    (p.i == p.b.len()).then_some(Doc { src, top })
  }

  /// `value === null`.
  pub fn is_null(&self) -> bool {
    matches!(self.top, Top::Scalar(Scalar::Null))
  }

  /// What `value[key]` reads for a parsed value: an object's own member (the
  /// last of duplicates, as JSON.parse keeps it); `None` (undefined) for
  /// anything else. The caller decides what a `null` value means, since
  /// reading a property of null throws.
  pub fn get(&self, key: &str) -> Option<&Scalar> {
    match &self.top {
      Top::Obj(members) => members.iter().rev().find(|m| self.key_is(&m.key, key)).map(|m| &m.value),
      Top::Scalar(_) => None,
    }
  }

  /// The member itself, as `get` finds it.
  pub fn member(&self, key: &str) -> Option<&Member> {
    match &self.top {
      Top::Obj(members) => members.iter().rev().find(|m| self.key_is(&m.key, key)),
      Top::Scalar(_) => None,
    }
  }

  pub fn key_is(&self, raw: &RawStr, name: &str) -> bool {
    str_eq(self.src, raw, name)
  }

  /// `typeof value[key] === "string"` and its code units.
  pub fn get_str(&self, key: &str) -> Option<Vec<u16>> {
    match self.get(key) {
      Some(Scalar::Str(s)) => Some(units(self.src, s)),
      _ => None,
    }
  }

  /// The distinct own keys, as `Object.keys(value)` lists them for a parsed
  /// object (duplicates collapse); `None` for a value that is not an object.
  pub fn object_keys(&self) -> Option<Vec<Vec<u16>>> {
    let Top::Obj(members) = &self.top else { return None };
    let mut keys: Vec<Vec<u16>> = Vec::with_capacity(members.len());
    for m in members {
      let k = units(self.src, &m.key);
      if !keys.contains(&k) {
        keys.push(k);
      }
    }
    Some(keys)
  }
}

/// Whether a string token equals `name`, as `===` compares strings.
pub fn str_eq(src: &str, raw: &RawStr, name: &str) -> bool {
  if raw.escaped {
    units(src, raw).iter().copied().eq(name.encode_utf16())
  } else {
    &src[raw.span.clone()] == name
  }
}

/// The UTF-16 code units a string token stands for. Escapes of lone
/// surrogates stay lone, as in JavaScript.
pub fn units(src: &str, raw: &RawStr) -> Vec<u16> {
  let text = &src[raw.span.clone()];
  if !raw.escaped {
    return text.encode_utf16().collect();
  }
  let mut out = Vec::with_capacity(text.len());
  let mut chars = text.chars();
  while let Some(c) = chars.next() {
    if c != '\\' {
      let mut buf = [0u16; 2];
      out.extend_from_slice(c.encode_utf16(&mut buf));
      continue;
    }
    // The scanner admitted this token, so every escape is complete.
    let unit = match chars.next() {
      Some('b') => 0x08,
      Some('f') => 0x0c,
      Some('n') => 0x0a,
      Some('r') => 0x0d,
      Some('t') => 0x09,
      Some('u') => (0..4).fold(0u16, |acc, _| {
        (acc << 4) | chars.next().and_then(|h| h.to_digit(16)).unwrap_or(0) as u16
      }),
      Some(other) => other as u16,
      None => break,
    };
    out.push(unit);
  }
  out
}

struct Parser<'a> {
  b: &'a [u8],
  i: usize,
}

impl Parser<'_> {
  fn peek(&self) -> Option<u8> {
    self.b.get(self.i).copied()
  }

  fn ws(&mut self) {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
      self.i += 1;
    }
  }

  fn eat(&mut self, c: u8) -> Option<()> {
    (self.peek() == Some(c)).then(|| self.i += 1)
  }

  fn top_object(&mut self) -> Option<Vec<Member>> {
    self.eat(b'{')?;
    let mut members = Vec::new();
    self.ws();
    if self.eat(b'}').is_some() {
      return Some(members);
    }
    loop {
      members.push(self.member()?);
      self.ws();
      match self.peek()? {
        b',' => self.i += 1,
        b'}' => {
          self.i += 1;
          return Some(members);
        }
        _ => return None,
      }
    }
  }

  /// One `"key": value` of an object, whitespace before it skipped.
  fn member(&mut self) -> Option<Member> {
    self.ws();
    let start = self.i;
    let key = self.string()?;
    self.ws();
    self.eat(b':')?;
    self.ws();
    let value_start = self.i;
    let value = self.value()?;
    Some(Member {
      key,
      value,
      span: start..self.i,
      value_span: value_start..self.i,
    })
  }

  /// Any value; a container is validated and reported by kind only.
  fn value(&mut self) -> Option<Scalar> {
    match self.peek()? {
      b'{' => self.container().map(|()| Scalar::Obj),
      b'[' => self.container().map(|()| Scalar::Arr),
      b'"' => self.string().map(Scalar::Str),
      b't' => self.literal(b"true").map(|()| Scalar::Bool(true)),
      b'f' => self.literal(b"false").map(|()| Scalar::Bool(false)),
      b'n' => self.literal(b"null").map(|()| Scalar::Null),
      _ => self.number().map(Scalar::Num),
    }
  }

  fn literal(&mut self, word: &[u8]) -> Option<()> {
    self.b.get(self.i..self.i + word.len()).filter(|s| *s == word)?;
    self.i += word.len();
    Some(())
  }

  /// Validates one container of any depth with an explicit stack.
  fn container(&mut self) -> Option<()> {
    // true: inside an object
    let mut stack: Vec<bool> = Vec::new();
    loop {
      // At the start of a value.
      self.ws();
      match self.peek()? {
        c @ (b'{' | b'[') => {
          self.i += 1;
          let object = c == b'{';
          stack.push(object);
          self.ws();
          let close = if object { b'}' } else { b']' };
          if self.eat(close).is_some() {
            stack.pop();
          } else {
            if object {
              self.member_key()?;
            }
            continue;
          }
        }
        b'"' => {
          self.string()?;
        }
        b't' => self.literal(b"true")?,
        b'f' => self.literal(b"false")?,
        b'n' => self.literal(b"null")?,
        _ => {
          self.number()?;
        }
      }
      // After a value: close containers or move to the next element.
      loop {
        let Some(&object) = stack.last() else { return Some(()) };
        self.ws();
        match self.peek()? {
          b',' => {
            self.i += 1;
            if object {
              self.ws();
              self.member_key()?;
            }
            break;
          }
          b'}' if object => {
            self.i += 1;
            stack.pop();
          }
          b']' if !object => {
            self.i += 1;
            stack.pop();
          }
          _ => return None,
        }
      }
    }
  }

  fn member_key(&mut self) -> Option<()> {
    self.string()?;
    self.ws();
    self.eat(b':')
  }

  fn string(&mut self) -> Option<RawStr> {
    self.eat(b'"')?;
    let start = self.i;
    let mut escaped = false;
    loop {
      let c = self.peek()?;
      self.i += 1;
      match c {
        b'"' => {
          return Some(RawStr {
            span: start..self.i - 1,
            escaped,
          })
        }
        b'\\' => {
          escaped = true;
          match self.peek()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
            b'u' => {
              let hex = self.b.get(self.i + 1..self.i + 5)?;
              if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
              }
              self.i += 5;
            }
            _ => return None,
          }
        }
        0x00..=0x1f => return None,
        _ => {}
      }
    }
  }

  fn number(&mut self) -> Option<f64> {
    let start = self.i;
    self.eat(b'-');
    match self.peek()? {
      b'0' => self.i += 1,
      b'1'..=b'9' => self.digits(),
      _ => return None,
    }
    if self.eat(b'.').is_some() {
      self.peek().filter(u8::is_ascii_digit)?;
      self.digits();
    }
    if let Some(b'e' | b'E') = self.peek() {
      self.i += 1;
      if let Some(b'+' | b'-') = self.peek() {
        self.i += 1;
      }
      self.peek().filter(u8::is_ascii_digit)?;
      self.digits();
    }
    // The grammar above is a subset of what Rust's float parser takes, and
    // both round correctly, so the value is JSON.parse's (overflow: Infinity).
    std::str::from_utf8(&self.b[start..self.i]).ok()?.parse::<f64>().ok()
  }

  fn digits(&mut self) {
    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
      self.i += 1;
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn ok(s: &str) -> bool {
    Doc::parse(s).is_some()
  }

  #[test]
  fn grammar_matches_json_parse() {
    for good in [
      "0",
      "-0",
      "1e400",
      "-1.5E+3",
      "\"\\ud800\"",
      " {\"a\" : [1, {\"b\":[]}] } ",
      "null",
      "true",
      "\"\u{2028}\"",
      "[]",
      "{}",
      "\r\n\t1",
      "{\"a\":1,\"a\":2}",
    ] {
      assert!(ok(good), "{good}");
    }
    for bad in [
      "",
      " ",
      "01",
      "1.",
      ".1",
      "+1",
      "1e",
      "-",
      "[1,]",
      "{\"a\":1,}",
      "{a:1}",
      "'a'",
      "\"\t\"",
      "\"\\x\"",
      "\"\\u12\"",
      "tru",
      "nul",
      "1 2",
      "\u{feff}1",
      "[",
      "{\"a\"}",
      "NaN",
      "Infinity",
      "\u{a0}1",
      "[1]]",
    ] {
      assert!(!ok(bad), "{bad:?}");
    }
  }

  #[test]
  fn deep_nesting_does_not_recurse() {
    let depth = 200_000;
    let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(ok(&text));
    let text = format!("{{\"a\":{}1{}}}", "[".repeat(depth), "]".repeat(depth));
    assert!(ok(&text));
    assert!(!ok(&"[".repeat(depth)));
  }

  #[test]
  fn members_last_duplicate_wins() {
    let d = Doc::parse(r#"{"id":"a","id":"b","n":-0,"o":{"x":1}}"#).expect("valid");
    assert_eq!(d.get_str("id"), Some("b".encode_utf16().collect()));
    assert!(matches!(d.get("n"), Some(Scalar::Num(n)) if n.is_sign_negative()));
    assert!(matches!(d.get("o"), Some(Scalar::Obj)));
    assert!(d.get("missing").is_none());
  }

  #[test]
  fn escapes_decode_to_code_units() {
    let d = Doc::parse(r#"{"\u0069d":"\ud83d\ude00\ud800\n\/"}"#).expect("valid");
    assert_eq!(d.get_str("id"), Some(vec![0xd83d, 0xde00, 0xd800, 0x0a, b'/' as u16]));
  }
}
