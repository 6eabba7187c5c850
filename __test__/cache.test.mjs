// The read cache within its memory budget (#32): whatever the budget (the
// default, a small one, none), every read answers as a fresh read does,
// and what is kept never exceeds it. A setting that is not a whole number
// of MiB is refused when the module loads.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { addonOnly, isAddon, journal, modulePath } from "./helpers.mjs";

const child = fileURLToPath(new URL("cache-child.mjs", import.meta.url));
const MiB = 1 << 20;

/** Runs the child on `dirs` with DISCORD_JOURNAL_CACHE_MB set to `mb` (unset: undefined). */
function run(dirs, mb) {
  const env = { ...process.env, DISCORD_JOURNAL_CACHE_MB: mb };
  if (mb === undefined) delete env.DISCORD_JOURNAL_CACHE_MB;
  const r = spawnSync(process.execPath, [child, modulePath, ...dirs], { encoding: "utf8", env, timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** A journal whose three files hold `n` lines each (an outbox of about 20 bytes kept a line). */
function binding(n, k) {
  const dir = journal();
  let inbox = "";
  let outbox = "";
  let admissions = "";
  for (let i = 0; i < n; i++) {
    inbox += JSON.stringify({ id: `${k}-${i}`, content: "x".repeat(i % 40) }) + "\n";
    outbox += JSON.stringify({ nonce: `${k}-${i >> 1}`, status: i % 2 && i % 7 ? "confirmed" : "intent", at: `t${i}` }) + "\n";
    admissions += JSON.stringify({ id: `${k}-${i % 50_000}`, at: `2026-01-0${1 + (i % 3)}T00:00:00.000Z` }) + "\n";
  }
  writeFileSync(join(dir, "inbox.jsonl"), inbox);
  writeFileSync(join(dir, "outbox.jsonl"), outbox);
  writeFileSync(join(dir, "admissions.jsonl"), admissions);
  return dir;
}

describe("the read cache's budget", () => {
  test("a small budget, none, and the default give the same answers; the small one is never exceeded", { timeout: 120_000 }, () => {
    // Eight bindings of 20,000 lines: about 2.5 MiB kept by default.
    const dirs = Array.from({ length: 8 }, (_, k) => binding(20_000, k));
    // Each run appends: each reads copies of its own.
    const copies = () =>
      dirs.map((d) => {
        const to = journal();
        cpSync(d, to, { recursive: true });
        return to;
      });
    const byDefault = run(copies(), undefined);
    const small = run(copies(), "1");
    const none = run(copies(), "0");
    assert.deepEqual(small.answers, byDefault.answers);
    assert.deepEqual(none.answers, byDefault.answers);
    assert.equal(byDefault.answers.length, 24);
    if (!isAddon) return;
    assert.equal(small.budget, MiB);
    assert.ok(small.most > 0 && small.most <= MiB, `kept at most ${small.most} bytes of ${MiB}`);
    assert.equal(none.most, 0);
    assert.ok(byDefault.most > 2 * MiB, `the default kept ${byDefault.most} bytes`);
    console.log(`# figure kept: default ${(byDefault.most / MiB).toFixed(2)} MiB; budget 1 MiB: ${(small.most / MiB).toFixed(2)} MiB`);
  });

  test("a file whose fold alone exceeds the budget is read whole each time, and answers as a fresh read", { timeout: 60_000 }, () => {
    // 12 bytes an id: an inbox of 100,000 lines keeps more than 1 MiB.
    const kept = run([binding(100_000, "big")], "1");
    const fresh = run([binding(100_000, "big")], "0");
    assert.deepEqual(kept.answers, fresh.answers);
    if (isAddon) assert.equal(kept.most, 0, "nothing kept: each of the three files is past 1 MiB");
  });

  test("a setting that is not a whole number of MiB is refused at load", addonOnly, () => {
    for (const bad of ["abc", "1.5", "-1", "64MB", " 8", ""]) {
      const r = spawnSync(
        process.execPath,
        ["-e", `try { require(${JSON.stringify(modulePath)}) } catch (e) { console.log(JSON.stringify([e.name, e.message, e.exitCode])) }`],
        {
          encoding: "utf8",
          env: { ...process.env, DISCORD_JOURNAL_CACHE_MB: bad },
        },
      );
      assert.deepEqual(JSON.parse(r.stdout), [
        "DiscordError",
        `DISCORD_JOURNAL_CACHE_MB must be a whole number of MiB, 0 to keep nothing between reads (at most 1048576), not ${JSON.stringify(bad)}: unset it for the default`,
        1,
      ]);
    }
  });
});
