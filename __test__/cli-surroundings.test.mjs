// The command's verdict where the trouble lies around the journal (#45),
// each state made real: a directory on its path its owner cannot search
// (root can), a read-only mount, a full file system, recover's own STOP
// under a `stop` that could not write, a zombie owner, turns/ closed to its
// owner, a FIFO or a directory among the turn records. Each fix is pasted
// as given and must move the journal on. The command is this package's
// own, so these tests skip against another implementation.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  AS_NOBODY,
  NOBODY,
  actsAsOwner,
  M,
  addonOnly,
  journal,
  mountsTmpfs,
  scratch,
  withTmpfs,
  shellFile,
  bin,
  cli,
  json,
} from "./helpers.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
// What a pasted command finds on PATH: this package's command, and `sudo
// -u USER` where the machine has no sudo (setpriv, as that user).
const shim = join(scratch("discord-journal-shim-"), "bin");
mkdirSync(shim);
writeFileSync(join(shim, "discord-journal"), `#!/bin/sh\nexec ${shellFile(bin)} "$@"\n`, {
  mode: 0o755,
});
if (spawnSync("sh", ["-c", "command -v sudo"]).status !== 0)
  writeFileSync(
    join(shim, "sudo"),
    `#!/bin/sh\n[ "$1" = -u ] || exec "$@"\nu=$(id -u "$2") g=$(id -g "$2"); shift 2\nexec setpriv --reuid="$u" --regid="$g" --clear-groups "$@"\n`,
    { mode: 0o755 },
  );
const env = { ...process.env, PATH: `${shim}:${process.env.PATH}` };

