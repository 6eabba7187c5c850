// Shared set-up for the suite. The module under test is the one named by
// JOURNAL_MODULE (a path), or this package; the same tests run against the
// reference journal.mjs, and those about what only the addon has skip there.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { after } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
export const modulePath = process.env.JOURNAL_MODULE ? resolve(process.env.JOURNAL_MODULE) : join(root, "index.js");

async function load(path) {
  if (path.endsWith(".mjs")) return import(pathToFileURL(path).href);
  return createRequire(import.meta.url)(path);
}

export const M = await load(modulePath);
/** Whether the module under test is this addon (it exports DiscordError). */
export const isAddon = typeof M.DiscordError === "function";
export const addonOnly = isAddon ? {} : { skip: "the reference does not export DiscordError" };

/**
 * For a test of a TypeError's words: the addon words those it raises as V8
 * does (Node, Deno); under Bun, JavaScriptCore words journal.mjs's its own
 * way (docs/development.md, "Platforms and requirements").
 */
export const onV8 = process.versions.bun ? { skip: "Bun's engine words a TypeError its own way; the addon's are V8's" } : {};

/**
 * This runtime's command line for a script file or for ESM code, for a
 * program that starts it in turn (setpriv, script, strace). Deno turns
 * Node's command line into its own (`run -A`, `eval`) only where it spawns
 * it directly.
 */
export const runFile = (file, ...args) =>
  process.versions.deno ? [process.execPath, "run", "-A", file, ...args] : [process.execPath, file, ...args];
export const runModule = (code) =>
  process.versions.deno ? [process.execPath, "eval", code] : [process.execPath, "--input-type=module", "-e", code];
/** `runFile(file)` as a shell's words, for a script that execs it (a shim on PATH for pasted advice). */
export const shellFile = (file) =>
  runFile(file)
    .map((a) => JSON.stringify(a))
    .join(" ");

/** The package's command, and a run of it as an operator's shell would start it. */
export const bin = join(root, "bin", "discord-journal.js");
export const cli = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", timeout: 60_000 });
/** A run with `--json`: its exit code, its output parsed, its stderr. */
export const json = (...args) => {
  const r = cli(...args, "--json");
  return { status: r.status, out: JSON.parse(r.stdout), stderr: r.stderr };
};

/** Node itself, not Bun or Deno, for an assertion of Node's own behaviour. */
export const onNode = !process.versions.bun && !process.versions.deno;

export const GEN = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";
export const OTHER_GEN = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";

const made = [];
const clean = () => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
};
after(clean);
// Bun runs every file in one process, where this module's `after` is the
// first file's alone: what later files made goes as the process ends.
process.on("exit", clean);

// The command's advice names it as the operator runs it (#57): by name
// where a `discord-journal` is on PATH. The suite's children find this
// package's there, as an installed one would be; cli.test.mjs holds the
// other cases (a clone, a project) with a PATH of their own.
{
  const shim = mkdtempSync(join(tmpdir(), "discord-journal-path-"));
  // Removed as the process ends, not after a file's tests: Bun runs every
  // file in one process, and a later file's children still look here.
  // Deno runs each file in a worker of one process whose `exit` never
  // comes: there a file's `unload` is its end.
  const remove = () => rmSync(shim, { recursive: true, force: true });
  process.on("exit", remove);
  globalThis.addEventListener?.("unload", remove);
  // Another user's command (setpriv, as nobody) finds it too.
  chmodSync(shim, 0o755);
  writeFileSync(join(shim, "discord-journal"), `#!/bin/sh\nexec ${shellFile(bin)} "$@"\n`, {
    mode: 0o755,
  });
  process.env.PATH = `${shim}${delimiter}${process.env.PATH ?? ""}`;
}

/** A fresh binding directory `<tmp>/discord/alpha` with `turns/`, or bare. */
export function journal({ name = "alpha", bare = false } = {}) {
  const top = mkdtempSync(join(tmpdir(), "discord-journal-test-"));
  made.push(top);
  const dir = join(top, "discord", name);
  if (bare) return dir;
  M.ensureJournal(dir);
  return dir;
}

/** Asserts `f` throws a DiscordError with this message and exit code. */
export function refuses(f, message, exitCode = 1) {
  let thrown;
  try {
    f();
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown, `expected a refusal: ${message}`);
  assert.equal(thrown.name, "DiscordError");
  assert.equal(thrown.message, message);
  assert.equal(thrown.exitCode, exitCode);
  assert.ok(thrown instanceof Error);
  if (isAddon) assert.ok(thrown instanceof M.DiscordError);
  return thrown;
}

/** Asserts `f` throws an instance of `cls` (and `code`, when given). */
export function throwsClass(f, cls, code) {
  assert.throws(f, (e) => {
    assert.equal(e.constructor, cls, `expected ${cls.name}, got ${e.constructor.name}: ${e.message}`);
    if (code !== undefined) assert.equal(e.code, code);
    assert.notEqual(e.name, "DiscordError");
    return true;
  });
}

/** The permission bits of a path. */
export const mode = (p) => statSync(p).mode & 0o7777;
/** What a create with `want` gives under this process's umask. */
export function underUmask(want) {
  const u = process.umask();
  return want & ~u;
}

/** A pid that is not alive right now. */
export function deadPid() {
  for (let p = 4_194_303; p > 1000; p -= 7919) {
    try {
      process.kill(p, 0);
    } catch (e) {
      if (e.code === "ESRCH") return p;
    }
  }
  throw new Error("no dead pid found");
}

/** The binding `name` under `root`'s discord/, made with one inbound message; its directory. */
export function binding(root, name) {
  const d = join(root, "discord", name);
  M.ensureJournal(d);
  M.appendInbox(d, { id: `${name}-1`, at: "2026-12-01T00:00:00.000Z" });
  return d;
}

