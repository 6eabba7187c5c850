#!/usr/bin/env node
// `npm test` (#48): the suite on Node's test runner, one file at a time,
// with the suite's reporter (__test__/reporter.mjs: each test as it ends,
// a line while a long one runs, a summary). First, one look at whether
// this checkout is set up: in a clone before `npm install` every test file
// would fail with the loader's whole story, so this says once, in one
// line, what to run. Arguments go to `node --test` (`npm test --
// --test-name-pattern=verify`); files among them replace the whole suite;
// a `--test-reporter` of one's own replaces the suite's.
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(join(root, "package.json"));

/** Why this checkout cannot run the suite yet, in a few words, or null. */
function notSetUp() {
  try {
    require.resolve("commander");
  } catch {
    return "its dependencies are not installed";
  }
  try {
    require(join(root, "index.js"));
  } catch (e) {
    return `the addon does not load (${String(e.message).split("\n")[0].replace(/:$/, "")})`;
  }
  return null;
}

const why = notSetUp();
if (why) {
  process.stderr.write(
    `npm test: ${why}: run \`npm install\` first (it installs the tools and builds the addon, a minute or two), then \`npm test\`\n`,
  );
  process.exit(1);
}

const args = process.argv.slice(2);
// A test file is named as one (a path that exists, ending in .js or .mjs);
// everything else is an option or its value, kept in order.
const isFile = (a) => /\.m?js$/.test(a) && existsSync(join(root, a));
const files = args.filter(isFile);
const options = args.filter((a) => !isFile(a));
const suite = readdirSync(join(root, "__test__"))
  .filter((f) => f.endsWith(".test.mjs"))
  .sort()
  .map((f) => join("__test__", f));
const reporter = options.some((o) => o.startsWith("--test-reporter"))
  ? []
  : [`--test-reporter=${join(root, "__test__", "reporter.mjs")}`, "--test-reporter-destination=stdout"];
const child = spawn(process.execPath, ["--test", "--test-concurrency=1", ...reporter, ...options, ...(files.length ? files : suite)], {
  cwd: root,
  stdio: "inherit",
});
// Ctrl-C reaches the runner and its files through the terminal; a TERM
// sent to this process alone is passed on.
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("exit", (code, signal) => {
  process.exitCode = signal ? 1 : code;
});
