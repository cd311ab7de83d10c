// Figure A, drift view: a trained head's score for a marked key at a fixed offset as the query moves.
// The sinusoidal head's drifts with absolute position; a relative head's is flat.
import { axes, caption, color, el, frame, legend, line, svgEl } from "./svg.js";

export function draw(container, data, state) {
  el("h3", {}, container, "Drift: a learned score against absolute position");
  const f = frame(container, data.x, data.y, { title: "score against query position" });
  // the positions training saw (0 to L − 1; the query always at L − 1)
  svgEl("rect", { x: f.sx(0), y: f.m.top, width: f.sx(data.window - 1) - f.sx(0), height: f.h, class: "window" },
    f.svg);
  axes(f, data.x, data.y);
  const items = [];
  for (const r of data.readers) {
    line(f, data.positions, data.scores[r.key], {
      stroke: color(r.key), "stroke-width": 1.8, class: "curve", "data-key": r.key,
    });
    items.push({ label: r.label, color: color(r.key) });
  }
  legend(container, items);
  caption(container, data.caption);
}
