// The fleet's verdicts as node_exporter's textfile format (#46), so that a
// monitor can page on them: each family with HELP and TYPE, names under
// `discord_journal_` in base units (bytes, seconds), one series per binding
// (and per file, per state). The file is replaced whole, never written in
// place: a temporary file made exclusively in the same directory (O_EXCL:
// never through a link someone put at its name), then renamed over the
// target, so the collector reads the old file or the new one. A temporary
// file a killed run left (its pid gone) is removed by the next run; the
// collector reads only `*.prom`, so it never reads one meanwhile.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const { stateOf, deliveries } = require("./fleet.js");
const { STATES, brakeOn: braked } = require("./verdict.js");
const { Refusal, UsageError, sh, escaped, plural } = require("./output.js");
const { actor, becomeActor, who, chownFix } = require("./owner.js");
const { kind } = require("./survey.js");
const { J } = require("./journal.js");
const { Memo, loadState, statePath, stateText, removeFormer } = require("./memo.js");

/**
 * The data root's file of bindings meant to stay idle (#56), a name a
 * line, `#` a comment: DiscordBindingNotRunning pages on no binding named.
 */
const IDLE = "discord-journal.idle";

/**
 * The most of IDLE that is read: 1 MiB, over 16,000 names of 63 bytes; a
 * larger file is no list of names (a log), and reading it whole would cost
 * the memory the collection is meant to measure.
 */
const IDLE_LIMIT = 1 << 20;

const BIN = path.join(__dirname, "..", "bin", "discord-journal.js");

/** A label value as the text format writes it: backslash, quote and newline escaped. */
const label = (v) => String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
/** A binding's labels, with `more`. */
const named = (b, more = {}) => ({ binding: b.binding, ...more });
/** A sample's value: a number, NaN where it could not be read. */
const value = (v) => (typeof v === "number" && Number.isFinite(v) ? String(v) : "NaN");

/**
 * The text of the metrics for the fleet view `view` (cli/fleet.js) of the
 * data root `root`, or, where the collection failed (`view` null), of that
 * failure alone: `failed` its cause, `lastSuccess` when one last succeeded.
 * Every series carries `data_root`, so that several roots can share one
 * node_exporter.
 */
