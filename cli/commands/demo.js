// `discord-journal demo`: a journal in the state an operator most needs to
// recognise: a connector ran (messages, turns, deliveries with one refused
// and one unresolved, a drop, a notice, a reload), an operator braked it,
// and it died holding its lock. Its owner record names a pid that is gone.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const { J } = require("../journal.js");
const { reach, hereStill } = require("../target.js");
const { render } = require("../status-text.js");
const { status } = require("./status.js");
const { UsageError, Refusal, invocation } = require("../output.js");

/** The demo's directory: DIR if given and new, else the first free `data/discord/demo`, `demo-2`, ... */
function demoDir(dir) {
  hereStill(dir ?? path.join("data", "discord", "demo"), "demo");
  if (dir !== undefined) {
    let st;
    try {
      st = fs.statSync(dir, { throwIfNoEntry: false });
    } catch (e) {
      throw new UsageError(`cannot use ${dir} for the demo (${e.code}); give it a new directory you can create (${invocation()} demo DIR)`);
    }
    if (st !== undefined && (!st.isDirectory() || fs.readdirSync(dir).length > 0)) {
      throw new UsageError(
        `${dir} already exists; give the demo a new directory (${invocation()} demo DIR), or none for a fresh one under ./data`,
      );
    }
    return dir;
  }
  for (let n = 1; ; n++) {
    const d = path.join("data", "discord", n === 1 ? "demo" : `demo-${n}`);
    if (!fs.existsSync(d)) return d;
  }
}

function build(dir) {
  const now = Date.now();
  const t0 = now - 3_600_000;
  const at = (min) => new Date(t0 + min * 60_000).toISOString();
  // The turns and admissions are today's (what the daily ceiling counts),
  // also in the first hour after midnight UTC, when an hour ago is yesterday.
  const today = (min) => new Date(Math.max(t0 + min * 60_000, Date.parse(J.utcDate(now)))).toISOString();
  const id = (n) => String(1_250_000_000_000_000_000n + BigInt(n) * 4_194_304n);
  try {
    J.ensureJournal(dir);
  } catch (e) {
    throw new Refusal(
      `cannot make the demo's journal at ${dir} (${e.code ?? e.message}); give it a directory you can create (${invocation()} demo DIR)`,
    );
  }
  for (let i = 0; i < 5; i++) J.appendInbox(dir, { id: id(i), at: at(i * 5), channel: id(900), author: id(800 + (i % 2)) });
  for (let i = 0; i < 3; i++) {
    J.appendAdmission(dir, { id: `turn-${i}`, at: today(i * 5 + 1), message: id(i) });
    J.writeTurn(dir, `turn-${i}`, { startedAt: today(i * 5 + 1), finishedAt: today(i * 5 + 2), message: id(i), reply: `reply ${i}` });
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
  J.appendNotice(dir, { kind: "ceiling", date: J.utcDate(now), at: at(22) });
  J.appendReload(dir, { outcome: "applied", at: at(25), differences: { ceiling: [3, 5] } });
  // The connector's run: a separate process claims the binding and exits
  // without releasing it, as a crash or kill -9 would leave it.
  const code = `require(${JSON.stringify(path.join(__dirname, "..", ".."))}).writePid(${JSON.stringify(dir)}, process.pid)`;
  const crashed = spawnSync(process.execPath, ["-e", code], { encoding: "utf8" });
  if (crashed.status !== 0)
    throw new Refusal(`the demo's connector could not claim the binding: ${crashed.stderr.trim().split("\n").at(-1)}`);
  J.requestStop(dir, "operator alice: replies looping in #general; braked to look");
}

/** The command: the demo built in `dir` (or a fresh directory), then its status shown. */
function action(dir, opts) {
  const d = demoDir(dir);
  build(d);
  const s = status(reach(d, { command: "demo", argv: ["discord-journal", "status", d] }));
  if (opts.json) return { json: { ok: true, exitCode: 0, dir: d, status: s } };
  const text = [
    `demo: a connector ran in ${d}; an operator braked it, then it crashed holding its lock.\n`,
    render(s),
    `\nTry it: run what \`next\` says, then \`${invocation()} status ${d}\` again ("The demo" in docs/command.md, which the package carries, shows it).`,
  ];
  return { json: null, text: text.join("\n") };
}

module.exports = { action, demoDir, build };
