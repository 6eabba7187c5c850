// The schedule explorer (#30, docs/lock.md): the lock's promises checked
// under schedules the kernel may choose and a test run rarely does. For a
// first operation A and the others B (and C), A runs alone once under
// strace to list the system calls it makes (between two marker calls, on
// its main thread); then, for each of them in turn, A is run again with
// that one call delayed (strace's inject=SYSCALL:delay_enter, which only
// pauses it, as a preemption would), the others are played to completion
// (or until they wait for A) meanwhile, A resumes, and the journal is
// checked with every process still alive:
//
// - at most one process whose claim stood holds the binding, and its
//   readPid is its own record;
// - every record whose append returned is in the file or a quarantine;
// - every operator's STOP line is still there;
// - no refusal names a brake or an operator when no operator acted;
// - nothing outside the journal was touched.
//
// `node reliability/explore.mjs [--sample N] [--jobs N]` runs every
// schedule (or about N of them, spread over every combination; N at once)
// and prints the counts;
// explore.test.mjs runs a fixed sample in the suite.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("..", import.meta.url));
const path = process.env.JOURNAL_MODULE ? resolve(process.env.JOURNAL_MODULE) : join(root, "index.js");
const M = path.endsWith(".mjs") ? await import(pathToFileURL(path).href) : createRequire(import.meta.url)(path);
export const isAddon = typeof M.DiscordError === "function";
const opScript = fileURLToPath(new URL("explore-op.mjs", import.meta.url));

/** Whether strace can trace and inject here. */
export const canTrace = spawnSync("strace", ["-qq", "-e", "inject=getppid:delay_enter=1", "true"]).status === 0;

// The system calls a pause is put before: every one that touches a file, a
// directory, a lock or a process (not memory or the runtime's own futexes).
const NAMES = [
  "open",
  "openat",
  "close",
  "mkdir",
  "mkdirat",
  "rmdir",
  "unlink",
  "unlinkat",
  "link",
  "linkat",
  "rename",
  "renameat",
  "renameat2",
  "stat",
  "lstat",
  "fstat",
  "newfstatat",
  "statx",
  "access",
  "faccessat",
  "faccessat2",
  "readlink",
  "readlinkat",
  "flock",
  "fcntl",
  "dup",
  "getdents64",
  "read",
  "pread64",
  "write",
  "pwrite64",
  "fsync",
  "fdatasync",
  "ftruncate",
  "kill",
];

/** How long A is paused, and how far ahead of the others it starts. */
const PAUSE_MS = 350;
const HEAD_MS = 60;

/** The combinations: A (paused) first, then the others in the order they run. */
export { play };
export function combinations() {
  const ops = ["claim", "release", "recover", "unlock", "stop", ...(isAddon ? ["repair"] : [])];
  const pairs = [];
  for (const a of ops) for (const b of ops) if (!(a === "release" && b === "release")) pairs.push([a, b]);
  const triples = [
    ["claim", "release", "claim"],
    ["release", "claim", "recover"],
    ["claim", "recover", "claim"],
    ["recover", "recover", "claim"],
    ["claim", "recover", "recover"],
    ...(isAddon
      ? [
          ["recover", "repair", "claim"],
          ["repair", "recover", "claim"],
        ]
      : []),
  ];
  return [...pairs, ...triples];
}

function bootId() {
  return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
}

function deadPid() {
  for (let p = 4_194_303; p > 1000; p -= 7919) {
    try {
      process.kill(p, 0);
    } catch (e) {
      if (e.code === "ESRCH") return p;
    }
  }
  throw new Error("no dead pid found");
}

/**
 * The states a combination starts from: a live owner where one of them
 * releases; otherwise a crashed run's lock where one clears locks, and also
 * no lock at all, so that claims race the clearing both ways.
 */
function bases(ops) {
  if (ops.includes("release")) return ["held"];
  if (ops.some((o) => ["recover", "unlock", "repair"].includes(o))) return ["stale", "empty"];
  return ["empty"];
}

