// Figure B, readouts: RoPE's accuracy at each length, the rebound of its score, and each reader's accuracy.
import { caption, el, fmt } from "./svg.js";

export function draw(container, data, state, precision) {
  el("h3", {}, container, "Readouts: RoPE past its window");
  const cards = el("div", { class: "readouts" }, container);
  const card = (label, value, id) => {
    const c = el("div", { class: "card", id }, cards);
    el("div", { class: "card-label" }, c, label);
    el("div", { class: "card-value" }, c, value);
  };
  for (const n of data.lengths) card(`RoPE at ${n}`, fmt(data.accuracy.rope[n], precision.accuracy), `rope-at-${n}`);
  card("score at r = 1", fmt(data.score_r1, precision.score), "score-r1");
  card(`score at r = ${data.edge}, the window's edge`, fmt(data.score_edge, precision.score), "score-edge");
  card("it rises again: highest score past the window",
    `${fmt(data.peak[1], precision.score)} at r = ${data.peak[0]}`, "score-peak");

  // every reader's accuracy at every length (— where a scheme is undefined or not read there)
  const table = el("table", { class: "acc" }, container);
  el("caption", {}, table, "Accuracy (mean of seeds) at each test length");
  const head = el("tr", {}, el("thead", {}, table));
  el("th", { scope: "col" }, head, "reader");
  for (const n of data.lengths) el("th", { scope: "col" }, head, String(n));
  const body = el("tbody", {}, table);
  for (const r of data.readers) {
    const row = el("tr", {}, body);
    el("th", { scope: "row" }, row, r.label);
    const acc = data.accuracy[r.key] || data.rescaled[r.key] || {};
    for (const n of data.lengths) el("td", {}, row, fmt(acc[n], precision.accuracy));
  }
  caption(container, data.caption);
}
