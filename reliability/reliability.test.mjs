// Reliability: real processes racing on one journal, processes killed at
// the worst moment, faults the file system raises, and resources over many
// calls. Each test prints its figure; run on the addon and, through
// JOURNAL_MODULE, on the reference.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { run } from "./run.mjs";
import { M, isAddon, journal, noHostPath, refuses, throwsClass } from "../__test__/helpers.mjs";

const worker = fileURLToPath(new URL("worker.mjs", import.meta.url));
const figure = (name, value) => console.log(`# figure ${name}: ${value}`);

const within = { timeout: 60_000 };

describe("concurrency", () => {
  /** Every line of drops.jsonl as written, empty ones included, and whether each writer's are whole and in order. */
  function appended(dir, writers, n) {
    const lines = readFileSync(join(dir, "drops.jsonl"), "utf8").split("\n");
    assert.equal(lines.pop(), "", "the file ends with a newline");
    const empty = lines.filter((l) => l === "").length;
    const next = Array.from({ length: writers }, () => 0);
    for (const l of lines.filter(Boolean)) {
      const { w, i } = JSON.parse(l);
      assert.equal(i, next[w]++, `writer ${w} out of order`);
    }
    assert.deepEqual(
      next,
      Array.from({ length: writers }, () => n),
    );
    return { lines: lines.length, empty };
  }

  // #31: another writer's line, which the kernel makes visible a page at a
  // time, was taken for a cut line, and an empty line written before ours.
  test("8 processes x 3,000 appends: every line whole, each writer's lines in order, no empty line", within, async () => {
    const dir = journal();
    const t = performance.now();
    await Promise.all(Array.from({ length: 8 }, (_, w) => run("append", dir, w, 3000)));
    const { lines, empty } = appended(dir, 8, 3000);
    figure(
      "concurrent appends",
      `${lines} lines, ${empty} empty, every record whole and in writer order, ${(performance.now() - t).toFixed(0)} ms`,
    );
    if (isAddon) assert.equal(empty, 0);
    assert.equal(M.readDrops(dir).length, 24000);
  });

  test("3 processes x 300 appends of 200 KB lines: every line whole, no empty line", within, async () => {
    const dir = journal();
    const t = performance.now();
    await Promise.all(Array.from({ length: 3 }, (_, w) => run("append", dir, w, 300, 200_000)));
    const { lines, empty } = appended(dir, 3, 300);
    figure("concurrent appends of 200 KB", `${lines} lines, ${empty} empty, every record whole, ${(performance.now() - t).toFixed(0)} ms`);
    if (isAddon) assert.equal(empty, 0);
  });

  test("6 processes create the same 300 turn records: one winner each, losers refused, records whole", within, async () => {
    const dir = journal();
    const results = await Promise.all(Array.from({ length: 6 }, (_, w) => run("turns", dir, w, 300)));
    const winners = new Map();
    for (const [w, r] of results.entries()) {
      assert.deepEqual(r.other, []);
      for (const i of r.won) {
        assert.ok(!winners.has(i), `t${i} won twice`);
        winners.set(i, w);
      }
    }
    assert.equal(winners.size, 300);
    assert.equal(
      results.reduce((n, r) => n + r.lost, 0),
      5 * 300,
    );
    for (const [i, w] of winners) assert.deepEqual(M.readTurn(dir, `t${i}`), { writer: w, i, body: "z".repeat(500), id: `t${i}` });
    figure("write-once race", '300 records, 300 winners, 1500 refusals "already exists"');
  });

  test("4 processes claim, hold and release run.lock for 3 s: never two holders", within, async () => {
    const dir = journal();
    writeFileSync(join(dir, "counter"), "0");
    const results = await Promise.all(Array.from({ length: 4 }, () => run("lock", dir, 3000)));
    const holds = results.reduce((n, r) => n + r.holds, 0);
    assert.equal(
      results.reduce((n, r) => n + r.violations, 0),
      0,
    );
    assert.equal(Number(readFileSync(join(dir, "counter"), "utf8")), holds);
    assert.ok(holds > 0);
    figure("lock exclusion", `${holds} holds, counter ${holds}, 0 overlaps, ${results.reduce((n, r) => n + r.refused, 0)} refused claims`);
  });

  test("claims racing unlock: none stands once unlock has written STOP", within, async () => {
    const dir = journal();
    const [a, b, u] = await Promise.all([run("claim", dir, 3000, 2), run("claim", dir, 3000, 2), run("unlock", dir, 1500)]);
    const late = [...a.stood, ...b.stood].filter((t) => t > u.stopAt);
    assert.deepEqual(late, []);
    assert.equal(M.stopRequested(dir), true);
    figure("STOP gate", `${a.stood.length + b.stood.length} claims stood before STOP, 0 after (unlock: ${u.result})`);
  });

  test("recover racing claims never removes a live owner's lock", within, async () => {
    const dir = journal();
    const [a, b, r] = await Promise.all([run("claim", dir, 3000, 5), run("claim", dir, 3000, 5), run("recover", dir, 3000)]);
    const lost = a.lost + b.lost;
    figure(
      "recover vs claims",
      `${a.stood.length + b.stood.length} claims stood, ${lost} lost their lock while holding; recover: ${JSON.stringify(r)}`,
    );
    // The reference loses claims here in most runs (docs/reliability.md); the
    // addon must lose none.
    if (isAddon) assert.equal(lost, 0, `lost: ${JSON.stringify([...a.losses, ...b.losses])}`);
    // owner.json is published whole, so recover never finds an unreadable
    // record; the addon must not refuse one (a brake a supervisor does not
    // retry) because a claim's record vanished between two looks at it.
    if (isAddon)
      assert.equal(Object.keys(r).filter((k) => k.startsWith("run.lock has an owner record that cannot")).length, 0, JSON.stringify(r));
  });

  // #55: a turns/ that is a dangling link opened no guard, so claims and
  // recovers ran at once and two recovers' STOP lines stayed behind, a
  // brake no operator wrote. The journal directory's flock guards it.
  test("3 claims and 2 recovers with turns/ a dangling link: no claim lost, no STOP left behind", within, async () => {
    const dir = journal();
    rmSync(join(dir, "turns"), { recursive: true });
    symlinkSync(join(dir, "nowhere"), join(dir, "turns"));
    const runs = await Promise.all([
      run("claim", dir, 3000, 5),
      run("claim", dir, 3000, 5),
      run("claim", dir, 3000, 5),
      run("recover", dir, 3000),
      run("recover", dir, 3000),
    ]);
    const claims = runs.slice(0, 3);
    const lost = claims.reduce((n, c) => n + c.lost, 0);
    const braked = M.stopRequested(dir);
    figure(
      "dangling turns/",
      `${claims.reduce((n, c) => n + c.stood.length, 0)} claims stood, ${lost} lost their lock while holding; STOP left: ${braked}`,
    );
    // journal.mjs has no guard and loses claims here; the addon none.
    if (isAddon) {
      assert.equal(lost, 0, `lost: ${JSON.stringify(claims.flatMap((c) => c.losses))}`);
      assert.equal(braked, false, JSON.stringify(M.readStop(dir)));
    }
  });

  test("4 x 100 requestStop, retrying the lock refusal: 400 whole lines", within, async () => {
    const dir = journal();
    const results = await Promise.all(Array.from({ length: 4 }, (_, w) => run("stop", dir, w, 100)));
    const lines = M.readStop(dir);
    assert.equal(lines.length, 400);
    assert.equal(new Set(lines.map((l) => l.reason)).size, 400);
    figure("concurrent STOP writers", `400 lines whole, ${results.reduce((n, r) => n + r.retries, 0)} retries of "STOP update is locked"`);
  });
});

