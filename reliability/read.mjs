// A child of the memory tests: loads the module under test (JOURNAL_MODULE,
// or this package), calls each named reader on `dir` and prints one JSON
// line: each reader's result size or refusal, and the process's peak
// address space (VmPeak, KiB) and resident set (maxRSS, KiB).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const path = process.env.JOURNAL_MODULE ? resolve(process.env.JOURNAL_MODULE) : join(root, "index.js");
const M = path.endsWith(".mjs") ? await import(pathToFileURL(path).href) : createRequire(import.meta.url)(path);

const [dir, ...readers] = process.argv.slice(2);
const results = {};
for (const name of readers) {
  try {
    const r = M[name](dir);
    results[name] = { size: r.length ?? r.size };
  } catch (e) {
    results[name] = { name: e?.name, message: e?.message, exitCode: e?.exitCode };
  }
}
const vmPeak = Number(/VmPeak:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]);
process.stdout.write(JSON.stringify({ results, vmPeakKiB: vmPeak, maxRssKiB: process.resourceUsage().maxRSS }) + "\n");
