"""``poskernels lab``: serves the page on 127.0.0.1 by default, prints the URL, stops cleanly on Ctrl-C;
``reproduce``'s writer hooks for the payload and the figures; the static page references nothing remote."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

from poskernels import cli
from poskernels.errors import PosKernelsError
from poskernels.lab import figures, payload, server


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers["Content-Type"], r.read()


@pytest.fixture
def served():
    s = server.make_server(port=0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{s.server_address[1]}", s
    s.shutdown()
    s.server_close()


def test_default_address_is_this_machine_only():
    p = cli.argparse.ArgumentParser()
    server.add_arguments(p)
    args = p.parse_args([])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    assert "lab" in cli.COMMANDS and cli.COMMANDS["lab"][2] is server.run


def test_serves_the_page_and_its_payload(served):
    url, s = served
    assert s.server_address[0] == "127.0.0.1"
    status, ctype, body = _get(url + "/")
    assert status == 200 and ctype.startswith("text/html") and b'id="lab"' in body
    status, ctype, body = _get(url + "/js/main.js")
    assert ctype == "text/javascript"  # module scripts need a JavaScript MIME type
    status, ctype, body = _get(url + "/payload.json")
    assert ctype == "application/json" and json.loads(body) == json.loads(payload.PAYLOAD_PATH.read_text())
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(url + "/../../payload.py")
    assert err.value.code == 404


def test_serves_the_payload_reproduce_wrote_when_there_is_one(tmp_path, monkeypatch):
    mine = tmp_path / "results" / "payload.json"
    monkeypatch.chdir(tmp_path)
    assert server.choose_payload() == server.STATIC_DIR / "payload.json"  # nothing written yet: the reference
    mine.parent.mkdir()
    mine.write_text(json.dumps({"version": 1, "mine": True}))
    assert server.choose_payload() == server.DEFAULT_PAYLOAD  # results/payload.json, relative to here
    s = server.make_server(port=0, payload=server.choose_payload().resolve())
    threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{s.server_address[1]}"
        assert json.loads(_get(url + "/payload.json?x=1")[2]) == {"version": 1, "mine": True}
        assert b'id="lab"' in _get(url + "/")[2]  # the page itself still comes from the package
    finally:
        s.shutdown()
        s.server_close()
    with pytest.raises(PosKernelsError, match="got|no payload file at 'nowhere.json'"):
        server.choose_payload("nowhere.json")


def test_bad_port_and_busy_port_raise_the_library_error(served):
    with pytest.raises(PosKernelsError, match="0..65535"):
        server.make_server(port=70000)
    with pytest.raises(PosKernelsError, match="cannot serve"):
        server.make_server(port=served[1].server_address[1])


def test_cli_prints_the_url_and_stops_on_ctrl_c():
    proc = subprocess.Popen(
        [sys.executable, "-m", "poskernels.cli", "lab", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        assert _get(m.group(0))[0] == 200
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err


def test_static_page_references_nothing_remote():
    for path in server.STATIC_DIR.rglob("*"):
        if path.suffix in (".html", ".js", ".css"):
            text = path.read_text()
            assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text.replace("http://www.w3.org/2000/svg", ""))


def test_reproduce_hooks_write_payload_and_figures(tmp_path, monkeypatch, capsys):
    # a partial run (--only thm1): OUT/payload.json and the figures it can draw; the package copy untouched
    monkeypatch.setattr(payload, "PAYLOAD_PATH", tmp_path / "pkg" / "payload.json")
    assert cli._REPRODUCE_WRITERS == [payload.write_payload, figures.write_figures]
    assert cli.main(["reproduce", "--out", str(tmp_path / "out"), "--only", "thm1", "thm5"]) == 0
    out = capsys.readouterr().out
    written = json.loads((tmp_path / "out" / "payload.json").read_text())
    assert written["sections"] == ["thm1", "thm5"] and "table" in written["ruler"]
    assert (tmp_path / "out" / "figures" / "kernel_ruler.png").exists()
    assert "[figures] skipped tournament_accuracy.png: payload part 'readouts' is absent" in out
    assert not (tmp_path / "pkg" / "payload.json").exists()
