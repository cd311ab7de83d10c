"""The laboratory in a real browser: Debian's chromium driven by Playwright (no browser is downloaded).

The page is served by the package's own server on 127.0.0.1; every request that leaves 127.0.0.1 is
aborted and recorded, and every console error is recorded; both must stay empty.  Screenshots of both
figures go to ``results/screenshots/`` for a person to look at.

Figure A is tested on the committed payload.  The views of Figure B that need trained heads are tested on
the committed payload when it carries them; while a part is absent there (its section not registered yet),
the same page is served a copy of the payload with that part filled from fixed kernels of the scheme
registry and a small filing, so the page's behaviour (toggles, hover) is tested either way.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest
from playwright.sync_api import sync_playwright

from poskernels.encodings import SCHEMES
from poskernels.lab import PAYLOAD_PATH, common
from poskernels.lab.server import STATIC_DIR, make_server
from poskernels.lab.trained import filing_case

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
SHOTS = Path(__file__).resolve().parents[1] / "results" / "screenshots"


def _filled(p: dict) -> tuple[dict, list[str]]:
    """The committed payload with each absent trained part of Figure B filled by a fixture (see module doc)."""
    p = json.loads(json.dumps(p))
    filled = []
    if "absent" in p["scores"]:
        r = np.arange(256)
        keys = [k for k in SCHEMES if SCHEMES[k].offset_kernel is not None]
        scores = {k: common.rnd(SCHEMES[k].offset_kernel(r), "score") for k in keys}
        part = {"offsets": r.tolist(), "scores": scores, "query_length": 256, "window": 32,
                "readers": [{"key": k, "label": SCHEMES[k].title} for k in keys]}  # fmt: skip
        part["x"] = common.axis(part["offsets"], 32, "offset r")
        part["y"] = common.axis(list(scores.values()), 5.0, "score")
        part["caption"] = "fixture: fixed kernels of the scheme registry"
        p["scores"] = part
        filled.append("scores")
    if "absent" in p["filing"]:
        toks = ["Acme", "grew", "and", "Bolt", "fell", ";", "the", "company"]
        marked = [t in ("Acme", "Bolt") for t in toks]
        truth = [None, 0, 0, 1, 1, 1, 1, 1]
        answers = {"rope": {"0": truth, "1": [None, 0, 0, 1, 1, 1, 0, 0]}, "alibi": {"0": truth, "1": truth}}
        part = filing_case({"tokens": toks, "marked": marked, "companies": ["Acme", "Bolt"], "truth": truth,
                            "answers": answers})  # fmt: skip
        part["readers"] = [{"key": k, "label": k} for k in part["readers"]]
        part["caption"] = "fixture: a two-company filing"
        p["filing"] = part
        filled.append("filing")
    return p, filled


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(PAYLOAD_PATH.read_text())


def _serve(directory: Path):
    server = make_server(port=0, directory=directory)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="module")
def sites(committed, tmp_path_factory):
    """Two servers: the package's static page as shipped, and a copy whose payload is filled (if needed)."""
    copy = tmp_path_factory.mktemp("static") / "static"
    shutil.copytree(STATIC_DIR, copy)
    filled, which = _filled(committed)
    (copy / "payload.json").write_text(json.dumps(filled))
    real, url_real = _serve(STATIC_DIR)
    fill, url_fill = _serve(copy)
    yield {"real": url_real, "filled": url_fill, "which": which, "payload": filled, "server": real}
    for s in (real, fill):
        s.shutdown()
        s.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def open_page(browser):
    """Open a URL in a fresh page; yields (page, problems) where problems collects console errors and
    requests outside 127.0.0.1 (aborted)."""
    contexts = []

    def _open(url, width=1280):
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        contexts.append(ctx)
        problems = []

        def guard(route):
            host = urlparse(route.request.url).hostname
            if host == "127.0.0.1":
                route.continue_()
            else:
                problems.append(f"request outside 127.0.0.1: {route.request.url}")
                route.abort()

        ctx.route("**/*", guard)
        pg = ctx.new_page()
        pg.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        pg.goto(url)
        pg.wait_for_selector("body[data-ready=true]", timeout=15_000)
        return pg, problems

    yield _open
    for c in contexts:
        c.close()


