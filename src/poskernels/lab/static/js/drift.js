// Figure A, drift view: a trained head's score for a marked key at a fixed offset as the query moves.
// The sinusoidal head's drifts with absolute position; a relative head's is flat.
import { axes, caption, color, el, frame, legend, line } from "./svg.js";

export function draw(container, data, state) {
  el("h3", {}, container, "Drift: a learned score against absolute position");
  const f = frame(container, data.x, data.y, { title: "score against query position" });
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
