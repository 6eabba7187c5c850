#!/usr/bin/env bash
# The shipped unit and timer under a real systemd (#63): a Debian 12 root
# made with debootstrap (Debian's debootstrap package, from the machine's
# configured mirror; kept under target/ for later runs), booted with
# systemd-nspawn -b (Debian's systemd-container). In it: this machine's
# node, the package installed as docs/operators.md says (`npm install -g`
# of the tarball, prefix /usr/local, here made by the host's npm into the
# root), and examples/systemd's unit and timer copied unchanged from the
# installed package. Journals as a fleet has them, made by the package in
# the container: idle, ready, crashed (its connector killed with SIGKILL),
# a connector running as root, a service user's journal and a connector
# running as that user, and one on a tmpfs mounted read-only. Then:
# `systemd-analyze verify` passes on the unit; the unit started where the
# textfile directory is missing fails (the "-" lets it start, the
# collection says why); `systemctl start` writes for each binding the
# series `status` writes outside the unit (a transient service with no
# sandbox), each as expected; a data root without discord/ fails the unit
# (`systemctl is-failed`); and the timer, enabled, runs it. Needs root;
# exits 77, saying why, where this machine cannot (not Linux, not root, no
# systemd-nspawn to be had).
#
#   bash scripts/check-systemd.sh [TARBALL]   (default: npm pack of this tree, this machine's binary)
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
cannot() {
  echo "check-systemd: cannot run here: $*" >&2
  exit 77
}
[ "$(uname -s)" = Linux ] || cannot "systemd-nspawn is Linux's"
[ "$(id -u)" = 0 ] || cannot "needs root (debootstrap, systemd-nspawn)"
# shellcheck source=scripts/host.sh
. scripts/host.sh
if ! command -v systemd-nspawn >/dev/null || ! command -v debootstrap >/dev/null; then
  command -v apt-get >/dev/null || cannot "no systemd-nspawn or debootstrap, and no apt-get to install them"
  need systemd-nspawn systemd-container
  need debootstrap debootstrap
fi

root=${SYSTEMD_ROOT:-$here/target/systemd-root}
run=$root.run
tools=$(mktemp -d)
nspawn=
leader=
# Powered off; where it does not go within 10 s, its PID 1 is killed,
# which ends every process of the container.
stop_container() {
  if [ -n "$leader" ]; then
    nsenter -t "$leader" -a systemctl poweroff >/dev/null 2>&1 || true
    for _ in $(seq 1 40); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$nspawn" 2>/dev/null && kill -KILL "$leader" 2>/dev/null
  fi
  if [ -n "$nspawn" ]; then
    for _ in $(seq 1 40); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$nspawn" 2>/dev/null || true
    wait "$nspawn" 2>/dev/null || true
  fi
  leader=
  nspawn=
}
cleanup() {
  stop_container
  rm -rf "$tools" "$run"
  # nspawn's lock beside the tree it ran.
  rm -f "$(dirname "$run")/.#$(basename "$run").lck"
}
trap cleanup EXIT

t0=$SECONDS
if [ ! -x "$root/bin/sh" ] || [ ! -e "$root/.complete" ]; then
  rm -rf "$root"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$root" "$(debian_mirror)" >"$tools/debootstrap.log" 2>&1 ||
    {
      tail -n 20 "$tools/debootstrap.log" >&2
      exit 1
    }
  touch "$root/.complete"
  echo "check-systemd: a Debian 12 root made with debootstrap in $((SECONDS - t0)) s (kept in $root)"
fi
# Each run on a copy: the journals, the install and the units go with it.
rm -rf "$run"
cp -a --reflink=auto "$root" "$run"

# Node, and the package as the docs install it.
tarball=${1:-}
if [ -z "$tarball" ]; then
  npm pack --ignore-scripts --silent --pack-destination "$tools" >/dev/null
  tarball=$(ls "$tools"/discord-journal-*.tgz)
