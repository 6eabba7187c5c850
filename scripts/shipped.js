#!/usr/bin/env node
// The binaries a published package carries, one per Rust target in
// package.json's napi.targets, under the names binding.js requires
// (#11, #24). Run, it prints them one a line, for check-binary.sh.
"use strict";

const path = require("node:path");

const ARCH = { x86_64: "x64", aarch64: "arm64" };

function shipped() {
  const { napi } = require(path.join(__dirname, "..", "package.json"));
  return napi.targets.map((target) => {
    const [arch, , os, abi] = target.split("-");
    const platform = os === "darwin" ? `darwin-${ARCH[arch]}` : `${os}-${ARCH[arch]}-${abi}`;
    return `discord-journal.${platform}.node`;
  });
}

module.exports = { shipped };
if (require.main === module) process.stdout.write(`${shipped().join("\n")}\n`);
