#!/usr/bin/env node
// discord-journal: an operator's view of one binding's journal, built on the
// addon's own exports so that it sees exactly what the connector sees. This
// file only wires the commands (cli/, one module each) to their options.
//
//   discord-journal status DIR     the verdict, the brake, the lock, what needs a hand and what to run next
//   discord-journal check DIR      every line and record the readers would refuse, and why
//   discord-journal stop DIR [REASON]   write STOP (the brake)
//   discord-journal unlock DIR     clear a stale run.lock (writes STOP first)
//   discord-journal recover DIR    the supervised pre-start
//   discord-journal repair DIR     set aside what a crash left (--apply), keeping its bytes
//   discord-journal demo [DIR]     build a braked journal whose owner crashed, and show it
//   discord-journal verify --reference PATH   prove the addon against a host's journal.mjs
//
// Every command takes --json. DIR may be given as --data-root ROOT --binding
// NAME instead (ROOT/discord/NAME). Before anything else each command checks
// that DIR is a journal it can read (cli/target.js). Exit status: 0 done; 1
// failed or found damage; 2 a usage mistake (commander's and ours, so a
// script can tell a typo from a damaged journal); 3 a refusal with
// BRAKE_EXIT, which a supervisor must not retry.
"use strict";

const { Command } = require("commander");
const { version } = require("../package.json");
const fs = require("node:fs");
const path = require("node:path");
const { Refusal, UsageError, run } = require("../cli/output.js");

/**
 * A module of the command, which loads the addon. A binary that does not
 * load is one line saying so and what to do, not a stack trace.
 */
function load(name) {
  try {
    return require(`../cli/${name}.js`);
  } catch (e) {
    const first = String(e?.message ?? e).split("\n")[0];
    if (!first.startsWith("discord-journal: no native binding loads")) throw e;
    console.error(
      `${first.replace(/\. Tried:$/, "")}: reinstall the package, or build the binary from source with \`npx discord-journal-build\` (needs Rust)`,
    );
    process.exit(1);
  }
}

/**
 * The journal a command names, checked before anything else
 * (cli/target.js). Run as root, the command becomes the journal's user
 * there, before it opens anything inside (#33); the modules it runs are
 * loaded first, while root can still reach them.
 */
function target(dir, opts, command, { write = false, uses = [], acting = null } = {}) {
  const { journalDir, reach } = load("target");
  for (const name of ["journal", ...uses]) load(name);
  const d = journalDir(dir, opts, command);
  const t = reach(d, { command, write, argv: ["discord-journal", command, d] });
  t.acting ??= acting;
  if (t.acting && !opts.json) console.error(`discord-journal: ${t.acting}`);
  return t;
}

const wantsJson = process.argv.slice(2).includes("--json");
const program = new Command();
program
  .name("discord-journal")
  .description("Inspect, brake and recover a Discord connector binding's journal.")
  .version(version, "-V, --version", "print the version")
  .showSuggestionAfterError()
  .showHelpAfterError("(run `discord-journal --help` for the commands)")
  // With --json anywhere on the line, a usage mistake is answered in JSON
  // too (#34): a script that asked for JSON parses every outcome.
  .configureOutput({ writeErr: (text) => (wantsJson ? undefined : process.stderr.write(text)) })
  // Commander exits 1 on a usage mistake, which is also what `check` returns
  // for bad lines; every mistake exits 2 instead. Help and --version exit 0.
  // Inherited by every command defined below.
  .exitOverride((e) => {
    if (wantsJson && e.exitCode !== 0)
      console.log(JSON.stringify({ ok: false, exitCode: 2, error: e.message.replace(/^error: /, "") }, null, 2));
    process.exit(e.exitCode === 0 ? 0 : 2);
  })
  .addHelpText("after", "\nExit status: 0 done; 1 failed or found damage; 2 a usage mistake; 3 a brake (a supervisor must not retry).");

/** A command of the program; its own usage errors say how to ask for its help. */
const command = (name, description) =>
  program
    .command(name)
    .description(description)
    .option("--json", "print one JSON object: the result, or { ok: false, exitCode, error }")
    .showHelpAfterError(`(run \`discord-journal ${name} --help\` for its usage)`);

const withDir = (cmd) =>
  cmd
    .argument("[dir]", "the binding's journal directory (or use --binding)")
    .option("--data-root <root>", "the data root that holds discord/<binding>/", "./data")
    .option("--binding <name>", "the binding's name, for <root>/discord/<name>");

withDir(
  command("status", "the verdict (can it start?), the brake and the lock, what needs a hand; files, deliveries, today's counts"),
).action((dir, opts) =>
  run(opts.json, () => {
    const t = target(dir, opts, "status", { uses: ["status", "status-text"] });
    const { status, exitOf } = load("status");
    const s = status(t);
    return { exitCode: exitOf(s), json: s, text: opts.json ? undefined : load("status-text").render(s) };
  }),
);

withDir(command("check", "list every line and turn record the readers would refuse, and why; exit 1 if any")).action((dir, opts) =>
  run(opts.json, () => load("check").check(target(dir, opts, "check", { uses: ["check"] }))),
);

