// discord-journal: the Discord connector's journal as a native addon.
// This file loads the binding for this platform, defines DiscordError (the
// class of every refusal), and lists every export by name, so that both
// `require("discord-journal")` and named ESM imports see all of them
// (Node finds a CommonJS module's named exports only where they are
// written out one by one).
"use strict";

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

exports.DiscordError = DiscordError;
exports.OUTBOX_STATUS = native.OUTBOX_STATUS;
exports.BRAKE_EXIT = native.BRAKE_EXIT;
exports.RECOVER_REASON = native.RECOVER_REASON;
exports.UNLOCK_HINT = native.UNLOCK_HINT;
exports.journalLabel = native.journalLabel;
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
exports.validStart = native.validStart;
exports.validBoot = native.validBoot;
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
