// The package's types against the runtime (#37): tsc checks
// __test__/types/uses.ts (uses that must compile, and @ts-expect-error
// lines the runtime refuses or answers otherwise, each of which must fail
// to compile) and journal.mjs's own idioms in a // @ts-check file, under
// strict and exactOptionalPropertyTypes, once per module resolution a host
// may use: node16, nodenext and bundler. The types are this package's, so
// the file skips against another implementation, and where TypeScript (a
// devDependency) is not installed.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { isAddon, scratch } from "./helpers.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const skip = !isAddon ? "the types are this package's own" : existsSync(tsc) ? false : "TypeScript (a devDependency) is not installed";

const SETTINGS = {
  node16: { module: "node16", moduleResolution: "node16" },
  nodenext: { module: "nodenext", moduleResolution: "nodenext" },
  bundler: { module: "esnext", moduleResolution: "bundler" },
};

describe("the types, checked by tsc against uses the runtime takes and refuses", { skip }, () => {
  for (const [name, resolution] of Object.entries(SETTINGS)) {
    test(`${name}: strict, exactOptionalPropertyTypes`, () => {
      const dir = scratch("discord-journal-types-");
      const config = join(dir, "tsconfig.json");
      writeFileSync(
        config,
        JSON.stringify({
          compilerOptions: {
            ...resolution,
            target: "es2022",
            lib: ["es2022"],
            strict: true,
            exactOptionalPropertyTypes: true,
            noUncheckedIndexedAccess: true,
            allowJs: true,
            checkJs: true,
            noEmit: true,
            skipLibCheck: false,
            types: [],
          },
          files: [join(root, "__test__", "types", "uses.ts"), join(root, "__test__", "types", "idioms.mjs")],
        }),
      );
      const r = spawnSync(process.execPath, [tsc, "-p", config, "--pretty", "false"], { encoding: "utf8", timeout: 120_000 });
      assert.equal(r.status, 0, r.stdout + r.stderr);
    });
  }
});
