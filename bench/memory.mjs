#!/usr/bin/env node
// Peak memory of the readers (#10): each shape is read once in a fresh
// child process per side, which reports its maxRSS before and after the
// read. The shapes are the ones where a copy of the file shows: single
// huge lines, many lines, many turn records; and one process serving many
// bindings (#32), as the connector does: what a reader keeps between calls
// adds up over the bindings.
//
//   node bench/memory.mjs [--against PATH] [--only REGEX] [--big-mb N]
//        [--lines N] [--drops N] [--turns N] [--bindings N]
//        [--binding-lines N] [--json FILE]
//
// A shape's files are written once and read by both sides; the figure is
// the child's peak resident set (KiB from process.resourceUsage), the
// module loaded and its journal's files not yet read at "base". The
// many-bindings shape also gives the resident set after a full collection
// at its end (the child runs with --expose-gc): what stays held. The child
// inherits the environment (DISCORD_JOURNAL_CACHE_MB and the like).
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { countOf, usageOf } from "../scripts/options.mjs";
import { T0, iso, readBinding, snowflake, writeBinding, writeLines } from "./journals.mjs";

const USAGE =
  "usage: node bench/memory.mjs [--against PATH] [--only REGEX] [--big-mb N] [--lines N] [--drops N] [--turns N] [--bindings N] [--binding-lines N] [--json FILE]";
const usage = usageOf("memory", USAGE);

let opts;
try {
  opts = parseArgs({
    strict: true,
    options: {
      against: { type: "string" },
      only: { type: "string" },
      "big-mb": { type: "string", default: "300" },
      lines: { type: "string", default: "2000000" },
      drops: { type: "string", default: "100000" },
      turns: { type: "string", default: "20000" },
      bindings: { type: "string", default: "8" },
      "binding-lines": { type: "string", default: "200000" },
      json: { type: "string" },
      // Internal: the child's side of one measurement.
      child: { type: "string" },
      shape: { type: "string" },
      dir: { type: "string" },
    },
  }).values;
} catch (e) {
  usage(e.message);
}

const countIn = countOf(usage);
const count = (name) => countIn(name, opts[name]);
const BIG = count("big-mb") * 1_000_000;
const LINES = count("lines");
const DROPS = count("drops");
const TURNS = count("turns");
const BINDINGS = count("bindings");
const BINDING_LINES = count("binding-lines");
const ROUNDS = 3;

async function load(path) {
  const abs = resolve(path);
  if (abs.endsWith(".mjs")) return import(pathToFileURL(abs).href);
  return createRequire(import.meta.url)(abs);
}

/** One line of about `size` bytes: a record whose `body` is the bulk,
 * of `unit` (as JSON writes it) repeated. */
function writeHugeLine(path, record, size, unit = "x") {
  const head = JSON.stringify({ ...record, body: "" }).slice(0, -2);
  const fd = openSync(path, "w", 0o600);
  try {
    writeSync(fd, head);
    const chunk = Buffer.from(unit.repeat(Math.ceil((1 << 20) / Buffer.byteLength(unit))));
    for (let left = size; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(left, chunk.length));
    writeSync(fd, '"}\n');
  } finally {
    closeSync(fd);
  }
}

const outboxLine = (i) => {
  const n = Math.floor(i / 2);
  const status = i % 2 === 0 ? "intent" : n % 97 === 0 ? "unknown" : "confirmed";
  return {
    nonce: `n${n}`,
    status,
    at: iso(T0 + i * 1000),
    channel: snowflake(n % 17),
    ...(status === "confirmed" ? { messageId: snowflake(n) } : {}),
  };
};
const dropLine = (i) => ({
  at: iso(T0 + i * 1000),
  reason: ["ceiling", "cooldown", "not-addressed", "duplicate"][i % 4],
  id: snowflake(i),
  channel: snowflake(i % 17),
});

// One process serving many bindings (#32): each binding's inbox, outbox
// and admissions of BINDING_LINES lines each (bench/journals.mjs's
// writeBinding); the admissions are counted on the last day.
/** The bindings' directories: siblings of the shape's `discord/alpha`. */
const bindingDirs = (dir) => Array.from({ length: BINDINGS }, (_, b) => join(dirname(dir), `binding-${b}`));

