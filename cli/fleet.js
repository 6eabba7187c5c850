// `discord-journal status --data-root ROOT` with no binding named (#46):
// every binding under ROOT/discord judged by the single binding's `status`
// (the same code, so each line is the verdict `status DIR` gives), in one
// process, the bindings that need a hand first, then the counts. Run as
// root, each binding is judged as its own owner, as `status DIR` judges it:
// a process may become another user only once, so the bindings of each
// owner are judged in one child process of theirs. `status` never waits
// (a process stopped inside a binding's guard is named, not waited for),
// so no binding holds up the rest. The single binding's `status` and
// `exitOf` are given by the command (cli/commands/status.js), which imports
// this file: imports run one way.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const os = require("node:os");
const { spawn } = require("node:child_process");
const { reach } = require("./reach.js");
const { actor } = require("./owner.js");
const { kind } = require("./survey.js");
const { isBindingName } = require("./journal.js");
const { withProblems } = require("./status-text.js");
const { STATE, STATES } = require("./verdict.js");
const { UsageError, Refusal, sh, escaped, table, mark, commands, plural, invocation } = require("./output.js");

/** One owner's child: Node and this file alone. */
const CHILD = path.join(__dirname, "fleet-child.js");

/**
 * The entries of `top` (ROOT/discord): `{ bindings, notBindings }`, each
 * directory carrying a binding name a binding; anything else listed with
 * what it is, never judged.
 */
function entries(top) {
  let list;
  try {
    list = fs.readdirSync(top, { withFileTypes: true });
  } catch (e) {
    if (e.code === "ENOENT" || e.code === "ENOTDIR")
      throw new UsageError(
        `which journal? no bindings at ${top} (${e.code}) to list: give its directory (${invocation()} status data/discord/NAME) or --binding NAME, or the data root that holds discord/<binding>/ (--data-root ROOT) for every binding`,
      );
    throw new Refusal(`cannot list the bindings in ${top} (${e.code}); \`ls -ld ${sh(top)}\` shows its owner and mode`);
  }
  const bindings = [];
  const notBindings = [];
  for (const e of list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const p = path.join(top, e.name);
    if (!isBindingName(e.name)) {
      notBindings.push({ name: e.name, why: "not a binding name" });
      continue;
    }
    let st;
    try {
      st = fs.statSync(p);
    } catch (err) {
      // A link that leads nowhere, round in a loop, or through a directory
      // this user cannot search: listed as what it is, never judged.
      let what = "an entry";
      try {
        what = `a ${kind(fs.lstatSync(p))}`;
      } catch {
        // Not told.
      }
      notBindings.push({ name: e.name, why: `${what} that cannot be followed (${err.code ?? err.message})`, unfollowed: true });
      continue;
    }
    if (st.isDirectory()) bindings.push(e.name);
    else notBindings.push({ name: e.name, why: `a ${kind(st)}, not a directory` });
  }
  return { bindings, notBindings };
}

/**
 * One binding's status, judged here: `{ binding, exitCode, status }`, or
 * `{ binding, exitCode, refused }`, with the refusal's `verdict` where it
 * is one (a journal its owner cannot reach: stuck).
 */
function judge(top, name, { status, exitOf, memo }, later) {
  const dir = path.join(top, name);
  try {
    const s = status(reach(dir, { command: "status", argv: ["discord-journal", "status", dir] }), Date.now(), memo, later);
    return { binding: name, exitCode: exitOf(s), status: s };
  } catch (e) {
    // A directory with a binding's name that is no journal: not a binding.
    if (e instanceof UsageError) return { binding: name, notBinding: "a directory that holds no journal" };
    // Any other failure is this binding's line, never the whole view's.
    return {
      binding: name,
      exitCode: typeof e?.exitCode === "number" ? e.exitCode : 1,
      refused: String(e?.message ?? e),
      ...(e?.verdict ? { verdict: e.verdict } : {}),
    };
  }
}

/**
 * Every binding judged as `status DIR` would judge it: here, or (run as
 * root, another user's) in one child per user, which becomes that user;
 * the children side by side, one per processor (#63: ten owners one after
 * another cost ten starts of Node in a row).
 */
