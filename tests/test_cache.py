"""The trained-head cache: a second call trains nothing; corrupt, truncated or stale files are rebuilt."""

from __future__ import annotations

import numpy as np
import pytest

from poskernels.model.cache_arrays import load_arrays, save_arrays
from poskernels.model.cache_entry import CacheError
from poskernels.model.config import HeadConfig, TrainConfig
from poskernels.model.train import head_path, train, train_many

CONFIG = TrainConfig(head=HeadConfig(scheme="t5"), steps=20, batch=16)


def _never(rng, batch, n):
    raise AssertionError("trained although the head was cached")


def _same(a, b):
    return all(np.array_equal(a.params[k], b.params[k]) for k in a.params) and np.array_equal(a.losses, b.losses)


def test_second_call_loads_without_training(tmp_path):
    first = train(CONFIG, 1, tmp_path)
    path = head_path(tmp_path, CONFIG, 1)
    assert path.exists() and path.suffix == ".npz"
    again = train(CONFIG, 1, tmp_path, sampler=_never)
    assert _same(first, again) and first.key == again.key
    assert not list(path.parent.glob("*.tmp"))  # the atomic write left nothing behind


def test_file_is_plain_npz_without_pickle(tmp_path):
    train(CONFIG, 1, tmp_path)
    with np.load(head_path(tmp_path, CONFIG, 1), allow_pickle=False) as data:
        assert {"E", "m", "W_Q", "W_K", "W_V", "W_O", "beta", "__losses__", "__meta__"} == set(data.files)
        assert all(data[k].dtype != object for k in data.files)


def _flip_one_byte(path):
    raw = bytearray(path.read_bytes())
    # a byte inside the stored weights (the first member, E), past the zip and npy headers
    raw[200] ^= 0xFF
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage"])
def test_damaged_file_is_reported_and_retrained(tmp_path, damage):
    fresh = train(CONFIG, 2, tmp_path)
    path = head_path(tmp_path, CONFIG, 2)
    if damage == "flip":
        _flip_one_byte(path)
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(b"not a zip file at all")
    messages = []
    with pytest.warns(RuntimeWarning, match="discarding"):
        rebuilt = train(CONFIG, 2, tmp_path, log=messages.append)
    assert any("[cache] discarding" in m for m in messages)
    assert _same(fresh, rebuilt)
    assert _same(fresh, train(CONFIG, 2, tmp_path, sampler=_never))  # the rebuilt file is trusted


def test_altered_weights_fail_the_digest(tmp_path):
    path = tmp_path / "x.npz"
    save_arrays(path, {"w": np.arange(4.0)}, {"seed": 0})
    arrays, meta = load_arrays(path)
    np.savez(path, w=np.arange(4.0) + 1, __meta__=np.array(__import__("json").dumps(meta)))
    with pytest.raises(CacheError, match="SHA-256"):
        load_arrays(path)


def test_a_file_of_another_run_is_not_trusted(tmp_path):
    other = TrainConfig(head=HeadConfig(scheme="t5"), steps=21, batch=16)
    train(other, 3, tmp_path)
    # put the other run's file where this run's belongs (a stale or misplaced entry)
    head_path(tmp_path, other, 3).rename(head_path(tmp_path, CONFIG, 3))
    with pytest.warns(RuntimeWarning, match="differs"):
        rebuilt = train(CONFIG, 3, tmp_path)
    assert rebuilt.losses.size == CONFIG.steps


def test_keys_differ_by_every_field(tmp_path):
    base = head_path(tmp_path, CONFIG, 0)
    variants = [
        head_path(tmp_path, CONFIG, 1),
        head_path(tmp_path, TrainConfig(head=HeadConfig(scheme="t5"), steps=20, batch=16, lr=3e-2), 0),
        head_path(tmp_path, TrainConfig(head=HeadConfig(scheme="t5", embedding="table"), steps=20, batch=16), 0),
        head_path(tmp_path, TrainConfig(head=HeadConfig(scheme="t5", map_scale=0.3), steps=20, batch=16), 0),
        head_path(tmp_path, TrainConfig(head=HeadConfig(scheme="t5"), steps=20, batch=16, task="other"), 0),
    ]
    assert len({base, *variants}) == 6


def test_train_many_matches_train_and_uses_the_pool(tmp_path):
    jobs = [(CONFIG, 0), (CONFIG.with_scheme("alibi"), 0)]
    heads = train_many(jobs, tmp_path, workers=2)
    for head, (config, seed) in zip(heads, jobs):
        assert _same(head, train(config, seed))
    log = []
    again = train_many(jobs, tmp_path, log=log.append)
    assert all(_same(a, b) for a, b in zip(heads, again)) and not any("to train" in m for m in log)


def test_a_result_cached_by_source_is_keyed_by_the_module_that_computes_it(tmp_path):
    from poskernels.model.cache import cached_by_source
    from poskernels.theory import bag_reader, ruler

    what = {"what": "a number"}
    assert cached_by_source(tmp_path, "n", bag_reader, what, lambda: 0.1 + 0.2) == 0.1 + 0.2
    assert cached_by_source(tmp_path, "n", bag_reader, what, lambda: 1 / 0) == 0.1 + 0.2  # read back, not built
    # another module's source is another key: a change to the code that computes a result recomputes it
    assert cached_by_source(tmp_path, "n", ruler, what, lambda: 7.0) == 7.0
    assert len(list((tmp_path / "results").glob("n-*.json"))) == 2
    assert cached_by_source(None, "n", bag_reader, what, lambda: 3.0) == 3.0  # no cache folder: built, not saved


def test_a_module_whose_source_cannot_be_read_is_computed_and_not_cached(tmp_path, monkeypatch):
    import inspect

    from poskernels.model.cache import cached_by_source
    from poskernels.theory import bag_reader

    def no_source(module):
        raise OSError("could not get source code")

    monkeypatch.setattr(inspect, "getsource", no_source)
    assert cached_by_source(tmp_path, "n", bag_reader, {"what": "a number"}, lambda: 2.5) == 2.5
    assert not (tmp_path / "results").exists()
