// The journals the memory measurements read, written once for both:
// bench/memory.mjs (the readers' peak resident set) and
// reliability/cgroup.test.mjs (many bindings under a cgroup memory limit),
// so that the two measure the same files and reads: lines written a block
// at a time, one binding's files as the connector writes them over DAYS
// days, and that binding read as the connector reads it.
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

export const DAY = 86_400_000;
export const DAYS = 5;
export const T0 = Date.UTC(2024, 0, 1);
export const iso = (t) => new Date(t).toISOString();
export const snowflake = (i) => String(1_100_000_000_000_000_000n + BigInt(i) * 4_194_304n);
/** The last day's date, on which the admissions are counted. */
export const LAST_DAY = iso(T0 + (DAYS - 1) * DAY).slice(0, 10);

/** Writes `n` lines made by `make(i)` to `path`, a block at a time. */
export function writeLines(path, n, make) {
  const fd = openSync(path, "w", 0o600);
  try {
    for (let i = 0; i < n; i += 10_000) {
      let block = "";
      for (let k = i; k < Math.min(n, i + 10_000); k++) block += JSON.stringify(make(k)) + "\n";
      writeSync(fd, block);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Binding `b`'s inbox, outbox and admissions of `n` lines each, as the
 * connector writes them over DAYS days (at 200,000 lines about 28, 17 and
 * 12 MB): message ids apart from other bindings'; an admission keyed by its
 * message's id; a delivery an intent then its confirmed line (every 50th
 * refused), except that in every 40th pair the second line is another
 * delivery's intent and neither is resolved later (the process died
 * between the POST and its receipt), so unresolvedOutbox returns 1 in 40
 * lines.
 */
export function writeBinding(dir, b, n) {
  mkdirSync(join(dir, "turns"), { recursive: true, mode: 0o700 });
  const at = (i) => iso(T0 + Math.floor((i / n) * DAYS * DAY));
  const message = (i) => snowflake(b * n + i);
  writeLines(join(dir, "inbox.jsonl"), n, (i) => ({
    id: message(i),
    at: at(i),
    channel: snowflake(i % 17),
    author: snowflake(i % 311),
    kind: i % 9 ? "message" : "mention",
  }));
  writeLines(join(dir, "outbox.jsonl"), n, (i) => {
    const k = Math.floor(i / 2);
    if (i % 2 === 0) return { nonce: `n${k}`, status: "intent", at: at(i) };
    if (k % 40 === 0) return { nonce: `u${k}`, status: "intent", at: at(i) };
    if (k % 50 === 1) return { nonce: `n${k}`, status: "refused", at: at(i), error: "Missing Access", code: 50001 };
    return { nonce: `n${k}`, status: "confirmed", at: at(i), messageId: snowflake(b * n + k) };
  });
  writeLines(join(dir, "admissions.jsonl"), n, (i) => ({ id: message(i), at: at(i) }));
}

/**
 * Binding `dir` read with `M` as the connector reads it for each message:
 * `[its inbox ids, its unresolved deliveries, the admissions on `date`]`.
 */
export function readBinding(M, dir, date = LAST_DAY) {
  return [M.readInboxIds(dir).size, M.unresolvedOutbox(dir).length, M.countAdmissionsOn(dir, date)];
}
