// The shipped unit's sandbox, reproduced (#63): examples/systemd's service
// runs the collection with ProtectSystem=strict (every mount read-only but
// the API file systems and ReadWritePaths), PrivateTmp, PrivateNetwork,
// NoNewPrivileges and a CapabilityBoundingSet of four capabilities. Inside
// that, access(2) on a healthy journal answers EROFS, and the verdicts
// must still be the ones `status` gives outside: a journal's file system
// is judged as its connector finds it. This runs the command as the unit
// runs it: `unshare -m` (and -n), the mounts made read-only as systemd
// makes them, tmpfs on /tmp and /var/tmp, and `setpriv` with the unit's
// own bounding set, read from the shipped file; then compares each
// binding's verdict and metrics with those of the same command outside.
// The data root is under /var/lib (PrivateTmp and ProtectHome hide /tmp and
// /home, out of the unit's scope), with a copy of the package beside it:
// a checkout under /tmp would be hidden too. scripts/check-systemd.sh runs
// the unit itself under a booted systemd. Root only; the command is this
// package's own, so it skips against another implementation.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { NOBODY, actsAsOwner, addonOnly, binding, crashed, liveOwner } from "./helpers.mjs";

const here = fileURLToPath(new URL("..", import.meta.url));
const unit = readFileSync(join(here, "examples", "systemd", "discord-journal-metrics.service"), "utf8");
const has = (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;
const setting = (name) => new RegExp(`^${name}=(.*)$`, "m").exec(unit)?.[1];

const can =
  process.platform !== "linux"
    ? { skip: "the unit's sandbox is Linux's" }
    : !["unshare", "setpriv", "findmnt", "bash"].every(has)
      ? { skip: "needs unshare, setpriv and findmnt (util-linux) and bash" }
      : actsAsOwner;

// The unit's sandbox, in the order systemd makes it: the mounts seen here
// read-only (ProtectSystem=strict; /proc, /sys and /dev keep theirs), then
// a private /tmp and /var/tmp (PrivateTmp), then the metrics directory
// writable again (ReadWritePaths); the bounding set as the unit gives it,
// and no new privileges. $1 the metrics directory, $2 the data root (which
// must then refuse a write: else this is no reproduction), the rest the
// command.
const SANDBOX = String.raw`
set -eu
out=$1 data=$2 caps=$3
shift 3
mount --make-rslave /
findmnt -rn -o TARGET | while read -r m; do
  m=$(printf '%b' "$m")
  case $m in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
  mount -o remount,bind,ro -- "$m" 2>/dev/null || true
done
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
mount --bind -- "$out" "$out"
mount -o remount,bind,rw -- "$out"
if touch -- "$data/.sandbox-probe" 2>/dev/null; then echo "the data root is writable in the sandbox" >&2; exit 99; fi
exec setpriv --bounding-set "$caps" --inh-caps=-all --no-new-privs -- "$@"
`;

describe("the shipped unit's sandbox (#63)", addonOnly, () => {
  test("in the unit's mount view and capability set, each verdict and metric is the one status gives outside it", can, async (t) => {
    // What this reproduces is what the unit says.
    assert.equal(setting("ProtectSystem"), "strict");
    assert.equal(setting("PrivateTmp"), "yes");
    assert.equal(setting("NoNewPrivileges"), "yes");
    assert.equal(setting("User"), "root");
    const caps = `-all,${setting("CapabilityBoundingSet")
      .split(/\s+/)
      .map((c) => `+${c.replace(/^CAP_/, "").toLowerCase()}`)
      .join(",")}`;

    // A container that may not make mount namespaces cannot reproduce it.
    const probe = spawnSync("unshare", ["-m", "-n", "--", "true"], { encoding: "utf8" });
    if (probe.status !== 0) return t.skip(`unshare -m cannot run here: ${probe.stderr.trim()}`);
    const top = mkdtempSync("/var/lib/discord-journal-sandbox-");
    const live = [];
    const mounted = [];
    after(() => {
      for (const c of live) c.kill("SIGKILL");
      for (const m of mounted.reverse()) spawnSync("umount", [m]);
      rmSync(top, { recursive: true, force: true });
    });
    chmodSync(top, 0o755);
    // The package and the runtime, where the sandbox (and nobody) reach them.
    const pkg = join(top, "package");
    for (const n of ["index.js", "binding.js", "libc.js", "internal.js", "entry.js", "package.json", "bin", "cli"])
      cpSync(join(here, n), join(pkg, n), { recursive: true, dereference: true });
    for (const n of readdirSync(here).filter((n) => n.endsWith(".node"))) cpSync(join(here, n), join(pkg, n));
    cpSync(join(here, "node_modules", "commander"), join(pkg, "node_modules", "commander"), { recursive: true, dereference: true });
    spawnSync("chmod", ["-R", "a+rX", pkg]);
    mkdirSync(join(top, "bin"), { mode: 0o755 });
    const node = join(top, "bin", "node");
    cpSync(process.execPath, node);
    chmodSync(node, 0o755);
    const cmd = join(pkg, "bin", "discord-journal.js");
    // On PATH as an install puts it, where the unit's search path finds
    // it: the commands printed are then the same inside and out.
    writeFileSync(join(top, "bin", "discord-journal"), `#!/bin/sh\nexec ${node} ${cmd} "$@"\n`, { mode: 0o755 });
    const env = { ...process.env, PATH: `${join(top, "bin")}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin` };

    const root = join(top, "data");
    const discord = join(root, "discord");
    mkdirSync(discord, { recursive: true, mode: 0o755 });
    chmodSync(root, 0o755);
    chmodSync(discord, 0o755);
    const b = (name) => binding(root, name);
    b("ready");
    b("idle");
    writeFileSync(join(root, "discord-journal.idle"), "idle\n");
    crashed(b("crashed"));
    // A service user's journal: the command judges it as that user.
    const service = b("service");
    spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, service]);
    chownSync(service, NOBODY, NOBODY);
    // A connector running as root, holding its lock.
    live.push(await liveOwner(b("live")));
    // A connector in a mount namespace of its own, where its journal is
    // read-only (a bind mount remounted so after it claimed it): judged
    // in its view, read-only, though the journal is writable here.
    const walled = b("walled");
    const code = `const { spawnSync } = require("node:child_process");
      require(${JSON.stringify(pkg)}).writePid(${JSON.stringify(walled)}, process.pid);
      for (const o of [["--bind", ${JSON.stringify(walled)}, ${JSON.stringify(walled)}], ["-o", "remount,bind,ro", ${JSON.stringify(walled)}]])
        if (spawnSync("mount", o).status !== 0) process.exit(1);
      console.log("held"); setInterval(() => {}, 1000)`;
    const own = spawn("unshare", ["-m", "--propagation", "private", "--", node, "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    live.push(own);
    await new Promise((resolve) => own.stdout.once("data", resolve));
    // A journal on a file system that really is read-only: read-only inside and out.
    const ro = join(discord, "readonly");
    mkdirSync(ro);
    const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k,nr_inodes=40,mode=700", "tmpfs", ro]);
    if (m.status !== 0) return t.skip(`cannot mount a tmpfs here: ${String(m.stderr).trim()}`);
    mounted.push(ro);
    b("readonly");
    assert.equal(spawnSync("mount", ["-o", "remount,ro", ro]).status, 0);
    // A full file system (statfs counts the same through any mount of it),
    // and a service user's journal its owner may not write in (judged by
    // its mode, as that user, whatever capabilities the unit keeps).
    const full = join(discord, "full");
    mkdirSync(full);
    assert.equal(spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k,nr_inodes=40,mode=700", "tmpfs", full]).status, 0);
    mounted.push(full);
    b("full");
    spawnSync("dd", ["if=/dev/zero", `of=${join(full, ".filler")}`, "bs=4k"]);
    const closed = b("closed");
    spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, closed]);
    chmodSync(closed, 0o500);

    const out = join(top, "metrics");
    mkdirSync(out, { mode: 0o755 });
    const run = (inside, ...args) => {
      const words = [cmd, "status", "--data-root", root, ...args];
      const r = inside
        ? spawnSync("unshare", ["-m", "-n", "--", "bash", "-c", SANDBOX, "sandbox", out, root, caps, node, ...words], {
            encoding: "utf8",
            timeout: 120_000,
            env,
          })
        : spawnSync(node, words, { encoding: "utf8", timeout: 120_000, env });
      assert.notEqual(r.status, 99, r.stderr);
      return r;
    };
    const judged = (inside) => {
      const r = run(inside, "--json");
      return { status: r.status, out: JSON.parse(r.stdout), stderr: r.stderr };
    };
    const outside = judged(false);
    const inside = judged(true);
    const states = (f) => Object.fromEntries(f.out.bindings.map((x) => [x.binding, x.verdict.state]));
    // The verdicts outside are what each of these is.
    assert.deepEqual(states(outside), {
      closed: "stuck",
      crashed: "crashed",
      full: "stuck",
      idle: "ready",
      live: "running",
      readonly: "stuck",
      ready: "ready",
      service: "ready",
      walled: "running",
    });
    assert.match(outside.out.bindings.find((x) => x.binding === "readonly").verdict.why, /read-only \(EROFS/);
    assert.match(outside.out.bindings.find((x) => x.binding === "full").verdict.why, /is full \(ENOSPC/);
    const walledProblems = outside.out.bindings.find((x) => x.binding === "walled").verdict.problems;
    assert.equal(walledProblems.length, 1, JSON.stringify(walledProblems));
    assert.match(
      walledProblems[0].what,
      new RegExp(`read-only \\(EROFS, at ${walled} in the mount namespace of the connector, pid ${own.pid}\\)`),
    );
    assert.equal(walledProblems[0].fix, `\`nsenter -t ${own.pid} -m mount -o remount,bind,rw ${walled}\` (as root) makes it writable`);
    assert.deepEqual(states(inside), states(outside), inside.stderr);
    for (const x of outside.out.bindings) {
      const y = inside.out.bindings.find((z) => z.binding === x.binding);
      assert.deepEqual(y.verdict, x.verdict, x.binding);
      assert.equal(y.exitCode, x.exitCode, x.binding);
    }
    assert.equal(inside.status, outside.status);

    // As the unit runs it: the metrics file, each binding's series alike.
    const series = (text) =>
      text
        .split("\n")
        .filter((l) => /^discord_journal_binding_(state|needs_hand|can_start|idle|braked)\b/.test(l))
        .sort();
    assert.equal(run(false, "--prometheus", join(out, "outside.prom")).status, 0);
    const r = run(true, "--prometheus", join(out, "inside.prom"));
    assert.equal(r.status, 0, r.stderr);
    const want = series(readFileSync(join(out, "outside.prom"), "utf8"));
    assert.ok(want.some((l) => l.includes('binding="readonly",state="stuck"} 1')));
    assert.deepEqual(series(readFileSync(join(out, "inside.prom"), "utf8")), want);
  });
});
