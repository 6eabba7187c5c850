// A child process of the reliability suite: loads the module under test
// (JOURNAL_MODULE, or this package) and plays one role, printing one JSON
// line of results on stdout.
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("..", import.meta.url));
const path = process.env.JOURNAL_MODULE ? resolve(process.env.JOURNAL_MODULE) : join(root, "index.js");
const M = path.endsWith(".mjs") ? await import(pathToFileURL(path).href) : createRequire(import.meta.url)(path);

/** A usage mistake: the message, exit status 2 (a count like `10k` once ran as NaN, #13). */
function usage(message) {
  console.error(`worker: ${message}\nusage: node reliability/worker.mjs ROLE DIR [N ...]`);
  process.exit(2);
}
// Positionals `role dir ...args`; no option is defined, so any `--flag` is refused.
let positionals;
try {
  ({ positionals } = parseArgs({ strict: true, allowPositionals: true, options: {} }));
} catch (e) {
  usage(e.message);
}
const [role, dir, ...args] = positionals;
if (role === undefined || dir === undefined) usage("give a role and a journal directory");
/** The role's numeric arguments: digits only, each refused with exit 2 otherwise. */
const numbers = (list) =>
  list.map((text, i) => {
    if (!/^[0-9]+$/.test(text)) usage(`${role}: argument ${i + 1} takes a whole number (digits only), not ${JSON.stringify(text)}`);
    return Number(text);
  });
const now = () => performance.timeOrigin + performance.now();
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
// Who started this worker: a loop that runs until killed stops once it is gone.
const parent = process.ppid;

