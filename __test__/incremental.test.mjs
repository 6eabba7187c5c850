// A repeated read of a file that only grew may reuse what was parsed, but
// must always answer what a fresh read would: after appends by another
// process, truncation, replacement by rename, and in-place rewrites of any
// size, the same size included.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { appendFileSync, readFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { M, journal, refuses } from "./helpers.mjs";

const line = (o) => JSON.stringify(o) + "\n";

describe("repeated reads", () => {
  test("appends by another process are seen", () => {
    const dir = journal();
    M.appendInbox(dir, { id: "1" });
    assert.deepEqual([...M.readInboxIds(dir)], ["1"]);
    execFileSync(process.execPath, ["-e", `require("fs").appendFileSync(${JSON.stringify(join(dir, "inbox.jsonl"))}, '{"id":"2"}\\n')`]);
    assert.deepEqual([...M.readInboxIds(dir)], ["1", "2"]);
  });

  test("truncation, rename and same-size rewrites give the fresh result", () => {
    const dir = journal();
    const file = join(dir, "admissions.jsonl");
    for (let i = 0; i < 50; i++) M.appendAdmission(dir, { id: `t${i}`, at: "2021-01-01T00:00:00.000Z" });
    assert.equal(M.countAdmissionsOn(dir, "2021-01-01"), 50);
    // same size, one byte different, in place
    writeFileSync(file, readFileSync(file, "utf8").replace('"t7"', '"t3"'));
    assert.equal(M.countAdmissionsOn(dir, "2021-01-01"), 49);
    writeFileSync(file, readFileSync(file, "utf8").replace("2021-01-01T00:00:00.000Z", "2021-01-02T00:00:00.000Z"));
    assert.equal(M.countAdmissionsOn(dir, "2021-01-01"), 48);
    truncateSync(file, 0);
    assert.equal(M.countAdmissionsOn(dir, "2021-01-01"), 0);
    writeFileSync(
      join(dir, "next"),
      line({ id: "x", at: "2021-01-01T01:00:00.000Z" }).repeat(3) + line({ id: "y", at: "2021-01-01T02:00:00.000Z" }),
    );
    renameSync(join(dir, "next"), file);
    assert.equal(M.countAdmissionsOn(dir, "2021-01-01"), 2);
  });

  test("a grown file whose old part changed is read afresh", () => {
    const dir = journal();
    const file = join(dir, "notices.jsonl");
    M.appendNotice(dir, { kind: "ceiling", date: "2021-01-01" });
    assert.equal(M.noticeOn(dir, "ceiling", "2021-01-01"), true);
    writeFileSync(file, line({ kind: "ceiling", date: "2021-01-02" }) + line({ kind: "other", date: "2021-01-01" }));
    assert.equal(M.noticeOn(dir, "ceiling", "2021-01-01"), false);
    assert.equal(M.noticeOn(dir, "ceiling", "2021-01-02"), true);
  });

  test("a last line without its newline counts, and is read again once completed", () => {
    const dir = journal();
    const file = join(dir, "drops.jsonl");
    writeFileSync(file, '1\n{"a":2}');
    assert.deepEqual(M.readDrops(dir), [1, { a: 2 }]);
    appendFileSync(file, "3");
    refuses(() => M.readDrops(dir), "drops.jsonl:2: not valid JSON");
    writeFileSync(file, '1\n{"a":23}\n');
    assert.deepEqual(M.readDrops(dir), [1, { a: 23 }]);
    appendFileSync(file, "[4]\n");
    assert.deepEqual(M.readDrops(dir), [1, { a: 23 }, [4]]);
  });

  test("a bad line decides the read until it is mended; a damaged outbox heals", () => {
    const dir = journal();
    const file = join(dir, "outbox.jsonl");
    M.appendOutbox(dir, { nonce: "a", status: "intent", at: "t1" });
    assert.equal(M.unresolvedOutbox(dir).length, 1);
    appendFileSync(file, "{torn\n");
    refuses(() => M.unresolvedOutbox(dir), "outbox.jsonl:2: not valid JSON");
    M.appendOutbox(dir, { nonce: "a", status: "confirmed", at: "t2" });
    refuses(() => M.readOutbox(dir), "outbox.jsonl:2: not valid JSON");
    writeFileSync(file, readFileSync(file, "utf8").replace("{torn\n", ""));
    assert.deepEqual(M.unresolvedOutbox(dir), []);
    assert.equal(M.readOutbox(dir).get("a").intentAt, "t1");
  });

  test("results are fresh objects each call", () => {
    const dir = journal();
    M.appendDrop(dir, { a: 1 });
    const first = M.readDrops(dir);
    first[0].a = 2;
    assert.deepEqual(M.readDrops(dir), [{ a: 1 }]);
    assert.notEqual(M.readInboxIds(dir), M.readInboxIds(dir));
  });
  test("unresolvedOutbox of an outbox over 16 MiB (only its unresolved records' bytes kept) answers as a fresh read", () => {
    const dir = journal();
    const file = join(dir, "outbox.jsonl");
    // 100,000 deliveries: every 97th ends unknown, every 50th refused, the
    // rest confirmed; an object `at` on some, so that intentAt shares it.
    const rows = [];
    for (let n = 0; n < 100_000; n++) {
      const at = n % 7 === 0 ? { t: n } : `2021-01-01T00:00:${String(n % 60).padStart(2, "0")}.000Z`;
      rows.push(line({ nonce: `n${n}`, status: "intent", at, pad: "p".repeat(60) }));
      const status = n % 97 === 0 ? "unknown" : n % 50 === 0 ? "refused" : "confirmed";
      rows.push(line({ nonce: `n${n}`, status, ...(n % 3 ? { at: "2021-01-02T00:00:00.000Z" } : {}) }));
    }
    writeFileSync(file, rows.join(""));
    assert.ok(readFileSync(file).length > 16 << 20);
    // What a fresh read gives: the merged records of those unresolved.
    const fresh = () => {
      const merged = new Map();
      for (const l of readFileSync(file, "utf8").split("\n")) {
        if (!l) continue;
        const e = JSON.parse(l);
        const prev = merged.get(e.nonce);
        merged.set(e.nonce, { ...prev, ...e, intentAt: prev ? prev.intentAt : e.at });
      }
      return [...merged.values()].filter((r) => r.status === "intent" || r.status === "unknown");
    };
    const same = (label) => {
      const got = M.unresolvedOutbox(dir);
      assert.deepEqual(got, fresh(), label);
    };
    same("the first read");
    same("again, nothing changed");
    appendFileSync(file, line({ nonce: "n1", status: "unknown" }) + line({ nonce: "new", status: "intent", at: { t: 1 } }));
    same("an old delivery unresolved again, and a new one, appended");
    // in place, same size: an unresolved record's bytes, then a resolved one's
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace('"nonce":"n97","status":"unknown"', '"nonce":"n97","status":"refused"'));
    same("an unresolved record rewritten in place");
    writeFileSync(file, readFileSync(file, "utf8").replace('"nonce":"n2","status":"confirmed"', '"nonce":"n2","status":"unknown"  '));
    same("a resolved record rewritten in place");
    appendFileSync(file, '{"nonce":"n5","status":"unknown"}');
    same("a last line without its newline");
    // cut inside a line: refused as a fresh read refuses it
    truncateSync(file, readFileSync(file, "utf8").indexOf('"nonce":"n9000"'));
    assert.throws(() => M.unresolvedOutbox(dir), /not valid JSON/);
  });
});
