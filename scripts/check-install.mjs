#!/usr/bin/env node
// The package as a host installs it (#11), each in a throwaway project:
//
//   workspace  a monorepo shaped like the connector's (root `workspaces`,
//              packages/discord with its own errors.mjs) holding a checkout
//              of this package without a binary: `npm ci --omit=dev` builds
//              it from source with the machine's Rust toolchain
//   tarball    the same monorepo depending on the packed tarball, installed
//              with `npm ci --omit=dev` where no cargo or rustc is on PATH
//   pnpm       a fresh project that adds the tarball with pnpm (which runs
//              no dependency install script), no Rust on PATH
//
// In each: the imports resolve, a real disk fault (a directory where a file
// is expected) reaches the host as the addon's DiscordError, both from the
// journal and through the host's own quietFs, and `instanceof DiscordError`
// holds across the package; `require`, named ESM imports and
// `discord-journal demo` work. The binary to pack must be built first
// (`npm run build:dist`).
//
//   node scripts/check-install.mjs [--only workspace,tarball,pnpm] [--keep]
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { withoutRust } from "./without-rust.mjs";

const { values: opts } = parseArgs({ options: { only: { type: "string" }, keep: { type: "boolean" } } });
const wanted = new Set((opts.only ?? "workspace,tarball,pnpm").split(","));
const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const pnpmBin = join(root, "node_modules", ".bin", "pnpm");
const work = mkdtempSync(join(tmpdir(), "discord-journal-install-"));
const results = [];

function run(cmd, args, { cwd, env = process.env, quiet = false } = {}) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  }
  if (!quiet && r.stderr.trim()) process.stdout.write(r.stderr.replace(/^/gm, "    "));
  return r.stdout;
}

function timed(name, f) {
  if (!wanted.has(name)) return;
  const t = Date.now();
  try {
    const detail = f();
    const s = ((Date.now() - t) / 1000).toFixed(1);
    results.push({ name, ok: true, s });
    console.log(`ok ${name} (${s} s)${detail ? `: ${detail}` : ""}`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`not ok ${name}: ${e.stack}`);
  }
}

const json = (file, value) => writeFileSync(file, JSON.stringify(value, null, 2) + "\n");

