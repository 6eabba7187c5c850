// After a crash the service starts again and nothing is lost (#21): an
// append after a cut line never glues onto it, and `discord-journal
// repair` sets aside what a crash left, keeping every byte, while whole
// records stay byte for byte. The crashes are made real: a last line cut
// at every byte offset and zero runs (what a power loss leaves), a writer
// killed with SIGKILL in the middle of appends longer than a page, and a
// repair killed at each of its steps. Appends and reads are the module
// under test's (JOURNAL_MODULE); the repair is this package's, so on the
// reference these tests report a figure where it fails.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, linkSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, forOthers, isAddon, journal, liveOwner, modulePath, runFile } from "./helpers.mjs";
import { RECORDS, RECORD_NAMES, readersOf } from "./record-files.mjs";

const require = createRequire(import.meta.url);
// The repair: this package's own, whatever the module under test.
require("../index.js");
const native = require("../binding.js");
const repair = (dir) => JSON.parse(native.repair(dir, true));

const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));
const cli = (args, env = {}) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", env: { ...process.env, ...env } });
const figure = (name, value) => console.log(`# figure ${name}: ${value}`);
const who = isAddon ? "addon" : "journal.mjs";

// Each record file with its appender of an entry numbered n, and its readers (record-files.mjs).
const KINDS = Object.fromEntries(
  RECORD_NAMES.map((name) => [name, { append: (d, n) => RECORDS[name].append(M, d, n), read: readersOf(M, name, "2026-12-01", "k1") }]),
);

/** The bytes of `name` after the appends `ns` alone: the file that never had the cut record. */
function clean(name, ns) {
  const d = journal();
  for (const n of ns) KINDS[name].append(d, n);
  return readFileSync(join(d, name));
}

/** Whether every reader of `name` reads `dir`. */
function reads(dir, name) {
  try {
    for (const r of KINDS[name].read) r(dir);
    return true;
  } catch {
    return false;
  }
}

/** Runs `repair DIR --apply` paused at `step`, and kills it there with SIGKILL. */
async function killedAt(dir, step) {
  const child = spawn(process.execPath, [bin, "repair", dir, "--apply"], {
    env: { ...process.env, DISCORD_JOURNAL_REPAIR_PAUSE: step },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  await new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => {
      err += d;
      if (err.includes(`repair paused: ${step}`)) resolve();
    });
    child.on("exit", () => reject(new Error(`exited before ${step}: ${err}`)));
  });
  child.kill("SIGKILL");
  await new Promise((r) => child.on("close", r));
}

/** The quarantine files of the journal, and their bytes. */
const aside = (dir) =>
  readdirSync(dir)
    .filter((n) => n.includes(".aside-"))
    .map((n) => [n, readFileSync(join(dir, n))]);

