#!/usr/bin/env node
// The project's benchmark: times every export that reads or writes on a
// realistic journal and, with --against, compares with a second
// implementation of the same API (such as journal.mjs) in the same process.
//
//   node --expose-gc bench/bench.mjs [--lines N] [--turns N] [--pairs N]
//        [--against PATH] [--json FILE] [--only REGEX]
//
// Each row runs in alternating pairs (ours then theirs, then theirs then
// ours) on copies of the same journal, with a garbage collection before each
// timed run; a row's figure is the median of its per-pair ratios ours/theirs.
// Peak memory is measured in a child process per side (maxRSS), for the
// large reads.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const LINES = Number(opt("lines", 100_000));
const TURNS = Number(opt("turns", 2_000));
const PAIRS = Number(opt("pairs", 7));
const against = opt("against");
const jsonOut = opt("json");
const only = opt("only") ? new RegExp(opt("only")) : null;
const childMode = opt("child");

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
  file("inbox.jsonl", (i) => ({ id: snowflake(i), at: at(i), channel: snowflake(i % 17), author: snowflake(i % 311), kind: i % 9 ? "message" : "mention", length: (i * 37) % 1800 }));
  file("outbox.jsonl", (i) => {
    const n = Math.floor(i / 2);
    const status = i % 2 === 0 ? "intent" : n % 50 === 0 ? "refused" : n % 97 === 0 ? "unknown" : "confirmed";
    return { nonce: `n${n}`, status, at: at(i), channel: snowflake(n % 17), ...(status === "confirmed" ? { messageId: snowflake(n) } : {}), ...(status === "refused" ? { error: "Missing Access", code: 50001 } : {}) };
  });
  file("drops.jsonl", (i) => ({ at: at(i), reason: ["ceiling", "cooldown", "not-addressed", "duplicate"][i % 4], id: snowflake(i), channel: snowflake(i % 17) }));
  file("admissions.jsonl", (i) => ({ id: `turn-${i}`, at: at(i), message: snowflake(i), channel: snowflake(i % 17) }));
  file("notices.jsonl", (i) => ({ kind: ["ceiling", "cooldown", "reload"][i % 3], date: at(i).slice(0, 10), at: at(i), channel: snowflake(i % 17) }));
  file("reloads.jsonl", (i) => (i % 5 ? { outcome: "applied", at: at(i), differences: { channels: { added: [snowflake(i)], removed: [] }, ceiling: [40, 50] } } : { outcome: "refused", at: at(i), reason: "binding.json: not valid JSON" }));
  for (let i = 0; i < turns; i++) {
    const t = T0 + Math.floor((i / turns) * span);
    writeFileSync(
      join(dir, "turns", `turn-${String(i).padStart(6, "0")}.json`),
      JSON.stringify({ startedAt: iso(t), finishedAt: iso(t + 4_000), id: `turn-${i}`, message: snowflake(i), channel: snowflake(i % 17), prompt: "x".repeat(200), reply: "y".repeat(400), usage: { input: 1200, output: 300 } }, null, 2) + "\n",
      { mode: 0o600 },
    );
  }
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
  { name: "countTurnsOn", target: 0.4, run: (M, d) => M.countTurnsOn(d, LAST_DAY) },
  { name: "readOutbox", target: 0.75, run: (M, d) => M.readOutbox(d) },
  { name: "readDrops", target: 0.75, run: (M, d) => M.readDrops(d) },
  { name: "readReloads", target: 0.75, run: (M, d) => M.readReloads(d) },
  { name: "listTurns", target: 0.75, run: (M, d) => M.listTurns(d) },
  { name: "inbound message: appendAdmission + countAdmissionsOn", target: 0.05, fresh: true, warm: (M, d) => M.countAdmissionsOn(d, LAST_DAY), run: (M, d) => { M.appendAdmission(d, { id: "turn-new", at: `${LAST_DAY}T12:00:00.000Z` }); return M.countAdmissionsOn(d, LAST_DAY); } },
  { empty: true, name: "appendInbox x1000", target: 0.9, fresh: true, run: (M, d) => { for (let i = 0; i < 1000; i++) M.appendInbox(d, { id: snowflake(LINES + i), at: "2024-01-30T00:00:00.000Z", channel: "c", length: i }); } },
  { empty: true, name: "appendOutbox x1000", target: 0.9, fresh: true, run: (M, d) => { for (let i = 0; i < 1000; i++) M.appendOutbox(d, { nonce: `x${i}`, status: "intent", at: "2024-01-30T00:00:00.000Z", channel: "c" }); } },
  { empty: true, name: "writeTurn x200", target: 0.9, fresh: true, run: (M, d) => { for (let i = 0; i < 200; i++) M.writeTurn(d, `new-${i}`, { startedAt: "2024-01-30T00:00:00.000Z", prompt: "x".repeat(200) }); } },
  { empty: true, name: "appendDrop x1000", target: 1, fresh: true, run: (M, d) => { for (let i = 0; i < 1000; i++) M.appendDrop(d, { at: "2024-01-30T00:00:00.000Z", reason: "ceiling", id: String(i) }); } },
  { empty: true, name: "appendAdmission x1000", target: 1, fresh: true, run: (M, d) => { for (let i = 0; i < 1000; i++) M.appendAdmission(d, { id: `t${i}`, at: "2024-01-30T00:00:00.000Z" }); } },
  { empty: true, name: "appendNotice x1000", target: 1, fresh: true, run: (M, d) => { for (let i = 0; i < 1000; i++) M.appendNotice(d, { kind: "ceiling", date: "2024-01-30" }); } },
  { empty: true, name: "appendReload x1000", target: 1, fresh: true, run: (M, d) => { for (let i = 0; i < 1000; i++) M.appendReload(d, { outcome: "applied", differences: { a: [i] } }); } },
  { name: "readTurn x2000 (each record once)", target: 1, run: (M, d) => { for (let i = 0; i < 2000; i++) M.readTurn(d, `turn-${String(i % TURNS).padStart(6, "0")}`); } },
  { empty: true, name: "STOP cycle x200 (requestStop, stopRequested, readStop, clearStop)", target: 1, fresh: true, run: (M, d) => { for (let i = 0; i < 200; i++) { M.requestStop(d, "operator"); M.stopRequested(d); M.readStop(d); M.clearStop(d); } } },
  { empty: true, name: "processing stop cycle x200", target: 1, fresh: true, run: (M, d) => { for (let i = 0; i < 200; i++) { M.requestProcessingStop(d, GEN); M.clearProcessingStop(d, GEN); } } },
  { empty: true, name: "lock cycle x200 (writePid, readPid, ownerState, stopTarget, clearPid)", target: 1, fresh: true, run: (M, d) => { for (let i = 0; i < 200; i++) { M.writePid(d, process.pid); M.ownerState(M.readPid(d)); M.stopTarget(d); M.clearPid(d, process.pid); } } },
  { empty: true, name: "unlock + recover cycle x100", target: 1, fresh: true, run: (M, d) => { for (let i = 0; i < 100; i++) { M.writePid(d, process.pid, { identity: () => ({ start: "5", boot: GEN }) }); M.unlock(d, { identity: () => ({ start: "6", boot: GEN }) }); M.clearStop(d); M.writePid(d, process.pid, { identity: () => ({ start: "5", boot: GEN }) }); M.recover(d, { identity: () => ({ start: "6", boot: GEN }) }); } } },
  { name: "identity x1000 (identityOf, pidAlive, validStart, validBoot)", target: 1, run: (M) => { for (let i = 0; i < 1000; i++) { const id = M.identityOf(process.pid); M.pidAlive(process.pid); M.validStart(id.start); M.validBoot(id.boot); } } },
  { name: "paths and labels x10000", target: 1, run: (M, d) => { for (let i = 0; i < 10_000; i++) { M.journalLabel(d); M.stopPath(d); M.lockPath(d); M.ownerPath(d); M.turnPath(d, "turn-1"); M.utcDate(T0 + i); } } },
  { name: "ensureJournal x1000", target: 1, run: (M, d) => { for (let i = 0; i < 1000; i++) M.ensureJournal(d); } },
];

