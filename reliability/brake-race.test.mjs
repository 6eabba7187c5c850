// An operator's brake that races `recover` (#21): `recover` removes STOP
// only while it holds the one line `recover` wrote, and an operator's
// `requestStop` that lands between that check and the removal must never
// be deleted with it. Two threads, each with the module under test, meet
// at a barrier for every trial; the operator's thread waits a random part
// of a recover's duration first, so the trials spread over every step of
// it. Runs on the addon and, through JOURNAL_MODULE, on the reference;
// where the reference deletes brakes, its figure is printed.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import { M, deadPid, isAddon, modulePath } from "../__test__/helpers.mjs";

const figure = (name, value) => console.log(`# figure ${name}: ${value}`);
const TRIALS = 1500;

const made = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** Journals whose owner died holding run.lock: what `recover` clears. */
function crashed(n) {
  let top;
  try {
    top = mkdtempSync(join("/dev/shm", "discord-journal-race-"));
  } catch {
    top = mkdtempSync(join(tmpdir(), "discord-journal-race-"));
  }
  made.push(top);
  const record = `${JSON.stringify({ pid: deadPid(), start: "5", boot: M.bootId(), at: "2021-01-01T00:00:00.000Z" })}\n`;
  return Array.from({ length: n }, (_, i) => {
    const dir = join(top, "discord", `b${i}`);
    M.ensureJournal(dir);
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    writeFileSync(join(dir, "run.lock", "owner.json"), record, { mode: 0o600 });
    return dir;
  });
}

// Each thread loads the module, then for each trial waits at the barrier
// and makes its call: `recover`, or (after a random pause) the operator's
// `requestStop`. Each outcome is returned as "ok" or the refusal.
const ROLE = `
const { workerData, parentPort } = require("node:worker_threads");
const { pathToFileURL } = require("node:url");
(async () => {
  const { path, role, dirs, barrier, pause } = workerData;
  const M = path.endsWith(".mjs") ? await import(pathToFileURL(path).href) : require(path);
  const gate = new Int32Array(barrier);
  const out = [];
  for (let i = 0; i < dirs.length; i++) {
    // Both threads arrive, then both go.
    if (Atomics.add(gate, 0, 1) % 2 === 0) Atomics.wait(gate, 1, i);
    else { Atomics.store(gate, 1, i + 1); Atomics.notify(gate, 1); }
    if (role === "operator") {
      const until = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * pause));
      while (process.hrtime.bigint() < until);
    }
    try {
      if (role === "operator") M.requestStop(dirs[i], "operator");
      else M.recover(dirs[i]);
      out.push("ok");
    } catch (e) {
      out.push(e.message);
    }
  }
  parentPort.postMessage(out);
})();
`;

function thread(role, dirs, barrier, pause) {
  const w = new Worker(ROLE, { eval: true, workerData: { path: modulePath, role, dirs, barrier, pause } });
  return new Promise((resolve, reject) => {
    w.once("message", resolve);
    w.once("error", reject);
  });
}

describe("recover and an operator's brake", () => {
  test(`${TRIALS} racing trials: an operator's requestStop that succeeded is never deleted by recover`, { timeout: 300_000 }, async () => {
    // How long one recover takes here, so that the pauses cover all of it.
    const probe = crashed(20);
    const t0 = process.hrtime.bigint();
    for (const d of probe) M.recover(d);
    const pause = Number((process.hrtime.bigint() - t0) / 20n) * 1.5;
    const dirs = crashed(TRIALS);
    const barrier = new SharedArrayBuffer(8);
    const [recovered, braked] = await Promise.all([thread("recover", dirs, barrier, pause), thread("operator", dirs, barrier, pause)]);
    let deleted = 0;
    let stood = 0;
    let refused = 0;
    for (let i = 0; i < TRIALS; i++) {
      if (braked[i] !== "ok") {
        // Refused ("STOP update is locked"): the operator is told, and retries.
        refused++;
        continue;
      }
      const reasons = M.readStop(dirs[i]).map((l) => l.reason);
      if (reasons.includes("operator")) stood++;
      else deleted++;
    }
    const outcomes = {};
    for (const r of recovered) {
      const k = r.replace(/discord\/b\d+/, "discord/<b>");
      outcomes[k] = (outcomes[k] ?? 0) + 1;
    }
    const summary = `${deleted} of ${TRIALS} operator brakes deleted (${stood} stood, ${refused} refused as locked); recover: ${JSON.stringify(outcomes)}`;
    figure(`brake race (${isAddon ? "addon" : "journal.mjs"})`, summary);
    if (isAddon) assert.equal(deleted, 0, summary);
  });
});
