// The lock under schedules (#30, docs/lock.md): the explorer's sample, the
// sequences that broke it before the lock guard, replayed with the same
// pauses, stalls (a process stopped inside an operation while others run),
// and the random stress rows. Each prints its figure; the addon must break
// no promise, the reference's figure is printed beside it.
//
// Every pause a test names must be reached, at the call meant: sequence()
// throws otherwise, naming each pause missed (a schedule that did not
// happen proves nothing), and the explorer fails a run in which more than
// MAX_UNVERIFIED of its pauses fell elsewhere. Each test says which
// protection it guards and what a change of the code would have to break
// for it to fail, and the mutants that were run to show it (#44). A
// journal without turns/ was a stand-in for the guard dropped from every
// operation at once; since #44 it is guarded too (by the journal
// directory's flock), so its figures below show the guard there, not its
// absence.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { run } from "./run.mjs";
import { MAX_UNVERIFIED, TURNS_KINDS, canTrace, explore, heldAt, isAddon, sequence, shapeTurns, stallNamed, stalls } from "./explore.mjs";
import { M, journal, modulePath, refuses } from "../__test__/helpers.mjs";

const figure = (name, value) => console.log(`# figure ${name}: ${value}`);
const traced = canTrace ? {} : { skip: "strace cannot trace and inject here" };
const worker = fileURLToPath(new URL("worker.mjs", import.meta.url));

/** What a sequence did, in one line (it threw if a pause was not reached). */
const said = (r) =>
  r.applicable
    ? `${r.problems.length ? r.problems.join("; ") : "no promise broken"} (every pause reached)`
    : `not applicable (${r.missing.join(", ")}: this implementation makes no such call)`;

