// The sweep's picture (#47, docs/sweep.svg), written as a plain string so
// that the benchmark needs no dependency: small multiples, one panel per
// row, both axes logarithmic, each panel its own milliseconds (the rows
// differ by a thousand times) and every panel the same sizes, so that a
// slope reads the same everywhere: 1 where a call costs what the journal
// holds, 0 where it costs what was appended.

const WIDTH = 900;
const COLUMNS = 2;
const HEAD = 78;
const PANEL_H = 250;
const PAD = { left: 62, right: 18, top: 34, bottom: 46 };

export const SERIES = [
  { key: "ours", label: "ours (the addon)", color: "#1f5fbf", dash: "", mark: "circle" },
  { key: "floor", label: "floor", color: "#444444", dash: "6 4", mark: "square" },
  { key: "theirs", label: "journal.mjs", color: "#d4600b", dash: "2 3", mark: "triangle" },
  // The same reader when the connector's readers take turns (#66).
  { key: "turn", label: "ours, readers in turn", color: "#2a9d4b", dash: "", mark: "square" },
];
const OVER = "#d01c1c";

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const num = (v) => (Math.round(v * 10) / 10).toString();
/** 1,000 as 1k, 1,000,000 as 1M. */
export const short = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));
/** A power of ten in milliseconds as its tick label: 0.01, 1, 1000. */
const msLabel = (e) => (e < 0 ? (10 ** e).toFixed(-e) : String(10 ** e));

function mark(kind, x, y, color) {
  const p = `fill="${color}" stroke="#fff" stroke-width="1"`;
  if (kind === "circle") return `<circle cx="${num(x)}" cy="${num(y)}" r="3.6" ${p}/>`;
  if (kind === "square") return `<rect x="${num(x - 3.2)}" y="${num(y - 3.2)}" width="6.4" height="6.4" ${p}/>`;
  return `<path d="M${num(x)},${num(y - 4.4)} L${num(x + 4)},${num(y + 3)} L${num(x - 4)},${num(y + 3)} Z" ${p}/>`;
}

/** A whisker at x from y `from` up to y `to`, capped. */
function whisker(x, from, to) {
  const c = SERIES[0].color;
  return `<path d="M${num(x)},${num(from)} V${num(to)} M${num(x - 4)},${num(to)} H${num(x + 4)}" stroke="${c}" stroke-width="1.4" fill="none"/>`;
}

/**
 * One panel at (x0, y0): `title`, a `note` under it, a `corner` note in
 * the plot; `points` are { x, ours, slowest, floor, theirs, over }, a
 * missing figure null; `sizes` are the x ticks, labelled.
 */
