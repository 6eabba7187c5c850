// A Worker whose module top level calls the journal's exports in a loop
// until it is terminated (terminate.test.mjs). It never yields: only a
// termination stops it.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { parentPort, workerData } from "node:worker_threads";

const { modulePath, dir, kind, counter } = workerData;
// Loop iterations completed, for the test to count those after terminate().
const done = new Int32Array(counter);
const M = modulePath.endsWith(".mjs") ? await import(pathToFileURL(modulePath).href) : createRequire(import.meta.url)(modulePath);

const GEN = "0b9c7a52-4e1f-4d2a-9c3b-6f1e2d3c4b5a";
const identity = () => ({ start: "1", boot: "00000000-0000-4000-8000-000000000000" });
const record = { pid: process.pid, start: "1", boot: "00000000-0000-4000-8000-000000000000" };

parentPort.postMessage("looping");
for (let i = 0; ; i++) {
  if (kind === "reads") {
    M.readDrops(dir);
    M.listTurns(dir);
    M.readStop(dir);
    M.readOutbox(dir);
    M.unresolvedOutbox(dir);
    M.readInboxIds(dir);
    M.readReloads(dir);
    M.readTurn(dir, "t0");
    M.countAdmissionsOn(dir, "2021-01-01");
    M.countTurnsOn(dir, "2021-01-01");
    M.noticeOn(dir, "ceiling", "2021-01-01");
    M.readPid(dir);
    M.stopRequested(dir);
    M.stopTarget(dir, { identity });
    M.ownerState(record, { identity });
  } else if (kind === "big") {
    M.readTurn(dir, "t0");
  } else if (kind === "turns") {
    M.writeTurn(dir, `w${i}`, { startedAt: "2021-01-01T00:00:00.000Z", n: i });
  } else {
    M.appendDrop(dir, { n: i, at: "2021-01-01T00:00:00.000Z" });
    M.appendInbox(dir, { id: `m${i}` });
    M.appendOutbox(dir, { nonce: `n${i}`, status: "intent", at: "2021-01-01T00:00:00.000Z" });
    M.writeTurn(dir, `w${i}`, { startedAt: "2021-01-01T00:00:00.000Z", n: i });
    M.requestProcessingStop(dir, GEN);
    M.clearProcessingStop(dir, GEN);
  }
  done[0] = i + 1;
}
