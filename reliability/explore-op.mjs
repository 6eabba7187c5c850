// One process of the schedule explorer (explore.mjs): plays one operation on
// a journal with the module under test (JOURNAL_MODULE, or this package),
// when told to. Lines on stdin drive it ("go", then "exit"); it prints
// "ready <pid>" once loaded (and, for a release, once it holds the binding),
// then one JSON line with what the operation did (when it started and ended,
// and how long it took, `ms`, for a wait the explorer bounds; when a claim
// stood), and stays alive until told to exit, so
// that a claim that stood is still a live owner when the explorer checks
// the journal. The operation is bracketed by two failed
// access(2) calls on marker paths, so that a trace can tell its system calls
// from the runtime's.
import { accessSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const path = process.env.JOURNAL_MODULE ? resolve(process.env.JOURNAL_MODULE) : join(root, "index.js");
const M = path.endsWith(".mjs") ? await import(pathToFileURL(path).href) : createRequire(import.meta.url)(path);

const [op, dir, tag] = process.argv.slice(2);
/** The generation of a processing stop (the connector's own brake). */
const GENERATION = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";
const out = (v) => process.stdout.write(`${typeof v === "string" ? v : JSON.stringify(v)}\n`);

let pending = "";
/** The next line on stdin (blocking: nothing else runs in this process). */
function line() {
  const buf = Buffer.alloc(64);
  while (!pending.includes("\n")) {
    let n;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      if (e.code === "EAGAIN") continue;
      throw e;
    }
    if (n === 0) return "";
    pending += buf.toString("utf8", 0, n);
  }
  const at = pending.indexOf("\n");
  const l = pending.slice(0, at);
  pending = pending.slice(at + 1);
  return l;
}

const mark = (name) => {
  try {
    accessSync(`/@explore-${name}`);
  } catch {
    // The marker is never there: only the call is wanted.
  }
};

const operations = {
  claim: (r) => {
    M.writePid(dir, process.pid);
    r.stood = true;
    r.stoodAt = Date.now();
    // Acknowledged only once appendInbox returned: the explorer then
    // expects the record in the file or a quarantine, whatever ran.
    M.appendInbox(dir, { id: tag });
    r.appended = tag;
  },
  // An append with no claim: a record a repair must keep whatever it races.
  append: (r) => {
    M.appendInbox(dir, { id: tag });
    r.appended = tag;
  },
  // The same, from a process that appended once before it was ready: it
  // knows where the file ended then, and reads there first (#47).
  appendAgain: (r) => {
    M.appendInbox(dir, { id: tag });
    r.appended = tag;
  },
  release: () => M.clearPid(dir, process.pid),
  recover: (r) => (r.recovered = M.recover(dir)),
  unlock: (r) => (r.unlocked = M.unlock(dir) !== false),
  stop: (r) => {
    M.requestStop(dir, `operator ${tag}`);
    r.braked = `operator ${tag}`;
  },
  // The connector's processing stop: a brake too, of its own reason.
  processingStop: (r) => {
    M.requestProcessingStop(dir, GENERATION);
    r.braked = `processing:${GENERATION}`;
  },
  repair: (r) => {
    const native = createRequire(import.meta.url)(join(root, "binding.js"));
    const done = JSON.parse(native.repair(dir, true));
    r.repaired = done.applied;
    r.stopLock = done.stopLock;
  },
  // The command's judge of .stop.lock (#34): "left" only where proved.
  judge: (r) => {
    const native = createRequire(import.meta.url)(join(root, "binding.js"));
    r.stopLock = native.stopLockLeft(dir);
  },
};

// A claim that stands, then (told "release") releases: the owner whose
// release races the others.
if (op === "hold") {
  out(`ready ${process.pid}`);
  if (line() !== "go") process.exit(0);
  mark("begin");
  const result = { op, tag, pid: process.pid, ok: true };
  try {
    M.writePid(dir, process.pid);
    result.stood = true;
  } catch (e) {
    Object.assign(result, { ok: false, error: String(e?.message ?? e), exitCode: e?.exitCode ?? null });
  }
  out(result);
  if (result.stood && line() === "release") {
    const t = performance.now();
    try {
      M.clearPid(dir, process.pid);
      out({ released: true, ms: Math.round(performance.now() - t) });
    } catch (e) {
      out({ released: false, error: String(e?.message ?? e), ms: Math.round(performance.now() - t) });
    }
  }
  mark("end");
  line();
  process.exit(0);
}
if (!(op in operations)) {
  console.error(`explore-op: no operation ${op}`);
  process.exit(2);
}
if (op === "release") M.writePid(dir, process.pid);
if (op === "appendAgain") M.appendInbox(dir, { id: `${tag}-before` });
out(`ready ${process.pid}`);
if (line() !== "go") process.exit(0);
mark("begin");
const result = { op, tag, pid: process.pid, ok: true, startedAt: Date.now() };
const t = performance.now();
try {
  operations[op](result);
} catch (e) {
  Object.assign(result, { ok: false, error: String(e?.message ?? e), exitCode: e?.exitCode ?? null });
}
result.ms = Math.round(performance.now() - t);
result.endedAt = Date.now();
mark("end");
out(result);
line();
