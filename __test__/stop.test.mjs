// The STOP brake and processing stops.
import assert from "node:assert/strict";
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { GEN, M, OTHER_GEN, journal, mode, noHostPath, refuses, underUmask } from "./helpers.mjs";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const lines = (dir) =>
  readFileSync(join(dir, "STOP"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe("STOP", () => {
  test("the clock is the page's Date: a test that fakes it sees its own times", () => {
    const dir = journal();
    // The global Date replaced, as a host's fake clock replaces it (sinon's
    // fake timers; node:test's mock.timers, which Node 20 calls
    // experimental with a warning: #48).
    const RealDate = globalThis.Date;
    globalThis.Date = class extends RealDate {
      constructor(...args) {
        super(...(args.length ? args : [86_400_000]));
      }
      static now() {
        return 86_400_000;
      }
    };
    try {
      M.requestStop(dir, "faked");
      assert.equal(M.readStop(dir)[0].at, "1970-01-02T00:00:00.000Z");
      M.clearStop(dir);
      M.writePid(dir, process.pid);
      assert.equal(JSON.parse(readFileSync(join(dir, "run.lock", "owner.json"), "utf8")).at, "1970-01-02T00:00:00.000Z");
      M.clearPid(dir, process.pid);
    } finally {
      globalThis.Date = RealDate;
    }
  });

  test("requestStop appends {at, reason} lines, 0600; readStop returns them oldest first", () => {
    const dir = journal();
    assert.equal(M.stopRequested(dir), false);
    assert.deepEqual(M.readStop(dir), []);
    assert.equal(M.requestStop(dir), join(dir, "STOP"));
    M.requestStop(dir, "operator");
    M.requestStop(dir, null);
    assert.equal(M.stopRequested(dir), true);
    assert.equal(mode(join(dir, "STOP")), underUmask(0o600));
    const read = M.readStop(dir);
    assert.deepEqual(
      read.map((l) => l.reason),
      ["stop", "operator", null],
    );
    assert.deepEqual(Object.keys(read[0]), ["at", "reason"]);
    assert.match(read[0].at, ISO);
    assert.ok(Math.abs(Date.parse(read[0].at) - Date.now()) < 60_000);
    assert.equal(existsSync(join(dir, ".stop.lock")), false);
  });

  test("readStop keeps foreign lines as {reason: null} and skips blank ones", () => {
    const dir = journal();
    M.requestStop(dir, "operator");
    appendFileSync(join(dir, "STOP"), 'garbage\n  \n\u00a0\u2028\n[1]\n{"reason":5}\n"s"\n');
    assert.deepEqual(
      M.readStop(dir).map((l) => l.reason),
      ["operator", null, null, null, null],
    );
  });

  test("clearStop removes STOP, and is quiet when there is none", () => {
    const dir = journal();
    M.requestStop(dir);
    assert.equal(M.clearStop(dir), undefined);
    assert.equal(M.stopRequested(dir), false);
    M.clearStop(dir);
  });

  test(".stop.lock serializes updates and refuses rather than waits", () => {
    const dir = journal();
    mkdirSync(join(dir, ".stop.lock"));
    refuses(() => M.requestStop(dir), "STOP update is locked; refusing");
    refuses(() => M.requestProcessingStop(dir, GEN), "STOP update is locked; refusing");
    assert.equal(M.stopRequested(dir), false);
  });

  test("a STOP that is a symlink or a directory is refused by label, never by path", () => {
    const dir = journal();
    symlinkSync(join(dir, "elsewhere"), join(dir, "STOP"));
    noHostPath(
      refuses(() => M.requestStop(dir), "could not write STOP in discord/alpha under the data root (ELOOP)"),
      dir,
    );
    assert.equal(existsSync(join(dir, "elsewhere")), false);
    rmSync(join(dir, "STOP"));
    mkdirSync(join(dir, "STOP"));
    refuses(() => M.requestStop(dir), "could not write STOP in discord/alpha under the data root (EISDIR)");
    refuses(() => M.readStop(dir), "could not read STOP in discord/alpha under the data root (EISDIR)");
    refuses(() => M.clearStop(dir), "could not remove STOP in discord/alpha under the data root (EISDIR)");
  });

  test("a binding without a valid name is labelled generically", () => {
    const dir = journal({ name: "Bad Name" });
    mkdirSync(join(dir, "STOP"));
    refuses(() => M.requestStop(dir), "could not write STOP in the binding's journal directory (EISDIR)");
  });

  test("a reason JSON.stringify refuses is a failed write; STOP is left created", () => {
    const dir = journal();
    refuses(() => M.requestStop(dir, 1n), "could not write STOP in discord/alpha under the data root (unknown error)");
    assert.equal(readFileSync(join(dir, "STOP"), "utf8"), "");
    assert.equal(existsSync(join(dir, ".stop.lock")), false);
  });
});

describe("processing stops", () => {
  test("request is idempotent per generation; clear removes only its own STOP", () => {
    const dir = journal();
    refuses(() => M.requestProcessingStop(dir, "not-a-uuid"), "invalid processing generation");
    refuses(() => M.requestProcessingStop(dir, GEN.toUpperCase()), "invalid processing generation");
    assert.equal(M.clearProcessingStop(dir, "nope"), false);
    assert.equal(M.clearProcessingStop(dir, GEN), false);
    assert.equal(M.requestProcessingStop(dir, GEN), join(dir, "STOP"));
    M.requestProcessingStop(dir, GEN);
    assert.deepEqual(
      lines(dir).map((l) => l.reason),
      [`processing:${GEN}`],
    );
    assert.equal(M.clearProcessingStop(dir, OTHER_GEN), false);
    assert.equal(M.clearProcessingStop(dir, GEN), true);
    assert.equal(M.stopRequested(dir), false);
  });

  test("an operator's line on top keeps STOP in place", () => {
    const dir = journal();
    M.requestProcessingStop(dir, GEN);
    M.requestStop(dir, "operator");
    assert.equal(M.clearProcessingStop(dir, GEN), false);
    assert.equal(M.stopRequested(dir), true);
  });

  test("a STOP that cannot be verified is refused: wrong mode, too big, not UTF-8, not JSON", () => {
    const dir = journal();
    for (const [bytes, m] of [
      ["", 0o644],
      ["x".repeat(65537), 0o600],
      [Buffer.from([0xff, 0x0a]), 0o600],
      ["{bad\n", 0o600],
    ]) {
      writeFileSync(join(dir, "STOP"), bytes);
      chmodSync(join(dir, "STOP"), m);
      refuses(() => M.requestProcessingStop(dir, GEN), "STOP cannot be verified");
      assert.equal(M.clearProcessingStop(dir, GEN), false);
      assert.equal(existsSync(join(dir, "STOP")), true);
    }
  });

  test("clear wants exactly {at, reason} with a canonical ISO time", () => {
    const dir = journal();
    const cases = [
      [`{"at":"2021-01-01T00:00:00.000Z","reason":"processing:${GEN}"}`, true],
      [`{"reason":"processing:${GEN}","at":"2024-02-29T23:59:59.999Z"}`, true],
      [`\uFEFF{"at":"2021-01-01T00:00:00.000Z","reason":"processing:${GEN}"}`, true],
      [`{"at":"2021-01-01T00:00:00.000Z","reason":"processing:${GEN}","x":1}`, false],
      [`{"at":"2021-02-30T00:00:00.000Z","reason":"processing:${GEN}"}`, false],
      [`{"at":"2021-01-01T00:00:00Z","reason":"processing:${GEN}"}`, false],
      [`{"at":5,"reason":"processing:${GEN}"}`, false],
      [`[1]`, false],
    ];
    for (const [line, cleared] of cases) {
      writeFileSync(join(dir, "STOP"), line + "\n", { mode: 0o600 });
      chmodSync(join(dir, "STOP"), 0o600);
      assert.equal(M.clearProcessingStop(dir, GEN), cleared, line);
      assert.equal(M.stopRequested(dir), !cleared, line);
    }
  });
});
