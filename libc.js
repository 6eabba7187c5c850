// The C library this Node runs on (#11), for binding.js to load the build
// made for it and scripts/ensure-binary.js to name the build it makes.
"use strict";

const fs = require("node:fs");

// The C library Node itself runs on, from its own binary: the dynamic loader
// named in its PT_INTERP (musl's is ld-musl-<arch>.so.1). Two small reads
// of the binary (its program headers, then that name), exact where a
// file's presence (/lib/ld-musl-*, which Debian's musl package installs
// beside glibc), /usr/bin/ldd's text or process.report (which costs
// milliseconds) would only guess. undefined when the binary cannot be read
// or names no loader.
function libcOfNode() {
  let fd;
  try {
    fd = fs.openSync(process.execPath, "r");
    const b = Buffer.alloc(4096);
    const n = fs.readSync(fd, b, 0, b.length, 0);
    // A 64-bit little-endian ELF file, as Node is on x64 and arm64.
    if (n < 64 || b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return undefined;
    const phoff = Number(b.readBigUInt64LE(32));
    const size = b.readUInt16LE(54);
    for (let i = 0, at = phoff; i < b.readUInt16LE(56) && at + 56 <= n; i++, at += size) {
      if (b.readUInt32LE(at) !== 3) continue; // PT_INTERP
      const offset = Number(b.readBigUInt64LE(at + 8));
      const length = Number(b.readBigUInt64LE(at + 32));
      if (length > 4096) return undefined;
      // Usually in the first page; patchelf (as auditwheel runs it) moves
      // it to the end of the file.
      const name = Buffer.alloc(length);
      if (fs.readSync(fd, name, 0, length, offset) !== length) return undefined;
      return name.toString("latin1").includes("/ld-musl-") ? "musl" : "gnu";
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

module.exports = { libcOfNode };
