// Figure A, ruler view: (2/d) κ_d(Δ) at three dimensions against the cosine-integral limit I_b(Δ) and the
// logarithmic ruler, on a log offset axis (Theorem 1 (ii)).
import { axes, caption, dimColor, el, frame, legend, line, svgEl } from "./svg.js";

export function draw(container, data, state) {
  el("h3", {}, container, "The ruler: the kernel against its limit");
  const f = frame(container, data.x, data.y, { title: "kernel against offset, log axis" });
  axes(f, data.x, data.y);
  const items = [];
  // the limit first, wide and pale, so the largest d (which lies on it) stays visible on top
  line(f, data.offsets, data.limit, {
    stroke: "#000", "stroke-opacity": 0.3, "stroke-width": 5, class: "curve", "data-key": "limit",
  });
  items.push({ label: "limit I_b(Δ)", color: "rgba(0,0,0,0.35)" });
  data.dims.forEach((d, i) => {
    line(f, data.offsets, data.kernel[d], { stroke: dimColor(i), "stroke-width": 1.4, class: "curve", "data-key": `d${d}` });
    items.push({ label: `d = ${d}`, color: dimColor(i) });
  });
  line(f, data.offsets, data.ruler, {
    stroke: "#7f7f7f", "stroke-width": 1.5, "stroke-dasharray": "5 4", class: "curve", "data-key": "ruler",
  });
  items.push({ label: "ruler 1 − (γ + ln Δ)/ln b", color: "#7f7f7f", dash: true });
  if (data.table) {
    // the article's table (numbers.json thm1), one dot per printed entry
    const dots = svgEl("g", { class: "table-dots" }, f.svg);
    const put = (ys, fill, label) => data.table.offsets.forEach((x, i) => {
      const c = svgEl("circle", { cx: f.sx(x), cy: f.sy(ys[i]), r: 3.2, fill, stroke: "#fff", "stroke-width": 1 }, dots);
      svgEl("title", {}, c, `${label}, Δ = ${x}: ${ys[i]}`);
    });
    data.dims.forEach((d, i) => put(data.table.kernel[d], dimColor(i), `d = ${d}`));
    put(data.table.limit, "#000", "limit");
  }
  legend(container, items);
  caption(container, data.caption);
}
