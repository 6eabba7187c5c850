// How `discord-journal verify` sees what a call did, so that two modules can
// be compared exactly: a value rendered with its type, prototype, key order,
// property flags, frozen-ness, Map and Set order, -0 and lone surrogates,
// and which objects are one and the same (a second sight of an object is
// `<same #k>`, so one shared object differs from two equal copies); an
// exception with its class, name, code, exitCode and keys; and a journal
// directory's entries with their types, modes and bytes.
"use strict";

const { lstatSync, readFileSync, readdirSync, readlinkSync } = require("node:fs");
const { join } = require("node:path");

// A timestamp a call makes from the clock differs between the two runs:
// one within ten minutes of now reads as <NOW>. Cases use fixed dates.
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;
const scrub = (s) => s.replace(ISO, (m) => (Math.abs(Date.parse(m) - Date.now()) < 600_000 ? "<NOW>" : m));

/** `v` as text that two equal values, and only they, share. `dirs` are shown as <DIR>. */
function render(v, dirs = [], seen = new Map()) {
  const str = (s) => {
    for (const d of dirs) s = s.split(d).join("<DIR>");
    return JSON.stringify(scrub(s));
  };
  switch (typeof v) {
    case "undefined":
      return "undefined";
    case "string":
      return str(v);
    case "number":
      return Object.is(v, -0) ? "-0" : String(v);
    case "bigint":
      return `${v}n`;
    case "boolean":
      return String(v);
    case "symbol":
      return `Symbol(${v.description})`;
    case "function":
      return `function ${v.name}/${v.length}`;
  }
  if (v === null) return "null";
  if (seen.has(v)) return `<same #${seen.get(v)}>`;
  seen.set(v, seen.size);
  const inner = (x) => render(x, dirs, seen);
  const frozen = Object.isFrozen(v) ? "(frozen)" : "";
  if (v instanceof Set) return `Set${frozen}[${[...v].map(inner).join(",")}]`;
  if (v instanceof Map) return `Map${frozen}[${[...v].map(([k, x]) => `${inner(k)}=>${inner(x)}`).join(",")}]`;
  const proto = Object.getPrototypeOf(v);
  const kind = Array.isArray(v)
    ? "Array"
    : proto === Object.prototype
      ? ""
      : proto === null
        ? "(null prototype)"
        : `(${proto.constructor?.name ?? "?"})`;
  const keys = Reflect.ownKeys(v).map((k) => {
    const d = Object.getOwnPropertyDescriptor(v, k);
    const flags = `${d.enumerable ? "" : "~e"}${"value" in d && !d.writable ? "~w" : ""}${d.configurable ? "" : "~c"}`;
    return `${inner(typeof k === "symbol" ? k : String(k))}${flags}:${"value" in d ? inner(d.value) : "<accessor>"}`;
  });
  return `${kind}${frozen}{${keys.join(",")}}`;
}

/**
 * What an exception is, for comparison. A refusal's message (a
 * DiscordError, anything with an exitCode) and Node's own errors (with a
 * `code`) are part of the contract; an engine's own TypeError or
 * RangeError wording is not, but its class is.
 */
function thrown(e, dirs) {
  if (!(e instanceof Error)) return `throws a non-Error ${render(e, dirs)}`;
  const contract = e.name === "DiscordError" || e.exitCode !== undefined || typeof e.code === "string";
  const keys = Object.keys(e).join(",");
  const message = contract ? render(String(e.message), dirs) : "<the engine's words>";
  return `throws ${e.constructor?.name} name=${JSON.stringify(e.name)} exitCode=${render(e.exitCode)} code=${render(e.code, dirs)} keys=[${keys}] message=${message}`;
}

/** Every entry below `dir`: its name, type, mode, and a file's bytes; `dirs` in a link are <DIR>. */
function tree(dir, dirs = [dir]) {
  const rows = [];
  const walk = (rel) => {
    const p = join(dir, rel);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) rows.push(`${rel} -> ${dirs.reduce((t, d) => t.split(d).join("<DIR>"), readlinkSync(p))}`);
    else if (st.isDirectory()) {
      if (rel) rows.push(`${rel}/ ${mode}`);
      for (const n of readdirSync(p).sort()) walk(rel ? join(rel, n) : n);
    } else if (st.isFile()) rows.push(`${rel} ${mode} ${JSON.stringify(scrub(readFileSync(p, "latin1")))}`);
    else rows.push(`${rel} (not a file or directory) ${mode}`);
  };
  walk("");
  return rows;
}

module.exports = { render, thrown, tree };
