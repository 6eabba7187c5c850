// What `stop`, `unlock` and `recover` (cli/commands/) share: a refusal of
// the brake or the lock completed by what it left behind and the one
// command that moves on, and a STOP update retried while `.stop.lock` is
// held by one that may still finish.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { J, stopLockState, stopLockCause, repairRunning, holders, unguarded, processOf } = require("./journal.js");
const { who } = require("./owner.js");
const { sh, age, capitalized, invocation } = require("./output.js");

/** Whether STOP's lines are the one a `recover` writes, which recover itself removes: no operator's brake. */
const recoversOnly = (lines) => Array.isArray(lines) && lines.length === 1 && lines[0].reason === J.RECOVER_REASON;

/** The journal's refusal `e`, with `more` said after it. */
const refusal = (e, more) => new J.DiscordError(`${e.message}\n${more}`, e.exitCode);

/**
 * `STOP update is locked` completed: whether `.stop.lock` is left over,
 * judged by the addon under the lock guard (#34), and the command that
 * removes it, proving it again; or what else made its mkdir fail.
 */
function stopLocked({ dir, at }, e, told = undefined) {
  // The library's words for a live owner are "another connector"; a
  // repair holds the binding the same way, and is named (#34).
  if (e instanceof J.DiscordError && e.message.startsWith("another connector is running") && repairRunning(at))
    return refusal(
      e,
      `that process is a repair (discord-journal repair), which holds the binding until it is done: run the command again once it is`,
    );
  if (e instanceof J.DiscordError && e.message.startsWith("another connector is running")) {
    const z = zombieOf(J.readPid(at));
    if (z) return refusal(e, zombieProblem(dir, z).what + `. ${capitalized(zombieProblem(dir, z).fix)}`);
  }
  if (!(e instanceof J.DiscordError) || e.message !== LOCKED) return e;
  // The library words every failed mkdir of .stop.lock as a lock, as
  // journal.mjs does; the addon keeps the real cause, named here (#34).
  // Taken once per refusal: `told` where the caller took it already.
  const cause = told === undefined ? stopLockCause() : told;
  // The real cause leads (#45): the library's "locked" follows it.
  if (cause !== null && cause !== "EEXIST") return new J.DiscordError(`${diskCause(dir, at, cause)}\n(${e.message})`, e.exitCode);
  const lock = path.join(dir, ".stop.lock");
  let st;
  try {
    st = fs.lstatSync(path.join(at, ".stop.lock"));
  } catch {
    return refusal(e, "(.stop.lock is gone now: run the command again)");
  }
  const made = age(Math.max(0, Math.round((Date.now() - st.mtimeMs) / 1000)));
  const { state } = stopLockState(at);
  if (state === "absent") return refusal(e, "(.stop.lock is gone now: the update that held it finished; run the command again)");
  if (state === "left")
    return refusal(
      e,
      `.stop.lock was left (made ${made} ago) by a STOP update that did not finish: none runs now. \`${invocation()} repair ${sh(dir)} --apply\` removes it, proving that again; then run the command again`,
    );
  if (state === "held") {
    // A live update of this package is inside, as the kernel shows it (#44).
    const h = holders(at).stopLock;
    if (h?.stalled)
      return refusal(
        e,
        `.stop.lock is held by ${h.is}, a STOP update stopped inside it (made ${made} ago): ${h.fix}, then run the command again`,
      );
    return refusal(e, `.stop.lock is held by ${h ? h.is : "a STOP update in progress"}: run the command again once it has finished`);
  }
  return refusal(
    e,
    `.stop.lock was made ${made} ago, and whether a STOP update is still inside cannot be proved here. If no connector, stop, unlock or recover runs for this binding, \`rmdir ${sh(lock)}\`, then run the command again`,
  );
}

/**
 * Why `.stop.lock` could not be made, by the errno its mkdir met (`code`),
 * with the fix.
 */
