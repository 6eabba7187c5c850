#!/usr/bin/env node
// The project's benchmark: times every export that reads or writes on a
// realistic journal and, with --against, compares with a second
// implementation of the same API (such as journal.mjs) in the same process.
//
//   node --expose-gc bench/bench.mjs [--lines N] [--turns N] [--pairs N]
//        [--against PATH] [--json FILE] [--only REGEX] [--tmpfs DIR]
//        [--sweep | --scale] [--max-lines N]
//
// Each row runs in alternating pairs (ours then theirs, then theirs then
// ours) on copies of the same journal, with a garbage collection before each
// timed run; a row's figure is the median of its per-pair ratios ours/theirs.
// Peak memory is measured in a child process per side (maxRSS), for the
// large reads.
//
// The STOP and lock rows are bound by fsync, which the addon does more of
// than journal.mjs where durability needs it (docs/durability.md), and
// writeTurn by the disk's cost of a create, which moves by more than ten
// times from run to run (#25): they are judged on a tmpfs, where an fsync
// is free and a create costs what its work costs (--tmpfs DIR, or one
// mounted here when run as root), and also shown on the disk with the
// number of fsyncs each side made (strace -c), not judged there (#14).
//
// --sweep times each reader the connector calls instead, at 1,000 to
// 1,000,000 lines per file, beside its floor (#47), and draws
// docs/sweep.svg; --scale is its first three rows (the per-message path,
// readInboxIds, unresolvedOutbox) at 10,000, 100,000 and 1,000,000 lines.
// --max-lines N leaves out the larger sizes; --only REGEX picks rows.
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, cpSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { countOf, usageOf } from "../scripts/options.mjs";
import { short, sweepSvg } from "./svg.mjs";

const USAGE =
  "usage: node --expose-gc bench/bench.mjs [--lines N] [--turns N] [--pairs N] [--against PATH] [--json FILE] [--only REGEX] [--tmpfs DIR] [--sweep [--in-turn] | --scale] [--max-lines N]";
const usage = usageOf("bench", USAGE);
const count = countOf(usage);
/** The options, parsed strictly (an unknown option or a missing value is refused); none when imported. */
function options() {
  try {
    return parseArgs({
      strict: true,
      options: {
        lines: { type: "string", default: "100000" },
        turns: { type: "string", default: "2000" },
        pairs: { type: "string", default: "7" },
        against: { type: "string" },
        json: { type: "string" },
        only: { type: "string" },
        tmpfs: { type: "string" },
        scale: { type: "boolean", default: false },
        sweep: { type: "boolean", default: false },
        "in-turn": { type: "boolean", default: false },
        "max-lines": { type: "string" },
        // The peak-memory child's own options (see peakMemory).
        child: { type: "string" },
        dir: { type: "string" },
        // The fsync-counting child's (see fsyncs).
        "fsync-child": { type: "string" },
        row: { type: "string" },
      },
    }).values;
  } catch (e) {
    return usage(e.message);
  }
}

const main = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
const opts = main ? options() : { lines: "100000", turns: "2000", pairs: "7" };
const LINES = count("lines", opts.lines);
const TURNS = count("turns", opts.turns);
const PAIRS = count("pairs", opts.pairs);
// Whether a floor is measured once, where it stands (the readers in turn,
// --in-turn), rather than as the median of a series.
const floorAt = { once: false };
const against = opts.against;
const jsonOut = opts.json;
let only = null;
try {
  only = opts.only === undefined ? null : new RegExp(opts.only);
} catch (e) {
  usage(`--only takes a regular expression: ${e.message}`);
}
const childMode = opts.child;
if (opts.scale && opts.sweep) usage("--scale is the sweep's first rows: give one of --sweep and --scale");
if (opts["in-turn"] && !opts.sweep) usage("--in-turn is a mode of the sweep: give it with --sweep");
const MAX_LINES = opts["max-lines"] === undefined ? null : count("max-lines", opts["max-lines"], 1_000);

const here = fileURLToPath(new URL(".", import.meta.url));
async function load(path) {
  const abs = resolve(path);
  if (abs.endsWith(".mjs")) return import(pathToFileURL(abs).href);
  return createRequire(import.meta.url)(abs);
}

// --- a realistic journal ---------------------------------------------------
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const iso = (t) => new Date(t).toISOString();
const snowflake = (i) => String(1_100_000_000_000_000_000n + BigInt(i) * 4_194_304n);

export function makeJournal(dir, lines = LINES, turns = TURNS) {
  mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
  const span = 30 * DAY;
  const at = (i) => iso(T0 + Math.floor((i / lines) * span));
  const file = (name, make) => {
    const out = [];
    for (let i = 0; i < lines; i++) out.push(JSON.stringify(make(i)));
    writeFileSync(join(dir, name), out.join("\n") + "\n", { mode: 0o600 });
  };
  file("inbox.jsonl", (i) => ({
    id: snowflake(i),
    at: at(i),
    channel: snowflake(i % 17),
    author: snowflake(i % 311),
    kind: i % 9 ? "message" : "mention",
    length: (i * 37) % 1800,
  }));
  file("outbox.jsonl", (i) => {
    const n = Math.floor(i / 2);
    const status = i % 2 === 0 ? "intent" : n % 50 === 0 ? "refused" : n % 97 === 0 ? "unknown" : "confirmed";
    return {
      nonce: `n${n}`,
      status,
      at: at(i),
      channel: snowflake(n % 17),
      ...(status === "confirmed" ? { messageId: snowflake(n) } : {}),
      ...(status === "refused" ? { error: "Missing Access", code: 50001 } : {}),
    };
  });
  file("drops.jsonl", (i) => ({
    at: at(i),
    reason: ["ceiling", "cooldown", "not-addressed", "duplicate"][i % 4],
    id: snowflake(i),
    channel: snowflake(i % 17),
  }));
  file("admissions.jsonl", (i) => ({ id: `turn-${i}`, at: at(i), message: snowflake(i), channel: snowflake(i % 17) }));
  file("notices.jsonl", (i) => ({
    kind: ["ceiling", "cooldown", "reload"][i % 3],
    date: at(i).slice(0, 10),
    at: at(i),
    channel: snowflake(i % 17),
  }));
  file("reloads.jsonl", (i) =>
    i % 5
      ? { outcome: "applied", at: at(i), differences: { channels: { added: [snowflake(i)], removed: [] }, ceiling: [40, 50] } }
      : { outcome: "refused", at: at(i), reason: "binding.json: not valid JSON" },
  );
  for (let i = 0; i < turns; i++) {
    const t = T0 + Math.floor((i / turns) * span);
    writeFileSync(join(dir, "turns", `turn-${String(i).padStart(6, "0")}.json`), turnRecord(`turn-${i}`, i, t), { mode: 0o600 });
  }
}

