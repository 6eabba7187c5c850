//! The napi boundary: argument conversion, the JavaScript semantics that
//! need V8, and the one place a Rust error becomes a JavaScript exception.
//! The journal logic is in the crate's other modules, which know nothing
//! of napi; this layer mirrors them, one file of exports per part:
//!
//! | exports of | file | logic |
//! | --- | --- | --- |
//! | inbox, outbox, drops, admissions, notices, reloads | `records.rs` | `src/records.rs`, `src/lines.rs` |
//! | turn records | `turns.rs` | `src/turns.rs` |
//! | STOP and processing stops | `stop.rs` | `src/stop.rs` |
//! | the run lock | `lock.rs` | `src/lock/` |
//! | process identity | `identity.rs` | `src/identity/` |
//! | `utcDate` | `time.rs` | `src/ground/time.rs` |
//! | the command's scans (internal) | `inspect.rs` | `src/operator/inspect.rs` |
//! | constants, `__setup` | `setup.rs` | |
//!
//! and the layer itself, each file using only those below it:
//!
//! 1. `raw.rs` and `strings.rs`: the N-API calls (and why they are not
//!    napi-rs's), knowing only N-API, `Val` (`value.rs`) and a file's
//!    shared bytes; a failed call is a `Fault`;
//! 2. `thrown.rs`: why a call did not return (`Thrown`, made of a `Fault`
//!    or a journal error);
//! 3. `realm.rs`: per-environment state, kept as instance data;
//! 4. `export.rs`: how an export is written, and its one exit;
//! 5. `semantics.rs` (JavaScript semantics), `parts.rs` (the readers'
//!    parse-in-parts engine), `args.rs` (argument conversion);
//! 6. the files of exports above, and `setup.rs`.
//!
//! The paths and `journalLabel` are index.js's own (see there).

#![cfg_attr(test, allow(dead_code))]

mod args;
mod export;
mod heap;
mod identity;
mod inspect;
mod lock;
mod parts;
mod raw;
mod realm;
mod records;
mod semantics;
mod setup;
mod stop;
mod strings;
mod thrown;
mod time;
mod turns;
mod value;

pub use args::{date_arg, number_arg, options, Dir};
pub use export::{after, export, keep};
pub use parts::Texts;
pub use raw::Js;
pub use thrown::{out_of_memory, JsResult, Thrown};
pub use value::Val;
