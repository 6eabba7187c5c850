// Journal files that are not regular files, and turn records interrupted
// mid-write (#10). Each call that the reference may hang in (a FIFO) or read
// without bound in (a device) runs in a child process with a time limit; the
// addon must refuse quickly by the file's journal name, and the reference's
// outcome is printed as a figure.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { GEN, M, isAddon, journal, modulePath, refuses, underUmask, mode, runModule } from "./helpers.mjs";

const figure = (name, value) => console.log(`# figure ${name}: ${value}`);

// A hang is judged by a generous limit, never by speed.
const ADDON_LIMIT = 60_000;
// The reference is known to hang here: it gets a short limit, for a figure.
const REFERENCE_LIMIT = 1_500;

/** The child's prelude: the module under test as `M`, and `out(f)` printing
 * what `f()` returns or throws as one JSON line. */
const prelude = `
const path = ${JSON.stringify(modulePath)};
const M = path.endsWith(".mjs") ? await import(path) : (await import("node:module")).createRequire(import.meta.url)(path);
const out = (f) => {
  let r;
  try { const v = f(); r = { value: v === undefined ? "undefined" : v }; }
  catch (e) { r = { name: e.name, message: e.message, exitCode: e.exitCode, code: e.code }; }
  process.stdout.write(JSON.stringify(r, (k, v) => (v instanceof Set || v instanceof Map ? [...v] : v)) + "\\n");
};
`;

/** Runs `body` (with `M`, `out` and `dir` in scope) in a child process; the
 * result, or `{ hung: ms }` when the limit killed it. */
function inChild(dir, body, limit = isAddon ? ADDON_LIMIT : REFERENCE_LIMIT) {
  const script = `${prelude}\nconst dir = ${JSON.stringify(dir)};\n${body}`;
  const t = performance.now();
  const [runtime, ...args] = runModule(script);
  const r = spawnSync(runtime, args, { encoding: "utf8", timeout: limit, killSignal: "SIGKILL" });
  const ms = Math.round(performance.now() - t);
  if (r.error?.code === "ETIMEDOUT" || r.signal) return { hung: ms };
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  return { ...JSON.parse(r.stdout.trim().split("\n").pop()), ms };
}

const mkfifo = (p) => {
  const r = spawnSync("mkfifo", ["-m", "600", p]);
  assert.equal(r.status, 0, `mkfifo: ${r.stderr}`);
};

/** Asserts the addon refused with `message` (exit 1) without hanging; on the
 * reference, prints what it did. */
function refusedByName(name, r, message, exitCode = 1) {
  if (!isAddon) {
    figure(name, r.hung !== undefined ? `the reference hangs (killed after ${r.hung} ms)` : `the reference: ${JSON.stringify(r)}`);
    return;
  }
  assert.equal(r.hung, undefined, `${name}: the addon hung`);
  assert.equal(r.name, "DiscordError", JSON.stringify(r));
  assert.equal(r.message, message);
  assert.equal(r.exitCode, exitCode);
  figure(name, `refused in ${r.ms} ms (process start included): ${message}`);
}

const LABEL = "discord/alpha under the data root";

