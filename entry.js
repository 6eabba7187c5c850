// The package's entry (#11): every export of index.js by name, and nothing
// else. Node reads the whole source of a CommonJS module that an ES module
// imports, for its export names (cjs-module-lexer), before running it; on
// Node 20 that read of index.js cost about 4 ms of a 16 ms import, and of
// this file almost nothing. index.js is loaded once, so DiscordError is one
// class for `require` and `import` alike. The names are index.js's, the one
// list of exports, in its order; __test__/loader.test.mjs and
// __test__/exports.test.mjs fail if this list drifts from it.
"use strict";

const J = require("./index.js");

exports.DiscordError = J.DiscordError;
exports.OUTBOX_STATUS = J.OUTBOX_STATUS;
exports.BRAKE_EXIT = J.BRAKE_EXIT;
exports.RECOVER_REASON = J.RECOVER_REASON;
exports.UNLOCK_HINT = J.UNLOCK_HINT;
exports.journalLabel = J.journalLabel;
exports.ensureJournal = J.ensureJournal;
exports.appendInbox = J.appendInbox;
exports.readInboxIds = J.readInboxIds;
exports.appendOutbox = J.appendOutbox;
exports.readOutbox = J.readOutbox;
exports.unresolvedOutbox = J.unresolvedOutbox;
exports.appendDrop = J.appendDrop;
exports.readDrops = J.readDrops;
exports.turnPath = J.turnPath;
exports.writeTurn = J.writeTurn;
exports.readTurn = J.readTurn;
exports.listTurns = J.listTurns;
exports.utcDate = J.utcDate;
exports.appendAdmission = J.appendAdmission;
exports.countAdmissionsOn = J.countAdmissionsOn;
exports.countTurnsOn = J.countTurnsOn;
exports.stopPath = J.stopPath;
exports.stopRequested = J.stopRequested;
exports.requestStop = J.requestStop;
exports.requestProcessingStop = J.requestProcessingStop;
exports.clearProcessingStop = J.clearProcessingStop;
exports.clearStop = J.clearStop;
exports.readStop = J.readStop;
exports.lockPath = J.lockPath;
exports.ownerPath = J.ownerPath;
exports.validStart = J.validStart;
exports.validBoot = J.validBoot;
exports.processStart = J.processStart;
exports.bootId = J.bootId;
exports.identityOf = J.identityOf;
exports.readPid = J.readPid;
exports.pidAlive = J.pidAlive;
exports.ownerState = J.ownerState;
exports.ownerAlive = J.ownerAlive;
exports.writePid = J.writePid;
exports.unlock = J.unlock;
exports.recover = J.recover;
exports.stopTarget = J.stopTarget;
exports.clearPid = J.clearPid;
exports.appendReload = J.appendReload;
exports.readReloads = J.readReloads;
exports.appendNotice = J.appendNotice;
exports.noticeOn = J.noticeOn;
