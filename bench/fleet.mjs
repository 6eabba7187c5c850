#!/usr/bin/env node
// The fleet view's cost (#46), as an operator meets it: every binding's
// verdict from one `discord-journal status --data-root ROOT`, against the
// loop it replaces (one `status DIR --json` per binding, Node's start each
// time), on the same files in the same run; then one large fleet alone,
// its time and the peak resident set of its process.
//
//   node bench/fleet.mjs [--bindings N] [--lines N] [--large-bindings N]
//        [--large-lines N] [--runs N] [--collections SIZES] [--owners N]
//
// --collections (#57) times a metrics collection instead (`--prometheus`,
// as its timer runs it) at each size of SIZES (`BINDINGSxLINES,…`; by
// default 25x10000,200x10000,1000x10000,200x100000): the first, which
// reads every file, and the next, on the same files, which reads only what
// changed; then the next after one cut line in one binding, which it must
// see. Time and peak resident set of each (and the next's processor time,
// its children's with it), and the size of the state the collection
// keeps, per binding.
//
// --owners N (#63, with --collections; run as root): the journals belong
// to N service users, binding i to the (i mod N)-th, as a host whose
// connectors run as their own users has them, so that the collection
// judges each owner's bindings in a child of that owner's. The users are
// system users `discord-journal-bench-K`, made with `useradd --system`
// where they do not exist, and removed at the end (those made here alone).
//
// A binding of L lines holds L/3 in each of inbox, outbox and admissions
// (bench/journals.mjs). Each timing is the median of --runs runs.
import { spawnSync } from "node:child_process";
import { appendFileSync, chmodSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { countOf, usageOf } from "../scripts/options.mjs";
import { writeBinding } from "./journals.mjs";

const USAGE =
  "usage: node bench/fleet.mjs [--bindings N] [--lines N] [--large-bindings N] [--large-lines N] [--runs N] [--collections SIZES] [--owners N]";
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
      collections: { type: "string" },
      owners: { type: "string" },
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
const owners = values.owners === undefined ? 0 : count("owners", values.owners);
if (owners > 0 && values.collections === undefined) usage("--owners is for --collections");
if (owners > 0 && process.geteuid?.() !== 0) usage("--owners gives the journals to service users: run it as root");

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

/**
 * One run of `status … --prometheus FILE` under /usr/bin/time: `{ ms, cpu,
 * mib, text }`, `cpu` its processor time and its children's (an owner's
 * child each), in ms: on a shared machine, what the wall time cannot show.
 */
function collection(dataRoot, file) {
  const began = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M %U %S", process.execPath, bin, "status", "--data-root", dataRoot, "--prometheus", file], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  if (r.status !== 0) throw new Error(r.stderr);
  const [kib, user, sys] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { ms, cpu: (user + sys) * 1000, mib: kib / 1024, text: readFileSync(file, "utf8") };
}

/**
 * The uids of `n` service users, made where they do not exist; `made`
 * lists those made here, removed at the end.
 */
const made = [];
function serviceUsers(n) {
  const uids = [];
  for (let k = 0; k < n; k++) {
    const name = `discord-journal-bench-${k}`;
    let id = spawnSync("id", ["-u", name], { encoding: "utf8" });
    if (id.status !== 0) {
      const r = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`useradd ${name}: ${r.stderr}`);
      made.push(name);
      id = spawnSync("id", ["-u", name], { encoding: "utf8" });
    }
    uids.push(Number(id.stdout.trim()));
  }
  return uids;
}

/** The bytes of the state the collection keeps beside `file` (one per data root, cli/memo.js). */
function stateBytes(dir) {
  const name = readdirSync(dir).find((n) => /^discord-journal\.[0-9a-f]+\.state$/.test(n));
  return name === undefined ? NaN : lstatSync(join(dir, name)).size;
}

if (values.collections !== undefined) {
  const sizes = (values.collections || "25x10000,200x10000,1000x10000,200x100000").split(",").map((s) => {
    const m = /^([1-9][0-9]*)x([1-9][0-9]*)$/.exec(s);
    if (!m) usage(`--collections takes BINDINGSxLINES,…: ${s}`);
    return [Number(m[1]), Number(m[2])];
  });
  const uids = serviceUsers(owners);
  try {
    console.log(
      "| bindings × lines | owners | first ms | MiB | next ms | cpu ms | MiB | next after a cut line ms | seen | state per binding |",
    );
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
    for (const [n, l] of sizes) {
      const top = root(n, l);
      if (uids.length > 0) {
        // Their owners search the way down to their journals, as on a host.
        chmodSync(top, 0o755);
        chmodSync(join(top, "discord"), 0o755);
        for (let b = 0; b < n; b++) {
          const uid = uids[b % uids.length];
          const r = spawnSync("chown", ["-R", `${uid}:${uid}`, join(top, "discord", `b${b}`)], { encoding: "utf8" });
          if (r.status !== 0) throw new Error(r.stderr);
        }
      }
      const file = join(top, "m.prom");
      const first = collection(top, file);
      // The next collection, on the same files: the median of --runs.
      const nexts = [];
      const ms = median(() => nexts.push(collection(top, file)));
      const next = nexts.sort((a, b) => a.ms - b.ms)[Math.floor(nexts.length / 2)];
      const state = stateBytes(top);
      appendFileSync(join(top, "discord", "b0", "inbox.jsonl"), '{"id":"cu');
      const cut = collection(top, file);
      const seen = cut.text.includes(`binding="b0",state="damaged"} 1`);
      rmSync(top, { recursive: true, force: true });
      console.log(
        `| ${n} × ${l} | ${uids.length || "root"} | ${first.ms.toFixed(0)} | ${first.mib.toFixed(0)} | ${ms.toFixed(0)} | ${next.cpu.toFixed(0)} | ${next.mib.toFixed(0)} | ${cut.ms.toFixed(0)} | ${seen ? "yes" : "NO"} | ${(state / n / 1024).toFixed(1)} KiB |`,
      );
    }
  } finally {
    for (const name of made) spawnSync("userdel", [name]);
  }
  process.exit(0);
}

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
