#!/usr/bin/env node
// discord-journal: an operator's view of one binding's journal, built on the
// addon's own exports so that it sees exactly what the connector sees. This
// file only parses: each command's options here (`--help` lists them), its
// work in cli/commands/<command>.js (its `action`), the helpers they share in cli/.
//
// Every command takes --json. DIR may be given as --data-root ROOT --binding
// NAME instead (ROOT/discord/NAME). Before anything else each command checks
// that DIR is a journal it can read (cli/target.js). Exit status: 0 done; 1
// failed or found damage; 2 a usage mistake (commander's and ours, so a
// script can tell a typo from a damaged journal); 3 a refusal with
// BRAKE_EXIT, which a supervisor must not retry.
//
// bin/ and cli/ are CommonJS, as the package is: `require` is synchronous,
// so a command's module is loaded inside its action, where a binary that
// does not load is caught (`load`), and all of it is loaded before the
// command, run as root, becomes the journal's user (cli/owner.js).
"use strict";

const { Command, Option } = require("commander");
const { version } = require("../package.json");
const { run } = require("../cli/output.js");

/**
 * A command's module, loaded only when it runs (it loads the addon, and
 * with it every module it uses: run as root, the command becomes the
 * journal's user only after). A binary that does not load is one line
 * saying so and what to do, not a stack trace.
 */
function load(name) {
  try {
    return require(`../cli/commands/${name}.js`);
  } catch (e) {
    const first = String(e?.message ?? e).split("\n")[0];
    if (!first.startsWith("discord-journal: no native binding loads")) throw e;
    console.error(
      `${first.replace(/\. Tried:$/, "")}: reinstall the package, or build the binary from source with \`npx discord-journal-build\` (needs Rust)`,
    );
    process.exit(1);
  }
}

const wantsJson = process.argv.slice(2).includes("--json");
const program = new Command();
program
  .name("discord-journal")
  .description("Inspect, brake and recover a Discord connector binding's journal.")
  .version(version, "-V, --version", "print the version")
  // The program's own options (-V, -h) stand before a command alone, so
  // that `resolve --nonce -V` gives the nonce -V, not the version.
  .enablePositionalOptions()
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

/**
 * A command of the program, run by its module's `action` with commander's
 * arguments; its own usage errors say how to ask for its help.
 */
const command = (name, description) =>
  program
    .command(name)
    .description(description)
    .option("--json", "print one JSON object: the result, or { ok: false, exitCode, error }")
    .showHelpAfterError(`(run \`discord-journal ${name} --help\` for its usage)`)
    .action((...args) => run(args.at(-2).json, () => load(name).action(...args.slice(0, -1))));

const withDir = (cmd) =>
  cmd
    .argument("[dir]", "the binding's journal directory (or use --binding)")
    .option("--data-root <root>", "the data root that holds discord/<binding>/", "./data")
    .option("--binding <name>", "the binding's name, for <root>/discord/<name>");

const MISSING_OK = [
  "--missing-ok",
  "a journal directory that does not exist yet is a binding that has not run: nothing to do (for a service unit's first start)",
];

withDir(
  command(
    "status",
    "the verdict (can it start?), the brake and the lock, what needs a hand; files, deliveries, today's counts. With --data-root ROOT typed and neither DIR nor --binding: every binding under ROOT, one line each (status alone names no journal: a usage mistake)",
  ),
)
  .option("--prometheus <file>", "with every binding: write their metrics to <file> in node_exporter's textfile format (replaced whole)")
  .option("-x, --problems", "with every binding: only those that need a hand, are braked or crashed, or one line saying none does")
  .option(
    "--full-every <minutes>",
    "with --prometheus: read every file in full at least this often; between, a file whose size, inode and times are unchanged is not read again (its answer is kept in a state file in FILE's directory, one per data root)",
    "60",
  )
  .addOption(new Option("--idle-only").hideHelp())
  // Every binding only where --data-root was typed: `status` alone, in a
  // directory that happens to hold data/, stays the usage mistake it was.
  .hook("preAction", (cmd) => cmd.setOptionValue("fleet", cmd.getOptionValueSource("dataRoot") === "cli"));

withDir(command("check", "list every line and turn record the readers would refuse, and why; exit 1 if any"));

withDir(command("stop", "write STOP: no new turn starts and no run can claim the binding"))
  .argument("[reason]", "what the STOP line says", "stop")
  .option("--init", "brake a binding that has not run yet: create its journal directory first");

withDir(command("unlock", "clear a run.lock whose owner is gone (writes STOP first; STOP stays)"));

withDir(command("recover", "supervised pre-start: clear a crashed run's lock unless an operator braked")).option(...MISSING_OK);

withDir(
  command(
    "resolve",
    "record the outcome of a delivery left without one past the dedupe window, as found in its channel: confirmed (the message is there) or refused (it is not)",
  ),
)
  .requiredOption("--nonce <nonce>", "the delivery's nonce (status names it)")
  .addOption(new Option("--as <outcome>", "what was found in the channel").choices(["confirmed", "refused"]).makeOptionMandatory());

withDir(
  command(
    "repair",
    "set aside what a crash left (cut lines, zero runs, empty or cut turn records) and lines of whitespace alone, and give a hard-linked record file a file of its own; shows it, and --apply does it",
  ),
)
  .option("--apply", "carry the repair out (without it, nothing is changed)")
  .option(...MISSING_OK);

command("verify", "prove the addon against a host's own journal.mjs: the surface, every export's cases, random sequences")
  .requiredOption("--reference <path>", "the host's journal.mjs (loaded where it lies)")
  .option("--seed <n>", "the first random sequence's seed", "1")
  .option("--sequences <n>", "random sequences to play", "500")
  .option("--timeout <s>", "seconds without progress before the reference is taken to hang", "60")
  .option("--case <name>", "play this deterministic case alone (a difference's replay line names it)")
  .option("--sequences-only", "play no deterministic case (to replay one sequence)")
  .option("--known", "list the differences kept as choices too");

command("demo", "build a journal an operator braked and whose connector crashed holding its lock, and show it").argument(
  "[dir]",
  "a new directory for it (default: the first free data/discord/demo, demo-2, ...)",
);

program.parse();
