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
const { UsageError, Refusal, sh, word, age, capitalized, invocation } = require("./output.js");
const { J, RECORD_FILES } = require("./journal.js");

/** What only a journal holds: one of these makes a directory a journal. */
const JOURNAL_ENTRIES = new Set([...RECORD_FILES, "turns", "STOP", "run.lock", ".stop.lock"]);
/** journal.mjs's binding-name rule (errors.mjs's BINDING_NAME). */
const BINDING_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The journal directory a command names: DIR, or ROOT/discord/NAME. */
function journalDir(dir, opts, command) {
  if (dir !== undefined && opts.binding !== undefined) throw new UsageError("give either DIR or --binding NAME, not both");
  if (dir !== undefined) return hereStill(dir, command);
  if (opts.binding === undefined) {
    throw new UsageError(
      `which journal? give its directory (${invocation()} ${command} data/discord/NAME) or --binding NAME (with --data-root ROOT, default ./data)`,
    );
  }
  if (!BINDING_NAME.test(opts.binding)) {
    throw new UsageError(
      `--binding ${word(opts.binding)} is not a binding name (lowercase letters, digits, _ and -, starting with a letter or digit, at most 63)`,
    );
  }
  return hereStill(path.join(opts.dataRoot, "discord", opts.binding), command);
}

/**
 * `p`, where it leads somewhere: a relative path from a working directory
 * that was deleted leads nowhere (Node's `uv_cwd` ENOENT at the first
 * resolve), which is a usage mistake, said as such.
 */
function hereStill(p, command) {
  if (path.isAbsolute(p)) return p;
  try {
    process.cwd();
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
    throw new UsageError(
      `the working directory is gone (it was deleted), so the relative path ${sh(p)} leads nowhere; nothing was read or changed. ` +
        `Give the journal's absolute path instead (${invocation()} ${command} ${sh(`/path/to/${p.replace(/^(\.\/)+/, "")}`)}), or cd to a directory that exists first`,
    );
  }
  return p;
}

const names = new Map();
/** A user's name from the system's user database (asked once), or null. */
function userName(uid) {
  if (!names.has(uid)) names.set(uid, passwd(uid)?.[0] || null);
  return names.get(uid);
}

/**
 * The user database's entry of `uid`, its fields, or null: getent's (NSS,
 * so LDAP and systemd's dynamic users too), or /etc/passwd's where there
 * is no getent (BusyBox, a minimal container). Asked once a run: each
 * owner's child of a collection asks its name and its group (#63).
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
 * The words, ending in a space, that run a pasted command as `uid` (its
 * group `gid`) from the root shell this command ran in (#57): runuser,
 * else setpriv (both util-linux), else sudo; none is assumed, the first
 * one here is printed, so that the command runs as printed.
 */
function becoming(uid, gid) {
  const name = userName(uid);
  if (name && onPath("runuser")) return `runuser -u ${word(name)} -- `;
  if (onPath("setpriv")) return `setpriv --reuid=${uid} --regid=${gid} --clear-groups -- `;
  return `sudo -u ${word(name ?? `#${uid}`)} `;
}

const octal = (mode) => (mode & 0o7777).toString(8).padStart(4, "0");

/**
 * Fixes that change a mode or an owner, safe to paste whatever the
 * journal's user does to its names meanwhile (#33): `chmod` follows a
 * link, so where root ran the command it runs as that user, who can then
 * change only its own files; `chown` changes a link itself (`-h`), never
 * the file it leads to (and `-R` does not follow links below).
 */
const chmodFix = (t, mode, p) => `\`${t.acting ? becoming(t.st.uid, t.st.gid) : ""}chmod ${mode} ${sh(p)}\``;
const chownFix = (uid, p, dir) => `\`chown ${dir ? "-R" : "-h"} ${word(`${userName(uid) ?? uid}:`)} ${sh(p)}\``;

/** Whether the effective user may `want` (4 read, 2 write, 1 search) by the mode bits. */
function permits(st, want) {
  const uid = process.geteuid();
  if (uid === 0) return true;
  let bits = st.mode & 7;
  if (st.uid === uid) bits = (st.mode >> 6) & 7;
  else if (st.gid === process.getegid() || process.getgroups().includes(st.gid)) bits = (st.mode >> 3) & 7;
  return (bits & want) === want;
}

/** Why root reads a journal as its owner: the user its service runs as. */
const OWNER = "the journal's owner";

/**
 * The refusal of a journal whose own parent the user root acts as cannot
 * search: nothing can be read as that user. Where that user is the
 * journal's owner, the user its service runs as, what the service finds
 * is known all the same, and the refusal is that verdict: stuck.
 */