async function judgeAll(top, names, verdict, split, brief) {
  const here = [];
  const groups = new Map();
  for (const name of names) {
    const abs = path.join(top, name);
    const st = split && process.geteuid?.() === 0 ? fs.statSync(abs, { throwIfNoEntry: false }) : undefined;
    const user = st ? actor(abs, st) : null;
    if (user === null) here.push(name);
    else {
      const key = `${user.uid}:${user.gid}:${user.group ? 1 : 0}`;
      groups.set(key, [...(groups.get(key) ?? []), name]);
    }
  }
  const judged = new Map();
  const queue = [...groups.values()];
  const children = Array.from({ length: Math.min(queue.length, os.availableParallelism?.() ?? os.cpus().length) }, async () => {
    for (let group = queue.shift(); group !== undefined; group = queue.shift())
      for (const [name, b] of await judgeAsOwner(top, group, verdict, brief)) judged.set(name, b);
  });
  // This process's own bindings meanwhile, while the children run; one
  // at a time, so that their input and output pipes move in between. The
  // second looks at holders of a journal's locks (cli/commands/status.js)
  // are one wait for all of them, after every binding's first look, rather
  // than one per binding (#64); an owner's child makes its own.
  const later = [];
  for (const name of here) {
    await new Promise((r) => setImmediate(r));
    const cannot = unjudgeable(path.join(top, name));
    judged.set(name, cannot ? { binding: name, unjudged: cannot } : judge(top, name, verdict, later));
  }
  if (later.length > 0) {
    // Each look's `due` is its first look's time and the gap it asks: the
    // last one's is the longest left. Waited without blocking, so that the
    // children's pipes move meanwhile.
    const wait = Math.max(...later.map((l) => l.due)) - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    for (const l of later) l.again();
    for (const name of here) {
      const one = judged.get(name);
      if (one.status) one.exitCode = verdict.exitOf(one.status);
    }
  }
  await Promise.all(children);
  return names.map((name) => judged.get(name));
}

/**
 * One owner's bindings (`group`), judged by a child that becomes that owner
 * (cli/fleet-child.js): `[[name, judged]]`. A collection's kept answers go
 * to it for its own bindings alone and come back for them alone, only a
 * name where all were taken again (cli/memo.js): one owner's process never
 * answers for another's. Its answer is one line of JSON, unindented (#63:
 * 40 MB at 200 bindings), with `--brief` each status `briefly`.
 */
function judgeAsOwner(top, group, verdict, brief) {
  const mine = group.map((name) => `${path.join(top, name)}\0`);
  const memo = verdict.memo ? ["--memo"] : [];
  const args = [CHILD, path.dirname(top), group.join(","), ...memo, ...(brief ? ["--brief"] : [])];
  return new Promise((resolve) => {
    const out = [];
    const err = [];
    let done = false;
    // Once, whichever comes first: the child's end, or its failure to start.
    const end = (why) => {
      if (done) return;
      done = true;
      let answer = null;
      try {
        answer = JSON.parse(Buffer.concat(out).toString("utf8"));
      } catch {
        // Said per binding below.
      }
      if (memo.length > 0 && answer?.memo) verdict.memo.merge(answer.memo, mine);
      // The child's refusal, as the command words it, without the command's name.
      const said = Buffer.concat(err)
        .toString("utf8")
        .trim()
        .replace(/^discord-journal: /, "");
      resolve(group.map((name) => [name, fromChild(name, answer, said || why)]));
    };
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"] });
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    // A child that ends before reading its input: said per binding.
    child.stdin.on("error", () => {});
    child.stdin.end(memo.length > 0 ? verdict.memo.slice(mine) : "");
    child.on("error", (e) => end(`it could not be started (${e.code ?? e.message})`));
    child.on("close", (code, signal) => end(signal ? `killed by ${signal}` : `exit ${code}`));
  });
}

/** A binding's line from its owner's child's answer (`answer`, or null), or its refusal, `why` said. */
function fromChild(name, answer, why) {
  const one = answer?.bindings?.find((b) => b.binding === name);
  const not = answer?.notBindings?.find((b) => b.name === name);
  if (not !== undefined) return { binding: name, notBinding: not.why };
  if (one === undefined) return { binding: name, exitCode: 1, refused: `could not be judged as its owner: ${why}` };
  return one.refused !== undefined ? one : { binding: name, exitCode: one.exitCode, status: withoutName(one) };
}

/**
 * A status as an owner's child sends it where no JSON is printed (#63):
 * its unresolved deliveries as the metrics and the text read them
 * (`deliveries`), not each one (a binding may have thousands).
 */
function briefly(s) {
  const u = s.unresolvedDeliveries;
  if (!Array.isArray(u?.value)) return s;
  return { ...s, unresolvedDeliveries: { count: u.value.length, ...deliveries(u) } };
}

