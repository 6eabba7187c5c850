// The verdict on what `status` read (cli/commands/status.js): the problems,
// each with its fix, and the state by a table of rules (RULES). The fleet
// and the metrics read the states and the brake here, never judging again.
"use strict";

const path = require("node:path");
const { J } = require("./journal.js");
const { shownReader, FILE } = require("./readers.js");
const { nullFound, keepBrake, kind: kindOf } = require("./survey.js");
const { chmodFix, chownFix } = require("./owner.js");
const fs = require("node:fs");
const { zombieProblem, recoversOnly } = require("./brake.js");
const { sh, word, wordable, ago, invocation } = require("./output.js");

/**
 * Discord's dedupe window for a nonce, in seconds: the connector resends a
 * delivery only within it (from its `intentAt`, journal.mjs), so one older
 * with no outcome is a person's to tell (#56); DiscordDeliveriesUnresolved
 * pages on the same figure.
 */
const DEDUPE_WINDOW_S = 600;

/**
 * The states, most urgent first: whether the connector can start (null:
 * not told), whether the state needs a hand (exit 1), whether a fleet line
 * asks for a move (-x), and its colour in the text.
 */
const STATE = {
  unreadable: { canStart: null, needsHand: true, level: "bad" },
  damaged: { canStart: false, needsHand: true, level: "bad" },
  stuck: { canStart: false, needsHand: true, level: "bad" },
  braked: { canStart: false, moves: true, level: "warn" },
  crashed: { canStart: true, moves: true, level: "warn" },
  running: { canStart: false, level: "ok" },
  ready: { canStart: true, level: "ok" },
};
const STATES = Object.keys(STATE);

/** Whether STOP is recover's own line alone, which the next recover removes, and no connector holds the lock: no brake. */
const ownStop = (s) => s.stop?.present === true && recoversOnly(s.stop.value) && s.lock?.state !== "live";
/** Whether an operator's brake is on, whatever else the verdict says (the `braked` rule, the metrics' binding_braked). */
const brakeOn = (s) => s.stop?.present === true && !ownStop(s);

/** `status`'s exit code: 1 where a problem or the state needs a hand, even with no problem row (#34). */
const exitOf = (s) => (s.verdict.problems.length > 0 || STATE[s.verdict.state]?.needsHand === true ? 1 : 0);

/** What each kind of damage is, in a sentence's middle. */
const DAMAGE = {
  cut: "cut short (an append interrupted by a crash or a kill)",
  zeros: "zero bytes (blocks the file system allocated but never wrote, as a power loss leaves them)",
  blank: "whitespace alone (spaces, tabs or a stray carriage return, as a hand or an editor leaves them: no record, and not JSON)",
  torn: "the last line, not JSON and without its newline (an append that stopped mid-write)",
  invalid: "not JSON, and no more bytes could make it so (corruption)",
};

/** The fix of damage the scan found: what a crash left and whitespace alone are `repair`'s; corruption a person's. */
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
  if (code === "EACCES" || code === "EPERM") return giveBack(t, path.join(dir, name), entry, owner, false);
  // A directory at STOP is a brake all the same: moving it aside alone would lift it.
  if (code === "EISDIR" && name === "STOP")
    return `a directory stands where STOP belongs: \`mv ${p} ${p}.aside && ${invocation()} stop ${sh(dir)} REASON\` replaces it with a brake of its own (\`mv\` alone lifts the brake)`;
  if (code === "EISDIR") return `a directory stands where the file belongs: look inside it, then \`mv ${p} ${p}.aside\``;
  return `inspect ${p} by hand`;
}

/** The fix for a file (or directory, `dir`) its owner may not read: its mode, after giving it back where another's. */
function giveBack(t, p, entry, owner, dir) {
  const mode = dir ? "700" : "600";
  if (entry !== undefined && entry.uid === owner.uid) return chmodFix(t, mode, p);
  return `give it back to the journal's owner: ${chownFix(owner.uid, p, dir)}, then ${chmodFix(t, mode, p)}`;
}