function closedRefusal(closed, why) {
  const { what, fix } = closed;
  const verdict =
    why === OWNER ? { state: "stuck", canStart: false, why: what, problems: [{ what, fix, blocks: true }], next: fix } : undefined;
  return new Refusal(`${what}; nothing was read or changed. ${capitalized(fix)}, then run the command again`, 1, verdict);
}

/** The refusal of a journal the caller cannot stat: missing (a usage mistake) or out of reach. */
function unreachable(dir, e, argv) {
  if (e.code === "ENOENT" || e.code === "ENOTDIR") {
    return new UsageError(`no journal at ${dir}; check the path (or --data-root and --binding)`);
  }
  // The path itself, not a permission (#34): named as what it is.
  if (e.code === "ELOOP") {
    return new Refusal(
      `cannot reach the journal at ${dir} (ELOOP): symbolic links on its path lead round in a loop; nothing was read or changed. \`namei -l ${sh(dir)}\` shows each step of the path`,
    );
  }
  if (e.code === "ENAMETOOLONG") {
    return new Refusal(
      `cannot reach the journal at ${dir} (ENAMETOOLONG): the path, or a name on it, is longer than the system takes; nothing was read or changed. Give a shorter path to it`,
    );
  }
  return new Refusal(
    `cannot reach the journal at ${dir} (${e.code}): a directory on its path cannot be searched by ${who(process.geteuid())}, ` +
      `who runs this command; run it as the journal's owner or as root: ${asUser(0, argv)}`,
  );
}

/**
 * The user whose rights a command run as root reads and writes the
 * journal at `abs` with (#33): `{ uid, gid, why }`, or null for root's own.
 * The journal directory's owner, the user its service runs as; for a
 * journal that root owns, the last user other than root who controls its
 * path (owns a link on it, or a directory on it, in which that user could
 * swap what follows): root never reads where another user could point it.
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
 * Run as root, become the journal's actor (`actor`) before anything inside
 * the journal is opened, so that what the command reads is what that user
 * may read, and what it writes belongs to it (a STOP root writes is a
 * brake its service cannot read). Its working directory becomes the
 * journal's parent first, as root, so a path whose upper directories are
 * closed to that user (a container's volume on its host) still leads
 * there. Returns `{ at, acting }`: the journal's path from here on, and
 * what it did; throws where it cannot become that user.
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
 * Run as root, become the user a journal not made yet belongs to (that of
 * the nearest directory of its path that exists, as `actor` judges it)
 * before it is made (`stop --init`), so that it is that user's, as the
 * service makes it; the working directory stays. The message, or null.
 */
function becomeMaker(dir, argv) {
  if (process.geteuid() !== 0) return null;
  let base = path.resolve(dir);
  while (!fs.existsSync(base) && path.dirname(base) !== base) base = path.dirname(base);
  const user = actor(base, fs.statSync(base));
  return user === null ? null : becomeActor(dir, null, user, argv).acting;
}

/** What `becomeActor` became in this process, for the journals after the first (`{ acting, why }`), or null. */
let became = null;

/**
 * The journal `command` works on, checked (see the file's head): `{ dir,
 * at, st, entries, link, acting }`: `dir` as given (for what is shown),
 * `at` the path every read and write uses (relative to the journal's
 * parent once a root command acts as the journal's user), `link` where the
 * journal's directory is a symbolic link. `write`: the command writes in
 * it. `argv`: the command as typed, for the one that fixes a refusal.
 */