/**
 * What the metrics read of a status's unresolved deliveries, in full or
 * brief: `{ late, oldestAgeSeconds }` (0 ahead of the clock, null with no
 * date), NaN each where the outbox cannot be read or is not shown.
 */
function deliveries(u) {
  if (typeof u?.late === "number") return { late: u.late, oldestAgeSeconds: u.oldestAgeSeconds };
  if (!Array.isArray(u?.value)) return { late: NaN, oldestAgeSeconds: NaN };
  let oldest = null;
  for (const d of u.value) if (typeof d.ageSeconds === "number") oldest = Math.max(oldest ?? 0, d.ageSeconds);
  return { late: u.value.filter((d) => d.pastWindow).length, oldestAgeSeconds: oldest };
}

/**
 * Why this process cannot judge the binding at `abs` as its owner would,
 * or null: neither root nor its owner, it may not read the binding's
 * directory. That is the collector's own problem (run as `prometheus`,
 * say), said once for all such bindings, never each binding's (#56).
 */
function unjudgeable(abs) {
  const me = process.geteuid?.();
  if (me === undefined || me === 0) return null;
  let st;
  try {
    st = fs.statSync(abs);
  } catch {
    // A path this process cannot follow: the binding's own line says why.
    return null;
  }
  if (st.uid === me) return null;
  try {
    fs.accessSync(abs, fs.constants.R_OK | fs.constants.X_OK);
    return null;
  } catch (e) {
    return { code: e.code, uid: st.uid };
  }
}

/** A binding's status as the JSON lists it, its name and exit code taken off. */
function withoutName(one) {
  const s = { ...one };
  delete s.binding;
  delete s.exitCode;
  return s;
}

/** The state a line shows: the verdict's, or "unreadable" where the binding could not be judged. */
const stateOf = (b) => (b.refused !== undefined ? (b.verdict?.state ?? "unreadable") : b.status.verdict.state);
/** Its one-line reason. */
const reasonOf = (b) => {
  if (b.refused !== undefined) return b.verdict?.why ?? b.refused.split("\n")[0];
  const v = b.status.verdict;
  // Damage and what cannot be read: the first thing found, which says where.
  if ((v.state === "damaged" || v.state === "unreadable") && v.problems.length > 0) return v.problems[0].what;
  // Needing a hand without a reason of the state's own (a mode, an owner): its first problem.
  if (b.exitCode === 1 && v.problems.length > 0 && (v.state === "ready" || v.state === "crashed")) return v.problems[0].what;
  // A connector that runs under the brake: the brake alone would hide it.
  if (v.state === "braked" && b.status.lock?.state === "live")
    return `${v.why}; a connector runs under the brake (pid ${b.status.lock.owner?.pid})`;
  if (v.why) return v.why;
  return v.canStart ? "can start" : (v.problems[0]?.what ?? "");
};

/**
 * The state as a line shows it: the verdict's word, and where the binding
 * needs a hand without its state saying so (a mode, an owner), its
 * problems, so that no line reads "ready" alone and needs a hand (#57).
 * On a terminal, with colour: a mark for what needs a hand, is braked, or
 * needs nothing.
 */
function stateWord(b) {
  const state = stateOf(b);
  const problems = b.status?.verdict.problems.length ?? 0;
  const word = b.exitCode === 1 ? withProblems(state, problems) : state;
  return mark(b.exitCode === 1 ? "bad" : state === "braked" ? "warn" : "ok", word);
}

/**
 * Whether a line asks for a move: it needs a hand, is braked, or crashed
 * (a supervised start clears a crash, but one that stays pages). Such a
 * line has its verdict's next under it, and -x shows these alone.
 */
const moving = (b) => b.exitCode === 1 || STATE[stateOf(b)]?.moves === true;

/** Most urgent first: what needs a hand (exit 1), then the braked (3), then the rest; by state, then name. */
function urgency(b) {
  const rank = b.exitCode === 1 ? 0 : stateOf(b) === "braked" ? 1 : 2;
  return [rank, STATES.indexOf(stateOf(b))];
}

/**
 * The fleet's view: `{ exitCode, json, text, judged, seconds }`. `verdict`:
 * the single binding's `{ status, exitOf }`. With `opts.fleetOnly` (the
 * child of one owner's bindings), only those, all judged here.
 */
