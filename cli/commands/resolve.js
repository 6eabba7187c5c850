// `discord-journal resolve DIR --nonce N --as confirmed|refused`: the outcome
// of a delivery left without one past the dedupe window, as a person found
// it in its channel, appended to outbox.jsonl as the addon's appendOutbox
// appends (#56). Past the window the connector does not send a
// delivery again, and nothing else can tell whether it arrived; within it
// the delivery is the connector's own, and resolve refuses it. A line is
// added, none changed. An outcome recorded between the read and the append
// (another resolve, a receipt hours late, on an outbox large enough that the
// read takes seconds) is never replaced: the append checks the decision
// again under the outbox's append flock, reading only the bytes appended
// since the read began, and refuses where the delivery has an outcome now
// (#64). Every appender of this package waits for that flock; a
// journal.mjs connector takes none (docs/command.md).
"use strict";

const { J, outboxMark, appendOutcome } = require("../journal.js");
const { target } = require("../target.js");
const { survey } = require("../survey.js");
const { FILE } = require("../readers.js");
const { sh, ago, escaped, invocation, Refusal } = require("../output.js");
const { DEDUPE_WINDOW_S, lateness } = require("./status.js");

function resolve(t, nonce, as, now = Date.now()) {
  const status = `\`${invocation()} status ${sh(t.dir)}\``;
  const n = escaped(nonce);
  // A link out of the journal is neither read nor written through (#33).
  if (survey(t, now).outside[FILE.outbox] !== undefined)
    throw new Refusal(
      `${FILE.outbox} is a symbolic link out of the journal, which resolve neither reads nor writes through: ${status} names it and its fix`,
    );
  let entry;
  // Where the file ends before the read: the second look reads from here.
  const mark = outboxMark(t.at);
  try {
    entry = J.readOutbox(t.at).get(nonce);
  } catch (e) {
    throw new Refusal(`${e.message}; nothing was written: ${status} names what to do first`);
  }
  if (entry === undefined)
    throw new Refusal(`${FILE.outbox} has no delivery with nonce ${n}: ${status} lists the deliveries without an outcome`);
  // Pasted twice, the same outcome is no mistake; another one is.
  if (entry.status === as)
    return { text: `delivery ${n} is ${as} already: nothing written`, json: { ok: true, exitCode: 0, nonce, status: as, written: null } };
  if (entry.status !== "intent" && entry.status !== "unknown") throw outcome(n, entry.status, entry.at);
  // Within the window the connector's reconcile sends it again with the
  // same nonce, and Discord returns the first message if there was one.
  const { ageSeconds, pastWindow } = lateness(entry.intentAt, now);
  if (!pastWindow)
    throw new Refusal(
      `delivery ${n} was sent ${ago(ageSeconds)}, within the ${DEDUPE_WINDOW_S / 60}-minute window in which the connector sends it again with the same nonce (Discord keeps one message): it is the connector's own, so nothing was written`,
    );
  const line = { nonce, status: as, at: new Date(now).toISOString(), resolvedBy: "operator" };
  // appendOutbox's checks (its status is one of the two), then the append
  // under the second look.
  if (nonce.length === 0) throw new Refusal("outbox entry needs a nonce, so nothing was written");
  let meanwhile;
  try {
    meanwhile = appendOutcome(t.at, nonce, JSON.stringify(line), mark);
  } catch (e) {
    throw new Refusal(`${e.message}; nothing was written: ${status} names what to do first`);
  }
  if (meanwhile === as)
    return {
      text: `delivery ${n} was recorded as ${as} while resolve read it: nothing written`,
      json: { ok: true, exitCode: 0, nonce, status: as, written: null },
    };
  if (meanwhile !== undefined) throw outcome(n, meanwhile, null, " while resolve read it");
  return { text: `delivery ${n} recorded as ${as} in ${FILE.outbox}`, json: { ok: true, exitCode: 0, nonce, status: as, written: line } };
}

/** The refusal of a delivery whose last line says `was` (recorded `at`, `when`). */
function outcome(n, was, at, when = "") {
  const is = ["confirmed", "refused"].includes(was)
    ? `is ${was} already${typeof at === "string" ? ` (at ${escaped(at)})` : ""}${when ? ` (recorded${when})` : ""}: an outcome is never replaced`
    : `has the status ${escaped(JSON.stringify(was) ?? "undefined")} in its last line${when ? ` (written${when})` : ""}, which is no delivery waiting for an outcome`;
  return new Refusal(`delivery ${n} ${is}, so nothing was written`);
}

/** The command: `resolve [dir] --nonce N --as OUTCOME`. */
function action(dir, opts) {
  const t = target(dir, opts, "resolve", { write: true, args: [`--nonce=${opts.nonce}`, "--as", opts.as] });
  return resolve(t, opts.nonce, opts.as);
}

module.exports = { action, resolve };