def _shown(locator) -> bool:
    # drawn, whatever its box: a flat curve (a relative head's) has a zero-height box that is_visible rejects
    return locator.evaluate("e => getComputedStyle(e).display !== 'none' && e.getAttribute('d').length > 0")


def _hand(pg, which: str, plane: int) -> tuple[float, float]:
    h = pg.locator(f"line.hand-{which}[data-plane='{plane}']")
    return float(h.get_attribute("x2")), float(h.get_attribute("y2"))


def test_sliders_move_the_hands_and_the_readout(open_page, sites, committed):
    pg, problems = open_page(sites["real"])
    readout = committed["clocks"]["readout"]
    assert pg.locator("#clock-readout").inner_text() == f"{readout[7]:.3f}"  # m = 3, n = 10
    before = [_hand(pg, "m", j) for j in range(3)]
    pg.locator("#clock-m").focus()
    for _ in range(5):  # keyboard: m = 3 -> 8
        pg.keyboard.press("ArrowRight")
    assert pg.locator("#clock-m-value").inner_text() == "8"
    assert pg.locator("#clock-offset").inner_text() == "2"
    assert pg.locator("#clock-readout").inner_text() == f"{readout[2]:.3f}"
    after = [_hand(pg, "m", j) for j in range(3)]
    assert all(a != b for a, b in zip(after, before))  # the fast hands turned
    pg.locator("#clock-n").focus()
    pg.keyboard.press("End")
    top = committed["clocks"]["positions"]["max"]
    assert pg.locator("#clock-n-value").inner_text() == str(top)
    assert pg.locator("#clock-readout").inner_text() == f"{readout[top - 8]:.3f}"
    assert problems == []


def test_offset_lock_keeps_the_readout_while_the_hands_turn(open_page, sites):
    pg, problems = open_page(sites["real"])
    pg.locator("#clock-lock").check()
    value, offset = pg.locator("#clock-readout").inner_text(), pg.locator("#clock-offset").inner_text()
    hands = [(_hand(pg, "m", j), _hand(pg, "n", j)) for j in range(8)]
    pg.locator("#clock-m").focus()
    for _ in range(20):
        pg.keyboard.press("ArrowRight")
        assert pg.locator("#clock-readout").inner_text() == value
    assert pg.locator("#clock-m-value").inner_text() == "23" and pg.locator("#clock-n-value").inner_text() == "30"
    pg.locator("#clock-n").focus()
    pg.keyboard.press("PageUp")
    assert pg.locator("#clock-offset").inner_text() == offset and pg.locator("#clock-readout").inner_text() == value
    moved = [(_hand(pg, "m", j), _hand(pg, "n", j)) for j in range(8)]
    turned = [a != b for a, b in zip(hands, moved)]
    assert turned[:3] == [True] * 3  # every fast hand turned; the readout did not move
    pg.locator("#clock-lock").uncheck()
    pg.locator("#clock-m").focus()
    pg.keyboard.press("ArrowLeft")
    assert pg.locator("#clock-offset").inner_text() != offset  # unlocked: the offset changes again
    assert problems == []


def test_reader_toggles_show_and_hide_curves(open_page, sites):
    pg, problems = open_page(sites["filled"])
    toggles = pg.locator("#view-scores button.toggle[data-key]")
    assert toggles.count() == len(sites["payload"]["scores"]["readers"]) >= 3
    key = sites["payload"]["scores"]["readers"][0]["key"]
    curve = pg.locator(f"#view-scores path.curve[data-key='{key}']")
    button = pg.locator(f"#view-scores button.toggle[data-key='{key}']")
    assert _shown(curve) and button.get_attribute("aria-pressed") == "true"
    button.click()
    assert not _shown(curve) and button.get_attribute("aria-pressed") == "false"
    button.focus()
    pg.keyboard.press("Enter")  # keyboard toggles too
    assert _shown(curve)
    hidden = sites["payload"]["scores"].get("hidden", [])  # readers beyond the article start hidden
    curves = pg.locator("#view-scores path.curve")
    assert sum(_shown(curves.nth(i)) for i in range(curves.count())) == curves.count() - len(hidden)
    for key in hidden:
        pg.locator(f"#view-scores button.toggle[data-key='{key}']").click()
        assert _shown(pg.locator(f"#view-scores path.curve[data-key='{key}']"))
    assert problems == []


