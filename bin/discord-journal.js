#!/usr/bin/env node
// discord-journal: an operator's view of one binding's journal, built on the
// addon's own exports so that it sees exactly what the connector sees.
//
//   discord-journal status DIR [--json]   the brake, the lock, what to run next, then what the journal holds
//   discord-journal check DIR             every line and record the readers would refuse
//   discord-journal stop DIR [REASON]     write STOP (the brake)
//   discord-journal unlock DIR            clear a stale run.lock (writes STOP first)
//   discord-journal recover DIR           the supervised pre-start
//   discord-journal demo [DIR]            build a braked journal whose owner crashed, and show it
//
// DIR may be given as --data-root ROOT --binding NAME instead (ROOT/discord/NAME).
// Exit status: 0 done; 1 `check` found bad lines, or a refusal with exit
// code 1; 2 a usage mistake (commander's and ours, so a script can tell a
// typo from a damaged journal, #13); 3 a refusal with BRAKE_EXIT, which a
// supervisor must not retry.
"use strict";

const { Command } = require("commander");
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const util = require("node:util");
const J = require("..");
const { version } = require("../package.json");

const FILES = ["inbox.jsonl", "outbox.jsonl", "drops.jsonl", "admissions.jsonl", "notices.jsonl", "reloads.jsonl"];

/** A usage mistake: printed with what to type instead, exit status 2. */
class UsageError extends Error {}

/** `1 line`, `2 lines`. */
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A path as a shell word, so that a printed command can be pasted. */
const sh = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`);

// Symbols on a terminal, colour where it takes colour: hasColors() honours
// NO_COLOR, NODE_DISABLE_COLORS, FORCE_COLOR and TERM=dumb. Piped output is
// plain text, so scripts and tests read words, not escapes.
const tty = process.stdout.isTTY === true;
const colour = tty && process.stdout.hasColors();
const paint = (style, text) => (colour ? util.styleText(style, text) : text);
const MARK = { ok: ["✓", "green"], bad: ["✗", "red"], warn: ["!", "yellow"] };
/** `text` with its symbol and colour for `level`; plain words when not a terminal. */
const mark = (level, text) => (tty ? paint(MARK[level][1], `${MARK[level][0]} ${text}`) : text);
const dim = (text) => paint("dim", text);
const bold = (text) => paint("bold", text);

function journalDir(dir, opts, command) {
  if (dir !== undefined && opts.binding !== undefined) throw new UsageError("give either DIR or --binding NAME, not both");
  if (dir !== undefined) return dir;
  if (opts.binding === undefined) {
    throw new UsageError(
      `which journal? give its directory (discord-journal ${command} data/discord/NAME) or --binding NAME (with --data-root ROOT, default ./data)`,
    );
  }
  return path.join(opts.dataRoot, "discord", opts.binding);
}

/**
 * The journal directory the command names, refused unless it is a directory.
 * Checked before any library call: requestStop on a missing directory
 * refuses with "STOP update is locked" and recover answers "clean", which
 * would send an operator (or pass a service unit) the wrong way (#13). Only
 * stat(2) runs here; nothing is created.
 */
function existingJournal(dir, opts, command) {
  const d = journalDir(dir, opts, command);
  let st;
  try {
    st = fs.statSync(d, { throwIfNoEntry: false });
  } catch (e) {
    throw new UsageError(`no journal at ${d} (${e.code}); check the path (or --data-root and --binding)`);
  }
  if (st === undefined) throw new UsageError(`no journal at ${d}; check the path (or --data-root and --binding)`);
  if (!st.isDirectory()) throw new UsageError(`no journal at ${d} (not a directory); check the path (or --data-root and --binding)`);
  return d;
}

/** Each line of a record file as the readers see it: number, byte offset, verdict. */
function scanLines(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    if (e.code === "ENOENT") return null;
    return { size: 0, lines: 0, bad: [], unreadable: `could not read ${path.basename(file)} (${e.code})` };
  }
  const bad = [];
  let lines = 0;
  let offset = 0;
  let n = 0;
  for (const raw of bytes.toString("utf8").split("\n")) {
    n++;
    const start = offset;
    offset += Buffer.byteLength(raw) + 1;
    if (raw.length === 0) continue;
    lines++;
    try {
      JSON.parse(raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw);
    } catch {
      bad.push({ line: n, offset: start });
    }
  }
  return { size: bytes.length, lines, bad };
}

/** Each turn record the readers would refuse. */
function scanTurns(dir) {
  const turns = path.join(dir, "turns");
  let names;
  try {
    names = fs.readdirSync(turns).filter((f) => f.endsWith(".json"));
  } catch (e) {
    return { records: 0, bad: e.code === "ENOENT" ? [] : [{ file: "turns/", problem: e.code }] };
  }
  const bad = [];
  for (const f of names) {
    try {
      const text = fs.readFileSync(path.join(turns, f), "utf8");
      JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch (e) {
      bad.push({ file: `turns/${f}`, problem: e.code ?? "not valid JSON" });
    }
  }
  return { records: names.length, bad };
}

/** A reader's answer, or its refusal's message. */
function attempt(f) {
  try {
    return { value: f() };
  } catch (e) {
    return { refused: e.message };
  }
}

/** Whether STOP is the one line a `recover` writes, which `recover` itself clears. */
const recoversOwn = (stop) => stop.value !== undefined && stop.value.length === 1 && stop.value[0].reason === J.RECOVER_REASON;

/**
 * What to run next for the lock, given the brake: with an operator's STOP,
 * `recover` refuses (the brake is on), so a dead owner's lock is cleared by
 * `unlock` and the binding runs again once STOP is removed.
 */
function lockNext(dir, state, stop) {
  const d = sh(dir);
  const braked = stop.refused !== undefined || (stop.value.length > 0 && !recoversOwn(stop));
  const clear = braked
    ? `\`discord-journal unlock ${d}\`, then \`rm ${sh(path.join(dir, "STOP"))}\` when the binding should run again`
    : `\`discord-journal recover ${d}\` (or unlock)`;
  switch (state) {
    case "absent":
      return `a start is in progress or crashed before publishing its record: if no connector runs, \`discord-journal unlock ${d}\``;
    case "invalid":
      return `inspect ${sh(J.ownerPath(dir))} by hand`;
    case "dead":
      return `the owner is gone: ${clear}`;
    case "mismatch":
      return `the pid now belongs to another process: ${clear}`;
    case "unknown":
      return `alive but unverifiable: stop that process by hand, then \`discord-journal unlock ${d}\``;
    default:
      // Under a brake the connector starts no new turn; it runs again once STOP is removed.
      if (braked) return `a connector runs under the brake: \`rm ${sh(path.join(dir, "STOP"))}\` when it should take turns again`;
      return `a connector runs: \`discord-journal stop ${d}\` to brake it`;
  }
}

