#!/usr/bin/env bash
# The highest GLIBC_ symbol version a binary needs must be at most the
# floor the package promises (2.17, #11); prints it, and the size.
set -euo pipefail
file=${1:-discord-journal.linux-x64-gnu.node}
floor=${2:-2.17}
highest=$(objdump -T "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
size=$(stat -c %s "$file")
stripped=$(file -b "$file" 2>/dev/null | grep -o 'not stripped\|stripped' || echo "?")
echo "$file: highest GLIBC_ symbol $highest (floor $floor), $size bytes, $stripped"
if [ "$(printf '%s\n%s\n' "$highest" "$floor" | sort -V | tail -n 1)" != "$floor" ]; then
  echo "$file needs GLIBC_$highest, above the $floor floor" >&2
  exit 1
fi
