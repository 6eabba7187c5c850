// A terminated Worker stops (#10): a Worker whose top level loops over the
// exports is terminated mid-loop; it stops at once (at most the iteration
// under way ends), and nothing in the journal may be created or changed
// once terminate() has returned. Figures (the time terminate() took, the
// files after it) are printed for both implementations: the time is a
// figure, not a test, since a loaded machine stretches it (#48). A Worker
// that did not stop would keep terminate() from ever settling: each
// Worker test's own timeout, generous for a loaded machine, is that
// promise's bound (a script vm's timeout did not stop would not return).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Worker } from "node:worker_threads";
import { M, isAddon, journal, modulePath } from "./helpers.mjs";

const figure = (name, value) => console.log(`# figure ${name}: ${value}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Deno's terminate() settles before the thread stops: journal.mjs there
// goes on writing for a thousand iterations after it, and so would anything.
const stopsAtOnce = process.versions.deno ? { skip: "Deno's Worker.terminate() returns before the thread stops" } : { timeout: 120_000 };

/** Every entry below `dir`: name, size and mtime. */
function snapshot(dir) {
  const rows = [];
  const walk = (rel) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const p = join(rel, name);
      const st = statSync(join(dir, p));
      rows.push(`${p} ${st.size} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk("");
  return rows;
}

/** A journal with something in every file, so that each read has work. */
function filled() {
  const dir = journal();
  const at = "2021-01-01T00:00:00.000Z";
  writeFileSync(join(dir, "drops.jsonl"), Array.from({ length: 20000 }, (_, i) => JSON.stringify({ n: i, at }) + "\n").join(""));
  writeFileSync(
    join(dir, "outbox.jsonl"),
    Array.from({ length: 2000 }, (_, i) => JSON.stringify({ nonce: `n${i % 500}`, status: "intent", at }) + "\n").join(""),
  );
  writeFileSync(join(dir, "inbox.jsonl"), Array.from({ length: 2000 }, (_, i) => JSON.stringify({ id: `m${i}` }) + "\n").join(""));
  writeFileSync(join(dir, "reloads.jsonl"), JSON.stringify({ outcome: "applied", at }) + "\n");
  writeFileSync(join(dir, "admissions.jsonl"), JSON.stringify({ id: "a", at }) + "\n");
  writeFileSync(join(dir, "notices.jsonl"), JSON.stringify({ kind: "ceiling", date: "2021-01-01" }) + "\n");
  for (let i = 0; i < 200; i++) M.writeTurn(dir, `t${i}`, { startedAt: at, n: i, text: i === 0 ? "x".repeat(1 << 20) : "" });
  return dir;
}

/** Runs the loop `kind` in a Worker for about 200 ms, then terminates it. */
async function terminateMidLoop(dir, kind) {
  const counter = new SharedArrayBuffer(4);
  const done = new Int32Array(counter);
  const worker = new Worker(new URL("./terminate-worker.mjs", import.meta.url), { workerData: { modulePath, dir, kind, counter } });
  let ended = null;
  worker.on("error", (e) => (ended = e));
  worker.on("exit", (code) => (ended ??= `exit ${code}`));
  await new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  await sleep(200);
  assert.equal(ended, null, "the loop was still running when terminate() was called");
  const t = performance.now();
  // terminate() has told the Worker's thread to stop when it returns; the
  // count is taken from there.
  const stopped = worker.terminate();
  const n = Atomics.load(done, 0);
  await stopped;
  const ms = performance.now() - t;
  const atReturn = snapshot(dir);
  const after = Atomics.load(done, 0) - n;
  await sleep(500);
  return { ms, after, atReturn, later: snapshot(dir) };
}

