// Seeded random sequences for `discord-journal verify`: calls of every kind
// with odd entries and arguments, interleaved with raw damage to the files
// (bad lines, BOMs, a record written by hand, STOP lines, owner records),
// the same sequence played on both sides. A sequence is named by its seed
// and replayed alone with `--seed N --sequences 1 --sequences-only`.
"use strict";

const { appendFileSync, mkdirSync, rmSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");

/** xorshift32: the same numbers for the same seed, everywhere (the fuzzer's too). */
function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

const GENS = ["0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a", "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "nope"];
const DAYS = ["2021-01-01", "2021-01-02"];
const WORDS = ["a", "b", "", "é", "😀", "\u2028", '"', "\\", "100", "2021-01-01T05:00:00.000Z", "\ud800"];
// The record files, the addon's: asked once the verify process has loaded this package.
const files = () => require("../journal.js").RECORD_FILES;
const LINES = [
  '{"id":"9"}',
  "{bad",
  "",
  " ",
  '\uFEFF{"id":"bom"}',
  "[1]",
  "null",
  '"s"',
  '{"nonce":"a","status":"unknown"}',
  '{"kind":"k","date":"2021-01-01"}',
  '{"id":"1","at":"2021-01-01T01:00:00.000Z"}',
  '{"__proto__":{"x":1},"id":"p"}',
];
const BOOT = "8c1e5f0a-1111-4222-8333-944455556666";

/** The sequence of seed `seed`, `length` steps long. */
// oxlint-disable-next-line max-lines-per-function -- a named exception, a data table: one maker per export, drawn by the seed
function sequence(seed, length) {
  const r = prng(seed);
  const pick = (a) => a[Math.floor(r() * a.length)];
  const scalar = () => pick([...WORDS, 0, -0, 1.5, 1e21, null, true]);
  const value = (depth = 0) => {
    const k = Math.floor(r() * (depth > 1 ? 2 : 4));
    if (k === 0) return scalar();
    if (k === 1) return undefined;
    if (k === 2) return [value(depth + 1), value(depth + 1)];
    const o = {};
    for (let i = Math.floor(r() * 4); i > 0; i--)
      o[pick(["id", "at", "nonce", "status", "kind", "date", "outcome", "x", "startedAt"])] = value(depth + 1);
    return o;
  };
  const entry = (keys) => {
    const o = {};
    for (const [k, make] of keys) if (r() < 0.9) o[k] = make();
    if (r() < 0.4) o.extra = value();
    return o;
  };
  const id = () => (r() < 0.8 ? String(Math.floor(r() * 5)) : scalar());
  const at = () => (r() < 0.8 ? `${pick(DAYS)}T0${Math.floor(r() * 9)}:00:00.000Z` : scalar());
  const day = () => (r() < 0.85 ? pick(DAYS) : scalar());
  const status = () => pick(["intent", "confirmed", "refused", "unknown", "sent"]);
  const turnId = () => pick(["t1", "t2", "a.b_c", "../x", ""]);
  const seam = (start) => ({ identity: () => ({ start, boot: BOOT }) });
  const makers = [
    () => {
      const e = entry([
        ["id", id],
        ["at", at],
      ]);
      return [`appendInbox`, (M, d) => M.appendInbox(d, e)];
    },
    () => {
      const e = entry([
        ["nonce", id],
        ["status", status],
        ["at", at],
      ]);
      return [`appendOutbox`, (M, d) => M.appendOutbox(d, e)];
    },
    () => {
      const e = value();
      return [`appendDrop`, (M, d) => M.appendDrop(d, e)];
    },
    () => {
      const e = entry([
        ["id", id],
        ["at", at],
      ]);
      return [`appendAdmission`, (M, d) => M.appendAdmission(d, e)];
    },
    () => {
      const e = entry([
        ["kind", () => pick(["k", "ceiling"])],
        ["date", day],
      ]);
      return [`appendNotice`, (M, d) => M.appendNotice(d, e)];
    },
    () => {
      const e = entry([["outcome", () => pick(["applied", "refused", "x"])]]);
      return [`appendReload`, (M, d) => M.appendReload(d, e)];
    },
    () => [`readInboxIds`, (M, d) => M.readInboxIds(d)],
    () => [`readOutbox`, (M, d) => M.readOutbox(d)],
    () => [`unresolvedOutbox`, (M, d) => M.unresolvedOutbox(d)],
    () => [`readDrops`, (M, d) => M.readDrops(d)],
    () => [`readReloads`, (M, d) => M.readReloads(d)],
    () => {
      const v = day();
      return [`countAdmissionsOn`, (M, d) => M.countAdmissionsOn(d, v)];
    },
    () => {
      const [k, v] = [pick(["k", "ceiling"]), day()];
      return [`noticeOn`, (M, d) => M.noticeOn(d, k, v)];
    },
    () => {
      const [t, rec] = [turnId(), entry([["startedAt", at]])];
      return [`writeTurn`, (M, d) => M.writeTurn(d, t, rec)];
    },
    () => {
      const t = turnId();
      return [`readTurn`, (M, d) => M.readTurn(d, t)];
    },
    () => [`listTurns`, (M, d) => M.listTurns(d)],
    () => {
      const v = day();
      return [`countTurnsOn`, (M, d) => M.countTurnsOn(d, v)];
    },
    () => [`stopRequested`, (M, d) => M.stopRequested(d)],
    () => {
      const why = pick(["operator", "recover", undefined]);
      return [`requestStop`, (M, d) => M.requestStop(d, why)];
    },
    () => [`readStop`, (M, d) => M.readStop(d)],
    () => [`clearStop`, (M, d) => M.clearStop(d)],
    () => {
      const g = pick(GENS);
      return [`requestProcessingStop`, (M, d) => M.requestProcessingStop(d, g)];
    },
    () => {
      const g = pick(GENS);
      return [`clearProcessingStop`, (M, d) => M.clearProcessingStop(d, g)];
    },
    () => [`readPid`, (M, d) => M.readPid(d)],
    () => {
      const s = pick(["5", "6", null]);
      return [`ownerState`, (M, d) => M.ownerState(M.readPid(d), seam(s))];
    },
    () => {
      const s = pick(["5", "6", null]);
      return [`writePid`, (M, d) => M.writePid(d, process.pid, { now: Date.UTC(2021, 0, 1), ...seam(s) })];
    },
    () => {
      const s = pick(["5", "6"]);
      return [`unlock`, (M, d) => M.unlock(d, seam(s))];
    },
    () => {
      const s = pick(["5", "6"]);
      return [`recover`, (M, d) => M.recover(d, seam(s))];
    },
    () => {
      const s = pick(["5", "6"]);
      return [`stopTarget`, (M, d) => M.stopTarget(d, seam(s))];
    },
    () => [`clearPid`, (M, d) => M.clearPid(d, process.pid)],
  ];
  const damage = [
    () => {
      const [f, l] = [pick(files()), pick(LINES)];
      return (d) => appendFileSync(join(d, f), `${l}\n`);
    },
    () => {
      const l = pick(['{"at":"2021-01-01T00:00:00.000Z","reason":"x"}', "{bad", ""]);
      return (d) => appendFileSync(join(d, "STOP"), `${l}\n`);
    },
    () => {
      const rec = pick([{ pid: process.pid, start: "5", boot: BOOT }, { pid: 4_194_303, start: "5", boot: BOOT }, "{"]);
      return (d) => {
        mkdirSync(join(d, "run.lock"), { recursive: true, mode: 0o700 });
        writeFileSync(join(d, "run.lock", "owner.json"), typeof rec === "string" ? rec : JSON.stringify(rec), { mode: 0o600 });
      };
    },
    () => (d) => rmSync(join(d, "run.lock"), { recursive: true, force: true }),
  ];
  const steps = [];
  for (let i = 0; i < length; i++) {
    if (r() < 0.15) steps.push({ fs: pick(damage)() });
    else {
      const [name, f] = pick(makers)();
      steps.push({ name: `${name} #${i + 1}`, call: f });
    }
  }
  return { name: `sequence ${seed}`, steps };
}

module.exports = { prng, sequence };
