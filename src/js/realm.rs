//! Per-environment state: the values the binding keeps for the env it was
//! loaded in (the main thread, each Worker), held as the env's N-API
//! instance data and freed with it, references and all, when the env is
//! torn down (#12: a thread-local leaked one per Worker). Also the
//! module's constants and `__setup`, which index.js calls once at load.

use napi::bindgen_prelude::Object;
use napi::{sys, Env, JsValue};
use napi_derive::napi;

use super::{export, Js, JsResult, Thrown, Val};
use crate::error::JournalError;

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

impl Realm {
  /// Every reference the realm holds, to be deleted with it.
  pub fn refs(&self) -> [sys::napi_ref; 11] {
    [
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
}

impl<'e> Js<'e> {
  /// The realm of this call's env.
  pub fn realm(self) -> JsResult<&'e Realm> {
    self.instance().ok_or_else(|| Thrown::Journal(JournalError::not_loaded()))
  }
}

/// Raises index.js's ENDED flag, when this env has a realm.
pub fn raise_ended<'e>(js: Js<'e>) {
  if let Some(flag) = js.instance().and_then(|r| r.ended) {
    super::raw::raise_flag(flag);
  }
}

/// The constants: `OUTBOX_STATUS` (frozen, like the reference's),
/// `BRAKE_EXIT`, `RECOVER_REASON`, `UNLOCK_HINT`.
#[napi(module_exports)]
pub fn module_exports(exports: Object, env: Env) -> napi::Result<()> {
  let exports = Val::new(exports.raw());
  export(&env, |js| {
    let statuses = js.array(4)?;
    for (i, s) in ["intent", "confirmed", "refused", "unknown"].into_iter().enumerate() {
      js.set_index(statuses, i as u32, js.str(s)?)?;
    }
    js.freeze(statuses)?;
    js.set(exports, "OUTBOX_STATUS", statuses)?;
    js.set(exports, "BRAKE_EXIT", js.number(f64::from(crate::error::BRAKE_EXIT))?)?;
    js.set(exports, "RECOVER_REASON", js.str(crate::stop::RECOVER_REASON)?)?;
    js.set(exports, "UNLOCK_HINT", js.str(crate::lock::UNLOCK_HINT)?)
  })
}

/// Registers the `DiscordError` class that every refusal is an instance of.
/// index.js calls it once at load; it is not part of the package's API.
#[napi(js_name = "__setup")]
pub fn setup<'e>(
  env: &'e Env,
  discord_error: Val<'e>,
  join: Val<'e>,
  ended: Val<'e>,
  stringify_turn: Val<'e>,
  map_of_pairs: Val<'e>,
) -> napi::Result<()> {
  export(env, |js| {
    let realm = realm_of(js, [discord_error, join, ended, stringify_turn, map_of_pairs])?;
    js.set_instance(realm)
  })
}

/// The realm of index.js's values (see there for `stringifyTurn` and
/// `mapOfPairs`) and the built-ins of this moment.
fn realm_of<'e>(js: Js<'e>, [discord_error, join, ended, stringify_turn, map_of_pairs]: [Val<'e>; 5]) -> JsResult<Realm> {
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