function reach(dir, { command, write = false, argv }) {
  const abs = path.resolve(dir);
  // Where root became the owner for a journal of the same parent (the
  // fleet's child), this one is reached as that one was: by its name from
  // the parent, the working directory since, which a closed directory
  // above no longer stops.
  const near = became !== null && path.dirname(abs) === became.cwd ? path.basename(abs) : abs;
  let lst;
  let st;
  try {
    lst = fs.lstatSync(near);
    st = lst.isSymbolicLink() ? fs.statSync(near) : lst;
  } catch (e) {
    // The fleet's child, the owner since an earlier binding: this one's
    // parent is closed to it, as it would have been to root become owner.
    const closed = became !== null && (e.code === "EACCES" || e.code === "EPERM") ? closedOnPath(abs, process.geteuid(), became.why) : null;
    if (closed) throw closedRefusal(closed, became.why);
    throw unreachable(dir, e, argv);
  }
  if (!st.isDirectory()) throw new UsageError(`no journal at ${dir} (not a directory); check the path (or --data-root and --binding)`);
  const link = lst.isSymbolicLink() ? { to: fs.readlinkSync(near), uid: lst.uid } : null;
  let at = dir;
  let acting = null;
  let actingWhy = null;
  if (process.geteuid() === 0) {
    const user = actor(abs, st);
    if (user !== null) {
      actingWhy = user.why;
      ({ at, acting } = becomeActor(dir, abs, user, argv));
      became = { acting, why: user.why, cwd: path.dirname(abs) };
      try {
        st = fs.statSync(at);
      } catch (e) {
        const closed = closedOnPath(abs, user.uid, user.why);
        if (closed) throw closedRefusal(closed, user.why);
        throw new Refusal(
          `the journal at ${dir} is out of reach of ${who(user.uid)}, ${user.why} (${e.code}), so its service cannot reach it either; nothing was read or changed. ` +
            `\`namei -l ${sh(dir)}\` shows which directory on the path is closed to it`,
        );
      }
    }
  } else if (became !== null) {
    // Root became the owner for an earlier journal (the fleet's child, one
    // owner's journals): this one is read with the same rights, and said so.
    ({ acting, why: actingWhy } = became);
    at = near;
  }
  // The path from / down as the owner walks it (#45): root reached the
  // journal from its parent, which the service cannot do.
  // Also where this process became the owner before (the fleet's child,
  // one owner's bindings): no other user runs here with closed parents
  // it could not have passed.
  const closed = acting || process.geteuid() !== 0 ? closedOnPath(abs, process.geteuid(), actingWhy ?? OWNER) : null;
  if (closed && write) throw new Refusal(`${closed.what}; nothing was written. ${capitalized(closed.fix)}, then run the command again`);
  const self = process.geteuid();
  const refuse = (what, code) =>
    new Refusal(
      `cannot ${what} the journal at ${dir} (${code}): it belongs to ${who(st.uid)} with mode ${octal(st.mode)}, ` +
        `and this command runs as ${who(self)}; nothing was read or changed. ` +
        (st.uid === self
          ? `Give its owner its rights back: ${chmodFix({ acting, st }, "700", dir)}`
          : `Run it as its owner: ${asUser(st.uid, argv)}`),
    );
  let entries;
  try {
    entries = fs.readdirSync(at);
    // Resolving a name inside needs search permission, which listing does not.
    fs.statSync(path.join(at, "."));
  } catch (e) {
    throw refuse("read", e.code);
  }
  if (write && !permits(st, 2 | 1)) throw refuse("write in", "EACCES");
  if (entries.length > 0 && !entries.some((n) => JOURNAL_ENTRIES.has(n))) {
    const shown = entries.slice(0, 3).join(", ") + (entries.length > 3 ? `, … (${entries.length} in all)` : "");
    throw new UsageError(
      `${dir} is not a binding's journal: it holds ${shown} but none of turns/, the *.jsonl record files, STOP or run.lock; ` +
        `nothing was read or changed. Give a binding's journal directory, <data root>/discord/<binding> (\`${invocation()} ${command} data/discord/NAME\`)`,
    );
  }
  return { dir, abs, at, st, entries, link, acting, closed };
}

/**
 * The directory on the journal's path (`abs`) that the user `uid`, whose
 * rights this process has now, cannot search, as `{ dir, code, what, fix }`,
 * or null: walked from / as its service walks it, so that a journal only
 * root reaches is not called ready (#45). The fix gives that user search
 * alone, on that directory alone.
 */
function closedOnPath(abs, uid, why = OWNER) {
  let cur = path.parse(abs).root;
  for (const name of abs.slice(cur.length).split(path.sep).filter(Boolean)) {
    const next = path.join(cur, name);
    try {
      fs.statSync(next);
    } catch (e) {
      if (e.code !== "EACCES" && e.code !== "EPERM") return null;
      // Closed at `cur` itself, or below a link `next` leads through.
      let linked = false;
      try {
        linked = fs.lstatSync(next).isSymbolicLink();
      } catch {
        // `cur` cannot be searched: that is the closed one.
      }
      const where = linked ? `a directory on the path the symbolic link ${next} leads to` : cur;
      // The class of the closed directory's mode this user falls in: its
      // search bit there is the one to give (o+x alone would not help the
      // owner of the directory or a member of its group).
      let bit = "o+x";
      try {
        const d = fs.statSync(cur);
        if (d.uid === uid) bit = "u+x";
        else if (d.gid === process.getegid() || process.getgroups().includes(d.gid)) bit = "g+x";
      } catch {
        // Not told: others' bit.
      }
      return {
        dir: linked ? next : cur,
        code: e.code,
        what:
          why === OWNER
            ? `${who(uid)}, ${why}, cannot search ${where} (${e.code}), on the journal's path: its service cannot reach the journal by this path (it would read no record, see no STOP, and its start would refuse)`
            : // Root reads a journal of its own as that user (see actor): the service is not that user.
              `${who(uid)}, ${why}, cannot search ${where} (${e.code}): this command reads the journal with that user's rights, since that user could point the path elsewhere, and cannot reach it`,
        fix: linked
          ? `\`namei -l ${sh(next)}\` shows which directory is closed to it; search on that one lets its service through`
          : bit === "o+x"
            ? `\`chmod o+x ${sh(cur)}\` lets every user search it (not list it), its service included (\`setfacl -m ${word(`u:${userName(uid) ?? uid}:x`)} ${sh(cur)}\` lets that user alone, where ACLs are to hand); where its service reaches the journal by another path (a container's mount), run discord-journal there instead`
            : `\`chmod ${bit} ${sh(cur)}\` lets ${bit === "u+x" ? "its owner" : "its group"}, the journal's owner among them, search it`,
      };
    }
    cur = next;
  }
  return null;
}

