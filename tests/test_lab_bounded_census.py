"""The lab's census under abuse: bodies read by the gate, censuses in processes of their own, foreign origins refused.

Every client here is on 127.0.0.1 (or 127.0.0.2, a second loopback address, for the per-client cap), every request
count is bounded, and no assertion is on elapsed time: a normal page request is answered *while* slow bodies are
held, or while census processes are running (the test looks at the runner's live processes), with only two workers,
so a census or a slow body on a worker would leave it unanswered.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading

import pytest

from poskernels.census.config import raw_config
from poskernels.lab import handler, sandbox, server

SMALL = json.dumps(raw_config("llama-2-7b")[0]).encode()
HEAVY = json.dumps({**raw_config("llama-2-7b")[0], "head_dim": 65536}).encode()


@pytest.fixture
def lab(monkeypatch):
    monkeypatch.setattr(server._Server, "max_threads", 2)  # two workers: one held census or body would show
    s = server.make_server(port=0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    yield s.server_address[1], s
    s.shutdown()
    s.server_close()


def _ask(port, method="GET", path="/payload.json", body=None, headers=None, source="127.0.0.1"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120, source_address=(source, 0))
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def _upload(port, body=SMALL, headers=None, source="127.0.0.1"):
    status, data = _ask(port, "POST", "/census/upload?file=c.json", body, headers, source)
    return status, json.loads(data)


def _alive(s) -> int:
    with s.census._lock:
        return sum(p.is_alive() for p in s.census._children)


# ------------------------------------------------------------------------------------------- bodies in the gate


def test_slow_upload_bodies_hold_no_worker(lab, monkeypatch):
    port, _ = lab
    monkeypatch.setattr(handler._Handler, "timeout", 600.0)  # the slow bodies stay held for the whole test
    slow = []
    for _ in range(20):
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        sock.sendall(b'POST /census/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"a":')
        slow.append(sock)
    try:
        status, data = _ask(port)  # two workers, twenty bodies still arriving: answered only if none holds one
        assert status == 200 and json.loads(data)
        for sock in slow:  # and none of them was answered: they are held, not refused
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)
    finally:
        for sock in slow:
            sock.close()


def test_a_body_sent_in_many_small_writes_is_served_whole(lab):
    port, _ = lab
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(b"POST /census/upload?file=c.json HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(SMALL))
        for i in range(0, len(SMALL), 97):
            sock.sendall(SMALL[i : i + 97])
        parts = []
        while chunk := sock.recv(65536):
            parts.append(chunk)
    head, _, body = b"".join(parts).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") and json.loads(body)["name"] == "c.json"


def test_a_body_longer_than_announced_is_read_to_its_length(lab):
    port, _ = lab
    status, data = _ask(port, "POST", "/census/upload?file=c.json", SMALL + b"   ", {"Content-Length": str(len(SMALL))})
    assert status == 200 and json.loads(data)["name"] == "c.json"


# --------------------------------------------------------------------------------------- censuses off the thread


def test_heavy_uploads_run_in_processes_while_pages_are_served(lab):
    port, s = lab
    answers = []
    uploads = [threading.Thread(target=lambda: answers.append(_upload(port, HEAVY))) for _ in range(16)]
    for t in uploads:
        t.start()
    for _ in range(6):  # normal requests among sixteen heavy uploads, two workers
        status, _ = _ask(port)
        assert status == 200
        assert _alive(s) <= sandbox.CensusRunner.max_running
    s.census.close()  # the censuses still running are stopped: their clients get one line each
    for t in uploads:
        t.join(120)
    assert len(answers) == 16 and all(set(data) == {"error"} or "censuses" in data for _, data in answers)
    busy = [data for status, data in answers if status == 503 and data["error"].startswith("busy")]
    assert len(busy) >= 16 - 2 * sandbox.CensusRunner.max_running  # past the cap: answered at once, not queued


def test_a_census_past_its_deadline_is_stopped_and_refused(lab, monkeypatch):
    port, s = lab
    monkeypatch.setattr(sandbox.CensusRunner, "deadline", 1e-3)  # no census of a real config ends in a millisecond
    status, data = _upload(port)
    assert status == 503 and "deadline" in data["error"] and _alive(s) == 0
    monkeypatch.setattr(sandbox.CensusRunner, "deadline", 120.0)
    status, data = _upload(port)
    assert status == 200 and data["censuses"]  # the next one, in time, is served


def test_fifty_concurrent_small_uploads_leave_pages_served(lab):
    port, s = lab
    answers, pages = [], []
    threads = [threading.Thread(target=lambda: answers.append(_upload(port))) for _ in range(50)]
    threads += [threading.Thread(target=lambda: pages.append(_ask(port)[0])) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert pages == [200] * 5 and len(answers) == 50
    assert {status for status, _ in answers} <= {200, 503} and any(status == 200 for status, _ in answers)
    assert all(data["error"].startswith("busy") for status, data in answers if status == 503)


def test_the_cap_per_client_refuses_one_client_and_serves_another(lab, monkeypatch):
    port, s = lab
    monkeypatch.setattr(sandbox.CensusRunner, "max_running", sandbox.CensusRunner.max_per_client + 1)
    with s.census._lock:
        s.census._running["127.0.0.2"] = sandbox.CensusRunner.max_per_client  # that client's censuses all running
    try:
        status, data = _upload(port, source="127.0.0.2")
        assert status == 503 and "per client" in data["error"]
        status, data = _upload(port, source="127.0.0.1")
        assert status == 200 and data["censuses"]
    finally:
        with s.census._lock:
            del s.census._running["127.0.0.2"]


def _until(check, tries=2000):
    for _ in range(tries):  # a bounded count of short waits, not a time limit
        if check():
            return True
        threading.Event().wait(0.01)
    return False


def test_a_census_whose_client_hangs_up_is_stopped_and_frees_its_slot(lab, monkeypatch):
    # the page aborts a stale census request (or its tab closes): the census must not go on holding a slot
    port, s = lab
    monkeypatch.setattr(sandbox.CensusRunner, "deadline", 600.0)
    answers, run = [], s.census.run
    s.census.run = lambda *a, **k: answers.append(run(*a, **k)) or answers[-1]
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"POST /census/upload?file=c.json HTTP/1.1\r\nHost: lab\r\nContent-Length: %d\r\n\r\n" % len(HEAVY))
    c.sendall(HEAVY)
    assert _until(lambda: _alive(s) == 1)
    c.close()
    assert _until(lambda: answers)
    assert answers == [(503, {"error": "the client hung up; its census was stopped"})]
    assert _alive(s) == 0 and not s.census._running and not s.census._watched
    assert _upload(port)[0] == 200  # the slot is free


def test_a_hung_up_clients_censuses_do_not_count_against_the_caps(lab):
    port, s = lab
    mine, theirs = socket.socketpair()
    with s.census._lock:
        s.census._running["127.0.0.1"] = sandbox.CensusRunner.max_per_client
        s.census._watched[id(mine)] = ("127.0.0.1", mine)  # as a census in flight would register its client
    try:
        status, data = _upload(port)
        assert status == 503 and data["error"].startswith("busy")  # the client is still there: the cap holds
        theirs.close()  # its client hung up; the census thread has not yet noticed
        status, data = _upload(port)
        assert status == 200 and data["censuses"]
    finally:
        with s.census._lock:
            del s.census._running["127.0.0.1"], s.census._watched[id(mine)]
        mine.close()


def test_a_census_out_of_memory_is_one_line_and_the_server_lives(lab, monkeypatch):
    port, _ = lab
    monkeypatch.setattr(sandbox.CensusRunner, "memory_bytes", 2**24)  # 16 MiB: less than the process already maps
    status, data = _upload(port)
    assert status in (500, 507) and set(data) == {"error"} and "\n" not in data["error"]
    assert _ask(port)[0] == 200


def test_a_bundled_models_census_runs_in_a_process_too(lab, monkeypatch):
    port, _ = lab
    monkeypatch.setattr(sandbox.CensusRunner, "deadline", 1e-3)
    status, data = _ask(port, "GET", "/census/model?name=llama-2-7b")
    assert status == 503 and "deadline" in json.loads(data)["error"]


def test_unknown_work_is_never_run():
    with pytest.raises(ValueError, match="unknown census work"):
        sandbox.CensusRunner().run("127.0.0.1", "__import__", "os")


# -------------------------------------------------------------------------------------------------- origins


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://evil.example:{port}",
        "null",
        "https://127.0.0.1:{port}",
        "http://127.0.0.1:{other}",
        "http://127.0.0.1.evil.example:{port}",
        "http://localhost.evil.example:{port}",
        "http://[::1",
        "file://",
    ],
)
def test_a_cross_origin_request_is_refused(lab, origin):
    port, s = lab
    origin = origin.format(port=port, other=port + 1 if port < 65535 else port - 1)
    headers = {"Origin": origin, "Content-Type": "text/plain"}
    status, data = _upload(port, headers=headers)
    assert status == 403 and "not the laboratory's own" in data["error"] and _alive(s) == 0
    status, data = _ask(port, "GET", "/census/model?name=llama-2-7b", headers={"Origin": origin})
    assert status == 403
    status, _ = _ask(port, "GET", "/payload.json", headers={"Origin": origin})
    assert status == 403


def test_a_browser_marked_cross_site_request_is_refused(lab):
    port, _ = lab
    status, data = _upload(port, headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403 and "cross-site" in data["error"]


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}", None])
def test_the_labs_own_origin_and_no_origin_are_served(lab, origin):
    port, _ = lab
    headers = {} if origin is None else {"Origin": origin.format(port=port), "Sec-Fetch-Site": "same-origin"}
    status, data = _upload(port, headers=headers)
    assert status == 200 and data["censuses"]
    assert _ask(port, headers=headers)[0] == 200
