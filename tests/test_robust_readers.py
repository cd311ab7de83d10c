"""Property: the file readers answer arbitrary input with PosKernelsError (or, for caches, a rebuild), in bounded time
and memory.

Arbitrary JSON to the config reader, arbitrary TOML to the grid reader, arbitrary bytes to the config, grid, JSONL
and store readers, and arbitrary bytes or JSON metadata to the cache readers (whose contract is :class:`CacheError`,
after which the caller rebuilds the entry).  Bounds as in :mod:`robust`.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from poskernels.census.config import load_config, parse_config
from poskernels.model import cache, cache_arrays, cache_entry
from poskernels.sweep.export import export
from poskernels.sweep.grid import load_grid, parse_grid
from poskernels.sweep.settings import SETTINGS
from poskernels.sweep.store import Store
from poskernels.tasks.filings.jsonl import read_filings
from robust import assert_only_library_error, bounded

# No deadline: a test's work is bounded by what it does, never by a clock (assert_only_library_error counts the calls
# an input makes, robust.work_limit); a census of head_dim 1024 took 32 s on a loaded machine and 1.8 s on its retry.
SETTINGS_FOR_TESTS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)

_numbers = st.one_of(
    st.integers(),
    st.integers(-(10**1000), 10**1000) | st.sampled_from([2**53 + 1, 2**63, 10**400, -1, 0]),
    st.floats(allow_nan=False, allow_infinity=False),
)
JSON = st.recursive(
    st.none() | st.booleans() | _numbers | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_CONFIG_KEYS = ["head_dim", "max_position_embeddings", "hidden_size", "num_attention_heads", "rope_theta",
                "partial_rotary_factor", "original_max_position_embeddings", "rope_scaling", "rope_parameters",
                "model_type"]  # fmt: skip
_SCALING_KEYS = ["rope_type", "type", "factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate",
                 "attention_factor", "low_freq_factor", "high_freq_factor", "short_factor", "long_factor",
                 "original_max_position_embeddings", "rope_theta", "partial_rotary_factor"]  # fmt: skip
_SCALING = st.dictionaries(
    st.sampled_from(_SCALING_KEYS),
    st.one_of(JSON, st.sampled_from(["linear", "dynamic", "yarn", "llama3", "longrope", "su", "default"])),
)
CONFIG = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"head_dim": st.one_of(st.integers(1, 300), _numbers), "max_position_embeddings": _numbers},
        optional={k: st.one_of(JSON, _SCALING) for k in _CONFIG_KEYS[2:]},
    ),
)


@SETTINGS_FOR_TESTS
@given(raw=CONFIG)
def test_config_reader_takes_any_json(raw):
    assert_only_library_error(parse_config, raw)


_READABLE = st.fixed_dictionaries(
    {
        "head_dim": st.sampled_from([2, 4, 64, 128, 130, 256, 1024]),
        "max_position_embeddings": st.one_of(st.integers(1, 10**6), st.sampled_from([2**53, 2**62])),
    },
    optional={
        "rope_theta": st.one_of(st.floats(1.0, 1e12), st.sampled_from([1.0000001, 1e300])),
        "rope_scaling": _SCALING,
        "partial_rotary_factor": st.floats(0, 1),
        "original_max_position_embeddings": st.integers(1, 10**6),
    },
)


@settings(SETTINGS_FOR_TESTS, max_examples=40)
@given(raw=_READABLE, target=st.one_of(st.none(), st.integers(1, 10**7), st.sampled_from([10**30, 2**60])))
@example(raw={"head_dim": 1024, "max_position_embeddings": 1}, target=None)  # L = 1: LongRoPE's ln L is 0
def test_a_config_that_reads_gets_a_census_or_the_library_error(raw, target):
    from poskernels.census import census

    assert_only_library_error(lambda: census(parse_config(raw), target))


@SETTINGS_FOR_TESTS
@given(data=st.one_of(st.binary(max_size=200), CONFIG.map(lambda r: json.dumps(r).encode()),
                      st.text(max_size=50).map(lambda t: t.encode("utf-16")),
                      st.text(max_size=50).map(lambda t: t.encode("latin-1", "replace")),
                      st.sampled_from([b'{"head_dim": ' + b"9" * 5000 + b', "max_position_embeddings": 8}',
                                       b"[" * 100_000, "é".encode("latin-1"), b"\x00" * 10])))  # fmt: skip
@example(data=b'{"head_dim": ' + b"9" * 5000 + b', "max_position_embeddings": 8}')
@example(data=b"[" * 100_000)
@example(data='{"head_dim": 128}'.encode("utf-16"))
def test_config_file_reader_takes_any_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cfg") / "config.json"
    path.write_bytes(data)
    assert_only_library_error(load_config, str(path))


# ----------------------------------------------------------------------------------------------- grids (TOML)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"


_TOML_SCALAR = st.one_of(
    st.booleans(), st.integers(-(2**70), 2**70), st.integers(0, 40), st.floats(), st.text(max_size=6),
    st.sampled_from([10**400, -(10**400), 2**63, 2**64]),
    st.sampled_from(["rope", "alibi", "nope", "pi", "yarn", "tournament", "quick"]),
)  # fmt: skip
_TOML_VALUE = st.recursive(_TOML_SCALAR, lambda inner: st.lists(inner, max_size=4), max_leaves=8)
_KEY = st.one_of(st.sampled_from(sorted(SETTINGS) + ["preset"]), st.from_regex(r"[a-z_]{1,6}", fullmatch=True))
_TABLE = st.dictionaries(_KEY, _TOML_VALUE, max_size=5)


@st.composite
def toml_grids(draw) -> str:
    lines = []
    for name in draw(st.lists(st.sampled_from(["sweep", "fixed", "grid", "[grid]", "other"]), max_size=4)):
        header = f"[{name}]" if not name.startswith("[") else f"[{name}]"
        lines.append(header)
        lines += [f"{k} = {_toml_value(v)}" for k, v in draw(_TABLE).items()]
    if draw(st.booleans()):
        lines.insert(0, f"{draw(_KEY)} = {_toml_value(draw(_TOML_VALUE))}")
    return "\n".join(lines) + "\n"


_DEEP = ["[fixed]\nsteps = " + "9" * 5000, "[fixed]\ntest_lengths = " + "[" * 10_000 + "]" * 10_000]


@SETTINGS_FOR_TESTS
@given(text=st.one_of(toml_grids(), st.text(max_size=80), st.sampled_from(_DEEP)))
@example(text=_DEEP[0])
@example(text=_DEEP[1])
@example(text="[fixed]\nlr = " + "9" * 400)
@example(text='[sweep]\npreset = ["tournament"]')
def test_grid_reader_takes_any_toml(text):
    assert_only_library_error(parse_grid, text, "g.toml")


@SETTINGS_FOR_TESTS
@given(data=st.one_of(st.binary(max_size=200), toml_grids().map(lambda t: t.encode("utf-16"))))
def test_grid_file_reader_takes_any_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("grid") / "g.toml"
    path.write_bytes(data)
    assert_only_library_error(load_grid, path)


# ----------------------------------------------------------------------------------------------- JSONL filings


_LINE = st.one_of(
    st.binary(max_size=60),
    JSON.map(lambda v: json.dumps(v).encode()),
    st.sampled_from([b'{"doc_id": ' + b"9" * 5000 + b"}", b"[" * 100_000]),
    st.fixed_dictionaries(
        {"doc_id": JSON, "text": st.text(max_size=30)},
        optional={
            "entities": st.lists(st.dictionaries(st.sampled_from(["start", "end", "company"]), JSON)),
            "kind": JSON,
        },
    ).map(lambda v: json.dumps(v).encode()),  # fmt: skip
)


@SETTINGS_FOR_TESTS
@given(lines=st.lists(_LINE, max_size=5))
@example(lines=[b'{"doc_id": ' + b"9" * 5000 + b"}"])
@example(lines=[b"[" * 100_000])
def test_jsonl_reader_takes_any_bytes(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("jsonl") / "f.jsonl"
    path.write_bytes(b"\n".join(lines))
    assert_only_library_error(read_filings, path)


# ----------------------------------------------------------------------------------------------- caches


def _only_cache_error(fn, *args):
    """The cache readers' contract: a bad file is a CacheError (the caller then rebuilds), nothing else."""

    def call():
        try:
            fn(*args)
        except cache_entry.CacheError:
            pass

    assert_only_library_error(call)


