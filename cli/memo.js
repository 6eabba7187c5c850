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
//
// The state is keyed by SCHEMA, the hash of SHAPE, which says what each
// kind of kept answer holds (#63): a state written by code that kept
// something else (another shape, another order) is never taken, where the
// package's version (the same across many commits) let it through. A test
// derives the shape of a fresh state and holds it to SHAPE, so the kept
// shape cannot change without SHAPE, and with it SCHEMA.
"use strict";

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

/**
 * Each kind of kept answer (the key's second part, cli/commands/status.js's
 * `kept`), a reader's `{ value }` or its `{ refused }` (a string): `value`,
 * the structure of the values as `keptShape` writes it for a fresh state,
 * and `meaning`, what a structure does not show (an order, a unit). Change
 * either with what is kept: SCHEMA follows.
 */
const SHAPE = Object.freeze({
  scan: {
    value:
      "null|{bad:[{damage:string,head:string,length:number,line:number,offset:number}],badCount:number,lines:number,nulls:[number],size:number,unterminated:boolean}",
    meaning: "scanLines of one record file: its bad lines in file order (the first ones), with the file's size when scanned",
  },
  turns: {
    value: "{bad:[{damage:null|string,file:string,refusal:null|string,size:number}],badCount:number,nulls:[string],records:number}",
    meaning: "scanTurns of turns/: its records counted, the bad ones by name",
  },
  unresolved: {
    value: "{channel:[null|string],intentAt:[null|string],nonce:[string],status:[string]}",
    meaning:
      "unresolvedOutbox's deliveries as columns, by intentAt as a time (Date.parse), those that are no date last in the file's order",
  },
  admissions: { value: "number", meaning: "countAdmissionsOn the key's UTC date" },
  turnsOn: { value: "number", meaning: "countTurnsOn the key's UTC date" },
  notices: { value: "[string]", meaning: "the notice kinds noticeOn finds on the key's UTC date" },
  reloads: { value: "[record]", meaning: "readReloads' records in file order, as written" },
});

/** The state's key: SHAPE's hash (and the fingerprint's form, which a kept answer is matched by). */
const SCHEMA = crypto
  .createHash("sha256")
  .update(JSON.stringify({ SHAPE, fingerprint: "dev:ino:size:mtimeNs:ctimeNs:mode" }))
  .digest("hex")
  .slice(0, 16);

/**
 * The structure of `values` as SHAPE writes it: `|` between the distinct
 * alternatives, an object's keys in order each with the structure of its
 * values, an array's elements merged (`[]` where none was seen).
 */
function shapeOf(values) {
  const alternatives = new Map();
  for (const v of values) {
    const tag =
      v === RECORD
        ? "record"
        : v === null
          ? "null"
          : Array.isArray(v)
            ? "array"
            : typeof v === "object"
              ? `object:${Object.keys(v).sort().join(",")}`
              : typeof v;
    alternatives.set(tag, [...(alternatives.get(tag) ?? []), v]);
  }
  return [...alternatives]
    .map(([tag, vs]) => {
      if (tag === "array") return `[${shapeOf(vs.flat())}]`;
      if (!tag.startsWith("object:")) return tag;
      const keys = tag.slice("object:".length).split(",").filter(Boolean);
      return `{${keys.map((k) => `${k}:${shapeOf(vs.map((o) => o[k]))}`).join(",")}}`;
    })
    .sort()
    .join("|");
}

/** What stands for a reload's record in a shape: the connector's own JSON, never looked into. */
const RECORD = Object.freeze({});

/** The shape of the values kept for `kind` (the `{ value }` answers'), as SHAPE writes it. */
const keptShape = (kind, values) => shapeOf(kind === "reloads" ? values.map((v) => v.map(() => RECORD)) : values);

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

/** The binding part of a kept answer's key (`<journal>\0`), which says whose it is. */
const bindingOf = (key) => key.slice(0, key.indexOf("\0") + 1);

/**
 * The answers of one collection: `take(key, files, compute)` gives the kept
 * answer of `key` where each of `files` (`{ file }` or `{ tree }`) is as it
 * was when it was kept, else computes it; `learned` holds what this
 * collection answered, to keep for the next; `reused` the keys whose kept
 * answer was taken, `read` those computed (#63: counted, for the operator
 * and the tests). `fresh`: keep nothing old.
 */
class Memo {
  constructor(kept = {}, fresh = false) {
    this.kept = fresh ? {} : kept;
    this.learned = {};
    this.reused = [];
    this.read = {};
  }

