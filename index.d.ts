// Types of discord-journal. The functions accept any JavaScript value, as
// journal.mjs does; the types describe the intended use: what they accept
// is what the runtime takes, and what they promise is what it returns
// (checked by __test__/types.test.mjs under strict and
// exactOptionalPropertyTypes, for node16, nodenext and bundler).

/** A refusal: `exitCode` is the CLI exit status (1 failed, BRAKE_EXIT 3 a brake). */
export declare class DiscordError extends Error {
  constructor(message: string, exitCode?: number);
  /** "DiscordError"; a subclass may set its own. */
  name: string;
  exitCode: number;
}

export type OutboxStatus = "intent" | "confirmed" | "refused" | "unknown";
export type OwnerStateName = "absent" | "invalid" | "dead" | "unknown" | "mismatch" | "live";
export interface Identity {
  start: string | null;
  boot: string | null;
}
/**
 * `readPid`'s answer: the owner record, or `{ invalid: true }` for one that
 * cannot be read. Each side names the other's keys as absent, so that
 * journal.mjs's idiom `rec !== null && !rec.invalid && rec.pid === pid`
 * narrows.
 */
export type OwnerRecord =
  | { pid: number; start: string | null; boot: string | null; invalid?: undefined }
  | { invalid: true; pid?: undefined; start?: undefined; boot?: undefined };
export interface IdentitySeam {
  /** Test seam: the identity of a pid; `identityOf` where absent or undefined. */
  identity?: ((pid: number) => Identity) | undefined;
}
/** A line of STOP as `readStop` reads it: a JSON object with a string reason, or `{ reason: null }` for any other line. */
export type StopLine = { reason: string; at?: unknown; [key: string]: unknown } | { reason: null };
/** A delivery as `readOutbox` merges it: its lines' keys, the last line's winning, and `intentAt`, the first line's `at` (any JSON value, or undefined). */
export type OutboxRecord = Record<string, unknown> & { nonce: string; status: unknown; intentAt: unknown };
/** What `unresolvedOutbox` returns: the deliveries whose last status is "intent" or "unknown". */
export type UnresolvedRecord = OutboxRecord & { status: "intent" | "unknown" };

/** The four statuses; `includes` takes any value and narrows it. */
export declare const OUTBOX_STATUS: { includes(value: unknown, fromIndex?: number): value is OutboxStatus } & readonly OutboxStatus[];
export declare const BRAKE_EXIT: 3;
export declare const RECOVER_REASON: "recover";
export declare const UNLOCK_HINT: string;

export declare function journalLabel(dir: unknown): string;
export declare function ensureJournal<D extends string>(dir: D): D;

export declare function appendInbox(dir: string, entry: { id: string; [key: string]: unknown }): void;
export declare function readInboxIds(dir: string): Set<string>;
export declare function appendOutbox(dir: string, entry: { nonce: string; status: OutboxStatus; [key: string]: unknown }): void;
export declare function readOutbox(dir: string): Map<string, OutboxRecord>;
export declare function unresolvedOutbox(dir: string): UnresolvedRecord[];
export declare function appendDrop(dir: string, entry: Record<string, unknown>): void;
export declare function readDrops(dir: string): unknown[];
export declare function appendAdmission(dir: string, entry: { id: string; at: string; [key: string]: unknown }): void;
export declare function countAdmissionsOn(dir: string, date: string): number;
export declare function utcDate(now: number | string | Date): string;
export declare function appendReload(dir: string, entry: { outcome: "applied" | "refused"; [key: string]: unknown }): void;
export declare function readReloads(dir: string): unknown[];
export declare function appendNotice(dir: string, entry: { kind: string; date: string; [key: string]: unknown }): void;
export declare function noticeOn(dir: string, kind: string, date: string): boolean;

