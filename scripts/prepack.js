#!/usr/bin/env node
// npm pack and npm publish (#24, #53): a tarball carries every binary of
// the set it is packed for, each checked by check-binary.sh, or it is not
// made. The set is all six unless `npm run pack:release -- SET` names
// another (DISCORD_JOURNAL_PACK: linux, darwin or platforms; shipped.js). A
// checkout after `npm install` holds only the binary built for this
// machine; packed as it is, that tarball would fail on every other Linux
// and on macOS. `npm run pack:release` builds the set, then packs. Once
// the checks pass, the manifest packed is package.json without `prepare`,
// naming the set in napi.targets, os and files (pack-manifest.js; postpack
// puts package.json back, #48).
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
const { select } = require("./shipped.js");

const root = path.join(__dirname, "..");
const say = (line) => process.stderr.write(`discord-journal: ${line}\n`);
// The targets of the set packed, once checked (none where npm installs).
let packed;

function main() {
  const command = process.env.npm_command;
  if (command && command !== "pack" && command !== "publish") return 0;
  const set = process.env.DISCORD_JOURNAL_PACK || "all";
  let targets;
  try {
    targets = select(set);
  } catch (e) {
    say(`refusing to pack: DISCORD_JOURNAL_PACK names ${e.message}`);
    return 1;
  }
  const files = targets.map((t) => t.file);
  const route = set === "all" ? "`npm run pack:release`" : `\`npm run pack:release -- ${set}\``;
  const missing = files.filter((f) => !fs.existsSync(path.join(root, f)));
  if (missing.length) {
    const whole = set === "all" ? `a tarball must carry all ${files.length}` : `a tarball for ${set} must carry its ${files.length}`;
    say(
      `refusing to pack: ${whole} binaries, and ${missing.length} ${missing.length === 1 ? "is" : "are"} missing: ${missing.join(", ")}.\n` +
        `Run ${route}: it builds ${set === "all" ? "every" : "each"} binary (cargo-zigbuild), checks each, then packs.`,
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
      `refusing to pack: a binary fails its check:\n${(r.stderr || r.error?.message || "").trim()}\nRun ${route}: it builds each binary again, checks each, then packs.`,
    );
    return 1;
  }
  packed = targets;
  return 0;
}

process.exitCode = main();
if (process.exitCode === 0) require("./pack-manifest.js").strip(packed);
