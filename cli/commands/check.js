// `discord-journal check`: every line and turn record that the readers
// refuse, each with its place (line, byte offset, length), what kind of
// damage it is and its first bytes; then every reader's refusal that no bad
// line explains (a line that is JSON null, a file too large for a string),
// in the reader's own words. The verdict on each line is the addon's scan,
// the readers' own rule, and each reader is the addon's export itself, so
// check cannot disagree with the connector.
"use strict";

const { RECORD_FILES, scanLines, scanTurns, refusalOf } = require("../journal.js");
const { READERS } = require("../readers.js");
const { target } = require("../target.js");
const { survey } = require("../survey.js");
const { plural, sh, escaped, invocation } = require("../output.js");
const { status } = require("./status.js");

const SHORT = {
  cut: "cut short",
  zeros: "zero bytes",
  blank: "whitespace alone (no record)",
  torn: "torn (the last line, unterminated)",
  invalid: "corrupt",
};
/** The damage a repair sets aside, keeping its bytes: all but corruption. */
const REPAIRABLE = new Set(["cut", "zeros", "blank", "torn"]);

/** The refusal `reader` makes of `dir`, or null. */
function refusal(reader, dir) {
  try {
    reader(dir);
    return null;
  } catch (e) {
    return String(e?.message ?? e);
  }
}

/**
 * Every problem in the journal at `dir`: `{ file, message, ...where }`.
 * A file named in `outside` (a link out of the journal) shows none of its
 * bytes: its bad lines are placed, not quoted (#33).
 */
function problems(dir, outside = {}) {
  const found = [];
  for (const name of RECORD_FILES) {
    let scan;
    try {
      scan = scanLines(dir, name);
    } catch (e) {
      found.push({ file: name, message: `${name}: ${e.message}` });
      continue;
    }
    if (scan === null) continue;
    for (const b of scan.bad) {
      const shown =
        outside[name] !== undefined
          ? "(not shown: a link out of the journal)"
          : JSON.stringify(b.head) + (Buffer.byteLength(b.head) < b.length ? "…" : "");
      found.push({
        file: name,
        line: b.line,
        offset: b.offset,
        length: b.length,
        damage: b.damage,
        message: `${name}:${b.line}: not valid JSON, ${SHORT[b.damage]} (byte offset ${b.offset}, ${plural(b.length, "byte")}): ${shown}`,
      });
    }
    if (scan.badCount > scan.bad.length) {
      found.push({
        file: name,
        more: scan.badCount - scan.bad.length,
        message: `${name}: and ${scan.badCount - scan.bad.length} more bad lines`,
      });
    }
    // Where the scan tells what every reader refuses, no reader reads the file.
    if (refusalOf(scan, name) !== null) continue;
    const explained = scan.bad.length > 0 ? `${name}:${scan.bad[0].line}: not valid JSON` : null;
    for (const { name: reader, call: f } of READERS[name]) {
      const r = refusal(f, dir);
      if (r === null || r === explained) continue;
      const nul = scan.nulls.length > 0 ? ` (line ${scan.nulls[0]} is JSON null)` : "";
      found.push({ file: name, reader, message: `${name}: ${reader} refuses: ${r}${nul}`, ...(nul ? { line: scan.nulls[0] } : {}) });
    }
  }
  let turns;
  // turns/ as a link out of the journal: named by the survey, nothing below it shown.
  try {
    turns = outside.turns === undefined ? scanTurns(dir) : undefined;
  } catch (e) {
    found.push({ file: "turns", message: `turns/: ${e.message}` });
  }
  if (turns !== undefined) {
    for (const b of turns.bad) {
      const what = b.refusal ?? `not valid JSON, ${b.size === 0 ? "empty" : SHORT[b.damage]} (${plural(b.size, "byte")})`;
      found.push({ file: `turns/${b.file}`, damage: b.damage, message: `turns/${b.file}: ${what}` });
    }
    if (turns.badCount > turns.bad.length)
      found.push({
        file: "turns",
        more: turns.badCount - turns.bad.length,
        message: `turns/: and ${turns.badCount - turns.bad.length} more bad records`,
      });
    const first = turns.bad[0];
    for (const { name: reader, call: f } of READERS.turns) {
      const r = refusal(f, dir);
      // The first bad record is the one each reader names.
      if (r === null || (first && (r === first.refusal || r.endsWith(": not valid JSON")))) continue;
      // A record that is JSON null is what a reader reading its field refuses: named, as a line is.
      const nul = turns.nulls.length > 0 && / of null /.test(r) ? turns.nulls[0] : null;
      if (nul !== null)
        found.push({ file: `turns/${nul}`, reader, message: `turns/${nul}: ${reader} refuses: ${r} (the record is JSON null)` });
      else found.push({ file: "turns", reader, message: `turns/: ${reader} refuses: ${r}` });
    }
  }
  for (const { name: reader, call: f } of READERS.STOP) {
    const r = refusal(f, dir);
    if (r !== null) found.push({ file: "STOP", reader, message: `STOP: ${reader} refuses: ${r}` });
  }
  return found;
}

