// Types of discord-journal. The functions accept any JavaScript value, as
// journal.mjs does; the types describe the intended use.

/** A refusal: `exitCode` is the CLI exit status (1 failed, BRAKE_EXIT 3 a brake). */
export declare class DiscordError extends Error {
  constructor(message: string, exitCode?: number);
  name: "DiscordError";
  exitCode: number;
}

export type OutboxStatus = "intent" | "confirmed" | "refused" | "unknown";
export type OwnerStateName = "absent" | "invalid" | "dead" | "unknown" | "mismatch" | "live";
export interface Identity {
  start: string | null;
  boot: string | null;
}
export type OwnerRecord = { pid: number; start: string | null; boot: string | null } | { invalid: true };
export interface IdentitySeam {
  /** Test seam: the identity of a pid; defaults to `identityOf`. */
  identity?: (pid: number) => Identity;
}
export interface StopLine {
  at?: string;
  reason: string | null;
  [key: string]: unknown;
}
export type OutboxRecord = Record<string, unknown> & { nonce: string; status?: OutboxStatus; intentAt?: unknown };

export declare const OUTBOX_STATUS: readonly OutboxStatus[];
export declare const BRAKE_EXIT: 3;
export declare const RECOVER_REASON: "recover";
export declare const UNLOCK_HINT: string;

export declare function journalLabel(dir: unknown): string;
export declare function ensureJournal<D extends string>(dir: D): D;

export declare function appendInbox(dir: string, entry: { id: string; [key: string]: unknown }): void;
export declare function readInboxIds(dir: string): Set<string>;
export declare function appendOutbox(dir: string, entry: { nonce: string; status: OutboxStatus; [key: string]: unknown }): void;
export declare function readOutbox(dir: string): Map<string, OutboxRecord>;
export declare function unresolvedOutbox(dir: string): OutboxRecord[];
export declare function appendDrop(dir: string, entry: unknown): void;
export declare function readDrops(dir: string): unknown[];
export declare function appendAdmission(dir: string, entry: { id: string; at: string; [key: string]: unknown }): void;
export declare function countAdmissionsOn(dir: string, date: string): number;
export declare function utcDate(now: number | string | Date): string;
export declare function appendReload(dir: string, entry: { outcome: "applied" | "refused"; [key: string]: unknown }): void;
export declare function readReloads(dir: string): unknown[];
export declare function appendNotice(dir: string, entry: { kind: string; date: string; [key: string]: unknown }): void;
export declare function noticeOn(dir: string, kind: string, date: string): boolean;

export declare function turnPath(dir: string, id: string | number): string;
export declare function writeTurn(dir: string, id: string | number, record: object): string;
export declare function readTurn(dir: string, id: string | number): unknown;
export declare function listTurns(dir: string): unknown[];
export declare function countTurnsOn(dir: string, date: string): number;

export declare function stopPath(dir: string): string;
export declare function stopRequested(dir: string): boolean;
export declare function requestStop(dir: string, reason?: unknown): string;
export declare function requestProcessingStop(dir: string, generation: string): string;
export declare function clearProcessingStop(dir: string, generation: string): boolean;
export declare function clearStop(dir: string): void;
export declare function readStop(dir: string): StopLine[];

export declare function lockPath(dir: string): string;
export declare function ownerPath(dir: string): string;
export declare function validStart(v: unknown): boolean;
export declare function validBoot(v: unknown): boolean;
export declare function processStart(pid: number | string): string | null;
export declare function bootId(): string | null;
export declare function identityOf(pid: number | string): Identity;
export declare function readPid(dir: string): OwnerRecord | null;
export declare function pidAlive(pid: unknown): boolean;
export declare function ownerState(rec: OwnerRecord | null, opts?: IdentitySeam): OwnerStateName;
export declare function ownerAlive(rec: OwnerRecord | null, opts?: IdentitySeam): boolean;
export declare function writePid(dir: string, pid: number, opts?: IdentitySeam & { now?: number | string | Date }): void;
export declare function unlock(
  dir: string,
  opts?: IdentitySeam & { beforeRemove?: (() => unknown) | null; reason?: unknown },
): { pid: number; start: string | null; boot: string | null } | null | false;
export declare function recover(dir: string, opts?: IdentitySeam & { beforeRemove?: (() => unknown) | null }): "clean" | "cleared";
export declare function stopTarget(dir: string, opts?: IdentitySeam): number | null;
export declare function clearPid(dir: string, pid: number): void;