/** A turn record's entry as the survey describes entries (`{ kind, uid, links }`), from its lstat; undefined where gone. */
function turnEntry(t, file) {
  const st = fs.lstatSync(path.join(t.at, "turns", file), { throwIfNoEntry: false });
  return st === undefined ? undefined : { kind: kindOf(st), uid: st.uid, links: st.nlink };
}

/** The owner record's pid as shown: none where the record is a link out of the journal. */
const pidOf = (owner) => owner?.pid ?? "(not shown)";

/**
 * What to run next for the lock, given the brake: under an operator's STOP
 * `recover` refuses, so a dead owner's lock is cleared by `unlock`.
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

/**
 * A reader's refusal the scan does not explain: where it saw JSON null, that,
 * which a person moves out, keeping its bytes (#34); a turn record by command.
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

/** What a holder that does not let go is doing, for a problem's words. */
const STILL = {
  stopped: "is stopped",
  traced: "is stopped by a debugger or tracer and does not move",
  frozen: "is frozen",
  idle: "does not move",
};
const stillness = (h) => STILL[h.state] ?? "does not let go";

/** The scans' problems, each added with its kind (`add`); whether any is unreadable or damaged, and the files named. */
function scanProblems(target, s, add) {
  const { dir } = target;
  const seen = { unreadable: false, damaged: false, named: new Set() };
  for (const [name, f] of Object.entries(s.files)) {
    if (f.refused !== undefined) {
      seen.unreadable = true;
      seen.named.add(name);
      const fix = readFix(target, name, f.refused, s.entries[name], s.owner);
      add({ what: `every read of ${name} refuses: ${f.refused}`, fix }, "unreadable");
    } else if (f.badLines > 0) {
      seen.damaged = true;
      seen.named.add(name);
      const b = f.firstBadLine;
      const more = f.badLines > 1 ? ` (and ${f.badLines - 1} more bad ${f.badLines === 2 ? "line" : "lines"})` : "";
      const what = `${name}:${b.line} is ${DAMAGE[b.damage]}${more}; every read of ${name} refuses ("${name}:${b.line}: not valid JSON")`;
      add({ what, fix: damageFix(dir, f.corrupt ? "invalid" : b.damage) }, f.corrupt ? "corrupt" : "repair");
    }
  }
  if (s.turns.refused !== undefined) {
    seen.unreadable = true;
    seen.named.add("turns");
    // The process's own limit is named; anything else about the directory is a person's to look at.
    const fix = /\((EMFILE|ENFILE)\)$/.test(s.turns.refused)
      ? readFix(target, "turns", s.turns.refused, s.entries.turns, s.owner)
      : /\((EACCES|EPERM)\)$/.test(s.turns.refused)
        ? giveBack(target, path.join(dir, "turns"), s.entries.turns, s.owner, true)
        : `inspect ${sh(path.join(dir, "turns"))} by hand`;
    add({ what: `the turn records cannot be listed: ${s.turns.refused}`, fix }, "unreadable");
  } else if (s.turns.badRecords > 0) {
    seen.damaged = true;
    seen.named.add("turns");
    const b = s.turns.bad[0];
    const what = b.refusal ?? `is ${b.size === 0 ? "empty (its write never came)" : DAMAGE[b.damage]}`;
    const more = s.turns.badRecords > 1 ? ` (and ${s.turns.badRecords - 1} more)` : "";
    const p = {
      what: `turns/${b.file} ${b.refusal ? `cannot be read: ${what}` : what}${more}; listTurns and the daily ceiling refuse`,
      fix: b.refusal
        ? readFix(target, path.join("turns", b.file), b.refusal, turnEntry(target, b.file), s.owner)
        : damageFix(dir, b.damage),
    };
    add(p, b.refusal ? "unreadable" : b.damage === "invalid" ? "corrupt" : "repair");
  }
  return seen;
}

/**
 * A reader's refusal no scan explains (a line of JSON null, a file too
 * large for a string), in the reader's words (cli/readers.js); then STOP
 * that cannot be read. Adds to `seen` (scanProblems').
 */
