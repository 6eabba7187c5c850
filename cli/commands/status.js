// `discord-journal status`: what a binding's journal says, as data (the
// rendering is status-text.js), and a verdict monitoring can alert on: can
// the binding start, and if not, why, with the one command that moves it
// on. Every read goes through the addon, so a file the connector cannot
// read is shown as unreadable, never as empty; a state that could not be
// read is never given as a verdict.
"use strict";

const path = require("node:path");
const { J, scanLines, scanTurns, refusalOf, ownerElsewhere, seesEveryProcess, repairRunning, holders } = require("../journal.js");
const { FILE, shownReader } = require("../readers.js");
const { NONE } = require("../memo.js");
const {
  RECORD_FILES,
  nullFound,
  survey,
  keepBrake,
  chmodFix,
  chownFix,
  target,
  journalName,
  fileSystemRefusal,
  kind: kindOf,
} = require("../target.js");
const fs = require("node:fs");
const { render } = require("../status-text.js");
const { zombieOf, stoppedOf, zombieProblem, recoversOnly } = require("../brake.js");
const { sh, word, wordable, ago, UsageError, invocation } = require("../output.js");
const { fleet } = require("../fleet.js");
const { collect, idleAsOwner } = require("../prometheus.js");

/** The notices the connector sends once a day (journal.mjs: the ceiling notice). */
const NOTICE_KINDS = ["ceiling"];
/** How long a running holder of the lock guard is given before status calls its hold lasting (#55). */
const LASTING_MS = 250;
/**
 * The window, in seconds, within which Discord deduplicates a message sent
 * again with the same nonce ("the past few minutes"). The connector's
 * reconcile measures it from a delivery's `intentAt` (journal.mjs) and
 * sends again only within it, since past it a resend may post twice: a
 * delivery older than this with no outcome is a person's to tell (#56).
 * DiscordDeliveriesUnresolved pages on the same figure.
 */
const DEDUPE_WINDOW_S = 600;

/** A reader's answer, or its refusal's message. */
function attempt(f) {
  try {
    return { value: f() };
  } catch (e) {
    return { refused: String(e?.message ?? e) };
  }
}

/** What each kind of damage is, in a sentence's middle. */
const DAMAGE = {
  cut: "cut short (an append interrupted by a crash or a kill)",
  zeros: "zero bytes (blocks the file system allocated but never wrote, as a power loss leaves them)",
  blank: "whitespace alone (spaces, tabs or a stray carriage return, as a hand or an editor leaves them: no record, and not JSON)",
  torn: "the last line, not JSON and without its newline (an append that stopped mid-write)",
  invalid: "not JSON, and no more bytes could make it so (corruption)",
};

/**
 * The command that deals with damage found by the scan: what a crash left
 * (a cut line, zeros, an empty or cut turn record) and whitespace alone are
 * `repair`'s; corruption is a person's.
 */
const damageFix = (dir, damage) =>
  damage === "invalid"
    ? `corruption is never changed by a repair: \`${invocation()} check ${sh(dir)}\` gives each bad line's place and bytes; move it out by hand, keeping its bytes`
    : `\`${invocation()} repair ${sh(dir)} --apply\` sets it aside, keeping its bytes in the journal (without --apply it shows what it would do)`;

/** The one command for a file a reader cannot read, by the refusal's code. */
function readFix(t, name, refusal, entry, owner) {
  const { dir } = t;
  const p = sh(path.join(dir, name));
  const code = /\(([A-Z_]+)\)$/.exec(refusal)?.[1];
  // Not the journal's state but this process's, or the system's: nothing in the journal to change (#34).
  if (code === "EMFILE")
    return `this command may open no more files (EMFILE: its limit, \`ulimit -n\`, is too low); raise it, then run \`${invocation()} status ${sh(dir)}\` again`;
  if (code === "ENFILE")
    return `the system may open no more files (ENFILE: \`cat /proc/sys/fs/file-nr\` shows its table); close some, then run \`${invocation()} status ${sh(dir)}\` again`;
  // STOP is the brake: the connector never makes it again, so it is replaced, not removed.
  if ((code === "EFTYPE" || entry?.kind === "symlink") && name === "STOP") return keepBrake(dir);
  // Never chown or chmod through a link: that changes the file it leads to, outside the journal.
  if (entry?.kind === "symlink" && code !== "EFTYPE")
    return `\`rm ${p}\` removes the link alone (what it points to is not touched); the connector starts the file afresh`;
  if (code === "EFTYPE") {
    const what = entry?.to ? `a symlink to a ${entry.to}` : `a ${entry?.kind ?? "file of another kind"}`;
    return `\`rm ${p}\` (${what} holds no record${name.startsWith("turns") ? "" : "; the connector makes the file again"})`;
  }
  if ((code === "EACCES" || code === "EPERM") && entry?.links > 1)
    return `\`mv ${p} ${p}.aside\` sets this name aside (it has another name, which keeps the file); the connector starts the file afresh`;
  if (code === "EACCES" || code === "EPERM") {
    // Already the owner's: its mode is what keeps the owner out.
    const file = path.join(dir, name);
    if (entry !== undefined && entry.uid === owner.uid) return chmodFix(t, "600", file);
    return `give it back to the journal's owner: ${chownFix(owner.uid, file, false)}, then ${chmodFix(t, "600", file)}`;
  }
  // A directory at STOP is a brake all the same: moving it aside alone would lift it.
  if (code === "EISDIR" && name === "STOP")
    return `a directory stands where STOP belongs: \`mv ${p} ${p}.aside && ${invocation()} stop ${sh(dir)} REASON\` replaces it with a brake of its own (\`mv\` alone lifts the brake)`;
  if (code === "EISDIR") return `a directory stands where the file belongs: look inside it, then \`mv ${p} ${p}.aside\``;
  return `inspect ${p} by hand`;
}

