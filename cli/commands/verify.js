// `discord-journal verify --reference PATH`: proves the addon against a
// host's own journal.mjs, where it lies (so that its errors.mjs and
// utilities resolve): the surface, deterministic cases that reach every
// export and refusal, and seeded random sequences, each call compared by
// its result, its refusal, the seams' calls and traps, and the files left.
//
// The comparison runs in a child process (cli/verify/engine.js), in
// directories under one temporary root that this process removes on every
// way out, Ctrl-C included: a reference that hangs is stopped after a
// minute without progress, and one that exits is reported, each naming the
// call it was in. Nothing is read or written outside that root.
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawn } = require("node:child_process");
const { UsageError, Refusal, plural, invocation } = require("../output.js");

/**
 * Where a relative `ref` may be meant from, in order (#48): the working
 * directory; the one `npm exec` or `npx` was typed in (INIT_CWD), where it
 * runs the command elsewhere; then each directory above the working
 * directory, so that the README's line, written from the host's root,
 * also works where npx runs it in a workspace (`packages/discord`).
 */
function bases(cwd = process.cwd(), initCwd = process.env.INIT_CWD) {
  const out = [cwd];
  if (initCwd && path.isAbsolute(initCwd)) out.push(initCwd);
  for (let d = path.dirname(cwd); ; d = path.dirname(d)) {
    out.push(d);
    if (d === path.dirname(d)) break;
  }
  return [...new Set(out)];
}

/** Checks that `ref` names a file to load, as the user meant it (`bases`); exit 2 otherwise. */
function referencePath(ref) {
  if (ref === undefined)
    throw new UsageError(`which journal.mjs? give its path: ${invocation()} verify --reference packages/discord/src/journal.mjs`);
  let first = null;
  for (const base of path.isAbsolute(ref) ? ["/"] : bases()) {
    const abs = path.resolve(base, ref);
    let st;
    try {
      st = fs.statSync(abs);
    } catch (e) {
      first ??= e;
      continue;
    }
    if (!st.isFile()) throw new UsageError(`the reference ${ref} is not a file; give the path of the host's journal.mjs`);
    return abs;
  }
  const where = path.isAbsolute(ref) ? "" : `, from ${process.cwd()} or a directory above it`;
  throw new UsageError(`no reference at ${ref} (${first.code})${where}; give the path of the host's journal.mjs`);
}

/**
 * Runs the comparison; resolves with `{ summary, differences }`, or rejects
 * with a usage error (a reference that cannot be loaded) or a refusal (one
 * that hung or exited).
 */
