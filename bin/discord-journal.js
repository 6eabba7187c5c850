#!/usr/bin/env node
// discord-journal: an operator's view of one binding's journal, built on the
// addon's own exports so that it sees exactly what the connector sees.
//
//   discord-journal status DIR [--json]   what the journal holds, and what to run next
//   discord-journal check DIR             every line and record the readers would refuse
//   discord-journal stop DIR [REASON]     write STOP (the brake)
//   discord-journal unlock DIR            clear a stale run.lock (writes STOP first)
//   discord-journal recover DIR           the supervised pre-start
//   discord-journal demo [DIR]            build a small journal and show its status
//
// DIR may be given as --data-root ROOT --binding NAME instead (ROOT/discord/NAME).
// A refusal prints the DiscordError's message and exits with its exitCode, so
// BRAKE_EXIT (3) reaches a supervisor.
"use strict";

const { Command } = require("commander");
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const J = require("..");

const FILES = ["inbox.jsonl", "outbox.jsonl", "drops.jsonl", "admissions.jsonl", "notices.jsonl", "reloads.jsonl"];

/** A usage mistake: printed with what to type instead, exit status 2. */
class UsageError extends Error {}

// What to run next, by the lock owner's state.
const NEXT = {
  absent: "a start is in progress or crashed before publishing its record: if no connector runs, `discord-journal unlock DIR`",
  invalid: "inspect run.lock/owner.json by hand",
  dead: "the owner is gone: `discord-journal recover DIR` (or unlock)",
  mismatch: "the pid now belongs to another process: `discord-journal recover DIR` (or unlock)",
  unknown: "alive but unverifiable: stop that process by hand, then `discord-journal unlock DIR`",
  live: "a connector runs: `discord-journal stop DIR` to brake it",
};

function journalDir(dir, opts) {
  if (dir !== undefined && opts.binding !== undefined) throw new UsageError("give either DIR or --binding NAME, not both");
  if (dir !== undefined) return dir;
  if (opts.binding === undefined) {
    throw new UsageError("which journal? give its directory (discord-journal status data/discord/NAME) or --binding NAME (with --data-root ROOT, default ./data)");
  }
  return path.join(opts.dataRoot, "discord", opts.binding);
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
  let lines = 0, offset = 0, n = 0;
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
      .map((e) => ({ nonce: e.nonce, status: e.status, intentAt: e.intentAt ?? null, ageSeconds: typeof e.intentAt === "string" ? Math.round((now - Date.parse(e.intentAt)) / 1000) : null }))
      .sort((a, b) => String(a.intentAt).localeCompare(String(b.intentAt))),
  );
  const notices = attempt(() => {
    // The readers' verdict on the file first: it refuses as they would.
    J.noticeOn(dir, null, null);
    const file = path.join(dir, "notices.jsonl");
    if (!fs.existsSync(file)) return [];
    const parsed = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l.replace(/^\uFEFF/, "")));
    return parsed.filter((n) => n?.date === today).map((n) => n.kind);
  });
  const reloads = attempt(() => J.readReloads(dir));
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
    stop: attempt(() => J.readStop(dir)),
    lock: lockExists ? { owner, state, next: NEXT[state] } : null,
  };
}

