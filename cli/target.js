// Which journal a command works on, and what every command checks before
// anything else, so that no answer is built on what it could not see:
//
// 1. the directory exists and is a directory (else a usage mistake, exit 2);
// 2. this user can list and search it, and write in it for a command that
//    writes (else exit 1, naming the path, the error, who owns it and who
//    runs the command, and the command to run instead): the library answers
//    "no STOP", "no lock" for a journal it cannot search, as journal.mjs does;
// 3. it is a journal: empty (a binding that has not run yet), or holding
//    turns/, a record file, STOP or run.lock (else exit 2): a data root or
//    /etc is not a binding to brake or recover.
//
// Then `survey` reads what the directory says of its entries (type, owner,
// mode: metadata only; every file's content is read through the addon) and
// names what would stop the service that owns the journal.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const { UsageError, Refusal, sh, age } = require("./output.js");

const RECORD_FILES = ["inbox.jsonl", "outbox.jsonl", "drops.jsonl", "admissions.jsonl", "notices.jsonl", "reloads.jsonl"];
/** What only a journal holds: one of these makes a directory a journal. */
const JOURNAL_ENTRIES = new Set([...RECORD_FILES, "turns", "STOP", "run.lock", ".stop.lock"]);
/** journal.mjs's binding-name rule (errors.mjs's BINDING_NAME). */
const BINDING_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The journal directory a command names: DIR, or ROOT/discord/NAME. */
function journalDir(dir, opts, command) {
  if (dir !== undefined && opts.binding !== undefined) throw new UsageError("give either DIR or --binding NAME, not both");
  if (dir !== undefined) return dir;
  if (opts.binding === undefined) {
    throw new UsageError(
      `which journal? give its directory (discord-journal ${command} data/discord/NAME) or --binding NAME (with --data-root ROOT, default ./data)`,
    );
  }
  if (!BINDING_NAME.test(opts.binding)) {
    throw new UsageError(
      `--binding ${sh(opts.binding)} is not a binding name (lowercase letters, digits, _ and -, starting with a letter or digit, at most 63)`,
    );
  }
  return path.join(opts.dataRoot, "discord", opts.binding);
}

const names = new Map();
/** A user's name from the system's user database (asked once), or null. */
function userName(uid) {
  if (!names.has(uid)) {
    const r = spawnSync("getent", ["passwd", String(uid)], { encoding: "utf8" });
    names.set(uid, (r.status === 0 && r.stdout.split(":")[0]) || null);
  }
  return names.get(uid);
}

/** `alice (uid 1000)`, or `uid 1000` for a uid with no name. */
function who(uid) {
  const name = userName(uid);
  return name ? `${name} (uid ${uid})` : `uid ${uid}`;
}

/** How to run `argv` as `uid`: `sudo` for root, `sudo -u NAME` (or `#UID`) for another. */
function asUser(uid, argv) {
  const name = userName(uid);
  const user = uid === 0 ? "" : `-u ${name ?? `'#${uid}'`} `;
  return `sudo ${user}${argv.map(sh).join(" ")}`;
}

const octal = (mode) => (mode & 0o7777).toString(8).padStart(4, "0");

/** Whether the effective user may `want` (4 read, 2 write, 1 search) by the mode bits. */
function permits(st, want) {
  const uid = process.geteuid();
  if (uid === 0) return true;
  let bits = st.mode & 7;
  if (st.uid === uid) bits = (st.mode >> 6) & 7;
  else if (st.gid === process.getegid() || process.getgroups().includes(st.gid)) bits = (st.mode >> 3) & 7;
  return (bits & want) === want;
}

/**
 * The journal `command` works on, checked (see the file's head): `{ dir,
 * st, entries }`. `write`: the command writes in it. `argv`: the command
 * as typed, for the one that fixes a refusal.
 */
function reach(dir, { command, write = false, argv }) {
  let st;
  try {
    st = fs.statSync(dir);
  } catch (e) {
    if (e.code === "ENOENT" || e.code === "ENOTDIR") {
      throw new UsageError(`no journal at ${dir}; check the path (or --data-root and --binding)`);
    }
    throw new Refusal(
      `cannot reach the journal at ${dir} (${e.code}): a directory on its path cannot be searched by ${who(process.geteuid())}, ` +
        `who runs this command; run it as the journal's owner or as root: ${asUser(0, argv)}`,
    );
  }
  if (!st.isDirectory()) throw new UsageError(`no journal at ${dir} (not a directory); check the path (or --data-root and --binding)`);
  const refuse = (what, code) =>
    new Refusal(
      `cannot ${what} the journal at ${dir} (${code}): it belongs to ${who(st.uid)} with mode ${octal(st.mode)}, ` +
        `and this command runs as ${who(process.geteuid())}; nothing was read or changed. Run it as its owner: ${asUser(st.uid, argv)}`,
    );
  let entries;
  try {
    entries = fs.readdirSync(dir);
    // Resolving a name inside needs search permission, which listing does not.
    fs.statSync(path.join(dir, "."));
  } catch (e) {
    throw refuse("read", e.code);
  }
  if (write && !permits(st, 2 | 1)) throw refuse("write in", "EACCES");
  if (entries.length > 0 && !entries.some((n) => JOURNAL_ENTRIES.has(n))) {
    const shown = entries.slice(0, 3).join(", ") + (entries.length > 3 ? `, … (${entries.length} in all)` : "");
    throw new UsageError(
      `${dir} is not a binding's journal: it holds ${shown} but none of turns/, the *.jsonl record files, STOP or run.lock; ` +
        `nothing was read or changed. Give a binding's journal directory, <data root>/discord/<binding> (\`discord-journal ${command} data/discord/NAME\`)`,
    );
  }
  return { dir, st, entries };
}