function metrics(view, root, { failed = null, lastSuccess = null, idle = new Set(), idleRefused = null, answers = null } = {}) {
  const families = [];
  const family = (name, help, samples) =>
    families.push({ name: `discord_journal_${name}`, help, samples: samples.map(([l, v]) => [{ data_root: root, ...l }, v]) });
  const each = (f) => (view?.judged ?? []).flatMap((b) => f(b, b.status) || []);
  family(
    "binding_state",
    "The binding's verdict, as `discord-journal status` gives it: 1 for its state, 0 for the others.",
    each((b) => STATES.map((s) => [named(b, { state: s }), stateOf(b) === s ? 1 : 0])),
  );
  family(
    "binding_can_start",
    "Whether the binding's connector can start (1) or not (0); NaN where it cannot be told.",
    each((b, s) => {
      // A refusal that is a verdict (a journal its owner cannot reach) says too.
      const can = (s ?? b).verdict?.canStart;
      return [[named(b), can === true ? 1 : can === false ? 0 : NaN]];
    }),
  );
  family(
    "binding_needs_hand",
    "Whether the binding needs a hand (status exits 1).",
    each((b) => [[named(b), b.exitCode === 1 ? 1 : 0]]),
  );
  family(
    "binding_blocked",
    "Whether a problem of the verdict keeps the connector from its work (blocks: a full or read-only file system, a file it may not read or replace), whatever the state: a running connector on a full file system is 1; NaN where there is no verdict.",
    each((b, s) => {
      // The verdict's own rows (cli/commands/status.js), never a second look at the files.
      const problems = (s ?? b).verdict?.problems;
      return [[named(b), Array.isArray(problems) ? (problems.some((p) => p.blocks) ? 1 : 0) : NaN]];
    }),
  );
  family(
    "binding_braked",
    "Whether an operator's brake (STOP) is on, whatever else the verdict says; a STOP of recover's own line alone, which the next recover removes, is none.",
    each((b, s) => [[named(b), s ? (braked(s) ? 1 : 0) : NaN]]),
  );
  family(
    "binding_idle",
    `Whether the binding is declared idle (its name in ${IDLE} in the data root): no alert asks why it does not run.`,
    each((b) => [[named(b), idle.has(b.binding) ? 1 : 0]]),
  );
  family(
    "unresolved_deliveries",
    "Outbox deliveries whose merged status is intent or unknown (unresolvedOutbox); NaN where the outbox cannot be read.",
    each((b, s) => {
      const u = s?.unresolvedDeliveries;
      return [[named(b), Array.isArray(u?.value) ? u.value.length : typeof u?.count === "number" ? u.count : NaN]];
    }),
  );
  family(
    "oldest_unresolved_delivery_age_seconds",
    "Seconds since the intent of the oldest unresolved delivery (its `intentAt`; 0 for one dated ahead of the clock); absent where there is none, NaN where the outbox cannot be read.",
    each((b, s) => {
      // In full or in brief (an owner's child's, cli/fleet.js): one reading.
      const age = deliveries(s?.unresolvedDeliveries).oldestAgeSeconds;
      return age === null ? null : [[named(b), age]];
    }),
  );
  family(
    "late_deliveries",
    "Unresolved deliveries past the dedupe window (or whose intent is no date): each a person's to tell, which status names; NaN where the outbox cannot be read or is not shown.",
    each((b, s) => [[named(b), deliveries(s?.unresolvedDeliveries).late]]),
  );
  family(
    "brake_age_seconds",
    "Seconds since the first line of an operator's brake (STOP's oldest `at`); absent where there is no brake, NaN where STOP cannot be read or holds no date.",
    each((b, s) => {
      if (s && !braked(s)) return null;
      const at = Array.isArray(s?.stop?.value) ? Date.parse(s.stop.value[0]?.at) : NaN;
      return [[named(b), Number.isNaN(at) ? NaN : Math.max(0, (Date.now() - at) / 1000)]];
    }),
  );
  fileFamilies(family, each, view);
  collectionFamilies(family, view, { failed, lastSuccess, idleRefused, answers });
  const out = [];
  // A family with nothing to say (no braked binding, a failed run's
  // bindings) is left out whole.
  for (const f of families.filter((x) => x.samples.length > 0)) {
    out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} gauge`);
    for (const [labels, v] of f.samples) {
      const ls = Object.entries(labels).map(([k, x]) => `${k}="${label(x)}"`);
      out.push(`${f.name}${ls.length > 0 ? `{${ls.join(",")}}` : ""} ${value(v)}`);
    }
  }
  return out.join("\n") + "\n";
}

/** The families of the bindings' files (`family`, `each`: metrics'). */
function fileFamilies(family, each, view) {
  const files = (f) =>
    each((b, s) => (s ? Object.entries(s.files).map(([file, v]) => f(b, file, v, s.entries[file])) : []).filter(Boolean));
  family(
    "file_bytes",
    "The size of each record file, in bytes.",
    files((b, file, f) => f.bytes !== undefined && [named(b, { file }), f.bytes]),
  );
  family(
    "file_unreadable_lines",
    "Lines of each record file that every reader refuses (cut, zero bytes, torn, corrupt, whitespace alone).",
    files((b, file, f) => f.badLines !== undefined && [named(b, { file }), f.badLines]),
  );
  family(
    "file_modified_timestamp_seconds",
    "When each record file was last modified (its mtime: an append, or a repair that rewrote it), in seconds since the epoch.",
    files((b, file, f, e) => e?.mtime && [named(b, { file }), Date.parse(e.mtime) / 1000]),
  );
  family(
    "turn_records",
    "Turn records in turns/; NaN where turns/ cannot be read.",
    each((b, s) => [[named(b), typeof s?.turns?.records === "number" ? s.turns.records : NaN]]),
  );
  family(
    "unfollowed_entries",
    "Entries of discord/ with a binding's name that cannot be followed (a link that leads nowhere or round in a loop, a path this user cannot search): 1 each.",
    (view?.json.notBindings ?? []).filter((n) => n.unfollowed).map((n) => [{ name: n.name }, 1]),
  );
}

/** The families of the collection itself. */
function collectionFamilies(family, view, { failed, lastSuccess, idleRefused, answers }) {
  if (view)
    family(
      "bindings",
      "Bindings under the data root, by verdict state.",
      STATES.map((s) => [{ state: s }, view.json.counts[s]]),
    );
  const now = Date.now() / 1000;
  family("collection_success", "Whether the last collection judged the data root (1) or failed (0; its cause in collection_error).", [
    [{}, view ? 1 : 0],
  ]);
  if (failed !== null) family("collection_error", "Why the last collection failed, as its cause label.", [[{ cause: failed }, 1]]);
  family(
    "collection_last_success_timestamp_seconds",
    "When a collection last succeeded, in seconds since the epoch; absent where none is known.",
    view ? [[{}, now]] : lastSuccess !== null ? [[{}, lastSuccess]] : [],
  );
  if (view)
    family(
      "collection_unjudged_bindings",
      "Bindings the collection could not judge: it runs neither as root nor as their owner, and may not read them.",
      [[{}, view.json.unjudged.length]],
    );
  // Whether the idle file was refused is said on every collection, 0 or
  // 1, so that a fix resolves its alert at the next one; its cause is a
  // series of its own, present while it is refused.
  if (view) {
    family(
      "collection_idle_file_refused",
      `Whether ${IDLE} in the data root was refused (a symlink, a FIFO, a directory, a device, a file over 1 MiB, or one its owner may not read): the collection went on with the bindings idle in the last good file (binding_idle), and judged every binding.`,
      [[{}, idleRefused === null ? 0 : 1]],
    );
    if (idleRefused !== null)
      family("collection_idle_file_refusal", `Why ${IDLE} was refused, as its cause label (what lies there, or the error's code).`, [
        [{ cause: idleRefused }, 1],
      ]);
  }
  // What the state spared (#63): answers taken again from it, against
  // those read from the files; a collection that reads everything every
  // time (a state refused, lost, or never written) shows here.
  if (view && answers !== null)
    family(
      "collection_answers",
      "The readers' answers of the last collection, by source: reused (kept from the last collection, its files unchanged) or read (from the files).",
      [
        [{ source: "reused" }, answers.reused],
        [{ source: "read" }, answers.read],
      ],
    );
  if (view) family("collection_duration_seconds", "How long the collection of every binding's verdict took.", [[{}, view.seconds]]);
  family("collection_timestamp_seconds", "When the collection ended, succeeded or failed, in seconds since the epoch.", [[{}, now]]);
}