@SETTINGS_FOR_TESTS
@given(data=st.binary(max_size=300), meta=JSON)
def test_cache_readers_take_any_bytes_and_any_meta(tmp_path_factory, data, meta):
    folder = tmp_path_factory.mktemp("cache")
    (folder / "x.npz").write_bytes(data)
    (folder / "x.json").write_bytes(data)
    _only_cache_error(cache_arrays.load_arrays, folder / "x.npz")
    _only_cache_error(cache.load_json, folder / "x.json")
    # a well-formed file whose metadata is any JSON value (a list, a number, a string...)
    with open(folder / "m.npz", "wb") as fh:
        np.savez(fh, w=np.zeros(2), __meta__=np.array(json.dumps(meta)))
    (folder / "m.json").write_text(json.dumps({"meta": meta, "data": [1]}))
    _only_cache_error(cache_arrays.load_arrays, folder / "m.npz", {"seed": 0})
    _only_cache_error(cache.load_json, folder / "m.json", {"seed": 0})


def test_a_folder_where_a_cache_file_goes_is_moved_aside_and_rebuilt(tmp_path):
    for name, save, load in (("h.npz", lambda p: cache_arrays.save_arrays(p, {"w": np.ones(2)}, {"seed": 0}),
                              cache_arrays.load_arrays), ("r.json", lambda p: cache.save_json(p, [1], {"seed": 0}),
                              cache.load_json)):  # fmt: skip
        path = tmp_path / name
        (path / "inside").mkdir(parents=True)
        with pytest.raises(cache_entry.CacheError):
            load(path)
        save(path)
        assert path.is_file() and load(path) is not None
        aside = [p for p in tmp_path.iterdir() if p.name.startswith(name + ".not-a-cache-file-")]
        assert len(aside) == 1 and (aside[0] / "inside").is_dir()  # kept, not deleted


