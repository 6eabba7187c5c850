// `discord-journal stop DIR [REASON]`: STOP written through the addon's own
// export (the brake: no new turn starts and no run can claim the binding);
// with --init, the journal of a binding that has not run yet made first.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { J, isBindingName } = require("../journal.js");
const { journalDir, target, journalName } = require("../target.js");
const { becomeMaker } = require("../owner.js");
const { refusal, retried, recoversOnly } = require("../brake.js");
const { UsageError, Refusal, sh, word, invocation } = require("../output.js");

/** `stop`'s reason, refused where it would not brake. */
function stopReason(reason) {
  if (reason === J.RECOVER_REASON) {
    throw new UsageError(
      `the reason "${J.RECOVER_REASON}" is recover's own: a STOP that holds only that line is removed by the next recover, so it would not brake; give another reason`,
    );
  }
  // STOP past 64 KiB is refused by processing stops (it cannot be verified);
  // a reason is a sentence, and a long one would get there unnoticed.
  const bytes = Buffer.byteLength(reason);
  if (bytes > REASON_MAX) {
    throw new UsageError(
      `the reason is ${bytes} bytes; at most ${REASON_MAX} are taken (a STOP past 64 KiB cannot be verified): give a shorter one`,
    );
  }
  return reason;
}

const REASON_MAX = 4096;

/** STOP's lines, or null where they cannot be read. */
function stopLines(at) {
  try {
    return J.readStop(at);
  } catch {
    return null;
  }
}

// The journal as target.reach gives it: `dir` as given, for what is
// shown, and `at`, the path it works through.
function stop(t, reason) {
  let written;
  try {
    written = retried(t, () => J.requestStop(t.at, reason));
  } catch (e) {
    // A write that failed may still have made STOP (empty, or cut short):
    // that is a brake all the same, and the operator must know it is on (#34).
    if (e instanceof J.DiscordError && J.stopRequested(t.at)) {
      // recover's own line is no brake: the next recover removes it (#45).
      if (recoversOnly(stopLines(t.at)))
        throw refusal(
          e,
          `STOP holds only the line \`recover\` writes for itself, which the next \`recover\` removes, so the brake is NOT on: nothing stops the binding from starting until this command succeeds`,
        );
      const size = fs.statSync(path.join(t.at, "STOP"), { throwIfNoEntry: false })?.size ?? 0;
      throw refusal(
        e,
        `STOP exists (${size} bytes), so the brake is on all the same: no new turn starts. Once the cause is fixed, run \`${invocation()} stop ${sh(t.dir)} ${reason.startsWith("-") ? "-- " : ""}${word(reason)}\` again to record the reason`,
      );
    }
    throw e;
  }
  return {
    text: `STOP written in ${journalName(t)} (reason: ${reason})`,
    json: { ok: true, exitCode: 0, stop: path.resolve(written), reason },
  };
}

/** The command: `stop [dir] [reason]` with its options. */
function action(dir, reason, opts) {
  // With --binding, a single word is the reason: `stop --binding NAME maintenance`.
  if (opts.binding !== undefined && dir !== undefined && reason === "stop") [dir, reason] = [undefined, dir];
  stopReason(reason);
  let made = null;
  if (opts.init) {
    // Only a directory that is not there yet is made, and only under a binding's name.
    const d = journalDir(dir, opts, "stop");
    const name = path.basename(d);
    if (!isBindingName(name)) {
      // "/" (or "") has no last part to be a name: the path is named instead.
      const what = name === "" ? `${sh(d)} has no binding name` : `${sh(d)} ends in ${word(name)}, which is not a binding name`;
      throw new UsageError(
        `--init makes a binding's journal, <data root>/discord/<binding>, and ${what} (a binding name is lowercase letters, digits, _ and -, starting with a letter or digit, at most 63); nothing was made or braked`,
      );
    }
    if (!fs.existsSync(d)) {
      // Made by the user whose path it is, never by root (#33).
      made = becomeMaker(d, ["discord-journal", "stop", d]);
      try {
        J.ensureJournal(d);
      } catch (e) {
        // Node's own error names the host path and no fix (#34).
        throw new Refusal(
          `cannot make the journal at ${d} (${e.code ?? e.message}); nothing was braked. Give the path of a binding's journal whose parent you can write in (--data-root ROOT --binding NAME)`,
        );
      }
    }
  }
  const args = reason === "stop" ? [] : reason.startsWith("-") ? ["--", reason] : [reason];
  return stop(target(dir, opts, "stop", { write: true, acting: made, args }), reason);
}

module.exports = { action, stop, stopReason };
