// Reliability under a cgroup memory limit (#32): a connector process serves
// several bindings, and what the module keeps between calls adds up over
// them. One process reads many bindings' inbox, outbox and admissions, in
// rounds, as the connector does; journal.mjs keeps nothing between calls.
// The process runs in a cgroup of its own under this process's memory
// cgroup. The limit is what journal.mjs needs, found in two steps, since
// Node sizes V8's heap by the cgroup's limit when it starts: with no limit
// (and this machine's memory in view) journal.mjs's peak is what a lazy
// collector leaves, nearly three times what it needs (measured: 267 MiB, and
// 96 MiB under a limit of 294). So journal.mjs runs with no limit, for its
// peak; then under that peak plus MARGIN, for its peak where Node sees a
// limit; the limit is that peak plus MARGIN. Under it journal.mjs must
// still finish, and the module under test (JOURNAL_MODULE, or this
// package) must finish too, with journal.mjs's answers: not be killed by
// the kernel's OOM killer. The cgroup's usage counts the page cache its
// process brings in (v1 and v2 alike); that is reclaimed under the limit,
// so it does not kill.
//
// Runs as root where a memory controller can be used: cgroup v2 with the
// memory controller enabled below this process's cgroup, or a cgroup v1
// memory hierarchy; skips by name otherwise, and where the specification
// (journal.mjs, beside this checkout or at DISCORD_JOURNAL_SPEC) is absent.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { modulePath, scratch } from "../__test__/helpers.mjs";
import { DAYS, LAST_DAY, writeBinding } from "../bench/journals.mjs";

const figure = (name, value) => console.log(`# figure ${name}: ${value}`);
const MiB = 1 << 20;
const mib = (bytes) => `${(bytes / MiB).toFixed(0)} MiB`;

const stack = process.env.DISCORD_JOURNAL_SPEC ?? fileURLToPath(new URL("../../shared/spec/reference/stack", import.meta.url));
const spec = join(stack, "packages", "discord", "src", "journal.mjs");

// The journal: BINDINGS bindings of LINES lines in each of the three files
// (about 14, 9 and 6 MB), read ROUNDS times over. Chosen so that the test
// takes under a minute on a 2-core machine, journal.mjs's runs (about 11 s
// each) most of it.
const BINDINGS = 8;
const LINES = 100_000;
const ROUNDS = 3;
/** The limit: journal.mjs's peak under a limit, and this much more. */
const MARGIN = 0.1;

// --- the cgroup ------------------------------------------------------------

const read = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
};

/** Where each cgroup hierarchy is mounted: [root, mount point, type, super options]. */
function mounts() {
  return (read("/proc/self/mountinfo") ?? "")
    .split("\n")
    .map((line) => {
      const [left, right] = line.split(" - ");
      if (!right) return null;
      const f = left.split(" ");
      const [type, , options] = right.split(" ");
      return { root: f[3], point: f[4], type, options: (options ?? "").split(",") };
    })
    .filter((m) => m && (m.type === "cgroup" || m.type === "cgroup2"));
}

/** This process's cgroup `path` under a mount of its hierarchy, or null. */
function under(mount, path) {
  if (mount.root === "/") return join(mount.point, path);
  if (path === mount.root || path.startsWith(mount.root + "/")) return join(mount.point, path.slice(mount.root.length));
  return null;
}

/**
 * The memory cgroup this process may make children under: { version, dir },
 * or { skip: the reason }. v2 first: its memory controller must be enabled
 * in the subtree of this process's cgroup; then v1's memory hierarchy.
 */
