// The record files, the turn records and STOP, each mapped to the library's
// readers that read it: one map (#48), which check and status both use.
// check asks every reader of a file for its refusal, each called so that it
// reads every line and answers nothing that matters; status shows the answer
// of one reader of each file it reads (`shown`), naming it where it refuses.
"use strict";

const { J, RECORD_FILES } = require("./journal.js");

// An object is === to no parsed value, so a reader asked about it reads
// every line of its file and answers nothing that matters: only its
// refusal does.
const NEVER = {};

const reader = (name, call, shown = false) => Object.freeze({ name, call, shown });

/** The record files by what they hold (`FILE.inbox`): the addon's RECORD_FILES, each less its `.jsonl`. */
const FILE = Object.freeze(Object.fromEntries(RECORD_FILES.map((name) => [name.replace(/\.jsonl$/, ""), name])));

/** `readers`, checked at load to read every record file, turns and STOP: a file added to the addon without its readers fails the suite, never a run. */
function covered(readers, files = RECORD_FILES) {
  const missing = [...files, "turns", "STOP"].filter((f) => !(readers[f]?.length > 0));
  if (missing.length > 0) throw new Error(`cli/readers.js: no readers of ${missing.join(", ")}`);
  return readers;
}

/** Each file's readers, in the order check asks them: `{ name, call(dir), shown }`. */
const READERS = Object.freeze({
  [FILE.inbox]: [reader("readInboxIds", (d) => J.readInboxIds(d), true)],
  [FILE.outbox]: [reader("readOutbox", (d) => J.readOutbox(d)), reader("unresolvedOutbox", (d) => J.unresolvedOutbox(d), true)],
  [FILE.drops]: [reader("readDrops", (d) => J.readDrops(d))],
  [FILE.admissions]: [reader("countAdmissionsOn", (d) => J.countAdmissionsOn(d, NEVER), true)],
  [FILE.notices]: [reader("noticeOn", (d) => J.noticeOn(d, NEVER, NEVER), true)],
  [FILE.reloads]: [reader("readReloads", (d) => J.readReloads(d), true)],
  turns: [reader("listTurns", (d) => J.listTurns(d)), reader("countTurnsOn", (d) => J.countTurnsOn(d, NEVER), true)],
  STOP: [reader("readStop", (d) => J.readStop(d), true)],
});
covered(READERS);

/** The name of the reader whose answer status shows for `file`. */
function shownReader(file) {
  const r = READERS[file]?.find((x) => x.shown);
  if (r === undefined) throw new Error(`status shows no reader of ${file}`);
  return r.name;
}

module.exports = { FILE, READERS, covered, shownReader };
