// Every file pointer in the README and docs/*.md leads somewhere (#38): a
// path in backticks or in a code block whose first segment is one of the
// repository's own top-level entries must exist (a glob must match), and a
// relative link must reach a file and, in Markdown, one of its headings.
// Journal files (`inbox.jsonl`, `turns/<id>.json`), the connector's paths
// (`packages/discord/…`) and machine paths (`/proc/…`) begin with no
// top-level entry, so they are never taken for this repository's. Beyond
// existence: the layout in docs/development.md names every file, and each
// file the README's API table gives as an export's napi boundary handles
// that export. The docs are the checkout's: a copy of the package without
// them skips.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const docs = join(root, "docs");

/** Paths the docs name that are another project's, though their first segment is one of ours. */
const ELSEWHERE = new Map([["scripts/discord.sh", "the connector's own operator script"]]);

const literal = (s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
/** A name pattern as a RegExp: `*` is any run of characters within one segment. */
const glob = (pattern) => new RegExp(`^${pattern.split("*").map(literal).join("[^/]*")}$`);

/** What git ignores: `/name` at the top only, other patterns at any depth. */
const IGNORED = (() => {
  const gitignore = join(root, ".gitignore");
  // A copy of the package (a tarball unpacked) has no .gitignore: what it
  // carries beyond the repository is its dependencies and built binaries.
  if (!existsSync(gitignore))
    return [
      { re: /^node_modules$/, top: true },
      { re: /^target$/, top: true },
      { re: /\.node$/, top: true },
    ];
  return readFileSync(gitignore, "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => ({ re: glob(l.replace(/^\/|\/$/g, "")), top: l.startsWith("/") }));
})();
// Also .git, and a tarball `npm pack` leaves in the checkout.
const ignored = (name, top) => name === ".git" || name.endsWith(".tgz") || IGNORED.some((i) => (top || !i.top) && i.re.test(name));

/** The repository's top-level entries: what the checkout holds, less what git ignores (builds, data). */
const TOP = new Set(readdirSync(root).filter((n) => !ignored(n, true)));

const isDir = (p) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Whether `segments` (a path under `dir`) name something: `*` matches
 * within a segment, `**` any depth, a trailing "" a directory. A segment
 * with a placeholder (`<id>`, `…`) asks only for what is before it.
 */
function found(dir, segments) {
  if (segments.length === 0) return existsSync(dir);
  const [s, ...rest] = segments;
  if (s === "") return rest.length === 0 ? isDir(dir) : found(dir, rest);
  if (/[<>…{}$]/.test(s)) return isDir(dir);
  if (s === "**")
    return found(dir, rest) || (isDir(dir) && readdirSync(dir).some((e) => isDir(join(dir, e)) && found(join(dir, e), segments)));
  if (!s.includes("*")) return existsSync(join(dir, s)) && found(join(dir, s), rest);
  if (!isDir(dir)) return false;
  return readdirSync(dir).some((e) => glob(s).test(e) && found(join(dir, e), rest));
}

/** GitHub's anchor for a heading: lower case, only letters, digits, `-`, `_` and spaces, spaces as `-`. */
const slug = (heading) =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]*>/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");

/** A Markdown text split into its prose (code blocks blanked, so offsets keep their lines) and its code lines. */
function parse(text) {
  const prose = [];
  const code = [];
  let fence = null;
  for (const [i, line] of text.split("\n").entries()) {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length) fence = null;
      else code.push([i + 1, line]);
      prose.push("");
    } else {
      if (m) fence = m[1];
      prose.push(m ? "" : line);
    }
  }
  return { prose: prose.join("\n"), code };
}

/** The anchors of a Markdown text's headings, a repeated one numbered as GitHub numbers it. */
function anchorsIn(text) {
  const seen = new Map();
  const set = new Set();
  for (const line of parse(text).prose.split("\n")) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const s = slug(h[1]);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    set.add(n === 0 ? s : `${s}-${n}`);
  }
  return set;
}
const anchorsOf = new Map();
const anchors = (file) => anchorsOf.get(file) ?? anchorsOf.set(file, anchorsIn(readFileSync(file, "utf8"))).get(file);

