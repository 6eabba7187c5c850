#!/usr/bin/env bash
# The binaries the package ships: one per Linux that Node runs on and
# napi-rs prebuilds for, so that no host needs Rust (#11).
#
#   x64 and arm64 glibc  linked against glibc 2.17's symbols (the floor
#                        napi-rs builds its Linux binaries on)
#   x64 and arm64 musl   linked dynamically against musl's libc (a static
#                        C runtime cannot be a library that Node loads)
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
linux-arm64-musl:aarch64-unknown-linux-musl"
wanted=${DIST_TARGETS:-linux-x64-gnu,linux-arm64-gnu,linux-x64-musl,linux-arm64-musl}

venv=${ZIG_VENV:-target/zig-venv}
stamp="$venv/.pinned-$ZIGLANG-$CARGO_ZIGBUILD"
if [ ! -e "$stamp" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "ziglang==$ZIGLANG" "cargo-zigbuild==$CARGO_ZIGBUILD"
  touch "$stamp"
fi
venv=$(cd "$venv" && pwd)

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
  esac
  out="${CARGO_TARGET_DIR:-target}/$target/release/libdiscord_journal.so"
  file="discord-journal.$platform.node"
  # strip = true in Cargo.toml's release profile already strips it; strip
  # again where binutils can read the architecture, so a changed profile
  # cannot ship symbols (check-binary.sh fails an unstripped binary).
  if strip --strip-all -o "$file" "$out" 2>/dev/null; then :; else cp "$out" "$file"; fi
  bash scripts/check-binary.sh "$file"
done
