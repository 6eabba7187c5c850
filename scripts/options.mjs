// The rules the project's scripts (bench, memory, the fuzzer) share for
// their options (#13): a usage mistake exits 2 with its message and the
// script's usage line, before anything runs, so a typo never runs a
// different benchmark or a fuzz run of no case; a count is digits only
// (`10k`, `1,000` and `1e3` are refused, not read as NaN or 1).

/** The script's usage mistake: prints `script: message` and `line`, exits 2. */
export function usageOf(script, line) {
  return (message) => {
    console.error(`${script}: ${message}\n${line}`);
    process.exit(2);
  };
}

/** A count of digits only, at least `min`, or the usage mistake. */
export function countOf(usage) {
  return (name, text, min = 1) => {
    const n = Number(text);
    if (!/^[0-9]+$/.test(text) || n < min || !Number.isSafeInteger(n)) {
      usage(`--${name} takes a whole number of at least ${min} (digits only), not ${JSON.stringify(text)}`);
    }
    return n;
  };
}
