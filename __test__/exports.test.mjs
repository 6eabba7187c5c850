// One list of exports (#23, #38): index.js's `exports.name = ...` lines are
// the definition, and no count is written anywhere; entry.js (what both
// module systems see, in index.js's order: loader.test.mjs), index.d.ts
// (read with the TypeScript compiler), the README's API table, the shapes
// in package.test.mjs and the specification's journal.mjs (where it sits
// beside this checkout, or at DISCORD_JOURNAL_SPEC) are checked against it.
// The files are this package's, so the test skips against another module.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { addonOnly } from "./helpers.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(import.meta.url);
const sorted = (names) => [...new Set(names)].sort();

/** The values index.d.ts declares, as the TypeScript compiler reads them. */
function declared() {
  const ts = require("typescript");
  const file = join(root, "index.d.ts");
  const program = ts.createProgram([file], { noEmit: true, types: [] });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  // Values only: the file also exports the types of the values' shapes.
  return checker
    .getExportsOfModule(checker.getSymbolAtLocation(source))
    .filter((s) => s.flags & ts.SymbolFlags.Value)
    .map((s) => s.getName());
}

/** The exports the README's API table names (each `name(...)` or `name` in its first column). */
function documented() {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("| export | what it does |"));
  const rows = table.slice(0, table.indexOf("\n\n")).split("\n").slice(2);
  return rows.flatMap((r) => [...r.split("|")[1].matchAll(/`([A-Za-z_]+)[`(]/g)].map((m) => m[1]));
}

// The TypeScript compiler is a devDependency: a copy installed without them
// (the platform checks' roots) skips the declarations alone.
let typescript = true;
try {
  require.resolve("typescript");
} catch {
  typescript = false;
}

describe("one list of exports", addonOnly, () => {
  const index = () => sorted(Object.keys(require(join(root, "index.js"))));

  test("index.d.ts declares the exports index.js has", typescript ? {} : { skip: "typescript (a devDependency) is not installed" }, () => {
    assert.deepEqual(sorted(declared()), index(), "index.d.ts");
  });

  test("entry.js, the README's table and journal.mjs name index.js's exports", async () => {
    const index = sorted(Object.keys(require(join(root, "index.js"))));
    assert.deepEqual(sorted(Object.keys(require(join(root, "entry.js")))), index, "entry.js");
    assert.deepEqual(sorted(documented()), index, "the README's API table");
    const spec = process.env.DISCORD_JOURNAL_SPEC ?? join(root, "..", "shared", "spec", "reference", "stack");
    const reference = join(spec, "packages", "discord", "src", "journal.mjs");
    if (existsSync(reference)) {
      const ref = await import(pathToFileURL(reference).href);
      // The package's own exports (internal.js, the one list: DiscordError, the reference's errors.mjs's) beside journal.mjs's.
      assert.deepEqual(sorted([...Object.keys(ref), ...require(join(root, "internal.js")).OWN_EXPORTS]), index, "journal.mjs");
    }
  });
});
