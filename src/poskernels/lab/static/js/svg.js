// Small drawing helpers shared by the views: DOM/SVG elements, scales, axes, lines, captions.
// They turn numbers into pixels and nothing else: limits, ticks and labels all come from the payload.

const SVG_NS = "http://www.w3.org/2000/svg";

// Each scheme's, reader's and map's colour comes with the payload (payload.colours, set by main.js); the page
// keeps only the colours of its own guides.
const COLORS = { limit: "#000000", ruler: "#7f7f7f" };
export const setColours = (colours) => Object.assign(COLORS, colours || {});
const DIM_COLORS = ["#e69f00", "#009e73", "#0072b2", "#cc79a7"];
export const dimColor = (i) => DIM_COLORS[i % DIM_COLORS.length];
export const color = (key) => COLORS[key] || "#333333";

export function el(tag, attrs = {}, parent = null, text = null) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

export function svgEl(tag, attrs = {}, parent = null, text = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// Format a number at the precision the payload was rounded to.
export function fmt(x, decimals) {
  return x === null || x === undefined ? "—" : Number(x).toFixed(decimals);
}

// A plot frame: an SVG with a viewBox (it scales with the page), margins, and data -> pixel scales.
export function frame(parent, x, y, { width = 900, height = 380, title = "", bottom = 46 } = {}) {
  const m = { left: 62, right: 14, top: 12, bottom };
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": title }, parent);
  svg.classList.add("plot");
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const tx = x.log ? (v) => Math.log(v) : x.log1p ? (v) => Math.log1p(v) : (v) => v; // log1p: offsets from 0
  const x0 = tx(x.min), x1 = tx(x.max);
  const sx = (v) => m.left + ((tx(v) - x0) / (x1 - x0)) * w;
  const sy = (v) => m.top + (1 - (v - y.min) / (y.max - y.min)) * h;
  return { svg, sx, sy, m, w, h, width, height };
}

export function axes(f, x, y) {
  const g = svgEl("g", { class: "axes" }, f.svg);
  const yb = f.m.top + f.h;
  svgEl("line", { x1: f.m.left, x2: f.m.left + f.w, y1: yb, y2: yb, class: "axis" }, g);
  svgEl("line", { x1: f.m.left, x2: f.m.left, y1: f.m.top, y2: yb, class: "axis" }, g);
  for (const t of x.ticks) {
    const px = f.sx(t);
    svgEl("line", { x1: px, x2: px, y1: f.m.top, y2: yb, class: "grid" }, g);
    const label = svgEl("text", { x: px, y: yb + 16, class: "tick", "text-anchor": "middle" }, g, String(t));
    keepInside(label, px, f.width);
  }
  for (const t of y.ticks) {
    const py = f.sy(t);
    svgEl("line", { x1: f.m.left, x2: f.m.left + f.w, y1: py, y2: py, class: t === 0 ? "grid zero" : "grid" }, g);
    svgEl("text", { x: f.m.left - 6, y: py + 4, class: "tick", "text-anchor": "end" }, g, String(t));
  }
  svgEl("text", { x: f.m.left + f.w / 2, y: f.height - 8, class: "label", "text-anchor": "middle" }, g, x.label);
  const ly = f.m.top + f.h / 2;
  svgEl("text", { x: 14, y: ly, class: "label", "text-anchor": "middle", transform: `rotate(-90 14 ${ly})` }, g,
    y.label);
  return g;
}

// A tick label centred on its tick unless that would cross the plot's edge (the viewBox clips it, so "100000"
// at the right end read "10000"): then it is anchored at the edge side instead, whole at every width.  The
// length is measured when the SVG is laid out, else estimated from the 11px tick font (0.62em a digit).
function keepInside(label, px, width) {
  let length = 0;
  try { length = label.getComputedTextLength(); } catch (e) { length = 0; }
  const half = (length || 0.62 * 11 * label.textContent.length) / 2;
  if (px + half > width - 1) label.setAttribute("text-anchor", "end");
  else if (px - half < 1) label.setAttribute("text-anchor", "start");
}

// A polyline through (xs[i], ys[i]); null values break the line (a scheme undefined there).
export function line(f, xs, ys, attrs = {}) {
  let d = "";
  let pen = false;
  for (let i = 0; i < xs.length; i += 1) {
    if (ys[i] === null || ys[i] === undefined) { pen = false; continue; }
    d += `${pen ? "L" : "M"}${f.sx(xs[i]).toFixed(1)},${f.sy(ys[i]).toFixed(1)}`;
    pen = true;
  }
  return svgEl("path", { d, fill: "none", ...attrs }, f.svg);
}

// The band mean ± SE of a curve, where both are known (a gap where either is null).
export function band(f, xs, ys, se, attrs = {}) {
  const g = svgEl("g", { class: "band", ...attrs }, f.svg);
  let run = [];
  const flush = () => {
    if (run.length > 1) {
      const up = run.map((i) => `${f.sx(xs[i]).toFixed(1)},${f.sy(ys[i] + se[i]).toFixed(1)}`);
      const down = run.slice().reverse().map((i) => `${f.sx(xs[i]).toFixed(1)},${f.sy(ys[i] - se[i]).toFixed(1)}`);
      svgEl("polygon", { points: [...up, ...down].join(" ") }, g);
    }
    run = [];
  };
  for (let i = 0; i < xs.length; i += 1) {
    if (ys[i] === null || ys[i] === undefined || se[i] === null || se[i] === undefined) flush();
    else run.push(i);
  }
  flush();
  return g;
}

// Buttons that show one group of readers at a time (data.groups: {key, title}; each reader's r.group), or all:
// a few curves at once, not twenty.  pick(key) sets state.hidden and state.group, then calls rerender().
export function groupPicker(container, data, state, rerender) {
  const present = (data.groups || []).filter((g) => data.readers.some((r) => r.group === g.key));
  if (present.length < 2) return null;
  const bar = el("div", { class: "groups", role: "group", "aria-label": "show one group of readers" }, container);
  el("span", {}, bar, "show ");
  const buttons = [];
  const pick = (key) => {
    const shown = (r) => key === "all" || r.group === key || (key === "reread" && r.map === "none" && r.head === "rope");
    state.hidden = new Set(data.readers.filter((r) => !shown(r)).map((r) => r.key));
    state.group = key;
    for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.group === key));
    rerender();
  };
  for (const g of [...present, { key: "all", title: "all readers" }]) {
    const b = el("button", { type: "button", class: "toggle group", "data-group": g.key }, bar, g.title);
    b.addEventListener("click", () => pick(g.key));
    buttons.push(b);
  }
  return pick;
}

export function legend(parent, items) {
  const ul = el("ul", { class: "legend" }, parent);
  for (const it of items) {
    const li = el("li", {}, ul);
    el("span", { class: `swatch ${it.dash ? "dashed" : ""}`, style: `--c:${it.color}` }, li);
    el("span", {}, li, it.label);
  }
  return ul;
}

export function caption(parent, text) {
  return el("p", { class: "caption" }, parent, text);
}

// A view whose data did not make it into the payload: say which and why instead of drawing.
export function absent(container, title, data) {
  el("h3", {}, container, title);
  el("p", { class: "absent", role: "note" }, container, `Not in this payload: ${data.absent}`);
}
