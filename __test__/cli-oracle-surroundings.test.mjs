// The generated oracle in the journal's surroundings (#45): the journals of
// cli-oracle.test.mjs (oracle.mjs), each placed in one surrounding that a
// copy of its files would lose: a directory above it that its owner cannot
// search (root can), a read-only mount, a full tmpfs, a process stopped
// inside its lock guard, an owner that is a zombie, a record file hard-linked
// with another binding's. In each, the command's verdict is held to the
// library run as the journal's owner in the same surroundings (a copy made
// beside the journal, inside them, so the start can be tried without
// changing what is judged):
//
// - `canStart` is whether the connector's start stands there (`recover`,
//   `writePid`, every reader and appender);
// - the exit code is 1: each surrounding needs a hand.
//
// Then the advice is followed as the plain oracle follows it: `next`
// pasted into `sh`, up to five steps, never repeating itself, never lifting
// a brake, never losing a whole record, ending where nothing needs a hand
// or a person must decide (free space, stop a parent that reaps nothing).
//
// ORACLE_SEED and ORACLE_SURROUNDED choose the run (1 and 36 by default: a
// fixed seed in CI); the count is printed. Needs root (mounts, another
// user); the command is this package's, so it skips against another
// implementation.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { NOBODY, actsAsOwner, M, addonOnly, forOthers, modulePath, scratch, shellFile } from "./helpers.mjs";
import { RECORD_FILES, contents, firstCommand, generate, operatorBrake, personsDecision, random, wholeRecords } from "./oracle.mjs";
import { RECORDS } from "./record-files.mjs";

const require = createRequire(import.meta.url);
const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));
const SEED = Number(process.env.ORACLE_SEED ?? 1);
const JOURNALS = Number(process.env.ORACLE_SURROUNDED ?? 36);
const STEPS = 5;
const SURROUNDINGS = ["closed", "readOnly", "full", "stalled", "zombie", "hardLink"];

const asRoot = process.platform !== "linux" ? { skip: "needs Linux: mounts, and a journal another user owns" } : actsAsOwner;

// Mounts and processes made, undone by the last test (before the
// temporary directories are removed).
const mounts = [];
const processes = [];
function undo() {
  for (const p of processes.splice(0)) p.kill("SIGKILL");
  for (const m of mounts.splice(0).reverse()) spawnSync("umount", ["-l", m]);
}