switch (role) {
  // Appends `n` drop lines of about 200 bytes (or `size` + 40), each naming its writer and index.
  case "append": {
    const [writer, n, size = 160] = numbers(args);
    const pad = "x".repeat(size);
    for (let i = 0; i < n; i++) M.appendDrop(dir, { w: writer, i, pad });
    out({ appended: n });
    break;
  }
  // Appends until killed, acknowledging each line once appendDrop returned
  // (or until the test that kills it is gone, so an interrupted run never
  // fills the disk).
  case "append-forever": {
    for (let i = 0; process.ppid === parent; i++) {
      M.appendDrop(dir, { i, pad: "y".repeat(180) });
      process.stdout.write(`${i}\n`);
    }
    process.exit(1);
  }
  // Tries to create turn records t0..t(n-1), each with its writer's name.
  case "turns": {
    const [writer, n] = numbers(args);
    const won = [],
      lost = [],
      other = [];
    for (let i = 0; i < n; i++) {
      try {
        M.writeTurn(dir, `t${i}`, { writer, i, body: "z".repeat(500) });
        won.push(i);
      } catch (e) {
        (e.message === `turn record already exists: t${i}` ? lost : other).push(e.message);
      }
    }
    out({ won, lost: lost.length, other });
    break;
  }
  // Claims, holds and releases the lock until `ms` passed, counting holds in
  // a counter file; a second holder would find the `holding` marker.
  case "lock": {
    const [ms] = numbers(args);
    const end = now() + ms;
    let holds = 0,
      refused = 0,
      violations = 0;
    while (now() < end) {
      try {
        M.writePid(dir, process.pid);
      } catch (e) {
        if (e.exitCode !== 3) throw e;
        refused++;
        continue;
      }
      try {
        closeSync(openSync(join(dir, "holding"), "wx"));
      } catch {
        violations++;
      }
      const counter = join(dir, "counter");
      writeFileSync(counter, String(Number(readFileSync(counter, "utf8")) + 1));
      holds++;
      sleep(1);
      unlinkSync(join(dir, "holding"));
      M.clearPid(dir, process.pid);
    }
    out({ holds, refused, violations });
    break;
  }
  // Claims and releases until `ms` passed, recording when each claim that
  // stood had started; a holder checks its lock is still its own.
  case "claim": {
    const [ms, hold] = numbers(args);
    const end = now() + ms;
    const stood = [];
    let lost = 0;
    const losses = [];
    const releases = [];
    while (now() < end) {
      const started = now();
      try {
        M.writePid(dir, process.pid);
      } catch {
        continue;
      }
      stood.push(started);
      sleep(hold);
      const rec = M.readPid(dir);
      if (!rec || rec.pid !== process.pid) {
        lost++;
        losses.push(rec);
      }
      try {
        M.clearPid(dir, process.pid);
      } catch (e) {
        // journal.mjs's rmSync can meet another claim's files (ENOTEMPTY).
        releases.push(String(e.message).slice(0, 80));
      }
    }
    out({ stood, lost, losses, releases });
    break;
  }
  // After `delay` ms, unlocks (writing STOP first) and reports when STOP
  // was certainly there.
  case "unlock": {
    const [delay] = numbers(args);
    sleep(delay);
    let result;
    try {
      result = M.unlock(dir);
    } catch (e) {
      result = e.message;
    }
    out({ stopAt: now(), result: String(result) });
    break;
  }
  // An operator who unlocks and lifts the brake again, until `ms` passed:
  // unlock (STOP first; a live owner refuses), 10 ms, clearStop, 10 ms.
  case "unlock-loop": {
    const [ms] = numbers(args);
    const end = now() + ms;
    const seen = {};
    while (now() < end) {
      let r;
      try {
        r = M.unlock(dir) === false ? "no lock" : "cleared";
      } catch (e) {
        r = e.message.split(":")[0].slice(0, 40);
      }
      seen[r] = (seen[r] ?? 0) + 1;
      sleep(10);
      try {
        M.clearStop(dir);
      } catch {
        // Another STOP update at the same moment: the next round lifts it.
      }
      sleep(10);
    }
    out(seen);
    break;
  }
  // Appends an inbox id every `ms` ms until killed, printing each once
  // appendInbox returned (a record the journal must keep from then on).
  case "inbox-every": {
    const [ms] = numbers(args);
    for (let i = 0; process.ppid === parent; i++) {
      M.appendInbox(dir, { id: `w${i}` });
      process.stdout.write(`w${i}\n`);
      sleep(ms);
    }
    process.exit(1);
  }
  // Runs recover until `ms` passed, counting what it did.
  case "recover": {
    const [ms] = numbers(args);
    const end = now() + ms;
    const seen = {};
    while (now() < end) {
      let r;
      try {
        r = M.recover(dir);
      } catch (e) {
        r = e.message.split(":")[0].slice(0, 40);
      }
      seen[r] = (seen[r] ?? 0) + 1;
    }
    out(seen);
    break;
  }
  // `n` STOP lines, retrying while another writer holds .stop.lock.
  case "stop": {
    const [writer, n] = numbers(args);
    let retries = 0;
    for (let i = 0; i < n;) {
      try {
        M.requestStop(dir, `w${writer}-${i}`);
        i++;
      } catch (e) {
        if (e.message !== "STOP update is locked; refusing") throw e;
        retries++;
      }
    }
    out({ retries });
    break;
  }
  // Dies between creating run.lock and publishing owner.json: `now` is
  // converted after the mkdir, inside the claim.
  case "die-claiming": {
    M.writePid(dir, process.pid, {
      now: {
        valueOf() {
          process.kill(process.pid, "SIGKILL");
          return 0;
        },
      },
    });
    break;
  }
  // Holds the lock until killed.
  case "hold": {
    M.writePid(dir, process.pid);
    out({ held: process.pid });
    setInterval(() => {}, 1000);
    break;
  }
  // Uses every file descriptor, then appends and reads.
  case "emfile": {
    const fds = [];
    try {
      for (;;) fds.push(openSync("/dev/null", "r"));
    } catch {}
    const result = {};
    for (const [name, f] of [
      ["append", () => M.appendInbox(dir, { id: "1" })],
      ["read", () => M.readInboxIds(dir)],
      ["turn", () => M.writeTurn(dir, "t1", {})],
    ]) {
      try {
        f();
        result[name] = "ok";
      } catch (e) {
        result[name] = e.message;
      }
    }
    for (const fd of fds) closeSync(fd);
    out(result);
    break;
  }
  // One export with exactly `free` file descriptors left: the journal is
  // set up first, then every descriptor but `free` is taken, the export
  // runs, and what it returned and left behind is reported.
  case "descriptors": {
    const [op, free, dead] = [args[0], Number(args[1]), Number(args[2])];
    const boot = M.bootId();
    const lock = join(dir, "run.lock");
    const stale = JSON.stringify({ pid: dead, start: "5", boot, at: "2021-01-01T00:00:00.000Z" }) + "\n";
    if (["recover", "unlock", "clearPid"].includes(op)) {
      mkdirSync(lock, { mode: 0o700 });
      writeFileSync(join(lock, "owner.json"), stale, { mode: 0o600 });
    }
    if (op === "writePidStopped") M.requestStop(dir, "operator");
    if (op === "listTurns" || op === "countTurnsOn") {
      for (let i = 0; i < 100; i++) M.writeTurn(dir, `t${i}`, { startedAt: `2021-01-0${1 + (i % 3)}T00:00:00.000Z`, i });
    }
    const call = {
      writePid: () => (M.writePid(dir, process.pid), "claimed"),
      writePidStopped: () => (M.writePid(dir, process.pid), "claimed"),
      recover: () => M.recover(dir),
      unlock: () => JSON.stringify(M.unlock(dir)),
      clearPid: () => (M.clearPid(dir, dead), "returned"),
      listTurns: () => M.listTurns(dir).length,
      countTurnsOn: () => M.countTurnsOn(dir, "2021-01-02"),
    }[op];
    // A warm process: a kept identity would now answer without a read.
    M.identityOf(process.pid);
    const taken = [];
    try {
      for (;;) taken.push(openSync("/dev/null", "r"));
    } catch {}
    for (let i = 0; i < free; i++) closeSync(taken.pop());
    let result;
    try {
      result = { ok: call() };
    } catch (e) {
      result = { message: e.message, exitCode: e.exitCode };
    }
    for (const fd of taken) closeSync(fd);
    const has = (p) => {
      try {
        lstatSync(p);
        return true;
      } catch {
        return false;
      }
    };
    result.left = { lock: has(lock), owner: has(join(lock, "owner.json")), stop: has(join(dir, "STOP")) };
    out(result);
    break;
  }
  // Swaps run.lock for a symlink to `outside` and back (four renames) in a
  // tight loop. When `control/pause-N` appears (N counting from 0) it stands
  // still with the names in place (run.lock where it was, the link at
  // swap.link), says so with `control/paused-N`, and goes on when
  // `control/go-N` appears, or ends if `control/done` is there by then.
  case "swap": {
    const [control, outside] = args;
    const lock = join(dir, "run.lock"),
      real = join(dir, "run.lock.real"),
      link = join(dir, "swap.link");
    const at = (name, n) => join(control, `${name}-${n}`);
    let swaps = 0;
    for (let n = 0; ;) {
      if (existsSync(at("pause", n))) {
        writeFileSync(at("paused", n), "");
        while (!existsSync(at("go", n))) sleep(0.1);
        n++;
        if (existsSync(join(control, "done"))) break;
        continue;
      }
      try {
        renameSync(lock, real);
      } catch {
        continue;
      }
      try {
        renameSync(link, lock);
        renameSync(lock, link);
      } catch {
        // The link was removed meanwhile (the reference's rmSync unlinks it).
        try {
          symlinkSync(outside, link);
        } catch {}
      }
      try {
        renameSync(real, lock);
      } catch {}
      swaps++;
    }
    out({ swaps });
    break;
  }
  // Reads drops.jsonl 200 times in this fresh process, sampling open files
  // and resident memory after a collection every 20 reads.
  case "reads": {
    const fds = () => readdirSync("/proc/self/fd").length;
    const samples = [];
    const fd0 = fds();
    for (let i = 1; i <= 200; i++) {
      M.readDrops(dir);
      if (i % 20 === 0) {
        globalThis.gc();
        samples.push(process.memoryUsage().rss / 2 ** 20);
      }
    }
    out({ fd0, fd1: fds(), samples });
    break;
  }
  default:
    usage(`unknown role ${JSON.stringify(role)}`);
}
