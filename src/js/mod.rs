//! The napi boundary: argument conversion, the JavaScript semantics that
//! need V8 (JSON.stringify, JSON.parse, Date, String(), object spread), and
//! the one place (`throw`) where a Rust error becomes a JavaScript exception.
//! Every exported function lives in the submodule named after the part of
//! the journal it serves; the logic itself is in the crate's other modules.

#![cfg_attr(test, allow(dead_code))]

mod lock;
mod raw;
mod records;
mod stop;
mod turns;

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue, TypeName, ValidateNapiValue, ValueType};
use std::cell::Cell;

use napi::{sys, Env};

use crate::error::JournalError;
use crate::records::Cmp;
pub use raw::Js;

/// A JavaScript value of the current call, of any type.
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
  unsafe fn from_napi_value(_env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
    Ok(Val(v))
  }
}

impl ToNapiValue for Val {
  unsafe fn to_napi_value(_env: sys::napi_env, v: Self) -> napi::Result<sys::napi_value> {
    Ok(v.0)
  }
}

/// Why a call did not return: a journal error still to be thrown, or a
/// JavaScript exception already pending (from a seam, a getter, toJSON...),
/// which must reach the caller as it was thrown.
pub enum Thrown {
  Journal(JournalError),
  Pending,
  /// An N-API call failed without an exception (a value V8 would not
  /// make); surfaced as a DiscordError, naming the file where one is read.
  Napi(sys::napi_status),
  /// The env can no longer run JavaScript (a terminated Worker): the call
  /// ends at once, with no further step on the file system and no error of
  /// its own, so the termination goes on (#10).
  Terminating,
}

impl Thrown {
  /// A failure of the reader of the file `label`: an N-API call that failed
  /// without an exception (a string or an array V8 would not make) becomes
  /// a refusal naming the file, never a bare N-API status (#10).
  pub fn reading(self, label: &str) -> Thrown {
    match self {
      Thrown::Napi(_) => crate::error::quiet_fs(None, label, "read").into(),
      other => other,
    }
  }
}

/// V8's `String::kMaxLength` on 64-bit platforms: 2**29 - 24 code units
/// (Node's `buffer.constants.MAX_STRING_LENGTH`).
pub const MAX_STRING: usize = (1 << 29) - 24;

/// The JSON texts `parse_array` parses as one array's elements.
pub trait Texts {
  fn len(&self) -> usize;
  /// The file the `i`-th text was read from, as a refusal names it.
  fn label(&self, i: usize) -> String;
  /// The length in bytes of the `i`-th text.
  fn size(&self, i: usize) -> usize;
  /// Appends the `i`-th text (of `size(i)` bytes).
  fn write(&mut self, i: usize, out: &mut Vec<u8>);
}

/// A reader's refusal when the memory for its result cannot be had.
pub fn out_of_memory(label: &str) -> Thrown {
  crate::error::quiet_fs(Some("ENOMEM"), label, "read").into()
}

impl From<JournalError> for Thrown {
  fn from(e: JournalError) -> Self {
    Thrown::Journal(e)
  }
}

pub type JsResult<T> = Result<T, Thrown>;

/// Values of the realm the binding keeps: `DiscordError` and Node's
/// `path.join` (registered by index.js) and the built-ins the reference
/// calls. Built-ins are taken once, at load, so a later monkey-patch of
/// JSON, String, Set or Map does not reach us. Date is the exception: it is
/// looked up on every use, because tests fake the clock by replacing it.
struct Realm {
  join: sys::napi_ref,
  discord_error: sys::napi_ref,
  stringify: sys::napi_ref,
  parse: sys::napi_ref,
  string: sys::napi_ref,
  set: sys::napi_ref,
  map: sys::napi_ref,
  stringify_turn: sys::napi_ref,
  map_of_pairs: sys::napi_ref,
  concat: sys::napi_ref,
  /// index.js's `ENDED` flag (its Uint8Array is held by `ended_array`):
  /// raised when a call finds that JavaScript can no longer run, so that
  /// index.js stops the thread at once (see there).
  ended: Option<*mut u8>,
  #[allow(dead_code)]
  ended_array: sys::napi_ref,
}

