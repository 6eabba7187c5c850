#!/usr/bin/env bash
# Every shipped target compiles (#53): `cargo clippy --all-targets -D
# warnings` for each Rust target in package.json's napi.targets, so that a
# change which breaks one platform's compile (a Linux-only crate, a cfg)
# fails the gate that every commit runs, not a release months later. No C
# is compiled and nothing is linked, so neither zig nor a linker is needed:
# only each target's standard library, which rustup adds to the active
# toolchain once and keeps (about 148 MB to fetch for the five beyond
# x86_64 glibc). Where one cannot be had, the run fails saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'discord-journal: %s\n' "$*"; }
installed=$(rustup target list --installed 2>/dev/null || rustc -vV | sed -n 's/^host: //p')
for target in $(node -p 'require("./package.json").napi.targets.join(" ")'); do
  if ! printf '%s\n' "$installed" | grep -qx "$target"; then
    say "fetching the Rust standard library for $target (rustup target add)"
    if ! command -v rustup >/dev/null || ! rustup target add "$target"; then
      say "cannot check $target: its standard library is not installed and rustup could not add it (rustup target add $target)"
      exit 1
    fi
  fi
  say "clippy for $target"
  # A musl cdylib needs the dynamic C runtime, as build-dist.sh links it:
  # with musl's default static one, rustc drops the cdylib and checks less.
  flags=()
  case $target in *-musl) flags=("CARGO_TARGET_$(printf '%s' "$target" | tr 'a-z-' 'A-Z_')_RUSTFLAGS=-C target-feature=-crt-static") ;; esac
  env "${flags[@]}" cargo clippy --quiet --locked --all-targets --target "$target" -- -D warnings
done
