// A host's first calls (#11), run where the packed package is installed on
// another system (scripts/check-bullseye.sh, scripts/check-platforms.sh):
// the named ESM imports and require give one DiscordError, a journal is
// made, appended to, read, claimed and released, and a real disk fault
// refuses as a DiscordError. It prints the binary this process mapped, so a
// run shows which of the package's binaries loaded.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as J from "discord-journal";

const root = mkdtempSync(join(tmpdir(), "discord-journal-smoke-"));
try {
  const dir = join(root, "discord", "alpha");
  J.ensureJournal(dir);
  J.appendInbox(dir, { id: "m1", at: new Date().toISOString() });
  assert.deepEqual([...J.readInboxIds(dir)], ["m1"]);
  J.writeTurn(dir, "t1", { startedAt: new Date().toISOString(), reply: "é日" });
  assert.equal(J.listTurns(dir)[0].reply, "é日");
  J.writePid(dir, process.pid);
  assert.equal(J.ownerState(J.readPid(dir)), "live");
  J.clearPid(dir, process.pid);
  mkdirSync(join(dir, "drops.jsonl"));
  assert.throws(
    () => J.appendDrop(dir, {}),
    (e) => e instanceof J.DiscordError && e.message === "could not append to drops.jsonl (EISDIR)",
  );
  assert.equal(createRequire(import.meta.url)("discord-journal").DiscordError, J.DiscordError);
} finally {
  rmSync(root, { recursive: true, force: true });
}
const binary = readFileSync("/proc/self/maps", "utf8").match(/discord-journal\.[\w-]+\.node/)?.[0] ?? "(not found in /proc/self/maps)";
console.log(`smoke test passed on Node ${process.version} ${process.platform}-${process.arch}, ${binary}`);
