// The record files: inbox, outbox, drops, admissions, reloads, notices;
// labels, paths and dates. Written from the contract, run on the addon and
// (JOURNAL_MODULE) on the reference.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  M,
  isAddon,
  journal,
  modulePath,
  onNode,
  mode,
  noHostPath,
  refuses,
  runModule,
  scratch,
  throwsClass,
  underUmask,
} from "./helpers.mjs";

const read = (dir, name) => readFileSync(join(dir, name), "utf8");

describe("constants, labels and paths", () => {
  test("OUTBOX_STATUS is the four statuses, frozen", () => {
    assert.deepEqual([...M.OUTBOX_STATUS], ["intent", "confirmed", "refused", "unknown"]);
    assert.ok(Object.isFrozen(M.OUTBOX_STATUS));
    assert.ok(Array.isArray(M.OUTBOX_STATUS));
    assert.throws(() => M.OUTBOX_STATUS.push("x"), TypeError);
  });

  test("journalLabel names a binding under the data root, never a host path", () => {
    assert.equal(M.journalLabel("/srv/data/discord/alpha"), "discord/alpha under the data root");
    assert.equal(M.journalLabel("/srv/data/discord/alpha/"), "discord/alpha under the data root");
    assert.equal(M.journalLabel("/srv/data/discord/Not Valid"), "the binding's journal directory");
    assert.equal(M.journalLabel("/x/" + "a".repeat(63)), `discord/${"a".repeat(63)} under the data root`);
    assert.equal(M.journalLabel("/x/" + "a".repeat(64)), "the binding's journal directory");
    assert.equal(M.journalLabel(""), "the binding's journal directory");
    assert.equal(M.journalLabel(42), "discord/42 under the data root");
    assert.equal(M.journalLabel(Symbol("s")), "the binding's journal directory");
    assert.equal(M.journalLabel(null), "discord/null under the data root");
  });

  test("paths are path.join's, normalized", () => {
    assert.equal(M.stopPath("/a/b/"), "/a/b/STOP");
    assert.equal(M.lockPath("a//b/./c/.."), "a/b/run.lock");
    assert.equal(M.ownerPath(""), "run.lock/owner.json");
    assert.equal(M.turnPath("/a", "t-1.a_b"), "/a/turns/t-1.a_b.json");
    assert.equal(M.turnPath("/a", 7), "/a/turns/7.json");
    // the runtime's path.join, as journal.mjs's: Bun's turns a lone
    // surrogate into U+FFFD, Node's and Deno's keep it
    assert.equal(M.stopPath("/a/\ud800"), join("/a/\ud800", "STOP"));
  });

  test("a dir that is not a string is Node's ERR_INVALID_ARG_TYPE", () => {
    for (const f of [M.stopPath, M.lockPath, M.ownerPath, M.readDrops, M.readInboxIds, M.stopRequested, M.ensureJournal]) {
      throwsClass(() => f(42), TypeError, "ERR_INVALID_ARG_TYPE");
    }
  });

  test("turnPath refuses ids outside TURN_ID", () => {
    const msg = "invalid turn id (letters, digits, ., _ or -, at most 128)";
    for (const id of ["../x", "", ".a", "a/b", "a".repeat(129), {}, Symbol("x"), -1]) refuses(() => M.turnPath("/a", id), msg);
    // String(id) decides: null and undefined are ids like any other.
    assert.equal(M.turnPath("/a", null), "/a/turns/null.json");
    assert.equal(M.turnPath("/a", { toString: () => "obj" }), "/a/turns/obj.json");
    assert.equal(M.turnPath("/a", "a".repeat(128)), `/a/turns/${"a".repeat(128)}.json`);
  });

  test("utcDate is the UTC date of new Date(now)", () => {
    assert.equal(M.utcDate(Date.UTC(2024, 1, 29, 23, 59, 59)), "2024-02-29");
    assert.equal(M.utcDate("2023-03-04T05:06:07Z"), "2023-03-04");
    assert.equal(M.utcDate(new Date(0)), "1970-01-01");
    assert.equal(M.utcDate(null), "1970-01-01");
    assert.equal(M.utcDate(-1), "1969-12-31");
    assert.equal(M.utcDate(-62198755200000 - 86400000), "-000002-12");
    assert.equal(M.utcDate(8.64e15), "+275760-09");
    throwsClass(() => M.utcDate("nope"), RangeError);
    throwsClass(() => M.utcDate(8.64e15 + 1), RangeError);
    throwsClass(() => M.utcDate(), RangeError);
  });
});

