// Uses of the package's types, checked by types.test.mjs under strict and
// exactOptionalPropertyTypes: every line compiles, except the ones marked
// as expected errors, each of which the runtime refuses or answers
// otherwise (#37). Never run: only type-checked.
import * as J from "discord-journal";
import {
  DiscordError,
  OUTBOX_STATUS,
  type OutboxRecord,
  type OwnerRecord,
  type Status,
  type StopLine,
  type UnresolvedRecord,
  appendDrop,
  appendInbox,
  appendOutbox,
  ownerState,
  readOutbox,
  readPid,
  readStop,
  recover,
  requestStop,
  unlock,
  unresolvedOutbox,
  validBoot,
  validStart,
  writePid,
  writeTurn,
} from "discord-journal";

declare const dir: string;
declare const pid: number;
declare const s: string;
declare const u: unknown;

// journal.mjs's own idiom for the owner record narrows.
const rec: OwnerRecord | null = readPid(dir);
if (rec !== null && !rec.invalid && rec.pid === pid) J.clearPid(dir, rec.pid);
if (rec?.invalid) {
  const invalid: true = rec.invalid;
  void invalid;
}

// undefined means "the default", as at runtime.
ownerState(rec, { identity: undefined });
writePid(dir, pid, { now: undefined, identity: undefined });
writePid(dir, pid, { now: Date.now() });
unlock(dir, { beforeRemove: undefined, reason: undefined });
unlock(dir, { beforeRemove: null, reason: "unlock" });
recover(dir, { beforeRemove: undefined });
requestStop(dir);
requestStop(dir, "maintenance");
requestStop(dir, undefined);

// A status of any string, narrowed by OUTBOX_STATUS.
if (OUTBOX_STATUS.includes(s)) appendOutbox(dir, { nonce: "n", status: s });
if (OUTBOX_STATUS.includes(u)) {
  const status: J.OutboxStatus = u;
  void status;
}

// Type guards.
if (validStart(u) && validBoot(u)) {
  const text: string = u;
  void text;
}

// The shapes the readers return.
const merged: OutboxRecord | undefined = readOutbox(dir).get("n");
const at: unknown = merged?.intentAt;
void at;
const open: UnresolvedRecord[] = unresolvedOutbox(dir);
const first: "intent" | "unknown" | undefined = open[0]?.status;
void first;
const lines: StopLine[] = readStop(dir);
for (const line of lines) if (line.reason !== null) void line.at;

writeTurn(dir, "t1", { startedAt: "2021-01-01T00:00:00.000Z" });
writeTurn(dir, "t2", null);
writeTurn(dir, 7, undefined);
appendDrop(dir, { id: "x" });
appendInbox(dir, { id: "m1", at: "2021-01-01T00:00:00.000Z" });

// DiscordError: a subclass may name itself.
class Mine extends DiscordError {
  override name = "Mine";
}
const e: DiscordError = new Mine("m", J.BRAKE_EXIT);
void e.exitCode;

// status --json, as the command prints it.
declare const printed: Status;
const canStart: boolean | null = printed.verdict.canStart;
void canStart;
const deliveries = printed.unresolvedDeliveries;
if ("value" in deliveries) for (const d of deliveries.value) void (d.intentAt satisfies unknown);

// What the runtime refuses, or answers otherwise, does not compile.
// @ts-expect-error a string is refused ("Invalid time value"), after run.lock is made
writePid(dir, pid, { now: "garbage" });
// @ts-expect-error an invalid Date is refused, after run.lock is made
writePid(dir, pid, { now: new Date(Number.NaN) });
// @ts-expect-error a number as a reason writes {reason: null}
requestStop(dir, 5);
// @ts-expect-error a function as a reason fails
unlock(dir, { reason: () => "x" });
// @ts-expect-error a drop is an object
appendDrop(dir, 5);
// @ts-expect-error an outbox status outside the four is refused
appendOutbox(dir, { nonce: "n", status: "sent" });
// @ts-expect-error an inbox entry needs a string id
appendInbox(dir, { id: 5 });
// @ts-expect-error intentAt is any JSON value of a foreign line, not a string
const intent: string | undefined = merged?.intentAt;
void intent;
// @ts-expect-error a STOP line's at may be a number on a foreign line
const stopAt: string | undefined = lines[0] && lines[0].reason !== null ? lines[0].at : undefined;
void stopAt;
// @ts-expect-error unresolvedOutbox never answers "confirmed"
const confirmed: "confirmed" = open[0]!.status;
void confirmed;