/** A fresh journal in state `base`, and a canary outside it. */
function prepare(ops, base) {
  const top = mkdtempSync(join(tmpdir(), "discord-journal-explore-"));
  const dir = join(top, "j");
  M.ensureJournal(dir);
  mkdirSync(join(top, "outside"));
  writeFileSync(join(top, "outside", "canary"), "c");
  // A record acknowledged before anything ran; a cut tail where a repair
  // has something to set aside.
  // A cut line inside the file instead ("inside"): the repair writes the
  // file anew and renames it over.
  const cut = base === "inside" ? '{"id":"cu\n{"id":"after"}\n' : ops.includes("repair") ? '{"id":"cu' : "";
  writeFileSync(join(dir, "inbox.jsonl"), '{"id":"base"}\n' + cut, { mode: 0o600 });
  if (base === "stale") {
    // A crashed run's lock, for recover, unlock and repair to clear.
    mkdirSync(join(dir, "run.lock"), { mode: 0o700 });
    const rec = { pid: deadPid(), start: "12345", boot: bootId(), at: "2026-01-01T00:00:00.000Z" };
    writeFileSync(join(dir, "run.lock", "owner.json"), JSON.stringify(rec) + "\n", { mode: 0o600 });
  }
  return { top, dir };
}

/** A started operation: its child, its pid, and its next line of output. */
function start(op, dir, tag, strace) {
  const args = [opScript, op, dir, tag];
  const child = strace
    ? spawn("strace", ["-f", "-qq", "-o", strace.out, ...strace.args, process.execPath, ...args], { stdio: ["pipe", "pipe", "inherit"] })
    : spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
  let buf = "";
  const waiting = [];
  const lines = [];
  child.stdout.on("data", (d) => {
    buf += d;
    let at;
    while ((at = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, at));
      buf = buf.slice(at + 1);
    }
    while (waiting.length && lines.length) waiting.shift()(lines.shift());
  });
  const exited = new Promise((r) => child.on("close", r));
  child.on("close", () => {
    while (waiting.length) waiting.shift()(null);
  });
  const next = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => waiting.push(r)));
  const send = (l) => {
    if (child.stdin.writable) child.stdin.write(l + "\n");
  };
  return { op, tag, child, next, send, exited };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One strace line of thread `tid`: its call's name and arguments, or null. */
