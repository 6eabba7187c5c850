// The pager, end to end (#56): a real Prometheus server scraping real
// node_exporters on 127.0.0.1, loaded with the shipped alerting rules
// (docs/prometheus-rules.yml) with each `for:` shortened in a derived copy,
// and the command writing the metrics every second as its timer would.
// Bindings are broken as they break in production (a connector killed and
// one frozen, a process stopped in a braked binding's guard, a cut line, a
// running connector on a full file system, a delivery past the dedupe window, a journal whose parent its owner cannot search), a collection fails (a data root without discord/) and
// one host of two goes away; each alert must fire, then resolve after its
// fix. A running connector whose directory's mode alone is wrong needs a
// hand (a ticket) and pages no one. Run once per gate, in the reliability suite, not in each runtime's.
import assert from "node:assert/strict";
import { execFile, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, deadPid, freePort, isAddon, liveOwner, textfileExporter } from "../__test__/helpers.mjs";

const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));
const rules = fileURLToPath(new URL("../docs/prometheus-rules.yml", import.meta.url));
const has = (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;
const root = process.getuid?.() === 0;
const skip = !isAddon
  ? "the command is the addon's"
  : !has("prometheus") || !has("prometheus-node-exporter") || !has("flock")
    ? "needs prometheus, node_exporter (Debian's packages; .ci/run installs them) and util-linux's flock"
    : false;

const made = [];
const procs = [];
const mounts = [];
after(() => {
  for (const p of procs) {
    try {
      process.kill(p.pid, "SIGCONT");
      p.kill("SIGKILL");
    } catch {
      // Gone already.
    }
  }
  for (const m of mounts) spawnSync("umount", ["-l", m]);
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), "discord-journal-alerts-"));
  made.push(d);
  return d;
};

function exporter(dir, port) {
  const p = textfileExporter(dir, port);
  procs.push(p);
  return p;
}

/** Polls `f` every 250 ms until it returns a truthy value, or fails after `ms` naming `what`. */
async function until(what, f, ms = 60_000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      last = await f();
      if (last) return last;
    } catch (e) {
      last = e.message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail(`${what}: not within ${ms} ms (last: ${JSON.stringify(last)})`);
}

