// The operator's command in the moments it exists for: a journal it cannot
// read (another user, via setpriv), files that are not files (a FIFO, a
// link to /dev/zero), a file past V8's string limit, a directory that is
// not a journal, and the stuck states that each need one command: an empty
// STOP, a leftover .stop.lock, a STOP of another user, modes, a refused
// unlock. Each fault is made real. The command is this package's own, so
// these tests skip against another implementation.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { M, addonOnly, forOthers, journal, liveOwner, scratch, runFile, bin, cli, json } from "./helpers.mjs";
import { RECORD_NAMES, readersOf } from "./record-files.mjs";

// Another user: root drops to nobody with setpriv (util-linux).
const root = process.getuid?.() === 0;
const setpriv = root && spawnSync("setpriv", ["--version"]).status === 0;
const asNobody = setpriv ? {} : { skip: "needs root and setpriv(1) to run as another user" };
const NOBODY = 65534;
// The command as another user loads it: from a copy it can reach where the
// checkout lies under a directory closed to it (#36).
const cliAs = (uid, ...args) =>
  spawnSync(
    "setpriv",
    [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...runFile(join(forOthers(), "bin", "discord-journal.js"), ...args)],
    { encoding: "utf8" },
  );

/** A journal that another process can reach: its parents searchable by all. */
function openJournal() {
  const top = scratch();
  chmodSync(top, 0o755);
  const dir = join(top, "discord", "alpha");
  M.ensureJournal(dir);
  chmodSync(join(top, "discord"), 0o755);
  return dir;
}