function status(dir) {
  const now = Date.now();
  const today = J.utcDate(now);
  const files = {};
  for (const name of FILES) {
    const scan = scanLines(path.join(dir, name));
    if (scan === null) continue;
    const first = scan.bad[0];
    files[name] = {
      lines: scan.lines,
      bytes: scan.size,
      ...(scan.unreadable ? { refusal: scan.unreadable } : {}),
      ...(first ? { firstBadLine: { line: first.line, offset: first.offset, refusal: `${name}:${first.line}: not valid JSON` } } : {}),
    };
  }
  const unresolved = attempt(() =>
    J.unresolvedOutbox(dir)
      .map((e) => ({
        nonce: e.nonce,
        status: e.status,
        intentAt: e.intentAt ?? null,
        ageSeconds: typeof e.intentAt === "string" ? Math.round((now - Date.parse(e.intentAt)) / 1000) : null,
      }))
      .sort((a, b) => String(a.intentAt).localeCompare(String(b.intentAt))),
  );
  const notices = attempt(() => {
    // The readers' verdict on the file first: it refuses as they would.
    J.noticeOn(dir, null, null);
    const file = path.join(dir, "notices.jsonl");
    if (!fs.existsSync(file)) return [];
    const parsed = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l.replace(/^\uFEFF/, "")));
    return parsed.filter((n) => n?.date === today).map((n) => n.kind);
  });
  const reloads = attempt(() => J.readReloads(dir));
  const stop = attempt(() => J.readStop(dir));
  const owner = J.readPid(dir);
  const state = J.ownerState(owner);
  const lockExists = fs.existsSync(J.lockPath(dir));
  return {
    journal: path.resolve(dir),
    label: J.journalLabel(dir),
    today,
    files,
    turns: scanTurns(dir).records,
    unresolvedDeliveries: unresolved,
    onToday: {
      admissions: attempt(() => J.countAdmissionsOn(dir, today)),
      turns: attempt(() => J.countTurnsOn(dir, today)),
      notices,
    },
    lastReload: reloads.value ? (reloads.value.at(-1) ?? null) : reloads,
    stop,
    lock: lockExists ? { owner, state, next: lockNext(dir, state, stop) } : null,
  };
}

