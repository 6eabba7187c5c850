// The command never shows what the journal's owner could not read (#33).
// Run as root on a journal another user owns, every command reads with that
// user's rights, before it opens anything inside the journal, so a link
// from the journal to a file only root may read shows none of its bytes;
// and a record file or turn record that leads out of the journal is named
// as a link, its bytes not shown, whoever runs the command. The faults are
// real: symbolic links, a root-only file, a journal of `nobody`. The
// command is this package's own, so these tests skip against another
// implementation; the root ones skip by name without root.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, lchownSync, linkSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { M, addonOnly, journal, scratch, bin, cli } from "./helpers.mjs";
import { RECORD_NAMES } from "./record-files.mjs";

const NOBODY = 65534;
const rootOnly =
  process.getuid?.() !== 0
    ? { skip: "needs root: the command acts as the journal's owner only when run as root" }
    : spawnSync("getent", ["passwd", String(NOBODY)]).status !== 0
      ? { skip: "needs the user nobody (uid 65534) in the user database" }
      : {};
// Deno can set neither a process's groups nor initgroups: the command
// refuses there instead of reading with root's groups (the last test).
const asRoot = process.versions.deno ? { skip: "Deno cannot set a process's groups: the command refuses (tested below)" } : rootOnly;
const onDeno = process.versions.deno ? rootOnly : { skip: "the refusal of a runtime that cannot set its groups: Deno's" };

// A file only root may read: lines that are not JSON, and one that is a
// record each reader would show (a nonce, a reason, an owner). Every byte
// of it carries the word, so any leak is seen.
const SECRET = [
  "secret-line-1 root-only",
  JSON.stringify({ nonce: "secret-nonce", status: "intent", at: "2026-12-01T00:00:00.000Z" }),
  JSON.stringify({ id: "secret-id", at: "2026-12-01T00:00:00.000Z", reason: "secret-reason", outcome: "secret-outcome" }),
  JSON.stringify({ pid: 1, start: "secret-start", boot: "secret-boot", at: "secret-at" }),
].join("\n");

/** A root-only file holding SECRET, in a root-only directory. */
function secretFile() {
  const dir = join(scratch(), "root-only");
  mkdirSync(dir, { mode: 0o700 });
  const p = join(dir, "secret");
  writeFileSync(p, SECRET + "\n", { mode: 0o600 });
  return p;
}

/** A journal `nobody` owns, with a record in every file, its parents open to all. */
function nobodysJournal() {
  const top = scratch();
  chmodSync(top, 0o755);
  const dir = join(top, "discord", "alpha");
  M.ensureJournal(dir);
  chmodSync(join(top, "discord"), 0o755);
  M.appendInbox(dir, { id: "m1", at: "2026-12-01T00:00:00.000Z" });
  M.appendOutbox(dir, { nonce: "n1", status: "intent", at: "2026-12-01T00:00:00.000Z" });
  M.appendDrop(dir, { reason: "r", at: "2026-12-01T00:00:00.000Z" });
  M.appendAdmission(dir, { id: "m1", at: "2026-12-01T00:00:00.000Z" });
  M.appendNotice(dir, { kind: "ceiling", date: "2026-12-01" });
  M.appendReload(dir, { outcome: "applied", at: "2026-12-01T00:00:00.000Z" });
  M.writeTurn(dir, "t1", { startedAt: "2026-12-01T00:00:00.000Z" });
  return dir;
}

/** Gives the journal and everything in it to `nobody`, links included. */
function giveAway(dir) {
  const all = (p) => {
    lchownSync(p, NOBODY, NOBODY);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st?.isDirectory() && !p.endsWith("root-only")) for (const n of readdirSync(p)) all(join(p, n));
  };
  all(dir);
}

/** Every command's text and JSON output (stdout and stderr) on `dir`, as one string each. */
function outputs(dir) {
  const runs = [];
  for (const command of ["status", "check", "repair", "recover"]) {
    for (const json of [false, true]) {
      const r = cli(command, dir, ...(json ? ["--json"] : []));
      runs.push({ command, json, status: r.status, out: r.stdout, err: r.stderr });
    }
  }
  return runs;
}

/** Asserts that no output of `runs` holds any byte of the secret file. */
function noSecret(runs) {
  for (const r of runs) {
    for (const text of [r.out, r.err])
      assert.doesNotMatch(text, /secret-(line|nonce|id|reason|outcome|start|boot|at)/, `${r.command}${r.json ? " --json" : ""}: ${text}`);
  }
}