describe("a power loss in every record file", () => {
  test("the last line cut at every byte offset, then an append and a repair: every whole record kept, the cut bytes set aside", () => {
    let cases = 0;
    const failed = [];
    for (const name of Object.keys(KINDS)) {
      const whole = clean(name, [1, 2, 3]);
      const third = clean(name, [1, 2]).length;
      const expect = clean(name, [1, 2, 4]);
      for (let cut = third + 1; cut < whole.length - 1; cut++) {
        cases++;
        const dir = journal();
        writeFileSync(join(dir, name), whole.subarray(0, cut), { mode: 0o600 });
        KINDS[name].append(dir, 4);
        const r = repair(dir);
        const ok = r.applied && reads(dir, name) && readFileSync(join(dir, name)).equals(expect);
        const kept = aside(dir);
        if (ok)
          assert.deepEqual(
            kept.map(([, b]) => b.toString()),
            [`${whole.subarray(third, cut)}\n`],
            `${name} cut at ${cut}`,
          );
        if (!ok) failed.push(`${name}@${cut}`);
      }
      // The newline alone lost: the record is whole, and stays.
      const dir = journal();
      writeFileSync(join(dir, name), whole.subarray(0, whole.length - 1), { mode: 0o600 });
      KINDS[name].append(dir, 4);
      repair(dir);
      cases++;
      if (!(reads(dir, name) && readFileSync(join(dir, name)).equals(clean(name, [1, 2, 3, 4])))) failed.push(`${name}@newline`);
    }
    figure(`cut last lines, then append and repair (${who})`, `${failed.length} of ${cases} cases lost a record or did not read`);
    if (isAddon) assert.deepEqual(failed, []);
  });

  test("zero runs of 1 to 4,096 bytes at the end, then an append and a repair", () => {
    const sizes = [1, 2, 3, 7, 8, 100, 511, 512, 1023, 4095, 4096];
    let cases = 0;
    const failed = [];
    for (const name of Object.keys(KINDS)) {
      const expect = clean(name, [1, 2, 4]);
      for (const size of sizes) {
        for (const after of ["a whole line", "a cut line"]) {
          cases++;
          const dir = journal();
          let bytes = clean(name, [1, 2]);
          if (after === "a cut line") bytes = Buffer.concat([bytes, clean(name, [3]).subarray(0, 9)]);
          writeFileSync(join(dir, name), Buffer.concat([bytes, Buffer.alloc(size)]), { mode: 0o600 });
          KINDS[name].append(dir, 4);
          const r = repair(dir);
          if (!(r.applied && reads(dir, name) && readFileSync(join(dir, name)).equals(expect)))
            failed.push(`${name}+${size} after ${after}`);
          else assert.equal(aside(dir).reduce((n, [, b]) => n + b.length, 0) >= size, true);
        }
      }
    }
    figure(`zero runs, then append and repair (${who})`, `${failed.length} of ${cases} cases lost a record or did not read`);
    if (isAddon) assert.deepEqual(failed, []);
  });

  test("an append onto a file whose last line has no newline writes the line on its own; a whole file's bytes are the reference's", () => {
    const dir = journal();
    KINDS["inbox.jsonl"].append(dir, 1);
    const before = readFileSync(join(dir, "inbox.jsonl"));
    KINDS["inbox.jsonl"].append(dir, 2);
    assert.deepEqual(readFileSync(join(dir, "inbox.jsonl")), clean("inbox.jsonl", [1, 2]));
    writeFileSync(join(dir, "inbox.jsonl"), Buffer.concat([before, Buffer.from('{"id":"cut')]));
    KINDS["inbox.jsonl"].append(dir, 3);
    const text = readFileSync(join(dir, "inbox.jsonl"), "utf8");
    const glued = text.includes('{"id":"cut{');
    figure(`append after a cut line (${who})`, glued ? "glued onto it" : "on a line of its own");
    if (isAddon) assert.equal(text, `${before}{"id":"cut\n${clean("inbox.jsonl", [3])}`);
  });
});

describe("an append after a last line that trim() empties glues onto it, as journal.mjs's does (#31)", () => {
  // The tail, and the ids the readers read after appendInbox({ id: "new" }).
  const tails = {
    "a BOM an editor saved": ["\uFEFF", ["new"]],
    "a stray \\r": ['{"id":"a"}\n\r', ["a", "new"]],
    spaces: ['{"id":"a"}\n   ', ["a", "new"]],
    "a tab": ["\t", ["new"]],
    "a BOM and spaces": ["\uFEFF  ", ["new"]],
  };
  for (const [what, [tail, ids]] of Object.entries(tails)) {
    test(what, () => {
      const dir = journal();
      writeFileSync(join(dir, "inbox.jsonl"), tail);
      M.appendInbox(dir, { id: "new" });
      assert.equal(readFileSync(join(dir, "inbox.jsonl"), "utf8"), `${tail}{"id":"new"}\n`);
      assert.deepEqual([...M.readInboxIds(dir)], ids);
    });
  }
  test("a cut line after spaces is still a cut line", () => {
    const dir = journal();
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"a"}\n  {"id":"b');
    M.appendInbox(dir, { id: "new" });
    const text = readFileSync(join(dir, "inbox.jsonl"), "utf8");
    if (isAddon) assert.equal(text, '{"id":"a"}\n  {"id":"b\n{"id":"new"}\n');
  });
});

