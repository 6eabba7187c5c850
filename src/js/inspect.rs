//! Internal exports for the operator's command (not journal.mjs's, and not
//! in entry.js, like `appendLine`): the scans of `src/inspect.rs`, as JSON
//! text that the command parses. A refusal is thrown as the readers throw
//! it.

use napi::Env;
use napi_derive::napi;

use super::records::JournalFile;
use super::{export, Dir, Val};
use crate::inspect;

/// Every line of a record file judged; `null` when there is no file.
#[napi(js_name = "scanLines")]
pub fn scan_lines<'e>(env: &'e Env, dir: Dir<'e>, file: JournalFile) -> napi::Result<Val<'e>> {
  export(env, |js| match inspect::scan_lines(dir.fs(), file.name())? {
    Some(scan) => js.str(&scan.to_json().to_string()),
    None => js.null(),
  })
}

/// Every turn record judged.
#[napi(js_name = "scanTurns")]
pub fn scan_turns<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| js.str(&inspect::scan_turns(dir.fs())?.to_json().to_string()))
}
