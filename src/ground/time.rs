//! ECMAScript time values (milliseconds since the epoch, UTC) in the one
//! text form the journal writes: `Date.prototype.toISOString`. Numbers are
//! handled here; a `new Date(x)` of anything but a number needs V8's date
//! parser and stays at the boundary.

const MS_PER_DAY: i64 = 86_400_000;

/// `new Date(t).toISOString()` for a number `t`; `None` where JavaScript
/// throws "Invalid time value" (NaN, infinities, beyond ±8.64e15 ms).
pub fn iso(t: f64) -> Option<String> {
  // TimeClip: truncate toward zero; -0 becomes +0.
  if !t.is_finite() || t.abs() > 8.64e15 {
    return None;
  }
  let t = t.trunc() as i64;
  let days = t.div_euclid(MS_PER_DAY);
  let ms = t.rem_euclid(MS_PER_DAY);
  let (y, m, d) = civil_from_days(days);
  let year = if (0..=9999).contains(&y) {
    format!("{y:04}")
  } else if y < 0 {
    format!("-{:06}", -y)
  } else {
    format!("+{y:06}")
  };
  Some(format!(
    "{year}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
    ms / 3_600_000,
    ms / 60_000 % 60,
    ms / 1000 % 60,
    ms % 1000
  ))
}

/// Whether `s` is exactly `toISOString()` of some time value, which is what
/// `Number.isFinite(Date.parse(s)) && new Date(s).toISOString() === s`
/// decides: toISOString is one-to-one and Date.parse reads its output back.
pub fn is_canonical_iso(s: &str) -> bool {
  let b = s.as_bytes();
  let (year, rest): (i64, &[u8]) = match b.first() {
    Some(b'+' | b'-') if b.len() == 27 => {
      let Some(y) = digits(&b[1..7]) else { return false };
      (if b[0] == b'-' { -y } else { y }, &b[7..])
    }
    Some(_) if b.len() == 24 => {
      let Some(y) = digits(&b[..4]) else { return false };
      (y, &b[4..])
    }
    _ => return false,
  };
  // -MM-DDTHH:mm:ss.sssZ
  let shape = [b'-', 0, 0, b'-', 0, 0, b'T', 0, 0, b':', 0, 0, b':', 0, 0, b'.', 0, 0, 0, b'Z'];
  if rest.len() != shape.len()
    || rest
      .iter()
      .zip(shape)
      .any(|(&c, want)| if want == 0 { !c.is_ascii_digit() } else { c != want })
  {
    return false;
  }
  let field = |at: usize, len: usize| digits(&rest[at..at + len]).unwrap_or(-1);
  let (month, day, hour, minute, second, milli) = (field(1, 2), field(4, 2), field(7, 2), field(10, 2), field(13, 2), field(16, 3));
  if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 59 {
    return false;
  }
  let t = days_from_civil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + milli;
  iso(t as f64).as_deref() == Some(s)
}

fn digits(b: &[u8]) -> Option<i64> {
  b.iter()
    .try_fold(0i64, |acc, &c| c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0')))
}

fn days_in_month(y: i64, m: i64) -> i64 {
  match m {
    2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
    2 => 28,
    4 | 6 | 9 | 11 => 30,
    _ => 31,
  }
}

// Howard Hinnant's civil-from-days and its inverse (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
  let z = z + 719_468;
  let era = z.div_euclid(146_097);
  let doe = z.rem_euclid(146_097);
  let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
  let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  let mp = (5 * doy + 2) / 153;
  let d = doy - (153 * mp + 2) / 5 + 1;
  let m = if mp < 10 { mp + 3 } else { mp - 9 };
  (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
  let y = if m <= 2 { y - 1 } else { y };
  let era = y.div_euclid(400);
  let yoe = y.rem_euclid(400);
  let mp = if m > 2 { m - 3 } else { m + 9 };
  let doy = (153 * mp + 2) / 5 + d - 1;
  let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn iso_matches_to_iso_string() {
    assert_eq!(iso(0.0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
    assert_eq!(iso(-0.0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
    assert_eq!(iso(1709251199000.0).as_deref(), Some("2024-02-29T23:59:59.000Z"));
    assert_eq!(iso(-1.5).as_deref(), Some("1969-12-31T23:59:59.999Z"));
    assert_eq!(iso(-62198755200000.0 - 86400000.0).as_deref(), Some("-000002-12-31T00:00:00.000Z"));
    assert_eq!(iso(8.64e15).as_deref(), Some("+275760-09-13T00:00:00.000Z"));
    assert_eq!(iso(-8.64e15).as_deref(), Some("-271821-04-20T00:00:00.000Z"));
    assert_eq!(iso(8.64e15 + 1.0), None);
    assert_eq!(iso(f64::NAN), None);
  }

  #[test]
  fn canonical_iso() {
    assert!(is_canonical_iso("2021-01-01T00:00:00.000Z"));
    assert!(is_canonical_iso("2024-02-29T23:59:59.999Z"));
    assert!(is_canonical_iso("+275760-09-13T00:00:00.000Z"));
    assert!(is_canonical_iso("-000001-12-31T00:00:00.000Z"));
    assert!(!is_canonical_iso("2023-02-29T00:00:00.000Z"));
    assert!(!is_canonical_iso("+002021-01-01T00:00:00.000Z"));
    assert!(!is_canonical_iso("-000000-01-01T00:00:00.000Z"));
    assert!(!is_canonical_iso("+275760-09-13T00:00:00.001Z"));
    assert!(!is_canonical_iso("2021-01-01T00:00:00Z"));
    assert!(!is_canonical_iso("2021-01-01T24:00:00.000Z"));
  }
}
