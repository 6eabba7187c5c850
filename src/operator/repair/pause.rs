//! The repair's test seam: with `DISCORD_JOURNAL_REPAIR_PAUSE` naming a
//! step (`held`, `quarantined <file>`, `written <file>`, `mended <file>`),
//! the process says so on stderr when it gets there and waits to be
//! killed, so that a test can kill a repair between any two of its steps
//! (`__test__/repair.test.mjs`). Read once, as the other settings are: the
//! environment of the process at its first step.

use std::sync::OnceLock;

pub const VAR: &str = "DISCORD_JOURNAL_REPAIR_PAUSE";

/// Waits here for ever when the seam names `step` (a prefix of it); else
/// returns at once. A value that is not UTF-8 names no step.
pub fn at(step: &str) {
  static WANT: OnceLock<Option<String>> = OnceLock::new();
  let want = WANT.get_or_init(|| std::env::var_os(VAR).and_then(|v| v.into_string().ok()));
  if want.as_deref().is_some_and(|w| step.starts_with(w)) {
    eprintln!("repair paused: {step}");
    loop {
      std::thread::sleep(std::time::Duration::from_secs(60));
    }
  }
}
