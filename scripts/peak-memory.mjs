#!/usr/bin/env node
// The peak memory of a command and every process it starts (#48): `node
// scripts/peak-memory.mjs -- npm test`. Every 50 ms it sums the resident
// set (VmRSS) of the whole tree below the command, read from /proc, and
// prints the highest sum seen, the process that was largest then, and the
// largest single process (what `/usr/bin/time -v` reports as "Maximum
// resident set size": the biggest one process, never the tree). A sum of
// RSS counts the pages processes share (Node's own code) once per process,
// so it is an upper bound of what the tree held. Linux only. A spike
// shorter than the interval can be missed; the single largest process is
// exact, from the kernel's own high-water mark (VmHWM) of each process.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const args = process.argv.slice(2);
const at = args.indexOf("--");
const command = at === -1 ? args : args.slice(at + 1);
if (command.length === 0) {
  process.stderr.write("usage: node scripts/peak-memory.mjs -- COMMAND [ARG...]\n");
  process.exit(2);
}

const field = (status, name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;

/** Every live process: pid → { ppid, rss, hwm, name }. */
function processes() {
  const all = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      all.set(Number(entry), {
        ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]),
        rss: field(status, "VmRSS"),
        hwm: field(status, "VmHWM"),
        name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? "?",
      });
    } catch {
      // gone between the listing and the read
    }
  }
  return all;
}

/** The processes below `root`, itself included. */
function tree(all, root) {
  const below = new Map([[root, all.get(root)]].filter(([, p]) => p));
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, p] of all) {
      if (!below.has(pid) && below.has(p.ppid)) {
        below.set(pid, p);
        grew = true;
      }
    }
  }
  return below;
}

const child = spawn(command[0], command.slice(1), { stdio: "inherit" });
let peak = { sum: 0, count: 0, largest: null };
let single = { hwm: 0, name: "" };
const sample = () => {
  const below = tree(processes(), child.pid);
  let sum = 0;
  let largest = null;
  for (const [pid, p] of below) {
    sum += p.rss;
    if (!largest || p.rss > largest.rss) largest = { pid, ...p };
    if (p.hwm > single.hwm) single = { hwm: p.hwm, name: p.name, pid };
  }
  if (sum > peak.sum) peak = { sum, count: below.size, largest };
};
const timer = setInterval(sample, 50);
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
child.on("exit", (code, signal) => {
  clearInterval(timer);
  process.stderr.write(
    `peak-memory: the tree's peak RSS ${mb(peak.sum)} (${peak.count} processes; largest then ${peak.largest?.name} ${mb(peak.largest?.rss ?? 0)}); ` +
      `the largest single process ${mb(single.hwm)} (${single.name}, its own high-water mark)\n`,
  );
  process.exitCode = signal ? 1 : code;
});
