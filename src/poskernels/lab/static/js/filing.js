// Figure B, the filing: one held-out filing token by token; hovering over or focusing a token shows every
// reader's answer there to "which company was named last?" (and the truth).
import { caption, el } from "./svg.js";

export function draw(container, data, state) {
  state.focus = state.focus ?? data.focus;
  el("h3", {}, container, "One held-out filing, token by token");
  const text = el("div", { class: "filing", role: "list", "aria-label": "filing tokens; arrow keys move" }, container);
  const panel = el("div", { class: "answers", id: "filing-answers", "aria-live": "polite" }, container);
  const spans = data.tokens.map((tok, i) => {
    const s = el("span", {
      class: `tok${data.marked[i] ? ` mention c${data.company[i] ?? "x"}` : ""}`, role: "listitem",
      tabindex: i === state.focus ? "0" : "-1", "data-pos": i,
    }, text, tok);
    if (data.wrong_share[i]) s.style.setProperty("--wrong", String(data.wrong_share[i]));
    s.addEventListener("mouseenter", () => show(i));
    s.addEventListener("focus", () => show(i));
    s.addEventListener("keydown", (ev) => {
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[ev.key];
      if (step === undefined) return;
      ev.preventDefault();
      const j = Math.min(data.tokens.length - 1, Math.max(0, i + step));
      spans[j].focus();
    });
    text.appendChild(document.createTextNode(" "));
    return s;
  });
  const name = (k) => (k === null || k === undefined ? "—" : data.labels[k]);
  function show(i) {
    spans[state.focus]?.classList.remove("current");
    spans[state.focus]?.setAttribute("tabindex", "-1");
    state.focus = i;
    spans[i].classList.add("current");
    spans[i].setAttribute("tabindex", "0");
    panel.replaceChildren();
    el("p", { class: "answers-head" }, panel,
      `Token ${i}: “${data.tokens[i]}”. Named last: ${name(data.truth[i])}` +
      (data.back[i] === null ? "" : `, ${data.back[i]} token${data.back[i] === 1 ? "" : "s"} back`));
    if (data.truth[i] === null) {
      el("p", {}, panel, "No company has been named yet: no question is asked here.");
      return;
    }
    const table = el("table", { class: "acc" }, panel);
    const head = el("tr", {}, el("thead", {}, table));
    el("th", { scope: "col" }, head, "reader");
    for (const s of data.seeds) el("th", { scope: "col" }, head, `seed ${s}`);
    const body = el("tbody", {}, table);
    for (const r of data.readers) {
      const row = el("tr", { "data-key": r.key }, body);
      el("th", { scope: "row" }, row, r.label);
      for (const s of data.seeds) {
        const a = data.answers[r.key][s][i];
        el("td", { class: a === data.truth[i] ? "right" : "wrong" }, row, `${name(a)}${a === data.truth[i] ? "" : " ✗"}`);
      }
    }
  }
  if (state.focus >= 0) {
    show(state.focus);
    // scroll the text box (not the page) so the token in focus is in view
    text.scrollTop = Math.max(0, spans[state.focus].offsetTop - text.offsetTop - text.clientHeight / 2);
  }
  caption(container, data.caption);
}