describe("ensureJournal", () => {
  // #35: where Node's recursive mkdirSync retries a mkdir that keeps failing
  // ENOENT under a parent that exists, it never returns, in journal.mjs as
  // in the runtime; the addon answers with that mkdir's error. Each case in a
  // child process, bounded by a timeout: for the addon a promise (it must
  // answer; 60 s is for a loaded machine, and the time it took is a
  // figure), for journal.mjs a figure of its hang, so 3 s tell it (#48).
  const ensureIn = (code, cwd, limit = 60_000) => {
    const child = `
      import { createRequire } from "node:module";
      import { pathToFileURL } from "node:url";
      import fs from "node:fs";
      const p = ${JSON.stringify(modulePath)};
      const M = p.endsWith(".mjs") ? await import(pathToFileURL(p).href) : createRequire(import.meta.url)(p);
      ${code}
      const t = performance.now();
      let r;
      try { r = { returned: M.ensureJournal(target) }; } catch (e) { r = { code: e.code, syscall: e.syscall, path: e.path, message: e.message }; }
      console.log(JSON.stringify({ ...r, ms: performance.now() - t }));`;
    const out = spawnSync(runModule(child)[0], runModule(child).slice(1), { cwd, encoding: "utf8", timeout: limit });
    return out.error?.code === "ETIMEDOUT" || out.signal ? null : JSON.parse(out.stdout);
  };
  const spins = {
    "a relative path under a working directory that was removed": [
      `fs.rmdirSync(process.cwd()); const target = "data/discord/b1";`,
      "data/discord/b1/turns",
    ],
    "a path under /proc": [`const target = "/proc/x/discord/b1";`, "/proc/x/discord/b1/turns"],
  };
  for (const [what, [code, path]] of Object.entries(spins))
    test(`${what}: refused, never spinning, with the failing mkdir's error`, () => {
      const cwd = scratch();
      const r = ensureIn(code, cwd, isAddon ? 60_000 : 3000);
      console.log(
        `# figure ensureJournal, ${what}: ${r === null ? "no answer in 3 s (spins)" : `${r.code ?? "returned"} in ${r.ms.toFixed(1)} ms`}`,
      );
      if (!isAddon) return;
      assert.ok(r !== null, "no answer in 60 s");
      assert.deepEqual([r.code, r.syscall, r.path], ["ENOENT", "mkdir", path]);
      assert.equal(r.message, `ENOENT: no such file or directory, mkdir '${path}'`);
    });
  test("a path whose parent is a file: the runtime's own error", () => {
    const cwd = scratch();
    writeFileSync(join(cwd, "file"), "x");
    const r = ensureIn(`const target = ${JSON.stringify(join(cwd, "file", "discord", "b1"))};`, cwd);
    let want;
    try {
      mkdirSync(join(cwd, "file", "discord", "b1", "turns"), { recursive: true, mode: 0o700 });
    } catch (e) {
      want = [e.code, e.syscall, e.path];
    }
    assert.ok(r !== null, "no answer");
    assert.deepEqual([r.code, r.syscall, r.path], want);
  });

  test("creates dir and turns/ 0700 and returns dir itself", () => {
    const dir = journal({ bare: true });
    assert.equal(M.ensureJournal(dir), dir);
    assert.equal(M.ensureJournal(dir), dir);
    assert.equal(mode(dir), underUmask(0o700));
    assert.equal(mode(join(dir, "turns")), underUmask(0o700));
  });

  test("a NUL byte in dir is Node's own refusal, worded by Node", () => {
    const dir = journal({ bare: true }) + "\0x";
    let want;
    try {
      mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
    } catch (e) {
      want = e;
    }
    assert.throws(
      () => M.ensureJournal(dir),
      (e) => e.constructor === TypeError && e.code === "ERR_INVALID_ARG_VALUE" && e.message === want.message,
    );
  });

  test("every failure is Node's own mkdirSync error: its message, its keys in Node's order, its values", () => {
    const nodes = (dir) => {
      try {
        mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
      } catch (e) {
        return e;
      }
      throw new Error("mkdirSync did not fail");
    };
    const cases = [];
    // turns/ is a regular file: EEXIST.
    const a = journal();
    rmSync(join(a, "turns"), { recursive: true });
    writeFileSync(join(a, "turns"), "");
    cases.push(a);
    // A component of dir is a file: ENOTDIR.
    const b = journal({ bare: true });
    mkdirSync(join(b, ".."), { recursive: true });
    writeFileSync(b, "");
    cases.push(join(b, "deeper"));
    // A component longer than the file system takes: ENAMETOOLONG.
    cases.push(join(journal(), "x".repeat(300)));
    // A loop of links where turns/ belongs: ELOOP.
    const c = journal();
    rmSync(join(c, "turns"), { recursive: true });
    symlinkSync(join(c, "turns"), join(c, "turns"));
    cases.push(c);
    for (const dir of cases) {
      const want = nodes(dir);
      let got;
      try {
        M.ensureJournal(dir);
      } catch (e) {
        got = e;
      }
      assert.ok(got, `${want.code}: ensureJournal did not fail`);
      assert.equal(got.constructor, want.constructor, want.code);
      assert.equal(got.message, want.message);
      assert.deepEqual(Object.keys(got), Object.keys(want));
      for (const k of Object.keys(want)) assert.equal(got[k], want[k], `${want.code}.${k}`);
    }
  });

  test("a file in the way is Node's own error, with its code", () => {
    const dir = journal({ bare: true });
    mkdirSync(join(dir, ".."), { recursive: true });
    writeFileSync(dir, "");
    throwsClass(() => M.ensureJournal(dir), Error, "ENOTDIR");
  });

  test("a link where turns/ belongs is what the runtime's recursive mkdir says of it", () => {
    const dir = journal();
    // What this runtime's mkdirSync says, as journal.mjs calls it: Node
    // says ENOENT of a dangling link, Bun and Deno EEXIST.
    const runtime = () => {
      try {
        mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
        return "made";
      } catch (e) {
        return e.code;
      }
    };
    rmSync(join(dir, "turns"), { recursive: true });
    symlinkSync(join(dir, "nowhere"), join(dir, "turns"));
    const dangling = runtime();
    if (onNode) assert.equal(dangling, "ENOENT");
    throwsClass(() => M.ensureJournal(dir), Error, dangling);
    rmSync(join(dir, "turns"));
    symlinkSync(join(dir, "turns"), join(dir, "turns"));
    const loop = runtime();
    if (onNode) assert.equal(loop, "ELOOP");
    throwsClass(() => M.ensureJournal(dir), Error, loop);
    rmSync(join(dir, "turns"));
    mkdirSync(join(dir, "elsewhere"));
    symlinkSync(join(dir, "elsewhere"), join(dir, "turns"));
    assert.equal(M.ensureJournal(dir), dir);
  });
});

