//! The JavaScript semantics that need V8, each as the reference evaluates
//! it: `String()`, `JSON.stringify`, `JSON.parse`, `new Date()`, a property
//! read of null, what `quietFs` reads of a thrown value, `===` against a
//! parsed value. Built-ins come from the realm taken at load.

use napi::sys;

use super::{Js, JsResult, Thrown, Val};
use crate::ground::error::{JournalError, ThrownCode};

use crate::records::Cmp;

impl<'e> Js<'e> {
  /// Ends the call (`Terminating`) when JavaScript can no longer run: asked
  /// before a step that would make no call into JavaScript to notice it.
  pub fn alive(self) -> JsResult<()> {
    self.can_run().then_some(()).ok_or(Thrown::Terminating)
  }

  pub fn is(self, v: Val<'e>, t: sys::napi_valuetype) -> JsResult<bool> {
    Ok(self.type_of(v)? == t)
  }

  pub fn is_nullish(self, v: Val<'e>) -> JsResult<bool> {
    let t = self.type_of(v)?;
    Ok(t == sys::ValueType::napi_null || t == sys::ValueType::napi_undefined)
  }

  /// `obj.name`, with JavaScript's TypeError for null and undefined.
  pub fn prop(self, obj: Val<'e>, name: &str) -> JsResult<Val<'e>> {
    match self.type_of(obj)? {
      sys::ValueType::napi_null => Err(JournalError::read_of_null(name).into()),
      sys::ValueType::napi_undefined => Err(JournalError::read_of_undefined(name).into()),
      _ => Ok(self.get(obj, name)?),
    }
  }

  /// `typeof v === "string"`, with its text.
  pub fn string_of(self, v: Val<'e>) -> JsResult<Option<String>> {
    Ok(self.is(v, sys::ValueType::napi_string)?.then(|| self.utf8(v)).transpose()?)
  }

  /// `String(v)` (a Symbol is described, not refused).
  pub fn js_string(self, v: Val<'e>) -> JsResult<Val<'e>> {
    if self.is(v, sys::ValueType::napi_string)? {
      return Ok(v);
    }
    let f = self.kept(self.realm()?.string)?;
    Ok(self.call(f, self.undefined()?, &[v])?)
  }

  /// `JSON.stringify(v)`: a string, or `None` for undefined.
  pub fn stringify(self, v: Val<'e>) -> JsResult<Option<String>> {
    let f = self.kept(self.realm()?.stringify)?;
    let out = self.call(f, self.undefined()?, &[v])?;
    self.string_of(out)
  }

  /// `JSON.stringify({...record, id}, null, 2)`.
  pub fn stringify_turn(self, record: Val<'e>, id: Val<'e>) -> JsResult<Option<String>> {
    let f = self.kept(self.realm()?.stringify_turn)?;
    let out = self.call(f, self.undefined()?, &[record, id])?;
    self.string_of(out)
  }

  /// `JSON.parse(text)`: a STOP line the scanner accepted, or a turn record
  /// (whose SyntaxError the caller turns into the refusal).
  pub fn parse(self, text: &str) -> JsResult<Val<'e>> {
    self.parse_value(self.str(text)?)
  }

  /// `JSON.parse(text)` of a string already made.
  pub fn parse_value(self, text: Val<'e>) -> JsResult<Val<'e>> {
    let f = self.kept(self.realm()?.parse)?;
    Ok(self.call(f, self.undefined()?, &[text])?)
  }

  pub fn new_set(self, items: Val<'e>) -> JsResult<Val<'e>> {
    let ctor = self.kept(self.realm()?.set)?;
    Ok(self.construct(ctor, &[items])?)
  }

  /// A Map of `flat`'s elements taken two at a time, key then value.
  pub fn map_of_pairs(self, flat: Val<'e>) -> JsResult<Val<'e>> {
    let realm = self.realm()?;
    let (f, ctor) = (self.kept(realm.map_of_pairs)?, self.kept(realm.map)?);
    Ok(self.call(f, self.undefined()?, &[ctor, flat])?)
  }

  /// `new Date(v).toISOString()`. Numbers are converted here; anything else
  /// goes through the Date the page has now (its parser, ToPrimitive,
  /// valueOf).
  pub fn iso_of(self, v: Val<'e>) -> JsResult<String> {
    if self.is(v, sys::ValueType::napi_number)? {
      return crate::ground::time::iso(self.number_value(v)?).ok_or_else(|| JournalError::invalid_date().into());
    }
    self.date_iso(&[v])
  }

  /// `new Date().toISOString()`: the clock is read through the global Date
  /// of this moment, so a test's fake timers are seen as journal.mjs sees
  /// them.
  pub fn now_iso(self) -> JsResult<String> {
    self.date_iso(&[])
  }

  /// `Date.now()`, through the global Date of this moment.
  pub fn now_ms(self) -> JsResult<f64> {
    let date = self.get(self.global()?, "Date")?;
    let now = self.prop(date, "now")?;
    let v = self.call(now, date, &[])?;
    Ok(self.number_value(v)?)
  }

  fn date_iso(self, args: &[Val<'e>]) -> JsResult<String> {
    let ctor = self.get(self.global()?, "Date")?;
    let date = self.construct(ctor, args)?;
    let f = self.prop(date, "toISOString")?;
    let out = self.call(f, date, &[])?;
    Ok(self.utf8(out)?)
  }

  /// What quietFs's `typeof err?.code === "string" ? err.code : ...` says
  /// of a thrown value: `code` is read once for the test and, when it is a
  /// string, once more for the message (a getter runs twice, and its second
  /// value is what the template converts). A `code` getter that throws
  /// makes that exception the one the call throws.
  pub fn code_of(self, e: Val<'e>) -> JsResult<Option<String>> {
    if self.is_nullish(e)? {
      return Ok(None);
    }
    let code = self.get(e, "code")?;
    if !self.is(code, sys::ValueType::napi_string)? {
      return Ok(None);
    }
    let again = self.get(e, "code")?;
    Ok(Some(self.utf8(self.to_string(again)?)?))
  }

  /// Runs `f`; a JavaScript exception it raises is caught and reported by
  /// its `code` (the reference's `catch (e) { quietFs(e, ...) }`).
  pub fn catching<T>(self, f: impl FnOnce() -> JsResult<T>) -> JsResult<Result<T, ThrownCode>> {
    match f() {
      Ok(v) => Ok(Ok(v)),
      Err(Thrown::Pending) => {
        let e = self.take_exception()?;
        Ok(Err(ThrownCode(self.code_of(e)?)))
      }
      Err(Thrown::Journal(e)) => Ok(Err(ThrownCode(match e {
        JournalError::Node { code, .. } => Some(code),
        JournalError::Type { code, .. } => code.map(str::to_string),
        _ => None,
      }))),
      Err(other) => Err(other),
    }
  }

  /// A JavaScript value as `===` sees it against a parsed JSON value.
  pub fn cmp(self, v: Val<'e>) -> JsResult<Cmp> {
    Ok(match self.type_of(v)? {
      sys::ValueType::napi_undefined => Cmp::Undefined,
      sys::ValueType::napi_null => Cmp::Null,
      sys::ValueType::napi_boolean => Cmp::Bool(self.bool_value(v)?),
      sys::ValueType::napi_number => Cmp::Num(self.number_value(v)?),
      sys::ValueType::napi_string => Cmp::Str(self.units(v)?),
      _ => Cmp::Other,
    })
  }
}