function readerProblems(target, s, inboxIds, add, seen) {
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
    if (r.refused === undefined || seen.named.has(file)) continue;
    seen.damaged = true;
    seen.named.add(file);
    const { p, isNull } = nullProblem(target, file, reader, r.refused, file === "turns" ? s.turns.nullRecord : s.files[file]?.nullLine);
    add(p, isNull ? "corrupt" : undefined);
  }
  if (s.stop.refused !== undefined) {
    seen.unreadable = true;
    const fix = readFix(target, "STOP", s.stop.refused, s.entries.STOP, s.owner);
    add({ what: `STOP is present but cannot be read: ${s.stop.refused}; it is a brake all the same`, fix }, "unreadable");
  }
}

/** Why run.lock (or recover's own STOP) is left with no connector. */
function leftBehind({ s, lock, lockState }) {
  if (!lock) return "a recover did not finish and left its own STOP; the next `recover` removes it";
  if (lockState === "absent")
    return "run.lock has no owner record: a start crashed before publishing it (or one is in progress, and withdraws once STOP is written); a supervised start (`recover`) clears it";
  if (s.lock.seesEveryProcess)
    return `the last run (pid ${pidOf(lock.owner)}) is gone${lockState === "mismatch" ? " (its pid now belongs to another process)" : ""} and left run.lock; a supervised start (\`recover\`) clears it`;
  return `the last run (pid ${pidOf(lock.owner)}) is not running in this PID namespace, and this command cannot see the others; run.lock is left, and \`recover\` in the connector's own namespace clears it if no connector runs there`;
}

const leftNext = (c) =>
  c.lock ? lockNext(c.dir, c.lockState, false, c.lock) : `a recover did not finish: \`${invocation()} recover ${sh(c.dir)}\``;

function brakeWhy({ s: { stop } }) {
  const said = (l) =>
    `${l.reason === "" ? "no reason given" : (l.reason ?? "a line not written by the connector")}${l.at ? ` at ${l.at}` : ""}`;
  const last = stop.value?.at(-1);
  // The first line is who braked it; an unlock's or a recover's line
  // after it must not hide that reason, which `rm STOP` lifts as well.
  const first = stop.value?.length > 1 ? `, on since ${said(stop.value[0])}` : "";
  if (stop.notShown) return `STOP is on: ${stop.notShown}`;
  if (last) return `STOP is on: ${said(last)}${first}`;
  return "STOP is on: it is empty (a STOP write cut short, or made by hand), and an empty STOP is a brake all the same";
}

const stopped = (c) => c.stalled[0];
const blocking = (c) => c.stalled[0] ?? c.found.find((p) => p.blocks);
/** What an owner the lock refuses is, in a sentence (a stuck rule's, a braked binding's problem). */
const refusedOwner = (c) =>
  c.lockState === "invalid"
    ? "has an owner record that cannot be read"
    : `belongs to pid ${pidOf(c.lock.owner)}, which is alive but whose identity cannot be verified`;

/**
 * The first rule whose `when` holds decides the state, `why` and `next`
 * (none: the first problem's fix). Its `held`, where it finds a problem,
 * makes it stuck on that: a stopped process blocks a start, a stopped
 * connector and a brake (#56); a blocking problem gives no all-clear (#63).
 */
