// Reliability of the lock's removal (#10): nothing outside the journal is
// ever removed or changed, whatever replaces run.lock when, and one free
// file descriptor is enough wherever it is enough for journal.mjs. Runs on
// the addon and, through JOURNAL_MODULE, on the reference; where the
// reference itself fails, the test asserts on the addon and prints the
// reference's figure.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, deadPid, isAddon } from "../__test__/helpers.mjs";

const worker = fileURLToPath(new URL("worker.mjs", import.meta.url));
const figure = (name, value) => console.log(`# figure ${name}: ${value}`);
const within = { timeout: 120_000 };

// The racing test makes about ten files a trial; on a tmpfs (where there is
// one) a create costs microseconds instead of most of a millisecond, so
// 900 trials take seconds.
const made = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
function fastJournal() {
  const shm = "/dev/shm";
  let top;
  try {
    top = mkdtempSync(join(shm, "discord-journal-test-"));
  } catch {
    top = mkdtempSync(join(tmpdir(), "discord-journal-test-"));
  }
  made.push(top);
  const dir = join(top, "discord", "alpha");
  M.ensureJournal(dir);
  return dir;
}

/** Spawns one worker role; `done` resolves with its JSON result. */
function start(role, dir, ...args) {
  // A limit of 256 open files, so that taking all but one is quick.
  const argv = [process.execPath, worker, role, dir, ...args.map(String)];
  const child = spawn("/bin/sh", ["-c", 'ulimit -n 256 && exec "$@"', "sh", ...argv], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "",
    err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const done = new Promise((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop())) : reject(new Error(`${role} exited ${code}: ${err}`)),
    ),
  );
  return { child, done };
}

const DEAD = deadPid();
const record = () => JSON.stringify({ pid: DEAD, start: "5", boot: M.bootId(), at: "2021-01-01T00:00:00.000Z" }) + "\n";

// The outside directory: the same names a lock holds (so a removal that
// walks a path through a swapped run.lock meets them), each with a canary.
const OUTSIDE = { "owner.json": null, canary: "outside", "sub/canary": "outside", "sub/deeper/canary": "outside" };

function fill(root, files) {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true, mode: 0o700 });
    writeFileSync(join(root, name), text ?? record(), { mode: 0o600 });
  }
}

/** Every file under `root` with its text, and every directory, sorted. */
function snapshot(root) {
  const seen = [];
  const walk = (d, rel) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        seen.push(`${r}/`);
        walk(join(d, e.name), r);
      } else seen.push(`${r}=${e.isSymbolicLink() ? "link" : readFileSync(join(d, e.name), "utf8")}`);
    }
  };
  walk(root, "");
  return seen.join("\n");
}

/** A journal with a stale lock (dead owner, a subtree a hand left in it) and
 * an outside directory next to the journal. */
function scene() {
  const dir = fastJournal();
  const top = dirname(dirname(dir));
  const outside = join(top, "outside");
  fill(outside, OUTSIDE);
  const lock = join(dir, "run.lock");
  fill(lock, { "owner.json": null, "sub/file": "lock", "sub/deeper/file": "lock" });
  return { dir, top, outside, lock, before: snapshot(outside) };
}

/** Puts run.lock back as a stale lock and the outside directory as it was
 * (counting whether it had changed); removes STOP. */
function reset({ dir, outside, lock, before }) {
  const changed = snapshot(outside) !== before;
  if (changed) {
    rmSync(outside, { recursive: true, force: true });
    fill(outside, OUTSIDE);
  }
  for (const p of [lock, join(dir, "run.lock.real")]) {
    let st = null;
    try {
      st = lstatSync(p);
    } catch {}
    if (st) rmSync(p, { recursive: st.isDirectory(), force: true });
  }
  rmSync(join(dir, "STOP"), { force: true });
  rmSync(join(dir, ".stop.lock"), { recursive: true, force: true });
  if (!existsSync(join(dir, "swap.link"))) symlinkSync(outside, join(dir, "swap.link"));
  fill(lock, { "owner.json": null, "sub/file": "lock", "sub/deeper/file": "lock" });
  return changed;
}

const spin = (until, what) => {
  const end = Date.now() + 10_000;
  while (!until()) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
};