def test_long_view_toggles_hide_a_readers_curves_in_both_panels(open_page, sites):
    pg, problems = open_page(sites["real"])
    readers = sites["payload"]["long"]["readers"]
    toggles = pg.locator("#view-long button.toggle[data-key]")
    assert toggles.count() == len(readers) >= 3  # chips that look like buttons are buttons
    key = readers[0]["key"]
    curves = pg.locator(f"#view-long path.curve[data-key='{key}']")
    assert curves.count() == 2 and all(_shown(curves.nth(i)) for i in range(2))
    pg.locator(f"#view-long button.toggle[data-key='{key}']").click()
    assert not any(_shown(curves.nth(i)) for i in range(2))
    assert pg.locator(f"#view-long button.toggle[data-key='{key}']").get_attribute("aria-pressed") == "false"
    pg.locator(f"#view-long button.toggle[data-key='{key}']").click()
    assert all(_shown(curves.nth(i)) for i in range(2))
    assert problems == []


@pytest.mark.parametrize("width", [480, 820, 1280, 1920])
def test_every_axis_tick_label_is_whole_at_every_width(open_page, sites, width):
    # the long view's 10^5 tick read "10000" when its label was centred on the plot's right edge and clipped
    pg, problems = open_page(sites["real"], width=width)
    clipped = pg.evaluate(
        """() => [...document.querySelectorAll("svg.plot text.tick")].filter((t) => {
             const box = t.getBoundingClientRect(), svg = t.ownerSVGElement.getBoundingClientRect();
             return box.width > 0 && (box.left < svg.left - 0.5 || box.right > svg.right + 0.5);
           }).map((t) => t.ownerSVGElement.closest(".view").id + ": " + t.textContent)"""
    )
    assert clipped == []
    ticks = pg.locator("#view-long svg.plot text.tick").evaluate_all("ts => ts.map((t) => t.textContent)")
    assert "100000" in ticks  # the length the section is about, whole
    assert problems == []


def test_census_kappa_changes_the_bars(open_page, sites, committed):
    pg, problems = open_page(sites["real"])
    bar = pg.locator("#view-census rect.bar[data-key='pi'][data-plane='0']")
    h4 = float(bar.get_attribute("height"))
    pg.locator("#census-kappa-2").check()
    h2 = float(pg.locator("#view-census rect.bar[data-key='pi'][data-plane='0']").get_attribute("height"))
    assert h2 == pytest.approx(2 * h4, rel=1e-3)  # PI's factor 1/kappa: 1/2 against 1/4
    assert problems == []


def test_hovering_a_filing_token_shows_every_readers_answer(open_page, sites):
    pg, problems = open_page(sites["filled"])
    part = sites["payload"]["filing"]
    i = max(k for k, t in enumerate(part["truth"]) if t is not None)
    pg.locator(f"#view-filing .tok[data-pos='{i}']").hover()
    panel = pg.locator("#filing-answers")
    assert f"Token {i}:" in panel.inner_text()
    rows = panel.locator("tbody tr")
    assert rows.count() == len(part["readers"])
    for r, reader in enumerate(part["readers"]):
        cells = rows.nth(r).locator("td")
        assert cells.count() == len(part["seeds"])
        for s, seed in enumerate(part["seeds"]):
            a = part["answers"][reader["key"]][seed][i]
            assert cells.nth(s).inner_text().startswith(part["labels"][a])
            assert ("✗" in cells.nth(s).inner_text()) == (a != part["truth"][i])
    pg.locator(f"#view-filing .tok[data-pos='{i}']").focus()
    pg.keyboard.press("ArrowLeft")  # keyboard: the previous token's answers
    assert f"Token {i - 1}:" in panel.inner_text()
    assert problems == []


