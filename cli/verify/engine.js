// The process that `discord-journal verify` runs the comparison in (so that
// a reference that hangs or exits cannot take the command with it): loads
// the host's journal.mjs where it lies and this package, plays every case
// and random sequence against each in a directory of its own under --root,
// and writes one JSON line per event on stdout for the command to read:
//
//   {"event":"loaded"}                       both modules loaded
//   {"event":"at","label":...}               a call is about to run (for a hang's report)
//   {"event":"difference",...}               one difference, with the case and its replay
//   {"event":"done","summary":{...}}         the end
//
// A reference that cannot be loaded ends with {"event":"unloadable"}, one
// that is this package (the host's journal.mjs after the swap) with
// {"event":"itself","why":...}.
"use strict";

const { mkdirSync, realpathSync, rmSync } = require("node:fs");
const { join, resolve, sep } = require("node:path");
const { parseArgs } = require("node:util");
const { pathToFileURL } = require("node:url");
const { render, thrown, tree } = require("./render.js");
const { cases: core } = require("./cases.js");
const { cases: odd } = require("./odd.js");
const { sequence } = require("./random.js");

const { values: o } = parseArgs({
  options: {
    reference: { type: "string" },
    root: { type: "string" },
    seed: { type: "string", default: "1" },
    sequences: { type: "string", default: "500" },
    length: { type: "string", default: "30" },
    case: { type: "string" },
    "sequences-only": { type: "boolean", default: false },
  },
});
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

let ref;
let ours;

// Why the reference is this package, or null (#37): after the swap the
// host's journal.mjs re-exports it, and the addon compared with itself
// proves nothing. A file of this package (a symbolic link to it), or a
// function export that is one of this package's, or the same source as
// one of its wrappers (another copy of it). What the reference loads is
// not asked: the original journal.mjs imports the host's errors.mjs, which
// re-exports this package's DiscordError after the swap.
function itself() {
  const home = realpathSync(join(__dirname, "..", ".."));
  const real = realpathSync(resolve(o.reference));
  if (real.startsWith(home + sep)) return `it is ${real}, a file of this package`;
  for (const [k, v] of Object.entries(ours)) {
    if (typeof v !== "function" || oursOnly().includes(k)) continue;
    if (ref[k] === v) return `its ${k} is this package's own`;
    if (typeof ref[k] === "function" && String(ref[k]) === String(v) && String(v).includes("native."))
      return `its ${k} is this package's, from another copy of it`;
  }
  return null;
}

// Exports the package has and journal.mjs cannot (the one list), once it is loaded.
const oursOnly = () => require("../../internal.js").OWN_EXPORTS;

/** The surface: each export's name and kind, a function's length, a constant's value. */
function surface() {
  const diffs = [];
  const a = new Set(Object.keys(ref));
  const b = new Set(Object.keys(ours));
  for (const n of [...a].sort()) if (!b.has(n)) diffs.push({ export: n, reference: `exports ${n}`, addon: "does not export it" });
  for (const n of [...b].sort())
    if (!a.has(n) && !oursOnly().includes(n)) diffs.push({ export: n, reference: "does not export it", addon: `exports ${n}` });
  for (const n of [...a].filter((x) => b.has(x)).sort()) {
    const x = ref[n];
    const y = ours[n];
    const shape = (v) => (typeof v === "function" ? `function of length ${v.length}` : render(v));
    if (shape(x) !== shape(y)) diffs.push({ export: n, reference: shape(x), addon: shape(y) });
  }
  return { exports: a.size, diffs };
}

/** Plays `kase` against `M` in `root/side`: each call's outcome and seam log, and the files left. */
async function play(M, kase, root, side) {
  const parent = join(root, side, "discord");
  mkdirSync(parent, { recursive: true });
  const dir = join(parent, kase.binding ?? "alpha");
  if (kase.bare !== true) mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
  const dirs = [dir, join(root, side)];
  const lines = [];
  const log = [];
  const ctx = {
    dir,
    log,
    rec:
      (name, impl) =>
      (...args) => {
        log.push(`${name}(${args.map((v) => render(v, dirs)).join(",")})`);
        return impl(...args);
      },
  };
  for (const [i, step] of kase.steps.entries()) {
    const label = step.name ?? `step ${i + 1}`;
    if (step.fs) {
      step.fs(dir, ctx);
      continue;
    }
    emit({ event: "at", label: `${kase.name}: ${label} (${side})` });
    let what;
    try {
      what = `returns ${render(await step.call(M, dir, ctx), dirs)}`;
    } catch (e) {
      what = thrown(e, dirs);
    }
    lines.push({ label, call: label, what });
    if (log.length) lines.push({ label: `${label}: seams and traps`, call: label, what: log.splice(0).join(" ; ") });
    // The files after each call, so that a difference in them names the call that made it.
    lines.push({ label: `${label}: the files after it`, call: label, what: tree(dir, dirs).join("\n") });
  }
  return { lines };
}

