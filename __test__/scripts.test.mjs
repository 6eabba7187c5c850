// The project's own scripts (the benchmark, the fuzzer, the reliability
// worker) refuse an option they do not know and a count that is not a
// number, with exit status 2, instead of running with NaN (#13).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { journal, modulePath } from "./helpers.mjs";

const script = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const run = (path, ...args) => spawnSync(process.execPath, ["--expose-gc", script(path), ...args], { encoding: "utf8", timeout: 60_000 });

describe("scripts refuse bad options", () => {
  test("fuzz: a count that is not digits, an unknown option, no case to run: exit 2", () => {
    const cases = [
      [["--cases", "10k"], /--cases takes a whole number of at least 1 \(digits only\), not "10k"/],
      [["--cases", "1,000"], /not "1,000"/],
      [["--cases", "1e3"], /not "1e3"/],
      [["--cases", "0"], /--cases takes a whole number of at least 1/],
      [["--seed", "x"], /--seed takes a whole number of at least 0/],
      [["--case", "1000"], /Unknown option '--case'/],
      [["--cases"], /argument missing/],
      [["extra"], /Unexpected argument 'extra'/],
    ];
    for (const [args, message] of cases) {
      const r = run("fuzz/json-oracle.mjs", ...args);
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /usage: node fuzz\/json-oracle\.mjs \[--cases N\]/);
      assert.equal(r.stdout, "");
    }
    const ok = run("fuzz/json-oracle.mjs", "--cases", "20", "--seed", "7", "--module", modulePath);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^fuzz: 20 cases \(\d+ valid\), seed 7: 0 disagreements with JSON\.parse$/m);
  });

  // #53: a release of a set of platforms; a set it does not know is
  // refused before anything is fetched or built.
  const hasBash =
    spawnSync("bash", ["-c", "true"]).status === 0 ? {} : { skip: "no bash here (a BusyBox root): the release is packed in a clone" };
  test("pack:release: an unknown set or more than one: exit 2, before any work, naming the sets", hasBash, () => {
    for (const args of [["windows"], ["linux-x64"], ["linux", "darwin"], ["--help"]]) {
      const r = spawnSync("bash", [script("scripts/pack-release.sh"), ...args], { encoding: "utf8", timeout: 60_000 });
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, "", "nothing started");
      assert.match(r.stderr, /usage: npm run pack:release|no such platform set: .*Give all, linux, darwin, or platforms joined by commas/);
    }
  });

  test("bench: a count that is not digits or an unknown option: exit 2, before any work", () => {
    const cases = [
      [["--lines", "1,000"], /--lines takes a whole number of at least 1 \(digits only\), not "1,000"/],
      [["--turns", "10k"], /--turns takes a whole number/],
      [["--pairs", "0"], /--pairs takes a whole number of at least 1/],
      [["--line", "5"], /Unknown option '--line'/],
      [["--only", "("], /--only takes a regular expression/],
    ];
    for (const [args, message] of cases) {
      const r = run("bench/bench.mjs", ...args);
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, "", "nothing was measured");
    }
  });

  test("reliability worker: positional role and counts; a flag, a role it lacks or a count like 10k: exit 2", () => {
    const dir = journal();
    const cases = [
      [[], /give a role and a journal directory/],
      [["append", dir, "1", "10k"], /append: argument 2 takes a whole number \(digits only\), not "10k"/],
      [["append", dir, "1", "--n", "3"], /Unknown option '--n'/],
      [["no-such-role", dir], /unknown role "no-such-role"/],
    ];
    for (const [args, message] of cases) {
      const r = run("reliability/worker.mjs", ...args);
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
    }
    const ok = run("reliability/worker.mjs", "append", dir, "1", "3");
    assert.equal(ok.status, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), { appended: 3 });
  });
});
