// What a shipped macOS binary needs of the Mac that loads it (#24), checked
// here, where no Mac runs it: a 64-bit Mach-O dylib of the architecture its
// name says, for macOS 11 or earlier (Node 20's floor), needing libSystem
// alone, exporting napi_register_module_v1, leaving only N-API's own
// symbols to the process that loads it (anything else found that way would
// fail on the Mac alone, at the first call), stripped (no local or debug
// symbols), and, on arm64, carrying an ad-hoc code signature whose page
// hashes match the file (arm64 macOS kills a process that maps a page whose
// hash does not). Read from the file itself, so no Apple or LLVM tool is needed.
// Prints what it found; exits 1 on any failure.
//
//   node scripts/check-macho.mjs FILE...
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";

const MACOS_FLOOR = [11, 0];
const CPU = { x64: 0x01000007, arm64: 0x0100000c };
const LIBSYSTEM = "/usr/lib/libSystem.B.dylib";
const DYNAMIC_LOOKUP = 0xfe;

function check(file) {
  const problems = [];
  const b = readFileSync(file);
  const arch = /darwin-(x64|arm64)\.node$/.exec(basename(file))?.[1];
  if (!arch) return { problems: ["is not named discord-journal.darwin-{x64,arm64}.node"] };
  if (b.length < 32 || b.readUInt32LE(0) !== 0xfeedfacf) return { problems: ["is not a 64-bit Mach-O file"] };
  if (b.readUInt32LE(4) !== CPU[arch]) problems.push(`is not an ${arch} binary (cputype 0x${b.readUInt32LE(4).toString(16)})`);
  if (b.readUInt32LE(12) !== 6) problems.push("is not a dynamic library (MH_DYLIB)");

  const needed = [];
  let minos;
  let symtab;
  let signature;
  for (let i = 0, at = 32; i < b.readUInt32LE(16); i++) {
    const cmd = b.readUInt32LE(at);
    const size = b.readUInt32LE(at + 4);
    const cstr = (offset) => b.toString("latin1", at + offset, b.indexOf(0, at + offset));
    // LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB
    if ([0xc, 0x80000018, 0x8000001f, 0x20, 0x80000023].includes(cmd)) needed.push(cstr(b.readUInt32LE(at + 8)));
    // LC_BUILD_VERSION, LC_VERSION_MIN_MACOSX
    if (cmd === 0x32) minos = b.readUInt32LE(at + 12);
    if (cmd === 0x24) minos = b.readUInt32LE(at + 8);
    if (cmd === 0x2) symtab = { off: b.readUInt32LE(at + 8), n: b.readUInt32LE(at + 12), str: b.readUInt32LE(at + 16) };
    if (cmd === 0x1d) signature = { off: b.readUInt32LE(at + 8), size: b.readUInt32LE(at + 12) };
    at += size;
  }

  if (needed.join() !== LIBSYSTEM) problems.push(`needs ${needed.join(", ")}, not ${LIBSYSTEM} alone`);
  const version = minos === undefined ? undefined : [minos >>> 16, (minos >>> 8) & 0xff];
  if (!version) problems.push("names no minimum macOS version");
  else if (version[0] > MACOS_FLOOR[0] || (version[0] === MACOS_FLOOR[0] && version[1] > MACOS_FLOOR[1])) {
    problems.push(`needs macOS ${version.join(".")}, above the ${MACOS_FLOOR.join(".")} floor`);
  }

  const exported = [];
  const local = [];
  const lookedUp = [];
  if (!symtab) problems.push("has no symbol table");
  else {
    for (let i = 0; i < symtab.n; i++) {
      const at = symtab.off + i * 16;
      const strx = b.readUInt32LE(at);
      const type = b[at + 4];
      const name = b.toString("latin1", symtab.str + strx, b.indexOf(0, symtab.str + strx));
      if (type & 0xe0)
        local.push(name); // N_STAB: debug information
      else if ((type & 0x0e) === 0x0e)
        (type & 0x01 ? exported : local).push(name); // N_SECT
      else if ((type & 0x0e) === 0 && type & 0x01 && b[at + 7] === DYNAMIC_LOOKUP) lookedUp.push(name);
    }
  }
  if (!exported.includes("_napi_register_module_v1")) problems.push("does not export napi_register_module_v1");
  if (local.length) problems.push(`is not stripped (${local.length} local or debug symbols)`);
  const strays = lookedUp.filter((s) => !/^_(napi|node_api)_/.test(s));
  if (strays.length) problems.push(`leaves ${strays.join(", ")} to be found at load time (only N-API's symbols may be)`);

  // arm64 macOS maps no unsigned code; Apple's linker, like ld64.lld, signs
  // arm64 output and leaves x64 unsigned.
  let signed = "unsigned";
  if (!signature) {
    if (arch === "arm64") problems.push("has no code signature (arm64 macOS loads none without one)");
  } else {
    const why = verifySignature(b, signature);
    if (why) problems.push(why);
    else signed = "ad-hoc signature verified";
  }
  const summary = `Mach-O ${arch}, macOS ${version?.join(".") ?? "?"} or later, needs ${needed.join(" ")}, exports ${exported.length} (${exported.join(" ")}), ${lookedUp.length} N-API symbols looked up, ${b.length} bytes, stripped, ${signed}`;
  return { problems, summary };
}

// The code directory's hash of every page up to its code limit, which must
// be where the signature starts (nothing unsigned before it).
function verifySignature(b, { off, size }) {
  if (off + size > b.length || b.readUInt32BE(off) !== 0xfade0cc0) return "has a code signature that is not a SuperBlob";
  for (let i = 0; i < b.readUInt32BE(off + 8); i++) {
    const slot = b.readUInt32BE(off + 12 + i * 8);
    if (slot !== 0) continue; // CSSLOT_CODEDIRECTORY
    const cd = off + b.readUInt32BE(off + 16 + i * 8);
    if (b.readUInt32BE(cd) !== 0xfade0c02) return "has a code signature with no code directory";
    const flags = b.readUInt32BE(cd + 12);
    const hashOffset = b.readUInt32BE(cd + 16);
    const slots = b.readUInt32BE(cd + 28);
    const limit = b.readUInt32BE(cd + 32);
    const hashSize = b[cd + 36];
    const hashType = b[cd + 37];
    const page = 2 ** b[cd + 39];
    if (!(flags & 0x2)) return "has a code signature that is not ad-hoc";
    if (hashType !== 2 || hashSize !== 32) return `has a code signature hashed with type ${hashType}, not SHA-256`;
    if (limit !== off) return `has a code signature covering ${limit} bytes, not the ${off} before it`;
    if (slots !== Math.ceil(limit / page)) return `has a code signature of ${slots} pages for ${limit} bytes`;
    for (let p = 0; p < slots; p++) {
      const want = b.subarray(cd + hashOffset + p * 32, cd + hashOffset + (p + 1) * 32);
      const got = createHash("sha256")
        .update(b.subarray(p * page, Math.min((p + 1) * page, limit)))
        .digest();
      if (!got.equals(want)) return `has a code signature whose hash of page ${p} does not match (changed after signing?)`;
    }
    return undefined;
  }
  return "has a code signature with no code directory";
}

let failed = false;
for (const file of process.argv.slice(2)) {
  let r;
  try {
    r = check(file);
  } catch (e) {
    r = { problems: [`cannot be read: ${e.message}`] };
  }
  for (const p of r.problems) console.error(`${file}: ${p}`);
  if (r.problems.length) failed = true;
  else console.log(`${file}: ${r.summary}`);
}
process.exitCode = failed ? 1 : 0;
