// Which journal a command works on (DIR, or --binding under --data-root),
// checked before anything else (`reach`, cli/reach.js), so that no answer is
// built on what it could not see:
//
// 1. the directory exists and is a directory (else a usage mistake, exit 2);
// 2. this user can list and search it, and write in it for a command that
//    writes (else exit 1, naming the path, the error, who owns it and who
//    runs the command, and the command to run instead): the library answers
//    "no STOP", "no lock" for a journal it cannot search, as journal.mjs does;
// 3. it is a journal: empty (a binding that has not run yet), or holding
//    turns/, a record file, STOP or run.lock (else exit 2): a data root or
//    /etc is not a binding to brake or recover.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { UsageError, sh, word, invocation } = require("./output.js");
const { J, JOURNAL_ENTRIES, isBindingName } = require("./journal.js");
const { reach } = require("./reach.js");

/** The journal directory a command names: DIR, or ROOT/discord/NAME. */
function journalDir(dir, opts, command) {
  if (dir !== undefined && opts.binding !== undefined) throw new UsageError("give either DIR or --binding NAME, not both");
  if (dir !== undefined) return hereStill(dir, command);
  if (opts.binding === undefined) {
    throw new UsageError(
      `which journal? give its directory (${invocation()} ${command} data/discord/NAME) or --binding NAME (with --data-root ROOT, default ./data)`,
    );
  }
  if (!isBindingName(opts.binding)) {
    throw new UsageError(
      `--binding ${word(opts.binding)} is not a binding name (lowercase letters, digits, _ and -, starting with a letter or digit, at most 63)`,
    );
  }
  return hereStill(path.join(opts.dataRoot, "discord", opts.binding), command);
}

/**
 * `p`, where it leads somewhere: a relative path from a working directory
 * that was deleted leads nowhere (Node's `uv_cwd` ENOENT at the first
 * resolve), which is a usage mistake, said as such.
 */
function hereStill(p, command) {
  if (path.isAbsolute(p)) return p;
  try {
    process.cwd();
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
    throw new UsageError(
      `the working directory is gone (it was deleted), so the relative path ${sh(p)} leads nowhere; nothing was read or changed. ` +
        `Give the journal's absolute path instead (${invocation()} ${command} ${sh(`/path/to/${p.replace(/^(\.\/)+/, "")}`)}), or cd to a directory that exists first`,
    );
  }
  return p;
}

/**
 * The journal a command names (`journalDir`), checked (`reach`). Run as
 * root, the command becomes its user there (#33), every module loaded
 * already. `acting`: what it did as another user before (`stop --init`),
 * said on stderr. `args`: its words after the journal, so that a
 * refusal's command runs it again whole.
 */
function target(dir, opts, command, { write = false, acting = null, args = [] } = {}) {
  const d = journalDir(dir, opts, command);
  const flags = [opts.apply === true && "--apply", opts.missingOk === true && "--missing-ok"].filter(Boolean);
  const t = reach(d, { command, write, argv: ["discord-journal", command, d, ...flags, ...args] });
  t.acting ??= acting;
  if (t.acting && !opts.json) console.error(`discord-journal: ${t.acting}`);
  return t;
}

/**
 * Whether the directory `dir` holds what only a journal holds; false where
 * it cannot be listed. Listed once a run: the fleet names every binding
 * through the same parents (a data root's, /tmp's hundreds of entries).
 */
const listed = new Map();
function holdsJournal(dir) {
  if (!listed.has(dir)) {
    let holds = false;
    try {
      holds = fs.readdirSync(dir).some((n) => JOURNAL_ENTRIES.has(n));
    } catch {
      // Not listed: no journal found there.
    }
    listed.set(dir, holds);
  }
  return listed.get(dir);
}

/**
 * How the command names the journal `t` (from `reach`): the library's
 * `journalLabel`, but for a journal nested inside another, which is no
 * data root's discord/NAME: by where it lies in that one (#45).
 */
function journalName(t) {
  const abs = t.abs ?? path.resolve(t.dir);
  let up = abs;
  while (path.dirname(up) !== up) {
    up = path.dirname(up);
    if (holdsJournal(up)) return `the journal ${path.relative(up, abs)} inside ${journalName({ abs: up, at: up })}`;
  }
  return J.journalLabel(t.at);
}

/**
 * With --missing-ok, a journal directory that does not exist yet (a
 * binding that has not run: a service unit's first start) is nothing to do,
 * where it would otherwise be a usage mistake. Only under a binding's name.
 */
function notYet(dir, opts, command) {
  if (!opts.missingOk) return false;
  const d = journalDir(dir, opts, command);
  if (!isBindingName(path.basename(d))) return false;
  // Only a definite "not there": a path this user cannot search is refused as such below.
  try {
    fs.statSync(d);
    return false;
  } catch (e) {
    return e.code === "ENOENT";
  }
}

module.exports = { journalDir, hereStill, journalName, target, notYet, reach };
