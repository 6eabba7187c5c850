// The record files as the suites know them: the one table that the
// suites' lists and their model of the connector's start come from. It is
// written out here, not read from the addon, since the suites run against
// journal.mjs too, which has no such list; record-files.test.mjs pins its
// names, in order, to the addon's (src/lines.rs). Each function takes the
// module as M and uses nothing from outside, so that a child process can
// be given its source (`String(f)`) and run it against the module it loads.

/**
 * Each record file: `append(M, dir, n)` appends an entry numbered `n`;
 * `read`, its readers as check asks them (`(M, dir, day, kind)`: about the
 * day `day`, and the notice kind `kind`); `start`, the place in `read` of
 * the one the connector's start calls; `nulls`, how many of its readers
 * refuse a line that is JSON null (readOutbox and unresolvedOutbox both
 * read its nonce).
 */
export const RECORDS = Object.freeze({
  "inbox.jsonl": {
    append: (M, d, n) => M.appendInbox(d, { id: `m${n}`, at: "2026-12-01T03:00:00.000Z" }),
    read: [(M, d) => M.readInboxIds(d)],
    start: 0,
    nulls: 1,
  },
  "outbox.jsonl": {
    append: (M, d, n) => M.appendOutbox(d, { nonce: `n${n}`, status: "intent", at: "2026-12-01T03:00:00.000Z" }),
    read: [(M, d) => M.readOutbox(d), (M, d) => M.unresolvedOutbox(d)],
    start: 1,
    nulls: 2,
  },
  "drops.jsonl": {
    append: (M, d, n) => M.appendDrop(d, { at: "2026-12-01T03:00:00.000Z", reason: "ceiling", id: `m${n}` }),
    read: [(M, d) => M.readDrops(d)],
    start: 0,
    nulls: 0,
  },
  "admissions.jsonl": {
    append: (M, d, n) => M.appendAdmission(d, { id: `t${n}`, at: "2026-12-01T03:00:00.000Z" }),
    read: [(M, d, day) => M.countAdmissionsOn(d, day)],
    start: 0,
    nulls: 1,
  },
  "notices.jsonl": {
    append: (M, d, n) => M.appendNotice(d, { kind: `k${n}`, date: "2026-12-01" }),
    read: [(M, d, day, kind) => M.noticeOn(d, kind, day)],
    start: 0,
    nulls: 1,
  },
  "reloads.jsonl": {
    append: (M, d, n) => M.appendReload(d, { outcome: "applied", at: "2026-12-01T03:00:00.000Z", n }),
    read: [(M, d) => M.readReloads(d)],
    start: 0,
    nulls: 0,
  },
});

/** The record files' names, in the addon's order. */
export const RECORD_NAMES = Object.freeze(Object.keys(RECORDS));

/** Each reader of `name`, as a function of the journal alone, asked about `day` and the notice kind `kind`. */
export const readersOf = (M, name, day, kind) => RECORDS[name].read.map((f) => (d) => f(M, d, day, kind));

/** The connector's start over the record files in `d`: each file's reader as the start calls it, about `day`, and each file's appender of an entry "new". */
export const startOf = (M, d, day) => ({
  reads: Object.values(RECORDS).map((r) => () => r.read[r.start](M, d, day, "ceiling")),
  appends: Object.values(RECORDS).map((r) => () => r.append(M, d, "new")),
});
