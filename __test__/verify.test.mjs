// `discord-journal verify` (#22): it must tell real differences from none.
// Each mutant is the specification's journal.mjs with one line changed, in
// a copy of its package tree (so its errors.mjs and utilities resolve);
// verify must exit 1 and name the export. The specification is looked for
// beside this checkout (../shared/spec, as in CI) or at
// DISCORD_JOURNAL_SPEC; without it these tests skip. The command is this
// package's own, so they skip against another implementation too.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, isAddon } from "./helpers.mjs";

const bin = fileURLToPath(new URL("../bin/discord-journal.js", import.meta.url));
const stack = process.env.DISCORD_JOURNAL_SPEC ?? fileURLToPath(new URL("../../shared/spec/reference/stack", import.meta.url));
const spec = join(stack, "packages", "discord", "src", "journal.mjs");
// The exports journal.mjs has: this package's (index.js, the one list), less its own (internal.js's list).
const OWN_EXPORTS = isAddon ? createRequire(import.meta.url)("../internal.js").OWN_EXPORTS : [];
const SHARED = Object.keys(M).filter((k) => !OWN_EXPORTS.includes(k)).length;
const skip = !isAddon ? "the command is this package's own" : existsSync(spec) ? false : "no specification beside this checkout";

const made = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
// verify's temporary directories go to a TMPDIR of the suite's own, so that
// what it leaves behind is counted there alone. Each run is bounded by a
// timeout that belongs to its promise (it must end): generous, since the
// comparison took 72 s with three suites on 2 cores (#48); how long it
// takes is the bench's and the README's figure, not a test.
const LIMIT = 300_000;
const own = mkdtempSync(join(tmpdir(), "discord-journal-verify-tmp-"));
made.push(own);
const verify = (reference, ...args) =>
  spawnSync(process.execPath, [bin, "verify", "--reference", reference, ...args], {
    encoding: "utf8",
    timeout: LIMIT,
    env: { ...process.env, TMPDIR: own },
  });
