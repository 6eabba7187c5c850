// The survey: what the journal directory says of its own entries (type,
// owner, mode: metadata only; every file's content is read through the
// addon), and what in it would stop the service that owns the journal.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { sh, age, invocation } = require("./output.js");
const { RECORD_FILES, JOURNAL_ENTRIES } = require("./journal.js");
const { userName, who, becoming, octal, chmodFix, chownFix } = require("./owner.js");

/**
 * The fix for a STOP that is not a file of its own: replace it with one,
 * keeping the brake on (removing it alone would lift the brake).
 */
function keepBrake(dir) {
  const stop = sh(path.join(dir, "STOP"));
  return `\`rm ${stop} && ${invocation()} stop ${sh(dir)} REASON\` replaces it with a brake of its own (\`rm ${stop}\` alone lifts the brake)`;
}

/** The kind of a file from its lstat. */
function kind(st) {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "directory";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  if (st.isBlockDevice()) return "block device";
  return "file of another kind";
}

/**
 * Where the link `rel` in the journal (at `at`) leads: `{ to, outside,
 * error }`: its text, whether it leaves the journal's directory (or cannot
 * be followed by this user, which is then all that can be said), and why
 * it cannot be followed.
 */
function leads(at, rel) {
  const p = path.join(at, rel);
  const to = fs.readlinkSync(p);
  try {
    const real = fs.realpathSync(p);
    const home = fs.realpathSync(at);
    return { to, outside: !real.startsWith(home + path.sep) };
  } catch (e) {
    return { to, outside: true, error: e.code ?? e.message };
  }
}

/**
 * The problem a `.stop.lock` is, by the addon's STOP mark (#34, #44): every
 * STOP update holds it while its `.stop.lock` exists, so one no mark covers
 * was left by an update that died, at any age; `repair --apply` proves that
 * again as it removes it, so pasted late it never removes a live one's. One
 * a stopped update holds is named with what frees it; one not provable is
 * the operator's to check, with `rmdir`. Null: gone, or an update runs in it.
 */
function stopLockLeft({ dir, at }, now, lst) {
  const { stopLockState, holders } = require("./journal.js");
  const judged = stopLockState(at);
  const { state } = judged;
  const why = judged.why ?? "the STOP mark cannot be asked here: a journal directory this user cannot read, or a kernel without OFD locks";
  if (state === "absent") return null;
  if (state === "held") {
    const h = holders(at).stopLock;
    if (!h?.stalled) return null;
    return {
      what: `.stop.lock is held by ${h.is}, a STOP update stopped inside it: every STOP update (stop, unlock, recover) refuses while it is there ("STOP update is locked")`,
      fix: h.fix,
    };
  }
  const old = age(Math.max(0, Math.round((now - lst.mtimeMs) / 1000)));
  const refuses = `every STOP update (stop, unlock, recover) refuses while it is there ("STOP update is locked")`;
  if (state === "left")
    return {
      what: `.stop.lock was left (${old} ago) by a STOP update that did not finish: none runs now (each holds the STOP mark while .stop.lock exists), and ${refuses}`,
      fix: `\`${invocation()} repair ${sh(dir)} --apply\` removes it, proving again that no STOP update runs`,
    };
  return {
    what: `.stop.lock is present (made ${old} ago), and whether a STOP update is still inside cannot be proved (${why}); ${refuses}`,
    fix: `if no connector, stop, unlock or recover runs for this binding (journal.mjs takes no lock guard), \`rmdir ${sh(path.join(dir, ".stop.lock"))}\``,
  };
}

