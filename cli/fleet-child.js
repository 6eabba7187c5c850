// One owner's share of the fleet's view run as root (cli/fleet.js): the
// bindings named, judged in this process, which becomes their owner at the
// first (cli/owner.js), and one line of JSON on stdout. Started with
// Node alone, not through bin/discord-journal.js: a collection starts one
// per owner, and the command line's parser is no part of its work (#63).
//
//   node cli/fleet-child.js ROOT NAME,NAME… [--memo] [--brief]
//
// --memo: the kept answers of these bindings come on stdin, as the state
// keeps them (cli/memo.js), and what was taken and read goes back; --brief: each status as the
// metrics and the text read it (cli/fleet.js's `briefly`), where the
// parent prints no JSON. A failure is said on stderr, as the command
// says it, and the parent makes it each binding's line.
"use strict";

const fs = require("node:fs");
const { run } = require("./output.js");

const [dataRoot, names, ...flags] = process.argv.slice(2);
run(false, async () => {
  // Every module loaded before the first binding makes this process its owner.
  const { status, exitOf } = require("./commands/status.js");
  const { fleet, briefly } = require("./fleet.js");
  const { Memo, readLines } = require("./memo.js");
  const memo = flags.includes("--memo") ? new Memo(readLines(fs.readFileSync(0, "utf8"))) : null;
  const view = await fleet({ dataRoot, fleetOnly: names }, { status, exitOf, ...(memo ? { memo } : {}) });
  const bindings = flags.includes("--brief")
    ? view.json.bindings.map((b) => (b.refused === undefined ? briefly(b) : b))
    : view.json.bindings;
  process.stdout.write(JSON.stringify({ ...view.json, bindings, ...(memo ? { memo: memo.report() } : {}) }));
  return { exitCode: view.exitCode, json: undefined, text: undefined };
});
