"""The lab server's census view: a bundled model or an uploaded ``config.json``, read through the census's own code.

Every answer is JSON; bad uploads (not JSON, not an object, not UTF-8, too large, no length, a body that never
arrives, a config without RoPE) are refused with one line and a 4xx status, never a traceback; a per-layer config
gets one census per layer type.  The numbers the page shows are :func:`census_lines` of the command line's census.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading

import pytest

from poskernels.census import census_all, census_lines
from poskernels.census.config import bundled_configs, hub_configs, raw_config
from poskernels.lab import census_view, handler, server


@pytest.fixture
def served():
    s = server.make_server(port=0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    yield s.server_address[1], s
    s.shutdown()
    s.server_close()


def _ask(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    assert r.getheader("Content-Type") == "application/json"
    return r.status, json.loads(data)


def _lines(spec, target=None, name=None) -> list[list[str]]:
    data = census_all(spec, target, scan_base=False, name=name)
    parts = data["layer_types"].values() if "layer_types" in data else [data]
    return [census_lines(d) for d in parts]


def test_the_list_is_the_bundled_and_hub_configs_and_the_server_is_local(served):
    port, s = served
    assert s.server_address[0] == "127.0.0.1"
    status, data = _ask(port, "GET", "/census/models")
    assert status == 200 and data["limit"] == census_view.UPLOAD_LIMIT
    names = [m["name"] for m in data["models"]]
    assert names == list(bundled_configs()) + [f"hub:{n}" for n in hub_configs()]


@pytest.mark.parametrize(("name", "target"), [("llama-3.1-8b", None), ("mistral-7b", 65536)])
def test_a_bundled_model_reads_as_the_command_line_reads_it(served, name, target):
    port, _ = served
    status, data = _ask(port, "GET", f"/census/model?name={name}" + (f"&target={target}" if target else ""))
    assert status == 200
    assert [c["lines"] for c in data["censuses"]] == _lines(name, target)
    planes = data["censuses"][0]["planes"]
    ref = census_all(name, target, scan_base=False)["planes"]
    assert [p[0] for p in planes] == [p["plane"] for p in ref] and [p[1] for p in planes] == [
        p["wavelength"] for p in ref
    ]


def test_an_upload_is_read_as_the_same_file_on_the_command_line(served, tmp_path):
    port, _ = served
    raw, _ = raw_config("qwen2.5-7b-yarn")
    body = json.dumps(raw).encode()
    status, data = _ask(port, "POST", "/census/upload?file=qwen.json&target=131072", body)
    assert status == 200 and data["name"] == "qwen.json"
    assert [c["lines"] for c in data["censuses"]] == _lines(raw, 131072, "qwen.json")
    assert data["censuses"][0]["lines"][0] == "RoPE census: qwen.json (qwen2)"


def test_a_per_layer_upload_gets_one_census_per_layer_type(served):
    port, _ = served
    path = hub_configs()["gemma-3-4b-it"]
    status, data = _ask(port, "POST", "/census/upload?target=262144&file=gemma.json", path.read_bytes())
    assert status == 200
    assert [c["layer_type"] for c in data["censuses"]] == ["sliding_attention", "full_attention"]
    assert [c["lines"] for c in data["censuses"]] == _lines(json.loads(path.read_text()), 262144, "gemma.json")


@pytest.mark.parametrize(
    ("body", "query", "status", "detail"),
    [
        (b"not json", "", 400, "not valid JSON"),
        (b"[1, 2]", "", 400, "must be a JSON object; got a JSON list"),
        (b'"config"', "", 400, "must be a JSON object; got a JSON str"),
        ('{"a": "é"}'.encode("utf-16"), "", 400, "not UTF-8"),
        (b'{"model_type": "gpt2"}', "", 400, "has no RoPE"),
        (b'{"model_type": "llama", "layer_types": ["full_attention"], "num_hidden_layers": 2}', "", 400, "2"),
        (b'{"model_type": "llama"}', "target=12abc", 400, "whole number of tokens"),
        (b'{"model_type": "llama"}', "target=99999999999", 400, "must lie in 1.."),
        (b'{"model_type": "llama"}', "target=100", 400, "training length"),
        (b"{" * 100_000 + b"}" * 100_000, "", 400, "config"),
        (b"x" * (census_view.UPLOAD_LIMIT + 1), "", 413, "the limit is 1048576 bytes"),
    ],
    ids=[
        "not-json",
        "list",
        "string",
        "utf16",
        "no-rope",
        "layer-count",
        "target-text",
        "target-huge",
        "target-short",
        "deep",
        "huge",
    ],  # fmt: skip
)
def test_bad_uploads_are_refused_in_one_line(served, body, query, status, detail):
    port, _ = served
    got, data = _ask(port, "POST", f"/census/upload?{query}", body)
    assert got == status and set(data) == {"error"}
    assert detail in data["error"] and "\n" not in data["error"] and "Traceback" not in data["error"]


def test_a_huge_upload_is_refused_before_its_body_is_read(served):
    port, _ = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /census/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000000\r\n\r\n{")
        parts = []  # the head and the body may come in separate packets: read until the server closes
        while chunk := sock.recv(65536):
            parts.append(chunk)
        answer = b"".join(parts).decode()
    assert answer.startswith("HTTP/1.0 413") and "the limit is" in answer


def test_an_upload_without_length_or_that_never_arrives_is_refused(served, monkeypatch):
    port, _ = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /census/upload HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.0 411")
    monkeypatch.setattr(handler._Handler, "timeout", 0.5)  # the whole body must arrive within the handler's timeout
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /census/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        answer = sock.recv(65536)  # a 408 at all is the handler's timeout: the body never arrives
        assert answer.startswith(b"HTTP/1.0 408")


def test_unknown_models_and_addresses_are_json_refusals(served):
    port, _ = served
    status, data = _ask(port, "GET", "/census/model?name=llama-3-8")
    assert status == 400 and "no bundled config named 'llama-3-8'" in data["error"]
    assert _ask(port, "GET", "/census/nothing")[0] == 404
    assert _ask(port, "POST", "/payload.json", b"{}")[0] == 404


def test_the_census_chart_is_each_maps_factor_per_plane():
    # the chart the page draws: every map's factor on theta_j per plane, read off the command line's census
    import math

    for spec, target in (("llama-3.1-8b", 131072), ("mistral-7b", 65536)):
        data = census_all(spec, target, scan_base=False)
        c = census_view.view(spec, target, spec)["censuses"][0]["chart"]
        assert c["maps"][0]["key"] == "config" and {"pi", "ntk", "yarn"} <= set(c["factors"])
        for m, fs in c["factors"].items():
            assert fs == [float(p["factors"][m]) for p in data["planes"]], m
            assert c["log2"][m] == [round(math.log2(f), 4) for f in fs]
            assert c["y"]["min"] <= min(c["log2"][m]) and max(c["log2"][m]) <= c["y"]["max"]
        assert all(math.isclose(f, 1 / data["kappa"]) for f in c["factors"]["pi"])  # PI: 1 / kappa on every plane
