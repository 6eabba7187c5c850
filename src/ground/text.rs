//! JavaScript's own string rules where the reference relies on them:
//! `String.prototype.trim`'s whitespace, `Number.prototype.toString` and
//! Node's lossy UTF-8 decoding.

/// Whether `c` is removed by `String.prototype.trim` (WhiteSpace and
/// LineTerminator; not Rust's `char::is_whitespace`, which differs on
/// U+0085 and U+FEFF).
pub fn is_js_space(c: char) -> bool {
  matches!(
    c,
    '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
      ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
  )
}

/// `s.trim()`.
pub fn js_trim(s: &str) -> &str {
  s.trim_matches(is_js_space)
}

/// `String(n)` for a number (Number::toString(10)): the shortest digits
/// that round-trip, in plain notation from 1e-7 up to 1e21, otherwise in
/// exponent form.
pub fn js_number(n: f64) -> String {
  if n.is_nan() {
    return "NaN".into();
  }
  if n == 0.0 {
    return "0".into();
  }
  if n.is_infinite() {
    return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
  }
  let sign = if n < 0.0 { "-" } else { "" };
  // Rust's `{:e}` prints the shortest round-trip digits: d.ddde±x.
  let sci = format!("{:e}", n.abs());
  let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
  let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
  let k = digits.len() as i32;
  let e: i32 = exp.parse().unwrap_or(0);
  let point = e + 1; // the "n" of the spec: digits × 10^(n−k)
  let body = if k <= point && point <= 21 {
    format!("{digits}{}", "0".repeat((point - k) as usize))
  } else if 0 < point && point <= 21 {
    format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
  } else if -6 < point && point <= 0 {
    format!("0.{}{digits}", "0".repeat((-point) as usize))
  } else {
    let exp = point - 1;
    let exp = if exp >= 0 { format!("+{exp}") } else { exp.to_string() };
    if k == 1 {
      format!("{digits}e{exp}")
    } else {
      format!("{}.{}e{exp}", &digits[..1], &digits[1..])
    }
  };
  format!("{sign}{body}")
}

/// Node's `buffer.toString("utf8")`: each maximal invalid subpart becomes
/// one U+FFFD (WHATWG), which is also what Rust's lossy decoding does.
pub fn decode_utf8(bytes: Vec<u8>) -> String {
  match String::from_utf8(bytes) {
    Ok(s) => s,
    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
  }
}

/// `text` with its first letter upper case (a clause made a sentence).
pub fn capitalized(text: &str) -> String {
  let mut chars = text.chars();
  chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// Text from elsewhere (a process's command line) made safe to show on a
/// terminal: control characters as `\u{..}`, at most `max` characters, an
/// ellipsis where cut.
pub fn printable(text: &str, max: usize) -> String {
  let mut out = String::new();
  for (n, c) in text.chars().enumerate() {
    if n == max {
      out.push('…');
      break;
    }
    // Controls, and the format characters that reorder or hide text on a
    // terminal (bidi overrides and isolates, zero widths, separators).
    if c.is_control()
      || matches!(c, '\u{00ad}' | '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
    {
      out.push_str(&c.escape_unicode().to_string());
    } else {
      out.push(c);
    }
  }
  out
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn printable_escapes_controls_and_cuts() {
    assert_eq!(printable("node\x1b[2Jx", 100), "node\\u{1b}[2Jx");
    assert_eq!(printable("abcdef", 3), "abc…");
    assert_eq!(printable("a\u{202e}b", 9), "a\\u{202e}b");
  }

  #[test]
  fn numbers_print_as_javascript() {
    for (n, s) in [
      (1.0, "1"),
      (-0.0, "0"),
      (1e21, "1e+21"),
      (1e20, "100000000000000000000"),
      (2f64.powi(60), "1152921504606847000"),
      (1.5e-7, "1.5e-7"),
      (1e-6, "0.000001"),
      (123.456, "123.456"),
      (-42.0, "-42"),
      (f64::INFINITY, "Infinity"),
      (1.7976931348623157e308, "1.7976931348623157e+308"),
      (5e-324, "5e-324"),
    ] {
      assert_eq!(js_number(n), s);
    }
  }

  #[test]
  fn trim_is_javascript_trim() {
    assert_eq!(js_trim("\u{feff} a\u{a0}\u{2028}"), "a");
    assert_eq!(js_trim("\u{85}"), "\u{85}");
  }

  #[test]
  fn lossy_decoding_is_whatwg() {
    assert_eq!(
      decode_utf8(vec![b'a', 0xff, 0xed, 0xa0, 0x80, b'b']),
      "a\u{fffd}\u{fffd}\u{fffd}\u{fffd}b"
    );
    assert_eq!(decode_utf8(vec![0xf0, 0x9f, 0x98, b'x']), "\u{fffd}x");
  }
}
