// The project's odd-argument cases, for the shared parity runner; they live
// with `discord-journal verify`, which plays them too:
//
//   node ../shared/parity/run.mjs --candidate ./index.js --cases parity/cases.mjs --sequences 0
export { cases } from "../cli/verify/odd.mjs";
