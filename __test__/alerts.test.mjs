// What pages, said once (#63): docs/operators.md gives each state, and each
// problem that pages, its alert, `for:` and severity in one table, and the
// alerting rules (docs/prometheus-rules.yml) must say the same, both ways.
// And a running connector on a real full file system (a tmpfs), which
// status calls "running, 1 problem", must page, while one whose directory's
// mode alone is wrong stays a ticket: told apart by binding_blocked, the
// verdict's own `blocks`, fed from the real metrics file to promtool with
// the real `for:`. The command is this package's own, so the second test
// skips against another implementation.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, addonOnly, bin, liveOwner, mountsTmpfs, scratch } from "./helpers.mjs";

const require = createRequire(import.meta.url);
const { STATES } = require("../cli/fleet.js");
const rulesFile = fileURLToPath(new URL("../docs/prometheus-rules.yml", import.meta.url));
const operators = fileURLToPath(new URL("../docs/operators.md", import.meta.url));
const has = (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;
const withPromtool = has("promtool") ? {} : { skip: "needs promtool (Debian's prometheus package; .ci/run installs it)" };

/**
 * The rules of the file: `{ alert, expr, for, severity }` each. The file is
 * the project's own, one key a line; promtool, where it is installed,
 * confirms the count, so a shape this misreads fails here.
 */
function rulesOf(text) {
  const rules = [];
  const unquote = (v) => (/^'.*'$/.test(v) ? v.slice(1, -1).replace(/''/g, "'") : /^".*"$/.test(v) ? JSON.parse(v) : v);
  for (const line of text.split("\n")) {
    const m = /^\s*(- )?([a-z_]+):\s*(.*)$/.exec(line);
    if (!m || line.trimStart().startsWith("#")) continue;
    const [, dash, key, raw] = m;
    if (dash && key === "alert") rules.push({ alert: raw });
    else if (rules.length > 0 && ["expr", "for", "severity"].includes(key)) rules.at(-1)[key] = unquote(raw);
  }
  return rules;
}

/** The verdict states an expression selects: its binding_state matchers, and a brake's own series. */
function statesOf(expr) {
  const states = new Set();
  for (const m of expr.matchAll(/discord_journal_binding_state\{state=~?"([^"]+)"\}/g)) for (const s of m[1].split("|")) states.add(s);
  // A brake is read from binding_braked, 1 whatever else the verdict says.
  if (/discord_journal_binding_braked\b/.test(expr)) states.add("braked");
  return [...states].sort();
}

/** The rows of operators.md's table of alerts: `{ what, states, alert, for, severity }`. */
function tableOf(text) {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.startsWith("| state, or what is found | alert |"));
  assert.notEqual(at, -1, "docs/operators.md has the table of alerts");
  const rows = [];
  for (const line of lines.slice(at + 2)) {
    if (!line.startsWith("|")) break;
    const [what, alert, forCell, severity] = line
      .slice(1, -1)
      .split(" | ")
      .map((c) => c.trim());
    const states = [...what.matchAll(/`([a-z]+)`/g)].map((m) => m[1]).filter((w) => STATES.includes(w));
    rows.push({ what, states: [...new Set(states)].sort(), alert: alert.replace(/`/g, ""), for: forCell, severity });
  }
  return rows;
}

test("operators.md's table of alerts and the rules say the same: each alert, its states, its for: and its severity, both ways", () => {
  const rules = rulesOf(readFileSync(rulesFile, "utf8"));
  if (has("promtool")) {
    const r = spawnSync("promtool", ["check", "rules", rulesFile], { encoding: "utf8" });
    assert.match(r.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`), "every rule read");
  }
  const table = tableOf(readFileSync(operators, "utf8"));
  const byName = new Map(rules.map((r) => [r.alert, r]));
  for (const row of table) {
    const rule = byName.get(row.alert);
    assert.ok(rule, `${row.alert}, in the table, is a rule`);
    assert.equal(rule.severity, row.severity, `${row.alert}'s severity`);
    assert.equal(rule.for ?? "none", row.for, `${row.alert}'s for:`);
    assert.deepEqual(statesOf(rule.expr), row.states, `the states ${row.alert}'s expression reads (${rule.expr})`);
  }
  const named = new Set(table.map((r) => r.alert));
  assert.deepEqual(
    rules.map((r) => r.alert).filter((a) => !named.has(a)),
    [],
    "every rule is in the table",
  );
  assert.equal(named.size, table.length, "each alert is one row");
  // Every state where the connector cannot do its work has a page.
  for (const s of ["stuck", "damaged", "unreadable", "crashed", "ready", "running"])
    assert.ok(
      table.some((r) => r.states.includes(s) && r.severity === "page"),
      `${s} pages`,
    );
});

test(
  "a running connector on a full file system pages (binding_blocked 1), one whose directory's mode alone is wrong stays a ticket",
  { ...mountsTmpfs, ...addonOnly },
  async (t) => {
    const root = scratch();
    const full = join(root, "discord", "full");
    const modey = join(root, "discord", "modey");
    mkdirSync(full, { recursive: true });
    mkdirSync(modey);
    const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", full]);
    if (m.status !== 0) return t.skip(`cannot mount a tmpfs here: ${String(m.stderr).trim()}`);
    const owners = [];
    try {
      M.ensureJournal(full);
      M.ensureJournal(modey);
      chmodSync(modey, 0o755);
      owners.push(await liveOwner(full), await liveOwner(modey));
      // Filled once the connector runs: it cannot append.
      spawnSync("sh", ["-c", 'cat /dev/zero > "$1"', "sh", join(full, "filler")]);

      const fleet = spawnSync(process.execPath, [bin, "status", "--data-root", root, "--json"], { encoding: "utf8" });
      const verdict = (b) => JSON.parse(fleet.stdout).bindings.find((x) => x.binding === b).verdict;
      assert.equal(verdict("full").state, "running");
      assert.deepEqual(
        verdict("full").problems.map((p) => [/ENOSPC/.test(p.what), p.blocks]),
        [[true, true]],
      );
      assert.equal(verdict("modey").state, "running");
      assert.deepEqual(
        verdict("modey").problems.map((p) => [/mode 0755/.test(p.what), p.blocks]),
        [[true, undefined]],
      );

      const file = join(root, "metrics.prom");
      const r = spawnSync(process.execPath, [bin, "status", "--data-root", root, "--prometheus", file], { encoding: "utf8" });
      assert.equal(r.status, 0, r.stderr);
      const text = readFileSync(file, "utf8");
      const sample = (name, b) => new RegExp(`^discord_journal_${name}\\{data_root="[^"]*",binding="${b}"\\} (\\S+)$`, "m").exec(text)?.[1];
      assert.deepEqual(
        ["full", "modey"].map((b) => [sample("binding_blocked", b), sample("binding_needs_hand", b)]),
        [
          ["1", "1"],
          ["0", "1"],
        ],
      );
      if (withPromtool.skip) return t.skip(withPromtool.skip);
      // The file as a scrape would store it, each minute for 20 minutes,
      // under the shipped rules with their real `for:`: Blocked fires for
      // "full" alone at 5 minutes; NeedsHand, a ticket, for both at 15.
      const series = text
        .split("\n")
        .filter((l) => l !== "" && !l.startsWith("#") && !l.endsWith(" NaN"))
        .map((l) => {
          const [, name, labels, v] = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(l) ?? /^([a-z_]+)()\s(\S+)$/.exec(l);
          const all = `${labels}${labels ? "," : ""}instance="a:9100",job="node"`;
          return `      - series: '${name}{${all.replace(/'/g, "''")}}'\n        values: "${v}x20"`;
        });
      const alerts = (name, at, bindings, severity) =>
        [
          `      - expr: ALERTS{alertname="${name}",alertstate="firing"}`,
          `        eval_time: ${at}`,
          `        exp_samples:`,
          ...bindings.map(
            (b) =>
              `          - labels: 'ALERTS{alertname="${name}",alertstate="firing",binding="${b}",data_root="${root}",instance="a:9100",job="node",severity="${severity}"}'\n            value: 1`,
          ),
        ].join("\n");
      const cases = join(root, "cases.yml");
      writeFileSync(
        cases,
        [
          `rule_files: ['${rulesFile}']`,
          "evaluation_interval: 1m",
          "tests:",
          "  - interval: 1m",
          "    input_series:",
          ...series,
          "    promql_expr_test:",
          alerts("DiscordBindingBlocked", "4m", [], "page"),
          alerts("DiscordBindingBlocked", "5m", ["full"], "page"),
          alerts("DiscordBindingNeedsHand", "15m", ["full", "modey"], "ticket"),
          "",
        ].join("\n"),
      );
      const run = spawnSync("promtool", ["test", "rules", cases], { encoding: "utf8" });
      assert.equal(run.status, 0, run.stdout + run.stderr);
    } finally {
      for (const o of owners) o.kill("SIGKILL");
      // Lazily: a killed owner may not have let go of the mount yet.
      spawnSync("umount", ["-l", full]);
    }
  },
);
