// The operator's command, run as a real process: status, check, stop,
// unlock, recover and demo, and its exit status for each kind of outcome
// (0 done, 1 bad lines or a refusal with exit code 1, 2 a usage mistake,
// 3 a brake). The command is this package's own, so these tests skip when
// the suite runs against another implementation.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, addonOnly, deadPid, journal, liveOwner, scratch, runFile } from "./helpers.mjs";

const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const cli = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8" });
const cliIn = (cwd, ...args) => spawnSync(process.execPath, [bin, ...args], { cwd, encoding: "utf8" });
const ESC = "\u001b[";

// #57: in a clone the advice `discord-journal unlock …` was not on PATH
// (exit 127). The command names itself as the operator can run it there.
describe("every printed command runs where the operator stands", addonOnly, () => {
  const crashed = () => {
    const dir = journal();
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    writeFileSync(join(dir, "run.lock", "owner.json"), JSON.stringify({ pid: deadPid(), start: "5", boot: M.bootId() }) + "\n", {
      mode: 0o600,
    });
    return dir;
  };
  const bare = dirname(process.execPath);
  const next = (cwd, dir) =>
    JSON.parse(
      spawnSync(process.execPath, [bin, "status", dir, "--json"], { cwd, encoding: "utf8", env: { ...process.env, PATH: bare } }).stdout,
    ).verdict.next;

  test("no discord-journal on PATH: the path of the command itself, which runs as printed", () => {
    const dir = crashed();
    const said = next(scratch(), dir);
    assert.ok(said.includes(`\`${bin} recover ${dir}\``), said);
    if (!process.versions.bun && !process.versions.deno) {
      const command = /`([^`]+)`/.exec(said)[1];
      const r = spawnSync("sh", ["-c", command], { encoding: "utf8", env: { ...process.env, PATH: `${bare}:/usr/bin:/bin` } });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), "cleared");
    }
  });

  test("what the journal holds is shown as it is: a STOP reason naming the command is not rewritten", () => {
    const dir = journal();
    M.requestStop(dir, "discord-journal stop by alice");
    const r = spawnSync(process.execPath, [bin, "status", dir, "--json"], {
      cwd: scratch(),
      encoding: "utf8",
      env: { ...process.env, PATH: bare },
    });
    const s = JSON.parse(r.stdout);
    assert.equal(s.stop.value[0].reason, "discord-journal stop by alice");
    const text = spawnSync(process.execPath, [bin, "status", dir], {
      cwd: scratch(),
      encoding: "utf8",
      env: { ...process.env, PATH: bare },
    }).stdout;
    assert.ok(text.includes("discord-journal stop by alice"), text);
  });

  test("in a clone: the demo's next runs as printed, and the status it asks for again", () => {
    const cwd = scratch();
    const env = { ...process.env, PATH: bare };
    const demo = spawnSync(process.execPath, [bin, "demo", "data/discord/demo"], { cwd, encoding: "utf8", env });
    assert.equal(demo.status, 0, demo.stderr);
    assert.ok(demo.stdout.includes(`\`${bin} status data/discord/demo\``), demo.stdout);
    if (process.versions.bun || process.versions.deno) return;
    const said = next(cwd, "data/discord/demo");
    for (const command of [...said.matchAll(/`([^`]+)`/g)].map((m) => m[1]).filter((c) => c.startsWith(bin))) {
      const r = spawnSync("sh", ["-c", command], { cwd, encoding: "utf8", env: { ...process.env, PATH: `${bare}:/usr/bin:/bin` } });
      assert.equal(r.status, 0, `${command}: ${r.stderr}`);
    }
  });

  test("in a project that installed it: npx --no-install, which never asks a registry", () => {
    const dir = crashed();
    const project = scratch();
    mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
    symlinkSync(bin, join(project, "node_modules", ".bin", "discord-journal"));
    const said = next(project, dir);
    assert.ok(said.includes(`\`npx --no-install discord-journal recover ${dir}\``), said);
    assert.doesNotMatch(said, /npx --no-install npx/);
  });
});

