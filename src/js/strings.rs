//! The raw layer's strings: JavaScript strings made of Rust text (copied,
//! or sharing a file's bytes) and Rust text read from JavaScript strings.
//! As raw.rs, N-API alone.

use std::ffi::c_void;
use std::ops::Range;
use std::ptr;
use std::sync::Arc;

use napi::sys;

use super::raw::{napi_call, Fault, Js};
use super::Val;
use crate::read::part::Shared;

impl<'e> Js<'e> {
  pub fn str(self, s: &str) -> Result<Val<'e>, Fault> {
    self.str_utf8(s.as_bytes())
  }

  /// A string from UTF-8 bytes (invalid sequences become U+FFFD, as Node
  /// decodes a file).
  pub fn str_utf8(self, bytes: &[u8]) -> Result<Val<'e>, Fault> {
    let mut v = ptr::null_mut();
    napi_call!(self, napi_create_string_utf8(bytes.as_ptr().cast(), bytes.len() as isize, &mut v))?;
    Ok(Val::new(v))
  }

  /// A string from Latin-1 bytes: for ASCII, a plain copy.
  pub fn latin1(self, bytes: &[u8]) -> Result<Val<'e>, Fault> {
    let mut v = ptr::null_mut();
    napi_call!(self, napi_create_string_latin1(bytes.as_ptr().cast(), bytes.len() as isize, &mut v))?;
    Ok(Val::new(v))
  }

  /// A string of `file[range]`, ASCII, that shares the bytes instead of
  /// copying them (#10, `part`): it holds one reference to `file` until V8
  /// collects it. Node-API 10, in every Node this package supports (it came
  /// in 20.4, still called experimental there; the package needs 20.17).
  ///
  /// V8 does not count an external string's bytes towards the heap, so a
  /// loop of reads would never collect: its length is reported as external
  /// memory (as a Buffer's is) while it lives.
  pub fn shared_latin1(self, file: &Shared, range: Range<usize>) -> Result<Val<'e>, Fault> {
    /// The string's reference to its bytes, and the memory it reported.
    type Held = (Shared, i64);
    unsafe extern "C" fn release(env: sys::node_api_basic_env, _data: *mut c_void, hint: *mut c_void) {
      // SAFETY: `hint` is the `Box::into_raw` that `shared_latin1` gave
      // this string alone, and N-API calls the finalizer once. It may run
      // after the env that loaded the addon is gone (a Worker's strings are
      // freed with its isolate, after Node has closed its addons): this
      // code stays mapped only because napi-build links the addon
      // `-z nodelete` for glibc, and musl never unloads a library.
      let (_file, size) = *unsafe { Box::from_raw(hint.cast::<Held>()) };
      if !env.is_null() {
        let mut now = 0;
        // SAFETY: an env that N-API hands a finalizer, still alive (it
        // passes null once its env is gone); a basic call, allowed there.
        unsafe { sys::napi_adjust_external_memory(env.cast(), -size, &mut now) };
      }
    }
    let bytes = file.get(range).ok_or(Fault::Status(sys::Status::napi_invalid_arg))?;
    let size = bytes.len() as i64;
    // Reported first: a copy calls the finalizer, which takes it back, at once.
    let mut now = 0;
    napi_call!(self, napi_adjust_external_memory(size, &mut now))?;
    let hint = Box::into_raw(Box::new((Arc::clone(file), size))).cast::<c_void>();
    let (mut v, mut copied) = (ptr::null_mut(), false);
    // SAFETY: `bytes` stay where they are and unchanged while the string
    // lives: the reference behind `hint` keeps its buffer, which no one
    // writes to once shared. The out-pointers are locals.
    let status = unsafe {
      sys::node_api_create_external_string_latin1(
        self.env,
        bytes.as_ptr().cast(),
        size as isize,
        Some(release),
        hint,
        &mut v,
        &mut copied,
      )
    };
    if status != sys::Status::napi_ok {
      // SAFETY: a string that was not made never calls its finalizer, so
      // the box is still ours to drop.
      drop(unsafe { Box::from_raw(hint.cast::<Held>()) });
      // Taken back as the finalizer would; the refusal is the create's.
      let _ = napi_call!(self, napi_adjust_external_memory(-size, &mut now));
    }
    self.check(status)?;
    Ok(Val::new(v))
  }

  pub fn str16(self, units: &[u16]) -> Result<Val<'e>, Fault> {
    let mut v = ptr::null_mut();
    napi_call!(self, napi_create_string_utf16(units.as_ptr(), units.len() as isize, &mut v))?;
    Ok(Val::new(v))
  }

  /// A string's code units.
  pub fn units(self, v: Val<'e>) -> Result<Vec<u16>, Fault> {
    // Most strings here are short: one call into a stack buffer.
    let mut small = [0u16; 256];
    let mut len = 0usize;
    napi_call!(self, napi_get_value_string_utf16(v.0, small.as_mut_ptr(), small.len(), &mut len))?;
    if len < small.len() - 1 {
      return Ok(small[..len].to_vec());
    }
    napi_call!(self, napi_get_value_string_utf16(v.0, ptr::null_mut(), 0, &mut len))?;
    let mut buf = vec![0u16; len + 1];
    napi_call!(self, napi_get_value_string_utf16(v.0, buf.as_mut_ptr(), buf.len(), &mut len))?;
    buf.truncate(len);
    Ok(buf)
  }

  /// A string as UTF-8 (lone surrogates as U+FFFD), written onto the end
  /// of `out` by V8 itself: an append's line, with no copy of its own
  /// (#47).
  pub fn utf8_onto(self, v: Val<'e>, out: &mut Vec<u8>) -> Result<(), Fault> {
    const SMALL: usize = 512;
    let start = out.len();
    out.resize(start + SMALL, 0);
    let mut len = 0usize;
    napi_call!(
      self,
      napi_get_value_string_utf8(v.0, out[start..].as_mut_ptr().cast(), SMALL, &mut len)
    )?;
    // A result that filled the room may have been cut, even mid-character.
    if len < SMALL - 4 {
      out.truncate(start + len);
      return Ok(());
    }
    napi_call!(self, napi_get_value_string_utf8(v.0, ptr::null_mut(), 0, &mut len))?;
    out.resize(start + len + 1, 0);
    napi_call!(
      self,
      napi_get_value_string_utf8(v.0, out[start..].as_mut_ptr().cast(), len + 1, &mut len)
    )?;
    out.truncate(start + len);
    Ok(())
  }

  /// A string as UTF-8, lone surrogates as U+FFFD (what Node hands the
  /// file system for a path).
  pub fn utf8(self, v: Val<'e>) -> Result<String, Fault> {
    let mut small = [0u8; 512];
    let mut len = 0usize;
    napi_call!(
      self,
      napi_get_value_string_utf8(v.0, small.as_mut_ptr().cast(), small.len(), &mut len)
    )?;
    // A result that filled the buffer may have been cut, even mid-character.
    if len < small.len() - 4 {
      return Ok(String::from_utf8_lossy(&small[..len]).into_owned());
    }
    napi_call!(self, napi_get_value_string_utf8(v.0, ptr::null_mut(), 0, &mut len))?;
    let mut buf = vec![0u8; len + 1];
    napi_call!(self, napi_get_value_string_utf8(v.0, buf.as_mut_ptr().cast(), buf.len(), &mut len))?;
    buf.truncate(len);
    Ok(String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
  }
}
