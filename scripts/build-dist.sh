#!/usr/bin/env bash
# The binaries the package ships: one per Linux that Node runs on and
# napi-rs prebuilds for, and macOS, so that no host needs Rust (#11, #24).
#
#   x64 and arm64 glibc  linked against glibc 2.17's symbols (the floor
#                        napi-rs builds its Linux binaries on)
#   x64 and arm64 musl   linked dynamically against musl's libc (a static
#                        C runtime cannot be a library that Node loads)
#   x64 and arm64 macOS  for macOS 11 (Node 20's floor), needing only
#                        libSystem; built and checked here, never run here
#
# cargo-zigbuild cross-links them all from this machine; Zig and
# cargo-zigbuild come from PyPI at pinned versions, into a virtualenv under
# target/ that later runs reuse, and rustup adds the targets' standard
# libraries. Each binary is stripped and lands at the name binding.js
# requires. DIST_TARGETS picks some of them (by their file's platform, e.g.
# `DIST_TARGETS=linux-x64-gnu`).
set -euo pipefail
cd "$(dirname "$0")/.."

ZIGLANG=0.15.2
CARGO_ZIGBUILD=0.24.1
GLIBC=2.17
# platform (binding.js's file name) and Rust target
ALL="linux-x64-gnu:x86_64-unknown-linux-gnu
linux-arm64-gnu:aarch64-unknown-linux-gnu
linux-x64-musl:x86_64-unknown-linux-musl
linux-arm64-musl:aarch64-unknown-linux-musl
darwin-x64:x86_64-apple-darwin
darwin-arm64:aarch64-apple-darwin"
wanted=${DIST_TARGETS:-linux-x64-gnu,linux-arm64-gnu,linux-x64-musl,linux-arm64-musl,darwin-x64,darwin-arm64}
MACOS=11.0

venv=${ZIG_VENV:-target/zig-venv}
stamp="$venv/.pinned-$ZIGLANG-$CARGO_ZIGBUILD"
if [ ! -e "$stamp" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "ziglang==$ZIGLANG" "cargo-zigbuild==$CARGO_ZIGBUILD"
  touch "$stamp"
fi
venv=$(cd "$venv" && pwd)

# macOS: zig's Mach-O linker ignores rustc's list of exports (every Rust
# symbol would be exported), so the darwin binaries are linked by ld64.lld,
# which rustup ships as rust-lld and which honours it; zig still compiles
# BLAKE3's C. The "SDK" is zig's libSystem stub: libc and libm are
# libSystem on macOS, and libiconv, which std names but never calls, is an
# empty stub that -dead_strip_dylibs leaves out.
darwin_sdk() {
  local sdk=target/darwin-sdk
  mkdir -p "$sdk"
  ln -sf "$("$venv/bin/python" -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))')/lib/libc/darwin/libSystem.tbd" "$sdk/libSystem.tbd"
  ln -sf libSystem.tbd "$sdk/libc.tbd"
  ln -sf libSystem.tbd "$sdk/libm.tbd"
  printf -- "--- !tapi-tbd\ntbd-version: 4\ntargets: [ x86_64-macos, arm64-macos ]\ninstall-name: '/usr/lib/libiconv.2.dylib'\n...\n" >"$sdk/libiconv.tbd"
  cd "$sdk" && pwd
}

for pair in $ALL; do
  platform=${pair%%:*}
  target=${pair#*:}
  case ",$wanted," in *",$platform,"*) ;; *) continue ;; esac
  if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
  fi
  case $target in
    *-gnu)
      PATH="$venv/bin:$PATH" cargo zigbuild --release --locked --lib --target "$target.$GLIBC"
      ;;
    *-musl)
      # The variable is the target's own, so the host's build scripts keep
      # their flags.
      flags="CARGO_TARGET_$(printf '%s' "$target" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
      env "$flags=-C target-feature=-crt-static" PATH="$venv/bin:$PATH" cargo zigbuild --release --locked --lib --target "$target"
      ;;
    *-apple-darwin)
      sdk=$(darwin_sdk)
      lld="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-lld"
      flags="CARGO_TARGET_$(printf '%s' "$target" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
      link="-C linker=$lld -C linker-flavor=ld64.lld -C link-arg=-L$sdk -C link-arg=-dead_strip_dylibs"
      # its own name, not the build directory's path
      link="$link -C link-arg=-install_name -C link-arg=@rpath/discord-journal.$platform.node"
      env "$flags=$link" MACOSX_DEPLOYMENT_TARGET=$MACOS PATH="$venv/bin:$PATH" cargo zigbuild --release --locked --lib --target "$target"
      ;;
  esac
  case $target in
    *-apple-darwin) lib=libdiscord_journal.dylib ;;
    *) lib=libdiscord_journal.so ;;
  esac
  out="${CARGO_TARGET_DIR:-target}/$target/release/$lib"
  file="discord-journal.$platform.node"
  # strip = true in Cargo.toml's release profile already strips it; strip
  # again where binutils can read the architecture, so a changed profile
  # cannot ship symbols (check-binary.sh fails an unstripped binary). Not a
  # Mach-O file: that would void its code signature.
  case $target in
    *-apple-darwin) cp "$out" "$file" ;;
    *) if strip --strip-all -o "$file" "$out" 2>/dev/null; then :; else cp "$out" "$file"; fi ;;
  esac
  bash scripts/check-binary.sh "$file"
done