/**
 * What the journal's file system would refuse a start (#45): a read-only
 * mount (EROFS), no free blocks or no free inodes (ENOSPC), as the user
 * whose rights this process has: `{ what, fix, code }`, or null. `at` is the
 * journal's path as it is reached, `dir` as given; `holder`, the pid here of
 * a connector that holds the binding, whose mount view is the one its
 * appends meet.
 *
 * Judged as the journal's connector finds it, not through a sandbox of
 * this command's own (#63): the shipped unit's ProtectSystem=strict makes
 * every mount read-only in the collector's view alone, where access(2)
 * answers EROFS for a healthy journal. So a read-only mount is judged from
 * the mount tables (mountOf): a file system itself read-only is so in
 * every view; a mount read-only here alone is judged in the connector's
 * view, or PID 1's, where either has the same mount at the journal's path.
 * The other checks do not depend on the view: statfs counts the file
 * system's blocks and inodes, the same through any mount of it; the modes
 * are judged from their bits (permits) and the closed directories as the
 * owner (closedOnPath), whatever capabilities this command keeps.
 */
function fileSystemRefusal(at, dir, holder = null) {
  const mount = mountOf(at, holder);
  const mp = mount ? sh(mount.point) : `"$(findmnt -n -o TARGET -T ${sh(dir)})"`;
  // access(2) says EROFS; where the runtime's accessSync judges by the
  // mode bits alone (Deno's), the mount's read-only flags say it (#48).
  let readOnly = false;
  try {
    fs.accessSync(at, fs.constants.W_OK);
    readOnly = mount !== null && (mount.ro || mount.superRo);
  } catch (e) {
    // EROFS from a mount read-only in this process's view alone is not the
    // connector's (#63). There the kernel answers EROFS before it looks at
    // an immutable flag, which this command then cannot see.
    readOnly = e.code === "EROFS" && (mount === null || mount.ro || mount.superRo);
    // The directory's immutable (or append-only) flag: root's chattr alone lifts it.
    if (e.code === "EPERM")
      return {
        code: "EPERM",
        what: `the journal directory may not be written in by anyone (EPERM: an immutable or append-only flag, \`lsattr -d ${sh(dir)}\` shows it): a start cannot make run.lock`,
        fix: `\`chattr -i -a ${sh(dir)}\` (as root) lifts the flags`,
      };
  }
  if (readOnly) {
    // A bind mount made read-only is remounted as one; a file system
    // mounted read-only, as itself. A mount of the connector's namespace
    // alone is remounted there.
    const bind = mount && mount.ro && !mount.superRo ? "remount,bind,rw" : "remount,rw";
    const enter = mount?.namespaceOf ? `nsenter -t ${mount.namespaceOf} -m ` : "";
    return {
      code: "EROFS",
      what: `the journal's file system is mounted read-only (EROFS${mount ? `, at ${mount.point}` : ""}${enter ? ` in the mount namespace of the connector, pid ${mount.namespaceOf}` : ""}): ${enter ? "it can append no record" : "a start cannot make run.lock, and no record can be appended"}`,
      fix: `\`${enter}mount -o ${bind} ${mp}\` (as root) makes it writable`,
    };
  }
  let free = null;
  try {
    free = fs.statfsSync?.(at) ?? null;
  } catch {
    // Not told: nothing said.
  }
  if (free === null) return null;
  // A start makes run.lock, its owner record and a turn record: three inodes.
  if (free.files > 0 && free.ffree < 3)
    return {
      code: "ENOSPC",
      what: `the journal's file system has ${free.ffree === 0 ? "no free inodes" : `${free.ffree} free ${free.ffree === 1 ? "inode" : "inodes"}, fewer than a start makes (run.lock, its owner record, a turn record)`} (ENOSPC${mount ? `, at ${mount.point}` : ""}): a start cannot make run.lock and its records`,
      fix: `remove files on it by hand (\`df -i ${sh(dir)}\` shows it)`,
    };
  // Root's service may also use the blocks reserved for root.
  if (free.blocks > 0 && (process.geteuid() === 0 ? free.bfree : free.bavail) === 0)
    return {
      code: "ENOSPC",
      what: `the journal's file system is full (ENOSPC${mount ? `, at ${mount.point}` : ""}): a start cannot write its owner record, and no record can be appended`,
      fix: `free space on it by hand (\`df -h ${sh(dir)}\` shows it)`,
    };
  return null;
}

