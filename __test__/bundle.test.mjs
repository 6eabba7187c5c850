// A bundle with one binary (#48): the recipe in docs/development.md, run as
// written but for the binary's name (this platform's), on a host file that
// imports the package. The bundle must carry that one binary, and run, and
// refuse with the package's DiscordError, moved away from the checkout.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { isAddon } from "./helpers.mjs";
import { bundledHost } from "../scripts/bundled-host.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const esbuild = join(root, "node_modules", ".bin", "esbuild");
const docs = join(root, "docs", "development.md");
const made = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

// The binary this process loaded: the one a bundle for this platform ships.
const maps = process.platform === "linux" ? readFileSync("/proc/self/maps", "utf8") : "";
const own = maps.match(/discord-journal\.[\w-]+\.node/)?.[0];

const skip = !isAddon
  ? "the bundle is this package's"
  : !existsSync(esbuild)
    ? "esbuild (a devDependency) is not installed here"
    : !existsSync(docs)
      ? "the recipe is in the checkout's docs"
      : !own
        ? "the binary this process loaded is told from /proc/self/maps (Linux)"
        : false;

/** The recipe: the sh block of docs/development.md that marks the binaries external. */
function recipe() {
  const text = readFileSync(docs, "utf8");
  const block = [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
    .map((m) => m[1])
    .find((b) => b.includes("--external:./discord-journal.*.node"));
  assert.ok(block, "docs/development.md: the bundle recipe, a sh block with --external:./discord-journal.*.node");
  const lines = block.trim().split("\n");
  assert.equal(lines.length, 2, block);
  assert.match(
    lines[0],
    /^npx esbuild packages\/discord\/src\/main\.mjs --bundle --platform=node --outfile=dist\/main\.cjs --external:\.\/discord-journal\.\*\.node$/,
  );
  assert.match(lines[1], /^cp node_modules\/discord-journal\/discord-journal\.[\w-]+\.node dist\/$/);
  return lines;
}

test("the docs' recipe bundles a host with one binary, which runs away from the checkout", { skip, timeout: 120_000 }, () => {
  const [bundle, copy] = recipe();
  const host = mkdtempSync(join(tmpdir(), "discord-journal-bundle-"));
  made.push(host);
  mkdirSync(join(host, "packages", "discord", "src"), { recursive: true });
  mkdirSync(join(host, "node_modules", ".bin"), { recursive: true });
  symlinkSync(root, join(host, "node_modules", "discord-journal"));
  symlinkSync(esbuild, join(host, "node_modules", ".bin", "esbuild"));
  writeFileSync(join(host, "package.json"), JSON.stringify({ name: "host", private: true, type: "module" }));
  writeFileSync(join(host, "packages", "discord", "src", "main.mjs"), bundledHost("discord-journal-bundled-"));
  // This platform's binary where the docs name one for the example.
  const steps = [bundle, copy.replace(/discord-journal\.[\w-]+\.node/, own)];
  for (const step of steps) {
    const r = spawnSync("sh", ["-c", step], { cwd: host, encoding: "utf8" });
    assert.equal(r.status, 0, `${step}\n${r.stdout}${r.stderr}`);
  }
  const away = mkdtempSync(join(tmpdir(), "discord-journal-away-"));
  made.push(away);
  cpSync(join(host, "dist"), away, { recursive: true });
  rmSync(host, { recursive: true, force: true });
  // As in the connector's packages: ES modules by default.
  writeFileSync(join(away, "package.json"), JSON.stringify({ type: "module" }));
  const binaries = readdirSync(away).filter((f) => f.endsWith(".node"));
  assert.deepEqual(binaries, [own], "one binary, this platform's");
  const ran = spawnSync(process.execPath, [join(away, "main.cjs")], {
    encoding: "utf8",
    env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: undefined },
  });
  assert.equal(ran.status, 0, ran.stderr);
  assert.equal(ran.stdout, "bundle ran\n");
});
