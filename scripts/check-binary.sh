#!/usr/bin/env bash
# What a shipped binary needs of the system that loads it (#11): built for
# the architecture its name says, stripped, no executable stack (glibc 2.41
# refuses to load such a library), on arm64 segments aligned for 64 KiB
# pages, and for glibc at most the floor the package promises (the highest
# GLIBC_ symbol version, 2.17), for musl nothing but musl's libc (a musl
# host need not have libgcc_s). Only binutils' readelf and objdump are
# used. A macOS binary is checked by check-macho.mjs. Prints what it found.
# With no FILE, checks the six binaries a published package carries, each
# of which must be there.
#
#   bash scripts/check-binary.sh [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
FLOOR=2.17
[ $# -gt 0 ] || set -- $(node scripts/shipped.js)
status=0
for file in "$@"; do
  fail() {
    echo "$file: $*" >&2
    status=1
  }
  if [ ! -f "$file" ]; then
    fail "missing (npm run build:dist builds it)"
    continue
  fi
  case $file in
    *.darwin-*)
      node scripts/check-macho.mjs "$file" || status=1
      continue
      ;;
  esac
  case $file in
    *-x64-*) arch="X86-64" ;;
    *-arm64-*) arch="AArch64" ;;
    *) arch="?" ;;
  esac
  machine=$(readelf -h "$file" | sed -n 's/^ *Machine: *//p')
  case $machine in *"$arch") ;; *) fail "is not a $arch binary: $machine" ;; esac
  # stripped: no symbol table but the dynamic one
  stripped=stripped
  if readelf -SW "$file" | grep -q ' \.symtab '; then
    fail "is not stripped"
    stripped="not stripped"
  fi
  # glibc 2.41 refuses to load a library that asks for an executable stack
  if readelf -lW "$file" | grep GNU_STACK | grep -q 'RWE'; then fail "asks for an executable stack"; fi
  # arm64 kernels with 16 KiB or 64 KiB pages map only segments aligned to them
  if [ "$arch" = AArch64 ]; then
    for align in $(readelf -lW "$file" | awk '$1 == "LOAD" {print $NF}'); do
      [ $((align)) -ge 65536 ] || fail "has a LOAD segment aligned at $align, below 64 KiB"
    done
  fi
  needed=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  case $file in
    *-gnu.node)
      highest=$(objdump -T "$file" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1 || true)
      # binutils without the architecture: the version needs read by readelf
      [ -n "$highest" ] || highest=$(readelf -V "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1 || true)
      if [ "$(printf '%s\n%s\n' "$highest" "$FLOOR" | sort -V | tail -n 1)" != "$FLOOR" ]; then
        fail "needs GLIBC_$highest, above the $FLOOR floor"
      fi
      what="highest GLIBC_ symbol $highest (floor $FLOOR)"
      ;;
    *-musl.node)
      [ "$needed" = "libc.so " ] || fail "needs $needed, not musl's libc alone"
      what="needs ${needed% }"
      ;;
    *) what="" ;;
  esac
  echo "$file: $arch, $what, $(stat -c %s "$file") bytes, $stripped"
done
exit $status