/** The fix for a directory of the journal its owner cannot list or search. */
function dirFix(t, name, entry, owner) {
  const p = path.join(t.dir, name);
  if (entry !== undefined && entry.uid === owner.uid) return chmodFix(t, "700", p);
  return `give it back to the journal's owner: ${chownFix(owner.uid, p, true)}, then ${chmodFix(t, "700", p)}`;
}

/** A turn record's entry as the survey describes entries (`{ kind, uid, links }`), from its lstat; undefined where gone. */
function turnEntry(t, file) {
  const st = fs.lstatSync(path.join(t.at, "turns", file), { throwIfNoEntry: false });
  return st === undefined ? undefined : { kind: kindOf(st), uid: st.uid, links: st.nlink };
}

/** The owner record's pid as shown: none where the record is a link out of the journal. */
const pidOf = (owner) => owner?.pid ?? "(not shown)";

/**
 * What to run next for the lock, given the brake: with an operator's STOP,
 * `recover` refuses (the brake is on), so a dead owner's lock is cleared by
 * `unlock` and the binding runs again once STOP is removed.
 */
function lockNext(dir, state, braked, lock = null) {
  const d = sh(dir);
  if (state === "unknown" && lock?.elsewhere) {
    return `a connector in another PID namespace holds the binding (pid ${lock.elsewhere} here): \`${invocation()} stop ${d}\` brakes it (it is signalled from its own namespace only); never unlock or recover it from here`;
  }
  if ((state === "dead" || state === "mismatch") && lock && !lock.seesEveryProcess) {
    return `this command cannot see every PID namespace: where no connector runs for this binding in any container, \`${invocation()} recover ${d}\` in the connector's own namespace, before it starts`;
  }
  const clear = braked
    ? `\`${invocation()} unlock ${d}\`, then \`rm ${sh(path.join(dir, "STOP"))}\` when the binding should run again`
    : `\`${invocation()} recover ${d}\``;
  switch (state) {
    case "absent":
      // recover clears it as it clears a dead owner's (journal.mjs): STOP is
      // written first, so a start still in progress withdraws.
      return `no owner record: a start crashed before publishing it, or one in progress withdraws once STOP is written: ${clear}`;
    case "invalid":
      return `inspect ${sh(J.ownerPath(dir))} by hand; if no connector runs for this binding, \`rm -r ${sh(J.lockPath(dir))}\``;
    case "dead":
      return `the owner is gone: ${clear}`;
    case "mismatch":
      return `the pid now belongs to another process: ${clear}`;
    case "unknown":
      return `alive but unverifiable: stop that process by hand, then \`${invocation()} unlock ${d}\``;
    default:
      if (lock?.repair)
        return `a repair holds the binding (pid ${pidOf(lock.owner)}) until it is done: let it finish, then \`${invocation()} status ${d}\``;
      // Under a brake the connector starts no new turn; it runs again once STOP is removed.
      if (braked) return `a connector runs under the brake: \`rm ${sh(path.join(dir, "STOP"))}\` when it should take turns again`;
      return `a connector runs: \`${invocation()} stop ${d}\` to brake it`;
  }
}

/** The oldest late delivery as a problem, the others counted; its fix is `resolve` once a person has looked. */
function deliveryProblem(dir, late) {
  const d = late[0];
  // A backtick of the journal's would read as the end of the command.
  const shown = (v) => String(v).replaceAll("`", "\\u0060");
  const where = d.channel === null ? "its channel" : `channel ${shown(d.channel)}`;
  const since =
    d.ageSeconds !== null
      ? `since ${d.intentAt} (${ago(d.ageSeconds)})`
      : d.intentAt === null
        ? "since its intent, which has no time"
        : `since ${JSON.stringify(d.intentAt)}, which is no date`;
  const more = late.length > 1 ? ` (and ${late.length - 1} more)` : "";
  // --nonce=N: a nonce such as -V is the option's value, never an option.
  const resolve = (as) => `\`${invocation()} resolve ${sh(dir)} --nonce=${word(String(d.nonce))} --as ${as}\``;
  const record = wordable(String(d.nonce))
    ? `${resolve("confirmed")} if it is there, ${resolve("refused")} if it is not`
    : `record what you found with appendOutbox ({ nonce, status: "confirmed" } or "refused"): the nonce holds a NUL or a lone surrogate, which no command's argument can carry, so no command is printed`;
  return {
    what: `delivery ${shown(d.nonce)}${more} has had no outcome ${since}, past the ${DEDUPE_WINDOW_S / 60}-minute window in which Discord deduplicates a resend: the connector does not send it again, and whether it reached ${where} is a person's to tell`,
    fix: `look in ${where} for the message sent then (nonce ${shown(d.nonce)}); then ${record}`,
  };
}

