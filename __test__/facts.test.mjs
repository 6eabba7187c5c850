// Facts the package says in both of its languages, each written once in
// JavaScript and once in Rust, held together here so that neither copy can
// drift: the binding-name rule (index.js, src/ground/paths.rs), the names of
// the journal's own entries (cli/journal.js, src/ground/journal.rs), and
// recover's own STOP (cli/brake.js's recoversOnly, src/stop.rs's is_ours).
// The rules are driven through the module under test where they show (a
// refusal's label, what recover removes), so that the reference's suite
// runs them too; the entry names are read from the Rust.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { M, scratch } from "./helpers.mjs";

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL("..", import.meta.url));
const { ENTRY, isBindingName } = require("../cli/journal.js");
const { recoversOnly } = require("../cli/brake.js");

/** A journal named `name` whose STOP holds `lines` (each written as JSON, or as is where a string), mode 0600. */
function braked(top, name, lines) {
  const dir = join(top, name);
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, "STOP"), lines.map((l) => `${typeof l === "string" ? l : JSON.stringify(l)}\n`).join(""), { mode: 0o600 });
  return dir;
}

describe("facts said once in each language", () => {
  test("the binding-name rule: the refusal's label (the native side's rule) agrees with journalLabel and the command's isBindingName", () => {
    const top = scratch();
    const names = ["a", "0", "z9", "abc", "a_b-c", "a-", "a".repeat(63), "a".repeat(64), "Abc", "A", "-a", "_a", "a.b", "a b", "a\t", "é"];
    for (const name of names) {
      const dir = braked(top, name, []);
      let said = null;
      try {
        M.recover(dir);
      } catch (e) {
        said = /STOP is present in (.*?); the brake is on/.exec(e.message)?.[1] ?? null;
      }
      assert.equal(said, M.journalLabel(dir), `the label of ${JSON.stringify(name)}`);
      assert.equal(isBindingName(name), said === `discord/${name} under the data root`, `isBindingName(${JSON.stringify(name)})`);
    }
    assert.equal(isBindingName("a/b"), false);
    assert.equal(isBindingName("abc/"), false);
    assert.equal(isBindingName(""), false);
  });

  test("the binding-name rule is written once in index.js, as src/ground/paths.rs states it", () => {
    const js = [...readFileSync(join(root, "index.js"), "utf8").matchAll(/BINDING_NAME = \/(.+)\/;/g)].map((m) => m[1]);
    const rust = /`BINDING_NAME`: \/(.+)\/\./.exec(readFileSync(join(root, "src", "ground", "paths.rs"), "utf8"))?.[1];
    assert.deepEqual(js, [rust]);
    // The Rust rule's bounds, as the pattern's: a first character, then at most 62.
    assert.match(readFileSync(join(root, "src", "ground", "paths.rs"), "utf8"), /\(1\.\.=63\)\.contains\(&b\.len\(\)\)/);
  });

  test("the journal's entry names are the addon's", () => {
    const text = readFileSync(join(root, "src", "ground", "journal.rs"), "utf8");
    const rust = Object.fromEntries([...text.matchAll(/^pub const ([A-Z_]+): &str = "([^"]+)";$/gm)].map((m) => [m[1], m[2]]));
    assert.deepEqual(rust, { LOCK: ENTRY.lock, OWNER: ENTRY.owner, TURNS: ENTRY.turns, STOP: ENTRY.stop, STOP_LOCK: ENTRY.stopLock });
  });

  test("recover's own STOP: recoversOnly says so exactly where recover removes STOP as its own", () => {
    const top = scratch();
    const at = "2021-01-01T00:00:00.000Z";
    const sets = [
      [{ at, reason: "recover" }],
      [{ reason: "recover" }],
      [{ reason: "recover", extra: 1 }],
      [
        { at, reason: "recover" },
        { at, reason: "recover" },
      ],
      [{ at, reason: "operator" }],
      [
        { at, reason: "operator" },
        { at, reason: "recover" },
      ],
      [{ at, reason: ["recover"] }],
      [{ at, reason: "Recover" }],
      [{ at }],
      ["null"],
      ['"recover"'],
      [],
    ];
    sets.forEach((lines, i) => {
      const dir = braked(top, `s${i}`, lines);
      const ours = recoversOnly(M.readStop(dir));
      try {
        M.recover(dir);
      } catch {
        // A brake: STOP stays.
      }
      assert.equal(ours, !existsSync(join(dir, "STOP")), `STOP of ${JSON.stringify(lines)}`);
    });
  });
});