/** The stalls the suite plays: the steps of docs/lock.md each picks, by its call. */
const STALL_SAMPLE = [
  {
    ops: ["claim", "stop", "processingStop"],
    base: "empty",
    at: [
      { name: "flock", match: /LOCK_EX/ },
      { name: "mkdir", match: /run\.lock"/ },
      { name: "fsync" },
      { name: "access", match: /STOP"/ },
      { name: "flock", match: /LOCK_UN/ },
    ],
  },
  {
    ops: ["claim", "release", "stop", "processingStop"],
    base: "held",
    at: [{ name: "mkdir", match: /run\.lock"/ }, { name: "kill" }],
  },
  {
    ops: ["recover", "stop", "processingStop"],
    base: "stale",
    at: [
      { name: "flock", match: /LOCK_EX/ },
      { name: "fsync" },
      { name: "unlinkat", match: /AT_REMOVEDIR/ },
      { name: "unlink", match: /STOP"/ },
    ],
  },
  { ops: ["recover", "release", "stop", "processingStop"], base: "held", at: [{ name: "kill" }] },
];

describe("schedules", () => {
  // #34: a STOP update paused at each of its system calls (from the STOP
  // mark's fcntl to the rmdir of .stop.lock) while the command judges
  // .stop.lock and a repair would remove a left one. The judge must never
  // call a live update's .stop.lock left, and the repair never remove it:
  // the update finishes, and its line is in STOP.
  //
  // Guards: a STOP update holds the guard from before its mkdir of
  // .stop.lock to after its rmdir (s1 to s7), and the judge and the repair
  // take it before they look (j1). Fails if a STOP update runs without the
  // guard, or drops it before its rmdir, or if the judge or the repair
  // look without waiting for it: the judge then finds the paused update's
  // .stop.lock and, proving it held by no live update, calls it left, and
  // the repair removes it (before the guard: at four of the six steps).
  test("a live STOP update's .stop.lock is never judged left over, nor removed", { ...traced, timeout: 300_000 }, async () => {
    const steps = [
      { name: "fcntl", match: /F_OFD_SETLK/ },
      { name: "mkdir", match: /\.stop\.lock"/ },
      { name: "openat", match: /STOP"/ },
      { name: "write", match: /\{\\"at\\":/ },
      { name: "fsync", nth: 1 },
      { name: "rmdir", match: /\.stop\.lock"/ },
    ];
    const seen = [];
    const broken = [];
    for (const step of steps) {
      const r = await sequence({
        base: "empty",
        ops: ["stop", "judge", "repair"],
        procs: [
          { op: "stop", tag: "S", at: [0], pauses: [{ ...step, ms: 1500 }] },
          { op: "judge", tag: "J", at: [400] },
          { op: "repair", tag: "R", at: [600] },
        ],
      });
      if (!r.applicable) {
        seen.push(`${step.name}: not applicable (${r.missing.join(", ")})`);
        continue;
      }
      const [s, j, rep] = r.results;
      const broke = [];
      if (!s.ok) broke.push(`the update failed: ${s.error}`);
      if (j.stopLock === "left") broke.push("the judge called its .stop.lock left");
      if (rep.stopLock === "left") broke.push("the repair removed its .stop.lock");
      seen.push(`${step.name}: ${broke.length ? broke.join("; ") : `judged ${j.stopLock}, repair found ${rep.stopLock}`} (pause reached)`);
      broken.push(...broke.map((b) => `${step.name}: ${b}`));
    }
    figure("a STOP update paused at each step, judged and repaired meanwhile", seen.join("; "));
    if (isAddon) assert.deepEqual(broken, []);
  });

  // #34: an update killed (-9) inside .stop.lock leaves it; the judge proves
  // it left at once, whatever its age, and the repair the command advises
  // removes it, after which STOP updates work again. The update is killed
  // while held at the entry of its fsync (its pause reached: the trace shows
  // the call begun and not returned), inside .stop.lock.
  //
  // Guards: the proof that a .stop.lock is left (invariant L, docs/lock.md):
  // the kernel drops a dead update's guard, so the judge can have it. Fails
  // if the judge calls a dead update's .stop.lock anything but left (an age,
  // or a guard it waits on past its death), or the repair does not remove
  // it.
  test(
    "a STOP update killed inside .stop.lock: proved left at once, and the advised repair clears it",
    { ...traced, timeout: 120_000 },
    async (t) => {
      if (!isAddon) return t.skip("the judge and the repair are this package's command");
      const dir = journal();
      const trace = join(dirname(dirname(dir)), "trace");
      const code = `const M = require(${JSON.stringify(modulePath)}); console.log(process.pid); M.requestStop(${JSON.stringify(dir)}, "killed")`;
      const child = spawn(
        "strace",
        ["-f", "-qq", "-o", trace, "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=20000000:when=1", process.execPath, "-e", code],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      const pid = Number(await new Promise((resolve) => child.stdout.once("data", resolve)));
      const held = () => existsSync(trace) && heldAt(readFileSync(trace, "utf8"), pid, "fsync", 1);
      for (let i = 0; i < 400 && !held(); i++) await new Promise((r) => setTimeout(r, 25));
      const lock = join(dir, ".stop.lock");
      const reached = held();
      process.kill(pid, "SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      assert.ok(reached, "the update's pause at its fsync was not reached");
      assert.ok(existsSync(lock), "the update was killed inside .stop.lock");
      const native = (await import("node:module")).createRequire(import.meta.url)("../binding.js");
      assert.equal(native.stopLockLeft(dir), "left");
      const status = JSON.parse(cli("status", dir, "--json").stdout);
      const next = status.verdict.next;
      assert.equal(next, `\`discord-journal repair ${dir} --apply\` removes it, proving again that no STOP update runs`);
      assert.equal(cli("repair", dir, "--apply").status, 0);
      assert.equal(existsSync(lock), false);
      M.requestStop(dir, "after");
      assert.equal(M.readStop(dir).at(-1).reason, "after");
      figure(
        "a STOP update killed inside .stop.lock",
        `killed at its fsync (pause reached); judged left at once; \`repair --apply\` removed it; STOP updates work again`,
      );
    },
  );

  // Guards: every promise of docs/lock.md under a pause at any call of any
  // operation (the guard, and each defense). Fails where a pause at one of
  // the sampled calls lets a schedule break a promise; a run whose pauses
  // mostly fell elsewhere than listed (MAX_UNVERIFIED) fails too, for it
  // explored nothing it can name.
  test("the explorer's sample: every combination, each paused at its system calls in turn", { ...traced, timeout: 600_000 }, async () => {
    const sample = Number(process.env.EXPLORE_SAMPLE ?? 100);
    const t = await explore({ sample });
    figure(
      "schedule explorer",
      `${t.combinations} combinations, ${t.steps} steps; ${t.explored} schedules explored (${t.unverified} whose pause could not be verified, at most ${MAX_UNVERIFIED * 100} in 100 allowed; ${t.reaimed} aimed again), ${t.broken.length} broke a promise`,
    );
    for (const b of t.broken.slice(0, 5)) console.log(`# broken: ${b.ops.join(" / ")} (${b.base}) at ${b.step}: ${b.problems.join("; ")}`);
    assert.ok(t.explored >= Math.min(sample, t.steps) * 0.9, `explored ${t.explored}`);
    if (isAddon) assert.deepEqual(t.broken, []);
  });

  // #55: the same promises where turns/ is no directory (the journal
  // directory's flock guards), each kind paused at its calls in turn.
  test(
    "the explorer's sample on journals whose turns/ is absent, a dangling link, a file or a FIFO",
    { ...traced, timeout: 600_000 },
    async () => {
      const sample = Number(process.env.EXPLORE_SAMPLE ?? 100) / 2;
      const t = await explore({ sample, turns: TURNS_KINDS.filter((k) => k !== "dir") });
      figure(
        "schedule explorer, turns/ no directory",
        `${t.combinations} combinations, ${t.steps} steps; ${t.explored} schedules explored (${t.unverified} unverified, ${t.reaimed} aimed again), ${t.broken.length} broke a promise`,
      );
      for (const b of t.broken.slice(0, 5))
        console.log(`# broken: ${b.ops.join(" / ")} (${b.base}, turns/ ${b.turns}) at ${b.step}: ${b.problems.join("; ")}`);
      assert.ok(t.explored >= Math.min(sample, t.steps) * 0.9, `explored ${t.explored}`);
      if (isAddon) assert.deepEqual(t.broken, []);
    },
  );

  // #30, sequence 1, as it broke the lock before the guard: V's mkdir, then
  // a recover removes V's ownerless directory and X claims a new one, which
  // V's open then finds; X's release meets V's temporary file (ENOTEMPTY)
  // and is paused in its listing while V links its record and stands; X's
  // listing then removes V's record, and Z stands beside V.
  //
  // Under the guard that schedule cannot happen: R and X wait while V is
  // inside its claim, X never stands, so its release and its listing are
  // never reached (this test used to pass saying "never reached"). So the
  // same cast is played where its pauses are reached: X holds, and its
  // release is paused after judging its own lock, before removing its
  // record; V claims meanwhile and is paused between its mkdir and its
  // open, and before its link, while R recovers; Z claims last. At most one
  // claim may stand (V), its record still there, and X's release must have
  // removed only its own.
  //
  // Guards: the guard held by a release from its judgement to its removal
  // (p1 to p4), and by a claim from before its mkdir to its check (c1 to
  // c10). Fails if a release drops the guard before its removal (V's claim
  // no longer waits: its mkdir meets X's directory, V refuses, and V's
  // pauses are never reached), if a claim does not wait for a release (the
  // same), or if a removal by the release or by R takes V's record (V then
  // lost its lock, or Z stands beside it). The schedule as it broke before
  // is played too without the guard, and its figure printed.
  test("a release never empties a directory that holds another claimant's record", { ...traced, timeout: 120_000 }, async () => {
    const r = await sequence({
      base: "empty",
      ops: ["hold", "claim", "recover", "claim"],
      procs: [
        { op: "hold", tag: "X", at: [0, 300], pauses: [{ name: "unlinkat", match: /"owner\.json", 0\)/, ms: 1500 }] },
        {
          op: "claim",
          tag: "V",
          at: [600],
          pauses: [
            { name: "openat", match: /run\.lock", O_RDONLY\|O_NOFOLLOW/, ms: 1500 },
            { name: "linkat", nth: 1, ms: 3000 },
          ],
        },
        { op: "recover", tag: "R", at: [900] },
        { op: "claim", tag: "Z", at: [7500] },
      ],
    });
    figure("sequence 1 under the guard (a release paused before its removal while a claim is paused inside its own)", said(r));
    const before = await sequence({
      base: "empty",
      turns: "absent",
      ops: ["claim", "recover", "hold", "claim"],
      procs: [
        {
          op: "claim",
          tag: "V",
          at: [0],
          pauses: [
            { name: "openat", match: /run\.lock", O_RDONLY\|O_NOFOLLOW/, ms: 1500 },
            { name: "linkat", nth: 1, ms: 3000 },
          ],
        },
        { op: "recover", tag: "R", at: [200] },
        { op: "hold", tag: "X", at: [500, 2000], pauses: [{ name: "getdents64", nth: 1, ms: 3000 }] },
        { op: "claim", tag: "Z", at: [5500] },
      ],
    });
    figure(
      "sequence 1 as it broke before the guard, played on a journal without turns/ (guarded by its directory since #44)",
      said(before),
    );
    if (isAddon) {
      // Guarded by the journal directory, it breaks no promise either (#55:
      // its errors were swallowed into a figure).
      assert.ok(before.applicable, said(before));
      assert.deepEqual(before.problems, [], JSON.stringify(before.results));
      assert.ok(r.applicable, said(r));
      assert.deepEqual(r.problems, [], JSON.stringify(r.results));
      const [x, v, , z] = r.results;
      assert.ok(x.ok && !x.stood && !x.releaseError, JSON.stringify(x));
      assert.ok(v.stood, JSON.stringify(v));
      assert.equal(z.stood, undefined, JSON.stringify(z));
      assert.equal(r.results.filter((x) => x.stood).length, 1, JSON.stringify(r.results));
    }
  });

  // #30, sequence 2: recover judges a crashed run's lock and is paused
  // before removing it; a repair clears the same lock and claims a new one,
  // whose directory and record get the old ones' inode numbers; recover
  // resumes and removes the repair's lock, a connector claims and appends,
  // and the repair's truncation drops that record. Under the guard the
  // repair waits for recover, and the connector is refused (the repair
  // holds); every pause is reached.
  //
  // Guards: the guard held by recover from its judgement to its removal
  // (r1 to r7), and by a repair's hold. Fails if recover removes without
  // the guard, or a repair judges and claims without it: the connector
  // then stands while the repair still holds the binding (as without the
  // guard, measured: "C stood while P's repair held the binding"). Since
  // appends wait for the file's flock (#31), the repair's truncation no
  // longer drops the record: the check is the claim standing beside the
  // repair.
  test("a removal judged before a repair's hold never removes the repair's lock", { ...traced, timeout: 120_000 }, async (t) => {
    if (!isAddon) return t.skip("repair is this package's command");
    const r = await sequence({
      base: "stale",
      ops: ["recover", "repair", "claim"],
      procs: [
        { op: "recover", tag: "R", at: [0], pauses: [{ name: "openat", match: /run\.lock", O_RDONLY\|O_NOFOLLOW/, ms: 1500 }] },
        { op: "repair", tag: "P", at: [300], pauses: [{ name: "ftruncate", nth: 1, ms: 2500 }] },
        { op: "claim", tag: "C", at: [2000] },
      ],
    });
    figure("sequence 2 (a recover removes a repair's lock by reused inode numbers)", said(r));
    assert.ok(r.applicable, said(r));
    assert.deepEqual(r.problems, [], JSON.stringify(r.results));
  });

  // #44: a claim or a recover stopped (SIGSTOP, as a supervisor or a
  // debugger suspends a process) right after one of its steps (docs/lock.md:
  // c1 the guard taken, c2 the mkdir, c5 the record's fsync, c8 the STOP
  // gate, c10 the guard dropped; r1, r4 inside .stop.lock, r5 the removal,
  // r6 its STOP removed; and each judging a live connector's lock), while
  // the brake (an operator's requestStop), a processing stop and, where a
  // connector holds the binding, its release run. Each must complete or
  // refuse within its bound, a promise (the brake 2 s, the release 1 s,
  // the others 12 s: explore.mjs's STALL_BOUNDS), and a refusal that
  // waited must name the stopped process's pid, so that an operator knows
  // whom to continue or kill. The stopped process is then continued, and
  // the journal checked as in every schedule.
  //
  // Guards: that no operation waits on a stopped process without end, and
  // that the brake and the release never wait on one at all. Fails if the
  // brake or the release waits on the lock guard (or anything a stopped
  // process holds), or a refusal does not say whom it waited for.
  test(
    "a stopped claim or recover holds up neither the brake nor a connector's release, and a refusal names it",
    { ...traced, timeout: 900_000 },
    async () => {
      const t = await stalls({ only: STALL_SAMPLE });
      const broken = t.broken.map(stallNamed);
      figure(
        "stalls",
        `${t.explored} stalls (a claim or recover stopped after a step), ${t.unverified} not stopped where named, ${broken.length} broke a promise`,
      );
      for (const b of broken) console.log(`# broken: ${b}`);
      if (!isAddon) return;
      assert.deepEqual(t.missing, [], "steps named that the claim or recover does not make");
      assert.deepEqual(t.unverifiedSteps, [], "stalls whose process did not stop where named");
      assert.deepEqual(broken, []);
    },
  );
});

describe("stress", () => {
  const rounds = Number(process.env.STRESS_ROUNDS ?? 2);
  /** `rounds` rounds of 3 s; claims stood and lost, and recover's refusals that name a brake. */
  async function stress(claimers, recovers, unlockLoop, { turns = "dir", rounds: n = rounds } = {}) {
    let stood = 0,
      lost = 0,
      falseBrakes = 0,
      failedReleases = 0;
    const losses = [];
    for (let i = 0; i < n; i++) {
      const dir = journal({ bare: true });
      shapeTurns(dir, turns, join(dirname(dirname(dir)), "outside"));
      const runs = [
        ...Array.from({ length: claimers }, () => run("claim", dir, 3000, 5)),
        ...Array.from({ length: recovers }, () => run("recover", dir, 3000)),
        ...(unlockLoop ? [run("unlock-loop", dir, 3000)] : []),
      ];
      const results = await Promise.all(runs);
      for (const c of results.slice(0, claimers)) {
        stood += c.stood.length;
        lost += c.lost;
        losses.push(...c.losses);
        failedReleases += c.releases.length;
      }
      if (!unlockLoop)
        for (const r of results.slice(claimers, claimers + recovers))
          for (const [k, n] of Object.entries(r)) if (/STOP (is present|was written)/.test(k)) falseBrakes += n;
    }
    return { stood, lost, falseBrakes, failedReleases, losses };
  }

  test(`2 claimers and 2 recovers, ${rounds} rounds of 3 s: no standing claim lost`, { timeout: 60_000 + rounds * 10_000 }, async () => {
    const r = await stress(2, 2, false);
    figure(
      "2 claimers, 2 recovers",
      `${r.stood} claims stood, ${r.lost} lost their lock, ${r.failedReleases} releases refused; ${r.falseBrakes} recovers refused naming a brake no operator set (${rounds} rounds of 3 s)`,
    );
    if (isAddon) {
      assert.equal(r.lost, 0, JSON.stringify(r.losses.slice(0, 5)));
      assert.equal(r.failedReleases, 0);
      assert.equal(r.falseBrakes, 0);
    }
  });

  // #44, #55: a journal whose turns/ is no directory (none, made by mkdir:
  // the command's stop, recover and repair do not make it; a dangling
  // link; a file; a FIFO) is guarded by its directory's flock.
  for (const [kind, n] of [
    ["absent", 12],
    ["dangling", 4],
    ["file", 4],
    ["fifo", 4],
  ]) {
    const kindRounds = Number(process.env.STRESS_ROUNDS ?? n);
    test(
      `3 claimers and 2 recovers on a journal whose turns/ is ${kind}, ${kindRounds} rounds of 3 s: no standing claim lost, no false brake`,
      { timeout: 60_000 + kindRounds * 10_000 },
      async () => {
        const r = await stress(3, 2, false, { turns: kind, rounds: kindRounds });
        figure(
          `3 claimers, 2 recovers, turns/ ${kind}`,
          `${r.stood} claims stood, ${r.lost} lost their lock, ${r.failedReleases} releases refused; ${r.falseBrakes} recovers refused naming a brake no operator set (${kindRounds} rounds of 3 s)`,
        );
        if (isAddon) {
          assert.equal(r.lost, 0, JSON.stringify(r.losses.slice(0, 5)));
          assert.equal(r.failedReleases, 0);
          assert.equal(r.falseBrakes, 0);
        }
      },
    );
  }

  test(
    `4 claimers, 2 recovers and an unlock loop, ${rounds} rounds of 3 s: no standing claim lost`,
    { timeout: 60_000 + rounds * 10_000 },
    async () => {
      const r = await stress(4, 2, true);
      figure(
        "4 claimers, 2 recovers, unlock loop",
        `${r.stood} claims stood, ${r.lost} lost their lock, ${r.failedReleases} releases refused (${rounds} rounds of 3 s)`,
      );
      if (isAddon) assert.equal(r.lost, 0, JSON.stringify(r.losses.slice(0, 5)));
    },
  );
});

const canUnshare = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"]).status === 0;
const unshared = canUnshare ? {} : { skip: "unshare --pid --mount-proc is not permitted here (needs root)" };
const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));
const root = fileURLToPath(new URL("..", import.meta.url));
const cli = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8" });

/**
 * A connector under `unshare` with `namespaces` that claims `dir` and holds
 * it: `claim` is its JavaScript, with `J` the module under test and `dir`
 * bound (writePid, or a claim of another kind). `inner` is its pid as it
 * reads it.
 */
async function unsharedOwner(dir, namespaces, claim = "J.writePid(dir, process.pid)") {
  const code = `const J = require(${JSON.stringify(modulePath)}); const dir = ${JSON.stringify(dir)}; ${claim}; console.log(process.pid); setInterval(() => {}, 1000)`;
  const child = spawn("unshare", [...namespaces, "--fork", "--kill-child", process.execPath, "-e", code], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const inner = await new Promise((resolve) => child.stdout.once("data", (d) => resolve(Number(String(d).trim()))));
  return { child, inner };
}

/** A connector in a PID namespace of its own (pid 1 there); `more` are unshare's further options (a time namespace). */
const containedOwner = (dir, more = [], claim = undefined) => unsharedOwner(dir, ["--pid", "--mount-proc", ...more], claim);

describe("PID namespaces", () => {
  // #55's mutation audit: a recover whose namespace scan answered "not
  // elsewhere" passed every test, since an owner of this package holds its
  // mark, which refuses on its own. One that takes no mark (journal.mjs's
  // claim: a mkdir and a record) is held by the scan alone.
  test(
    "a live markless connector in another PID namespace: recover refuses as for an owner it cannot verify, and keeps its lock",
    unshared,
    async () => {
      const dir = journal();
      // journal.mjs's claim: a mkdir and a record, no mark.
      const claim = `const fs = require("node:fs"); fs.mkdirSync(dir + "/run.lock"); fs.writeFileSync(dir + "/run.lock/owner.json", JSON.stringify({ pid: process.pid, start: J.processStart(process.pid), boot: J.bootId() }))`;
      const { child, inner } = await containedOwner(dir, [], claim);
      try {
        const record = readFileSync(join(dir, "run.lock", "owner.json"), "utf8");
        let recovered;
        try {
          recovered = M.recover(dir);
        } catch (e) {
          recovered = `${e.message} (${e.exitCode})`;
        }
        figure("a markless owner in another PID namespace", `pid ${inner} there: recover ${recovered}`);
        if (!isAddon) return;
        assert.equal(inner, 1);
        assert.equal(recovered, "run.lock belongs to pid 1, which is alive but whose identity cannot be verified; refusing (3)");
        assert.equal(readFileSync(join(dir, "run.lock", "owner.json"), "utf8"), record);
      } finally {
        child.kill("SIGKILL");
        await new Promise((r) => child.on("close", r));
      }
    },
  );

  test("a live connector in another PID namespace is never cleared from the host", { ...unshared, timeout: 60_000 }, async () => {
    const dir = journal();
    const { child, inner } = await containedOwner(dir);
    try {
      const record = readFileSync(join(dir, "run.lock", "owner.json"), "utf8");
      const state = M.ownerState(M.readPid(dir));
      let recovered;
      try {
        recovered = M.recover(dir);
      } catch (e) {
        recovered = `refused (${e.exitCode})`;
      }
      const kept = existsSync(join(dir, "run.lock", "owner.json")) && readFileSync(join(dir, "run.lock", "owner.json"), "utf8") === record;
      figure(
        "an owner in another PID namespace",
        `pid ${inner} there: ownerState ${state}, recover ${recovered}, its lock ${kept ? "kept" : "removed"}`,
      );
      if (!isAddon) return;
      assert.equal(inner, 1);
      assert.equal(state, "unknown");
      assert.equal(recovered, "refused (3)");
      assert.ok(kept);
      refuses(
        () => M.unlock(dir),
        "refusing to unlock: pid 1 is alive and its identity cannot be verified; nothing removed. Stop that process first",
        1,
      );
      M.clearStop(dir);
      const r = cli("repair", dir, "--apply");
      assert.equal(r.status, 3, r.stdout + r.stderr);
      assert.equal(readFileSync(join(dir, "run.lock", "owner.json"), "utf8"), record);
      const s = cli("status", "--json", dir);
      const status = JSON.parse(s.stdout);
      assert.equal(typeof status.lock.elsewhere, "number");
      assert.equal(readFileSync(`/proc/${status.lock.elsewhere}/status`, "utf8").match(/^NSpid:\s+\d+\s+(\d+)$/m)?.[1], "1");
      assert.equal(status.verdict.state, "running");
      assert.equal(status.verdict.canStart, false);
      assert.match(status.verdict.why, /another PID namespace/);
      assert.doesNotMatch(s.stdout, /gone/);
    } finally {
      child.kill("SIGKILL");
      await new Promise((r) => child.on("close", r));
    }
  });

  // #44: a process's start time reads as ticks since boot plus the
  // boottime offset of the reader's time namespace: a connector in one
  // records a number, the host reads another for the same process. Both
  // kinds of offset a kernel accepts: ahead, and behind (never past the
  // boot, so at most half the time since it).
  const uptime = () => {
    try {
      return Math.floor(Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]));
    } catch {
      return 0;
    }
  };
  const timeNs = (offset) =>
    canUnshare && spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "--time", "--boottime", String(offset), "true"]).status === 0
      ? {}
      : { skip: `unshare --time --boottime ${offset} is not permitted here (needs root and a kernel with time namespaces)` };
  for (const [way, offset] of [
    ["ahead", 1000],
    ["behind", -Math.min(1000, Math.floor(uptime() / 2)) || -1],
  ]) {
    test(
      `a live connector in another PID and time namespace (its boottime ${way}) is never cleared from the host`,
      { ...timeNs(offset), timeout: 60_000 },
      async () => {
        const dir = journal();
        const { child, inner } = await containedOwner(dir, ["--time", "--boottime", String(offset)]);
        try {
          const record = readFileSync(join(dir, "run.lock", "owner.json"), "utf8");
          // The connector, seen from here: the child unshare forked.
          const here = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim());
          // Ticks a second: 100 on Linux, where getconf is missing.
          const ticks = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;
          const shift = BigInt(JSON.parse(record).start) - BigInt(M.processStart(here));
          const state = M.ownerState(M.readPid(dir));
          let recovered;
          try {
            recovered = M.recover(dir);
          } catch (e) {
            recovered = `refused (${e.exitCode})`;
          }
          const kept =
            existsSync(join(dir, "run.lock", "owner.json")) && readFileSync(join(dir, "run.lock", "owner.json"), "utf8") === record;
          let claimed;
          try {
            M.writePid(dir, process.pid);
            claimed = "stood";
            M.clearPid(dir, process.pid);
          } catch (e) {
            claimed = `refused (${e.exitCode})`;
          }
          figure(
            `an owner in another PID and time namespace (boottime ${offset} s)`,
            `pid ${inner} there, start ${shift} ticks from the host's reading: ownerState ${state}, recover ${recovered}, its lock ${kept ? "kept" : "removed"}, a second claim ${claimed}`,
          );
          if (!isAddon) return;
          assert.equal(inner, 1);
          assert.equal(shift, BigInt(offset * ticks));
          assert.equal(state, "unknown");
          assert.equal(recovered, "refused (3)");
          assert.ok(kept);
          refuses(
            () => M.writePid(dir, process.pid),
            "run.lock belongs to pid 1, which is alive but whose identity cannot be verified; refusing",
            M.BRAKE_EXIT,
          );
          assert.equal(readFileSync(join(dir, "run.lock", "owner.json"), "utf8"), record);
          const status = JSON.parse(cli("status", "--json", dir).stdout);
          assert.equal(status.lock.elsewhere, here);
          assert.equal(status.verdict.state, "running");
          assert.doesNotMatch(JSON.stringify(status.verdict), /gone/);
        } finally {
          child.kill("SIGKILL");
          await new Promise((r) => child.on("close", r));
        }
      },
    );
  }

  // #55: in a time namespace of its own but this PID namespace, the
  // connector's record holds its reading of its start, the host reads
  // another: ownerState said mismatch, a claim "gone or a different
  // process", recover and unlock "no owner record".
  test(
    "a live connector in a time namespace alone (this PID namespace) is live, and no word calls it otherwise",
    { ...timeNs(1000), timeout: 60_000 },
    async () => {
      const dir = journal();
      const { child, inner: pid } = await unsharedOwner(dir, ["--time", "--boottime", "1000"]);
      try {
        const record = readFileSync(join(dir, "run.lock", "owner.json"), "utf8");
        const shift = BigInt(JSON.parse(record).start) - BigInt(M.processStart(pid));
        const state = M.ownerState(M.readPid(dir));
        let recovered;
        try {
          recovered = M.recover(dir);
        } catch (e) {
          recovered = e.message;
        }
        let claimed;
        try {
          M.writePid(dir, process.pid);
          claimed = "stood";
        } catch (e) {
          claimed = e.message;
        }
        figure(
          "an owner in a time namespace alone (boottime 1000 s)",
          `start ${shift} ticks from the host's reading: ownerState ${state}; recover: ${recovered}; a second claim: ${claimed}`,
        );
        if (!isAddon) return;
        assert.ok(shift > 0n, "its own reading is recorded");
        assert.equal(state, "live");
        assert.equal(readFileSync(join(dir, "run.lock", "owner.json"), "utf8"), record, "its lock kept");
        assert.match(recovered, new RegExp(`pid ${pid}`));
        assert.doesNotMatch(recovered + claimed, /gone|different process|no owner record/);
        assert.match(claimed, new RegExp(`pid ${pid}`));
        const status = JSON.parse(cli("status", "--json", dir).stdout);
        assert.equal(status.verdict.state, "running");
        assert.doesNotMatch(JSON.stringify(status.verdict), /gone|different process/);
      } finally {
        child.kill("SIGKILL");
        await new Promise((r) => child.on("close", r));
      }
    },
  );

  test("seen from a PID namespace that cannot see the owner's, status never calls it gone", { ...unshared, timeout: 60_000 }, async () => {
    const dir = journal();
    const owner = spawn(
      process.execPath,
      [
        "-e",
        `require(${JSON.stringify(root)}).writePid(${JSON.stringify(dir)}, process.pid); console.log("held"); setInterval(() => {}, 1000)`,
      ],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    try {
      await new Promise((resolve) => owner.stdout.once("data", resolve));
      const s = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", process.execPath, bin, "status", "--json", dir], {
        encoding: "utf8",
      });
      const status = JSON.parse(s.stdout);
      assert.equal(status.lock.seesEveryProcess, false);
      assert.doesNotMatch(JSON.stringify(status.verdict), /gone/);
      assert.match(status.verdict.why, /cannot see the others/);
      const t = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", process.execPath, bin, "status", dir], { encoding: "utf8" });
      assert.doesNotMatch(t.stdout, /gone/);
    } finally {
      owner.kill("SIGKILL");
      await new Promise((r) => owner.on("close", r));
    }
  });
});

describe("the lock guard", () => {
  const hasFlock = spawnSync("flock", ["--version"]).status === 0 ? {} : { skip: "no flock(1) here" };
  /** A claim made while `child` holds the guard: its refusal (or none) and how long it took; then `child` is killed and gone. */
  async function claimAgainst(dir, child) {
    const t = performance.now();
    let refusal;
    try {
      M.writePid(dir, process.pid);
    } catch (e) {
      refusal = e;
    }
    const ms = performance.now() - t;
    process.kill(-child.pid, "SIGKILL");
    await new Promise((r) => child.on("close", r));
    return { refusal, ms };
  }
  /**
   * flock(1) holding the lock guard (`turns/`'s flock) for `seconds`, asleep
   * (or working: a shell that wakes every 50 ms, so it gains CPU time);
   * resolves once it holds it.
   */
  async function holder(dir, seconds, working = false) {
    const then = working ? `exec timeout ${seconds} sh -c 'while :; do sleep 0.05; done'` : `exec sleep ${seconds}`;
    // A group of its own, so that its shell's sleep goes with it.
    const child = spawn("flock", ["-x", join(dir, "turns"), "-c", `echo held; ${then}`], {
      stdio: ["ignore", "pipe", "inherit"],
      detached: true,
    });
    await new Promise((resolve) => child.stdout.once("data", resolve));
    return child;
  }

  test(
    "a claim waits while another process holds the guard, and refuses once it has waited 10 s",
    { ...hasFlock, timeout: 60_000 },
    async () => {
      const dir = journal();
      const child = await holder(dir, 0.6);
      const t = performance.now();
      M.writePid(dir, process.pid);
      const waited = performance.now() - t;
      M.clearPid(dir, process.pid);
      await new Promise((r) => child.on("close", r));
      const { refusal, ms: gaveUp } = await claimAgainst(dir, await holder(dir, 30, true));
      figure(
        "the lock guard",
        `a claim waited ${Math.round(waited)} ms for a 600 ms holder; against a 30 s holder: ${refusal ? `refused after ${Math.round(gaveUp)} ms` : "stood"}`,
      );
      if (!isAddon) return;
      assert.ok(waited >= 300, `waited ${waited} ms`);
      assert.equal(refusal?.exitCode, 1);
      // Named as the kernel shows the holder (#44): the one that moves
      // (#64: the shell that inherited flock(1)'s descriptor), running.
      assert.match(
        refusal.message,
        /^run\.lock or STOP is being changed by another process, pid \d+ \(running: .*\), which holds the journal's lock guard and has not finished .*Wait for pid \d+ to finish$/,
      );
      assert.ok(gaveUp >= 9_500 && gaveUp < 15_000, `${gaveUp} ms`);
      assert.equal(existsSync(join(dir, "run.lock")), false, "a claim that refuses for the guard made nothing");
      // An asleep holder (`flock turns sleep 30`) does not move: the wait
      // ends at its second look, about 2.5 s, naming it so (#64).
      const { refusal: still, ms: asleep } = await claimAgainst(dir, await holder(dir, 30));
      figure("the lock guard", `against an asleep holder: ${still ? `refused after ${Math.round(asleep)} ms` : "stood"}`);
      assert.match(still?.message ?? "", /pid \d+ \(asleep, no CPU time between two looks: .*\), which holds the journal's lock guard/);
      assert.ok(asleep < 5_000, `${asleep} ms`);
    },
  );

  test("an operator's own flock on the journal directory does not hold a start up", { ...hasFlock, timeout: 60_000 }, async () => {
    const dir = journal();
    const child = spawn("flock", ["-x", dir, "-c", "echo held; exec sleep 30"], { stdio: ["ignore", "pipe", "inherit"], detached: true });
    await new Promise((resolve) => child.stdout.once("data", resolve));
    const t = performance.now();
    let took;
    try {
      M.writePid(dir, process.pid);
      M.clearPid(dir, process.pid);
      took = performance.now() - t;
    } finally {
      process.kill(-child.pid, "SIGKILL");
      await new Promise((r) => child.on("close", r));
    }
    assert.ok(took < 2000, `${took} ms`);
  });
});

describe("a repair racing appends (#31)", () => {
  // An append that lands while a repair is between its check of the file
  // and its mend (paused there) waits for the file's flock and lands after,
  // on the mended file: it is never cut off or renamed away.
  //
  // Guards: the record file's flock, held by a repair from its check of the
  // file to its mend, and taken by every append (not the lock guard, which
  // appends never take). Fails if an append writes without the file's
  // flock, or the repair mends after dropping it: the append then lands in
  // the part the truncation cuts, on the file the rename replaces, or
  // before the quarantine's link, and its record is lost.
  const paused = (base, name, match, append = "append") => ({
    base,
    ops: ["repair", "append"],
    procs: [
      { op: "repair", tag: "P", at: [0], pauses: [{ name, match, ms: 1500 }] },
      { op: append, tag: "A", at: [600] },
    ],
  });
  for (const [what, spec] of Object.entries({
    "its truncation": paused("empty", "ftruncate", /./),
    "its quarantine's link": paused("empty", "linkat", /"inbox\.jsonl\.aside-/),
    "its rename of the file written anew": paused("inside", "renameat", /"inbox\.jsonl"\)/),
    // An appender that appended before the repair began reads first where
    // its file ended (#47), and asks its link count (#55): the old file,
    // renamed over, sends it back to the path.
    "its rename of the file written anew (the appender appended before)": paused("inside", "renameat", /"inbox\.jsonl"\)/, "appendAgain"),
  }))
    test(`an append while a repair is paused before ${what} is kept`, { ...traced, timeout: 120_000 }, async (t) => {
      if (!isAddon) return t.skip("repair is this package's command");
      const r = await sequence(spec);
      figure(`an append while a repair is paused before ${what}`, said(r));
      assert.ok(r.applicable, said(r));
      assert.deepEqual(r.problems, [], JSON.stringify(r.results));
      assert.ok(
        r.results.every((x) => x.ok),
        JSON.stringify(r.results),
      );
    });

  test("an appender every 15 ms and 30 repairs, each after a cut line: every acknowledged record kept", { timeout: 180_000 }, async (t) => {
    if (!isAddon)
      return t.skip("repair is this package's command; an appender that is journal.mjs is beyond its reach (docs/durability.md)");
    const dir = journal();
    const appender = spawn(process.execPath, [worker, "inbox-every", dir, 15], { stdio: ["ignore", "pipe", "inherit"] });
    let acked = "";
    appender.stdout.on("data", (d) => (acked += d));
    let repaired = 0;
    try {
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 0; i < 30; i++) {
        appendFileSync(join(dir, "inbox.jsonl"), `{"id":"cut${i}`);
        await new Promise((r) => setTimeout(r, 20));
        const r = cli("repair", dir, "--apply");
        if (r.status === 0) repaired++;
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      appender.kill("SIGKILL");
      await new Promise((r) => appender.on("close", r));
    }
    const ids = acked.split("\n").filter((l) => /^w\d+$/.test(l));
    const kept = readdirSync(dir)
      .filter((n) => n === "inbox.jsonl" || n.startsWith("inbox.jsonl.aside-"))
      .map((n) => readFileSync(join(dir, n), "utf8"))
      .join("\n");
    const lost = ids.filter((id) => !kept.includes(`"id":"${id}"`));
    figure("appends racing repairs", `${ids.length} acknowledged, ${lost.length} lost; ${repaired} of 30 repairs applied`);
    assert.deepEqual(lost, []);
    assert.ok(repaired >= 20, `${repaired} repairs applied`);
  });
});
