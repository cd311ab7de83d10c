// Far past the window: accuracy against log length (cue task) and against the log offset of a needle,
// one curve per reader, each shown or hidden by its toggle in both panels at once; each ALiBi head's horizon W/s
// is a tick on the offset axis.
import { axes, caption, color, el, frame, line, svgEl } from "./svg.js";

function panel(container, data, xs, curves, x, title, marks) {
  const f = frame(container, x, data.y, { width: 640, height: 340, title });
  axes(f, x, data.y);
  svgEl("line", { x1: f.sx(x.min), x2: f.sx(x.max), y1: f.sy(data.chance), y2: f.sy(data.chance),
    class: "grid", "stroke-dasharray": "4 3" }, f.svg);
  for (const m of marks) {
    svgEl("line", { x1: f.sx(m), x2: f.sx(m), y1: f.m.top + f.h - 10, y2: f.m.top + f.h, stroke: color("alibi"),
      "stroke-width": 2, class: "horizon" }, f.svg);
  }
  for (const r of data.readers) {
    line(f, xs, curves[r.key], { stroke: color(r.key), "stroke-width": 1.6, class: "curve", "data-key": r.key,
      "stroke-dasharray": r.map && r.map !== "none" ? "5 3" : "" });
  }
  return f;
}

export function draw(container, data, state) {
  state.hidden = state.hidden ?? new Set();
  el("h3", {}, container, "Far past the window: accuracy against length and against distance");
  const toggles = el("div", { class: "toggles", role: "group", "aria-label": "show or hide a reader's curves" },
    container);
  const row = el("div", { class: "panels" }, container);
  const panels = [
    panel(el("div", {}, row), data, data.lengths, data.length, data.x_length, "accuracy against log length", []),
    panel(el("div", {}, row), data, data.offsets, data.distance, data.x_distance, "accuracy against log offset",
      data.horizons.map((h) => h.horizon)),
  ];
  for (const r of data.readers) {
    const b = el("button", { type: "button", class: "toggle", "data-key": r.key }, toggles);
    el("span", { class: `swatch ${r.map && r.map !== "none" ? "dashed" : ""}`, style: `--c:${color(r.key)}` }, b);
    el("span", {}, b, r.label);
    const curves = panels.map((f) => f.svg.querySelector(`path.curve[data-key="${r.key}"]`)).filter(Boolean);
    const render = () => {
      const on = !state.hidden.has(r.key);
      b.setAttribute("aria-pressed", String(on));
      for (const c of curves) c.style.display = on ? "" : "none";
    };
    b.addEventListener("click", () => {
      if (state.hidden.has(r.key)) state.hidden.delete(r.key); else state.hidden.add(r.key);
      render();
    });
    render();
  }
  caption(container, data.caption);
}
