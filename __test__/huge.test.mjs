// Records with huge strings (16 MiB and more, where the addon shares a
// string's bytes with the file instead of copying them, #10): every reader
// gives what JSON.parse gives, key order and duplicate keys included.
// Written from the contract, run on the addon and (JOURNAL_MODULE) on the
// reference.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, test } from "node:test";
import v8 from "node:v8";
import vm from "node:vm";
import { M, isAddon, journal, onNode } from "./helpers.mjs";

const HUGE = 16 << 20;
const x = "x".repeat(HUGE);
const y = "y".repeat(HUGE + 1);
const q = (s) => `"${s}"`;

// A full collection, synchronous. Bun has no --expose-gc; Bun.gc(true)
// collects synchronously.
if (!globalThis.Bun) v8.setFlagsFromString("--expose-gc");
const gc = globalThis.Bun ? () => globalThis.Bun.gc(true) : vm.runInNewContext("gc");

/** The keys of every object in `v`, in order, depth first. */
function keysOf(v, out = []) {
  if (v !== null && typeof v === "object") {
    out.push(Object.keys(v));
    for (const k of Object.keys(v)) keysOf(v[k], out);
  }
  return out;
}

/** Asserts two values are alike, key order included. */
function same(got, want) {
  assert.deepStrictEqual(got, want);
  assert.deepStrictEqual(keysOf(got), keysOf(want));
}

