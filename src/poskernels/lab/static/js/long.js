// Far past the window: accuracy against log length (cue task) and against the log offset of a needle,
// one curve per reader with its standard-error band, each shown or hidden by its toggle in both panels at once,
// one group of readers at a time at first (the group buttons); each ALiBi head's horizon W/s is a tick on the
// offset axis.
import { axes, band, caption, color, el, frame, groupPicker, line, svgEl } from "./svg.js";

function panel(container, data, xs, curves, x, title, marks, stderr) {
  const f = frame(container, x, data.y, { width: 640, height: 340, title });
  axes(f, x, data.y);
  svgEl("line", { x1: f.sx(x.min), x2: f.sx(x.max), y1: f.sy(data.chance), y2: f.sy(data.chance),
    class: "grid", "stroke-dasharray": "4 3" }, f.svg);
  for (const m of marks) {
    svgEl("line", { x1: f.sx(m), x2: f.sx(m), y1: f.m.top + f.h - 10, y2: f.m.top + f.h, stroke: color("alibi"),
      "stroke-width": 2, class: "horizon" }, f.svg);
  }
  for (const r of data.readers) {
    if (stderr && stderr[r.key]) band(f, xs, curves[r.key], stderr[r.key], { fill: color(r.key), "data-key": r.key });
    line(f, xs, curves[r.key], { stroke: color(r.key), "stroke-width": 1.6, class: "curve", "data-key": r.key,
      "stroke-dasharray": r.map && r.map !== "none" ? "5 3" : "" });
  }
  return f;
}

export function draw(container, data, state) {
  el("h3", {}, container, "Far past the window: accuracy against length and against distance");
  const renders = [];
  const pick = groupPicker(container, data, state, () => renders.forEach((f) => f()));
  const toggles = el("div", { class: "toggles", role: "group", "aria-label": "show or hide a reader's curves" },
    container);
  const row = el("div", { class: "panels" }, container);
  const panels = [
    panel(el("div", {}, row), data, data.lengths, data.length, data.x_length, "accuracy against log length", [],
      data.length_stderr),
    panel(el("div", {}, row), data, data.offsets, data.distance, data.x_distance, "accuracy against log offset",
      data.horizons.map((h) => h.horizon), data.distance_stderr),
  ];
  for (const r of data.readers) {
    const b = el("button", { type: "button", class: "toggle", "data-key": r.key }, toggles);
    el("span", { class: `swatch ${r.map && r.map !== "none" ? "dashed" : ""}`, style: `--c:${color(r.key)}` }, b);
    el("span", {}, b, r.label);
    const curves = panels.flatMap((f) => [...f.svg.querySelectorAll(`[data-key="${r.key}"]`)]);
    const render = () => {
      const on = !state.hidden.has(r.key);
      b.setAttribute("aria-pressed", String(on));
      for (const c of curves) c.style.display = on ? "" : "none";
    };
    b.addEventListener("click", () => {
      if (state.hidden.has(r.key)) state.hidden.delete(r.key); else state.hidden.add(r.key);
      render();
    });
    renders.push(render);
  }
  if (state.hidden === undefined && pick) pick(state.group ?? data.groups[0].key); // one group at first
  else { state.hidden = state.hidden ?? new Set(); renders.forEach((f) => f()); }
  caption(container, data.caption);
}
