"""``poskernels lab``: serves the page on 127.0.0.1 by default, prints the URL, stops cleanly on Ctrl-C;
``reproduce``'s writer hooks for the payload and the figures; the static page references nothing remote."""

from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

from poskernels import cli
from poskernels.cli import lab as lab_cli
from poskernels.cli import reproduce as reproduce_cli
from poskernels.errors import PosKernelsError
from poskernels.lab import figures, handler, payload, server


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
    p = argparse.ArgumentParser()
    lab_cli.add_arguments(p)
    args = p.parse_args([])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    assert "lab" in cli.COMMANDS and cli.COMMANDS["lab"][2] is lab_cli.run


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
    with pytest.raises(PosKernelsError, match=r"\[0, 65535\]"):
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
    assert proc.returncode == 130, err  # Ctrl-C exits 130, as for every command
    assert "stopped" in out and "Traceback" not in err


def test_static_page_references_nothing_remote():
    for path in server.STATIC_DIR.rglob("*"):
        if path.suffix in (".html", ".js", ".css"):
            text = path.read_text()
            assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text.replace("http://www.w3.org/2000/svg", ""))


def test_reproduce_hooks_write_payload_and_figures(tmp_path, monkeypatch, capsys):
    # a partial run (--only thm1): OUT/payload.json and the figures it can draw; the package copy untouched
    monkeypatch.setattr(payload, "PAYLOAD_PATH", tmp_path / "pkg" / "payload.json")
    assert reproduce_cli._REPRODUCE_WRITERS == [payload.write_payload, figures.write_figures]
    assert cli.main(["reproduce", "--out", str(tmp_path / "out"), "--only", "thm1", "thm5"]) == 0
    out = capsys.readouterr().out
    written = json.loads((tmp_path / "out" / "payload.json").read_text())
    assert written["sections"] == ["thm1", "thm5"] and "table" in written["ruler"]
    assert (tmp_path / "out" / "figures" / "kernel_ruler.png").exists()
    assert "[figures] skipped tournament_accuracy.png: payload part 'readouts' is absent" in out
    assert not (tmp_path / "pkg" / "payload.json").exists()


# ----------------------------------------------------------------------------- the server's bounds (loopback only)


def _raw(address, request: bytes, timeout: float = 10.0) -> bytes:
    """Send ``request`` on a fresh connection and read the whole answer."""
    import socket

    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_malformed_paths_get_400_and_the_server_lives(served):
    url, s = served
    for path in (b"/%00", b"/js/%00main.js", b"/a\x00b", b"/%ff%fe"):
        answer = _raw(s.server_address[:2], b"GET " + path + b" HTTP/1.0\r\n\r\n")
        assert answer.split(b"\r\n", 1)[0] in (b"HTTP/1.0 400 malformed path", b"HTTP/1.0 404 File not found"), answer
    assert _raw(s.server_address[:2], b"GET /%00 HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 400")
    assert _get(url + "/")[0] == 200


def test_no_directory_listing(served):
    url, _ = served
    for folder in ("/js/", "/js"):
        with pytest.raises(urllib.error.HTTPError) as err:
            _get(url + folder)
        assert err.value.code == 404


def test_idle_connections_time_out_and_threads_are_bounded(monkeypatch):
    import socket
    import time

    monkeypatch.setattr(handler._Handler, "timeout", 0.5)
    monkeypatch.setattr(server._Server, "max_threads", 4)
    s = server.make_server(port=0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        before = threading.active_count()
        idle = [socket.create_connection(s.server_address[:2], timeout=10) for _ in range(12)]
        time.sleep(0.2)
        assert threading.active_count() - before <= 4  # twelve silent clients, four handler threads
        for sock in idle[:4]:  # the first four are closed by the server once idle past the timeout
            assert sock.recv(1) == b""
        status, _, body = _get(f"http://127.0.0.1:{s.server_address[1]}/payload.json")  # the others drained in turn
        assert status == 200 and body
        for sock in idle:
            sock.close()
    finally:
        s.shutdown()
        s.server_close()


def test_backlog_serves_many_concurrent_requests(served):
    from concurrent.futures import ThreadPoolExecutor

    url, s = served
    assert s.request_queue_size >= 128
    with ThreadPoolExecutor(32) as pool:
        statuses = list(pool.map(lambda _: _get(url + "/lab.css")[0], range(200)))
    assert statuses == [200] * 200


def test_loopback_is_all_of_127_and_ipv6_one():
    assert all(handler.is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]"))
    assert not any(handler.is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "example"))


