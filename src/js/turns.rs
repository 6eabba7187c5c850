//! Exports for the write-once turn records.

use std::ops::Range;
use std::sync::Arc;

use napi::Env;
use napi_derive::napi;

use super::{date_arg, export, Dir, Js, JsResult, Texts, Thrown, Val};
use crate::ground::error::JournalError;
use crate::ground::paths;
use crate::read::part::{Part, Shared};
use crate::{records, turns};

/// `turnPath`: the id is checked as `String(id)`, and the file name is the
/// template `${id}.json` (ToString again, as the reference evaluates it;
/// for a string both are the string itself).
struct TurnPath<'e> {
  dir: Dir<'e>,
  file: String,
  /// The id, when it is a string (so `String(id)` is the id itself).
  text: Option<String>,
}

impl<'e> TurnPath<'e> {
  fn of(js: Js<'e>, dir: Val<'e>, id: Val<'e>) -> JsResult<TurnPath<'e>> {
    let checked = js.utf8(js.js_string(id)?)?;
    if !paths::is_turn_id(&checked) {
      return Err(JournalError::failed("invalid turn id (letters, digits, ., _ or -, at most 128)").into());
    }
    // The template is evaluated before join() is called (and refuses a dir
    // that is not a string).
    let (shown, text) = if js.is(id, napi::sys::ValueType::napi_string)? {
      (checked.clone(), Some(checked))
    } else {
      (js.utf8(js.to_string(id)?)?, None)
    };
    let dir = Dir::from(js, dir)?;
    Ok(TurnPath {
      dir,
      file: format!("{shown}.json"),
      text,
    })
  }

  fn fs(&self) -> String {
    self.dir.journal().turn(&self.file)
  }

  fn js(&self, js: Js<'e>) -> JsResult<Val<'e>> {
    self.dir.join(js, &["turns", &self.file])
  }
}

/// `String(id)` as text.
fn id_text<'e>(js: Js<'e>, id: Val<'e>) -> JsResult<String> {
  Ok(js.utf8(js.js_string(id)?)?)
}

#[napi(js_name = "writeTurn")]
pub fn write_turn<'e>(env: &'e Env, dir: Val<'e>, id: Val<'e>, record: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let path = TurnPath::of(js, dir, id)?;
    // The id is converted again only on the refusals, as in the reference.
    let exists = |js: Js<'e>| -> JsResult<Val<'e>> { Err(turns::exists_refusal(&js.utf8(js.to_string(id)?)?).into()) };
    let draft = match turns::create(&path.fs()) {
      Ok(draft) => draft,
      Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return exists(js),
      Err(e) => return Err(turns::write_refusal(&e, &id_text(js, id)?).into()),
    };
    // The reference's record exists (empty) from here on, so a record that
    // cannot be stringified (a BigInt, a cycle, a throwing toJSON) leaves it
    // empty, and every later listTurns refuses. Here the draft is dropped
    // unlinked: no record, whole or absent (#37); the call refuses as the
    // reference's failed write does. `quietFs(err, turnLabel(String(id)),
    // ...)` converts the id before it reads the error's `code`; either may
    // throw instead. Any other way out of this call drops the draft and
    // leaves no record (#10).
    let text = match js.stringify_turn(record, id) {
      Ok(Some(text)) => text + "\n",
      // A copied toJSON may make it undefined: `undefined + "\n"`.
      Ok(None) => "undefined\n".to_string(),
      Err(Thrown::Pending) => {
        // A termination taken for the exception ends the call here.
        let e = js.take_exception()?;
        drop(draft);
        let label = id_text(js, id)?;
        let code = js.code_of(e)?;
        return Err(turns::text_failed(&label, code.as_deref()).into());
      }
      Err(other) => return Err(other),
    };
    match draft.finish(text.as_bytes()) {
      Ok(()) => path.js(js),
      // A record made by another writer since `create` looked.
      Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => exists(js),
      Err(e) => Err(turns::write_refusal(&e, &id_text(js, id)?).into()),
    }
  })
}

#[napi(js_name = "readTurn")]
pub fn read_turn<'e>(env: &'e Env, dir: Val<'e>, id: Val<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    let path = TurnPath::of(js, dir, id)?;
    // `String(id)` once more, as the reference passes it on.
    let label = path.text.clone().map_or_else(|| id_text(js, id), Ok)?;
    let text = turns::read_text(&path.fs(), &label)?;
    let text = js.file_text(text.as_bytes(), &paths::turn_label(&label))?;
    // One parse, V8's own: its verdict is JSON.parse's by definition.
    match js.parse_value(text) {
      Err(Thrown::Pending) => {
        js.take_exception()?;
        Err(turns::not_json(&label).into())
      }
      parsed => parsed,
    }
  })
}

/// The records' texts, each freed once copied into its part: the texts
/// and the records parsed from them are not all held at once (#10).
/// Each is (id, text).
struct Records(Vec<(String, String)>);

impl Texts for Records {
  fn len(&self) -> usize {
    self.0.len()
  }
  fn label(&self, i: usize) -> String {
    self.0.get(i).map_or_else(|| "turn record".into(), |(id, _)| paths::turn_label(id))
  }
  fn size(&self, i: usize) -> usize {
    self.0[i].1.len()
  }
  fn write(&mut self, i: usize, out: &mut Part) {
    out.owned(std::mem::take(&mut self.0[i].1).into_bytes());
  }
  fn whole(&self, i: usize) -> Option<&[u8]> {
    Some(self.0[i].1.as_bytes())
  }
  fn share(&mut self, i: usize) -> Option<(Shared, Range<usize>)> {
    let text = std::mem::take(&mut self.0[i].1).into_bytes();
    let len = text.len();
    Some((Arc::new(text), 0..len))
  }
}

/// Under V8's largest object outside its large-object space (128 KiB).
const YOUNG: usize = 120 << 10;

#[napi(js_name = "listTurns")]
pub fn list_turns<'e>(env: &'e Env, dir: Dir<'e>) -> napi::Result<Val<'e>> {
  export(env, |js| {
    // A batch is parsed before the next is read (#10); a record that
    // refuses the list still refuses it whole. Each JSON.parse is given
    // at most YOUNG bytes, which V8 allocates in its young generation, so
    // the text is collected as soon as it is parsed, as the reference's
    // per-record strings are (measured on 20,000 records: the read's own
    // peak 31 MiB against the reference's 44; 40 with a batch's text in one
    // parse). A batch is read on two threads, so it is not made smaller.
    let mut parts = Vec::new();
    turns::list_batches(dir.journal(), 1024, turns::id_and_text, |batch| {
      js.parse_parts(Records(batch), YOUNG, &mut parts)
    })?;
    js.concat(&parts)
  })
}

#[napi(js_name = "countTurnsOn")]
pub fn count_turns_on<'e>(env: &'e Env, dir: Dir<'e>, date: Val<'e>) -> napi::Result<u32> {
  export(env, |js| {
    let date = date_arg(js, date)?;
    let started = turns::list(dir.journal(), |_, _, doc| records::started_day(doc))?;
    Ok(records::count_started_on(&started, date.as_deref())? as u32)
  })
}