/** The owner and mode of the entry `rel` (lstat `lst`, mode `want`) of the survey `c`, as problems. */
function check({ target, owner, found }, rel, lst, want) {
  const p = path.join(target.dir, rel);
  // A file with another name shares its owner and mode with that name: a
  // chown or chmod would change the other too (#33).
  if (!lst.isDirectory() && lst.nlink > 1 && (lst.uid !== owner || (lst.mode & 0o7777) !== want)) {
    found.push({
      what: `${rel} has another name (a hard link), and ${lst.uid !== owner ? `belongs to ${who(lst.uid)}` : `has mode ${octal(lst.mode)}`}: changing it would change that other name's file too`,
      fix: `\`mv ${sh(p)} ${sh(`${p}.aside`)}\` sets this name aside (the file keeps its other name); the connector starts the file afresh`,
      blocks: lst.uid !== owner,
    });
    return;
  }
  // A record file with another name is one file under both (#45): where
  // that name is another binding's, each binding reads the other's
  // records and appends to the file both read. The repair gives this
  // name a file of its own, every record kept, holding the binding
  // meanwhile: no append of this binding's can go to the old file (an
  // append waiting as `cp` and `mv` ran would, and be lost here).
  if (RECORD_FILES.includes(rel) && lst.isFile() && lst.nlink > 1) {
    found.push({
      what: `${rel} has another name (a hard link, ${lst.nlink} names in all): it is one file under both, so whatever holds the other name (another binding's journal, a copy) reads this binding's records and appends its own to them, which this binding then reads`,
      fix: `\`${invocation()} repair ${sh(target.dir)} --apply\` makes it a file of this journal's own, with every record it holds (the other name keeps the old file); it holds the binding meanwhile, and refuses while a connector runs`,
      file: rel,
      shared: true,
    });
  }
  // A link is changed itself (-h): chown follows it otherwise, to a file outside the journal.
  if (lst.uid !== owner) {
    found.push({
      what: `${rel} belongs to ${who(lst.uid)}, not to ${who(owner)}, who owns the journal (the user its service runs as), which may then be unable to read or replace it`,
      fix: chownFix(owner, p, lst.isDirectory()),
      // The service may not get past it: a verdict counts on nothing it cannot read.
      blocks: true,
    });
  }
  // The owner's rights the connector uses on an entry: all three on a
  // directory, read and write on a record file, read on anything else.
  const needs = lst.isDirectory() ? 0o700 : RECORD_FILES.includes(rel) ? 0o600 : 0o400;
  if (!lst.isSymbolicLink() && (lst.mode & 0o7777) !== want) {
    found.push({
      what: `${rel} has mode ${octal(lst.mode)}, not ${octal(want)}${rel === "STOP" ? " (processing stops then refuse: STOP cannot be verified)" : ""}`,
      fix: chmodFix(target, want.toString(8), p),
      // Without the rights the connector uses, it cannot run (#34): a
      // record file read and appended to, a directory listed and written
      // in, an owner record or turn record read (removing one needs its
      // directory's rights, not its own). Root gets past a mode.
      blocks: rel !== "STOP" && owner !== 0 && (lst.mode & needs) !== needs,
    });
  }
}

/**
 * A copy beside it, renamed over the link: the link goes in one step, never
 * followed, a kill leaving the link or the file. Not `cp --remove-destination`:
 * BusyBox's writes through the link, truncating the file it copies from.
 */
const copyIn = (as, from, to) =>
  `make it a file of the journal's own, with the same bytes: \`${as}cp ${sh(from)} ${sh(`${to}.new`)} && ${as}mv -f ${sh(`${to}.new`)} ${sh(to)}\``;

/** A record file or turn record `rel` that leads out of the journal: named, and the command that makes it its own. */
function linkOut(c, rel, lst) {
  const { target, owner } = c;
  const { dir, at, st } = target;
  const l = leads(at, rel);
  if (!l.outside) return;
  c.outside[rel] = l;
  // One that leads to a FIFO or a device is refused by the readers
  // (EFTYPE), and their refusal names it.
  if (l.error === undefined && !fs.statSync(path.join(at, rel)).isFile()) return;
  const p = sh(path.join(dir, rel));
  const why = l.error === "ENOENT" ? "it leads nowhere" : l.error ? `${who(process.geteuid())} cannot follow it: ${l.error}` : null;
  // Where the link cannot be followed, where it leads is not known, and the connector's own reads fail too.
  const then =
    l.error === undefined
      ? ", outside the journal: the connector reads and writes where it leads"
      : l.error === "ENOENT"
        ? ": the connector's next append makes the file where it leads"
        : `: the connector's reads and appends of it fail too (${l.error})`;
  c.found.push({
    what: `${rel} is a symbolic link to ${l.to}${why ? ` (${why})` : ""}${then}, and nothing of it is shown here`,
    fix: l.error
      ? `\`rm ${p}\` removes the link alone (what it points to is not touched); the connector starts the file afresh`
      : copyIn(target.acting ? becoming(owner, st.gid) : "", fs.realpathSync(path.join(at, rel)), path.join(dir, rel)),
    blocks: lst.uid !== owner || l.error !== undefined,
    link: true,
  });
}

