// The addon as the command uses it: its exports (index.js), and what it
// keeps for the command alone, through the package's one internal entry
// (internal.js): the two scans (scanLines, scanTurns), which judge every
// line by the readers' own rule, the repair, and the lock's judges. The
// command reads no journal file by itself: what it reports is what the
// connector would see.
"use strict";

const path = require("node:path");
const J = require("../index.js");
// What the command needs beyond the public exports: the package's one
// internal entry (internal.js), never the binding itself.
const internal = require("../internal.js");

/**
 * Where the owner record's process is, when the library calls it unknown:
 * its pid here if it is alive in a PID namespace below this one (a
 * connector in a container, seen from the host), else null.
 */
function ownerElsewhere(owner) {
  if (owner === null || owner.invalid || typeof owner.start !== "string" || typeof owner.boot !== "string") return null;
  return internal.ownerElsewhere(owner.pid, owner.start, owner.boot);
}

/**
 * The refusal every reader of the record file `name` makes, told from its
 * scan without reading it again (#34: zeros a power loss left may be
 * gigabytes), or null: readers refuse the first line that is not JSON,
 * unless a line of JSON null or past V8's longest string (256 MiB) is first.
 */
function refusalOf(scan, name) {
  const first = scan?.bad[0];
  if (first === undefined || first.offset > 256 * 2 ** 20) return null;
  if (scan.nulls.length > 0 && scan.nulls[0] < first.line) return null;
  return `${name}:${first.line}: not valid JSON`;
}

/** The journal's entries besides the record files, as src/ground/journal.rs names them (a test holds the two together). */
const ENTRY = Object.freeze({ lock: "run.lock", owner: "owner.json", turns: "turns", stop: "STOP", stopLock: ".stop.lock" });
/** What only a journal holds: one of these makes a directory a journal. */
const JOURNAL_ENTRIES = new Set([...internal.RECORD_FILES, ENTRY.turns, ENTRY.stop, ENTRY.lock, ENTRY.stopLock]);

/** Whether `name` is a binding's name by index.js's rule, its one copy: journalLabel names a journal by it. */
const isBindingName = (name) => path.basename(name) === name && J.journalLabel(name) === `discord/${name} under the data root`;

/**
 * What `.stop.lock` is, judged by the addon's STOP mark, never waiting
 * (#34, #44): `{ state, why }`, state "absent", "held" (a live update is
 * inside), "left" or "unproven"; unproven, with the judge's refusal as
 * `why`, where it refused.
 */
function stopLockState(dir) {
  try {
    return { state: internal.stopLockLeft(dir), why: null };
  } catch (e) {
    return { state: "unproven", why: String(e?.message ?? e) };
  }
}

module.exports = {
  J,
  RECORD_FILES: internal.RECORD_FILES,
  ENTRY,
  JOURNAL_ENTRIES,
  isBindingName,
  scanLines: internal.scanLines,
  scanTurns: internal.scanTurns,
  repair: internal.repair,
  refusalOf,
  stopLockState,
  ownerElsewhere,
  seesEveryProcess: internal.seesEveryProcess,
  repairRunning: internal.repairRunning,
  holders: internal.holders,
  processOf: internal.processOf,
  unguarded: internal.unguarded,
  stopLockCause: internal.stopLockCause,
  outboxMark: internal.outboxMark,
  appendOutcome: internal.appendOutcome,
};
