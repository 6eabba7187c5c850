// discord-journal: the Discord connector's journal as a native addon.
// This file loads the binding for this platform (binding.js), defines
// DiscordError (the class of every refusal), and lists every export by
// name, so that both `require("discord-journal")` and named ESM imports see all of them
// (Node finds a CommonJS module's named exports only where they are
// written out one by one). Its `exports.name = ...` lines are the one
// definition of the package's exports: entry.js, index.d.ts, the README's
// API table and the tests are checked against them
// (__test__/exports.test.mjs).
"use strict";

const fs = require("node:fs");
const path = require("node:path");

// The process exit status a CLI should use for this refusal: 1 operation
// failed, BRAKE_EXIT (3) a brake a supervisor must not retry.
class DiscordError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.name = "DiscordError";
    this.exitCode = exitCode;
  }
}

// The binary, loaded by binding.js (#11).
const native = require("./binding.js");
// Raised by the binding when a call finds that JavaScript can no longer run
// (a terminated Worker); see `returned`.
const ENDED = new Uint8Array(1);

// Two steps of the native readers and writers that are JavaScript's own,
// taken with the built-ins of load time, as the binding takes every
// built-in (a later monkey-patch of JSON or Map does not reach them).
// `{...record, id}` has no N-API equivalent: defining the properties one
// by one would run Object.prototype's __proto__ setter and order getters'
// results differently; the spread and its stringify are one call per turn
// record. readOutbox's Map is filled from [key, value, key, value, ...],
// with no array per entry (#10), through `set` looked up on each call as
// journal.mjs's `byNonce.set` is.
const stringify = JSON.stringify;
function stringifyTurn(record, id) {
  return stringify({ ...record, id }, null, 2);
}
function mapOfPairs(Map, flat) {
  const m = new Map();
  for (let i = 0; i < flat.length; i += 2) m.set(flat[i], flat[i + 1]);
  return m;
}
native.__setup(DiscordError, path.join, ENDED, stringifyTurn, mapOfPairs);

// Every native export is called through a function of its own, whose
// `length` is journal.mjs's (a parameter with a default does not count)
// and whose result passes `returned`. A terminated Worker stops where its
// JavaScript next enters a function; a loop that calls only native
// functions enters none for thousands of iterations. Once a native call has
// found the thread terminated (it then does nothing more and returns),
// `halt`, never called before and so never inlined, is entered and the
// thread stops there, as it would in journal.mjs's own functions (#10).
function halt() {}
function returned(r) {
  if (ENDED[0] !== 0) halt();
  return r;
}

// Three pure checks of a string stay JavaScript: each costs V8 less than a
// single N-API call does (about 60 ns against 90 ns for an empty native
// call). The native side applies the same rules in src/ground/paths.rs and
// src/identity.rs; the parity check holds the two together.
const BINDING_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const START = /^[1-9][0-9]{0,19}$/;
const BOOT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function journalLabel(dir) {
  const name = path.basename(String(dir));
  return BINDING_NAME.test(name) ? `discord/${name} under the data root` : "the binding's journal directory";
}

function validStart(v) {
  return typeof v === "string" && START.test(v) && BigInt(v) <= 0xffffffffffffffffn;
}

function validBoot(v) {
  return typeof v === "string" && BOOT.test(v);
}

// The path exports are pure functions of their arguments, and V8 runs
// path.join faster than an N-API call can take a string in and hand one
// back (#14). For a string dir (and id) each keeps its last answer: the
// connector asks for one binding's paths over and over. Anything else goes
// through path.join as in journal.mjs, which refuses a dir that is not a
// string with Node's own TypeError.
const TURN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const last = { stop: [null, ""], lock: [null, ""], owner: [null, ""], turn: [null, null, ""] };
const STOP = ["STOP"];
const LOCK = ["run.lock"];
const OWNER = ["run.lock", "owner.json"];

/** `path.join(dir, ...tail)`, kept in `m` for the last string `dir`. */
function joined(m, dir, tail) {
  if (typeof dir !== "string") return path.join(dir, ...tail);
  if (m[0] !== dir) {
    m[1] = path.join(dir, ...tail);
    m[0] = dir;
  }
  return m[1];
}

function stopPath(dir) {
  return joined(last.stop, dir, STOP);
}

