"""Running sweeps: a local pool and a Dask cluster give the serial results bit for bit; a point that raises
is retried once; a killed worker or a killed driver loses nothing and recomputes nothing.

Every address is loopback; the Dask cluster has no dashboard.
"""

from __future__ import annotations

import _thread
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import psutil
import pytest

from poskernels.encodings import omega
from poskernels.errors import PosKernelsError
from poskernels.experiments.held_out import TEST_SEED
from poskernels.extension import extend
from poskernels.model.config import HeadConfig, TrainConfig
from poskernels.model.head import Reading
from poskernels.model.train import evaluate, train
from poskernels.sweep.backends import Backend, dask_backend, local_backend
from poskernels.sweep.grid import parse_grid
from poskernels.sweep.point import group_jobs, point_key, run_job
from poskernels.sweep.runner import run_sweep
from poskernels.sweep.store import Store
from poskernels.tasks.cue import cue_batch

SMALL_TEXT = """
[fixed]
steps = 30
batch = 16
n_train = 8
test_lengths = [8, 16]
test_size = 50

[grid]
scheme = ["nope", "learned", "rope", "alibi"]
extension = ["none", "pi"]
seed = [0, 1]
"""
# The kill / interrupt / resume tests run SLOW one point a job (stack = 1): with seeds stacked, four points finish at
# once and a test waiting for "three done" could find the whole sweep finished before its signal landed.
SLOW_TEXT = """
[fixed]
steps = 500
batch = 32
n_train = 16
test_lengths = [16, 32]
test_size = 100

[grid]
scheme = ["nope", "rope", "alibi"]
seed = [0, 1, 2, 3]
"""
SMALL, SLOW = parse_grid(SMALL_TEXT), parse_grid(SLOW_TEXT)


def _serial(grid) -> dict:
    """Every point's metrics, computed in this process, one job after another."""
    out = {}
    for job in group_jobs([(point_key(p), p) for p in grid.points]):
        r = run_job({"points": job, "cache_dir": None})
        for key, _ in job:
            out[key] = {"accuracy": r["results"][key]["accuracy"], "final_loss": r["results"][key]["final_loss"]}
    return out


@pytest.fixture(scope="module")
def small_reference():
    return _serial(SMALL)


@pytest.fixture(scope="module")
def slow_reference():
    return _serial(SLOW)


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster  # here, not at the top: the pool's workers import this module

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as c, Client(c) as client:  # fmt: skip
        yield c.scheduler_address, client


def _metrics(store: Store) -> dict:
    return {r["key"]: r["metrics"] for r in store.rows() if r["status"] == "done"}


def _done(path) -> int:
    db = sqlite3.connect(path, timeout=30)
    try:
        return db.execute("SELECT COUNT(*) FROM points WHERE status = 'done'").fetchone()[0]
    except sqlite3.OperationalError:  # the driver has not created the tables yet
        return 0
    finally:
        db.close()


def _when_done(path, n: int, action, timeout: float = 60.0) -> threading.Thread:
    """Run ``action()`` in a thread as soon as ``n`` rows of the store at ``path`` are done."""

    def watch():
        end = time.monotonic() + timeout
        while time.monotonic() < end and _done(path) < n:
            time.sleep(0.02)
        action()

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def test_a_point_is_the_reproduce_code(small_reference):
    # the wiring by hand: TrainConfig from the settings, train, the test stream, PI at kappa = 16 / 8
    p = next(p for p in SMALL.points if (p["scheme"], p["extension"], p["seed"]) == ("rope", "pi", 1))
    head = train(TrainConfig(head=HeadConfig(scheme="rope", n_train=8), steps=30, batch=16), seed=1)
    pi = Reading.from_extension(extend("pi", omega(16, 1e4), 2.0, 8))

    def fresh(n):  # the tournament's test stream of length n, drawn here by hand
        return cue_batch(np.random.default_rng(np.random.SeedSequence([TEST_SEED, n])), 50, n)

    assert small_reference[point_key(p)]["accuracy"] == {
        "8": evaluate(head, *fresh(8)),
        "16": evaluate(head, *fresh(16), reading=pi),
    }
    learned = next(p for p in SMALL.points if p["scheme"] == "learned")
    assert small_reference[point_key(learned)]["accuracy"]["16"] is None  # undefined past its 8 rows


