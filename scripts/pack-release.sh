#!/usr/bin/env bash
# npm run pack:release [-- SET]: the release tarball (#24, #53). It builds
# and checks the binaries of SET (all by default; linux or darwin for a
# host that deploys to one system alone; scripts/shipped.js), saying first
# what it will fetch and where, then packs them. prepack.js holds the
# tarball to that set, and the manifest packed names it: napi.targets and
# os list what the tarball carries, so that npm refuses it on a system it
# does not carry and the loader names what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
set=${1:-all}
if [ $# -gt 1 ] || [ "$set" = -h ] || [ "$set" = --help ]; then
  echo "usage: npm run pack:release [-- all|linux|darwin|PLATFORM,...]" >&2
  exit 2
fi
bash scripts/build-dist.sh "$set"
printf 'discord-journal: packing\n'
tarball=$(DISCORD_JOURNAL_PACK="$set" npm pack --silent | tail -n 1)
printf 'discord-journal: %s (%s bytes) carries %s\n' "$tarball" "$(stat -c %s "$tarball")" \
  "$(node scripts/shipped.js "$set" | cut -d' ' -f1 | paste -sd' ')"
