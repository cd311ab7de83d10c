// Loads the payload and hands each view its data: draw(container, data, state[, precision]).
// The page computes nothing the payload does not carry; the modules only turn numbers into pixels.
import * as census from "./census.js";
import * as clocks from "./clocks.js";
import * as drift from "./drift.js";
import * as filing from "./filing.js";
import * as long from "./long.js";
import * as probe from "./probe.js";
import * as readouts from "./readouts.js";
import * as ruler from "./ruler.js";
import * as scores from "./scores.js";
import { absent, el, setColours } from "./svg.js";

const VIEWS = { clocks, ruler, drift, scores, readouts, census, filing, long };
const TITLES = {
  clocks: "The clocks of the sinusoidal code", ruler: "The ruler: the kernel against its limit",
  drift: "Drift: a learned score against absolute position", scores: "Learned score against offset, per reader",
  readouts: "Readouts: RoPE past its window", census: "Wavelength census and each rescaling's factor per plane",
  filing: "One held-out filing, token by token",
  long: "Far past the window: accuracy against length and distance",
};

async function main() {
  const root = document.getElementById("lab");
  const response = await fetch("payload.json");
  const payload = await response.json();
  setColours(payload.colours);
  for (const [fig, keys] of Object.entries(payload.figures)) {
    const section = el("section", { class: "figure", id: `figure-${fig}`, "aria-labelledby": `figure-${fig}-title` },
      root);
    el("h2", { id: `figure-${fig}-title` }, section, payload.titles[fig]);
    for (const key of keys) {
      const view = el("div", { class: "view", id: `view-${key}` }, section);
      const data = payload[key];
      if (data.absent) absent(view, TITLES[key], data);
      else VIEWS[key].draw(view, data, {}, payload.precision);
    }
  }
  const real = el("section", { class: "figure", id: "figure-probe", "aria-labelledby": "figure-probe-title" }, root);
  el("h2", { id: "figure-probe-title" }, real, "Real models: the kernels measured on released weights");
  probe.draw(el("div", { class: "view", id: "view-probe" }, real)); // read from the lab server, not the payload
  document.body.dataset.ready = "true";
}

main().catch((err) => {
  const p = document.createElement("p");
  p.className = "absent";
  p.textContent = `The laboratory could not load its payload: ${err}`;
  document.getElementById("lab").appendChild(p);
  throw err;
});