/** The differences between the two plays of `kase`. */
async function compare(kase, root) {
  try {
    const a = await play(ref, kase, root, "reference");
    const b = await play(ours, kase, root, "addon");
    const diffs = [];
    for (let i = 0; i < Math.max(a.lines.length, b.lines.length); i++) {
      const x = a.lines[i];
      const y = b.lines[i];
      if (x?.what !== y?.what) {
        diffs.push({
          step: x?.label ?? y?.label,
          export: exportOf(x?.call ?? y?.call),
          reference: x?.what ?? "(no such step)",
          addon: y?.what ?? "(no such step)",
          ...(x?.label.endsWith("the files after it") ? filesOnly(x.what, y?.what ?? "") : {}),
        });
        break; // what follows a first difference differs for that reason
      }
    }
    return diffs;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Of two listings of files, the rows each has that the other lacks. */
function filesOnly(a, b) {
  const ra = a.split("\n");
  const rb = b.split("\n");
  const sa = new Set(ra);
  const sb = new Set(rb);
  return {
    reference: ra.filter((r) => !sb.has(r)).join("\n") || "(nothing more)",
    addon: rb.filter((r) => !sa.has(r)).join("\n") || "(nothing more)",
  };
}

/** The export a step's label names (`readDrops ...` → readDrops). */
function exportOf(label) {
  const m = /^([A-Za-z_]+)/.exec(label ?? "");
  return m && (m[1] in ours || m[1] in ref) ? m[1] : (label ?? "?");
}

/** Loads both modules, then plays the surface, every case and each random sequence. */
async function main() {
  try {
    ref = await import(pathToFileURL(resolve(o.reference)).href);
  } catch (e) {
    emit({ event: "unloadable", message: String(e?.message ?? e).split("\n")[0] });
    process.exit(0);
  }
  if (typeof ref.readInboxIds !== "function" && typeof ref.appendInbox !== "function") {
    emit({ event: "unloadable", message: "it exports none of the journal's functions (no appendInbox, no readInboxIds)" });
    process.exit(0);
  }
  ours = require("../../index.js");
  const why = itself();
  if (why !== null) {
    emit({ event: "itself", why });
    process.exit(0);
  }
  emit({ event: "loaded" });
  const summary = { exports: 0, cases: 0, sequences: 0, calls: 0, differences: 0, known: 0 };
  const s = surface();
  summary.exports = s.exports;
  for (const d of s.diffs) {
    summary.differences++;
    emit({
      event: "difference",
      case: "the surface",
      step: d.export,
      export: d.export,
      reference: d.reference,
      addon: d.addon,
      replay: "",
    });
  }

  const seed = Number(o.seed);
  const fixed = o["sequences-only"] ? [] : [...core, ...odd];
  const all = [
    ...fixed.map((k) => ({ ...k, replay: `--case ${JSON.stringify(k.name)}` })),
    ...Array.from({ length: Number(o.sequences) }, (_, i) => ({
      ...sequence(seed + i, Number(o.length)),
      replay: `--seed ${seed + i} --sequences 1 --sequences-only`,
      random: true,
    })),
  ].filter((k) => o.case === undefined || k.name === o.case);
  for (const [i, kase] of all.entries()) {
    if (kase.random) summary.sequences++;
    else summary.cases++;
    summary.calls += kase.steps.filter((s) => s.call).length;
    const diffs = await compare(kase, join(resolve(o.root), String(i)));
    for (const d of diffs) {
      if (kase.known) summary.known++;
      else summary.differences++;
      emit({ event: "difference", case: kase.name, ...d, known: kase.known ?? null, replay: kase.replay });
    }
  }
  emit({ event: "done", summary });
}

main();
