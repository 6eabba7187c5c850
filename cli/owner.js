// Acting as the journal's owner (#33): who a user is, the words that run a
// pasted command as one, and the user a command run as root becomes before
// it opens anything inside a journal, so that it reads what that user may.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const { Refusal, sh, word, invocation } = require("./output.js");

const names = new Map();
/** A user's name from the system's user database (asked once), or null. */
function userName(uid) {
  if (!names.has(uid)) names.set(uid, passwd(uid)?.[0] || null);
  return names.get(uid);
}

/**
 * The user database's entry of `uid`, its fields, or null: getent's (NSS:
 * LDAP, systemd's dynamic users), else /etc/passwd's (BusyBox). Asked once
 * a run: each owner's child of a collection asks its name and group (#63).
 */
const entries = new Map();
function passwd(uid) {
  if (!entries.has(uid)) entries.set(uid, lookUp(uid));
  return entries.get(uid);
}

/** `passwd`'s answer, asked of the system. */
function lookUp(uid) {
  const r = spawnSync("getent", ["passwd", String(uid)], { encoding: "utf8" });
  if (!r.error) return r.status === 0 ? r.stdout.trim().split(":") : null;
  try {
    const entry = fs
      .readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((l) => l.split(":")[2] === String(uid));
    return entry ? entry.split(":") : null;
  } catch {
    return null;
  }
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
  const [self, ...args] = argv;
  return `sudo ${user}${self === "discord-journal" ? invocation() : sh(self)} ${args.map((a, i) => (i === 1 ? sh(a) : word(a))).join(" ")}`;
}