describe("huge strings", () => {
  // Each test starts from a collected heap: V8 lets garbage of hundreds of
  // MB wait for a collection it has no reason to make yet, and the next
  // test's own peak came on top of it (#48: the file peaked at 1.3 GB).
  beforeEach(() => gc());
  // Each case is a drops file; its lines are read back as JSON.parse reads
  // each. A case's lines are made by its test, so that they are garbage
  // after it: kept, each flattened copy of a 16 MiB string stays, and the
  // file's process grew past 1.3 GB (#48).
  const cases = {
    "a member's value": () => [`{"at":"t","body":${q(x)},"after":1}`],
    "nested in arrays and objects": () => [`[0,{"k":[${q(x)},{"j":${q(y)}}]}]`, `{"a":{"b":{"c":${q(x)}}}}`],
    "a whole line, among small lines": () => ['{"n":1}', q(x), '{"n":2}', `  ${q(y)}  `],
    "replaced by a later member of its name": () => [`{"body":${q(x)},"n":1,"body":"small"}`],
    "replacing an earlier member of its name": () => [`{"body":"small","n":1,"body":${q(x)}}`],
    "below a key that a later member replaces": () => [`{"o":{"body":${q(x)}},"o":2}`, `{"o":[${q(x)}],"o":{"p":${q(y)}}}`],
    "before an escaped key of the same name": () => [`{"body":${q(x)},"\\u0062ody":3}`],
    "below an escaped key": () => [`{"\\u006f":{"body":${q(x)}}}`],
    "a key": () => [`{${q(x)}:1,"n":2}`],
    "with an escape": () => [`{"body":"\\n${x}"}`, `{"body":"${x}\\u00e9"}`],
    "not ASCII": () => [`{"body":"${x}é"}`, `{"body":"é${y}"}`],
    "many in one line": () => [`{"a":${q(x)},"b":${q(y)},"c":[${q(x)},${q(y)}]}`],
    "__proto__ and index keys": () => [`{"__proto__":${q(x)},"7":${q(y)}}`],
  };
  for (const [name, make] of Object.entries(cases)) {
    test(`readDrops: ${name}`, () => {
      const lines = make();
      const dir = journal();
      writeFileSync(join(dir, "drops.jsonl"), lines.join("\n") + "\n");
      same(
        M.readDrops(dir),
        lines.map((l) => JSON.parse(l)),
      );
    });
  }

  test("readDrops: huge lines with nothing to share (escapes, text other than ASCII), each alone in its part or not", () => {
    // Parts are cut at 64 MiB: the first line is parsed alone, the second
    // with the small third.
    const big = 33 << 20;
    const lines = [
      JSON.stringify({ body: "déjà vu 日本\n".repeat(big / 16) }),
      JSON.stringify({ body: 'a\tb"c'.repeat(big / 8), n: 1 }),
      '{"n":2}',
    ];
    const dir = journal();
    writeFileSync(join(dir, "drops.jsonl"), "\ufeff" + lines.join("\r\n") + "\n");
    same(
      M.readDrops(dir),
      lines.map((l) => JSON.parse(l)),
    );
  });

  test("readDrops: an escaped ASCII line alone in its part, the whole file or its end", () => {
    // Parsed alone from one string of its bytes: after a BOM and before a
    // CRLF, and after a part of 4,096 small lines.
    const line = JSON.stringify({ body: 'a\tb"c\n'.repeat(1 << 19), n: 1 });
    const dir = journal();
    writeFileSync(join(dir, "drops.jsonl"), "\ufeff" + line + "\r\n");
    same(M.readDrops(dir), [JSON.parse(line)]);
    // A line that is not valid UTF-8 is carried as its decoded text.
    const invalid = Buffer.concat([Buffer.from(line.slice(0, -1) + ',"x":"'), Buffer.from([0xff]), Buffer.from('"}\n')]);
    writeFileSync(join(dir, "drops.jsonl"), invalid);
    same(M.readDrops(dir), [JSON.parse(invalid.toString())]);
    const small = Array.from({ length: 4096 }, (_, i) => JSON.stringify({ i, pad: "p".repeat(2000) }));
    writeFileSync(join(dir, "drops.jsonl"), [...small, line].join("\n") + "\n");
    const before = process.memoryUsage().external;
    const got = M.readDrops(dir);
    // A string over the file's bytes would keep the whole 12 MiB file until
    // V8's next full collection, after the read, reporting its 4.5 MiB as
    // external memory: a line under half its file is copied instead.
    const grown = (process.memoryUsage().external - before) / 2 ** 20;
    same(
      got,
      [...small, line].map((l) => JSON.parse(l)),
    );
    // V8's external memory alone says what a read keeps: Bun's (JavaScriptCore's)
    // counts what its collector has not yet freed, which moves with load, so
    // there it is a figure.
    if (isAddon && onNode) assert.ok(grown < 1, `external memory grew by ${grown.toFixed(1)} MiB`);
    else console.log(`# figure external memory grown by the read: ${grown.toFixed(1)} MiB`);
  });

  test("listTurns: records past a part's size, alone in their parts", () => {
    const dir = journal();
    const records = [
      { startedAt: "2021-01-01T10:00:00.000Z", reply: "ça va ? 日本\n".repeat(1 << 17) },
      { startedAt: "2021-01-01T11:00:00.000Z", reply: "plain\ttext".repeat(1 << 18) },
      { startedAt: "2021-01-01T12:00:00.000Z" },
    ];
    records.forEach((r, i) => M.writeTurn(dir, `t${i}`, r));
    same(
      M.listTurns(dir),
      records.map((r, i) => ({ ...r, id: `t${i}` })),
    );
  });

  test("readReloads and readInboxIds", () => {
    const dir = journal();
    writeFileSync(join(dir, "reloads.jsonl"), `{"outcome":"ok","note":${q(x)}}\n`);
    same(M.readReloads(dir), [{ outcome: "ok", note: x }]);
    writeFileSync(join(dir, "inbox.jsonl"), ['{"id":"a"}', `{"id":${q(x)}}`, `{"id":"b","x":${q(y)}}`, `{"id":${q(x)}}`].join("\n") + "\n");
    assert.deepEqual([...M.readInboxIds(dir)], ["a", x, "b"]);
  });

  test("readOutbox and unresolvedOutbox: huge members and a huge at, merged as the spreads merge them", () => {
    const dir = journal();
    const lines = [
      { nonce: "a", status: "intent", at: x, text: y },
      { nonce: "b", status: "intent", at: "t", text: x },
      { nonce: "a", status: "unknown", retry: 1 },
      { nonce: "b", status: "confirmed", at: y, messageId: "m" },
    ];
    writeFileSync(join(dir, "outbox.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const a = { nonce: "a", status: "unknown", at: x, text: y, intentAt: x, retry: 1 };
    const b = { nonce: "b", status: "confirmed", at: y, text: x, intentAt: "t", messageId: "m" };
    const out = M.readOutbox(dir);
    assert.deepEqual([...out.keys()], ["a", "b"]);
    same(out.get("a"), a);
    same(out.get("b"), b);
    same(M.unresolvedOutbox(dir), [a]);
  });

  test("a huge string kept from a read keeps about its own size alive, not its file's", async () => {
    // A 16 MiB value beside a 64 MB one (escaped, so copied, and garbage
    // once the read is dropped), kept read after read: a string that shared
    // the whole file's bytes would keep 80 MB a read.
    const dir = journal();
    writeFileSync(join(dir, "drops.jsonl"), `{"body":${q(x)}}\n{"pad":"\\n${"p".repeat(64 << 20)}"}\n`);
    // V8 hands freed pages back on threads of its own: a moment after.
    const rss = async () => {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 200));
      gc();
      return process.memoryUsage().rss / 2 ** 20;
    };
    const kept = [M.readDrops(dir)[0].body];
    const before = await rss();
    for (let k = 0; k < 4; k++) kept.push(M.readDrops(dir)[0].body);
    const grown = (await rss()) - before;
    console.log(`# figure RSS grown by 4 kept 16 MiB values of an 80 MiB file: ${grown.toFixed(0)} MiB`);
    assert.equal(kept.at(-1), x);
    assert.ok(grown < 4 * 40, `${grown.toFixed(0)} MiB`);
  });

  test("listTurns: a huge turn record", () => {
    const dir = journal();
    M.writeTurn(dir, "t1", { startedAt: "2021-01-01T10:00:00.000Z", reply: x });
    M.writeTurn(dir, "t2", { startedAt: "2021-01-01T11:00:00.000Z", reply: "small", more: [y] });
    same(M.listTurns(dir), [
      { startedAt: "2021-01-01T10:00:00.000Z", reply: x, id: "t1" },
      { startedAt: "2021-01-01T11:00:00.000Z", reply: "small", more: [y], id: "t2" },
    ]);
  });
});
