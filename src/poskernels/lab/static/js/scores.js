// Figure B, the tournament: every reader's learned score of a marked key against its offset r, with a
// toggle per reader.  The training window (offsets 0 to L − 1) is shaded.
import { axes, caption, color, el, frame, groupPicker, line, svgEl } from "./svg.js";

export function draw(container, data, state) {
  state.hidden = state.hidden ?? new Set(data.hidden || []);
  el("h3", {}, container, "Learned score against offset, per reader");
  const renders = [];
  groupPicker(container, data, state, () => renders.forEach((f) => f()));
  const toggles = el("div", { class: "toggles", role: "group", "aria-label": "show or hide a reader's curve" },
    container);
  const f = frame(container, data.x, data.y, { height: 420, title: "learned score against offset" });
  // the training window, offsets 0..window-1
  svgEl("rect", {
    x: f.sx(0), y: f.m.top, width: f.sx(data.window - 1) - f.sx(0), height: f.h, class: "window",
  }, f.svg);
  svgEl("text", { x: f.sx(data.window - 1) - 4, y: f.m.top + 14, class: "tick", "text-anchor": "end" }, f.svg,
    "trained");
  axes(f, data.x, data.y);
  // curves are clipped to the plot: the axis is sized to the readers shown at first, not to a hidden one
  const clip = svgEl("clipPath", { id: "scores-clip" }, svgEl("defs", {}, f.svg));
  svgEl("rect", { x: f.m.left, y: f.m.top, width: f.w, height: f.h }, clip);
  const curves = {};
  for (const r of data.readers) {
    curves[r.key] = line(f, data.offsets, data.scores[r.key], {
      stroke: color(r.key), "stroke-width": r.key === "rope" ? 2.2 : 1.5, class: "curve", "data-key": r.key,
      "clip-path": "url(#scores-clip)", "stroke-dasharray": r.map && r.map !== "none" ? "5 3" : "",
    });
    const b = el("button", { type: "button", class: "toggle", "data-key": r.key }, toggles);
    el("span", { class: "swatch", style: `--c:${color(r.key)}` }, b);
    el("span", {}, b, r.label);
    const render = () => {
      const on = !state.hidden.has(r.key);
      b.setAttribute("aria-pressed", String(on));
      curves[r.key].style.display = on ? "" : "none";
    };
    b.addEventListener("click", () => {
      if (state.hidden.has(r.key)) state.hidden.delete(r.key); else state.hidden.add(r.key);
      render();
    });
    renders.push(render);
    render();
  }
  caption(container, data.caption);
}