function lockPath(dir) {
  return joined(last.lock, dir, LOCK);
}

function ownerPath(dir) {
  return joined(last.owner, dir, OWNER);
}

function turnPath(dir, id) {
  const m = last.turn;
  if (typeof dir === "string" && typeof id === "string" && m[0] === dir && m[1] === id) return m[2];
  if (!TURN_ID.test(String(id))) throw new DiscordError("invalid turn id (letters, digits, ., _ or -, at most 128)", 1);
  const p = path.join(dir, "turns", `${id}.json`);
  if (typeof dir === "string" && typeof id === "string") {
    m[0] = dir;
    m[1] = id;
    m[2] = p;
  }
  return p;
}

// The append exports check their entry and stringify it here: a property
// read or a JSON.stringify costs V8 nanoseconds and costs far more through
// N-API, and a refusal for an odd entry (a getter, null, a function) is
// then V8's own, as in journal.mjs. The order is the reference's: the
// entry's checks, then join(dir, name) (a non-string dir is refused before
// the entry is stringified), then JSON.stringify. The write is
// src/lines.rs, through `appendLine` in src/js/records.rs, which names its
// files by the enum it exports (`JournalFile`): the one definition.
const { Inbox: INBOX, Outbox: OUTBOX, Drops: DROPS, Admissions: ADMISSIONS, Notices: NOTICES, Reloads: RELOADS } = native.JournalFile;
// The outbox's statuses likewise: the addon's OUTBOX_STATUS (src/records.rs),
// taken apart once here so the check stays four comparisons.
const [INTENT, CONFIRMED, REFUSED, UNKNOWN] = native.OUTBOX_STATUS;
const STATUSES = native.OUTBOX_STATUS.join(", ");

function appendEntry(dir, file, entry) {
  if (typeof dir !== "string") returned(native.appendLine(dir, file));
  returned(native.appendLine(dir, file, JSON.stringify(entry)));
}

function appendInbox(dir, entry) {
  if (typeof entry.id !== "string" || entry.id.length === 0) throw new DiscordError("inbox entry needs a message id", 1);
  appendEntry(dir, INBOX, entry);
}

function appendOutbox(dir, entry) {
  const status = entry.status;
  if (status !== INTENT && status !== CONFIRMED && status !== REFUSED && status !== UNKNOWN) {
    throw new DiscordError(`outbox status must be one of ${STATUSES}`, 1);
  }
  if (typeof entry.nonce !== "string" || entry.nonce.length === 0) throw new DiscordError("outbox entry needs a nonce", 1);
  appendEntry(dir, OUTBOX, entry);
}

function appendDrop(dir, entry) {
  appendEntry(dir, DROPS, entry);
}

function appendAdmission(dir, entry) {
  if (typeof entry.id !== "string" || typeof entry.at !== "string") throw new DiscordError("admission needs id and at", 1);
  appendEntry(dir, ADMISSIONS, entry);
}

function appendNotice(dir, entry) {
  if (typeof entry.kind !== "string" || typeof entry.date !== "string") throw new DiscordError("notice needs kind and date", 1);
  appendEntry(dir, NOTICES, entry);
}

function appendReload(dir, entry) {
  const outcome = entry.outcome;
  if (outcome !== "applied" && outcome !== "refused") throw new DiscordError("reload entry needs an outcome", 1);
  appendEntry(dir, RELOADS, entry);
}