/**
 * The mount `p` is on, `{ point, ro, superRo, namespaceOf }` (the mount's
 * own read-only flag, its file system's, and the connector's pid where the
 * mount is neither this process's nor PID 1's: a namespace of the
 * connector's own), as the journal's connector finds it (#63), or null:
 * this process's mount (from /proc/self/mountinfo) where its file system
 * is read-only or where no other view has it; else the same mount as seen
 * by the connector that holds the binding (`holder`, a pid here), or else
 * by PID 1, which every service starts from. A view "has it" where its
 * path there leads to the same directory of the same file system
 * (mountinfo's major:minor, and its root with the rest of the path): a
 * connector in a container, whose paths differ, is not asked. Every user
 * may read another process's mountinfo, with no capability (unlike its
 * /proc/PID/ns/mnt), so this holds inside the unit's bounding set.
 */
function mountOf(p, holder = null) {
  let real;
  try {
    real = fs.realpathSync(p);
  } catch {
    return null;
  }
  const own = mountAt(mountTable("self"), real);
  if (own === null || own.superRo) return own;
  const same = (m) => m !== null && m.majmin === own.majmin && m.inside === own.inside;
  const init = mountAt(mountTable(1), real);
  if (Number.isInteger(holder) && holder > 1) {
    const theirs = mountAt(mountTable(holder), real);
    // Mount ids are the system's, one per mount in any namespace.
    const shared = theirs?.id === own.id || (same(init) && init.id === theirs?.id);
    if (same(theirs)) return { ...theirs, namespaceOf: shared ? null : holder };
  }
  return same(init) ? init : own;
}

/**
 * The mounts of /proc/PID/mountinfo (`pid` "self" or a number), parsed, or
 * null. Read once a run for each view: the fleet asks it of every binding.
 */
function mountTable(pid) {
  mountTable.seen ??= new Map();
  if (!mountTable.seen.has(pid)) {
    let text = null;
    try {
      text = fs.readFileSync(`/proc/${pid}/mountinfo`, "utf8");
    } catch {
      // Gone, or not this system's: no view.
    }
    mountTable.seen.set(pid, text === null ? null : parseMounts(text));
  }
  return mountTable.seen.get(pid);
}

/** mountinfo's lines as `{ id, parent, majmin, root, point, ro, superRo }`. */
function parseMounts(text) {
  // Octal escapes (\040 for a space) as the kernel writes them.
  const unescape = (f) => f.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
  const mounts = [];
  for (const line of text.split("\n")) {
    const f = line.split(" ");
    const dash = f.indexOf("-", 6);
    if (f.length < 10 || dash < 0) continue;
    mounts.push({
      id: f[0],
      parent: f[1],
      majmin: f[2],
      root: unescape(f[3]),
      point: unescape(f[4]),
      ro: f[5].split(",").includes("ro"),
      superRo: (f[dash + 3] ?? "").split(",").includes("ro"),
    });
  }
  return mounts;
}

/**
 * The mount the path `real` (resolved, absolute) reaches among `mounts`
 * (a view's, parsed), or null: walked down the tree of mounts from the
 * view's root, each step to the child that covers the path at the longest
 * mount point (a mount over another at the same point is the child of the
 * one it hides, so the walk ends on top; one hidden under a later mount at
 * a shorter point hangs below it and is never reached). `{ id, point,
 * majmin, inside, ro, superRo }`, `inside` the path's place in its file
 * system.
 */
