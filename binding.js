// discord-journal's loader: finds the native binary for this platform and
// returns it (#11). NAPI_RS_NATIVE_LIBRARY_PATH names a binary to load
// instead, as napi-rs's own loaders read it. Otherwise each file this
// platform may have is required by a literal path, so that a bundler can
// follow it (esbuild's --loader:.node=copy); one that is absent inside a try
// is no bundling error. glibc and musl are told apart by trying the glibc
// build first: a musl system cannot load it and goes on to its own, so the
// usual load costs no detection (process.report, which napi-rs's loader
// asks, costs milliseconds and can wait on reverse DNS).
// scripts/ensure-binary.js builds a binary under these names from source
// where none fits.
"use strict";

const path = require("node:path");

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
    try {
      return require("./discord-journal.linux-x64-gnu.node");
    } catch (e) {
      failed("discord-journal.linux-x64-gnu.node", e);
    }
    try {
      return require("./discord-journal.linux-x64-musl.node");
    } catch (e) {
      failed("discord-journal.linux-x64-musl.node", e);
    }
  } else if (process.platform === "linux" && process.arch === "arm64") {
    try {
      return require("./discord-journal.linux-arm64-gnu.node");
    } catch (e) {
      failed("discord-journal.linux-arm64-gnu.node", e);
    }
    try {
      return require("./discord-journal.linux-arm64-musl.node");
    } catch (e) {
      failed("discord-journal.linux-arm64-musl.node", e);
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
  const what =
    process.platform === "linux"
      ? "A binary is prebuilt for linux-x64 with glibc 2.17 or later; elsewhere on Linux, build one from source: " +
        "install Rust (https://rustup.rs, Cargo.toml's rust-version or later), then run `npx discord-journal-build` (in a checkout of the package, `npm install`)."
      : "It runs on Linux only (it reads /proc, as journal.mjs does).";
  const files = tried.length ? `\n  ${tried.join("\n  ")}` : " none (no binary is known for this platform)";
  throw new Error(`discord-journal: no native binding loads on ${where}. Tried:${files}\n${what}`);
}

module.exports = loadBinding();