/** `93 s`, `40 min`, `5 h`, `3 days`: an age an operator reads at a glance. */
function age(seconds) {
  if (seconds < 120) return plural(seconds, "s", "s");
  if (seconds < 7200) return plural(Math.round(seconds / 60), "min", "min");
  if (seconds < 172_800) return plural(Math.round(seconds / 3600), "h", "h");
  return plural(Math.round(seconds / 86_400), "day");
}

/** Rows of cells as text, each column but the last padded to its widest cell. */
function table(rows) {
  rows = rows.map((r) => r.map(String));
  const width = (i) => Math.max(...rows.map((r) => util.stripVTControlCharacters(r[i] ?? "").length));
  const widths = rows[0].map((_, i) => width(i));
  return rows.map((r) =>
    r
      .map((c, i) => {
        const pad = " ".repeat(widths[i] - util.stripVTControlCharacters(c).length);
        return i === r.length - 1 ? c : c + pad;
      })
      .join("  ")
      .trimEnd(),
  );
}

function printStatus(dir, s) {
  const out = [];
  const shown = (r, f = (v) => v) => (r.refused !== undefined ? `refused: ${r.refused}` : f(r.value));
  out.push(`${bold(s.label)}  ${dim(`${s.journal}; today is ${s.today} (UTC)`)}`, "");

  // The brake and the lock first: they decide whether the binding runs.
  const head = [];
  let next = null;
  if (s.stop.refused !== undefined) head.push(["STOP", mark("bad", "unreadable"), s.stop.refused]);
  else if (s.stop.value.length === 0) head.push(["STOP", mark("ok", "off"), "no brake"]);
  else {
    const lines = s.stop.value;
    const last = lines.at(-1);
    const who = (l) => `${l.reason ?? "(a line not written by the connector)"}${l.at ? ` at ${l.at}` : ""}`;
    head.push(["STOP", mark("bad", "on"), `${who(last)}${lines.length > 1 ? ` (the last of ${plural(lines.length, "line")})` : ""}`]);
    for (const l of lines.slice(0, -1)) head.push(["", "", dim(`earlier: ${who(l)}`)]);
    if (s.lock === null) {
      next = recoversOwn(s.stop)
        ? `a recover did not finish: \`discord-journal recover ${sh(dir)}\``
        : `the brake is on: \`rm ${sh(path.join(dir, "STOP"))}\` when the binding should run again`;
    }
  }
  if (s.lock === null) head.push(["run.lock", mark("ok", "free"), "no connector holds the binding"]);
  else {
    const { state, owner } = s.lock;
    const level = state === "live" ? "ok" : state === "dead" || state === "mismatch" || state === "invalid" ? "bad" : "warn";
    const whose = {
      live: "a connector holds the binding",
      dead: "which is gone",
      mismatch: "which is another process now",
      unknown: "alive, its identity unverifiable",
    };
    let who = "no owner record";
    if (state === "invalid") who = "owner.json cannot be read";
    else if (owner) who = `pid ${owner.pid}, ${whose[state]}`;
    head.push(["run.lock", mark(level, state), who]);
    next = s.lock.next;
  }
  out.push(...table(head));
  if (next !== null) out.push(`${bold("next:")} ${next.replace(/`([^`]+)`/g, (_, c) => (tty ? bold(c) : `\`${c}\``))}`);

  out.push("", "files:");
  // Counts right-aligned with their unit after one space: `    5 lines`, `    1 line`.
  const entries = Object.entries(s.files);
  const lw = Math.max(String(s.turns).length, ...entries.map(([, f]) => String(f.lines).length));
  const bw = Math.max(0, ...entries.map(([, f]) => String(f.bytes).length));
  const count = (n, w, one, many) => `${String(n).padStart(w)} ${n === 1 ? one : many}`;
  const rows = [];
  for (const [name, f] of entries) {
    let note = "";
    if (f.refusal) note = mark("bad", f.refusal);
    if (f.firstBadLine) {
      const b = f.firstBadLine;
      note = mark("bad", `first bad line ${b.line} at byte ${b.offset}: readers refuse with "${b.refusal}"`);
    }
    rows.push([`  ${name}`, count(f.lines, lw, "line", "lines"), count(f.bytes, bw, "byte", "bytes"), note]);
  }
  if (entries.length === 0) out.push("  (no record files)");
  rows.push(["  turns/", count(s.turns, lw, "record", "records"), "", ""]);
  out.push(...table(rows));

  out.push("", "unresolved deliveries (oldest first):");
  const u = s.unresolvedDeliveries;
  if (u.refused !== undefined) out.push(`  ${mark("bad", `refused: ${u.refused}`)}`);
  else if (u.value.length === 0) out.push(`  ${mark("ok", "none")}`);
  else {
    const since = (d) => `since ${d.intentAt ?? "?"}${d.ageSeconds === null ? "" : ` (${age(d.ageSeconds)} ago)`}`;
    out.push(...table(u.value.map((d) => [`  ${mark("warn", String(d.nonce))}`, String(d.status), since(d)])));
  }

  out.push("", `today (${s.today}):`);
  const t = s.onToday;
  const notices = shown(t.notices, (k) => (k.length ? k.join(", ") : "none"));
  out.push(
    ...table([
      ["  admissions", shown(t.admissions)],
      ["  turns", shown(t.turns)],
      ["  notices", notices],
    ]),
  );
  const r = s.lastReload;
  let reload = "none";
  if (r !== null && r.refused !== undefined) reload = `refused: ${r.refused}`;
  else if (r !== null) reload = `${r.outcome}${r.at ? ` at ${r.at}` : ""}${r.reason ? ` (${r.reason})` : ""}`;
  out.push("", `last reload: ${reload}`);
  return out.join("\n");
}

function check(dir) {
  const problems = [];
  for (const name of FILES) {
    const scan = scanLines(path.join(dir, name));
    if (scan === null) continue;
    if (scan.unreadable) problems.push(scan.unreadable);
    for (const b of scan.bad) problems.push(`${name}:${b.line}: not valid JSON (byte offset ${b.offset})`);
  }
  for (const b of scanTurns(dir).bad) problems.push(`${b.file}: ${b.problem}`);
  return problems;
}

/** The demo's directory: DIR if given and new, else the first free `data/discord/demo`, `demo-2`, ... */
function demoDir(dir) {
  if (dir !== undefined) {
    const st = fs.statSync(dir, { throwIfNoEntry: false });
    if (st !== undefined && (!st.isDirectory() || fs.readdirSync(dir).length > 0)) {
      throw new UsageError(
        `${dir} already exists; give the demo a new directory (discord-journal demo DIR), or none for a fresh one under ./data`,
      );
    }
    return dir;
  }
  for (let n = 1; ; n++) {
    const d = path.join("data", "discord", n === 1 ? "demo" : `demo-${n}`);
    if (!fs.existsSync(d)) return d;
  }
}

/**
 * A journal in the state an operator most needs to recognise: a connector
 * ran (messages, turns, deliveries with one refused and one unresolved, a
 * drop, a notice, a reload), an operator braked it, and it died holding its
 * lock. Its owner record names a pid that is gone.
 */
function demo(dir) {
  const t0 = Date.now() - 3_600_000;
  const at = (min) => new Date(t0 + min * 60_000).toISOString();
  const id = (n) => String(1_250_000_000_000_000_000n + BigInt(n) * 4_194_304n);
  J.ensureJournal(dir);
  for (let i = 0; i < 5; i++) J.appendInbox(dir, { id: id(i), at: at(i * 5), channel: id(900), author: id(800 + (i % 2)) });
  for (let i = 0; i < 3; i++) {
    J.appendAdmission(dir, { id: `turn-${i}`, at: at(i * 5 + 1), message: id(i) });
    J.writeTurn(dir, `turn-${i}`, { startedAt: at(i * 5 + 1), finishedAt: at(i * 5 + 2), message: id(i), reply: `reply ${i}` });
    J.appendOutbox(dir, { nonce: `n${i}`, status: "intent", at: at(i * 5 + 2), channel: id(900) });
    J.appendOutbox(
      dir,
      i === 1
        ? { nonce: `n${i}`, status: "refused", at: at(i * 5 + 3), error: "Missing Access" }
        : { nonce: `n${i}`, status: "confirmed", at: at(i * 5 + 3), messageId: id(100 + i) },
    );
  }
  J.appendOutbox(dir, { nonce: "n3", status: "intent", at: at(20), channel: id(900) });
  J.appendDrop(dir, { at: at(22), reason: "ceiling", id: id(4) });
  J.appendNotice(dir, { kind: "ceiling", date: J.utcDate(Date.now()), at: at(22) });
  J.appendReload(dir, { outcome: "applied", at: at(25), differences: { ceiling: [3, 5] } });
  // The connector's run: a separate process claims the binding and exits
  // without releasing it, as a crash or kill -9 would leave it.
  const code = `require(${JSON.stringify(path.join(__dirname, ".."))}).writePid(${JSON.stringify(dir)}, process.pid)`;
  const crashed = spawnSync(process.execPath, ["-e", code], { encoding: "utf8" });
  if (crashed.status !== 0) throw new Error(`the demo's connector could not claim: ${crashed.stderr}`);
  J.requestStop(dir, "operator alice: replies looping in #general; braked to look");
}

/** Runs `f`; a refusal prints its message and exits with its exit code. */
function run(f) {
  try {
    f();
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`discord-journal: ${e.message}`);
      process.exit(2);
    }
    if (e instanceof J.DiscordError) {
      console.error(e.message);
      process.exit(e.exitCode);
    }
    console.error(`discord-journal: ${e.message}`);
    process.exit(1);
  }
}

