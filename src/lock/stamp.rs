//! What a judgement of a lock rests on: the inode a name held when it was
//! looked at (`Stamp`, the ground's), and the owner record read
//! (`Record`). The owner record's reader makes them, the removal compares
//! with them.

pub use crate::ground::stamp::Stamp;

/// The owner record a judgement rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
  /// No owner.json (`existsSync` false).
  Absent,
  /// The file the record was read from.
  File(Stamp),
  /// A record that could not be opened or read: it never allows a removal.
  Unread,
}

/// One lock as it was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Judged {
  /// `run.lock` itself when it was judged; `None` when nothing was there.
  pub lock: Option<Stamp>,
  pub record: Record,
}
