// Opt-in durability (#21): with DISCORD_JOURNAL_FSYNC=1 every append, turn
// record, STOP line and owner record is synced before the call returns,
// and the directory where the call made the name; unset, the system calls
// are today's. Counted with strace(1) on a child process that makes one
// call; on the reference the counts are reported.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { M, addonOnly, isAddon, journal, modulePath, runModule } from "./helpers.mjs";

const strace = spawnSync("strace", ["-V"]).status === 0;
const logs = mkdtempSync(join(tmpdir(), "discord-journal-strace-"));
after(() => rmSync(logs, { recursive: true, force: true }));

/**
 * The sync calls (fsync, fdatasync) of files and directories under `dir`
 * that a process making `call` makes, with `env`. strace -y names each
 * descriptor's path: the runtime's own syncs (Deno syncs its caches) are
 * not the journal's.
 */
function syncs(dir, call, env) {
  const log = join(logs, `${Math.random()}`);
  const code = `const p = ${JSON.stringify(modulePath)};
    const M = p.endsWith(".mjs") ? await import((await import("node:url")).pathToFileURL(p).href) : (await import("node:module")).createRequire(import.meta.url)(p);
    ${call}`;
  const r = spawnSync("strace", ["-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", log, ...runModule(code)], {
    encoding: "utf8",
    env: { ...process.env, DISCORD_JOURNAL_FSYNC: undefined, ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  // strace names a descriptor by its real path.
  const real = realpathSync(dir);
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => /\b(fsync|fdatasync)\(\d+</.test(l) && (l.includes(`<${real}>`) || l.includes(`<${real}/`))).length;
}

describe("DISCORD_JOURNAL_FSYNC=1", { skip: strace ? false : "strace(1) is not installed" }, () => {
  test("each write is synced, and the directory where it made a name; unset, nothing is added", () => {
    const dir = journal();
    M.appendInbox(dir, { id: "0" });
    const d = JSON.stringify(dir);
    const calls = {
      "an append that makes its file": [`M.appendOutbox(${d}, { nonce: "a", status: "intent" })`, 2],
      "an append to a file": [`M.appendInbox(${d}, { id: "1" })`, 1],
      writeTurn: [`M.writeTurn(${d}, "t" + Math.random().toString(36).slice(2), { a: 1 })`, 2],
      "requestStop that makes STOP": [`M.requestStop(${d}, "x"); M.clearStop(${d})`, 2],
      writePid: [`M.writePid(${d}, process.pid); M.clearPid(${d}, process.pid)`, 3],
    };
    const seen = {};
    for (const [what, [call, want]] of Object.entries(calls)) {
      // The call that makes outbox.jsonl makes it anew each time.
      const fresh = () => rmSync(join(dir, "outbox.jsonl"), { force: true });
      fresh();
      const off = syncs(dir, call, {});
      fresh();
      const on = syncs(dir, call, { DISCORD_JOURNAL_FSYNC: "1" });
      seen[what] = `${off} unset, ${on} with it`;
      if (isAddon) {
        // Unset: only the syncs journal.mjs makes too (STOP's line, and the owner record's beyond it).
        assert.equal(off, what.startsWith("requestStop") || what === "writePid" ? 1 : 0, `${what} unset`);
        assert.equal(on, want, `${what} with DISCORD_JOURNAL_FSYNC=1`);
      }
    }
    console.log(`# figure syncs per call (${isAddon ? "addon" : "journal.mjs"}): ${JSON.stringify(seen)}`);
  });
});

describe("DISCORD_JOURNAL_FSYNC's values", () => {
  const load = (value) =>
    spawnSync(
      process.execPath,
      [
        "-e",
        `try { require(${JSON.stringify(modulePath)}); console.log("loaded") } catch (e) { console.log(JSON.stringify([e.name, e.message, e.exitCode])) }`,
      ],
      { encoding: "utf8", env: { ...process.env, DISCORD_JOURNAL_FSYNC: value } },
    ).stdout.trim();
  test("1, 0 and empty are taken; anything else is refused at load, not taken as off (#34)", addonOnly, () => {
    for (const good of ["1", "0", ""]) assert.equal(load(good), "loaded", good);
    for (const bad of ["true", "yes", "on", " 1", "01"]) {
      assert.deepEqual(JSON.parse(load(bad)), [
        "DiscordError",
        `DISCORD_JOURNAL_FSYNC must be 1 (every write on disk before it returns) or 0 (the default), not ${JSON.stringify(bad)}: set it to 1 or unset it`,
        1,
      ]);
    }
  });
});