const gc = globalThis.gc ?? (() => {
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
  const out = execFileSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--child", modulePath, "--dir", dir], { encoding: "utf8" });
  return JSON.parse(out);
}

const main = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (main && childMode) {
  const M = await load(childMode);
  const dir = opt("dir");
  const before = process.resourceUsage().maxRSS;
  const drops = M.readDrops(dir);
  console.log(JSON.stringify({ baseKiB: before, peakKiB: process.resourceUsage().maxRSS, lines: drops.length }));
  process.exit(0);
}

if (main && !childMode) await bench();

async function bench() {
const ours = await load(join(here, "..", "index.js"));
const theirs = against ? await load(against) : null;
const work = mkdtempSync(join(tmpdir(), "discord-journal-bench-"));
try {
  const source = join(work, "source", "alpha");
  makeJournal(source);
  const results = [];
  console.log(`journal: ${LINES} lines per file, ${TURNS} turns; ${PAIRS} pairs per row${theirs ? `; against ${against}` : ""}\n`);
  const header = theirs ? "| row | ours (ms) | theirs (ms) | ratio | target |" : "| row | ours (ms) |";
  console.log(header);
  console.log(theirs ? "| --- | ---: | ---: | ---: | ---: |" : "| --- | ---: |");
  for (const row of rows) {
    if (only && !only.test(row.name)) continue;
    const a = [], b = [], ratios = [];
    const sa = join(work, "a"), sb = join(work, "b");
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
    const r = { row: row.name, oursMs: median(a), target: row.target };
    if (theirs) Object.assign(r, { theirsMs: median(b), ratio: median(ratios) });
    results.push(r);
    const f = (n) => n.toFixed(2);
    console.log(theirs ? `| ${r.row} | ${f(r.oursMs)} | ${f(r.theirsMs)} | ${f(r.ratio)} | ≤ ${r.target.toFixed(2)}${r.ratio <= r.target ? "" : " ✗"} |` : `| ${r.row} | ${f(r.oursMs)} |`);
  }
  const memory = { ours: peakMemory(join(here, "..", "index.js"), source) };
  if (theirs) memory.theirs = peakMemory(resolve(against), source);
  console.log(`\npeak memory, readDrops of ${LINES} lines in a fresh process (maxRSS): ours ${(memory.ours.peakKiB / 1024).toFixed(1)} MiB` + (theirs ? `, theirs ${(memory.theirs.peakKiB / 1024).toFixed(1)} MiB` : ""));
  console.log("peak memory of every reader on huge lines, millions of lines and many turn records: node bench/memory.mjs [--against PATH] (about two minutes)");
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ lines: LINES, turns: TURNS, pairs: PAIRS, against: against ?? null, node: process.version, rows: results, memory }, null, 2) + "\n");
} finally {
  rmSync(work, { recursive: true, force: true });
}
}