/** A delivery's `intentAt` as a time, or null where it is no date. */
function when(v) {
  const t = typeof v === "string" ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? null : t;
}

/**
 * A delivery's age in seconds (negative for a date ahead of this clock,
 * null where `intentAt` is no date) and whether it is past the dedupe
 * window: a person's to tell, and so is a date that is no date, which
 * gives no window to measure. `status` and `resolve` judge it here alike.
 */
function lateness(intentAt, now) {
  const at = when(intentAt);
  const ageSeconds = at === null ? null : Math.round((now - at) / 1000);
  return { ageSeconds, pastWindow: ageSeconds === null || ageSeconds > DEDUPE_WINDOW_S };
}

/** What stands for the bytes of a file that is a link out of the journal (#33). */
const NOT_SHOWN = (name) => `${name} is a symbolic link out of the journal: nothing of it is shown`;

/**
 * A reader's refusal the scan does not explain. Where the scan saw a line
 * (or a turn record) that is JSON null, that is what the reader refuses:
 * whole JSON, which a repair never changes, so a person moves it out,
 * keeping its bytes (#34). A turn record is a file of its own, so its one
 * command is given.
 */
function nullProblem(target, file, reader, refused, at) {
  const { dir } = target;
  if (at === undefined || !/ of null /.test(refused))
    return { p: { what: `${reader} refuses: ${refused}`, fix: `\`${invocation()} check ${sh(dir)}\` names the line` }, isNull: false };
  const { what, mv } = nullFound(target, file, at, reader, refused);
  const fix = mv
    ? `${mv} moves it out of turns/, keeping its bytes in the journal; a repair never changes a record that is whole JSON`
    : `a repair never changes a line that is whole JSON: move line ${at} out of ${sh(path.join(dir, file))} by hand, keeping its bytes (\`${invocation()} check ${sh(dir)}\` gives its place)`;
  return { p: { what, fix }, isNull: true };
}

/**
 * The status of the journal `target` (from target.reach), as one object.
 * Every read goes through `at`; what is shown names `dir`. Of a file that
 * is a link out of the journal, nothing it holds is shown (#33): its bad
 * line is placed, not quoted; its nonces, STOP lines, last reload and
 * owner record are left out, and their count or state stands for them.
 */