/// The constants: `OUTBOX_STATUS` (frozen, like the reference's),
/// `BRAKE_EXIT`, `RECOVER_REASON`, `UNLOCK_HINT`.
#[napi_derive::napi(module_exports)]
pub fn module_exports(exports: napi::bindgen_prelude::Object, env: Env) -> napi::Result<()> {
  use napi::JsValue;
  let js = Js::new(&env);
  let exports = Val(exports.raw());
  let result = (|| {
    let statuses = js.array(4)?;
    for (i, s) in ["intent", "confirmed", "refused", "unknown"].into_iter().enumerate() {
      js.set_index(statuses, i as u32, js.str(s)?)?;
    }
    js.freeze(statuses)?;
    js.set(exports, "OUTBOX_STATUS", statuses)?;
    js.set(exports, "BRAKE_EXIT", js.number(f64::from(crate::error::BRAKE_EXIT))?)?;
    js.set(exports, "RECOVER_REASON", js.str(crate::stop::RECOVER_REASON)?)?;
    js.set(exports, "UNLOCK_HINT", js.str(crate::lock::UNLOCK_HINT)?)
  })();
  done(js, result)
}

/// Registers the `DiscordError` class that every refusal is an instance of.
/// index.js calls it once at load; it is not part of the package's API.
#[napi_derive::napi(js_name = "__setup")]
pub fn setup(env: Env, discord_error: Val, join: Val, ended: Val) -> napi::Result<()> {
  let js = Js::new(&env);
  let result = (|| {
    let global = js.global()?;
    let json = js.get(global, "JSON")?;
    // `{...record, id}` has no N-API equivalent: napi_set_property would run
    // Object.prototype's __proto__ setter and define getters' results out of
    // order. The spread stays JavaScript's own, and so does the
    // JSON.stringify of it (taken now, as every built-in is): one call into
    // JavaScript per record, not two.
    let stringify = js.get(json, "stringify")?;
    let make = js.run_script(
      "(function (stringify) { return function stringifyTurn(record, id) { return stringify({ ...record, id }, null, 2); }; })",
    )?;
    let stringify_turn = js.call(make, js.undefined()?, &[stringify])?;
    // readOutbox's Map from [key, value, key, value, ...]: no array per
    // entry (#10: a million of them are 64 MB). `set` is looked up on
    // each call, as the reference's `byNonce.set` is.
    let map_of_pairs = js.run_script(
      "(function mapOfPairs(Map, flat) { const m = new Map(); for (let i = 0; i < flat.length; i += 2) m.set(flat[i], flat[i + 1]); return m; })",
    )?;
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
  })();
  let realm = done(js, result)?;
  // One realm per thread: Node runs each environment (the main thread, each
  // Worker) on a thread of its own. Set once per load, so never freed.
  REALM.with(|r| r.set(Some(Box::leak(Box::new(realm)))));
  Ok(())
}

thread_local! {
  static REALM: Cell<Option<&'static Realm>> = const { Cell::new(None) };
}