/** `cp -a` of `dirs` into `into` in one call: hard links among them kept. */
const copyAll = (dirs, into) => {
  mkdirSync(into, { recursive: true });
  const r = spawnSync("cp", ["-a", ...dirs, into], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
};

/** Gives `p` and everything below it to nobody, links themselves. */
const giveAway = (p) => assert.equal(spawnSync("chown", ["-hR", `${NOBODY}:${NOBODY}`, p]).status, 0);

/**
 * A process holding `dir`'s lock guard (a flock on turns/), stopped by
 * SIGSTOP; it lets go a second after it is continued.
 */
async function stallGuard(dir) {
  const p = spawn("flock", ["-x", join(dir, "turns"), "sleep", "1"], { stdio: "ignore" });
  processes.push(p);
  for (let i = 0; i < 200 && !readLocks().includes(` ${p.pid} `); i++) await new Promise((r) => setTimeout(r, 10));
  process.kill(p.pid, "SIGSTOP");
  return p;
}
const readLocks = () => require("node:fs").readFileSync("/proc/locks", "utf8");

/** A zombie: a child its parent (sleep, which never waits) has not reaped; `{ pid, parent }`. */
async function zombie() {
  // The child outlives the shell's exec, so the shell never reaps it.
  const parent = spawn("sh", ["-c", "sleep 0.2 & echo $!; exec sleep 600"], { stdio: ["ignore", "pipe", "ignore"] });
  processes.push(parent);
  const pid = Number(await new Promise((r) => parent.stdout.once("data", (d) => r(String(d).trim()))));
  for (let i = 0; i < 300; i++) {
    const stat = require("node:fs").readFileSync(`/proc/${pid}/stat`, "utf8");
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return { pid, parent: parent.pid };
}

/** Replaces `dir`'s lock with one whose owner record names the zombie `z`. */
function zombieOwns(dir, z) {
  spawnSync("rm", ["-rf", join(dir, "run.lock")]);
  mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
  const rec = { pid: z.pid, start: M.processStart(z.pid), boot: M.bootId(), at: "2026-01-02T10:00:00.000Z" };
  writeFileSync(join(dir, "run.lock", "owner.json"), JSON.stringify(rec) + "\n", { mode: 0o600 });
}

/**
 * The connector's start on `copy`, by the library in a process of its own,
 * as `uid` (root where null): whether recover, the claim, every reader and
 * every appender stand (record-files.mjs gives each file's, as source).
 */
function startStandsAs(copy, uid) {
  const module = uid === null ? modulePath : join(forOthers(), "index.js");
  const code = `
    const M = require(${JSON.stringify(module)});
    const d = ${JSON.stringify(copy)};
    const today = M.utcDate(Date.now());
    try {
      M.recover(d);
      M.writePid(d, process.pid);
      ${Object.values(RECORDS)
        .map((r) => `(${r.read[r.start]})(M, d, today, "ceiling");`)
        .join(" ")}
      M.listTurns(d); M.countTurnsOn(d, today);
      ${Object.values(RECORDS)
        .map((r) => `(${r.append})(M, d, "new");`)
        .join(" ")}
      M.clearPid(d, process.pid);
      console.log("stands");
    } catch (e) { console.log("refused: " + e.message); }`;
  const argv =
    uid === null
      ? [process.execPath, "-e", code]
      : ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, "-e", code];
  const r = spawnSync(argv[0], argv.slice(1), { encoding: "utf8", timeout: 60_000 });
  return r.stdout.trim() === "stands";
}

describe("the command's verdict in the journal's surroundings, held to the library there (#45)", addonOnly, () => {
  // The command judges as root, acting as the owner: its process's ids
  // change for good, so each judgement runs in a process of its own.
  const judged = (dir) => {
    const r = spawnSync(process.execPath, [bin, "status", dir, "--json"], { encoding: "utf8", timeout: 60_000 });
    return { s: JSON.parse(r.stdout), code: r.status };
  };
  const top = scratch("discord-journal-surroundings-");
  chmodSync(top, 0o755);
  const shim = join(top, "bin");
  mkdirSync(shim);
  writeFileSync(join(shim, "discord-journal"), `#!/bin/sh\nexec ${shellFile(bin)} "$@"\n`, {
    mode: 0o755,
  });
  const env = { ...process.env, PATH: `${shim}:${process.env.PATH}` };
  const journals = [];

  test(`${JOURNALS} journals in surroundings (seed ${SEED}): the verdict is the library's as the owner there`, asRoot, async () => {
    const rnd = random(SEED);
    const disagreements = [];
    for (let i = 0; i < JOURNALS; i++) {
      const around = SURROUNDINGS[i % SURROUNDINGS.length];
      const base = join(top, `${around}-${i}`);
      mkdirSync(base, { mode: 0o755 });
      let made;
      let dir;
      let copy;
      let owner = null;
      if (around === "closed") {
        ({ dir, made } = generate(join(base, "srv"), i, rnd));
        copy = `${dir}-copy`;
        copyAll([dir], join(base, "copies"));
        spawnSync("mv", [join(base, "copies", `b${i}`), copy]);
        giveAway(dir);
        giveAway(copy);
        chmodSync(join(base, "srv"), 0o755);
        chmodSync(join(base, "srv", "discord"), 0o755);
        chmodSync(base, 0o700);
        owner = NOBODY;
      } else if (around === "readOnly") {
        const src = join(base, "src");
        ({ made } = generate(src, i, rnd));
        copyAll([join(src, "discord", `b${i}`)], join(src, "copies"));
        const ro = join(base, "ro");
        mkdirSync(ro);
        assert.equal(spawnSync("mount", ["--bind", src, ro]).status, 0);
        mounts.push(ro);
        assert.equal(spawnSync("mount", ["-o", "remount,bind,ro", ro]).status, 0);
        dir = join(ro, "discord", `b${i}`);
        copy = join(ro, "copies", `b${i}`);
      } else if (around === "full") {
        assert.equal(spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m,nr_inodes=400", "tmpfs", base]).status, 0);
        mounts.push(base);
        ({ dir, made } = generate(base, i, rnd));
        copyAll([dir], join(base, "copies"));
        copy = join(base, "copies", `b${i}`);
        spawnSync("sh", ["-c", `head -c 2000000 /dev/zero > ${join(base, "fill")}`]);
      } else if (around === "stalled") {
        ({ dir, made } = generate(base, i, rnd));
        copyAll([dir], join(base, "copies"));
        copy = join(base, "copies", `b${i}`);
        await stallGuard(dir);
        await stallGuard(copy);
      } else if (around === "zombie") {
        ({ dir, made } = generate(base, i, rnd));
        const z = await zombie();
        zombieOwns(dir, z);
        made.owner = "zombie";
        copyAll([dir], join(base, "copies"));
        copy = join(base, "copies", `b${i}`);
      } else {
        ({ dir, made } = generate(base, i, rnd));
        const other = join(base, "discord", `b${i}x`);
        M.ensureJournal(other);
        const file = RECORD_FILES.find((n) => lstatSync(join(dir, n), { throwIfNoEntry: false })?.isFile());
        spawnSync("rm", ["-f", join(other, file)]);
        assert.equal(spawnSync("ln", [join(dir, file), join(other, file)]).status, 0);
        made.linked = file;
        copyAll([dir, other], join(base, "copies"));
        copy = join(base, "copies", `b${i}`);
      }
      made.around = around;
      journals.push({ dir, made });
      const { s, code } = judged(dir);
      const say = (what) => disagreements.push(`b${i} ${JSON.stringify(made)}: ${what}`);
      if (s.verdict.canStart !== null) {
        const stands = startStandsAs(copy, owner);
        if (s.verdict.canStart !== stands)
          say(`canStart ${s.verdict.canStart}, the start as the owner ${stands ? "stands" : "is refused"}`);
      }
      if (code !== 1) say(`status exits ${code} (${s.verdict.state}: ${s.verdict.why})`);
      const named = {
        closed: /cannot search .*, on the journal's path/,
        readOnly: /\(EROFS/,
        full: /\(ENOSPC/,
        stalled: /holds the journal's lock guard and is stopped/,
        zombie: /is dead, but its parent, pid \d+ \(sleep 600\), has not reaped it/,
        hardLink: new RegExp(`^${made.linked ?? "-"} has another name \\(a hard link`),
      }[around];
      if (!s.verdict.problems.some((p) => named.test(p.what)))
        say(`no problem names the surrounding: ${JSON.stringify(s.verdict.problems.map((p) => p.what))}`);
    }
    console.log(`# figure oracle in surroundings: ${journals.length} journals (seed ${SEED}), ${disagreements.length} disagreements`);
    assert.deepEqual(disagreements.slice(0, 20), []);
  });

  test(
    `${JOURNALS} journals in surroundings (seed ${SEED}): the advice, pasted, reaches a state that needs no hand or a person's decision, and harms nothing`,
    asRoot,
    () => {
      const harms = [];
      const ends = {};
      let steps = 0;
      for (const j of journals) {
        const { dir, made } = j;
        const name = `${made.around} ${JSON.stringify(made)}`;
        const records = wholeRecords(dir);
        let braked = operatorBrake(dir);
        let last = null;
        let end = null;
        for (let step = 0; step <= STEPS && end === null; step++) {
          const { s, code } = judged(dir);
          if (code === 0) end = s.verdict.state;
          else if (personsDecision(s.verdict.next, dir)) end = "a person's decision";
          else if (step === STEPS) harms.push(`${name}: no end after ${STEPS} steps (${s.verdict.next})`);
          else if (s.verdict.next === last) {
            harms.push(`${name}: the same advice twice: ${last}`);
            end = "loop";
          } else {
            last = s.verdict.next;
            const cmd = firstCommand(last);
            spawnSync("sh", ["-c", cmd], { encoding: "utf8", env, timeout: 60_000 });
            steps++;
            const now = operatorBrake(dir);
            if (braked && !now) harms.push(`${name}: \`${cmd}\` lifted the brake`);
            braked ||= now;
            const { all } = contents(dir);
            const lost = records.filter((rec) => !all.includes(rec));
            if (lost.length > 0) harms.push(`${name}: \`${cmd}\` lost ${lost.length} whole records, as ${JSON.stringify(lost[0])}`);
          }
        }
        ends[`${made.around}: ${end}`] = (ends[`${made.around}: ${end}`] ?? 0) + 1;
      }
      console.log(
        `# figure follow the advice in surroundings: ${journals.length} journals, ${steps} commands pasted; ends ${JSON.stringify(ends)}; ${harms.length} harmful steps`,
      );
      undo();
      assert.deepEqual(harms.slice(0, 20), []);
      assert.ok(readdirSync(top).length > 0);
    },
  );

  test("what the oracle mounted and started is undone", () => {
    undo();
    assert.equal(mounts.length + processes.length, 0);
  });
});