/** Whether `tool` is a command on this process's PATH. */
const onPath = (tool) =>
  (process.env.PATH ?? "").split(path.delimiter).some((d) => {
    try {
      fs.accessSync(path.join(d || ".", tool), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

/**
 * The words, ending in a space, that run a pasted command as `uid` (group
 * `gid`) from the root shell this ran in (#57): runuser, else setpriv, else
 * sudo, the first one here, so that the command runs as printed.
 */
function becoming(uid, gid) {
  const name = userName(uid);
  if (name && onPath("runuser")) return `runuser -u ${word(name)} -- `;
  if (onPath("setpriv")) return `setpriv --reuid=${uid} --regid=${gid} --clear-groups -- `;
  return `sudo -u ${word(name ?? `#${uid}`)} `;
}

const octal = (mode) => (mode & 0o7777).toString(8).padStart(4, "0");

/**
 * Fixes of a mode or an owner, safe to paste whatever the journal's user
 * does meanwhile (#33): `chmod` follows a link, so it runs as that user
 * where root ran this; `chown` changes a link itself (`-h`; `-R` follows none).
 */
const chmodFix = (t, mode, p) => `\`${t.acting ? becoming(t.st.uid, t.st.gid) : ""}chmod ${mode} ${sh(p)}\``;
const chownFix = (uid, p, dir) => `\`chown ${dir ? "-R" : "-h"} ${word(`${userName(uid) ?? uid}:`)} ${sh(p)}\``;

/** Why root reads a journal as its owner: the user its service runs as. */
const OWNER = "the journal's owner";

/**
 * The user whose rights a command run as root uses on the journal at `abs`
 * (#33): `{ uid, gid, why }`, or null for root's own: its owner, whom its
 * service runs as; for one of root's, the last other user who controls its
 * path (owns a link or directory on it): root never reads where another points.
 */
function actor(abs, st) {
  if (st.uid !== 0) return { uid: st.uid, gid: st.gid, why: OWNER };
  let found = null;
  // A directory of root's that a group or everyone may write in (and not
  // sticky) lets them swap what is in it: read with no more than their rights.
  const shared = (dir, d) => {
    if (d.uid !== 0 || d.mode & 0o1000) return;
    if (d.mode & 0o002) found = { uid: NOBODY, gid: NOGROUP, group: true, why: `as anyone may write in ${dir}, on the journal's path` };
    else if (d.mode & 0o020 && d.gid !== 0)
      found = {
        uid: NOBODY,
        gid: d.gid,
        group: true,
        why: `with group ${d.gid} alone, as that group may write in ${dir}, on the journal's path`,
      };
  };
  let cur = path.parse(abs).root;
  for (const name of abs.slice(cur.length).split(path.sep).filter(Boolean)) {
    const parent = fs.statSync(cur);
    if (parent.uid !== 0) found = { uid: parent.uid, gid: parent.gid, why: `who owns ${cur}, on the journal's path` };
    shared(cur, parent);
    const p = path.join(cur, name);
    const l = fs.lstatSync(p);
    if (l.isSymbolicLink()) {
      if (l.uid !== 0) found = { uid: l.uid, gid: l.gid, why: `who owns the symbolic link ${p}, on the journal's path` };
      cur = fs.realpathSync(p);
    } else cur = p;
  }
  shared(cur, st);
  return found;
}

const NOBODY = 65534;
const NOGROUP = 65534;

/** A user's primary group from the system's user database, or null. */
function primaryGroup(uid) {
  const gid = Number(passwd(uid)?.[3] ?? NaN);
  return Number.isInteger(gid) ? gid : null;
}

/**
 * Run as root, become the journal's actor before anything inside is opened:
 * it reads what that user may, and what it writes is that user's (a STOP of
 * root's is a brake its service cannot read). It moves to the journal's
 * parent first, as root, so a path closed to that user above (a container's
 * volume) still leads there. `{ at, acting }`: the journal's path from here
 * on, and what it did; throws where it cannot become that user.
 */
function becomeActor(dir, abs, who_, argv) {
  const { uid, why } = who_;
  const name = userName(uid);
  // A user with no entry in the user database (a container's uid) has no
  // group to be known by: it is given none (65534, nogroup), never the
  // group of a directory it was found by, which may be a privileged one.
  const gid = who_.group ? who_.gid : name ? (primaryGroup(uid) ?? NOGROUP) : NOGROUP;
  const cannot = (reason) =>
    new Refusal(
      `the journal at ${dir} is read with the rights of ${who(uid)}, ${why}, and this command cannot act as that user (${reason}); ` +
        `nothing was read or changed. Run it as that user: ${asUser(uid, argv)}`,
    );
  if (!process.seteuid || !process.setegid) throw cannot("this runtime cannot change its user");
  // Deno has neither initgroups nor setgroups: root's groups would stay.
  if (!process.initgroups && !process.setgroups) throw cannot("this runtime cannot set its groups, and root's would stay");
  try {
    if (abs !== null) process.chdir(path.dirname(abs));
    if (name && !who_.group && process.initgroups) process.initgroups(name, gid);
    else process.setgroups([gid]);
    // The real ids too, for good: access(2), which existsSync and so
    // readPid ask, checks the real uid, and root's would find an owner
    // record its user cannot read (#34). The command never needs root again.
    if (process.setgid && process.setuid) {
      process.setgid(gid);
      process.setuid(uid);
    } else {
      process.setegid(gid);
      process.seteuid(uid);
    }
  } catch (e) {
    try {
      process.seteuid(0);
      process.setegid(0);
      process.setgroups?.([0]);
    } catch {
      // Still root, or never left it.
    }
    throw cannot(e.code ?? e.message);
  }
  const groups = who_.group
    ? `gid ${gid} and no other group`
    : name
      ? "its uid, gid and groups"
      : "its uid, and no group (it has no entry in the user database)";
  return {
    at: abs === null ? dir : path.basename(abs) || ".",
    acting: `acting as ${who(uid)}, ${why} (${groups}): what it cannot read is not shown`,
  };
}

/**
 * Run as root, become the user a journal not made yet belongs to (`actor`
 * of the nearest directory of its path that exists) before `stop --init`
 * makes it, as its service would; the message, or null.
 */
function becomeMaker(dir, argv) {
  if (process.geteuid() !== 0) return null;
  let base = path.resolve(dir);
  while (!fs.existsSync(base) && path.dirname(base) !== base) base = path.dirname(base);
  const user = actor(base, fs.statSync(base));
  return user === null ? null : becomeActor(dir, null, user, argv).acting;
}

module.exports = { OWNER, userName, who, asUser, becoming, octal, chmodFix, chownFix, actor, becomeActor, becomeMaker };
