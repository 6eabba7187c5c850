// Every binding at a glance (#46): `status --data-root ROOT` with no binding
// named judges each binding under ROOT/discord with the single binding's
// code, so each line must be the verdict `status DIR` gives; the exit code
// is the most urgent (1 over 3 over 0); anything that is not a binding is
// listed, never judged; run as root each binding is judged as its owner; a
// process stopped inside one binding's guard holds up none. `--prometheus
// FILE` writes node_exporter's textfile format, replaced whole: held to
// `promtool check metrics`, served by the real node_exporter, and the
// example alerting rules to `promtool check rules`. The command is this
// package's own, so these tests skip against another implementation.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { createRequire } from "node:module";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  AS_NOBODY,
  NOBODY,
  actsAsOwner,
  M,
  addonOnly,
  binding,
  crashed,
  deadPid,
  forOthers,
  freePort,
  liveOwner,
  runFile,
  scratch,
  textfileExporter,
} from "./helpers.mjs";

const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));
// The collection's state (cli/memo.js): where it lies, what it keeps.
const { statePath, readState, writeState, SCHEMA, SHAPE, keptShape } = createRequire(import.meta.url)("../cli/memo.js");

/**
 * The text of the state at `file` with the kept answer of `key` changed
 * by `change` (which changes the entry in place), and its header by
 * `header`: a state forged as the tests forge it.
 */