describe("inbox", () => {
  test("append writes JSON.stringify's line, 0600; read returns the distinct string ids", () => {
    const dir = journal();
    assert.deepEqual(M.readInboxIds(dir), new Set());
    M.appendInbox(dir, { id: "100", at: "2021-01-01T00:00:00.000Z", extra: [1, { b: null }] });
    M.appendInbox(dir, { id: "100" });
    M.appendInbox(dir, { id: "200", skip: undefined, f: () => 1, n: -0, big: 1e21 });
    assert.equal(
      read(dir, "inbox.jsonl"),
      '{"id":"100","at":"2021-01-01T00:00:00.000Z","extra":[1,{"b":null}]}\n{"id":"100"}\n{"id":"200","n":0,"big":1e+21}\n',
    );
    assert.equal(mode(join(dir, "inbox.jsonl")), underUmask(0o600));
    const ids = M.readInboxIds(dir);
    assert.ok(ids instanceof Set);
    assert.deepEqual([...ids], ["100", "200"]);
  });

  test("refuses an entry without a non-empty string id, and null as a TypeError", () => {
    const dir = journal();
    for (const e of [{}, { id: "" }, { id: 5 }, "x", 5]) refuses(() => M.appendInbox(dir, e), "inbox entry needs a message id");
    throwsClass(() => M.appendInbox(dir, null), TypeError);
    throwsClass(() => M.appendInbox(dir, undefined), TypeError);
  });

  test("JSON.stringify semantics: toJSON, getters, lone surrogates, unicode, escapes", () => {
    const dir = journal();
    M.appendInbox(dir, { id: "a", when: new Date(Date.UTC(2022, 5, 1)) });
    M.appendInbox(dir, {
      get id() {
        return "g";
      },
      s: '\ud800\u2028é😀\n\t"\\',
    });
    M.appendInbox(dir, {
      id: "t",
      toJSON() {
        return { id: "replaced" };
      },
    });
    assert.equal(
      read(dir, "inbox.jsonl"),
      '{"id":"a","when":"2022-06-01T00:00:00.000Z"}\n{"id":"g","s":"\\ud800\u2028é😀\\n\\t\\"\\\\"}\n{"id":"replaced"}\n',
    );
    assert.deepEqual([...M.readInboxIds(dir)], ["a", "g", "replaced"]);
  });

  test("what JSON.stringify refuses throws its TypeError and writes nothing", () => {
    const dir = journal();
    throwsClass(() => M.appendInbox(dir, { id: "1", n: 1n }), TypeError);
    const cyclic = { id: "1" };
    cyclic.self = cyclic;
    throwsClass(() => M.appendInbox(dir, cyclic), TypeError);
    assert.deepEqual(M.readInboxIds(dir), new Set());
  });

  test("each append reads the entry's fields as often and in the order JavaScript does, then the dir, then stringifies", () => {
    const dir = journal();
    const traced = (fields, log) => new Proxy(fields, { get: (t, k) => (typeof k === "string" && log.push(k), t[k]) });
    const cases = [
      [M.appendInbox, { id: "1" }, ["id", "id", "toJSON", "id"]],
      [M.appendOutbox, { status: "intent", nonce: "n" }, ["status", "nonce", "nonce", "toJSON", "status", "nonce"]],
      [M.appendAdmission, { id: "1", at: "x" }, ["id", "at", "toJSON", "id", "at"]],
      [M.appendNotice, { kind: "k", date: "d" }, ["kind", "date", "toJSON", "kind", "date"]],
      [M.appendReload, { outcome: "applied" }, ["outcome", "toJSON", "outcome"]],
      [M.appendDrop, { a: 1 }, ["toJSON", "a"]],
    ];
    for (const [append, fields, expected] of cases) {
      const log = [];
      append(dir, traced(fields, log));
      assert.deepEqual(log, expected, append.name);
      // A dir that is not a string is refused after the checks, before the
      // entry is stringified.
      const early = [];
      throwsClass(() => append(5, traced(fields, early)), TypeError);
      assert.deepEqual(early, expected.slice(0, expected.indexOf("toJSON")), append.name);
    }
    const seen = [];
    refuses(
      () => M.appendOutbox(dir, traced({ status: "sent", nonce: "n" }, seen)),
      "outbox status must be one of intent, confirmed, refused, unknown",
    );
    assert.deepEqual(seen, ["status"]);
    throwsClass(
      () =>
        M.appendInbox(dir, {
          get id() {
            throw new RangeError("from a getter");
          },
        }),
      RangeError,
    );
  });

  test("reads follow JSON.parse: BOM, CRLF, odd values, escapes", () => {
    const dir = journal();
    writeFileSync(
      join(dir, "inbox.jsonl"),
      '\uFEFF{"id":"bom"}\n{"id":7}\n{"noid":true}\n\n"str"\n[1]\n{"id":"crlf"}\r\n{"\\u0069d":"\\ud83d\\ude00"}\n{"id":"a","id":"last"}\n',
    );
    assert.deepEqual([...M.readInboxIds(dir)], ["bom", "crlf", "😀", "last"]);
  });

  test("invalid UTF-8 reads as U+FFFD, as Node decodes it", () => {
    const dir = journal();
    writeFileSync(
      join(dir, "inbox.jsonl"),
      Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xff, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98]), Buffer.from('"}\n')]),
    );
    assert.deepEqual([...M.readInboxIds(dir)], [Buffer.from([0xff, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98]).toString("utf8")]);
  });

  test("a line that does not parse refuses the read by file and line number", () => {
    const dir = journal();
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"1"}\n\n \n{broken\n');
    const e = refuses(() => M.readInboxIds(dir), "inbox.jsonl:3: not valid JSON");
    noHostPath(e, dir);
    writeFileSync(join(dir, "inbox.jsonl"), '\uFEFF\uFEFF{"id":"1"}\n');
    refuses(() => M.readInboxIds(dir), "inbox.jsonl:1: not valid JSON");
  });

  test("a null line is the TypeError of reading its id, after every line parsed", () => {
    const dir = journal();
    writeFileSync(join(dir, "inbox.jsonl"), '{"id":"1"}\nnull\n');
    throwsClass(() => M.readInboxIds(dir), TypeError);
    appendFileSync(join(dir, "inbox.jsonl"), "{bad\n");
    refuses(() => M.readInboxIds(dir), "inbox.jsonl:3: not valid JSON");
  });

  test("inbox as a directory: quiet refusals naming the file", () => {
    const dir = journal();
    mkdirSync(join(dir, "inbox.jsonl"));
    noHostPath(
      refuses(() => M.appendInbox(dir, { id: "1" }), "could not append to inbox.jsonl (EISDIR)"),
      dir,
    );
    noHostPath(
      refuses(() => M.readInboxIds(dir), "could not read inbox.jsonl (EISDIR)"),
      dir,
    );
  });

  test("deep nesting and huge numbers parse as JSON.parse does", () => {
    const dir = journal();
    const deep = "[".repeat(20000) + "]".repeat(20000);
    writeFileSync(join(dir, "inbox.jsonl"), `{"id":"d","x":${deep}}\n{"id":"n","v":1e400}\n`);
    assert.deepEqual([...M.readInboxIds(dir)], ["d", "n"]);
  });
});

