// `discord-journal status` as text: the verdict, the brake and the lock
// first (they decide whether the binding runs), what needs a hand with the
// command for each, then what the journal holds.
"use strict";

const { mark, dim, bold, commands, plural, ago, table, escapedAll } = require("./output.js");
const { STATE } = require("./verdict.js");

/**
 * A state as the verdict line and the fleet's line show it: one that reads
 * as all-clear (or as the brake alone) says the problems beside it, so
 * that none reads "ready" and needs a hand (#57).
 */
const withProblems = (state, problems) =>
  problems > 0 && STATE[state]?.needsHand !== true ? `${state}, ${plural(problems, "problem")}` : state;

/** The brake's and the lock's rows (`s` escaped). */
function headRows(s) {
  const head = [];
  const stop = s.stop;
  if (!stop.present) head.push(["STOP", mark("ok", "off"), "no brake"]);
  else if (stop.refused !== undefined) head.push(["STOP", mark("bad", "on"), `unreadable: ${stop.refused}`]);
  else if (stop.notShown) head.push(["STOP", mark("bad", "on"), `${plural(stop.lines, "line")} (${stop.notShown})`]);
  else if (stop.value.length === 0) head.push(["STOP", mark("bad", "on"), "empty (a brake all the same)"]);
  else {
    const lines = stop.value;
    const who = (l) => `${l.reason ?? "(a line not written by the connector)"}${l.at ? ` at ${l.at}` : ""}`;
    head.push([
      "STOP",
      mark("bad", "on"),
      `${who(lines.at(-1))}${lines.length > 1 ? ` (the last of ${plural(lines.length, "line")})` : ""}`,
    ]);
    for (const l of lines.slice(0, -1)) head.push(["", "", dim(`earlier: ${who(l)}`)]);
  }
  if (s.lock === null) head.push(["run.lock", mark("ok", "free"), "no connector holds the binding"]);
  else {
    const { state, owner } = s.lock;
    const level =
      state === "live" || (state === "unknown" && s.lock.elsewhere)
        ? "ok"
        : state === "dead" || state === "mismatch" || state === "invalid"
          ? "bad"
          : "warn";
    const whose = {
      live: "a connector holds the binding",
      dead: "which is gone",
      mismatch: "which is another process now",
      unknown: "alive, its identity unverifiable",
    };
    let who = "no owner record";
    if (state === "invalid") who = "owner.json cannot be read";
    else if (state === "unknown" && s.lock.elsewhere)
      who = `pid ${owner.pid ?? "(not shown)"} of another PID namespace, alive (pid ${s.lock.elsewhere} here)`;
    else if ((state === "dead" || state === "mismatch") && !s.lock.seesEveryProcess)
      who = `pid ${owner.pid ?? "(not shown)"}, not running in this PID namespace (this command cannot see the others)`;
    else if (state === "live" && s.lock.zombie)
      who = `pid ${owner.pid ?? "(not shown)"}, dead but not reaped by its parent${s.lock.zombie.parent ? ` (pid ${s.lock.zombie.parent.pid})` : ""}`;
    else if (state === "live" && s.lock.repair) who = `pid ${owner.pid ?? "(not shown)"}, a repair holds the binding until it is done`;
    else if (owner) who = `pid ${owner.pid ?? "(not shown)"}, ${whose[state]}`;
    head.push(["run.lock", mark(level, state), who]);
  }
  return head;
}

/** The record files' and turn records' lines (`s` escaped). */
function fileLines(s) {
  const out = ["", "files:"];
  const entries = Object.entries(s.files);
  const records = s.turns.records ?? 0;
  const lw = Math.max(String(records).length, ...entries.map(([, f]) => String(f.lines ?? "").length));
  const bw = Math.max(0, ...entries.map(([, f]) => String(f.bytes ?? "").length));
  // Counts right-aligned with their unit after one space: `    5 lines`, `    1 line`.
  const count = (n, w, one, many) => `${String(n).padStart(w)} ${n === 1 ? one : many}`;
  const rows = [];
  for (const [name, f] of entries) {
    if (f.refused !== undefined) {
      rows.push([`  ${name}`, "", "", mark("bad", `unreadable: ${f.refused}`)]);
      continue;
    }
    let note = "";
    if (f.badLines > 0)
      note = mark("bad", `${plural(f.badLines, "bad line")}, the first ${f.firstBadLine.line} (${f.firstBadLine.damage})`);
    else if (f.unterminated) note = mark("warn", "its last line has no newline");
    rows.push([`  ${name}`, count(f.lines, lw, "line", "lines"), count(f.bytes, bw, "byte", "bytes"), note]);
  }
  if (entries.length === 0) out.push("  (no record files)");
  if (s.turns.refused !== undefined) rows.push(["  turns/", "", "", mark("bad", `unreadable: ${s.turns.refused}`)]);
  else if (s.turns.notShown) rows.push(["  turns/", "", "", mark("bad", s.turns.notShown)]);
  else {
    const note = s.turns.badRecords > 0 ? mark("bad", `${plural(s.turns.badRecords, "bad record")}, the first ${s.turns.bad[0].file}`) : "";
    rows.push(["  turns/", count(records, lw, "record", "records"), "", note]);
  }
  out.push(...table(rows));
  return out;
}