/** A turn record's text, as writeTurn writes it, for the turn `id` (the `i`th) started at `t`. */
function turnRecord(id, i, t) {
  return (
    JSON.stringify(
      {
        startedAt: iso(t),
        finishedAt: iso(t + 4_000),
        id,
        message: snowflake(i),
        channel: snowflake(i % 17),
        prompt: "x".repeat(200),
        reply: "y".repeat(400),
        usage: { input: 1200, output: 300 },
      },
      null,
      2,
    ) + "\n"
  );
}

// --- rows ----------------------------------------------------------------------
const LAST_DAY = iso(T0 + 29 * DAY).slice(0, 10);
const GEN = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";
// fresh: the row writes, so each timed run gets its own copy of the journal;
// empty: it writes but does not read the large files, so each timed run gets
// a new, empty binding (appending costs the same at any size).
const rows = [
  { name: "countAdmissionsOn", target: 0.15, run: (M, d) => M.countAdmissionsOn(d, LAST_DAY) },
  { name: "noticeOn (no match)", target: 0.15, run: (M, d) => M.noticeOn(d, "none", LAST_DAY) },
  { name: "readInboxIds", target: 0.4, run: (M, d) => M.readInboxIds(d) },
  { name: "unresolvedOutbox", target: 0.3, run: (M, d) => M.unresolvedOutbox(d) },
  { name: "countTurnsOn", target: 0.6, run: (M, d) => M.countTurnsOn(d, LAST_DAY) },
  { name: "readOutbox", target: 0.75, run: (M, d) => M.readOutbox(d) },
  { name: "readDrops", target: 0.75, run: (M, d) => M.readDrops(d) },
  { name: "readReloads", target: 0.75, run: (M, d) => M.readReloads(d) },
  { name: "listTurns", target: 0.75, run: (M, d) => M.listTurns(d) },
  {
    name: "inbound message: appendAdmission + countAdmissionsOn",
    target: 0.05,
    fresh: true,
    warm: (M, d) => M.countAdmissionsOn(d, LAST_DAY),
    run: (M, d) => {
      M.appendAdmission(d, { id: "turn-new", at: `${LAST_DAY}T12:00:00.000Z` });
      return M.countAdmissionsOn(d, LAST_DAY);
    },
  },
  {
    empty: true,
    name: "appendInbox x1000",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 1000; i++)
        M.appendInbox(d, { id: snowflake(LINES + i), at: "2024-01-30T00:00:00.000Z", channel: "c", length: i });
    },
  },
  {
    empty: true,
    name: "appendOutbox x1000",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 1000; i++) M.appendOutbox(d, { nonce: `x${i}`, status: "intent", at: "2024-01-30T00:00:00.000Z", channel: "c" });
    },
  },
  {
    empty: true,
    name: "writeTurn x200",
    // More kernel work than journal.mjs by design (#10): an lstat, so that
    // "already exists" refuses before the record is stringified as the
    // exclusive open does, then an unnamed inode linked into place when
    // whole, so a kill leaves no empty or torn record. In C on a tmpfs
    // those calls take 13.7 µs a record against the exclusive create's 8.1:
    // 1.69, the most the row can be unless the addon's own code costs more
    // than journal.mjs's around the same calls (#25).
    tmpfs: 1.7,
    target: null,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 200; i++) M.writeTurn(d, `new-${i}`, { startedAt: "2024-01-30T00:00:00.000Z", prompt: "x".repeat(200) });
    },
  },
  {
    empty: true,
    name: "appendDrop x1000",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 1000; i++) M.appendDrop(d, { at: "2024-01-30T00:00:00.000Z", reason: "ceiling", id: String(i) });
    },
  },
  {
    empty: true,
    name: "appendAdmission x1000",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 1000; i++) M.appendAdmission(d, { id: `t${i}`, at: "2024-01-30T00:00:00.000Z" });
    },
  },
  {
    empty: true,
    name: "appendNotice x1000",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 1000; i++) M.appendNotice(d, { kind: "ceiling", date: "2024-01-30" });
    },
  },
  {
    empty: true,
    name: "appendReload x1000",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 1000; i++) M.appendReload(d, { outcome: "applied", differences: { a: [i] } });
    },
  },
  {
    name: "readTurn x2000 (each record once)",
    target: 1,
    run: (M, d) => {
      for (let i = 0; i < 2000; i++) M.readTurn(d, `turn-${String(i % TURNS).padStart(6, "0")}`);
    },
  },
  {
    empty: true,
    tmpfs: 1,
    name: "STOP cycle x200 (requestStop, stopRequested, readStop, clearStop)",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 200; i++) {
        M.requestStop(d, "operator");
        M.stopRequested(d);
        M.readStop(d);
        M.clearStop(d);
      }
    },
  },
  {
    empty: true,
    tmpfs: 1,
    name: "processing stop cycle x200",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 200; i++) {
        M.requestProcessingStop(d, GEN);
        M.clearProcessingStop(d, GEN);
      }
    },
  },
  {
    empty: true,
    tmpfs: 1,
    name: "lock cycle x200 (writePid, readPid, ownerState, stopTarget, clearPid)",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 200; i++) {
        M.writePid(d, process.pid);
        M.ownerState(M.readPid(d));
        M.stopTarget(d);
        M.clearPid(d, process.pid);
      }
    },
  },
  {
    empty: true,
    tmpfs: 1,
    name: "unlock + recover cycle x100",
    target: 1,
    fresh: true,
    run: (M, d) => {
      for (let i = 0; i < 100; i++) {
        M.writePid(d, process.pid, { identity: () => ({ start: "5", boot: GEN }) });
        M.unlock(d, { identity: () => ({ start: "6", boot: GEN }) });
        M.clearStop(d);
        M.writePid(d, process.pid, { identity: () => ({ start: "5", boot: GEN }) });
        M.recover(d, { identity: () => ({ start: "6", boot: GEN }) });
      }
    },
  },
  {
    name: "identity x1000 (identityOf, pidAlive, validStart, validBoot)",
    target: 1,
    run: (M) => {
      for (let i = 0; i < 1000; i++) {
        const id = M.identityOf(process.pid);
        M.pidAlive(process.pid);
        M.validStart(id.start);
        M.validBoot(id.boot);
      }
    },
  },
  {
    name: "paths and labels x10000",
    target: 1,
    run: (M, d) => {
      for (let i = 0; i < 10_000; i++) {
        M.journalLabel(d);
        M.stopPath(d);
        M.lockPath(d);
        M.ownerPath(d);
        M.turnPath(d, "turn-1");
        M.utcDate(T0 + i);
      }
    },
  },
  {
    name: "ensureJournal x1000",
    target: 1,
    run: (M, d) => {
      for (let i = 0; i < 1000; i++) M.ensureJournal(d);
    },
  },
];

