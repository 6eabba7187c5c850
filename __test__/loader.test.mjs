// The loader (binding.js) and the build-if-needed script (#11): what a host
// sees when the binary is elsewhere, missing, or cannot be built. Each case
// runs in a child process, on a copy of the package's JavaScript.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { addonOnly } from "./helpers.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
// The binary this process loaded (helpers.mjs loads the package), and the
// names the loader tries here: the build for the C library Node runs on.
// (Linux: macOS has no /proc, and its binary has one name.)
const maps = process.platform === "linux" ? readFileSync("/proc/self/maps", "utf8") : "";
const loaded = maps.match(/\S*discord-journal\.[\w-]+\.node/)?.[0];
const libc = loaded?.match(/-(gnu|musl)\.node$/)?.[1] ?? "gnu";
const own =
  process.platform === "darwin" ? `discord-journal.darwin-${process.arch}.node` : `discord-journal.linux-${process.arch}-${libc}.node`;
const binary = process.env.NAPI_RS_NATIVE_LIBRARY_PATH ?? loaded ?? join(root, own);
const ownPattern = own.replaceAll(".", "\\.");
const other = `discord-journal.linux-${process.arch}-${libc === "gnu" ? "musl" : "gnu"}.node`;
const made = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A copy of the package's JavaScript (and Cargo.toml), without a binary. */
function bare() {
  const dir = mkdtempSync(join(tmpdir(), "discord-journal-loader-"));
  made.push(dir);
  for (const f of ["entry.js", "index.js", "binding.js", "libc.js", "package.json", "Cargo.toml"])
    copyFileSync(join(root, f), join(dir, f));
  return dir;
}

function node(args, env = {}) {
  return spawnSync(process.execPath, args, { encoding: "utf8", env: { ...process.env, ...env } });
}

describe("loader", addonOnly, () => {
  test("NAPI_RS_NATIVE_LIBRARY_PATH loads the binary from another path", () => {
    const dir = bare();
    const elsewhere = join(dir, "elsewhere.node");
    copyFileSync(binary, elsewhere);
    const r = node(["-e", `console.log(typeof require(${JSON.stringify(dir)}).readInboxIds)`], { NAPI_RS_NATIVE_LIBRARY_PATH: elsewhere });
    assert.equal(r.stderr, "");
    assert.equal(r.stdout.trim(), "function");
  });

  test("a failure names the platform, each file tried and its error", () => {
    const dir = bare();
    const r = node(["-e", `require(${JSON.stringify(dir)})`]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, new RegExp(`no native binding loads on ${process.platform}-${process.arch}`));
    assert.match(r.stderr, new RegExp(`${ownPattern}: Cannot find module`));
    // the other C library's build is not tried (it could load through shims)
    assert.ok(!r.stderr.includes(other), r.stderr);
    assert.match(r.stderr, /install Rust/);
    const wrong = node(["-e", `require(${JSON.stringify(dir)})`], { NAPI_RS_NATIVE_LIBRARY_PATH: join(dir, "missing.node") });
    assert.match(wrong.stderr, /Tried:\n {2}\S*missing\.node: Cannot find module/);
  });

  test("a binary that cannot be loaded is reported with the dynamic loader's error", () => {
    const dir = bare();
    copyFileSync(join(root, "index.js"), join(dir, own));
    const r = node(["-e", `require(${JSON.stringify(dir)})`]);
    // glibc's words, then musl's
    assert.match(r.stderr, new RegExp(`${ownPattern}: .*(invalid ELF header|too short|Exec format error)`));
  });

  // No Windows, FreeBSD, macOS or RISC-V machine runs here: the platform is
  // what process.platform and process.arch say, set before the loader runs.
  const on = (platform, arch) =>
    `Object.defineProperty(process, "platform", { value: ${JSON.stringify(platform)} });` +
    `Object.defineProperty(process, "arch", { value: ${JSON.stringify(arch)} });`;
  for (const [platform, arch, tried, says] of [
    [
      "win32",
      "x64",
      / none \(no binary is known for this platform\)/,
      /It does not run on win32: its lock needs \/proc's process identity/,
    ],
    ["freebsd", "x64", / none \(no binary is known for this platform\)/, /It does not run on freebsd/],
    [
      "linux",
      "riscv64",
      /discord-journal\.linux-riscv64-gnu\.node: Cannot find module/,
      /Elsewhere on Linux or macOS, build one from source: .*npx discord-journal-build/,
    ],
    ["darwin", "arm64", /discord-journal\.darwin-arm64\.node: Cannot find module/, /darwin-x64 and darwin-arm64 \(macOS 11 or later\)/],
  ]) {
    test(`on ${platform}-${arch} with no binary for it, loading says which platform, what was tried and what to do`, () => {
      const r = node(["-e", `${on(platform, arch)} require(${JSON.stringify(bare())})`]);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, new RegExp(`discord-journal: no native binding loads on ${platform}-${arch}\\. Tried:`));
      assert.match(r.stderr, tried);
      assert.match(r.stderr, says);
      assert.match(r.stderr, /prebuilt for linux-x64 and linux-arm64/);
    });
  }

  // #53: a tarball packed for Linux alone, installed on a Mac anyway
  // (npm refuses it by its os, a --force or another installer may not).
  test("on a platform the copy does not carry, loading names the binary missing, what the copy carries and the route to a tarball that does", () => {
    const dir = bare();
    copyFileSync(binary, join(dir, own));
    const r = node(["-e", `${on("darwin", "arm64")} require(${JSON.stringify(dir)})`]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /discord-journal\.darwin-arm64\.node: Cannot find module/);
    assert.match(
      r.stderr,
      new RegExp(
        `This copy of the package carries ${ownPattern}\\. A tarball from \`npm run pack:release\` in a clone of the package carries all six binaries`,
      ),
    );
  });

  const trappable = process.versions.deno ? { skip: "Deno's process.report cannot be redefined to trap a read" } : {};
  test("loading reads no process.report (it can wait on reverse DNS)", trappable, () => {
    const trap = `Object.defineProperty(process, "report", { get() { throw new Error("process.report read") } });`;
    const r = node(["-e", `${trap} console.log(typeof require(${JSON.stringify(root)}).writePid)`]);
    assert.equal(r.stderr, "");
    assert.equal(r.stdout.trim(), "function");
  });
});