export declare function turnPath(dir: string, id: string | number): string;
/** `{ ...record, id }`: any object, or null or undefined for `{ id }`. */
export declare function writeTurn(dir: string, id: string | number, record: object | null | undefined): string;
export declare function readTurn(dir: string, id: string | number): unknown;
export declare function listTurns(dir: string): unknown[];
export declare function countTurnsOn(dir: string, date: string): number;

export declare function stopPath(dir: string): string;
export declare function stopRequested(dir: string): boolean;
export declare function requestStop(dir: string, reason?: string | undefined): string;
export declare function requestProcessingStop(dir: string, generation: string): string;
export declare function clearProcessingStop(dir: string, generation: string): boolean;
export declare function clearStop(dir: string): void;
export declare function readStop(dir: string): StopLine[];

export declare function lockPath(dir: string): string;
export declare function ownerPath(dir: string): string;
export declare function validStart(v: unknown): v is string;
export declare function validBoot(v: unknown): v is string;
export declare function processStart(pid: number | string): string | null;
export declare function bootId(): string | null;
export declare function identityOf(pid: number | string): Identity;
export declare function readPid(dir: string): OwnerRecord | null;
export declare function pidAlive(pid: unknown): boolean;
export declare function ownerState(rec: OwnerRecord | null, opts?: IdentitySeam): OwnerStateName;
export declare function ownerAlive(rec: OwnerRecord | null, opts?: IdentitySeam): boolean;
/** `now`: the claim's time in ms since the epoch (journal.mjs's `Date.now()`); NaN is refused, after run.lock is made. */
export declare function writePid(dir: string, pid: number, opts?: IdentitySeam & { now?: number | undefined }): void;
export declare function unlock(
  dir: string,
  opts?: IdentitySeam & { beforeRemove?: (() => unknown) | null | undefined; reason?: string | undefined },
): { pid: number; start: string | null; boot: string | null } | null | false;
export declare function recover(
  dir: string,
  opts?: IdentitySeam & { beforeRemove?: (() => unknown) | null | undefined },
): "clean" | "cleared";
export declare function stopTarget(dir: string, opts?: IdentitySeam): number | null;
export declare function clearPid(dir: string, pid: number): void;

/** A reader's answer in `status --json`, or its refusal. */
export type Answer<T> = { value: T } | { refused: string };
/** What is wrong with a line or turn record the readers refuse: "blank" is whitespace alone. */
export type Damage = "cut" | "zeros" | "blank" | "torn" | "invalid";

/** What `discord-journal status --json` prints (docs/command.md: "status --json"). */
/** A process another operation would wait for, from /proc (#44). */
export interface Holder {
  /** Its pid here; 0 where it cannot be seen from here ("hidden"). */
  pid: number;
  /**
   * "idle": asleep, no CPU time gained between two looks; "hidden": the lock
   * is held and no holder can be seen (another PID namespace); "unread": the
   * pid that took it is alive, and its descriptors may not be read here (#64).
   */
  state: "running" | "stopped" | "traced" | "frozen" | "idle" | "zombie" | "hidden" | "unread" | "unknown";
  /** Its command line, arguments joined by spaces, control and format characters escaped. */
  command: string;
  /** Stopped, traced, frozen or idle: it does not move, and does not finish on its own. */
  stalled: boolean;
  /** "pid N (state: command)". */
  is: string;
  /** The command that frees it (`kill -CONT N`, the freezer's thaw), or what to wait for. */
  fix: string;
  /** What a second look compares (#64): a thread runnable, the CPU time in nanoseconds (a decimal string), a thread held by a tracer. */
  busy: boolean;
  cpu: string;
  tracer: boolean;
  /** The guard's or an append lock's holders, every process of the open file that holds it (the first is this one). */
  all?: Holder[];
  /** A holder that moves: whether it still held the lock a moment later (#55). */
  lasting?: boolean;
}

