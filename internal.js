// discord-journal's one internal entry: what the command (bin/, cli/) needs
// of the binding beyond the public exports (index.js), and nothing else.
// Not part of the API: package.json's "exports" does not name it, so
// `require("discord-journal/internal.js")` is refused outside the package;
// it ships (in "files") for the command alone, which reaches the library
// through index.js and this file only. Each function is the binding's
// export in JavaScript's terms (parsed JSON, a file's name for its enum).
"use strict";

// index.js loads the binding and sets it up (`__setup`) before any call;
// the binding is the same module here.
require("./index.js");
const native = require("./binding.js");

/** The record files, as the addon defines them (one definition, in Rust). */
const RECORD_FILES = Object.freeze(JSON.parse(native.recordFiles()));

// A record file's number in the addon's JournalFile is its place in
// RECORD_FILES: both are made from one table in the addon (src/lines.rs).
const FILE_ENUM = Object.freeze(Object.fromEntries(RECORD_FILES.map((name, i) => [name, i])));

/**
 * Every line of a record file judged by the readers' own rule: `{ size,
 * lines, unterminated, bad: [{ line, offset, length, damage, head }],
 * badCount, nulls }`, or null when there is no file. Throws the readers'
 * refusal of the file.
 */
function scanLines(dir, name) {
  const text = native.scanLines(dir, FILE_ENUM[name]);
  return text === null ? null : JSON.parse(text);
}

/** Every turn record judged: `{ records, bad: [{ file, size, damage, refusal }], badCount }`. */
function scanTurns(dir) {
  return JSON.parse(native.scanTurns(dir));
}

/** The repair of the journal at `dir` (`src/operator/repair/`), carried out with `apply`: its plan or result. */
function repair(dir, apply) {
  return JSON.parse(native.repair(dir, apply));
}

module.exports = {
  RECORD_FILES,
  scanLines,
  scanTurns,
  repair,
  /** What `.stop.lock` is, judged by the STOP mark without waiting: "absent", "held" (a live update is inside), "left" (proved left by an update that died) or "unproven". */
  stopLockLeft: (dir) => native.stopLockLeft(dir),
  /** Why the last STOP update of this thread was refused as "locked": its `.stop.lock` mkdir's errno name ("EEXIST" where another update holds it), or null. */
  stopLockCause: () => native.stopLockCause(),
  /** Who holds what another operation would wait for (#44): `{ guard, lock, stopLock }`, each `{ pid, state, command, stalled, is, fix, busy, cpu }` or null, and `records` by file name; `before`, an earlier answer's JSON text, settles each against it (#64). */
  holders: (dir, before) => JSON.parse(native.holders(dir, before ?? null)),
  /** The process `pid` as the kernel shows it (#45): `{ pid, state, command, stalled, is, fix, parent }`, `parent` `{ pid, command }` or null; null where none is visible. */
  processOf: (pid) => {
    const text = native.processOf(pid);
    return text === null ? null : JSON.parse(text);
  },
  /** Why the journal's lock guard cannot be had here (a file system without flock, turns/ unreadable), or null. */
  unguarded: (dir) => native.unguarded(dir),
  /** An owner record's process alive in a PID namespace below this one: its pid here, or null. */
  ownerElsewhere: (pid, start, boot) => native.ownerElsewhere(pid, start, boot),
  /** Whether this process sees every process of the machine (an owner it cannot see may be alive where it cannot look). */
  seesEveryProcess: () => native.seesEveryProcess(),
  /** Where outbox.jsonl ends now (`"dev:ino:size"`, opaque), or null: resolve's mark before its read. */
  outboxMark: (dir) => native.outboxMark(dir),
  /** resolve's append (#64): the outcome line, unless a line appended since `mark` gave `nonce` an outcome: that status then, nothing written; undefined where written. */
  appendOutcome: (dir, nonce, line, mark) => {
    const found = native.appendOutcome(dir, nonce, line, mark);
    return found === null ? undefined : JSON.parse(found);
  },
  /** The exports this package has and journal.mjs has not (the class of its refusals, which a host's errors.mjs re-exports): the one list, which verify and the suites read. */
  OWN_EXPORTS: Object.freeze(["DiscordError"]),
  /** Whether a repair holds the binding at `dir` (run.lock flocked by one). */
  repairRunning: (dir) => native.repairRunning(dir),
};