def test_local_pool_and_dask_give_the_serial_results(tmp_path, small_reference, cluster):
    address, _ = cluster
    for name, backend in [("local", local_backend(2)), ("dask", dask_backend(address))]:
        with Store(tmp_path / f"{name}.sqlite") as store:
            s = run_sweep(SMALL, store, backend, stream=sys.stdout)
            assert (s.points, s.done, s.failed, s.trained) == (10, 10, 0, 8)
            assert _metrics(store) == small_reference, name  # identical, bit for bit
            workers = {r["worker"].split(":")[1] for r in store.rows()}
            assert str(os.getpid()) not in workers and len(workers) >= 1
        backend.close()


def test_the_cli_runs_on_a_dask_scheduler(tmp_path, cluster, small_reference, capsys):
    address, _ = cluster
    grid, path = tmp_path / "grid.toml", tmp_path / "s.sqlite"
    grid.write_text(SMALL_TEXT)
    from poskernels.cli import main  # here: the pool's workers import this module, and the CLI imports a lot

    assert main(["sweep", str(grid), "--store", str(path), "--scheduler", address]) == 0
    assert "10/10 points done (10 this run, 8 heads trained" in capsys.readouterr().err
    with Store(path) as store:
        assert _metrics(store) == small_reference and store.runs()[0]["executor"] == f"dask:{address}"
    with pytest.raises(ConnectionError, match="cannot reach the Dask scheduler"):  # the network's failure: exit 1
        dask_backend("tcp://127.0.0.1:9", timeout=1)
    with pytest.raises(PosKernelsError, match="not a Dask scheduler address"):  # the user's: exit 2
        dask_backend("garbage://x", timeout=1)


def test_a_point_that_raises_is_retried_once_then_recorded(tmp_path, capsys):
    calls: dict[int, int] = {}

    def flaky(job):  # seed 1 fails once, seed 2 always
        seed = job["points"][0][1]["seed"]
        calls[seed] = calls.get(seed, 0) + 1
        if seed == 2 or (seed == 1 and calls[seed] == 1):
            raise ValueError(f"boom at seed {seed}")
        return run_job(job)

    grid = parse_grid("[fixed]\nsteps = 5\nbatch = 4\ntest_lengths = [8]\ntest_size = 10\n[grid]\nseed = [0, 1, 2]")
    threads = Backend("threads:2", 2, new=lambda: ThreadPoolExecutor(2))
    with Store(tmp_path / "s.sqlite") as store:
        s = run_sweep(grid, store, threads, job=flaky, stream=sys.stdout, stack=1)
        assert (s.done, s.failed, calls) == (2, 1, {0: 1, 1: 2, 2: 2})
        rows = {r["seed"]: r for r in store.rows()}
        assert [(rows[i]["status"], rows[i]["failures"], rows[i]["attempts"]) for i in range(3)] == [
            ("done", 0, 1), ("done", 1, 2), ("failed", 2, 2),
        ]  # fmt: skip
        assert rows[2]["error"].startswith("ValueError: boom at seed 2") and rows[1]["error"] is None
        assert run_sweep(grid, store, threads, job=flaky, stream=sys.stdout, stack=1).failed == 1
        assert calls == {0: 1, 1: 2, 2: 2}  # nothing finished, or failed, is run again
        assert run_sweep(grid, store, threads, job=flaky, retry_failed=True, stream=sys.stdout, stack=1).failed == 1
        assert calls[2] == 4


