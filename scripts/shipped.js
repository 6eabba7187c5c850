#!/usr/bin/env node
// The binaries a package can carry, one per Rust target in package.json's
// napi.targets, under the names binding.js requires (#11, #24), and the
// sets a release is packed with (#53): every one by default, or those of
// one operating system for a host that deploys there alone.
//
//   node scripts/shipped.js            the files, one a line (check-binary.sh)
//   node scripts/shipped.js SET        "platform target" a line, for build-dist.sh
//
// SET is `all`, `linux`, `darwin`, or platforms joined by commas
// (`linux-x64-gnu,linux-arm64-gnu`); anything else exits 2 naming them.
"use strict";

const path = require("node:path");

const ARCH = { x86_64: "x64", aarch64: "arm64" };

/** Every target of `napi.targets` (the packed manifest's: those it carries). */
function targets() {
  const { napi } = require(path.join(__dirname, "..", "package.json"));
  return napi.targets.map((target) => {
    const [arch, , os, abi] = target.split("-");
    const platform = os === "darwin" ? `darwin-${ARCH[arch]}` : `${os}-${ARCH[arch]}-${abi}`;
    return { target, platform, os, file: `discord-journal.${platform}.node` };
  });
}

function shipped() {
  return targets().map((t) => t.file);
}

/** The targets a set names, in napi.targets' order; throws naming the sets known. */
function select(set = "all") {
  const all = targets();
  if (set === "all") return all;
  if (set === "linux" || set === "darwin") return all.filter((t) => t.os === set);
  const names = set.split(",").filter(Boolean);
  const unknown = names.filter((n) => !all.some((t) => t.platform === n));
  if (!names.length || unknown.length)
    throw new Error(
      `no such platform set: ${JSON.stringify(set)}. Give all, linux, darwin, or platforms joined by commas: ${all.map((t) => t.platform).join(", ")}`,
    );
  return all.filter((t) => names.includes(t.platform));
}

module.exports = { shipped, targets, select };
if (require.main === module) {
  const set = process.argv[2];
  if (set === undefined) process.stdout.write(`${shipped().join("\n")}\n`);
  else {
    try {
      process.stdout.write(
        `${select(set)
          .map((t) => `${t.platform} ${t.target}`)
          .join("\n")}\n`,
      );
    } catch (e) {
      process.stderr.write(`discord-journal: ${e.message}\n`);
      process.exitCode = 2;
    }
  }
}