function call(line, tid, top) {
  const m = /^(\d+)\s+(.*)$/.exec(line);
  if (!m || Number(m[1]) !== tid) return null;
  const text = m[2];
  if (text.startsWith("<...")) return { resumed: true, delayed: text.includes("(DELAYED)") };
  const name = /^(\w+)\(/.exec(text)?.[1];
  if (!name) return null;
  const args = text
    .replace(/ <unfinished \.\.\.>$/, "")
    .replace(/\) += .*$/, ")")
    .split(top)
    .join("ROOT")
    .replace(new RegExp(`\\b${tid}\\b`, "g"), "PID")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "TIME")
    .replace(/0x[0-9a-f]+/g, "ADDR")
    .replace(/aside-[^"]*/g, "aside-STAMP")
    .replace(/\d{5,}/g, "N");
  const ret = / = (-?\d+)/.exec(text)?.[1];
  return { name, args, ret, delayed: text.includes("(DELAYED)") };
}

/**
 * A's system calls between the markers, each with its place among A's calls
 * of that name. The look through /proc for an owner in another PID
 * namespace (a stat of each process's namespace link, a read of each
 * status) only reads other processes: one pause at each kind of its calls
 * stands for all of them.
 */
function steps(trace, tid, top) {
  const counts = {};
  const out = [];
  const scanFds = new Set();
  const scanKinds = new Set();
  let inside = false;
  for (const line of trace.split("\n")) {
    const c = call(line, tid, top);
    if (!c || c.resumed) continue;
    counts[c.name] = (counts[c.name] ?? 0) + 1;
    if (c.args.includes("/@explore-begin")) inside = true;
    else if (c.args.includes("/@explore-end")) break;
    else if (inside) {
      const fd = /^\w+\((\d+)/.exec(c.args)?.[1];
      let scan = /"(\d+|N|PID)\/ns\/pid"|"\/proc\/(\d+|N|PID)\/status"/.test(c.args) || (fd !== undefined && scanFds.has(fd));
      if (c.name === "openat" && /"\/proc\/(\d+|N|PID)\/status"/.test(c.args) && c.ret !== undefined) scanFds.add(c.ret);
      if (c.name === "close" && fd !== undefined) scan = scanFds.delete(fd) || scan;
      if (scan) {
        if (scanKinds.has(c.name)) continue;
        scanKinds.add(c.name);
      }
      out.push({ name: c.name, k: counts[c.name], args: c.args });
    }
  }
  return out;
}

/** A call's shape: its arguments with every number left out (sizes, counts and times vary between runs). */
const shape = (args) => args.replace(/\d+/g, "#");

/** The k-th call of `name` on thread `tid` was delayed and is the one expected. */
function delayedAsExpected(trace, tid, top, step) {
  let n = 0;
  let found = null;
  for (const line of trace.split("\n")) {
    const c = call(line, tid, top);
    if (!c) continue;
    if (c.resumed) {
      if (found && found.pending) return c.delayed && shape(found.args) === shape(step.args);
      continue;
    }
    if (c.name !== step.name) continue;
    if (++n === step.k) {
      if (!line.endsWith(" <unfinished ...>")) return c.delayed && shape(c.args) === shape(step.args);
      found = { args: c.args, pending: true };
    }
  }
  return false;
}

/** The journal checked against the promises, with every process alive. */
function check(dir, top, ops, results) {
  const problems = [];
  const stood = results.filter((r) => r.stood);
  if (stood.length > 1) problems.push(`${stood.length} claims stood: ${stood.map((r) => r.tag).join(", ")}`);
  if (stood.length === 1) {
    const rec = M.readPid(dir);
    if (rec === null || rec.invalid || rec.pid !== stood[0].pid)
      problems.push(`the claim that stood lost its lock (readPid ${JSON.stringify(rec)})`);
  }
  const texts = readdirSync(dir)
    .filter((n) => n === "inbox.jsonl" || n.startsWith("inbox.jsonl.aside-"))
    .map((n) => readFileSync(join(dir, n), "utf8"))
    .join("\n");
  for (const id of ["base", ...results.filter((r) => r.appended).map((r) => r.appended)]) {
    if (!texts.includes(`"id":"${id}"`)) problems.push(`record ${id}, acknowledged, is lost`);
  }
  const stop = existsSync(join(dir, "STOP")) ? readFileSync(join(dir, "STOP"), "utf8") : "";
  for (const r of results) {
    if (r.braked && !stop.includes(`"reason":"${r.braked}"`)) problems.push(`the brake of ${r.tag} is gone`);
    if (r.op === "unlock" && !/STOP update is locked/.test(r.error ?? "") && !stop.includes('"reason":"unlock"'))
      problems.push(`the brake of ${r.tag} (unlock) is gone`);
  }
  if (!ops.includes("stop") && !ops.includes("unlock")) {
    for (const r of results)
      if (/operator|brake|STOP is present/.test(r.error ?? ""))
        problems.push(`${r.tag} refused naming a brake no operator set: ${r.error}`);
  }
  if (!existsSync(join(top, "outside", "canary"))) problems.push("the canary outside the journal is gone");
  return problems;
}

/** Plays one schedule: A paused at `step` (none: A alone, traced, to list its steps). */
async function play(ops, base, step) {
  const { top, dir } = prepare(ops, base);
  const out = join(top, "trace");
  const strace = step
    ? { out, args: ["-e", `trace=${step.name}`, "-e", `inject=${step.name}:delay_enter=${PAUSE_MS * 1000}:when=${step.k}`] }
    : { out, args: ["-e", `trace=${NAMES.join(",")}`] };
  // Every process starts (a release claims in its start), also when A's
  // steps are listed, so that A meets the same journal both times.
  const procs = ops.map((op, i) => start(op, dir, `${String.fromCharCode(65 + i)}-${op}`, i === 0 ? strace : null));
  try {
    const ready = await Promise.all(procs.map((p) => p.next()));
    if (ready.some((l) => !l?.startsWith("ready "))) throw new Error(`not ready: ${JSON.stringify(ready)}`);
    const tid = Number(ready[0].split(" ")[1]);
    const [a, ...others] = procs;
    a.send("go");
    const aResult = a.next();
    const results = [];
    if (step && others.length) {
      await sleep(HEAD_MS);
      for (const p of others) {
        p.send("go");
        results.push(JSON.parse(await p.next()));
      }
    }
    results.unshift(JSON.parse(await aResult));
    const problems = check(dir, top, ops, results);
    for (const p of procs) p.send("exit");
    await Promise.all(procs.map((p) => p.exited));
    const trace = readFileSync(out, "utf8");
    if (!step) return { steps: steps(trace, tid, top), problems, results };
    return { verified: delayedAsExpected(trace, tid, top, step), problems, results };
  } finally {
    for (const p of procs) p.child.kill("SIGKILL");
    rmSync(top, { recursive: true, force: true });
  }
}

/**
 * Plays one scripted sequence: several processes, each told to go (and a
 * holder, to release) at a given time, each with its own pauses, named by
 * the system call and its place among the operation's calls of that name
 * (`nth`, counted from the operation's first call; `match` picks among the
 * calls A made alone instead). Resolves with the checks' problems, every
 * process's result, and whether each pause was put where it was meant to be.
 */
export async function sequence({ base, ops, procs: specs }) {
  const names = [...new Set(specs.flatMap((s) => (s.pauses ?? []).map((p) => p.name)))];
  // Where each pause falls: the op alone, traced, from the same start.
  for (const spec of specs) {
    if (!spec.pauses?.length) continue;
    const { top, dir } = prepare(ops, base);
    const out = join(top, "trace");
    const p = start(spec.op, dir, "record", { out, args: ["-e", `trace=${NAMES.join(",")}`] });
    try {
      const tid = Number((await p.next()).split(" ")[1]);
      p.send("go");
      await p.next();
      if (spec.op === "hold") {
        p.send("release");
        await p.next();
      }
      p.send("exit");
      await p.exited;
      const trace = readFileSync(out, "utf8");
      const before = {};
      for (const line of trace.split("\n")) {
        const c = call(line, tid, top);
        if (!c || c.resumed) continue;
        if (c.args.includes("/@explore-begin")) break;
        before[c.name] = (before[c.name] ?? 0) + 1;
      }
      const recorded = steps(trace, tid, top);
      for (const pause of spec.pauses) {
        if (pause.match) {
          const hits = recorded.filter((s) => s.name === pause.name && pause.match.test(s.args));
          pause.k = hits[(pause.nth ?? 1) - 1]?.k;
        } else pause.k = (before[pause.name] ?? 0) + (pause.nth ?? 1);
      }
    } finally {
      p.child.kill("SIGKILL");
      rmSync(top, { recursive: true, force: true });
    }
  }
  const missing = specs.flatMap((s) => (s.pauses ?? []).filter((p) => p.k === undefined).map((p) => `${s.tag}: ${p.name} ${p.match}`));
  if (missing.length) return { applicable: false, missing };
  const { top, dir } = prepare(ops, base);
  const procs = specs.map((spec) => {
    const pauses = spec.pauses ?? [];
    const strace = pauses.length
      ? {
          out: join(top, `trace-${spec.tag}`),
          args: [
            "-e",
            `trace=${names.join(",")}`,
            ...pauses.flatMap((p) => ["-e", `inject=${p.name}:delay_enter=${p.ms * 1000}:when=${p.k}`]),
          ],
        }
      : null;
    return { spec, ...start(spec.op, dir, spec.tag, strace) };
  });
  try {
    const ready = await Promise.all(procs.map((p) => p.next()));
    if (ready.some((l) => !l?.startsWith("ready "))) throw new Error(`not ready: ${JSON.stringify(ready)}`);
    const t0 = Date.now();
    const results = procs.map((p) => ({ op: p.spec.op, tag: p.spec.tag }));
    const played = procs.map(async (p, i) => {
      const [goAt, releaseAt] = p.spec.at;
      await sleep(Math.max(0, t0 + goAt - Date.now()));
      p.send("go");
      Object.assign(results[i], JSON.parse(await p.next()));
      if (p.spec.op === "hold" && results[i].stood && releaseAt !== undefined) {
        await sleep(Math.max(0, t0 + releaseAt - Date.now()));
        p.send("release");
        const r = JSON.parse(await p.next());
        if (r.released) results[i].stood = false;
      }
    });
    await Promise.all(played);
    const problems = check(dir, top, ops, results);
    for (const p of procs) p.send("exit");
    await Promise.all(procs.map((p) => p.exited));
    // The pauses the schedule reached (one never reached is a schedule that
    // could not happen: another process waited for this one instead).
    const unreached = procs.flatMap((p, i) => {
      if (!p.spec.pauses?.length) return [];
      const trace = readFileSync(join(top, `trace-${p.spec.tag}`), "utf8").split("\n");
      const tid = Number(ready[i].split(" ")[1]);
      return p.spec.pauses
        .filter(
          (pause) =>
            !trace.some(
              (l) => l.includes("(DELAYED)") && new RegExp(`^${tid}\\s+(${pause.name}\\(|<\\.\\.\\. ${pause.name} resumed>)`).test(l),
            ),
        )
        .map((pause) => `${p.spec.tag}'s ${pause.name}`);
    });
    if (process.env.EXPLORE_KEEP) console.log(JSON.stringify(results), top);
    return { applicable: true, problems, results, unreached };
  } finally {
    for (const p of procs) p.child.kill("SIGKILL");
    if (!process.env.EXPLORE_KEEP) rmSync(top, { recursive: true, force: true });
  }
}

/**
 * Explores the combinations; `sample` spreads about that many schedules
 * over every combination (all of them when absent). Returns the counts and
 * each broken schedule.
 */
export async function explore({ sample, only, jobs = 1, log = () => {} } = {}) {
  const combos = (only ?? combinations()).flatMap((ops) => bases(ops).map((base) => ({ ops, base })));
  for (const c of combos) c.steps = (await play(c.ops, c.base, null)).steps;
  const total = combos.reduce((n, c) => n + c.steps.length, 0);
  const stride = sample ? Math.max(1, Math.ceil(total / sample)) : 1;
  const tally = { combinations: combos.length, steps: total, explored: 0, unverified: 0, broken: [] };
  const queue = [];
  let index = 0;
  for (const c of combos) for (const step of c.steps) if (index++ % stride === 0) queue.push({ c, step });
  // Schedules are independent (each its own journal), and mostly waiting
  // for a pause to end: `jobs` of them run at once.
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const { c, step } = next;
      const r = await play(c.ops, c.base, step);
      tally.explored++;
      if (!r.verified) {
        tally.unverified++;
        log(`unverified: ${c.ops.join(" / ")} (${c.base}) paused at ${step.name}#${step.k} ${step.args}`);
      }
      if (r.problems.length) {
        tally.broken.push({
          ops: c.ops,
          base: c.base,
          step: `${step.name}#${step.k} ${step.args}`,
          problems: r.problems,
          results: r.results,
        });
        log(`broken: ${c.ops.join(" / ")} (${c.base}) paused at ${step.name}#${step.k} ${step.args}: ${r.problems.join("; ")}`);
      }
      if (tally.explored % 100 === 0) log(`${tally.explored} schedules explored`);
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return tally;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { sample: { type: "string" }, jobs: { type: "string" } } });
  for (const o of ["sample", "jobs"])
    if (values[o] !== undefined && !/^[1-9][0-9]*$/.test(values[o])) {
      console.error(`explore: --${o} takes a whole number`);
      process.exit(2);
    }
  if (!canTrace) {
    console.error("explore: strace cannot trace and inject here");
    process.exit(2);
  }
  const t0 = Date.now();
  const tally = await explore({
    sample: values.sample && Number(values.sample),
    jobs: Number(values.jobs ?? 1),
    log: (l) => console.log(l),
  });
  console.log(
    `${tally.combinations} combinations, ${tally.steps} steps; ${tally.explored} schedules explored (${tally.unverified} whose pause could not be verified), ${tally.broken.length} broke a promise; ${Math.round((Date.now() - t0) / 1000)} s`,
  );
  process.exitCode = tally.broken.length ? 1 : 0;
}
