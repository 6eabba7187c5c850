// A generated oracle for the command (#34): journals broken in every way a
// crash, a person or a disk leaves them, alone and combined (record files
// cut, zero-filled, corrupt, a line of JSON null, a directory, a dangling
// link; turn records empty, cut, corrupt or JSON null; an owner live, dead, of another process, without
// a record or with an unreadable one; a brake absent, an operator's, empty,
// a dangling link, foreign, recover's own; a .stop.lock left over). In each,
// the command's verdict is held to what the library does:
//
// - `status`'s brake is `stopRequested()`;
// - `canStart` is whether the connector's start stands on a copy of the
//   journal: `recover`, a fresh `writePid`, and every reader;
// - every file `status` calls fine is read and appended to without refusal;
// - `check` counts exactly the bad lines and records that were made;
// - the exit code is 0 exactly where nothing was broken but a brake or a
//   live owner.
//
// Then the advice is followed: the `next` command, exactly as printed,
// pasted into `sh` (with `discord-journal` on PATH), then `status` again,
// up to five times. It must reach a state that needs no hand, or one that
// names a person's decision (a brake to lift, corruption to move by hand),
// and on the way it must never repeat itself, never lift a brake that was
// on, never lose a whole record (each must still be in some file of the
// journal, set aside or not), and never leave a file its owner cannot
// read.
//
// ORACLE_SEED and ORACLE_JOURNALS choose the run (1 and 500 by default: a
// fixed seed in CI); the count is printed. The command is this package's,
// so the file skips against another implementation.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, addonOnly, scratch, shellFile } from "./helpers.mjs";
import {
  BRAKES,
  DAY,
  FILE_DAMAGE,
  NULL_REFUSALS,
  OWNERS,
  RECORD_FILES,
  TURN_DAMAGE,
  contents,
  firstCommand,
  generate,
  operatorBrake,
  personsDecision,
  random,
  refuses,
  startStands,
  wholeRecords,
} from "./oracle.mjs";
import { RECORDS, readersOf } from "./record-files.mjs";

const require = createRequire(import.meta.url);
const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));

const SEED = Number(process.env.ORACLE_SEED ?? 1);
const JOURNALS = Number(process.env.ORACLE_JOURNALS ?? 500);
const STEPS = 5;