describe("journal files that are not regular files", () => {
  test("a FIFO as inbox.jsonl: the readers and the append refuse it by name", () => {
    const dir = journal();
    mkfifo(join(dir, "inbox.jsonl"));
    refusedByName("readInboxIds of a FIFO", inChild(dir, "out(() => M.readInboxIds(dir));"), "could not read inbox.jsonl (EFTYPE)");
    refusedByName(
      "appendInbox to a FIFO",
      inChild(dir, 'out(() => M.appendInbox(dir, { id: "1" }));'),
      "could not append to inbox.jsonl (EFTYPE)",
    );
    // A reader at the other end does not make it a journal file either.
    if (isAddon) {
      const r = inChild(
        dir,
        `
        const { openSync } = await import("node:fs");
        const fd = openSync(dir + "/inbox.jsonl", "r+");
        out(() => M.appendInbox(dir, { id: "1" }));`,
      );
      refusedByName("appendInbox to a FIFO with a reader", r, "could not append to inbox.jsonl (EFTYPE)");
    }
  });

  test("a FIFO as STOP: readStop, requestStop, recover refuse; the processing stops stay the reference's", () => {
    const dir = journal();
    mkfifo(join(dir, "STOP"));
    // The reference's own verification (O_NONBLOCK, fstat) refuses these
    // (first: a reference killed in requestStop leaves .stop.lock behind).
    const req = inChild(dir, `out(() => M.requestProcessingStop(dir, ${JSON.stringify(GEN)}));`, ADDON_LIMIT);
    assert.equal(req.message, "STOP cannot be verified");
    const clear = inChild(dir, `out(() => M.clearProcessingStop(dir, ${JSON.stringify(GEN)}));`, ADDON_LIMIT);
    assert.equal(clear.value, false);
    refusedByName("readStop of a FIFO", inChild(dir, "out(() => M.readStop(dir));"), `could not read STOP in ${LABEL} (EFTYPE)`);
    refusedByName("requestStop to a FIFO", inChild(dir, "out(() => M.requestStop(dir));"), `could not write STOP in ${LABEL} (EFTYPE)`);
    refusedByName("recover with a FIFO as STOP", inChild(dir, "out(() => M.recover(dir));"), `could not read STOP in ${LABEL} (EFTYPE)`);
    assert.ok(existsSync(join(dir, "STOP")));
    if (isAddon) assert.ok(!existsSync(join(dir, ".stop.lock")), "the STOP lock is released after each refusal");
  });

  test("a FIFO as run.lock/owner.json: an unreadable owner record, which fails closed", () => {
    const dir = journal();
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    mkfifo(join(dir, "run.lock", "owner.json"));
    const pid = inChild(dir, "out(() => M.readPid(dir));");
    if (isAddon) assert.deepEqual(pid.value, { invalid: true });
    else figure("readPid of a FIFO", pid.hung !== undefined ? `the reference hangs (killed after ${pid.hung} ms)` : JSON.stringify(pid));
    refusedByName(
      "recover with a FIFO as owner.json",
      inChild(dir, "out(() => M.recover(dir));"),
      `run.lock has an owner record that cannot be read; refusing. Inspect run.lock/owner.json in ${LABEL} by hand`,
      3,
    );
    refusedByName(
      "unlock with a FIFO as owner.json",
      inChild(dir, "out(() => M.unlock(dir));"),
      `refusing to unlock: the owner record cannot be read; nothing removed. Inspect run.lock/owner.json in ${LABEL} by hand`,
    );
    if (isAddon) {
      assert.equal(inChild(dir, "out(() => M.clearPid(dir, process.pid));").value, "undefined");
      assert.equal(inChild(dir, "out(() => M.stopTarget(dir));").value, null);
      assert.ok(existsSync(join(dir, "run.lock", "owner.json")), "nothing removed");
    }
  });

  test("a FIFO as a turn record: readTurn, listTurns and countTurnsOn refuse it by id; writeTurn says it exists", () => {
    const dir = journal();
    mkfifo(join(dir, "turns", "t1.json"));
    const message = "could not read turn record t1 (EFTYPE)";
    refusedByName("readTurn of a FIFO", inChild(dir, 'out(() => M.readTurn(dir, "t1"));'), message);
    refusedByName("listTurns with a FIFO", inChild(dir, "out(() => M.listTurns(dir));"), message);
    refusedByName("countTurnsOn with a FIFO", inChild(dir, 'out(() => M.countTurnsOn(dir, "2021-01-01"));'), message);
    // The reference's exclusive create never opens it.
    const w = inChild(dir, 'out(() => M.writeTurn(dir, "t1", {}));', ADDON_LIMIT);
    assert.equal(w.message, "turn record already exists: t1");
  });

  test("a FIFO as turns/ lists as the reference does (readdir's ENOTDIR), without waiting", () => {
    const dir = journal();
    rmSync(join(dir, "turns"), { recursive: true });
    mkfifo(join(dir, "turns"));
    const r = inChild(dir, "out(() => M.listTurns(dir));", ADDON_LIMIT);
    assert.equal(r.message, `could not read the turns directory in ${LABEL} (ENOTDIR)`);
  });

  test("drops.jsonl a symlink to /dev/zero: refused, not read without bound", async () => {
    const dir = journal();
    symlinkSync("/dev/zero", join(dir, "drops.jsonl"));
    if (isAddon) {
      refusedByName("readDrops of /dev/zero", inChild(dir, "out(() => M.readDrops(dir));"), "could not read drops.jsonl (EFTYPE)");
      refusedByName(
        "appendDrop to /dev/zero",
        inChild(dir, "out(() => M.appendDrop(dir, { n: 1 }));"),
        "could not append to drops.jsonl (EFTYPE)",
      );
      return;
    }
    // The reference reads until memory runs out: watched, and stopped at
    // 256 MiB resident.
    figure("readDrops of /dev/zero", await growth(dir, "out(() => M.readDrops(dir));", 256));
    figure("appendDrop to /dev/zero", `the reference: ${JSON.stringify(inChild(dir, "out(() => M.appendDrop(dir, { n: 1 }));"))}`);
  });
});

/** How the child running `body` ends: killed once it is `mib` MiB resident
 * (or after 10 s), or with its result. */