function forge(file, key, change, header = (h) => h) {
  const { header: h, kept } = readState(readFileSync(file, "utf8"));
  const b = key.slice(0, key.indexOf("\0") + 1);
  const entries = JSON.parse(kept.get(b));
  change(entries[key]);
  kept.set(b, JSON.stringify(entries));
  return writeState(header(h), kept);
}
const rules = fileURLToPath(new URL("../docs/prometheus-rules.yml", import.meta.url));
const cli = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", timeout: 120_000 });
const json = (...args) => {
  const r = cli(...args, "--json");
  return { status: r.status, out: JSON.parse(r.stdout), stderr: r.stderr };
};
const has = (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;
const withPromtool = has("promtool") ? {} : { skip: "needs promtool (Debian's prometheus package; .ci/run installs it)" };
const withExporter = has("prometheus-node-exporter")
  ? {}
  : { skip: "needs node_exporter (Debian's prometheus-node-exporter package; .ci/run installs it)" };
const asRoot = actsAsOwner;

/** A data root with bindings ready, braked, crashed, damaged and live, and two entries that are not bindings. */
async function fleetRoot() {
  const root = scratch();
  const b = (name) => binding(root, name);
  b("ready");
  M.requestStop(b("braked"), "maintenance");
  crashed(b("crashed"));
  writeFileSync(join(b("damaged"), "inbox.jsonl"), '{"id":"cut', { flag: "a" });
  const live = await liveOwner(b("live"));
  writeFileSync(join(root, "discord", "notes.txt"), "not a binding\n");
  mkdirSync(join(root, "discord", "Not_A_Name"));
  return { root, live };
}

describe("every binding at a glance (#46)", addonOnly, () => {
  test("each line is the binding's own status; the most urgent exit; --json lists them all; what is not a binding is listed, not judged", async () => {
    const { root, live } = await fleetRoot();
    try {
      const f = json("status", "--data-root", root);
      assert.equal(f.status, 1, "a damaged binding: 1");
      assert.deepEqual(f.out.bindings.map((b) => b.binding).sort(), ["braked", "crashed", "damaged", "live", "ready"]);
      assert.deepEqual(f.out.notBindings, [
        { name: "Not_A_Name", why: "not a binding name" },
        { name: "notes.txt", why: "not a binding name" },
      ]);
      assert.deepEqual(f.out.counts, { unreadable: 0, damaged: 1, stuck: 0, braked: 1, crashed: 1, running: 1, ready: 1 });
      assert.equal(f.out.bindings[0].binding, "damaged", "what needs a hand first");
      for (const b of f.out.bindings) {
        const one = json("status", join(root, "discord", b.binding));
        assert.equal(b.exitCode, one.status, b.binding);
        assert.deepEqual(b.verdict, one.out.verdict, b.binding);
        assert.deepEqual(b.files, one.out.files, b.binding);
      }
      const text = cli("status", "--data-root", root).stdout;
      for (const [name, state] of [
        ["damaged", "damaged"],
        ["braked", "braked"],
        ["crashed", "crashed"],
        ["live", "running"],
        ["ready", "ready"],
      ])
        assert.match(text, new RegExp(`^${name} +${state} `, "m"));
      // A braked or crashed line has the next its status DIR gives, as one
      // that needs a hand has; a running or ready one, none.
      const lines = text.split("\n");
      const after = (name) => lines[lines.findIndex((l) => l.startsWith(`${name} `)) + 1];
      for (const name of ["braked", "crashed"]) {
        const next = json("status", join(root, "discord", name)).out.verdict.next;
        assert.ok(next, name);
        assert.equal(after(name), `    next: ${next}`, name);
      }
      for (const name of ["live", "ready"]) assert.doesNotMatch(after(name), /next:/, name);
      assert.match(text, /^0 unreadable, 1 damaged, 0 stuck, 1 braked, 1 crashed, 1 running, 1 ready$/m);
      // Without the damage, a brake is the most urgent: 3; without it, 0.
      writeFileSync(join(root, "discord", "damaged", "inbox.jsonl"), '{"id":"x"}\n');
      assert.equal(cli("status", "--data-root", root).status, 3);
      spawnSync("rm", [join(root, "discord", "braked", "STOP")]);
      assert.equal(cli("status", "--data-root", root).status, 0);
    } finally {
      live.kill();
    }
  });

  test("run as root, each binding is judged as its own owner, as its own status judges it", asRoot, () => {
    const root = scratch();
    chmodSync(root, 0o755);
    const mine = join(root, "discord", "roots");
    M.ensureJournal(mine);
    const theirs = join(root, "discord", "nobodys");
    M.ensureJournal(theirs);
    M.appendInbox(theirs, { id: "m1" });
    chmodSync(join(root, "discord"), 0o755);
    spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, theirs]);
    // A file only root may read, in nobody's journal: unreadable to its service.
    writeFileSync(join(theirs, "drops.jsonl"), '{"id":"d"}\n', { mode: 0o600 });
    // A second journal of nobody's, judged after the first by the same
    // child: its fixes are given as nobody's too (runuser -u nobody -- chmod).
    const second = join(root, "discord", "nobodys2");
    M.ensureJournal(second);
    chmodSync(join(second, "turns"), 0o755);
    spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, second]);
    const f = json("status", "--data-root", root);
    for (const [name, dir] of [
      ["nobodys", theirs],
      ["nobodys2", second],
    ]) {
      const one = json("status", dir);
      const b = f.out.bindings.find((x) => x.binding === name);
      assert.deepEqual(b.verdict, one.out.verdict, name);
      assert.equal(b.acting, one.out.acting, name);
    }
    const b = f.out.bindings.find((x) => x.binding === "nobodys");
    assert.ok(b.verdict.problems.some((p) => /drops\.jsonl/.test(p.what)));
    assert.match(f.out.bindings.find((x) => x.binding === "nobodys2").verdict.next, new RegExp(`^\`${AS_NOBODY}chmod 700 `));
    assert.equal(f.out.bindings.find((x) => x.binding === "roots").verdict.state, "ready");
  });

  test(
    "what cannot be judged stays on its own line: a link round in a loop, a closed parent above one owner's bindings, recover's own STOP no brake",
    asRoot,
    () => {
      const top = scratch();
      chmodSync(top, 0o755);
      const srv = join(top, "srv");
      const root = join(srv, "data");
      for (const name of ["x", "y"]) {
        M.ensureJournal(join(root, "discord", name));
        spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, join(root, "discord", name)]);
      }
      chmodSync(root, 0o755);
      chmodSync(join(root, "discord"), 0o755);
      chmodSync(srv, 0o700);
      symlinkSync("loopy", join(root, "discord", "loopy"));
      const rc = join(root, "discord", "rc");
      M.ensureJournal(rc);
      writeFileSync(join(rc, "STOP"), JSON.stringify({ at: "2026-12-01T00:00:00.000Z", reason: M.RECOVER_REASON }) + "\n", { mode: 0o600 });
      const f = json("status", "--data-root", root);
      assert.deepEqual(
        f.out.notBindings.map((n) => n.name),
        ["loopy"],
      );
      for (const name of ["x", "y"]) {
        const one = json("status", join(root, "discord", name));
        const b = f.out.bindings.find((x) => x.binding === name);
        assert.equal(b.verdict.state, "stuck", name);
        assert.deepEqual(b.verdict, one.out.verdict, name);
      }
      const file = join(scratch(), "m.prom");
      cli("status", "--data-root", root, "--prometheus", file);
      const prom = readFileSync(file, "utf8");
      assert.match(prom, /^discord_journal_binding_braked\{data_root="[^"]+",binding="rc"\} 0$/m, "recover's own line is no brake");
      assert.match(prom, /^discord_journal_unfollowed_entries\{data_root="[^"]+",name="loopy"\} 1$/m, "the link has a series");
    },
  );

  test(
    "a process stopped inside one binding's lock guard is named on its line and holds up no other",
    has("flock") ? {} : { skip: "needs util-linux's flock" },
    async () => {
      const { root, live } = await fleetRoot();
      live.kill();
      const base = Date.now();
      cli("status", "--data-root", root);
      const alone = Date.now() - base;
      const holder = spawn("flock", ["-x", join(root, "discord", "ready", "turns"), "sleep", "30"], { stdio: "ignore" });
      try {
        for (let i = 0; i < 200 && !readFileSync("/proc/locks", "utf8").includes(` ${holder.pid} `); i++)
          await new Promise((r) => setTimeout(r, 10));
        process.kill(holder.pid, "SIGSTOP");
        const began = Date.now();
        const f = json("status", "--data-root", root);
        const took = Date.now() - began;
        const b = f.out.bindings.find((x) => x.binding === "ready");
        assert.equal(b.verdict.state, "stuck");
        assert.match(b.verdict.why, new RegExp(`pid ${holder.pid} \\(stopped`));
        // The promise is a bound, not a speed: at most 3 s more than the view without it.
        assert.ok(took < alone + 3000, `${took} ms with a stopped holder, ${alone} ms without`);
      } finally {
        holder.kill("SIGKILL");
      }
    },
  );

  // #64: a running holder of a record file's append lock (`flock
  // inbox.jsonl sleep`) held every append while the fleet said ready. Each
  // binding's hold is judged at a second look, and a collection makes that
  // look once for all of them (250 ms), never once per binding.
  test(
    "holders of append locks in many bindings: each line is stuck, its metrics page, and the collection looks twice once",
    has("flock") ? {} : { skip: "needs util-linux's flock" },
    async () => {
      const root = scratch();
      const names = ["a", "b", "c", "d", "e", "f", "g", "h"];
      for (const name of names) M.ensureJournal(join(root, "discord", name));
      const base = Date.now();
      cli("status", "--data-root", root);
      const alone = Date.now() - base;
      const holders = names.map((name) =>
        spawn("flock", [join(root, "discord", name, "inbox.jsonl"), "sleep", "30"], { stdio: "ignore", timeout: 60_000 }),
      );
      try {
        for (const h of holders)
          for (let i = 0; i < 200 && !readFileSync("/proc/locks", "utf8").includes(` ${h.pid} `); i++)
            await new Promise((r) => setTimeout(r, 10));
        const began = Date.now();
        const f = json("status", "--data-root", root);
        const took = Date.now() - began;
        console.log(
          `# figure a collection of ${names.length} bindings, each with an append lock held: ${took} ms, ${alone} ms with none held`,
        );
        assert.equal(f.status, 1);
        for (const b of f.out.bindings) {
          assert.equal(b.verdict.state, "stuck", b.binding);
          assert.match(b.verdict.why, /holds the append lock of inbox\.jsonl and does not move: every append to inbox\.jsonl waits for it/);
        }
        // One second look (250 ms) for all, not one each (2 s for 8): a
        // bound with room for a loaded machine.
        assert.ok(took < alone + 1500, `${took} ms with holders, ${alone} ms without`);
        const text = cli("status", "--data-root", root);
        assert.match(text.stdout, /8 bindings under .*, 8 need a hand/);
        const file = join(scratch(), "m.prom");
        cli("status", "--data-root", root, "--prometheus", file);
        const prom = readFileSync(file, "utf8");
        for (const name of names) {
          assert.match(prom, new RegExp(`^discord_journal_binding_state\\{data_root="[^"]+",binding="${name}",state="stuck"\\} 1$`, "m"));
          assert.match(prom, new RegExp(`^discord_journal_binding_blocked\\{data_root="[^"]+",binding="${name}"\\} 1$`, "m"));
        }
      } finally {
        for (const h of holders) h.kill("SIGKILL");
      }
    },
  );

  // #57: the text an operator reads: the command under each line that
  // needs a hand, -x for those alone, state words that say the problem.
  test("the text view: next under each line that needs a hand, -x, and no line reads ready alone while it needs a hand", async () => {
    const { root, live } = await fleetRoot();
    try {
      // A connector under the brake, and a ready binding with a problem (its mode).
      M.requestStop(join(root, "discord", "live"), "look");
      chmodSync(join(root, "discord", "ready"), 0o755);
      const r = cli("status", "--data-root", root);
      assert.equal(r.status, 1);
      const lines = r.stdout.split("\n");
      const at = (name) => lines.findIndex((l) => l.startsWith(`${name} `));
      const damaged = json("status", join(root, "discord", "damaged")).out.verdict.next;
      assert.equal(lines[at("damaged") + 1], `    next: ${damaged}`);
      assert.match(lines[at("ready")], /^ready +ready, 1 problem +/);
      assert.equal(lines[at("ready") + 1].trim().startsWith("next: "), true);
      assert.match(lines[at("live")], /^live +braked +STOP is on: look .*; a connector runs under the brake \(pid \d+\)$/);
      const x = cli("status", "--data-root", root, "-x");
      assert.equal(x.status, 1);
      assert.deepEqual(
        x.stdout
          .split("\n")
          .filter((l) => /^[a-z]+ {2}/.test(l))
          .map((l) => l.split(" ")[0])
          .sort(),
        ["braked", "crashed", "damaged", "live", "ready"],
        "what makes the exit code non-zero and a crash that pages if it stays, nothing else",
      );
      const quiet = scratch();
      M.ensureJournal(join(quiet, "discord", "one"));
      M.ensureJournal(join(quiet, "discord", "two"));
      const none = cli("status", "--data-root", quiet, "-x");
      assert.equal(none.status, 0);
      assert.equal(none.stdout, "all 2 bindings need no hand\n");
      assert.equal(cli("status", join(quiet, "discord", "one"), "-x").status, 2, "-x is for every binding");
      assert.match(cli("status", "--prometheus", join(quiet, "m.prom")).stderr, /it needs --data-root ROOT/);
    } finally {
      live.kill();
    }
  });

  // #56: a frozen connector read as "running", and a process stopped in
  // the guard of a braked binding as "braked": neither paged.
  test(
    "a stopped connector and a process stopped in a braked binding's guard are stuck, on their lines and in the metrics",
    has("flock") ? {} : { skip: "needs util-linux's flock" },
    async () => {
      const { root, live } = await fleetRoot();
      const holder = spawn("flock", ["-x", join(root, "discord", "braked", "turns"), "sleep", "30"], { stdio: "ignore" });
      try {
        for (let i = 0; i < 200 && !readFileSync("/proc/locks", "utf8").includes(` ${holder.pid} `); i++)
          await new Promise((r) => setTimeout(r, 10));
        process.kill(holder.pid, "SIGSTOP");
        process.kill(live.pid, "SIGSTOP");
        const file = join(scratch(), "m.prom");
        assert.equal(cli("status", "--data-root", root, "--prometheus", file).status, 0);
        const f = json("status", "--data-root", root);
        assert.equal(f.status, 1);
        const one = (name) => f.out.bindings.find((x) => x.binding === name).verdict;
        assert.equal(one("live").state, "stuck");
        assert.match(one("live").why, new RegExp(`^the connector that holds run.lock, pid ${live.pid} \\(stopped: .*\\), is stopped`));
        assert.equal(one("live").next, `\`kill -CONT ${live.pid}\` lets it run again`);
        assert.equal(one("braked").state, "stuck");
        assert.match(one("braked").why, new RegExp(`^pid ${holder.pid} \\(stopped`));
        const text = readFileSync(file, "utf8");
        const at = `data_root="${root}"`;
        for (const name of ["live", "braked"])
          assert.ok(text.includes(`\ndiscord_journal_binding_state{${at},binding="${name}",state="stuck"} 1\n`), name);
        assert.ok(text.includes(`\ndiscord_journal_binding_braked{${at},binding="braked"} 1\n`), "the brake is still said");
      } finally {
        holder.kill("SIGKILL");
        live.kill("SIGKILL");
      }
    },
  );

  test("--prometheus writes a file promtool accepts, replaced whole: nothing beside it, no link followed", withPromtool, async () => {
    const { root, live } = await fleetRoot();
    live.kill();
    const out = scratch();
    const file = join(out, "discord-journal.prom");
    // What a killed run left (its pid gone), and a link at the file's name.
    const outside = join(scratch(), "outside");
    writeFileSync(outside, "kept\n");
    symlinkSync(outside, join(out, `.discord-journal.prom.${deadPid()}.0badcafe.tmp`));
    symlinkSync(outside, file);
    const r = cli("status", "--data-root", root, "--prometheus", file);
    assert.equal(r.status, 0, `written: the collection's exit code, though a binding needs a hand: ${r.stderr}`);
    assert.equal(readFileSync(outside, "utf8"), "kept\n", "no link followed");
    assert.ok(lstatSync(file).isFile());
    assert.deepEqual(
      readdirSync(out).sort(),
      ["discord-journal.prom", basename(statePath(file, root))].sort(),
      "nothing left beside it but the state",
    );
    const text = readFileSync(file, "utf8");
    const at = `data_root="${root}"`;
    for (const b of ["braked", "crashed", "damaged", "live", "ready"])
      assert.match(text, new RegExp(`discord_journal_binding_state\\{${at},binding="${b}",state=`));
    assert.ok(text.includes(`\ndiscord_journal_binding_state{${at},binding="damaged",state="damaged"} 1\n`));
    assert.ok(text.includes(`\ndiscord_journal_file_unreadable_lines{${at},binding="damaged",file="inbox.jsonl"} 1\n`));
    assert.ok(text.includes(`\ndiscord_journal_collection_success{${at}} 1\n`));
    assert.match(text, new RegExp(`^discord_journal_brake_age_seconds\\{${at},binding="braked"\\} \\d`, "m"));
    assert.doesNotMatch(text, /^discord_journal_brake_age_seconds\{[^}]*binding="ready"/m, "no brake, no age");
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.equal((check.stdout + check.stderr).trim(), "", "no lint finding");
    assert.equal(cli("status", readyOf(root), "--prometheus", file).status, 2, "a single binding has no metrics file");
  });

  test("node_exporter's textfile collector serves every binding, with no scrape error", withExporter, async (t) => {
    const { root, live } = await fleetRoot();
    live.kill();
    const dir = scratch();
    chmodSync(dir, 0o755);
    assert.equal(cli("status", "--data-root", root, "--prometheus", join(dir, "discord-journal.prom")).status, 0);
    const port = await freePort();
    const exporter = textfileExporter(dir, port);
    try {
      let body = null;
      for (let i = 0; i < 100 && body === null; i++) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/metrics`);
          body = await res.text();
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (body === null) {
        t.skip("node_exporter did not answer on 127.0.0.1");
        return;
      }
      assert.match(body, /^node_textfile_scrape_error 0$/m);
      for (const b of ["braked", "crashed", "damaged", "live", "ready"])
        assert.match(body, new RegExp(`^discord_journal_binding_can_start\\{binding="${b}",data_root="[^"]+"\\} `, "m"), b);
      assert.match(body, /^discord_journal_collection_duration_seconds\{data_root="[^"]+"\} /m);
    } finally {
      exporter.kill();
    }
  });

  test("the alerting rules pass promtool check rules, and promtool test rules with their real for:", withPromtool, () => {
    const r = spawnSync("promtool", ["check", "rules", rules], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUCCESS: \d+ rules found/);
    const cases = fileURLToPath(new URL("prometheus-rules.test.yml", import.meta.url));
    const t = spawnSync("promtool", ["test", "rules", cases], { encoding: "utf8" });
    assert.equal(t.status, 0, t.stdout + t.stderr);
    assert.match(t.stdout, /SUCCESS/);
  });

  // #56: a collector run as a user that is neither root nor the bindings'
  // owner turned its own permission problem into one "unreadable" binding,
  // and one alert, each. It is one problem of its own, and exit 1.
  test("a collector that may not read the bindings says so once: not judged, counted, no binding's series", asRoot, () => {
    const root = scratch();
    chmodSync(root, 0o755);
    for (const name of ["a", "b", "c"]) {
      M.ensureJournal(join(root, "discord", name));
      spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, join(root, "discord", name)]);
    }
    chmodSync(join(root, "discord"), 0o755);
    const out = scratch();
    chmodSync(out, 0o777);
    const file = join(out, "m.prom");
    const as = (...args) =>
      spawnSync(
        "setpriv",
        ["--reuid=1234", "--regid=1234", "--clear-groups", ...runFile(join(forOthers(), "bin", "discord-journal.js"), ...args)],
        { encoding: "utf8" },
      );
    const r = as("status", "--data-root", root, "--json");
    assert.equal(r.status, 1, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.deepEqual(
      j.unjudged.map((u) => [u.binding, u.uid, u.code]),
      ["a", "b", "c"].map((n) => [n, NOBODY, "EACCES"]),
    );
    assert.deepEqual(j.bindings, []);
    assert.equal(j.counts.unreadable, 0, "not the bindings' problem");
    const text = as("status", "--data-root", root, "--prometheus", file);
    assert.equal(text.status, 1, "written, but blind to three bindings");
    assert.match(text.stdout, /^[^\n]*: 3 bindings under [^\n]*, 3 not judged; [^\n]*\n$/, "one line");
    assert.match(
      text.stderr,
      /^discord-journal: not judged: a, b, c: this command runs as uid 1234, neither root nor their owner, and may not read them \(EACCES\)/m,
    );
    const prom = readFileSync(file, "utf8");
    assert.ok(prom.includes(`\ndiscord_journal_collection_unjudged_bindings{data_root="${root}"} 3\n`), prom);
    assert.doesNotMatch(prom, /binding="/);
  });

  // #57: a collection every minute read every line every time. It keeps
  // each reader's answer with the fingerprint of the files it read, beside
  // the metrics file, and reads again only what changed; a state it did
  // not write, or one older than --full-every, is not taken.
  test("the next collection reads what changed: a line cut between runs is seen; a state it did not write is never taken", async () => {
    const { root, live } = await fleetRoot();
    live.kill();
    const file = join(scratch(), "m.prom");
    const state = statePath(file, root);
    const bindings = (text) =>
      text
        .split("\n")
        .filter((l) => l.includes('binding="') && !l.includes("brake_age"))
        .join("\n");
    assert.equal(cli("status", "--data-root", root, "--prometheus", file).status, 0);
    const first = readFileSync(file, "utf8");
    assert.equal(lstatSync(state).mode & 0o777, 0o600, "the state is the collector's alone");
    assert.equal(cli("status", "--data-root", root, "--prometheus", file).status, 0);
    assert.equal(bindings(readFileSync(file, "utf8")), bindings(first), "the same answers, kept");
    // A cut line appended to the ready binding between runs: seen at once.
    writeFileSync(join(root, "discord", "ready", "inbox.jsonl"), '{"id":"cu', { flag: "a" });
    cli("status", "--data-root", root, "--prometheus", file);
    const at = `data_root="${root}"`;
    assert.ok(readFileSync(file, "utf8").includes(`\ndiscord_journal_binding_state{${at},binding="ready",state="damaged"} 1\n`));
    // A kept answer changed by hand: taken while the state is this user's
    // own and 0600 (what the collector wrote), never once another may write it.
    const key = `${join(root, "discord", "ready")}\0scan\0inbox.jsonl`;
    const forged = forge(state, key, (e) => (e.answer = { value: null }));
    writeFileSync(state, forged, { mode: 0o600 });
    chmodSync(state, 0o644);
    cli("status", "--data-root", root, "--prometheus", file);
    assert.ok(readFileSync(file, "utf8").includes(`binding="ready",state="damaged"} 1\n`), "a state others may write is not taken");
    // --full-every 0: every file read in full, whatever was kept.
    writeFileSync(state, forged, { mode: 0o600 });
    chmodSync(state, 0o600);
    cli("status", "--data-root", root, "--prometheus", file, "--full-every", "0");
    assert.ok(readFileSync(file, "utf8").includes(`binding="ready",state="damaged"} 1\n`), "a full reading takes nothing kept");
    assert.equal(cli("status", "--data-root", root, "--prometheus", file, "--full-every", "soon").status, 2);
  });

  // #63: nothing asserted that the state spares any reading (the cache
  // removed, every answer computed, passed every test), and an operator
  // cannot see it either: the answers reused and read are counted, in
  // --json and in the metrics.
  test("the next collection reuses an unchanged file's answers and reads a changed file again, counted in --json and the metrics", async () => {
    const { root, live } = await fleetRoot();
    live.kill();
    const file = join(scratch(), "m.prom");
    const collect = () => {
      const r = json("status", "--data-root", root, "--prometheus", file);
      assert.equal(r.status, 0, r.stderr);
      const prom = readFileSync(file, "utf8");
      const metric = (source) =>
        Number(new RegExp(`^discord_journal_collection_answers\\{data_root="[^"]+",source="${source}"\\} (\\d+)$`, "m").exec(prom)?.[1]);
      assert.deepEqual({ reused: metric("reused"), read: metric("read") }, r.out.answers, "the metrics say what --json says");
      return r.out;
    };
    const first = collect();
    // Each binding's twelve readers' answers (six scans, turns/, deliveries, today's three, reloads).
    assert.deepEqual(first.answers, { reused: 0, read: 5 * 12 });
    const next = collect();
    assert.deepEqual(next.answers, { reused: 5 * 12, read: 0 }, "nothing changed: every answer kept");
    assert.deepEqual(
      next.bindings.map((b) => [b.binding, b.verdict]),
      first.bindings.map((b) => [b.binding, b.verdict]),
    );
    // One line appended to one file: that file's answer alone is read again.
    M.appendInbox(join(root, "discord", "ready"), { id: "ready-2", at: "2026-12-01T00:00:01.000Z" });
    const after = collect();
    assert.deepEqual(after.answers, { reused: 5 * 12 - 1, read: 1 });
    assert.equal(after.bindings.find((b) => b.binding === "ready").files["inbox.jsonl"].lines, 2, "the changed file's own answer");
  });

  // #63: the state carried the package's version, the same across every
  // commit that changed what it keeps. It is keyed by SCHEMA, the hash of
  // SHAPE: a fresh state's answers are held to SHAPE here, so the kept
  // shape cannot change without SHAPE (and with it SCHEMA), and a state of
  // another schema is read again from the files, not taken.
  test("the state keeps what SHAPE says, and one of another schema is refused: read again, counted", () => {
    const root = scratch();
    const b = (name) => binding(root, name);
    // Every kind of answer, and within each what its structure can hold:
    // a missing file, a cut line, a line of null, a bad turn record and
    // one of null, deliveries with and without a channel and a date.
    const now = new Date().toISOString();
    const ready = b("ready");
    M.appendOutbox(ready, { nonce: "n1", status: "intent", at: "2026-12-01T00:00:00.000Z", channel: "c1" });
    M.appendOutbox(ready, { nonce: "n2", status: "intent" });
    M.appendReload(ready, { outcome: "applied", at: now });
    M.appendNotice(ready, { kind: "ceiling", date: now.slice(0, 10) });
    M.appendAdmission(ready, { id: "ready-1", at: now });
    M.writeTurn(ready, "t1", { at: now });
    const damaged = b("damaged");
    writeFileSync(join(damaged, "inbox.jsonl"), '{"id":"cut', { flag: "a" });
    writeFileSync(join(damaged, "drops.jsonl"), "null\n", { mode: 0o600 });
    writeFileSync(join(damaged, "turns", "t0.json"), "", { mode: 0o600 });
    writeFileSync(join(damaged, "turns", "t9.json"), "null\n", { mode: 0o600 });
    mkdirSync(join(damaged, "turns", "t8.json"), { mode: 0o700 });
    const file = join(scratch(), "m.prom");
    const run = () => json("status", "--data-root", root, "--prometheus", file);
    assert.equal(run().status, 0);
    const { header, kept } = readState(readFileSync(statePath(file, root), "utf8"));
    assert.equal(header.schema, SCHEMA());
    const kinds = {};
    let entries = 0;
    for (const [key, { answer }] of [...kept.values()].flatMap((text) => Object.entries(JSON.parse(text)))) {
      entries++;
      const kind = key.split("\0")[1];
      assert.ok(
        (Object.keys(answer).join() === "value" || Object.keys(answer).join() === "refused") &&
          (answer.refused === undefined || typeof answer.refused === "string"),
        `${key}: a reader's { value } or { refused }`,
      );
      if ("value" in answer) (kinds[kind] ??= []).push(answer.value);
    }
    assert.deepEqual(Object.keys(kinds).sort(), Object.keys(SHAPE).sort(), "every kind kept, and no other");
    for (const [kind, values] of Object.entries(kinds))
      assert.equal(keptShape(kind, values), SHAPE[kind].value, `${kind}: what is kept changed; say it in SHAPE (cli/memo.js)`);
    // The state of another schema (older code), this process's own and
    // 0600, whose answer for the ready binding's inbox says 999 lines: refused.
    const inbox = `${ready}\0scan\0inbox.jsonl`;
    const older = forge(
      statePath(file, root),
      inbox,
      (e) => (e.answer.value.lines = 999),
      (h) => ({ ...h, schema: "0123456789abcdef" }),
    );
    writeFileSync(statePath(file, root), older, { mode: 0o600 });
    const refused = run();
    assert.deepEqual(refused.out.answers, { reused: 0, read: entries }, "every answer read again");
    assert.equal(refused.out.bindings.find((x) => x.binding === "ready").files["inbox.jsonl"].lines, 1);
    // The same state with this schema is taken (what makes the refusal the schema's).
    writeFileSync(
      statePath(file, root),
      forge(statePath(file, root), inbox, (e) => (e.answer.value.lines = 999)),
      { mode: 0o600 },
    );
    const taken = run();
    assert.deepEqual(taken.out.answers, { reused: entries, read: 0 });
    assert.equal(taken.out.bindings.find((x) => x.binding === "ready").files["inbox.jsonl"].lines, 999);
  });

  // #63: the owner check was dropped in a mutation audit and nothing
  // failed; by hand a forged state of nobody's turned damage into ready.
  test("as root, a state owned by another user is never taken, 0600 or not: a damaged binding stays damaged", asRoot, async () => {
    const { root, live } = await fleetRoot();
    live.kill();
    const out = scratch();
    const file = join(out, "m.prom");
    const run = () => json("status", "--data-root", root, "--prometheus", file);
    assert.equal(run().status, 0);
    const state = statePath(file, root);
    const inbox = `${join(root, "discord", "damaged")}\0scan\0inbox.jsonl`;
    const forged = forge(state, inbox, (e) => (e.answer.value = { ...e.answer.value, bad: [], badCount: 0 }));
    writeFileSync(state, forged, { mode: 0o600 });
    spawnSync("chown", [`${NOBODY}:${NOBODY}`, state]);
    assert.equal(lstatSync(state).mode & 0o777, 0o600);
    const r = run();
    assert.equal(r.out.bindings.find((x) => x.binding === "damaged").verdict.state, "damaged", "nobody's state is not taken");
    assert.equal(r.out.answers.reused, 0);
    // What was found is said on the collection's line.
    writeFileSync(state, forged, { mode: 0o600 });
    spawnSync("chown", [`${NOBODY}:${NOBODY}`, state]);
    assert.match(
      cli("status", "--data-root", root, "--prometheus", file).stdout,
      new RegExp(
        `; 0 answers reused, 60 read \\(the state ${basename(state)} was not taken: owned by uid ${NOBODY}, not this process's\\), in `,
      ),
    );
    // Root's own, the same bytes: taken (the owner is what refused it).
    writeFileSync(state, forged, { mode: 0o600 });
    spawnSync("chown", ["0:0", state]);
    assert.equal(run().out.bindings.find((x) => x.binding === "damaged").verdict.state, "ready");
  });

  // #63: as root, a journal another user owns is judged in that owner's
  // child, which gets its answers kept and gives back what it read.
  test("as root, an owner's child reuses its bindings' answers and reads a changed file again", asRoot, () => {
    const root = scratch();
    chmodSync(root, 0o755);
    for (const name of ["a", "b"]) {
      const d = join(root, "discord", name);
      M.ensureJournal(d);
      M.appendInbox(d, { id: `${name}-1` });
      // Deliveries past the window, one with no date: what the child sums up.
      M.appendOutbox(d, { nonce: `${name}-n1`, status: "intent", at: "2026-12-01T00:00:00.000Z" });
      M.appendOutbox(d, { nonce: `${name}-n2`, status: "intent" });
      spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, d]);
    }
    M.ensureJournal(join(root, "discord", "roots"));
    chmodSync(join(root, "discord"), 0o755);
    // Without --json the child sends each status in brief: the metrics
    // are those of the statuses in full (--json), but for the times.
    const series = (f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .filter((l) => l.includes('binding="') && !/_(seconds|age_seconds)\{/.test(l))
        .join("\n");
    const brief = join(scratch(), "brief.prom");
    const full = join(scratch(), "full.prom");
    assert.equal(cli("status", "--data-root", root, "--prometheus", brief).status, 0);
    assert.equal(json("status", "--data-root", root, "--prometheus", full).status, 0);
    assert.equal(series(brief), series(full));
    assert.match(readFileSync(brief, "utf8"), /^discord_journal_late_deliveries\{data_root="[^"]+",binding="a"\} 2$/m);
    assert.match(
      readFileSync(brief, "utf8"),
      /^discord_journal_oldest_unresolved_delivery_age_seconds\{data_root="[^"]+",binding="a"\} \d+$/m,
    );
    const file = join(scratch(), "m.prom");
    const run = () => json("status", "--data-root", root, "--prometheus", file).out;
    assert.deepEqual(run().answers, { reused: 0, read: 36 });
    const next = run();
    assert.deepEqual(next.answers, { reused: 36, read: 0 });
    assert.match(next.bindings.find((x) => x.binding === "a").acting, /nobody/, "judged as its owner");
    writeFileSync(join(root, "discord", "b", "inbox.jsonl"), '{"id":"cu', { flag: "a" });
    const cut = run();
    assert.deepEqual(cut.answers, { reused: 35, read: 1 });
    assert.equal(cut.bindings.find((x) => x.binding === "b").verdict.state, "damaged");
  });

  // #63: a new --prometheus path read everything again and left the old
  // state behind. One state per data root, in the metrics file's
  // directory: another name there takes it; a former FILE.state goes.
  test("the state is the data root's: another metrics file name takes it, and none is left behind", async () => {
    const { root, live } = await fleetRoot();
    live.kill();
    const out = scratch();
    // What an earlier version kept beside the metrics file.
    writeFileSync(join(out, "a.prom.state"), JSON.stringify({ version: "0.1.0", fullAt: 0, entries: {} }), { mode: 0o600 });
    writeFileSync(join(out, "notes.state"), "the operator's own\n", { mode: 0o600 });
    assert.deepEqual(json("status", "--data-root", root, "--prometheus", join(out, "a.prom")).out.answers, { reused: 0, read: 60 });
    const r = cli("status", "--data-root", root, "--prometheus", join(out, "b.prom"));
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /^[^\n]*b\.prom: 5 bindings under [^\n]*, 2 need a hand, 1 braked; 60 answers reused, 0 read, in [\d.]+ s\n$/,
      "one line",
    );
    assert.equal(r.stderr, "");
    assert.deepEqual(readdirSync(out).sort(), ["a.prom", "b.prom", basename(statePath(join(out, "b.prom"), root)), "notes.state"].sort());
    // Another data root into the same directory keeps a state of its own.
    const other = scratch();
    M.ensureJournal(join(other, "discord", "one"));
    assert.equal(cli("status", "--data-root", other, "--prometheus", join(out, "c.prom")).status, 0);
    assert.equal(readdirSync(out).filter((n) => n.endsWith(".state")).length, 3);
    assert.deepEqual(json("status", "--data-root", root, "--prometheus", join(out, "a.prom")).out.answers, { reused: 60, read: 0 });
  });

  // #56: the shipped unit and timer, as systemd reads them; verify checks
  // that ExecStart exists, so the command is placed where `npm install -g`
  // puts it with the prefix /usr/local, in a scratch root that holds the
  // system's own units (sysinit.target…). The unit names it bare, found on
  // systemd's search path (#63); scripts/check-systemd.sh installs it.
  test(
    "the shipped systemd service and timer pass systemd-analyze verify",
    has("systemd-analyze") && existsSync("/usr/lib/systemd/system/sysinit.target")
      ? {}
      : { skip: "needs systemd-analyze and the system's units" },
    () => {
      const units = fileURLToPath(new URL("../examples/systemd/", import.meta.url));
      const root = scratch();
      const service = readFileSync(join(units, "discord-journal-metrics.service"), "utf8");
      const command = /^ExecStart=(\S+)/m.exec(service)[1];
      assert.equal(command, "discord-journal", "no path that an install may not make");
      const at = join("/usr/local/bin", command);
      mkdirSync(join(root, dirname(at)), { recursive: true });
      writeFileSync(join(root, at), "#!/bin/sh\n", { mode: 0o755 });
      mkdirSync(join(root, "etc", "systemd", "system"), { recursive: true });
      cpSync("/usr/lib/systemd/system", join(root, "usr", "lib", "systemd", "system"), { recursive: true });
      const names = readdirSync(units);
      assert.deepEqual(names.sort(), ["discord-journal-metrics.service", "discord-journal-metrics.timer"]);
      for (const n of names) cpSync(join(units, n), join(root, "etc", "systemd", "system", n));
      const r = spawnSync("systemd-analyze", ["verify", `--root=${root}`, ...names.map((n) => `/etc/systemd/system/${n}`)], {
        encoding: "utf8",
      });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.equal((r.stdout + r.stderr).trim(), "", "no warning");
      assert.doesNotMatch(service, /SuccessExitStatus/, "a failed collection fails the unit");
    },
  );

  // #56: a data root that is missing or has no discord/ (an unmounted
  // volume) is a failed collection, never an all-clear: the file says so,
  // keeps when one last succeeded, and the run exits 1.
  test("--prometheus: a data root without discord/ is a failed collection, said in the file, exit 1", withPromtool, async () => {
    const { root, live } = await fleetRoot();
    live.kill();
    const file = join(scratch(), "discord-journal.prom");
    assert.equal(cli("status", "--data-root", root, "--prometheus", file).status, 0);
    const before = /^discord_journal_collection_last_success_timestamp_seconds\{[^}]*\} (\S+)$/m.exec(readFileSync(file, "utf8"))[1];
    renameSync(join(root, "discord"), join(root, "elsewhere"));
    const r = cli("status", "--data-root", root, "--prometheus", file);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      new RegExp(`the collection of ${root} failed, and .* says so .*: there is no ${join(root, "discord")} to list \\(ENOENT\\)`),
    );
    const text = readFileSync(file, "utf8");
    const at = `data_root="${root}"`;
    assert.ok(text.includes(`\ndiscord_journal_collection_success{${at}} 0\n`), text);
    assert.ok(text.includes(`\ndiscord_journal_collection_error{${at},cause="ENOENT"} 1\n`), text);
    assert.ok(text.includes(`\ndiscord_journal_collection_last_success_timestamp_seconds{${at}} ${before}\n`), text);
    assert.doesNotMatch(text, /binding=/, "no binding's series from a run that judged none");
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(check.status, 0, check.stdout + check.stderr);
  });
});

/** One binding's journal under `root`, for a usage mistake with --prometheus. */
function readyOf(root) {
  return join(root, "discord", "ready");
}
