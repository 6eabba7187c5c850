// The read cache's child (#32): reads every journal named on the command
// line three times, appending between rounds, and prints the answers and
// the most the cache held at any step.
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modulePath, ...dirs] = process.argv.slice(2);
const M = modulePath.endsWith(".mjs") ? await import(pathToFileURL(modulePath).href) : createRequire(import.meta.url)(modulePath);
const native = typeof M.DiscordError === "function" ? createRequire(import.meta.url)("../binding.js") : null;
const answers = [];
let most = 0;
for (let round = 0; round < 3; round++) {
  for (const [i, dir] of dirs.entries()) {
    const ids = M.readInboxIds(dir);
    const open = M.unresolvedOutbox(dir);
    answers.push([ids.size, [...ids].at(-1), open.length, open.at(-1), M.countAdmissionsOn(dir, "2026-01-01")]);
    most = Math.max(most, native?.cacheBytes()[0] ?? 0);
    if ((i + round) % 3 === 0) {
      appendFileSync(join(dir, "inbox.jsonl"), JSON.stringify({ id: `r${round}` }) + "\n");
      appendFileSync(join(dir, "outbox.jsonl"), JSON.stringify({ nonce: `r${round}`, status: "intent", at: "t" }) + "\n");
      appendFileSync(join(dir, "admissions.jsonl"), JSON.stringify({ id: `r${round}`, at: "2026-01-01T00:00:00.000Z" }) + "\n");
    }
  }
}
console.log(JSON.stringify({ answers, most, budget: native?.cacheBytes()[1] ?? null }));
