#!/usr/bin/env bash
# The binary the package ships (#11): linux-x64 glibc, linked against
# glibc 2.17's symbols by cargo-zigbuild (the floor napi-rs builds its
# Linux binaries on), stripped, at the name index.js requires. Zig and
# cargo-zigbuild come from PyPI at pinned versions, into a virtualenv under
# target/ that later runs reuse.
set -euo pipefail
cd "$(dirname "$0")/.."

ZIGLANG=0.15.2
CARGO_ZIGBUILD=0.24.1
TARGET=x86_64-unknown-linux-gnu
GLIBC=2.17

venv=${ZIG_VENV:-target/zig-venv}
stamp="$venv/.pinned-$ZIGLANG-$CARGO_ZIGBUILD"
if [ ! -e "$stamp" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "ziglang==$ZIGLANG" "cargo-zigbuild==$CARGO_ZIGBUILD"
  touch "$stamp"
fi
venv=$(cd "$venv" && pwd)

PATH="$venv/bin:$PATH" cargo zigbuild --release --locked --lib --target "$TARGET.$GLIBC"
out="${CARGO_TARGET_DIR:-target}/$TARGET/release/libdiscord_journal.so"
# strip = true in Cargo.toml's release profile already strips it; strip
# again where binutils is present, so a changed profile cannot ship symbols.
if command -v strip >/dev/null; then strip --strip-all -o discord-journal.linux-x64-gnu.node "$out"; else cp "$out" discord-journal.linux-x64-gnu.node; fi
bash scripts/check-glibc.sh discord-journal.linux-x64-gnu.node