/**
 * The command's outcome for the journal `t` (target.reach): the links out
 * of the journal named first, then what the readers refuse.
 */
function check(t) {
  const { dir } = t;
  const seen = survey(t);
  const links = seen.problems.filter((p) => p.link).map((p) => ({ file: "links", message: p.what, fix: p.fix }));
  // A record file with another name reads, but reads whatever else holds that name appends (#45).
  const shared = seen.problems.filter((p) => p.shared).map((p) => ({ file: p.file, message: p.what, fix: p.fix }));
  const found = [...links, ...shared, ...problems(t.at, seen.outside)];
  const lines = found.map((p) => p.message);
  if (found.length === 0) lines.push("every record file and turn record reads");
  else {
    // The lines past those named count each (#34: 3,000 bad lines were "1001 problems").
    lines.push(
      plural(
        found.reduce((n, p) => n + (p.more ?? 1), 0),
        "problem",
      ),
    );
    const repairs = found.some((p) => REPAIRABLE.has(p.damage));
    if (repairs) {
      lines.push(
        `fix: \`${invocation()} repair ${sh(dir)} --apply\` sets aside what a crash left (cut short, zero bytes) and lines of whitespace alone, keeping their bytes`,
      );
    }
    if (found.some((p) => p.damage === "invalid"))
      lines.push("fix: move each corrupt line out by hand, keeping its bytes; a repair never changes corruption");
    for (const l of [...links, ...shared]) lines.push(`fix: ${l.fix}`);
    // The rest of the fixes, as status gives them for the same problems
    // (#45): a file no read gets through, a turn record that is a FIFO.
    const told = new Set(lines);
    for (const p of status(t).verdict.problems) {
      const line = `fix: ${p.fix}`;
      // A repair given above does the rest of its kind too (a temporary file, .stop.lock).
      const own = p.fix.startsWith(`\`${invocation()} check `) || (repairs && p.fix.startsWith(`\`${invocation()} repair `));
      if (!told.has(line) && !own && !p.fix.startsWith("corruption is never changed")) {
        told.add(line);
        lines.push(line);
      }
    }
  }
  if (t.link) lines.unshift(`the journal's directory, ${dir}, is a symbolic link to ${t.link.to}`);
  const exitCode = found.length ? 1 : 0;
  return {
    exitCode,
    text: lines.map(escaped).join("\n"),
    json: { ok: exitCode === 0, exitCode, problems: found, ...(t.link ? { journalLink: t.link.to } : {}) },
  };
}

/** Each refusal the readers of `file` ("turns" for the turn records) make of `dir`: `[reader, message]`. */
function refusals(dir, file) {
  return READERS[file].map(({ name: reader, call }) => [reader, refusal(call, dir)]).filter(([, r]) => r !== null);
}

/** The command: `check [dir]` with its options. */
function action(dir, opts) {
  return check(target(dir, opts, "check"));
}

module.exports = { action, check, problems, refusals };