function compare(reference, opts) {
  const STALL = opts.timeout * 1000;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "discord-journal-verify-"));
  const args = [
    path.join(__dirname, "..", "verify", "engine.js"),
    "--reference",
    reference,
    "--root",
    root,
    "--seed",
    String(opts.seed),
    "--sequences",
    String(opts.sequences),
  ];
  if (opts.case !== undefined) args.push("--case", opts.case);
  if (opts.sequencesOnly) args.push("--sequences-only");
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  const clean = () => fs.rmSync(root, { recursive: true, force: true });
  const interrupted = () => {
    child.kill("SIGKILL");
    clean();
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  return new Promise((resolve, reject) => {
    const differences = [];
    let summary = null;
    let loaded = false;
    let at = "loading it";
    let rest = "";
    let stderr = "";
    let timer;
    const stall = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(
          new Refusal(
            `the comparison made no progress for ${STALL / 1000} s, in ${at}: the reference (or the addon) did not return; nothing was left behind`,
          ),
        );
      }, STALL);
    };
    stall();
    child.stderr.on("data", (d) => (stderr += d));
    child.stdout.on("data", (d) => {
      stall();
      const lines = (rest + d).split("\n");
      rest = lines.pop();
      for (const line of lines) {
        let e;
        try {
          e = JSON.parse(line);
        } catch {
          continue; // the reference's own output
        }
        if (e.event === "loaded") loaded = true;
        else if (e.event === "at") at = e.label;
        else if (e.event === "difference") differences.push(e);
        else if (e.event === "done") summary = e.summary;
        else if (e.event === "unloadable") reject(new UsageError(`the reference ${opts.shown} could not be loaded: ${e.message}`));
        // The host's journal.mjs after the swap: the addon against itself (#37).
        else if (e.event === "itself")
          reject(
            new UsageError(
              `the reference ${opts.shown} is this package, not the original journal.mjs (${e.why}): comparing the addon with itself proves nothing. ` +
                "Keep the original journal.mjs, for example as journal.orig.mjs beside it, and point --reference at it",
            ),
          );
      }
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      process.removeListener("SIGINT", interrupted);
      process.removeListener("SIGTERM", interrupted);
      clean();
      if (summary) return resolve({ summary, differences });
      if (!loaded) {
        const why =
          stderr
            .trim()
            .split("\n")
            .find((l) => /Error|error/.test(l)) ?? `it exited (${signal ?? code})`;
        return reject(new UsageError(`the reference ${opts.shown} could not be loaded: ${why}`));
      }
      reject(new Refusal(`the comparison stopped (${signal ?? `exit ${code}`}) in ${at}: the reference (or the addon) ended the process`));
    });
  });
}

/** The command: its text and JSON, exit 0 with no difference and 1 with any. */
async function verify(opts) {
  const reference = referencePath(opts.reference);
  const { summary, differences } = await compare(reference, { ...opts, shown: opts.reference });
  const failing = differences.filter((d) => !d.known);
  const known = differences.filter((d) => d.known);
  const head =
    `${plural(summary.exports, "export")} compared, ${plural(summary.cases, "case")}, ${plural(summary.sequences, "random sequence")}, ` +
    `${plural(summary.calls, "call")}: ${plural(failing.length, "difference")}` +
    (known.length ? ` (and ${known.length} known, kept as choices: docs/choices.md)` : "");
  const replay = (d) => `${invocation()} verify --reference ${opts.reference} ${d.replay}`.trim();
  const out = [head];
  for (const d of failing) {
    out.push(
      "",
      `${d.export}: ${d.case}, ${d.step}`,
      `  journal.mjs: ${d.reference.split("\n").join("\n               ")}`,
      `  addon:       ${d.addon.split("\n").join("\n               ")}`,
      ...(d.replay ? [`  replay: ${replay(d)}`] : []),
    );
  }
  if (opts.known) for (const d of known) out.push("", `known: ${d.export}: ${d.case} (${d.known})`);
  if (failing.length) {
    out.push(
      "",
      "Each difference is where the addon and this journal.mjs part. If the host changed its journal.mjs, the addon does not have that change: keep journal.mjs, or report the difference with its replay line.",
    );
  }
  const exitCode = failing.length ? 1 : 0;
  return {
    exitCode,
    text: out.join("\n"),
    json: {
      ok: exitCode === 0,
      exitCode,
      summary: { ...summary, differences: failing.length },
      differences: failing.map((d) => ({
        case: d.case,
        step: d.step,
        export: d.export,
        reference: d.reference,
        addon: d.addon,
        replay: d.replay ? replay(d) : null,
      })),
      known: known.map((d) => ({ case: d.case, export: d.export, why: d.known })),
    },
  };
}

/** The command: `verify --reference PATH` with its options, each count a whole number. */
function action(opts) {
  const count = (v, name) => {
    if (!/^\d+$/.test(v)) throw new UsageError(`--${name} takes a whole number, not ${v}`);
    return Number(v);
  };
  return verify({
    ...opts,
    seed: count(opts.seed, "seed"),
    sequences: count(opts.sequences, "sequences"),
    timeout: count(opts.timeout, "timeout"),
  });
}

module.exports = { action, verify, bases };