describe("a writer killed in the middle of appends longer than a page", () => {
  test("SIGKILL during appends of 6 KB lines, then an append and a repair: no acknowledged record lost", async () => {
    const dir = journal();
    const mod = JSON.stringify(modulePath);
    const code = `
      const load = async (p) => (p.endsWith(".mjs") ? import(require("node:url").pathToFileURL(p).href) : require(p));
      load(${mod}).then((M) => {
        const pad = "x".repeat(6000);
        // Stops by itself once the test that kills it is gone, so a run
        // interrupted never leaves it filling the disk.
        const parent = process.ppid;
        for (let i = 0; process.ppid === parent; i++) {
          const id = process.argv[1] + "-" + i;
          M.appendInbox(${JSON.stringify(dir)}, { id, pad });
          process.stdout.write(id + "\\n");
        }
      });`;
    const acked = [];
    for (let trial = 0; trial < 40; trial++) {
      const child = spawn(process.execPath, ["-e", code, String(trial)], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      await new Promise((r) => child.stdout.once("data", r));
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      child.kill("SIGKILL");
      await new Promise((r) => child.on("close", r));
      acked.push(...out.split("\n").filter((l) => /^\d+-\d+$/.test(l)));
    }
    M.appendInbox(dir, { id: "after" });
    const r = repair(dir);
    let ids;
    try {
      ids = M.readInboxIds(dir);
    } catch (e) {
      ids = e;
    }
    const lost = ids instanceof Set ? acked.filter((id) => !ids.has(id)).length : acked.length;
    const torn = r.plan.files.find((f) => f.file === "inbox.jsonl")?.aside.length ?? 0;
    figure(
      `kill -9 mid-append, 40 kills (${who})`,
      `${acked.length} acknowledged, ${lost} lost; ${torn} torn lines set aside; repair ${r.applied ? "applied" : `refused (${r.plan.corrupt.length} corrupt lines)`}`,
    );
    if (isAddon) {
      assert.equal(r.applied, true);
      assert.equal(lost, 0);
      assert.ok(ids.has("after"));
    }
  });
});

describe("discord-journal repair, killed and refused", { skip: isAddon ? false : "the command is this package's own" }, () => {
  /** A journal a crash left: a cut inbox line with whole lines after it, zeros at the end of the outbox, an empty turn record. */
  function crashed() {
    const dir = journal();
    M.appendInbox(dir, { id: "1" });
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"1"}\n{"id":"2","at":"20', { flag: "a" });
    M.appendInbox(dir, { id: "3" });
    M.appendOutbox(dir, { nonce: "a", status: "intent", at: "2026-12-01T00:00:00.000Z" });
    writeFileSync(join(dir, "outbox.jsonl"), Buffer.alloc(300), { flag: "a" });
    M.writeTurn(dir, "t1", { startedAt: "2026-12-01T00:00:00.000Z" });
    writeFileSync(join(dir, "turns", "t2.json"), "", { mode: 0o600 });
    return dir;
  }
  const INBOX = '{"id":"1"}\n{"id":"1"}\n{"id":"3"}\n';

  /** Asserts the journal is mended and every set-aside byte is kept once. */
  function mended(dir) {
    assert.equal(readFileSync(join(dir, "inbox.jsonl"), "utf8"), INBOX);
    assert.equal(
      readFileSync(join(dir, "outbox.jsonl"), "utf8"),
      `${JSON.stringify({ nonce: "a", status: "intent", at: "2026-12-01T00:00:00.000Z" })}\n`,
    );
    assert.equal(existsSync(join(dir, "turns", "t2.json")), false);
    const kept = Object.fromEntries(aside(dir).map(([n, b]) => [n.split(".aside-")[0], b]));
    assert.deepEqual(Object.keys(kept).sort(), ["inbox.jsonl", "outbox.jsonl", "turns-t2.json"]);
    assert.equal(kept["inbox.jsonl"].toString(), '{"id":"2","at":"20\n');
    assert.deepEqual(kept["outbox.jsonl"], Buffer.alloc(300));
    for (const [n] of aside(dir)) assert.equal(statSync(join(dir, n)).mode & 0o777, 0o600, n);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.startsWith(".repair-")),
      [],
    );
    assert.deepEqual([...M.readInboxIds(dir)], ["1", "3"]);
    assert.equal(M.unresolvedOutbox(dir).length, 1);
    assert.equal(M.countTurnsOn(dir, "2026-12-01"), 1);
  }

  test("a turn record followed by zeros: the record is kept and only the zeros are set aside, as the report says (#31)", () => {
    const dir = journal();
    const text = '{\n  "startedAt": "2026-12-01T00:00:00.000Z"\n}\n';
    writeFileSync(join(dir, "turns", "t7.json"), Buffer.concat([Buffer.from(text), Buffer.alloc(8)]));
    const r = cli(["repair", dir, "--apply"]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /^turns\/t7\.json: the record kept \(46 bytes\); the 8 zero bytes after it set aside as turns-t7\.json\.aside-\S+\n/,
    );
    assert.equal(readFileSync(join(dir, "turns", "t7.json"), "utf8"), text);
  });

  test("without --apply it shows and changes nothing; with it the binding starts again and a second repair finds nothing", () => {
    const dir = crashed();
    const before = readdirSync(dir).map((n) => [n, existsSync(join(dir, n))]);
    const shown = cli(["repair", dir]);
    assert.equal(shown.status, 1, shown.stderr);
    assert.match(shown.stdout, /^inbox\.jsonl: 3 records kept; 1 line \(19 bytes\) set aside: line 3 cut short\n/);
    assert.match(shown.stdout, /outbox\.jsonl: 1 record kept; 1 line \(300 bytes\) set aside: line 2 zero bytes\n/);
    assert.match(shown.stdout, /turns\/t2\.json: empty, set aside whole\n/);
    assert.match(shown.stdout, /nothing was changed: `discord-journal repair \S+ --apply` does this/);
    assert.deepEqual(
      readdirSync(dir).map((n) => [n, existsSync(join(dir, n))]),
      before,
    );
    const s = JSON.parse(cli(["status", dir, "--json"]).stdout);
    assert.equal(s.verdict.state, "damaged");
    assert.match(s.verdict.next, /^`discord-journal repair \S+ --apply` sets it aside/);
    const r = cli(["repair", dir, "--apply"]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /inbox\.jsonl: 3 records kept; 1 line \(19 bytes\) set aside in inbox\.jsonl\.aside-\d{8}T\d{6}\.\d{3}Z: line 3 cut short/,
    );
    mended(dir);
    assert.equal(existsSync(join(dir, "run.lock")), false, "the repair released the binding");
    // The binding starts: a claim stands, and every reader reads.
    M.writePid(dir, process.pid);
    M.clearPid(dir, process.pid);
    const again = cli(["repair", dir, "--apply"]);
    assert.equal(again.stdout, "nothing to repair\n");
    assert.equal(JSON.parse(cli(["status", dir, "--json"]).stdout).verdict.state, "ready");
  });

  for (const step of [
    "held",
    "quarantined inbox.jsonl",
    "written inbox.jsonl",
    "mended inbox.jsonl",
    "quarantined outbox.jsonl",
    "mended outbox.jsonl",
    "set aside turns/t2.json",
  ]) {
    test(`killed at "${step}", then repaired again: nothing lost, nothing half done`, async () => {
      const dir = crashed();
      await killedAt(dir, step);
      // The killed repair's lock is a dead owner's: the next repair clears it to hold the binding, and releases its own.
      const r = cli(["repair", dir, "--apply"]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /\nrun\.lock of pid \d+, which is gone, was cleared to hold the binding during the repair\n/);
      mended(dir);
      assert.equal(existsSync(join(dir, "run.lock")), false);
      assert.equal(cli(["recover", dir]).stdout, "clean\n");
      assert.equal(cli(["repair", dir, "--apply"]).stdout, "nothing to repair\n");
    });
  }

  const snapshot = (dir) =>
    readdirSync(dir).map((n) => [n, statSync(join(dir, n)).isFile() ? readFileSync(join(dir, n)).toString("hex") : "dir"]);
  test("repair refused while a live owner holds the binding: exit 3, nothing changed", async () => {
    const live = crashed();
    const child = await liveOwner(live);
    try {
      const before = snapshot(live);
      const r = cli(["repair", live, "--apply"]);
      assert.equal(r.status, 3, r.stderr);
      assert.match(r.stderr, /another connector is running for this binding \(pid \d+\)/);
      assert.deepEqual(snapshot(live), before);
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("refusals change nothing: corruption (1), a FIFO (1), and the journal of another user (1)", () => {
    const corrupt = crashed();
    writeFileSync(join(corrupt, "drops.jsonl"), '{"a":1}\n{bad}\n{"a":2}\n', { mode: 0o600 });
    const before = snapshot(corrupt);
    const c = cli(["repair", corrupt, "--apply"]);
    assert.equal(c.status, 1);
    assert.match(
      c.stderr,
      /drops\.jsonl:2: corrupt \(byte offset 8, 5 bytes\): "\{bad\}"\nnothing was changed: 1 line is not an interrupted append/,
    );
    assert.deepEqual(snapshot(corrupt), before);
    assert.equal(existsSync(join(corrupt, "run.lock")), false);

    const fifo = crashed();
    spawnSync("mkfifo", ["-m", "600", join(fifo, "drops.jsonl")]);
    const f = cli(["repair", fifo, "--apply"]);
    assert.equal(f.status, 1);
    assert.match(f.stderr, /could not read drops\.jsonl \(EFTYPE\)/);
    assert.equal(readFileSync(join(fifo, "inbox.jsonl"), "utf8"), '{"id":"1"}\n{"id":"1"}\n{"id":"2","at":"20\n{"id":"3"}\n');

    if (process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0) {
      const theirs = crashed();
      chmodSync(join(theirs, "..", ".."), 0o755);
      chmodSync(join(theirs, ".."), 0o755);
      chmodSync(theirs, 0o755);
      // Loaded from a copy nobody can reach where the checkout is closed to it (#36).
      const theirBin = join(forOthers(), "bin", "discord-journal.js");
      const n = spawnSync(
        "setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", ...runFile(theirBin, "repair", theirs, "--apply")],
        {
          encoding: "utf8",
        },
      );
      assert.equal(n.status, 1, n.stderr);
      assert.match(n.stderr, /cannot write in the journal at .* \(EACCES\): it belongs to root/);
      assert.equal(aside(theirs).length, 0);
    }
  });

  test("a second repair while one runs, and a symlinked record file, are refused; --missing-ok answers for a binding that has not run", async () => {
    const dir = crashed();
    // A repair paused while it holds the binding.
    const first = spawn(process.execPath, [bin, "repair", dir, "--apply"], {
      env: { ...process.env, DISCORD_JOURNAL_REPAIR_PAUSE: "held" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let err = "";
      await new Promise((resolve, reject) => {
        first.stderr.on("data", (d) => {
          err += d;
          if (err.includes("repair paused: held")) resolve();
        });
        first.on("exit", () => reject(new Error(`exited before it held the binding: ${err}`)));
      });
      const r = cli(["repair", dir, "--apply"]);
      assert.equal(r.status, 3, r.stderr);
      assert.match(r.stderr, /another repair is running for this binding/);
      assert.equal(aside(dir).length, 0);
    } finally {
      first.kill("SIGKILL");
      await new Promise((r) => first.on("close", r));
    }
    const linked = crashed();
    const elsewhere = join(linked, "..", "inbox-elsewhere.jsonl");
    writeFileSync(elsewhere, readFileSync(join(linked, "inbox.jsonl")));
    rmSync(join(linked, "inbox.jsonl"));
    symlinkSync(elsewhere, join(linked, "inbox.jsonl"));
    const l = cli(["repair", linked, "--apply"]);
    assert.equal(l.status, 1, l.stdout);
    assert.match(l.stderr, /inbox\.jsonl is a symlink: a repair changes only the journal's own files, and nothing was changed/);
    assert.equal(aside(linked).length, 0);
    const fresh = join(dir, "..", "not-yet");
    for (const [command, said] of [
      ["recover", "clean"],
      ["repair", "nothing to repair"],
    ]) {
      assert.equal(cli([command, fresh]).status, 2, "a missing directory is a usage mistake by default");
      const r = cli([command, fresh, "--missing-ok", ...(command === "repair" ? ["--apply"] : [])]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, `${said}\n`);
      assert.equal(existsSync(fresh), false);
    }
  });

  const tmpfs = process.getuid?.() === 0 && spawnSync("mount", ["--version"]).status === 0;
  test("a full disk during the repair changes nothing and says why", { skip: tmpfs ? false : "needs root to mount a small tmpfs" }, () => {
    const mnt = join(tmpdir(), `discord-journal-full-${process.pid}`);
    spawnSync("mkdir", ["-p", mnt]);
    const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt]);
    if (m.status !== 0) return;
    try {
      const dir = join(mnt, "discord", "alpha");
      M.ensureJournal(dir);
      // Whole lines, a cut line, whole lines after it: the repair must write the file anew.
      const line = `${JSON.stringify({ id: "x", pad: "p".repeat(900) })}\n`;
      writeFileSync(join(dir, "inbox.jsonl"), `${line.repeat(60)}{"id":"cut\n${line.repeat(60)}`, { mode: 0o600 });
      // Fill the file system but for a few pages: room for the repair's
      // lock and quarantine, not for the file written anew.
      spawnSync("sh", ["-c", `cat /dev/zero > ${join(mnt, "fill")} 2>/dev/null; truncate -s -16K ${join(mnt, "fill")}`]);
      const before = readFileSync(join(dir, "inbox.jsonl"));
      const r = cli(["repair", dir, "--apply"]);
      assert.equal(r.status, 1, r.stdout);
      assert.match(r.stderr, /ENOSPC/);
      assert.deepEqual(readFileSync(join(dir, "inbox.jsonl")), before);
      assert.deepEqual(readdirSync(dir).sort(), ["inbox.jsonl", "turns"]);
      rmSync(join(mnt, "fill"));
      assert.equal(cli(["repair", dir, "--apply"]).status, 0);
    } finally {
      spawnSync("umount", ["-l", mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });
});

describe(
  "lines of whitespace alone and record files with another name (#45)",
  { skip: isAddon ? false : "the command is this package's own" },
  () => {
    const M1 = '{"id":"m1"}\n';
    const M2 = '{"id":"m2"}\n';
    const BLANKS = "   \n\r\n\t \r\n";
    /** A journal whose inbox holds three lines of whitespace alone between two records, and a turn record of whitespace alone. */
    function blanks() {
      const dir = journal();
      writeFileSync(join(dir, "inbox.jsonl"), `${M1}${BLANKS}${M2}`, { mode: 0o600 });
      writeFileSync(join(dir, "turns", "t1.json"), " \n", { mode: 0o600 });
      return dir;
    }

    test("a line of whitespace alone is named as such, not corruption, and repair --apply sets it aside: the readers answer", () => {
      const dir = blanks();
      // The library's refusal is the reference's, unchanged.
      assert.throws(() => M.readInboxIds(dir), { message: "inbox.jsonl:2: not valid JSON" });
      const c = cli(["check", dir, "--json"]);
      assert.equal(c.status, 1);
      const found = JSON.parse(c.stdout).problems.filter((p) => p.damage !== undefined);
      assert.deepEqual(
        found.map((p) => [p.file, p.line, p.damage]),
        [
          ["inbox.jsonl", 2, "blank"],
          ["inbox.jsonl", 3, "blank"],
          ["inbox.jsonl", 4, "blank"],
          ["turns/t1.json", undefined, "blank"],
        ],
      );
      const text = cli(["check", dir]).stdout;
      assert.match(text, /^inbox\.jsonl:3: not valid JSON, whitespace alone \(no record\) \(byte offset 16, 1 byte\): "\\r"$/m);
      assert.match(text, /^fix: `discord-journal repair \S+ --apply` sets aside .* lines of whitespace alone, keeping their bytes$/m);
      assert.doesNotMatch(text, /corrupt|by hand/);
      const s = JSON.parse(cli(["status", dir, "--json"]).stdout);
      assert.equal(s.verdict.state, "damaged");
      assert.match(
        s.verdict.problems[0].what,
        /^inbox\.jsonl:2 is whitespace alone \(.*\) \(and 2 more bad lines\); every read of inbox\.jsonl refuses/,
      );
      assert.match(s.verdict.problems[1].what, /^turns\/t1\.json is whitespace alone/);
      assert.match(s.verdict.next, /^`discord-journal repair \S+ --apply` sets it aside/);
      assert.equal(s.files["inbox.jsonl"].corrupt, false);
      const shown = cli(["repair", dir]);
      assert.equal(shown.status, 1);
      assert.match(
        shown.stdout,
        /^inbox\.jsonl: 2 records kept; 3 lines \(10 bytes\) set aside: line 2 whitespace alone, line 3 whitespace alone, line 4 whitespace alone\n/,
      );
      assert.match(shown.stdout, /^turns\/t1\.json: whitespace alone, set aside whole\n/m);
      const r = cli(["repair", dir, "--apply"]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.equal(readFileSync(join(dir, "inbox.jsonl"), "utf8"), `${M1}${M2}`);
      assert.deepEqual([...M.readInboxIds(dir)], ["m1", "m2"]);
      assert.deepEqual(M.listTurns(dir), []);
      const kept = Object.fromEntries(aside(dir).map(([n, b]) => [n.split(".aside-")[0], b.toString()]));
      assert.deepEqual(kept, { "inbox.jsonl": BLANKS, "turns-t1.json": " \n" });
      assert.equal(JSON.parse(cli(["status", dir, "--json"]).stdout).verdict.state, "ready");
    });

    for (const step of ["quarantined inbox.jsonl", "written inbox.jsonl", "mended inbox.jsonl", "set aside turns/t1.json"]) {
      test(`lines of whitespace alone, the repair killed at "${step}": the old file or the new, every byte kept once`, async () => {
        const dir = blanks();
        await killedAt(dir, step);
        const inbox = readFileSync(join(dir, "inbox.jsonl"), "utf8");
        assert.ok([`${M1}${BLANKS}${M2}`, `${M1}${M2}`].includes(inbox), JSON.stringify(inbox));
        const r = cli(["repair", dir, "--apply"]);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.equal(readFileSync(join(dir, "inbox.jsonl"), "utf8"), `${M1}${M2}`);
        const kept = aside(dir).map(([n, b]) => [n.split(".aside-")[0], b.toString()]);
        assert.deepEqual(kept.sort(), [
          ["inbox.jsonl", BLANKS],
          ["turns-t1.json", " \n"],
        ]);
        assert.deepEqual([...M.readInboxIds(dir)], ["m1", "m2"]);
      });
    }

    /** Two bindings' journals whose inbox.jsonl is one file, hard-linked; the other binding's records in it. */
    function linked() {
      const a = journal({ name: "a" });
      const b = join(a, "..", "b");
      M.ensureJournal(b);
      M.appendInbox(a, { id: "a1" });
      linkSync(join(a, "inbox.jsonl"), join(b, "inbox.jsonl"));
      M.appendInbox(b, { id: "b1" });
      return { a, b };
    }

    test("a record file hard-linked to another binding's: named by status and check, and repair --apply gives it a file of its own", () => {
      const { a, b } = linked();
      // Each binding reads the other's records: the state to name.
      assert.deepEqual([...M.readInboxIds(a)], ["a1", "b1"]);
      const s = JSON.parse(cli(["status", b, "--json"]).stdout);
      const p = s.verdict.problems.find((x) => x.what.startsWith("inbox.jsonl has another name (a hard link, 2 names in all)"));
      assert.ok(p, JSON.stringify(s.verdict.problems));
      assert.match(p.fix, /^`discord-journal repair \S+ --apply` makes it a file of this journal's own/);
      assert.equal(s.verdict.next, p.fix);
      assert.equal(cli(["status", b]).status, 1);
      const c = cli(["check", b]);
      assert.equal(c.status, 1);
      assert.match(c.stdout, /^inbox\.jsonl has another name \(a hard link/m);
      assert.match(c.stdout, /^fix: `discord-journal repair \S+ --apply` makes it a file of this journal's own/m);
      const shown = cli(["repair", b]);
      assert.equal(shown.status, 1);
      assert.match(
        shown.stdout,
        /^inbox\.jsonl: 2 records kept; written anew as a file of its own \(it had another name, a hard link, which keeps the old file\)\n/,
      );
      assert.equal(statSync(join(b, "inbox.jsonl")).nlink, 2, "nothing changed without --apply");
      const r = cli(["repair", b, "--apply"]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      // Every record kept under both names, each now a file of its own.
      for (const d of [a, b]) {
        assert.equal(statSync(join(d, "inbox.jsonl")).nlink, 1);
        assert.deepEqual([...M.readInboxIds(d)], ["a1", "b1"]);
        assert.equal(statSync(join(d, "inbox.jsonl")).mode & 0o777, 0o600);
      }
      M.appendInbox(b, { id: "b2" });
      assert.deepEqual([...M.readInboxIds(a)], ["a1", "b1"], "b's appends are b's alone");
      assert.equal(cli(["status", a]).status, 0);
      assert.equal(cli(["status", b]).status, 0);
      assert.equal(cli(["check", b]).status, 0);
    });

    test("a record file hard-linked, the repair killed before its rename: still shared, and the next repair splits it", async () => {
      const { a, b } = linked();
      await killedAt(b, "written inbox.jsonl");
      assert.equal(statSync(join(b, "inbox.jsonl")).nlink, 2);
      const r = cli(["repair", b, "--apply"]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.equal(statSync(join(a, "inbox.jsonl")).nlink, 1);
      for (const d of [a, b]) assert.deepEqual([...M.readInboxIds(d)], ["a1", "b1"]);
      assert.deepEqual(
        readdirSync(b).filter((n) => n.startsWith(".repair-") || n.includes(".aside-")),
        [],
      );
    });

    test("a record file hard-linked while a connector runs: next says to stop it first, and the repair refuses (3)", async () => {
      const { b } = linked();
      const child = await liveOwner(b);
      try {
        const s = JSON.parse(cli(["status", b, "--json"]).stdout);
        assert.match(s.verdict.next, /^a connector runs \(pid \d+\) and holds the binding, so a repair cannot: stop it by hand/);
        const r = cli(["repair", b, "--apply"]);
        assert.equal(r.status, 3, r.stderr);
        assert.equal(statSync(join(b, "inbox.jsonl")).nlink, 2);
      } finally {
        child.kill("SIGKILL");
      }
    });
  },
);
