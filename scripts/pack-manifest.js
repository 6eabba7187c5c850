#!/usr/bin/env node
// The manifest a tarball carries (#48): package.json without `prepare`,
// and, for a release (#53), naming the binaries it carries: napi.targets
// and os narrowed to them, files listing them (no stray binary of another
// build rides along).
// `prepare` builds the binary from source where the package is a checkout
// (a clone, a workspace package, a git dependency); a tarball carries its
// binaries, and npm never runs `prepare` from one, but npm 11 listed it
// among "install scripts not yet covered by allowScripts" on every install
// of the tarball, under a README that says the package runs none.
//
//   node scripts/pack-manifest.js strip     (prepack.js, once its checks pass,
//                                            with the set it checked)
//   node scripts/pack-manifest.js restore   (postpack)
//
// `strip` keeps package.json aside and writes it without `prepare`;
// `restore` puts the kept one back, byte for byte. A pack that did not
// finish (its postpack never ran) left the kept copy: `strip` and
// `restore` both put it back first.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..");
const manifest = path.join(root, "package.json");
const kept = path.join(root, ".package.json.unpacked");

function restore() {
  if (fs.existsSync(kept)) fs.renameSync(kept, manifest);
}

/** `targets`: shipped.js's entries of the set packed, or none to keep them. */
function strip(targets) {
  restore();
  if (!fs.existsSync(manifest)) return;
  const text = fs.readFileSync(manifest, "utf8");
  const pkg = JSON.parse(text);
  if (pkg.scripts?.prepare === undefined && !targets) return;
  fs.writeFileSync(kept, text);
  if (pkg.scripts) delete pkg.scripts.prepare;
  if (targets) {
    pkg.napi.targets = targets.map((t) => t.target);
    pkg.os = [...new Set(targets.map((t) => t.os))];
    pkg.files = [...pkg.files.filter((f) => f !== "discord-journal.*.node"), ...targets.map((t) => t.file)];
  }
  fs.writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
}

module.exports = { strip, restore };
if (require.main === module) {
  const step = { strip, restore }[process.argv[2]];
  if (!step) {
    process.stderr.write("usage: node scripts/pack-manifest.js strip|restore\n");
    process.exitCode = 2;
  } else step();
}
