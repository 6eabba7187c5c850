// How the command speaks: plain words where the output is not a terminal or
// colour is off (NO_COLOR, NODE_DISABLE_COLORS, TERM=dumb), symbols and
// colour on a terminal that takes colour; one JSON object with --json; and
// the exit status of each outcome: 0 done, 1 failed or found damage, 2 a
// usage mistake, 3 a brake (a supervisor must not retry).
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const util = require("node:util");

/** A usage mistake: printed with what to type instead, exit status 2. */
class UsageError extends Error {
  constructor(message) {
    super(message);
    this.exitCode = 2;
  }
}

/** A refusal of the command's own (not the journal's), with its exit status. */
class Refusal extends Error {
  /** `verdict`: where the refusal is itself a verdict, as status gives one: `{ state, canStart, why, problems, next }` (the fleet's line). */
  constructor(message, exitCode = 1, verdict = undefined) {
    super(message);
    this.exitCode = exitCode;
    if (verdict !== undefined) this.verdict = verdict;
  }
}

// Symbols only with colour: a reader who turned colour off (or a pipe)
// gets words alone, which a script can match. NO_COLOR turns it off where
// it holds a value (no-color.org: "when present and not an empty
// string"); Node's own test counts an empty one too, so that one is left
// out of what Node is asked, and styleText is not left to ask again.
const colourEnv = () => {
  if (process.env.NO_COLOR !== "") return process.env;
  const env = { ...process.env };
  delete env.NO_COLOR;
  return env;
};
const colour = process.stdout.isTTY === true && process.stdout.hasColors(colourEnv());
const paint = (style, text) => (colour ? util.styleText(style, text, { validateStream: false }) : text);
const MARK = { ok: ["✓", "green"], bad: ["✗", "red"], warn: ["!", "yellow"] };
/** `text` with its symbol and colour for `level`; plain words otherwise. */
const mark = (level, text) => (colour ? paint(MARK[level][1], `${MARK[level][0]} ${text}`) : text);
const dim = (text) => paint("dim", text);
const bold = (text) => paint("bold", text);
/** Commands quoted in backticks, in bold on a terminal (the backticks then go). */
const commands = (text) => text.replace(/`([^`]+)`/g, (_, c) => (colour ? bold(c) : `\`${c}\``));

/**
 * A string from the journal as text: every control character written as
 * its escape (`\u001b`), newlines included, so that a STOP reason, a nonce
 * or a link's target cannot move the cursor, clear the verdict or fake a
 * line (#34).
 */
// (Each class is spelt as what is printable, so that no pattern holds a
// control character.)
// Besides controls, the format characters that reorder or hide text on a
// terminal (bidi overrides and isolates, zero widths, line separators).
const escaped = (text) =>
  String(text).replace(
    /[^\x20-\x7e\u00a0-\uffff]|[\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

/** Every string in `value` (an answer to show) escaped as `escaped` does. */
function escapedAll(value) {
  if (typeof value === "string") return escaped(value);
  if (Array.isArray(value)) return value.map(escapedAll);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapedAll(v)]));
  return value;
}

// What the command prints as text keeps its own newlines and tabs and the
// colour it paints (SGR sequences alone); any other control character is
// escaped, whatever put it there.
const UNSAFE = new RegExp(
  `${String.fromCharCode(27)}\\[[0-9;]*m|[^\\n\\t\\x20-\\x7e\\u00a0-\\uffff]|[\\u00ad\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff]`,
  "g",
);
const printable = (text) => String(text).replace(UNSAFE, (c) => (c.length > 1 && colour ? c : escaped(c)));

/** `text` with its first letter in capitals, as a sentence after a full stop begins. */
const capitalized = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** `1 line`, `2 lines`. */
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Whether `c` cannot stand as itself in a printed command: a character the
 * text escapes (a control, an invisible format character) or the backtick
 * that sets a command apart in the advice.
 */
const UNSAFE_CHAR = new RegExp(UNSAFE.source);
const unprintable = (c) => c === "`" || c === "\n" || c === "\t" || (c.length === 1 && UNSAFE_CHAR.test(c));

/**
 * Whether `s` can be a shell word at all: no shell argument carries a NUL
 * (it ends the word) or a lone surrogate (written, it becomes U+FFFD), so a
 * command printed with either would name another value.
 */
const wordable = (s) => !/\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

