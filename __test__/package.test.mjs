// The package: both module systems see every export, and every refusal is
// an instance of the exported DiscordError.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { M, addonOnly, isAddon, journal, modulePath } from "./helpers.mjs";

// Each export of journal.mjs: its type and, for a function, its `length` (a
// parameter with a default, and every one after it, is not counted). The
// names are checked against index.js's, the one list (exports.test.mjs).
const SHAPES = {
  OUTBOX_STATUS: "object",
  BRAKE_EXIT: "number",
  RECOVER_REASON: "string",
  UNLOCK_HINT: "string",
  journalLabel: 1,
  ensureJournal: 1,
  appendInbox: 2,
  readInboxIds: 1,
  appendOutbox: 2,
  readOutbox: 1,
  unresolvedOutbox: 1,
  appendDrop: 2,
  readDrops: 1,
  turnPath: 2,
  writeTurn: 3,
  readTurn: 2,
  listTurns: 1,
  utcDate: 1,
  appendAdmission: 2,
  countAdmissionsOn: 2,
  countTurnsOn: 2,
  stopPath: 1,
  stopRequested: 1,
  requestStop: 1,
  requestProcessingStop: 2,
  clearProcessingStop: 2,
  clearStop: 1,
  readStop: 1,
  lockPath: 1,
  ownerPath: 1,
  validStart: 1,
  validBoot: 1,
  processStart: 1,
  bootId: 0,
  identityOf: 1,
  readPid: 1,
  pidAlive: 1,
  ownerState: 1,
  ownerAlive: 2,
  writePid: 2,
  unlock: 1,
  recover: 1,
  stopTarget: 2,
  clearPid: 2,
  appendReload: 2,
  readReloads: 1,
  appendNotice: 2,
  noticeOn: 3,
};
const EXPORTS = Object.keys(SHAPES);
// The exports only this package has (internal.js, the one list).
const OWN_EXPORTS = isAddon ? createRequire(import.meta.url)("../internal.js").OWN_EXPORTS : [];

describe("package", () => {
  test("exports every name of journal.mjs, and the addon nothing else but DiscordError", () => {
    for (const name of EXPORTS) assert.ok(name in M, name);
    if (isAddon)
      assert.deepEqual(
        Object.keys(M)
          .filter((k) => !OWN_EXPORTS.includes(k))
          .sort(),
        [...EXPORTS].sort(),
      );
  });

  test("every export has journal.mjs's type, and each function its name and length", () => {
    for (const [name, shape] of Object.entries(SHAPES)) {
      if (typeof shape === "string") {
        assert.equal(typeof M[name], shape, name);
        continue;
      }
      assert.equal(typeof M[name], "function", name);
      assert.equal(M[name].name, name, `${name}.name`);
      assert.equal(M[name].length, shape, `${name}.length`);
    }
  });

  test("require() and a named ESM import both see every export", addonOnly, async () => {
    const required = createRequire(import.meta.url)(modulePath);
    const imported = await import(pathToFileURL(modulePath).href);
    for (const name of [...EXPORTS, ...OWN_EXPORTS]) {
      assert.equal(typeof required[name], typeof M[name], name);
      assert.ok(name in imported, `ESM named export ${name}`);
      assert.equal(imported[name], required[name], name);
    }
  });

  test("DiscordError: an Error subclass with name and exitCode (default 1)", addonOnly, () => {
    const { DiscordError } = M;
    const e = new DiscordError("m");
    assert.ok(e instanceof Error);
    assert.equal(e.name, "DiscordError");
    assert.equal(e.message, "m");
    assert.equal(e.exitCode, 1);
    assert.equal(new DiscordError("m", 3).exitCode, 3);
    assert.match(e.stack, /DiscordError: m/);
  });

  test("refusals from Rust are instances of the exported class, with a stack", addonOnly, () => {
    const dir = journal();
    mkdirSync(join(dir, "run.lock"));
    for (const f of [() => M.appendInbox(dir, {}), () => M.turnPath(dir, "../x"), () => M.writePid(dir, process.pid)]) {
      assert.throws(f, (e) => e instanceof M.DiscordError && e.constructor === M.DiscordError && typeof e.stack === "string");
    }
  });
});

