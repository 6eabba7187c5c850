// On macOS a Node addon leaves N-API's symbols to be found in the process
// that loads it. napi-build says so with `-Wl -undefined dynamic_lookup`, a
// stray `-Wl` that clang ignores and ld64.lld refuses; the release build
// links the darwin binaries with ld64.lld (scripts/build-dist.sh), so the
// two arguments are given here instead, which clang and ld64 both take.
fn main() {
  if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos") {
    println!("cargo:rustc-cdylib-link-arg=-undefined");
    println!("cargo:rustc-cdylib-link-arg=dynamic_lookup");
  } else {
    napi_build::setup();
  }
}
