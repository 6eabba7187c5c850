// The project's odd-argument cases, for the shared parity runner; they live
// with `discord-journal verify`, which plays them too:
//
//   node ../shared/parity/run.mjs --candidate ./index.js --cases parity/cases.mjs --sequences 0
//
// A case kept as a choice (`known`: a turn record that cannot be serialised
// leaves no file, #37) is left to `verify`, which reports it as known; the
// shared runner knows no such thing, and every case here must match.
import { cases as all } from "../cli/verify/odd.js";

export const cases = all.filter((c) => !c.known);