def test_a_killed_local_worker_loses_nothing(tmp_path, slow_reference):
    pools = []
    base = local_backend(2)
    backend = Backend(base.name, 2, new=lambda: pools.append(base.new()) or pools[-1], halt=base.halt)
    killed = []

    def kill_one():
        pid = next(iter(pools[0]._processes))
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    path = tmp_path / "s.sqlite"
    watcher = _when_done(path, 3, kill_one)
    with Store(path) as store:
        s = run_sweep(SLOW, store, backend, stream=sys.stdout, stack=1)
        watcher.join()
        rows = store.rows()
    assert killed and len(pools) == 2  # the broken pool was replaced once
    assert (s.done, s.failed) == (12, 0) and _metrics_of(rows) == slow_reference
    lost = [r for r in rows if r["lost"]]
    assert lost and all(r["lost"] == 1 and r["attempts"] == 2 for r in lost)
    assert all(r["attempts"] == 1 for r in rows if not r["lost"])  # done rows were not run again


class _BreaksOnSubmit(ThreadPoolExecutor):
    """A pool whose worker died between two waits: the next submission is refused as broken."""

    def __init__(self, after: int):
        super().__init__(2)
        self.left = after

    def submit(self, fn, /, *args, **kwargs):
        if self.left == 0:
            raise BrokenProcessPool("a child process terminated abruptly")
        self.left -= 1
        return super().submit(fn, *args, **kwargs)


def test_a_pool_that_breaks_between_waits_loses_nothing(tmp_path, capsys):
    grid = parse_grid(
        "[fixed]\nsteps = 5\nbatch = 4\ntest_lengths = [8]\ntest_size = 10\n[grid]\nseed = [0, 1, 2, 3, 4, 5]\n"
    )
    pools = []
    backend = Backend("threads:2", 2, new=lambda: pools.append(_BreaksOnSubmit(2 if not pools else -1)) or pools[-1])
    with Store(tmp_path / "s.sqlite") as store:
        s = run_sweep(grid, store, backend, stream=sys.stdout, stack=1)
        rows = store.rows()
    assert (s.done, s.failed, len(pools)) == (6, 0, 2)  # the refused job went to a new pool, with those in flight
    lost = [r for r in rows if r["lost"]]
    assert lost and all(r["lost"] == 1 and r["attempts"] == 2 for r in lost)
    assert "a worker process died" in capsys.readouterr().out


def test_a_killed_dask_worker_loses_nothing(tmp_path, slow_reference, cluster):
    address, client = cluster
    pids = client.run(os.getpid)
    path = tmp_path / "s.sqlite"
    victim = next(iter(pids.values()))
    watcher = _when_done(path, 3, lambda: os.kill(victim, signal.SIGKILL))
    backend = dask_backend(address)
    with Store(path) as store:
        s = run_sweep(SLOW, store, backend, stream=sys.stdout, stack=1)
        watcher.join()
        rows = store.rows()
    backend.close()
    assert not psutil.pid_exists(victim) or psutil.Process(victim).status() == psutil.STATUS_ZOMBIE
    assert (s.done, s.failed) == (12, 0) and _metrics_of(rows) == slow_reference
    assert all(r["attempts"] == 1 for r in rows)  # Dask rescheduled the lost task itself


def test_ctrl_c_on_dask_hands_rows_back_and_resumes(tmp_path, slow_reference, cluster):
    address, _ = cluster
    path = tmp_path / "s.sqlite"
    backend = dask_backend(address)
    with Store(path) as store:
        watcher = _when_done(path, 3, _thread.interrupt_main)  # what Ctrl-C does to the driver
        with pytest.raises(KeyboardInterrupt):
            run_sweep(SLOW, store, backend, stream=sys.stdout, stack=1)
            time.sleep(30)  # not reached: the interrupt lands while the sweep runs
        watcher.join()
        before = {r["key"]: r for r in store.rows()}
        assert {r["status"] for r in before.values()} <= {"done", "pending"}  # nothing left "running"
        assert [r["status"] for r in store.runs()] == ["interrupted"]
        s = run_sweep(SLOW, store, backend, stream=sys.stdout, stack=1)
        after = {r["key"]: r for r in store.rows()}
    backend.close()
    done = {k for k, r in before.items() if r["status"] == "done"}
    assert 3 <= len(done) < 12 and s.done_before == len(done) and s.done == 12
    assert all(after[k] == before[k] for k in done) and _metrics_of(after.values()) == slow_reference