// oxlint-disable-next-line max-lines-per-function -- over 100 lines before #65; split in its own change
function status(target, now = Date.now(), memo = NONE, later = null) {
  const { dir, at } = target;
  // What a metrics collection keeps of each reader's answer (cli/memo.js):
  // keyed by the binding and the reader, with the files it read.
  const kept = (what, files, f) => memo.take(`${target.abs ?? path.resolve(dir)}\0${what}`, files, f);
  const file = (name) => ({ file: path.join(at, name) });
  const today = J.utcDate(now);
  const seen = survey(target, now);
  const out = (name) => seen.outside[name] !== undefined;
  const files = {};
  const scans = {};
  // A reader's answer, or its refusal where the scan tells it without
  // reading the file whole again (a run of zeros may be gigabytes, #34).
  const read = (name, f) => {
    const told = refusalOf(scans[name], name);
    return told === null ? attempt(f) : { refused: told };
  };
  for (const name of RECORD_FILES) {
    const scan = kept(`scan\0${name}`, [file(name)], () => attempt(() => scanLines(at, name)));
    scans[name] = scan.value;
    if (scan.value === null) continue;
    if (scan.refused !== undefined) files[name] = { refused: scan.refused };
    else {
      const { size, lines, bad, badCount, unterminated } = scan.value;
      // Whether a repair would refuse the file: a line of corruption (or more bad lines than were named).
      const corrupt = bad.some((b) => b.damage === "invalid") || badCount > bad.length;
      const first = bad.length === 0 ? {} : { firstBadLine: out(name) ? { ...bad[0], head: undefined } : bad[0] };
      // A line that is JSON null is whole JSON, so no bad line, but a reader that reads a field of each refuses it.
      const nullLine = scan.value.nulls.length > 0 ? { nullLine: scan.value.nulls[0] } : {};
      files[name] = { lines, bytes: size, badLines: badCount, corrupt, ...first, ...nullLine, unterminated };
    }
  }
  const tree = { tree: path.join(at, "turns") };
  let turns = kept("turns", [tree], () => attempt(() => scanTurns(at)));
  if (out("turns") && turns.value) turns = { notShown: NOT_SHOWN("turns") };
  // Kept as columns (#63): an outbox may hold thousands, and the kept
  // answers are parsed, passed on and written whole at each collection.
  let unresolved = kept("unresolved", [file(FILE.outbox)], () =>
    read(FILE.outbox, () => {
      const rows = J.unresolvedOutbox(at)
        .map((e) => ({
          nonce: e.nonce,
          status: e.status,
          intentAt: e.intentAt ?? null,
          channel: typeof e.channel === "string" ? e.channel : null,
          t: when(e.intentAt),
        }))
        // By time; those whose intent is no date last, in the file's order.
        .sort((a, b) => (a.t ?? Infinity) - (b.t ?? Infinity) || 0);
      return Object.fromEntries(["nonce", "status", "intentAt", "channel"].map((k) => [k, rows.map((r) => r[k])]));
    }),
  );
  if (unresolved.value) {
    const { nonce, status: merged, intentAt, channel } = unresolved.value;
    unresolved = {
      value: nonce.map((n, i) => ({
        nonce: n,
        status: merged[i],
        intentAt: intentAt[i],
        channel: channel[i],
        ...lateness(intentAt[i], now),
      })),
    };
  }
  if (out(FILE.outbox) && unresolved.value) unresolved = { count: unresolved.value.length, notShown: NOT_SHOWN(FILE.outbox) };
  const onToday = {
    admissions: kept(`admissions\0${today}`, [file(FILE.admissions)], () => read(FILE.admissions, () => J.countAdmissionsOn(at, today))),
    turns: out("turns")
      ? { notShown: NOT_SHOWN("turns") }
      : kept(`turnsOn\0${today}`, [tree], () => attempt(() => J.countTurnsOn(at, today))),
    notices: kept(`notices\0${today}`, [file(FILE.notices)], () =>
      read(FILE.notices, () => NOTICE_KINDS.filter((k) => J.noticeOn(at, k, today))),
    ),
  };
  let reloads = kept("reloads", [file(FILE.reloads)], () => read(FILE.reloads, () => J.readReloads(at)));
  // readInboxIds is asked only where its answer can differ from the scan's:
  // a line that is JSON null (the inbox may be the largest file).
  const inboxIds = files[FILE.inbox]?.nullLine ? read(FILE.inbox, () => J.readInboxIds(at)) : {};
  if (out(FILE.reloads) && reloads.value) reloads = { notShown: NOT_SHOWN(FILE.reloads) };
  // STOP is a brake whatever it holds: present is what every reader asks.
  // The brake is what stopRequested says, the connector's own question: a
  // STOP that is a dangling link is no brake to it (#34); the survey names
  // the link on top of that.
  const requested = attempt(() => J.stopRequested(at));
  let stop = { present: requested.value ?? seen.entries.STOP !== undefined, ...attempt(() => J.readStop(at)) };
  if (out("STOP") && stop.value) stop = { present: stop.present, lines: stop.value.length, notShown: NOT_SHOWN("STOP") };
  let lock = null;
  if (seen.entries["run.lock"] !== undefined) {
    let owner = J.readPid(at);
    const state = J.ownerState(owner);
    if ((out("run.lock") || out(path.join("run.lock", "owner.json"))) && owner !== null) owner = { notShown: NOT_SHOWN("run.lock") };
    // Beyond the library's state, what the command can tell of the owner's
    // namespace: alive in one below this (its pid here), and whether this
    // process sees every process (a container does not: an owner "gone"
    // from here may run in another).
    lock = {
      owner,
      state,
      elsewhere: state === "unknown" ? ownerElsewhere(owner) : null,
      seesEveryProcess: seesEveryProcess(),
      // A live owner may be a repair, which holds the binding as a claim does (#34).
      repair: state === "live" && repairRunning(at),
      // A live owner that is a zombie: dead, its parent not having reaped
      // it, so kill(pid, 0) still finds it (#45).
      zombie: state === "live" ? zombieOf(owner) : null,
      // A live owner that is stopped (a frozen container, SIGSTOP, a
      // debugger): it holds the binding and takes no turn (#56).
      stopped: state === "live" ? stoppedOf(owner) : null,
    };
  }
  // Who holds what an operation would wait for, from the kernel (#44): the
  // lock guard, run.lock marked by a live process, .stop.lock, and the
  // record files' append locks (#55).
  const held = holders(at);
  if (lock) lock.holder = held.lock;
  const s = {
    verdict: null,
    journal: target.abs ?? path.resolve(dir),
    label: journalName(target),
    ...(target.link ? { journalLink: target.link.to } : {}),
    today,
    owner: seen.owner,
    files,
    turns:
      turns.value === undefined
        ? turns
        : {
            records: turns.value.records,
            badRecords: turns.value.badCount,
            bad: turns.value.bad,
            ...(turns.value.nulls.length > 0 ? { nullRecord: turns.value.nulls[0] } : {}),
          },
    unresolvedDeliveries: unresolved,
    onToday,
    lastReload: reloads.value ? (reloads.value.at(-1) ?? null) : reloads,
    stop,
    lock,
    guard: held.guard,
    // Each record file's append lock holder, where one holds it (#55).
    appendLocks: held.records,
    entries: seen.entries,
    // What repairs set aside here, kept for a person to look at.
    setAside: target.entries.filter((n) => n.includes(".aside-") && !n.startsWith(".")).sort(),
    ...(target.acting ? { acting: target.acting } : {}),
  };
  // What lies around the journal and would refuse its service (#45): a
  // directory on its path closed to its owner, a file system that refuses
  // writes. Named first: no other fix helps while they stand.
  // The file system as the connector holding the binding finds it (#63).
  const holder = lock?.state === "live" ? lock.owner?.pid : (lock?.elsewhere ?? null);
  const around = [target.closed, fileSystemRefusal(at, dir, holder)].filter(Boolean);
  const judged = () => {
    s.verdict = verdict(
      target,
      s,
      [...around.map((p) => ({ what: p.what, fix: p.fix, blocks: true, first: true })), ...seen.problems],
      inboxIds,
    );
  };
  judged();
  // A running holder of the guard or of an append lock is a start, a
  // release or an append in progress, which lets go within milliseconds;
  // /proc/locks tells no time a lock was taken, so one look more, after
  // LASTING_MS, tells it from one that keeps it, which every start or
  // append would wait for and then refuse (#55), and tells a holder that
  // does not move (no thread runnable, no CPU time gained) from one that
  // works (#64). A collection of many bindings makes that second look once
  // for all of them (`later`, cli/fleet.js).
  if ([held.guard, ...Object.values(held.records)].some((h) => h && !h.stalled)) {
    const again = () => {
      secondLook(held, holders(at, JSON.stringify(held)));
      s.guard = held.guard;
      s.appendLocks = held.records;
      judged();
    };
    if (later) later.push({ due: Date.now() + LASTING_MS, again });
    else {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LASTING_MS);
      again();
    }
  }
  return s;
}

