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
# libraries to the active toolchain, where they stay. Each binary is
# stripped and lands at the name binding.js requires.
#
#   bash scripts/build-dist.sh [SET]
#
# SET (or DIST_TARGETS) is all (the default), linux, darwin, or platforms
# joined by commas (scripts/shipped.js). Before it starts it says what it
# will fetch, where, and about how much (#53: the figures measured on a
# fresh machine), then each step as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."

ZIGLANG=0.15.2
CARGO_ZIGBUILD=0.24.1
GLIBC=2.17
MACOS=11.0
set=${1:-${DIST_TARGETS:-all}}
pairs=$(node scripts/shipped.js "$set") || exit 2
count=$(printf '%s\n' "$pairs" | wc -l)
say() { printf 'discord-journal: %s\n' "$*"; }

# A standard library's download and size on disk, in MB (rustup 1.28,
# Rust 1.95); the host's own comes with the toolchain.
std_mb() {
  case $1 in
    aarch64-unknown-linux-gnu) echo "28 152" ;;
    x86_64-unknown-linux-musl) echo "38 218" ;;
    aarch64-unknown-linux-musl) echo "27 135" ;;
    x86_64-apple-darwin) echo "28 138" ;;
    aarch64-apple-darwin) echo "27 126" ;;
    *) echo "30 180" ;;
  esac
}

venv=${ZIG_VENV:-target/zig-venv}
stamp="$venv/.pinned-$ZIGLANG-$CARGO_ZIGBUILD"
installed=$(rustup target list --installed 2>/dev/null || rustc -vV | sed -n 's/^host: //p')
fetch=() down=0 disk=0
while read -r platform target; do
  if ! printf '%s\n' "$installed" | grep -qx "$target"; then
    read -r d k <<<"$(std_mb "$target")"
    fetch+=("$target") down=$((down + d)) disk=$((disk + k))
  fi
done <<<"$pairs"

say "building $count binar$([ "$count" = 1 ] && echo y || echo ies): $(printf '%s\n' "$pairs" | cut -d' ' -f1 | paste -sd' ')"
if [ "${#fetch[@]}" -gt 0 ]; then
  command -v rustup >/dev/null || {
    say "no rustup on PATH to add the Rust standard library of ${fetch[*]}: install Rust through rustup (https://rustup.rs), or add those targets to this toolchain by hand"
    exit 1
  }
  say "to fetch: the Rust standard library of ${fetch[*]} through rustup, about $down MB, kept in the active toolchain ($(rustc --print sysroot)/lib/rustlib, about $disk MB; \`rustup target remove\` takes one back)"
fi
if [ ! -e "$stamp" ]; then
  say "to fetch: Zig $ZIGLANG and cargo-zigbuild $CARGO_ZIGBUILD from PyPI, about 95 MB, into $venv (about 410 MB, reused by later builds)"
fi
if [ "${#fetch[@]}" = 0 ] && [ -e "$stamp" ]; then say "nothing to fetch: every standard library and $venv are here"; fi
say "each binary then builds in target/<target>/release (about 100 MB and a minute each on 2 cores) and is checked"

if [ ! -e "$stamp" ]; then
  say "fetching Zig and cargo-zigbuild into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --disable-pip-version-check --progress-bar on "ziglang==$ZIGLANG" "cargo-zigbuild==$CARGO_ZIGBUILD" | grep --line-buffered -v "^Requirement already" || true
  [ -x "$venv/bin/cargo-zigbuild" ] || {
    say "could not install Zig and cargo-zigbuild from PyPI into $venv (pip's words above)"
    exit 1
  }
  touch "$stamp"
fi
venv=$(cd "$venv" && pwd)

# macOS: zig's Mach-O linker ignores rustc's list of exports (every Rust
# symbol would be exported), so the darwin binaries are linked by ld64.lld,
# which rustup ships as rust-lld and which honours it (the crate compiles
# no C). The "SDK" is zig's libSystem stub: libc and libm are
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

step=0
while read -r platform target <&3; do
  step=$((step + 1))
  at="[$step/$count] $platform"
  case " ${fetch[*]} " in
    *" $target "*)
      say "$at: fetching the Rust standard library for $target (rustup target add)"
      rustup target add "$target" || {
        say "$at: rustup could not add $target (its words above): the standard library cannot be fetched here"
        exit 1
      }
      ;;
  esac
  say "$at: building ($target)"
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
      say "$at: (rustc warns that xcrun is missing: no macOS SDK is needed here, the link uses zig's libSystem stub)"
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
  say "$at: checking $file"
  bash scripts/check-binary.sh "$file"
done 3<<<"$pairs"
say "built and checked: $(printf '%s\n' "$pairs" | cut -d' ' -f1 | sed 's/^/discord-journal./; s/$/.node/' | paste -sd' ')"