def test_screenshots_of_both_figures(open_page, sites):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, url in (("", sites["real"]),) + ((("_with_test_fixture", sites["filled"]),) if sites["which"] else ()):
        pg, problems = open_page(url)
        for fig in ("A", "B"):
            path = SHOTS / f"figure_{fig}{name}.png"
            pg.locator(f"#figure-{fig}").screenshot(path=str(path))
            assert path.stat().st_size > 10_000
        assert problems == []
    pg, problems = open_page(sites["real"], width=820)  # a narrow laptop window: nothing overflows sideways
    assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert problems == []


def test_the_guard_catches_outside_requests_and_errors(open_page, sites):
    pg, problems = open_page(sites["real"])
    pg.evaluate("fetch('http://example.invalid/x').catch(() => {}); console.error('boom')")
    pg.wait_for_timeout(200)
    assert any("outside 127.0.0.1" in p for p in problems) and any("boom" in p for p in problems)


def _census_lines(spec, target=None, name=None) -> list[list[str]]:
    from poskernels.census import census_all, census_lines

    data = census_all(spec, target, scan_base=False, name=name)
    return [census_lines(d) for d in (data["layer_types"].values() if "layer_types" in data else [data])]


def _shown_census(pg) -> list[list[str]]:
    return pg.locator("#census-result section.census-one").evaluate_all(
        "ss => ss.map((s) => [...s.querySelectorAll('ul.census-lines li')].map((li) => li.textContent))"
    )


def _settled(pg, state="ready"):
    pg.wait_for_selector(f"#census-model[data-state={state}]", state="attached", timeout=30_000)


def test_census_view_reads_a_bundled_model_and_a_target(open_page, sites):
    from poskernels.census.config import bundled_configs, load_config

    pg, problems = open_page(sites["real"])
    _settled(pg)
    first = bundled_configs()[0]
    assert _shown_census(pg) == _census_lines(first)  # the first model at its default target, as the CLI reads it
    assert pg.locator("#census-result table.census-planes tbody tr").count() == load_config(first).rotary_dim // 2
    from poskernels.lab import census_view

    maps = census_view.view(first, None, first)["censuses"][0]["chart"]["maps"]  # the chart: a curve per map
    assert pg.locator("#census-result svg.census-chart path.curve").count() == len(maps) >= 4
    pg.locator("#census-model-pick").select_option("hub:gemma-3-4b-it")
    pg.wait_for_selector("#census-result section.census-one[data-layer-type=full_attention]", timeout=30_000)
    pg.locator("#census-target").fill("262144")
    pg.locator("#census-target").dispatch_event("change")
    pg.wait_for_function(
        "() => document.querySelector('#census-result').textContent.includes('target length N = 262144')"
    )
    _settled(pg)
    from poskernels.census import census_all
    from poskernels.census.config import hub_configs

    assert _shown_census(pg) == _census_lines(str(hub_configs()["gemma-3-4b-it"]), 262144, "hub:gemma-3-4b-it")
    unseen = pg.locator("section[data-layer-type=full_attention] tr.unseen").count()
    full = census_all(str(hub_configs()["gemma-3-4b-it"]), 262144, scan_base=False)["layer_types"]["full_attention"]
    assert unseen == len(full["context"]["unseen_planes"]["config"]) > 0  # its linear 8 reaches 131072, not N
    assert problems == []


def test_census_view_reads_a_chosen_and_a_dropped_config(open_page, sites, tmp_path):
    from poskernels.census.config import raw_config

    pg, problems = open_page(sites["real"])
    _settled(pg)
    raw, _ = raw_config("phi-3.5-mini")
    path = tmp_path / "phi.json"
    path.write_text(json.dumps(raw))
    pg.locator("#census-file").set_input_files(str(path))
    pg.wait_for_function("() => document.querySelector('#census-result').textContent.includes('phi.json')")
    _settled(pg)
    assert _shown_census(pg) == _census_lines(raw, None, "phi.json")
    dropped = json.dumps(raw_config("mistral-7b")[0])
    pg.evaluate(
        """(text) => {
             const dt = new DataTransfer();
             dt.items.add(new File([text], "dropped.json", { type: "application/json" }));
             document.querySelector("#census-drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt,
               bubbles: true, cancelable: true }));
           }""",
        dropped,
    )
    pg.wait_for_function("() => document.querySelector('#census-result').textContent.includes('dropped.json')")
    _settled(pg)
    assert _shown_census(pg) == _census_lines(json.loads(dropped), None, "dropped.json")
    assert problems == []