function mountAt(mounts, real) {
  if (!mounts) return null;
  const ids = new Set(mounts.map((m) => m.id));
  const covers = (m) => m.point === "/" || real === m.point || real.startsWith(m.point + "/");
  // The view's root: the last mount at / whose parent is outside the view.
  let cur = mounts.findLast((m) => m.point === "/" && !ids.has(m.parent)) ?? null;
  for (let steps = 0; cur && steps < mounts.length; steps++) {
    let next = null;
    for (const m of mounts)
      if (m.parent === cur.id && m !== cur && covers(m) && (next === null || m.point.length >= next.point.length)) next = m;
    if (next === null) break;
    cur = next;
  }
  if (cur === null) return null;
  const { id, point, majmin, ro, superRo } = cur;
  // The path's directory inside its file system: the mount's own root
  // there, and the rest of the path below the mount point.
  const inside = path.posix.join(cur.root, path.posix.relative(point, real));
  return { id, point, majmin, inside, ro, superRo, namespaceOf: null };
}

/**
 * The journal a command names (`journalDir`), checked (`reach`). Run as
 * root, the command becomes the journal's user there, before it opens
 * anything inside (#33): each command's module requires every module it
 * runs at its top, so all are loaded before this, while root can still
 * reach them. `acting`: what the command already did as another user (`stop
 * --init`), said where reach did not act. Said on stderr, not with --json.
 * `args`: the command's own words after the journal (stop's reason,
 * resolve's options), so that a refusal's command runs it again whole.
 */
function target(dir, opts, command, { write = false, acting = null, args = [] } = {}) {
  const d = journalDir(dir, opts, command);
  const flags = [opts.apply === true && "--apply", opts.missingOk === true && "--missing-ok"].filter(Boolean);
  const t = reach(d, { command, write, argv: ["discord-journal", command, d, ...flags, ...args] });
  t.acting ??= acting;
  if (t.acting && !opts.json) console.error(`discord-journal: ${t.acting}`);
  return t;
}

/**
 * Whether the directory `dir` holds what only a journal holds; false where
 * it cannot be listed. Listed once a run: the fleet names every binding
 * through the same parents (a data root's, /tmp's hundreds of entries).
 */
const listed = new Map();
function holdsJournal(dir) {
  if (!listed.has(dir)) {
    let holds = false;
    try {
      holds = fs.readdirSync(dir).some((n) => JOURNAL_ENTRIES.has(n));
    } catch {
      // Not listed: no journal found there.
    }
    listed.set(dir, holds);
  }
  return listed.get(dir);
}

/**
 * How the command names the journal `t` (from `reach`): the library's
 * `journalLabel` (`discord/NAME under the data root`, told by the name
 * alone), but for a journal nested inside another journal, which is no
 * data root's discord/NAME: named by where it lies in that one (#45). The
 * library's label, which its refusals use, stays as it is.
 */
function journalName(t) {
  const abs = t.abs ?? path.resolve(t.dir);
  let up = abs;
  while (path.dirname(up) !== up) {
    up = path.dirname(up);
    if (holdsJournal(up)) return `the journal ${path.relative(up, abs)} inside ${journalName({ abs: up, at: up })}`;
  }
  return J.journalLabel(t.at);
}

/**
 * With --missing-ok, a journal directory that does not exist yet (a
 * binding that has not run: a service unit's first start) is nothing to do,
 * where it would otherwise be a usage mistake. Only under a binding's name.
 */
function notYet(dir, opts, command) {
  if (!opts.missingOk) return false;
  const d = journalDir(dir, opts, command);
  if (!BINDING_NAME.test(path.basename(d))) return false;
  // Only a definite "not there": a path this user cannot search is refused as such below.
  try {
    fs.statSync(d);
    return false;
  } catch (e) {
    return e.code === "ENOENT";
  }
}

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
 * The problem a `.stop.lock` is, judged by the addon's STOP mark (#34,
 * #44): every STOP update of this package holds the mark while its
 * `.stop.lock` exists, so one no mark covers was left by an update that
 * died, whatever its age (a paused update can be any age). Its fix is
 * `repair --apply`, which proves it again as it removes it, so that fix
 * pasted late never removes a live update's. One a live update holds is
 * no problem while it runs, and is named with what frees it when it is
 * stopped. Where it cannot be proved (no mark here, or the judge refused),
 * the operator is asked to make sure, and given `rmdir`. Null where it is
 * gone or an update is inside and running.
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

/**
 * What the directory says of the journal's own entries, and each thing in
 * it that stops or will stop the service that owns the journal (`{ what,
 * fix }`): an entry another user owns, a mode other than 0600 for a file
 * or 0700 for a directory, a `.stop.lock` left behind, STOP as a symlink,
 * a record file, turn record or owner record that is a link out of the
 * journal. `outside` names those links (`{ [rel]: { to, error } }`): the
 * command shows none of their bytes (#33).
 */