const SCALE = [10_000, 100_000, 1_000_000];
const SWEEP = [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000];
// The turn rows' largest size. A turn record is a file of its own: 300,000
// take 1.2 GB, about 70 s to write and 30 s to remove on this project's
// disk; a million would take 3.9 GB, and listTurns's answer as text (822
// MB) is past V8's longest string (536 million characters), so its floor
// could not be measured as defined.
const TURNS_TOP = 300_000;
const SLOW_MS = 5_000;
// A warm series: at least PAIRS calls, then on until 30 ms have passed, at most 101.
const SERIES_MS = 30;
const SERIES_MAX = 101;

const gc =
  globalThis.gc ??
  (() => {
    throw new Error("run with node --expose-gc (npm run bench does)");
  });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function timeOnce(M, row, source, scratch) {
  let dir = source;
  if (row.empty) {
    dir = join(scratch, "alpha");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
  } else if (row.fresh) {
    dir = join(scratch, "alpha");
    rmSync(dir, { recursive: true, force: true });
    cpSync(source, dir, { recursive: true });
    row.warm?.(M, dir);
  }
  // The set-up just removed and wrote files; flush that to the disk now, so
  // its writeback and the freed blocks' discards do not land in the timed
  // run of whichever side comes next.
  if (row.empty || row.fresh) execFileSync("sync");
  gc();
  const t = process.hrtime.bigint();
  row.run(M, dir);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

// Peak memory (maxRSS) of a fresh process that loads a module and reads drops.
function peakMemory(modulePath, dir) {
  const out = execFileSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--child", modulePath, "--dir", dir], {
    encoding: "utf8",
  });
  return JSON.parse(out);
}

