//! Per-environment state: the values the binding keeps for the env it was
//! loaded in (the main thread, each Worker), held as the env's N-API
//! instance data and freed with it, references and all, when the env is
//! torn down (#12: a thread-local leaked one per Worker). `setup.rs`
//! makes it, at `__setup`.

use napi::sys;

use super::raw::Kept;
use super::{Js, JsResult, Thrown, Val};
use crate::ground::error::JournalError;

/// `DiscordError` and Node's `path.join` (registered by index.js) and the
/// built-ins the reference calls. Built-ins are taken once, at load, so a
/// later monkey-patch of JSON, String, Set or Map does not reach us. Date
/// is the exception: it is looked up on every use, because tests fake the
/// clock by replacing it.
pub struct Realm {
  pub join: sys::napi_ref,
  pub discord_error: sys::napi_ref,
  pub stringify: sys::napi_ref,
  pub parse: sys::napi_ref,
  pub string: sys::napi_ref,
  pub set: sys::napi_ref,
  pub map: sys::napi_ref,
  pub stringify_turn: sys::napi_ref,
  pub map_of_pairs: sys::napi_ref,
  pub concat: sys::napi_ref,
  /// index.js's `ENDED` flag, the first byte of `ended_array`: raised when
  /// a call finds that JavaScript can no longer run, so that index.js
  /// stops the thread at once (see there).
  pub ended: Option<*mut u8>,
  pub ended_array: sys::napi_ref,
}

impl Kept for Realm {
  /// Every reference the realm holds, to be deleted with it.
  fn refs(&self) -> Vec<sys::napi_ref> {
    vec![
      self.join,
      self.discord_error,
      self.stringify,
      self.parse,
      self.string,
      self.set,
      self.map,
      self.stringify_turn,
      self.map_of_pairs,
      self.concat,
      self.ended_array,
    ]
  }

  fn as_any(&self) -> &dyn std::any::Any {
    self
  }
}

impl<'e> Js<'e> {
  /// The realm of this call's env.
  pub fn realm(self) -> JsResult<&'e Realm> {
    self.instance::<Realm>().ok_or_else(|| Thrown::Journal(JournalError::not_loaded()))
  }
}

/// Raises index.js's ENDED flag, when this env has a realm.
pub fn raise_ended<'e>(js: Js<'e>) {
  if let Some(flag) = js.instance::<Realm>().and_then(|r| r.ended) {
    super::raw::raise_flag(flag);
  }
}

/// The realm of index.js's values (see there for `stringifyTurn` and
/// `mapOfPairs`) and the built-ins of this moment.
pub fn realm_of<'e>(js: Js<'e>, [discord_error, join, ended, stringify_turn, map_of_pairs]: [Val<'e>; 5]) -> JsResult<Realm> {
  let global = js.global()?;
  let json = js.get(global, "JSON")?;
  let stringify = js.get(json, "stringify")?;
  Ok(Realm {
    join: js.keep(join)?,
    discord_error: js.keep(discord_error)?,
    stringify: js.keep(stringify)?,
    parse: js.keep(js.get(json, "parse")?)?,
    string: js.keep(js.get(global, "String")?)?,
    set: js.keep(js.get(global, "Set")?)?,
    map: js.keep(js.get(global, "Map")?)?,
    stringify_turn: js.keep(stringify_turn)?,
    map_of_pairs: js.keep(map_of_pairs)?,
    concat: js.keep(js.get(js.get(js.get(global, "Array")?, "prototype")?, "concat")?)?,
    ended: js.uint8_data(ended)?,
    ended_array: js.keep(ended)?,
  })
}
