// `status` with --data-root typed and no binding named: the fleet's view
// (cli/fleet.js), its metrics (cli/prometheus.js) or the idle file's child.
// The command gives its `status` and `exitOf` (`verdict`): imports run one way.
"use strict";

const { UsageError } = require("./output.js");
const { fleet } = require("./fleet.js");
const { collect, idleAsOwner } = require("./prometheus.js");

/** The mode `dir` and `opts` ask for, as the command's result (a promise), or null where they name one binding. */
function everyBinding(dir, opts, verdict) {
  const one = dir !== undefined || opts.binding !== undefined;
  if (!one && opts.fleet) return mode(opts, verdict);
  const alone = "give --data-root ROOT alone, without DIR or --binding";
  if (opts.prometheus !== undefined)
    throw new UsageError(
      `--prometheus writes every binding's metrics: ${one ? alone : "it needs --data-root ROOT (the directory that holds discord/)"}`,
    );
  if (opts.problems) throw new UsageError(`-x shows the bindings that need a hand among every binding: ${alone}`);
  return null;
}

async function mode(opts, verdict) {
  // A collection's child that reads the data root's idle file as its owner (cli/prometheus.js).
  if (opts.idleOnly) return { exitCode: 0, json: idleAsOwner(opts.dataRoot), text: undefined };
  if (opts.prometheus !== undefined) {
    if (!/^[0-9]+$/.test(String(opts.fullEvery ?? "60")))
      throw new UsageError("--full-every takes a whole number of minutes (0: read every file in full each time)");
    const r = await collect(opts, fleet, verdict);
    return { ...r, text: opts.json ? undefined : r.text };
  }
  const view = await fleet(opts, verdict);
  return { exitCode: view.exitCode, json: view.json, text: opts.json ? undefined : view.text };
}

module.exports = { everyBinding };