/** `verify`, as a promise: the mutants are compared two at a time. */
const verifyAsync = (reference, ...args) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "verify", "--reference", reference, ...args], {
      timeout: LIMIT,
      env: { ...process.env, TMPDIR: own },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
const leftovers = () => readdirSync(own).length;

/** A copy of the specification's package tree with `journal.mjs` changed by `edit`. */
function mutant(edit) {
  const top = mkdtempSync(join(tmpdir(), "discord-journal-mutant-"));
  made.push(top);
  cpSync(stack, top, { recursive: true });
  const file = join(top, "packages", "discord", "src", "journal.mjs");
  const before = readFileSync(file, "utf8");
  const after = edit(before);
  assert.notEqual(after, before, "the mutation changed nothing");
  writeFileSync(file, after);
  return file;
}
const swap = (from, to) => (text) => {
  assert.ok(text.includes(from), `the specification no longer holds ${from}`);
  return text.replace(from, to);
};

// One-line mutants: what is changed, and the export verify must name.
const MUTANTS = [
  ["a refusal's message", swap('"inbox entry needs a message id"', '"inbox entry needs an id"'), "appendInbox"],
  [
    "a file's mode",
    swap('appendFileSync(path, line + "\\n", { mode: 0o600 });', 'appendFileSync(path, line + "\\n", { mode: 0o644 });'),
    "appendInbox",
  ],
  ["intentAt moves", swap("const intentAt = prev ? prev.intentAt : e.at;", "const intentAt = e.at;"), "readOutbox"],
  ["a lock rule loosened", swap('if (state === "unknown") throw', 'if (state === "unknown" && false) throw'), "unlock"],
  [
    "a count that changes",
    swap("e.at.slice(0, 10) === date) ids.add(e.id);", "e.at.slice(0, 10) === date) ids.add(e.at);"),
    "countAdmissionsOn",
  ],
  [
    "a turn record's key order",
    swap("JSON.stringify({ ...record, id }, null, 2)", "JSON.stringify({ id, ...record }, null, 2)"),
    "writeTurn",
  ],
  ["a default reason", swap('requestStop(dir, reason = "stop")', 'requestStop(dir, reason = "operator")'), "requestStop"],
  [
    "a foreign STOP line trusted",
    swap('typeof v.reason === "string" ? v : { reason: null }', 'typeof v.reason === "string" ? v : { reason: "?" }'),
    "readStop",
  ],
  ["a constant", swap("export const BRAKE_EXIT = 3;", "export const BRAKE_EXIT = 4;"), "BRAKE_EXIT"],
  [
    "recover's own STOP widened",
    swap("const ours = (lines) => lines.length === 1 &&", "const ours = (lines) => lines.length >= 1 &&"),
    "recover",
  ],
  [
    "utcDate's slice",
    swap("return new Date(now).toISOString().slice(0, 10);", "return new Date(now).toISOString().slice(0, 9);"),
    "utcDate",
  ],
  ["a processing stop's mode check", swap("(st.mode & 0o7777) !== 0o600", "(st.mode & 0o7777) !== 0o644"), "requestProcessingStop"],
];

describe("discord-journal verify", { skip }, () => {
  // Under Deno, journal.mjs follows Deno's fs where it is not Node's, and
  // the addon keeps Node's (docs/development.md, "Platforms and
  // requirements"): appendFileSync applies its mode to a file that exists,
  // rmSync removes an empty directory at STOP, and a path with a NUL byte
  // is EINVAL.
  const nodesFs = process.versions.deno ? { skip: "Deno's fs differs from Node's in three places the addon keeps Node's" } : {};
  test("the specification's own journal.mjs: no difference, nothing left behind", nodesFs, () => {
    const before = leftovers();
    const t = performance.now();
    const r = verify(spec, "--json");
    assert.equal(r.status, 0, r.stdout + r.stderr);
    console.log(`# figure verify of the specification's journal.mjs: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const out = JSON.parse(r.stdout);
    assert.equal(out.ok, true);
    assert.deepEqual(Object.keys(out.summary), ["exports", "cases", "sequences", "calls", "differences", "known"]);
    assert.equal(out.summary.exports, SHARED);
    assert.ok(out.summary.cases > 200 && out.summary.sequences === 500 && out.summary.calls > 10_000, JSON.stringify(out.summary));
    assert.equal(leftovers(), before);
  });

  // Each mutant is a process of its own (and verify's child): each test
  // starts its own comparison and the next one, so two run at a time
  // whatever the runner's own concurrency (Bun's node:test runs tests one
  // by one), and on a two-core machine the suite's longest part halves.
  // A comparison that fails is that test's failure, not an unhandled one.
  const compared = [];
  const start = (i) => {
    if (i >= MUTANTS.length || compared[i]) return;
    compared[i] = Promise.resolve()
      .then(() => verifyAsync(mutant(MUTANTS[i][1]), "--sequences", "40", "--json"))
      .then(
        (value) => ({ value }),
        (error) => ({ error }),
      );
  };
  const comparison = async (i) => {
    start(i);
    start(i + 1);
    const { value, error } = await compared[i];
    if (error) throw error;
    return value;
  };
  for (const [i, [what, , name]] of MUTANTS.entries()) {
    test(`a mutant (${what}) is told apart, naming ${name}`, async () => {
      const r = await comparison(i);
      assert.equal(r.status, 1, r.stdout + r.stderr);
      const out = JSON.parse(r.stdout);
      assert.ok(
        out.differences.some((d) => d.export === name),
        `${name} not named: ${JSON.stringify(out.differences.map((d) => [d.export, d.case]))}`,
      );
      // Every difference comes with the command that replays it alone.
      for (const d of out.differences)
        if (d.case !== "the surface") assert.match(d.replay, /^discord-journal verify --reference \S+ --(case|seed) /);
    });
  }

  test("the text report: a summary line, then each difference with both outcomes and its replay", () => {
    const r = verify(mutant(MUTANTS[0][1]), "--sequences", "5");
    assert.equal(r.status, 1);
    assert.match(r.stdout, new RegExp(`^${SHARED} exports compared, \\d+ cases, 5 random sequences, \\d+ calls: [1-9]\\d* differences?`));
    assert.match(
      r.stdout,
      /\nappendInbox: inbox, appendInbox without id\n {2}journal\.mjs: throws DiscordError .*"inbox entry needs an id"\n {2}addon: {7}throws DiscordError .*"inbox entry needs a message id"\n {2}replay: discord-journal verify --reference \S+ --case "inbox"\n/,
    );
    // The replay line plays that case alone, and finds it again.
    const again = verify(r.stdout.match(/--reference (\S+)/)[1], "--case", "inbox", "--sequences", "0");
    assert.equal(again.status, 1);
    assert.match(again.stdout, new RegExp(`^${SHARED} exports compared, 1 case, 0 random sequences`));
  });

  // #37: after the swap the host's journal.mjs is this package; compared
  // with itself, the addon would pass and prove nothing.
  test("a reference that is this package (a re-export, a link, another copy) exits 2 with the fix", () => {
    const root = fileURLToPath(new URL("..", import.meta.url));
    const file = mutant((text) => `export * from ${JSON.stringify(join(root, "index.js"))};\n// ${text.length}\n`);
    const src = join(file, "..");
    cpSync(spec, join(src, "journal.orig.mjs"));
    // The host's errors.mjs takes the class from the package, as the README says.
    writeFileSync(
      join(src, "errors.mjs"),
      readFileSync(join(src, "errors.mjs"), "utf8").replace(
        /export class DiscordError extends Error \{[\s\S]*?\n\}\n/,
        `import { DiscordError } from ${JSON.stringify(join(root, "index.js"))};\nexport { DiscordError };\n`,
      ),
    );
    const copy = mkdtempSync(join(tmpdir(), "discord-journal-copy-"));
    made.push(copy);
    for (const f of readdirSync(root).filter((f) => /^(index|binding|libc|entry)\.js$|^package\.json$|\.node$/.test(f)))
      cpSync(join(root, f), join(copy, f));
    const another = join(src, "another.mjs");
    writeFileSync(another, `export * from ${JSON.stringify(join(copy, "index.js"))};\n`);
    const link = join(src, "link.js");
    symlinkSync(join(root, "index.js"), link);
    for (const [reference, why] of [
      [file, /its \w+ is this package's own/],
      [link, /it is \S+index\.js, a file of this package/],
      [another, /its \w+ is this package's, from another copy of it/],
    ]) {
      const r = verify(reference, "--sequences", "2");
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /is this package, not the original journal\.mjs \(/);
      assert.match(r.stderr, why);
      assert.match(r.stderr, /Keep the original journal\.mjs, for example as journal\.orig\.mjs beside it, and point --reference at it\n$/);
    }
  });

  // #48: the README's line names the original from the host's root; npx in
  // a workspace runs the command in packages/discord. Both compare it.
  test("the README's line, from the host's root and from packages/discord, verifies the original kept beside the swap", nodesFs, () => {
    const host = join(
      mutant((text) => `export * from "discord-journal";\n// ${text.length}\n`),
      "..",
      "..",
      "..",
      "..",
    );
    const original = join("packages", "discord", "src", "journal.orig.mjs");
    cpSync(spec, join(host, original));
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const line = /^npx discord-journal verify --reference (\S+)$/m.exec(readme);
    assert.ok(line, "the README's verify line");
    assert.equal(line[1], original);
    for (const cwd of [host, join(host, "packages", "discord")]) {
      const r = spawnSync(process.execPath, [bin, "verify", "--reference", line[1], "--sequences", "2"], {
        cwd,
        encoding: "utf8",
        timeout: LIMIT,
        env: { ...process.env, TMPDIR: own, INIT_CWD: "" },
      });
      assert.equal(r.status, 0, `from ${cwd}: ${r.stderr}${r.stdout}`);
      assert.match(r.stdout, / 0 differences/);
    }
    // A path that is nowhere above says where it was looked for.
    const none = spawnSync(process.execPath, [bin, "verify", "--reference", "packages/nowhere/journal.mjs"], {
      cwd: join(host, "packages", "discord"),
      encoding: "utf8",
      timeout: LIMIT,
    });
    assert.equal(none.status, 2);
    assert.match(
      none.stderr,
      /no reference at packages\/nowhere\/journal\.mjs \(ENOENT\), from \S+packages\/discord or a directory above it;/,
    );
  });

  test("a reference that cannot be loaded exits 2 naming its path; one that hangs or exits is stopped and named; nothing is left behind", () => {
    const before = leftovers();
    const missing = verify(join(tmpdir(), "no-such-journal.mjs"));
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no reference at \S*no-such-journal\.mjs \(ENOENT\)/);
    const dir = mkdtempSync(join(tmpdir(), "discord-journal-mutant-"));
    made.push(dir);
    const write = (name, text) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const broken = verify(write("broken.mjs", "export const = 1;"));
    assert.equal(broken.status, 2);
    assert.match(broken.stderr, /the reference \S+broken\.mjs could not be loaded: /);
    const throws = verify(write("throws.mjs", 'throw new Error("no journal here");'));
    assert.equal(throws.status, 2);
    assert.match(throws.stderr, /the reference \S+throws\.mjs could not be loaded: no journal here/);
    const other = verify(write("other.mjs", "export const x = 1;"));
    assert.equal(other.status, 2);
    assert.match(other.stderr, /exports none of the journal's functions/);
    // A reference that hangs in one call, and one that exits the process in one.
    const hangs = verify(
      mutant(swap("export function readDrops(dir) {", "export function readDrops(dir) {\n  for (;;);")),
      "--timeout",
      "3",
      "--sequences",
      "0",
    );
    assert.equal(hangs.status, 1);
    assert.match(hangs.stderr, /made no progress for 3 s, in .*readDrops.* \(reference\)/);
    const exits = verify(
      mutant(swap("export function readReloads(dir) {", "export function readReloads(dir) {\n  process.exit(7);")),
      "--sequences",
      "0",
    );
    assert.equal(exits.status, 1);
    assert.match(exits.stderr, /the comparison stopped \(exit 7\) in .*readReloads.* \(reference\)/);
    assert.equal(leftovers(), before);
  });
});