def _metrics_of(rows) -> dict:
    return {r["key"]: r["metrics"] for r in rows if r["status"] == "done"}


def _snapshot(path) -> dict:
    with Store(path, create=False) as s:
        return {r["key"]: r for r in s.rows()}


def _children_exit(pids, timeout=10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_an_interrupted_then_killed_driver_resumes_without_loss_or_rework(tmp_path, slow_reference):
    grid, path = tmp_path / "grid.toml", tmp_path / "s.sqlite"
    grid.write_text(SLOW_TEXT)
    cmd = [
        sys.executable,
        "-m",
        "poskernels.cli",
        "sweep",
        str(grid),
        "--store",
        str(path),
        "--workers",
        "2",
        "--stack",
        "1",
    ]

    def run_until(n_done, sig):
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)
        children = []

        def stop():
            children.extend(c.pid for c in psutil.Process(proc.pid).children(recursive=True))
            os.kill(proc.pid, sig)

        _when_done(path, n_done, stop).join()
        try:
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert _children_exit(children), "the pool's workers outlived their driver"
        return proc.returncode, err

    # 1. Ctrl-C: the driver stops, hands its rows back, logs the run as interrupted
    rc, err = run_until(3, signal.SIGINT)
    assert rc == 130 and "interrupted" in err and "resume" in err, err
    first = _snapshot(path)
    done1 = {k for k, r in first.items() if r["status"] == "done"}
    assert 3 <= len(done1) < 12 and {r["status"] for r in first.values()} <= {"done", "pending"}

    # 2. SIGKILL: nothing can be cleaned up; rows it had handed out stay "running"
    rc, _ = run_until(len(done1) + 2, signal.SIGKILL)
    assert rc == -signal.SIGKILL
    second = _snapshot(path)
    done2 = {k for k, r in second.items() if r["status"] == "done"}
    assert done1 < done2 < set(second)
    assert all(second[k] == first[k] for k in done1)  # nothing finished was lost or touched

    # 3. run to the end
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    final = _snapshot(path)
    assert {r["status"] for r in final.values()} == {"done"}
    assert {k: r["metrics"] for k, r in final.items()} == slow_reference
    assert all(final[k] == second[k] for k in done2)  # not recomputed: same finish time, attempts, run
    for k in set(final) - done2:  # each row still to do was handed out exactly once more
        assert final[k]["attempts"] == second[k]["attempts"] + 1 and final[k]["run_id"] == 3
    with Store(path, create=False) as s:
        assert [r["status"] for r in s.runs()] == ["interrupted", "killed", "finished"]
    assert f"{12 - len(done2)} this run" in done.stderr


def _die(job):
    os._exit(7)  # a worker that dies under this point, every time


def test_a_point_that_kills_its_worker_every_time_is_recorded_failed(tmp_path):
    grid = parse_grid("[fixed]\nsteps = 5\nbatch = 4\ntest_lengths = [8]\ntest_size = 10")
    with Store(tmp_path / "s.sqlite") as store:
        s = run_sweep(grid, store, local_backend(1), job=_die, max_lost=1, stream=sys.stdout)
        (row,) = store.rows()
    assert (s.done, s.failed) == (0, 1)
    assert (row["status"], row["lost"], row["attempts"]) == ("failed", 2, 2) and "died" in row["error"]


def test_local_workers_run_one_blas_thread_each():
    backend = local_backend(2)
    with backend.new() as pool:
        assert list(pool.map(os.getenv, ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"])) == ["1", "1"]