/** The first command quoted in a fix, run in a shell as the operator would paste it. */
const paste = (fix) => {
  const command = /`([^`]+)`/.exec(fix)?.[1];
  assert.ok(command, `a command in: ${fix}`);
  const r = spawnSync("sh", ["-c", command], { encoding: "utf8", env });
  assert.equal(r.status, 0, `${command}: ${r.stderr}`);
  return command;
};

const asRoot = actsAsOwner;

/** Gives `p` and everything below it to nobody. */
function giveAway(p) {
  chownSync(p, NOBODY, NOBODY);
  for (const e of readdirSync(p, { withFileTypes: true })) {
    if (e.isDirectory()) giveAway(join(p, e.name));
    else chownSync(join(p, e.name), NOBODY, NOBODY);
  }
}

describe("the verdict holds in the journal's surroundings (#45)", addonOnly, () => {
  test(
    "run as root under a directory only root can search: stuck naming it, stop writes nothing, and the fix pasted lets the owner in",
    asRoot,
    () => {
      const top = scratch();
      chmodSync(top, 0o755);
      const closed = join(top, "srv");
      const dir = join(closed, "data", "discord", "alpha");
      M.ensureJournal(dir);
      chmodSync(closed, 0o700);
      chmodSync(join(closed, "data"), 0o755);
      chmodSync(join(closed, "data", "discord"), 0o755);
      giveAway(dir);
      const s = json("status", dir);
      assert.equal(s.out.verdict.state, "stuck");
      assert.equal(s.out.verdict.canStart, false);
      assert.match(s.out.verdict.why, new RegExp(`cannot search ${closed} \\(EACCES\\), on the journal's path`));
      assert.ok(
        s.out.verdict.next.startsWith(`\`chmod o+x ${closed}\` lets every user search it (not list it), its service included`),
        s.out.verdict.next,
      );
      assert.equal(s.status, 1);
      const stop = cli("stop", dir, "maintenance");
      assert.equal(stop.status, 1);
      assert.match(stop.stderr, /cannot search .* nothing was written\. `chmod o\+x /);
      assert.equal(existsSync(join(dir, "STOP")), false, "no STOP the owner could not see");
      paste(s.out.verdict.next);
      assert.equal(json("status", dir).out.verdict.canStart, true);
      assert.equal(cli("stop", dir, "maintenance").status, 0);
    },
  );

  test(
    "run as root with the journal's own parent closed to its owner: status refuses, the fleet and its metrics say stuck, and its next pasted lets the owner in",
    asRoot,
    () => {
      const root = scratch();
      chmodSync(root, 0o755);
      const dir = join(root, "discord", "alpha");
      // Two of one owner: the fleet judges the second in the child that became the owner for the first.
      for (const d of [dir, join(root, "discord", "beta")]) {
        M.ensureJournal(d);
        giveAway(d);
      }
      chmodSync(join(root, "discord"), 0o700);
      const one = cli("status", dir);
      assert.equal(one.status, 1);
      assert.equal(one.stdout, "", "no state it could not read as the owner");
      const closed = join(root, "discord");
      assert.match(one.stderr, new RegExp(`cannot search ${closed} \\(EACCES\\), on the journal's path`));
      const fleet = json("status", "--data-root", root);
      assert.equal(fleet.status, 1);
      const [b] = fleet.out.bindings;
      assert.equal(b.verdict.state, "stuck");
      assert.ok(b.verdict.next.startsWith(`\`chmod o+x ${closed}\``), b.verdict.next);
      assert.deepEqual(b.verdict.problems, [{ what: b.verdict.why, fix: b.verdict.next, blocks: true }]);
      assert.deepEqual(
        fleet.out.bindings.map((x) => [x.binding, x.verdict?.state]),
        [
          ["alpha", "stuck"],
          ["beta", "stuck"],
        ],
      );
      assert.equal(fleet.out.counts.stuck, 2);
      const text = cli("status", "--data-root", root).stdout.split("\n");
      const at = text.findIndex((l) => l.startsWith("alpha "));
      assert.match(text[at], /^alpha +stuck +nobody \(uid 65534\), the journal's owner, cannot search /);
      assert.equal(text[at + 1], `    next: ${b.verdict.next}`);
      const prom = join(scratch(), "m.prom");
      assert.equal(cli("status", "--data-root", root, "--prometheus", prom).status, 0);
      assert.match(readFileSync(prom, "utf8"), /^discord_journal_binding_state\{[^}]*binding="alpha",state="stuck"\} 1$/m);
      assert.match(readFileSync(prom, "utf8"), /^discord_journal_binding_can_start\{[^}]*binding="alpha"\} 0$/m);
      paste(b.verdict.next);
      assert.equal(json("status", dir).out.verdict.canStart, true);
    },
  );

  test(
    "a journal of root's read as the user who owns a directory above it is not called stuck: its service, root's, reaches it",
    asRoot,
    () => {
      const top = scratch();
      chownSync(top, NOBODY, NOBODY);
      const root = join(top, "data");
      M.ensureJournal(join(root, "discord", "r"));
      chmodSync(join(root, "discord"), 0o700);
      const fleet = json("status", "--data-root", root);
      assert.equal(fleet.status, 1);
      const [b] = fleet.out.bindings;
      assert.match(b.refused, /who owns .*: this command reads the journal with that user's rights/);
      assert.doesNotMatch(b.refused, /its service cannot reach/);
      assert.equal(b.verdict, undefined);
      assert.equal(fleet.out.counts.stuck, 0);
    },
  );

  test("a read-only mount is stuck naming EROFS, and the remount given makes it writable", mountsTmpfs, () => {
    const dir = journal();
    const ro = scratch();
    assert.equal(spawnSync("mount", ["--bind", dir, ro]).status, 0);
    try {
      assert.equal(spawnSync("mount", ["-o", "remount,bind,ro", ro]).status, 0);
      const s = json("status", ro);
      assert.equal(s.out.verdict.state, "stuck");
      assert.equal(s.out.verdict.canStart, false);
      assert.match(s.out.verdict.why, /mounted read-only \(EROFS, at /);
      assert.throws(() => M.writePid(ro, process.pid), /EROFS/, "and a start refuses it so");
      const stop = cli("stop", ro, "maintenance");
      assert.match(stop.stderr, /^the journal's file system is mounted read-only \(EROFS\)/, "the real cause leads");
      assert.equal(paste(s.out.verdict.next), `mount -o remount,bind,rw ${ro}`);
      assert.equal(json("status", ro).out.verdict.state, "ready");
    } finally {
      spawnSync("umount", [ro]);
    }
  });

  test("a full file system is stuck naming ENOSPC, not ready", mountsTmpfs, (t) =>
    withTmpfs(t, (mnt) => {
      const dir = join(mnt, "discord", "alpha");
      M.ensureJournal(dir);
      spawnSync("sh", ["-c", `head -c 1000000 /dev/zero > ${join(mnt, "fill")}`]);
      const s = json("status", dir);
      assert.equal(s.out.verdict.state, "stuck");
      assert.match(s.out.verdict.why, /^the journal's file system is full \(ENOSPC/);
      assert.match(s.out.verdict.next, /`df -h /);
    }),
  );

  test("stop over recover's own STOP, with .stop.lock left: never says a brake is on that the next recover removes", () => {
    const dir = journal();
    writeFileSync(join(dir, "STOP"), JSON.stringify({ at: "2026-12-01T00:00:00.000Z", reason: M.RECOVER_REASON }) + "\n", { mode: 0o600 });
    mkdirSync(join(dir, ".stop.lock"));
    const r = cli("stop", dir, "investigating");
    assert.equal(r.status, 1);
    assert.doesNotMatch(r.stderr, /the brake is on all the same/);
    assert.match(r.stderr, /the brake is NOT on/);
    // The fix it gives, pasted, then the command again: a brake recover keeps.
    paste(/\.stop\.lock was left .*/.exec(r.stderr)[0]);
    assert.equal(cli("stop", dir, "investigating").status, 0);
    assert.equal(cli("recover", dir).status, 3, "the operator's line holds");
    assert.equal(M.stopRequested(dir), true);
  });

  test("a zombie owner is named as dead and unreaped, with its parent; once reaped, recover clears it", async () => {
    const dir = journal();
    // The claimant exits holding the lock; its parent (sh, become sleep) never reaps it.
    const code = `require(${JSON.stringify(root)}).writePid(${JSON.stringify(dir)}, process.pid)`;
    const parent = spawn("sh", ["-c", `${JSON.stringify(process.execPath)} -e '${code}' & exec sleep 60`], { stdio: "ignore" });
    try {
      let s;
      for (let i = 0; i < 200; i++) {
        s = json("status", dir);
        if (s.out.lock?.zombie) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(s.out.lock.state, "live", "the library's answer stays journal.mjs's");
      assert.equal(s.out.lock.zombie.parent.pid, parent.pid);
      assert.equal(s.out.verdict.state, "stuck");
      assert.match(s.out.verdict.why, new RegExp(`is dead, but its parent, pid ${parent.pid} \\(sleep 60\\), has not reaped it`));
      assert.match(s.out.verdict.next, new RegExp(`^\`kill -s CHLD ${parent.pid}\``));
      const unlock = cli("unlock", dir);
      assert.equal(unlock.status, 1);
      assert.match(unlock.stderr, /has not reaped it/);
      spawnSync("rm", [join(dir, "STOP")]);
      assert.match(cli("recover", dir).stderr, /has not reaped it/);
    } finally {
      parent.kill("SIGKILL");
    }
    await new Promise((r) => parent.once("exit", r));
    for (let i = 0; i < 100 && json("status", dir).out.lock?.zombie; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(cli("recover", dir).stdout.trim(), "cleared");
  });

  test("turns/ closed to its owner: next is the chmod that opens it, and pasted the records read", asRoot, () => {
    const top = scratch();
    chmodSync(top, 0o755);
    const dir = join(top, "alpha");
    M.ensureJournal(dir);
    M.writeTurn(dir, "t1", { startedAt: "2026-12-01T00:00:00.000Z" });
    giveAway(dir);
    chmodSync(join(dir, "turns"), 0o300);
    const s = json("status", dir);
    assert.equal(s.out.verdict.state, "unreadable");
    assert.match(s.out.verdict.next, new RegExp(`^\`${AS_NOBODY}chmod 700 ${join(dir, "turns")}\`$`));
    // Its mode and the listing it fails are two problems, one command (#57).
    const text = cli("status", dir).stdout;
    assert.equal(text.match(/fix: `[^`]*chmod 700/g)?.length, 1, text);
    assert.match(text, /fix: the command above/);
    paste(s.out.verdict.next);
    assert.equal(json("status", dir).out.turns.records, 1);
  });

  test("a FIFO, a socket and a directory among the turn records: each gets its command, check prints it, and pasted the journal is ready", () => {
    const dir = journal();
    M.writeTurn(dir, "t1", { startedAt: "2026-12-01T00:00:00.000Z" });
    spawnSync("mkfifo", ["-m", "600", join(dir, "turns", "a.json")]);
    mkdirSync(join(dir, "turns", "b.json"), { mode: 0o700 });
    const sock = spawnSync("python3", [
      "-c",
      `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(join(dir, "turns", "c.json"))})`,
    ]);
    const check = cli("check", dir);
    assert.match(check.stdout, new RegExp(`fix: \`rm ${join(dir, "turns", "a.json")}\` \\(a FIFO holds no record\\)`));
    for (let i = 0; i < 4; i++) {
      const s = json("status", dir);
      if (s.out.verdict.state === "ready") break;
      assert.doesNotMatch(s.out.verdict.next, /by hand/);
      paste(s.out.verdict.next);
    }
    assert.equal(json("status", dir).out.verdict.state, "ready");
    assert.equal(M.listTurns(dir).length, 1);
    if (sock.status === 0) assert.equal(existsSync(join(dir, "turns", "c.json")), false);
    assert.ok(readdirSync(join(dir, "turns")).includes("b.json.aside"), "the directory is kept, set aside");
    assert.equal(readFileSync(join(dir, "turns", "t1.json"), "utf8").length > 0, true);
  });
});
