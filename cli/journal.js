// The addon as the command uses it: its exports (index.js), and the two
// scans it keeps for the command (scanLines, scanTurns), which judge every
// line by the readers' own rule. The command reads no journal file by
// itself: what it reports is what the connector would see.
"use strict";

const J = require("../index.js");
// index.js has loaded the binding and set it up; this is the same module.
const native = require("../binding.js");

/** The record files, as the addon defines them (one definition, in Rust). */
const RECORD_FILES = Object.freeze(JSON.parse(native.recordFiles()));

const FILE_ENUM = {
  "inbox.jsonl": native.JournalFile.Inbox,
  "outbox.jsonl": native.JournalFile.Outbox,
  "drops.jsonl": native.JournalFile.Drops,
  "admissions.jsonl": native.JournalFile.Admissions,
  "notices.jsonl": native.JournalFile.Notices,
  "reloads.jsonl": native.JournalFile.Reloads,
};

/**
 * Every line of a record file judged: `{ size, lines, unterminated, bad:
 * [{ line, offset, length, damage, head }], badCount, nulls }`, or null
 * when there is no file. Throws the readers' refusal of the file.
 */
function scanLines(dir, name) {
  const text = native.scanLines(dir, FILE_ENUM[name]);
  return text === null ? null : JSON.parse(text);
}

/** Every turn record judged: `{ records, bad: [{ file, size, damage, refusal }], badCount }`. */
function scanTurns(dir) {
  return JSON.parse(native.scanTurns(dir));
}

/**
 * Where the owner record's process is, when the library calls it unknown:
 * its pid here if it is alive in a PID namespace below this one (a
 * connector in a container, seen from the host), else null.
 */
function ownerElsewhere(owner) {
  if (owner === null || owner.invalid || typeof owner.start !== "string" || typeof owner.boot !== "string") return null;
  return native.ownerElsewhere(owner.pid, owner.start, owner.boot);
}

/**
 * The refusal every reader of the record file `name` makes, told from its
 * scan without reading the file again, or null where it cannot be told
 * (#34: a reader reads a file whole, and a run of zeros a power loss left
 * may be gigabytes). A reader parses the lines in order and refuses the
 * first that is not JSON; before it, only a line that is JSON null (whose
 * field a reader reads) or a line past V8's longest string (more than 256
 * MiB before it) could refuse otherwise.
 */
function refusalOf(scan, name) {
  const first = scan?.bad[0];
  if (first === undefined || first.offset > 256 * 2 ** 20) return null;
  if (scan.nulls.length > 0 && scan.nulls[0] < first.line) return null;
  return `${name}:${first.line}: not valid JSON`;
}

/**
 * What `.stop.lock` is, judged by the addon under the lock guard (#34):
 * `{ state, why }`, state "absent", "left" or "unproven"; unproven, with the
 * judge's refusal as `why`, where it refused (a guard held past its wait).
 */
function stopLockState(dir) {
  try {
    return { state: native.stopLockLeft(dir), why: null };
  } catch (e) {
    return { state: "unproven", why: String(e?.message ?? e) };
  }
}

module.exports = {
  J,
  native,
  RECORD_FILES,
  scanLines,
  scanTurns,
  refusalOf,
  stopLockState,
  ownerElsewhere,
  seesEveryProcess: () => native.seesEveryProcess(),
  repairRunning: (dir) => native.repairRunning(dir),
  stopLockCause: () => native.stopLockCause(),
};
