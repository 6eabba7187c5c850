// What a metrics collection learned of each file it read, for the next
// collection (#57): `status --data-root ROOT --prometheus FILE` run every
// minute would otherwise read and judge every line of every binding again,
// each time. A reader's answer is kept with the fingerprint of the files it
// read, taken before it read them (device, inode, size, modification and
// change times in nanoseconds, mode); the next collection takes the answer
// again only where every fingerprint is the same, and reads anew wherever
// one differs (an append, a repair's rename, a chmod). What a fingerprint
// cannot show (bytes rewritten in place at the same size within one tick of
// the file system's clock) is caught by a full reading every `fullEvery`
// seconds. Whether a process lives, holds a lock or is stopped is never
// kept: it is asked again each time. The library's own rule stands apart:
// its cache never answers where a fresh read would answer otherwise.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
// Answers kept by another version may have another shape: never taken.
const { version } = require("../package.json");

/** The fingerprint of what is at `p`, not following a link; an error's code where nothing can be told. */
function fingerprint(p) {
  const of = (s) => `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}`;
  try {
    const l = fs.lstatSync(p, { bigint: true });
    if (!l.isSymbolicLink()) return of(l);
    // The readers read through a link: what it leads to counts too.
    try {
      return `${of(l)}->${of(fs.statSync(p, { bigint: true }))}`;
    } catch (e) {
      return `${of(l)}->!${e.code ?? "error"}`;
    }
  } catch (e) {
    return `!${e.code ?? "error"}`;
  }
}

/** A directory's fingerprint with each of its entries' (the turn records a listing reads). */
function treeFingerprint(dir) {
  let names;
  try {
    names = fs.readdirSync(dir).sort();
  } catch (e) {
    return `${fingerprint(dir)}/!${e.code ?? "error"}`;
  }
  return [fingerprint(dir), ...names.map((n) => `${n}=${fingerprint(path.join(dir, n))}`)].join("/");
}

/**
 * The answers of one collection: `take(key, files, compute)` gives the kept
 * answer of `key` where each of `files` (`{ file }` or `{ tree }`) is as it
 * was when it was kept, else computes it; `learned` holds what this
 * collection answered, to keep for the next. `fresh`: keep nothing old.
 */
class Memo {
  constructor(kept = {}, fresh = false) {
    this.kept = fresh ? {} : kept;
    this.learned = {};
  }

  take(key, files, compute) {
    const fp = files.map((f) => (f.tree !== undefined ? treeFingerprint(f.tree) : fingerprint(f.file))).join("|");
    const old = this.kept[key];
    const answer = old !== undefined && old.fp === fp ? old.answer : compute();
    this.learned[key] = { fp, answer };
    return answer;
  }

  /** The kept answers whose key begins with one of `prefixes` (one owner's bindings). */
  static only(entries, prefixes) {
    return Object.fromEntries(Object.entries(entries).filter(([k]) => prefixes.some((p) => k.startsWith(p))));
  }
}

/** A memo that keeps nothing: every answer computed. */
const NONE = { take: (key, files, compute) => compute() };

/**
 * The state a former collection left at `file`: `{ fullAt, entries }`, or
 * an empty one where there is none or it cannot be trusted: a state this
 * process did not write (another owner, or a mode that lets another user
 * write it) is never taken, so a less privileged process cannot feed a
 * more privileged one.
 */
function loadState(file) {
  const empty = { fullAt: 0, entries: {} };
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.uid !== process.geteuid?.() || (st.mode & 0o077) !== 0) return empty;
    const state = JSON.parse(fs.readFileSync(fd, "utf8"));
    if (state?.version !== version || typeof state.fullAt !== "number" || state.entries === null || typeof state.entries !== "object")
      return empty;
    return state;
  } catch {
    return empty;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

module.exports = { Memo, NONE, loadState, version };
