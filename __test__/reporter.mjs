// The suite's reporter for `npm test` (#48): a line for each test as it
// ends, under its file's name, so that a long file shows its progress; a
// line every 15 s naming the test still running where none ended; each
// failure's error where it happens and again at the end; and a summary.
// The lines the tests print (`# figure …`) pass through. Colour on a
// terminal, unless NO_COLOR is set. Node's own reporters stay at hand:
// `npm test -- --test-reporter=tap` (or spec) uses theirs instead.
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";

const colour = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code) => (s) => (colour ? `\x1b[${code}m${s}\x1b[0m` : s);
const green = paint(32);
const red = paint(31);
const grey = paint(90);
const yellow = paint(33);

const HEARTBEAT = 15_000;

/** A duration as a reader takes it in: 85 ms, 4.1 s, 2 min 5 s. */
export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

const indent = (text, by) =>
  text
    .split("\n")
    .map((l) => by + l)
    .join("\n");

/** What failed, as the test's author wants to read it: the assertion's own error, not the runner's wrapper. */
function errorText(error) {
  const e = error?.cause ?? error;
  if (e === undefined) return "(no error)";
  if (typeof e !== "object" || e === null) return String(e);
  // The runner's own frames say nothing about the test.
  return inspect(e, { depth: 4, colors: false }).replace(
    /\n\s+at (?:[^\n]*\(node:[^)\n]*\)|node:[^\n]*?|async Promise\.all \(index \d+\))( \{)?$/gm,
    (_, brace) => brace ?? "",
  );
}

/** A test file as one path: Node 24 names it relative in some events, absolute in others. */
const fileOf = (f) => (f ? resolve(f.startsWith("file:") ? fileURLToPath(f) : f) : null);
/** Whether an event is a file's own (a process of its own): its name is the file. */
const isFile = (data) => data.file !== undefined && fileOf(data.name) === fileOf(data.file);

/** The reporter, with a line every `heartbeat` ms while a test runs and none ended. */
export function reporterWith({ heartbeat = HEARTBEAT } = {}) {
  return (source) => report(source, heartbeat);
}
export default reporterWith();

