// @ts-check
// journal.mjs's own idioms, in a JavaScript file checked against the
// package's types (types.test.mjs): what compiles against journal.mjs's
// JSDoc must compile against the package (#37).
import { OUTBOX_STATUS, readPid, ownerState, stopTarget, writePid, clearPid } from "discord-journal";

/** @param {string} dir @param {number} pid */
export function release(dir, pid) {
  const rec = readPid(dir);
  if (rec !== null && !rec.invalid && rec.pid === pid) clearPid(dir, pid);
}

/** @param {string} dir @param {string} status */
export function known(dir, status) {
  if (!OUTBOX_STATUS.includes(status)) return false;
  return ownerState(readPid(dir)) === "live" || stopTarget(dir) !== null;
}

/** @param {string} dir @param {number} pid */
export function claim(dir, pid) {
  writePid(dir, pid, { now: Date.now() });
}
