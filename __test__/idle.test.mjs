// The data root's discord-journal.idle: a metrics collection run as
// root reads it with the rights of the data root's owner, never through a
// link, never waiting, a regular file of at most 1 MiB. Whatever the owner
// puts at its name (a FIFO, a link to /dev/zero or to a file only root may
// read, a directory, a device, a file too large) is refused by what it is,
// a cause in the metrics and a line in the output, while the collection
// still judges every binding and keeps the idle set of the last metrics
// file. Each fault is made real (a FIFO, a device node, another owner),
// as root; the command is this package's own, so these skip against
// another implementation.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chownSync, lchownSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { M, NOBODY, actsAsOwner, addonOnly, bin, scratch } from "./helpers.mjs";

const IDLE = "discord-journal.idle";
const BINDINGS = ["a", "b"];

/** A data root of the service user nobody's, with bindings a and b, and a metrics file beside it. */
function dataRoot() {
  const top = scratch();
  const root = join(top, "root");
  for (const n of BINDINGS) M.appendInbox(M.ensureJournal(join(root, "discord", n)), { id: `${n}-1`, at: "2026-12-01T00:00:00.000Z" });
  spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, root]);
  return { root, file: join(top, "m.prom") };
}

/**
 * A collection, bounded by a timeout: one that blocks on what it opens is
 * killed and fails the test, never hangs the suite.
 */
function collect({ root, file }, ...more) {
  const r = spawnSync(process.execPath, [bin, "status", "--data-root", root, "--prometheus", file, ...more], {
    encoding: "utf8",
    timeout: 30_000,
  });
  assert.equal(r.error, undefined, `the collection did not end within 30 s (${r.error?.code}): ${r.stderr}`);
  assert.equal(r.signal, null, `the collection was killed by ${r.signal}: ${r.stderr}`);
  return r;
}

/** The value of `family`'s series for binding `b` in the metrics file. */
const series = (prom, family, root, b) =>
  new RegExp(`^discord_journal_${family}\\{data_root="${root}",binding="${b}"\\} (\\S+)$`, "m").exec(prom)?.[1];

/** A first, good collection: the idle file of the owner's names a. */
function good(d) {
  const idle = join(d.root, IDLE);
  writeFileSync(idle, "# kept for later\na\n");
  chownSync(idle, NOBODY, NOBODY);
  assert.equal(collect(d).status, 0);
  assert.equal(series(readFileSync(d.file, "utf8"), "binding_idle", d.root, "a"), "1");
  rmSync(idle);
}

/**
 * A collection after `make` put something at the idle file's name: refused
 * as `cause`, by name, in the metrics and the output, exit 1; every
 * binding still judged; a idle (the last good set), b not.
 */
function refusedAs(d, cause, { kept = ["a"] } = {}) {
  const r = collect(d);
  assert.equal(r.status, 1, `a refused idle file needs a hand: ${r.stdout}${r.stderr}`);
  const idle = join(d.root, IDLE);
  const line = r.stdout.split("\n").find((l) => l.startsWith(`${IDLE} refused (${cause}): ${idle}`));
  assert.ok(line, r.stdout);
  const prom = readFileSync(d.file, "utf8");
  assert.ok(prom.includes(`\ndiscord_journal_collection_idle_file_refused{data_root="${d.root}"} 1\n`), prom);
  assert.ok(prom.includes(`\ndiscord_journal_collection_idle_file_refusal{data_root="${d.root}",cause="${cause}"} 1\n`), prom);
  assert.ok(prom.includes(`\ndiscord_journal_collection_success{data_root="${d.root}"} 1\n`), prom);
  for (const b of BINDINGS) {
    assert.equal(series(prom, "binding_needs_hand", d.root, b) !== undefined, true, `${b} judged`);
    assert.equal(series(prom, "binding_idle", d.root, b), kept.includes(b) ? "1" : "0", `${b}'s idle series`);
  }
  return { line, prom, stdout: r.stdout };
}

