// "Real models": a released model's heads read on real text (the shipped `poskernels probe` results, served by
// the lab server at probe/models and probe/view). Pick a model, a layer and a head: its kernel over offsets, its
// planes' energies beside the census's predictions (RoPE), or its Toeplitz defect (a learned table), the model's
// figures and provenance, and its loss past the window when the result has one. The server computes every axis,
// line and figure; this module only lays them out. A link may name the head: #probe?name=NAME&layer=L&head=H.
import { axes, el, frame, legend, line, svgEl } from "./svg.js";

const Q_COLOR = "#0072b2";
const K_COLOR = "#e69f00";
const MAP_PALETTE = ["#000000", "#56b4e9", "#d55e00", "#7a5195", "#e69f00", "#009e73", "#cc79a7", "#0072b2"];

async function ask(url, signal) {
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (err) {
    if (signal?.aborted) return { aborted: true };
    return { error: `the lab server did not answer: ${err}` };
  }
  try {
    return await response.json();
  } catch (err) {
    if (signal?.aborted) return { aborted: true };
    return { error: `the lab server answered ${response.status} without a probe result` };
  }
}

function rows(parent, cls, caption, items) {
  const t = el("table", { class: `acc ${cls}` }, parent);
  el("caption", {}, t, caption);
  const body = el("tbody", {}, t);
  for (const [label, text] of items) {
    const row = el("tr", {}, body);
    el("th", { scope: "row" }, row, label);
    el("td", {}, row, text);
  }
  return t;
}

function kernel(parent, v) {
  const k = v.kernel;
  const title = `mean logit against offset, layer ${v.layer} head ${v.head}`;
  const f = frame(parent, k.x, k.y, { height: 320, title });
  f.svg.classList.add("probe-kernel");
  axes(f, k.x, k.y);
  line(f, k.offsets, k.mean, { stroke: "#000000", "stroke-width": 2, class: "curve", "data-key": "kernel" });
  const dots = svgEl("g", { class: "points" }, f.svg);
  k.offsets.forEach((r, i) => {
    if (k.mean[i] === null) return;
    const c = svgEl("circle", { cx: f.sx(r).toFixed(2), cy: f.sy(k.mean[i]).toFixed(2), r: 2.2, class: "point",
      "data-offset": r, "data-value": k.mean[i] }, dots);
    svgEl("title", {}, c, `offset ${r}: mean logit ${k.mean[i]}`);
  });
}

function energies(parent, v) {
  const e = v.energy;
  const title = `query and key chunk norms per plane, layer ${v.layer} head ${v.head}`;
  const f = frame(parent, e.x, e.y, { height: 300, title });
  f.svg.classList.add("probe-energy");
  axes(f, e.x, e.y);
  const never = new Set(v.census?.never_full_turn ?? []);
  const n = v.q_energy.length;
  const slot = f.w / n;
  for (let j = 0; j < n; j += 1) {
    if (never.has(j)) {
      svgEl("rect", { x: f.sx(j) - slot / 2, y: f.m.top, width: slot, height: f.h, class: "never-turn",
        "data-plane": j }, f.svg);
    }
    [[v.q_energy[j], Q_COLOR, "q"], [v.k_energy[j], K_COLOR, "k"]].forEach(([value, fill, key], i) => {
      const b = svgEl("rect", { x: f.sx(j) - slot * 0.4 + i * slot * 0.4, y: f.sy(value), width: slot * 0.38,
        height: f.sy(e.y.min) - f.sy(value), fill, class: "bar", "data-key": key, "data-plane": j,
        "data-value": value }, f.svg);
      svgEl("title", {}, b, `plane ${j}, ${key === "q" ? "query" : "key"}: ${value}`);
    });
  }
  const dc = v.census?.critical_dimension;
  if (dc !== null && dc !== undefined && dc / 2 <= n) {
    const x = f.sx(dc / 2 - 0.5);
    svgEl("line", { x1: x, x2: x, y1: f.m.top, y2: f.m.top + f.h, class: "critical", stroke: "#d55e00",
      "stroke-width": 2, "stroke-dasharray": "5 3" }, f.svg);
  }
  legend(parent, [{ label: "queries", color: Q_COLOR }, { label: "keys", color: K_COLOR },
    { label: "critical dimension d_c (plane d_c / 2)", color: "#d55e00", dash: true }]);
}

function pastWindow(parent, pw) {
  el("h4", {}, parent, "Loss by position past the training window, one curve per map");
  const f = frame(parent, pw.x, pw.y, { height: 300, title: "loss against position in the text" });
  f.svg.classList.add("probe-past");
  axes(f, pw.x, pw.y);
  if (pw.window) {
    svgEl("line", { x1: f.sx(pw.window), x2: f.sx(pw.window), y1: f.m.top, y2: f.m.top + f.h, class: "window-edge",
      stroke: "#7f7f7f", "stroke-dasharray": "4 3" }, f.svg);
  }
  pw.maps.forEach((m, i) => line(f, m.bins, m.loss, { stroke: MAP_PALETTE[i % MAP_PALETTE.length],
    "stroke-width": 1.8, class: "curve", "data-key": m.key }));
  legend(parent, pw.maps.map((m, i) => ({ label: m.label, color: MAP_PALETTE[i % MAP_PALETTE.length] })));
}