fi
tarball=$(realpath "$tarball")
cp "$(realpath "$(command -v node)")" "$run/usr/local/bin/node"
chroot "$run" /usr/local/bin/node --version >/dev/null || {
  echo "this machine's node does not run on Debian 12 (its C library is older than the one it was built for)" >&2
  exit 1
}
npm install -g --prefix "$run/usr/local" --no-audit --no-fund "$tarball" >"$tools/npm.log" 2>&1 || {
  cat "$tools/npm.log" >&2
  exit 1
}
pkg=/usr/local/lib/node_modules/discord-journal
[ -L "$run/usr/local/bin/discord-journal" ] || {
  echo "npm install -g made no /usr/local/bin/discord-journal" >&2
  exit 1
}
# The unit and timer as the package ships them, unchanged.
cp "$run$pkg/examples/systemd/discord-journal-metrics.service" "$run$pkg/examples/systemd/discord-journal-metrics.timer" "$run/etc/systemd/system/"
cmp "$run/etc/systemd/system/discord-journal-metrics.service" examples/systemd/discord-journal-metrics.service
data=$(sed -n 's/^ExecStart=.* --data-root \([^ ]*\) .*/\1/p' examples/systemd/discord-journal-metrics.service)
prom=$(sed -n 's/^ExecStart=.* --prometheus \([^ ]*\).*/\1/p' examples/systemd/discord-journal-metrics.service)
[ -n "$data" ] && [ -n "$prom" ] || {
  echo "the unit's ExecStart names no --data-root and --prometheus" >&2
  exit 1
}

# Booted: a host without systemd as PID 1 has no bus and no machined, so
# the container is neither registered nor given a scope of its own. Where
# nspawn cannot make a container at all (a container that may not make
# namespaces), this machine cannot: said, exit 77.
probe=$(systemd-nspawn -D "$run" --register=no --keep-unit -q /bin/true 2>&1) || cannot "systemd-nspawn cannot run a container here: $probe"
ms() { echo $(($(date +%s%N) / 1000000)); }
t1=$(ms)
systemd-nspawn -b -D "$run" -M discord-journal-check --register=no --keep-unit --console=passive >"$tools/boot.log" 2>&1 &
nspawn=$!
for _ in $(seq 1 120); do
  leader=$(ps -o pid= --ppid "$nspawn" | head -n 1 | tr -d ' ' || true)
  # nspawn's first child forks the container's and goes: the leader is
  # the one that has become systemd.
  [ -n "$leader" ] && [ "$(cat "/proc/$leader/comm" 2>/dev/null)" = systemd ] && break
  kill -0 "$nspawn" 2>/dev/null || break
  sleep 0.25
done
inside() { nsenter -t "$leader" -a -- "$@"; }
# Until its manager answers (its socket comes a moment after it starts),
# then until the boot is done.
state=
for _ in $(seq 1 120); do
  state=$(inside systemctl is-system-running --wait 2>/dev/null || true)
  case $state in running | degraded | maintenance | stopping) break ;; esac
  sleep 0.25
done
case $state in
  running | degraded) ;;
  *)
    cat "$tools/boot.log" >&2
    echo "the container did not boot (systemctl is-system-running: ${state:-nothing})" >&2
    exit 1
    ;;
esac
echo "check-systemd: booted with systemd-nspawn in $(($(ms) - t1)) ms ($(inside systemctl --version | head -n 1))"
# Outside the unit: a transient service with no sandbox, systemd's own PATH.
outside() { inside systemd-run --quiet --wait --pipe --collect -- "$@"; }

# systemd-analyze verify on the shipped unit after the documented install.
v=$(inside systemd-analyze verify /etc/systemd/system/discord-journal-metrics.service /etc/systemd/system/discord-journal-metrics.timer 2>&1) || {
  echo "$v" >&2
  exit 1
}
[ -z "$v" ] || {
  echo "systemd-analyze verify warns: $v" >&2
  exit 1
}

# The journals, made by the package as the connector makes them.
d=$data/discord
# mk DIR [systemd-run's options]: a binding's journal with one inbox record.
mk() {
  local dir=$1
  shift
  inside systemd-run --quiet --wait --pipe --collect "$@" -- /usr/local/bin/node -e 'const J = require(process.argv[1]); J.ensureJournal(process.argv[2]); J.appendInbox(process.argv[2], { id: "m-1", at: "2026-12-01T00:00:00.000Z" })' "$pkg" "$dir"
}
inside mkdir -p "$d"
inside useradd --system --no-create-home --shell /usr/sbin/nologin discord-svc
mk "$d/ready"
mk "$d/idle"
inside sh -c "echo idle > $data/discord-journal.idle"
mk "$d/crashed"
outside /usr/local/bin/node -e 'require(process.argv[1]).writePid(process.argv[2], process.pid); process.kill(process.pid, "SIGKILL")' "$pkg" "$d/crashed" 2>/dev/null || true
mk "$d/live"
inside systemd-run --quiet --unit=connector-live -- /usr/local/bin/node -e 'require(process.argv[1]).writePid(process.argv[2], process.pid); setInterval(() => {}, 1000)' "$pkg" "$d/live"
for b in service service-live; do
  inside install -d -o discord-svc -g discord-svc -m 0700 "$d/$b"
  mk "$d/$b" -p User=discord-svc
