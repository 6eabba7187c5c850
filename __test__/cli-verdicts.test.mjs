// The rest of the states an operator met (#34), each made real and each a
// test of its own, and each held to what the library does in it: a record
// file that is a link that loops or leads nowhere; a line or turn record
// that is JSON null; an owner whose identity cannot be verified; run.lock
// closed to its owner; an owner's pid reused; a repair holding the
// binding; run.lock as a dangling link; a file root left in a service's
// journal; a journal its owner cannot reach; a turn record linked out; a
// limit on open files; recover on a file system out of inodes. The command is this package's own, so these tests skip
// against another implementation.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { AS_NOBODY, M, addonOnly, deadPid, journal, mountsTmpfs, scratch, withTmpfs, runFile, bin, cli, json } from "./helpers.mjs";

/** Runs a `next` or fix as printed: the command between its first backticks, in sh. */
const paste = (advice) => spawnSync("sh", ["-c", /`([^`]+)`/.exec(advice)[1]], { encoding: "utf8" });
/** The library's refusal of `f`, or null. */
const refusal = (f) => {
  try {
    f();
    return null;
  } catch (e) {
    return e.message;
  }
};
const boot = () => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
/** An owner record as a connector publishes it, written by hand. */
function owner(dir, record) {
  mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
  writeFileSync(join(dir, "run.lock", "owner.json"), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

const NOBODY = 65534;
const asRoot =
  process.getuid?.() !== 0
    ? { skip: "needs root: the command acts as the journal's owner only when run as root" }
    : process.versions.deno
      ? { skip: "Deno cannot set a process's groups: the command refuses to act as another user" }
      : {};
/** A journal of `nobody`, under a directory open to all. */
function nobodys() {
  const top = scratch();
  chmodSync(top, 0o755);
  const dir = join(top, "alpha");
  M.ensureJournal(dir);
  M.appendInbox(dir, { id: "m1", at: "2026-12-01T00:00:00.000Z" });
  for (const p of [dir, join(dir, "turns"), join(dir, "inbox.jsonl")]) chownSync(p, NOBODY, NOBODY);
  return dir;
}

describe("each state an operator met, held to what the library does (#34)", addonOnly, () => {
  test("notices.jsonl a link that loops: stuck, named by its ELOOP, as every appendNotice refuses", () => {
    const dir = journal();
    symlinkSync("notices.jsonl", join(dir, "notices.jsonl"));
    assert.match(
      refusal(() => M.appendNotice(dir, { kind: "ceiling", date: "2026-12-01" })),
      /ELOOP/,
    );
    const s = json("status", dir);
    assert.equal(s.status, 1);
    assert.equal(s.out.verdict.canStart, false);
    const p = s.out.verdict.problems.find((x) => x.what.startsWith("notices.jsonl is a symbolic link to notices.jsonl"));
    assert.ok(p, JSON.stringify(s.out.verdict.problems));
    assert.match(p.what, /cannot follow it: ELOOP\): the connector's reads and appends of it fail too \(ELOOP\)/);
    assert.doesNotMatch(p.what, /outside the journal/, "a loop leads nowhere, inside or out");
    const c = cli("check", dir);
    assert.equal(c.status, 1);
    assert.match(c.stdout, /^notices\.jsonl is a symbolic link/m);
    assert.equal(paste(s.out.verdict.next).status, 0);
    assert.equal(json("status", dir).status, 0);
  });

  test("inbox.jsonl a link to a file outside the journal that does not exist: stuck; the fix removes the link alone", () => {
    const dir = journal();
    const out = join(scratch(), "elsewhere", "inbox.jsonl");
    symlinkSync(out, join(dir, "inbox.jsonl"));
    const s = json("status", dir);
    assert.equal(s.status, 1);
    assert.equal(s.out.verdict.canStart, false);
    assert.match(
      s.out.verdict.why,
      /^inbox\.jsonl is a symbolic link to .* \(it leads nowhere\): the connector's next append makes the file where it leads/,
    );
    assert.equal(cli("check", dir).status, 1);
    assert.equal(paste(s.out.verdict.next).status, 0);
    M.appendInbox(dir, { id: "m1", at: "2026-12-01T00:00:00.000Z" });
    assert.deepEqual([...M.readInboxIds(dir)], ["m1"]);
    assert.equal(existsSync(out), false, "nothing was made outside the journal");
  });

  test("a turn record that is JSON null: named by status, check and repair as countTurnsOn refuses it; its mv keeps its bytes", () => {
    const dir = journal();
    M.writeTurn(dir, "t0", { startedAt: "2026-12-01T00:00:00.000Z" });
    writeFileSync(join(dir, "turns", "t1.json"), "null\n", { mode: 0o600 });
    const words = refusal(() => M.countTurnsOn(dir, "2026-12-01"));
    assert.match(words, /of null/);
    const s = json("status", dir);
    assert.equal(s.status, 1);
    assert.equal(s.out.verdict.state, "damaged");
    assert.equal(s.out.turns.nullRecord, "t1.json");
    assert.equal(s.out.verdict.problems[0].what, `turns/t1.json is JSON null, not a turn record; countTurnsOn refuses it ("${words}")`);
    const c = cli("check", dir);
    assert.equal(c.status, 1);
    assert.match(c.stdout, /^turns\/t1\.json: countTurnsOn refuses: .* \(the record is JSON null\)$/m);
    for (const args of [[], ["--apply"]]) {
      const r = cli("repair", dir, ...args);
      assert.equal(r.status, 1, `repair ${args}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout + r.stderr, /turns\/t1\.json is JSON null, not a turn record; countTurnsOn refuses it/);
    }
    assert.equal(readFileSync(join(dir, "turns", "t1.json"), "utf8"), "null\n", "a repair never changes it");
    assert.equal(paste(s.out.verdict.next).status, 0);
    assert.equal(readFileSync(join(dir, "t1.json.aside-null"), "utf8"), "null\n");
    assert.equal(M.countTurnsOn(dir, "2026-12-01"), 1);
    const after = json("status", dir);
    assert.equal(after.status, 0, JSON.stringify(after.out.verdict));
  });

  test("a line of inbox.jsonl that is JSON null: damaged, as readInboxIds refuses it, and named by line", () => {
    const dir = journal();
    M.appendInbox(dir, { id: "m1", at: "2026-12-01T00:00:00.000Z" });
    writeFileSync(join(dir, "inbox.jsonl"), "null\n", { flag: "a" });
    const words = refusal(() => M.readInboxIds(dir));
    assert.match(words, /of null/);
    const s = json("status", dir);
    assert.equal(s.status, 1);
    assert.equal(s.out.verdict.canStart, false, "it said ready");
    assert.equal(s.out.files["inbox.jsonl"].nullLine, 2);
    assert.equal(s.out.verdict.problems[0].what, `inbox.jsonl:2 is JSON null, not a record; readInboxIds refuses it ("${words}")`);
    const r = cli("repair", dir);
    assert.equal(r.status, 1, "not 'nothing to repair', exit 0");
    assert.match(r.stdout, /inbox\.jsonl:2 is JSON null/);
  });

  test("stuck verdicts exit 1: an owner alive whose identity cannot be verified, an owner record that does not parse", () => {
    const unknown = journal();
    // This test's own process, alive, with no start time to verify it by.
    owner(unknown, { pid: process.pid, boot: boot(), at: "2026-12-01T00:00:00.000Z" });
    assert.equal(M.ownerState(M.readPid(unknown)), "unknown");
    const u = json("status", unknown);
    assert.deepEqual([u.status, u.out.verdict.state, u.out.verdict.canStart], [1, "stuck", false]);
    const invalid = journal();
    mkdirSync(join(invalid, "run.lock"), { mode: 0o700 });
    writeFileSync(join(invalid, "run.lock", "owner.json"), "{not json", { mode: 0o600 });
    assert.equal(M.ownerState(M.readPid(invalid)), "invalid");
    const i = json("status", invalid);
    assert.deepEqual([i.status, i.out.verdict.state, i.out.verdict.canStart], [1, "stuck", false]);
    assert.match(
      refusal(() => M.writePid(invalid, process.pid)),
      /./,
      "a claim refuses it too",
    );
  });

  test("an owner record whose pid is another process now: the verdict and the lock row say the same", () => {
    const dir = journal();
    owner(dir, { pid: 1, start: "1", boot: boot(), at: "2026-12-01T00:00:00.000Z" });
    assert.equal(M.ownerState(M.readPid(dir)), "mismatch");
    const s = json("status", dir);
    assert.equal(s.out.verdict.state, "crashed");
    assert.match(s.out.verdict.why, /^the last run \(pid 1\) is gone \(its pid now belongs to another process\)/);
    assert.match(cli("status", dir).stdout, /run\.lock +mismatch +pid 1, which is another process now/);
  });

  test("a repair holding the binding is named as a repair: by status, whose next waits for it, and by recover and unlock", async () => {
    const dir = journal();
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"m1"}\n{"id":"m2","a', { mode: 0o600 });
    const repair = spawn(process.execPath, [bin, "repair", dir, "--apply"], {
      env: { ...process.env, DISCORD_JOURNAL_REPAIR_PAUSE: "held" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      await new Promise((resolve) => repair.stderr.on("data", (d) => String(d).includes("repair paused") && resolve()));
      const s = json("status", dir);
      assert.equal(s.out.lock.repair, true);
      assert.equal(s.out.lock.state, "live");
      assert.match(s.out.verdict.next, new RegExp(`^a repair holds the binding \\(pid ${repair.pid}\\) until it is done: let it finish`));
      assert.match(cli("status", dir).stdout, /a repair holds the binding until it is done/);
      for (const command of ["recover", "unlock"]) {
        const r = cli(command, dir);
        assert.notEqual(r.status, 0);
        assert.match(r.stderr, /that process is a repair \(discord-journal repair\), which holds the binding until it is done/, command);
      }
    } finally {
      repair.kill("SIGKILL");
      await new Promise((resolve) => repair.once("exit", resolve));
    }
    // Once it is gone, it is a dead owner like any other.
    assert.equal(json("status", dir).out.lock.repair, false);
  });

  test("run.lock a link that leads nowhere: every claim refuses it, unlock says it left it, and the rm pasted clears it", () => {
    const dir = journal();
    symlinkSync(join(scratch(), "nowhere"), join(dir, "run.lock"));
    assert.match(
      refusal(() => M.writePid(dir, process.pid)),
      /run\.lock exists without an owner record/,
    );
    const s = json("status", dir);
    assert.equal(s.status, 1);
    assert.match(
      s.out.verdict.why,
      /^run\.lock is a symbolic link to .*: every claim refuses it as a run\.lock without an owner record, and recover and unlock leave it/,
    );
    const u = cli("unlock", dir);
    assert.equal(u.status, 1, "it said 'no run.lock', exit 0");
    assert.match(u.stderr, /^run\.lock is a symbolic link, which unlock neither follows nor removes/);
    assert.equal(M.stopRequested(dir), true, "unlock's STOP stays, as it says");
    assert.equal(paste(s.out.verdict.next).status, 0);
    M.clearStop(dir);
    M.writePid(dir, process.pid);
    M.clearPid(dir, process.pid);
  });

  test("as root, run.lock closed to the journal's owner: judged as that owner's connector sees it, stuck until the chmod", asRoot, () => {
    const dir = nobodys();
    owner(dir, { pid: deadPid(), start: "1", boot: boot(), at: "2026-12-01T00:00:00.000Z" });
    for (const p of ["run.lock", "run.lock/owner.json"]) chownSync(join(dir, p), NOBODY, NOBODY);
    chmodSync(join(dir, "run.lock"), 0o000);
    const s = json("status", dir);
    // The owner cannot search run.lock: its readPid finds no owner record
    // (root's real uid made it an unreadable one), and its recover cannot remove it.
    assert.equal(s.out.lock.state, "absent");
    assert.deepEqual([s.status, s.out.verdict.state, s.out.verdict.canStart], [1, "stuck", false]);
    assert.match(s.out.verdict.next, new RegExp(`^\`${AS_NOBODY}chmod 700 .*/run\\.lock\`$`));
    const r = cli("recover", dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /could not remove run\.lock in .* \(EACCES\)/);
  });

  test("as root, a record file of root's with a cut line in a service's journal: given back before any repair", asRoot, () => {
    const dir = nobodys();
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"m2","a', { flag: "a" });
    chownSync(join(dir, "inbox.jsonl"), 0, 0);
    const s = json("status", dir);
    assert.equal(s.status, 1);
    assert.match(s.out.verdict.next, /^give it back to the journal's owner: `chown -h nobody: .*\/inbox\.jsonl`/);
    assert.equal(paste(s.out.verdict.next).status, 0);
    const next = json("status", dir).out.verdict.next;
    assert.match(next, /discord-journal repair .* --apply/);
    assert.equal(cli("repair", dir, "--apply").status, 0);
    assert.deepEqual([...M.readInboxIds(dir)], ["m1"]);
  });

  test("as root, a journal its owner cannot reach: repair --apply refuses and changes nothing, naming the way in", asRoot, () => {
    const dir = nobodys();
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"m2","a', { flag: "a" });
    chmodSync(join(dir, ".."), 0o700);
    const before = readFileSync(join(dir, "inbox.jsonl"));
    const r = cli("repair", dir, "--apply");
    assert.notEqual(r.status, 0);
    assert.match(
      r.stderr,
      /nobody \(uid 65534\), the journal's owner, cannot search .* \(EACCES\), on the journal's path: .*; nothing was read or changed\. `chmod o\+x /,
    );
    assert.deepEqual(readFileSync(join(dir, "inbox.jsonl")), before);
    assert.deepEqual(readdirSync(dir).sort(), ["inbox.jsonl", "turns"]);
  });

  test("a turn record that is a link out of the journal: next makes it the journal's own file with the same bytes", () => {
    const dir = journal();
    const out = join(scratch(), "t1.json");
    writeFileSync(out, `${JSON.stringify({ startedAt: "2026-12-01T00:00:00.000Z", id: "t1" }, null, 2)}\n`, { mode: 0o600 });
    symlinkSync(out, join(dir, "turns", "t1.json"));
    const s = json("status", dir);
    assert.equal(s.status, 1);
    assert.match(s.out.verdict.next, /^make it a file of the journal's own, with the same bytes: `cp \S+ \S+\.new && mv -f \S+\.new \S+`$/);
    assert.equal(paste(s.out.verdict.next).status, 0);
    // What it copied from is left whole (BusyBox's cp --remove-destination
    // wrote through the link and truncated it).
    assert.equal(readFileSync(out, "utf8"), `${JSON.stringify({ startedAt: "2026-12-01T00:00:00.000Z", id: "t1" }, null, 2)}\n`);
    assert.equal(lstatSync(join(dir, "turns", "t1.json")).isFile(), true);
    assert.deepEqual(readFileSync(join(dir, "turns", "t1.json")), readFileSync(out));
    assert.equal(M.countTurnsOn(dir, "2026-12-01"), 1);
    assert.equal(
      json("status", dir).out.verdict.problems.some((p) => p.what.includes("symbolic link")),
      false,
    );
  });

  test("the aside name for a null turn record is one that is free, so the mv pasted moves it", () => {
    const dir = journal();
    writeFileSync(join(dir, "turns", "t1.json"), "null\n", { mode: 0o600 });
    writeFileSync(join(dir, "t1.json.aside-null"), "an earlier one\n", { mode: 0o600 });
    const s = json("status", dir);
    assert.match(s.out.verdict.next, /t1\.json\.aside-null-2`/);
    assert.equal(paste(s.out.verdict.next).status, 0);
    assert.equal(existsSync(join(dir, "turns", "t1.json")), false);
    assert.equal(readFileSync(join(dir, "t1.json.aside-null"), "utf8"), "an earlier one\n");
  });

  test("an owner record its owner may only read, of a dead owner: recover clears it, so no mode blocks the start", () => {
    const dir = journal();
    owner(dir, { pid: deadPid(), start: "1", boot: boot(), at: "2026-12-01T00:00:00.000Z" });
    chmodSync(join(dir, "run.lock", "owner.json"), 0o400);
    const s = json("status", dir);
    assert.equal(s.out.verdict.state, "crashed", JSON.stringify(s.out.verdict));
    assert.equal(s.out.verdict.canStart, true);
  });

  test("run.lock a link to a dead owner's lock: judged by that record; recover removes the link alone", () => {
    const dir = journal();
    const other = join(scratch(), "other");
    mkdirSync(other);
    owner(other, { pid: deadPid(), start: "1", boot: boot(), at: "2026-12-01T00:00:00.000Z" });
    symlinkSync(join(other, "run.lock"), join(dir, "run.lock"));
    const s = json("status", dir);
    assert.equal(s.out.verdict.canStart, true, JSON.stringify(s.out.verdict));
    assert.match(s.out.verdict.problems[0].what, /the lock is judged by the owner record it leads to/);
    assert.equal(M.recover(dir), "cleared");
    assert.equal(existsSync(join(other, "run.lock", "owner.json")), true, "what the link led to stays");
  });

  test("as root, a journal directory its owner may not write in: no start, as every claim and append refuses", asRoot, () => {
    const dir = nobodys();
    chmodSync(dir, 0o500);
    const s = json("status", dir);
    assert.deepEqual([s.status, s.out.verdict.state, s.out.verdict.canStart], [1, "stuck", false]);
    assert.match(s.out.verdict.next, new RegExp(`^\`${AS_NOBODY}chmod 700 `));
    // Where there is no getent (BusyBox, a minimal container), the owner
    // is named from /etc/passwd all the same.
    const bare = spawnSync(process.execPath, [bin, "status", dir, "--json"], {
      encoding: "utf8",
      env: { ...process.env, PATH: dirname(process.execPath) },
    });
    assert.match(
      JSON.parse(bare.stdout).verdict.next,
      /^`(runuser -u nobody -- |setpriv --reuid=65534 --regid=\d+ --clear-groups -- |sudo -u nobody )chmod 700 /,
      "named, and run by whichever of runuser, setpriv and sudo that PATH has",
    );
  });

  test("check run from a clone, with no discord-journal on PATH, gives a cut line's repair once", () => {
    const dir = journal();
    M.appendInbox(dir, { id: "m1" });
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"m2"', { flag: "a" });
    const path = (process.env.PATH ?? "")
      .split(":")
      .filter((d) => !existsSync(join(d, "discord-journal")))
      .join(":");
    const r = spawnSync(process.execPath, [bin, "check", dir], { encoding: "utf8", env: { ...process.env, PATH: path } });
    assert.equal(r.status, 1, r.stderr);
    const fixes = r.stdout.split("\n").filter((l) => l.startsWith("fix:"));
    assert.equal(fixes.length, 1, r.stdout);
    assert.ok(fixes[0].startsWith(`fix: \`${bin} repair ${dir} --apply\``), fixes[0]);
    // Corruption alone (no repair given for it), and a repair's temporary file left: its repair is given.
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"m1"}\nnot json\n');
    writeFileSync(join(dir, ".repair-inbox.jsonl.tmp"), "x");
    const left = spawnSync(process.execPath, [bin, "check", dir], { encoding: "utf8", env: { ...process.env, PATH: path } });
    assert.match(left.stdout, /^fix: move each corrupt line out by hand/m);
    assert.ok(left.stdout.includes(`fix: \`${bin} repair ${dir} --apply\` removes it and finishes the repair`), left.stdout);
  });

  test("a limit on open files reached mid-read is named EMFILE, with the limit to raise, never a file to inspect", (t) => {
    const dir = journal();
    M.appendInbox(dir, { id: "m1", at: "2026-12-01T00:00:00.000Z" });
    // The lowest limit under which the runtime loads the command, and then
    // runs out inside the journal: found by trying, as runtimes differ.
    for (let n = 14; n <= 48; n++) {
      const r = spawnSync("sh", ["-c", `ulimit -n ${n} && exec "$0" "$@"`, process.execPath, bin, "status", dir, "--json"], {
        encoding: "utf8",
      });
      let s;
      try {
        s = JSON.parse(r.stdout);
      } catch {
        continue;
      }
      // Lower, the command cannot load its own modules.
      if (s.verdict === undefined) continue;
      const p = s.verdict.problems.find((x) => /\(EMFILE\)/.test(x.what));
      if (p === undefined) break;
      assert.equal(r.status, 1);
      assert.match(p.fix, /^this command may open no more files \(EMFILE: its limit, `ulimit -n`, is too low\); raise it/);
      assert.doesNotMatch(s.verdict.next, /by hand/);
      return;
    }
    t.skip("no limit on open files made the command run out inside the journal here");
  });

  test("an immutable journal directory: stop names EPERM at once, never waits it out as a lock", (t) => {
    const dir = journal();
    if (spawnSync("chattr", ["+i", dir]).status !== 0) {
      t.skip("chattr +i is not possible here (needs root and a file system with the flag)");
      return;
    }
    try {
      const r = cli("stop", dir, "maintenance");
      assert.equal(r.status, 1);
      // The real cause leads (#45); the library's words follow.
      assert.match(
        r.stderr,
        /^.* may not write in the journal directory \(EPERM\), so \.stop\.lock, .*`lsattr -d [^\n]*\n\(STOP update is locked; refusing\)/,
      );
      // It retried for 2 s before, thousands of mkdirs, as if another update held .stop.lock.
      const trace = join(scratch(), "trace");
      const traced = spawnSync("strace", ["-f", "-qq", "-e", "trace=mkdir,mkdirat", "-o", trace, process.execPath, bin, "stop", dir, "x"]);
      if (traced.error === undefined) {
        const tries = readFileSync(trace, "utf8")
          .split("\n")
          .filter((l) => l.includes(".stop.lock"));
        assert.equal(tries.length, 1, tries.slice(0, 3).join("\n"));
      }
    } finally {
      spawnSync("chattr", ["-i", dir]);
    }
  });

  test("recover on a file system out of inodes names ENOSPC, as stop and unlock do; the library's words stay", mountsTmpfs, (t) =>
    withTmpfs(t, (mnt) => {
      const dir = join(mnt, "discord", "alpha");
      M.ensureJournal(dir);
      owner(dir, { pid: deadPid(), start: "1", boot: boot(), at: "2026-12-01T00:00:00.000Z" });
      for (let i = 0; i < 50; i++) spawnSync("touch", [join(mnt, `f${i}`)]);
      const r = cli("recover", dir);
      assert.equal(r.status, 1);
      assert.match(
        r.stderr,
        /^the journal's file system has no free inodes \(ENOSPC\), so \.stop\.lock[^\n]*\n\(STOP update is locked; refusing\)/,
      );
      assert.equal(existsSync(join(dir, "run.lock")), true, "nothing was cleared");
    }),
  );
});

describe(
  "the smaller ones of #45: dates ahead of the clock, a working directory gone, a path with no binding name, a nested journal",
  addonOnly,
  () => {
    test("a delivery dated in the future is said to be, and one whose date is no date says so: never a negative age or NaN", () => {
      const dir = journal();
      const ahead = new Date(Date.now() + 3 * 86_400_000).toISOString();
      M.appendOutbox(dir, { nonce: "n1", status: "intent", at: ahead });
      M.appendOutbox(dir, { nonce: "n2", status: "intent", at: "not a date" });
      const s = json("status", dir);
      const ages = Object.fromEntries(s.out.unresolvedDeliveries.value.map((d) => [d.nonce, d.ageSeconds]));
      assert.ok(ages.n1 < -259_000, String(ages.n1));
      assert.equal(ages.n2, null);
      const text = cli("status", dir).stdout;
      assert.match(text, /^ {2}n1 {2}intent {2}since \S+ \(dated 3 days in the future\)$/m);
      assert.match(text, /^ {2}n2 {2}intent {2}since not a date \(not a date\)$/m);
      assert.doesNotMatch(text, /NaN|-\d+ s ago/);
    });

    // Deno itself refuses to start there ("could not read current working
    // directory"), before any script runs: no command of its can answer.
    const startsInDeletedCwd = process.versions.deno ? { skip: "Deno does not start in a deleted working directory" } : {};
    test("a relative path from a working directory that was deleted is a usage mistake (2), saying so", startsInDeletedCwd, () => {
      const gone = join(scratch(), "gone");
      for (const args of [
        ["status", "data/discord/alpha"],
        ["check", "--binding", "alpha"],
        ["stop", "data/discord/alpha", "--init"],
        ["demo"],
      ]) {
        const command = runFile(bin, ...args)
          .map((a) => `'${a}'`)
          .join(" ");
        const r = spawnSync("sh", ["-c", `mkdir '${gone}' && cd '${gone}' && rmdir '${gone}' && exec ${command}`], { encoding: "utf8" });
        assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(
          r.stderr,
          /^discord-journal: the working directory is gone \(it was deleted\), so the relative path \S+ leads nowhere; nothing was read or changed\. Give the journal's absolute path instead/,
        );
        assert.doesNotMatch(r.stderr, /uv_cwd/);
      }
    });

    test("stop --init on a path with no binding name names the path; a nested journal is labelled as nested, the library's label unchanged", () => {
      const r = cli("stop", "/", "--init");
      assert.equal(r.status, 2);
      assert.match(
        r.stderr,
        /--init makes a binding's journal, <data root>\/discord\/<binding>, and \/ has no binding name \(a binding name is lowercase/,
      );
      assert.doesNotMatch(r.stderr, / {2}is not/);
      const odd = cli("stop", join(scratch(), "Alpha"), "--init");
      assert.match(odd.stderr, /\/Alpha ends in Alpha, which is not a binding name/);
      const outer = journal();
      const inner = join(outer, "beta");
      const s = cli("stop", inner, "--init", "x");
      assert.equal(s.status, 0, s.stderr);
      assert.equal(s.stdout, "STOP written in the journal beta inside discord/alpha under the data root (reason: x)\n");
      assert.equal(json("status", inner).out.label, "the journal beta inside discord/alpha under the data root");
      assert.equal(json("status", outer).out.label, "discord/alpha under the data root");
      assert.equal(M.journalLabel(inner), "discord/beta under the data root");
    });
  },
);

describe("a delivery past the dedupe window (#56): a person's to tell, and resolve records what they found", addonOnly, () => {
  const ago = (s) => new Date(Date.now() - s * 1000).toISOString();
  /** The value of `family` for alpha in the metrics of the data root above `dir`. */
  const metric = (dir, family) => {
    const file = join(scratch(), "m.prom");
    assert.equal(cli("status", "--data-root", dirname(dirname(dir)), "--prometheus", file).status, 0);
    return Number(new RegExp(`^discord_journal_${family}\\{[^}]*binding="alpha"[^}]*\\} (\\S+)$`, "m").exec(readFileSync(file, "utf8"))[1]);
  };

  test("needs a hand past the window alone, names its channel, and its pasted fix resolves it, one line appended", () => {
    const dir = journal();
    M.appendOutbox(dir, { nonce: "young", status: "intent", at: ago(540), channel: "c0" });
    M.appendOutbox(dir, { nonce: "late", status: "intent", at: ago(7200), channel: "c1" });
    M.appendOutbox(dir, { nonce: "later", status: "unknown", at: ago(3600) });
    const s = json("status", dir);
    assert.equal(s.status, 1);
    assert.equal(s.out.verdict.state, "ready");
    assert.equal(s.out.verdict.canStart, true);
    assert.equal(s.out.verdict.problems.length, 1);
    assert.match(cli("status", dir).stdout, /^verdict: ready, 1 problem, can start$/m, "as the fleet's line says it");
    const [p] = s.out.verdict.problems;
    assert.match(
      p.what,
      new RegExp(
        `^delivery late \\(and 1 more\\) has had no outcome since \\S+ \\(2 h ago\\), past the 10-minute window in which Discord deduplicates a resend: .*whether it reached channel c1 is a person's to tell$`,
      ),
    );
    assert.equal(s.out.verdict.next, p.fix);
    assert.deepEqual(
      s.out.unresolvedDeliveries.value.map((d) => [d.nonce, d.channel]),
      [
        ["late", "c1"],
        ["later", null],
        ["young", "c0"],
      ],
    );
    // What pages is what the verdict names.
    assert.equal(metric(dir, "late_deliveries"), 2);
    assert.equal(metric(dir, "binding_needs_hand"), 1);
    const fleet = cli("status", "--data-root", dirname(dirname(dir)));
    assert.equal(fleet.status, 1);
    assert.match(fleet.stdout, /alpha +ready, 1 problem +delivery late \(and 1 more\) has had no outcome/);
    assert.ok(fleet.stdout.includes(`next: ${p.fix}`), fleet.stdout);

    const before = readFileSync(join(dir, "outbox.jsonl"), "utf8");
    const r = paste(p.fix);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "delivery late recorded as confirmed in outbox.jsonl\n");
    const added = readFileSync(join(dir, "outbox.jsonl"), "utf8").slice(before.length);
    assert.match(added, /^\{"nonce":"late","status":"confirmed","at":"\d{4}-\d\d-\d\dT[\d:.]+Z","resolvedBy":"operator"\}\n$/);
    assert.equal(M.readOutbox(dir).get("late").status, "confirmed");
    assert.equal(M.readOutbox(dir).get("late").intentAt, M.readOutbox(dir).get("late").intentAt);

    // The next one, then none: the young one is the connector's own.
    const second = json("status", dir).out.verdict;
    assert.match(second.problems[0].what, /^delivery later has had no outcome since \S+ \(60 min ago\), past/);
    assert.match(second.problems[0].what, /whether it reached its channel/);
    assert.equal(cli("resolve", dir, "--nonce", "later", "--as", "refused").status, 0);
    const done = json("status", dir);
    assert.equal(done.status, 0);
    assert.deepEqual(done.out.verdict.problems, []);
    assert.equal(done.out.verdict.next, null);
    assert.equal(metric(dir, "late_deliveries"), 0);
  });

  test("resolve refuses a nonce it does not know and an outcome already recorded, writing nothing; the same outcome again is no mistake", () => {
    const dir = journal();
    M.appendOutbox(dir, { nonce: "a", status: "intent", at: ago(7200) });
    M.appendOutbox(dir, { nonce: "a", status: "refused", at: ago(7100), error: "Missing Access" });
    const bytes = readFileSync(join(dir, "outbox.jsonl"));
    const unknown = cli("resolve", dir, "--nonce", "b", "--as", "confirmed");
    assert.equal(unknown.status, 1);
    assert.equal(
      unknown.stderr,
      `discord-journal: outbox.jsonl has no delivery with nonce b: \`discord-journal status ${dir}\` lists the deliveries without an outcome\n`,
    );
    const other = cli("resolve", dir, "--nonce", "a", "--as", "confirmed");
    assert.equal(other.status, 1);
    assert.match(
      other.stderr,
      /^discord-journal: delivery a is refused already \(at \S+\): an outcome is never replaced, so nothing was written\n$/,
    );
    const same = json("resolve", dir, "--nonce", "a", "--as", "refused");
    assert.equal(same.status, 0);
    assert.equal(same.out.written, null);
    assert.deepEqual(readFileSync(join(dir, "outbox.jsonl")), bytes);
    // Within the window the delivery is the connector's own.
    M.appendOutbox(dir, { nonce: "young", status: "intent", at: ago(120) });
    const young = cli("resolve", dir, "--nonce", "young", "--as", "confirmed");
    assert.equal(young.status, 1);
    assert.match(
      young.stderr,
      /^discord-journal: delivery young was sent 2 min ago, within the 10-minute window .*it is the connector's own, so nothing was written\n$/,
    );
    assert.equal(M.readOutbox(dir).get("young").status, "intent");
    assert.equal(cli("resolve", dir, "--nonce", "a").status, 2, "--as is required");
    assert.equal(cli("resolve", dir, "--nonce", "a", "--as", "sent").status, 2, "--as takes confirmed or refused");
  });

  test("a nonce that reads as an option is pasted as a value; an outbox linked out of the journal is neither read nor written", () => {
    const dir = journal();
    M.appendOutbox(dir, { nonce: "-V", status: "intent", at: ago(7200) });
    // Typed as two words, it is the option's value too, not the version.
    const typed = cli("resolve", dir, "--nonce", "-V", "--as", "bogus");
    assert.equal(typed.status, 2);
    assert.match(typed.stderr, /--as/);
    const fix = json("status", dir).out.verdict.next;
    assert.ok(fix.includes("--nonce=-V --as confirmed"), fix);
    const r = paste(fix);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(M.readOutbox(dir).get("-V").status, "confirmed");
    const other = journal({ name: "beta" });
    M.appendOutbox(other, { nonce: "x", status: "intent", at: ago(7200) });
    const theirs = readFileSync(join(other, "outbox.jsonl"));
    rmSync(join(dir, "outbox.jsonl"));
    symlinkSync(join(other, "outbox.jsonl"), join(dir, "outbox.jsonl"));
    const linked = cli("resolve", dir, "--nonce", "x", "--as", "confirmed");
    assert.equal(linked.status, 1);
    assert.match(
      linked.stderr,
      /^discord-journal: outbox\.jsonl is a symbolic link out of the journal, which resolve neither reads nor writes through/,
    );
    assert.doesNotMatch(linked.stderr, /"x"|intent/);
    assert.deepEqual(readFileSync(join(other, "outbox.jsonl")), theirs);
  });

  const hasBash = spawnSync("bash", ["-c", "true"]).status === 0 ? {} : { skip: "no bash here (a BusyBox root)" };
  test(
    "a nonce with a backtick and an invisible character: the text's next, pasted into bash as it reads, resolves that nonce",
    hasBash,
    () => {
      const dir = journal();
      const nonce = "n`1\u200b";
      M.appendOutbox(dir, { nonce, status: "intent", at: ago(7200) });
      const text = cli("status", dir).stdout;
      const next = /^next: (.*)$/m.exec(text)[1];
      assert.doesNotMatch(next, /[^\x20-\x7e]/, "the advice is printable ASCII");
      const command = /`([^`]+)`/.exec(next)[1];
      assert.ok(command.includes(" --as confirmed"), command);
      // Its bytes, not \\u: a shell without a UTF-8 locale reads them the same.
      const r = spawnSync("bash", ["-c", command], { encoding: "utf8", env: { ...process.env, LC_ALL: "C" } });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(M.readOutbox(dir).get(nonce).status, "confirmed");
    },
  );

  test("a nonce no shell argument can carry (a NUL) gets no command, which would name another delivery", () => {
    const dir = journal();
    M.appendOutbox(dir, { nonce: "n\u00001", status: "intent", at: ago(7200) });
    M.appendOutbox(dir, { nonce: "n", status: "intent", at: ago(3600) });
    const { next } = json("status", dir).out.verdict;
    assert.doesNotMatch(next, /resolve/);
    assert.match(next, /holds a NUL or a lone surrogate, which no command's argument can carry/);
  });

  test("a journal's relative path that begins with - is printed ./-…, so that each next pasted where the operator stands takes it as a path", () => {
    const top = scratch();
    const dir = join(top, "-data", "alpha");
    M.ensureJournal(dir);
    chmodSync(dir, 0o755);
    M.requestStop(dir, "maintenance");
    M.appendOutbox(dir, { nonce: "n1", status: "intent", at: ago(7200) });
    const status = () => {
      const r = spawnSync(process.execPath, [bin, "status", "--json", "--", "-data/alpha"], { cwd: top, encoding: "utf8" });
      return JSON.parse(r.stdout).verdict;
    };
    const pasted = [];
    for (let v = status(); v.next !== null; v = status()) {
      assert.ok(pasted.length < 3, `${v.next} again`);
      const command = /`([^`]+)`/.exec(v.next)[1];
      assert.ok(command.includes(" ./-data/alpha"), command);
      const r = spawnSync("sh", ["-c", command], { cwd: top, encoding: "utf8" });
      assert.equal(r.status, 0, `${command}: ${r.stderr}`);
      pasted.push(command.split(" ")[0]);
    }
    assert.deepEqual(pasted.slice(0, 2), ["chmod", "rm"]);
    assert.equal(pasted.length, 3);
    assert.equal(M.readOutbox(dir).get("n1").status, "confirmed");
    // A leading = is quoted: zsh would look it up as a command.
    mkdirSync(join(top, "=data", "alpha", "turns"), { recursive: true, mode: 0o755 });
    const r = spawnSync(process.execPath, [bin, "status", "--json", "=data/alpha"], { cwd: top, encoding: "utf8" });
    assert.equal(JSON.parse(r.stdout).verdict.next, "`chmod 700 '=data/alpha'`");
  });

  test("under a crashed run's lock or a brake, the delivery is listed and the state's own next stands", () => {
    const dir = journal();
    M.appendOutbox(dir, { nonce: "late", status: "intent", at: ago(7200) });
    owner(dir, { pid: deadPid(), start: "1", boot: boot(), at: ago(7300) });
    const crashed = json("status", dir);
    assert.equal(crashed.status, 1);
    assert.equal(crashed.out.verdict.state, "crashed");
    assert.match(crashed.out.verdict.next, /^the owner is gone: `discord-journal recover /);
    assert.match(crashed.out.verdict.problems.at(-1).what, /^delivery late has had no outcome/);
    M.requestStop(dir, "operator");
    const braked = json("status", dir).out.verdict;
    assert.equal(braked.state, "braked");
    assert.match(braked.next, /^the owner is gone: `discord-journal unlock /);
    assert.equal(braked.problems.length, 1);
  });
});