describe("removal never reaches outside the journal", () => {
  test(
    "a second process swaps run.lock for a symlink to an outside directory while unlock, recover and clearPid run: 300 trials each",
    within,
    async () => {
      const s = scene();
      symlinkSync(s.outside, join(s.dir, "swap.link"));
      const control = join(s.top, "control");
      mkdirSync(control);
      const at = (name, n) => join(control, `${name}-${n}`);
      let n = 0;
      writeFileSync(at("pause", n), "");
      const swapper = start("swap", s.dir, control, s.outside);
      const ops = {
        unlock: () => M.unlock(s.dir),
        recover: () => M.recover(s.dir),
        clearPid: () => M.clearPid(s.dir, DEAD),
      };
      const tally = {};
      try {
        spin(() => existsSync(at("paused", n)), "the swapper");
        for (const [name, op] of Object.entries(ops)) {
          const t = (tally[name] = { trials: 0, outside: 0, refused: 0 });
          for (let i = 0; i < 300; i++) {
            // Paused: put everything back, then let the swapper run again and
            // call while it swaps.
            reset(s);
            writeFileSync(at("go", n++), "");
            // Once the swapper is seen swapping (run.lock gone or a link), a
            // delay of 0 to 0.3 ms, varied from trial to trial.
            const swapping = () => {
              try {
                return lstatSync(s.lock).isSymbolicLink();
              } catch {
                return true;
              }
            };
            const seen = performance.now() + 20;
            while (!swapping() && performance.now() < seen);
            const until = performance.now() + (i % 7) * 0.05;
            while (performance.now() < until);
            try {
              op();
            } catch {
              t.refused++;
            }
            writeFileSync(at("pause", n), "");
            spin(() => existsSync(at("paused", n)), "the swapper to pause");
            t.trials++;
            if (snapshot(s.outside) !== s.before) t.outside++;
          }
        }
        reset(s);
        writeFileSync(join(control, "done"), "");
        writeFileSync(at("go", n), "");
        const { swaps } = await swapper.done;
        const summary = Object.entries(tally)
          .map(([n, t]) => `${n} changed outside files in ${t.outside} of ${t.trials} trials (${t.refused} refused)`)
          .join("; ");
        figure("racing run.lock swaps", `${summary}; ${swaps} swaps`);
        if (isAddon) for (const [n, t] of Object.entries(tally)) assert.equal(t.outside, 0, `${n}: ${summary}`);
      } finally {
        swapper.child.kill();
      }
    },
  );

  test("a beforeRemove seam replaces run.lock (or a directory in it) with a symlink to an outside directory", () => {
    const results = [];
    const cases = {
      "run.lock swapped, unlock": (s) =>
        M.unlock(s.dir, {
          beforeRemove: () => {
            renameSync(s.lock, join(s.dir, "moved"));
            symlinkSync(s.outside, s.lock);
          },
        }),
      "run.lock swapped, recover": (s) =>
        M.recover(s.dir, {
          beforeRemove: () => {
            renameSync(s.lock, join(s.dir, "moved"));
            symlinkSync(s.outside, s.lock);
          },
        }),
      "run.lock/sub swapped, unlock": (s) =>
        M.unlock(s.dir, {
          beforeRemove: () => {
            rmSync(join(s.lock, "sub"), { recursive: true });
            symlinkSync(join(s.outside, "sub"), join(s.lock, "sub"));
          },
        }),
    };
    for (const [name, run] of Object.entries(cases)) {
      const s = scene();
      let outcome;
      try {
        outcome = JSON.stringify(run(s));
      } catch (e) {
        outcome = e.message;
      }
      const untouched = snapshot(s.outside) === s.before;
      results.push(`${name}: outside ${untouched ? "untouched" : "changed"} (${outcome})`);
      if (isAddon) assert.ok(untouched, `${name}: ${snapshot(s.outside)}`);
    }
    figure("beforeRemove swaps", results.join("; "));
  });
});

describe("one free file descriptor", () => {
  // What journal.mjs does with one descriptor free and with none (measured
  // with this test on it); the addon must do the same.
  const dead = DEAD;
  const expected = {
    writePid: [
      { ok: "claimed", left: { lock: true, owner: true, stop: false } },
      {
        message: "cannot read this process's start time or the boot id from /proc; refusing to claim the binding",
        exitCode: 1,
        left: { lock: false, owner: false, stop: false },
      },
    ],
    writePidStopped: [
      {
        message: "STOP is present in discord/alpha under the data root; remove it to run",
        exitCode: 3,
        left: { lock: false, owner: false, stop: true },
      },
      {
        message: "cannot read this process's start time or the boot id from /proc; refusing to claim the binding",
        exitCode: 1,
        left: { lock: false, owner: false, stop: true },
      },
    ],
    recover: [
      { ok: "cleared", left: { lock: false, owner: false, stop: false } },
      {
        message:
          "run.lock has an owner record that cannot be read; refusing. Inspect run.lock/owner.json in discord/alpha under the data root by hand",
        exitCode: 3,
        left: { lock: true, owner: true, stop: false },
      },
    ],
    unlock: [
      null,
      {
        message: "could not write STOP in discord/alpha under the data root (EMFILE)",
        exitCode: 1,
        left: { lock: true, owner: true, stop: false },
      },
    ],
    clearPid: [
      { ok: "returned", left: { lock: false, owner: false, stop: false } },
      { ok: "returned", left: { lock: true, owner: true, stop: false } },
    ],
    listTurns: [
      { ok: 100, left: { lock: false, owner: false, stop: false } },
      {
        message: "could not read the turns directory in discord/alpha under the data root (EMFILE)",
        exitCode: 1,
        left: { lock: false, owner: false, stop: false },
      },
    ],
    countTurnsOn: [
      { ok: 33, left: { lock: false, owner: false, stop: false } },
      {
        message: "could not read the turns directory in discord/alpha under the data root (EMFILE)",
        exitCode: 1,
        left: { lock: false, owner: false, stop: false },
      },
    ],
  };

  test("writePid, recover, unlock, clearPid, listTurns and countTurnsOn with one descriptor free and with none", within, async () => {
    const seen = [];
    for (const [op, [one, none]] of Object.entries(expected)) {
      for (const [free, want] of [
        [1, one],
        [0, none],
      ]) {
        const r = await start("descriptors", fastJournal(), op, free, dead).done;
        seen.push(`${op} with ${free} free: ${r.ok !== undefined ? `ok ${r.ok}` : `${r.message} (${r.exitCode})`}`);
        if (!isAddon) continue;
        if (want === null) {
          // unlock returns the record it cleared (its boot id is this machine's).
          assert.deepEqual(JSON.parse(r.ok), { pid: dead, start: "5", boot: M.bootId() });
          assert.deepEqual(r.left, { lock: false, owner: false, stop: true });
        } else assert.deepEqual(r, want, `${op} with ${free} free`);
      }
    }
    figure("descriptors", seen.join("; "));
  });
});
