//! The boundary's one value type: a JavaScript value of the call in
//! progress, of any type. Exports take their arguments as `Val` so that
//! napi-rs converts nothing: every conversion (ToString, a getter, a
//! type check) happens in the reference's order, in the export's body.

use std::marker::PhantomData;

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue, TypeName, ValidateNapiValue, ValueType};
use napi::sys;

/// A handle of the current call's scope. `'env` is the call's: a value
/// cannot be kept past the export that received or made it (`Js<'env>`
/// makes only `Val<'env>`), as N-API frees the scope when it returns.
#[derive(Clone, Copy)]
pub struct Val<'env>(pub(crate) sys::napi_value, PhantomData<&'env ()>);

impl Val<'_> {
  pub(crate) fn new(v: sys::napi_value) -> Self {
    Val(v, PhantomData)
  }
}

impl TypeName for Val<'_> {
  fn type_name() -> &'static str {
    "unknown"
  }
  fn value_type() -> ValueType {
    ValueType::Unknown
  }
}

impl ValidateNapiValue for Val<'_> {}

impl FromNapiValue for Val<'_> {
  // SAFETY: nothing is dereferenced; the handle napi-rs passes is the
  // call's own argument.
  unsafe fn from_napi_value(_env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
    Ok(Val::new(v))
  }
}

impl ToNapiValue for Val<'_> {
  // SAFETY: nothing is dereferenced; the handle was made in this call.
  unsafe fn to_napi_value(_env: sys::napi_env, v: Self) -> napi::Result<sys::napi_value> {
    Ok(v.0)
  }
}