function printStatus(s) {
  const out = [];
  const shown = (r, f = (v) => v) => (r.refused !== undefined ? `refused: ${r.refused}` : f(r.value));
  out.push(`journal ${s.label} (${s.journal}); today is ${s.today} (UTC)`, "", "files:");
  for (const [name, f] of Object.entries(s.files)) {
    out.push(`  ${name.padEnd(17)} ${String(f.lines).padStart(8)} lines ${String(f.bytes).padStart(10)} bytes` + (f.refusal ? `  ${f.refusal}` : "") + (f.firstBadLine ? `  first bad line ${f.firstBadLine.line} at byte ${f.firstBadLine.offset}: readers refuse with "${f.firstBadLine.refusal}"` : ""));
  }
  if (Object.keys(s.files).length === 0) out.push("  (no record files)");
  out.push(`  turns/            ${String(s.turns).padStart(8)} records`, "");
  out.push("unresolved deliveries (oldest first):");
  if (s.unresolvedDeliveries.refused !== undefined) out.push(`  refused: ${s.unresolvedDeliveries.refused}`);
  else if (s.unresolvedDeliveries.value.length === 0) out.push("  none");
  else for (const d of s.unresolvedDeliveries.value) out.push(`  ${d.nonce}  ${d.status}  since ${d.intentAt ?? "?"}${d.ageSeconds === null ? "" : ` (${d.ageSeconds} s ago)`}`);
  out.push("", "today:");
  out.push(`  admissions ${shown(s.onToday.admissions)}, turns ${shown(s.onToday.turns)}, notices ${shown(s.onToday.notices, (k) => (k.length ? k.join(", ") : "none"))}`);
  const r = s.lastReload;
  out.push("", `last reload: ${r === null ? "none" : r.refused !== undefined ? `refused: ${r.refused}` : `${r.outcome}${r.at ? ` at ${r.at}` : ""}${r.reason ? ` (${r.reason})` : ""}`}`);
  out.push("", "STOP:");
  if (s.stop.refused !== undefined) out.push(`  refused: ${s.stop.refused}`);
  else if (s.stop.value.length === 0) out.push("  off");
  else for (const l of s.stop.value) out.push(`  on: ${l.reason ?? "(a line not written by the connector)"}${l.at ? ` at ${l.at}` : ""}`);
  out.push("", "run.lock:");
  if (s.lock === null) out.push("  free");
  else out.push(`  ${s.lock.state}${s.lock.owner && !s.lock.owner.invalid ? ` (pid ${s.lock.owner.pid})` : ""}: ${s.lock.next}`);
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

function demo(dir) {
  if (fs.existsSync(path.join(dir, "inbox.jsonl"))) throw new UsageError(`${dir} already holds a journal; give the demo a new directory (discord-journal demo DIR)`);
  const t0 = Date.now() - 3_600_000;
  const at = (min) => new Date(t0 + min * 60_000).toISOString();
  const id = (n) => String(1_250_000_000_000_000_000n + BigInt(n) * 4_194_304n);
  J.ensureJournal(dir);
  J.writePid(dir, process.pid);
  for (let i = 0; i < 5; i++) J.appendInbox(dir, { id: id(i), at: at(i * 5), channel: id(900), author: id(800 + (i % 2)) });
  for (let i = 0; i < 3; i++) {
    J.appendAdmission(dir, { id: `turn-${i}`, at: at(i * 5 + 1), message: id(i) });
    J.writeTurn(dir, `turn-${i}`, { startedAt: at(i * 5 + 1), finishedAt: at(i * 5 + 2), message: id(i), reply: `reply ${i}` });
    J.appendOutbox(dir, { nonce: `n${i}`, status: "intent", at: at(i * 5 + 2), channel: id(900) });
    J.appendOutbox(dir, i === 1 ? { nonce: `n${i}`, status: "refused", at: at(i * 5 + 3), error: "Missing Access" } : { nonce: `n${i}`, status: "confirmed", at: at(i * 5 + 3), messageId: id(100 + i) });
  }
  J.appendOutbox(dir, { nonce: "n3", status: "intent", at: at(20), channel: id(900) });
  J.appendDrop(dir, { at: at(22), reason: "ceiling", id: id(4) });
  J.appendNotice(dir, { kind: "ceiling", date: J.utcDate(Date.now()), at: at(22) });
  J.appendReload(dir, { outcome: "applied", at: at(25), differences: { ceiling: [3, 5] } });
  J.clearPid(dir, process.pid);
  J.requestStop(dir, "demo: an operator's brake");
  J.clearStop(dir);
  // A run that crashed holding the lock: its claim stays, its pid is gone.
  const crashed = spawnSync(process.execPath, ["-e", `require(${JSON.stringify(path.join(__dirname, ".."))}).writePid(${JSON.stringify(dir)}, process.pid)`]);
  if (crashed.status !== 0) throw new Error(`the crashed run could not claim: ${crashed.stderr}`);
  const recovered = J.recover(dir);
  return recovered;
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
  .showSuggestionAfterError()
  .showHelpAfterError("(run with --help for usage)");

const withDir = (cmd) =>
  cmd
    .argument("[dir]", "the binding's journal directory (or use --binding)")
    .option("--data-root <root>", "the data root that holds discord/<binding>/", "./data")
    .option("--binding <name>", "the binding's name, for <root>/discord/<name>");

withDir(program.command("status").description("summarize a journal: files, bad lines, deliveries, today's counts, STOP and the lock"))
  .option("--json", "print one JSON object")
  .action((dir, opts) =>
    run(() => {
      const d = journalDir(dir, opts);
      if (!fs.existsSync(d)) throw new UsageError(`no journal at ${d}; check the path (or --data-root and --binding)`);
      const s = status(d);
      console.log(opts.json ? JSON.stringify(s, null, 2) : printStatus(s));
    }),
  );

withDir(program.command("check").description("list every line and turn record the readers would refuse; exit 1 if any"))
  .action((dir, opts) =>
    run(() => {
      const d = journalDir(dir, opts);
      if (!fs.existsSync(d)) throw new UsageError(`no journal at ${d}; check the path (or --data-root and --binding)`);
      const problems = check(d);
      for (const p of problems) console.log(p);
      console.log(problems.length ? `${problems.length} problem(s)` : "every record file and turn record reads");
      process.exitCode = problems.length ? 1 : 0;
    }),
  );

withDir(program.command("stop").description("write STOP: no new turn starts and no run can claim the binding"))
  .argument("[reason]", "what the STOP line says", "stop")
  .action((dir, reason, opts) =>
    run(() => {
      // With --binding, a single word is the reason: `stop --binding NAME maintenance`.
      if (opts.binding !== undefined && dir !== undefined && reason === "stop") [dir, reason] = [undefined, dir];
      const d = journalDir(dir, opts);
      J.requestStop(d, reason);
      console.log(`STOP written in ${J.journalLabel(d)} (reason: ${reason})`);
    }),
  );

withDir(program.command("unlock").description("clear a run.lock whose owner is gone (writes STOP first; STOP stays)"))
  .action((dir, opts) =>
    run(() => {
      const d = journalDir(dir, opts);
      const rec = J.unlock(d);
      console.log(rec === false ? "no run.lock; STOP written" : `run.lock cleared${rec ? ` (was pid ${rec.pid})` : " (it had no owner record)"}; STOP stays: remove it to run`);
    }),
  );

withDir(program.command("recover").description("supervised pre-start: clear a crashed run's lock unless an operator braked"))
  .action((dir, opts) =>
    run(() => {
      console.log(J.recover(journalDir(dir, opts)));
    }),
  );

program
  .command("demo")
  .description("build a small, realistic journal the way a connector does, then print its status")
  .argument("[dir]", "where to build it", path.join("data", "discord", "demo"))
  .action((dir) =>
    run(() => {
      const recovered = demo(dir);
      console.log(`demo journal built in ${dir} (a crashed run's lock: recover said "${recovered}")\n`);
      console.log(printStatus(status(dir)));
    }),
  );

program.parse();