/**
 * The second look at the holders `first` (changed in place) by the look
 * `second`: a holder still there (one of the first look's holders, or none
 * visible both times) is the second look's, `lasting` where it still
 * moves; one gone is gone; one new is a moment's unless it is stalled
 * (#55, #64).
 */
function secondLook(first, second) {
  const still = (a, b) => a.pid === b.pid || a.all?.some((h) => h.pid === b.pid);
  const keep = (a, b) => (a && b && still(a, b) ? { ...b, lasting: !b.stalled } : a && b && b.stalled ? b : null);
  first.guard = keep(first.guard, second.guard);
  const records = {};
  for (const [name, h] of Object.entries(first.records)) {
    const k = keep(h, second.records[name]);
    if (k) records[name] = k;
  }
  first.records = records;
}

/** What a holder that does not let go is doing, for a problem's words. */
function stillness(h) {
  return (
    {
      stopped: "is stopped",
      traced: "is stopped by a debugger or tracer and does not move",
      frozen: "is frozen",
      idle: "does not move",
    }[h.state] ?? "does not let go"
  );
}

/**
 * The verdict: `{ canStart, state, why, next, problems }`. `state` is
 * unreadable (canStart null: it could not be told), damaged, stuck (a hand
 * is needed), braked, running, crashed (the last run died holding the
 * lock; `recover` clears it) or ready. Each problem is `{ what, fix }`,
 * with `blocks: true` where it keeps the connector from its work.
 */