const statusOf = (runs) => JSON.parse(runs.find((r) => r.command === "status" && r.json).out);
const checkOf = (runs) => runs.find((r) => r.command === "check" && !r.json).out;

describe("run as root on another user's journal, the command reads as that user (#33)", addonOnly, () => {
  for (const name of RECORD_NAMES) {
    test(`${name} a link to a root-only file: no output holds a byte of it, and the verdict names the link`, asRoot, () => {
      const dir = nobodysJournal();
      const secret = secretFile();
      const p = join(dir, name);
      spawnSync("rm", [p]);
      symlinkSync(secret, p);
      giveAway(dir);
      const runs = outputs(dir);
      noSecret(runs);
      const s = statusOf(runs);
      // As the owner's connector sees it: no start, as every append refuses.
      assert.equal(s.verdict.canStart, false, JSON.stringify(s.verdict));
      assert.ok(
        s.verdict.problems.some((x) =>
          x.what.startsWith(
            `${name} is a symbolic link to ${secret} (nobody (uid 65534) cannot follow it: EACCES): the connector's reads and appends of it fail too`,
          ),
        ),
        JSON.stringify(s.verdict.problems),
      );
      // The fix never changes the file the link leads to (chown or chmod would follow it).
      for (const x of s.verdict.problems) assert.doesNotMatch(x.fix, /ch(own|mod) (?!-h )\S* ?\S*\/${name.replace(".", "\\.")}/, x.fix);
      assert.match(checkOf(runs), new RegExp(`^${name.replace(".", "\\.")} is a symbolic link to ${secret}`));
      assert.match(runs[0].err, /^discord-journal: acting as nobody \(uid 65534\), the journal's owner/);
      // Nothing was changed where the link leads.
      assert.equal(statSync(secret).uid, 0);
    });
  }

  test("a turn record, STOP and run.lock/owner.json as links to a root-only file: no byte of it shown, each link named", asRoot, () => {
    const dir = nobodysJournal();
    const secret = secretFile();
    symlinkSync(secret, join(dir, "turns", "t2.json"));
    symlinkSync(secret, join(dir, "STOP"));
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    symlinkSync(secret, join(dir, "run.lock", "owner.json"));
    giveAway(dir);
    const runs = outputs(dir);
    noSecret(runs);
    const whats = statusOf(runs).verdict.problems.map((x) => x.what);
    assert.ok(
      whats.some((w) => w.startsWith(`turns/t2.json is a symbolic link to ${secret} (nobody (uid 65534) cannot follow it: EACCES)`)),
      whats.join("\n"),
    );
    assert.ok(
      whats.some((w) => w.startsWith(`STOP is a symlink to ${secret}, outside the journal`)),
      whats.join("\n"),
    );
    assert.ok(
      whats.some((w) => w.startsWith(`run.lock/owner.json is a symbolic link to ${secret}`)),
      whats.join("\n"),
    );
    assert.match(checkOf(runs), new RegExp(`^turns/t2\\.json is a symbolic link to ${secret}`, "m"));
  });

  test("the journal's directory a link, with a record file linked out: the same, and the directory's link named", asRoot, () => {
    const real = nobodysJournal();
    const secret = secretFile();
    spawnSync("rm", [join(real, "inbox.jsonl")]);
    symlinkSync(secret, join(real, "inbox.jsonl"));
    giveAway(real);
    const top = scratch();
    chmodSync(top, 0o755);
    mkdirSync(join(top, "discord"), { mode: 0o755 });
    const dir = join(top, "discord", "alpha");
    symlinkSync(real, dir);
    const runs = outputs(dir);
    noSecret(runs);
    const s = statusOf(runs);
    assert.equal(s.journalLink, real);
    assert.ok(s.verdict.problems.some((x) => x.what.startsWith(`inbox.jsonl is a symbolic link to ${secret}`)));
    assert.match(checkOf(runs), new RegExp(`^the journal's directory, ${dir}, is a symbolic link to ${real}`));
  });

  test("a link another user made to a root-only journal: read as that user, so nothing of it is listed or shown", asRoot, () => {
    // A journal of root's, which the link's maker cannot read.
    const hidden = join(scratch(), "secret-journal");
    mkdirSync(join(hidden, "turns"), { recursive: true, mode: 0o700 });
    writeFileSync(join(hidden, "inbox.jsonl"), SECRET + "\n", { mode: 0o600 });
    writeFileSync(join(hidden, "secret-name"), "", { mode: 0o600 });
    const top = scratch();
    chmodSync(top, 0o755);
    mkdirSync(join(top, "discord"), { mode: 0o755 });
    chownSync(join(top, "discord"), NOBODY, NOBODY);
    const dir = join(top, "discord", "alpha");
    symlinkSync(hidden, dir);
    lchownSync(dir, NOBODY, NOBODY);
    const runs = outputs(dir);
    noSecret(runs);
    for (const r of runs) {
      assert.equal(r.status, 1, `${r.command}: ${r.out}${r.err}`);
      assert.doesNotMatch(r.out + r.err, /secret-name/);
    }
    assert.match(runs[0].err, /nobody \(uid 65534\), who owns the symbolic link/);
  });
});

describe("run as root, the command reads with no more rights than whoever controls the journal's names (#33)", addonOnly, () => {
  test("a root-owned journal a group may write in: read with that group alone, so a link it swaps in shows nothing", asRoot, () => {
    const top = scratch();
    chmodSync(top, 0o755);
    const dir = join(top, "discord", "grp");
    M.ensureJournal(dir);
    chmodSync(join(top, "discord"), 0o755);
    chownSync(dir, 0, NOBODY);
    chmodSync(dir, 0o2770);
    symlinkSync(secretFile(), join(dir, "inbox.jsonl"));
    const runs = outputs(dir);
    noSecret(runs);
    assert.match(runs[0].err, /acting as nobody \(uid 65534\), with group 65534 alone, as that group may write in /);
    // The fix for the link is never a root cp that would copy what it leads to.
    for (const x of statusOf(runs).verdict.problems) assert.doesNotMatch(x.fix, /(^|`)cp /);
  });

  test("a user with no entry in the user database is given no group, not the journal directory's", asRoot, () => {
    const top = scratch();
    chmodSync(top, 0o755);
    mkdirSync(join(top, "discord"), { mode: 0o755 });
    // A group-readable directory of root's, which uid 4242 could read only through that group.
    const grp = join(scratch(), "group-only");
    mkdirSync(grp, { mode: 0o750 });
    chmodSync(join(grp, ".."), 0o755);
    chownSync(grp, 0, 4242);
    writeFileSync(join(grp, "secret-name.json"), "{}", { mode: 0o640 });
    chownSync(join(grp, "secret-name.json"), 0, 4242);
    const dir = join(top, "discord", "alpha");
    mkdirSync(dir, { mode: 0o770 });
    chownSync(dir, 4242, 4242);
    symlinkSync(grp, join(dir, "turns"));
    lchownSync(join(dir, "turns"), 4242, 4242);
    const runs = outputs(dir);
    noSecret(runs);
    for (const r of runs) assert.doesNotMatch(r.out + r.err, /secret-name/, `${r.command}: ${r.out}${r.err}`);
    assert.match(runs[0].err, /acting as uid 4242, the journal's owner \(its uid, and no group/);
  });

  test("a record file that is a hard link to a root-only file: no byte shown, and no chown or chmod offered", asRoot, () => {
    const dir = nobodysJournal();
    const secret = secretFile();
    spawnSync("rm", [join(dir, "drops.jsonl")]);
    giveAway(dir);
    // Made by root after the journal was given away: the file stays root's.
    linkSync(secret, join(dir, "drops.jsonl"));
    const runs = outputs(dir);
    noSecret(runs);
    const problems = statusOf(runs).verdict.problems;
    for (const x of problems) assert.doesNotMatch(x.fix, /\bch(own|mod)\b[^`]*drops\.jsonl/, x.fix);
    assert.ok(
      problems.some((x) => x.what.startsWith("drops.jsonl has another name (a hard link)")),
      JSON.stringify(problems),
    );
    assert.equal(statSync(secret).uid, 0);
  });

  test("the journal's path given relative: status shows the journal's own path, not its parent's", asRoot, () => {
    const dir = nobodysJournal();
    giveAway(dir);
    const r = spawnSync(process.execPath, [bin, "status", "discord/alpha", "--json"], { cwd: join(dir, "..", ".."), encoding: "utf8" });
    assert.equal(JSON.parse(r.stdout).journal, dir);
  });

  test("stop --init in a data root another user owns: the journal is made as that user, and braked", asRoot, () => {
    const top = scratch();
    chmodSync(top, 0o755);
    mkdirSync(join(top, "data", "discord"), { recursive: true, mode: 0o755 });
    chownSync(join(top, "data"), NOBODY, NOBODY);
    chownSync(join(top, "data", "discord"), NOBODY, NOBODY);
    const r = cli("stop", "--init", "--data-root", join(top, "data"), "--binding", "delta", "maintenance");
    assert.equal(r.status, 0, r.stderr);
    const dir = join(top, "data", "discord", "delta");
    for (const p of [dir, join(dir, "turns"), join(dir, "STOP")]) assert.equal(statSync(p).uid, NOBODY, p);
    assert.equal(M.stopRequested(dir), true);
  });
});

describe("where the command cannot become the journal's owner, it reads nothing (#33)", addonOnly, () => {
  test("run as root under a runtime that cannot set its groups: every command refuses, naming the user and why", onDeno, () => {
    const dir = nobodysJournal();
    const secret = secretFile();
    spawnSync("rm", [join(dir, "inbox.jsonl")]);
    symlinkSync(secret, join(dir, "inbox.jsonl"));
    giveAway(dir);
    const runs = outputs(dir);
    noSecret(runs);
    for (const r of runs) {
      assert.equal(r.status, 1, `${r.command}: ${r.out}${r.err}`);
      assert.match(
        r.json ? JSON.parse(r.out).error : r.err,
        /read with the rights of nobody \(uid 65534\), the journal's owner, and this command cannot act as that user \(this runtime cannot set its groups/,
      );
    }
  });
});

describe("a record file that leads out of the journal shows none of its bytes, whoever runs the command (#33)", addonOnly, () => {
  test("turns/ and run.lock as links out of the journal: each named, nothing below them shown", () => {
    const dir = journal();
    const elsewhere = scratch();
    mkdirSync(join(elsewhere, "turnsdir"));
    writeFileSync(join(elsewhere, "turnsdir", "secret-name.json"), "secret-line-1\n");
    mkdirSync(join(elsewhere, "lockdir"));
    writeFileSync(join(elsewhere, "lockdir", "owner.json"), JSON.stringify({ pid: 1, start: "secret-start", boot: "secret-boot" }));
    spawnSync("rmdir", [join(dir, "turns")]);
    symlinkSync(join(elsewhere, "turnsdir"), join(dir, "turns"));
    symlinkSync(join(elsewhere, "lockdir"), join(dir, "run.lock"));
    const runs = ["status", "check"].flatMap((c) =>
      [cli(c, dir), cli(c, dir, "--json")].map((r) => ({ command: c, out: r.stdout, err: r.stderr })),
    );
    noSecret(runs);
    for (const r of runs) assert.doesNotMatch(r.out + r.err, /secret-name|pid 1\b/, `${r.command}: ${r.out}`);
    const whats = JSON.parse(runs[1].out).verdict.problems.map((x) => x.what);
    assert.ok(
      whats.some((w) => w.startsWith(`turns is a symbolic link to ${join(elsewhere, "turnsdir")}, outside the journal`)),
      whats.join("\n"),
    );
    assert.ok(
      whats.some((w) => w.startsWith(`run.lock is a symbolic link to ${join(elsewhere, "lockdir")}, outside the journal`)),
      whats.join("\n"),
    );
  });

  test("a corrupt line in a file outside the journal, reached through inbox.jsonl: placed, named as a link, never quoted", () => {
    const top = scratch();
    const dir = join(top, "discord", "alpha");
    M.ensureJournal(dir);
    const elsewhere = join(top, "elsewhere.jsonl");
    writeFileSync(join(top, "elsewhere.jsonl"), '{"id":"m1"}\nsecret-line-1 outside the journal\n', { mode: 0o600 });
    symlinkSync(elsewhere, join(dir, "inbox.jsonl"));
    const s = JSON.parse(cli("status", dir, "--json").stdout);
    const c = cli("check", dir);
    const cj = cli("check", dir, "--json");
    const r = cli("repair", dir);
    noSecret([
      { command: "status", out: JSON.stringify(s), err: "" },
      { command: "check", out: c.stdout, err: c.stderr },
      { command: "check --json", out: cj.stdout, err: cj.stderr },
      { command: "repair", out: r.stdout, err: r.stderr },
    ]);
    assert.equal(s.files["inbox.jsonl"].firstBadLine.line, 2);
    assert.ok(s.verdict.problems.some((x) => x.what.startsWith(`inbox.jsonl is a symbolic link to ${elsewhere}, outside the journal:`)));
    assert.match(c.stdout, new RegExp(`^inbox\\.jsonl is a symbolic link to ${elsewhere}, outside the journal`));
    assert.match(
      c.stdout,
      /^inbox\.jsonl:2: not valid JSON, corrupt \(byte offset 12, 33 bytes\): \(not shown: a link out of the journal\)$/m,
    );
  });
});
