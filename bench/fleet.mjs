#!/usr/bin/env node
// The fleet view's cost (#46), as an operator meets it: every binding's
// verdict from one `discord-journal status --data-root ROOT`, against the
// loop it replaces (one `status DIR --json` per binding, Node's start each
// time), on the same files in the same run; then one large fleet alone,
// its time and the peak resident set of its process.
//
//   node bench/fleet.mjs [--bindings N] [--lines N] [--large-bindings N]
//        [--large-lines N] [--runs N]
//
// A binding of L lines holds L/3 in each of inbox, outbox and admissions
// (bench/journals.mjs). Each timing is the median of --runs runs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { countOf, usageOf } from "../scripts/options.mjs";
import { writeBinding } from "./journals.mjs";

const USAGE = "usage: node bench/fleet.mjs [--bindings N] [--lines N] [--large-bindings N] [--large-lines N] [--runs N]";
const usage = usageOf("bench/fleet.mjs", USAGE);
const count = countOf(usage);
let values;
try {
  ({ values } = parseArgs({
    options: {
      bindings: { type: "string", default: "24" },
      lines: { type: "string", default: "5000" },
      "large-bindings": { type: "string", default: "200" },
      "large-lines": { type: "string", default: "10000" },
      runs: { type: "string", default: "3" },
    },
  }));
} catch (e) {
  usage(e.message);
}
const bindings = count("bindings", values.bindings);
const lines = count("lines", values.lines);
const largeBindings = count("large-bindings", values["large-bindings"]);
const largeLines = count("large-lines", values["large-lines"]);
const runs = count("runs", values.runs);

const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));

/** A data root of `n` bindings of `l` lines each. */
function root(n, l) {
  const top = mkdtempSync(join(tmpdir(), "discord-journal-fleet-"));
  for (let b = 0; b < n; b++) writeBinding(join(top, "discord", `b${b}`), b, Math.ceil(l / 3));
  return top;
}

/** Milliseconds of `f()`, the median of `runs`. */
function median(f) {
  const t = [];
  for (let i = 0; i < runs; i++) {
    const began = process.hrtime.bigint();
    f();
    t.push(Number(process.hrtime.bigint() - began) / 1e6);
  }
  return t.sort((a, b) => a - b)[Math.floor(t.length / 2)];
}

const status = (...args) => {
  const r = spawnSync(process.execPath, [bin, "status", ...args, "--json"], { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.status !== 0 && r.status !== 1 && r.status !== 3) throw new Error(r.stderr);
  return r;
};

const small = root(bindings, lines);
const loop = median(() => {
  for (let b = 0; b < bindings; b++) status(join(small, "discord", `b${b}`));
});
const one = median(() => status("--data-root", small));
rmSync(small, { recursive: true, force: true });
console.log(`| view | bindings × lines | ms | of the loop |`);
console.log(`| --- | --- | ---: | ---: |`);
console.log(`| a loop of \`status DIR\` | ${bindings} × ${lines} | ${loop.toFixed(0)} | 1.00 |`);
console.log(`| \`status --data-root ROOT\` | ${bindings} × ${lines} | ${one.toFixed(0)} | ${(one / loop).toFixed(2)} |`);

const large = root(largeBindings, largeLines);
let peak = 0;
const t = median(() => {
  const r = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, bin, "status", "--data-root", large, "--json"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  peak = Math.max(peak, Number(r.stderr.trim().split("\n").at(-1)));
});
rmSync(large, { recursive: true, force: true });
console.log(
  `| \`status --data-root ROOT\` | ${largeBindings} × ${largeLines} | ${t.toFixed(0)} | peak RSS ${(peak / 1024).toFixed(0)} MiB |`,
);
