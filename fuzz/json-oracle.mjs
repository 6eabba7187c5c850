#!/usr/bin/env node
// Differential fuzzing of the addon's line splitting and JSON verdicts,
// with JSON.parse (as journal.mjs uses it) as the oracle. Each case is a
// line file made of random and mutated lines (escapes, lone surrogates,
// numbers, deep nesting, whitespace, BOMs, invalid UTF-8); the addon must
// refuse at the same line, or return the same values, by two paths: the
// values V8 parses (readDrops) and the ids Rust decodes itself
// (readInboxIds).
//
//   node fuzz/json-oracle.mjs [--cases N] [--seed S] [--module PATH]
//
// CI runs 100,000 cases; a longer run is the same command with a larger
// --cases (and another --seed). A disagreement prints its case and exits 1.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { prng } from "../cli/verify/random.js";
import { countOf, usageOf } from "../scripts/options.mjs";

// `--cases 10k` once ran no case and passed (#13).
const usage = usageOf("fuzz", "usage: node fuzz/json-oracle.mjs [--cases N] [--seed S] [--module PATH]");
const count = countOf(usage);
let opts;
try {
  const options = { cases: { type: "string", default: "100000" }, seed: { type: "string", default: "1" }, module: { type: "string" } };
  opts = parseArgs({ strict: true, options }).values;
} catch (e) {
  usage(e.message);
}
const CASES = count("cases", opts.cases, 1);
const SEED = count("seed", opts.seed, 0);
const modulePath = resolve(opts.module ?? join(fileURLToPath(new URL("..", import.meta.url)), "index.js"));
const M = modulePath.endsWith(".mjs") ? await import(pathToFileURL(modulePath).href) : createRequire(import.meta.url)(modulePath);

const rnd = prng(SEED);
const int = (n) => Math.floor(rnd() * n);
const pick = (a) => a[int(a.length)];

const WS = [" ", "\t", "\r", "\n", "\u000b", "\u000c", "\u00a0", "\ufeff", "\u2028", ""];
const NUMBERS = [
  "0",
  "-0",
  "1",
  "-1",
  "01",
  "1.",
  ".5",
  "1.5",
  "1e400",
  "-1e400",
  "1E+2",
  "1e-2",
  "-",
  "+1",
  "1e",
  "1.e3",
  "0x10",
  "NaN",
  "Infinity",
  "9007199254740993",
  "5e-324",
  "1_000",
  "00",
  "-01",
  "1.0e+",
  "123456789012345678901234567890",
];
const ESCAPES = [
  "\\n",
  "\\t",
  '\\"',
  "\\\\",
  "\\/",
  "\\b",
  "\\f",
  "\\r",
  "\\u0041",
  "\\ud83d\\ude00",
  "\\ud800",
  "\\udc00",
  "\\uDBFF",
  "\\u12",
  "\\x41",
  "\\u00e9",
  "\\'",
  "\\",
  "\\U0041",
  "\\u0000",
];
const RAW = ["a", "é", "😀", "\u2028", "\u0000", "\u0001", "\t", "\u007f", '"', "\\", "\ud800", "\u00a0"];
const LITERALS = ["true", "false", "null", "tru", "nul", "True", "undefined"];

function str() {
  let out = '"';
  for (let i = int(6); i > 0; i--) out += rnd() < 0.5 ? pick(ESCAPES) : pick(RAW);
  return out + (rnd() < 0.95 ? '"' : "");
}

function value(depth = 0) {
  const k = int(depth > 4 ? 3 : 6);
  if (k === 0) return pick(NUMBERS);
  if (k === 1) return str();
  if (k === 2) return pick(LITERALS);
  const ws = () => (rnd() < 0.2 ? pick(WS) : "");
  if (k === 3) {
    const items = Array.from({ length: int(4) }, () => ws() + value(depth + 1) + ws());
    return "[" + items.join(rnd() < 0.95 ? "," : ",,") + (rnd() < 0.05 ? "," : "") + "]";
  }
  if (k === 4 && rnd() < 0.1) {
    const d = pick([10, 1000, 100_000]);
    return "[".repeat(d) + (rnd() < 0.9 ? "]".repeat(d) : "]".repeat(d - 1));
  }
  const keys = ['"id"', '"at"', '"__proto__"', '"\\u0069d"', '"x"', '"id"', str()];
  const members = Array.from({ length: int(4) }, () => ws() + pick(keys) + ws() + (rnd() < 0.97 ? ":" : "") + ws() + value(depth + 1));
  return "{" + members.join(",") + "}";
}

