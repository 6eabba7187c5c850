// No process holds a binding hostage (#44): a process stopped (SIGSTOP: a
// paused container, Ctrl-Z, a debugger) where others would wait for it
// never keeps the operator from braking or a connector from shutting down,
// and whoever must still wait names it, with the command that frees it.
// The stopped process is made real: util-linux's `flock` holding the
// journal's lock guard (the exclusive flock on turns/ every start,
// release, unlock, recover and repair of this package takes), then
// SIGSTOP; or a connector stopped with its release half done. What did not
// wait is told by what it did, not by a clock: a wait for a stopped holder
// ends in a refusal that names it (after 2 s, FIRST_LOOK), so a brake or
// a release that succeeds did not wait (before #44 the brake and the
// release waited 10 s and failed). The bounds left are promises (a
// wait that must end early): status names a stopped holder, and recover
// gives up on one, well before the guard's patience (10 s) would end the
// wait; 9 s leave a loaded machine 7 s. The times are figures (#48).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { M, addonOnly, isAddon, journal, modulePath, cli, bin, actsAsOwner, forOthers, NOBODY } from "./helpers.mjs";

const hasStrace = spawnSync("strace", ["-V"]).status === 0 ? {} : { skip: "needs strace(1) to delay a system call" };
const hasFlock = spawnSync("flock", ["--version"]).status === 0 && !process.versions.deno ? {} : { skip: "needs util-linux's flock" };

const children = [];
after(() => {
  for (const c of children) {
    // `flock` runs detached, in a group of its own with its child.
    for (const [pid, signal] of [
      [-c.pid, "SIGKILL"],
      [c.pid, "SIGCONT"],
      [c.pid, "SIGKILL"],
    ]) {
      try {
        process.kill(pid, signal);
      } catch {
        // Gone already, or not a group.
      }
    }
  }
});

const lines = (child) => {
  let buf = "";
  const waiting = [];
  child.stdout.on("data", (d) => {
    buf += d;
    let at;
    while ((at = buf.indexOf("\n")) >= 0) {
      const l = buf.slice(0, at);
      buf = buf.slice(at + 1);
      waiting.shift()?.(l);
    }
  });
  return () => new Promise((resolve) => waiting.push(resolve));
};

/**
 * A connector of the module under test holding `dir`'s binding; on a line
 * "release" it takes the processing brake and releases it, then clears
 * its lock, and prints how long each took.
 */
