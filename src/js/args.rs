//! Argument conversion: each kind of argument the exports take, converted
//! in one place and in the reference's order.

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue, ValueType};
use napi::sys;

use super::export::fail;
use super::{Js, JsResult, Thrown, Val};
use crate::ground::error::JournalError;
use crate::ground::journal::Journal;

/// A `dir` argument: `path.join` refuses anything but a string.
pub struct Dir<'e> {
  /// The string itself, read as UTF-16 only when a path is returned.
  v: Val<'e>,
  /// The journal, its path for the file system what V8 hands it (each
  /// lone surrogate as U+FFFD): the handle every part takes.
  journal: Journal,
}

impl<'e> Dir<'e> {
  /// Every export that touches the journal takes its `dir` here, before its
  /// first step on the file system: a terminated Worker's call ends here
  /// (the steps that follow may run no JavaScript to notice it).
  pub fn from(js: Js<'e>, v: Val<'e>) -> JsResult<Dir<'e>> {
    js.alive()?;
    if !js.is(v, sys::ValueType::napi_string)? {
      return Err(invalid_path(js, v));
    }
    Ok(Dir {
      v,
      journal: Journal::new(js.utf8(v)?),
    })
  }

  /// The argument as it was passed.
  pub fn val(&self) -> Val<'e> {
    self.v
  }

  pub fn journal(&self) -> &Journal {
    &self.journal
  }

  /// `path.join(dir, ...names)` as the string the API returns.
  pub fn join(&self, js: Js<'e>, names: &[&str]) -> JsResult<Val<'e>> {
    let units = js.units(self.v)?;
    let mut joined = Vec::with_capacity(units.len() + 24);
    joined.extend_from_slice(&units);
    for name in names {
      joined.push(u16::from(b'/'));
      joined.extend(name.encode_utf16());
    }
    if crate::ground::paths::is_normal(&units) {
      return Ok(js.str16(&joined)?);
    }
    // Names are plain segments, so joining first and normalizing once is
    // path.join (which drops an empty dir, as it drops every empty part).
    let parts: [&[u16]; 1] = [if units.is_empty() { &joined[1..] } else { &joined }];
    Ok(js.str16(&crate::ground::paths::join(&parts))?)
  }
}

/// An export whose first step is `join(dir, ...)` takes `dir: Dir`: napi-rs
/// converts it before the body runs, which is then the reference's order.
/// One that reads another argument or an option first takes `dir: Val`
/// and converts it where the reference joins it (`Dir::from`).
impl<'e> FromNapiValue for Dir<'e> {
  // SAFETY: `env` and `v` are the call's, handed over by napi-rs; nothing
  // is dereferenced here.
  unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
    let js = Js::of_call(env);
    Dir::from(js, Val::new(v)).map_err(|e| fail(js, e))
  }
}

impl TypeName for Dir<'_> {
  fn type_name() -> &'static str {
    "string"
  }
  // Unknown: the type is checked by `Dir::from`, in the reference's way.
  fn value_type() -> ValueType {
    ValueType::Unknown
  }
}

impl ValidateNapiValue for Dir<'_> {}

/// Node's ERR_INVALID_ARG_TYPE for a path argument that is not a string:
/// thrown by `path.join` itself, so its message, and what building it reads
/// of the value (a getter that throws included), are Node's own.
fn invalid_path<'e>(js: Js<'e>, v: Val<'e>) -> Thrown {
  let joined = js.realm().and_then(|realm| {
    let join = js.kept(realm.join)?;
    Ok(js.call(join, js.undefined()?, &[v])?)
  });
  match joined {
    Err(thrown) => thrown,
    // Not reached: join refuses every value that is not a string.
    Ok(_) => JournalError::path_not_string().into(),
  }
}

/// Destructures an options argument as `{ a = …, b = … } = {}` does:
/// undefined takes every default, null (or undefined inside) throws; each
/// named property is read once, in the order given.
pub fn options<'e, const N: usize>(js: Js<'e>, opts: Val<'e>, names: [&str; N]) -> JsResult<[Option<Val<'e>>; N]> {
  let mut out = [None; N];
  match js.type_of(opts)? {
    sys::ValueType::napi_undefined => return Ok(out),
    // Every options pattern of the reference gives its first property a
    // default (`{ identity = identityOf } = {}`), and for that shape V8
    // words null as a property read, not as a destructuring.
    sys::ValueType::napi_null => return Err(JournalError::read_of_null(names[0]).into()),
    _ => {}
  }
  for (slot, name) in out.iter_mut().zip(names) {
    let v = js.get(opts, name)?;
    if !js.is(v, sys::ValueType::napi_undefined)? {
      *slot = Some(v);
    }
  }
  Ok(out)
}

/// A date argument: only a string can equal a slice of one.
pub fn date_arg<'e>(js: Js<'e>, date: Val<'e>) -> JsResult<Option<Vec<u16>>> {
  Ok(js.is(date, sys::ValueType::napi_string)?.then(|| js.units(date)).transpose()?)
}

/// A pid argument the core compares as a number: any other type is no pid.
pub fn number_arg<'e>(js: Js<'e>, v: Val<'e>) -> JsResult<Option<f64>> {
  Ok(js.is(v, sys::ValueType::napi_number)?.then(|| js.number_value(v)).transpose()?)
}