// Each shape: the files it needs (made once, in `dir`) and the read.
const shapes = [
  {
    name: `readDrops, one ${opts["big-mb"]} MB line`,
    files: "big-drops",
    make: (dir) => writeHugeLine(join(dir, "drops.jsonl"), { at: iso(T0), reason: "ceiling" }, BIG),
    read: (M, dir) => M.readDrops(dir).length,
  },
  {
    name: `unresolvedOutbox, one ${opts["big-mb"]} MB line`,
    files: "big-outbox",
    make: (dir) => writeHugeLine(join(dir, "outbox.jsonl"), { nonce: "n0", status: "intent", at: iso(T0) }, BIG),
    read: (M, dir) => M.unresolvedOutbox(dir).length,
  },
  { name: `readOutbox, one ${opts["big-mb"]} MB line`, files: "big-outbox", read: (M, dir) => M.readOutbox(dir).size },
  {
    // Lines of text: its newlines are escapes, which a read cannot share.
    name: `readDrops, one ${opts["big-mb"]} MB line of escaped text`,
    files: "big-escaped",
    make: (dir) => writeHugeLine(join(dir, "drops.jsonl"), { at: iso(T0), reason: "ceiling" }, BIG, "abcdefghijklmno\\n"),
    read: (M, dir) => M.readDrops(dir).length,
  },
  {
    name: `readDrops, one ${opts["big-mb"]} MB line of Latin-1 text`,
    files: "big-latin1",
    make: (dir) => writeHugeLine(join(dir, "drops.jsonl"), { at: iso(T0), reason: "ceiling" }, BIG, "é"),
    read: (M, dir) => M.readDrops(dir).length,
  },
  {
    name: `readDrops, one ${opts["big-mb"]} MB line of CJK text`,
    files: "big-cjk",
    make: (dir) => writeHugeLine(join(dir, "drops.jsonl"), { at: iso(T0), reason: "ceiling" }, BIG, "日"),
    read: (M, dir) => M.readDrops(dir).length,
  },
  {
    name: `listTurns, one ${opts["big-mb"]} MB record`,
    files: "big-turn",
    make: (dir) => {
      mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
      writeHugeLine(join(dir, "turns", "t0.json"), { startedAt: iso(T0), id: "t0" }, BIG);
    },
    read: (M, dir) => M.listTurns(dir).length,
  },
  {
    name: `readOutbox, ${LINES.toLocaleString("en")} lines`,
    files: "many-outbox",
    make: (dir) => writeLines(join(dir, "outbox.jsonl"), LINES, outboxLine),
    read: (M, dir) => M.readOutbox(dir).size,
  },
  { name: `unresolvedOutbox, ${LINES.toLocaleString("en")} lines`, files: "many-outbox", read: (M, dir) => M.unresolvedOutbox(dir).length },
  {
    name: `readDrops, ${DROPS.toLocaleString("en")} lines`,
    files: "many-drops",
    make: (dir) => writeLines(join(dir, "drops.jsonl"), DROPS, dropLine),
    read: (M, dir) => M.readDrops(dir).length,
  },
  {
    name: `readInboxIds, ${LINES.toLocaleString("en")} lines`,
    files: "many-inbox",
    make: (dir) =>
      writeLines(join(dir, "inbox.jsonl"), LINES, (i) => ({ id: snowflake(i), at: iso(T0 + i * 1000), channel: snowflake(i % 17) })),
    read: (M, dir) => M.readInboxIds(dir).size,
  },
  {
    name: `listTurns, ${TURNS.toLocaleString("en")} records`,
    files: "many-turns",
    make: (dir) => {
      mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
      for (let i = 0; i < TURNS; i++) {
        const t = T0 + i * 60_000;
        const record = {
          startedAt: iso(t),
          finishedAt: iso(t + 4000),
          id: `turn-${i}`,
          message: snowflake(i),
          prompt: "x".repeat(200),
          reply: "y".repeat(400),
        };
        writeFileSync(join(dir, "turns", `turn-${String(i).padStart(6, "0")}.json`), JSON.stringify(record, null, 2) + "\n", {
          mode: 0o600,
        });
      }
    },
    read: (M, dir) => M.listTurns(dir).length,
  },
  { name: `countTurnsOn, ${TURNS.toLocaleString("en")} records`, files: "many-turns", read: (M, dir) => M.countTurnsOn(dir, "2024-01-02") },
  {
    name: `many bindings: ${BINDINGS} × ${BINDING_LINES.toLocaleString("en")} lines × readInboxIds, unresolvedOutbox, countAdmissionsOn, ${ROUNDS} rounds`,
    files: "many-bindings",
    make: (dir) => bindingDirs(dir).forEach((d, b) => writeBinding(d, b, BINDING_LINES)),
    // The answers of the last round, summed over the bindings.
    read: (M, dir) => {
      let answer;
      for (let round = 0; round < ROUNDS; round++) {
        answer = { ids: 0, unresolved: 0, admissions: 0 };
        for (const d of bindingDirs(dir)) {
          const [ids, unresolved, admissions] = readBinding(M, d);
          answer.ids += ids;
          answer.unresolved += unresolved;
          answer.admissions += admissions;
        }
      }
      return answer;
    },
    afterGc: true,
  },
];

const self = fileURLToPath(import.meta.url);