describe("discord-journal command", addonOnly, () => {
  test("demo leaves a braked journal whose owner is gone, says what to run, and runs twice", () => {
    const cwd = scratch();
    const first = cliIn(cwd, "demo");
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /a connector ran in data\/discord\/demo;/);
    // The brake and the lock come first, before the files.
    assert.match(first.stdout, /\nSTOP {6}on {4}operator alice: replies looping in #general; braked to look at \d{4}-\d\d-\d\dT/);
    assert.match(first.stdout, /\nrun\.lock {2}dead {2}pid \d+, which is gone\n/);
    assert.ok(first.stdout.indexOf("run.lock") < first.stdout.indexOf("files:"));
    assert.match(
      first.stdout,
      /next: the owner is gone: `discord-journal unlock data\/discord\/demo`, then `rm data\/discord\/demo\/STOP`/,
    );
    assert.match(first.stdout, /inbox\.jsonl +5 lines +\d+ bytes/);
    assert.match(first.stdout, /drops\.jsonl +1 line +\d+ bytes/);
    assert.match(first.stdout, /turns\/ +3 records/);
    assert.match(first.stdout, /n3 {2}intent {2}since \S+ \(40 min ago\)/);
    assert.match(first.stdout, /admissions {2}3\n {2}turns {7}3\n {2}notices {5}ceiling/);
    assert.doesNotMatch(first.stdout, /\b1 lines\b/);
    assert.equal(first.stdout.includes(ESC), false, "no colour when not a terminal");

    const dir = join(cwd, "data", "discord", "demo");
    const owner = M.readPid(dir);
    assert.equal(M.ownerState(owner), "dead");
    assert.equal(M.pidAlive(owner.pid), false);
    assert.equal(JSON.parse(readFileSync(join(dir, "run.lock", "owner.json"), "utf8")).pid, owner.pid);
    assert.deepEqual(
      M.readStop(dir).map((l) => l.reason),
      ["operator alice: replies looping in #general; braked to look"],
    );

    const second = cliIn(cwd, "demo");
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /a connector ran in data\/discord\/demo-2;/);
    assert.match(second.stdout, /run\.lock {2}dead/);

    // The recovery the demo points at: unlock (STOP stays), remove STOP.
    assert.equal(cliIn(cwd, "recover", "data/discord/demo").status, 3, "recover refuses while an operator's brake is on");
    const unlock = cliIn(cwd, "unlock", "data/discord/demo");
    assert.equal(unlock.status, 0, unlock.stderr);
    assert.equal(
      unlock.stdout,
      `run.lock cleared (was pid ${owner.pid}); STOP stays: \`rm data/discord/demo/STOP\` when the binding should run again\n`,
    );
    rmSync(join(dir, "STOP"));
    const after = cliIn(cwd, "status", "data/discord/demo");
    assert.match(after.stdout, /\nSTOP {6}off {3}no brake\nrun\.lock {2}free {2}no connector holds the binding\n/);
    // Left: the delivery past the dedupe window, whose outcome a person tells.
    assert.equal(after.status, 1);
    assert.match(
      after.stdout,
      /\nnext: look in channel \d+ for the message sent then \(nonce n3\); then `discord-journal resolve data\/discord\/demo --nonce=n3 --as confirmed` if/,
    );
    assert.equal(cliIn(cwd, "resolve", "data/discord/demo", "--nonce", "n3", "--as", "confirmed").status, 0);
    const resolved = cliIn(cwd, "status", "data/discord/demo");
    assert.equal(resolved.status, 0, resolved.stdout);
    assert.doesNotMatch(resolved.stdout, /next:/);
    // The other way: recover clears a dead owner's lock once no operator brakes.
    rmSync(join(cwd, "data", "discord", "demo-2", "STOP"));
    assert.equal(cliIn(cwd, "recover", "data/discord/demo-2").stdout.trim(), "cleared");

    const taken = cli("demo", dir);
    assert.equal(taken.status, 2);
    assert.match(taken.stderr, /already exists; give the demo a new directory/);
  });

  test("status --json: one object with files, deliveries, STOP and the lock", () => {
    const dir = journal();
    // Within the dedupe window: the connector's own, no hand needed yet.
    M.appendOutbox(dir, { nonce: "a", status: "intent", at: new Date(Date.now() - 60_000).toISOString() });
    M.requestStop(dir, "operator");
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    writeFileSync(join(dir, "run.lock", "owner.json"), JSON.stringify({ pid: deadPid(), start: "5", boot: M.bootId() }), { mode: 0o600 });
    const r = cli("status", dir, "--json");
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    const keys = [
      "verdict",
      "journal",
      "label",
      "today",
      "owner",
      "files",
      "turns",
      "unresolvedDeliveries",
      "onToday",
      "lastReload",
      "stop",
      "lock",
      "guard",
      "appendLocks",
      "entries",
      "setAside",
    ];
    assert.deepEqual(Object.keys(s), keys);
    // No process holds the lock guard or run.lock's mark (#44), nor a
    // record file's append lock (#55).
    assert.equal(s.guard, null);
    assert.deepEqual(s.appendLocks, {});
    assert.equal(s.lock.holder, null);
    assert.deepEqual(Object.keys(s.verdict), ["canStart", "state", "why", "next", "problems"]);
    assert.equal(s.verdict.state, "braked");
    assert.equal(s.verdict.canStart, false);
    assert.deepEqual(s.verdict.problems, []);
    assert.deepEqual(s.files["outbox.jsonl"], {
      lines: 1,
      bytes: readFileSync(join(dir, "outbox.jsonl")).length,
      badLines: 0,
      corrupt: false,
      unterminated: false,
    });
    assert.deepEqual(Object.keys(s.unresolvedDeliveries.value[0]), ["nonce", "status", "intentAt", "channel", "ageSeconds", "pastWindow"]);
    assert.deepEqual(
      s.unresolvedDeliveries.value.map((d) => d.nonce),
      ["a"],
    );
    assert.deepEqual(Object.keys(s.onToday), ["admissions", "turns", "notices"]);
    assert.deepEqual(s.onToday.admissions, { value: 0 });
    assert.equal(s.lastReload, null);
    assert.deepEqual(
      s.stop.value.map((l) => l.reason),
      ["operator"],
    );
    assert.deepEqual(Object.keys(s.lock), ["owner", "state", "elsewhere", "seesEveryProcess", "repair", "zombie", "stopped", "holder"]);
    assert.equal(s.lock.state, "dead");
    // An operator's brake is on, so recover would refuse: unlock, then remove STOP.
    assert.match(s.verdict.next, /^the owner is gone: `discord-journal unlock .+`, then `rm .+STOP` when/);
    M.clearStop(dir);
    const cleared = JSON.parse(cli("status", dir, "--json").stdout).verdict;
    assert.equal(cleared.state, "crashed");
    assert.equal(cleared.canStart, true);
    assert.match(cleared.next, /^the owner is gone: `discord-journal recover /);
  });

  test("--data-root and --binding name the journal; a missing DIR's hint names the command typed", () => {
    const dir = journal({ name: "beta" });
    const root = dirname(dirname(dir));
    const r = cli("status", "--data-root", root, "--binding", "beta");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^discord\/beta under the data root/);
    assert.equal(cli("stop", "--data-root", root, "--binding", "beta", "maintenance").status, 0);
    assert.deepEqual(
      M.readStop(dir).map((l) => l.reason),
      ["maintenance"],
    );
    for (const command of ["status", "check", "stop", "unlock", "recover"]) {
      const none = cli(command);
      assert.equal(none.status, 2, command);
      assert.match(none.stderr, new RegExp(`give its directory \\(discord-journal ${command} data/discord/NAME\\) or --binding NAME`));
    }
    const both = cli("status", dir, "--binding", "beta");
    assert.equal(both.status, 2);
    assert.match(both.stderr, /give either DIR or --binding NAME, not both/);
  });

  test("usage mistakes exit 2 with commander's message and what to type; --version exits 0", () => {
    const dir = journal();
    const cases = [
      [["statsu"], /error: unknown command 'statsu'\n\(Did you mean status\?\)\n\(run `discord-journal --help` for the commands\)/],
      [
        ["status", "--jsn", dir],
        /error: unknown option '--jsn'\n\(Did you mean --json\?\)\n\(run `discord-journal status --help` for its usage\)/,
      ],
      [
        ["status", dir, "extra"],
        /error: too many arguments for 'status'\. Expected 1 argument but got 2\.\n\(run `discord-journal status --help`/,
      ],
      [["stop", dir, "reason", "extra"], /error: too many arguments for 'stop'/],
      [["--bogus"], /error: unknown option '--bogus'/],
      [["status", "--data-root"], /error: option '--data-root <root>' argument missing/],
      [[], /Usage: discord-journal \[options\] \[command\]/],
    ];
    for (const [args, message] of cases) {
      const r = cli(...args);
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, "");
    }
    for (const flag of ["--version", "-V"]) {
      const v = cli(flag);
      assert.equal(v.status, 0);
      assert.equal(v.stdout.trim(), pkg.version);
    }
    const help = cli("help", "status");
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Usage: discord-journal status \[options\] \[dir\]/);
    assert.equal(cli("check", "--help").status, 0);
  });

  test("a DIR that is not a directory: every command exits 2 naming it, and creates nothing", () => {
    const top = scratch();
    const missing = join(top, "discord", "typo");
    const file = join(top, "a-file");
    writeFileSync(file, "x");
    for (const command of ["status", "check", "stop", "unlock", "recover"]) {
      const r = cli(command, missing);
      assert.equal(r.status, 2, `${command}: ${r.stderr}`);
      assert.equal(r.stderr, `discord-journal: no journal at ${missing}; check the path (or --data-root and --binding)\n`);
      assert.equal(existsSync(join(top, "discord")), false, `${command} created something`);
      const f = cli(command, file);
      assert.equal(f.status, 2);
      assert.equal(f.stderr, `discord-journal: no journal at ${file} (not a directory); check the path (or --data-root and --binding)\n`);
      assert.equal(readFileSync(file, "utf8"), "x");
    }
    const viaBinding = cli("unlock", "--data-root", top, "--binding", "typo");
    assert.equal(viaBinding.status, 2);
    assert.match(viaBinding.stderr, new RegExp(`no journal at ${join(top, "discord", "typo")};`));
  });

  test("check lists every bad line with an offset that points at it, and exits 1", () => {
    const dir = journal();
    const file = join(dir, "inbox.jsonl");
    writeFileSync(file, '{"id":"1"}\n{bad\n\n{"id":"2"}\n[1,\n{"id":"3"}\n');
    writeFileSync(join(dir, "turns", "t1.json"), "{nope");
    const r = cli("check", dir);
    assert.equal(r.status, 1);
    const lines = r.stdout.trim().split("\n");
    assert.deepEqual(lines.slice(0, 4), [
      'inbox.jsonl:2: not valid JSON, corrupt (byte offset 11, 4 bytes): "{bad"',
      'inbox.jsonl:5: not valid JSON, cut short (byte offset 28, 3 bytes): "[1,"',
      "turns/t1.json: not valid JSON, corrupt (5 bytes)",
      "3 problems",
    ]);
    const bytes = readFileSync(file);
    assert.equal(bytes.subarray(11, 15).toString(), "{bad");
    assert.equal(bytes.subarray(28, 31).toString(), "[1,");
    const status = cli("status", dir);
    assert.equal(status.status, 1, "status found damage");
    assert.match(status.stdout, /verdict: damaged, cannot start/);
    assert.match(
      status.stdout,
      /inbox\.jsonl:2 is not JSON, and no more bytes could make it so \(corruption\) \(and 1 more bad line\); every read of inbox\.jsonl refuses \("inbox\.jsonl:2: not valid JSON"\)/,
    );
    const one = journal();
    writeFileSync(join(one, "drops.jsonl"), "{\n");
    assert.match(cli("check", one).stdout, /\n1 problem\n/);
    const clean = cli("check", journal());
    assert.equal(clean.status, 0);
    assert.equal(clean.stdout.trim(), "every record file and turn record reads");
  });

  test("stop, recover and unlock: refusals print the message and exit with its code", () => {
    const dir = journal();
    assert.equal(cli("stop", dir, "maintenance").status, 0);
    assert.deepEqual(
      M.readStop(dir).map((l) => l.reason),
      ["maintenance"],
    );
    const r = cli("recover", dir);
    assert.equal(r.status, 3);
    assert.equal(r.stderr.trim(), "STOP is present in discord/alpha under the data root; the brake is on. Remove it to run");
    const s = cli("status", dir);
    assert.match(s.stdout, /\nSTOP {6}on {4}maintenance at \S+\nrun\.lock {2}free/);
    assert.match(s.stdout, /next: the brake is on: `rm .*STOP` when the binding should run again/);
    M.clearStop(dir);
    // The one line a recover writes: recover clears it, so status says to run recover.
    M.requestStop(dir, M.RECOVER_REASON);
    assert.match(cli("status", dir).stdout, /next: a recover did not finish: `discord-journal recover .+`/);
    assert.equal(cli("recover", dir).stdout.trim(), "clean");
    assert.equal(M.stopRequested(dir), false);
    assert.match(cli("unlock", dir).stdout, /no run\.lock; STOP written: `rm .+STOP` when the binding should run again/);
  });

  test("a live lock held by another process: status says live, unlock refuses with exit 1", async () => {
    const dir = journal();
    const child = await liveOwner(dir);
    try {
      const s = cli("status", dir);
      assert.match(s.stdout, new RegExp(`run\\.lock {2}live {2}pid ${child.pid}, a connector holds the binding\\n`));
      assert.match(s.stdout, /next: a connector runs: `discord-journal stop .+` to brake it/);
      const u = cli("unlock", dir);
      assert.equal(u.status, 1);
      assert.match(u.stderr, /refusing to unlock: the connector is running/);
      // unlock wrote STOP before it refused: the connector runs under the brake.
      assert.match(cli("status", dir).stdout, /next: a connector runs under the brake: `rm .+STOP` when it should take turns again/);
    } finally {
      child.kill("SIGKILL");
    }
  });

  // On a terminal (a pseudo-terminal from util-linux's script(1), where
  // present) status has symbols and colour; NO_COLOR keeps the symbols only.
  const script = spawnSync("script", ["--version"], { encoding: "utf8" });
  const withTty = script.status === 0 ? {} : { skip: "script(1) is not installed" };
  test("status on a terminal: symbols and colour, NO_COLOR honoured where it holds a value", withTty, () => {
    const dir = journal();
    M.requestStop(dir, "operator");
    // The terminal's environment is set by env(1) inside script(1): Deno's
    // child_process adds the parent's variables to a child's `env`.
    // Node takes no colour where CI is set (as in this project's CI),
    // whatever the terminal.
    const onTty = (...set) => {
      const command = ["env", "-u", "NO_COLOR", "-u", "FORCE_COLOR", "-u", "NODE_DISABLE_COLORS", "-u", "CI", "TERM=xterm-256color", ...set]
        .concat(runFile(bin, "status", dir))
        .map((a) => JSON.stringify(a))
        .join(" ");
      const r = spawnSync("script", ["-qec", command, "/dev/null"], { encoding: "utf8" });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    const coloured = onTty();
    assert.ok(coloured.includes(`${ESC}31m✗ on${ESC}39m`), coloured);
    assert.ok(coloured.includes(`${ESC}32m✓ free${ESC}39m`), coloured);
    // NO_COLOR: words alone, as in a pipe.
    const plain = onTty("NO_COLOR=1");
    assert.equal(plain.includes(ESC), false);
    assert.match(plain, /\nSTOP {6}on {4}operator at /);
    assert.doesNotMatch(plain, /[✓✗]/);
    // An empty NO_COLOR is none (no-color.org: "when present and not an
    // empty string"): colour stays.
    const empty = onTty("NO_COLOR=");
    assert.ok(empty.includes(`${ESC}31m✗ on${ESC}39m`), empty);
    assert.ok(empty.includes(`${ESC}32m✓ free${ESC}39m`), empty);
  });
});