/** A value as one shell word, so that a printed command can be pasted. */
const word = (s) => {
  // A leading `=` is a command lookup in zsh.
  if (/^[\w@%+:,./-][\w@%+=:,./-]*$/.test(s)) return s;
  // Such a character is written as bash's $'\xNN', its UTF-8 bytes where it
  // has more than one (which any locale reads back the same, where \uNNNN
  // needs a UTF-8 one): the text's escaping leaves them alone, so the
  // command pastes as it reads (#34).
  const chars = [...s];
  if (chars.some(unprintable)) {
    const bytes = (c) => [...Buffer.from(c, "utf8")].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
    const escapes = chars.map((c) => (unprintable(c) ? bytes(c) : c === "\\" || c === "'" ? `\\${c}` : c));
    return `$'${escapes.join("")}'`;
  }
  return `'${s.replace(/'/g, "'\\''")}'`;
};

/**
 * A path as a shell word. A relative one beginning with `-` is written
 * `./-b`, the same path, which no command (`chmod`, `rm`, this one) takes
 * for an option.
 */
const sh = (p) => word(p.startsWith("-") ? `./${p}` : p);

/** `93 s`, `40 min`, `5 h`, `3 days`: an age an operator reads at a glance (never negative: see `ago`). */
function age(seconds) {
  if (seconds < 120) return plural(seconds, "s", "s");
  if (seconds < 7200) return plural(Math.round(seconds / 60), "min", "min");
  if (seconds < 172_800) return plural(Math.round(seconds / 3600), "h", "h");
  return plural(Math.round(seconds / 86_400), "day");
}

/**
 * When a record dated `seconds` ago was, in words: `40 min ago`; a date
 * ahead of this machine's clock is `dated 3 days in the future` (its clock
 * or this one is wrong), never a negative age (#45).
 */
const ago = (seconds) => (seconds < 0 ? `dated ${age(-seconds)} in the future` : `${age(seconds)} ago`);

/** Rows of cells as text, each column but the last padded to its widest cell. */
function table(rows) {
  rows = rows.map((r) => r.map(String));
  const width = (i) => Math.max(...rows.map((r) => util.stripVTControlCharacters(r[i] ?? "").length));
  const widths = rows[0].map((_, i) => width(i));
  return rows.map((r) =>
    r
      .map((c, i) => {
        const pad = " ".repeat(widths[i] - util.stripVTControlCharacters(c).length);
        return i === r.length - 1 ? c : c + pad;
      })
      .join("  ")
      .trimEnd(),
  );
}

/**
 * How the operator runs this command where they stand (#57, #63), so that
 * every command printed runs as printed, pasted in the operator's own
 * shell where they typed it: its name where a `discord-journal` is on
 * their PATH (a global install); else the package runner they typed, where
 * it finds this command again from here: `pnpm exec discord-journal` under
 * pnpm, `yarn discord-journal` under yarn, and `npx --no-install
 * discord-journal` under npm (npx, `npm exec`, a script) or no runner, in
 * a project that installed it, and under npx in a clone of this package
 * (npx runs a project's own command); `--no-install` never asks a
 * registry, where a bare `npx discord-journal` typed elsewhere would
 * fetch whatever is published under that name. Else the path of its own
 * file, which runs as it is from anywhere (`node bin/discord-journal.js`,
 * a package npx fetched into its cache). Asked once, as this module loads:
 * before the command moves to a journal's directory or becomes its owner
 * (cli/owner.js), and in the fleet's child for an owner as in its parent.
 * Every command the tool prints is written with it (never journal data it
 * shows).
 */
let self;
function invocation() {
  if (self !== undefined) return self;
  let cwd = null;
  try {
    cwd = process.cwd();
  } catch {
    // A working directory that was deleted: no runner finds anything from it.
  }
  self = invoked(process.env, cwd);
  return self;
}

const NAME = "discord-journal";