// oxlint-disable-next-line max-lines-per-function -- over 100 lines before #65; split in its own change
function verdict(target, s, found, inboxIds) {
  const { dir } = target;
  // What stops every read first; owners and modes after.
  const problems = [];
  // What each problem is, for the order of fixes (`first`): "unreadable",
  // "corrupt", "repair" (damage a repair sets aside) or "first" (a link
  // out, a directory its owner cannot write).
  const kind = new Map();
  let unreadable = false;
  let damaged = false;
  const sawFile = new Set();
  for (const [name, f] of Object.entries(s.files)) {
    if (f.refused !== undefined) {
      unreadable = true;
      sawFile.add(name);
      const p = {
        what: `every read of ${name} refuses: ${f.refused}`,
        fix: readFix(target, name, f.refused, s.entries[name], s.owner),
      };
      problems.push(p);
      kind.set(p, "unreadable");
    } else if (f.badLines > 0) {
      damaged = true;
      sawFile.add(name);
      const b = f.firstBadLine;
      const more = f.badLines > 1 ? ` (and ${f.badLines - 1} more bad ${f.badLines === 2 ? "line" : "lines"})` : "";
      const p = {
        what: `${name}:${b.line} is ${DAMAGE[b.damage]}${more}; every read of ${name} refuses ("${name}:${b.line}: not valid JSON")`,
        fix: damageFix(dir, f.corrupt ? "invalid" : b.damage),
      };
      problems.push(p);
      kind.set(p, f.corrupt ? "corrupt" : "repair");
    }
  }
  if (s.turns.refused !== undefined) {
    unreadable = true;
    sawFile.add("turns");
    // The process's own limit is named; anything else about the directory is a person's to look at.
    const fix = /\((EMFILE|ENFILE)\)$/.test(s.turns.refused)
      ? readFix(target, "turns", s.turns.refused, s.entries.turns, s.owner)
      : /\((EACCES|EPERM)\)$/.test(s.turns.refused)
        ? dirFix(target, "turns", s.entries.turns, s.owner)
        : `inspect ${sh(path.join(dir, "turns"))} by hand`;
    const p = { what: `the turn records cannot be listed: ${s.turns.refused}`, fix };
    problems.push(p);
    kind.set(p, "unreadable");
  } else if (s.turns.badRecords > 0) {
    damaged = true;
    sawFile.add("turns");
    const b = s.turns.bad[0];
    const what = b.refusal ?? `is ${b.size === 0 ? "empty (its write never came)" : DAMAGE[b.damage]}`;
    const more = s.turns.badRecords > 1 ? ` (and ${s.turns.badRecords - 1} more)` : "";
    const p = {
      what: `turns/${b.file} ${b.refusal ? `cannot be read: ${what}` : what}${more}; listTurns and the daily ceiling refuse`,
      fix: b.refusal
        ? readFix(target, path.join("turns", b.file), b.refusal, turnEntry(target, b.file), s.owner)
        : damageFix(dir, b.damage),
    };
    problems.push(p);
    kind.set(p, b.refusal ? "unreadable" : b.damage === "invalid" ? "corrupt" : "repair");
  }
  // A reader's refusal that no scan explains (a line that is JSON null, a
  // file too large for a string): the reader's own words, and the line or
  // record that is JSON null where the scan saw one.
  // Each answer is its file's shown reader's (cli/readers.js), named there.
  const answers = [
    [FILE.inbox, inboxIds],
    [FILE.outbox, s.unresolvedDeliveries],
    [FILE.admissions, s.onToday.admissions],
    ["turns", s.onToday.turns],
    [FILE.notices, s.onToday.notices],
    [FILE.reloads, s.lastReload ?? {}],
  ];
  for (const [file, r] of answers) {
    const reader = shownReader(file);
    if (r.refused === undefined || sawFile.has(file)) continue;
    damaged = true;
    sawFile.add(file);
    const { p, isNull } = nullProblem(target, file, reader, r.refused, file === "turns" ? s.turns.nullRecord : s.files[file]?.nullLine);
    problems.push(p);
    if (isNull) kind.set(p, "corrupt");
  }
  const stop = s.stop;
  if (stop.refused !== undefined) {
    unreadable = true;
    const p = {
      what: `STOP is present but cannot be read: ${stop.refused}; it is a brake all the same`,
      fix: readFix(target, "STOP", stop.refused, s.entries.STOP, s.owner),
    };
    problems.push(p);
    kind.set(p, "unreadable");
  }
  const lockState = s.lock?.state;
  const ours = stop.present && recoversOnly(stop.value) && lockState !== "live";
  const braked = stop.present && !ours;
  const stopLockLeft = s.entries[".stop.lock"] !== undefined;
  let state;
  let why;
  let next = null;
  if (unreadable) {
    state = "unreadable";
    why = "part of the journal could not be read, so whether the binding can start cannot be told";
  } else if (damaged) {
    state = "damaged";
    why = "a record file or turn record that the connector reads on start is damaged";
  } else if (braked) {
    state = "braked";
    const said = (l) =>
      `${l.reason === "" ? "no reason given" : (l.reason ?? "a line not written by the connector")}${l.at ? ` at ${l.at}` : ""}`;
    const last = stop.value?.at(-1);
    // The first line is who braked it; an unlock's or a recover's line
    // after it must not hide that reason, which `rm STOP` lifts as well.
    const first = stop.value?.length > 1 ? `, on since ${said(stop.value[0])}` : "";
    why = stop.notShown
      ? `STOP is on: ${stop.notShown}`
      : last
        ? `STOP is on: ${said(last)}${first}`
        : "STOP is on: it is empty (a STOP write cut short, or made by hand), and an empty STOP is a brake all the same";
    // Lifting the brake would not be enough: recover and every claim
    // refuse this lock too, so it needs a hand now (exit 1).
    if (lockState === "invalid" || (lockState === "unknown" && !s.lock.elsewhere)) {
      const p = {
        what: `run.lock ${lockState === "invalid" ? "has an owner record that cannot be read" : `belongs to pid ${pidOf(s.lock.owner)}, which is alive but whose identity cannot be verified`}: recover and every claim refuse it, also once STOP is removed`,
        fix: lockNext(dir, lockState, true, s.lock),
      };
      problems.push(p);
    }
    next =
      s.lock && s.lock.state !== "live"
        ? lockNext(dir, s.lock.state, true, s.lock)
        : s.lock
          ? lockNext(dir, "live", true, s.lock)
          : `the brake is on: \`rm ${sh(path.join(dir, "STOP"))}\` when the binding should run again`;
  } else if (lockState === "unknown" && s.lock.elsewhere) {
    state = "running";
    why = `a connector runs in another PID namespace (pid ${pidOf(s.lock.owner)} there, pid ${s.lock.elsewhere} here)`;
    next = lockNext(dir, lockState, false, s.lock);
  } else if (s.lock && (lockState === "invalid" || lockState === "unknown")) {
    state = "stuck";
    why = {
      invalid: "run.lock has an owner record that cannot be read",
      unknown: `run.lock belongs to pid ${pidOf(s.lock.owner)}, which is alive but whose identity cannot be verified`,
    }[lockState];
    next = lockNext(dir, lockState, false);
  } else if (s.lock?.holder && lockState !== "live" && !s.lock.holder.stalled) {
    // A live process holds run.lock marked (held.rs): a start or a release
    // in progress, or an owner this process cannot check; recover and
    // unlock refuse it as they refuse a live owner.
    state = "running";
    why = `${s.lock.holder.is} holds run.lock: a start or a release in progress, or a connector whose record cannot be checked from here`;
    next = `${s.lock.holder.fix}, then \`${invocation()} status ${sh(dir)}\``;
  } else if (lockState === "live" && s.lock.zombie) {
    // Named among the problems below, whatever the state.
    state = "stuck";
    why = zombieProblem(dir, s.lock.zombie).what;
  } else if (lockState === "live") {
    state = "running";
    why = s.lock.repair
      ? `a repair runs (pid ${pidOf(s.lock.owner)}) and holds the binding`
      : `a connector runs (pid ${pidOf(s.lock.owner)})`;
    next = lockNext(dir, "live", false, s.lock);
  } else if (s.lock || ours) {
    // recover writes (lock) or removes (its own STOP) under .stop.lock.
    state = stopLockLeft ? "stuck" : "crashed";
    why = !s.lock
      ? "a recover did not finish and left its own STOP; the next `recover` removes it"
      : lockState === "absent"
        ? "run.lock has no owner record: a start crashed before publishing it (or one is in progress, and withdraws once STOP is written); a supervised start (`recover`) clears it"
        : s.lock.seesEveryProcess
          ? `the last run (pid ${pidOf(s.lock.owner)}) is gone${lockState === "mismatch" ? " (its pid now belongs to another process)" : ""} and left run.lock; a supervised start (\`recover\`) clears it`
          : `the last run (pid ${pidOf(s.lock.owner)}) is not running in this PID namespace, and this command cannot see the others; run.lock is left, and \`recover\` in the connector's own namespace clears it if no connector runs there`;
    if (state === "stuck") why += ", but .stop.lock is left, so recover refuses (STOP update is locked)";
    // To clear a lock, recover writes STOP first: through a STOP that is a
    // link leading nowhere, that write fails (#34).
    else if (s.lock && s.entries.STOP?.kind === "symlink" && !stop.present) {
      state = "stuck";
      why += ", but recover writes STOP first, and STOP is a symbolic link that leads nowhere: that write fails";
    }
    next = s.lock ? lockNext(dir, lockState, false, s.lock) : `a recover did not finish: \`${invocation()} recover ${sh(dir)}\``;
  } else {
    state = "ready";
    why = null;
  }
  // A link out of the journal is named before anything read through it.
  // So is a journal directory its owner cannot write in: every other fix needs it.
  const before = (p) => p.link || p.first;
  // A problem that keeps the connector from its work (a file system that
  // refuses writes, a file it may not read or replace) says so (`blocks`),
  // whatever the state: a running connector on a full file system is
  // still "running", and a monitor pages on it (#63).
  const row = (p) => ({ what: p.what, fix: p.fix, ...(p.blocks ? { blocks: true } : {}) });
  const links = found.filter(before).map(row);
  for (const p of links) kind.set(p, "first");
  problems.unshift(...links);
  for (const p of found.filter((p) => !before(p))) {
    const r = row(p);
    problems.push(r);
    // A record file with another name is a repair's to split: before it, the lock that would refuse it (`first`).
    if (p.shared) kind.set(r, "repair");
  }
  // A process stopped where every start, recover, unlock and repair waits
  // for it (#44): named, with what frees it, before anything else.
  const stalled = [
    s.guard?.stalled && {
      what: `${s.guard.is} holds the journal's lock guard and ${stillness(s.guard)} inside a start, a release, unlock, recover or a repair: every start, recover, unlock and repair of this binding waits for it, then refuses`,
      fix: s.guard.fix,
    },
    s.guard?.lasting && {
      what: `${s.guard.is} holds the journal's lock guard and kept it past a moment (a start or a release lets go within milliseconds): every start, recover, unlock and repair of this binding waits for it, 10 s at most, then refuses`,
      fix: s.guard.fix,
    },
    s.lock?.holder?.stalled &&
      lockState !== "live" && {
        what: `${s.lock.holder.is} holds run.lock and is stopped in a start or a release: recover and unlock refuse it, and every start waits for it, then refuses`,
        fix: s.lock.holder.fix,
      },
    // A stopped holder of a record file's append lock (#55): every append
    // to it ends in a refusal naming it.
    ...Object.entries(s.appendLocks ?? {})
      .filter(([, h]) => h.stalled || h.lasting)
      .map(([file, h]) => ({
        what: h.stalled
          ? `${h.is} holds the append lock of ${file} and ${stillness(h)}: every append to ${file} waits for it about a second, then refuses`
          : `${h.is} holds the append lock of ${file} and kept it past a moment (an append lets go within milliseconds): every append to ${file} waits for it, 10 s at most, then refuses`,
        fix: h.fix,
        blocks: true,
      })),
    // A dead owner its parent has not reaped holds run.lock as a live one
    // would, until it is reaped (#45).
    lockState === "live" && s.lock.zombie && zombieProblem(dir, s.lock.zombie),
    // A stopped owner holds the binding and takes no turn (#56).
    lockState === "live" &&
      s.lock.stopped && {
        what: `the connector that holds run.lock, ${s.lock.stopped.is}, is stopped: it holds the binding and takes no turn, and recover, unlock and every start refuse its lock`,
        fix: s.lock.stopped.state === "stopped" ? `\`kill -CONT ${s.lock.stopped.pid}\` lets it run again` : s.lock.stopped.fix,
      },
  ].filter(Boolean);
  for (const p of stalled) kind.set(p, "first");
  problems.unshift(...stalled);
  // A stopped process blocks the binding whatever else holds: a start in
  // progress, a connector that is itself stopped, an operator's brake
  // (#56). A connector that runs beside one stopped in the guard runs on.
  if (stalled.length > 0 && ((state === "running" && (lockState !== "live" || s.lock.stopped)) || state === "braked")) {
    state = "stuck";
    why = stalled[0].what;
  }
  // A file the service may not be able to read or replace: no all-clear on it.
  const blocking = stalled[0] ?? found.find((p) => p.blocks);
  if (blocking && (state === "ready" || state === "crashed")) {
    state = "stuck";
    why = blocking.what;
  }
  // A journal its owner cannot reach is nothing its service sees: no brake,
  // no lock, no record of it counts until the path is open (#45).
  if (target.closed) {
    state = "stuck";
    why = target.closed.what;
  }
  const canStart = state === "unreadable" ? null : state === "ready" || state === "crashed";
  // A late delivery keeps nothing from running: it comes last, and its fix
  // next only where the state asks for nothing else (ready, or a connector
  // that runs).
  const late = (s.unresolvedDeliveries.value ?? []).filter((d) => d.pastWindow);
  if (late.length > 0) {
    const p = deliveryProblem(dir, late);
    problems.push(p);
    kind.set(p, "late");
  }
  const acting = problems.filter((p) => kind.get(p) !== "late");
  if (acting.length > 0) next = first(acting, kind, s, dir, braked).fix;
  else if (problems.length > 0 && (state === "ready" || (state === "running" && lockState === "live" && !s.lock.repair)))
    next = problems[0].fix;
  return { canStart, state, why, next, problems };
}

