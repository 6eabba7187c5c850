// Whether the journal can be reached: by this process, and by its service as
// its owner walks the path from / (#45); and what its file system would
// refuse a start. Run as root, reached as the journal's owner (cli/owner.js).
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { UsageError, Refusal, sh, word, capitalized, invocation } = require("./output.js");
const { JOURNAL_ENTRIES } = require("./journal.js");
const { OWNER, userName, who, asUser, octal, chmodFix, actor, becomeActor } = require("./owner.js");

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
 * The refusal of a journal whose parent the user root acts as cannot
 * search; where that user is its owner, whom its service runs as, what the
 * service finds is known all the same, and the refusal is that verdict: stuck.
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

/** What `becomeActor` became in this process, for the journals after the first (`{ acting, why }`), or null. */
let became = null;

/**
 * The journal `command` works on, checked (cli/target.js's head): `{ dir,
 * at, st, entries, link, acting }`: `dir` as given, to show; `at` the path
 * every read and write uses (from the parent once root acts as the owner);
 * `link` where it is a symbolic link. `write`: the command writes in it;
 * `argv`: the command as typed, for the one that fixes a refusal.
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
 * rights this process has, cannot search (`{ dir, code, what, fix }`), or
 * null: walked from / as its service walks it (#45); the fix gives that
 * user search alone, on that directory alone.
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
 * mount (EROFS), no free blocks or inodes (ENOSPC): `{ what, fix, code }`,
 * or null. `at`: the journal's path as reached, `dir` as given; `holder`:
 * the pid here of a connector that holds the binding.
 *
 * Judged as the connector finds it, not through this command's sandbox
 * (#63): the unit's ProtectSystem=strict makes every mount read-only in the
 * collector's view alone. So a read-only mount is judged from the mount
 * tables (mountOf), in the connector's view or PID 1's where they have the
 * same mount; statfs's counts are the same through any mount, and modes are
 * judged by their bits (permits), whatever capabilities this command keeps.
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
 * The mount `p` is on as the connector finds it (#63), `{ point, ro,
 * superRo, namespaceOf }` (the mount's read-only flag, its file system's,
 * the connector's pid where the mount is its namespace's alone), or null:
 * this process's where its file system is read-only or no other view has
 * it; else the holder's (`holder`), else PID 1's. A view "has it" where its
 * path leads to the same directory of the same file system (major:minor,
 * root and the rest of the path). Any user may read another's mountinfo.
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
 * The mount the path `real` (resolved) reaches among a view's `mounts`, or
 * null: down the tree from the view's root, each step to the child covering
 * the path at the longest point (a mount over another at the same point is
 * its child, so the walk ends on top). `inside`: the path in its file system.
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

module.exports = { reach, fileSystemRefusal };