describe("outbox", () => {
  test("latest state per nonce in first-seen order; intentAt never moves", () => {
    const dir = journal();
    M.appendOutbox(dir, { nonce: "a", status: "intent", at: "t1", channel: "c" });
    M.appendOutbox(dir, { nonce: "b", status: "intent", at: "t2" });
    M.appendOutbox(dir, { status: "confirmed", nonce: "a", at: "t3", messageId: "m1" });
    M.appendOutbox(dir, { nonce: "c", status: "unknown" });
    const out = M.readOutbox(dir);
    assert.ok(out instanceof Map);
    assert.deepEqual([...out.keys()], ["a", "b", "c"]);
    assert.equal(
      JSON.stringify(out.get("a")),
      '{"nonce":"a","status":"confirmed","at":"t3","channel":"c","intentAt":"t1","messageId":"m1"}',
    );
    assert.ok("intentAt" in out.get("c"));
    assert.equal(out.get("c").intentAt, undefined);
    assert.deepEqual(Object.keys(out.get("c")), ["nonce", "status", "intentAt"]);
    const open = M.unresolvedOutbox(dir);
    assert.deepEqual(
      open.map((e) => e.nonce),
      ["b", "c"],
    );
    assert.equal(Object.getPrototypeOf(open[0]), Object.prototype);
  });

  test("refuses a bad status or nonce", () => {
    const dir = journal();
    refuses(() => M.appendOutbox(dir, { nonce: "d", status: "sent" }), "outbox status must be one of intent, confirmed, refused, unknown");
    refuses(() => M.appendOutbox(dir, { status: "intent" }), "outbox entry needs a nonce");
    refuses(() => M.appendOutbox(dir, { status: "intent", nonce: "" }), "outbox entry needs a nonce");
    throwsClass(() => M.appendOutbox(dir, null), TypeError);
  });

  test("raw lines: a later intentAt is overridden, non-string nonces skipped, keys ordered as JSON.parse and spread order them", () => {
    const dir = journal();
    writeFileSync(
      join(dir, "outbox.jsonl"),
      [
        '{"nonce":5,"status":"intent"}',
        '{"nonce":"b","status":"intent","at":"x","2":"two"}',
        '{"nonce":"b","intentAt":"z","1":"one","status":"refused"}',
        '["nonce"]',
      ].join("\n") + "\n",
    );
    const b = M.readOutbox(dir).get("b");
    assert.deepEqual(Object.keys(b), ["1", "2", "nonce", "status", "at", "intentAt"]);
    assert.equal(b.intentAt, "x");
    assert.equal(b.status, "refused");
    assert.deepEqual(M.unresolvedOutbox(dir), []);
  });

  test("__proto__ keys stay own properties", () => {
    const dir = journal();
    writeFileSync(join(dir, "outbox.jsonl"), '{"nonce":"p","status":"intent","__proto__":{"polluted":true}}\n');
    const p = M.readOutbox(dir).get("p");
    assert.equal(Object.getPrototypeOf(p), Object.prototype);
    assert.equal(p.polluted, undefined);
    assert.ok(Object.hasOwn(p, "__proto__"));
  });
});