/**
 * `status --data-root ROOT --prometheus FILE` (#56): the fleet judged and
 * its metrics written. The exit code is the collection's (the verdicts are
 * in the file): 0 written, 1 not, or written to say it failed (a data root
 * missing or without discord/ is never an all-clear). It prints one line
 * (#63: a timer's log got the whole fleet every minute); errors to stderr.
 */
async function collect(opts, fleet, verdict) {
  const root = path.resolve(opts.dataRoot);
  // What the last collection of this root learned (cli/memo.js), in the
  // metrics file's directory, read again in full every --full-every minutes.
  const stateFile = statePath(opts.prometheus, root);
  const state = loadState(stateFile, root);
  const now = Date.now();
  const fresh = now - state.fullAt >= Number(opts.fullEvery ?? 60) * 60_000;
  const memo = new Memo(state.kept, fresh);
  let view;
  let idle;
  try {
    idle = idleOf(root);
    view = await fleet(opts, { ...verdict, memo });
  } catch (e) {
    if (!(e instanceof UsageError || e instanceof Refusal)) throw e;
    const cause = /\((E[A-Z]+)\)/.exec(e.message)?.[1] ?? "error";
    writeAtomically(opts.prometheus, metrics(null, root, { failed: cause, lastSuccess: lastSuccess(opts.prometheus, root) }));
    // A data root with no discord/ is a usage mistake to `status`, but to
    // a collector it is a volume not mounted or a root moved: a failure.
    const why =
      e instanceof UsageError
        ? `there is no ${path.join(root, "discord")} to list (${cause}): a volume not mounted, or a --data-root that is not the connector's`
        : e.message;
    throw new Refusal(`the collection of ${root} failed, and ${opts.prometheus} says so (discord_journal_collection_success 0): ${why}`);
  }
  // An idle file refused: the set the last good file declared stays, so
  // that no binding's page comes or goes because of it (see lastIdle).
  const idleRefused = idle.refused ?? null;
  const idleSet = idleRefused === null ? idle.names : lastIdle(opts.prometheus, root);
  const answers = memo.counts;
  writeAtomically(opts.prometheus, metrics(view, root, { idle: idleSet, idleRefused: idleRefused?.cause ?? null, answers }));
  writeAtomically(stateFile, stateText(root, fresh ? now : state.fullAt, memo.lines()), 0o600);
  removeFormer(opts.prometheus);
  const { json } = view;
  const needs = view.judged.filter((b) => b.exitCode === 1).length;
  // A state that was there and not taken is said, with why: every file was read.
  const refused = state.refused ? ` (the state ${path.basename(stateFile)} was not taken: ${state.refused})` : "";
  const head = `${opts.prometheus}: ${plural(json.bindings.length + json.unjudged.length, "binding")} under ${root}, ${needs} ${needs === 1 ? "needs" : "need"} a hand, ${json.counts.braked} braked${json.unjudged.length > 0 ? `, ${json.unjudged.length} not judged` : ""}; ${answers.reused} answers reused, ${answers.read} read${refused}, in ${view.seconds.toFixed(2)} s`;
  if (json.unjudged.length > 0 && !opts.json)
    console.error(`discord-journal: ${view.text.split("\n").find((l) => l.startsWith("not judged: "))}`);
  // Written, but blind to some bindings, or to which are idle: not a
  // collection that did its job.
  const exitCode = json.unjudged.length > 0 || idleRefused !== null ? 1 : 0;
  if (idleRefused === null) return { exitCode, json: { ...json, answers }, text: head };
  const kept = [...idleSet].sort();
  const line = `${IDLE} refused (${idleRefused.cause}): ${idleRefused.why}; ${kept.length > 0 ? `the bindings the last metrics file declared idle stay idle: ${kept.join(", ")}` : "no binding is idle (no last metrics file declared any)"}. ${idleRefused.fix}`;
  return {
    exitCode,
    json: { ...json, answers, idleFile: { ...idleRefused, kept } },
    text: `${head}\n${escaped(line)}`,
  };
}