const program = new Command();
program
  .name("discord-journal")
  .description("Inspect and brake a Discord connector binding's journal.")
  .version(version, "-V, --version", "print the version")
  .showSuggestionAfterError()
  .showHelpAfterError("(run `discord-journal --help` for the commands)")
  // Commander exits 1 on a usage mistake, which is also what `check` returns
  // for bad lines; every mistake exits 2 instead (#13). Help and --version
  // exit 0. Inherited by every command defined below.
  .exitOverride((e) => process.exit(e.exitCode === 0 ? 0 : 2))
  .addHelpText(
    "after",
    "\nExit status: 0 done; 1 check found bad lines, or a refusal with exit code 1; 2 a usage mistake; 3 a brake (a supervisor must not retry).",
  );

/** A command of the program; its own usage errors say how to ask for its help. */
const command = (name, description) => {
  const cmd = program.command(name).description(description);
  return cmd.showHelpAfterError(`(run \`discord-journal ${name} --help\` for its usage)`);
};

const withDir = (cmd) =>
  cmd
    .argument("[dir]", "the binding's journal directory (or use --binding)")
    .option("--data-root <root>", "the data root that holds discord/<binding>/", "./data")
    .option("--binding <name>", "the binding's name, for <root>/discord/<name>");

withDir(command("status", "the brake, the lock and what to run next; files, bad lines, deliveries, today's counts"))
  .option("--json", "print one JSON object")
  .action((dir, opts) =>
    run(() => {
      const d = existingJournal(dir, opts, "status");
      const s = status(d);
      console.log(opts.json ? JSON.stringify(s, null, 2) : printStatus(d, s));
    }),
  );

