// `discord-journal repair`: what a repair would set aside, changing nothing;
// with --apply, the repair itself (src/operator/repair/): cut lines, zero
// runs, lines of whitespace alone and empty or cut turn records set aside
// into quarantine files in the journal, every whole record kept byte for
// byte, and a record file with another name (a hard link) made a file of
// its own, while the binding is held so that no connector starts
// meanwhile. Corruption is named and changes nothing.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { repair: repaired } = require("../journal.js");
const { refusals } = require("./check.js");
const { target, notYet } = require("../target.js");
const { nullFound } = require("../survey.js");
const { plural, sh, escaped, invocation } = require("../output.js");
const { unguardedNote } = require("../brake.js");

const WHAT = {
  cut: "cut short",
  zeros: "zero bytes",
  blank: "whitespace alone",
  torn: "torn (the last line, unterminated and not JSON)",
};

/** `line 3 cut short, line 9 zero bytes`. */
const lines = (aside) => aside.map((a) => `line ${a.line} ${WHAT[a.damage]}`).join(", ");

/** What a repair said of `.stop.lock` (#34), or null. */
function stopLockLine(r, d) {
  if (r.stopLock === "left" && r.applied !== false)
    return ".stop.lock, left by a STOP update that did not finish (none ran: each holds the lock guard while it exists), was removed";
  if (r.stopLock === "left")
    return `.stop.lock was left by a STOP update that did not finish: \`${invocation()} repair ${d} --apply\` removes it`;
  if (r.stopLock === "unproven")
    return `.stop.lock is present, and whether a STOP update is still inside cannot be proved here (no lock guard): the repair leaves it; \`${invocation()} status ${d}\` says what to do`;
  return null;
}

/** A dead owner's lock the repair cleared to hold the binding itself. */
const tookOver = (r) => `run.lock of pid ${r.tookOver}, which is gone, was cleared to hold the binding during the repair`;