describe("the internal entry", addonOnly, () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

  test("internal.js ships, and is no part of the API: the package's exports do not reach it", () => {
    assert.ok(pkg.files.includes("internal.js"), "package.json files");
    assert.ok(!Object.keys(pkg.exports).some((k) => k.includes("internal")), "package.json exports");
    const req = createRequire(join(root, "package.json"));
    // The package resolves by its own name from inside it, so a refusal of
    // internal.js is its exports' (Bun names it MODULE_NOT_FOUND, Node
    // ERR_PACKAGE_PATH_NOT_EXPORTED).
    assert.equal(req.resolve("discord-journal/package.json"), join(root, "package.json"));
    const code = process.versions.bun ? "MODULE_NOT_FOUND" : "ERR_PACKAGE_PATH_NOT_EXPORTED";
    assert.throws(() => req.resolve("discord-journal/internal.js"), { code });
  });

  test("the command reaches the library only through index.js and internal.js", () => {
    const files = (d) =>
      readdirSync(join(root, d), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(d, e.name)) : e.name.endsWith(".js") ? [join(d, e.name)] : [],
      );
    const outside = new Set();
    for (const file of [...files("bin"), ...files("cli")]) {
      for (const m of readFileSync(join(root, file), "utf8").matchAll(/require\("(\.[^"]*)"\)/g)) {
        const to = relative(root, resolve(root, dirname(file), m[1]));
        if (!to.startsWith("bin/") && !to.startsWith("cli/")) outside.add(to);
      }
    }
    assert.deepEqual([...outside].sort(), ["index.js", "internal.js", "package.json"]);
  });
});

// #48: a clone's `npm install` printed EBADENGINE on Node 20 for two
// dependencies of the build tool that asked for Node 22. The lock holds
// every package a clone installs, with the Node versions each declares.
describe("the dependencies a clone installs", () => {
  const lock = join(fileURLToPath(new URL("..", import.meta.url)), "package-lock.json");
  const skip = existsSync(lock) ? false : "the lock is the checkout's; a packed copy has none";

  /** [major, minor, patch] of a version, a part given as `*` or `x` (or missing) as 0. */
  const parts = (v) =>
    v
      .split(".")
      .map((p) => (/^\d+$/.test(p) ? Number(p) : 0))
      .concat([0, 0, 0])
      .slice(0, 3);
  const cmp = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  /** Whether `version` satisfies a range of npm's `engines` (`||` of comparators, each `>=`, `^`, `~`, `X.*` or exact). */
  function satisfies(version, range) {
    const v = parts(version);
    return range.split("||").some((alternative) =>
      alternative
        .trim()
        .replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1")
        .split(/\s+/)
        .every((c) => {
          if (c === "" || c === "*") return true;
          const m = /^(>=|<=|>|<|=|\^|~)?v?([\d.*x]+)$/.exec(c);
          assert.ok(m, `a comparator this check reads: ${c}`);
          const [op, at] = [m[1] ?? "", parts(m[2])];
          const given = m[2].split(".").filter((p) => /^\d+$/.test(p)).length;
          const d = cmp(v, at);
          if (op === ">=") return d >= 0;
          if (op === ">") return d > 0;
          if (op === "<=") return d <= 0;
          if (op === "<") return d < 0;
          if (op === "^") return d >= 0 && v[0] === at[0];
          if (op === "~") return d >= 0 && v[0] === at[0] && (given < 2 || v[1] === at[1]);
          // X, X.Y, X.*: every version that starts so.
          return parts(m[2])
            .slice(0, given)
            .every((p, i) => v[i] === p);
        }),
    );
  }

  test("the range check reads npm's ranges", () => {
    assert.equal(satisfies("20.17.0", ">= 20.17"), true);
    assert.equal(satisfies("20.20.2", "^22.20 || ^24.12 || >=25"), false);
    assert.equal(satisfies("24.22.3", "^22.20 || ^24.12 || >=25"), true);
    assert.equal(satisfies("20.19.0", "^20.19.0 || >=22.12.0"), true);
    assert.equal(satisfies("20.18.0", "^20.19.0 || >=22.12.0"), false);
    assert.equal(satisfies("22.12.0", "6.* || 8.* || >= 10.*"), true);
    assert.equal(satisfies("20.19.0", "20 || >=22"), true);
    assert.equal(satisfies("21.0.0", "20 || >=22"), false);
  });

  // Node 20 from 20.19 (oxlint, the linter, asks for it since its 1.17; the
  // package itself runs from 20.17), 22 from 22.13, and 24.
  test("none asks for a newer Node than 20.19, 22.13 or 24 (docs/development.md, set-up)", { skip }, () => {
    const { packages } = JSON.parse(readFileSync(lock, "utf8"));
    const refused = [];
    for (const [path, p] of Object.entries(packages))
      for (const node of ["20.19.0", "22.13.0", "24.0.0"])
        if (p.engines?.node && !satisfies(node, p.engines.node))
          refused.push(`${path || "the package"}@${p.version}: node ${p.engines.node} (not ${node})`);
    assert.deepEqual(refused, []);
  });
});