function line() {
  let l = rnd() < 0.3 ? `{"id":${str()},"v":${value()}}` : value();
  if (rnd() < 0.3) {
    // mutate: insert, delete or replace a character
    const at = int(l.length + 1);
    const c = pick([...WS, ...RAW, "{", "}", "[", "]", ",", ":", '"', "\\", "0", "-", "e", "."]);
    const op = int(3);
    l = op === 0 ? l.slice(0, at) + c + l.slice(at) : op === 1 ? l.slice(0, at) + l.slice(at + 1) : l.slice(0, at) + c + l.slice(at + 1);
  }
  if (rnd() < 0.1) l = "\ufeff" + l;
  if (rnd() < 0.1) l = pick(WS) + l + pick(WS);
  return l;
}

/** The bytes of one case: lines joined by newlines, now and then a raw invalid UTF-8 byte. */
function caseBytes() {
  const lines = Array.from({ length: rnd() < 0.8 ? 1 : 2 + int(4) }, line);
  let buf = Buffer.from(lines.join(rnd() < 0.1 ? "\r\n" : "\n") + (rnd() < 0.9 ? "\n" : ""), "utf8");
  if (rnd() < 0.1) {
    const at = int(buf.length + 1);
    buf = Buffer.concat([buf.subarray(0, at), Buffer.from([pick([0xff, 0xc0, 0xed, 0xf0, 0x80, 0xe2])]), buf.subarray(at)]);
  }
  return buf;
}

/** What journal.mjs does: split, skip empty lines, one BOM off, JSON.parse. */
function oracle(bytes, name) {
  const values = [];
  for (const [i, l] of bytes.toString("utf8").split("\n").entries()) {
    if (l.length === 0) continue;
    try {
      values.push(JSON.parse(l.charCodeAt(0) === 0xfeff ? l.slice(1) : l));
    } catch {
      return { error: `${name}:${i + 1}: not valid JSON` };
    }
  }
  return { values };
}

/** Type-exact equality of parsed values (key order, -0, prototypes), without
 * recursion: lines nest 100,000 deep. */
function same(a, b) {
  const stack = [[a, b]];
  while (stack.length) {
    const [x, y] = stack.pop();
    if (x === null || y === null || typeof x !== "object" || typeof y !== "object") {
      if (!Object.is(x, y)) return false;
      continue;
    }
    if (Array.isArray(x) !== Array.isArray(y) || Object.getPrototypeOf(x) !== Object.getPrototypeOf(y)) return false;
    const kx = Object.keys(x),
      ky = Object.keys(y);
    if (kx.length !== ky.length) return false;
    for (let i = 0; i < kx.length; i++) {
      if (kx[i] !== ky[i]) return false;
      stack.push([x[kx[i]], y[ky[i]]]);
    }
  }
  return true;
}

const attempt = (f) => {
  try {
    return { value: f() };
  } catch (e) {
    return { error: e.message, cls: e.constructor.name };
  }
};

const shm = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const root = mkdtempSync(join(shm, "discord-journal-fuzz-"));
const dir = join(root, "alpha");
mkdirSync(dir);
let disagreements = 0,
  valid = 0,
  ran = 0;
try {
  for (let n = 0; n < CASES; n++) {
    ran++;
    const bytes = caseBytes();
    const report = (what, want, got) => {
      disagreements++;
      const show = (v) => {
        try {
          return JSON.stringify(v)?.slice(0, 400);
        } catch {
          return "(too deep to show)";
        }
      };
      console.log(
        `case ${n} (seed ${SEED}) ${what}\n  bytes: ${show(bytes.toString("latin1").slice(0, 400))}\n  oracle: ${show(want)}\n  addon:  ${show(got)}`,
      );
    };
    writeFileSync(join(dir, "drops.jsonl"), bytes);
    writeFileSync(join(dir, "inbox.jsonl"), bytes);
    const want = oracle(bytes, "drops.jsonl");
    const got = attempt(() => M.readDrops(dir));
    if (want.error !== undefined) {
      if (got.error !== want.error) report("verdict (readDrops)", want, got);
      const inbox = attempt(() => M.readInboxIds(dir));
      if (inbox.error !== want.error.replace("drops", "inbox")) report("verdict (readInboxIds)", want.error, inbox);
      continue;
    }
    valid++;
    if (got.error !== undefined || !same(got.value, want.values)) {
      report("values (readDrops)", want.values, got);
      continue;
    }
    const wantIds = attempt(() => new Set(want.values.map((e) => e.id).filter((id) => typeof id === "string")));
    const gotIds = attempt(() => M.readInboxIds(dir));
    const agree =
      wantIds.error !== undefined ? gotIds.cls === wantIds.cls : gotIds.error === undefined && same([...gotIds.value], [...wantIds.value]);
    if (!agree) report("ids (readInboxIds)", wantIds, gotIds);
    if (disagreements >= 10) break;
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
console.log(`fuzz: ${ran} cases (${valid} valid), seed ${SEED}: ${disagreements} disagreements with JSON.parse`);
// A run that played no case proves nothing: it fails.
if (ran === 0) console.error("fuzz: no case ran");
process.exit(disagreements || ran === 0 ? 1 : 0);