  take(key, files, compute) {
    const fp = files.map((f) => (f.tree !== undefined ? treeFingerprint(f.tree) : fingerprint(f.file))).join("|");
    const old = this.kept[key];
    if (old !== undefined && old.fp === fp) {
      this.learned[key] = old;
      this.reused.push(key);
      return old.answer;
    }
    const entry = { fp, answer: compute() };
    this.learned[key] = entry;
    this.read[key] = entry;
    return entry.answer;
  }

  /** How many answers were reused and how many read: `{ reused, read }`. */
  get counts() {
    return { reused: this.reused.length, read: Object.keys(this.read).length };
  }

  /** The kept answers of the bindings in `journals` (`<journal>\0` each: one owner's bindings). */
  static only(entries, journals) {
    const mine = new Set(journals);
    return Object.fromEntries(Object.entries(entries).filter(([k]) => mine.has(bindingOf(k))));
  }

  /**
   * What one owner's child (cli/fleet.js) said it took and read, kept for
   * `journals` (that owner's) alone: a reused key names an answer this
   * process holds, and is never taken from the child; an answer it read
   * is. Returns the counts it adds.
   */
  merge({ reused = [], read = {} }, journals) {
    const mine = new Set(journals);
    let n = 0;
    for (const key of reused)
      if (mine.has(bindingOf(key)) && this.kept[key] !== undefined) {
        this.learned[key] = this.kept[key];
        this.reused.push(key);
        n++;
      }
    for (const [key, entry] of Object.entries(Memo.only(read, journals))) {
      this.learned[key] = entry;
      this.read[key] = entry;
    }
    return n;
  }
}

/** A memo that keeps nothing: every answer computed. */
const NONE = { take: (key, files, compute) => compute() };

/**
 * Where the collection of the data root `root` whose metrics go to `file`
 * keeps its state (#63): one file per data root in the metrics file's
 * directory, named by the root's hash, so that another metrics file name
 * for the same root takes the same state (a new name reads nothing again
 * and leaves nothing behind), and several roots sharing a directory keep
 * one each.
 */
function statePath(file, root) {
  const hash = crypto.createHash("sha256").update(path.resolve(root)).digest("hex").slice(0, 16);
  return path.join(path.dirname(path.resolve(file)), `discord-journal.${hash}.state`);
}

/**
 * The state a former collection of `root` left at `file`: `{ fullAt,
 * entries }`, with `refused` saying why where it is not taken (an empty
 * state then): one this process did not write (another owner, or a mode
 * that lets another user write it) is never taken, so a less privileged
 * process cannot feed a more privileged one; nor one of another SCHEMA or
 * data root.
 */
function loadState(file, root) {
  const empty = (refused) => ({ fullAt: 0, entries: {}, refused });
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return empty("not a regular file");
    if (st.uid !== process.geteuid?.()) return empty(`owned by uid ${st.uid}, not this process's`);
    if ((st.mode & 0o077) !== 0) return empty("another user may read or write it");
    const state = JSON.parse(fs.readFileSync(fd, "utf8"));
    if (state?.schema !== SCHEMA) return empty("written by code that kept another shape");
    if (state.dataRoot !== path.resolve(root)) return empty("another data root's");
    if (typeof state.fullAt !== "number" || state.entries === null || typeof state.entries !== "object") return empty("not a state");
    return state;
  } catch (e) {
    return empty(e.code === "ENOENT" ? null : (e.code ?? "not JSON"));
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The text of the state to keep for `root`. */
const stateText = (root, fullAt, entries) => JSON.stringify({ schema: SCHEMA, dataRoot: path.resolve(root), fullAt, entries });

/**
 * The state file an earlier version kept beside the metrics file
 * (`FILE.state`, `{"version":…`), removed once the state has a file of
 * its own, so that an upgrade leaves none behind: only where it is this
 * process's own regular file and reads as one (never a link, never
 * another's, never a file of the operator's that happens to bear the name).
 */
function removeFormer(file) {
  const former = `${path.resolve(file)}.state`;
  let fd;
  try {
    fd = fs.openSync(former, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const st = fs.fstatSync(fd);
    const head = Buffer.alloc(11);
    if (!st.isFile() || st.uid !== process.geteuid?.() || fs.readSync(fd, head, 0, 11, 0) !== 11) return;
    if (head.toString("latin1") === '{"version":') fs.unlinkSync(former);
  } catch {
    // None, or not removable: left as it is.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

module.exports = { Memo, NONE, SCHEMA, SHAPE, keptShape, loadState, statePath, stateText, removeFormer };
