// Every route the README and docs/command.md give for running the command
// (#63), run itself as an operator types it, in a plain shell (`env -i`
// with PATH and HOME alone), and every command it prints pasted in that
// same shell from the same directory: each must run (a command not found
// exits 127), and the demo's must move its journal on. Under npx a
// `node_modules/.bin` is on the child's PATH alone, so a command that
// named itself by what it found there was not found where it was pasted.
//
//   clone      `npx discord-journal demo` in a copy of the package (the
//              README's own line), and `node bin/discord-journal.js demo`
//   project    a monorepo that installed the packed tarball: `npx
//              --no-install discord-journal` at its root, `npx
//              discord-journal` in its workspace packages/discord, and
//              `yarn discord-journal` in another (yarn 1, installed from
//              the registry into this file's directory, or skipped)
//   pnpm       a project that added the tarball with pnpm: `pnpm exec`
//   global     `npm install -g` of the tarball into a prefix on PATH: the
//              bare name, also under npx in the project above
//   as root    on a service user's journal, which the command reads as
//              that user from the journal's directory: the name typed
//
// The package is packed once, and installed from npm's cache
// (--prefer-offline: its one dependency, commander, is already there).
// Under Bun and Deno, and where npm is not on PATH, the file skips.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { addonOnly, onNode, scratch } from "./helpers.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const nodeDir = dirname(process.execPath);
const npm = spawnSync("npm", ["--version"], { encoding: "utf8" });
const skip = !onNode
  ? "the routes are npm's, pnpm's and yarn's, run with Node"
  : npm.status !== 0
    ? "npm is not on PATH"
    : (addonOnly.skip ?? false);
const rootOnly =
  process.getuid?.() !== 0
    ? { skip: "needs root: the command becomes a journal's owner only when run as root" }
    : spawnSync("getent", ["passwd", "nobody"]).status !== 0
      ? { skip: "needs the user nobody in the user database" }
      : {};
const cache = skip ? "" : spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).stdout.trim();

// The set-up's tools run without what an npm above this suite (`npm test`)
// gave it: its config and the project it ran in are not theirs.
const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|INIT_CWD$)/i.test(k)));

/** Runs a tool of the test's set-up, failing the test with its output where it fails. */
function setUp(cmd, args, cwd, env = clean) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout: 300_000 });
  assert.equal(r.status, 0, `${cmd} ${args.join(" ")} (in ${cwd}): ${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** A shell as the operator's own: no variable but PATH (node's directory first, then `extra`) and HOME. */
const shell = (home, extra = []) => ({ PATH: [...extra, nodeDir, "/usr/bin", "/bin"].join(":"), HOME: home });

/** `line` typed in `bash` in `cwd`, with only `env`. */
const typed = (line, cwd, env) => spawnSync("bash", ["-c", line], { cwd, env, encoding: "utf8", timeout: 120_000 });

/** The commands a text quotes in backticks on its lines that match `lines`. */
const quoted = (text, lines) =>
  text
    .split("\n")
    .filter((l) => lines.test(l))
    .flatMap((l) => [...l.matchAll(/`([^`]+)`/g)].map((m) => m[1]));

/**
 * The route `type` (the command line that starts the command, as the
 * operator types it) in `cwd`, with the shell `env`: the demo, its `next`
 * and its "Try it" pasted, its fixes pasted; a second demo, the fleet's
 * `next` lines and its last line pasted. Each printed command begins with
 * `said`, the name the route must print.
 */
