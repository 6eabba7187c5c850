//! discord-journal: the Discord connector's journal (`journal.mjs`) as a
//! Node native addon. The journal logic lives in the modules named after
//! its parts and never touches napi types; `js` is the napi boundary.
// Cargo.toml's [lints] deny unwrap and expect; a test may use them.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

// `unsafe` belongs to the napi boundary alone: every other module forbids
// it, so the compiler refuses one anywhere else (forbid cannot be lifted
// below). The layers, each using only those listed after it (no circle):
// `operator` (the command's scans and repair), the parts (`lines`,
// `records`, `turns`, `stop`, `identity`, `lock`), `read` (the reader
// engine), `ground`. `js`, the napi boundary, stands above them all.
#[forbid(unsafe_code)]
pub mod operator;

#[forbid(unsafe_code)]
pub mod identity;
#[forbid(unsafe_code)]
pub mod lines;
#[forbid(unsafe_code)]
pub mod lock;
#[forbid(unsafe_code)]
pub mod records;
#[forbid(unsafe_code)]
pub mod stop;
#[forbid(unsafe_code)]
pub mod turns;

#[forbid(unsafe_code)]
pub mod read;

#[forbid(unsafe_code)]
pub mod ground;

mod js;

#[cfg(test)]
#[forbid(unsafe_code)]
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

    /// The handle of a journal in this directory.
    pub fn journal(&self) -> crate::ground::journal::Journal {
      crate::ground::journal::Journal::new(self.path())
    }
  }

  /// The text of each piece of `file`.
  pub fn texts(file: &[u8], pieces: &crate::read::incremental::Pieces) -> Vec<String> {
    pieces.iter().map(|p| String::from_utf8_lossy(p.bytes(file)).into_owned()).collect()
  }

  /// The names in the directory `dir`, sorted.
  pub fn names(dir: &str) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
      .expect("readdir")
      .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
      .collect();
    n.sort();
    n
  }

  /// Asserts that the file at `path` has mode 0600 under the umask.
  pub fn assert_0600(path: &str) {
    use std::os::unix::fs::PermissionsExt;
    let umask = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    nix::sys::stat::umask(umask);
    let mode = std::fs::metadata(path).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600 & !(umask.bits() as u32), "{path}");
  }

  impl Drop for TempDir {
    fn drop(&mut self) {
      let _ = std::fs::remove_dir_all(&self.0);
    }
  }
}
