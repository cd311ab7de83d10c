// A released model's census: pick a bundled config, or drop in a config.json; the lab server computes the census
// (the same reader and census as `poskernels census`) and this module only lays out its lines and plane table.
import { axes, el, frame, legend, line } from "./svg.js";

// the chart's colours, one per map (Okabe-Ito, colour-blind safe); the config's own map is drawn thickest
const MAP_PALETTE = ["#000000", "#56b4e9", "#d55e00", "#7a5195", "#e69f00", "#009e73", "#cc79a7", "#0072b2"];

const num = (x) => (x === null || x === undefined ? "∞" : Number(x).toPrecision(4));

// Backoff, in ms, before each new try of a census the server refused as busy (its caps are shared by every page).
const BUSY_BACKOFF = [500, 1000, 2000, 4000, 8000];
const wait = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(t); resolve(); });
});

async function ask(url, options = {}) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (err) {
    if (options.signal?.aborted) return { aborted: true };
    return { error: `the lab server did not answer: ${err}` };
  }
  try {
    return { ...(await response.json()), status: response.status };
  } catch (err) {
    if (options.signal?.aborted) return { aborted: true };
    return { error: `the lab server answered ${response.status} without a census` };
  }
}

function table(parent, one) {
  const t = el("table", { class: "acc census-planes" }, parent);
  el("caption", {}, t, "one row per plane (shaded: reads angles at N that training never produced, Theorem 5 (i))");
  const head = el("tr", {}, el("thead", {}, t));
  for (const c of one.columns) el("th", { scope: "col" }, head, c);
  const body = el("tbody", {}, t);
  const unseen = new Set(one.unseen);
  for (const [j, wavelength, turns, whole, factor] of one.planes) {
    const row = el("tr", { "data-plane": j }, body);
    if (unseen.has(j)) row.classList.add("unseen");
    el("th", { scope: "row" }, row, String(j));
    el("td", {}, row, num(wavelength));
    el("td", {}, row, num(turns));
    el("td", {}, row, whole ? "yes" : "no");
    el("td", {}, row, num(factor));
  }
}

// Each map's factor on θ_j per plane at the target, on a log₂ axis (census_view.chart computes every number).
function chart(parent, c) {
  const n = c.planes.length;
  const x = { min: 0, max: Math.max(n - 1, 1), log: false, ticks: c.planes.filter((j) => j % 8 === 0),
    label: "plane j (fast to slow)" };
  const f = frame(parent, x, c.y, { height: 300, title: "factor per plane and map" });
  f.svg.classList.add("census-chart");
  axes(f, x, c.y);
  c.maps.forEach((mp, i) => {
    line(f, c.planes, c.log2[mp.key], { stroke: MAP_PALETTE[i % MAP_PALETTE.length],
      "stroke-width": i === 0 ? 3 : 1.5, class: "curve", "data-key": mp.key,
      "stroke-dasharray": i === 0 ? "" : "5 3" });
  });
  legend(parent, c.maps.map((mp, i) => ({ label: mp.label, color: MAP_PALETTE[i % MAP_PALETTE.length] })));
}

export function draw(container) {
  const box = el("div", { class: "census-model", id: "census-model", "data-state": "loading" }, container);
  el("h3", {}, box, "A released model's RoPE: what its frequencies mean for long context");
  const controls = el("div", { class: "controls" }, box);
  const pickLabel = el("label", {}, controls, "model ");
  const pick = el("select", { id: "census-model-pick" }, pickLabel);
  const targetLabel = el("label", {}, controls, "target length N ");
  const target = el("input", { id: "census-target", type: "number", min: "1", step: "1", placeholder: "default",
    inputmode: "numeric" }, targetLabel);
  const fileLabel = el("label", {}, controls, "or your config.json ");
  const file = el("input", { id: "census-file", type: "file", accept: ".json,application/json" }, fileLabel);
  const drop = el("div", { id: "census-drop", class: "drop", tabindex: "0" }, box,
    "…or drop a config.json here. It is read by the lab server on this machine (127.0.0.1), never sent elsewhere.");
  const error = el("p", { id: "census-error", class: "absent", role: "alert" }, box);
  error.hidden = true;
  const result = el("div", { id: "census-result", "aria-live": "polite" }, box);
  let limit = 2 ** 20;
  let source = null; // { model: name } or { file: File }

  const show = (data) => {
    if (data.error) {
      error.textContent = data.error;
      error.hidden = false;
      result.replaceChildren(); // the previous file's census is not this one's: nothing is left under the error
      box.dataset.state = "error";
      return;
    }
    error.hidden = true;
    result.replaceChildren();
    el("p", { class: "census-name" }, result, `census of ${data.name}`);
    for (const one of data.censuses) {
      const part = el("section", { class: "census-one", "data-layer-type": one.layer_type ?? "" }, result);
      if (one.layer_type) el("h4", {}, part, `layer type ${one.layer_type}`);
      const lines = el("ul", { class: "census-lines" }, part);
      for (const text of one.lines) el("li", {}, lines, text);
      if (one.chart) chart(part, one.chart);
      table(part, one);
    }
    box.dataset.state = "ready";
  };
  const query = () => (target.value.trim() ? `target=${encodeURIComponent(target.value.trim())}` : "");
  // One census request in flight per page: a newer choice aborts the older request (the server then stops its
  // census and frees its slot) and an older answer is never shown; a "busy" refusal is tried again after a backoff.
  let current = null;
  const census = async (signal) => {
    if (source.model) return ask(`census/model?name=${encodeURIComponent(source.model)}&${query()}`, { signal });
    if (source.file.size > limit) {
      return { error: `the config file is ${source.file.size} bytes; the limit is ${limit} bytes` };
    }
    const url = `census/upload?file=${encodeURIComponent(source.file.name)}&${query()}`;
    return ask(url, { method: "POST", body: source.file, headers: { "Content-Type": "application/json" }, signal });
  };
  const run = async () => {
    if (!source) return;
    current?.abort();
    const mine = new AbortController();
    current = mine;
    box.dataset.state = "loading";
    let data = await census(mine.signal);
    for (const ms of BUSY_BACKOFF) {
      if (mine.signal.aborted || data.status !== 503 || !String(data.error).startsWith("busy")) break;
      box.dataset.state = "busy";
      error.textContent = `${data.error} (trying again in ${ms / 1000} s)`;
      error.hidden = false;
      await wait(ms, mine.signal);
      if (!mine.signal.aborted) data = await census(mine.signal);
    }
    if (mine.signal.aborted || data.aborted) return; // a newer choice owns the page now
    current = null;
    show(data);
  };
  const useFile = (f) => { if (f) { source = { file: f }; run(); } };

  pick.addEventListener("change", () => { source = { model: pick.value }; run(); });
  target.addEventListener("change", run);
  file.addEventListener("change", () => {
    useFile(file.files[0]);
    file.value = ""; // choosing the same file again (edited since) reads it again
  });
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    useFile(e.dataTransfer.files[0]);
  });

  ask("census/models").then((data) => {
    if (data.error || !data.models) { show({ error: data.error || "the lab server lists no models" }); return; }
    limit = data.limit;
    for (const m of data.models) el("option", { value: m.name }, pick, m.label);
    source = { model: pick.value };
    run();
  });
}