function walk({ type, cwd, env, said }) {
  const paste = (command) => {
    const r = typed(command, cwd, env);
    assert.notEqual(r.status, 127, `${command}, pasted in ${cwd}: ${r.stderr}`);
    assert.notEqual(r.status, 126, `${command}, pasted in ${cwd}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /command not found|not found|canceled|ENOENT/, `${command}, pasted in ${cwd}`);
    return r;
  };
  const demo = typed(`${type} demo`, cwd, env);
  assert.equal(demo.status, 0, `${type} demo: ${demo.stdout}\n${demo.stderr}`);
  const next = quoted(demo.stdout, /^next: /);
  const tryIt = quoted(demo.stdout, /^Try it: /).filter((c) => c.startsWith(said));
  const fixes = quoted(demo.stdout, /^ +fix: /);
  assert.deepEqual(next, [`${said} unlock data/discord/demo`, "rm data/discord/demo/STOP"], demo.stdout);
  assert.deepEqual(tryIt, [`${said} status data/discord/demo`], demo.stdout);
  assert.equal(fixes.length, 2, demo.stdout);
  for (const c of fixes) assert.ok(c.startsWith(`${said} resolve data/discord/demo `), c);

  // next, then the status it asks for again: the lock is cleared, the
  // brake lifted, and the binding ready.
  const unlocked = paste(next[0]);
  assert.equal(unlocked.status, 0, unlocked.stderr);
  assert.match(unlocked.stdout, /run\.lock cleared/);
  assert.equal(paste(next[1]).status, 0);
  const ready = paste(tryIt[0]);
  assert.match(ready.stdout, /^verdict: ready/m, ready.stdout);
  // The delivery's fix, as a person who found the message there.
  const confirmed = paste(fixes[0]);
  assert.equal(confirmed.status, 0, confirmed.stderr);
  assert.match(confirmed.stdout, /recorded as confirmed/);

  // The fleet's lines name the same command.
  assert.equal(typed(`${type} demo`, cwd, env).status, 0);
  const fleet = typed(`${type} status --data-root data -x`, cwd, env);
  assert.equal(fleet.status, 1, fleet.stderr);
  const fleetNext = quoted(fleet.stdout, /^ +next: /);
  const top = realpathSync(join(cwd, "data", "discord"));
  assert.deepEqual(fleetNext, [`${said} unlock ${join(top, "demo-2")}`, `rm ${join(top, "demo-2", "STOP")}`], fleet.stdout);
  const again = paste(fleetNext[0]);
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /run\.lock cleared/);
  assert.equal(paste(fleetNext[1]).status, 0);
  const [look] = quoted(fleet.stdout, /gives a binding's problems/);
  assert.equal(look, `${said} status ${join(top, "NAME")}`);
  const looked = paste(look.replace(/NAME$/, "demo"));
  assert.equal(looked.status, 0, looked.stderr);
  assert.match(looked.stdout, /^verdict: ready, can start/m);
}

describe("every printed command runs where it was typed, through each route (#63)", { skip }, () => {
  let work;
  let clone;
  let copy;
  let tarball;
  let home;
  before(() => {
    work = scratch("discord-journal-routes-");
    // The operator's home: npm's notices off (they would ask a registry),
    // npx's cache of its own.
    home = join(work, "home");
    mkdirSync(home);
    writeFileSync(join(home, ".npmrc"), "update-notifier=false\nfund=false\naudit=false\n");

    // A clone after `npm install` (two: one for each route typed in it):
    // the package's files, its binary, and the installed node_modules.
    const cloned = (dir) => {
      mkdirSync(dir, { recursive: true });
      for (const f of ["package.json", ...pkg.files.filter((f) => !f.includes("*"))])
        if (existsSync(join(root, f))) cpSync(join(root, f), join(dir, f), { recursive: true });
      for (const f of readdirSync(root).filter((f) => /^discord-journal\..+\.node$/.test(f))) cpSync(join(root, f), join(dir, f));
      symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
      return dir;
    };
    clone = cloned(join(work, "discord-journal"));
    copy = cloned(join(work, "another", "discord-journal"));

    // The tarball, this machine's binary alone (prepack would ask for all six).
    const packed = JSON.parse(setUp("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], root));
    tarball = join(work, packed[0].filename);
  });

  const install = (args, cwd) =>
    setUp("npm", ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", "--cache", cache, ...args], cwd);

  test("in a clone: npx discord-journal demo, the README's line, prints npx --no-install, which runs pasted", () => {
    walk({ type: "npx discord-journal", cwd: clone, env: shell(home), said: "npx --no-install discord-journal" });
  });

  test("in a clone: node bin/discord-journal.js demo prints the command's own path, which runs from there", () => {
    walk({ type: "node bin/discord-journal.js", cwd: copy, env: shell(home), said: join(realpathSync(copy), "bin", "discord-journal.js") });
  });

  describe("in a project that installed the tarball", () => {
    let project;
    let global;
    before(() => {
      // The connector's shape: a monorepo whose packages/discord depends
      // on it; two more workspaces, each a directory of its own to type in.
      project = join(work, "stack");
      writeFileSync(
        join((mkdirSync(project), project), "package.json"),
        JSON.stringify({ name: "stack", private: true, workspaces: ["packages/*"] }),
      );
      for (const name of ["discord", "ops", "yarn"]) {
        mkdirSync(join(project, "packages", name), { recursive: true });
        const deps = name === "discord" ? { dependencies: { "discord-journal": `file:${tarball}` } } : {};
        writeFileSync(
          join(project, "packages", name, "package.json"),
          JSON.stringify({ name: `@stack/${name}`, version: "0.0.0", private: true, ...deps }),
        );
      }
      install([], project);
      global = join(work, "global");
      install(["--global", "--prefix", global, tarball], work);
    });

    test("npx --no-install discord-journal at its root", () => {
      walk({ type: "npx --no-install discord-journal", cwd: project, env: shell(home), said: "npx --no-install discord-journal" });
    });

    test("npx discord-journal in its workspace, packages/discord", () => {
      const cwd = join(project, "packages", "discord");
      walk({ type: "npx discord-journal", cwd, env: shell(home), said: "npx --no-install discord-journal" });
    });

    test("yarn discord-journal (yarn classic) in a workspace", (t) => {
      const tools = join(work, "yarn");
      mkdirSync(tools);
      const r = spawnSync(
        "npm",
        ["install", "--prefer-offline", "--no-audit", "--no-fund", "--cache", cache, "--prefix", tools, "yarn@1.22.22"],
        { env: clean, encoding: "utf8", timeout: 120_000 },
      );
      if (r.status !== 0) {
        t.skip(`yarn classic could not be had from the registry: ${r.stderr.trim().split("\n").at(-1)}`);
        return;
      }
      const env = shell(home, [join(tools, "node_modules", ".bin")]);
      // yarn runs what the project's node_modules/.bin holds, whoever installed it.
      walk({ type: "yarn discord-journal", cwd: join(project, "packages", "yarn"), env, said: "yarn discord-journal" });
    });

    test(
      "run as root on a service user's journal: the name typed, though the command becomes that user in the journal's directory",
      rootOnly,
      () => {
        // A crashed binding of nobody's, its parents open to all.
        const top = scratch();
        chmodSync(top, 0o755);
        const made = typed(`npx --no-install discord-journal demo ${join(top, "discord", "alpha")}`, project, shell(home));
        assert.equal(made.status, 0, made.stderr);
        chmodSync(join(top, "discord"), 0o755);
        spawnSync("chown", ["-R", "nobody", join(top, "discord", "alpha")]);
        const said = typed(`npx --no-install discord-journal status ${join(top, "discord", "alpha")}`, project, shell(home));
        assert.match(said.stderr, /acting as nobody/);
        const [unlock] = quoted(said.stdout, /^next: /);
        assert.equal(unlock, `npx --no-install discord-journal unlock ${join(realpathSync(top), "discord", "alpha")}`, said.stdout);
        const r = typed(unlock, project, shell(home));
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /run\.lock cleared/);
      },
    );

    test("a global install (npm install -g of the tarball): the bare name, also when npx runs it in the project", () => {
      const env = shell(home, [join(global, "bin")]);
      walk({ type: "discord-journal", cwd: scratch(), env, said: "discord-journal" });
      // npx's own node_modules/.bin comes first on its child's PATH; the
      // operator's own discord-journal is still theirs.
      walk({ type: "npx --no-install discord-journal", cwd: join(project, "packages", "ops"), env, said: "discord-journal" });
    });
  });

  test("pnpm exec discord-journal in a project that added the tarball with pnpm", (t) => {
    const project = join(work, "pnpm-host");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "pnpm-host", version: "0.0.0", private: true }));
    const pnpm = join(root, "node_modules", ".bin", "pnpm");
    // Its store as the machine has it (where commander already is); a
    // store without it and no registry to fetch it from is said, not failed.
    const added = spawnSync(pnpm, ["add", `file:${tarball}`, "--prefer-offline", "--config.confirmModulesPurge=false"], {
      cwd: project,
      env: clean,
      encoding: "utf8",
      timeout: 300_000,
    });
    if (added.status !== 0 && /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ERR_PNPM_(META_)?FETCH/.test(added.stdout + added.stderr)) {
      t.skip(`pnpm could not fetch commander (no registry, and not in its store)`);
      return;
    }
    assert.equal(added.status, 0, `pnpm add: ${added.stdout}\n${added.stderr}`);
    // The operator's PATH holds pnpm (a link to the package's own).
    const tools = join(work, "pnpm-bin");
    mkdirSync(tools);
    symlinkSync(realpathSync(pnpm), join(tools, "pnpm"));
    walk({ type: "pnpm exec discord-journal", cwd: project, env: shell(home, [tools]), said: "pnpm exec discord-journal" });
  });
});
