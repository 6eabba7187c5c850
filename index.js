// discord-journal: the Discord connector's journal as a native addon.
// This file loads the binding for this platform, defines DiscordError (the
// class of every refusal), and lists every export by name, so that both
// `require("discord-journal")` and named ESM imports see all of them
// (Node finds a CommonJS module's named exports only where they are
// written out one by one).
"use strict";

const path = require("node:path");
const { platform, arch } = process;

// The process exit status a CLI should use for this refusal: 1 operation
// failed, BRAKE_EXIT (3) a brake a supervisor must not retry.
class DiscordError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.name = "DiscordError";
    this.exitCode = exitCode;
  }
}

function loadBinding() {
  const libc = platform === "linux" ? (process.report?.getReport?.().header?.glibcVersionRuntime ? "-gnu" : "-musl") : "";
  const file = `./discord-journal.${platform}-${arch}${libc}.node`;
  try {
    return require(file);
  } catch (e) {
    if (e.code !== "MODULE_NOT_FOUND") throw e;
    throw new Error(`discord-journal has no native binding for ${platform}-${arch}${libc} (${file}); build it with \`npm run build\``);
  }
}

const native = loadBinding();
native.__setup(DiscordError);

// Three pure checks of a string stay JavaScript: each costs V8 less than a
// single N-API call does (about 60 ns against 90 ns for an empty native
// call). The native side applies the same rules in src/paths.rs and
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

exports.DiscordError = DiscordError;
exports.OUTBOX_STATUS = native.OUTBOX_STATUS;
exports.BRAKE_EXIT = native.BRAKE_EXIT;
exports.RECOVER_REASON = native.RECOVER_REASON;
exports.UNLOCK_HINT = native.UNLOCK_HINT;
exports.journalLabel = journalLabel;
exports.ensureJournal = native.ensureJournal;
exports.appendInbox = native.appendInbox;
exports.readInboxIds = native.readInboxIds;
exports.appendOutbox = native.appendOutbox;
exports.readOutbox = native.readOutbox;
exports.unresolvedOutbox = native.unresolvedOutbox;
exports.appendDrop = native.appendDrop;
exports.readDrops = native.readDrops;
exports.turnPath = native.turnPath;
exports.writeTurn = native.writeTurn;
exports.readTurn = native.readTurn;
exports.listTurns = native.listTurns;
exports.utcDate = native.utcDate;
exports.appendAdmission = native.appendAdmission;
exports.countAdmissionsOn = native.countAdmissionsOn;
exports.countTurnsOn = native.countTurnsOn;
exports.stopPath = native.stopPath;
exports.stopRequested = native.stopRequested;
exports.requestStop = native.requestStop;
exports.requestProcessingStop = native.requestProcessingStop;
exports.clearProcessingStop = native.clearProcessingStop;
exports.clearStop = native.clearStop;
exports.readStop = native.readStop;
exports.lockPath = native.lockPath;
exports.ownerPath = native.ownerPath;
exports.validStart = validStart;
exports.validBoot = validBoot;
exports.processStart = native.processStart;
exports.bootId = native.bootId;
exports.identityOf = native.identityOf;
exports.readPid = native.readPid;
exports.pidAlive = native.pidAlive;
exports.ownerState = native.ownerState;
exports.ownerAlive = native.ownerAlive;
exports.writePid = native.writePid;
exports.unlock = native.unlock;
exports.recover = native.recover;
exports.stopTarget = native.stopTarget;
exports.clearPid = native.clearPid;
exports.appendReload = native.appendReload;
exports.readReloads = native.readReloads;
exports.appendNotice = native.appendNotice;
exports.noticeOn = native.noticeOn;
