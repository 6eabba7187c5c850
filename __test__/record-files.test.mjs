// The record files described once: the addon's description
// (src/lines.rs) is the list; the name-to-number map of its JournalFile,
// the command's readers (cli/readers.js) and the suites' table
// (record-files.mjs) are checked against it here, so that a file added
// there and missed in one of them fails this suite, never a run. The list
// is this package's, so the tests skip against another module.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import { addonOnly, journal } from "./helpers.mjs";
import { RECORDS, RECORD_NAMES } from "./record-files.mjs";

const require = createRequire(import.meta.url);

describe("the record files, described once in the addon", addonOnly, () => {
  const internal = require("../internal.js");
  const native = require("../binding.js");

  test("the suites' table names the addon's record files, in its order, each with as many readers as the command asks", () => {
    assert.deepEqual(RECORD_NAMES, internal.RECORD_FILES);
    const { READERS } = require("../cli/readers.js");
    for (const name of RECORD_NAMES) assert.equal(RECORDS[name].read.length, READERS[name].length, name);
  });

  test("each JournalFile number is its file's place in RECORD_FILES, and every file scans by its name", () => {
    assert.deepEqual(Object.values(native.JournalFile), [...internal.RECORD_FILES.keys()]);
    const dir = journal();
    for (const name of internal.RECORD_FILES) {
      writeFileSync(join(dir, name), '{"id":"a"}\n', { mode: 0o600 });
      assert.equal(internal.scanLines(dir, name).lines, 1, name);
    }
  });

  test("the command's readers cover every record file, and a file without readers is refused at load by its name", () => {
    const { READERS, covered } = require("../cli/readers.js");
    assert.equal(covered(READERS), READERS);
    assert.throws(() => covered(READERS, [...internal.RECORD_FILES, "seventh.jsonl"]), {
      message: "cli/readers.js: no readers of seventh.jsonl",
    });
  });
});