async function* report(source, heartbeat) {
  const started = Date.now();
  // The tests under way, by nesting, as the runner reports them: a name,
  // and whether it was printed as a heading (a suite, or a test with
  // subtests, once the first of them ends).
  const open = [];
  const failures = [];
  const counts = { pass: 0, fail: 0, skipped: 0, todo: 0, cancelled: 0 };
  const summary = new Map();
  const files = new Set();
  let file = null;
  // What is under way, as the runner dequeued it: key → { name, since }.
  const running = new Map();
  const keyOf = (data) => `${fileOf(data.file) ?? ""}\0${data.nesting}\0${data.name}`;
  let lastLine = Date.now();
  // Lines waiting to be yielded: the heartbeat adds to them between events.
  const queue = [];
  let wake = null;
  const say = (line) => {
    queue.push(`${line}\n`);
    lastLine = Date.now();
    wake?.();
  };
  const timer = setInterval(
    () => {
      const current = [...running.values()].at(-1);
      if (current && Date.now() - lastLine >= heartbeat)
        say(grey(`  … ${current.name}: running for ${duration(Date.now() - current.since)}`));
    },
    Math.min(heartbeat, 1000),
  );
  timer.unref();

  const heading = (event) => {
    const f = fileOf(event.data?.file);
    if (!f || f === file) return;
    file = f;
    files.add(f);
    say(`${relative(process.cwd(), f) || f}`);
  };

  const pathOf = (data) => [...open.slice(0, data.nesting).map((o) => o.name), data.name].join(" › ");
  /** Prints the headings above a test that ends, each once. */
  const headings = (nesting) => {
    for (let i = 0; i < nesting; i++) {
      if (open[i] && !open[i].shown) {
        open[i].shown = true;
        say(`${"  ".repeat(i + 1)}${open[i].name}`);
      }
    }
  };

  const events = (async function* () {
    for await (const event of source) yield event;
  })();
  let next = events.next();
  for (;;) {
    while (queue.length) yield queue.shift();
    const tick = new Promise((resolve) => (wake = resolve));
    const got = await Promise.race([next, tick.then(() => null)]);
    wake = null;
    if (got === null) continue;
    if (got.done) break;
    next = events.next();
    const { type, data } = got.value;
    switch (type) {
      case "test:dequeue":
        if (isFile(data)) heading(got.value);
        running.set(keyOf(data), { name: isFile(data) ? relative(process.cwd(), fileOf(data.name)) : data.name, since: Date.now() });
        break;
      case "test:complete":
        running.delete(keyOf(data));
        break;
      case "test:start":
        heading(got.value);
        open[data.nesting] = { name: data.name, shown: false };
        open.length = data.nesting + 1;
        break;
      case "test:pass":
      case "test:fail": {
        heading(got.value);
        // A file's own result, run in a process of its own, says nothing more.
        if (isFile(data)) break;
        const suite = data.details?.type === "suite";
        const ms = data.details?.duration_ms ?? 0;
        const pad = "  ".repeat(data.nesting + 1);
        const where = pathOf(data);
        headings(data.nesting);
        const shown = open[data.nesting]?.name === data.name && open[data.nesting].shown;
        if (type === "test:fail" && !suite) {
          counts.fail++;
          const error = errorText(data.details?.error);
          failures.push({ where: `${relative(process.cwd(), fileOf(data.file) ?? "")}: ${where}`, error });
          say(`${pad}${red("✖")} ${data.name} ${grey(`(${duration(ms)})`)}`);
          say(red(indent(error.split("\n").slice(0, 12).join("\n"), `${pad}  `)));
        } else if (type === "test:fail") {
          // A suite fails for its tests (said above) or on its own (a hook).
          if (data.details?.error?.failureType !== "subtestsFailed") {
            counts.fail++;
            const error = errorText(data.details?.error);
            failures.push({ where: `${relative(process.cwd(), fileOf(data.file) ?? "")}: ${where}`, error });
            say(`${pad}${red("✖")} ${data.name}: ${red(error.split("\n")[0])}`);
          }
        } else if (data.skip !== undefined) {
          counts.skipped++;
          say(`${pad}${yellow("-")} ${data.name} ${yellow(`(skipped${typeof data.skip === "string" ? `: ${data.skip}` : ""})`)}`);
        } else if (data.todo !== undefined) {
          counts.todo++;
          say(`${pad}${yellow("-")} ${data.name} ${yellow("(todo)")}`);
        } else if (suite || shown) {
          // Its heading is above its tests; its time closes it.
          say(`${pad}${grey(`(${data.name}: ${duration(ms)})`)}`);
        } else {
          counts.pass++;
          say(`${pad}${green("✔")} ${data.name} ${grey(`(${duration(ms)})`)}`);
        }
        running.delete(keyOf(data));
        break;
      }
      case "test:stdout":
      case "test:stderr":
        heading(got.value);
        for (const line of String(data.message).split("\n")) if (line.trim()) say(`    ${line.replace(/^# /, "")}`);
        break;
      case "test:diagnostic":
        if (data.nesting === 0 && !data.file) {
          const m = /^(\w+) ([\d.]+)$/.exec(data.message);
          if (m) summary.set(m[1], Number(m[2]));
          else say(grey(data.message));
        }
        break;
      default:
        break;
    }
  }
  clearInterval(timer);
  while (queue.length) yield queue.shift();

  if (failures.length) {
    yield `\n${red(`${failures.length} failed:`)}\n`;
    for (const f of failures) yield `\n${red("✖")} ${f.where}\n${indent(f.error, "    ")}\n`;
  }
  const n = (k) => summary.get(k) ?? counts[k];
  const tests = summary.get("tests") ?? counts.pass + counts.fail + counts.skipped + counts.todo;
  const line =
    `${plural(tests, "test")} in ${plural(files.size, "file")}, ${duration(summary.get("duration_ms") ?? Date.now() - started)}: ` +
    `${n("pass")} passed, ${n("fail")} failed, ${n("skipped")} skipped` +
    (n("todo") ? `, ${n("todo")} todo` : "") +
    (n("cancelled") ? `, ${n("cancelled")} cancelled` : "");
  yield `\n${n("fail") || n("cancelled") ? red(line) : green(line)}\n`;
}