/** Turn records that are empty (an interrupted write) and whether listTurns reads them all. */
function turnsState(dir) {
  const empty = readdirSync(join(dir, "turns")).filter((f) => readFileSync(join(dir, "turns", f)).length === 0);
  let listed;
  try {
    listed = `listTurns reads ${M.listTurns(dir).length}`;
  } catch (e) {
    listed = `listTurns refuses "${e.message}"`;
  }
  return { empty, listed };
}

for (const [kind, what] of [
  ["reads", "every reader"],
  ["big", "readTurn of a 1 MiB record"],
]) {
  test(`a Worker terminated while it loops over ${what} stops at once and changes nothing`, stopsAtOnce, async () => {
    const dir = filled();
    const before = snapshot(dir);
    const { ms, after, atReturn, later } = await terminateMidLoop(dir, kind);
    figure(
      `terminate mid-${kind}`,
      `${ms.toFixed(1)} ms, ${after} iterations after terminate(), ${atReturn.length} entries, ${later.length - atReturn.length} created after`,
    );
    // The iteration under way may end (its last call returns into the
    // loop's own code), no other.
    if (isAddon) assert.ok(after <= 1, `${after} iterations after terminate()`);
    assert.deepEqual(later, atReturn, "nothing changes after terminate() returned");
    assert.deepEqual(atReturn, before, "reads change nothing");
  });
}

for (const [kind, what] of [
  ["turns", "writeTurn"],
  ["writes", "appends, turn records and processing stops"],
]) {
  test(`a Worker terminated while it loops over ${what} stops at once and leaves the journal readable`, stopsAtOnce, async () => {
    const dir = journal();
    const { ms, after, atReturn, later } = await terminateMidLoop(dir, kind);
    const { empty, listed } = turnsState(dir);
    const turns = atReturn.filter((r) => r.startsWith("turns/")).length;
    figure(
      `terminate mid-${kind}`,
      `${ms.toFixed(1)} ms, ${after} iterations after terminate(), ${turns} turn records, ${empty.length} empty, ${listed}`,
    );
    if (isAddon) assert.ok(after <= 1, `${after} iterations after terminate()`);
    assert.deepEqual(later, atReturn, "nothing is created or changed after terminate() returned");
    // Beyond the reference, whose `finally` never runs in a terminated
    // thread: a call cut short still releases `.stop.lock`.
    const stopLock = atReturn.some((r) => r.startsWith(".stop.lock"));
    if (stopLock) figure(`terminate mid-${kind}`, ".stop.lock left behind");
    if (isAddon) assert.ok(!stopLock, ".stop.lock is not left behind");
    // A turn record is linked into place only once written (#10.7), so not
    // even the call in flight leaves an empty one, and listTurns reads.
    if (isAddon) assert.equal(empty.length, 0, `${empty.length} empty turn records`);
    if (isAddon) assert.doesNotThrow(() => M.listTurns(dir));
    const drops = join(dir, "drops.jsonl");
    if (existsSync(drops)) for (const line of readFileSync(drops, "utf8").split("\n").slice(0, -1)) JSON.parse(line);
  });
}

test("a script stopped by vm's timeout stops at once, also inside a read", async () => {
  const { runInNewContext } = await import("node:vm");
  const dir = journal();
  M.writeTurn(dir, "t0", { text: "x".repeat(1 << 20) });
  for (const [what, code] of [
    ["readTurn", "for (;;) M.readTurn(dir, 't0')"],
    [
      "ownerState with a seam",
      "for (;;) M.ownerState({ pid: process.pid, start: '1', boot: 'b' }, { identity: () => ({ start: '1', boot: 'b' }) })",
    ],
  ]) {
    const t = performance.now();
    assert.throws(() => runInNewContext(code, { M, dir, process }, { timeout: 100 }), { code: "ERR_SCRIPT_EXECUTION_TIMEOUT" });
    const ms = performance.now() - t;
    figure(`vm timeout of 100 ms, ${what}`, `${ms.toFixed(0)} ms`);
  }
  assert.equal(M.readTurn(dir, "t0").text.length, 1 << 20);
});
