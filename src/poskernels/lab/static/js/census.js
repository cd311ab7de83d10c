// Figure B, the wavelength census: each plane's wavelength, whether it turns a whole circle in training,
// and each rescaling's factor on θ_j at the chosen κ (Definition 5, Theorem 5).
import * as model from "./census_model.js";
import { axes, caption, color, el, frame, legend, svgEl } from "./svg.js";

export function draw(container, data, state) {
  state.kappa = state.kappa ?? data.kappa_start;
  el("h3", {}, container, "Wavelength census and each rescaling's factor per plane");
  const pick = el("div", { class: "controls", role: "radiogroup", "aria-label": "κ = test length / training length" },
    container);
  el("span", {}, pick, "κ = ");
  for (const k of data.kappas) {
    const lab = el("label", { class: "radio" }, pick);
    const r = el("input", { type: "radio", name: "census-kappa", value: k, id: `census-kappa-${k}` }, lab);
    r.checked = k === state.kappa;
    el("span", {}, lab, ` ${k} (length ${data.lengths[k]})`);
    r.addEventListener("change", () => { state.kappa = k; render(); });
  }
  const half = data.planes.length;
  const x = { min: -0.5, max: half - 0.5, ticks: [], label: "" };
  const f = frame(container, x, data.y, { height: 380, bottom: 66, title: "factor per plane and map" });
  axes(f, x, data.y);
  const cols = svgEl("g", {}, f.svg);
  const bars = svgEl("g", {}, f.svg);
  const slot = f.w / half;
  data.planes.forEach((j) => {
    const cx = f.sx(j);
    if (data.full_turn[j]) {
      svgEl("rect", { x: cx - slot / 2, y: f.m.top, width: slot, height: f.h, class: "full-turn" }, cols);
    }
    svgEl("text", { x: cx, y: f.m.top + f.h + 16, "text-anchor": "middle", class: "tick" }, f.svg, `j = ${j}`);
    svgEl("text", { x: cx, y: f.m.top + f.h + 30, "text-anchor": "middle", class: "tick small" }, f.svg,
      `λ = ${data.wavelengths[j].toFixed(data.decimals.wavelength)}`);
  });
  svgEl("text", { x: f.m.left + f.w / 2, y: f.height - 4, class: "label", "text-anchor": "middle" }, f.svg,
    "plane j and its wavelength λ_j (shaded: turns a whole circle within the training window)");
  const render = () => {
    bars.replaceChildren();
    const fac = data.factors[state.kappa];
    const bw = (slot * 0.8) / data.maps.length;
    data.planes.forEach((j) => {
      data.maps.forEach((mp, i) => {
        const v = fac[mp.key][j];
        const x0 = f.sx(j) - slot * 0.4 + i * bw;
        const b = svgEl("rect", {
          x: x0, y: f.sy(v), width: bw - 1, height: f.sy(0) - f.sy(v), fill: color(mp.key),
          class: "bar", "data-key": mp.key, "data-plane": j,
        }, bars);
        svgEl("title", {}, b, `${mp.label}, plane ${j}: factor ${v.toFixed(data.decimals.factor)}`);
      });
    });
  };
  render();
  legend(container, data.maps.map((mp) => ({ label: mp.label, color: color(mp.key) })));
  caption(container, data.caption);
  model.draw(container); // a released model's census, from the lab server
}
