//! discord-journal: the Discord connector's journal (`journal.mjs`) as a
//! Node native addon. The journal logic lives in the modules named after
//! its parts and never touches napi types; `js` is the napi boundary.
// Cargo.toml's [lints] deny unwrap and expect; a test may use them.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

// The layers, each using only those listed after it (no circle):
// `operator` (the command's scans and repair), the parts (`lines`,
// `records`, `turns`, `stop`, `identity`, `lock`), `read` (the reader
// engine), `ground`. `js`, the napi boundary, stands above them all.
pub mod operator;

pub mod identity;
pub mod lines;
pub mod lock;
pub mod records;
pub mod stop;
pub mod turns;

pub mod read;

pub mod ground;

mod js;

#[cfg(test)]
pub(crate) mod testutil {
  /// A temporary directory removed on drop.
  pub struct TempDir(std::path::PathBuf);

  impl TempDir {
    pub fn new() -> Self {
      use std::sync::atomic::{AtomicUsize, Ordering};
      static N: AtomicUsize = AtomicUsize::new(0);
      let p = std::env::temp_dir().join(format!(
        "discord-journal-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
      ));
      std::fs::create_dir_all(&p).expect("temp dir");
      TempDir(p)
    }

    pub fn path(&self) -> &str {
      self.0.to_str().expect("utf-8 temp dir")
    }
  }

  impl Drop for TempDir {
    fn drop(&mut self) {
      let _ = std::fs::remove_dir_all(&self.0);
    }
  }
}