done
inside systemd-run --quiet --unit=connector-service -p User=discord-svc -- /usr/local/bin/node -e 'require(process.argv[1]).writePid(process.argv[2], process.pid); setInterval(() => {}, 1000)' "$pkg" "$d/service-live"
inside mkdir "$d/readonly"
inside mount -t tmpfs -o size=256k,nr_inodes=40,mode=0700 tmpfs "$d/readonly"
mk "$d/readonly"
inside mount -o remount,ro "$d/readonly"
for _ in $(seq 1 40); do
  [ -e "$run$d/live/run.lock" ] && [ -e "$run$d/service-live/run.lock" ] && break
  sleep 0.25
done

# The textfile directory missing: the unit starts, the collection fails.
promdir=$(dirname "$prom")
inside rm -rf "$promdir"
if inside systemctl start discord-journal-metrics.service 2>/dev/null; then
  echo "the unit succeeded without its textfile directory" >&2
  exit 1
fi
inside systemctl is-failed --quiet discord-journal-metrics.service
inside journalctl -u discord-journal-metrics.service -o cat --no-pager | grep -q -F "$promdir" || {
  inside journalctl -u discord-journal-metrics.service -o cat --no-pager >&2
  echo "the failed collection does not name $promdir" >&2
  exit 1
}
inside systemctl reset-failed discord-journal-metrics.service
inside install -d -m 0755 "$promdir"

# Each binding's series, outside the unit and from it.
series() { grep -E '^discord_journal_binding_(state|needs_hand|can_start|idle|braked)\b' | sort; }
outside discord-journal status --data-root "$data" --prometheus /root/outside.prom >/dev/null
inside systemctl start discord-journal-metrics.service
[ "$(inside systemctl show -P Result discord-journal-metrics.service)" = success ]
series <"$run/root/outside.prom" >"$tools/outside"
series <"$run$prom" >"$tools/unit"
states=$(grep -E '^discord_journal_binding_state\{.*\} 1$' "$tools/unit" | sed -E 's/.*binding="([^"]*)".*state="([^"]*)".*/\1=\2/' | sort | paste -sd' ')
echo "check-systemd: the unit's verdicts: $states"
if ! diff "$tools/outside" "$tools/unit" >&2; then
  echo "the unit's series differ from status run outside it (< outside, > the unit)" >&2
  exit 1
fi
want=$(printf '%s\n' crashed=crashed idle=ready live=running readonly=stuck ready=ready service=ready service-live=running | sort | paste -sd' ')
[ "$states" = "$want" ] || {
  echo "expected $want" >&2
  exit 1
}
grep -q 'discord_journal_collection_success{[^}]*} 1' "$run$prom"

# A data root without discord/ (a volume not mounted) fails the unit.
inside mv "$d" "$data/elsewhere"
if inside systemctl start discord-journal-metrics.service 2>/dev/null; then
  echo "the unit succeeded on a data root without discord/" >&2
  exit 1
fi
inside systemctl is-failed --quiet discord-journal-metrics.service
grep -q 'discord_journal_collection_success{[^}]*} 0' "$run$prom"
echo "check-systemd: a data root without discord/ fails the unit: $(inside systemctl is-failed discord-journal-metrics.service)"
inside mv "$data/elsewhere" "$d"
inside systemctl reset-failed discord-journal-metrics.service

# The timer, enabled as shipped, runs the unit (OnBootSec=1min).
inside systemctl enable --now --quiet discord-journal-metrics.timer
before=$(inside systemctl show -P InvocationID discord-journal-metrics.service)
t2=$SECONDS
for _ in $(seq 1 150); do
  now=$(inside systemctl show -P InvocationID discord-journal-metrics.service)
  [ "$now" != "$before" ] && [ "$(inside systemctl show -P ActiveState discord-journal-metrics.service)" != activating ] && break
  sleep 0.5
done
[ "$now" != "$before" ] || {
  echo "the timer did not run the unit within 75 s" >&2
  exit 1
}
[ "$(inside systemctl show -P Result discord-journal-metrics.service)" = success ]
series <"$run$prom" | cmp -s - "$tools/unit" || {
  echo "the timer's run wrote other series" >&2
  exit 1
}
echo "check-systemd: the timer ran the unit (after $((SECONDS - t2)) s), result success, the same series"
echo "check-systemd: passed in $((SECONDS - t0)) s"