describe("the data root's discord-journal.idle, read as its owner", addonOnly, () => {
  test("a FIFO at its name does not hang the collection: refused, every binding judged, the last good idle set kept", actsAsOwner, () => {
    const d = dataRoot();
    good(d);
    const idle = join(d.root, IDLE);
    assert.equal(spawnSync("mkfifo", [idle]).status, 0);
    lchownSync(idle, NOBODY, NOBODY);
    const { line } = refusedAs(d, "FIFO");
    assert.match(line, /is a FIFO, not a file of binding names; the bindings the last metrics file declared idle stay idle: a\. `rm /);
    // A second collection while it stays: the set is carried on.
    refusedAs(d, "FIFO");
    // --json says it too.
    const j = JSON.parse(collect(d, "--json").stdout);
    assert.deepEqual([j.idleFile.cause, j.idleFile.file, j.idleFile.kept], ["FIFO", idle, ["a"]]);
  });

  test("a link to /dev/zero is refused as a link, never followed", actsAsOwner, () => {
    const d = dataRoot();
    good(d);
    const idle = join(d.root, IDLE);
    symlinkSync("/dev/zero", idle);
    lchownSync(idle, NOBODY, NOBODY);
    assert.match(refusedAs(d, "symlink").line, /is a symlink, not a file of binding names/);
  });

  test("a link to a file only root may read, which names b, is refused as a link: b is not taken as idle", actsAsOwner, () => {
    const d = dataRoot();
    good(d);
    const idle = join(d.root, IDLE);
    const secret = join(d.root, "..", "root-only");
    writeFileSync(secret, "b\n", { mode: 0o600 });
    symlinkSync(secret, idle);
    lchownSync(idle, NOBODY, NOBODY);
    refusedAs(d, "symlink");
  });

  test(
    "a file of root's that its owner may not read is refused as its owner finds it, with the chown that gives it over",
    actsAsOwner,
    () => {
      const d = dataRoot();
      good(d);
      const idle = join(d.root, IDLE);
      writeFileSync(idle, "b\n", { mode: 0o600 });
      const { line } = refusedAs(d, "EACCES");
      assert.match(line, new RegExp(`cannot be read by nobody \\(uid ${NOBODY}\\), the data root's owner.*\`chown -h nobody: ${idle}\``));
      // The fix, pasted, makes it taken: b idle now, a no more.
      assert.equal(spawnSync("chown", ["-h", "nobody:", idle]).status, 0);
      assert.equal(collect(d).status, 0);
      const prom = readFileSync(d.file, "utf8");
      assert.deepEqual(
        BINDINGS.map((b) => series(prom, "binding_idle", d.root, b)),
        ["0", "1"],
      );
      assert.match(prom, /\ndiscord_journal_collection_idle_file_refused\{[^}]*\} 0\n/);
      assert.doesNotMatch(prom, /idle_file_refusal/);
    },
  );

  test("a directory is refused as one", actsAsOwner, () => {
    const d = dataRoot();
    good(d);
    const idle = join(d.root, IDLE);
    mkdirSync(idle);
    chownSync(idle, NOBODY, NOBODY);
    assert.match(refusedAs(d, "directory").line, /`rmdir /);
  });

  test("a file over 1 MiB is refused, never read whole", actsAsOwner, () => {
    const d = dataRoot();
    good(d);
    const idle = join(d.root, IDLE);
    // It names b first: nothing of it is taken.
    writeFileSync(idle, `b\n${"#".repeat(1 << 20)}\n`);
    chownSync(idle, NOBODY, NOBODY);
    assert.match(refusedAs(d, "too large").line, /holds 1048579 bytes, more than the 1 MiB/);
  });

  test("a device is refused as one", actsAsOwner, (t) => {
    const d = dataRoot();
    good(d);
    const idle = join(d.root, IDLE);
    // /dev/zero's own numbers: what a link could lead to, here by itself.
    if (spawnSync("mknod", [idle, "c", "1", "5"]).status !== 0) {
      t.skip("mknod is not permitted here");
      return;
    }
    lchownSync(idle, NOBODY, NOBODY);
    refusedAs(d, "character device");
  });
});
