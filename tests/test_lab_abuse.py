"""The lab's server under abuse, on loopback only: slow and idle connections never starve a well-behaved client.

A deadline for a whole request head (not per read), caps on connections still sending their head per client
address and in total (the oldest closed to make room, never the newcomer), no thread per waiting connection.
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pytest

from poskernels.lab import handler, server


def _get(port: int, path: str = "/payload.json", host: str = "127.0.0.1") -> tuple[int, bytes]:
    """Status and body of one GET; a server whose workers were all held would never answer (the 10 s is the test's
    hang guard, not a figure asserted on)."""
    with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=10) as r:
        return r.status, r.read()


@pytest.fixture
def lab(monkeypatch):
    def start(**bounds):
        for name, value in bounds.items():
            monkeypatch.setattr(handler._Handler if name == "timeout" else server._Server, name, value)
        s = server.make_server(port=0)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        made.append(s)
        return s, s.server_address[1]

    made: list = []
    yield start
    for s in made:
        s.shutdown()
        s.server_close()


def _connect(port: int, n: int, source: str = "127.0.0.1") -> list[socket.socket]:
    return [socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0)) for _ in range(n)]


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """True if the server closes ``sock`` (EOF, or a reset) within ``within`` seconds."""
    sock.settimeout(within)
    try:
        while True:
            if sock.recv(4096) == b"":
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


class _Tricklers:
    """``n`` clients that send a request line and then one header line every ``every`` seconds, forever."""

    def __init__(self, port: int, n: int, every: float = 0.2):
        self.socks = _connect(port, n)
        self.every, self.stop = every, threading.Event()
        for s in self.socks:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        k = 0
        while not self.stop.wait(self.every):
            k += 1
            for s in self.socks:
                try:
                    s.sendall(f"X-Slow-{k}: {'v' * 10}\r\n".encode())
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for s in self.socks:
            s.close()


def test_a_normal_request_is_served_while_64_slow_and_300_idle_connections_are_held(lab):
    s, port = lab()
    threads_before = threading.active_count()
    idle = _connect(port, 300)
    slow = _Tricklers(port, 64)
    try:
        time.sleep(0.5)  # every connection accepted and waiting in the gate
        assert threading.active_count() - threads_before <= 1  # the tricklers' thread; none per connection
        for _ in range(5):
            status, body = _get(port)
            assert status == 200 and body  # answered in full while every other connection is held
        assert threading.active_count() - threads_before <= 1 + server._Server.max_threads
        assert not _closed_by_server(idle[-1], 0.1)  # held: under the caps and the deadline nothing was closed
    finally:
        slow.close()
        for sock in idle:
            sock.close()


def test_a_client_trickling_header_lines_is_closed_at_the_deadline_of_the_whole_head(lab):
    _, port = lab(timeout=1.0)
    slow = _Tricklers(port, 4, every=0.1)  # each read arrives well inside 1 s; the whole head never does
    try:
        # closed at all proves the deadline of the whole head: each line arrives within the read timeout, so no
        # per-read timeout would ever close them (no clock asserted; the 5 s is the test's own hang guard)
        assert all(_closed_by_server(sock, 5.0) for sock in slow.socks)
    finally:
        slow.close()


def test_past_the_total_cap_the_oldest_waiting_connection_makes_room(lab):
    s, port = lab(max_connections=40)
    idle = _connect(port, 100)
    try:
        assert _closed_by_server(idle[0], 5.0)  # the oldest was closed for the newcomers
        assert not _closed_by_server(idle[-1], 0.2)  # the newest still waits
        assert _get(port)[0] == 200  # and a normal client still gets in
    finally:
        for sock in idle:
            sock.close()


def test_a_flood_from_one_address_does_not_evict_another_client(lab):
    s, port = lab(max_per_client=20)
    other = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=("127.0.0.2", 0))
    other.sendall(b"GET /payload.json HTTP/1.0\r\n")  # oldest of all, and still sending
    time.sleep(0.2)
    flood = _connect(port, 100)  # 127.0.0.1 past its cap: its own oldest are closed, not 127.0.0.2's
    try:
        assert _closed_by_server(flood[0], 5.0) and not _closed_by_server(flood[-1], 0.2)
        other.sendall(b"\r\n")
        other.settimeout(10)
        assert other.recv(12) == b"HTTP/1.0 200"
    finally:
        other.close()
        for sock in flood:
            sock.close()


def test_a_head_past_the_limit_gets_431(lab):
    _, port = lab(max_head_bytes=4096)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.0\r\n" + b"X-Big: " + b"a" * 8000)
        assert sock.recv(12) == b"HTTP/1.0 431"
    assert _get(port)[0] == 200


def test_a_request_split_in_many_small_writes_is_served(lab):
    _, port = lab()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for byte in b"GET /payload.json HTTP/1.0\r\nHost: x\r\n\r\n":
            sock.send(bytes([byte]))
        assert sock.recv(12) == b"HTTP/1.0 200"


def test_closing_the_server_closes_the_waiting_connections(lab):
    s, port = lab()
    idle = _connect(port, 20)
    time.sleep(0.2)
    s.shutdown()
    s.server_close()
    try:
        assert all(_closed_by_server(sock, 5.0) for sock in idle)
    finally:
        for sock in idle:
            sock.close()


def test_clients_that_never_read_their_answer_do_not_hold_the_workers(lab):
    s, port = lab()
    readers = _connect(port, 4 * server._Server.max_threads)
    for sock in readers:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window, and never read
        sock.sendall(b"GET /payload.json HTTP/1.0\r\n\r\n")
    try:
        time.sleep(0.5)
        for _ in range(3):
            status, body = _get(port)
            assert status == 200 and body  # answered in full while every other connection is held
    finally:
        for sock in readers:
            sock.close()

