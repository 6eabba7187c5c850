// Runs one role of reliability/worker.mjs in a child process, for the
// reliability suite's files: resolves with the role's last JSON line,
// rejects with its stderr when it exits otherwise than 0.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const worker = fileURLToPath(new URL("worker.mjs", import.meta.url));

/** Runs one worker role to its end; resolves with its JSON result. */
export function run(role, dir, ...args) {
  return runWith(process.env.JOURNAL_MODULE, role, dir, ...args);
}

/** `run`, with the module the worker loads (undefined: this package). */
export function runWith(module, role, dir, ...args) {
  const env = { ...process.env };
  if (module === undefined) delete env.JOURNAL_MODULE;
  else env.JOURNAL_MODULE = module;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", worker, role, dir, ...args.map(String)], {
      stdio: ["ignore", "pipe", "pipe"],
      env,
    });
    let out = "",
      err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop())) : reject(new Error(`${role} exited ${code}: ${err}`)),
    );
  });
}