/**
 * The problem whose fix comes first: what no command can work past (a
 * link out of the journal, a directory its owner cannot write, a file no
 * read gets through, corruption: a repair refuses each) before damage; and
 * before a repair, the lock that would refuse it (#34: the same advice,
 * pasted, must not come back unchanged). A repair holds the binding as a
 * claim does, clearing a dead owner's lock itself and refusing any other.
 */
function first(problems, kind, s, dir, braked) {
  const found = ["first", "unreadable", "corrupt"].reduce((f, k) => f ?? problems.find((p) => kind.get(p) === k), undefined) ?? problems[0];
  if (kind.get(found) !== "repair" || s.lock === null) return found;
  const d = sh(dir);
  const state = s.lock.state;
  if (state === "absent") return { fix: lockNext(dir, "absent", braked, s.lock) };
  if (state === "live" && s.lock.repair) return { fix: lockNext(dir, "live", braked, s.lock) };
  if (state === "live")
    return {
      fix: `a connector runs (pid ${pidOf(s.lock.owner)}) and holds the binding, so a repair cannot: stop it by hand (its service; \`${invocation()} stop ${d}\` brakes it first), then \`${invocation()} repair ${d} --apply\``,
    };
  if (state === "unknown" || state === "invalid") return { fix: lockNext(dir, state, braked, s.lock) };
  return found;
}

