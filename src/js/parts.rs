//! The readers' engine for making their results in V8: the texts a read
//! keeps (a file's lines, turn records) are parsed as arrays of parts, each
//! part one `JSON.parse` of at most a set size, and joined (#10: a read's
//! peak memory is the file and its result, not the file twice); a huge
//! string is shared with the file's bytes where the scan in `part` proves
//! where `JSON.parse` puts it.

use std::ops::Range;

use super::raw::Fault;
use super::{out_of_memory, Js, JsResult, Thrown, Val};
use crate::read::part::{Finished, Huge, Part, Shared, Step, MAX_STRING};

/// The JSON texts `parse_array` parses as one array's elements.
pub trait Texts {
  fn len(&self) -> usize;
  /// The file the `i`-th text was read from, as a refusal names it.
  fn label(&self, i: usize) -> String;
  /// The length in bytes of the `i`-th text.
  fn size(&self, i: usize) -> usize;
  /// Appends the `i`-th text (of `size(i)` bytes, less the strings the
  /// part leaves out).
  fn write(&mut self, i: usize, out: &mut Part);
  /// The `i`-th text, when it is one run of bytes held here.
  fn whole(&self, i: usize) -> Option<&[u8]>;
  /// The `i`-th text as bytes a string may share (a range of them), for a
  /// text that is a part alone and is not written after.
  fn share(&mut self, i: usize) -> Option<(Shared, Range<usize>)>;
}