@pytest.mark.parametrize("host", ["127.0.0.2", "::1"])
def test_serves_on_any_loopback_address(host):
    try:
        s = server.make_server(host, port=0)
    except PosKernelsError as err:
        if host == "::1" and "::1" in str(err):
            pytest.skip(f"no IPv6 loopback here: {err}")
        raise
    threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        shown = f"[{host}]" if ":" in host else host
        assert _get(f"http://{shown}:{s.server_address[1]}/")[0] == 200
    finally:
        s.shutdown()
        s.server_close()


def test_cli_on_a_second_loopback_address_prints_no_warning():
    proc = subprocess.Popen(
        [sys.executable, "-m", "poskernels.cli", "lab", "--port", "0", "--host", "127.0.0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "http://127.0.0.2:" in line and "note" not in line + out, line + out + err
    assert "Traceback" not in err


def test_unknown_host_is_a_library_error():
    with pytest.raises(PosKernelsError, match="cannot serve on"):
        server.make_server("no-such-host.invalid", port=0)
    with pytest.raises(PosKernelsError, match="host must be"):
        server.make_server("127.0.0.1\x00", port=0)


def test_any_request_bytes_get_an_answer_or_a_close_and_never_a_traceback(monkeypatch):
    import socket

    from hypothesis import HealthCheck, example, given, settings
    from hypothesis import strategies as st

    errors = []
    monkeypatch.setattr(server._Server, "handle_error", lambda self, request, address: errors.append(address))
    s = server.make_server(port=0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    paths = st.one_of(st.binary(max_size=40), st.text(max_size=20).map(lambda t: t.encode("utf-8", "surrogatepass")))
    requests = st.one_of(
        st.binary(max_size=200),
        st.tuples(st.sampled_from([b"GET", b"HEAD", b"POST", b"BREW"]), paths).map(
            lambda mp: mp[0] + b" /" + mp[1].replace(b"\r", b"").replace(b"\n", b"") + b" HTTP/1.0\r\n\r\n"
        ),
    )

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(request=requests)
    @example(request=b"GET /%00 HTTP/1.0\r\n\r\n")
    @example(request=b"GET /js/ HTTP/1.0\r\n\r\n")
    def probe(request):
        with socket.create_connection(s.server_address[:2], timeout=10) as sock:
            sock.sendall(request)
            sock.shutdown(socket.SHUT_WR)  # the request ends here: no wait for the idle timeout
            while sock.recv(65536):
                pass

    try:
        probe()
        assert _get(f"http://127.0.0.1:{s.server_address[1]}/")[0] == 200  # still serving
    finally:
        s.shutdown()
        s.server_close()
    assert errors == []  # no request reached the server's traceback printer


def test_the_accept_loop_starts_no_thread_so_ctrl_c_always_reaches_it(monkeypatch):
    # Ctrl-C once landed inside Thread.start() of a handler thread started by the accept loop and was swallowed.
    # Now the accept loop only hands the socket to the gate (started with the server): no thread starts there.
    s = server.make_server(port=0)

    def no_thread(self):
        raise AssertionError("the accept loop started a thread")

    try:
        client = socket.create_connection(s.server_address[:2], timeout=5)
        request, address = s.get_request()
        monkeypatch.setattr(threading.Thread, "start", no_thread)
        s.process_request(request, address)
        monkeypatch.undo()
        client.sendall(b"GET /payload.json HTTP/1.0\r\n\r\n")  # a worker starts in the gate's thread
        assert client.recv(12) == b"HTTP/1.0 200"
        client.close()
    finally:
        monkeypatch.undo()
        s.server_close()