const RULES = [
  // A journal its owner cannot reach is nothing its service sees: no brake,
  // no lock, no record of it counts until the path is open (#45).
  { state: "stuck", when: (c) => c.target.closed, why: (c) => c.target.closed.what },
  {
    state: "unreadable",
    when: (c) => c.unreadable,
    why: () => "part of the journal could not be read, so whether the binding can start cannot be told",
  },
  { state: "damaged", when: (c) => c.damaged, why: () => "a record file or turn record that the connector reads on start is damaged" },
  {
    state: "braked",
    when: (c) => c.braked,
    why: brakeWhy,
    next: (c) =>
      c.lock
        ? lockNext(c.dir, c.lockState, true, c.lock)
        : `the brake is on: \`rm ${sh(path.join(c.dir, "STOP"))}\` when the binding should run again`,
    held: stopped,
  },
  {
    state: "running",
    when: (c) => c.lockState === "unknown" && c.lock.elsewhere,
    why: (c) => `a connector runs in another PID namespace (pid ${pidOf(c.lock.owner)} there, pid ${c.lock.elsewhere} here)`,
    next: (c) => lockNext(c.dir, c.lockState, false, c.lock),
    held: stopped,
  },
  {
    state: "stuck",
    when: (c) => c.lock && (c.lockState === "invalid" || c.lockState === "unknown"),
    why: (c) => `run.lock ${refusedOwner(c)}`,
    next: (c) => lockNext(c.dir, c.lockState, false),
  },
  // run.lock marked by a live process (held.rs): a start or release, or an owner not checkable here.
  {
    state: "running",
    when: (c) => c.lock?.holder && c.lockState !== "live" && !c.lock.holder.stalled,
    why: (c) =>
      `${c.lock.holder.is} holds run.lock: a start or a release in progress, or a connector whose record cannot be checked from here`,
    next: (c) => `${c.lock.holder.fix}, then \`${invocation()} status ${sh(c.dir)}\``,
    held: stopped,
  },
  // A zombie owner is named among the problems, whatever the state (#45).
  { state: "stuck", when: (c) => c.lockState === "live" && c.lock.zombie, why: (c) => zombieProblem(c.dir, c.lock.zombie).what },
  {
    state: "running",
    when: (c) => c.lockState === "live",
    why: (c) =>
      c.lock.repair ? `a repair runs (pid ${pidOf(c.lock.owner)}) and holds the binding` : `a connector runs (pid ${pidOf(c.lock.owner)})`,
    next: (c) => lockNext(c.dir, "live", false, c.lock),
    held: (c) => (c.lock.stopped ? c.stalled[0] : undefined),
  },
  // recover writes (lock) or removes (its own STOP) under .stop.lock.
  {
    state: "stuck",
    when: (c) => (c.lock || c.ours) && c.stopLockLeft,
    why: (c) => `${leftBehind(c)}, but .stop.lock is left, so recover refuses (STOP update is locked)`,
    next: leftNext,
  },
  // To clear a lock, recover writes STOP first: through a STOP that is a
  // link leading nowhere, that write fails (#34).
  {
    state: "stuck",
    when: (c) => c.lock && c.s.entries.STOP?.kind === "symlink" && !c.s.stop.present,
    why: (c) => `${leftBehind(c)}, but recover writes STOP first, and STOP is a symbolic link that leads nowhere: that write fails`,
    next: leftNext,
  },
  { state: "crashed", when: (c) => c.lock || c.ours, why: leftBehind, next: leftNext, held: blocking },
  { state: "ready", when: () => true, why: () => null, held: blocking },
];

/** A process stopped where every operation (#44) or append (#55) waits, an owner zombie (#45) or stopped (#56): first. */
function stalledProblems(dir, s, lockState) {
  return [
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
    ...Object.entries(s.appendLocks ?? {})
      .filter(([, h]) => h.stalled || h.lasting)
      .map(([file, h]) => ({
        what: h.stalled
          ? `${h.is} holds the append lock of ${file} and ${stillness(h)}: every append to ${file} waits for it about a second, then refuses`
          : `${h.is} holds the append lock of ${file} and kept it past a moment (an append lets go within milliseconds): every append to ${file} waits for it, 10 s at most, then refuses`,
        fix: h.fix,
        blocks: true,
      })),
    lockState === "live" && s.lock.zombie && zombieProblem(dir, s.lock.zombie),
    lockState === "live" &&
      s.lock.stopped && {
        what: `the connector that holds run.lock, ${s.lock.stopped.is}, is stopped: it holds the binding and takes no turn, and recover, unlock and every start refuse its lock`,
        fix: s.lock.stopped.state === "stopped" ? `\`kill -CONT ${s.lock.stopped.pid}\` lets it run again` : s.lock.stopped.fix,
      },
  ].filter(Boolean);
}