async function fleet(opts, verdict) {
  const began = process.hrtime.bigint();
  const top = path.resolve(opts.dataRoot, "discord");
  const { bindings, notBindings: listed } = entries(top);
  const notBindings = [...listed];
  const only = opts.fleetOnly === undefined ? null : new Set(opts.fleetOnly.split(","));
  // A child that prints no JSON (a collection, the text view) is sent
  // each status in brief (`briefly`).
  const all = await judgeAll(
    top,
    bindings.filter((n) => only === null || only.has(n)),
    verdict,
    only === null,
    !opts.json,
  );
  for (const b of all.filter((x) => x.notBinding !== undefined)) notBindings.push({ name: b.binding, why: b.notBinding });
  const unjudged = all.filter((x) => x.unjudged !== undefined).map((x) => ({ binding: x.binding, ...x.unjudged }));
  const judged = all.filter((x) => x.notBinding === undefined && x.unjudged === undefined);
  const order = [...judged].sort((a, b) => {
    const [x, y] = [urgency(a), urgency(b)];
    return x[0] - y[0] || x[1] - y[1] || (a.binding < b.binding ? -1 : 1);
  });
  const counts = Object.fromEntries(STATES.map((s) => [s, 0]));
  for (const b of judged) counts[stateOf(b)]++;
  // 1 over 3 over 0: damage or a hand needed anywhere, else a brake anywhere.
  // Bindings this process could not judge: the view is incomplete, 1.
  const exitCode = unjudged.length > 0 || judged.some((b) => b.exitCode === 1) ? 1 : judged.some((b) => stateOf(b) === "braked") ? 3 : 0;
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  const json = {
    ok: exitCode === 0,
    exitCode,
    dataRoot: path.dirname(top),
    bindings: order.map((b) => (b.refused !== undefined ? b : { binding: b.binding, exitCode: b.exitCode, ...b.status })),
    notBindings,
    unjudged,
    counts,
    seconds,
  };
  const needs = order.filter((b) => b.exitCode === 1).length;
  const total = judged.length + unjudged.length;
  // With -x (as `zpool status -x`): the lines that ask for a move (the
  // exit code's, and a crash, which pages if it stays), and one line
  // where there are none.
  const shown = opts.problems ? order.filter(moving) : order;
  if (opts.problems && shown.length === 0 && unjudged.length === 0)
    return { exitCode, json, text: `all ${plural(total, "binding")} need no hand`, judged: order, seconds };
  const lines = [
    `${plural(total, "binding")} under ${top}${needs > 0 ? `, ${needs} ${needs === 1 ? "needs" : "need"} a hand` : ""}${unjudged.length > 0 ? `, ${unjudged.length} not judged` : ""}`,
  ];
  // Each line that needs a hand, is braked or crashed has the one command
  // that moves it on just below it: the verdict's own next, as `status
  // DIR` gives it; the rest, a line each. A blank line sets the ones that
  // need a hand apart.
  const cells = (b) => [b.binding, stateWord(b), escaped(reasonOf(b))];
  const urgent = shown.filter((b) => b.exitCode === 1);
  const rest = shown.filter((b) => b.exitCode !== 1);
  const rows = shown.length > 0 ? table(shown.map(cells)) : [];
  const withNext = (b, row) => {
    lines.push(row);
    const next = b.status?.verdict.next ?? b.verdict?.next;
    if (next && moving(b)) lines.push(`    next: ${commands(escaped(next))}`);
  };
  if (urgent.length > 0) {
    lines.push("");
    urgent.forEach((b, i) => withNext(b, rows[i]));
  }
  if (rest.length > 0) {
    lines.push("");
    rest.forEach((b, i) => withNext(b, rows[urgent.length + i]));
  }
  lines.push("", STATES.map((s) => `${counts[s]} ${s}`).join(", "));
  if (unjudged.length > 0)
    lines.push(
      `not judged: ${unjudged.map((u) => escaped(u.binding)).join(", ")}: this command runs as uid ${process.geteuid?.()}, neither root nor their owner, and may not read them (${unjudged[0].code}); run it as root, which judges each binding as its owner, or as their owner`,
    );
  if (notBindings.length > 0) lines.push(`not bindings: ${notBindings.map((n) => `${escaped(n.name)} (${n.why})`).join(", ")}`);
  if (needs > 0) lines.push(`\`${invocation()} status ${sh(path.join(top, "NAME"))}\` gives a binding's problems and the command for each`);
  return { exitCode, json, text: lines.join("\n"), judged: order, seconds };
}

module.exports = { fleet, STATES, stateOf, briefly, deliveries };