describe("entry", addonOnly, () => {
  test("the package's entry gives every export of index.js, the same values, to require and import", async () => {
    const index = createRequire(import.meta.url)(join(root, "index.js"));
    const required = createRequire(import.meta.url)("discord-journal");
    const imported = await import("discord-journal");
    assert.deepEqual(Object.keys(required), Object.keys(index));
    // Node 23 and later add "module.exports" beside "default" to a CommonJS module's namespace.
    const named = Object.keys(imported).filter((k) => k !== "default" && k !== "module.exports");
    assert.deepEqual(named.sort(), Object.keys(index).sort());
    for (const k of Object.keys(index)) {
      assert.equal(required[k], index[k], k);
      assert.equal(imported[k], index[k], k);
    }
  });
});

describe("discord-journal-build", addonOnly, () => {
  test("where the binary loads, it does nothing", () => {
    const r = node([join(root, "scripts", "ensure-binary.js")]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, "");
  });

  test("without a binary or a Rust toolchain, it says what it looked for and what to install", () => {
    const dir = bare();
    const scripts = join(dir, "scripts");
    spawnSync("mkdir", [scripts]);
    copyFileSync(join(root, "scripts", "ensure-binary.js"), join(scripts, "ensure-binary.js"));
    const path = [dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter);
    const r = node([join(scripts, "ensure-binary.js")], { PATH: path, CARGO: join(dir, "no-cargo") });
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`loads on ${process.platform}-${process.arch}-(gnu|musl)`));
    assert.match(r.stderr, new RegExp(`${ownPattern}: Cannot find module`));
    assert.match(r.stderr, /no Rust toolchain was found/);
    assert.match(r.stderr, /Install Rust 1\.\d+ or later/);
    // A checkout carries no binary: it says so, and names the tarball (#37).
    assert.match(r.stderr, /this copy of the package is a checkout .* which carries no prebuilt binary: only the packed tarball does/);
    assert.match(r.stderr, /or depend on the packed tarball/);
  });
});

