// `npm test` as a newcomer meets it (#48): in a clone before `npm install`
// it says in one line what to run; on a set-up checkout its reporter shows
// each test as it ends, a line while a long one runs, each failure where it
// happens and again at the end, and a summary.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { reporterWith } from "./reporter.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const made = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A copy of the checkout's JavaScript as a clone has it: no node_modules, no binary. */
function clone() {
  const dir = mkdtempSync(join(tmpdir(), "discord-journal-clone-"));
  made.push(dir);
  for (const f of [
    "package.json",
    "entry.js",
    "index.js",
    "binding.js",
    "libc.js",
    "internal.js",
    "scripts/test.mjs",
    "__test__/reporter.mjs",
  ]) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(root, f), join(dir, f));
  }
  return dir;
}

const npmTest = (dir) =>
  spawnSync(process.execPath, [join(dir, "scripts", "test.mjs")], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: undefined },
  });

const onNodesRunner = process.versions.bun || process.versions.deno ? { skip: "npm test is Node's test runner" } : {};

describe("npm test", onNodesRunner, () => {
  test("in a clone before npm install: one line, naming npm install, and no test run", () => {
    const r = npmTest(clone());
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(
      r.stderr,
      /^npm test: its dependencies are not installed: run `npm install` first \(it installs the tools and builds the addon, a minute or two\), then `npm test`\n$/,
    );
  });

  test("with its dependencies but no binary built: one line, the loader's first words and npm install", () => {
    const dir = clone();
    // commander, as npm install would place it
    const commander = join(root, "node_modules", "commander");
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(commander, join(dir, "node_modules", "commander"));
    const r = npmTest(dir);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.split("\n").length, 2, r.stderr);
    assert.match(r.stderr, /^npm test: the addon does not load \(.+\): run `npm install` first/);
  });
});

/** The reporter's text for `events`; `until` lets an event wait for the reporter's output. */
async function report(events, options) {
  let out = "";
  let waiting = null;
  const seen = (re) =>
    new Promise((resolve) => {
      waiting = { re, resolve };
      if (re.test(out)) resolve();
    });
  const source = (async function* () {
    for (const e of events) {
      if (e.until) await seen(e.until);
      else yield e;
    }
  })();
  // The reporter's own timer keeps no process alive (the runner's files do).
  const alive = setInterval(() => {}, 1000);
  try {
    for await (const chunk of reporterWith(options)(source)) {
      out += chunk;
      if (waiting?.re.test(out)) waiting.resolve();
    }
  } finally {
    clearInterval(alive);
  }
  return out;
}

const file = join(root, "__test__", "x.test.mjs");
const ev = (type, data) => ({ type, data: { file, ...data } });

describe("the suite's reporter", () => {
  test("each test as it ends, under its file and its suite; skips with their reason; a summary", async () => {
    const out = await report([
      ev("test:dequeue", { name: file, nesting: 0 }),
      ev("test:start", { name: "suite", nesting: 0 }),
      ev("test:start", { name: "reads", nesting: 1 }),
      ev("test:pass", { name: "reads", nesting: 1, details: { duration_ms: 4100 } }),
      ev("test:stdout", { message: "# figure 12 ms\n" }),
      ev("test:start", { name: "on Bun", nesting: 1 }),
      ev("test:pass", { name: "on Bun", nesting: 1, skip: "Bun's engine words it its own way", details: { duration_ms: 0 } }),
      ev("test:pass", { name: "suite", nesting: 0, details: { type: "suite", duration_ms: 4200 } }),
      ...["tests 2", "pass 1", "fail 0", "skipped 1", "duration_ms 125000"].map((message) => ({
        type: "test:diagnostic",
        data: { nesting: 0, message },
      })),
    ]);
    assert.equal(
      out,
      [
        "__test__/x.test.mjs",
        "  suite",
        "    ✔ reads (4.1 s)",
        "    figure 12 ms",
        "    - on Bun (skipped: Bun's engine words it its own way)",
        "  (suite: 4.2 s)",
        "",
        "2 tests in 1 file, 2 min 5 s: 1 passed, 0 failed, 1 skipped",
        "",
      ].join("\n"),
    );
  });

  test("a line while a test runs and none ends; a failure where it happens and again at the end", { timeout: 60_000 }, async () => {
    const error = Object.assign(new Error("the wrapper"), { cause: new Error("expected 2, got 1") });
    const out = await report(
      [
        ev("test:dequeue", { name: file, nesting: 0 }),
        ev("test:dequeue", { name: "slow", nesting: 0 }),
        // The next event waits for the reporter's own line.
        { until: /… slow: running for/ },
        ev("test:start", { name: "slow", nesting: 0 }),
        ev("test:fail", { name: "slow", nesting: 0, details: { duration_ms: 20, error } }),
      ],
      { heartbeat: 10 },
    );
    assert.match(out, /^__test__\/x\.test\.mjs\n {2}… slow: running for /);
    assert.match(out, /\n {2}✖ slow \(20 ms\)\n {4}Error: expected 2, got 1\n/);
    assert.match(out, /\n1 failed:\n\n✖ __test__\/x\.test\.mjs: slow\n {4}Error: expected 2, got 1\n/);
    assert.match(out, /\n1 test in 1 file, .*: 0 passed, 1 failed, 0 skipped\n$/);
  });
});
