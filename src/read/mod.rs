//! The reader engine: what each reader parsed, kept per file and proved
//! unchanged, so a call parses only what was appended since (#10, #25,
//! #32). It stands on `ground` alone; the parts' folds (`records`) use it.

pub mod budget;
pub mod cache;
pub mod incremental;
pub mod keys;
pub mod part;
pub mod pieces;
pub mod proof;
pub mod room;