function growth(dir, body, mib) {
  const script = `${prelude}\nconst dir = ${JSON.stringify(dir)};\n${body}`;
  return new Promise((resolve) => {
    const t = performance.now();
    const [runtime, ...args] = runModule(script);
    const child = spawn(runtime, args, { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const watch = setInterval(() => {
      let rss = 0;
      try {
        rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
      } catch {}
      if (rss > mib || performance.now() - t > 10_000) {
        child.kill("SIGKILL");
        clearInterval(watch);
        resolve(`the reference reads without bound: ${Math.round(rss)} MiB resident after ${Math.round(performance.now() - t)} ms, killed`);
      }
    }, 20);
    child.on("exit", () => {
      clearInterval(watch);
      resolve(`the reference returned: ${out.trim()}`);
    });
  });
}

describe("turn records interrupted mid-write", () => {
  test("a writer killed (SIGKILL) while writing large records leaves no empty or partial record", { timeout: 120_000 }, async () => {
    const trials = 12;
    let torn = 0,
      records = 0;
    for (let trial = 0; trial < trials; trial++) {
      const dir = journal();
      // Records of 1 MiB: making and writing each takes long enough that
      // the kill lands inside a write most of the time.
      const [runtime, ...args] = runModule(`${prelude}
        const dir = ${JSON.stringify(dir)};
        const body = "x".repeat(1 << 20);
        process.stdout.write("go\\n");
        // Stops by itself once the test that kills it is gone, so a run
        // interrupted never leaves it filling the disk.
        const parent = process.ppid;
        for (let i = 0; process.ppid === parent; i++) M.writeTurn(dir, "k" + i, { i, body });`);
      const child = spawn(runtime, args, { stdio: ["ignore", "pipe", "inherit"] });
      await new Promise((resolve) => child.stdout.once("data", resolve));
      await new Promise((resolve) => setTimeout(resolve, 30 + ((trial * 37) % 90)));
      child.kill("SIGKILL");
      await new Promise((resolve) => child.on("exit", resolve));
      const names = readdirSync(join(dir, "turns")).filter((n) => n.endsWith(".json"));
      records += names.length;
      const bad = names.filter((n) => {
        const text = readFileSync(join(dir, "turns", n), "utf8");
        try {
          const r = JSON.parse(text);
          return r.body.length !== 1 << 20 || `k${r.i}.json` !== n;
        } catch {
          return true;
        }
      });
      if (bad.length) torn++;
      if (isAddon) {
        assert.deepEqual(bad, [], `trial ${trial}: torn records`);
        assert.equal(M.listTurns(dir).length, names.length);
        assert.equal(M.countTurnsOn(dir, "2021-01-01"), 0);
      }
      rmSync(dir, { recursive: true, force: true });
    }
    figure("writer killed mid-write", `${torn} of ${trials} kills left an empty or partial record (${records} records in all)`);
  });

  // journal.mjs leaves such a record empty (0600), and its listTurns then
  // refuses; the addon leaves none (#37). The refusals and the exceptions
  // that escape are the same, converted in the same order.
  test("a record JSON.stringify throws for: the reference's refusal, and no record left (journal.mjs's empty one)", () => {
    const dir = journal();
    const left = (id) => {
      const path = join(dir, "turns", `${id}.json`);
      if (isAddon) return assert.equal(existsSync(path), false, `${id}.json left`);
      assert.equal(readFileSync(path, "utf8"), "");
      assert.equal(mode(path), underUmask(0o600));
    };
    refuses(() => M.writeTurn(dir, "t1", { n: 1n }), "could not write turn record t1 (unknown error)");
    left("t1");
    if (isAddon) assert.deepEqual(M.listTurns(dir), []);
    else refuses(() => M.listTurns(dir), "turn record t1: not valid JSON");
    // An error whose `code` getter throws: that exception escapes, and the
    // empty record is still there.
    const boom = new Error("from code");
    assert.throws(
      () =>
        M.writeTurn(dir, "t2", {
          toJSON() {
            throw Object.defineProperty(new Error("x"), "code", {
              get() {
                throw boom;
              },
            });
          },
        }),
      (e) => e === boom,
    );
    left("t2");
    // The refusal converts the id, then reads the error's code (twice: the
    // test of its type, then the message), as the reference's
    // quietFs(err, turnLabel(String(id)), ...) does.
    const log = [];
    const id = { toString: () => (log.push("id"), "t3") };
    const err = Object.defineProperty(new Error("x"), "code", { get: () => (log.push("code"), "EX") });
    refuses(
      () =>
        M.writeTurn(dir, id, {
          toJSON: () => (
            log.push("toJSON"),
            (() => {
              throw err;
            })()
          ),
        }),
      "could not write turn record t3 (EX)",
    );
    assert.deepEqual(log, ["id", "id", "toJSON", "id", "code", "code"]);
    left("t3");
    // The message shows the second read's value, converted by the template.
    let reads = 0;
    const shifty = Object.defineProperty(new Error("x"), "code", { get: () => (reads++ ? { toString: () => "SECOND" } : "FIRST") });
    refuses(
      () =>
        M.writeTurn(dir, "t4", {
          toJSON() {
            throw shifty;
          },
        }),
      "could not write turn record t4 (SECOND)",
    );
  });

  test("a whole record leaves nothing else in turns/", () => {
    const dir = journal();
    M.writeTurn(dir, "t1", { a: 1 });
    writeFileSync(join(dir, "turns", "t2.json"), "{}\n");
    assert.deepEqual(readdirSync(join(dir, "turns")).sort(), ["t1.json", "t2.json"]);
    assert.equal(mode(join(dir, "turns", "t1.json")), underUmask(0o600));
  });
});