// The host: the shape of the connector's stack/, with packages/discord's
// errors.mjs re-exporting the addon's class (bound locally, since quietFs
// constructs it), a module of its own that reads with quietRead, a module
// that imports journal functions, and a check that uses all three.
function host(dir, dependency) {
  mkdirSync(join(dir, "packages", "discord", "src"), { recursive: true });
  json(join(dir, "package.json"), { name: "stack", private: true, workspaces: ["packages/*"] });
  json(join(dir, "packages", "discord", "package.json"), {
    name: "@stack/discord",
    version: "0.0.0",
    private: true,
    type: "module",
    dependencies: { "discord-journal": dependency },
  });
  const src = join(dir, "packages", "discord", "src");
  writeFileSync(
    join(src, "errors.mjs"),
    `import { DiscordError } from "discord-journal";
export { DiscordError };

export const BINDING_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function quietFs(err, label, verb) {
  const code = typeof err?.code === "string" ? err.code : "unknown error";
  return new DiscordError(\`could not \${verb} \${label} (\${code})\`, 1);
}

export function quietRead(err, label) {
  return quietFs(err, label, "read");
}
`,
  );
  writeFileSync(
    join(src, "binding.mjs"),
    `import { readFileSync } from "node:fs";
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
  );
  writeFileSync(
    join(src, "inbound.mjs"),
    `import { appendInbox, ensureJournal, readInboxIds } from "discord-journal";

export function accept(dir, id) {
  ensureJournal(dir);
  if (readInboxIds(dir).has(id)) return false;
  appendInbox(dir, { id, at: new Date().toISOString() });
  return true;
}
`,
  );
  writeFileSync(
    join(src, "check.mjs"),
    `import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as journal from "discord-journal";
import { BRAKE_EXIT, readInboxIds } from "discord-journal";
import { readBinding } from "./binding.mjs";
import { DiscordError } from "./errors.mjs";
import { accept } from "./inbound.mjs";

const top = mkdtempSync(join(tmpdir(), "host-"));
try {
  const dir = join(top, "discord", "alpha");
  assert.equal(accept(dir, "m1"), true);
  assert.equal(accept(dir, "m1"), false);
  assert.deepEqual([...readInboxIds(dir)], ["m1"]);
  assert.equal(BRAKE_EXIT, 3);
  for (const name of ["writePid", "recover", "readOutbox", "journalLabel", "DiscordError"]) assert.ok(name in journal, name);

  // one class across the package: the host's re-export, ESM and require
  const required = createRequire(import.meta.url)("discord-journal");
  assert.equal(DiscordError, journal.DiscordError);
  assert.equal(DiscordError, required.DiscordError);

  // a real disk fault in the journal: a directory where admissions.jsonl goes
  mkdirSync(join(dir, "admissions.jsonl"));
  assert.throws(() => journal.appendAdmission(dir, { id: "t1", at: "2026-01-01T00:00:00.000Z" }), (e) => {
    assert.ok(e instanceof DiscordError, String(e));
    assert.match(e.message, /admissions\\.jsonl \\(EISDIR\\)/);
    assert.equal(e.exitCode, 1);
    return true;
  });

  // and one through the host's own quietFs: a directory where binding.json goes
  mkdirSync(join(dir, "binding.json"));
  assert.throws(() => readBinding(dir), (e) => {
    assert.ok(e instanceof DiscordError, String(e));
    assert.ok(e instanceof journal.DiscordError);
    assert.equal(e.message, "could not read binding.json (EISDIR)");
    return true;
  });
  console.log("host check passed");
} finally {
  rmSync(top, { recursive: true, force: true });
}
`,
  );
}

// What every consumer checks after installing: the host's check, a
// CommonJS require, and the demo through the package's bin.
function consumerChecks(dir, env, { monorepo = true } = {}) {
  if (monorepo) {
    const out = run(process.execPath, [join(dir, "packages", "discord", "src", "check.mjs")], { cwd: dir, env });
    if (!out.includes("host check passed")) throw new Error(`host check: ${out}`);
  }
  const cjs = run(process.execPath, ["-e", "const J = require('discord-journal'); console.log(typeof J.readInboxIds, J.BRAKE_EXIT)"], {
    cwd: dir,
    env,
  });
  if (cjs.trim() !== "function 3") throw new Error(`require: ${cjs}`);
  const esm = run(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      "import { writePid, DiscordError } from 'discord-journal'; console.log(typeof writePid, DiscordError.name)",
    ],
    { cwd: dir, env },
  );
  if (esm.trim() !== "function DiscordError") throw new Error(`ESM import: ${esm}`);
  const demo = run("npx", ["--no-install", "discord-journal", "demo", join(dir, "demo-journal")], { cwd: dir, env, quiet: true });
  if (!/inbox\.jsonl/.test(demo)) throw new Error(`demo printed no status:\n${demo}`);
}

/** The binaries a packed package carries (scripts/build-dist.sh). */
const BINARIES = createRequire(import.meta.url)("./shipped.js").shipped();

let tarball;
function pack() {
  if (tarball) return tarball;
  for (const f of BINARIES) if (!existsSync(join(root, f))) throw new Error(`no ${f} to pack: run \`npm run build:dist\` first`);
  const out = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], { cwd: root, quiet: true }));
  const files = out[0].files.map((f) => f.path);
  for (const f of [
    ...BINARIES,
    "index.js",
    "binding.js",
    "libc.js",
    "internal.js",
    "entry.js",
    "index.d.ts",
    "scripts/ensure-binary.js",
    "LICENSE",
    "Cargo.toml",
    "Cargo.lock",
    "src/lib.rs",
    "bin/discord-journal.js",
  ]) {
    if (!files.includes(f)) throw new Error(`the tarball lacks ${f}`);
  }
  for (const f of files)
    if (/^(__test__|bench|fuzz|reliability|parity|target|node_modules)\//.test(f)) throw new Error(`the tarball carries ${f}`);
  tarball = join(work, out[0].filename);
  console.log(`# packed ${out[0].filename}: ${files.length} files, ${out[0].size} bytes`);
  return tarball;
}

