// `discord-journal status`: what a binding's journal says, as data (the
// rendering is status-text.js), and a verdict monitoring can alert on: can
// the binding start, and if not, why, with the one command that moves it
// on. Every read goes through the addon, so a file the connector cannot
// read is shown as unreadable, never as empty; a state that could not be
// read is never given as a verdict.
"use strict";

const path = require("node:path");
const {
  J,
  RECORD_FILES,
  scanLines,
  scanTurns,
  refusalOf,
  ownerElsewhere,
  seesEveryProcess,
  repairRunning,
  holders,
} = require("../journal.js");
const { FILE } = require("../readers.js");
const { NONE } = require("../memo.js");
const { target, journalName } = require("../target.js");
const { survey } = require("../survey.js");
const { fileSystemRefusal } = require("../reach.js");
const { render } = require("../status-text.js");
const { zombieOf, stoppedOf } = require("../brake.js");
const { verdict, exitOf, DEDUPE_WINDOW_S } = require("../verdict.js");
const { everyBinding } = require("../every.js");

/** The notices the connector sends once a day (journal.mjs: the ceiling notice). */
const NOTICE_KINDS = ["ceiling"];
/** How long a running holder of the lock guard is given before status calls its hold lasting (#55). */
const LASTING_MS = 250;

/** A reader's answer, or its refusal's message. */
function attempt(f) {
  try {
    return { value: f() };
  } catch (e) {
    return { refused: String(e?.message ?? e) };
  }
}

/** A delivery's `intentAt` as a time, or null where it is no date. */
function when(v) {
  const t = typeof v === "string" ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? null : t;
}

/**
 * A delivery's age in seconds (negative ahead of this clock, null for no
 * date) and whether it is past the dedupe window, as a date that is no
 * date is: a person's to tell. `status` and `resolve` judge it here alike.
 */
function lateness(intentAt, now) {
  const at = when(intentAt);
  const ageSeconds = at === null ? null : Math.round((now - at) / 1000);
  return { ageSeconds, pastWindow: ageSeconds === null || ageSeconds > DEDUPE_WINDOW_S };
}

/** What stands for the bytes of a file that is a link out of the journal (#33). */
const NOT_SHOWN = (name) => `${name} is a symbolic link out of the journal: nothing of it is shown`;

/** Each record file's scan (`scans`) and what status shows of it (`files`); a link out's bad line placed, not quoted. */
function scanFiles(at, kept, file, out) {
  const files = {};
  const scans = {};
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
  return { files, scans };
}

/** The outbox's unresolved deliveries, each with its lateness at `now`, or the reader's refusal. */
function deliveriesOf(at, kept, file, read, now) {
  const unresolved = kept("unresolved", [file(FILE.outbox)], () =>
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
  if (!unresolved.value) return unresolved;
  const { nonce, status: merged, intentAt, channel } = unresolved.value;
  return {
    value: nonce.map((n, i) => ({
      nonce: n,
      status: merged[i],
      intentAt: intentAt[i],
      channel: channel[i],
      ...lateness(intentAt[i], now),
    })),
  };
}

/** run.lock as status shows it: its owner record (not shown where a link out), its state, and more. */
function lockOf(at, out) {
  let owner = J.readPid(at);
  const state = J.ownerState(owner);
  if ((out("run.lock") || out(path.join("run.lock", "owner.json"))) && owner !== null) owner = { notShown: NOT_SHOWN("run.lock") };
  // Beyond the library's state, what the command can tell of the owner's
  // namespace: alive in one below this (its pid here), and whether this
  // process sees every process (a container does not: an owner "gone"
  // from here may run in another).
  return {
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

/**
 * The status of the journal `target` (target.reach), as one object: every
 * read through `at`, what is shown naming `dir`. Of a file that is a link
 * out of the journal nothing it holds is shown (#33): its count or state
 * stands for its nonces, STOP lines, last reload or owner record.
 */
function status(target, now = Date.now(), memo = NONE, later = null) {
  const { dir, at } = target;
  // What a metrics collection keeps of each reader's answer (cli/memo.js):
  // keyed by the binding and the reader, with the files it read.
  const kept = (what, files, f) => memo.take(`${target.abs ?? path.resolve(dir)}\0${what}`, files, f);
  const file = (name) => ({ file: path.join(at, name) });
  const today = J.utcDate(now);
  const seen = survey(target, now);
  const out = (name) => seen.outside[name] !== undefined;
  // A reader's answer, or its refusal where the scan tells it without
  // reading the file whole again (a run of zeros may be gigabytes, #34).
  const read = (name, f) => {
    const told = refusalOf(scans[name], name);
    return told === null ? attempt(f) : { refused: told };
  };
  const { files, scans } = scanFiles(at, kept, file, out);
  const tree = { tree: path.join(at, "turns") };
  let turns = kept("turns", [tree], () => attempt(() => scanTurns(at)));
  if (out("turns") && turns.value) turns = { notShown: NOT_SHOWN("turns") };
  // Kept as columns (#63): an outbox may hold thousands, and the kept
  // answers are parsed, passed on and written whole at each collection.
  let unresolved = deliveriesOf(at, kept, file, read, now);
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
  const lock = seen.entries["run.lock"] === undefined ? null : lockOf(at, out);
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
  // A running holder of the guard or an append lock lets go within
  // milliseconds; /proc/locks tells no time, so one look more after
  // LASTING_MS tells it from one that keeps it (#55) or does not move (#64).
  // A collection makes that second look once for all bindings (`later`).
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
 * The second look at the holders `first` (changed in place) by `second`:
 * one still there is the second look's, `lasting` where it still moves;
 * one gone is gone; one new is a moment's unless stalled (#55, #64).
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

/**
 * The command: `status [dir]` with its options; with --data-root and
 * neither DIR nor --binding, every binding under the data root, its
 * metrics or its idle file (cli/every.js).
 */
function action(dir, opts) {
  const every = everyBinding(dir, opts, { status, exitOf });
  if (every !== null) return every;
  const s = status(target(dir, opts, "status"));
  return { exitCode: exitOf(s), json: s, text: opts.json ? undefined : render(s) };
}

module.exports = { action, status, exitOf, DEDUPE_WINDOW_S, lateness };