function panel(p, x0, y0, w, h, sizes) {
  const out = [];
  const pw = w - PAD.left - PAD.right;
  const ph = h - PAD.top - PAD.bottom;
  const left = x0 + PAD.left;
  const top = y0 + PAD.top;
  const lx = [Math.log10(sizes[0]), Math.log10(sizes.at(-1))];
  const values = p.points.flatMap((q) => [...SERIES.map((s) => q[s.key]), q.slowest]).filter((v) => v > 0);
  const ly = values.length ? [Math.floor(Math.log10(Math.min(...values))), Math.ceil(Math.log10(Math.max(...values)))] : [0, 1];
  if (ly[1] === ly[0]) ly[1] += 1;
  const X = (v) => left + ((Math.log10(v) - lx[0]) / (lx[1] - lx[0])) * pw;
  const Y = (v) => top + ph - ((Math.log10(v) - ly[0]) / (ly[1] - ly[0])) * ph;
  out.push(`<text x="${num(x0 + 10)}" y="${num(y0 + 14)}" class="title">${esc(p.title)}</text>`);
  if (p.note) out.push(`<text x="${num(x0 + 10)}" y="${num(y0 + 27)}" class="note">${esc(p.note)}</text>`);
  out.push(`<rect x="${num(left)}" y="${num(top)}" width="${num(pw)}" height="${num(ph)}" class="frame"/>`);
  // Small sizes and long calls: the corner no line of a reader reaches.
  if (p.corner) out.push(`<text x="${num(left + 6)}" y="${num(top + 13)}" class="note">${esc(p.corner)}</text>`);
  for (let e = ly[0]; e <= ly[1]; e++) {
    const y = Y(10 ** e);
    if (e > ly[0] && e < ly[1]) out.push(`<line x1="${num(left)}" x2="${num(left + pw)}" y1="${num(y)}" y2="${num(y)}" class="grid"/>`);
    out.push(`<line x1="${num(left - 4)}" x2="${num(left)}" y1="${num(y)}" y2="${num(y)}" class="tick"/>`);
    out.push(`<text x="${num(left - 7)}" y="${num(y + 3.5)}" class="ylab">${msLabel(e)}</text>`);
    // Unlabelled ticks at 2 to 9 times the decade below the next.
    if (e < ly[1])
      for (let k = 2; k < 10; k++) {
        const yk = Y(k * 10 ** e);
        out.push(`<line x1="${num(left - 2)}" x2="${num(left)}" y1="${num(yk)}" y2="${num(yk)}" class="tick"/>`);
      }
  }
  for (const s of sizes) {
    const x = X(s);
    if (s !== sizes[0] && s !== sizes.at(-1))
      out.push(`<line x1="${num(x)}" x2="${num(x)}" y1="${num(top)}" y2="${num(top + ph)}" class="grid"/>`);
    out.push(`<line x1="${num(x)}" x2="${num(x)}" y1="${num(top + ph)}" y2="${num(top + ph + 4)}" class="tick"/>`);
    out.push(`<text x="${num(x)}" y="${num(top + ph + 16)}" class="xlab">${short(s)}</text>`);
  }
  out.push(`<text x="${num(left + pw / 2)}" y="${num(top + ph + 34)}" class="axis">${esc(p.xLabel)}</text>`);
  const ym = top + ph / 2;
  out.push(`<text x="${num(x0 + 14)}" y="${num(ym)}" class="axis" transform="rotate(-90 ${num(x0 + 14)} ${num(ym)})">ms per call</text>`);
  // Ours's slowest warm call, a whisker up from its median.
  for (const q of p.points) if (q.ours > 0 && q.slowest > q.ours) out.push(whisker(X(q.x), Y(q.ours), Y(q.slowest)));
  for (const s of SERIES) {
    // A line through consecutive figures; a size not timed breaks it.
    let run = [];
    const flush = () => {
      if (run.length > 1)
        out.push(
          `<polyline points="${run.map(([x, y]) => `${num(x)},${num(y)}`).join(" ")}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""}/>`,
        );
      run = [];
    };
    for (const q of p.points) {
      if (q[s.key] > 0) run.push([X(q.x), Y(q[s.key])]);
      else flush();
    }
    flush();
    for (const q of p.points) if (q[s.key] > 0) out.push(mark(s.mark, X(q.x), Y(q[s.key]), s.color));
  }
  for (const q of p.points)
    if (q.over && q.ours > 0)
      out.push(`<circle cx="${num(X(q.x))}" cy="${num(Y(q.ours))}" r="7" fill="none" stroke="${OVER}" stroke-width="1.6"/>`);
  return out.join("\n");
}

/**
 * The whole picture: `title` and `subtitle` above a legend, then `panels`
 * ({ title, note, corner, xLabel, points }) two to a line, x ticks at
 * `sizes`; journal.mjs in the legend where `theirs`.
 */
export function sweepSvg({ title, subtitle, panels, sizes, theirs }) {
  const lines = Math.ceil(panels.length / COLUMNS);
  const height = HEAD + lines * PANEL_H + 8;
  const w = WIDTH / COLUMNS;
  const body = panels.map((p, i) => panel(p, (i % COLUMNS) * w, HEAD + Math.floor(i / COLUMNS) * PANEL_H, w, PANEL_H, sizes));
  const legend = [];
  let lx = PAD.left;
  for (const s of SERIES.filter((s) => theirs || s.key !== "theirs")) {
    legend.push(
      `<line x1="${lx}" x2="${lx + 30}" y1="60" y2="60" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""}/>`,
      mark(s.mark, lx + 15, 60, s.color),
      `<text x="${lx + 38}" y="64" class="legend">${esc(s.label)}</text>`,
    );
    lx += 48 + s.label.length * 7;
  }
  legend.push(
    whisker(lx + 8, 66, 53),
    `<text x="${lx + 18}" y="64" class="legend">ours, slowest call</text>`,
    `<circle cx="${lx + 158}" cy="60" r="7" fill="none" stroke="${OVER}" stroke-width="1.6"/>`,
    `<text x="${lx + 173}" y="64" class="legend">over target</text>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">
<style>
.title { font-size: 13px; font-weight: bold; fill: #222222; }
.note { font-size: 10.5px; fill: #666666; }
.head { font-size: 16px; font-weight: bold; fill: #111111; }
.sub { font-size: 11.5px; fill: #444444; }
.legend { font-size: 12px; fill: #222222; }
.xlab { font-size: 10.5px; fill: #333333; text-anchor: middle; }
.ylab { font-size: 10.5px; fill: #333333; text-anchor: end; }
.axis { font-size: 11px; fill: #444444; text-anchor: middle; }
.frame { fill: #fff; stroke: #999999; stroke-width: 1; }
.grid { stroke: #e4e4e4; stroke-width: 1; }
.tick { stroke: #777777; stroke-width: 1; }
</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="${PAD.left}" y="22" class="head">${esc(title)}</text>
<text x="${PAD.left}" y="40" class="sub">${esc(subtitle)}</text>
${legend.join("\n")}
${body.join("\n")}
</svg>
`;
}
