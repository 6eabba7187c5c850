#!/usr/bin/env bash
# The packed package under Bun and Deno (#24), each installed from npm at a
# pinned version: the package is unpacked as a root of its own with its one
# dependency, this checkout's tests and test tools beside it (never over a
# packed file), and there each runtime runs the whole suite (`bun test`,
# `deno test`) and the demo through the package's command; Bun also runs
# the shared parity runner with the reference, under Bun, as the oracle.
# Where a runtime differs on its own (an engine's words for a TypeError),
# the test says so and skips there by name.
#
#   bash scripts/check-runtimes.sh TARBALL [SPEC]
#
# SPEC is the shared specification (default ../shared/spec); without it,
# parity and the tests that need journal.mjs skip, and say so.
set -euo pipefail
cd "$(dirname "$0")/.."
BUN=1.4.5
DENO=2.9.6
tarball=$(realpath "$1")
spec=$(realpath -q "${2:-../shared/spec}" || true)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the tests that run as another user (setpriv) reach the package through it
chmod 755 "$work"
npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$work/tools" \
  "@oven/bun-linux-x64@$BUN" "@deno/linux-x64-glibc@$DENO" >/dev/null
bun="$work/tools/node_modules/@oven/bun-linux-x64/bin/bun"
deno="$work/tools/node_modules/@deno/linux-x64-glibc/deno"
echo "runtimes: Bun $("$bun" --version), $("$deno" --version | head -n 1)"

pkg="$work/package"
mkdir "$pkg"
tar xzf "$tarball" -C "$pkg" --strip-components=1
# As a host's install sees the package: its devDependencies are not even
# resolved (npm resolves a root project's, --omit=dev or not, and a missing
# version of a build tool's dependency would fail the install).
(cd "$pkg" && node -e 'const fs = require("node:fs"); const p = JSON.parse(fs.readFileSync("package.json", "utf8")); delete p.devDependencies; fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\n")' &&
  npm install --omit=dev --ignore-scripts --no-package-lock --no-audit --no-fund >/dev/null)
for d in __test__ parity fuzz bench reliability scripts examples; do
  mkdir -p "$pkg/$d"
  cp -rn "$d/." "$pkg/$d/"
done
env=()
if [ -n "$spec" ] && [ -d "$spec" ]; then
  env=(DISCORD_JOURNAL_SPEC="$spec/reference/stack")
else
  echo "SKIPPED: no specification at ${2:-../shared/spec}: parity and the verify tests do not run"
fi
cd "$pkg"

# suite NAME SUMMARY COMMAND...: runs it, prints its summary lines and
# every failing or skipped test, and fails as it does.
suite() {
  local name=$1 summary=$2 status=0
  shift 2
  echo "== $name: the suite"
  env "${env[@]}" NO_COLOR=1 "$@" >"$work/suite.log" 2>&1 || status=$?
  grep -aE "$summary" "$work/suite.log" || true
  if [ "$status" != 0 ]; then
    tail -n 60 "$work/suite.log"
    echo "$name: the suite failed (exit $status)" >&2
    exit 1
  fi
}
suite "Bun $BUN" '^\(fail\)|^\(skip\)|^ *[0-9]+ (pass|fail|skip)$|^Ran ' "$bun" test --timeout 120000 __test__/
# Deno's report is coloured; its skipped steps say "ignored"
suite "Deno $DENO" 'FAILED|ignored|^(ok|FAILED) \| ' "$deno" test -A --no-check __test__/
for runtime in bun deno; do
  echo "== $runtime: the demo"
  demo="$work/demo-$runtime"
  if [ "$runtime" = bun ]; then
    "$bun" bin/discord-journal.js demo "$demo" >"$work/demo.out"
  else
    "$deno" run -A bin/discord-journal.js demo "$demo" >"$work/demo.out"
  fi
  grep -q "inbox.jsonl" "$work/demo.out" || {
    cat "$work/demo.out"
    echo "the $runtime demo printed no status" >&2
    exit 1
  }
  echo "demo: ok"
done
if [ -n "$spec" ] && [ -d "$spec" ]; then
  echo "== Bun $BUN: parity with journal.mjs under Bun"
  parity=$(dirname "$spec")/parity/run.mjs
  "$bun" "$parity" --candidate ./index.js --sequences 500 | tail -n 1
  "$bun" "$parity" --candidate ./index.js --cases parity/cases.mjs --sequences 0 | tail -n 1
fi