# ----------------------------------------------------------------------------------------------- sweep stores


def _store_with_rows(path: Path) -> None:
    p = parse_grid("").points[0]
    with Store(path) as s:
        s.add_points([(f"k{i}", {**p, "seed": i}) for i in range(40)], "v")


@SETTINGS_FOR_TESTS
@given(offsets=st.lists(st.integers(0, 2**15), min_size=1, max_size=8), junk=st.binary(min_size=1, max_size=16))
def test_store_with_damaged_pages_raises_the_library_error(offsets, junk):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.sqlite"
        _store_with_rows(path)
        raw = bytearray(path.read_bytes())
        for off in offsets:
            off %= len(raw)
            raw[off : off + len(junk)] = junk[: len(raw) - off]
        path.write_bytes(bytes(raw))

        def use():
            with Store(path, create=False) as s:
                s.rows()
                export(s, Path(folder) / "out.csv")
                s.add_points([("new", {**parse_grid("").points[0], "seed": 99})], "v")

        assert_only_library_error(use)


def test_store_of_random_bytes_and_seeds_past_sqlite(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(bytes(range(256)) * 20)
    escaped, _ = bounded(lambda: Store(junk, create=False).rows())
    assert escaped is None
    p = parse_grid("").points[0]
    with Store(tmp_path / "s.sqlite") as s:
        with pytest.raises(Exception) as err:
            s.add_points([("k", {**p, "seed": 2**63})], "v")
        assert type(err.value).__name__ == "PosKernelsError" and "2**63" in str(err.value)