if (opts.child) {
  const M = await load(opts.child);
  const shape = shapes.find((s) => s.name === opts.shape);
  if (!shape) throw new Error(`no shape named ${opts.shape}`);
  const base = process.resourceUsage().maxRSS;
  const start = performance.now();
  let result;
  try {
    result = { ok: shape.read(M, opts.dir) };
  } catch (e) {
    result = { error: `${e?.name}: ${e?.message}` };
  }
  const ms = Math.round(performance.now() - start);
  const peak = process.resourceUsage().maxRSS;
  if (shape.afterGc) {
    // What stays resident once everything the calls returned is garbage.
    global.gc();
    global.gc();
    result.afterGcKiB = Math.round(process.memoryUsage().rss / 1024);
  }
  console.log(JSON.stringify({ baseKiB: base, peakKiB: peak, ms, ...result }));
  process.exit(0);
}

/** One read in a fresh process: its figures, or how it died. */
function measure(modulePath, shape, dir) {
  // The sizes go along: they are part of the shapes' names.
  const sizes = ["big-mb", "lines", "drops", "turns", "bindings", "binding-lines"].flatMap((k) => [`--${k}`, opts[k]]);
  const flags = shape.afterGc ? ["--expose-gc"] : [];
  const r = spawnSync(process.execPath, [...flags, self, "--child", modulePath, "--shape", shape.name, "--dir", dir, ...sizes], {
    encoding: "utf8",
    env: process.env,
  });
  if (r.status !== 0) return { died: r.signal ?? `exit ${r.status}`, stderr: r.stderr.trim().split("\n").pop() };
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

const ours = resolve(fileURLToPath(new URL("../index.js", import.meta.url)));
const theirs = opts.against ? resolve(opts.against) : null;
const only = opts.only ? new RegExp(opts.only) : null;
const work = mkdtempSync(join(tmpdir(), "discord-journal-memory-"));
const mib = (kib) => (kib / 1024).toFixed(0);
const shown = (m) =>
  m.died
    ? `died (${m.died})`
    : `${mib(m.peakKiB)}${m.afterGcKiB !== undefined ? `, ${mib(m.afterGcKiB)} after gc, ${(m.ms / 1000).toFixed(1)} s` : ""}${m.error ? ` (${m.error})` : ""}`;
const results = [];
try {
  const cache = process.env.DISCORD_JOURNAL_CACHE_MB;
  console.log(
    `peak resident memory (MiB, maxRSS of a fresh process per read)${theirs ? `; against ${opts.against}` : ""}${cache !== undefined ? `; DISCORD_JOURNAL_CACHE_MB=${cache}` : ""}\n`,
  );
  // "read": the peak over the process once the module was loaded, the
  // read's own share (the two modules cost different amounts to load).
  console.log(
    theirs
      ? "| read | ours | theirs | ratio | ours, read | theirs, read |\n| --- | ---: | ---: | ---: | ---: | ---: |"
      : "| read | ours | ours, read |\n| --- | ---: | ---: |",
  );
  const made = new Map();
  for (const shape of shapes) {
    if (only && !only.test(shape.name)) continue;
    if (!made.has(shape.files)) {
      // Only one shape's files on disk at a time.
      for (const d of made.values()) rmSync(d, { recursive: true, force: true });
      made.clear();
      const dir = join(work, shape.files, "discord", "alpha");
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      shapes.find((s) => s.files === shape.files && s.make).make(dir);
      made.set(shape.files, dir);
    }
    const dir = made.get(shape.files);
    const r = { read: shape.name, ours: measure(ours, shape, dir) };
    if (theirs) r.theirs = measure(theirs, shape, dir);
    results.push(r);
    const own = (m) => (m.died ? "-" : mib(m.peakKiB - m.baseKiB));
    if (!theirs) console.log(`| ${r.read} | ${shown(r.ours)} | ${own(r.ours)} |`);
    else {
      const ratio = r.ours.peakKiB && r.theirs.peakKiB ? (r.ours.peakKiB / r.theirs.peakKiB).toFixed(2) : "-";
      console.log(`| ${r.read} | ${shown(r.ours)} | ${shown(r.theirs)} | ${ratio} | ${own(r.ours)} | ${own(r.theirs)} |`);
      if ("ok" in r.ours && "ok" in r.theirs && JSON.stringify(r.ours.ok) !== JSON.stringify(r.theirs.ok))
        console.log(`\n(answers differ: ours ${JSON.stringify(r.ours.ok)}, theirs ${JSON.stringify(r.theirs.ok)})\n`);
    }
  }
  if (opts.json)
    writeFileSync(
      opts.json,
      JSON.stringify(
        {
          node: process.version,
          bigMB: BIG / 1e6,
          lines: LINES,
          drops: DROPS,
          turns: TURNS,
          bindings: BINDINGS,
          bindingLines: BINDING_LINES,
          cacheMB: process.env.DISCORD_JOURNAL_CACHE_MB ?? null,
          against: opts.against ?? null,
          results,
        },
        null,
        2,
      ) + "\n",
    );
} finally {
  rmSync(work, { recursive: true, force: true });
}
