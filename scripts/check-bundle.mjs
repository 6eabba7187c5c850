#!/usr/bin/env node
// A host bundled with esbuild (#11): a file that imports the package, bundled
// with --loader:.node=copy (the binary copied beside the bundle, found through
// the loader's literal require), then moved away from this checkout and run.
//
//   node scripts/check-bundle.mjs
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundledHost } from "./bundled-host.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const esbuild = join(root, "node_modules", ".bin", "esbuild");
const work = mkdtempSync(join(tmpdir(), "discord-journal-bundle-"));
try {
  const src = join(work, "src");
  mkdirSync(join(src, "node_modules"), { recursive: true });
  symlinkSync(root, join(src, "node_modules", "discord-journal"));
  writeFileSync(join(src, "host.mjs"), bundledHost("bundled-"));
  const out = join(work, "out");
  execFileSync(
    esbuild,
    [
      join(src, "host.mjs"),
      "--bundle",
      "--platform=node",
      "--format=cjs",
      "--target=node20",
      "--loader:.node=copy",
      `--outdir=${out}`,
      "--log-level=warning",
    ],
    { stdio: "inherit" },
  );
  // run it where nothing of this checkout can be found
  const away = join(work, "away");
  cpSync(out, away, { recursive: true });
  rmSync(out, { recursive: true });
  rmSync(src, { recursive: true });
  const files = readdirSync(away);
  if (!files.some((f) => f.endsWith(".node"))) throw new Error(`the bundle copied no binary: ${files.join(", ")}`);
  const ran = execFileSync(process.execPath, [join(away, "host.js")], { encoding: "utf8" });
  if (ran.trim() !== "bundle ran") throw new Error(`the bundle printed ${ran}`);
  console.log(`ok esbuild bundle (--loader:.node=copy): ${files.join(", ")}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
