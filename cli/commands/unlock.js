// `discord-journal unlock DIR`: a run.lock whose owner is gone cleared
// through the addon's own export, which writes STOP first (STOP stays).
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { J, repairRunning } = require("../journal.js");
const { target } = require("../target.js");
const { refusal, stopLocked, retried, unguardedNote, zombieOf, zombieProblem } = require("../brake.js");
const { sh, invocation } = require("../output.js");

function unlock(t) {
  const { dir } = t;
  let rec;
  try {
    // A locked STOP update refuses unlock before it has done anything.
    rec = retried(t, () => J.unlock(t.at));
  } catch (e) {
    // unlock writes STOP before it looks at the lock, and leaves it when it refuses.
    if (e instanceof J.DiscordError && e.message.startsWith("refusing to unlock")) {
      const zombie = zombieOf(J.readPid(t.at));
      const repair = zombie
        ? `\n${zombieProblem(dir, zombie).what}. ${zombieProblem(dir, zombie).fix.replace(`${invocation()} recover`, `${invocation()} unlock`)}`
        : repairRunning(t.at)
          ? "\nthat process is a repair (discord-journal repair), which holds the binding until it is done"
          : "";
      throw refusal(
        e,
        `unlock wrote STOP before it looked at the lock, and STOP stays: no new turn starts. \`rm ${sh(path.join(dir, "STOP"))}\` lifts it, with any brake that was on before it${repair}`,
      );
    }
    throw stopLocked(t, e);
  }
  const lift = `\`rm ${sh(path.join(dir, "STOP"))}\` when the binding should run again`;
  // A link at run.lock is no lock to unlock, and every claim refuses it (#34).
  if (rec === false && fs.lstatSync(path.join(t.at, "run.lock"), { throwIfNoEntry: false })?.isSymbolicLink()) {
    throw new J.DiscordError(
      `run.lock is a symbolic link, which unlock neither follows nor removes, and every claim refuses it: \`rm ${sh(path.join(dir, "run.lock"))}\` removes the link alone. STOP was written and stays: ${lift}`,
      1,
    );
  }
  const was = rec ? ` (was pid ${rec.pid})` : " (it had no owner record)";
  const text = rec === false ? `no run.lock; STOP written: ${lift}` : `run.lock cleared${was}; STOP stays: ${lift}`;
  const json = { ok: true, exitCode: 0, cleared: rec !== false, owner: rec === false ? null : rec, stop: true };
  const note = unguardedNote(t);
  return note === null ? { text, json } : { text: `${text}\n${note}`, json: { ...json, unguarded: note } };
}

/** The command: `unlock [dir]` with its options. */
function action(dir, opts) {
  return unlock(target(dir, opts, "unlock", { write: true }));
}

module.exports = { action, unlock };