impl Js {
  fn realm(self) -> JsResult<&'static Realm> {
    REALM.with(Cell::get).ok_or_else(|| {
      Thrown::Journal(JournalError::Type {
        message: "discord-journal: load the package through index.js".into(),
        code: None,
      })
    })
  }

  /// Ends the call (`Terminating`) when JavaScript can no longer run: asked
  /// before a step that would make no call into JavaScript to notice it.
  pub fn alive(self) -> JsResult<()> {
    if self.can_run() {
      Ok(())
    } else {
      Err(Thrown::Terminating)
    }
  }

  pub fn is(self, v: Val, t: sys::napi_valuetype) -> JsResult<bool> {
    Ok(self.type_of(v)? == t)
  }

  pub fn is_nullish(self, v: Val) -> JsResult<bool> {
    let t = self.type_of(v)?;
    Ok(t == sys::ValueType::napi_null || t == sys::ValueType::napi_undefined)
  }

  /// `obj.name`, with JavaScript's TypeError for null and undefined.
  pub fn prop(self, obj: Val, name: &str) -> JsResult<Val> {
    match self.type_of(obj)? {
      sys::ValueType::napi_null => Err(JournalError::read_of_null(name).into()),
      sys::ValueType::napi_undefined => Err(
        JournalError::Type {
          message: format!("Cannot read properties of undefined (reading '{name}')"),
          code: None,
        }
        .into(),
      ),
      _ => self.get(obj, name),
    }
  }

  /// `typeof v === "string"`, with its text.
  pub fn string_of(self, v: Val) -> JsResult<Option<String>> {
    if self.is(v, sys::ValueType::napi_string)? {
      Ok(Some(self.utf8(v)?))
    } else {
      Ok(None)
    }
  }

  /// `String(v)` (a Symbol is described, not refused).
  pub fn js_string(self, v: Val) -> JsResult<Val> {
    if self.is(v, sys::ValueType::napi_string)? {
      return Ok(v);
    }
    let f = self.kept(self.realm()?.string)?;
    self.call(f, self.undefined()?, &[v])
  }

  /// `JSON.stringify(v)`: a string, or `None` for undefined.
  pub fn stringify(self, v: Val) -> JsResult<Option<String>> {
    let f = self.kept(self.realm()?.stringify)?;
    let out = self.call(f, self.undefined()?, &[v])?;
    self.string_of(out)
  }

  /// `JSON.stringify({...record, id}, null, 2)`.
  pub fn stringify_turn(self, record: Val, id: Val) -> JsResult<Option<String>> {
    let f = self.kept(self.realm()?.stringify_turn)?;
    let out = self.call(f, self.undefined()?, &[record, id])?;
    self.string_of(out)
  }

  /// `JSON.parse(text)`: a STOP line the scanner accepted, or a turn record
  /// (whose SyntaxError the caller turns into the refusal).
  pub fn parse(self, text: &str) -> JsResult<Val> {
    self.parse_value(self.str(text)?)
  }

  /// `JSON.parse(text)` of a string already made.
  pub fn parse_value(self, text: Val) -> JsResult<Val> {
    let f = self.kept(self.realm()?.parse)?;
    self.call(f, self.undefined()?, &[text])
  }

  pub fn new_set(self, items: Val) -> JsResult<Val> {
    let ctor = self.kept(self.realm()?.set)?;
    self.construct(ctor, &[items])
  }

  /// A Map of `flat`'s elements taken two at a time, key then value.
  pub fn map_of_pairs(self, flat: Val) -> JsResult<Val> {
    let realm = self.realm()?;
    let (f, ctor) = (self.kept(realm.map_of_pairs)?, self.kept(realm.map)?);
    self.call(f, self.undefined()?, &[ctor, flat])
  }

  /// `JSON.parse` of the texts (each already known to parse) as one array.
  /// The array is parsed a part at a time (a few thousand elements, at most
  /// `PART` bytes unless one element is larger) and the parts joined with
  /// `concat`: one JSON.parse of a whole file makes V8 allocate and free
  /// parser temporaries large enough to raise glibc's dynamic mmap
  /// threshold, after which the process's resident memory climbs with
  /// every large read (measured: to 1 GiB over 200 reads of 100,000 lines).
  ///
  /// Memory (#10): at no moment are more than two copies of a text held.
  /// `texts` (which may own the file's bytes) is dropped once the last
  /// part's text is made and before it becomes a V8 string, and a large
  /// part's text is freed before it is parsed. A part's room is reserved
  /// exactly and fallibly, so running out of memory refuses the read
  /// instead of aborting the process. A part is longer than V8's longest
  /// string only when one element is, and it is refused by that element's
  /// file.
  pub fn parse_array(self, texts: impl Texts) -> JsResult<Val> {
    const CHUNK: usize = 4096;
    const PART: usize = 64 << 20;
    /// Room kept for the next part; a larger part's text is freed.
    const KEEP: usize = 1 << 20;
    let n = texts.len();
    let mut label = texts.label(0);
    let parse = self.kept(self.realm()?.parse).map_err(|e| e.reading(&label))?;
    let undefined = self.undefined()?;
    let mut texts = Some(texts);
    let mut parts = Vec::with_capacity(n / CHUNK + 1);
    let mut buf = Vec::new();
    let mut i = 0;
    while let Some(t) = texts.as_mut() {
      let mut end = i;
      let mut size = 2;
      while end < n && end - i < CHUNK {
        let more = t.size(end) + 1;
        if end > i && size + more > PART {
          break;
        }
        size += more;
        end += 1;
      }
      label = t.label(i);
      buf.clear();
      buf.try_reserve_exact(size).map_err(|_| out_of_memory(&label))?;
      buf.push(b'[');
      for k in i..end {
        if k > i {
          buf.push(b',');
        }
        t.write(k, &mut buf);
      }
      buf.push(b']');
      if end >= n {
        texts = None;
      }
      let part = self.escaping(|| {
        let text = self.file_text(&buf, &label)?;
        // The bytes are freed before the parse, which needs room of its own.
        if buf.capacity() > KEEP {
          buf = Vec::new();
        }
        self.call(parse, undefined, &[text]).map_err(|e| e.reading(&label))
      })?;
      parts.push(part);
      i = end;
    }
    drop(buf);
    self.concat(&parts).map_err(|e| e.reading(&label))
  }

  /// The arrays `parts` joined into one (`[]` for none).
  pub fn concat(self, parts: &[Val]) -> JsResult<Val> {
    match parts {
      [] => self.array(0),
      [one] => Ok(*one),
      [first, rest @ ..] => {
        let concat = self.kept(self.realm()?.concat)?;
        self.call(concat, *first, rest)
      }
    }
  }

  /// A string of text read from the file `label` (UTF-8, ASCII copied as
  /// Latin-1). Past V8's longest string it is refused as Node refuses such
  /// a read, `could not read <label> (ERR_STRING_TOO_LONG)` (#10), and any
  /// other failure to make it is a refusal naming the file.
  pub fn file_text(self, bytes: &[u8], label: &str) -> JsResult<Val> {
    let made = if bytes.is_ascii() {
      self.latin1(bytes)
    } else {
      self.str_utf8(bytes)
    };
    made.map_err(|e| match e {
      // V8 refuses a string longer than this many UTF-16 units without an
      // exception; a UTF-8 text of more bytes may still fit.
      Thrown::Napi(_) if bytes.len() > MAX_STRING => crate::error::quiet_fs(Some("ERR_STRING_TOO_LONG"), label, "read").into(),
      e => e.reading(label),
    })
  }

  /// `new Date(v).toISOString()`. Numbers are converted here; anything else
  /// goes through the Date the page has now (its parser, ToPrimitive,
  /// valueOf).
  pub fn iso_of(self, v: Val) -> JsResult<String> {
    if self.is(v, sys::ValueType::napi_number)? {
      return crate::time::iso(self.number_value(v)?).ok_or_else(|| JournalError::invalid_date().into());
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
    self.number_value(v)
  }

  fn date_iso(self, args: &[Val]) -> JsResult<String> {
    let ctor = self.get(self.global()?, "Date")?;
    let date = self.construct(ctor, args)?;
    let f = self.prop(date, "toISOString")?;
    let out = self.call(f, date, &[])?;
    self.utf8(out)
  }

  /// What quietFs's `typeof err?.code === "string" ? err.code : ...` says
  /// of a thrown value: `code` is read once for the test and, when it is a
  /// string, once more for the message (a getter runs twice, and its second
  /// value is what the template converts). A `code` getter that throws
  /// makes that exception the one the call throws.
  pub fn code_of(self, e: Val) -> JsResult<Option<String>> {
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
  pub fn catching<T>(self, f: impl FnOnce() -> JsResult<T>) -> JsResult<Result<T, Option<String>>> {
    match f() {
      Ok(v) => Ok(Ok(v)),
      Err(Thrown::Pending) => {
        let e = self.take_exception()?;
        Ok(Err(self.code_of(e)?))
      }
      Err(Thrown::Journal(e)) => Ok(Err(match e {
        JournalError::Node { code, .. } => Some(code),
        JournalError::Type { code, .. } => code.map(str::to_string),
        _ => None,
      })),
      Err(other) => Err(other),
    }
  }

  /// A JavaScript value as `===` sees it against a parsed JSON value.
  pub fn cmp(self, v: Val) -> JsResult<Cmp> {
    Ok(match self.type_of(v)? {
      sys::ValueType::napi_undefined => Cmp::Undefined,
      sys::ValueType::napi_null => Cmp::Null,
      sys::ValueType::napi_boolean => Cmp::Bool(self.bool_value(v)?),
      sys::ValueType::napi_number => Cmp::Num(self.number_value(v)?),
      sys::ValueType::napi_string => Cmp::Str(self.units(v)?),
      _ => Cmp::Other,
    })
  }

  /// `this.throw(e)`: the one place a journal error becomes an exception.
  fn throw_error(self, e: JournalError) -> JsResult<()> {
    let v = match &e {
      JournalError::Discord { message, exit_code } => {
        let ctor = self.kept(self.realm()?.discord_error)?;
        self.construct(ctor, &[self.str(message)?, self.number(f64::from(*exit_code))?])?
      }
      JournalError::Node {
        code,
        errno,
        syscall,
        path,
      } => {
        let err = self.error(Some(code), &e.to_string())?;
        self.set(err, "errno", self.number(f64::from(-errno))?)?;
        self.set(err, "syscall", self.str(syscall)?)?;
        self.set(err, "path", self.str(path)?)?;
        err
      }
      JournalError::Type { message, code } => self.type_error(*code, message)?,
      JournalError::Range { message } => self.range_error(message)?,
    };
    self.throw(v);
    Ok(())
  }
}

/// Ends an exported call: a value, or the exception now pending. In an env
/// that can no longer run JavaScript nothing is thrown: nothing could catch
/// it, and the call only has to return for the termination to go on.
pub fn done<T>(js: Js, r: JsResult<T>) -> napi::Result<T> {
  let e = match r {
    Ok(v) => return Ok(v),
    Err(e) => e,
  };
  match e {
    Thrown::Pending => {}
    Thrown::Terminating => return Err(terminated()),
    Thrown::Journal(e) => {
      // A journal error raised while an exception is pending replaced it,
      // as a `finally` that throws does (`.stop.lock` that cannot be
      // removed after the action threw): the later error is the one thrown.
      if js.pending() {
        match js.take_exception() {
          Ok(_) => {}
          Err(Thrown::Pending) => return Err(ended()),
          Err(Thrown::Terminating) => return Err(terminated()),
          Err(_) => return Err(napi::Error::from_reason("discord-journal: could not clear an exception")),
        }
      }
      match js.throw_error(e) {
        Ok(()) | Err(Thrown::Pending) => {}
        Err(Thrown::Terminating) => return Err(terminated()),
        Err(_) => return Err(napi::Error::from_reason("discord-journal: could not raise an error")),
      }
    }
    // Readers have already named their file (`Thrown::reading`); what is
    // left is still a refusal, never a bare N-API status (#10).
    Thrown::Napi(status) => {
      let e = JournalError::failed(format!(
        "discord-journal: a JavaScript value could not be made (N-API status {status})"
      ));
      match js.throw_error(e) {
        Ok(()) | Err(Thrown::Pending) => {}
        Err(Thrown::Terminating) => return Err(terminated()),
        Err(_) => return Err(napi::Error::from_reason("discord-journal: could not raise an error")),
      }
    }
  }
  Err(ended())
}

/// The end of a call whose exception (if any) is already pending.
fn ended() -> napi::Error {
  napi::Error::new(napi::Status::PendingException, "")
}

/// The end of a call in an env that can no longer run JavaScript: nothing
/// is thrown, and index.js is told to stop the thread.
fn terminated() -> napi::Error {
  if let Some(flag) = REALM.with(Cell::get).and_then(|r| r.ended) {
    raw::raise_flag(flag);
  }
  ended()
}

/// For a callback of the Rust core, which knows a failed step only by a
/// `code`: an end that is no code (a termination, an exception thrown while
/// reading the code) is kept in `thrown`, for the export to return once the
/// core has returned, and the core sees a failure.
pub fn keep<T>(thrown: &mut Option<Thrown>, r: JsResult<Result<T, Option<String>>>) -> Result<T, Option<String>> {
  r.unwrap_or_else(|e| {
    *thrown = Some(e);
    Err(None)
  })
}

/// A `dir` argument: `path.join` refuses anything but a string.
pub struct Dir {
  /// The string itself, read as UTF-16 only when a path is returned.
  v: Val,
  /// The path for the file system: what V8 hands it (each lone surrogate
  /// as U+FFFD).
  fs: String,
}

impl Dir {
  /// Every export that touches the journal takes its `dir` here, before its
  /// first step on the file system: a terminated Worker's call ends here
  /// (the steps that follow may run no JavaScript to notice it).
  pub fn from(js: Js, v: Val) -> JsResult<Dir> {
    js.alive()?;
    if !js.is(v, sys::ValueType::napi_string)? {
      return Err(invalid_path(js, v));
    }
    Ok(Dir { v, fs: js.utf8(v)? })
  }

  pub fn fs(&self) -> &str {
    &self.fs
  }

  /// `path.join(dir, ...names)` as the string the API returns.
  pub fn join(&self, js: Js, names: &[&str]) -> JsResult<Val> {
    let units = js.units(self.v)?;
    let mut joined = Vec::with_capacity(units.len() + 24);
    joined.extend_from_slice(&units);
    for name in names {
      joined.push(u16::from(b'/'));
      joined.extend(name.encode_utf16());
    }
    if crate::paths::is_normal(&units) {
      return js.str16(&joined);
    }
    // Names are plain segments, so joining first and normalizing once is
    // path.join (which drops an empty dir, as it drops every empty part).
    let parts: [&[u16]; 1] = [if units.is_empty() { &joined[1..] } else { &joined }];
    js.str16(&crate::paths::join(&parts))
  }
}

/// Node's ERR_INVALID_ARG_TYPE for a path argument that is not a string:
/// thrown by `path.join` itself, so its message, and what building it reads
/// of the value (a getter that throws included), are Node's own.
fn invalid_path(js: Js, v: Val) -> Thrown {
  let joined = js.realm().and_then(|realm| {
    let join = js.kept(realm.join)?;
    js.call(join, js.undefined()?, &[v])
  });
  match joined {
    Err(thrown) => thrown,
    // Not reached: join refuses every value that is not a string.
    Ok(_) => JournalError::Type {
      message: "The \"path\" argument must be of type string".into(),
      code: Some("ERR_INVALID_ARG_TYPE"),
    }
    .into(),
  }
}

/// Destructures an options argument as `{ a = …, b = … } = {}` does:
/// undefined takes every default, null (or undefined inside) throws; each
/// named property is read once, in the order given.
pub fn options<const N: usize>(js: Js, opts: Val, names: [&str; N]) -> JsResult<[Option<Val>; N]> {
  let mut out = [None; N];
  match js.type_of(opts)? {
    sys::ValueType::napi_undefined => return Ok(out),
    sys::ValueType::napi_null => {
      return Err(
        JournalError::Type {
          message: format!("Cannot destructure property '{}' of 'object null' as it is null.", names[0]),
          code: None,
        }
        .into(),
      )
    }
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