/** The status `status` as a person reads it: the verdict, the brake and the lock, what needs a hand, then what the journal holds. */
function render(status) {
  // Every string read from the journal, escaped before any is painted.
  const s = escapedAll(status);
  const out = [];
  const shown = (r, f = (v) => v) => (r.refused !== undefined ? `refused: ${r.refused}` : r.notShown ? `(${r.notShown})` : f(r.value));
  out.push(`${bold(s.label)}  ${dim(`${s.journal}; today is ${s.today} (UTC)`)}`);
  if (s.journalLink) out.push(dim(`the journal's directory is a symbolic link to ${s.journalLink}`));
  out.push("");

  const v = s.verdict;
  const can = v.canStart === null ? "cannot tell whether it can start" : v.canStart ? "can start" : "cannot start";
  const word = withProblems(v.state, v.problems.length);
  out.push(`${bold("verdict:")} ${mark(word !== v.state ? "bad" : STATE[v.state].level, word)}, ${can}${v.why ? `: ${v.why}` : ""}`, "");

  out.push(...table(headRows(s)));

  if (v.problems.length > 0) {
    out.push("", "needs a hand:");
    // Two problems one command fixes (a mode that also makes a listing
    // fail): the command is printed once (#57).
    const given = new Set();
    for (const p of v.problems) {
      out.push(`  ${mark("bad", p.what)}`, `    ${dim("fix:")} ${given.has(p.fix) ? "the command above" : commands(p.fix)}`);
      given.add(p.fix);
    }
  }
  if (v.next !== null) out.push(`${bold("next:")} ${commands(v.next)}`);

  out.push(...fileLines(s));
  if (s.setAside.length > 0) out.push(dim(`  set aside by a repair, kept: ${s.setAside.join(", ")}`));

  out.push("", "unresolved deliveries (oldest first):");
  const u = s.unresolvedDeliveries;
  if (u.refused !== undefined) out.push(`  ${mark("bad", `refused: ${u.refused}`)}`);
  else if (u.notShown) out.push(`  ${mark(u.count ? "warn" : "ok", `${u.count}`)} (${u.notShown})`);
  else if (u.value.length === 0) out.push(`  ${mark("ok", "none")}`);
  else {
    // An intentAt that is no date has no age: said so, never NaN (#45).
    const when = (d) => (d.ageSeconds !== null ? ` (${ago(d.ageSeconds)})` : " (not a date)");
    // A time that is no string is shown as the JSON it is.
    const since = (d) =>
      d.intentAt === null ? "with no time" : `since ${typeof d.intentAt === "string" ? d.intentAt : JSON.stringify(d.intentAt)}${when(d)}`;
    out.push(...table(u.value.map((d) => [`  ${mark("warn", String(d.nonce))}`, String(d.status), since(d)])));
  }

  out.push("", `today (${s.today}):`);
  const t = s.onToday;
  out.push(
    ...table([
      ["  admissions", shown(t.admissions)],
      ["  turns", shown(t.turns)],
      ["  notices", shown(t.notices, (k) => (k.length ? k.join(", ") : "none"))],
    ]),
  );
  const r = s.lastReload;
  let reload = "none";
  if (r !== null && r.refused !== undefined) reload = `refused: ${r.refused}`;
  else if (r !== null && r.notShown) reload = `(${r.notShown})`;
  else if (r !== null) reload = `${r.outcome}${r.at ? ` at ${r.at}` : ""}${r.reason ? ` (${r.reason})` : ""}`;
  out.push("", `last reload: ${reload}`);
  return out.join("\n");
}

module.exports = { render, withProblems };
