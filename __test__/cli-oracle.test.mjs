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
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, addonOnly, deadPid, isAddon, scratch } from "./helpers.mjs";

const require = createRequire(import.meta.url);
const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));

const SEED = Number(process.env.ORACLE_SEED ?? 1);
const JOURNALS = Number(process.env.ORACLE_JOURNALS ?? 500);
const STEPS = 5;
// The record files as the addon defines them; the generator's own, where the reference is tested.
const RECORD_FILES = isAddon ? require("../cli/journal.js").RECORD_FILES : [];
const DAY = "2026-01-02";
const AT = `${DAY}T10:00:00.000Z`;

/** mulberry32: a small seeded generator, so that a failing journal can be made again. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Valid records of each file, appended through the library. */
function fill(dir, n, rnd) {
  for (let i = 0; i < n; i++) {
    M.appendInbox(dir, { id: `m${i}`, at: AT });
    M.appendOutbox(dir, { nonce: `n${i}`, status: rnd() < 0.5 ? "intent" : "confirmed", at: AT });
    M.appendDrop(dir, { id: `d${i}`, reason: "spam" });
    M.appendAdmission(dir, { id: `a${i}`, at: AT });
    M.appendNotice(dir, { kind: "ceiling", date: DAY, n: i });
    M.appendReload(dir, { outcome: "applied", at: AT, n: i });
  }
  for (let i = 0; i < Math.min(n, 3); i++) M.writeTurn(dir, `t${i}`, { id: `t${i}`, startedAt: AT });
}

/** The readers that refuse a line that is JSON null, by file: readOutbox and unresolvedOutbox both read its nonce. */
const NULL_REFUSALS = {
  "inbox.jsonl": 1,
  "outbox.jsonl": 2,
  "drops.jsonl": 0,
  "admissions.jsonl": 1,
  "notices.jsonl": 1,
  "reloads.jsonl": 0,
};

/** The kinds of damage, each with the number of bad lines a reader would refuse. */
const FILE_DAMAGE = {
  cut: (p) => (writeFileSync(p, '{"id":"cut', { flag: "a" }), 1),
  zeros: (p) => (writeFileSync(p, Buffer.alloc(37), { flag: "a" }), 1),
  corrupt: (p, rnd) => {
    const lines = readFileSync(p, "utf8").split("\n");
    const k = 1 + Math.floor(rnd() * 2);
    for (let j = 0; j < k; j++) lines.splice(Math.floor(rnd() * lines.length), 0, `garbage ${j} {`);
    writeFileSync(p, lines.join("\n").replace(/\n?$/, "\n"));
    return k;
  },
  // Whole JSON, which only a reader reading a field of each line refuses.
  null: (p) => (writeFileSync(p, "null\n", { flag: "a" }), NULL_REFUSALS[basename(p)]),
  directory: (p) => (rmSync(p, { force: true }), mkdirSync(p, { mode: 0o700 }), 0),
  dangling: (p) => (rmSync(p, { force: true }), symlinkSync("/nonexistent/record-file", p), 0),
};

const TURN_DAMAGE = {
  empty: (p) => writeFileSync(p, ""),
  cut: (p) => writeFileSync(p, '{"id":"t9","startedAt":"20'),
  corrupt: (p) => writeFileSync(p, "not a record\n"),
  // countTurnsOn reads its startedAt.
  null: (p) => writeFileSync(p, "null\n"),
};

const OWNERS = ["none", "none", "live", "dead", "mismatch", "absent", "invalid"];
const BRAKES = ["none", "none", "none", "operator", "empty", "dangling", "foreign", "recover"];

/** One generated journal: its directory and what was made in it. */
function generate(top, i, rnd) {
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const dir = join(top, "discord", `b${i}`);
  M.ensureJournal(dir);
  fill(dir, 1 + Math.floor(rnd() * 4), rnd);
  const made = { files: {}, turn: null, owner: pick(OWNERS), brake: pick(BRAKES), stopLock: rnd() < 0.08, bad: 0 };
  // Up to two record files damaged, one in three journals with none.
  const damaged = rnd() < 0.33 ? 0 : 1 + Math.floor(rnd() * 2);
  for (let k = 0; k < damaged; k++) {
    const name = pick(RECORD_FILES);
    if (made.files[name]) continue;
    const kind = pick(Object.keys(FILE_DAMAGE));
    made.files[name] = kind;
    made.bad += FILE_DAMAGE[kind](join(dir, name), rnd);
  }
  if (rnd() < 0.2) {
    made.turn = pick(Object.keys(TURN_DAMAGE));
    TURN_DAMAGE[made.turn](join(dir, "turns", "t9.json"));
    made.bad += 1;
  }
  const lock = join(dir, "run.lock");
  const record = (pid, start) => {
    mkdirSync(lock, { mode: 0o700 });
    writeFileSync(join(lock, "owner.json"), JSON.stringify({ pid, start, boot: M.bootId(), at: AT }) + "\n", { mode: 0o600 });
  };
  if (made.owner === "live") M.writePid(dir, process.pid);
  else if (made.owner === "dead") record(deadPid(), "5");
  else if (made.owner === "mismatch") record(process.pid, "5");
  else if (made.owner === "absent") mkdirSync(lock, { mode: 0o700 });
  else if (made.owner === "invalid") {
    mkdirSync(lock, { mode: 0o700 });
    writeFileSync(join(lock, "owner.json"), "{not json", { mode: 0o600 });
  }
  const stop = join(dir, "STOP");
  const line = (reason) => JSON.stringify({ reason, at: AT, pid: 1 }) + "\n";
  if (made.brake === "operator") writeFileSync(stop, line("maintenance"), { mode: 0o600 });
  else if (made.brake === "empty") writeFileSync(stop, "", { mode: 0o600 });
  else if (made.brake === "dangling") symlinkSync("/nonexistent/flag", stop);
  else if (made.brake === "foreign") writeFileSync(stop, "halt\n", { mode: 0o600 });
  else if (made.brake === "recover") writeFileSync(stop, line(M.RECOVER_REASON), { mode: 0o600 });
  if (made.stopLock) mkdirSync(join(dir, ".stop.lock"), { mode: 0o700 });
  return { dir, made };
}