test(
  "each alert fires in a real Prometheus where the verdict needs a hand, and resolves after its fix",
  { skip, timeout: 300_000 },
  async () => {
    const top = scratch();
    // Host a: data root A (its bindings) and root B (whose collection fails),
    // two files on one node_exporter; host b: root C, whose exporter goes.
    const A = join(top, "a-root");
    const B = join(top, "b-root");
    const C = join(top, "c-root");
    const textA = join(top, "text-a");
    const textB = join(top, "text-b");
    for (const d of [textA, textB]) mkdirSync(d);
    const binding = (rootDir, name) => {
      const d = join(rootDir, "discord", name);
      M.ensureJournal(d);
      M.appendInbox(d, { id: `${name}-1` });
      return d;
    };
    binding(A, "ready");
    // Declared idle: no alert asks why it does not run.
    writeFileSync(join(A, "discord-journal.idle"), "# kept for later\nready\n");
    const crash = binding(A, "crash");
    mkdirSync(join(crash, "run.lock"), { mode: 0o700 });
    writeFileSync(
      join(crash, "run.lock", "owner.json"),
      JSON.stringify({ pid: deadPid(), start: "5", boot: M.bootId(), at: "2026-12-01T00:00:00.000Z" }) + "\n",
    );
    const frozen = binding(A, "frozen");
    const owner = await liveOwner(frozen);
    procs.push(owner);
    const guarded = binding(A, "guarded");
    M.requestStop(guarded, "maintenance");
    const holder = spawn("flock", ["-x", join(guarded, "turns"), "sleep", "600"], { stdio: "ignore", detached: true });
    procs.push(holder);
    // A delivery two hours without an outcome: past the dedupe window.
    const late = binding(A, "late");
    M.appendOutbox(late, { nonce: "n1", status: "intent", at: new Date(Date.now() - 7_200_000).toISOString(), channel: "c1" });
    const damaged = binding(A, "damaged");
    writeFileSync(join(damaged, "inbox.jsonl"), '{"id":"cut', { flag: "a" });
    // A running connector on a full file system: a small tmpfs (root alone
    // may mount one), filled once the connector runs: it cannot append.
    let full = null;
    if (root) {
      const mnt = join(A, "discord", "full");
      mkdirSync(mnt, { recursive: true });
      if (spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mnt]).status === 0) {
        mounts.push(mnt);
        M.ensureJournal(mnt);
        procs.push(await liveOwner(mnt));
        spawnSync("sh", ["-c", `cat /dev/zero > '${join(mnt, "filler")}' 2>/dev/null`]);
        full = mnt;
      } else rmSync(mnt, { recursive: true });
    }
    // A running connector whose directory's mode alone is wrong (0755): it
    // needs a hand, and keeps working.
    const modey = binding(A, "modey");
    procs.push(await liveOwner(modey));
    chmodSync(modey, 0o755);
    // A service's journal whose parent its owner (nobody) cannot search: its
    // service reaches none of it, so it is stuck (root alone may give it away).
    let closed = null;
    if (root) {
      chmodSync(top, 0o755);
      chmodSync(A, 0o755);
      closed = binding(A, "closed");
      for (const p of [closed, join(closed, "turns"), join(closed, "inbox.jsonl")]) chownSync(p, 65534, 65534);
      chmodSync(join(A, "discord"), 0o700);
    }
    binding(B, "other");
    binding(C, "far");
    for (let i = 0; i < 200 && !readFileSync("/proc/locks", "utf8").includes(` ${holder.pid} `); i++)
      await new Promise((r) => setTimeout(r, 10));
    process.kill(holder.pid, "SIGSTOP");
    process.kill(owner.pid, "SIGSTOP");

    // The collection, every second, as the timer runs it.
    let collecting = true;
    const collect = (dataRoot, file) =>
      new Promise((resolve) => execFile(process.execPath, [bin, "status", "--data-root", dataRoot, "--prometheus", file], () => resolve()));
    const collector = (async () => {
      while (collecting) {
        await Promise.all([collect(A, join(textA, "a.prom")), collect(B, join(textA, "b.prom")), collect(C, join(textB, "c.prom"))]);
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();

    const [pa, pb, pp] = [await freePort(), await freePort(), await freePort()];
    exporter(textA, pa);
    let hostB = exporter(textB, pb);
    // The shipped rules, each `for:` shortened to 3 s.
    const derived = join(top, "rules.yml");
    writeFileSync(derived, readFileSync(rules, "utf8").replace(/for: \d+[smhd]/g, "for: 3s"));
    const config = join(top, "prometheus.yml");
    writeFileSync(
      config,
      [
        "global: { scrape_interval: 1s, evaluation_interval: 1s }",
        `rule_files: ["${derived}"]`,
        "scrape_configs:",
        `  - job_name: node`,
        `    static_configs: [{ targets: ["127.0.0.1:${pa}", "127.0.0.1:${pb}"] }]`,
        "",
      ].join("\n"),
    );
    const server = spawn(
      "prometheus",
      [`--config.file=${config}`, `--storage.tsdb.path=${join(top, "tsdb")}`, `--web.listen-address=127.0.0.1:${pp}`],
      { stdio: "ignore" },
    );
    procs.push(server);

    const alerts = async () => {
      const res = await fetch(`http://127.0.0.1:${pp}/api/v1/alerts`);
      return (await res.json()).data.alerts;
    };
    const firing = (list, name, labels = {}) =>
      list.some((a) => a.state === "firing" && a.labels.alertname === name && Object.entries(labels).every(([k, v]) => a.labels[k] === v));
    const ofA = { data_root: A, instance: `127.0.0.1:${pa}` };

    // Everything broken: each alert fires.
    renameSync(join(B, "discord"), join(B, "unmounted"));
    const expected = [
      ["DiscordBindingStuck", { ...ofA, binding: "frozen" }],
      ["DiscordBindingStuck", { ...ofA, binding: "guarded" }],
      ["DiscordBindingCrashed", { ...ofA, binding: "crash" }],
      ["DiscordBindingDamaged", { ...ofA, binding: "damaged" }],
      ["DiscordDeliveriesUnresolved", { ...ofA, binding: "late" }],
      ["DiscordJournalCollectionFailed", { data_root: B, cause: "ENOENT" }],
      ...(full ? [["DiscordBindingBlocked", { ...ofA, binding: "full" }]] : []),
      ...(closed ? [["DiscordBindingStuck", { ...ofA, binding: "closed" }]] : []),
    ];
    const seen = [];
    const began = Date.now();
    const tell = (name, labels) => `${name}{${labels.binding ?? labels.cause}}`;
    const active = (list, name, labels) =>
      list.some((a) => a.labels.alertname === name && Object.entries(labels).every(([k, v]) => a.labels[k] === v));
    try {
      for (const [name, labels] of expected) {
        await until(`${name} ${JSON.stringify(labels)} fires`, async () => firing(await alerts(), name, labels));
        seen.push(`${tell(name, labels)} fired by ${((Date.now() - began) / 1000).toFixed(1)} s`);
      }
      // A binding with no connector pages, unless declared idle.
      await until("DiscordBindingNotRunning for C's far fires", async () =>
        firing(await alerts(), "DiscordBindingNotRunning", { data_root: C, binding: "far" }),
      );
      assert.equal(active(await alerts(), "DiscordBindingNotRunning", { ...ofA, binding: "ready" }), false, "declared idle");
      seen.push("DiscordBindingNotRunning{far} fired, not for the idle one");
      // A mode alone: the ticket, and no page.
      await until("DiscordBindingNeedsHand for modey fires", async () =>
        firing(await alerts(), "DiscordBindingNeedsHand", { ...ofA, binding: "modey" }),
      );
      assert.equal(active(await alerts(), "DiscordBindingBlocked", { ...ofA, binding: "modey" }), false, "a mode alone pages no one");
      seen.push("DiscordBindingNeedsHand{modey} fired, DiscordBindingBlocked not");
      // One host of two goes: its metrics go missing, and only its.
      const gone = Date.now();
      hostB.kill("SIGKILL");
      await until("DiscordJournalMetricsMissing for host b fires", async () =>
        firing(await alerts(), "DiscordJournalMetricsMissing", { instance: `127.0.0.1:${pb}`, data_root: C }),
      );
      assert.equal(firing(await alerts(), "DiscordJournalMetricsMissing", { instance: `127.0.0.1:${pa}` }), false, "host a still reports");
      seen.push(`DiscordJournalMetricsMissing{host b} fired ${((Date.now() - gone) / 1000).toFixed(1)} s after it went`);

      // Each fix, as its alert's command says; each alert resolves.
      const fixed = Date.now();
      process.kill(owner.pid, "SIGCONT");
      // flock(1) and its child share the lock: the group is what holds it.
      process.kill(-holder.pid, "SIGKILL");
      assert.equal(spawnSync(process.execPath, [bin, "recover", crash]).status, 0);
      assert.equal(spawnSync(process.execPath, [bin, "repair", damaged, "--apply"], { encoding: "utf8" }).status, 0);
      assert.equal(spawnSync(process.execPath, [bin, "resolve", late, "--nonce", "n1", "--as", "confirmed"]).status, 0);
      renameSync(join(B, "unmounted"), join(B, "discord"));
      if (full) rmSync(join(full, "filler"));
      chmodSync(modey, 0o700);
      if (closed) {
        // The fleet's own next for it, pasted.
        const fleet = JSON.parse(spawnSync(process.execPath, [bin, "status", "--data-root", A, "--json"], { encoding: "utf8" }).stdout);
        const next = fleet.bindings.find((b) => b.binding === "closed").verdict.next;
        assert.equal(spawnSync("sh", ["-c", /`([^`]+)`/.exec(next)[1]]).status, 0, next);
      }
      hostB = exporter(textB, pb);
      for (const [name, labels] of [...expected, ["DiscordJournalMetricsMissing", { instance: `127.0.0.1:${pb}` }]])
        await until(`${name} ${JSON.stringify(labels)} resolves`, async () => !active(await alerts(), name, labels));
      console.log(
        `# figure alerts in a real Prometheus (each for: 3 s): ${seen.join(", ")}; all resolved ${((Date.now() - fixed) / 1000).toFixed(1)} s after their fixes`,
      );
    } finally {
      collecting = false;
      await collector;
    }
  },
);