/** What is wrong with one path as written (from the repository's root), or null. */
function pointer(raw) {
  const p = raw
    .replace(/^["'(<]+|["'),.;>]+$/g, "")
    .replace(/^\.\//, "")
    .replace(/(:\d+)+(-\d+)?$/, "");
  const [path, anchor] = p.split("#");
  if (!path.includes("/") || !TOP.has(path.split("/")[0]) || ELSEWHERE.has(path)) return null;
  if (!found(root, path.split("/"))) return `${raw}: no such file in the repository`;
  if (anchor && path.endsWith(".md") && !anchors(join(root, path)).has(anchor)) return `${raw}: no heading #${anchor}`;
  return null;
}

/** What is wrong with one link from `file`, whose own headings are `own`, or null. */
function link(file, own, href) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return null;
  const [path, anchor] = href.split("#");
  const target = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
  if (relative(root, target).startsWith(`..${sep}`)) return `${href}: leads out of the repository`;
  if (!existsSync(target)) return `${href}: no such file`;
  const headings = target === file ? own : target.endsWith(".md") ? anchors(target) : null;
  if (anchor && headings && !headings.has(anchor)) return `${href}: no heading #${anchor} in ${relative(root, target)}`;
  return null;
}

/** Every broken pointer and link in `text`, the Markdown of `file`, as `file:line: what`. */
function problems(file, text) {
  const name = relative(root, file);
  const { prose, code } = parse(text);
  const lineAt = (i) => prose.slice(0, i).split("\n").length;
  const own = anchorsIn(text);
  const out = [];
  const words = (s) => s.split(/[\s,;()[\]{}=|"']+/).filter(Boolean);
  // Inline code, then links in what is left (a link inside code is none).
  const spans = /(`+)([\s\S]+?)\1/g;
  for (const m of prose.matchAll(spans)) for (const w of words(m[2])) out.push([lineAt(m.index), pointer(w)]);
  const rest = prose.replace(spans, (m) => m.replace(/[^\n]/g, " "));
  for (const m of rest.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push([lineAt(m.index), link(file, own, m[1])]);
  for (const m of rest.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) out.push([lineAt(m.index), link(file, own, m[1])]);
  for (const [n, line] of code) for (const w of words(line)) out.push([n, pointer(w)]);
  return out.filter(([, what]) => what).map(([n, what]) => `${name}:${n}: ${what}`);
}

/**
 * The README's API table, checked beyond existence: each file its napi
 * boundary column names must handle that row's export, by its JavaScript
 * or snake-case name or an identifier the cell names beside it (`__setup`,
 * `fail`), so a row that points at the wrong file is found.
 */
function apiTable(text) {
  const table = text.slice(text.indexOf("| export | what it does |"));
  const rows = table.slice(0, table.indexOf("\n\n")).split("\n").slice(2);
  const snake = (n) => n.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
  const out = [];
  for (const row of rows) {
    const [, exports, , boundary] = row.split("|");
    const names = [...exports.matchAll(/`([A-Za-z_]+)[`(]/g)].map((m) => m[1]);
    const idents = [...boundary.matchAll(/`([A-Za-z_][\w.]*)`/g)].map((m) => m[1]);
    for (const [, file] of boundary.matchAll(/`((?:src\/js\/[\w/]+\.rs)|index\.js)`/g)) {
      const source = readFileSync(join(root, file), "utf8");
      const handled = [...names, ...names.map(snake), ...idents].some((n) => source.includes(n));
      if (!handled) out.push(`${names.join(", ")}: ${file} handles none of ${[...names, ...idents].join(", ")}`);
    }
  }
  return out;
}

/** Every file of the repository (what git would not ignore), by its path from the root. */
function repositoryFiles(rel = "") {
  return readdirSync(join(root, rel), { withFileTypes: true })
    .filter((e) => !ignored(e.name, rel === ""))
    .flatMap((e) => {
      const p = rel ? `${rel}/${e.name}` : e.name;
      return e.isDirectory() ? repositoryFiles(p) : [p];
    });
}

const skip = isDir(docs) ? false : "the docs are the checkout's; this copy of the package has none";

describe("every file pointer in the docs leads somewhere", { skip }, () => {
  const files = [
    join(root, "README.md"),
    ...readdirSync(docs, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(".md"))
      .map((e) => join(docs, e.name)),
  ];

  for (const file of files) {
    test(relative(root, file), () => {
      assert.deepEqual(problems(file, readFileSync(file, "utf8")), []);
    });
  }

  // One map of the files, kept whole: a file added without its line fails here.
  test("docs/development.md's layout names every file of the repository", () => {
    const text = readFileSync(join(docs, "development.md"), "utf8");
    const layout = text.slice(text.indexOf("\n## Layout"), text.indexOf("\n## ", text.indexOf("\n## Layout") + 1));
    const named = new Set([...layout.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]));
    const missing = repositoryFiles().filter((f) => !named.has(f));
    assert.deepEqual(missing, [], "each file needs its line in the layout");
  });

  test("each file of the API table's napi boundary handles its row's export", () => {
    assert.deepEqual(apiTable(readFileSync(join(root, "README.md"), "utf8")), []);
  });

  test("a path or link that leads nowhere is found; a journal's or another project's name is not taken for one", () => {
    const text = [
      "`src/js/nowhere.rs` and `src/js/setup.rs:12`, `__test__/*.test.mjs`, `src/*.none`, `src/lock/`, `src/lines.rs/`",
      "[a](docs/none.md), [b](docs/lock.md#no-such-heading), [c](docs/lock.md#the-promises), [d](#guarantees), [e](../outside.md), [f](#nowhere)",
      "`inbox.jsonl`, `turns/<id>.json`, `run.lock/owner.json`, `scripts/discord.sh stop`, `packages/discord/src/journal.mjs`, `/proc/<pid>/stat`",
      "```sh",
      "node bench/nowhere.mjs --against packages/discord/src/journal.mjs",
      "```",
      "## Guarantees",
    ].join("\n");
    assert.deepEqual(problems(join(root, "README.md"), text), [
      "README.md:1: src/js/nowhere.rs: no such file in the repository",
      "README.md:1: src/*.none: no such file in the repository",
      "README.md:1: src/lines.rs/: no such file in the repository",
      "README.md:2: docs/none.md: no such file",
      "README.md:2: docs/lock.md#no-such-heading: no heading #no-such-heading in docs/lock.md",
      "README.md:2: ../outside.md: leads out of the repository",
      "README.md:2: #nowhere: no heading #nowhere in README.md",
      "README.md:5: bench/nowhere.mjs: no such file in the repository",
    ]);
  });

  test("an API row whose boundary file does not handle its export is found", () => {
    const table = [
      "| export | what it does | napi boundary | logic |",
      "| --- | --- | --- | --- |",
      "| `OUTBOX_STATUS` | the statuses | `src/js/realm.rs` | |",
      "| `readDrops(dir)` | any JSON value per line | `src/js/records.rs` | `src/records.rs` |",
      "",
    ].join("\n");
    assert.deepEqual(apiTable(table), ["OUTBOX_STATUS: src/js/realm.rs handles none of OUTBOX_STATUS"]);
  });

  test("a heading's anchor is GitHub's", () => {
    assert.equal(slug("`discord-journal verify` and its blind spots"), "discord-journal-verify-and-its-blind-spots");
    assert.equal(slug("`.stop.lock` left over (#34)"), "stoplock-left-over-34");
    assert.equal(slug("The command reads as the journal's owner (#33)"), "the-command-reads-as-the-journals-owner-33");
    assert.equal(slug("The other `--json` shapes"), "the-other---json-shapes");
  });
});

// The house rules that a reader meets first (#48): the crate's files stay
// short enough to read, and every issue number the code or the docs cite
// can be followed in docs/decisions.md.
const LIMIT = 450;

/** The lines of a Rust file before its test module (`#[cfg(test)]` then `mod`), or all of them. */
function beforeTests(text) {
  const lines = text.split("\n");
  const at = lines.findIndex((l, i) => /^#\[cfg\(test\)\]\s*$/.test(l) && /^(pub )?mod \w+/.test(lines[i + 1] ?? ""));
  return at === -1 ? lines.length - (lines.at(-1) === "" ? 1 : 0) : at;
}

/** The issue numbers a text cites: `#NN`, not a colour, an anchor or a uid (`'#65534'`). */
const cited = (text) => new Set([...text.matchAll(/(?<![\w&'"/#.-])#(\d{2,5})\b/g)].map((m) => Number(m[1])));

/** The numbers docs/decisions.md indexes: each row's first cell. */
const indexed = (text) => new Set([...text.matchAll(/^\| (?:PR )?#(\d+) \|/gm)].map((m) => Number(m[1])));

const TEXT = /\.(rs|js|mjs|cjs|ts|md|sh|toml|yml|json)$|^\.ci\/run$/;

describe("the house rules", { skip }, () => {
  test(`no Rust file holds more than ${LIMIT} lines before its tests`, () => {
    const long = repositoryFiles()
      .filter((f) => f.endsWith(".rs"))
      .map((f) => [f, beforeTests(readFileSync(join(root, f), "utf8"))])
      .filter(([, n]) => n > LIMIT)
      .map(([f, n]) => `${f}: ${n} lines before its tests`);
    assert.deepEqual(long, []);
  });

  test("every issue number the code and the docs cite is indexed in docs/decisions.md", () => {
    const index = indexed(readFileSync(join(docs, "decisions.md"), "utf8"));
    const missing = [];
    for (const f of repositoryFiles().filter((f) => TEXT.test(f) && !/(^|\/)(package-lock\.json|Cargo\.lock)$/.test(f)))
      for (const n of cited(readFileSync(join(root, f), "utf8"))) if (!index.has(n)) missing.push(`${f}: #${n}`);
    assert.deepEqual(missing, []);
  });

  test("a file long before its tests, and a number cited but not indexed, are found", () => {
    const rust = (n, tests) => `${"fn f() {}\n".repeat(n)}${tests ? "#[cfg(test)]\nmod tests {\n  fn t() {}\n}\n" : ""}`;
    assert.equal(beforeTests(rust(451, true)), 451);
    assert.equal(beforeTests(rust(12, false)), 12);
    assert.equal(beforeTests("#[cfg(test)]\nfn helper() {}\n".repeat(3) + rust(2, true)), 8);
    assert.deepEqual([...cited("// (#10, #25) and #1873; not '#65534', &#39; or docs/x.md#34 or #1")], [10, 25, 1873]);
    assert.deepEqual([...indexed("| number | what |\n| --- | --- |\n| #10 | a |\n| PR #1916 | b |\n")], [10, 1916]);
  });
});

// The lock's protocol read from its document: each step label of
// docs/lock.md's tables (c0 to c10, p1 to p4, u1 to u8, r0 to r7) stands in
// a comment at the code under src/lock/ that takes that step, so a reader
// goes from a row to its lines and back. Within a function (with its doc
// comment) the labels of one table first appear in the table's order.

/** The step labels of a document's tables, in order: each row whose first cell is a letter and a number. */
const stepLabels = (text) => [...text.matchAll(/^\| ([a-z]\d+) \|/gm)].map((m) => m[1]);

/** What is wrong with `files` ([name, Rust text]) as the code of `labels`. */
function labelProblems(labels, files) {
  const word = new RegExp(`\\b(${[...labels].sort((a, b) => b.length - a.length).join("|")})\\b`, "g");
  const found = new Set();
  const problems = [];
  for (const [name, text] of files) {
    // A function begins at its doc comment and attributes, if it has any.
    const lines = text.split("\n");
    const chunks = [[]];
    lines.forEach((line, i) => {
      if (/^\s*(pub(\([^)]*\))?\s+)?fn\s/.test(line)) {
        let at = chunks.at(-1).length;
        while (at > 0 && /^\s*(\/\/\/|#\[)/.test(lines[i - chunks.at(-1).length + at - 1])) at--;
        chunks.push(chunks.at(-1).splice(at));
      }
      chunks.at(-1).push(line);
    });
    for (const chunk of chunks) {
      const seen = [];
      for (const line of chunk) {
        const at = line.indexOf("//");
        if (at === -1) continue;
        for (const m of line.slice(at).matchAll(word)) if (!seen.includes(m[1])) seen.push(m[1]);
      }
      seen.forEach((l) => found.add(l));
      for (let i = 1; i < seen.length; i++) {
        const before = seen
          .slice(0, i)
          .filter((b) => b[0] === seen[i][0])
          .at(-1);
        if (before && labels.indexOf(before) > labels.indexOf(seen[i])) problems.push(`${name}: ${seen[i]} after ${before}`);
      }
    }
  }
  for (const l of labels) if (!found.has(l)) problems.push(`${l}: in no comment under src/lock/`);
  return problems;
}

describe("the lock's steps stand at their code", { skip }, () => {
  const labels = stepLabels(readFileSync(join(docs, "lock.md"), "utf8"));

  test("docs/lock.md's tables give 31 steps", () => {
    assert.equal(labels.length, 31);
    assert.equal(new Set(labels).size, 31);
  });

  test("each step label is in a comment under src/lock/, in table order within a function", () => {
    const files = repositoryFiles()
      .filter((f) => f.startsWith("src/lock/") && f.endsWith(".rs"))
      .map((f) => [f, readFileSync(join(root, f), "utf8")]);
    assert.deepEqual(labelProblems(labels, files), []);
  });

  test("a label missing, out of its table's order, or only in code is found", () => {
    const labels = stepLabels("| step | what |\n| --- | --- |\n| c1 | a |\n| c2 | b |\n| c10 | c |\n| u1 | d |\n");
    assert.deepEqual(labels, ["c1", "c2", "c10", "u1"]);
    const rust = [
      "/// c10 names this one's end",
      "fn a() {",
      "  // c1 then u1",
      "  let c2 = 1;",
      "}",
      "",
      "fn b() {",
      "  // c2 then c10",
      "  // c2 again is no step back",
      "}",
    ].join("\n");
    assert.deepEqual(labelProblems(labels, [["x.rs", rust]]), ["x.rs: c1 after c10"]);
    assert.deepEqual(labelProblems(labels, [["x.rs", "fn a() {\n  // c1, c2\n}\n"]]), [
      "c10: in no comment under src/lock/",
      "u1: in no comment under src/lock/",
    ]);
  });
});