/**
 * The bindings `root`'s IDLE file declares idle: `{ names }` (none without
 * it), or `{ refused: { cause, why, fix } }`. Read with the data root's
 * owner's rights (`actor`): as root, by a child that becomes that user,
 * never by root, which would read where that user points (a link to a
 * root-only file, /dev/zero). No child where an lstat finds no file.
 */
function idleOf(root) {
  const file = path.join(root, IDLE);
  try {
    fs.lstatSync(file);
  } catch (e) {
    // No file, or no data root: the fleet says the latter.
    if (e.code === "ENOENT" || e.code === "ENOTDIR") return { names: new Set() };
  }
  let user = null;
  try {
    if (process.geteuid?.() === 0) user = actor(root, fs.statSync(root));
  } catch (e) {
    // Whose rights to read it with cannot be told: not read at all.
    return {
      refused: {
        file,
        cause: e.code ?? "error",
        why: `whose rights to read ${file} with cannot be told (${e.code ?? e.message})`,
        fix: `\`namei -l ${sh(file)}\` shows each step of its path`,
      },
    };
  }
  if (user === null) return taken(readIdle(file, file, process.geteuid?.(), false));
  const r = spawnSync(process.execPath, [BIN, "status", "--data-root", root, "--idle-only", "--json"], {
    encoding: "utf8",
    // The child never waits (see readIdle); this bounds it all the same.
    timeout: 60_000,
  });
  let out = null;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    // Said below.
  }
  if (out?.names !== undefined || out?.refused !== undefined) return taken(out);
  const why = (out?.error ?? r.stderr ?? "").trim() || (r.error ? `${r.error.code}` : `exit ${r.status}`);
  return {
    refused: {
      file,
      cause: "unread",
      why: `${file} could not be read as ${who(user.uid)}, the data root's owner: ${why}`,
      fix: `\`ls -l ${sh(file)}\` shows it`,
    },
  };
}