withDir(command("check", "list every line and turn record the readers would refuse; exit 1 if any")).action((dir, opts) =>
  run(() => {
    const d = existingJournal(dir, opts, "check");
    const problems = check(d);
    for (const p of problems) console.log(p);
    console.log(problems.length ? plural(problems.length, "problem") : "every record file and turn record reads");
    process.exitCode = problems.length ? 1 : 0;
  }),
);

withDir(command("stop", "write STOP: no new turn starts and no run can claim the binding"))
  .argument("[reason]", "what the STOP line says", "stop")
  .action((dir, reason, opts) =>
    run(() => {
      // With --binding, a single word is the reason: `stop --binding NAME maintenance`.
      if (opts.binding !== undefined && dir !== undefined && reason === "stop") [dir, reason] = [undefined, dir];
      const d = existingJournal(dir, opts, "stop");
      J.requestStop(d, reason);
      console.log(`STOP written in ${J.journalLabel(d)} (reason: ${reason})`);
    }),
  );

withDir(command("unlock", "clear a run.lock whose owner is gone (writes STOP first; STOP stays)")).action((dir, opts) =>
  run(() => {
    const d = existingJournal(dir, opts, "unlock");
    const rec = J.unlock(d);
    const was = rec ? ` (was pid ${rec.pid})` : " (it had no owner record)";
    const lift = `\`rm ${sh(path.join(d, "STOP"))}\` when the binding should run again`;
    console.log(rec === false ? `no run.lock; STOP written: ${lift}` : `run.lock cleared${was}; STOP stays: ${lift}`);
  }),
);

withDir(command("recover", "supervised pre-start: clear a crashed run's lock unless an operator braked")).action((dir, opts) =>
  run(() => {
    console.log(J.recover(existingJournal(dir, opts, "recover")));
  }),
);

command("demo", "build a journal an operator braked and whose connector crashed holding its lock, and show it")
  .argument("[dir]", "a new directory for it (default: the first free data/discord/demo, demo-2, ...)")
  .action((dir) =>
    run(() => {
      const d = demoDir(dir);
      demo(d);
      console.log(`demo: a connector ran in ${d}; an operator braked it, then it crashed holding its lock.\n`);
      console.log(printStatus(d, status(d)));
      console.log(`\nTry it: run what \`next\` says, then \`discord-journal status ${sh(d)}\` again (the README's "The demo" shows it).`);
    }),
  );

program.parse();