export interface Status {
  verdict: {
    /** null: it could not be told. */
    canStart: boolean | null;
    state: "ready" | "crashed" | "running" | "braked" | "stuck" | "damaged" | "unreadable";
    why: string | null;
    /** The command to run next, in backticks. */
    next: string | null;
    /** What needs a hand; empty when nothing does. `blocks`: it keeps the connector from its work (a full or read-only file system, a file it may not read or replace), whatever the state. */
    problems: { what: string; fix: string; blocks?: true }[];
  };
  /** The directory, absolute. */
  journal: string;
  /** The directory is a symbolic link: where it leads. */
  journalLink?: string;
  /** Run as root: the user whose rights it read with. */
  acting?: string;
  /** journalLabel(dir); for a journal nested in another, where it lies in that one ("the journal beta inside discord/alpha under the data root"). */
  label: string;
  /** The UTC date, YYYY-MM-DD. */
  today: string;
  /** Who owns the journal: the user its service runs as. */
  owner: { uid: number; name: string | null };
  /** Only the record files that exist, by name. */
  files: Record<
    string,
    | { refused: string }
    | {
        lines: number;
        bytes: number;
        badLines: number;
        corrupt: boolean;
        /** No head where the file is a link out of the journal. */
        firstBadLine?: { line: number; offset: number; length: number; damage: Damage; head?: string };
        /** The first line that is JSON null (whole JSON, which a reader reading a field of each refuses). */
        nullLine?: number;
        unterminated: boolean;
      }
  >;
  turns:
    | { refused: string }
    | { notShown: string }
    | {
        records: number;
        badRecords: number;
        bad: { file: string; size: number; damage: Damage | null; refusal: string | null }[];
        /** The first turn record that is JSON null, by file name (countTurnsOn refuses it). */
        nullRecord?: string;
      };
  /** Oldest first. `intentAt` is the first line's `at` as read (any JSON value), null where it had none; `ageSeconds` is negative for a date ahead of this clock, null where `intentAt` is no date; `channel` is the line's `channel` where it is a string; `pastWindow`: older than the dedupe window (or no date), so a person's to tell (`resolve`). */
  unresolvedDeliveries:
    | Answer<
        {
          nonce: string;
          status: "intent" | "unknown";
          intentAt: unknown;
          channel: string | null;
          ageSeconds: number | null;
          pastWindow: boolean;
        }[]
      >
    | { count: number; notShown: string };
  /** notices: the kinds sent today. */
  onToday: { admissions: Answer<number>; turns: Answer<number> | { notShown: string }; notices: Answer<string[]> };
  /** The last line of reloads.jsonl, as read. */
  lastReload: unknown;
  /** readStop; present: STOP is a brake (stopRequested). */
  stop: { present: boolean } & (Answer<StopLine[]> | { lines: number; notShown: string });
  /** null: no run.lock. */
  lock: null | {
    owner: OwnerRecord | { notShown: string } | null;
    state: OwnerStateName;
    /** "unknown" because it is alive in a PID namespace below this one: its pid here. */
    elsewhere: number | null;
    /** false in a container (or with hidepid): an owner "dead" here may run elsewhere. */
    seesEveryProcess: boolean;
    /** The live owner is a repair (`discord-journal repair`), which holds the binding until it is done. */
    repair: boolean;
    /** The live owner is a zombie: dead, not reaped by its parent (which the kernel still counts as alive). */
    zombie: null | { pid: number; parent: null | { pid: number; command: string } };
    /** The live process holding run.lock marked (a flock), as the kernel shows it; null where none does. */
    holder: Holder | null;
  };
  /** The process holding the journal's lock guard (a start, release, unlock, recover or repair inside it), as the kernel shows it; null where none does. */
  guard: Holder | null;
  /** Each record file's append lock holder, by the file's name, where a process holds it (#55). */
  appendLocks: { [file: string]: Holder };
  /** The journal's own entries as the directory lists them; `links`: a file's names where it has more than one. */
  entries: Record<string, { kind: string; mode: string; uid: number; size: number; mtime: string; to?: string; links?: number }>;
  /** The quarantine files repairs left (<file>.aside-<UTC time>), kept for a person. */
  setAside: string[];
}
