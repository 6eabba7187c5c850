#!/usr/bin/env bash
# What a shipped binary needs of the system that loads it (#11): built for
# the architecture its name says, stripped, and for glibc at most the floor
# the package promises (the highest GLIBC_ symbol version, 2.17), for musl
# nothing but musl's libc (a musl host need not have libgcc_s). Prints what
# it found. With no FILE, checks the four binaries a published package
# carries, each of which must be there.
#
#   bash scripts/check-binary.sh [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
FLOOR=2.17
[ $# -gt 0 ] || set -- discord-journal.linux-{x64,arm64}-{gnu,musl}.node
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
  info=$(file -b "$file")
  case $file in
    *-x64-*) arch="x86-64" ;;
    *-arm64-*) arch="ARM aarch64" ;;
    *) arch="?" ;;
  esac
  case $info in *"$arch"*) ;; *) fail "is not a $arch binary: $info" ;; esac
  case $info in *"not stripped"*) fail "is not stripped" ;; esac
  needed=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  case $file in
    *-gnu.node)
      highest=$(objdump -T "$file" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
      # binutils without the architecture: the version needs read by readelf
      [ -n "$highest" ] || highest=$(readelf -V "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
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
  echo "$file: $arch, $what, $(stat -c %s "$file") bytes, stripped"
done
exit $status