describe("the command's verdict and advice, held to the library over generated journals (#34)", addonOnly, () => {
  const { reach } = require("../cli/target.js");
  const { status, exitOf } = require("../cli/commands/status.js");
  const { check } = require("../cli/commands/check.js");
  const judge = (dir) => reach(dir, { command: "status", argv: ["discord-journal", "status", dir] });
  const top = scratch("discord-journal-oracle-");
  const shim = join(top, "bin");
  mkdirSync(shim);
  writeFileSync(join(shim, "discord-journal"), `#!/bin/sh\nexec ${shellFile(bin)} "$@"\n`, {
    mode: 0o755,
  });
  const env = { ...process.env, PATH: `${shim}:${process.env.PATH}` };
  const rnd = random(SEED);
  const journals = [];
  for (let i = 0; i < JOURNALS; i++) journals.push(generate(top, i, rnd));
  const broken = (made) =>
    made.bad > 0 ||
    Object.values(made.files).some((k) => k === "directory" || k === "dangling") ||
    made.owner === "invalid" ||
    made.brake === "dangling" ||
    // .stop.lock left over refuses every STOP update (stop, unlock, recover).
    made.stopLock ||
    // A delivery past the dedupe window needs a person (#56).
    made.late;

  test(`${JOURNALS} journals (seed ${SEED}): status and check agree with the library`, () => {
    const disagreements = [];
    const say = (j, what) => disagreements.push(`b${journals.indexOf(j)} ${JSON.stringify(j.made)}: ${what}`);
    let copies = 0;
    for (const j of journals) {
      const { dir, made } = j;
      const s = status(judge(dir));
      const c = check(judge(dir));
      let requested;
      if (!refuses(() => (requested = M.stopRequested(dir))) && s.stop.present !== requested)
        say(j, `status's brake ${s.stop.present}, stopRequested ${requested}`);
      if (s.verdict.canStart !== null) {
        const stands = startStands(dir, join(top, "copies", String(copies++)));
        if (s.verdict.canStart !== stands) say(j, `canStart ${s.verdict.canStart}, the start ${stands ? "stands" : "is refused"}`);
      }
      for (const name of RECORD_FILES) {
        const f = s.files[name];
        if (f === undefined || f.refused !== undefined || f.badLines > 0 || (f.nullLine !== undefined && NULL_REFUSALS[name] > 0)) continue;
        const copy = join(top, "copies", String(copies++));
        cpSync(dir, copy, { recursive: true, verbatimSymlinks: true });
        // Every reader of the file, then its appender (record-files.mjs).
        const read = () => (readersOf(M, name, DAY, "ceiling").forEach((r) => r(copy)), RECORDS[name].append(M, copy, "new"));
        if (refuses(read)) say(j, `${name} is fine to status, but its reader or appender refuses`);
      }
      const counted = c.json.problems.filter((p) => p.file !== "links").reduce((n, p) => n + (p.more ?? 1), 0);
      // Each bad line and record, and each file no read gets through (a directory).
      const expected = made.bad + Object.values(made.files).filter((k) => k === "directory").length;
      if (counted !== expected) say(j, `check counts ${counted} problems, ${expected} were made`);
      const code = exitOf(s);
      if (code !== (broken(made) ? 1 : 0)) say(j, `status exits ${code} (${s.verdict.state}: ${s.verdict.why})`);
    }
    console.log(
      `# figure oracle: ${JOURNALS} journals (seed ${SEED}), ${copies} copies started or read, ${disagreements.length} disagreements`,
    );
    assert.deepEqual(disagreements.slice(0, 20), []);
  });

  test(`${JOURNALS} journals (seed ${SEED}): the advice, pasted into sh, reaches a state that needs no hand or a person's decision, and harms nothing`, () => {
    const harms = [];
    const ends = {};
    let steps = 0;
    let failed = 0;
    for (const j of journals) {
      const { dir } = j;
      const name = `b${journals.indexOf(j)} ${JSON.stringify(j.made)}`;
      const records = wholeRecords(dir);
      let braked = operatorBrake(dir);
      let last = null;
      let end = null;
      for (let step = 0; step <= STEPS && end === null; step++) {
        const s = status(judge(dir));
        if (exitOf(s) === 0) end = s.verdict.state;
        else if (personsDecision(s.verdict.next, dir)) end = "a person's decision";
        else if (step === STEPS) harms.push(`${name}: no end after ${STEPS} steps (${s.verdict.next})`);
        else if (s.verdict.next === last) {
          harms.push(`${name}: the same advice twice: ${last}`);
          end = "loop";
        } else {
          last = s.verdict.next;
          const cmd = firstCommand(last);
          const r = spawnSync("sh", ["-c", cmd], { encoding: "utf8", env, timeout: 60_000 });
          steps++;
          // A command may stop part-way (a repair that removed a .stop.lock
          // and then met corruption): harm only where nothing moved, which
          // the same advice coming back shows.
          if (r.status !== 0) failed++;
          const now = operatorBrake(dir);
          if (braked && !now) harms.push(`${name}: \`${cmd}\` lifted the brake`);
          braked ||= now;
          const { all, unreadable } = contents(dir);
          const lost = records.filter((rec) => !all.includes(rec));
          if (lost.length > 0) harms.push(`${name}: \`${cmd}\` lost ${lost.length} whole records, as ${JSON.stringify(lost[0])}`);
          if (unreadable.length > 0) harms.push(`${name}: \`${cmd}\` left ${unreadable[0]} unreadable to its owner`);
        }
      }
      ends[end] = (ends[end] ?? 0) + 1;
    }
    console.log(
      `# figure follow the advice: ${JOURNALS} journals, ${steps} commands pasted (${failed} exited non-zero); ends ${JSON.stringify(ends)}; ${harms.length} harmful steps`,
    );
    assert.deepEqual(harms.slice(0, 20), []);
  });

  test("the generator makes every kind it names", () => {
    const seen = new Set(
      journals.flatMap(({ made }) => [...Object.values(made.files), `turn ${made.turn}`, `owner ${made.owner}`, `brake ${made.brake}`]),
    );
    for (const kind of [
      ...Object.keys(FILE_DAMAGE),
      ...Object.keys(TURN_DAMAGE).map((k) => `turn ${k}`),
      ...OWNERS.map((o) => `owner ${o}`),
      ...BRAKES.map((b) => `brake ${b}`),
    ])
      assert.ok(seen.has(kind), `no journal with ${kind}`);
    assert.ok(journals.some(({ made }) => made.stopLock));
    assert.ok(existsSync(top) && statSync(top).isDirectory());
  });
});
