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
const { STATES, stateOf, deliveries } = require("./fleet.js");
const { Refusal, UsageError, plural } = require("./output.js");
const { J } = require("./journal.js");
const { recoversOnly } = require("./brake.js");
const { Memo, loadState, statePath, stateText, removeFormer } = require("./memo.js");

/**
 * The file in the data root that declares bindings meant to stay idle
 * (#56): one binding name a line, `#` starting a comment. A binding that
 * should run and does not pages (DiscordBindingNotRunning); one named
 * here does not.
 */
const IDLE = "discord-journal.idle";

/** A label value as the text format writes it: backslash, quote and newline escaped. */
const label = (v) => String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
/** A sample's value: a number, NaN where it could not be read. */
const value = (v) => (typeof v === "number" && Number.isFinite(v) ? String(v) : "NaN");

/**
 * The text of the metrics for the fleet view `view` (cli/fleet.js) of the
 * data root `root`, or, where the collection failed (`view` null), of that
 * failure alone: `failed` its cause, `lastSuccess` when one last succeeded.
 * Every series carries `data_root`, so that several roots can share one
 * node_exporter.
 */
function metrics(view, root, { failed = null, lastSuccess = null, idle = new Set(), answers = null } = {}) {
  const families = [];
  const family = (name, help, samples) =>
    families.push({ name: `discord_journal_${name}`, help, samples: samples.map(([l, v]) => [{ data_root: root, ...l }, v]) });
  const each = (f) => (view?.judged ?? []).flatMap((b) => f(b, b.status) || []);
  const named = (b, more = {}) => ({ binding: b.binding, ...more });
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

/** Whether an operator's brake is on, as the verdict judges STOP (a recover's own line is none). */
const braked = (s) => s.stop?.present === true && !(recoversOnly(s.stop.value) && s.lock?.state !== "live");

/**
 * `status --data-root ROOT --prometheus FILE` (#56): the fleet judged and
 * its metrics written. The exit code is the collection's alone (the
 * verdicts are in the file): 0 written, 1 not written, or written to say
 * the collection failed (a data root that is missing or has no discord/,
 * an unmounted volume, is a failure, never an all-clear). `fleet` is
 * cli/fleet.js's, `verdict` the single binding's. What it prints is one
 * line (#63: a timer's log got the whole fleet every minute); what went
 * wrong goes to stderr.
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
  const answers = memo.counts;
  writeAtomically(opts.prometheus, metrics(view, root, { idle, answers }));
  writeAtomically(stateFile, stateText(root, fresh ? now : state.fullAt, memo.lines()), 0o600);
  removeFormer(opts.prometheus);
  const { json } = view;
  const needs = view.judged.filter((b) => b.exitCode === 1).length;
  // A state that was there and not taken is said, with why: every file was read.
  const refused = state.refused ? ` (the state ${path.basename(stateFile)} was not taken: ${state.refused})` : "";
  const head = `${opts.prometheus}: ${plural(json.bindings.length + json.unjudged.length, "binding")} under ${root}, ${needs} ${needs === 1 ? "needs" : "need"} a hand, ${json.counts.braked} braked${json.unjudged.length > 0 ? `, ${json.unjudged.length} not judged` : ""}; ${answers.reused} answers reused, ${answers.read} read${refused}, in ${view.seconds.toFixed(2)} s`;
  if (json.unjudged.length > 0 && !opts.json)
    console.error(`discord-journal: ${view.text.split("\n").find((l) => l.startsWith("not judged: "))}`);
  // Written, but blind to some bindings: not a collection that did its job.
  return { exitCode: json.unjudged.length > 0 ? 1 : 0, json: { ...json, answers }, text: head };
}

/** The bindings `root`'s IDLE file declares idle; none where there is no such file. */
function idleOf(root) {
  const file = path.join(root, IDLE);
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return new Set();
    throw new Refusal(`cannot read ${file} (${e.code}), which declares the bindings meant to stay idle`);
  }
  return new Set(
    text
      .split("\n")
      .map((l) => l.replace(/#.*/, "").trim())
      .filter(Boolean),
  );
}

/** When the collection of `root` last succeeded, as the file a former run wrote says; null where it does not. */
function lastSuccess(file, root) {
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
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

module.exports = { collect, metrics, writeAtomically };
