//! `utcDate`: the date part of `new Date(now).toISOString()`.

use napi::Env;
use napi_derive::napi;

use super::{export, Val};

#[napi(js_name = "utcDate")]
pub fn utc_date<'e>(env: &'e Env, now: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let iso = js.iso_of(now)?;
    Ok(js.str(iso.get(..10).unwrap_or(&iso))?)
  })
}
