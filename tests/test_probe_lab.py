"""The lab's "Real models" view: the shipped probe results served one head at a time, with the census beside."""

from __future__ import annotations

import http.client
import json
import threading

import numpy as np
import pytest

from poskernels.census.probe.ship import shipped
from poskernels.lab import probe_view, server


@pytest.fixture
def served():
    s = server.make_server(port=0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    yield s.server_address[1]
    s.shutdown()
    s.server_close()


def _ask(port: int, path: str):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    conn.request("GET", path)
    r = conn.getresponse()
    data = json.loads(r.read())
    conn.close()
    return r.status, data


def test_the_view_is_the_shipped_result(served):
    status, data = _ask(served, "/probe/models")
    results = shipped()
    assert status == 200 and sorted(m["name"] for m in data["models"]) == sorted(results)
    status, v = _ask(served, "/probe/view?name=smollm2-135m&layer=12&head=3")
    assert status == 200
    head = results["smollm2-135m"]["layers"][12]["heads"][3]
    assert v["kernel"]["mean"] == head["kernel"] and v["q_energy"] == head["q_energy"]
    at = [v["kernel"]["offsets"].index(r) for r in v["plane_split"]["offsets"]]
    # the planes sum to the kernel (each stored to 4 decimals)
    assert np.allclose(np.sum(v["plane_split"]["planes"], 0), np.asarray(head["kernel"])[at], atol=1e-2)
    assert v["census"]["never_full_turn"] == results["smollm2-135m"]["census"]["None"]["never_full_turn"]
    status, v = _ask(served, "/probe/view?name=minilm-l6&layer=0&head=2")
    assert status == 200 and v["census"] is None
    a, h = results["minilm-l6"]["absolute"], results["minilm-l6"]["absolute"]["heads"][2]
    assert [text for _, text in v["absolute"]["rows"]] == [probe_view.num(x) for x in (
        a["gram_defect"], a["sinusoidal_defect"], a["random_table_defect"]["mean"])]  # fmt: skip
    assert [text for _, text in v["absolute"]["head"]] == [probe_view.num(h[k]) for k in ("defect", "random_mean")]
    assert _ask(served, "/probe/view?name=minilm-l6&layer=1&head=2")[1]["absolute"]["head"] is None  # layer 0 only


def test_the_views_axes_hold_what_they_draw():
    for name, r in shipped().items():
        v = probe_view.view(name, r["config"]["layers"] - 1, r["config"]["heads"] - 1)
        k, finite = v["kernel"], [x for x in v["kernel"]["mean"] if x is not None]
        assert k["y"]["min"] <= min(finite) and max(finite) <= k["y"]["max"]
        assert k["x"]["min"] == 0 and k["x"]["max"] == max(k["offsets"]) and k["x"]["log1p"]
        assert all(k["y"]["min"] <= t <= k["y"]["max"] for t in k["y"]["ticks"]) and len(k["y"]["ticks"]) >= 3
        if v["planes"]:  # RoPE: the energies' axis from 0 holds every bar
            assert v["energy"]["y"]["min"] <= 0 and max(v["q_energy"] + v["k_energy"]) <= v["energy"]["y"]["max"]
        else:
            assert "energy" not in v
        assert {f["key"]: f["text"] for f in v["figures"]}["sink_share"] == probe_view.num(r["summary"]["sink_share"])
        assert ("model SHA-256", r["provenance"]["sha256"]) in [tuple(row) for row in v["provenance_rows"]]


def test_extra_keys_are_ignored_and_a_past_window_is_charted(monkeypatch, tmp_path):
    r = json.loads(json.dumps(shipped()["smollm2-135m"]))
    r["a_key_from_a_later_probe"] = {"anything": [1, 2]}
    r["past_window"] = {"window": 8192, "maps": {"none": {"bins": [1024, 9216, 15360], "loss": [2.0, 3.5, None]},
                                                 "yarn": {"label": "YaRN", "bins": [1024, 9216], "loss": [2.0, 2.25]},
                                                 "broken": {"bins": [1], "loss": []}}}  # fmt: skip
    partial = {"config": r["config"], "provenance": r["provenance"]}  # no layers: not a result this view reads
    for name, part in (("new", r), ("partial", partial), ("other", [1, 2])):
        (tmp_path / f"{name}.json").write_text(json.dumps(part))
    monkeypatch.setattr(probe_view, "_results", lambda: probe_view.read_results(tmp_path))
    assert [m["name"] for m in probe_view.models()] == ["new"]
    pw = probe_view.view("new", 0, 0)["past_window"]
    assert [m["key"] for m in pw["maps"]] == ["none", "yarn"] and pw["maps"][1]["label"] == "YaRN"  # broken: left out
    assert pw["window"] == 8192 and pw["x"]["min"] <= 1024 and pw["x"]["max"] >= 15360
    assert pw["y"]["min"] <= 2.0 and pw["y"]["max"] >= 3.5
    del r["past_window"], r["loss"], r["census"]
    (tmp_path / "new.json").write_text(json.dumps(r))
    v = probe_view.view("new", 0, 0)
    assert v["past_window"] is None and v["census"] is None and "loss" not in [f["key"] for f in v["figures"]]


@pytest.mark.parametrize("query, words", [("name=nope", "no probe result named 'nope'"),
                                          ("name=smollm2-135m&layer=30", "accepted layers 0..29"),
                                          ("name=minilm-l6&head=x", "must be integers")])  # fmt: skip
def test_bad_queries_are_one_line_400(served, query, words):
    status, data = _ask(served, f"/probe/view?{query}")
    assert status == 400 and words in data["error"] and "\n" not in data["error"]
    with pytest.raises(Exception, match="no probe result"):
        probe_view.view("nope", 0, 0)