/**
 * Run as root on a journal that another user owns, a command that writes
 * acts as that user (its uid, gid and groups), so that STOP and what else
 * it creates belong to the service that owns the journal and stay readable
 * by it: STOP written by root is a brake its service cannot read, and its
 * `recover` would refuse with EACCES on every start. Where that user cannot
 * reach the journal (a parent directory closed to it), the command stays
 * root and says so. Returns what it did, for the output.
 */
function actAsOwner(target) {
  const { dir, st } = target;
  if (process.geteuid() !== 0 || st.uid === 0) return null;
  const name = userName(st.uid);
  try {
    // Deno has neither initgroups nor setgroups: the groups stay root's
    // (usually group 0 alone); uid and gid, which own what it writes, are
    // the owner's all the same.
    if (name && process.initgroups) process.initgroups(name, st.gid);
    else process.setgroups?.([st.gid]);
    process.setegid(st.gid);
    process.seteuid(st.uid);
    fs.statSync(path.join(dir, "."));
    return `acting as ${who(st.uid)}, the journal's owner, so that what it writes stays readable by the service`;
  } catch (e) {
    process.seteuid(0);
    process.setegid(0);
    process.setgroups?.([0]);
    return `the journal's owner, ${who(st.uid)}, cannot reach it (${e.code ?? e.message}); acting as root: what this writes belongs to root`;
  }
}

/**
 * The fix for a STOP that is not a file of its own: replace it with one,
 * keeping the brake on (removing it alone would lift the brake).
 */
function keepBrake(dir) {
  const stop = sh(path.join(dir, "STOP"));
  return `\`rm ${stop} && discord-journal stop ${sh(dir)} REASON\` replaces it with a brake of its own (\`rm ${stop}\` alone lifts the brake)`;
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
 * What the directory says of the journal's own entries, and each thing in
 * it that stops or will stop the service that owns the journal (`{ what,
 * fix }`): an entry another user owns, a mode other than 0600 for a file
 * or 0700 for a directory, a `.stop.lock` left behind, STOP as a symlink.
 */
function survey(target, now = Date.now()) {
  const { dir, st, entries } = target;
  const owner = st.uid;
  const found = [];
  const names = {};
  const chown = (p, recursive) => `\`chown ${recursive ? "-R " : ""}${sh(`${userName(owner) ?? owner}:`)} ${sh(p)}\``;
  const check = (rel, lst, want) => {
    const p = path.join(dir, rel);
    if (lst.uid !== owner) {
      found.push({
        what: `${rel} belongs to ${who(lst.uid)}, not to ${who(owner)}, who owns the journal (the user its service runs as), which may then be unable to read or replace it`,
        fix: chown(p, lst.isDirectory()),
        // The service may not get past it: a verdict counts on nothing it cannot read.
        blocks: true,
      });
    }
    if (!lst.isSymbolicLink() && (lst.mode & 0o7777) !== want) {
      found.push({
        what: `${rel} has mode ${octal(lst.mode)}, not ${octal(want)}${rel === "STOP" ? " (processing stops then refuse: STOP cannot be verified)" : ""}`,
        fix: `\`chmod ${want.toString(8)} ${sh(p)}\``,
      });
    }
  };
  if ((st.mode & 0o7777) !== 0o700) {
    found.push({ what: `the journal directory has mode ${octal(st.mode)}, not 0700`, fix: `\`chmod 700 ${sh(dir)}\`` });
  }
  for (const name of entries) {
    if (!JOURNAL_ENTRIES.has(name)) continue;
    let lst;
    try {
      lst = fs.lstatSync(path.join(dir, name));
    } catch {
      continue; // gone since the listing
    }
    const entry = { kind: kind(lst), mode: octal(lst.mode), uid: lst.uid, size: lst.size, mtime: lst.mtime.toISOString() };
    if (lst.isSymbolicLink()) {
      // What the readers open: the link's target.
      const to = fs.statSync(path.join(dir, name), { throwIfNoEntry: false });
      entry.to = to ? kind(to) : "nothing (a dangling link)";
    }
    names[name] = entry;
    const isDir = lst.isDirectory();
    if (name === "STOP" && lst.isSymbolicLink()) {
      found.push({
        what: "STOP is a symlink: every STOP update refuses to follow it (could not write STOP (ELOOP)), and where it leads is what every reader sees",
        fix: keepBrake(dir),
      });
      continue;
    }
    if (name !== ".stop.lock") check(name, lst, isDir ? 0o700 : 0o600);
    else {
      const seconds = Math.max(0, Math.round((now - lst.mtimeMs) / 1000));
      found.push({
        what: `.stop.lock is left (${age(seconds)} old): a STOP update that did not finish holds it, and every STOP update refuses while it is there ("STOP update is locked")`,
        fix: `if no STOP update is running, \`rmdir ${sh(path.join(dir, ".stop.lock"))}\``,
      });
    }
    if (name === "run.lock" && isDir) {
      try {
        const rec = fs.lstatSync(path.join(dir, "run.lock", "owner.json"));
        check(path.join("run.lock", "owner.json"), rec, 0o600);
      } catch {
        // No owner record: the lock's state says so.
      }
    }
  }
  return { owner: { uid: owner, name: userName(owner) }, runAs: { uid: process.geteuid() }, entries: names, problems: found };
}

module.exports = { RECORD_FILES, BINDING_NAME, journalDir, reach, actAsOwner, survey, who, asUser, keepBrake };
