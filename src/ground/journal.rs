//! The journal handle (#54): one binding's journal directory as the caller
//! gave it, made once per export call at the napi boundary and lent to
//! every part. Each name the journal holds becomes a path here and nowhere
//! else, joined as Node's `path.join` joins it (the paths are part of the
//! contract), and a refusal names the journal by the handle's label, never
//! by host path (#1873). It opens no descriptor of its own: the reference
//! opens none, and a call at the descriptor limit (EMFILE) must answer as
//! journal.mjs's does.

use std::sync::OnceLock;

use super::paths::{journal_label, under};

/// The lock directory, its owner record, the guard's directory, the brake
/// and the brake's own lock, by their names in the journal.
pub const LOCK: &str = "run.lock";
pub const OWNER: &str = "owner.json";
pub const TURNS: &str = "turns";
pub const STOP: &str = "STOP";
pub const STOP_LOCK: &str = ".stop.lock";

pub struct Journal {
  dir: String,
  label: OnceLock<String>,
}

impl Journal {
  /// `dir` is `String(dir)`, as the reference joins it.
  pub fn new(dir: impl Into<String>) -> Self {
    Journal {
      dir: dir.into(),
      label: OnceLock::new(),
    }
  }

  /// The directory as given.
  pub fn dir(&self) -> &str {
    &self.dir
  }

  /// How a refusal names the binding: `discord/<name> under the data root`.
  pub fn label(&self) -> &str {
    self.label.get_or_init(|| journal_label(&self.dir))
  }

  /// How a refusal names one of its entries: `run.lock in discord/<name>…`.
  pub fn named(&self, entry: &str) -> String {
    format!("{entry} in {}", self.label())
  }

  /// `join(dir, name)`: a record file, or any entry by its name.
  pub fn file(&self, name: &str) -> String {
    under(&self.dir, &[name])
  }

  /// `join(dir, ".")`: the directory itself, normalized as Node does.
  pub fn itself(&self) -> String {
    under(&self.dir, &["."])
  }

  pub fn turns(&self) -> String {
    under(&self.dir, &[TURNS])
  }

  /// `join(dir, "turns", name)`.
  pub fn turn(&self, name: &str) -> String {
    under(&self.dir, &[TURNS, name])
  }

  pub fn lock(&self) -> String {
    under(&self.dir, &[LOCK])
  }

  /// `join(dir, "run.lock", name)`: the owner record or a claim's temporary file.
  pub fn in_lock(&self, name: &str) -> String {
    under(&self.dir, &[LOCK, name])
  }

  pub fn owner(&self) -> String {
    self.in_lock(OWNER)
  }

  pub fn stop(&self) -> String {
    under(&self.dir, &[STOP])
  }

  pub fn stop_lock(&self) -> String {
    under(&self.dir, &[STOP_LOCK])
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn every_name_is_node_s_join_and_the_label_is_the_binding_s() {
    let j = Journal::new("/data/discord/alpha/");
    assert_eq!(j.owner(), "/data/discord/alpha/run.lock/owner.json");
    assert_eq!(j.turn("x.json"), "/data/discord/alpha/turns/x.json");
    assert_eq!(j.itself(), "/data/discord/alpha");
    assert_eq!(j.named(STOP), "STOP in discord/alpha under the data root");
    assert_eq!(Journal::new("a/../b").stop_lock(), "b/.stop.lock");
    assert_eq!(Journal::new("/x/Not A Name").label(), "the binding's journal directory");
  }
}