function memoryCgroup() {
  if (process.platform !== "linux") return { skip: "cgroups are Linux's" };
  if (process.getuid?.() !== 0) return { skip: "not root: a cgroup of its own needs root" };
  const own = (read("/proc/self/cgroup") ?? "").split("\n").map((l) => /^(\d+):([^:]*):(.*)$/.exec(l));
  const all = mounts();
  const unified = own.find((m) => m && m[1] === "0" && m[2] === "");
  if (unified) {
    for (const m of all.filter((m) => m.type === "cgroup2")) {
      const dir = under(m, unified[3]);
      if (dir && (read(join(dir, "cgroup.subtree_control")) ?? "").split(/\s+/).includes("memory")) return { version: 2, dir };
    }
  }
  const v1 = own.find((m) => m && m[2].split(",").includes("memory"));
  if (v1) {
    for (const m of all.filter((m) => m.type === "cgroup" && m.options.includes("memory"))) {
      const dir = under(m, v1[3]);
      if (dir && existsSync(join(dir, "memory.limit_in_bytes"))) return { version: 1, dir };
    }
  }
  return { skip: "no usable cgroup memory controller (v2 with memory enabled below this process's cgroup, or a v1 memory hierarchy)" };
}

/** Whether a child cgroup can be made under `found` and a process moved into it: null, or why not. */
function refusal(found) {
  const dir = join(found.dir, `discord-journal-probe-${process.pid}`);
  try {
    mkdirSync(dir);
  } catch (e) {
    return `cannot make a cgroup under this process's memory cgroup (${e.code})`;
  }
  try {
    if (!existsSync(join(dir, found.version === 2 ? "memory.max" : "memory.limit_in_bytes"))) return "a new cgroup has no memory limit";
    const r = spawnSync("sh", ["-c", 'echo $$ > "$1/cgroup.procs"', "sh", dir], { encoding: "utf8" });
    return r.status === 0 ? null : `cannot move a process into a new cgroup: ${r.stderr.trim()}`;
  } finally {
    remove(dir);
  }
}

const made = new Set();
let serial = 0;
const found = memoryCgroup();
const cgroup = found.skip ? found : { ...found, skip: refusal(found) ?? undefined };

/** A new cgroup under this process's, limited to `limit` bytes (none: no limit). */
function create(limit) {
  const dir = join(cgroup.dir, `discord-journal-test-${process.pid}-${serial++}`);
  mkdirSync(dir);
  made.add(dir);
  if (limit) writeFileSync(join(dir, cgroup.version === 2 ? "memory.max" : "memory.limit_in_bytes"), String(limit));
  return dir;
}

