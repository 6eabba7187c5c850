// The environment of a host's machine, for the install checks
// (check-install.mjs, check-readme.mjs): PATH without any directory that
// holds cargo or rustc, and none of Rust's own variables, so an install
// that would build from source fails as it would there.
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, dirname, join } from "node:path";

/** Whether `dir` holds the executable `exe`. */
function has(dir, exe) {
  try {
    accessSync(join(dir, exe), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `process.env` without Rust, with `first` and this Node's directory
 * before the rest of PATH (Node and npm must stay reachable, so they may
 * not share a directory with cargo). Throws where cargo is still reachable.
 */
export function withoutRust(first = []) {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter((d) => d && !has(d, "cargo") && !has(d, "rustc"));
  const env = { ...process.env, PATH: [...first, dirname(process.execPath), ...dirs].join(delimiter) };
  for (const k of ["CARGO", "RUSTC", "CARGO_HOME", "RUSTUP_HOME", "CARGO_TARGET_DIR"]) delete env[k];
  if (!spawnSync("cargo", ["--version"], { env }).error) throw new Error("cargo is still reachable with Rust's directories taken off PATH");
  return env;
}