def test_census_view_shows_a_bad_config_in_one_line(open_page, sites, tmp_path):
    pg, problems = open_page(sites["real"])
    _settled(pg)
    for content, detail in ((b"{not json", "not valid JSON"), (b'{"model_type": "gpt2"}', "has no RoPE")):
        path = tmp_path / "bad.json"
        path.write_bytes(content)
        pg.locator("#census-file").set_input_files(str(path))
        _settled(pg, "error")
        assert pg.locator("#census-result").inner_html() == ""  # the previous census is cleared, not left under it
        message = pg.locator("#census-error")
        assert message.is_visible() and detail in message.inner_text() and "\n" not in message.inner_text()
        assert "Traceback" not in pg.content()
        pg.locator("#census-model-pick").select_option("mistral-7b")  # a good pick clears the message
        _settled(pg)
        assert not message.is_visible()
    # the browser logs each refused request (status 400) as a console error; nothing else may appear
    assert all("status of 400" in p for p in problems), problems


@pytest.fixture
def census_count(sites):
    """What the real site's census runner saw: the most requests in flight at once whose client was still
    connected (a stale one the page aborted is being stopped, and holds no slot), and every answer's status."""
    from poskernels.lab.sandbox import _hung_up

    runner = sites["server"].census
    run, lock, inflight, seen = runner.run, threading.Lock(), {}, {"most": 0, "statuses": []}

    def counted(client, *args, watch=None, **kwargs):
        with lock:
            live = 1 + sum(not _hung_up(w) for w in inflight.values())
            seen["most"] = max(seen["most"], live)
            inflight[id(watch)] = watch
        try:
            status, data = run(client, *args, watch=watch, **kwargs)
            seen["statuses"].append("busy" if str(data.get("error", "")).startswith("busy") else int(status))
            return status, data
        finally:
            with lock:
                del inflight[id(watch)]

    runner.run = counted
    yield seen
    del runner.run


def test_census_choices_in_quick_succession_stay_within_the_servers_cap(open_page, sites, census_count):
    # a page that asked for a census per choice, none aborted, met its own server's cap and logged a 503
    from poskernels.census.config import bundled_configs

    pg, problems = open_page(sites["real"])
    _settled(pg)
    names = bundled_configs()[:6]
    pg.evaluate(
        """async (names) => {
             const pick = document.querySelector("#census-model-pick");
             const target = document.querySelector("#census-target");
             for (const [i, name] of names.entries()) {
               pick.value = name;
               pick.dispatchEvent(new Event("change"));
               target.value = String(4096 * (i + 1));
               target.dispatchEvent(new Event("change"));
               await new Promise((r) => setTimeout(r, 20));
             }
           }""",
        names,
    )
    _settled(pg)
    assert _shown_census(pg) == _census_lines(names[-1], 4096 * len(names))  # the last choice, not a stale one
    assert 1 <= census_count["most"] <= sites["server"].census.max_per_client
    assert "busy" not in census_count["statuses"] and 200 in census_count["statuses"]
    assert problems == []  # no refusal reached the page (the browser logs each as a console error)


def test_a_census_refused_as_busy_is_tried_again_and_drawn(open_page, sites):
    # other clients hold every census slot when the page asks: it shows "busy", waits, asks again, and draws
    from poskernels.census.config import bundled_configs

    runner = sites["server"].census
    with runner._lock:
        runner._running["127.0.0.2"] += runner.max_running
    try:
        pg, problems = open_page(sites["real"])
        _settled(pg, "busy")
        assert pg.locator("#census-error").inner_text().startswith("busy:")
    finally:
        with runner._lock:
            del runner._running["127.0.0.2"]
    _settled(pg)
    assert not pg.locator("#census-error").is_visible()
    first = bundled_configs()[0]
    assert _shown_census(pg) == _census_lines(first)
    assert problems and all("status of 503" in p for p in problems), problems  # the refusals, logged; nothing else
