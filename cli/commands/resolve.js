// `discord-journal resolve DIR --nonce N --as confirmed|refused`: the outcome
// of a delivery left without one past the dedupe window, as a person found
// it in its channel, appended to outbox.jsonl through the addon's own
// appendOutbox (#56). Past the window the connector does not send a
// delivery again, and nothing else can tell whether it arrived; within it
// the delivery is the connector's own, and resolve refuses it. A line is
// added, none changed. Between the read and the append no other writer has
// a reason to write that nonce: the connector left it when its window
// closed; where one did (a receipt hours late), the merge's last line would
// be the operator's, which is what the channel showed.
"use strict";

const { J } = require("../journal.js");
const { target, survey } = require("../target.js");
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
  if (entry.status !== "intent" && entry.status !== "unknown") {
    const was = ["confirmed", "refused"].includes(entry.status)
      ? `is ${entry.status} already${typeof entry.at === "string" ? ` (at ${escaped(entry.at)})` : ""}: an outcome is never replaced`
      : `has the status ${escaped(JSON.stringify(entry.status) ?? "undefined")} in its last line, which is no delivery waiting for an outcome`;
    throw new Refusal(`delivery ${n} ${was}, so nothing was written`);
  }
  // Within the window the connector's reconcile sends it again with the
  // same nonce, and Discord returns the first message if there was one.
  const { ageSeconds, pastWindow } = lateness(entry.intentAt, now);
  if (!pastWindow)
    throw new Refusal(
      `delivery ${n} was sent ${ago(ageSeconds)}, within the ${DEDUPE_WINDOW_S / 60}-minute window in which the connector sends it again with the same nonce (Discord keeps one message): it is the connector's own, so nothing was written`,
    );
  const line = { nonce, status: as, at: new Date(now).toISOString(), resolvedBy: "operator" };
  J.appendOutbox(t.at, line);
  return { text: `delivery ${n} recorded as ${as} in ${FILE.outbox}`, json: { ok: true, exitCode: 0, nonce, status: as, written: line } };
}

/** The command: `resolve [dir] --nonce N --as OUTCOME`. */
function action(dir, opts) {
  const t = target(dir, opts, "resolve", { write: true, args: [`--nonce=${opts.nonce}`, "--as", opts.as] });
  return resolve(t, opts.nonce, opts.as);
}

module.exports = { action, resolve };