withDir(command("stop", "write STOP: no new turn starts and no run can claim the binding"))
  .argument("[reason]", "what the STOP line says", "stop")
  .option("--init", "brake a binding that has not run yet: create its journal directory first")
  .action((dir, reason, opts) =>
    run(opts.json, () => {
      // With --binding, a single word is the reason: `stop --binding NAME maintenance`.
      if (opts.binding !== undefined && dir !== undefined && reason === "stop") [dir, reason] = [undefined, dir];
      load("brake").stopReason(reason);
      let made = null;
      if (opts.init) {
        // Only a directory that is not there yet is made, and only under a binding's name.
        const d = load("target").journalDir(dir, opts, "stop");
        if (!load("target").BINDING_NAME.test(path.basename(d))) {
          throw new UsageError(`--init makes a binding's journal, and ${path.basename(d)} is not a binding name`);
        }
        if (!fs.existsSync(d)) {
          // Made by the user whose path it is, never by root (#33).
          for (const name of ["journal", "brake"]) load(name);
          made = load("target").becomeMaker(d, ["discord-journal", "stop", d]);
          try {
            load("journal").J.ensureJournal(d);
          } catch (e) {
            // Node's own error names the host path and no fix (#34).
            throw new Refusal(
              `cannot make the journal at ${d} (${e.code ?? e.message}); nothing was braked. Give the path of a binding's journal whose parent you can write in (--data-root ROOT --binding NAME)`,
            );
          }
        }
      }
      return load("brake").stop(target(dir, opts, "stop", { write: true, uses: ["brake"], acting: made }), reason);
    }),
  );

withDir(command("unlock", "clear a run.lock whose owner is gone (writes STOP first; STOP stays)")).action((dir, opts) =>
  run(opts.json, () => load("brake").unlock(target(dir, opts, "unlock", { write: true, uses: ["brake"] }))),
);

/**
 * With --missing-ok, a journal directory that does not exist yet (a
 * binding that has not run: a service unit's first start) is nothing to do,
 * where it would otherwise be a usage mistake. Only under a binding's name.
 */
function notYet(dir, opts, command) {
  if (!opts.missingOk) return false;
  const d = load("target").journalDir(dir, opts, command);
  if (!load("target").BINDING_NAME.test(path.basename(d))) return false;
  // Only a definite "not there": a path this user cannot search is refused as such below.
  try {
    fs.statSync(d);
    return false;
  } catch (e) {
    return e.code === "ENOENT";
  }
}
const MISSING_OK = [
  "--missing-ok",
  "a journal directory that does not exist yet is a binding that has not run: nothing to do (for a service unit's first start)",
];

withDir(command("recover", "supervised pre-start: clear a crashed run's lock unless an operator braked"))
  .option(...MISSING_OK)
  .action((dir, opts) =>
    run(opts.json, () => {
      if (notYet(dir, opts, "recover")) return { text: "clean", json: { ok: true, exitCode: 0, result: "clean" } };
      return load("brake").recover(target(dir, opts, "recover", { write: true, uses: ["brake"] }));
    }),
  );

withDir(command("repair", "set aside what a crash left (cut lines, zero runs, empty or cut turn records); shows it, and --apply does it"))
  .option("--apply", "carry the repair out (without it, nothing is changed)")
  .option(...MISSING_OK)
  .action((dir, opts) =>
    run(opts.json, () => {
      if (notYet(dir, opts, "repair")) return { text: "nothing to repair", json: { ok: true, exitCode: 0, applied: false } };
      return load("repair").repair(target(dir, opts, "repair", { write: opts.apply === true, uses: ["repair"] }), opts.apply === true);
    }),
  );

command("verify", "prove the addon against a host's own journal.mjs: the surface, every export's cases, random sequences")
  .requiredOption("--reference <path>", "the host's journal.mjs (loaded where it lies)")
  .option("--seed <n>", "the first random sequence's seed", "1")
  .option("--sequences <n>", "random sequences to play", "500")
  .option("--timeout <s>", "seconds without progress before the reference is taken to hang", "60")
  .option("--case <name>", "play this deterministic case alone (a difference's replay line names it)")
  .option("--sequences-only", "play no deterministic case (to replay one sequence)")
  .option("--known", "list the differences kept as choices too")
  .action((opts) =>
    run(opts.json, () => {
      const count = (v, name) => {
        if (!/^\d+$/.test(v)) throw new UsageError(`--${name} takes a whole number, not ${v}`);
        return Number(v);
      };
      return require("../cli/verify.js").verify({
        ...opts,
        seed: count(opts.seed, "seed"),
        sequences: count(opts.sequences, "sequences"),
        timeout: count(opts.timeout, "timeout"),
      });
    }),
  );

command("demo", "build a journal an operator braked and whose connector crashed holding its lock, and show it")
  .argument("[dir]", "a new directory for it (default: the first free data/discord/demo, demo-2, ...)")
  .action((dir, opts) =>
    run(opts.json, () => {
      const demo = load("demo");
      const d = demo.demoDir(dir);
      demo.build(d);
      const s = load("status").status(load("target").reach(d, { command: "demo", argv: ["discord-journal", "status", d] }));
      if (opts.json) return { json: { ok: true, exitCode: 0, dir: d, status: s } };
      const text = [
        `demo: a connector ran in ${d}; an operator braked it, then it crashed holding its lock.\n`,
        load("status-text").render(s),
        `\nTry it: run what \`next\` says, then \`discord-journal status ${d}\` again ("The demo" in docs/command.md, which the package carries, shows it).`,
      ];
      return { json: null, text: text.join("\n") };
    }),
  );

program.parse();
