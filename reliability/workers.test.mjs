// Worker threads (#12): loading the module in 200 Workers one after
// another (each makes a call, then is terminated) must leave the main
// thread's resident memory where 200 Workers that load nothing leave it,
// and the main thread working. Node's own Workers grow a process by a few
// MiB over 200 (measured beside the module's in the same process), so the
// module is judged against that, not against zero. Runs in a fresh child,
// so earlier tests' heap is not counted.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { isAddon, journal, modulePath } from "../__test__/helpers.mjs";

const figure = (name, value) => console.log(`# figure ${name}: ${value}`);

const measure = `
import { Worker } from "node:worker_threads";
const [url, dir] = process.argv.slice(1);
const load = (body) => \`import("\${url}").then((M) => { \${body}; require("node:worker_threads").parentPort.postMessage(1); });\`;
const bodies = {
  plain: \`import("node:path").then(() => require("node:worker_threads").parentPort.postMessage(1));\`,
  module: load(\`M.readInboxIds(\${JSON.stringify(dir)}); M.utcDate(0)\`),
};
const run = (code) => new Promise((resolve, reject) => {
  const w = new Worker(code, { eval: true, execArgv: [] });
  w.once("message", () => w.terminate().then(resolve));
  w.once("error", reject);
});
const rss = () => process.memoryUsage().rss / 1048576;
const grow = async (code) => {
  for (let i = 0; i < 20; i++) await run(code);
  globalThis.gc();
  const before = rss();
  for (let i = 0; i < 200; i++) await run(code);
  globalThis.gc();
  return rss() - before;
};
const plain = await grow(bodies.plain);
const module = await grow(bodies.module);
const M = await import(url);
console.log(JSON.stringify({ plain, module, after: M.readInboxIds(dir).size }));
`;

test("200 Workers that load the module grow the process no more than 200 that load nothing", { timeout: 120_000 }, () => {
  const dir = journal();
  const r = spawnSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", measure, pathToFileURL(modulePath).href, dir], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  const { plain, module, after } = JSON.parse(r.stdout.trim().split("\n").pop());
  const mib = (n) => `${n >= 0 ? "+" : ""}${n.toFixed(1)} MiB`;
  figure(
    "200 Workers",
    `resident memory ${mib(module)} loading the module, ${mib(plain)} loading nothing; the main thread still reads (${after} ids)`,
  );
  assert.equal(after, 0);
  // A margin for the allocator's noise; a leak of the module's state per
  // Worker that counts (more than about 15 KiB each) is over it.
  if (isAddon) assert.ok(module <= plain + 3, `+${module.toFixed(1)} MiB against +${plain.toFixed(1)} MiB`);
});
