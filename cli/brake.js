// `discord-journal stop`, `unlock` and `recover`: the brake and the lock,
// through the addon's own exports, with each refusal completed by what it
// left behind and the one command that moves on.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { J, stopLockState } = require("./journal.js");
const { UsageError, sh, age } = require("./output.js");

/** The journal's refusal `e`, with `more` said after it. */
const refusal = (e, more) => new J.DiscordError(`${e.message}\n${more}`, e.exitCode);

/**
 * `STOP update is locked` completed: whether `.stop.lock` is left over,
 * judged by the addon under the lock guard (#34), and the command that
 * removes it, proving it again; or what else made its mkdir fail.
 */
function stopLocked({ dir, at }, e) {
  if (!(e instanceof J.DiscordError) || e.message !== LOCKED) return e;
  const lock = path.join(dir, ".stop.lock");
  let st;
  try {
    st = fs.lstatSync(path.join(at, ".stop.lock"));
  } catch {
    // No .stop.lock: its mkdir failed for another reason, which the
    // library words as a lock (as journal.mjs does). Named here (#34).
    return refusal(e, diskCause(dir, at) ?? "(.stop.lock is gone now: run the command again)");
  }
  const made = age(Math.max(0, Math.round((Date.now() - st.mtimeMs) / 1000)));
  const { state } = stopLockState(at);
  if (state === "absent") return refusal(e, "(.stop.lock is gone now: the update that held it finished; run the command again)");
  if (state === "left")
    return refusal(
      e,
      `.stop.lock was left (made ${made} ago) by a STOP update that did not finish: none runs now. \`discord-journal repair ${sh(dir)} --apply\` removes it, proving that again; then run the command again`,
    );
  return refusal(
    e,
    `.stop.lock was made ${made} ago, and whether a STOP update is still inside cannot be proved here. If no connector, stop, unlock or recover runs for this binding, \`rmdir ${sh(lock)}\`, then run the command again`,
  );
}

/**
 * Why nothing can be made in the journal at `at`, where its file system
 * says: read-only, out of blocks or out of inodes, with the fix; or null.
 */
function diskCause(dir, at) {
  if (readOnly(at))
    return `.stop.lock could not be made: the journal's file system is mounted read-only (EROFS); remount it read-write (\`findmnt -T ${sh(dir)}\` shows the mount), then run the command again`;
  let fsStat;
  try {
    fsStat = fs.statfsSync(at);
  } catch {
    return null;
  }
  const df = `\`df -h ${sh(dir)}\``;
  if (fsStat.bavail === 0)
    return `.stop.lock could not be made: the journal's file system is full (ENOSPC, no free blocks); free space on it (${df} shows it), then run the command again`;
  if (fsStat.files > 0 && fsStat.ffree === 0)
    return `.stop.lock could not be made: the journal's file system has no free inodes (ENOSPC); remove files on it (\`df -i ${sh(dir)}\` shows it), then run the command again`;
  return null;
}

/** Whether the mount that holds `at` is read-only, by /proc/self/mountinfo (Linux). */
function readOnly(at) {
  try {
    const real = fs.realpathSync(at);
    let best = null;
    for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
      const f = line.split(" ");
      // Mount points escape space, tab, newline and backslash in octal.
      const point = (f[4] ?? "").replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
      if (f.length < 6 || !(real === point || real.startsWith(point === "/" ? "/" : `${point}/`))) continue;
      if (best === null || point.length >= best.point.length) best = { point, options: f[5].split(",") };
    }
    return best !== null && best.options.includes("ro");
  } catch {
    return false;
  }
}

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

const LOCKED = "STOP update is locked; refusing";
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * `f()`, tried again while it refuses because `.stop.lock` is held by an
 * update that may still finish, so that an operator's brake goes through
 * instead of asking for a retry. This package's updates wait for one
 * another on the lock guard, so the refusal means a `.stop.lock` left by
 * an update that died, which the addon proves (#34) and the refusal then
 * says how to remove, or one it cannot prove left (a `journal.mjs`
 * process's update, which takes no guard): that one is waited for up to
 * 2 s.
 */
function retried(t, f) {
  const until = Date.now() + 2000;
  for (;;) {
    try {
      return f();
    } catch (e) {
      if (!(e instanceof J.DiscordError) || e.message !== LOCKED || Date.now() > until) throw stopLocked(t, e);
      const { state } = stopLockState(t.at);
      if (state === "left") throw stopLocked(t, e);
      if (state !== "absent") Atomics.wait(pause, 0, 0, 20);
    }
  }
}

// Each takes the journal as target.reach gives it: `dir` as given, for
// what is shown, and `at`, the path it works through.
function stop(t, reason) {
  let written;
  try {
    written = retried(t, () => J.requestStop(t.at, reason));
  } catch (e) {
    // A write that failed may still have made STOP (empty, or cut short):
    // that is a brake all the same, and the operator must know it is on (#34).
    if (e instanceof J.DiscordError && J.stopRequested(t.at)) {
      const size = fs.statSync(path.join(t.at, "STOP"), { throwIfNoEntry: false })?.size ?? 0;
      throw refusal(
        e,
        `STOP exists (${size} bytes), so the brake is on all the same: no new turn starts. Once the cause is fixed, run \`discord-journal stop ${sh(t.dir)} ${sh(reason)}\` again to record the reason`,
      );
    }
    throw e;
  }
  return {
    text: `STOP written in ${J.journalLabel(t.at)} (reason: ${reason})`,
    json: { ok: true, exitCode: 0, stop: path.resolve(written), reason },
  };
}

function unlock(t) {
  const { dir } = t;
  let rec;
  try {
    // A locked STOP update refuses unlock before it has done anything.
    rec = retried(t, () => J.unlock(t.at));
  } catch (e) {
    // unlock writes STOP before it looks at the lock, and leaves it when it refuses.
    if (e instanceof J.DiscordError && e.message.startsWith("refusing to unlock")) {
      throw refusal(
        e,
        `unlock wrote STOP before it looked at the lock, and STOP stays: no new turn starts. \`rm ${sh(path.join(dir, "STOP"))}\` lifts the brake`,
      );
    }
    throw e;
  }
  const lift = `\`rm ${sh(path.join(dir, "STOP"))}\` when the binding should run again`;
  const was = rec ? ` (was pid ${rec.pid})` : " (it had no owner record)";
  return {
    text: rec === false ? `no run.lock; STOP written: ${lift}` : `run.lock cleared${was}; STOP stays: ${lift}`,
    json: { ok: true, exitCode: 0, cleared: rec !== false, owner: rec === false ? null : rec, stop: true },
  };
}

function recover(t) {
  let result;
  try {
    result = J.recover(t.at);
  } catch (e) {
    throw stopLocked(t, e);
  }
  return { text: result, json: { ok: true, exitCode: 0, result } };
}

module.exports = { stopReason, stop, unlock, recover };