// Package load (#11): a fresh ES module process (a host's shape) imports
// the package through its ESM entry, and the other implementation by its
// path; the figure is that import's wall time, the ratio the median of
// alternating pairs, as for the rows above.
function loadRow(ourPath, theirPath) {
  const name = "package load: import() in a fresh process";
  if (only && !only.test(name)) return null;
  const time = (p) =>
    Number(
      execFileSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const t = process.hrtime.bigint(); await import(${JSON.stringify(pathToFileURL(p).href)}); console.log(Number(process.hrtime.bigint() - t) / 1e6);`,
        ],
        { encoding: "utf8" },
      ),
    );
  const a = [],
    b = [],
    ratios = [];
  const n = Math.max(PAIRS * 3, 9);
  for (let i = 0; i < n; i++) {
    let x, y;
    if (!theirPath) x = time(ourPath);
    else if (i % 2 === 0) {
      x = time(ourPath);
      y = time(theirPath);
    } else {
      y = time(theirPath);
      x = time(ourPath);
    }
    a.push(x);
    if (theirPath) {
      b.push(y);
      ratios.push(x / y);
    }
  }
  const r = { row: name, oursMs: median(a), target: 1 };
  if (theirPath) Object.assign(r, { theirsMs: median(b), ratio: median(ratios) });
  const f = (v) => v.toFixed(2);
  console.log(
    theirPath
      ? `| ${r.row} | ${f(r.oursMs)} | ${f(r.theirsMs)} | ${f(r.ratio)} | ≤ 1.00${r.ratio <= 1 ? "" : " ✗"} |`
      : `| ${r.row} | ${f(r.oursMs)} |`,
  );
  return r;
}

// Opt-in durability (#21): what an append costs on this disk with
// DISCORD_JOURNAL_FSYNC=1 (each append's data synced, and the directory
// when the append made the file), beside the same appends without it and
// journal.mjs's (which syncs nothing). Read once per process, so each
// figure is a fresh process's: the median µs per append of 200 appends to
// an existing file, over alternating runs. Reported, not judged.
function fsyncRows(ourPath, theirPath, scratch) {
  // Each append export with an entry it takes, as JavaScript source.
  const appends = [
    ["appendInbox", `{ id: String(i), at: "2024-01-30T00:00:00.000Z", channel: "c" }`],
    ["appendOutbox", `{ nonce: "n" + i, status: "intent", at: "2024-01-30T00:00:00.000Z" }`],
    ["appendDrop", `{ at: "2024-01-30T00:00:00.000Z", reason: "r", n: i }`],
    ["appendAdmission", `{ id: "t" + i, at: "2024-01-30T00:00:00.000Z" }`],
    ["appendNotice", `{ kind: "ceiling", date: "2024-01-30", n: i }`],
    ["appendReload", `{ outcome: "applied", n: i }`],
  ].filter(([name]) => !only || only.test(`${name}, µs per append on this disk`));
  if (!appends.length) return [];
  const time = (p, env, name, entry) => {
    const dir = mkdtempSync(join(scratch, "fsync-"));
    const code = `const p = ${JSON.stringify(p)};
      (p.endsWith(".mjs") ? import(require("node:url").pathToFileURL(p).href) : Promise.resolve(require(p))).then((M) => {
        const d = ${JSON.stringify(dir)};
        M.ensureJournal(d);
        let i = 0;
        M.${name}(d, ${entry});
        const t = process.hrtime.bigint();
        for (i = 1; i <= 200; i++) M.${name}(d, ${entry});
        console.log(Number(process.hrtime.bigint() - t) / 1e3 / 200);
      });`;
    const out = execFileSync(process.execPath, ["-e", code], { encoding: "utf8", env: { ...process.env, DISCORD_JOURNAL_FSYNC: env } });
    rmSync(dir, { recursive: true, force: true });
    return Number(out);
  };
  console.log(
    "\n| µs per append on this disk (a fresh process, 200 appends) | unset | DISCORD_JOURNAL_FSYNC=1 | journal.mjs |\n| --- | ---: | ---: | ---: |",
  );
  return appends.map(([name, entry]) => {
    const off = [],
      on = [],
      ref = [];
    for (let i = 0; i < Math.max(PAIRS, 3); i++) {
      off.push(time(ourPath, "", name, entry));
      on.push(time(ourPath, "1", name, entry));
      if (theirPath) ref.push(time(theirPath, "", name, entry));
    }
    const r = {
      row: `${name}, µs per append on this disk`,
      unsetUs: median(off),
      fsyncUs: median(on),
      theirsUs: theirPath ? median(ref) : null,
    };
    const f = (v) => (v === null ? "—" : v.toFixed(1));
    console.log(`| ${name} | ${f(r.unsetUs)} | ${f(r.fsyncUs)} | ${f(r.theirsUs)} |`);
    return r;
  });
}

// The fsyncs (and fdatasyncs) one run of a row makes, counted by strace in
// a child that runs only that row on an empty binding of the disk; null
// where strace cannot run.
function fsyncs(modulePath, row, scratch) {
  const log = join(scratch, `strace-${process.pid}.txt`);
  const child = [
    process.execPath,
    "--expose-gc",
    fileURLToPath(import.meta.url),
    "--fsync-child",
    resolve(modulePath),
    "--row",
    row.name,
    "--dir",
    join(scratch, "fsync"),
  ];
  const r = spawnSync("strace", ["-f", "-qq", "-c", "-e", "trace=fsync,fdatasync", "-o", log, ...child], { stdio: "ignore" });
  if (r.status !== 0) return null;
  let calls = 0;
  for (const line of readFileSync(log, "utf8").split("\n")) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)(?:\s+\d+)?\s+(fsync|fdatasync)$/.exec(line);
    if (m) calls += Number(m[1]);
  }
  rmSync(log, { force: true });
  return calls;
}

if (main && opts["fsync-child"]) {
  const M = await load(opts["fsync-child"]);
  const row = rows.find((r) => r.name === opts.row);
  rmSync(opts.dir, { recursive: true, force: true });
  mkdirSync(join(opts.dir, "turns"), { recursive: true, mode: 0o700 });
  row.run(M, opts.dir);
  rmSync(opts.dir, { recursive: true, force: true });
  process.exit(0);
}

if (main && childMode) {
  const M = await load(childMode);
  const dir = opts.dir;
  const before = process.resourceUsage().maxRSS;
  const drops = M.readDrops(dir);
  console.log(JSON.stringify({ baseKiB: before, peakKiB: process.resourceUsage().maxRSS, lines: drops.length }));
  process.exit(0);
}

if (main && !childMode && !opts["fsync-child"]) await (opts.sweep ? sweep("sweep") : opts.scale ? sweep("scale") : bench());

/** A tmpfs to run the fsync-bound rows on: --tmpfs DIR, else one mounted here (as root), else none. */
function tmpfsScratch(work) {
  if (opts.tmpfs)
    return {
      dir: mkdtempSync(join(resolve(opts.tmpfs), "discord-journal-bench-")),
      where: `--tmpfs ${opts.tmpfs}`,
      done: (d) => rmSync(d, { recursive: true, force: true }),
    };
  const dir = join(work, "tmpfs");
  mkdirSync(dir);
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256m,mode=0700", "discord-journal-bench", dir], { stdio: "ignore" });
  if (r.status === 0) return { dir, where: "a tmpfs mounted for the run", done: (d) => spawnSync("umount", [d], { stdio: "ignore" }) };
  return null;
}

/** Times one row in alternating pairs; scratch dirs under `base`. */
function timeRow(ours, theirs, row, source, base, target) {
  const a = [],
    b = [],
    ratios = [];
  const sa = join(base, "a"),
    sb = join(base, "b");
  mkdirSync(sa, { recursive: true });
  mkdirSync(sb, { recursive: true });
  // one untimed warm-up each
  timeOnce(ours, row, source, sa);
  if (theirs) timeOnce(theirs, row, source, sb);
  for (let i = 0; i < PAIRS; i++) {
    let x, y;
    if (!theirs) x = timeOnce(ours, row, source, sa);
    else if (i % 2 === 0) {
      x = timeOnce(ours, row, source, sa);
      y = timeOnce(theirs, row, source, sb);
    } else {
      y = timeOnce(theirs, row, source, sb);
      x = timeOnce(ours, row, source, sa);
    }
    a.push(x);
    if (theirs) {
      b.push(y);
      ratios.push(x / y);
    }
  }
  const r = { row: row.name, oursMs: median(a), target };
  if (theirs) Object.assign(r, { theirsMs: median(b), ratio: median(ratios) });
  return r;
}

async function bench() {
  const ours = await load(join(here, "..", "index.js"));
  const theirs = against ? await load(against) : null;
  const work = mkdtempSync(join(tmpdir(), "discord-journal-bench-"));
  let tmpfs = null;
  try {
    const source = join(work, "source", "alpha");
    makeJournal(source);
    tmpfs = rows.some((r) => r.tmpfs && (!only || only.test(r.name))) ? tmpfsScratch(work) : null;
    const results = [];
    console.log(`journal: ${LINES} lines per file, ${TURNS} turns; ${PAIRS} pairs per row${theirs ? `; against ${against}` : ""}`);
    console.log(
      `writeTurn, STOP and lock rows: ${tmpfs ? `judged on ${tmpfs.where}; on the disk with each side's fsyncs, not judged` : "on the disk only (no tmpfs: pass --tmpfs DIR or run as root)"}\n`,
    );
    const header = theirs ? "| row | ours (ms) | theirs (ms) | ratio | target |" : "| row | ours (ms) |";
    console.log(header);
    console.log(theirs ? "| --- | ---: | ---: | ---: | ---: |" : "| --- | ---: |");
    const f = (n) => n.toFixed(2);
    const print = (r) =>
      console.log(
        theirs
          ? `| ${r.row} | ${f(r.oursMs)} | ${f(r.theirsMs)} | ${f(r.ratio)} | ${r.target === null ? "—" : `≤ ${r.target.toFixed(2)}${r.ratio <= r.target ? "" : " ✗"}`} |`
          : `| ${r.row} | ${f(r.oursMs)} |`,
      );
    for (const row of rows) {
      if (only && !only.test(row.name)) continue;
      if (row.tmpfs && tmpfs) {
        const onTmpfs = { ...timeRow(ours, theirs, row, source, tmpfs.dir, row.tmpfs), row: `${row.name} (tmpfs)`, fs: "tmpfs" };
        results.push(onTmpfs);
        print(onTmpfs);
        const onDisk = { ...timeRow(ours, theirs, row, source, work, null), fs: "disk" };
        onDisk.fsyncs = { ours: fsyncs(join(here, "..", "index.js"), row, work), theirs: theirs ? fsyncs(against, row, work) : null };
        const n = (x) => (x === null ? "?" : String(x));
        onDisk.row = `${row.name} (disk; fsyncs: ours ${n(onDisk.fsyncs.ours)}${theirs ? `, theirs ${n(onDisk.fsyncs.theirs)}` : ""})`;
        results.push(onDisk);
        print(onDisk);
        continue;
      }
      const r = timeRow(ours, theirs, row, source, work, row.target);
      results.push(r);
      print(r);
    }
    const load = loadRow(fileURLToPath(import.meta.resolve("discord-journal")), against && resolve(against));
    if (load) results.push(load);
    results.push(...fsyncRows(join(here, "..", "index.js"), against && resolve(against), work));
    const memory = { ours: peakMemory(join(here, "..", "index.js"), source) };
    if (theirs) memory.theirs = peakMemory(resolve(against), source);
    console.log(
      `\npeak memory, readDrops of ${LINES} lines in a fresh process (maxRSS): ours ${(memory.ours.peakKiB / 1024).toFixed(1)} MiB` +
        (theirs ? `, theirs ${(memory.theirs.peakKiB / 1024).toFixed(1)} MiB` : ""),
    );
    console.log(
      "peak memory of every reader on huge lines, millions of lines and many turn records: node bench/memory.mjs [--against PATH] (about two minutes)",
    );
    if (jsonOut)
      writeFileSync(
        jsonOut,
        JSON.stringify(
          {
            lines: LINES,
            turns: TURNS,
            pairs: PAIRS,
            against: against ?? null,
            node: process.version,
            tmpfs: tmpfs?.where ?? null,
            rows: results,
            memory,
          },
          null,
          2,
        ) + "\n",
      );
  } finally {
    if (tmpfs) tmpfs.done(tmpfs.dir);
    rmSync(work, { recursive: true, force: true });
  }
}

// --- the sweep (--sweep, #47) and the scale table (--scale) ----------------------
// Each reader the connector calls, timed at sizes from 1,000 to 1,000,000
// lines per file (all six record files at that size), beside its floor
// (#25): the least any implementation must do for that answer, measured in
// the same run on the same files. The readers are warm as in a running
// connector: one line is appended (untimed) to the file a reader reads
// before each call, so a call pays for what was appended and for proving
// the rest unchanged; the per-message path appends inside its call. The
// first call on a size's files (nothing kept of them) is not in the
// median; a side whose first call takes over SLOW_MS is not timed at that
// size or any larger. The turn rows go by turn records, one file each, up
// to TURNS_TOP.
//
// The floors:
// - the per-message path: the admissions and notices files copied out of
//   the page cache on two threads, no hash, no parse (examples/copy_floor.rs,
//   built with cargo). A proof that sees every rewrite of a file reads each
//   of its bytes; the copy is the least such reading costs.
// - readInboxIds: the same Set built in JavaScript from one string of the
//   ids (split, then new Set): the strings V8 must make.
// - unresolvedOutbox, readDrops, readReloads: the file copied (the proof)
//   plus the answer made in JavaScript from one string (JSON.parse of its
//   text): fresh objects on every call.
// - readOutbox: the same, its answer a Map: JSON.parse of the text of its
//   [nonce, record] entries, then new Map.
// - listTurns: every record listed, opened, read and closed on two threads
//   (examples/turns_floor.rs), plus JSON.parse of the answer's text.
// - countTurnsOn: the same reading, each record's startedAt found by a
//   byte search, and a count. No parse: a correct reader must parse each
//   record (one that is not JSON refuses the call), so this is less than
//   any does.
//
// --scale is the sweep's first three rows at SCALE's sizes, with no picture.

/**
 * The sweep's rows. Each appends its line with `feed` before a call (the
 * per-message path in its `run`), `n` a number no other call was given;
 * `floor` is measured on ours's files after both sides, from ours's answer.
 */
function sweepRows(ours) {
  const day = LAST_DAY;
  const at = `${day}T12:00:00.000Z`;
  const append = (name, entry) => (d, n) => appendFileSync(join(d, name), JSON.stringify(entry(n)) + "\n");
  const outbox = append("outbox.jsonl", (n) => ({ nonce: `sweep-${n}`, status: "intent", at, channel: snowflake(n % 17) }));
  const record = (d, n) =>
    writeFileSync(join(d, "turns", `sweep-${n}.json`), turnRecord(`sweep-${n}`, n, Date.parse(at)), { flag: "wx", mode: 0o600 });
  const copy = (d, name) => copyFloor([join(d, name)]);
  return [
    {
      name: "per message: appendAdmission + countAdmissionsOn + noticeOn",
      label: "the per-message path",
      floorIs: "floor: a line appended as journal.mjs appends it, both files opened and copied",
      target: 1.5,
      run: (M, d, n) => {
        M.appendAdmission(d, { id: `sweep-${n}`, at });
        M.countAdmissionsOn(d, day);
        return M.noticeOn(d, "ceiling", day);
      },
      floor: (d) => copyFloor([join(d, "admissions.jsonl"), join(d, "notices.jsonl")], join(d, "admissions.jsonl")),
    },
    {
      name: "readInboxIds",
      floorIs: "floor: the Set built from one string of the ids",
      target: 2,
      // Ids past every size's own.
      feed: append("inbox.jsonl", (n) => ({ id: snowflake(2_000_000 + n), at, channel: snowflake(n % 17), kind: "message", length: 80 })),
      run: (M, d) => M.readInboxIds(d),
      floor: (d) => setFloor(ours.readInboxIds(d)),
    },
    {
      name: "unresolvedOutbox",
      floorIs: "floor: the outbox copied, and JSON.parse of the answer's text",
      target: 2,
      feed: outbox,
      run: (M, d) => M.unresolvedOutbox(d),
      floor: (d) => copy(d, "outbox.jsonl") + parseFloor(JSON.stringify(ours.unresolvedOutbox(d))),
    },
    {
      name: "readOutbox",
      floorIs: "floor: the outbox copied, and its Map built from one string",
      target: 2,
      feed: outbox,
      run: (M, d) => M.readOutbox(d),
      floor: (d) => copy(d, "outbox.jsonl") + mapFloor(ours.readOutbox(d)),
    },
    {
      name: "readDrops",
      floorIs: "floor: the file copied, and JSON.parse of the answer's text",
      target: 2,
      feed: append("drops.jsonl", (n) => ({ at, reason: "ceiling", id: snowflake(2_000_000 + n), channel: snowflake(n % 17) })),
      run: (M, d) => M.readDrops(d),
      floor: (d) => copy(d, "drops.jsonl") + parseFloor(JSON.stringify(ours.readDrops(d))),
    },
    {
      name: "readReloads",
      floorIs: "floor: the file copied, and JSON.parse of the answer's text",
      target: 2,
      feed: append("reloads.jsonl", () => ({ outcome: "applied", at, differences: { channels: { added: ["c"], removed: [] } } })),
      run: (M, d) => M.readReloads(d),
      floor: (d) => copy(d, "reloads.jsonl") + parseFloor(JSON.stringify(ours.readReloads(d))),
    },
    {
      name: "listTurns",
      floorIs: "floor: every record read, and JSON.parse of the answer's text",
      turns: true,
      target: 2,
      feed: record,
      run: (M, d) => M.listTurns(d),
      floor: (d) => turnsFloor(d).medianMs + parseFloor(JSON.stringify(ours.listTurns(d))),
    },
    {
      name: "countTurnsOn",
      floorIs: "floor: every record read, its startedAt found by a byte search",
      turns: true,
      target: 2,
      feed: record,
      run: (M, d) => M.countTurnsOn(d, day),
      floor: (d) => {
        const f = turnsFloor(d, day);
        if (f.on !== ours.countTurnsOn(d, day)) throw new Error("the floor's count differs from countTurnsOn's");
        return f.medianMs;
      },
    },
  ];
}

/** The path of examples/NAME.rs's program, built with cargo once a run. */
function floorProgram(name) {
  const root = join(here, "..");
  // (a property, not a module variable: the sweep runs before this file's later lines)
  floorProgram.built ??= new Set();
  if (!floorProgram.built.has(name))
    execFileSync("cargo", ["build", "--quiet", "--release", "--example", name], { cwd: root, stdio: "inherit" });
  floorProgram.built.add(name);
  return join(root, "target", "release", "examples", name);
}

/** The copy floor of `files` in ms (median of SERIES_MAX runs), on two threads; with `append`, a line appended to that file first in each run. */
function copyFloor(files, append) {
  // As many runs as the readers' series may take: each is at most milliseconds.
  const runs = floorAt.once ? 1 : Math.max(PAIRS, SERIES_MAX);
  const args = [String(runs), "2", ...(append ? ["--append", append] : []), ...files];
  return JSON.parse(execFileSync(floorProgram("copy_floor"), args, { encoding: "utf8" })).medianMs;
}

/** The turn records of `dir` read on two threads (median of PAIRS runs); with `date`, `on` counts those started that day. */
function turnsFloor(dir, date) {
  const args = [String(PAIRS), "2", join(dir, "turns"), ...(date ? [date] : [])];
  return JSON.parse(execFileSync(floorProgram("turns_floor"), args, { encoding: "utf8" }));
}

/** The median ms of a series of `make()` (see `series`), after one collection, as the readers' calls are timed. */
function timed(make) {
  if (floorAt.once) {
    const t = process.hrtime.bigint();
    make();
    return Number(process.hrtime.bigint() - t) / 1e6;
  }
  gc();
  return median(
    series(() => {
      const t = process.hrtime.bigint();
      make();
      return Number(process.hrtime.bigint() - t) / 1e6;
    }),
  );
}

/**
 * The times of `call()` (ms each), called PAIRS times and then on until
 * SERIES_MS have passed, at most SERIES_MAX times: a call of microseconds
 * is timed over enough calls that a median is not the caches' warming up
 * after the collection before them.
 */
function series(call) {
  const ts = [];
  let spent = 0;
  while (ts.length < PAIRS || (spent < SERIES_MS && ts.length < SERIES_MAX)) {
    const ms = call();
    ts.push(ms);
    spent += ms;
  }
  return ts;
}

/** The median ms of JSON.parse(text). */
function parseFloor(text) {
  return timed(() => JSON.parse(text));
}

/** readInboxIds's floor in ms: its Set, built from one string of the ids. */
function setFloor(ids) {
  const text = [...ids].join("\n");
  return timed(() => {
    if (new Set(text.split("\n")).size !== ids.size) throw new Error("the floor's Set differs from readInboxIds's");
  });
}

/** readOutbox's answer in ms: its Map, built from one string of its entries. */
function mapFloor(map) {
  const text = JSON.stringify([...map]);
  return timed(() => {
    if (new Map(JSON.parse(text)).size !== map.size) throw new Error("the floor's Map differs from readOutbox's");
  });
}

/**
 * The other side's copy of a journal: the record files copied (the rows
 * append to them), turns/ linked record by record. No row changes a
 * record, and copying 100,000 of them and removing the copies took 34 s on
 * this project's disk, linking and unlinking them 3.
 */
function copyJournal(from, to) {
  mkdirSync(join(to, "turns"), { recursive: true, mode: 0o700 });
  for (const name of readdirSync(from)) if (name !== "turns") cpSync(join(from, name), join(to, name));
  for (const name of readdirSync(join(from, "turns"))) linkSync(join(from, "turns", name), join(to, "turns", name));
}

/** Times `row` on one side: its first call, then PAIRS more (`runsMs`) and their median; none past SLOW_MS. */
function timeSide(M, row, dir, next, after) {
  // One collection before the side's calls, none between them: a running
  // connector makes none before each message, and one evicts the caches
  // the next call then misses (after one, a per-message call of 1,000
  // lines took 130 µs, against 35 without).
  gc();
  const call = () => {
    const n = next();
    row.feed?.(dir, n);
    const t = process.hrtime.bigint();
    row.run(M, dir, n);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    after?.();
    return ms;
  };
  const firstMs = call();
  if (firstMs > SLOW_MS) return { ms: null, firstMs, runsMs: [] };
  const runsMs = series(call);
  return { ms: median(runsMs), firstMs, runsMs };
}

// --- the readers in turn (--sweep --in-turn, #66) --------------------------------
// A connector calls its readers in turn, not one reader's rounds after
// another: per message, then readInboxIds, unresolvedOutbox and readOutbox,
// each with its line appended before it, round by round. Timed that way,
// each reader's fold must stay beside the others' in the read cache, or it
// is made again at every turn (#66). Each call is timed beside its floor,
// measured right after it on the same files, and a collection and 20 ms
// of quiet come before every timed call, so that V8's collector threads
// stand against neither. The floor is measured once, where the call
// stands, as the call is: a call timed once after the other readers
// finds the caches as they left them, which the median of a series of the
// floor's runs (the caches warmed by the series itself) does not (at
// 1,000 lines a call timed so took 0.3 ms against its floor's 0.01). The
// cells are each row's median over PAIRS rounds (after a first, untimed),
// its floor the median of its floors.
// (Functions, not constants: the sweep runs before this file's later lines.)
function takesTurns(row) {
  return ["per message: appendAdmission + countAdmissionsOn + noticeOn", "readInboxIds", "unresolvedOutbox", "readOutbox"].includes(
    row.name,
  );
}
/** An in-turn cell's row: its reader's, marked. */
function inTurnName(name) {
  return `${name} (in turn)`;
}

/** The rows that take turns, named as their in-turn cells are. */
function turnRows(rows) {
  return rows.filter(takesTurns).map((r) => ({ ...r, name: inTurnName(r.name) }));
}

/** A collection, then 20 ms for its helper threads to finish, with nothing running on this thread. */
function quiet() {
  gc();
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
}

/** The in-turn cells of those of `rows` that take turns, on `dir`'s files of `size` lines. */
function inTurn(M, rows, dir, size, next) {
  const turn = rows.filter(takesTurns);
  const times = turn.map(() => ({ runsMs: [], floorsMs: [], firstMs: null }));
  for (let round = 0; round <= PAIRS; round++)
    turn.forEach((row, i) => {
      const n = next();
      row.feed?.(dir, n);
      quiet();
      const t = process.hrtime.bigint();
      row.run(M, dir, n);
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      quiet();
      floorAt.once = true;
      let floorMs;
      try {
        floorMs = row.floor(dir);
      } finally {
        floorAt.once = false;
      }
      if (round === 0) times[i].firstMs = ms;
      else {
        times[i].runsMs.push(ms);
        times[i].floorsMs.push(floorMs);
      }
    });
  return turn.map((row, i) => {
    const { runsMs, floorsMs, firstMs } = times[i];
    const oursMs = median(runsMs);
    const floorMs = median(floorsMs);
    return {
      row: inTurnName(row.name),
      unit: "lines per file",
      size,
      lines: size,
      turns: 0,
      oursMs,
      oursSlowestMs: Math.max(...runsMs),
      oursFirstMs: firstMs,
      oursRunsMs: runsMs,
      theirsMs: null,
      theirsFirstMs: null,
      theirsRunsMs: [],
      floorMs,
      floorsMs,
      toFloor: oursMs / floorMs,
      ratio: null,
      target: row.target,
      met: oursMs / floorMs <= row.target,
    };
  });
}

/** Bytes in MiB, one decimal. */
function MiB(bytes) {
  return (bytes / 1048576).toFixed(1);
}

/** --sweep (every row at SWEEP's sizes, and the picture) or --scale. */
async function sweep(mode) {
  const ours = await load(join(here, "..", "index.js"));
  const theirs = against ? await load(against) : null;
  // What the read cache keeps and may keep (#32), from the binding itself.
  const { cacheBytes } = createRequire(import.meta.url)("../binding.js");
  const all = mode === "scale" ? sweepRows(ours).slice(0, 3) : sweepRows(ours);
  const rows = all.filter((r) => !only || only.test(r.name));
  const sizes = (mode === "scale" ? SCALE : SWEEP).filter((s) => MAX_LINES === null || s <= MAX_LINES);
  if (!rows.length || !sizes.length) return usage(`--${mode}: no row or size is left to time`);
  const whole = mode === "sweep" && rows.length === all.length && sizes.length === SWEEP.length;
  const work = mkdtempSync(join(tmpdir(), "discord-journal-sweep-"));
  const cells = [];
  const memory = [];
  // A side past SLOW_MS at a size, by row: not timed at any larger size.
  const slow = new Set();
  let calls = 0;
  const next = () => calls++;
  const f = (v) => (v === null ? "—" : v.toFixed(2));
  // Ours / floor, with a third decimal where two would show a miss as the target.
  const judged = (c) =>
    c.toFloor === null ? "—" : `${c.toFloor.toFixed(!c.met && c.toFloor.toFixed(2) === c.target.toFixed(2) ? 3 : 2)}${c.met ? "" : " ✗"}`;
  const report = (cell) => {
    console.log(
      `${short(cell.size)} ${cell.unit === "turn records" ? "turn records" : "lines"}, ${cell.row}: ours ${f(cell.oursMs)} ms (slowest ${f(cell.oursSlowestMs)})` +
        (theirs ? `, journal.mjs ${f(cell.theirsMs)}` : "") +
        `, floor ${f(cell.floorMs)}, ours / floor ${judged(cell)}`,
    );
    return cell;
  };
  try {
    console.log(
      `${mode}: ${PAIRS} runs per cell after a first, median; one line appended before each call${theirs ? `; against ${against}` : ""}; ` +
        `floors measured in the same run; Node ${process.version}, ${availableParallelism()} cores\n`,
    );
    for (const size of sizes) {
      const turns = size <= TURNS_TOP && rows.some((r) => r.turns) ? size : 0;
      const dirs = { ours: join(work, `${size}`, "ours", "alpha"), theirs: join(work, `${size}`, "theirs", "alpha") };
      const t0 = Date.now();
      makeJournal(dirs.ours, size, turns);
      if (theirs) copyJournal(dirs.ours, dirs.theirs);
      execFileSync("sync");
      const builtMs = Date.now() - t0;
      let most = 0;
      for (const row of rows) {
        if (row.turns && !turns) continue;
        const side = (name, M, dir) => {
          const key = `${row.name}\0${name}`;
          if (slow.has(key)) return { ms: null, firstMs: null, runsMs: [] };
          const r = timeSide(M, row, dir, next, M === ours ? () => (most = Math.max(most, cacheBytes()[0])) : null);
          if (r.ms === null) slow.add(key);
          return r;
        };
        const mine = side("ours", ours, dirs.ours);
        const other = theirs ? side("journal.mjs", theirs, dirs.theirs) : { ms: null, firstMs: null, runsMs: [] };
        // The floor after both, on ours's files, their pages as warm.
        const floorMs = row.floor(dirs.ours);
        const toFloor = mine.ms === null ? null : mine.ms / floorMs;
        const cell = {
          row: row.name,
          unit: row.turns ? "turn records" : "lines per file",
          size: row.turns ? turns : size,
          lines: size,
          turns,
          oursMs: mine.ms,
          oursSlowestMs: mine.runsMs.length ? Math.max(...mine.runsMs) : null,
          oursFirstMs: mine.firstMs,
          oursRunsMs: mine.runsMs,
          theirsMs: other.ms,
          theirsFirstMs: other.firstMs,
          theirsRunsMs: other.runsMs,
          floorMs,
          toFloor,
          ratio: mine.ms !== null && other.ms !== null ? mine.ms / other.ms : null,
          target: row.target,
          met: toFloor !== null && toFloor <= row.target,
        };
        cells.push(report(cell));
      }
      if (opts["in-turn"]) for (const cell of inTurn(ours, rows, dirs.ours, size, next)) cells.push(report(cell));
      const t1 = Date.now();
      rmSync(join(work, `${size}`), { recursive: true, force: true });
      const [kept, budget] = cacheBytes();
      const m = {
        lines: size,
        turns,
        builtMs,
        removedMs: Date.now() - t1,
        peakRssKiB: process.resourceUsage().maxRSS,
        rssBytes: process.memoryUsage.rss(),
        cacheMostBytes: most,
        cacheKeptBytes: kept,
        cacheBudgetBytes: budget,
      };
      memory.push(m);
      console.log(
        `after ${size.toLocaleString("en")} lines${turns ? ` and ${turns.toLocaleString("en")} turn records` : ""}: peak RSS ${MiB(m.peakRssKiB * 1024)} MiB ` +
          `(now ${MiB(m.rssBytes)}); the read cache kept at most ${MiB(most)} MiB of its ${MiB(budget)} MiB after a call of ours ` +
          `(${MiB(kept)} now); files made in ${(builtMs / 1000).toFixed(1)} s, removed in ${(m.removedMs / 1000).toFixed(1)} s\n`,
      );
    }
    for (const row of [...rows, ...turnRows(rows)]) {
      const mine = cells.filter((c) => c.row === row.name);
      if (!mine.length) continue;
      const over = (ms, first) =>
        ms !== null ? f(ms) : first === null ? "— (over 5 s at a smaller size)" : `— (first call ${(first / 1000).toFixed(1)} s)`;
      console.log(`\n${row.name}: ours / floor at most ${row.target.toFixed(2)}\n`);
      console.log(
        theirs
          ? `| ${mine[0].unit} | ours (ms) | ours, slowest (ms) | journal.mjs (ms) | ours / journal.mjs | floor (ms) | ours / floor | target |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`
          : `| ${mine[0].unit} | ours (ms) | ours, slowest (ms) | floor (ms) | ours / floor | target |\n| ---: | ---: | ---: | ---: | ---: | ---: |`,
      );
      for (const c of mine) {
        const target = `≤ ${c.target.toFixed(2)}${c.met ? "" : " ✗"}`;
        const oursCells = `${over(c.oursMs, c.oursFirstMs)} | ${f(c.oursSlowestMs)}`;
        const toFloor = c.toFloor === null ? "—" : judged(c).replace(" ✗", "");
        console.log(
          theirs
            ? `| ${c.size.toLocaleString("en")} | ${oursCells} | ${over(c.theirsMs, c.theirsFirstMs)} | ${c.ratio === null ? "—" : c.ratio.toFixed(3)} | ${f(c.floorMs)} | ${toFloor} | ${target} |`
            : `| ${c.size.toLocaleString("en")} | ${oursCells} | ${f(c.floorMs)} | ${toFloor} | ${target} |`,
        );
      }
    }
    // readInboxIds's first call on a size's files builds every id from the
    // file, with nothing kept: beside journal.mjs's and the floor's.
    const firsts = cells.filter((c) => c.row === "readInboxIds");
    if (firsts.length) {
      console.log(
        "\n| first call on the files | lines per file | ours (ms) | journal.mjs (ms) | floor (ms) |\n| --- | ---: | ---: | ---: | ---: |",
      );
      for (const c of firsts)
        console.log(`| readInboxIds | ${c.lines.toLocaleString("en")} | ${f(c.oursFirstMs)} | ${f(c.theirsFirstMs)} | ${f(c.floorMs)} |`);
    }
    const missed = [...rows, ...turnRows(rows)]
      .map((row) => [row, cells.filter((c) => c.row === row.name && !c.met)])
      .filter(([, over]) => over.length)
      .map(
        ([row, over]) =>
          `${row.name} at ${over.map((c) => `${short(c.size)} (${c.toFloor === null ? "not timed" : judged(c).replace(" ✗", "")})`).join(", ")}`,
      );
    console.log(missed.length ? `\nover target (ours / floor):\n- ${missed.join("\n- ")}` : "\nevery cell at or under its target");
    // The median of the warm calls is judged; a call that finds its fold
    // dropped reads its file whole, and alternate ones would hide there.
    const uneven = cells.filter((c) => c.oursSlowestMs > 3 * c.oursMs);
    if (uneven.length)
      console.log(
        `\nwarm calls of ours over 3 times their median:\n- ${uneven.map((c) => `${c.row} at ${short(c.size)}: ${c.oursRunsMs.map(f).join(", ")} ms`).join("\n- ")}`,
      );
    if (jsonOut)
      writeFileSync(
        jsonOut,
        JSON.stringify(
          {
            mode,
            inTurn: opts["in-turn"],
            pairs: PAIRS,
            against: against ?? null,
            node: process.version,
            cores: availableParallelism(),
            turnsTop: TURNS_TOP,
            cells,
            memory,
          },
          null,
          2,
        ) + "\n",
      );
    if (whole && opts["in-turn"]) {
      const picture = join(here, "..", "docs", "sweep.svg");
      writeFileSync(picture, sweepPicture(rows, cells, !!theirs));
      console.log(`\nthe picture: ${relative(process.cwd(), picture)}`);
    } else if (mode === "sweep")
      console.log(
        "\nno picture: --only, --max-lines or a sweep without --in-turn left rows, sizes or a mode out (docs/sweep.svg is the whole sweep's, both modes)",
      );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** docs/sweep.svg: one panel per row, ours, its floor and journal.mjs by size. */
function sweepPicture(rows, cells, theirs) {
  const panels = rows.map((row) => {
    const mine = cells.filter((c) => c.row === row.name);
    const untimed = mine.find((c) => theirs && c.oursMs !== null && c.theirsMs === null);
    return {
      title: `${row.label ?? row.name} (target: ≤ ${row.target.toFixed(1)} × floor)`,
      note: row.floorIs,
      corner: untimed ? `journal.mjs not timed from ${short(untimed.size)} (a first call over ${SLOW_MS / 1000} s)` : "",
      xLabel: mine[0]?.unit ?? "lines per file",
      points: mine.map((c) => ({
        x: c.size,
        turn: cells.find((t) => t.row === inTurnName(row.name) && t.size === c.size)?.oursMs ?? null,
        ours: c.oursMs,
        slowest: c.oursSlowestMs,
        floor: c.floorMs,
        theirs: c.theirsMs,
        over: !c.met,
      })),
    };
  });
  return sweepSvg({
    title: "Each reader the connector calls, by the journal's size (#47)",
    subtitle: `ms per call (log), median of ${PAIRS} to ${SERIES_MAX} warm calls (30 ms of them), one line appended before each; in turn: ${PAIRS} rounds of the connector's readers, each call beside its floor; Node ${process.version}, ${availableParallelism()} cores`,
    panels,
    sizes: SWEEP,
    theirs,
  });
}