/** The journal directory's mode, and the unfinished copies a repair killed midway left (#34), with their size. */
function directoryProblems({ target, owner, found }) {
  const { dir, at, st, entries } = target;
  if ((st.mode & 0o7777) !== 0o700) {
    // Without write and search for its owner, nothing else can be fixed first (#34).
    const first = (st.mode & 0o300) !== 0o300;
    found.push({
      what: `the journal directory has mode ${octal(st.mode)}, not 0700`,
      fix: chmodFix(target, "700", dir),
      ...(first ? { first } : {}),
      // Its owner can make and remove nothing in it: no claim, no append (root gets past a mode).
      ...(first && owner !== 0 ? { blocks: true } : {}),
    });
  }
  const temps = [];
  for (const sub of [".", "turns"]) {
    let names = [];
    try {
      names = sub === "." ? entries : fs.readdirSync(path.join(at, sub));
    } catch {
      continue;
    }
    for (const n of names.filter((n) => n.startsWith(".repair-") && n.endsWith(".tmp"))) {
      const rel = sub === "." ? n : path.join(sub, n);
      let size;
      try {
        size = fs.lstatSync(path.join(at, rel)).size;
      } catch {
        // Gone, or in a directory that cannot be searched: the readers say so.
      }
      if (size !== undefined) temps.push(`${rel} (${size} bytes)`);
    }
  }
  if (temps.length > 0) {
    found.push({
      what: `a repair that was stopped left its unfinished ${temps.length === 1 ? "copy" : "copies"}: ${temps.join(", ")}; the files themselves are as they were`,
      fix: `\`${invocation()} repair ${sh(dir)} --apply\` removes ${temps.length === 1 ? "it" : "them"} and finishes the repair`,
    });
  }
}

/** An entry as status shows it, from its lstat; for a link, what the readers open through it. */
function entryOf(at, name, lst) {
  const entry = { kind: kind(lst), mode: octal(lst.mode), uid: lst.uid, size: lst.size, mtime: lst.mtime.toISOString() };
  if (!lst.isDirectory() && lst.nlink > 1) entry.links = lst.nlink;
  if (lst.isSymbolicLink()) {
    try {
      const to = fs.statSync(path.join(at, name), { throwIfNoEntry: false });
      entry.to = to ? kind(to) : "nothing (a dangling link)";
    } catch (e) {
      entry.to = `what this user cannot reach (${e.code})`;
    }
  }
  return entry;
}

/**
 * turns/ or run.lock as a link, nothing below it shown: a claim's mkdir meets
 * it; one leading nowhere is left by recover and unlock, one followed is
 * judged as any, and clearing it removes the link (#34).
 */
function linkedDirectory(c, name) {
  const { dir, at } = c.target;
  const l = leads(at, name);
  if (l.outside) c.outside[name] = l;
  const p = sh(path.join(dir, name));
  const does =
    name === "run.lock"
      ? l.error
        ? "every claim refuses it as a run.lock without an owner record, and recover and unlock leave it"
        : "the lock is judged by the owner record it leads to, and a recover or unlock that clears it removes the link alone"
      : l.error
        ? `ensureJournal and every turn record write fail (${l.error})`
        : "the connector reads and writes its turn records where it leads";
  c.found.push({
    what: `${name} is a symbolic link to ${l.to}${l.outside && !l.error ? ", outside the journal" : ""}: ${does}, and nothing below it is shown here`,
    fix:
      name === "run.lock"
        ? `\`rm ${p}\` removes the link alone (a connector's lock is a directory, never a link; what it points to is not touched)`
        : `\`mv ${p} ${p}.aside && mkdir -m 700 ${p}\` sets the link aside (what it points to is not touched) and gives the journal a turns/ of its own`,
    // A run.lock link that can be followed is a lock like any other to the library.
    blocks: name !== "run.lock" || l.error !== undefined,
    link: true,
  });
}

