// The generated oracle's journals and judges (#34, #45), shared by the
// oracle over journals alone (cli-oracle.test.mjs) and over journals in
// their surroundings (cli-oracle-surroundings.test.mjs): a seeded generator
// of journals broken in every way a crash, a person or a disk leaves them,
// the connector's start as the judge of `canStart`, and what following the
// advice must never do (lift a brake, lose a record).
import { cpSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { M, deadPid, isAddon } from "./helpers.mjs";
import { RECORDS, RECORD_NAMES, startOf } from "./record-files.mjs";

const require = createRequire(import.meta.url);
// The record files as the addon defines them; none where the reference is tested.
export const RECORD_FILES = isAddon ? require("../cli/journal.js").RECORD_FILES : [];
export const DAY = "2026-01-02";
export const AT = `${DAY}T10:00:00.000Z`;

/** mulberry32: a small seeded generator, so that a failing journal can be made again. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Valid records of each file, appended through the library; how many deliveries are left without an outcome. */
export function fill(dir, n, rnd) {
  let intents = 0;
  for (let i = 0; i < n; i++) {
    M.appendInbox(dir, { id: `m${i}`, at: AT });
    const status = rnd() < 0.5 ? "intent" : "confirmed";
    intents += status === "intent" ? 1 : 0;
    M.appendOutbox(dir, { nonce: `n${i}`, status, at: AT });
    M.appendDrop(dir, { id: `d${i}`, reason: "spam" });
    M.appendAdmission(dir, { id: `a${i}`, at: AT });
    M.appendNotice(dir, { kind: "ceiling", date: DAY, n: i });
    M.appendReload(dir, { outcome: "applied", at: AT, n: i });
  }
  for (let i = 0; i < Math.min(n, 3); i++) M.writeTurn(dir, `t${i}`, { id: `t${i}`, startedAt: AT });
  return intents;
}

/** The readers that refuse a line that is JSON null, by file (record-files.mjs). */
export const NULL_REFUSALS = Object.fromEntries(RECORD_NAMES.map((name) => [name, RECORDS[name].nulls]));

/** The kinds of damage, each with the number of bad lines a reader would refuse. */
export const FILE_DAMAGE = {
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

export const TURN_DAMAGE = {
  empty: (p) => writeFileSync(p, ""),
  cut: (p) => writeFileSync(p, '{"id":"t9","startedAt":"20'),
  corrupt: (p) => writeFileSync(p, "not a record\n"),
  // countTurnsOn reads its startedAt.
  null: (p) => writeFileSync(p, "null\n"),
};

export const OWNERS = ["none", "none", "live", "dead", "mismatch", "absent", "invalid"];
export const BRAKES = ["none", "none", "none", "operator", "empty", "dangling", "foreign", "recover"];

/** One generated journal: its directory and what was made in it. */
export function generate(top, i, rnd) {
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const dir = join(top, "discord", `b${i}`);
  M.ensureJournal(dir);
  // An intent at AT, long past the dedupe window, is a person's to tell (#56).
  const late = fill(dir, 1 + Math.floor(rnd() * 4), rnd) > 0;
  const made = { files: {}, turn: null, owner: pick(OWNERS), brake: pick(BRAKES), stopLock: rnd() < 0.08, bad: 0, late };
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
export function wholeRecords(dir) {
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
export function contents(dir) {
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
export const refuses = (f) => {
  try {
    f();
    return false;
  } catch {
    return true;
  }
};

/** The connector's start on a copy of the journal: recover, claim, and every reader. */
export function startStands(dir, copy) {
  cpSync(dir, copy, { recursive: true, verbatimSymlinks: true });
  try {
    M.recover(copy);
    M.writePid(copy, process.pid);
  } catch {
    return false;
  }
  // Today's, as the connector asks: noticeOn stops at the first notice
  // that answers, so a line after it is read only where none does.
  const start = startOf(M, copy, M.utcDate(Date.now()));
  const readers = [...start.reads, () => M.listTurns(copy), () => M.countTurnsOn(copy, M.utcDate(Date.now()))];
  const appenders = start.appends;
  const stands = !readers.some(refuses) && !appenders.some(refuses);
  M.clearPid(copy, process.pid);
  return stands;
}

/** Whether an operator's brake is on: STOP present, and not only the line recover writes and removes itself. */
export function operatorBrake(dir) {
  if (!M.stopRequested(dir)) return false;
  try {
    const lines = M.readStop(dir);
    return !(lines.length === 1 && lines[0].reason === M.RECOVER_REASON);
  } catch {
    return true;
  }
}

/** The first command in backquotes of an advice, or null. */
export const firstCommand = (next) => /`([^`]+)`/.exec(next ?? "")?.[1] ?? null;

/** Whether an advice is a person's to follow, not a command to paste. */
export function personsDecision(next, dir) {
  const cmd = firstCommand(next);
  // So is what the channel shows of a delivery past the dedupe window (#56).
  if (cmd === null || next.includes("by hand") || next.startsWith("look in ")) return true;
  // Lifting a brake is the operator's decision, never the command's.
  return cmd.startsWith("rm ") && cmd.includes(join(dir, "STOP")) && !cmd.includes("STOP.aside");
}
