"""The page's trained sections overlapping on one pool: same numbers, the page's order, one pool for every caller."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from conftest import FIRST_SEED
from poskernels import page, pool
from poskernels.page import Context, Section


def _pid(_):
    return os.getpid()


def _slow_square(x):
    time.sleep(0.01 * (x % 3))
    return x * x


@pytest.mark.skipif(pool.available_cpus() < 2, reason="a pool needs two CPUs")
def test_sharing_runs_every_thread_on_one_pool_and_keeps_indices():
    args = list(range(12))
    out: dict = {}

    def caller(name):
        got = dict(pool.run_jobs(_slow_square, args, workers=2))
        out[name] = [got[i] for i in range(len(args))]

    with pool.sharing(2) as shared:
        started = set(shared._processes)  # every process started on entry
        assert len(started) == 2
        workers = {p for _, p in pool.run_jobs(_pid, range(8), workers=2)}
        threads = [threading.Thread(target=caller, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert {p for _, p in pool.run_jobs(_pid, range(8), workers=2)} <= started
    assert out == {k: [a * a for a in args] for k in range(3)}
    assert workers <= started and os.getpid() not in workers
    assert not pool._SHARED  # closed on exit; a later run_jobs starts its own pool again
    assert sorted(pool.run_jobs(abs, [-1, -2], workers=2)) == [(0, 1), (1, 2)]


def _sections(trace: list, lock: threading.Lock):
    def make(key, value, delay=0.0):
        def compute(ctx):
            with lock:
                trace.append(("start", key, threading.current_thread() is threading.main_thread()))
            time.sleep(delay)
            return {"v": value, "seen": sorted(ctx.numbers)}  # what the page held when it ran

        return Section(key, key.title(), compute, str, trained=True)

    return [make("a", 1), make("tour", 2, 0.05), make("mid", 3, 0.05), make("late", 4, 0.3), make("last", 5)]


@pytest.mark.skipif(pool.available_cpus() < 2, reason="overlap needs two CPUs")
def test_overlapped_sections_keep_the_page_order_and_start_after_what_they_read(monkeypatch, tmp_path):
    trace: list = []
    lock = threading.Lock()
    sections = _sections(trace, lock)
    monkeypatch.setattr(page, "SECTIONS", tuple(sections))
    monkeypatch.setattr(page, "AFTER", {"late": ("tour",)})
    monkeypatch.setattr(page, "_IDLE_AFTER", 0.05)  # "late" takes 0.3 s, still computing when its turn comes
    monkeypatch.setattr(page, "PREPARE", {"late": lambda ctx: trace.append(("prepare", "late", False))})
    shown, idle = [], []
    ctx = Context(cache_dir=tmp_path, log=lambda msg: None, first_seed=FIRST_SEED)
    numbers = page.assemble(
        ctx, each=lambda s, data: shown.append((s.key, data["v"])), idle=lambda s: idle.append((s.key, len(shown)))
    )
    assert shown == [("a", 1), ("tour", 2), ("mid", 3), ("late", 4), ("last", 5)]
    assert idle == [("late", 3)]  # told before waiting on a background section still computing, never otherwise
    assert list(numbers) == ["a", "tour", "mid", "late", "last"]
    starts = [(k, main) for what, k, main in trace if what == "start"]
    assert ("late", False) in starts  # in the background ...
    assert starts.index(("late", False)) > starts.index(("tour", True))  # ... only after what it reads
    assert trace.index(("prepare", "late", False)) < trace.index(("start", "late", False))
    # without a cache directory everything runs in order in this thread, with the same numbers
    trace.clear()
    same = page.assemble(Context(cache_dir=None, log=lambda msg: None, first_seed=FIRST_SEED))
    assert {k: v["v"] for k, v in same.items()} == {k: v["v"] for k, v in numbers.items()}
    assert all(main for what, _, main in trace if what == "start")


@pytest.mark.skipif(pool.available_cpus() < 2, reason="overlap needs two CPUs")
def test_the_prepared_work_starts_before_the_first_section_computes(monkeypatch, tmp_path):
    # PREPARE's training runs on the pool while this thread computes the sections before the first trained one
    began = threading.Event()
    seen: list = []

    def first(ctx):  # a deterministic section: it waits (bounded) for the prepared work to have begun
        seen.append(began.wait(timeout=10))
        return {"v": 0}

    sections = [Section("det", "Det", first, str), Section("late", "Late", lambda ctx: {"v": 1}, str, trained=True)]
    monkeypatch.setattr(page, "SECTIONS", tuple(sections))
    monkeypatch.setattr(page, "AFTER", {"late": ("det",)})  # not startable before "det" is done
    monkeypatch.setattr(page, "PREPARE", {"late": lambda ctx: began.set()})
    numbers = page.assemble(Context(cache_dir=tmp_path, log=lambda msg: None, first_seed=FIRST_SEED))
    assert seen == [True] and list(numbers) == ["det", "late"]


def _nap(x):
    time.sleep(0.05)
    return x


@pytest.mark.skipif(pool.available_cpus() < 2, reason="a pool needs two CPUs")
def test_callers_of_a_shared_pool_take_turns():
    got_a: list = []
    b_done_after = []

    def b():
        time.sleep(0.1)  # A's 20 jobs are all asked for by now
        list(pool.run_jobs(_nap, [0, 1], workers=2))
        b_done_after.append(len(got_a))

    with pool.sharing(2):
        t = threading.Thread(target=b)
        t.start()
        for _, x in pool.run_jobs(_nap, range(20), workers=2):
            got_a.append(x)
        t.join()
    assert sorted(got_a) == list(range(20))
    assert b_done_after[0] < 15  # first come, first served would finish B after all 20 of A's


def _sleep_long(seconds):
    time.sleep(seconds)
    return seconds


@pytest.mark.skipif(pool.available_cpus() < 2, reason="overlap needs two CPUs")
def test_a_ctrl_c_halts_the_pool_instead_of_waiting_for_the_background_sections(monkeypatch, tmp_path):
    # A background section keeps the shared pool busy with jobs of a minute while the main thread waits for it; a
    # Ctrl-C (SIGINT to the main thread) must stop those processes at once -- the pool is halted before the threads
    # are joined -- never wait for the jobs to end.
    started = threading.Event()

    def background(ctx):
        started.set()
        return {"v": sum(s for _, s in pool.run_jobs(_sleep_long, [60.0, 60.0], workers=2))}

    def ctrl_c():
        started.wait(10)
        time.sleep(0.3)  # the jobs are in the processes and the main thread waits on the section
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    sections = [
        Section("tour", "Tour", lambda ctx: {"v": 0}, str, trained=True),
        Section("late", "Late", background, str, trained=True),
    ]
    monkeypatch.setattr(page, "SECTIONS", tuple(sections))
    monkeypatch.setattr(page, "AFTER", {"late": ("tour",)})
    monkeypatch.setattr(page, "PREPARE", {})
    threading.Thread(target=ctrl_c, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        page.assemble(Context(cache_dir=tmp_path, log=lambda msg: None, first_seed=FIRST_SEED))
    assert time.monotonic() - t0 < 30  # the minute-long jobs were stopped, not awaited
    assert not pool._SHARED
