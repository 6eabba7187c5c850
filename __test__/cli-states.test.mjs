// The command in states where it used to part from the connector or give a
// false reason (#34), each made real and each a test of its own: the brake
// is what stopRequested says; a stuck journal exits 1; the fix for a
// directory at STOP keeps the brake; a file the owner cannot read is given
// back with the owner's name, or only its mode where it is already the
// owner's; a reason that would make STOP unverifiable is refused; what is
// read from the journal cannot drive the terminal; a usage mistake with
// --json answers in JSON; the problem count counts every bad line; a path
// that loops or is too long is named as such. The command is this
// package's own, so these tests skip against another implementation.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { AS_NOBODY, M, addonOnly, journal, modulePath, mountsTmpfs, runModule, scratch, withTmpfs, bin, cli, json } from "./helpers.mjs";

describe("the command agrees with the connector, and its advice keeps the brake (#34)", addonOnly, () => {
  test("STOP as a dangling link: no brake, as stopRequested says; the link named on top", () => {
    const dir = journal();
    symlinkSync("/nonexistent/flag", join(dir, "STOP"));
    assert.equal(M.stopRequested(dir), false);
    const s = json("status", dir);
    assert.equal(s.out.stop.present, false);
    assert.notEqual(s.out.verdict.state, "braked");
    assert.equal(s.out.verdict.canStart, true, "writePid stands, so the verdict says it can start");
    assert.ok(s.out.verdict.problems.some((p) => p.what.startsWith("STOP is a symlink")));
    assert.equal(s.status, 1, "the link needs a hand");
    // And the connector agrees: a claim stands.
    M.writePid(dir, process.pid);
    M.clearPid(dir, process.pid);
  });

  test("an unlock over an operator's brake: the verdict still names who braked it, which rm STOP lifts too", () => {
    const dir = journal();
    M.requestStop(dir, "operator alice: flood");
    assert.equal(cli("unlock", dir).status, 0);
    const v = json("status", dir).out.verdict;
    assert.equal(v.state, "braked");
    assert.match(v.why, /^STOP is on: unlock at \S+, on since operator alice: flood at \S+$/);
  });

  test("a run.lock with no owner record is what recover clears: crashed, can start, as the library's recover does", () => {
    const dir = journal();
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    const s = json("status", dir);
    assert.equal(s.out.verdict.state, "crashed");
    assert.equal(s.out.verdict.canStart, true);
    assert.equal(
      s.out.verdict.next,
      `no owner record: a start crashed before publishing it, or one in progress withdraws once STOP is written: \`discord-journal recover ${dir}\``,
    );
    assert.equal(s.status, 0, "the supervisor's recover clears it: nothing needs a hand");
    // And the connector agrees: its supervised start clears the lock and claims.
    assert.equal(M.recover(dir), "cleared");
    M.writePid(dir, process.pid);
    M.clearPid(dir, process.pid);
  });

  test("a run.lock with an unreadable owner record under a brake exits 1: lifting the brake would not be enough", () => {
    const dir = journal();
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    writeFileSync(join(dir, "run.lock", "owner.json"), "{not json", { mode: 0o600 });
    M.requestStop(dir, "maintenance");
    const s = json("status", dir);
    assert.equal(s.out.verdict.state, "braked");
    assert.ok(
      s.out.verdict.problems.some((p) =>
        p.what.startsWith("run.lock has an owner record that cannot be read: recover and every claim refuse it"),
      ),
    );
    assert.equal(s.status, 1);
    M.clearStop(dir);
    assert.throws(() => M.recover(dir), /owner record that cannot be read/);
  });

  test("damage with a lock a repair refuses: the lock's advice comes first, so pasting it moves on", () => {
    const dir = journal();
    M.appendInbox(dir, { id: "a" });
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"cu', { flag: "a" });
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    const before = json("status", dir);
    assert.equal(before.out.verdict.state, "damaged");
    assert.match(before.out.verdict.next, /`discord-journal recover /);
    assert.equal(cli("repair", dir, "--apply").status, 3, "the repair refuses a lock with no owner record");
    assert.equal(cli("recover", dir).status, 0);
    assert.match(json("status", dir).out.verdict.next, /`discord-journal repair .* --apply`/);
    assert.equal(cli("repair", dir, "--apply").status, 0);
    assert.equal(json("status", dir).out.verdict.state, "ready");
  });

  test("a directory at STOP: the fix moves it aside and writes a brake of its own, and says that mv alone lifts it", () => {
    const dir = journal();
    mkdirSync(join(dir, "STOP"), { mode: 0o700 });
    const s = json("status", dir);
    assert.equal(s.out.stop.present, true);
    const p = s.out.verdict.problems.find((x) => x.what.startsWith("STOP is present but cannot be read"));
    assert.ok(p, JSON.stringify(s.out.verdict.problems));
    assert.equal(
      p.fix,
      `a directory stands where STOP belongs: \`mv ${dir}/STOP ${dir}/STOP.aside && discord-journal stop ${dir} REASON\` replaces it with a brake of its own (\`mv\` alone lifts the brake)`,
    );
    // Pasted (with a reason), the brake is still on.
    const fix = /`([^`]+)`/
      .exec(p.fix)[1]
      .replace("REASON", "maintenance")
      .replace("&& discord-journal ", `&& ${process.execPath} ${bin} `);
    assert.equal(spawnSync("sh", ["-c", fix]).status, 0);
    assert.equal(M.stopRequested(dir), true);
    assert.deepEqual(
      M.readStop(dir).map((l) => l.reason),
      ["maintenance"],
    );
  });

  test("a record file its owner cannot read: its mode alone where it is the owner's, never a chown with a placeholder", () => {
    const dir = journal();
    M.appendInbox(dir, { id: "m1" });
    const root = process.getuid?.() === 0;
    if (root) {
      // Run as root, the command reads as the journal's owner: nobody here.
      for (const p of [join(dir, ".."), dir, join(dir, "turns"), join(dir, "inbox.jsonl")]) chownSync(p, 65534, 65534);
      chmodSync(join(dir, ".."), 0o755);
    }
    chmodSync(join(dir, "inbox.jsonl"), 0o000);
    const s = json("status", dir);
    if (process.versions.deno && root) return; // Deno refuses to act as another user (cli-owner.test.mjs)
    const p = s.out.verdict.problems.find((x) => x.what.startsWith("every read of inbox.jsonl refuses"));
    assert.ok(p, JSON.stringify(s.out));
    // Where root ran it, the chmod runs as the owner: it follows a link, and
    // the owner may have swapped one in by the time it is pasted (#33).
    // (A root with no user database, as in a bare chroot, names it by number.)
    const as = root ? AS_NOBODY : "";
    assert.match(p.fix, new RegExp(`^\`${as}chmod 600 ${dir}/inbox\\.jsonl\`$`));
    for (const x of s.out.verdict.problems) assert.doesNotMatch(x.fix, /<owner>/);
  });

  test("a STOP reason over 4 KiB is refused (exit 2) and nothing is written", () => {
    const dir = journal();
    const r = cli("stop", dir, "x".repeat(4097));
    assert.equal(r.status, 2);
    assert.match(r.stderr, /the reason is 4097 bytes; at most 4096 are taken/);
    assert.equal(existsSync(join(dir, "STOP")), false);
    assert.equal(cli("stop", dir, "x".repeat(4096)).status, 0);
  });

  test("control characters read from the journal are escaped in text: a reason or a nonce cannot clear the verdict", () => {
    const dir = journal();
    M.requestStop(dir, "\u001b[2J\rall clear\u009b");
    M.appendOutbox(dir, { nonce: "n\u001b]0;title\u0007", status: "intent", at: "2026-12-01T00:00:00.000Z" });
    const r = cli("status", dir);
    assert.doesNotMatch(r.stdout, /[^\n\x20-\x7e\u00a0-\uffff]/, "no raw control character but newlines");
    assert.match(r.stdout, /\\u001b\[2J\\u000dall clear\\u009b/);
    assert.match(r.stdout, /n\\u001b\]0;title\\u0007/);
    // JSON keeps the values as read.
    assert.equal(json("status", dir).out.stop.value[0].reason, "\u001b[2J\rall clear\u009b");
  });

  test("a usage mistake with --json is answered in JSON, exit 2", () => {
    for (const args of [
      ["status", "--bogus"],
      ["statu", "x"],
      ["stop", "a", "b", "c"],
    ]) {
      const r = cli(...args, "--json");
      assert.equal(r.status, 2, args.join(" "));
      assert.equal(r.stderr, "");
      const out = JSON.parse(r.stdout);
      assert.equal(out.ok, false);
      assert.equal(out.exitCode, 2);
      assert.equal(typeof out.error, "string");
    }
  });

  test("check counts every bad line: 3,000 bad lines are 3000 problems, 1,000 named", () => {
    const dir = journal();
    writeFileSync(join(dir, "drops.jsonl"), "bad\n".repeat(3000), { mode: 0o600 });
    const r = cli("check", dir);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /^drops\.jsonl: and 2000 more bad lines$/m);
    assert.match(r.stdout, /^3000 problems$/m);
  });

  test("a path that loops, or is too long, is named as what it is, not as a permission", () => {
    const top = scratch();
    symlinkSync(join(top, "b"), join(top, "a"));
    symlinkSync(join(top, "a"), join(top, "b"));
    const loop = cli("status", join(top, "a", "discord", "alpha"));
    assert.equal(loop.status, 1);
    assert.match(loop.stderr, /\(ELOOP\): symbolic links on its path lead round in a loop/);
    const long = cli("status", join(top, "x".repeat(300)));
    assert.equal(long.status, 1);
    assert.match(long.stderr, /\(ENAMETOOLONG\): the path, or a name on it, is longer than the system takes/);
    for (const r of [loop, long]) assert.doesNotMatch(r.stderr, /cannot be searched/);
    assert.deepEqual(readdirSync(top).sort(), ["a", "b"]);
  });

  test("a repair that stops on a later file says which files it mended before", () => {
    const dir = journal();
    // A line cut short mid-file in each record file: both are set aside;
    // then a cut turn record whose name leaves no room for its quarantine's
    // (ENAMETOOLONG), so the repair stops after the record files are done.
    const cut = '{"id":"m1"}\n{"id":"m2","at":"20\n{"id":"m3"}\n';
    writeFileSync(join(dir, "inbox.jsonl"), cut, { mode: 0o600 });
    writeFileSync(join(dir, "drops.jsonl"), cut, { mode: 0o600 });
    const long = `${"t".repeat(240)}.json`;
    writeFileSync(join(dir, "turns", long), '{"startedAt":"20', { mode: 0o600 });
    const r = cli("repair", dir, "--apply");
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /could not set aside turns\/t+\.json \(ENAMETOOLONG\)/);
    assert.match(r.stderr, /\ninbox\.jsonl was repaired before it stopped \(its damaged parts set aside in inbox\.jsonl\.aside-[^)]+\)/);
    assert.match(r.stderr, /\ndrops\.jsonl was repaired before it stopped \(its damaged parts set aside in drops\.jsonl\.aside-[^)]+\)/);
    for (const name of ["inbox.jsonl", "drops.jsonl"]) assert.equal(readFileSync(join(dir, name), "utf8"), '{"id":"m1"}\n{"id":"m3"}\n');
    assert.equal(readFileSync(join(dir, "turns", long), "utf8"), '{"startedAt":"20');
  });

  test("a repair that stops on corruption after clearing a dead owner's lock says it cleared it", () => {
    const dir = journal();
    // An owner that claimed the binding and died.
    const died = spawnSync(
      process.execPath.endsWith("deno") ? process.execPath : process.execPath,
      runModule(
        `const p = ${JSON.stringify(modulePath)}; const M = p.endsWith(".mjs") ? await import(p) : (await import("node:module")).createRequire(import.meta.url)(p); M.writePid(${JSON.stringify(dir)}, process.pid);`,
      ).slice(1),
    );
    assert.equal(died.status, 0, String(died.stderr));
    writeFileSync(join(dir, "drops.jsonl"), '{"id":"d1"}\nnot json at all\n{"id":"d2"}\n', { mode: 0o600 });
    const r = cli("repair", dir, "--apply");
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /run\.lock of pid \d+, which is gone, was cleared to hold the binding during the repair\nno file was changed: 1 line is not an interrupted append/,
    );
    assert.doesNotMatch(r.stderr, /nothing was changed/);
  });

  // A small tmpfs of its own, made full or read-only for real.
  test(
    "a full or read-only file system is named as such by stop and unlock, and a STOP a failed stop left is called a brake",
    mountsTmpfs,
    (t) =>
      withTmpfs(t, (mnt) => {
        const dir = join(mnt, "discord", "alpha");
        M.ensureJournal(dir);
        // Out of blocks: STOP is made, its line cannot be written.
        spawnSync("sh", ["-c", `head -c 400000 /dev/zero > ${mnt}/fill`]);
        const full = cli("stop", dir, "maintenance");
        assert.equal(full.status, 1);
        assert.match(
          full.stderr,
          /^could not write STOP in discord\/alpha under the data root \(ENOSPC\)\nSTOP exists \(0 bytes\), so the brake is on all the same/,
        );
        assert.equal(M.stopRequested(dir), true);
        spawnSync("rm", [join(dir, "STOP"), join(mnt, "fill")]);
        // Out of inodes: .stop.lock cannot be made; the library calls that locked, the command names it.
        for (let i = 0; i < 50; i++) spawnSync("touch", [join(mnt, `f${i}`)]);
        for (const command of ["stop", "unlock"]) {
          const r = cli(command, dir);
          assert.equal(r.status, 1, command);
          assert.match(
            r.stderr,
            /^the journal's file system has no free inodes \(ENOSPC\), so \.stop\.lock[^\n]*\n\(STOP update is locked; refusing\)/,
            command,
          );
          assert.doesNotMatch(r.stderr, /gone now/);
        }
        spawnSync("sh", ["-c", `rm -f ${mnt}/f*`]);
        // Read-only.
        assert.equal(spawnSync("mount", ["-o", "remount,ro", mnt]).status, 0);
        for (const command of ["stop", "unlock"]) {
          const r = cli(command, dir);
          assert.match(r.stderr, /^the journal's file system is mounted read-only \(EROFS\), so \.stop\.lock/, `${command}: ${r.stderr}`);
        }
      }),
  );

  test("what a stopped repair left (.repair-*.tmp) is listed with its size, and repair --apply removes it", () => {
    const dir = journal();
    writeFileSync(join(dir, ".repair-inbox.jsonl.tmp"), "x".repeat(1234), { mode: 0o600 });
    const s = json("status", dir);
    const p = s.out.verdict.problems.find((x) =>
      x.what.startsWith("a repair that was stopped left its unfinished copy: .repair-inbox.jsonl.tmp (1234 bytes)"),
    );
    assert.ok(p, JSON.stringify(s.out.verdict.problems));
    assert.equal(s.status, 1);
    assert.equal(cli("repair", dir, "--apply").status, 0);
    assert.equal(existsSync(join(dir, ".repair-inbox.jsonl.tmp")), false);
    assert.equal(json("status", dir).status, 0);
  });

  test("a journal its owner cannot write in (0500) with a cut line: next is the chmod, not a repair that would refuse", () => {
    const dir = journal();
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"m1"}\n{"id":"m2","at":"20\n{"id":"m3"}\n', { mode: 0o600 });
    chmodSync(dir, 0o500);
    try {
      const s = json("status", dir);
      assert.equal(s.out.verdict.state, "damaged");
      assert.match(s.out.verdict.next, /chmod 700 /);
    } finally {
      chmodSync(dir, 0o700);
    }
  });

  // A power loss can leave gigabytes of zeros (often a hole): the command
  // counts them, never holds them, and the repair sets them aside as a hole
  // of the same length, which reads back the same bytes (#34).
  test("a 1.5 GB zero run: status, check and repair in bounded memory, set aside as a hole", () => {
    const dir = journal();
    M.appendDrop(dir, { id: "kept" });
    M.appendDrop(dir, { id: "whole" });
    const file = join(dir, "drops.jsonl");
    const before = statSync(file).size;
    const size = 1.5 * 2 ** 30;
    truncateSync(file, size);
    const peak = scratch();
    writeFileSync(
      join(peak, "peak.cjs"),
      // The process's own high-water mark (VmHWM), not getrusage's maxRSS:
      // Linux carries a forked parent's peak over into its child's maxRSS
      // (across the exec), and under Bun, whose test runner holds every
      // file in one large process, the command reported 1.2 GB it never
      // had (#48).
      `process.on("exit", () => { const fs = require("fs"); let kb; try { kb = /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"))[1]; } catch { kb = process.resourceUsage().maxRSS; } fs.writeSync(2, "\\npeak " + kb + "\\n"); });`,
    );
    // Deno takes Node's --require after its own `run -A`.
    const runtime = process.versions.deno ? ["run", "-A"] : [];
    const run = (...args) => {
      const r = spawnSync(process.execPath, [...runtime, "--require", join(peak, "peak.cjs"), bin, ...args], {
        encoding: "utf8",
        timeout: 120_000,
      });
      return { ...r, peakMiB: Number(/peak (\d+)/.exec(r.stderr)?.[1]) / 1024 };
    };
    const s = run("status", dir, "--json");
    const bad = JSON.parse(s.stdout).files["drops.jsonl"].firstBadLine;
    assert.deepEqual([bad.line, bad.damage, bad.length], [3, "zeros", size - before]);
    const c = run("check", dir);
    assert.equal(c.status, 1);
    const r = run("repair", dir, "--apply");
    assert.equal(r.status, 0, r.stderr);
    for (const [name, x] of Object.entries({ status: s, check: c, repair: r }))
      assert.ok(x.peakMiB < 400, `${name}: peak ${x.peakMiB} MiB for a ${size} byte zero run`);
    assert.equal(readFileSync(file, "utf8"), '{"id":"kept"}\n{"id":"whole"}\n');
    const aside = readdirSync(dir).find((n) => n.startsWith("drops.jsonl.aside-"));
    const st = statSync(join(dir, aside));
    assert.equal(st.size, size - before, "every zero byte set aside");
    assert.ok(st.blocks * 512 < 16 * 2 ** 20, `a hole, not ${st.blocks * 512} bytes written`);
    assert.deepEqual(M.readDrops(dir), [{ id: "kept" }, { id: "whole" }]);
  });

  test("stop --init and demo refuse a path they cannot create, naming it, at once", () => {
    for (const args of [
      ["stop", "/proc/discord/alpha", "--init"],
      ["demo", "/proc/discord/demo"],
    ]) {
      const r = cli(...args);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /^discord-journal: cannot make the (demo's )?journal at \/proc\/discord\/\w+ \(ENOENT\)/);
      assert.doesNotMatch(r.stderr, /mkdir '/, "Node's own error, with its host path, is not the message");
    }
  });
});