function diskCause(dir, at, code) {
  const again = "then run the command again";
  switch (code) {
    case "EROFS":
      return `the journal's file system is mounted read-only (EROFS), so .stop.lock, which every STOP update makes first, could not be made; remount it read-write (\`findmnt -T ${sh(dir)}\` shows the mount), ${again}`;
    case "EDQUOT":
      return `the disk quota of ${who(process.geteuid())} on the journal's file system is used up (EDQUOT), so .stop.lock, which every STOP update makes first, could not be made; free space or inodes of that user there, or raise its quota (\`quota -s\` as that user shows it), ${again}`;
    case "ENOSPC": {
      // Which of the two it ran out of, as the file system says now.
      let free = null;
      try {
        free = fs.statfsSync(at);
      } catch {
        // Not told: the errno alone.
      }
      if (free !== null && free.files > 0 && free.ffree === 0)
        return `the journal's file system has no free inodes (ENOSPC), so .stop.lock, which every STOP update makes first, could not be made; remove files on it (\`df -i ${sh(dir)}\` shows it), ${again}`;
      return `the journal's file system is full (ENOSPC), so .stop.lock, which every STOP update makes first, could not be made; free space on it (\`df -h ${sh(dir)}\` shows it), ${again}`;
    }
    case "EACCES":
    case "EPERM":
      return `${who(process.geteuid())} may not write in the journal directory (${code}), so .stop.lock, which every STOP update makes first, could not be made; \`ls -ld ${sh(dir)}\` shows its owner and mode, \`lsattr -d ${sh(dir)}\` an immutable flag; ${again}`;
    default:
      return `.stop.lock, which every STOP update makes first, could not be made (${code}); ${again} once that is fixed`;
  }
}

/** The owner record's process where it is a zombie: `{ pid, parent: { pid, command } | null }`, else null. */
function zombieOf(owner) {
  if (!Number.isInteger(owner?.pid) || owner.pid <= 0 || owner.pid > 0xffffffff) return null;
  const p = processOf(owner.pid);
  return p?.state === "zombie" ? { pid: p.pid, parent: p.parent } : null;
}

/** The owner record's process where it is stopped or traced: `{ is, fix }` (processOf's), else null. */
function stoppedOf(owner) {
  if (!Number.isInteger(owner?.pid) || owner.pid <= 0 || owner.pid > 0xffffffff) return null;
  const p = processOf(owner.pid);
  return p?.stalled ? p : null;
}

/** What a zombie owner is, and what reaps it: `{ what, fix }`. */
function zombieProblem(dir, z) {
  const parent = z.parent ? `its parent, pid ${z.parent.pid}${z.parent.command ? ` (${z.parent.command})` : ""},` : "its parent";
  return {
    what: `the connector that holds run.lock (pid ${z.pid}) is dead, but ${parent} has not reaped it, so it still counts as running: recover, unlock and every start refuse its lock until it is reaped`,
    fix: z.parent
      ? `\`kill -s CHLD ${z.parent.pid}\` asks its parent to reap it; where pid ${z.pid} stays, that parent reaps no children (a container's PID 1 without an init: run it with one, \`docker run --init\`), and stopping pid ${z.parent.pid} by hand leaves it to init. Once it is gone, \`${invocation()} recover ${sh(dir)}\``
      : `once pid ${z.pid} is reaped, \`${invocation()} recover ${sh(dir)}\``,
  };
}

const LOCKED = "STOP update is locked; refusing";
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * `f()`, tried again while it refuses because `.stop.lock` is held by an
 * update that may still finish, so that an operator's brake goes through
 * instead of asking for a retry: an update of this package in progress
 * (the addon's STOP mark shows it live), or one it cannot prove left (a
 * `journal.mjs` process's update, which takes no mark) is waited for up to
 * 2 s; a `.stop.lock` left by an update that died, which the addon proves
 * (#34), is refused at once with how to remove it.
 */
function retried(t, f) {
  const until = Date.now() + 2000;
  let askedHolder = false;
  for (;;) {
    try {
      return f();
    } catch (e) {
      // Only another update's .stop.lock (EEXIST) is waited for; a mkdir
      // the disk refused is named at once, never retried (#34).
      const cause = e instanceof J.DiscordError && e.message === LOCKED ? stopLockCause() : null;
      if (cause !== null && cause !== "EEXIST") throw stopLocked(t, e, cause);
      if (!(e instanceof J.DiscordError) || e.message !== LOCKED || Date.now() > until) throw stopLocked(t, e, cause);
      const { state } = stopLockState(t.at);
      if (state === "left") throw stopLocked(t, e);
      // A stopped update will not finish on its own: named at once (#44).
      // Asked once: the answer looks through every process's descriptors.
      if (state === "held" && !askedHolder) {
        askedHolder = true;
        if (holders(t.at).stopLock?.stalled) throw stopLocked(t, e);
      }
      if (state !== "absent") Atomics.wait(pause, 0, 0, 20);
    }
  }
}

/**
 * What an acting command (recover, unlock, repair --apply) says where the
 * journal's lock guard cannot be had, so it never acts unguarded in
 * silence (#44); null where the guard holds.
 */
function unguardedNote({ at }) {
  const why = unguarded(at);
  return why === null
    ? null
    : `note: this journal's lock guard cannot be had: ${why}. A start, recover, unlock or repair running at the same moment is not kept apart from this one (docs/lock.md)`;
}

module.exports = { refusal, stopLocked, retried, unguardedNote, zombieOf, stoppedOf, zombieProblem, recoversOnly };