describe("npm pack", addonOnly, () => {
  /** A copy of the package's JavaScript with the packing scripts, holding `binaries`. */
  function checkout(binaries = []) {
    const dir = bare();
    const scripts = join(dir, "scripts");
    spawnSync("mkdir", [scripts]);
    for (const f of ["prepack.js", "pack-manifest.js", "shipped.js", "check-binary.sh", "check-macho.mjs"])
      copyFileSync(join(root, "scripts", f), join(scripts, f));
    for (const [name, from] of binaries) copyFileSync(from, join(dir, name));
    return dir;
  }
  const prepack = (dir, command) => node([join(dir, "scripts", "prepack.js")], { npm_command: command });

  test("refuses without every shipped binary, naming those missing and the command that makes a release tarball", () => {
    const dir = checkout([[own, binary]]);
    for (const command of ["pack", "publish", undefined]) {
      const r = prepack(dir, command);
      assert.equal(r.status, 1, `${command}: ${r.stderr}`);
      assert.match(r.stderr, /^discord-journal: refusing to pack: a tarball must carry all 6 binaries, and 5 are missing: /);
      assert.match(r.stderr, /discord-journal\.darwin-arm64\.node/);
      assert.match(r.stderr, /Run `npm run pack:release`/);
    }
  });

  // #53: a host that deploys to Linux alone packs Linux's four.
  test("a set named by pack:release (DISCORD_JOURNAL_PACK) is held to its own binaries; an unknown set is refused", () => {
    const dir = checkout([[own, binary]]);
    const r = node([join(dir, "scripts", "prepack.js")], { npm_command: "pack", DISCORD_JOURNAL_PACK: "linux" });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^discord-journal: refusing to pack: a tarball for linux must carry its 4 binaries, and 3 are missing: /);
    assert.ok(!r.stderr.includes("darwin"), r.stderr);
    assert.match(r.stderr, /Run `npm run pack:release -- linux`/);
    const odd = node([join(dir, "scripts", "prepack.js")], { npm_command: "pack", DISCORD_JOURNAL_PACK: "windows" });
    assert.equal(odd.status, 1);
    assert.match(odd.stderr, /no such platform set: "windows"\. Give all, linux, darwin, or platforms joined by commas: linux-x64-gnu, /);
    const listed = node([join(dir, "scripts", "shipped.js"), "darwin"]);
    assert.equal(listed.stdout, "darwin-x64 x86_64-apple-darwin\ndarwin-arm64 aarch64-apple-darwin\n");
    assert.equal(node([join(dir, "scripts", "shipped.js"), "linux-x64"]).status, 2);
  });

  test("the manifest of a set's tarball names what it carries: napi.targets, os and its binaries in files; put back byte for byte", () => {
    const dir = checkout();
    const manifest = join(dir, "package.json");
    const before = readFileSync(manifest, "utf8");
    const strip = `const { select } = require("./scripts/shipped.js"); require("./scripts/pack-manifest.js").strip(select("linux"))`;
    assert.equal(spawnSync(process.execPath, ["-e", strip], { cwd: dir, encoding: "utf8" }).status, 0);
    const packed = JSON.parse(readFileSync(manifest, "utf8"));
    assert.deepEqual(packed.os, ["linux"]);
    assert.deepEqual(
      packed.napi.targets,
      JSON.parse(before).napi.targets.filter((t) => t.includes("-linux-")),
    );
    assert.ok(!packed.files.includes("discord-journal.*.node"));
    assert.deepEqual(
      packed.files.filter((f) => f.endsWith(".node")),
      ["linux-x64-gnu", "linux-arm64-gnu", "linux-x64-musl", "linux-arm64-musl"].map((p) => `discord-journal.${p}.node`),
    );
    assert.equal(packed.scripts.prepare, undefined);
    assert.equal(node([join(dir, "scripts", "pack-manifest.js"), "restore"]).status, 0);
    assert.equal(readFileSync(manifest, "utf8"), before);
  });

  test("refuses a set whose binaries fail their check", () => {
    const index = join(root, "index.js");
    const dir = checkout(shippedNames().map((name) => [name, index]));
    const r = prepack(dir, "pack");
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /refusing to pack: a binary fails its check/);
    assert.match(r.stderr, /npm run pack:release/);
  });

  // #48: npm 11 listed a tarball's `prepare` on every install of it, under
  // a README that says the package runs no install script.
  test("the manifest packed has no prepare; postpack puts package.json back byte for byte, also after a pack that did not finish", () => {
    const dir = checkout();
    const manifest = join(dir, "package.json");
    const before = readFileSync(manifest, "utf8");
    const step = (name) => node([join(dir, "scripts", "pack-manifest.js"), name]);
    for (let pack = 0; pack < 2; pack++) {
      // The second strip follows one whose postpack never ran.
      assert.equal(step("strip").status, 0);
      const packed = JSON.parse(readFileSync(manifest, "utf8"));
      assert.equal(packed.scripts.prepare, undefined);
      const { prepare, ...others } = JSON.parse(before).scripts;
      assert.ok(prepare);
      assert.deepEqual(packed.scripts, others, "every other script kept");
      assert.equal(readFileSync(join(dir, ".package.json.unpacked"), "utf8"), before);
    }
    assert.equal(step("restore").status, 0);
    assert.equal(readFileSync(manifest, "utf8"), before);
    assert.equal(existsSync(join(dir, ".package.json.unpacked")), false);
    assert.equal(step("restore").status, 0, "restore without a pack does nothing");
    assert.equal(readFileSync(manifest, "utf8"), before);
  });

  test("stands aside where npm installs a git dependency (npm_command=install), which packs this machine's binary alone", () => {
    const r = prepack(checkout([[own, binary]]), "install");
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, "");
  });
});

/** The six binaries a release carries, by scripts/shipped.js. */
function shippedNames() {
  return createRequire(import.meta.url)(join(root, "scripts", "shipped.js")).shipped();
}