function show(result, v) {
  result.replaceChildren();
  el("p", { class: "probe-name" }, result,
    `${v.name}, layer ${v.layer}${v.type ? ` (${v.type})` : ""}, head ${v.head}; positions: ${v.positions}`);
  el("h4", {}, result, "The head's kernel over offsets: the mean logit q·k/√d at offset r");
  kernel(result, v);
  rows(result, "probe-head", "this head", v.head_figures.map((h) => [h.label, h.text]));
  if (v.energy) {
    el("h4", {}, result, "Where the energy sits: each plane's mean query and key chunk norm on the text");
    energies(result, v);
  }
  if (v.census) {
    const part = el("section", { class: "probe-census" }, result);
    el("h4", {}, part, "What the census predicts from the config alone");
    const ul = el("ul", { class: "census-lines" }, part);
    for (const text of v.census.lines) el("li", {}, ul, text);
  }
  if (v.absolute) {
    const part = el("section", { class: "probe-absolute" }, result);
    el("h4", {}, part, "A learned table: is it a stationary kernel?");
    rows(part, "probe-defect", v.absolute.title, v.absolute.rows);
    if (v.absolute.head) rows(part, "probe-head-defect", "the head's position–position term", v.absolute.head);
    else el("p", { class: "caption" }, part, v.absolute.head_note);
  }
  rows(result, "probe-figures", `${v.name}: every head together`, v.figures.map((g) => [g.label, g.text]));
  if (v.past_window) pastWindow(result, v.past_window);
  rows(result, "probe-provenance", "provenance of this result", v.provenance_rows);
}

export function draw(container) {
  const box = el("div", { class: "probe", id: "probe", "data-state": "loading" }, container);
  el("h3", {}, box, "Real models: a released model's heads, read on real text");
  const controls = el("div", { class: "controls" }, box);
  const pick = el("select", { id: "probe-model" }, el("label", {}, controls, "model "));
  const layer = el("select", { id: "probe-layer" }, el("label", {}, controls, "layer "));
  const head = el("select", { id: "probe-head" }, el("label", {}, controls, "head "));
  const error = el("p", { id: "probe-error", class: "absent", role: "alert" }, box);
  error.hidden = true;
  const result = el("div", { id: "probe-result", "aria-live": "polite" }, box);
  let models = [];
  let current = null;

  const fail = (text) => {
    error.textContent = text;
    error.hidden = false;
    result.replaceChildren();
    box.dataset.state = "error";
  };
  const fill = (select, n, keep) => {
    select.replaceChildren();
    for (let i = 0; i < n; i += 1) el("option", { value: i }, select, String(i));
    select.value = String(keep < n ? keep : 0);
  };
  const load = async (query) => {
    current?.abort(); // one request in flight: an older answer is never shown over a newer choice
    const mine = new AbortController();
    current = mine;
    box.dataset.state = "loading";
    const v = await ask(`probe/view?${query}`, mine.signal);
    if (mine.signal.aborted || v.aborted) return;
    if (v.error) { fail(v.error); return; }
    error.hidden = true;
    show(result, v);
    box.dataset.state = "ready";
  };
  const chosen = () => `name=${encodeURIComponent(pick.value)}&layer=${layer.value}&head=${head.value}`;
  const sizes = () => {
    const m = models.find((x) => x.name === pick.value);
    fill(layer, m.layers, Number(layer.value) || 0);
    fill(head, m.heads, Number(head.value) || 0);
  };
  pick.addEventListener("change", () => { sizes(); load(chosen()); });
  layer.addEventListener("change", () => load(chosen()));
  head.addEventListener("change", () => load(chosen()));

  ask("probe/models").then((data) => {
    if (data.error || !data.models) { fail(data.error || "the lab server lists no probe results"); return; }
    if (!data.models.length) { fail("no probe result is shipped (run `make probe`)"); return; }
    models = data.models;
    for (const m of models) {
      el("option", { value: m.name }, pick, `${m.name} (${m.class}, ${m.positions}, ${m.layers} × ${m.heads} heads)`);
    }
    sizes();
    const linked = location.hash.startsWith("#probe?") ? new URLSearchParams(location.hash.slice(7)) : null;
    if (linked) {
      if (models.some((m) => m.name === linked.get("name"))) {
        pick.value = linked.get("name");
        sizes();
        const m = models.find((x) => x.name === pick.value);
        if (Number(linked.get("layer")) < m.layers) layer.value = linked.get("layer");
        if (Number(linked.get("head")) < m.heads) head.value = linked.get("head");
      }
      load(linked.toString()); // as linked: a name, layer or head the server does not know gets its one line
    } else {
      load(chosen());
    }
  });
}