/**
 * `status`'s exit code: 0 only where nothing needs a hand; a stuck, damaged
 * or unreadable journal is 1 even where no problem row names it (#34).
 */
function exitOf(s) {
  const needsHand = ["stuck", "damaged", "unreadable"].includes(s.verdict.state);
  return s.verdict.problems.length > 0 || needsHand ? 1 : 0;
}

/**
 * The command: `status [dir]` with its options; with --data-root and
 * neither DIR nor --binding, every binding under the data root (cli/fleet.js), and with
 * --prometheus FILE their metrics written to FILE (cli/prometheus.js).
 */
function action(dir, opts) {
  if (dir === undefined && opts.binding === undefined && opts.fleet) return everyBinding(opts);
  if (opts.prometheus !== undefined)
    throw new UsageError(
      dir === undefined && opts.binding === undefined
        ? "--prometheus writes every binding's metrics: it needs --data-root ROOT (the directory that holds discord/)"
        : "--prometheus writes every binding's metrics: give --data-root ROOT alone, without DIR or --binding",
    );
  if (opts.problems)
    throw new UsageError(
      "-x shows the bindings that need a hand among every binding: give --data-root ROOT alone, without DIR or --binding",
    );
  const s = status(target(dir, opts, "status"));
  return { exitCode: exitOf(s), json: s, text: opts.json ? undefined : render(s) };
}

/** `status --data-root ROOT` with no binding named: the fleet's view, or its metrics. */
async function everyBinding(opts) {
  // A collection's child that reads the data root's idle file as its owner (cli/prometheus.js).
  if (opts.idleOnly) return { exitCode: 0, json: idleAsOwner(opts.dataRoot), text: undefined };
  if (opts.prometheus !== undefined) {
    if (!/^[0-9]+$/.test(String(opts.fullEvery ?? "60")))
      throw new UsageError("--full-every takes a whole number of minutes (0: read every file in full each time)");
    const r = await collect(opts, fleet, { status, exitOf });
    return { ...r, text: opts.json ? undefined : r.text };
  }
  const view = await fleet(opts, { status, exitOf });
  return { exitCode: view.exitCode, json: view.json, text: opts.json ? undefined : view.text };
}

module.exports = { action, status, exitOf, DEDUPE_WINDOW_S, lateness };