/** Every whole record in the journal: each line of a record file that parses, and each turn record. */
function wholeRecords(dir) {
  const out = [];
  for (const name of RECORD_FILES) {
    const p = join(dir, name);
    if (!lstatSync(p, { throwIfNoEntry: false })?.isFile()) continue;
    const text = readFileSync(p, "latin1");
    const lines = text.split("\n");
    lines.pop();
    for (const l of lines) {
      try {
        JSON.parse(Buffer.from(l, "latin1").toString("utf8"));
        out.push(l + "\n");
      } catch {
        // not a whole record
      }
    }
  }
  for (const f of readdirSync(join(dir, "turns"))) {
    const p = join(dir, "turns", f);
    if (!lstatSync(p).isFile()) continue;
    const text = readFileSync(p, "latin1");
    try {
      JSON.parse(text);
      out.push(text);
    } catch {
      // not a whole record
    }
  }
  return out;
}

/** Every regular file's bytes under `dir`, and any whose owner may not read it. */
function contents(dir) {
  const bytes = [];
  const unreadable = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) {
        if ((st.mode & 0o400) === 0) unreadable.push(p);
        bytes.push(readFileSync(p, "latin1"));
      }
    }
  };
  walk(dir);
  return { all: bytes.join("\u0000"), unreadable };
}

/** Whether `f` throws. */
const refuses = (f) => {
  try {
    f();
    return false;
  } catch {
    return true;
  }
};

/** The connector's start on a copy of the journal: recover, claim, and every reader. */
function startStands(dir, copy) {
  cpSync(dir, copy, { recursive: true, verbatimSymlinks: true });
  try {
    M.recover(copy);
    M.writePid(copy, process.pid);
  } catch {
    return false;
  }
  const readers = [
    () => M.readInboxIds(copy),
    () => M.unresolvedOutbox(copy),
    () => M.readDrops(copy),
    // Today's, as the connector asks: noticeOn stops at the first notice
    // that answers, so a line after it is read only where none does.
    () => M.countAdmissionsOn(copy, M.utcDate(Date.now())),
    () => M.noticeOn(copy, "ceiling", M.utcDate(Date.now())),
    () => M.readReloads(copy),
    () => M.listTurns(copy),
    () => M.countTurnsOn(copy, M.utcDate(Date.now())),
  ];
  const appenders = [
    () => M.appendInbox(copy, { id: "new" }),
    () => M.appendOutbox(copy, { nonce: "new", status: "intent" }),
    () => M.appendDrop(copy, { id: "new" }),
    () => M.appendAdmission(copy, { id: "new", at: AT }),
    () => M.appendNotice(copy, { kind: "ceiling", date: DAY }),
    () => M.appendReload(copy, { outcome: "applied" }),
  ];
  const stands = !readers.some(refuses) && !appenders.some(refuses);
  M.clearPid(copy, process.pid);
  return stands;
}

/** Whether an operator's brake is on: STOP present, and not only the line recover writes and removes itself. */
function operatorBrake(dir) {
  if (!M.stopRequested(dir)) return false;
  try {
    const lines = M.readStop(dir);
    return !(lines.length === 1 && lines[0].reason === M.RECOVER_REASON);
  } catch {
    return true;
  }
}

/** The first command in backquotes of an advice, or null. */
const firstCommand = (next) => /`([^`]+)`/.exec(next ?? "")?.[1] ?? null;

/** Whether an advice is a person's to follow, not a command to paste. */
function personsDecision(next, dir) {
  const cmd = firstCommand(next);
  if (cmd === null || next.includes("by hand")) return true;
  // Lifting a brake is the operator's decision, never the command's.
  return cmd.startsWith("rm ") && cmd.includes(join(dir, "STOP")) && !cmd.includes("STOP.aside");
}

describe("the command's verdict and advice, held to the library over generated journals (#34)", addonOnly, () => {
  const { reach } = require("../cli/target.js");
  const { status, exitOf } = require("../cli/commands/status.js");
  const { check } = require("../cli/commands/check.js");
  const judge = (dir) => reach(dir, { command: "status", argv: ["discord-journal", "status", dir] });
  const top = scratch("discord-journal-oracle-");
  const shim = join(top, "bin");
  mkdirSync(shim);
  writeFileSync(join(shim, "discord-journal"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} "$@"\n`, {
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
    made.stopLock;

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
        const read = {
          "inbox.jsonl": () => (M.readInboxIds(copy), M.appendInbox(copy, { id: "new" })),
          "outbox.jsonl": () => (M.readOutbox(copy), M.appendOutbox(copy, { nonce: "new", status: "intent" })),
          "drops.jsonl": () => (M.readDrops(copy), M.appendDrop(copy, { id: "new" })),
          "admissions.jsonl": () => (M.countAdmissionsOn(copy, DAY), M.appendAdmission(copy, { id: "new", at: AT })),
          "notices.jsonl": () => (M.noticeOn(copy, "ceiling", DAY), M.appendNotice(copy, { kind: "ceiling", date: DAY })),
          "reloads.jsonl": () => (M.readReloads(copy), M.appendReload(copy, { outcome: "applied" })),
        }[name];
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
