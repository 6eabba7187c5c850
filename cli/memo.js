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
// minutes. Whether a process lives, holds a lock or is stopped is never
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

/**
 * The state's key: SHAPE's hash, with the fingerprint's form (what a kept
 * answer is matched by) and the file's. Made where asked, by the parent
 * alone: an owner's child needs none, and starts without node:crypto.
 */
let schema;
const SCHEMA = () =>
  (schema ??= require("node:crypto")
    .createHash("sha256")
    .update(
      JSON.stringify({
        SHAPE,
        fingerprint: "dev:ino:size:mtimeNs:ctimeNs:mode",
        file: "a header line { schema, dataRoot, fullAt }, then a line per binding: its key as JSON, a tab, its answers { key: { fp, answer } } as JSON",
      }),
    )
    .digest("hex")
    .slice(0, 16));

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
 * was when it was kept, else computes it. What is kept is held by binding
 * (`<journal>\0`, each key's first part): `kept` maps a binding to the
 * JSON text of its answers (`{ key: { fp, answer } }`), parsed only where
 * this process asks for one of them, and a binding whose every kept answer
 * was taken again, and no other, is kept as that same text (#63: at 200
 * bindings the state is megabytes, and a collection where journals belong
 * to service users parses none of it here). `reused` and `read` count the
 * answers taken again and computed (#63: for the operator and the tests).
 * `fresh`: keep nothing old.
 */
class Memo {
  constructor(kept = new Map(), fresh = false) {
    this.kept = fresh ? new Map() : kept;
    this.parsed = new Map();
    // Per binding answered here: `{ entries, changed }`.
    this.learned = new Map();
    // Per binding answered by an owner's child (`merge`): the text to keep.
    this.adopted = new Map();
    this.reused = 0;
    this.read = 0;
  }

  /** The kept answers of binding `b`, parsed once; none where its text is not JSON. */
  keptOf(b) {
    if (!this.parsed.has(b)) {
      let entries = {};
      try {
        if (this.kept.has(b)) entries = JSON.parse(this.kept.get(b)) ?? {};
      } catch {
        // Read again.
      }
      this.parsed.set(b, typeof entries === "object" ? entries : {});
    }
    return this.parsed.get(b);
  }

  take(key, files, compute) {
    const fp = files.map((f) => (f.tree !== undefined ? treeFingerprint(f.tree) : fingerprint(f.file))).join("|");
    const b = bindingOf(key);
    const old = this.keptOf(b)[key];
    if (!this.learned.has(b)) this.learned.set(b, { entries: {}, changed: false });
    const mine = this.learned.get(b);
    if (old !== undefined && old.fp === fp) {
      mine.entries[key] = old;
      this.reused++;
      return old.answer;
    }
    const entry = { fp, answer: compute() };
    mine.entries[key] = entry;
    mine.changed = true;
    this.read++;
    return entry.answer;
  }

  /** How many answers were reused and how many read: `{ reused, read }`. */
  get counts() {
    return { reused: this.reused, read: this.read };
  }

  /** Whether binding `b` was answered here from its kept answers alone, every one of them. */
  unchanged(b) {
    const mine = this.learned.get(b);
    return (
      mine !== undefined && !mine.changed && this.kept.has(b) && Object.keys(mine.entries).length === Object.keys(this.keptOf(b)).length
    );
  }

  /** What to keep: each binding answered, and the JSON text of its answers. */
  lines() {
    const out = new Map(this.adopted);
    for (const [b, mine] of this.learned) out.set(b, this.unchanged(b) ? this.kept.get(b) : JSON.stringify(mine.entries));
    return out;
  }

  /**
   * What an owner's child (cli/fleet-child.js) gives back: the counts, the
   * bindings it answered from their kept answers alone (`unchanged`), and
   * the answers of the others (`changed`).
   */
  report() {
    const unchanged = [];
    const changed = {};
    for (const [b, mine] of this.learned) {
      if (this.unchanged(b)) unchanged.push(b);
      else changed[b] = mine.entries;
    }
    return { reused: this.reused, read: this.read, unchanged, changed };
  }

  /**
   * An owner's child's `report`, kept for `journals` (that owner's
   * bindings, `<journal>\0` each) alone: one owner's process never
   * answers for another's. An unchanged binding keeps the text this
   * process holds, never one the child sends.
   */
  merge({ reused = 0, read = 0, unchanged = [], changed = {} }, journals) {
    const mine = new Set(journals);
    for (const b of unchanged) if (mine.has(b) && this.kept.has(b)) this.adopted.set(b, this.kept.get(b));
    for (const [b, entries] of Object.entries(changed))
      if (mine.has(b)) this.adopted.set(b, JSON.stringify(Object.fromEntries(Object.entries(entries).filter(([k]) => bindingOf(k) === b))));
    this.reused += Number(reused) || 0;
    this.read += Number(read) || 0;
  }

  /** The kept text of the bindings in `journals`, as an owner's child reads it (`readLines`). */
  slice(journals) {
    return writeLines(new Map(journals.filter((b) => this.kept.has(b)).map((b) => [b, this.kept.get(b)])));
  }
}

/**
 * Kept answers as text: a line per binding, its key as JSON, a tab, the
 * JSON of its answers (JSON as `JSON.stringify` writes it holds no raw tab
 * or newline).
 */
const writeLines = (kept) => [...kept].map(([b, text]) => `${JSON.stringify(b)}\t${text}\n`).join("");

/** `writeLines`'s text read back: binding → text. A line that is not one is left out. */
function readLines(text) {
  const kept = new Map();
  for (const line of text.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab < 0) continue;
    let b;
    try {
      b = JSON.parse(line.slice(0, tab));
    } catch {
      continue;
    }
    if (typeof b === "string") kept.set(b, line.slice(tab + 1));
  }
  return kept;
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
  const hash = require("node:crypto").createHash("sha256").update(path.resolve(root)).digest("hex").slice(0, 16);
  return path.join(path.dirname(path.resolve(file)), `discord-journal.${hash}.state`);
}

/**
 * The state a former collection of `root` left at `file`: `{ fullAt, kept
 * }` (`kept` as `Memo` takes it), with `refused` saying why where it is
 * not taken (an empty state then): one this process did not write
 * (another owner, or a mode that lets another user write it) is never
 * taken, so a less privileged process cannot feed a more privileged one;
 * nor one of another SCHEMA or data root.
 */
function loadState(file, root) {
  const empty = (refused) => ({ fullAt: 0, kept: new Map(), refused });
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return empty("not a regular file");
    if (st.uid !== process.geteuid?.()) return empty(`owned by uid ${st.uid}, not this process's`);
    if ((st.mode & 0o077) !== 0) return empty("another user may read or write it");
    const { header, kept } = readState(fs.readFileSync(fd, "utf8"));
    if (header?.schema !== SCHEMA()) return empty("written by code that kept another shape");
    if (header.dataRoot !== path.resolve(root)) return empty("another data root's");
    if (typeof header.fullAt !== "number") return empty("not a state");
    return { fullAt: header.fullAt, kept };
  } catch (e) {
    return empty(e.code === "ENOENT" ? null : (e.code ?? "not a state"));
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** A state's text read: `{ header, kept }`, its first line's JSON and its bindings' (`readLines`). */
function readState(text) {
  const end = text.indexOf("\n");
  return { header: JSON.parse(end < 0 ? text : text.slice(0, end)), kept: readLines(end < 0 ? "" : text.slice(end + 1)) };
}

/** A state's text: `header` (`{ schema, dataRoot, fullAt }`) on its first line, then the bindings' lines. */
const writeState = (header, kept) => `${JSON.stringify(header)}\n${writeLines(kept)}`;

/** The text of the state to keep for `root`: `kept`, binding → text (`Memo.lines`). */
const stateText = (root, fullAt, kept) => writeState({ schema: SCHEMA(), dataRoot: path.resolve(root), fullAt }, kept);

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

module.exports = { Memo, NONE, SCHEMA, SHAPE, keptShape, loadState, readLines, readState, writeState, statePath, stateText, removeFormer };