exports.DiscordError = DiscordError;
exports.OUTBOX_STATUS = native.OUTBOX_STATUS;
exports.BRAKE_EXIT = native.BRAKE_EXIT;
exports.RECOVER_REASON = native.RECOVER_REASON;
exports.UNLOCK_HINT = native.UNLOCK_HINT;
exports.journalLabel = journalLabel;
exports.ensureJournal = function ensureJournal(dir) {
  try {
    return returned(native.ensureJournal(dir));
  } catch (e) {
    // A failed mkdir, or a path with a NUL byte, is made again by the
    // runtime's own mkdirSync, whose error (or success, where the directory
    // appeared meanwhile) is what journal.mjs gives there: on Node a failed
    // mkdir's error is the native error's twin, and a NUL byte is refused in
    // words of Node's own (the `Received` part is util.inspect's); Bun and
    // Deno order an error's keys their own way, and Bun answers a dangling
    // link at turns/ EEXIST where Node says ENOENT (#24).
    if (!(e instanceof Error) || (e.syscall !== "mkdir" && e.code !== "ERR_INVALID_ARG_VALUE")) throw e;
    // Where the runtime's recursive mkdirSync would never return (a relative
    // path under a removed working directory, a path under /proc: it retries
    // a mkdir that keeps failing ENOENT), the failing mkdir's error is the
    // answer (#35).
    if (e.syscall === "mkdir" && native.mkdirSpun()) throw e;
    fs.mkdirSync(path.join(dir, "turns"), { recursive: true, mode: 0o700 });
    return dir;
  }
};
exports.appendInbox = appendInbox;
exports.readInboxIds = function readInboxIds(dir) {
  return returned(native.readInboxIds(dir));
};
exports.appendOutbox = appendOutbox;
exports.readOutbox = function readOutbox(dir) {
  return returned(native.readOutbox(dir));
};
exports.unresolvedOutbox = function unresolvedOutbox(dir) {
  return returned(native.unresolvedOutbox(dir));
};
exports.appendDrop = appendDrop;
exports.readDrops = function readDrops(dir) {
  return returned(native.readDrops(dir));
};
exports.turnPath = turnPath;
exports.writeTurn = function writeTurn(dir, id, record) {
  return returned(native.writeTurn(dir, id, record));
};
exports.readTurn = function readTurn(dir, id) {
  return returned(native.readTurn(dir, id));
};
exports.listTurns = function listTurns(dir) {
  return returned(native.listTurns(dir));
};
exports.utcDate = function utcDate(now) {
  return returned(native.utcDate(now));
};
exports.appendAdmission = appendAdmission;
exports.countAdmissionsOn = function countAdmissionsOn(dir, date) {
  return returned(native.countAdmissionsOn(dir, date));
};
exports.countTurnsOn = function countTurnsOn(dir, date) {
  return returned(native.countTurnsOn(dir, date));
};
exports.stopPath = stopPath;
exports.stopRequested = function stopRequested(dir) {
  return returned(native.stopRequested(dir));
};
exports.requestStop = function requestStop(dir, reason = undefined) {
  return returned(native.requestStop(dir, reason));
};
exports.requestProcessingStop = function requestProcessingStop(dir, generation) {
  return returned(native.requestProcessingStop(dir, generation));
};
exports.clearProcessingStop = function clearProcessingStop(dir, generation) {
  return returned(native.clearProcessingStop(dir, generation));
};
exports.clearStop = function clearStop(dir) {
  return returned(native.clearStop(dir));
};
exports.readStop = function readStop(dir) {
  return returned(native.readStop(dir));
};
exports.lockPath = lockPath;
exports.ownerPath = ownerPath;
exports.validStart = validStart;
exports.validBoot = validBoot;
exports.processStart = function processStart(pid) {
  return returned(native.processStart(pid));
};
exports.bootId = function bootId() {
  return returned(native.bootId());
};
exports.identityOf = function identityOf(pid) {
  return returned(native.identityOf(pid));
};
exports.readPid = function readPid(dir) {
  return returned(native.readPid(dir));
};
exports.pidAlive = function pidAlive(pid) {
  return returned(native.pidAlive(pid));
};
exports.ownerState = function ownerState(rec, opts = undefined) {
  return returned(native.ownerState(rec, opts));
};
exports.ownerAlive = function ownerAlive(rec, opts) {
  return returned(native.ownerAlive(rec, opts));
};
exports.writePid = function writePid(dir, pid, opts = undefined) {
  return returned(native.writePid(dir, pid, opts));
};
exports.unlock = function unlock(dir, opts = undefined) {
  return returned(native.unlock(dir, opts));
};
exports.recover = function recover(dir, opts = undefined) {
  return returned(native.recover(dir, opts));
};
exports.stopTarget = function stopTarget(dir, opts) {
  return returned(native.stopTarget(dir, opts));
};
exports.clearPid = function clearPid(dir, pid) {
  return returned(native.clearPid(dir, pid));
};
exports.appendReload = appendReload;
exports.readReloads = function readReloads(dir) {
  return returned(native.readReloads(dir));
};
exports.appendNotice = appendNotice;
exports.noticeOn = function noticeOn(dir, kind, date) {
  return returned(native.noticeOn(dir, kind, date));
};
