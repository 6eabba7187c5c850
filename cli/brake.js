// `discord-journal stop`, `unlock` and `recover`: the brake and the lock,
// through the addon's own exports, with each refusal completed by what it
// left behind and the one command that moves on.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { J } = require("./journal.js");
const { UsageError, sh, age } = require("./output.js");

/** The journal's refusal `e`, with `more` said after it. */
const refusal = (e, more) => new J.DiscordError(`${e.message}\n${more}`, e.exitCode);

/**
 * `STOP update is locked` completed: how old `.stop.lock` is, and the
 * command that removes it when no STOP update runs.
 */
function stopLocked(dir, e) {
  if (!(e instanceof J.DiscordError) || e.message !== "STOP update is locked; refusing") return e;
  const lock = path.join(dir, ".stop.lock");
  let st;
  try {
    st = fs.lstatSync(lock);
  } catch {
    return refusal(e, "(.stop.lock is gone now: run the command again)");
  }
  const seconds = Math.max(0, Math.round((Date.now() - st.mtimeMs) / 1000));
  return refusal(
    e,
    `.stop.lock is ${age(seconds)} old: a STOP update that did not finish left it. If no STOP update is running, \`rmdir ${sh(lock)}\`, then run the command again`,
  );
}

/** `stop`'s reason, refused where it would not brake. */
function stopReason(reason) {
  if (reason === J.RECOVER_REASON) {
    throw new UsageError(
      `the reason "${J.RECOVER_REASON}" is recover's own: a STOP that holds only that line is removed by the next recover, so it would not brake; give another reason`,
    );
  }
  return reason;
}

function stop(dir, reason) {
  let written;
  try {
    written = J.requestStop(dir, reason);
  } catch (e) {
    throw stopLocked(dir, e);
  }
  return {
    text: `STOP written in ${J.journalLabel(dir)} (reason: ${reason})`,
    json: { ok: true, exitCode: 0, stop: path.resolve(written), reason },
  };
}

function unlock(dir) {
  let rec;
  try {
    rec = J.unlock(dir);
  } catch (e) {
    // unlock writes STOP before it looks at the lock, and leaves it when it refuses.
    if (e instanceof J.DiscordError && e.message.startsWith("refusing to unlock")) {
      throw refusal(
        e,
        `unlock wrote STOP before it looked at the lock, and STOP stays: no new turn starts. \`rm ${sh(path.join(dir, "STOP"))}\` lifts the brake`,
      );
    }
    throw stopLocked(dir, e);
  }
  const lift = `\`rm ${sh(path.join(dir, "STOP"))}\` when the binding should run again`;
  const was = rec ? ` (was pid ${rec.pid})` : " (it had no owner record)";
  return {
    text: rec === false ? `no run.lock; STOP written: ${lift}` : `run.lock cleared${was}; STOP stays: ${lift}`,
    json: { ok: true, exitCode: 0, cleared: rec !== false, owner: rec === false ? null : rec, stop: true },
  };
}

function recover(dir) {
  let result;
  try {
    result = J.recover(dir);
  } catch (e) {
    throw stopLocked(dir, e);
  }
  return { text: result, json: { ok: true, exitCode: 0, result } };
}

module.exports = { stopReason, stop, unlock, recover };