/**
 * The verdict: `{ canStart, state, why, next, problems }` (RULES), each
 * problem `{ what, fix }`, `blocks: true` where it keeps the connector
 * from its work. `found`: the survey's and what lies around the journal.
 */
function verdict(target, s, found, inboxIds) {
  const { dir } = target;
  // Each problem's kind orders the fixes (`first`): "unreadable", "corrupt",
  // "repair", "first" (a link out, a closed directory, a stopped process), "late".
  const problems = [];
  const kind = new Map();
  const add = (p, k) => {
    problems.push(p);
    if (k !== undefined) kind.set(p, k);
  };
  const seen = scanProblems(target, s, add);
  readerProblems(target, s, inboxIds, add, seen);
  const { lock } = s;
  const lockState = lock?.state;
  const stalled = stalledProblems(dir, s, lockState);
  const c = { target, s, dir, lock, lockState, ...seen, ours: ownStop(s), braked: brakeOn(s), found, stalled };
  c.stopLockLeft = s.entries[".stop.lock"] !== undefined;
  // Lifting the brake would not be enough: recover and every claim refuse this lock too (exit 1).
  if (!seen.unreadable && !seen.damaged && c.braked && (lockState === "invalid" || (lockState === "unknown" && !lock.elsewhere))) {
    const what = `run.lock ${refusedOwner(c)}: recover and every claim refuse it, also once STOP is removed`;
    add({ what, fix: lockNext(dir, lockState, true, lock) });
  }
  const rule = RULES.find((r) => r.when(c));
  const held = rule.held?.(c);
  const state = held ? "stuck" : rule.state;
  const why = held ? held.what : rule.why(c);
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
  // A record file with another name is a repair's to split: before it, the lock that would refuse it (`first`).
  for (const p of found.filter((p) => !before(p))) add(row(p), p.shared ? "repair" : undefined);
  for (const p of stalled) kind.set(p, "first");
  problems.unshift(...stalled);
  // A late delivery keeps nothing from running: last, its fix next only where nothing else is asked.
  const late = (s.unresolvedDeliveries.value ?? []).filter((d) => d.pastWindow);
  if (late.length > 0) add(deliveryProblem(dir, late), "late");
  const acting = problems.filter((p) => kind.get(p) !== "late");
  let next = rule.next?.(c) ?? null;
  if (acting.length > 0) next = first(acting, kind, s, dir, c.braked).fix;
  else if (problems.length > 0 && (state === "ready" || (state === "running" && lockState === "live" && !lock.repair)))
    next = problems[0].fix;
  return { canStart: STATE[state].canStart, state, why, next, problems };
}

/**
 * The problem whose fix comes first: what no command works past (a link
 * out, a closed directory, a file no read gets through, corruption) before
 * damage; before a repair, the lock that would refuse it (#34: pasted
 * advice must not come back unchanged), as a repair holds the binding.
 */
function first(problems, kind, s, dir, braked) {
  const found = ["first", "unreadable", "corrupt"].reduce((f, k) => f ?? problems.find((p) => kind.get(p) === k), undefined) ?? problems[0];
  if (kind.get(found) !== "repair" || s.lock === null) return found;
  const d = sh(dir);
  const state = s.lock.state;
  if (state === "live" && !s.lock.repair)
    return {
      fix: `a connector runs (pid ${pidOf(s.lock.owner)}) and holds the binding, so a repair cannot: stop it by hand (its service; \`${invocation()} stop ${d}\` brakes it first), then \`${invocation()} repair ${d} --apply\``,
    };
  return ["absent", "live", "unknown", "invalid"].includes(state) ? { fix: lockNext(dir, state, braked, s.lock) } : found;
}

module.exports = { verdict, exitOf, STATE, STATES, brakeOn, DEDUPE_WINDOW_S };