function connector(dir) {
  const esm = modulePath.endsWith(".mjs");
  const code = `
    const M = ${esm ? `await import(${JSON.stringify(modulePath)})` : `require(${JSON.stringify(modulePath)})`};
    const dir = ${JSON.stringify(dir)};
    M.writePid(dir, process.pid);
    console.log("held");
    process.stdin.once("data", () => {
      const timed = (f) => { const t = process.hrtime.bigint(); let error = null; try { f(); } catch (e) { error = e.message; } return { ms: Number(process.hrtime.bigint() - t) / 1e6, error }; };
      const gen = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";
      const out = { brake: timed(() => M.requestProcessingStop(dir, gen)), lift: timed(() => M.clearProcessingStop(dir, gen)), release: timed(() => M.clearPid(dir, process.pid)) };
      console.log(JSON.stringify(out));
    });`;
  const child = spawn(process.execPath, [...(esm ? ["--input-type=module"] : []), "-e", code], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  children.push(child);
  return child;
}

/** `flock` holding the lock guard of `dir` (its turns/ directory), stopped. */
const stoppedInGuard = (dir) => stoppedHolding(join(dir, "turns"));

/** `flock` holding an exclusive flock on `path`, stopped. */
async function stoppedHolding(path) {
  const child = await holding(path);
  // The flock is held by the open file `flock` passed to its child; both
  // are stopped (its process group): each is a process stopped inside the guard.
  process.kill(-child.pid, "SIGSTOP");
  return child;
}

/** `flock` holding an exclusive flock on `path`, running `then` (asleep by default). */
async function holding(path, then = "exec sleep 600") {
  const child = spawn("flock", ["-x", path, "sh", "-c", `echo locked; ${then}`], {
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  children.push(child);
  await new Promise((resolve) => child.stdout.once("data", resolve));
  return child;
}

const stateOf = (pid) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];
/** A child process of `parent` (its pid as a string), or undefined. */
const childOf = (parent) =>
  readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .find((n) => {
      try {
        return (
          readFileSync(`/proc/${n}/stat`, "utf8")
            .replace(/^.*\) /s, "")
            .split(" ")[1] === String(parent)
        );
      } catch {
        return false;
      }
    });

/**
 * `argv` run under strace, which injects `inject` (`SYSCALL:delay_enter=USEC[:when=N]`)
 * and traces nothing else; `stderr` is the child's ("pipe" or "inherit").
 */
function delayed(inject, argv, stderr) {
  const call = inject.slice(0, inject.indexOf(":"));
  const p = spawn("strace", ["-f", "-qq", "-o", "/dev/null", "-e", `trace=${call}`, "-e", `inject=${inject}`, ...argv], {
    stdio: ["ignore", "pipe", stderr],
    timeout: 60_000,
  });
  children.push(p);
  return p;
}

/**
 * The pids that may be named as holding what `flock` (`p`) holds: flock
 * itself and the child it passed its lock to. The child's pid is read, not
 * guessed: under load another process may take the pid after flock's.
 */
const family = (p) => [p.pid, Number(childOf(p.pid))];

describe("a stopped process holds no binding hostage", hasFlock, () => {
  // #55: `flock DIR/turns sleep 120` left status "ready, can start" while
  // every start waited 10 s for it and refused.
  // #64: one asleep (`flock DIR/turns sleep 120`) does not move, and is
  // named so (the test of an idle append holder below); this one works.
  test("a running process keeping the lock guard: status is not ready and names it", async () => {
    const dir = journal();
    const h = await holding(join(dir, "turns"), "while :; do :; done");
    const st = cli("status", dir, "--json");
    assert.equal(st.status, 1, st.stdout + st.stderr);
    const out = JSON.parse(st.stdout);
    assert.equal(out.verdict.state, "stuck");
    assert.equal(out.verdict.canStart, false);
    assert.ok(family(h).includes(out.guard.pid), JSON.stringify(out.guard));
    assert.match(out.verdict.problems[0].what, /^pid \d+ \(running: .*\) holds the journal's lock guard and kept it past a moment/);
    assert.equal(out.verdict.next, `wait for pid ${out.guard.pid} to finish`);
    const text = cli("status", dir);
    assert.match(text.stdout, new RegExp(`pid ${out.guard.pid} \\(running`));
    process.kill(-h.pid, "SIGKILL");
  });

  // #55: with only the child of `flock DIR/turns CMD` stopped, flock(1)
  // itself reads as running (it waits for its child), yet the lock it
  // passed the child goes only when the child runs again.
  test("a stopped child sharing the guard's flock is the holder named, with kill -CONT", async () => {
    const dir = journal();
    const h = await holding(join(dir, "turns"));
    const child = childOf(h.pid);
    assert.ok(child, "flock's child");
    process.kill(Number(child), "SIGSTOP");
    while (stateOf(child) !== "T") await new Promise((r) => setTimeout(r, 5));
    const st = cli("status", dir, "--json");
    const out = JSON.parse(st.stdout);
    assert.equal(out.verdict.state, "stuck", st.stdout);
    assert.equal(out.guard.pid, Number(child), JSON.stringify(out.guard));
    assert.equal(out.guard.stalled, true);
    assert.equal(out.verdict.next, `\`kill -CONT ${child}\` lets it finish`);
    process.kill(-h.pid, "SIGKILL");
  });

  // #55: an appender stopped while it held a record file's append lock
  // (the addon's, #31) held every other append for 10 s, which then
  // failed naming no one. journal.mjs takes no such lock and appends.
  test("a stopped appender: another append ends its wait early and names it", async () => {
    const dir = journal();
    M.appendInbox(dir, { id: "before" });
    const s = await stoppedHolding(join(dir, "inbox.jsonl"));
    const t = Date.now();
    let refused = null;
    try {
      M.appendInbox(dir, { id: "after" });
    } catch (e) {
      refused = e;
    }
    const ms = Date.now() - t;
    console.log(`# figure an append beside a stopped appender: ${ms} ms, ${refused ? "refused" : "appended"}`);
    if (!isAddon) return assert.equal(refused, null);
    assert.ok(refused, "refused");
    const [first, note] = refused.message.split("\n");
    assert.equal(first, "could not append to inbox.jsonl (EAGAIN)");
    assert.match(note, /^pid (\d+) \(stopped: .*\) holds its append lock and has not let go: `kill -CONT \1` lets it finish$/);
    assert.ok(family(s).includes(Number(note.match(/^pid (\d+)/)[1])), note);
    // Ended on the holder seen stopped: the promise is about 1 s (the first
    // look at 0.5 s), far before its 10 s patience. 1.5 s leave a loaded
    // machine room and no regression of the first look (#64: at 4 s this
    // test passed with 5 s allowed).
    assert.ok(ms < 1500, `${ms} ms`);
    assert.deepEqual([...M.readInboxIds(dir)], ["before"]);
    // status names it, with what frees it, and calls the binding stuck.
    const st = cli("status", dir, "--json");
    assert.equal(st.status, 1, st.stdout + st.stderr);
    const out = JSON.parse(st.stdout);
    assert.equal(out.verdict.state, "stuck");
    assert.match(out.verdict.problems[0].what, /^pid \d+ \(stopped: .*\) holds the append lock of inbox\.jsonl and is stopped/);
    assert.match(out.verdict.next, /^`kill -CONT \d+` lets it finish$/);
    assert.equal(out.appendLocks["inbox.jsonl"].state, "stopped");
  });

  test("a start stopped inside the lock guard: the brake, the processing brake and a holder's release do not wait", async () => {
    const dir = journal();
    const a = connector(dir);
    const next = lines(a);
    assert.equal(await next(), "held");
    const s = await stoppedInGuard(dir);

    let t = Date.now();
    const braked = cli("stop", dir, "investigating");
    const brakeMs = Date.now() - t;
    assert.equal(braked.status, 0, braked.stderr + braked.stdout);
    // A process's start and its brake: well under the guard's first look.
    assert.ok(brakeMs < 2000, `stop took ${brakeMs} ms`);
    assert.equal(M.readStop(dir).at(-1).reason, "investigating");

    a.stdin.write("release\n");
    const took = JSON.parse(await next());
    for (const [what, r] of Object.entries(took)) {
      assert.equal(r.error, null, `${what}: ${r.error}`);
      // None waited on the stopped holder: a wait for the guard asks who
      // holds it from 2 s on, and a release that took the guard would end
      // its wait there (#64: one took 2,017 ms and passed). A few system
      // calls; 1 s leaves a loaded machine room.
      assert.ok(r.ms < 1000, `${what} took ${r.ms} ms`);
    }
    assert.equal(existsSync(join(dir, "run.lock")), false, "the connector's lock is released");

    t = Date.now();
    const st = cli("status", dir, "--json");
    const statusMs = Date.now() - t;
    // It names the holder before the guard's patience (10 s) would run out.
    assert.ok(statusMs < 9000, `status took ${statusMs} ms`);
    const v = JSON.parse(st.stdout).verdict;
    const holder = JSON.parse(st.stdout).guard;
    assert.equal(st.status, 1, "a stopped process needs a hand");
    assert.ok(family(s).includes(holder.pid) || stateOf(holder.pid) === "T", JSON.stringify(holder));
    assert.equal(holder.state, "stopped");
    assert.match(v.problems[0].what, new RegExp(`^pid ${holder.pid} \\(stopped: .*holds the journal's lock guard`));
    assert.equal(v.next, `\`kill -CONT ${holder.pid}\` lets it finish`);
    console.log(
      `# figure a start stopped inside the guard: stop ${brakeMs} ms, processing brake ${took.brake.ms.toFixed(1)} ms, its lift ${took.lift.ms.toFixed(1)} ms, clearPid ${took.release.ms.toFixed(1)} ms, status ${statusMs} ms naming pid ${holder.pid}`,
    );

    if (isAddon) {
      // Whoever must still wait gives up early on a stopped holder and names it.
      M.clearStop(dir);
      t = Date.now();
      let refusal = null;
      try {
        M.recover(dir);
      } catch (e) {
        refusal = e;
      }
      const recoverMs = Date.now() - t;
      assert.ok(refusal, "recover waits on the guard");
      assert.match(
        refusal.message,
        new RegExp(
          `pid ${holder.pid} \\(stopped: .*\\), which holds the journal's lock guard .*\`kill -CONT ${holder.pid}\` lets it finish$`,
        ),
      );
      // Before the guard's patience (10 s) ran out: it saw the holder stopped.
      assert.ok(recoverMs < 9000, `recover took ${recoverMs} ms`);
      // unlock too: it takes the guard before its STOP, so it writes none.
      t = Date.now();
      let unlockRefusal = null;
      try {
        M.unlock(dir);
      } catch (e) {
        unlockRefusal = e;
      }
      const unlockMs = Date.now() - t;
      assert.ok(unlockRefusal, "unlock waits on the guard");
      assert.match(unlockRefusal.message, new RegExp(`pid ${holder.pid} \\(stopped: .*\`kill -CONT ${holder.pid}\` lets it finish$`));
      assert.equal(existsSync(join(dir, "STOP")), false, "unlock wrote no STOP");
      console.log(`# figure recover and unlock behind a stopped start: refused in ${recoverMs} and ${unlockMs} ms, naming it`);
    }
  });

  test(
    "a connector stopped in the middle of its release: recover and unlock leave its lock and name it",
    isAddon ? {} : { skip: "the reference's release takes no mark" },
    async () => {
      const dir = journal();
      const a = connector(dir);
      const next = lines(a);
      assert.equal(await next(), "held");
      // The release's first step (its record unlinked), then stopped before its rmdir.
      unlinkSync(join(dir, "run.lock", "owner.json"));
      process.kill(a.pid, "SIGSTOP");
      for (let i = 0; i < 100 && stateOf(a.pid) !== "T"; i++) await new Promise((r) => setTimeout(r, 10));

      let refusal = null;
      try {
        M.recover(dir);
      } catch (e) {
        refusal = e;
      }
      assert.ok(refusal, "recover refuses a lock a live process holds");
      assert.equal(refusal.exitCode, 3);
      assert.match(
        refusal.message,
        new RegExp(`^run\\.lock is held by pid ${a.pid} \\(stopped: .*\`kill -CONT ${a.pid}\` lets it finish$`),
      );
      assert.equal(existsSync(join(dir, "STOP")), false, "recover wrote no STOP");
      // A start waits for a release in progress, and names this one: stopped.
      assert.throws(() => M.writePid(dir, process.pid), { message: new RegExp(`^run\\.lock is held by pid ${a.pid} \\(stopped: `) });
      const st = JSON.parse(cli("status", dir, "--json").stdout);
      assert.equal(st.verdict.state, "stuck");
      assert.equal(st.verdict.next, `\`kill -CONT ${a.pid}\` lets it finish`);
      // unlock writes its STOP first, as journal.mjs's does, then refuses.
      const u = cli("unlock", dir);
      assert.equal(u.status, 1, u.stdout + u.stderr);
      assert.match(u.stderr + u.stdout, new RegExp(`pid ${a.pid} \\(stopped`));
      assert.ok(existsSync(join(dir, "run.lock")), "the lock stays");
      // Once it is gone, the lock is a crashed start's, and recover clears it.
      a.kill("SIGKILL");
      await new Promise((resolve) => a.once("exit", resolve));
      M.clearStop(dir);
      assert.equal(M.recover(dir), "cleared");
    },
  );

  test("a start waits for a release in progress, then claims", isAddon ? {} : { skip: "the reference's claim does not wait" }, async () => {
    const dir = journal();
    const lock = join(dir, "run.lock");
    mkdirSync(lock, { mode: 0o700 });
    // A release half done: run.lock without its record, marked (a shared
    // flock) by a live process, which removes it 800 ms later.
    const r = spawn("flock", ["-s", lock, "sh", "-c", `echo held; sleep 0.8; rmdir '${lock}'`], {
      stdio: ["ignore", "pipe", "inherit"],
      detached: true,
    });
    children.push(r);
    await new Promise((resolve) => r.stdout.once("data", resolve));
    const t = Date.now();
    M.writePid(dir, process.pid);
    const waited = Date.now() - t;
    assert.equal(M.readPid(dir).pid, process.pid);
    M.clearPid(dir, process.pid);
    assert.ok(waited >= 300, `the claim waited ${waited} ms`);
    console.log(`# figure a start behind a release in progress: waited ${waited} ms, then stood`);
  });
});

// #64: resolve's read and its append were not serialised. With its append
// lock's flock delayed 5 s (strace injects the delay: the one flock resolve
// makes), another resolve of the same nonce ran inside that window, and
// both printed "recorded": the later line replaced the outcome. The second
// look, under the outbox's append flock, finds the outcome recorded since
// the read and refuses.
describe("resolve never replaces an outcome", hasStrace, () => {
  test("two resolves of one nonce, one delayed between its read and its append: one recorded, the other refused", async () => {
    const dir = journal();
    const at = new Date(Date.now() - 3 * 3600e3).toISOString();
    M.appendOutbox(dir, { nonce: "n1", status: "intent", at, channel: "1250000003774873600" });
    const slow = delayed(
      "flock:delay_enter=5000000:when=1",
      [process.execPath, bin, "resolve", dir, "--nonce=n1", "--as", "refused"],
      "pipe",
    );
    let out = "";
    slow.stdout.on("data", (d) => (out += d));
    slow.stderr.on("data", (d) => (out += d));
    const ended = new Promise((resolve) => slow.once("exit", resolve));
    // Its read is done well within 2 s; its flock waits 5 s.
    await new Promise((r) => setTimeout(r, 2000));
    const fast = cli("resolve", dir, "--nonce=n1", "--as", "confirmed");
    assert.equal(fast.status, 0, fast.stdout + fast.stderr);
    assert.match(fast.stdout, /recorded as confirmed/);
    const code = await ended;
    assert.equal(code, 1, out);
    assert.match(
      out,
      /delivery n1 is confirmed already \(recorded while resolve read it\): an outcome is never replaced, so nothing was written/,
    );
    const lines = readFileSync(join(dir, "outbox.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.status),
      ["intent", "confirmed"],
    );
    assert.equal(M.readOutbox(dir).get("n1").status, "confirmed");
  });
});

// #64: holders the waiter did not see as they are. Each was waited on for
// 10 s and then named wrongly or not at all, while status said "ready".
// The holder is now found by the open file description that holds the lock
// (every process whose fdinfo lists it), judged by its threads, its CPU
// time across two looks and its cgroup's freezer, and said to be unseen
// where it is (another PID namespace).
describe("every wait names its holder as the waiter can see it", hasFlock, () => {
  /** Whether another process holds an exclusive flock on `path`. */
  const held = (path) => spawnSync("flock", ["-n", "-s", path, "true"]).status !== 0;
  const until = async (f) => {
    for (let i = 0; i < 500 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(f(), "in time");
  };
  /** An append to inbox.jsonl, timed: `{ ms, error }`. */
  const timedAppend = (dir) => {
    const t = Date.now();
    try {
      M.appendInbox(dir, { id: "after" });
      return { ms: Date.now() - t, error: null };
    } catch (e) {
      return { ms: Date.now() - t, error: e.message };
    }
  };
  const stuck = (dir, what) => {
    const st = cli("status", dir, "--json");
    assert.equal(st.status, 1, st.stdout + st.stderr);
    const out = JSON.parse(st.stdout);
    assert.equal(out.verdict.state, "stuck", st.stdout);
    assert.match(out.verdict.problems[0].what, what);
    const text = cli("status", dir);
    assert.doesNotMatch(text.stdout, /ready/);
    return out;
  };

  test("a running flock inbox.jsonl sleep: the append ends within about a second naming it asleep; status is stuck", async () => {
    const dir = journal();
    M.appendInbox(dir, { id: "before" });
    const h = spawn("flock", [join(dir, "inbox.jsonl"), "sleep", "40"], { stdio: "ignore", detached: true, timeout: 60_000 });
    children.push(h);
    await until(() => held(join(dir, "inbox.jsonl")));
    const r = timedAppend(dir);
    console.log(`# figure an append beside a running flock sleep: ${r.ms} ms, ${r.error ? "refused" : "appended"}`);
    if (!isAddon) return assert.equal(r.error, null);
    assert.match(
      r.error,
      /\npid (\d+) \(asleep, no CPU time between two looks: (flock|sleep) .*\) holds its append lock and has not let go: pid \1 keeps the lock while it waits on something else: let it finish, or end it \(`kill \1`\) where its work is not needed$/,
    );
    // The second look at 1 s; 2 s leave a loaded machine room (10 s before).
    assert.ok(r.ms < 2000, `${r.ms} ms`);
    const out = stuck(
      dir,
      /^pid \d+ \(asleep, no CPU time between two looks: .*\) holds the append lock of inbox\.jsonl and does not move/,
    );
    assert.equal(out.appendLocks["inbox.jsonl"].state, "idle");
    process.kill(-h.pid, "SIGKILL");
  });

  test("a stopped child that inherited the descriptor, its taker gone: named, with kill -CONT", async () => {
    const dir = journal();
    M.appendInbox(dir, { id: "before" });
    const inbox = join(dir, "inbox.jsonl");
    const sh = spawnSync("bash", ["-c", `exec 9>>'${inbox}'; flock 9; sleep 60 >/dev/null 2>&1 & echo $!`], {
      encoding: "utf8",
      timeout: 10_000,
    });
    const pid = Number(sh.stdout.trim());
    children.push({ pid });
    // Stopped once it is sleep: stopped between its fork and its exec, it
    // is still a copy of the shell, and named so.
    await until(() => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "sleep";
      } catch {
        return false;
      }
    });
    process.kill(pid, "SIGSTOP");
    await until(() => stateOf(pid) === "T");
    assert.ok(held(inbox), "the sleep holds it");
    const r = timedAppend(dir);
    console.log(`# figure an append beside a stopped inheritor: ${r.ms} ms, ${r.error ? "refused" : "appended"}`);
    if (!isAddon) return assert.equal(r.error, null);
    assert.match(
      r.error,
      new RegExp(`\\npid ${pid} \\(stopped: sleep 60\\) holds its append lock and has not let go: \`kill -CONT ${pid}\` lets it finish$`),
    );
    assert.ok(r.ms < 1500, `${r.ms} ms`);
    const out = stuck(dir, new RegExp(`^pid ${pid} \\(stopped: sleep 60\\) holds the append lock of inbox\\.jsonl and is stopped`));
    assert.equal(out.verdict.next, `\`kill -CONT ${pid}\` lets it finish`);
    process.kill(pid, "SIGKILL");
  });

  // #64: repair --apply waited 10 s on a stopped appender, naming nobody,
  // and kept run.lock all that time (a start was refused meanwhile).
  test("repair --apply beside a stopped appender ends within about a second naming it, and keeps no run.lock", async () => {
    const dir = journal();
    M.appendInbox(dir, { id: "before" });
    // An interrupted append: a repair sets it aside, holding the file's flock.
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"cut', { flag: "a" });
    const s = await stoppedHolding(join(dir, "inbox.jsonl"));
    const t = Date.now();
    const r = cli("repair", dir, "--apply");
    const ms = Date.now() - t;
    console.log(`# figure repair --apply beside a stopped appender: ${ms} ms, exit ${r.status}`);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    const pid = family(s).find((p) => (r.stdout + r.stderr).includes(`pid ${p} (stopped`));
    assert.ok(pid, r.stdout + r.stderr);
    assert.match(
      r.stdout + r.stderr,
      new RegExp(
        `inbox\\.jsonl is held by another process, pid ${pid} \\(stopped: .*\\), which holds its append lock and has not let go; nothing of it was changed, and the binding was let go\\. \`kill -CONT ${pid}\` lets it finish, then run the repair again`,
      ),
    );
    // A process's start, the repair's judgement, a second at its first looks: 1.5 s promised, 3 s for a loaded machine.
    assert.ok(ms < 3000, `${ms} ms`);
    assert.equal(existsSync(join(dir, "run.lock")), false, "run.lock let go");
    M.writePid(dir, process.pid);
    M.clearPid(dir, process.pid);
  });

  // #64: a tracer holding one thread of a holder (states `tSSS`) read as
  // running, and the append waited for it. strace holds the main thread
  // at its sleep (an injected delay) while its other threads wait.
  const python = spawnSync("python3", ["-c", "import fcntl, threading"]).status === 0 ? {} : { skip: "needs python3" };
  test("a holder one of whose threads a tracer holds: named traced within about a second", { ...hasStrace, ...python }, async () => {
    const dir = journal();
    M.appendInbox(dir, { id: "before" });
    const inbox = join(dir, "inbox.jsonl");
    const script = [
      "import fcntl, sys, threading, time",
      "f = open(sys.argv[1], 'a')",
      "fcntl.flock(f, fcntl.LOCK_EX)",
      "for _ in range(3): threading.Thread(target=threading.Event().wait, daemon=True).start()",
      "print('locked', flush=True)",
      "time.sleep(40)",
    ].join("\n");
    const h = delayed("clock_nanosleep:delay_enter=30000000", ["python3", "-c", script, inbox], "inherit");
    await new Promise((resolve) => h.stdout.once("data", resolve));
    // The traced process: strace's child, whose main thread stops at its sleep.
    let pid;
    await until(() => {
      pid = childOf(h.pid);
      return pid !== undefined && readdirSync(`/proc/${pid}/task`).some((t) => stateOf(`${pid}/task/${t}`) === "t");
    });
    const states = readdirSync(`/proc/${pid}/task`)
      .map((t) => stateOf(`${pid}/task/${t}`))
      .join("");
    const r = timedAppend(dir);
    console.log(`# figure an append beside a holder with a traced thread (${states}): ${r.ms} ms, ${r.error ? "refused" : "appended"}`);
    h.kill("SIGKILL");
    process.kill(Number(pid), "SIGKILL");
    if (!isAddon) return assert.equal(r.error, null);
    assert.match(
      r.error,
      new RegExp(
        `\\npid ${pid} \\(stopped by a debugger or tracer: .*python3 .*\\) holds its append lock and has not let go: detach the debugger or tracer from pid ${pid}`,
      ),
    );
    assert.ok(r.ms < 2000, `${r.ms} ms`);
  });

  // What `docker pause` does: the cgroup freezer, v1 here where it is
  // mounted, else v2.
  const v1 = "/sys/fs/cgroup/freezer";
  const v2 = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"].find((d) => existsSync(join(d, "cgroup.controllers")));
  for (const useV1 of [true, false]) {
    const freezer =
      process.getuid?.() !== 0
        ? { skip: "needs root to make a cgroup" }
        : useV1
          ? existsSync(join(v1, "tasks"))
            ? {}
            : { skip: "no cgroup v1 freezer here" }
          : v2
            ? {}
            : { skip: "no cgroup v2 here" };
    test(
      `a holder frozen by the cgroup ${useV1 ? "v1" : "v2"} freezer: named frozen, with the command that thaws it`,
      freezer,
      async () => {
        const dir = journal();
        M.appendInbox(dir, { id: "before" });
        const inbox = join(dir, "inbox.jsonl");
        const cg = join(useV1 ? v1 : v2, `discord-journal-test-${process.pid}`);
        mkdirSync(cg);
        const state = useV1 ? join(cg, "freezer.state") : join(cg, "cgroup.freeze");
        const h = spawn("sh", ["-c", `echo $$ > '${join(cg, "cgroup.procs")}' && exec flock '${inbox}' sleep 60`], {
          stdio: "ignore",
          detached: true,
          timeout: 60_000,
        });
        children.push(h);
        try {
          await until(() => held(inbox));
          writeFileSync(state, useV1 ? "FROZEN" : "1");
          await until(() =>
            useV1 ? readFileSync(state, "utf8").trim() === "FROZEN" : /^frozen 1$/m.test(readFileSync(join(cg, "cgroup.events"), "utf8")),
          );
          const r = timedAppend(dir);
          console.log(
            `# figure an append beside a frozen holder (cgroup ${useV1 ? "v1" : "v2"}): ${r.ms} ms, ${r.error ? "refused" : "appended"}`,
          );
          if (isAddon) {
            const thaw = useV1 ? `echo THAWED > ${state}` : `echo 0 > ${state}`;
            assert.match(r.error, /\npid \d+ \(frozen by its cgroup's freezer: (flock|sleep) .*\) holds its append lock/);
            assert.ok(
              r.error.endsWith(`\`${thaw}\` thaws its cgroup (\`docker unpause\` where a container was paused), and it finishes`),
              r.error,
            );
            assert.ok(r.ms < 1500, `${r.ms} ms`);
            const out = stuck(dir, /^pid \d+ \(frozen by its cgroup's freezer: .*\) holds the append lock of inbox\.jsonl and is frozen/);
            assert.match(out.verdict.next, new RegExp(`^\`${thaw.replace(/[.*]/g, "\\$&")}\` thaws its cgroup`));
          } else assert.equal(r.error, null);
        } finally {
          writeFileSync(state, useV1 ? "THAWED" : "0");
          try {
            process.kill(-h.pid, "SIGKILL");
          } catch {
            // Gone.
          }
          await new Promise((r) => (h.exitCode !== null || h.signalCode !== null ? r() : h.once("exit", r)));
          for (let i = 0; i < 100; i++) {
            try {
              rmdirSync(cg);
              break;
            } catch {
              await new Promise((r) => setTimeout(r, 20));
            }
          }
        }
      },
    );
  }

  // The shipped unit has no CAP_SYS_PTRACE: another user's descriptors
  // cannot be read. Its holder is said to be unread, never named wrongly
  // (the pid /proc/locks gives took the lock; whether it still holds it,
  // or a child that inherited it does, cannot be told).
  // The waiter is this package's copy for others (forOthers): what it says
  // of a holder is this package's alone, so the test skips on another.
  test(
    "a holder of another user, whose descriptors the waiter may not read: said so, with whom to ask",
    isAddon ? actsAsOwner : addonOnly,
    async () => {
      const dir = journal();
      M.appendInbox(dir, { id: "before" });
      for (const d of [dirname(dirname(dir)), dirname(dir)]) chmodSync(d, 0o755);
      for (const f of [dir, join(dir, "inbox.jsonl"), join(dir, "turns")]) chownSync(f, NOBODY, NOBODY);
      const s = await stoppedHolding(join(dir, "inbox.jsonl"));
      const pkg = forOthers();
      const code = `const M = require(${JSON.stringify(join(pkg, "index.js"))});
      const t = Date.now(); let error = null;
      try { M.appendInbox(${JSON.stringify(dir)}, { id: "nobody" }); } catch (e) { error = e.message; }
      console.log(JSON.stringify({ ms: Date.now() - t, error }));`;
      const a = spawnSync("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, "-e", code], {
        encoding: "utf8",
        timeout: 60_000,
      });
      const r = JSON.parse(a.stdout);
      console.log(`# figure an append as another user beside a stopped root holder: ${r.ms} ms, ${r.error ? "refused" : "appended"}`);
      assert.match(
        r.error,
        new RegExp(
          `\\na process whose descriptors this one may not read \\(pid (${family(s).join("|")}) took the lock; another user's, or no ptrace rights here\\) holds its append lock and has not let go: run \`status\` as root or as that process's user`,
        ),
      );
    },
  );

  const unshare =
    process.getuid?.() === 0 && spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"]).status === 0
      ? {}
      : { skip: "needs unshare(1) and the right to make a PID namespace (root)" };
  test(
    "a stopped holder on the host, the waiter in a PID namespace of its own: said unseen, with status from the host",
    unshare,
    async () => {
      const dir = journal();
      M.appendInbox(dir, { id: "before" });
      const s = await stoppedHolding(join(dir, "inbox.jsonl"));
      const esm = modulePath.endsWith(".mjs");
      const code = `
      const M = ${esm ? `await import(${JSON.stringify(modulePath)})` : `require(${JSON.stringify(modulePath)})`};
      const t = Date.now(); let error = null;
      try { M.appendInbox(${JSON.stringify(dir)}, { id: "inside" }); } catch (e) { error = e.message; }
      console.log(JSON.stringify({ ms: Date.now() - t, error }));`;
      const inside = (...args) => spawnSync("unshare", ["--pid", "--fork", "--mount-proc", ...args], { encoding: "utf8", timeout: 60_000 });
      const a = inside(process.execPath, ...(esm ? ["--input-type=module"] : []), "-e", code);
      const r = JSON.parse(a.stdout);
      console.log(`# figure an append in a PID namespace beside a stopped host holder: ${r.ms} ms, ${r.error ? "refused" : "appended"}`);
      if (!isAddon) return assert.equal(r.error, null);
      assert.match(
        r.error,
        /\na process this container cannot see \(outside its PID namespace\) holds its append lock and has not let go: run `status` from the host/,
      );
      const st = inside(process.execPath, bin, "status", dir, "--json");
      assert.equal(st.status, 1, st.stdout + st.stderr);
      const out = JSON.parse(st.stdout);
      assert.equal(out.verdict.state, "stuck");
      assert.match(
        out.verdict.problems[0].what,
        /^a process this container cannot see \(outside its PID namespace\) holds the append lock of inbox\.jsonl/,
      );
      // From the host, the same holder is named, stopped.
      stuck(dir, new RegExp(`^pid (${family(s).join("|")}) \\(stopped: `));
    },
  );

  // #64 (a): a claim in the namespace, the guard held by a stopped host
  // process, refused after 10 s saying "a process that has since let go …
  // Run the command again", which was false, and status said ready.
  test("a stopped host holder of the lock guard, a claim in a PID namespace: said unseen, never 'has since let go'", unshare, async () => {
    const dir = journal();
    await stoppedInGuard(dir);
    const esm = modulePath.endsWith(".mjs");
    const code = `
      const M = ${esm ? `await import(${JSON.stringify(modulePath)})` : `require(${JSON.stringify(modulePath)})`};
      const t = Date.now(); let error = null;
      try { M.writePid(${JSON.stringify(dir)}, process.pid); } catch (e) { error = e.message; }
      console.log(JSON.stringify({ ms: Date.now() - t, error }));`;
    const inside = (...args) => spawnSync("unshare", ["--pid", "--fork", "--mount-proc", ...args], { encoding: "utf8", timeout: 60_000 });
    const r = JSON.parse(inside(process.execPath, ...(esm ? ["--input-type=module"] : []), "-e", code).stdout);
    console.log(
      `# figure a claim in a PID namespace beside a stopped host holder of the guard: ${r.ms} ms, ${r.error ? "refused" : "stood"}`,
    );
    if (!isAddon) return;
    assert.match(
      r.error,
      /^run\.lock or STOP is being changed by another process, a process this container cannot see \(outside its PID namespace\), which holds the journal's lock guard .*Run `status` from the host/,
    );
    assert.doesNotMatch(r.error, /has since let go/);
    const st = inside(process.execPath, bin, "status", dir, "--json");
    assert.equal(st.status, 1, st.stdout + st.stderr);
    const out = JSON.parse(st.stdout);
    assert.equal(out.verdict.state, "stuck");
    assert.match(
      out.verdict.problems[0].what,
      /^a process this container cannot see \(outside its PID namespace\) holds the journal's lock guard/,
    );
  });
});