describe("kill -9", () => {
  test("a writer killed while appending: every acknowledged line reads back", within, async () => {
    const dir = journal();
    const child = spawn(process.execPath, [worker, "append-forever", dir], { stdio: ["ignore", "pipe", "inherit"] });
    let acked = "";
    // Killed once it has acknowledged 200 lines, not after a fixed time: on a
    // loaded machine the child can take a second to start.
    await new Promise((r) =>
      child.stdout.on("data", (d) => {
        acked += d;
        if (acked.split("\n").length > 200) r();
      }),
    );
    child.kill("SIGKILL");
    await new Promise((r) => child.on("exit", r));
    const last = Number(acked.trim().split("\n").pop());
    const read = M.readDrops(dir);
    assert.ok(read.length >= last + 1, `${read.length} lines, ${last + 1} acknowledged`);
    for (let i = 0; i <= last; i++) assert.equal(read[i].i, i);
    figure("killed writer", `${last + 1} acknowledged, ${read.length} read back, none torn`);
  });

  test("a claimant killed between mkdir and publishing: refused as ownerless, unlock clears it", within, async () => {
    const dir = journal();
    await assert.rejects(run("die-claiming", dir));
    assert.deepEqual(
      readdirSync(join(dir, "run.lock")).filter((n) => n === "owner.json"),
      [],
    );
    refuses(
      () => M.writePid(dir, process.pid),
      "run.lock exists without an owner record: a start is in progress or was interrupted; if no connector is running for this binding, run `scripts/discord.sh unlock <binding>`",
      3,
    );
    assert.equal(M.unlock(dir), null);
    M.clearStop(dir);
    M.writePid(dir, process.pid);
    M.clearPid(dir, process.pid);
    figure("killed claimant", "half-claimed lock refused, unlock cleared it, a new claim stood");
  });

  test("pid reuse: an alive pid whose start time differs is a mismatch, never live", () => {
    const dir = journal();
    const me = M.identityOf(process.pid);
    mkdirSync(join(dir, "run.lock"));
    writeFileSync(
      join(dir, "run.lock", "owner.json"),
      JSON.stringify({ pid: process.pid, start: String(BigInt(me.start) + 7n), boot: me.boot }),
    );
    assert.equal(M.ownerState(M.readPid(dir)), "mismatch");
    assert.equal(M.stopTarget(dir), null);
  });
});