describe("the command never gives a false all-clear", addonOnly, () => {
  test(
    "a root-owned 0700 journal with an operator's STOP, run as another user: every command refuses, naming path, error, owner and user",
    asNobody,
    () => {
      const dir = openJournal();
      M.requestStop(dir, "operator");
      for (const command of ["status", "check", "recover", "unlock", "stop"]) {
        const r = cliAs(NOBODY, command, dir);
        assert.equal(r.status, 1, `${command}: ${r.stdout}${r.stderr}`);
        assert.equal(r.stdout, "", `${command} printed a state it could not read`);
        assert.match(r.stderr, new RegExp(`cannot read the journal at ${dir} \\(EACCES\\): it belongs to root \\(uid 0\\) with mode 0700`));
        assert.match(r.stderr, /this command runs as (nobody \()?uid 65534/);
        assert.match(r.stderr, new RegExp(`Run it as its owner: sudo discord-journal ${command} ${dir}`));
        assert.doesNotMatch(r.stderr, /\.stop\.lock/);
      }
      const j = cliAs(NOBODY, "status", dir, "--json");
      assert.equal(j.status, 1);
      const out = JSON.parse(j.stdout);
      assert.equal(out.ok, false);
      assert.equal(out.exitCode, 1);
      assert.match(out.error, /EACCES/);
      // Nothing was changed: the operator's brake is the only line.
      assert.deepEqual(
        M.readStop(dir).map((l) => l.reason),
        ["operator"],
      );
    },
  );

  test("the command a refusal gives to run as the owner keeps the words typed after the journal", asNobody, () => {
    const dir = openJournal();
    for (const [args, again] of [
      [["stop", dir, "--", "-maint window"], `stop ${dir} -- '-maint window'`],
      [["repair", dir, "--apply", "--missing-ok"], `repair ${dir} --apply --missing-ok`],
      [["recover", dir, "--missing-ok"], `recover ${dir} --missing-ok`],
      [["resolve", dir, "--nonce=-V", "--as", "refused"], `resolve ${dir} --nonce=-V --as refused`],
    ]) {
      const r = cliAs(NOBODY, ...args);
      assert.equal(r.status, 1, r.stderr);
      assert.ok(r.stderr.trimEnd().endsWith(`Run it as its owner: sudo discord-journal ${again}`), r.stderr);
    }
    assert.deepEqual(M.readStop(dir), []);
  });

  // Deno cannot set a process's groups, so the command refuses there (cli-owner.test.mjs).
  const acts = process.versions.deno
    ? { skip: "Deno cannot set a process's groups: the command refuses to act as another user" }
    : asNobody;
  test("run as root on a journal another user owns, stop and unlock write as that user, so its service can read STOP", acts, () => {
    const dir = openJournal();
    for (const p of [join(dir, ".."), dir, join(dir, "turns")]) chownSync(p, NOBODY, NOBODY);
    const r = cli("unlock", dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /acting as (nobody \()?uid 65534/);
    assert.equal(statSync(join(dir, "STOP")).uid, NOBODY);
    // The service (nobody) can now read its brake and recover refuses it as a brake, not EACCES.
    const rec = cliAs(NOBODY, "recover", dir);
    assert.equal(rec.status, 3, rec.stderr);
    assert.match(rec.stderr, /STOP is present in discord\/alpha under the data root; the brake is on/);
  });

  test("status names a STOP that another user owns, with the chown that gives it back", acts, () => {
    const dir = openJournal();
    for (const p of [dir, join(dir, "turns")]) chownSync(p, NOBODY, NOBODY);
    // What a root-run journal.mjs unlock leaves: STOP of root in a journal of nobody.
    M.requestStop(dir, "unlock");
    const mine = cliAs(NOBODY, "recover", dir);
    assert.equal(mine.status, 1, "the service's recover cannot read root's STOP");
    const s = json("status", dir);
    assert.equal(s.status, 1);
    const p = s.out.verdict.problems.find((x) => x.what.startsWith("STOP belongs to root"));
    assert.ok(p, JSON.stringify(s.out.verdict.problems));
    // -h: pasted after the service swapped STOP for a link, it changes the link, not where it leads.
    assert.match(p.fix, new RegExp(`^\`chown -h (nobody|65534): ${dir}/STOP\`$`));
  });
});

describe("status and check read through the addon: files that are not files, and one past V8's string limit", addonOnly, () => {
  test("a FIFO as drops.jsonl and a link to /dev/zero as inbox.jsonl: answered, never hanging, each named", () => {
    const dir = journal();
    spawnSync("mkfifo", ["-m", "600", join(dir, "drops.jsonl")]);
    assert.ok(statSync(join(dir, "drops.jsonl")).isFIFO());
    symlinkSync("/dev/zero", join(dir, "inbox.jsonl"));
    // A command that hung on the FIFO or read /dev/zero without end would
    // be killed by cli()'s timeout (a bound of the promise that it ends),
    // and fail below.
    const s = json("status", dir);
    const c = cli("check", dir);
    assert.equal(s.status, 1);
    assert.equal(s.out.verdict.state, "unreadable");
    assert.equal(s.out.verdict.canStart, null);
    assert.deepEqual(s.out.files["drops.jsonl"], { refused: "could not read drops.jsonl (EFTYPE)" });
    assert.deepEqual(s.out.files["inbox.jsonl"], { refused: "could not read inbox.jsonl (EFTYPE)" });
    const fixes = s.out.verdict.problems.map((p) => p.fix).join("\n");
    assert.match(fixes, /`rm \S+drops\.jsonl` \(a FIFO holds no record/);
    assert.match(fixes, /`rm \S+inbox\.jsonl` \(a symlink to a character device holds no record/);
    assert.equal(c.status, 1);
    assert.match(c.stdout, /^inbox\.jsonl: could not read inbox\.jsonl \(EFTYPE\)\ndrops\.jsonl: could not read drops\.jsonl \(EFTYPE\)\n/);
  });

  test("a 600 MB inbox.jsonl, past V8's longest string: status and check answer, as readInboxIds does", () => {
    const dir = journal();
    const fd = openSync(join(dir, "inbox.jsonl"), "w", 0o600);
    const line = `${JSON.stringify({ id: "1", at: "2026-12-01T00:00:00.000Z", text: "x".repeat(4000) })}\n`;
    const chunk = Buffer.from(line.repeat(256));
    let size = 0;
    while (size < 600_000_000) size += writeSync(fd, chunk);
    closeSync(fd);
    assert.equal(M.readInboxIds(dir).size, 1);
    const s = json("status", dir);
    assert.equal(s.status, 0, s.stderr);
    assert.equal(s.out.files["inbox.jsonl"].bytes, size);
    assert.equal(s.out.files["inbox.jsonl"].lines, size / line.length);
    const c = cli("check", dir);
    assert.equal(c.status, 0, c.stderr);
    assert.equal(c.stdout, "every record file and turn record reads\n");
    rmSync(join(dir, "inbox.jsonl"));
  });
});

// The readers' files and their readers (record-files.mjs), and a line every
// reader reads without a fault.
const FILES = RECORD_NAMES;
const GOOD = '{"id":"a","nonce":"n","status":"intent","at":"2026-12-01T00:00:00.000Z","kind":"k","date":"d","outcome":"applied"}';
const READERS = Object.fromEntries(FILES.map((name) => [name, readersOf(M, name, "2026-12-01", "other")]));
// Odd lines: BOMs, CR, whitespace JSON allows and does not, NUL, invalid
// UTF-8, raw U+2028, cut lines, zero runs, glued records, null.
const ODD = [
  Buffer.from(`\uFEFF${GOOD}`),
  Buffer.from(`\uFEFF\uFEFF${GOOD}`),
  Buffer.from(`${GOOD}\r`),
  Buffer.from(`${GOOD}\r\r`),
  Buffer.from(` \t${GOOD} `),
  Buffer.from(`\u00a0${GOOD}`),
  Buffer.from(`\v${GOOD}`),
  Buffer.from(`\f${GOOD}`),
  Buffer.from('{"id":"a\u0000"}'),
  Buffer.from(`${GOOD}\u0000`),
  Buffer.alloc(7),
  Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
  Buffer.concat([Buffer.from([0xff]), Buffer.from(GOOD)]),
  Buffer.from('{"id":"a\u2028b"}'),
  Buffer.from('{"id":"m2","at":"2026-'),
  Buffer.concat([Buffer.from('{"id":"m2","at":"2026-'), Buffer.alloc(40)]),
  Buffer.from(`${GOOD}${GOOD}`),
  Buffer.from("null"),
  Buffer.from("[]"),
  Buffer.from('"a string"'),
  Buffer.from("1e400"),
  Buffer.from("{bad"),
];

/** The refusal each reader of `name` makes, or null for each that answers. */
const refusals = (dir, name) =>
  READERS[name].map((f) => {
    try {
      f(dir);
      return null;
    } catch (e) {
      return e.message;
    }
  });

describe("check agrees with every reader", addonOnly, () => {
  test("odd lines in every record file: check lists exactly the lines the readers refuse", () => {
    for (const odd of ODD) {
      const dir = journal();
      for (const name of FILES)
        writeFileSync(join(dir, name), Buffer.concat([Buffer.from(`${GOOD}\n`), odd, Buffer.from(`\n${GOOD}\n`)]), { mode: 0o600 });
      const c = json("check", dir);
      const shown = JSON.stringify(odd.toString("latin1"));
      for (const name of FILES) {
        const refused = refusals(dir, name).filter((r) => r !== null);
        const listed = c.out.problems.filter((p) => p.file === name);
        assert.equal(
          listed.length > 0,
          refused.length > 0,
          `${name} ${shown}: readers ${JSON.stringify(refused)}, check ${JSON.stringify(listed)}`,
        );
        if (refused.some((r) => r === `${name}:2: not valid JSON`)) {
          assert.equal(listed[0].line, 2, `${name} ${shown}`);
          assert.ok(listed[0].damage, `${name} ${shown}`);
        }
        // Status names the same file, never as sound.
        if (refused.length) assert.ok(c.status === 1 && JSON.stringify(c.out).includes(name));
      }
    }
  });

  test("a cut line and a run of zeros are named as such; corruption as corruption", () => {
    const dir = journal();
    writeFileSync(join(dir, "inbox.jsonl"), Buffer.concat([Buffer.from(`${GOOD}\n{"id":"m2","at":"2026-\n{bad\n`), Buffer.alloc(16)]));
    const c = json("check", dir);
    assert.deepEqual(
      c.out.problems.map((p) => [p.line, p.damage]),
      [
        [2, "cut"],
        [3, "invalid"],
        [4, "zeros"],
      ],
    );
    const s = json("status", dir);
    assert.match(
      s.out.verdict.problems[0].what,
      /^inbox\.jsonl:2 is cut short \(an append interrupted by a crash or a kill\) \(and 2 more bad lines\)/,
    );
  });

  test("turn records: empty, cut and zero records are listed exactly where listTurns refuses", () => {
    const texts = ["", "{", '{\n  "id": "t"', "\u0000\u0000", "{}\u0000", '\uFEFF{"id":"t"}', '{"id":"t"}\n\n'];
    for (const text of texts) {
      const dir = journal();
      writeFileSync(join(dir, "turns", "t.json"), text, { mode: 0o600 });
      let refused = null;
      try {
        M.listTurns(dir);
      } catch (e) {
        refused = e.message;
      }
      const c = json("check", dir);
      const listed = c.out.problems.filter((p) => p.file.startsWith("turns"));
      assert.equal(listed.length > 0, refused !== null, `${JSON.stringify(text)}: ${refused} / ${JSON.stringify(listed)}`);
    }
  });
});

describe("only a journal is a journal", addonOnly, () => {
  test("a data root, the discord directory and a directory of other files: every command exits 2 and creates nothing", () => {
    const dir = journal();
    const discord = join(dir, "..");
    const dataRoot = join(discord, "..");
    const other = scratch();
    writeFileSync(join(other, "hosts"), "x");
    mkdirSync(join(other, "ssl"));
    for (const d of [dataRoot, discord, other]) {
      const before = readdirSync(d).sort();
      for (const command of ["status", "check", "stop", "unlock", "recover", "repair"]) {
        const r = command === "repair" ? cli(command, d, "--apply") : cli(command, d);
        assert.equal(r.status, 2, `${command} ${d}: ${r.stderr}`);
        assert.match(
          r.stderr,
          /is not a binding's journal: it holds .* but none of turns\/, the \*\.jsonl record files, STOP or run\.lock; nothing was read or changed/,
        );
        assert.deepEqual(readdirSync(d).sort(), before, `${command} changed ${d}`);
      }
    }
  });

  test("an empty directory, a binding that has not run: recover answers clean and status ready", () => {
    const dir = join(scratch(), "fresh");
    mkdirSync(dir, { mode: 0o700 });
    const r = cli("recover", dir);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "clean\n");
    const s = json("status", dir);
    assert.equal(s.status, 0);
    assert.deepEqual([s.out.verdict.state, s.out.verdict.canStart], ["ready", true]);
  });

  test("--binding is a binding name; stop refuses recover's reason; stop --init brakes a binding that has not run", () => {
    const top = scratch();
    for (const name of ["../..", "..", "Alpha", "a/b", ""]) {
      const r = cli("stop", "--data-root", top, "--binding", name, "maintenance");
      assert.equal(r.status, 2, name);
      assert.match(r.stderr, /is not a binding name/);
    }
    assert.deepEqual(readdirSync(top), []);
    const dir = journal();
    const r = cli("stop", dir, "recover");
    assert.equal(r.status, 2);
    assert.match(r.stderr, /the reason "recover" is recover's own/);
    assert.equal(existsSync(join(dir, "STOP")), false);
    const fresh = join(top, "discord", "beta");
    assert.equal(cli("stop", fresh, "maintenance").status, 2, "no journal without --init");
    const init = cli("stop", fresh, "maintenance", "--init");
    assert.equal(init.status, 0, init.stderr);
    assert.deepEqual(
      M.readStop(fresh).map((l) => l.reason),
      ["maintenance"],
    );
    assert.equal(cli("stop", join(top, "Bad"), "--init").status, 2);
  });
});

describe("every stuck state named with its one fix", addonOnly, () => {
  test("an empty STOP is a brake: status says so and how to lift it; recover refuses it", () => {
    const dir = journal();
    writeFileSync(join(dir, "STOP"), "", { mode: 0o600 });
    assert.equal(M.stopRequested(dir), true);
    const s = json("status", dir);
    assert.equal(s.out.verdict.state, "braked");
    assert.equal(s.out.verdict.canStart, false);
    assert.match(s.out.verdict.why, /STOP is on: it is empty/);
    assert.match(s.out.verdict.next, /`rm \S+\/STOP` when the binding should run again/);
    assert.equal(s.out.stop.present, true);
    assert.match(cli("status", dir).stdout, /\nSTOP {6}on {4}empty \(a brake all the same\)\n/);
    assert.equal(cli("recover", dir).status, 3);
  });

  test("a leftover .stop.lock: proved left by the STOP mark, status and a refused stop give the repair that removes it", () => {
    const dir = journal();
    mkdirSync(join(dir, ".stop.lock"), { mode: 0o700 });
    const s = json("status", dir);
    assert.equal(s.status, 1);
    const p = s.out.verdict.problems.find((x) => x.what.startsWith(".stop.lock was left"));
    assert.ok(p, JSON.stringify(s.out.verdict.problems));
    assert.equal(p.fix, `\`discord-journal repair ${dir} --apply\` removes it, proving again that no STOP update runs`);
    const r = cli("stop", dir, "maintenance");
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /^STOP update is locked; refusing\n\.stop\.lock was left \(made \d+ s ago\) by a STOP update that did not finish: none runs now\. `discord-journal repair \S+ --apply` removes it, proving that again; then run the command again\n$/,
    );
    // Without turns/ too: the proof is the STOP mark on the journal
    // directory itself (#44), and the repair removes it.
    const bare = journal({ bare: true });
    mkdirSync(join(bare, ".stop.lock"), { recursive: true, mode: 0o700 });
    const b = json("status", bare).out.verdict.problems.find((x) => x.what.startsWith(".stop.lock was left"));
    assert.ok(b, "proved left without turns/");
    assert.equal(cli("repair", bare, "--apply").status, 0);
    assert.equal(existsSync(join(bare, ".stop.lock")), false, "the repair removed what it proved left");
    // With a dead owner's lock, recover cannot clear it: stuck, not crashed.
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    writeFileSync(join(dir, "run.lock", "owner.json"), JSON.stringify({ pid: 4_194_000, start: "5", boot: M.bootId() }), { mode: 0o600 });
    assert.equal(json("status", dir).out.verdict.state, "stuck");
  });

  test(
    "no all-clear on what the service may not read: a record file of another user, a leftover .stop.lock under recover's own STOP; STOP as a FIFO is replaced, not lifted",
    asNobody,
    () => {
      const dir = journal();
      M.appendInbox(dir, { id: "1" });
      chownSync(join(dir, "inbox.jsonl"), NOBODY, NOBODY);
      const s = json("status", dir).out.verdict;
      assert.deepEqual([s.state, s.canStart], ["stuck", false]);
      assert.match(s.why, /^inbox\.jsonl belongs to nobody \(uid 65534\), not to root/);
      const own = journal();
      M.requestStop(own, M.RECOVER_REASON);
      mkdirSync(join(own, ".stop.lock"), { mode: 0o700 });
      const t = json("status", own).out.verdict;
      assert.deepEqual([t.state, t.canStart], ["stuck", false]);
      assert.equal(cli("recover", own).status, 1, "recover refuses, as the verdict says");
      const fifo = journal();
      spawnSync("mkfifo", ["-m", "600", join(fifo, "STOP")]);
      const fix = json("status", fifo)
        .out.verdict.problems.map((p) => p.fix)
        .join("\n");
      assert.match(
        fix,
        /`rm \S+\/STOP && discord-journal stop \S+ REASON` replaces it with a brake of its own \(`rm \S+\/STOP` alone lifts the brake\)/,
      );
    },
  );

  test("files and directories with other modes are named with their chmod", () => {
    const dir = journal();
    M.appendInbox(dir, { id: "1" });
    chmodSync(join(dir, "inbox.jsonl"), 0o644);
    chmodSync(join(dir, "turns"), 0o755);
    M.requestStop(dir, "operator");
    chmodSync(join(dir, "STOP"), 0o640);
    const problems = json("status", dir).out.verdict.problems;
    const fixes = problems.map((p) => p.fix);
    assert.ok(fixes.includes(`\`chmod 600 ${join(dir, "inbox.jsonl")}\``), fixes.join("\n"));
    assert.ok(fixes.includes(`\`chmod 700 ${join(dir, "turns")}\``));
    assert.ok(problems.some((p) => p.what.startsWith("STOP has mode 0640, not 0600 (processing stops then refuse")));
  });

  test("unlock refused while a live owner holds the binding says that the STOP it wrote stays", async () => {
    const dir = journal();
    const child = await liveOwner(dir);
    try {
      const u = cli("unlock", dir);
      assert.equal(u.status, 1);
      assert.match(
        u.stderr,
        /^refusing to unlock: the connector is running \(pid \d+\).*\nunlock wrote STOP before it looked at the lock, and STOP stays: no new turn starts\. `rm \S+\/STOP` lifts it, with any brake that was on before it\n$/,
      );
      assert.equal(M.stopRequested(dir), true);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("conventions", addonOnly, () => {
  test("--json on every command: its result, or its refusal with the exit code", () => {
    const dir = journal();
    assert.deepEqual(json("check", dir).out, { ok: true, exitCode: 0, problems: [] });
    const stop = json("stop", dir, "maintenance");
    assert.equal(stop.status, 0);
    assert.deepEqual(Object.keys(stop.out), ["ok", "exitCode", "stop", "reason"]);
    const rec = json("recover", dir);
    assert.equal(rec.status, 3);
    assert.deepEqual(rec.out, {
      ok: false,
      exitCode: 3,
      error: "STOP is present in discord/alpha under the data root; the brake is on. Remove it to run",
    });
    const un = json("unlock", dir);
    assert.deepEqual(un.out, { ok: true, exitCode: 0, cleared: false, owner: null, stop: true });
    M.clearStop(dir);
    assert.deepEqual(json("recover", dir).out, { ok: true, exitCode: 0, result: "clean" });
    const usage = json("status", join(dir, "missing"));
    assert.equal(usage.status, 2);
    assert.equal(usage.out.ok, false);
    const demo = json("demo", join(scratch(), "demo"));
    assert.equal(demo.out.status.verdict.state, "braked");
  });

  test("a binary that does not load, and a demo path that cannot be made: one line each, no stack", () => {
    const r = spawnSync(process.execPath, [bin, "status", journal()], {
      encoding: "utf8",
      env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: join(scratch(), "missing.node") },
    });
    assert.equal(r.status, 1);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(
      r.stderr,
      /^discord-journal: no native binding loads on \S+: reinstall the package, or build the binary from source with `npx discord-journal-build`/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    const top = scratch();
    writeFileSync(join(top, "file"), "");
    const d = cli("demo", join(top, "file", "demo"));
    assert.ok(d.status === 1 || d.status === 2, d.stderr);
    assert.equal(d.stderr.trim().split("\n").length, 1, d.stderr);
    assert.doesNotMatch(d.stderr, /\n\s+at /);
  });
});
