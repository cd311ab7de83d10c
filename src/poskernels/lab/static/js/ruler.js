// Figure A, ruler view: (2/d) κ_d(Δ) at three dimensions against the cosine-integral limit I_b(Δ) and the
// logarithmic ruler, on a log offset axis (Theorem 1 (ii)).
import { axes, caption, dimColor, el, frame, legend, line } from "./svg.js";

export function draw(container, data, state) {
  el("h3", {}, container, "The ruler: the kernel against its limit");
  const f = frame(container, data.x, data.y, { title: "kernel against offset, log axis" });
  axes(f, data.x, data.y);
  const items = [];
  data.dims.forEach((d, i) => {
    line(f, data.offsets, data.kernel[d], { stroke: dimColor(i), "stroke-width": 1.4, class: "curve", "data-key": `d${d}` });
    items.push({ label: `d = ${d}`, color: dimColor(i) });
  });
  line(f, data.offsets, data.limit, { stroke: "#000", "stroke-width": 2, class: "curve", "data-key": "limit" });
  items.push({ label: "limit I_b(Δ)", color: "#000" });
  line(f, data.offsets, data.ruler, {
    stroke: "#7f7f7f", "stroke-width": 1.5, "stroke-dasharray": "5 4", class: "curve", "data-key": "ruler",
  });
  items.push({ label: "ruler 1 − (γ + ln Δ)/ln b", color: "#7f7f7f", dash: true });
  legend(container, items);
  caption(container, data.caption);
}
