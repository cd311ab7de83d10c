// Figure A, clocks: one clock per plane of the sinusoidal code; two hands at angles m·ω_j and n·ω_j.
// The readout ⟨p(m), p(n)⟩/(d/2) is looked up in the payload by the offset |n − m| (Theorem 1 (i)).
import { caption, el, fmt, svgEl } from "./svg.js";

export function draw(container, data, state) {
  const pos = data.positions;
  state.m = state.m ?? pos.m;
  state.n = state.n ?? pos.n;
  state.locked = state.locked ?? false;
  el("h3", {}, container, "The clocks of the sinusoidal code");

  const controls = el("div", { class: "controls" }, container);
  const slider = (name) => {
    const wrap = el("label", { class: "slider" }, controls);
    el("span", {}, wrap, `position ${name} = `);
    const out = el("output", { id: `clock-${name}-value`, for: `clock-${name}` }, wrap);
    const input = el("input", {
      type: "range", id: `clock-${name}`, min: pos.min, max: pos.max, step: 1, value: state[name],
      "aria-label": `position ${name}`,
    }, wrap);
    return { input, out };
  };
  const sm = slider("m");
  const sn = slider("n");
  const lockWrap = el("label", { class: "lock" }, controls);
  const lock = el("input", { type: "checkbox", id: "clock-lock" }, lockWrap);
  lock.checked = state.locked;
  el("span", {}, lockWrap, " lock the offset n − m");

  const half = data.omega.length;
  const R = 34;
  const cell = 2 * R + 26;
  const svg = svgEl("svg", {
    viewBox: `0 0 ${cell * half} ${cell + 30}`, role: "img", class: "clocks",
    "aria-label": `${half} clocks, one per plane; hands at angles m·ω_j and n·ω_j`,
  }, container);
  const hands = [];
  data.omega.forEach((w, j) => {
    const wLabel = data.omega_labels[j];
    const cx = cell * j + cell / 2;
    const cy = R + 10;
    const g = svgEl("g", { class: "clock", "data-plane": j }, svg);
    svgEl("circle", { cx, cy, r: R, class: "dial" }, g);
    svgEl("circle", { cx, cy, r: 2.5, class: "pivot" }, g);
    const hm = svgEl("line", { x1: cx, y1: cy, class: "hand hand-m", "data-plane": j }, g);
    const hn = svgEl("line", { x1: cx, y1: cy, class: "hand hand-n", "data-plane": j }, g);
    svgEl("text", { x: cx, y: cy + R + 16, "text-anchor": "middle", class: "tick" }, g, `j = ${j}`);
    svgEl("text", { x: cx, y: cy + R + 30, "text-anchor": "middle", class: "tick small" }, g, `ω = ${wLabel}`);
    hands.push({ cx, cy, w, hm, hn });
  });

  const key = el("p", { class: "hand-key" }, container);
  el("span", { class: "swatch hand-m-swatch" }, key);
  el("span", {}, key, " hand at m   ");
  el("span", { class: "swatch hand-n-swatch" }, key);
  el("span", {}, key, " hand at n");

  const readout = el("div", { class: "readouts" }, container);
  const card = (label, id) => {
    const c = el("div", { class: "card" }, readout);
    el("div", { class: "card-label" }, c, label);
    return el("output", { id, class: "card-value", "aria-live": "polite" }, c);
  };
  const offOut = card("offset n − m", "clock-offset");
  const valOut = card(data.readout_label, "clock-readout");

  const setHand = (line, h, pos_) => {
    // angle pos·ω_j, cosine on x and sine up (Definition 2: the clock's hand points at angle m ω_j)
    const a = pos_ * h.w;
    line.setAttribute("x2", (h.cx + R * 0.9 * Math.cos(a)).toFixed(2));
    line.setAttribute("y2", (h.cy - R * 0.9 * Math.sin(a)).toFixed(2));
  };
  const render = () => {
    sm.input.value = state.m; sn.input.value = state.n;
    sm.out.textContent = state.m; sn.out.textContent = state.n;
    for (const h of hands) { setHand(h.hm, h, state.m); setHand(h.hn, h, state.n); }
    offOut.textContent = String(state.n - state.m);
    valOut.textContent = fmt(data.readout[Math.abs(state.n - state.m)], data.decimals);
  };
  const move = (which, value) => {
    const other = which === "m" ? "n" : "m";
    if (state.locked) {
      // keep n − m: clamp so both positions stay on the sliders' range
      const gap = state[other] - state[which];
      const lo = Math.max(pos.min, pos.min - gap);
      const hi = Math.min(pos.max, pos.max - gap);
      state[which] = Math.min(hi, Math.max(lo, value));
      state[other] = state[which] + gap;
    } else {
      state[which] = value;
    }
    render();
  };
  sm.input.addEventListener("input", () => move("m", Number(sm.input.value)));
  sn.input.addEventListener("input", () => move("n", Number(sn.input.value)));
  lock.addEventListener("change", () => { state.locked = lock.checked; render(); });
  render();
  caption(container, data.caption);
}