/** `dir` left as a crashed connector leaves it: run.lock with a dead pid's owner record of this boot. */
export function crashed(dir) {
  mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
  writeFileSync(
    join(dir, "run.lock", "owner.json"),
    JSON.stringify({ pid: deadPid(), start: "5", boot: M.bootId(), at: "2026-12-01T00:00:00.000Z" }) + "\n",
    { mode: 0o600 },
  );
  return dir;
}

/** A refusal message must never carry a host path. */
export function noHostPath(e, dir) {
  assert.ok(!e.message.includes(dir), `message names the host path: ${e.message}`);
  assert.ok(!e.message.includes(tmpdir()), `message names the temp dir: ${e.message}`);
}

/** A fresh temporary directory, removed after the file's tests. */
export function scratch(prefix = "discord-journal-test-") {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

/**
 * Another process that claims `dir`'s binding with this package and holds
 * it, alive, until it is killed; resolves once it has claimed.
 */
export async function liveOwner(dir) {
  const code = `require(${JSON.stringify(root)}).writePid(${JSON.stringify(dir)}, process.pid); console.log("held"); setInterval(() => {}, 1000)`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve) => child.stdout.once("data", resolve));
  return child;
}

/** Whether a user with no rights of its own can search every directory up to `p`. */
export function searchable(p) {
  for (let d = dirname(resolve(p)); ; d = dirname(d)) {
    if (!(statSync(d).mode & 0o001)) return false;
    if (dirname(d) === d) return true;
  }
}

let forOthersMade = null;
/**
 * This package as another user (setpriv) can load it (#36): the checkout
 * itself where every directory up to it lets others search it; else a copy
 * of what the addon and its command load, in a directory of its own under
 * the system's temporary directory (0755), removed after the file's tests.
 * A clone under a 0700 directory (what `mktemp -d` makes, and /root) is
 * then tested as one anywhere else.
 */
export function forOthers() {
  if (searchable(join(root, "index.js"))) return root;
  if (forOthersMade) return forOthersMade;
  const top = mkdtempSync(join(tmpdir(), "discord-journal-others-"));
  made.push(top);
  chmodSync(top, 0o755);
  const copy = join(top, "discord-journal");
  const names = [
    "index.js",
    "binding.js",
    "libc.js",
    "internal.js",
    "entry.js",
    "package.json",
    "bin",
    "cli",
    ...readdirSync(root).filter((n) => n.endsWith(".node")),
  ];
  for (const n of names) cpSync(join(root, n), join(copy, n), { recursive: true, dereference: true });
  cpSync(join(root, "node_modules", "commander"), join(copy, "node_modules", "commander"), { recursive: true, dereference: true });
  // Readable and searchable by all, as an installed package is.
  openToAll(copy);
  forOthersMade = copy;
  return copy;
}

/** Makes `dir` and everything below it readable (and searchable) by all. */
function openToAll(dir) {
  chmodSync(dir, 0o755);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) openToAll(p);
    else chmodSync(p, 0o644);
  }
}

/** The user a root test gives journals to, so that the command acts as their owner. */
export const NOBODY = 65534;

const onPath = (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;
/**
 * The words the command prints, from a root shell here, to run a pasted
 * command as nobody (#57): runuser, else setpriv, else sudo, whichever is
 * there first; as a regular expression's source.
 */
export const AS_NOBODY = onPath("runuser")
  ? "runuser -u nobody -- "
  : onPath("setpriv")
    ? "setpriv --reuid=65534 --regid=\\d+ --clear-groups -- "
    : "sudo -u (nobody|'#65534') ";

/**
 * Run as root, with nobody in the user database, and on a runtime that can
 * set a process's groups: the command then acts as a journal's owner (#33),
 * which a test of that needs. Deno cannot set groups, and refuses.
 */
export const actsAsOwner =
  process.getuid?.() !== 0
    ? { skip: "needs root: the command acts as the journal's owner only when run as root" }
    : spawnSync("getent", ["passwd", String(NOBODY)]).status !== 0
      ? { skip: "needs the user nobody (uid 65534) in the user database" }
      : process.versions.deno
        ? { skip: "Deno cannot set a process's groups: the command refuses to act as the owner" }
        : {};

/** Run as root on Linux, a test may mount a small tmpfs of its own (`withTmpfs`). */
export const mountsTmpfs = process.getuid?.() === 0 && process.platform === "linux" ? {} : { skip: "needs root to mount a tmpfs" };

/**
 * Runs `f(mnt)` on a small tmpfs (256 KiB, 40 inodes) mounted for it, a
 * real file system to make full or read-only, and unmounts it after; the
 * test `t` skips, saying why, where it cannot be mounted.
 */
export function withTmpfs(t, f) {
  const mnt = scratch();
  const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k,nr_inodes=40", "tmpfs", mnt]);
  if (m.status !== 0) {
    t.skip(`cannot mount a tmpfs here: ${String(m.stderr).trim()}`);
    return;
  }
  try {
    f(mnt);
  } finally {
    spawnSync("umount", [mnt]);
  }
}

/** A free TCP port on 127.0.0.1. */
export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** node_exporter on 127.0.0.1:`port`, its textfile collector alone, reading `dir`. */
export const textfileExporter = (dir, port) =>
  spawn(
    "prometheus-node-exporter",
    [
      `--web.listen-address=127.0.0.1:${port}`,
      "--collector.disable-defaults",
      "--collector.textfile",
      `--collector.textfile.directory=${dir}`,
    ],
    { stdio: "ignore" },
  );