/** Whether the journal's `file` is a symbolic link: none of its bytes are shown (#33). */
function linked(at, file) {
  try {
    return fs.lstatSync(path.join(at, file)).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * What a repair leaves that a reader refuses (#34): a line or turn record
 * that is JSON null is whole JSON, so no repair changes it, but a reader
 * that reads a field of each refuses it. Each such file once, in the
 * reader's own words, with what a person does.
 */
function nullsLeft(t, plan) {
  const said = [];
  const files = new Set(plan.nulls.map((n) => (n.file.startsWith("turns/") ? "turns" : n.file)));
  for (const file of files) {
    const refused = refusals(t.at, file).find(([, r]) => / of null /.test(r));
    if (refused === undefined) continue;
    const n = plan.nulls.find((x) => (file === "turns" ? x.file.startsWith("turns/") : x.file === file));
    const [reader, r] = refused;
    const { what, mv } = nullFound(t, file, file === "turns" ? n.file.slice("turns/".length) : n.line, reader, r);
    said.push(
      mv
        ? `${what}: ${mv} moves it out of turns/, keeping its bytes`
        : `${what}: move it out of the file by hand, keeping its bytes (\`${invocation()} check ${sh(t.dir)}\` gives its place)`,
    );
  }
  if (said.length > 0) said.push("a repair never changes a line or record that is whole JSON");
  return said;
}

/** The repair of the journal `t` (target.reach): `dir` shown, `at` worked through. */
function repair(t, apply) {
  const { dir, at } = t;
  const r = repaired(at, apply);
  const plan = r.plan;
  const d = sh(dir);
  if (plan.corrupt.length > 0) {
    for (const c of plan.corrupt) if (linked(at, c.file)) delete c.head;
    const out = plan.corrupt.map(
      (c) =>
        `${c.file}:${c.line}: corrupt (byte offset ${c.offset}, ${plural(c.length, "byte")}): ${c.head === undefined ? `(not shown: ${c.file} is a symbolic link)` : `${JSON.stringify(c.head)}${Buffer.byteLength(c.head) < c.length ? "…" : ""}`}`,
    );
    // A dead owner's lock cleared to hold the binding is a change all the same (#34).
    if (r.tookOver) out.push(tookOver(r));
    const lockLine = stopLockLine({ ...r, applied: apply }, d);
    if (lockLine) out.push(lockLine);
    out.push(
      `${r.tookOver || (apply && r.stopLock === "left") ? "no file was changed" : "nothing was changed"}: ${plural(plan.corrupt.length, "line is", "lines are")} not an interrupted append (no more bytes could make ${plan.corrupt.length === 1 ? "it" : "them"} JSON), and a repair never changes corruption.`,
      `Look at ${plan.corrupt.length === 1 ? "it" : "each"} (\`sed -n '${plan.corrupt[0].line}p' ${sh(path.join(dir, plan.corrupt[0].file))}\`), move it out of the file by hand, keeping its bytes, then run \`${invocation()} repair ${d} --apply\` again for the rest`,
    );
    const e = new Error(out.map(escaped).join("\n"));
    e.exitCode = 1;
    e.json = { ok: false, exitCode: 1, error: "corruption", ...r };
    throw e;
  }
  const changed = plan.files.filter((f) => f.mend !== "none");
  // Removed with --apply before the binding was held; without, still to do.
  const lockLine = stopLockLine({ ...r, applied: apply }, d);
  if (changed.length === 0 && plan.turns.length === 0) {
    const cleaned = r.cleaned.length ? ` (removed ${plural(r.cleaned.length, "temporary file")} an interrupted repair left)` : "";
    const left = nullsLeft(t, plan);
    const text = [`nothing to repair${cleaned}`, ...(lockLine ? [lockLine] : []), ...(r.tookOver ? [tookOver(r)] : []), ...left];
    const exitCode = (!apply && r.stopLock === "left") || left.length > 0 ? 1 : 0;
    return { exitCode, text: text.map(escaped).join("\n"), json: { ok: exitCode === 0, exitCode, ...r } };
  }
  const where = (file) => r.done.find((x) => x.file === file)?.quarantine;
  const out = [];
  for (const f of changed) {
    const parts = [`${f.file}: ${plural(f.kept, "record")} kept`];
    if (f.aside.length) {
      const q = where(f.file);
      parts.push(`${plural(f.aside.length, "line")} (${plural(f.asideBytes, "byte")}) set aside${q ? ` in ${q}` : ""}: ${lines(f.aside)}`);
    }
    if (f.terminate) parts.push("the last line's missing newline added");
    if (f.shared) parts.push("written anew as a file of its own (it had another name, a hard link, which keeps the old file)");
    out.push(parts.join("; "));
  }
  for (const t of plan.turns) {
    const q = where(t.file);
    // A whole record followed by zeros keeps its record: only the zeros move.
    if (t.kept !== null && t.kept !== undefined)
      out.push(
        `${t.file}: the record kept (${plural(t.kept, "byte")}); the ${plural(t.bytes - t.kept, "zero byte")} after it set aside${q ? ` as ${q}` : ""}`,
      );
    else out.push(`${t.file}: ${t.bytes === 0 ? "empty" : WHAT[t.damage]}, set aside whole${q ? ` as ${q}` : ""}`);
  }
  if (lockLine) out.push(lockLine);
  const left = nullsLeft(t, plan);
  if (!r.applied) {
    out.push(...left);
    out.push(
      `nothing was changed: \`${invocation()} repair ${d} --apply\` does this, keeping every byte it sets aside in the journal directory`,
    );
    return { exitCode: 1, text: out.map(escaped).join("\n"), json: { ok: false, exitCode: 1, ...r } };
  }
  if (r.tookOver) out.push(tookOver(r));
  // Appends of this package wait for the repair (the record file's flock,
  // #31); journal.mjs's take no lock, so one racing the repair is beyond it.
  out.push(
    "repaired: every whole record kept, the parts set aside kept in the journal directory (appends by this package wait for a repair; one by journal.mjs meanwhile, in a mixed deployment, is beyond its reach)",
    ...left,
  );
  const exitCode = left.length > 0 ? 1 : 0;
  const note = unguardedNote(t);
  if (note !== null) out.push(note);
  return {
    exitCode,
    text: out.map(escaped).join("\n"),
    json: { ok: exitCode === 0, exitCode, ...r, ...(note === null ? {} : { unguarded: note }) },
  };
}

/** The command: `repair [dir]` with its options; --apply carries it out. */
function action(dir, opts) {
  if (notYet(dir, opts, "repair")) return { text: "nothing to repair", json: { ok: true, exitCode: 0, applied: false } };
  return repair(target(dir, opts, "repair", { write: opts.apply === true }), opts.apply === true);
}

module.exports = { action, repair };
