//! The module's constants, and `__setup`, which index.js calls once at
//! load to give this env its realm (realm.rs).

use napi::bindgen_prelude::Object;
use napi::{Env, JsValue};
use napi_derive::napi;

use super::realm::realm_of;
use super::{export, Val};

/// The constants: `OUTBOX_STATUS` (frozen, like the reference's),
/// `BRAKE_EXIT`, `RECOVER_REASON`, `UNLOCK_HINT`.
#[napi(module_exports)]
pub fn module_exports(exports: Object, env: Env) -> napi::Result<()> {
  let exports = Val::new(exports.raw());
  export(&env, |js| {
    let statuses = js.array(crate::records::OUTBOX_STATUS.len())?;
    for (i, s) in crate::records::OUTBOX_STATUS.into_iter().enumerate() {
      js.set_index(statuses, i as u32, js.str(s)?)?;
    }
    js.freeze(statuses)?;
    js.set(exports, "OUTBOX_STATUS", statuses)?;
    js.set(exports, "BRAKE_EXIT", js.number(f64::from(crate::ground::error::BRAKE_EXIT))?)?;
    js.set(exports, "RECOVER_REASON", js.str(crate::stop::RECOVER_REASON)?)?;
    Ok(js.set(exports, "UNLOCK_HINT", js.str(crate::lock::UNLOCK_HINT)?)?)
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
    js.set_instance(Box::new(realm))?;
    // A cache budget that is not a number is refused at load, not at the
    // first read of a running connector (#32).
    crate::read::budget::setting()?;
    // So is a durability setting other than 1 or 0 (#34).
    crate::ground::durable::setting()?;
    Ok(())
  })
}