/** Removes a cgroup once its process has exited (a moment after, at most). */
function remove(dir) {
  for (let tries = 0; ; tries++) {
    try {
      rmdirSync(dir);
      made.delete(dir);
      return;
    } catch (e) {
      if (e.code === "ENOENT") {
        made.delete(dir);
        return;
      }
      if (tries >= 50) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

after(() => {
  // Deleting the entry being visited is safe in a Set's iteration.
  for (const dir of made) remove(dir);
});

/** The cgroup's peak usage in bytes (null where the kernel keeps none), and its OOM kills. */
function figures(dir) {
  const peak = read(join(dir, cgroup.version === 2 ? "memory.peak" : "memory.max_usage_in_bytes"));
  const events = read(join(dir, cgroup.version === 2 ? "memory.events" : "memory.oom_control")) ?? "";
  return { peak: peak === null ? null : Number(peak), oomKills: Number(/^oom_kill (\d+)$/m.exec(events)?.[1] ?? 0) };
}

// --- the reads (the journal: bench/journals.mjs) ------------------------------

// The child: loads the module at its path, reads every binding ROUNDS
// times over (bench/journals.mjs's readBinding), and prints each round's
// answers and its peak resident set.
const rounds = `
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { readBinding } from ${JSON.stringify(new URL("../bench/journals.mjs", import.meta.url).href)};
const [path, rounds, date, ...dirs] = process.argv.slice(1);
const M = path.endsWith(".mjs") ? await import(pathToFileURL(path).href) : createRequire(path)(path);
const answers = [];
for (let r = 0; r < Number(rounds); r++) {
  answers.push(dirs.map((d) => readBinding(M, d, date)));
}
console.log(JSON.stringify({ answers, maxRssKiB: process.resourceUsage().maxRSS }));
`;

/** Runs the reads with `module` in a new cgroup limited to `limit` bytes (none: unlimited). */
function readIn(module, dirs, limit) {
  const dir = create(limit);
  try {
    // The shell joins the cgroup, then becomes node: node reads its limit
    // (and sizes its heap by it) from the start.
    const r = spawnSync(
      "sh",
      [
        "-c",
        'echo $$ > "$1/cgroup.procs" && shift && exec "$@"',
        "sh",
        dir,
        process.execPath,
        "--input-type=module",
        "-e",
        rounds,
        module,
        String(ROUNDS),
        LAST_DAY,
        ...dirs,
      ],
      { encoding: "utf8", env: process.env, timeout: 120_000, maxBuffer: 16 * MiB },
    );
    const line = r.status === 0 ? r.stdout.trim().split("\n").pop() : null;
    return { status: r.status, signal: r.signal, stderr: r.stderr, out: line ? JSON.parse(line) : null, ...figures(dir) };
  } finally {
    remove(dir);
  }
}

const skip = cgroup.skip ?? (existsSync(spec) ? false : "no specification (journal.mjs) beside this checkout or at DISCORD_JOURNAL_SPEC");
const how = (r) => (r.signal ? `killed (${r.signal})` : `exit ${r.status}`);

describe("cgroup memory limit", () => {
  test(
    `${BINDINGS} bindings × ${LINES.toLocaleString("en")} lines, read ${ROUNDS} times over, under journal.mjs's peak + ${MARGIN * 100}%: not killed, journal.mjs's answers`,
    { skip, timeout: 300_000 },
    () => {
      const top = scratch("discord-journal-cgroup-");
      const dirs = Array.from({ length: BINDINGS }, (_, b) => join(top, "discord", `binding-${b}`));
      dirs.forEach((d, b) => writeBinding(d, b, LINES));

      // Where the kernel keeps no peak (v2 before Linux 5.19), the child's
      // own peak resident set stands for it (more: it counts shared pages).
      const peak = (r) => r.peak ?? r.out.maxRssKiB * 1024;
      const above = (r) => Math.ceil((peak(r) * (1 + MARGIN)) / MiB) * MiB;
      const free = readIn(spec, dirs);
      assert.equal(free.status, 0, `journal.mjs with no limit: ${how(free)}: ${free.stderr}`);
      const first = readIn(spec, dirs, above(free));
      assert.equal(first.status, 0, `journal.mjs under ${mib(above(free))}: ${how(first)}: ${first.stderr}`);
      const limit = above(first);

      const reference = readIn(spec, dirs, limit);
      assert.equal(reference.status, 0, `journal.mjs under ${mib(limit)}: ${how(reference)}: ${reference.stderr}`);
      assert.deepEqual(first.out.answers, free.out.answers);
      assert.deepEqual(reference.out.answers, free.out.answers);

      // On journal.mjs itself, its run under the limit is the module's.
      const tested = resolve(modulePath) === resolve(spec) ? reference : readIn(modulePath, dirs, limit);
      const shown = (r) =>
        `${how(r)}${r.peak === null ? "" : `, cgroup peak ${mib(r.peak)}`}${r.out ? `, maxRSS ${mib(r.out.maxRssKiB * 1024)}` : ""}${r.oomKills ? `, ${r.oomKills} OOM kill(s)` : ""}`;
      figure(
        "cgroup memory limit",
        `cgroup v${cgroup.version}; journal.mjs with no limit: ${shown(free)}; under ${mib(above(free))}: ${shown(first)}; limit ${mib(limit)} (that peak + ${MARGIN * 100}%); under it journal.mjs ${shown(reference)}, the module under test ${shown(tested)}`,
      );
      assert.equal(
        tested.signal,
        null,
        `the module under test was killed (${tested.signal}) under ${mib(limit)}: ${tested.stderr.trim().split("\n").pop() ?? ""}`,
      );
      assert.equal(tested.status, 0, `the module under test under ${mib(limit)}: ${how(tested)}: ${tested.stderr}`);
      assert.deepEqual(tested.out.answers, reference.out.answers);
      // The answers are the journal's, not an empty read's.
      const [ids, unresolved, admissions] = reference.out.answers[0][0];
      assert.deepEqual([ids, unresolved, admissions], [LINES, LINES / 40, LINES / DAYS]);
    },
  );
});