/** The child's (or readIdle's) answer as idleOf gives it. */
const taken = (r) => (r.refused !== undefined ? { refused: r.refused } : { names: new Set(r.names) });

/**
 * `status --data-root ROOT --idle-only` (hidden): a root collection's child
 * that becomes the data root's owner (cli/owner.js) from the data root as
 * its working directory, so a closed directory above still leads there,
 * then reads IDLE by its name alone.
 */
function idleAsOwner(root) {
  const abs = path.resolve(root);
  const argv = ["discord-journal", "status", "--data-root", abs];
  const file = path.join(abs, IDLE);
  if (process.geteuid?.() !== 0) return readIdle(file, file, process.geteuid?.(), false);
  const user = actor(abs, fs.statSync(abs));
  if (user === null) return readIdle(file, file, 0, false);
  const { at } = becomeActor(root, file, user, argv);
  return readIdle(at, file, user.uid, true);
}

/**
 * IDLE at `at` (shown as `file`), read as this process's user (`uid`;
 * `owner`: the user root acts as): `{ names }`, or `{ refused }`. Opened
 * never through a link, never waiting (O_NONBLOCK: a FIFO), no terminal
 * made this process's (O_NOCTTY); taken only as a regular file of at most
 * IDLE_LIMIT bytes: anything else is refused by what it is, never read.
 */
