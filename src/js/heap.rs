//! The C heap's free pages given back to the system at the end of a call
//! whose cold read of a large file churned it (`room::churned`, #32):
//! glibc returns memory from the top of its heap alone, so what a read
//! freed below a live allocation stays resident. Here, in the boundary,
//! because the call's answer is freed only once it is JavaScript's, and
//! because the crate's `unsafe` lives in `src/js/`. musl and macOS give
//! free memory back themselves.

/// Gives the heap's free pages back where a cold read churned it.
pub fn settle() {
  let churned = crate::read::room::take_churned();
  #[cfg(all(target_os = "linux", target_env = "gnu"))]
  if churned {
    // SAFETY: malloc_trim takes no pointer; glibc locks each arena while it
    // walks it, as any allocation does.
    unsafe {
      nix::libc::malloc_trim(0);
    }
  }
  #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
  let _ = churned;
}
