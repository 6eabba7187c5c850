//! The operator's command's logic: the scans that judge every line and
//! turn record (`judge`, `inspect`, `cut`) and `repair`. Not `journal.mjs`'s: no
//! part, no reader and nothing of the ground imports from here.

pub mod cut;
pub mod inspect;
pub mod judge;
pub mod repair;