function readIdle(at, file, uid, owner) {
  const refuse = (cause, why, fix) => ({ refused: { file, cause, why, fix } });
  // A name that is not a list: taken away (rm and rmdir remove the name
  // alone, never what a link leads to), then written again.
  const away = (k) =>
    `\`${k === "directory" ? "rmdir" : "rm"} ${sh(file)}\` takes it away; then write the names of the bindings meant to stay idle there, one a line`;
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;
  let fd;
  try {
    fd = fs.openSync(at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  } catch (e) {
    if (e.code === "ENOENT") return { names: [] };
    let k = null;
    try {
      k = kind(fs.lstatSync(at));
    } catch {
      // Not told.
    }
    // O_NOFOLLOW's refusal of a link (ELOOP), a socket's (ENXIO): by what it is.
    if (k !== null && k !== "file" && k !== "directory") return refuse(k, `${file} is a ${k}, not a file of binding names`, away(k));
    if (e.code === "EACCES" || e.code === "EPERM")
      return refuse(
        e.code,
        `${file} cannot be read by ${who(uid)}, ${owner ? "the data root's owner, whose rights it is read with" : "who runs the collection"} (${e.code})`,
        owner ? `${chownFix(uid, file, false)} gives it to that user` : `\`ls -l ${sh(file)}\` shows its owner and mode`,
      );
    return refuse(e.code, `${file} cannot be read (${e.code})`, `\`ls -l ${sh(file)}\` shows it`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return refuse(kind(st), `${file} is a ${kind(st)}, not a file of binding names`, away(kind(st)));
    // Read to one byte past the limit, whatever fstat said: the file may grow meanwhile.
    const buf = Buffer.alloc(Math.min(st.size, IDLE_LIMIT) + 1);
    let n = 0;
    for (let got; n < buf.length && (got = fs.readSync(fd, buf, n, buf.length - n, null)) > 0;) n += got;
    if (n > IDLE_LIMIT || st.size > IDLE_LIMIT)
      return refuse(
        "too large",
        `${file} holds ${Math.max(n, st.size)} bytes, more than the 1 MiB (${IDLE_LIMIT} bytes) that any list of binding names needs`,
        `keep in it the names of the bindings meant to stay idle alone, one a line`,
      );
    return {
      names: buf
        .subarray(0, n)
        .toString("utf8")
        .split("\n")
        .map((l) => l.replace(/#.*/, "").trim())
        .filter(Boolean),
    };
  } catch (e) {
    return refuse(e.code ?? "error", `${file} cannot be read (${e.code ?? e.message})`, `\`ls -l ${sh(file)}\` shows it`);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The bindings the last metrics file declared idle (`binding_idle 1` for
 * this data root), kept by a collection whose IDLE was refused: the file
 * carries the set forward. A binding added since is not idle: toward a
 * page, never silence. Empty where there is no such file (readOwn).
 */
function lastIdle(file, root) {
  const r = readOwn(file);
  if (r === null) return new Set();
  const head = `discord_journal_binding_idle{data_root="${label(root)}",binding="`;
  const names = new Set();
  for (const l of r.split("\n")) {
    if (!l.startsWith(head)) continue;
    const m = /^([a-z0-9_-]+)"\} 1$/.exec(l.slice(head.length));
    if (m) names.add(m[1]);
  }
  return names;
}

/** The text of this command's own file `file`, or null: a regular file alone, opened never through a link and never waiting. */
function readOwn(file) {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;
  let fd;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  } catch {
    return null;
  }
  try {
    return fs.fstatSync(fd).isFile() ? fs.readFileSync(fd, "utf8") : null;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** When the collection of `root` last succeeded, as the file a former run wrote says (readOwn); null where it does not. */
function lastSuccess(file, root) {
  const text = readOwn(file);
  if (text === null) return null;
  const want = `discord_journal_collection_last_success_timestamp_seconds{data_root="${label(root)}"} `;
  const line = text.split("\n").find((l) => l.startsWith(want));
  const v = line === undefined ? NaN : Number(line.slice(want.length));
  return Number.isFinite(v) ? v : null;
}

/**
 * Writes `text` to `file`, replacing it whole (see the file's head).
 * Refuses, naming the cause, where it cannot.
 */
function writeAtomically(file, text, mode = 0o644) {
  const dir = path.dirname(path.resolve(file));
  const base = path.basename(file);
  const prefix = `.${base}.`;
  // What a killed run left: removed once its writer is gone, or an hour
  // old (a pid is reused: a container's entrypoint is always pid 1).
  try {
    for (const n of fs.readdirSync(dir)) {
      const m = n.startsWith(prefix) && /^(\d+)\.[0-9a-f]+\.tmp$/.exec(n.slice(prefix.length));
      if (!m) continue;
      const old = Date.now() - (fs.lstatSync(path.join(dir, n), { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 3_600_000;
      if (old || !J.pidAlive(Number(m[1]))) fs.rmSync(path.join(dir, n), { force: true });
    }
  } catch {
    // Listed again below, where the write names the cause.
  }
  // node:crypto asked here alone: an owner's child, which loads this file, never writes.
  const tmp = path.join(dir, `${prefix}${process.pid}.${require("node:crypto").randomBytes(4).toString("hex")}.tmp`);
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const cleanup = () => fs.rmSync(tmp, { force: true });
  let fd;
  try {
    fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  } catch (e) {
    throw new Refusal(
      `cannot write the metrics file in ${dir} (${e.code}): nothing was changed; \`ls -ld ${dir}\` shows its owner and mode (the command writes a temporary file beside FILE, then renames it)`,
    );
  }
  // A signal that ends the run removes the temporary file first.
  const onSignal = (sig) => {
    cleanup();
    process.kill(process.pid, sig);
  };
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.once(sig, onSignal);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, path.resolve(file));
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    cleanup();
    throw new Refusal(
      `cannot write the metrics file ${file} (${e.code}): it was left as it was${e.code === "EISDIR" ? "; a directory stands at its name: give another FILE, or move the directory away" : ""}`,
    );
  } finally {
    for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.removeListener(sig, onSignal);
  }
}

module.exports = { collect, metrics, writeAtomically, idleAsOwner };