/** Whether `p` is a file this user may execute. */
const runs = (p) => {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

/** `p` with its links resolved, or null where it leads nowhere. */
const real = (p) => {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
};

/**
 * Whether the launcher `p` (a project's `node_modules/.bin/discord-journal`)
 * starts this very file: a link to it (npm, yarn), or pnpm's shell shim,
 * which names its target in its text (`# cmd-shim-target=…`, or
 * `"$basedir/…"` beside it).
 */
function leadsHere(p, bin) {
  const here = real(bin);
  if (real(p) === here) return true;
  let text;
  try {
    // A shim is a few kilobytes: a regular file of this user's or root's
    // is read (root never reads where another user could point it), its
    // first 16 KiB alone, and a FIFO swapped in meanwhile never blocks.
    const st = fs.statSync(p);
    const uid = process.geteuid?.();
    if (!st.isFile() || (st.uid !== 0 && st.uid !== uid)) return false;
    const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      if (!fs.fstatSync(fd).isFile()) return false;
      const buffer = Buffer.alloc(16_384);
      text = buffer.toString("utf8", 0, fs.readSync(fd, buffer, 0, buffer.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
  const named = [...text.matchAll(/^# cmd-shim-target=(.+)$/gm)].map((m) => m[1]);
  named.push(...[...text.matchAll(/"\$basedir\/([^"$]+)"/g)].map((m) => path.resolve(path.dirname(p), m[1])));
  return named.some((t) => real(t) === here);
}

/**
 * The package runner that started this process or one above it (npm, pnpm
 * or yarn), from the user agent each gives its children, or null.
 */
const runner = (env) => /^(npm|pnpm|yarn)\//.exec(env.npm_config_user_agent ?? "")?.[1] ?? null;

/**
 * `invocation()`'s answer for this environment and working directory
 * (null where it was deleted).
 */
function invoked(env, cwd) {
  const bin = path.join(__dirname, "..", "bin", "discord-journal.js");
  const by = runner(env);
  // A runner puts `node_modules/.bin` directories (npx's cache among them)
  // and its own helpers (npm's node-gyp-bin) before the operator's PATH for
  // its child alone: a command found there does not run in the operator's
  // shell (exit 127). Under a runner, those entries are not the operator's.
  const mine = (d) => by === null || !d.split(path.sep).includes("node_modules");
  const own = (env.PATH ?? "").split(path.delimiter).filter(mine);
  if (own.some((d) => runs(path.join(d || ".", NAME)))) return NAME;
  if (cwd === null) return sh(bin);
  // What a runner finds from here: the first `node_modules/.bin/discord-journal`
  // up from the working directory, as npx, pnpm exec and yarn look.
  let found = null;
  for (let d = cwd; found === null; d = path.dirname(d)) {
    const launcher = path.join(d, "node_modules", ".bin", NAME);
    if (fs.existsSync(launcher)) found = leadsHere(launcher, bin);
    if (path.dirname(d) === d) break;
  }
  if (found === true && by === "pnpm") return `pnpm exec ${NAME}`;
  if (found === true && by === "yarn") return `yarn ${NAME}`;
  if (found === true) return `npx --no-install ${NAME}`;
  // npx (npm exec) run in a clone of this package (the README's `npx
  // discord-journal demo`) runs the project's own command: the nearest
  // package.json up from here, where it is this package's. (Run otherwise
  // in a clone, by `npm test` or by hand, its path below says as much.)
  if (by === "npm" && env.npm_command === "exec" && found === null) {
    for (let d = cwd; ; d = path.dirname(d)) {
      if (fs.existsSync(path.join(d, "package.json")) || fs.existsSync(path.join(d, "node_modules"))) {
        if (real(d) === real(path.join(__dirname, ".."))) return `npx --no-install ${NAME}`;
        break;
      }
      if (path.dirname(d) === d) break;
    }
  }
  return sh(bin);
}

invocation();

/**
 * Runs a command's body, which returns (or resolves with) `{ exitCode, json,
 * text }`, and prints its outcome: `text` (stdout), or with `--json` the
 * `json` object. A refusal prints its message (stderr), or with `--json`
 * the object `{ ok: false, exitCode, error }` (stdout), and exits with its
 * status.
 */
function run(json, body) {
  const fail = (e) => {
    // A relative path resolved from a working directory that was deleted:
    // a usage mistake (exit 2), said as one, wherever it was met.
    if (e?.code === "ENOENT" && e?.syscall === "uv_cwd")
      e = new UsageError(
        "the working directory is gone (it was deleted), so no relative path leads anywhere; give absolute paths, or cd to a directory that exists first",
      );
    const exitCode = typeof e?.exitCode === "number" ? e.exitCode : 1;
    // A journal refusal is the library's own message; anything else is ours.
    const journal = e?.name === "DiscordError";
    const message = String(e?.message ?? e);
    // A refusal of the command's own may carry its JSON form (`e.json`).
    if (json) console.log(JSON.stringify(e?.json ?? { ok: false, exitCode, error: message }, null, 2));
    else console.error(printable(journal ? message : `discord-journal: ${message}`));
    process.exitCode = exitCode;
  };
  const print = (out) => {
    if (json) console.log(JSON.stringify(out.json, null, 2));
    else if (out.text !== undefined) console.log(printable(out.text));
    process.exitCode = out.exitCode ?? 0;
  };
  let out;
  try {
    out = body();
  } catch (e) {
    fail(e);
    return;
  }
  if (typeof out?.then === "function") out.then(print, fail);
  else print(out);
}

module.exports = {
  capitalized,
  invocation,
  invoked,
  UsageError,
  Refusal,
  mark,
  dim,
  bold,
  commands,
  plural,
  sh,
  word,
  wordable,
  age,
  ago,
  table,
  run,
  colour,
  escaped,
  escapedAll,
  printable,
};