// oxlint-disable-next-line max-lines-per-function -- over 100 lines before #65; split in its own change
function survey(target, now = Date.now()) {
  const { dir, at, st, entries } = target;
  const owner = st.uid;
  const found = [];
  const names = {};
  const outside = {};
  // The owner's rights the connector uses on an entry: all three on a
  // directory, read and write on a record file, read on anything else.
  const needs = (rel, lst) => (lst.isDirectory() ? 0o700 : RECORD_FILES.includes(rel) ? 0o600 : 0o400);
  // A link is changed itself (-h): chown follows it otherwise, to a file outside the journal.
  const check = (rel, lst, want) => {
    const p = path.join(dir, rel);
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
        fix: `\`${invocation()} repair ${sh(dir)} --apply\` makes it a file of this journal's own, with every record it holds (the other name keeps the old file); it holds the binding meanwhile, and refuses while a connector runs`,
        file: rel,
        shared: true,
      });
    }
    if (lst.uid !== owner) {
      found.push({
        what: `${rel} belongs to ${who(lst.uid)}, not to ${who(owner)}, who owns the journal (the user its service runs as), which may then be unable to read or replace it`,
        fix: chownFix(owner, p, lst.isDirectory()),
        // The service may not get past it: a verdict counts on nothing it cannot read.
        blocks: true,
      });
    }
    if (!lst.isSymbolicLink() && (lst.mode & 0o7777) !== want) {
      found.push({
        what: `${rel} has mode ${octal(lst.mode)}, not ${octal(want)}${rel === "STOP" ? " (processing stops then refuse: STOP cannot be verified)" : ""}`,
        fix: chmodFix(target, want.toString(8), p),
        // Without the rights the connector uses, it cannot run (#34): a
        // record file read and appended to, a directory listed and written
        // in, an owner record or turn record read (removing one needs its
        // directory's rights, not its own). Root gets past a mode.
        blocks: rel !== "STOP" && owner !== 0 && (lst.mode & needs(rel, lst)) !== needs(rel, lst),
      });
    }
  };
  // A copy beside it, renamed over the link: the link goes in one step,
  // never followed, and a kill leaves the link or the file. Not `cp
  // --remove-destination`: BusyBox's (Alpine's cp) writes through the link
  // instead, and truncates the very file it copies from.
  const copyIn = (as, from, to) =>
    `make it a file of the journal's own, with the same bytes: \`${as}cp ${sh(from)} ${sh(`${to}.new`)} && ${as}mv -f ${sh(`${to}.new`)} ${sh(to)}\``;
  // A record file or turn record that leads out of the journal: named, and
  // the one command that makes it the journal's own again.
  const linkOut = (rel, lst) => {
    const l = leads(at, rel);
    if (!l.outside) return;
    outside[rel] = l;
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
    found.push({
      what: `${rel} is a symbolic link to ${l.to}${why ? ` (${why})` : ""}${then}, and nothing of it is shown here`,
      fix: l.error
        ? `\`rm ${p}\` removes the link alone (what it points to is not touched); the connector starts the file afresh`
        : copyIn(target.acting ? becoming(owner, st.gid) : "", fs.realpathSync(path.join(at, rel)), path.join(dir, rel)),
      blocks: lst.uid !== owner || l.error !== undefined,
      link: true,
    });
  };
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
  // What a repair killed midway left: its unfinished copies, the files
  // themselves untouched (#34). Listed with their size, as they take room.
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
  for (const name of entries) {
    if (!JOURNAL_ENTRIES.has(name)) continue;
    let lst;
    try {
      lst = fs.lstatSync(path.join(at, name));
    } catch {
      continue; // gone since the listing
    }
    const entry = { kind: kind(lst), mode: octal(lst.mode), uid: lst.uid, size: lst.size, mtime: lst.mtime.toISOString() };
    if (!lst.isDirectory() && lst.nlink > 1) entry.links = lst.nlink;
    if (lst.isSymbolicLink()) {
      // What the readers open: the link's target.
      try {
        const to = fs.statSync(path.join(at, name), { throwIfNoEntry: false });
        entry.to = to ? kind(to) : "nothing (a dangling link)";
      } catch (e) {
        entry.to = `what this user cannot reach (${e.code})`;
      }
    }
    names[name] = entry;
    const isDir = lst.isDirectory();
    if (name === "STOP" && lst.isSymbolicLink()) {
      const l = leads(at, name);
      if (l.outside) outside.STOP = l;
      found.push({
        what: `STOP is a symlink${l.outside ? ` to ${l.to}, outside the journal (nothing of it is shown here)` : ""}: every STOP update refuses to follow it (could not write STOP (ELOOP)), and where it leads is what every reader sees`,
        fix: keepBrake(dir),
        link: true,
      });
      continue;
    }
    if (RECORD_FILES.includes(name) && lst.isSymbolicLink()) linkOut(name, lst);
    // turns/ or run.lock as a link. Named, with what the library does with
    // it, and nothing below it shown. A claim's mkdir meets the link
    // (EEXIST); where it leads nowhere, no owner record is found through
    // it and recover and unlock leave it; where it can be followed, the
    // owner record there is judged as any, and a recover or unlock that
    // clears it removes the link itself (#34).
    if ((name === "turns" || name === "run.lock") && lst.isSymbolicLink()) {
      const l = leads(at, name);
      if (l.outside) outside[name] = l;
      const p = sh(path.join(dir, name));
      const does =
        name === "run.lock"
          ? l.error
            ? "every claim refuses it as a run.lock without an owner record, and recover and unlock leave it"
            : "the lock is judged by the owner record it leads to, and a recover or unlock that clears it removes the link alone"
          : l.error
            ? `ensureJournal and every turn record write fail (${l.error})`
            : "the connector reads and writes its turn records where it leads";
      found.push({
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
    if (name !== ".stop.lock") check(name, lst, isDir ? 0o700 : 0o600);
    else {
      const left = stopLockLeft(target, now, lst);
      // Before any fix that updates STOP (unlock, recover, stop), which would refuse.
      if (left) found.push({ ...left, first: true });
    }
    if (name === "run.lock" && isDir) {
      const rel = path.join("run.lock", "owner.json");
      let rec = null;
      try {
        rec = fs.lstatSync(path.join(at, rel));
      } catch {
        // No owner record: the lock's state says so.
      }
      if (rec !== null && rec.isSymbolicLink()) {
        const l = leads(at, rel);
        outside[rel] = l;
        found.push({
          what: `${rel} is a symbolic link to ${l.to}: the connector writes its owner record as a file of its own, never a link, and nothing of it is shown here`,
          fix: `if no connector runs for this binding, \`${invocation()} unlock ${sh(dir)}\` clears the lock (and brakes)`,
          blocks: true,
          link: true,
        });
      } else if (rec !== null) check(rel, rec, 0o600);
    }
    if (name === "turns" && isDir) {
      let records = [];
      try {
        records = fs.readdirSync(path.join(at, "turns"), { withFileTypes: true });
      } catch {
        // The readers say why they cannot list it.
      }
      for (const r of records) {
        if (!r.isSymbolicLink() || !r.name.endsWith(".json")) continue;
        let l;
        try {
          l = fs.lstatSync(path.join(at, "turns", r.name));
        } catch {
          // turns/ listed but not searchable: the readers say why.
          continue;
        }
        linkOut(path.join("turns", r.name), l);
      }
    }
  }
  return { owner: { uid: owner, name: userName(owner) }, runAs: { uid: process.geteuid() }, entries: names, problems: found, outside };
}

/**
 * A name in the journal at `at` for `name` set aside by hand
 * (`<name>.aside-null`, then `-2`, `-3`...): one that does not exist, so
 * a `mv -n` to it moves (#34: to a taken name it does nothing, and the
 * same advice would come back).
 */
function asideName(at, name) {
  for (let n = 1; ; n++) {
    const candidate = `${name}.aside-null${n === 1 ? "" : `-${n}`}`;
    if (!fs.lstatSync(path.join(at, candidate), { throwIfNoEntry: false })) return candidate;
  }
}

/**
 * A line (`place`, its number) or turn record (`place`, its file name) of
 * JSON null that `reader` refuses (#34), in the journal `t`: what it is,
 * and for a turn record the command that sets it aside under a free name
 * (a line is moved by hand: `mv` is null).
 */
function nullFound(t, file, place, reader, refused) {
  if (file !== "turns") return { what: `${file}:${place} is JSON null, not a record; ${reader} refuses it ("${refused}")`, mv: null };
  return {
    what: `turns/${place} is JSON null, not a turn record; ${reader} refuses it ("${refused}")`,
    mv: `\`mv -n ${sh(path.join(t.dir, "turns", place))} ${sh(path.join(t.dir, asideName(t.at, place)))}\``,
  };
}

module.exports = {
  actor,
  becomeActor,
  fileSystemRefusal,
  kind,
  nullFound,
  RECORD_FILES,
  BINDING_NAME,
  journalDir,
  hereStill,
  journalName,
  reach,
  target,
  notYet,
  becomeMaker,
  survey,
  who,
  asUser,
  keepBrake,
  chmodFix,
  chownFix,
};
