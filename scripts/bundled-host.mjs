// The host file a bundle check builds (#11): it imports the package by name,
// appends and reads a record, and expects a refusal as the package's
// DiscordError. Shared by scripts/check-bundle.mjs and __test__/bundle.test.mjs.

/** The host's source; its journal goes under a temporary directory named `prefix`. */
export function bundledHost(prefix) {
  return `import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiscordError, appendDrop, appendInbox, ensureJournal, readInboxIds } from "discord-journal";
const dir = join(mkdtempSync(join(tmpdir(), ${JSON.stringify(prefix)})), "discord", "alpha");
ensureJournal(dir);
appendInbox(dir, { id: "m1" });
if (!readInboxIds(dir).has("m1")) throw new Error("inbox lost m1");
mkdirSync(join(dir, "drops.jsonl"));
try {
  appendDrop(dir, {});
  throw new Error("no refusal");
} catch (e) {
  if (!(e instanceof DiscordError)) throw e;
}
console.log("bundle ran");
`;
}