describe("faults", () => {
  test("ENOTDIR: a file where the journal directory should be", () => {
    const dir = journal({ bare: true });
    mkdirSync(join(dir, ".."), { recursive: true });
    writeFileSync(dir, "");
    noHostPath(
      refuses(() => M.appendInbox(dir, { id: "1" }), "could not append to inbox.jsonl (ENOTDIR)"),
      dir,
    );
    refuses(() => M.requestStop(dir), "STOP update is locked; refusing");
    throwsClass(() => M.ensureJournal(dir), Error, "ENOTDIR");
    refuses(() => M.writePid(dir, process.pid), "could not create run.lock in discord/alpha under the data root (ENOTDIR)");
  });

  test("EISDIR, ELOOP and EEXIST: directories and symlinks where files should be", () => {
    const dir = journal();
    mkdirSync(join(dir, "outbox.jsonl"));
    noHostPath(
      refuses(() => M.readOutbox(dir), "could not read outbox.jsonl (EISDIR)"),
      dir,
    );
    symlinkSync(join(dir, "target"), join(dir, "STOP"));
    refuses(() => M.requestStop(dir), "could not write STOP in discord/alpha under the data root (ELOOP)");
    symlinkSync(join(dir, "target"), join(dir, "turns", "t1.json"));
    refuses(() => M.writeTurn(dir, "t1", {}), "turn record already exists: t1");
    assert.throws(() => readFileSync(join(dir, "target")), { code: "ENOENT" });
  });

  test("EMFILE: out of file descriptors (a child with every descriptor taken)", within, async () => {
    const dir = journal();
    const r = await run("emfile", dir);
    assert.equal(r.append, "could not append to inbox.jsonl (EMFILE)");
    assert.equal(r.turn, "could not write turn record t1 (EMFILE)");
    // No inbox was created, so the read finds nothing to open.
    assert.equal(r.read, "ok");
    figure("EMFILE", JSON.stringify(r));
  });

  test("ENOSPC: a full file system (a small tmpfs)", within, (t) => {
    const mnt = journal({ bare: true });
    mkdirSync(mnt, { recursive: true });
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mnt], { stdio: "ignore" });
    } catch {
      t.skip("mounting a tmpfs is not allowed here");
      return;
    }
    try {
      M.ensureJournal(mnt);
      try {
        for (let i = 0; ; i++) M.appendDrop(mnt, { i, pad: "p".repeat(1000) });
      } catch (e) {
        assert.equal(e.message, "could not append to drops.jsonl (ENOSPC)");
      }
      refuses(() => M.writeTurn(mnt, "t1", { pad: "q".repeat(10_000) }), "could not write turn record t1 (ENOSPC)");
      // The addon links a record only once it is written whole: the full
      // disk leaves none, and the id can be written again (#10). The
      // reference leaves the partial record, never presented as whole.
      if (isAddon) {
        refuses(() => M.readTurn(mnt, "t1"), "could not read turn record t1 (ENOENT)");
        assert.deepEqual(M.listTurns(mnt), []);
      } else refuses(() => M.readTurn(mnt, "t1"), "turn record t1: not valid JSON");
      // A claim the full disk stops leaves no run.lock behind (the addon;
      // the reference leaves it ownerless, for unlock).
      let claim;
      try {
        M.writePid(mnt, process.pid, { identity: () => ({ start: "5", boot: "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a" }) });
        claim = "stood";
      } catch (e) {
        claim = e.message;
      }
      const lockLeft = readdirSync(mnt).includes("run.lock");
      if (isAddon && claim !== "stood") assert.equal(lockLeft, false);
      if (isAddon) {
        // The addon cuts off a line the full disk tore: the file still reads.
        const drops = M.readDrops(mnt);
        assert.ok(drops.length > 0 && drops.every((d, i) => d.i === i));
        figure(
          "ENOSPC",
          `append and turn refused by name, no partial turn record left; the ${drops.length} earlier lines read back whole; claim: ${claim}, run.lock left: ${lockLeft}`,
        );
      } else {
        let after;
        try {
          after = `${M.readDrops(mnt).length} lines read back`;
        } catch (e) {
          after = `the next read refuses: ${e.message}`;
        }
        figure("ENOSPC", `append and turn refused by name; ${after}; claim: ${claim}, run.lock left: ${lockLeft}`);
      }
    } finally {
      execFileSync("umount", [mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });
});

