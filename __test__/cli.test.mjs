// The operator's command, run as a real process: status, check, stop,
// unlock, recover and demo. The command is this package's own, so these
// tests skip when the suite runs against another implementation.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, addonOnly, deadPid, journal } from "./helpers.mjs";

const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));
const cli = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8" });

describe("discord-journal command", addonOnly, () => {
  test("demo builds a journal and prints its status", () => {
    const dir = join(journal({ bare: true }), "..", "demo");
    const r = cli("demo", dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /recover said "cleared"/);
    assert.match(r.stdout, /inbox\.jsonl\s+5 lines/);
    assert.match(r.stdout, /n3 {2}intent {2}since /);
    assert.match(r.stdout, /admissions 3, turns 3, notices ceiling/);
    assert.match(r.stdout, /run\.lock:\n {2}free/);
    const again = cli("demo", dir);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /already holds a journal; give the demo a new directory/);
  });

  test("status --json: one object with files, deliveries, STOP and the lock", () => {
    const dir = journal();
    M.appendOutbox(dir, { nonce: "a", status: "intent", at: "2021-01-01T00:00:00.000Z" });
    M.requestStop(dir, "operator");
    mkdirSync(join(dir, "run.lock"));
    writeFileSync(join(dir, "run.lock", "owner.json"), JSON.stringify({ pid: deadPid(), start: "5", boot: M.bootId() }));
    const r = cli("status", dir, "--json");
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.equal(s.files["outbox.jsonl"].lines, 1);
    assert.deepEqual(s.unresolvedDeliveries.value.map((d) => d.nonce), ["a"]);
    assert.deepEqual(s.stop.value.map((l) => l.reason), ["operator"]);
    assert.equal(s.lock.state, "dead");
    assert.match(s.lock.next, /recover/);
  });

  test("--data-root and --binding name the journal; a missing one says what to type", () => {
    const dir = journal({ name: "beta" });
    const root = dirname(dirname(dir));
    const r = cli("status", "--data-root", root, "--binding", "beta");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /journal discord\/beta under the data root/);
    assert.equal(cli("stop", "--data-root", root, "--binding", "beta", "maintenance").status, 0);
    assert.deepEqual(M.readStop(dir).map((l) => l.reason), ["maintenance"]);
    const none = cli("status");
    assert.equal(none.status, 2);
    assert.match(none.stderr, /give its directory .* or --binding NAME/);
    const typo = cli("stauts");
    assert.notEqual(typo.status, 0);
    assert.match(typo.stderr, /Did you mean status\?/);
  });

  test("check lists every bad line with an offset that points at it", () => {
    const dir = journal();
    const file = join(dir, "inbox.jsonl");
    writeFileSync(file, '{"id":"1"}\n{bad\n\n{"id":"2"}\n[1,\n{"id":"3"}\n');
    writeFileSync(join(dir, "turns", "t1.json"), "{nope");
    const r = cli("check", dir);
    assert.equal(r.status, 1);
    const lines = r.stdout.trim().split("\n");
    assert.deepEqual(lines.slice(0, 2), ["inbox.jsonl:2: not valid JSON (byte offset 11)", "inbox.jsonl:5: not valid JSON (byte offset 28)"]);
    assert.equal(lines[2], "turns/t1.json: not valid JSON");
    const bytes = readFileSync(file);
    assert.equal(bytes.subarray(11, 15).toString(), "{bad");
    assert.equal(bytes.subarray(28, 31).toString(), "[1,");
    const status = cli("status", dir);
    assert.match(status.stdout, /first bad line 2 at byte 11: readers refuse with "inbox\.jsonl:2: not valid JSON"/);
    const clean = cli("check", journal());
    assert.equal(clean.status, 0);
  });

  test("stop, recover and unlock: refusals print the message and exit with its code", () => {
    const dir = journal();
    assert.equal(cli("stop", dir, "maintenance").status, 0);
    assert.deepEqual(M.readStop(dir).map((l) => l.reason), ["maintenance"]);
    const r = cli("recover", dir);
    assert.equal(r.status, 3);
    assert.equal(r.stderr.trim(), "STOP is present in discord/alpha under the data root; the brake is on. Remove it to run");
    M.clearStop(dir);
    assert.equal(cli("recover", dir).stdout.trim(), "clean");
    assert.match(cli("unlock", dir).stdout, /no run\.lock; STOP written/);
  });

  test("a live lock held by another process: status says live, unlock refuses", async () => {
    const dir = journal();
    const child = spawn(process.execPath, ["-e", `require(${JSON.stringify(fileURLToPath(new URL("..", import.meta.url)))}).writePid(${JSON.stringify(dir)}, process.pid); console.log("held"); setInterval(() => {}, 1000)`], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise((resolve) => child.stdout.on("data", resolve));
      const s = cli("status", dir);
      assert.match(s.stdout, new RegExp(`live \\(pid ${child.pid}\\): a connector runs`));
      const u = cli("unlock", dir);
      assert.equal(u.status, 1);
      assert.match(u.stderr, /refusing to unlock: the connector is running/);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