/** The journal's own entry `name` (lstat `lst`) judged, with what lies under it: problems added to the survey `c`. */
function surveyEntry(c, name, lst, now) {
  const { target } = c;
  const isDir = lst.isDirectory();
  if (name === "STOP" && lst.isSymbolicLink()) {
    const l = leads(target.at, name);
    if (l.outside) c.outside.STOP = l;
    c.found.push({
      what: `STOP is a symlink${l.outside ? ` to ${l.to}, outside the journal (nothing of it is shown here)` : ""}: every STOP update refuses to follow it (could not write STOP (ELOOP)), and where it leads is what every reader sees`,
      fix: keepBrake(target.dir),
      link: true,
    });
    return;
  }
  if (RECORD_FILES.includes(name) && lst.isSymbolicLink()) linkOut(c, name, lst);
  if ((name === "turns" || name === "run.lock") && lst.isSymbolicLink()) linkedDirectory(c, name);
  if (name !== ".stop.lock") check(c, name, lst, isDir ? 0o700 : 0o600);
  else {
    const left = stopLockLeft(target, now, lst);
    // Before any fix that updates STOP (unlock, recover, stop), which would refuse.
    if (left) c.found.push({ ...left, first: true });
  }
  // run.lock's owner record: a link out, or its owner and mode as any entry's.
  if (name === "run.lock" && isDir) {
    const rel = path.join("run.lock", "owner.json");
    let rec = null;
    try {
      rec = fs.lstatSync(path.join(target.at, rel));
    } catch {
      // No owner record: the lock's state says so.
    }
    if (rec !== null && rec.isSymbolicLink()) {
      const l = leads(target.at, rel);
      c.outside[rel] = l;
      c.found.push({
        what: `${rel} is a symbolic link to ${l.to}: the connector writes its owner record as a file of its own, never a link, and nothing of it is shown here`,
        fix: `if no connector runs for this binding, \`${invocation()} unlock ${sh(target.dir)}\` clears the lock (and brakes)`,
        blocks: true,
        link: true,
      });
    } else if (rec !== null) check(c, rel, rec, 0o600);
  }
  // The turn records that are links, each judged as a record file that is one.
  if (name === "turns" && isDir) {
    let records = [];
    try {
      records = fs.readdirSync(path.join(target.at, "turns"), { withFileTypes: true });
    } catch {
      // The readers say why they cannot list it.
    }
    for (const r of records) {
      if (!r.isSymbolicLink() || !r.name.endsWith(".json")) continue;
      let l;
      try {
        l = fs.lstatSync(path.join(target.at, "turns", r.name));
      } catch {
        // turns/ listed but not searchable: the readers say why.
        continue;
      }
      linkOut(c, path.join("turns", r.name), l);
    }
  }
}

/**
 * What the directory says of the journal's own entries, and each thing that
 * stops or will stop its service (`{ what, fix }`): another user's entry, a
 * mode not 0600 (0700 a directory), a `.stop.lock` left, a link (STOP, or
 * out of the journal). `outside` names the links out, none of whose bytes
 * the command shows (#33).
 */
function survey(target, now = Date.now()) {
  const { at, st, entries } = target;
  const owner = st.uid;
  const c = { target, owner, found: [], outside: {} };
  const names = {};
  directoryProblems(c);
  for (const name of entries) {
    if (!JOURNAL_ENTRIES.has(name)) continue;
    let lst;
    try {
      lst = fs.lstatSync(path.join(at, name));
    } catch {
      continue; // gone since the listing
    }
    names[name] = entryOf(at, name, lst);
    surveyEntry(c, name, lst, now);
  }
  const { found, outside } = c;
  return { owner: { uid: owner, name: userName(owner) }, runAs: { uid: process.geteuid() }, entries: names, problems: found, outside };
}

/**
 * A free name in the journal at `at` for `name` set aside by hand
 * (`<name>.aside-null`, `-2`...), so that a `mv -n` to it moves (#34).
 */
function asideName(at, name) {
  for (let n = 1; ; n++) {
    const candidate = `${name}.aside-null${n === 1 ? "" : `-${n}`}`;
    if (!fs.lstatSync(path.join(at, candidate), { throwIfNoEntry: false })) return candidate;
  }
}

/**
 * A line (`place`, its number) or turn record (its file name) of JSON null
 * that `reader` refuses (#34): what it is, and for a turn record the command
 * that sets it aside (`mv`; a line is moved by hand).
 */
function nullFound(t, file, place, reader, refused) {
  if (file !== "turns") return { what: `${file}:${place} is JSON null, not a record; ${reader} refuses it ("${refused}")`, mv: null };
  return {
    what: `turns/${place} is JSON null, not a turn record; ${reader} refuses it ("${refused}")`,
    mv: `\`mv -n ${sh(path.join(t.dir, "turns", place))} ${sh(path.join(t.dir, asideName(t.at, place)))}\``,
  };
}

module.exports = { survey, kind, keepBrake, nullFound };