describe("resources", () => {
  const fds = () => readdirSync("/proc/self/fd").length;
  const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

  test("open files and memory stay flat over 10,000 mixed calls", within, () => {
    const dir = journal();
    const mixed = (i) => {
      M.appendInbox(dir, { id: String(i % 500) });
      M.readInboxIds(dir);
      M.countAdmissionsOn(dir, "2021-01-01");
      M.noticeOn(dir, "k", "d");
      M.stopRequested(dir);
      if (i % 50 === 0) {
        M.requestStop(dir, "r");
        M.readStop(dir);
        M.clearStop(dir);
        M.writePid(dir, process.pid);
        M.readPid(dir);
        M.clearPid(dir, process.pid);
      }
    };
    for (let i = 0; i < 1000; i++) mixed(i);
    globalThis.gc?.();
    const [fd0, rss0] = [fds(), rssMiB()];
    for (let i = 1000; i < 11000; i++) mixed(i);
    globalThis.gc?.();
    const [fd1, rss1] = [fds(), rssMiB()];
    assert.equal(fd1, fd0);
    assert.ok(rss1 - rss0 < 32, `RSS grew ${(rss1 - rss0).toFixed(1)} MiB`);
    figure("10,000 mixed calls", `fds ${fd0} -> ${fd1}, RSS ${rss0.toFixed(1)} -> ${rss1.toFixed(1)} MiB`);
  });

  test("memory stays flat over 200 reads of 100,000 lines", { timeout: 300_000 }, async () => {
    const dir = journal();
    const line =
      JSON.stringify({ at: "2024-01-01T00:00:00.000Z", reason: "ceiling", id: "1100000000000000000", pad: "x".repeat(40) }) + "\n";
    writeFileSync(join(dir, "drops.jsonl"), line.repeat(100_000));
    // In a fresh process, so that what earlier tests left in this one's heap
    // is not counted. Sampled after a collection every 20 reads: flat means
    // the last samples are no higher than the first ones (V8's heap
    // breathes, so one sample against another would be noise).
    const { fd0, fd1, samples } = await run("reads", dir);
    const [rss0, rss1] = [Math.max(...samples.slice(0, 3)), Math.max(...samples.slice(-3))];
    figure(
      "200 reads of 100,000 lines",
      `fds ${fd0} -> ${fd1}, RSS (highest of the first and last 60 reads) ${rss0.toFixed(1)} -> ${rss1.toFixed(1)} MiB`,
    );
    assert.equal(fd1, fd0);
    // journal.mjs's own reads grew by more now and then (1 of 3 runs on a
    // loaded machine): a figure for it, the property asserted on the addon.
    if (isAddon) assert.ok(rss1 - rss0 < 64, `RSS grew ${(rss1 - rss0).toFixed(1)} MiB: ${samples.map((x) => x.toFixed(0)).join(" ")}`);
  });
});