describe("drops, reloads, notices, admissions", () => {
  test("drops take any JSON value and read back as JSON.parse gives them", () => {
    const dir = journal();
    M.appendDrop(dir, { at: "2021-01-01T00:00:00.000Z", reason: "ceiling" });
    M.appendDrop(dir, [1, "two"]);
    M.appendDrop(dir, "plain");
    throwsClass(() => M.appendDrop(dir, undefined), TypeError);
    writeFileSync(join(dir, "drops.jsonl"), read(dir, "drops.jsonl") + '{"n":-0,"b":1e400,"__proto__":1}\n');
    const drops = M.readDrops(dir);
    assert.deepEqual(drops.slice(0, 3), [{ at: "2021-01-01T00:00:00.000Z", reason: "ceiling" }, [1, "two"], "plain"]);
    assert.ok(Object.is(drops[3].n, -0));
    assert.equal(drops[3].b, Infinity);
    assert.ok(Object.hasOwn(drops[3], "__proto__"));
    assert.equal(Object.getPrototypeOf(drops[3]), Object.prototype);
    assert.equal(mode(join(dir, "drops.jsonl")), underUmask(0o600));
  });

  test("reloads need an outcome", () => {
    const dir = journal();
    assert.deepEqual(M.readReloads(dir), []);
    M.appendReload(dir, { outcome: "applied", differences: { a: [1, 2] } });
    M.appendReload(dir, { outcome: "refused", reason: "bad" });
    refuses(() => M.appendReload(dir, { outcome: "maybe" }), "reload entry needs an outcome");
    assert.equal(read(dir, "reloads.jsonl"), '{"outcome":"applied","differences":{"a":[1,2]}}\n{"outcome":"refused","reason":"bad"}\n');
    assert.deepEqual(
      M.readReloads(dir).map((r) => r.outcome),
      ["applied", "refused"],
    );
  });

  test("notices: kind and date compared with ===", () => {
    const dir = journal();
    refuses(() => M.appendNotice(dir, { kind: "ceiling" }), "notice needs kind and date");
    M.appendNotice(dir, { kind: "ceiling", date: "2021-01-01" });
    assert.equal(M.noticeOn(dir, "ceiling", "2021-01-01"), true);
    assert.equal(M.noticeOn(dir, "ceiling", "2021-01-02"), false);
    appendFileSync(join(dir, "notices.jsonl"), '{"kind":-0,"date":null}\n{}\n');
    assert.equal(M.noticeOn(dir, 0, null), true);
    assert.equal(M.noticeOn(dir), true);
    assert.equal(M.noticeOn(dir, {}, null), false);
  });

  test("noticeOn stops at its first match: a null line after it is never read", () => {
    const dir = journal();
    writeFileSync(join(dir, "notices.jsonl"), '{"kind":"k","date":"d"}\nnull\n');
    assert.equal(M.noticeOn(dir, "k", "d"), true);
    throwsClass(() => M.noticeOn(dir, "x", "d"), TypeError);
  });

  test("admissions: distinct ids whose at starts with the date, by UTF-16 code units", () => {
    const dir = journal();
    refuses(() => M.appendAdmission(dir, { id: "t3" }), "admission needs id and at");
    M.appendAdmission(dir, { id: "t1", at: "2021-01-01T10:00:00.000Z" });
    M.appendAdmission(dir, { id: "t1", at: "2021-01-01T11:00:00.000Z" });
    M.appendAdmission(dir, { id: "t2", at: "2021-01-02T10:00:00.000Z" });
    appendFileSync(join(dir, "admissions.jsonl"), '{"id":"s","at":"2021-01-0\\ud83d\\ude00"}\n{"id":9,"at":"2021-01-01"}\n');
    assert.equal(M.countAdmissionsOn(dir, "2021-01-01"), 1);
    assert.equal(M.countAdmissionsOn(dir, "2021-01-02"), 1);
    assert.equal(M.countAdmissionsOn(dir, "2021-01-0\ud83d"), 1);
    assert.equal(M.countAdmissionsOn(dir, 20210101), 0);
    assert.equal(M.countAdmissionsOn(dir, undefined), 0);
    assert.equal(M.countAdmissionsOn(dir, new String("2021-01-01")), 0);
  });
});
