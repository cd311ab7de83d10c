"""The lab's "Real models" view: the shipped probe results served one head at a time, with the census beside."""

from __future__ import annotations

import http.client
import json
import threading

import numpy as np
import pytest

from poskernels.lab import probe_view, server
from poskernels.probe.ship import shipped


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
    assert v["absolute"] == results["minilm-l6"]["absolute"]["heads"][2]


@pytest.mark.parametrize("query, words", [("name=nope", "no probe result named 'nope'"),
                                          ("name=smollm2-135m&layer=30", "accepted layers 0..29"),
                                          ("name=minilm-l6&head=x", "must be integers")])  # fmt: skip
def test_bad_queries_are_one_line_400(served, query, words):
    status, data = _ask(served, f"/probe/view?{query}")
    assert status == 400 and words in data["error"] and "\n" not in data["error"]
    with pytest.raises(Exception, match="no probe result"):
        probe_view.view("nope", 0, 0)
