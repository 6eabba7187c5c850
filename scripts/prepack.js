#!/usr/bin/env node
// npm pack and npm publish (#24): a tarball carries every binary the
// package ships, each checked by check-binary.sh, or it is not made. A
// checkout after `npm install` holds only the binary built for this
// machine; packed as it is, that tarball would fail on every other Linux
// and on macOS. `npm run pack:release` builds the set, then packs. Once
// the checks pass, the manifest packed is package.json without `prepare`
// (pack-manifest.js; postpack puts package.json back, #48).
//
// npm also packs a git dependency it installs, a checkout whose prepare
// built this machine's binary alone, for this machine alone: npm runs
// scripts then under `npm_command=install` (or ci, update...), and this
// check stands aside. Any other packer (pnpm pack, which sets no
// npm_command) is held to the full set.
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { shipped } = require("./shipped.js");

const root = path.join(__dirname, "..");
const say = (line) => process.stderr.write(`discord-journal: ${line}\n`);

function main() {
  const command = process.env.npm_command;
  if (command && command !== "pack" && command !== "publish") return 0;
  const files = shipped();
  const missing = files.filter((f) => !fs.existsSync(path.join(root, f)));
  if (missing.length) {
    say(
      `refusing to pack: a tarball must carry all ${files.length} binaries, and ${missing.length} ${missing.length === 1 ? "is" : "are"} missing: ${missing.join(", ")}.\n` +
        "Run `npm run pack:release`: it builds every binary (cargo-zigbuild), checks each, then packs.",
    );
    return 1;
  }
  const r = spawnSync("bash", [path.join(__dirname, "check-binary.sh"), ...files], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  if (r.status !== 0) {
    say(
      `refusing to pack: a binary fails its check:\n${(r.stderr || r.error?.message || "").trim()}\nRun \`npm run pack:release\`: it builds every binary again, checks each, then packs.`,
    );
    return 1;
  }
  return 0;
}

process.exitCode = main();
if (process.exitCode === 0) require("./pack-manifest.js").strip();
