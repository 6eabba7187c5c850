// `discord-journal resolve DIR --nonce N --as confirmed|refused`: the outcome
// of a delivery left without one, as a person found it in its channel,
// appended to outbox.jsonl through the addon's own appendOutbox (#56). Past
// the dedupe window the connector does not send a delivery again, and
// nothing else can tell whether it arrived; a line is added, none changed.
// Between the read and the append no other writer has a reason to write
// that nonce: the connector left it when its window closed; where one
// did (a receipt hours late), the merge's last line would be the
// operator's, which is what the channel showed.
"use strict";

const { J } = require("../journal.js");
const { target } = require("../target.js");
const { sh, invocation } = require("../output.js");

function resolve(t, nonce, as) {
  const list = `\`${invocation()} status ${sh(t.dir)}\` lists the deliveries without an outcome`;
  const entry = J.readOutbox(t.at).get(nonce);
  if (entry === undefined) throw new J.DiscordError(`outbox.jsonl has no delivery with nonce ${nonce}: ${list}`, 1);
  // Pasted twice, the same outcome is no mistake; another one is.
  if (entry.status === as)
    return {
      text: `delivery ${nonce} is ${as} already: nothing written`,
      json: { ok: true, exitCode: 0, nonce, status: as, written: null },
    };
  if (!["intent", "unknown"].includes(entry.status))
    throw new J.DiscordError(
      `delivery ${nonce} is ${entry.status} already${entry.at ? ` (at ${entry.at})` : ""}: an outcome is never replaced, so nothing was written`,
      1,
    );
  const line = { nonce, status: as, at: new Date().toISOString(), resolvedBy: "operator" };
  J.appendOutbox(t.at, line);
  return { text: `delivery ${nonce} recorded as ${as} in outbox.jsonl`, json: { ok: true, exitCode: 0, nonce, status: as, written: line } };
}

/** The command: `resolve [dir] --nonce N --as OUTCOME`. */
function action(dir, opts) {
  const t = target(dir, opts, "resolve", { write: true, args: ["--nonce", opts.nonce, "--as", opts.as] });
  return resolve(t, opts.nonce, opts.as);
}

module.exports = { action, resolve };
