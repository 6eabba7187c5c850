//! The boundary's one value type: a JavaScript value of the call in
//! progress, of any type. Exports take their arguments as `Val` so that
//! napi-rs converts nothing: every conversion (ToString, a getter, a
//! type check) happens in the reference's order, in the export's body.

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue, TypeName, ValidateNapiValue, ValueType};
use napi::sys;

/// A handle of the current call's scope: valid until the export returns
/// (or its `Js::escaping` scope closes), so never kept past it.
#[derive(Clone, Copy)]
pub struct Val(pub(crate) sys::napi_value);

impl TypeName for Val {
  fn type_name() -> &'static str {
    "unknown"
  }
  fn value_type() -> ValueType {
    ValueType::Unknown
  }
}

impl ValidateNapiValue for Val {}

impl FromNapiValue for Val {
  // SAFETY: nothing is dereferenced; the handle napi-rs passes is the
  // call's own argument.
  unsafe fn from_napi_value(_env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
    Ok(Val(v))
  }
}

impl ToNapiValue for Val {
  // SAFETY: nothing is dereferenced; the handle was made in this call.
  unsafe fn to_napi_value(_env: sys::napi_env, v: Self) -> napi::Result<sys::napi_value> {
    Ok(v.0)
  }
}
