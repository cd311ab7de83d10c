"""The laboratory's "Real models" view in a real browser (Debian's chromium driven by Playwright, as in
``test_lab_browser.py``): the drawn kernel's points are the shipped result's, MiniLM shows its Toeplitz defect,
the controls work from the keyboard, and a head the server does not know shows the server's one line."""

from __future__ import annotations

import shutil
import threading
from urllib.parse import urlparse

import numpy as np
import pytest
from playwright.sync_api import sync_playwright

from poskernels.census.probe.ship import shipped
from poskernels.lab import probe_view
from poskernels.lab.server import make_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def url():
    server = make_server(port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def open_page(browser, url):
    """Open the page (at ``url + tail``); yields (page, problems): console errors and requests off 127.0.0.1."""
    contexts = []

    def _open(tail=""):
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(ctx)
        problems = []

        def guard(route):
            if urlparse(route.request.url).hostname == "127.0.0.1":
                route.continue_()
            else:
                problems.append(f"request outside 127.0.0.1: {route.request.url}")
                route.abort()

        ctx.route("**/*", guard)
        pg = ctx.new_page()
        pg.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        pg.goto(url + tail)
        pg.wait_for_selector("body[data-ready=true]", timeout=15_000)
        return pg, problems

    yield _open
    for c in contexts:
        c.close()


def _settled(pg, state="ready"):
    pg.wait_for_selector(f"#probe[data-state={state}]", state="attached", timeout=30_000)


def _choose(pg, name, layer, head):
    pg.locator("#probe-model").select_option(name)
    _settled(pg)
    pg.locator("#probe-layer").select_option(str(layer))
    _settled(pg)
    pg.locator("#probe-head").select_option(str(head))
    pg.wait_for_function(
        "(p) => new RegExp(p).test(document.querySelector('#probe-result .probe-name')?.textContent ?? '')",
        arg=rf"^{name}, layer {layer}\b.*, head {head};",
    )
    _settled(pg)


def test_the_drawn_kernel_and_energies_are_the_shipped_heads(open_page):
    pg, problems = open_page()
    _settled(pg)
    _choose(pg, "smollm2-135m", 12, 3)
    r = shipped()["smollm2-135m"]
    head = r["layers"][12]["heads"][3]
    points = pg.locator("#probe-result svg.probe-kernel circle.point").evaluate_all(
        "cs => cs.map((c) => [Number(c.dataset.offset), Number(c.dataset.value), Number(c.getAttribute('cy'))])"
    )
    expected = [(o, v) for o, v in zip(r["offsets"], head["kernel"]) if v is not None]
    assert [(o, v) for o, v, _ in points] == expected  # every point of the curve is the JSON's
    values, cy = np.array([v for _, v, _ in points]), np.array([y for _, _, y in points])
    slope, intercept = np.polyfit(values, cy, 1)
    assert slope < 0 and np.abs(values * slope + intercept - cy).max() < 0.02  # drawn where the values say
    d = pg.locator("#probe-result svg.probe-kernel path.curve").get_attribute("d")
    assert d.count("L") + d.count("M") == len(expected)
    bars = pg.locator("#probe-result svg.probe-energy rect.bar[data-key=q]").evaluate_all(
        "bs => bs.map((b) => Number(b.dataset.value))"
    )
    assert bars == head["q_energy"]
    census = r["census"]["None"]
    assert pg.locator("#probe-result svg.probe-energy rect.never-turn").count() == len(census["never_full_turn"])
    lines = pg.locator("#probe-result .probe-census li").all_inner_texts()
    assert lines == probe_view.view("smollm2-135m", 12, 3)["census"]["lines"]
    assert any(f"= {census['critical_dimension']}" in t for t in lines)
    figures = dict(pg.locator("#probe-result table.probe-figures tr").evaluate_all(
        "rs => rs.map((r) => [r.querySelector('th').textContent, r.querySelector('td').textContent])"))  # fmt: skip
    assert figures[probe_view.figures(r)[2]["label"]] == probe_view.num(r["summary"]["sink_share"])
    assert r["provenance"]["sha256"] in pg.locator("#probe-result table.probe-provenance").inner_text()
    assert problems == []


def test_minilm_shows_its_toeplitz_defect_instead_of_planes(open_page):
    pg, problems = open_page()
    _settled(pg)
    _choose(pg, "minilm-l6", 0, 2)
    a = shipped()["minilm-l6"]["absolute"]
    cells = pg.locator("#probe-result table.probe-defect td").all_inner_texts()
    assert cells == [probe_view.num(x) for x in (a["gram_defect"], a["sinusoidal_defect"],
                                                 a["random_table_defect"]["mean"])]  # fmt: skip
    head = pg.locator("#probe-result table.probe-head-defect td").all_inner_texts()
    assert head == [probe_view.num(a["heads"][2]["defect"]), probe_view.num(a["heads"][2]["random_mean"])]
    assert pg.locator("#probe-result svg.probe-energy").count() == 0  # a learned table has no planes
    assert pg.locator("#probe-result svg.probe-kernel circle.point").count() > 0
    assert problems == []


def test_the_controls_answer_the_keyboard(open_page):
    pg, problems = open_page()
    _settled(pg)
    first = pg.locator("#probe-result .probe-name").inner_text()
    pg.locator("#probe-head").focus()
    pg.keyboard.press("ArrowDown")  # the next head, without a mouse
    pg.wait_for_function("(t) => document.querySelector('#probe-result .probe-name').textContent !== t", arg=first)
    _settled(pg)
    assert pg.locator("#probe-head").input_value() == "1"
    assert "head 1;" in pg.locator("#probe-result .probe-name").inner_text()
    assert pg.locator("label:has(#probe-model)").count() == 1 and pg.locator("label:has(#probe-layer)").count() == 1
    assert problems == []


@pytest.mark.parametrize("query", ["name=nope&layer=0&head=0", "name=smollm2-135m&layer=99&head=0",
                                   "name=minilm-l6&layer=0&head=x"])  # fmt: skip
def test_a_head_the_server_does_not_know_shows_its_one_line(open_page, query):
    pg, problems = open_page(f"#probe?{query}")
    _settled(pg, "error")
    message = pg.locator("#probe-error")
    with pytest.raises(Exception) as refused:
        probe_view.view_of_query(query)
    assert message.is_visible() and message.inner_text() == " ".join(str(refused.value).split())
    assert pg.locator("#probe-result").inner_html() == ""
    assert problems and all("status of 400" in p for p in problems), problems  # the refusal, logged; nothing else


def test_a_result_with_a_past_window_and_unknown_keys_is_drawn(open_page, monkeypatch, tmp_path):
    # later probes add results (another model, a past-window reading): the page lists and draws what it knows
    import json

    r = json.loads(json.dumps(shipped()["smollm2-135m"]))
    r["a_key_from_a_later_probe"] = [1, 2, 3]
    maps = {"none": {"bins": [1024, 9216, 15360], "loss": [2.0, 3.5, 4.0]},
            "yarn": {"label": "YaRN", "bins": [1024, 9216], "loss": [2.0, 2.25]}}  # fmt: skip
    r["past_window"] = {"window": 8192, "maps": maps}
    (tmp_path / "later-model.json").write_text(json.dumps(r))
    monkeypatch.setattr(probe_view, "_results", lambda: probe_view.read_results(tmp_path))
    pg, problems = open_page()
    _settled(pg)
    assert pg.locator("#probe-model option").evaluate_all("os => os.map((o) => o.value)") == ["later-model"]
    curves = pg.locator("#probe-result svg.probe-past path.curve")
    assert curves.evaluate_all("ps => ps.map((p) => p.dataset.key)") == ["none", "yarn"]
    paths = curves.evaluate_all("ps => ps.map((p) => p.getAttribute('d'))")
    assert [d.count("M") + d.count("L") for d in paths] == [3, 2]  # a point per bin
    assert pg.locator("#probe-result svg.probe-past line.window-edge").count() == 1
    assert "YaRN" in pg.locator("#view-probe ul.legend").last.inner_text()
    assert problems == []
