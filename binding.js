// discord-journal's loader: finds the native binary for this platform and
// returns it (#11). NAPI_RS_NATIVE_LIBRARY_PATH names a binary to load
// instead, as napi-rs's own loaders read it. Otherwise each file this
// platform may have is required by a literal path, so that a bundler can
// follow it (esbuild's --loader:.node=copy); one that is absent inside a try
// is no bundling error. glibc and musl are told apart by libc.js, from
// Node's own binary, not as napi-rs's generated loader tells them (whether
// /usr/bin/ldd mentions musl, then process.report, which costs
// milliseconds): a file on the machine says which C libraries are
// installed, not which one this Node runs on.
// scripts/ensure-binary.js builds a binary under these names from source
// where none fits.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { libcOfNode } = require("./libc.js");

// The platform's build for the C library Node runs on, and only that one: a
// glibc build might load on musl through gcompat's shims, and a musl build
// into a glibc process where LD_LIBRARY_PATH leads to musl's libc.so, both
// untested mixes. Where Node's C library is unknown, each build in turn,
// musl's first where musl's dynamic loader is. Each failure is noted.
function first(arch, gnu, musl, failed) {
  const builds = { gnu, musl };
  const libc = libcOfNode();
  const order = libc ? [libc] : fs.existsSync(`/lib/ld-musl-${arch}.so.1`) ? ["musl", "gnu"] : ["gnu", "musl"];
  for (const c of order) {
    try {
      return builds[c]();
    } catch (e) {
      failed(`discord-journal.linux-${process.arch}-${c}.node`, e);
    }
  }
  return undefined;
}

const PREBUILT =
  "Binaries are prebuilt for linux-x64 and linux-arm64 (glibc 2.17 or later, or musl) and for darwin-x64 and darwin-arm64 (macOS 11 or later).";

// What this copy of the package carries: a tarball packed for one system
// alone (`npm run pack:release -- linux`, #53) has that system's binaries
// only, and its manifest's napi.targets and os say so.
function carried() {
  let have = [];
  try {
    have = fs.readdirSync(__dirname).filter((f) => /^discord-journal\..+\.node$/.test(f));
  } catch {
    return "";
  }
  const list = have.length ? have.join(", ") : "no binary";
  return `\nThis copy of the package carries ${list}. A tarball from \`npm run pack:release\` in a clone of the package carries all six binaries (\`npm run pack:release -- linux\`, Linux's alone).`;
}

function loadBinding() {
  const tried = [];
  const failed = (file, e) => tried.push(`${file}: ${String(e.message).split("\n")[0]}`);
  const override = process.env.NAPI_RS_NATIVE_LIBRARY_PATH;
  if (override) {
    try {
      return require(path.resolve(override));
    } catch (e) {
      failed(override, e);
    }
  } else if (process.platform === "linux" && process.arch === "x64") {
    const gnu = () => require("./discord-journal.linux-x64-gnu.node");
    const musl = () => require("./discord-journal.linux-x64-musl.node");
    const loaded = first("x86_64", gnu, musl, failed);
    if (loaded) return loaded;
  } else if (process.platform === "linux" && process.arch === "arm64") {
    const gnu = () => require("./discord-journal.linux-arm64-gnu.node");
    const musl = () => require("./discord-journal.linux-arm64-musl.node");
    const loaded = first("aarch64", gnu, musl, failed);
    if (loaded) return loaded;
  } else if (process.platform === "darwin" && process.arch === "x64") {
    try {
      return require("./discord-journal.darwin-x64.node");
    } catch (e) {
      failed("discord-journal.darwin-x64.node", e);
    }
  } else if (process.platform === "darwin" && process.arch === "arm64") {
    try {
      return require("./discord-journal.darwin-arm64.node");
    } catch (e) {
      failed("discord-journal.darwin-arm64.node", e);
    }
  } else if (process.platform === "linux") {
    for (const libc of ["gnu", "musl"]) {
      const file = `discord-journal.linux-${process.arch}-${libc}.node`;
      try {
        return require(path.join(__dirname, file));
      } catch (e) {
        failed(file, e);
      }
    }
  }
  const where = `${process.platform}-${process.arch}`;
  const what = ["linux", "darwin"].includes(process.platform)
    ? `${PREBUILT} Elsewhere on Linux or macOS, build one from source: ` +
      "install Rust (https://rustup.rs, Cargo.toml's rust-version or later), then run `npx discord-journal-build` (in a checkout of the package, `npm install`)."
    : `${PREBUILT} It does not run on ${process.platform}: its lock needs /proc's process identity, as journal.mjs's does, and no binary is built for it.`;
  const files = tried.length ? `\n  ${tried.join("\n  ")}` : " none (no binary is known for this platform)";
  throw new Error(`discord-journal: no native binding loads on ${where}. Tried:${files}\n${what}${carried()}`);
}

module.exports = loadBinding();