try {
  timed("workspace", () => {
    // A checkout of the package (its tracked and new files, no binary, no
    // node_modules) as packages/discord-journal of the host. The build's
    // intermediate files go to this clone's target/ (or CARGO_TARGET_DIR),
    // where a clone's own `npm install` built them: only the crate is
    // compiled again.
    const dir = join(work, "workspace");
    host(dir, pkg.version);
    const copy = join(dir, "packages", "discord-journal");
    const list = run("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: root, quiet: true })
      .split("\0")
      .filter(Boolean);
    for (const f of list) {
      if (!existsSync(join(root, f))) continue;
      mkdirSync(dirname(join(copy, f)), { recursive: true });
      cpSync(join(root, f), join(copy, f));
    }
    if (readdirSync(copy).some((f) => f.endsWith(".node"))) throw new Error("the checkout copy carries a binary");
    const env = { ...process.env, CARGO_TARGET_DIR: process.env.CARGO_TARGET_DIR ?? join(root, "target") };
    run("npm", ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: dir, env, quiet: true });
    run("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--foreground-scripts"], { cwd: dir, env });
    if (!existsSync(join(copy, "discord-journal.linux-x64-gnu.node"))) throw new Error("npm ci built no binary");
    consumerChecks(dir, env);
    return "npm ci --omit=dev built the binary from source";
  });

  timed("tarball", () => {
    const env = withoutRust();
    const dir = join(work, "tarball");
    host(dir, `file:${pack()}`);
    run("npm", ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: dir, env, quiet: true });
    run("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--foreground-scripts"], { cwd: dir, env });
    const installed = join(dir, "node_modules", "discord-journal");
    if (existsSync(join(installed, "target"))) throw new Error("the install built from source");
    consumerChecks(dir, env);
    // verify, from the installed package, against the specification's
    // journal.mjs in the host's tree (where the specification sits beside
    // this checkout, as in CI).
    const spec = join(root, "..", "shared", "spec", "reference", "stack");
    if (existsSync(spec)) {
      cpSync(spec, join(dir, "reference-stack"), { recursive: true });
      const t = Date.now();
      const out = run(
        "npx",
        ["--no-install", "discord-journal", "verify", "--reference", "reference-stack/packages/discord/src/journal.mjs"],
        {
          cwd: dir,
          env,
          quiet: true,
        },
      );
      if (!/: 0 differences/.test(out)) throw new Error(`verify: ${out}`);
      return `npm ci --omit=dev, no cargo on PATH, the prebuilt binary; verify against the specification: 0 differences in ${Math.round((Date.now() - t) / 1000)} s`;
    }
    return "npm ci --omit=dev, no cargo on PATH, the prebuilt binary";
  });

  timed("pnpm", () => {
    const env = withoutRust();
    const dir = join(work, "pnpm");
    mkdirSync(dir);
    json(join(dir, "package.json"), { name: "pnpm-host", version: "0.0.0", private: true, type: "module" });
    run(pnpmBin, ["add", `file:${pack()}`, "--config.confirmModulesPurge=false"], { cwd: dir, env, quiet: true });
    consumerChecks(dir, env, { monorepo: false });
    return "pnpm add of the tarball (no install script run), no cargo on PATH";
  });
} finally {
  if (!opts.keep) rmSync(work, { recursive: true, force: true });
  else console.log(`# kept ${work}`);
}

const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
