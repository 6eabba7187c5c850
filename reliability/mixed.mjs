// Mixed deployments (#44, docs/lock.md): during an upgrade the connector may
// run this package while a supervisor still runs journal.mjs's `recover`, or
// the reverse. Side by side in one run, on the file system of the temporary
// directory, each mix plays rounds of 3 claimers and 2 recovers for 3 s on a
// fresh journal (rounds of the mixes interleaved, so that load falls alike):
// claims that stood, standing claims that lost their lock (per 1,000), and
// rounds that ended with a run.lock no process holds (orphaned).
//
// `node reliability/mixed.mjs [--rounds N] [--reference PATH]`
import { existsSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { runWith } from "./run.mjs";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "10" },
    reference: {
      type: "string",
      default: fileURLToPath(new URL("../../shared/spec/reference/stack/packages/discord/src/journal.mjs", import.meta.url)),
    },
  },
});
const reference = resolve(values.reference);
if (!existsSync(reference)) {
  console.error(`no journal.mjs at ${reference} (--reference PATH)`);
  process.exit(2);
}
const addon = undefined;
const mixes = [
  { name: "journal.mjs claimers, journal.mjs recovers", claim: reference, recover: reference },
  { name: "addon claimers, journal.mjs recovers", claim: addon, recover: reference },
  { name: "journal.mjs claimers, addon recovers", claim: reference, recover: addon },
  { name: "addon claimers, addon recovers", claim: addon, recover: addon },
];

/** One round of a mix: what its claimers and recovers did, and whether run.lock was left. */
export async function round(mix, top) {
  const dir = mkdtempSync(join(top, "mix-"));
  const runs = [
    ...Array.from({ length: 3 }, () => runWith(mix.claim, "claim", dir, 3000, 5)),
    ...Array.from({ length: 2 }, () => runWith(mix.recover, "recover", dir, 3000)),
  ];
  const results = await Promise.all(runs);
  const claims = results.slice(0, 3);
  const r = {
    stood: claims.reduce((n, c) => n + c.stood.length, 0),
    lost: claims.reduce((n, c) => n + c.lost, 0),
    refusedReleases: claims.reduce((n, c) => n + c.releases.length, 0),
    orphaned: existsSync(join(dir, "run.lock")),
  };
  rmSync(dir, { recursive: true, force: true });
  return r;
}

const top = mkdtempSync(join(tmpdir(), "discord-journal-mixed-"));
const fsType = statfsSync(top).type;
const totals = mixes.map(() => ({ stood: 0, lost: 0, refusedReleases: 0, orphaned: 0 }));
const rounds = Number(values.rounds);
for (let i = 0; i < rounds; i++)
  for (const [m, mix] of mixes.entries()) {
    const r = await round(mix, top);
    const t = totals[m];
    t.stood += r.stood;
    t.lost += r.lost;
    t.refusedReleases += r.refusedReleases;
    t.orphaned += r.orphaned ? 1 : 0;
  }
rmSync(top, { recursive: true, force: true });
console.log(`file system type 0x${fsType.toString(16)}, ${rounds} rounds of 3 claimers and 2 recovers for 3 s per mix`);
console.log("| mix | claims stood | standing claims lost | per 1,000 | releases refused | rounds leaving run.lock |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
for (const [m, mix] of mixes.entries()) {
  const t = totals[m];
  console.log(
    `| ${mix.name} | ${t.stood} | ${t.lost} | ${((1000 * t.lost) / Math.max(1, t.stood)).toFixed(2)} | ${t.refusedReleases} | ${t.orphaned} of ${rounds} |`,
  );
}