impl<'e> Js<'e> {
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
  /// fallibly, so running out of memory refuses the read instead of
  /// aborting the process. A huge string is not copied at all: the part
  /// leaves it out and the parsed value gets a string that shares the
  /// file's bytes (`part`), so a file of one huge line is held once. A part
  /// is longer than V8's longest string only when one element is, and it is
  /// refused by that element's file.
  pub fn parse_array(self, texts: impl Texts) -> JsResult<Val<'e>> {
    // Every reader's texts are of one file, named alike.
    let label = texts.label(0);
    let mut parts = Vec::new();
    self.parse_parts(texts, 64 << 20, &mut parts)?;
    self.concat(&parts).map_err(|e| e.reading(&label))
  }

  /// The arrays `parse_array` joins, each of at most `part` bytes of text
  /// (unless one element is larger), appended to `parts`: a caller that
  /// parses in batches joins them all once.
  pub fn parse_parts(self, texts: impl Texts, part: usize, parts: &mut Vec<Val<'e>>) -> JsResult<()> {
    const CHUNK: usize = 4096;
    /// Room kept for the next part; a larger part's text is freed.
    const KEEP: usize = 1 << 20;
    let n = texts.len();
    let mut label = texts.label(0);
    let parse = self.kept(self.realm()?.parse).map_err(|e| Thrown::from(e).reading(&label))?;
    let undefined = self.undefined()?;
    let mut texts = Some(texts);
    parts.reserve(n / CHUNK + 1);
    let mut spare = Vec::new();
    let mut i = 0;
    while let Some(t) = texts.as_mut() {
      let mut end = i;
      let mut size = 2;
      while end < n && end - i < CHUNK {
        let more = t.size(end) + 1;
        if end > i && size + more > part {
          break;
        }
        size += more;
        end += 1;
      }
      label = t.label(i);
      // A huge element alone, with no string to share, is parsed from one
      // string of its bytes (a huge line of text other than ASCII held the
      // file, a copy and V8's string, 1.11 of journal.mjs). ASCII that is
      // most of its file is not even copied: the string is an external one
      // over the bytes (an escaped line, 0.98 where a copy made it 1.00).
      if end == i + 1 && size > KEEP && t.whole(i).is_some_and(|b| !crate::read::part::shares(b)) {
        let part = self.escaping(|| -> JsResult<Val<'e>> {
          let text = match texts.as_mut().and_then(|t| t.share(i)) {
            Some((file, range)) => self.shared_file_text(&file, range, &label)?,
            None => {
              let whole = texts.as_ref().and_then(|t| t.whole(i)).unwrap_or_default();
              self.file_text(whole, &label)?
            }
          };
          if end >= n {
            texts = None;
          }
          let parsed = self.call(parse, undefined, &[text]).map_err(|e| Thrown::from(e).reading(&label))?;
          let one = self.array(1)?;
          self.set_index(one, 0, parsed)?;
          Ok(one)
        })?;
        parts.push(part);
        i = end;
        continue;
      }
      let mut out = Part::new(std::mem::take(&mut spare), size).ok_or_else(|| out_of_memory(&label))?;
      out.push(b'[');
      for k in i..end {
        if k > i {
          out.push(b',');
        }
        t.write(k, &mut out);
      }
      out.push(b']');
      if end >= n {
        texts = None;
      }
      let Finished { text: mut buf, huge } = out.finish().ok_or_else(|| out_of_memory(&label))?;
      let part = self.escaping(|| -> JsResult<Val<'e>> {
        let text = self.file_text(&buf, &label)?;
        // The bytes are freed before the parse, which needs room of its own.
        if buf.capacity() > KEEP {
          buf = Vec::new();
        }
        let parsed = self.call(parse, undefined, &[text]).map_err(|e| Thrown::from(e).reading(&label))?;
        for h in &huge {
          self.put_huge(parsed, h).map_err(|e| e.reading(&label))?;
        }
        Ok(parsed)
      })?;
      spare = buf;
      parts.push(part);
      i = end;
    }
    Ok(())
  }

  /// Puts a left-out string where its path leads in a parsed part, in
  /// place of the `""` parsed there. Every step is an own data property or
  /// element that JSON.parse made, so the reads and the write run no
  /// JavaScript and keep the property where it is.
  fn put_huge(self, parsed: Val<'e>, h: &Huge) -> JsResult<()> {
    let Some((last, steps)) = h.path.split_last() else {
      return Ok(());
    };
    let mut at = parsed;
    for step in steps {
      at = match step {
        Step::Index(i) => self.get_index(at, *i)?,
        Step::Key(k) => self.get(at, k)?,
      };
    }
    let s = self.shared_latin1(&h.file, h.range.clone())?;
    match last {
      Step::Index(i) => Ok(self.set_index(at, *i, s)?),
      Step::Key(k) => Ok(self.set(at, k, s)?),
    }
  }

  /// The arrays `parts` joined into one (`[]` for none).
  pub fn concat(self, parts: &[Val<'e>]) -> JsResult<Val<'e>> {
    match parts {
      [] => Ok(self.array(0)?),
      [one] => Ok(*one),
      [first, rest @ ..] => {
        let concat = self.kept(self.realm()?.concat)?;
        Ok(self.call(concat, *first, rest)?)
      }
    }
  }

  /// A string of text read from the file `label` (UTF-8, ASCII copied as
  /// Latin-1). Past V8's longest string it is refused as Node refuses such
  /// a read, `could not read <label> (ERR_STRING_TOO_LONG)` (#10), and any
  /// other failure to make it is a refusal naming the file.
  pub fn file_text(self, bytes: &[u8], label: &str) -> JsResult<Val<'e>> {
    let made = if bytes.is_ascii() {
      self.latin1(bytes)
    } else {
      self.str_utf8(bytes)
    };
    made.map_err(|e| match e {
      // V8 refuses a string longer than this many UTF-16 units without an
      // exception; a UTF-8 text of more bytes may still fit.
      Fault::Status(_) if bytes.len() > MAX_STRING => too_long(label),
      e => Thrown::from(e).reading(label),
    })
  }

  /// `file_text` of `file[range]`, which shares the bytes when they are
  /// ASCII (#10): a huge line's text is then held once, not once here and
  /// once in V8, while JSON.parse reads it. Only for a range that is at
  /// least half of `file`, as `part` shares a string: V8 makes an external
  /// string old, so it keeps all of `file` until the next full collection,
  /// after the read, while it reports only the range (a 3 MiB line would
  /// keep a 150 MB file alive read after read). A smaller range is copied.
  pub fn shared_file_text(self, file: &Shared, range: Range<usize>, label: &str) -> JsResult<Val<'e>> {
    let bytes = file.get(range.clone()).unwrap_or_default();
    if bytes.len().saturating_mul(2) < file.len() || !bytes.is_ascii() {
      return self.file_text(bytes, label);
    }
    // Refused before V8 is asked, which would not say why.
    if bytes.len() > MAX_STRING {
      return Err(too_long(label));
    }
    self.shared_latin1(file, range).map_err(|e| Thrown::from(e).reading(label))
  }
}

/// Node's refusal of a read too long for a string.
fn too_long(label: &str) -> Thrown {
  crate::ground::error::quiet_fs(Some("ERR_STRING_TOO_LONG"), label, "read").into()
}
