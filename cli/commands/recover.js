// `discord-journal recover DIR`: the supervised pre-start, through the
// addon's own export: a crashed run's lock cleared unless an operator
// braked; with --missing-ok, a binding that has not run yet is clean.
"use strict";

const { J } = require("../journal.js");
const { target, notYet } = require("../target.js");
const { stopLocked, unguardedNote } = require("../brake.js");

function recover(t) {
  let result;
  try {
    result = J.recover(t.at);
  } catch (e) {
    throw stopLocked(t, e);
  }
  const note = unguardedNote(t);
  return note === null
    ? { text: result, json: { ok: true, exitCode: 0, result } }
    : { text: `${result}\n${note}`, json: { ok: true, exitCode: 0, result, unguarded: note } };
}

/** The command: `recover [dir]` with its options. */
function action(dir, opts) {
  if (notYet(dir, opts, "recover")) return { text: "clean", json: { ok: true, exitCode: 0, result: "clean" } };
  return recover(target(dir, opts, "recover", { write: true }));
}

module.exports = { action, recover };
