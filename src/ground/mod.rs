//! The ground every part stands on: errors, opening files, paths, the
//! text and dates JavaScript makes, the syncs, the JSON scanner and the
//! bounded flock wait. Nothing here imports a part, the reader engine or the
//! operator's modules; each file uses only its siblings.

pub mod durable;
pub mod error;
pub mod files;
pub mod flock;
pub mod freezer;
pub mod holder;
pub mod journal;
pub mod json;
pub mod lockers;
pub mod mark;
pub mod paths;
pub mod stamp;
pub mod text;
pub mod time;
