#!/usr/bin/env node
// discord-journal-build (#11): the prebuilt binary if it loads here, else a
// build from source with the machine's Rust toolchain, else a refusal that
// names the platform, what was looked for and what to install. It needs
// nothing but Node and, for a source build, cargo: no devDependency (a
// production install omits them).
//
// It is the package's `prepare` script, so it runs where the package is a
// checkout: a fresh clone's `npm install`, a workspace package, a git
// dependency. It is no install script on purpose: pnpm (strictDepBuilds)
// fails an install whose dependency has an unapproved install script, and
// npm 12 does not run one, so the prebuilt binary must load without any
// script. Where none fits (an architecture other than x64 and arm64), run
// it by hand: `npx discord-journal-build`.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { libcOfNode } = require("../libc.js");

const root = path.join(__dirname, "..");
const say = (line) => process.stderr.write(`discord-journal: ${line}\n`);

// Whether index.js loads a binary here, asked of a fresh process so that a
// binary built below is judged as a consumer's process would load it.
function loads() {
  const probe = `try { require(${JSON.stringify(root)}) } catch (e) { process.stderr.write(String(e.message)); process.exit(1) }`;
  const r = spawnSync(process.execPath, ["-e", probe], { encoding: "utf8" });
  return { ok: r.status === 0, why: (r.stderr || "").trim() };
}

// glibc or musl, for the file's name: the C library this Node runs on, as
// the loader tells it (glibc where it cannot tell, as the loader then tries
// glibc's build first).
function libc() {
  return libcOfNode() ?? "gnu";
}

function main() {
  const first = loads();
  if (first.ok) return 0;
  const cLib = process.platform === "linux" ? libc() : undefined;
  const where = `${process.platform}-${process.arch}${cLib ? `-${cLib}` : ""}`;
  // The loader's refusal lists each file it tried, indented, with its error.
  const tried = first.why.split("\n").filter((l) => l.startsWith("  "));
  const lookedFor = `looked for a prebuilt binary that loads on ${where}:${tried.length ? `\n${tried.join("\n")}` : ` ${first.why}`}`;
  if (process.platform !== "linux" && process.platform !== "darwin") {
    say(`${lookedFor}\nit runs on Linux and macOS only (its lock needs /proc's process identity, as journal.mjs's does)`);
    return 1;
  }
  if (!fs.existsSync(path.join(root, "Cargo.toml"))) {
    say(`${lookedFor}\nand this copy of the package has no Rust sources to build one from`);
    return 1;
  }
  const cargo = process.env.CARGO || "cargo";
  const probe = spawnSync(cargo, ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    const msrv = /^rust-version\s*=\s*"([^"]+)"/m.exec(fs.readFileSync(path.join(root, "Cargo.toml"), "utf8"))?.[1];
    const rust = `Install Rust ${msrv ?? ""} or later (https://rustup.rs), then run \`npx discord-journal-build\``;
    // A checkout (a workspace package, a git dependency) carries no binary
    // at all: only the packed tarball does (#37: saying the platform is
    // covered, on that very platform, explained nothing).
    const carried = fs.readdirSync(root).some((f) => /^discord-journal\..+\.node$/.test(f));
    say(
      carried
        ? `${lookedFor}\nno prebuilt binary fits, and no Rust toolchain was found to build one (\`${cargo}\` is not on PATH).\n` +
            `${rust}; prebuilt binaries cover linux-x64 and linux-arm64 (glibc 2.17 or later, or musl) and darwin-x64 and darwin-arm64 (macOS 11 or later).`
        : `${lookedFor}\nthis copy of the package is a checkout (a workspace package, a git dependency, a clone), which carries no prebuilt binary: only the packed tarball does, and no Rust toolchain was found to build one (\`${cargo}\` is not on PATH).\n` +
            `${rust}, or depend on the packed tarball (\`npm run pack:release\` in a clone makes it), which needs no Rust.`,
    );
    return 1;
  }

  // Inside node_modules the build's intermediate files go to a temporary
  // directory that is removed afterwards (hundreds of MB a host should not
  // keep); in a checkout or a workspace package, to its own target/ (or
  // CARGO_TARGET_DIR), where the next build reuses them.
  const inNodeModules = fs.realpathSync(root).split(path.sep).includes("node_modules");
  const env = { ...process.env };
  let scratch;
  if (!env.CARGO_TARGET_DIR && inNodeModules) {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "discord-journal-build-"));
    env.CARGO_TARGET_DIR = scratch;
  }
  say(`no prebuilt binary loads on ${where}: building from source with ${probe.stdout.trim()} (a minute or two)`);
  try {
    const r = spawnSync(cargo, ["build", "--release", "--locked", "--lib", "--message-format=json-render-diagnostics"], {
      cwd: root,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.error || r.status !== 0) {
      say(`cargo build failed (${r.error ? r.error.message : `exit ${r.status}`}); see its output above`);
      return 1;
    }
    let lib;
    for (const line of r.stdout.split("\n")) {
      if (!line.startsWith("{")) continue;
      const m = JSON.parse(line);
      if (m.reason === "compiler-artifact" && m.target?.name === "discord_journal") {
        lib = m.filenames.find((f) => f.endsWith(".so") || f.endsWith(".dylib")) ?? lib;
      }
    }
    if (!lib) {
      say("cargo build reported no libdiscord_journal library");
      return 1;
    }
    const platform = process.platform === "darwin" ? `darwin-${process.arch}` : `linux-${process.arch}-${cLib}`;
    const dest = path.join(root, `discord-journal.${platform}.node`);
    fs.copyFileSync(lib, dest);
    const after = loads();
    if (!after.ok) {
      say(`built ${path.basename(dest)}, but it does not load:\n${after.why}`);
      return 1;
    }
    say(`built ${path.basename(dest)}`);
    return 0;
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

process.exitCode = main();
