"""Hostile arguments for every numeric surface of this round: only PosKernelsError escapes, in bounded time and memory.

The same bound as ``test_robust_math.py`` (:func:`robust.assert_only_library_error`: a foreign exception, a
``RuntimeWarning``, a NaN returned from arguments without one, a call past its time or memory limit all fail), with
arguments drawn from numbers at float64's edges, huge integers, wrong types, NaN and infinities, arrays of any shape,
and heads whose weights are scaled towards overflow: the certified cut, the streaming reader, ``recent_weights``,
the cross-entropies, the needle, the long-context sequences, the trainer's checks and ``torch_rope``.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from poskernels.encodings import Scheme, registry
from poskernels.model.config import HeadConfig
from poskernels.model.engine.one_head import cross_entropy
from poskernels.model.engine.reductions import stack_cross_entropy
from poskernels.model.head import PLAIN, init_params
from robust import assert_only_library_error

_huge = st.sampled_from([10**400, -(10**400), 2**63, 2**64 + 1, 10**9, 2 * 10**6, 2**25])
_odd = st.sampled_from([float("nan"), float("inf"), -float("inf"), True, False, None, "3", 1e308, -0.0, 5e-324])
NUMBER = st.one_of(st.integers(-5, 300), st.floats(), _huge, _odd)
SIZE = st.one_of(st.integers(-3, 70), NUMBER)
_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)
ARRAY = st.one_of(
    hnp.arrays(np.float64, _shapes, elements=st.floats(allow_nan=True, allow_infinity=True)),
    hnp.arrays(np.int64, _shapes, elements=st.integers(-20, 20)),
    st.lists(st.one_of(st.integers(-3, 20), st.floats(), st.text(max_size=2)), max_size=5),
    NUMBER,
)
_token_shapes = hnp.array_shapes(max_dims=3, max_side=9)
TOKENS = st.one_of(
    hnp.arrays(st.sampled_from([np.int64, np.int8, np.float64]), _token_shapes, elements=st.integers(-2, 20)),
    hnp.arrays(np.uint8, _token_shapes, elements=st.integers(0, 255)),
    ARRAY,
)
#: Every registered scheme is fuzzed: the list is the registry's, never typed here.
SCHEMES = sorted(registry.SCHEMES)
#: The schemes a certified cut reads (a bias exactly ``-s r``, or a learned bias with a tail bound), by their hooks.
CUT_SCHEMES = sorted(
    name
    for name, s in registry.SCHEMES.items()
    if type(s).linear_slope is not Scheme.linear_slope or type(s).tail_bound is not Scheme.tail_bound
)
FUZZ = settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def _heads(draw, schemes=SCHEMES):
    """A head of a drawn scheme whose weights are scaled by a drawn factor (up to overflow), or a hostile object."""
    slope = draw(st.sampled_from([0.5, 1e-300, 1e300]))
    cfg = HeadConfig(scheme=draw(st.sampled_from(schemes)), settings={"alibi_slope": slope})
    params = init_params(cfg, np.random.default_rng(draw(st.integers(0, 3))))
    scale = draw(st.sampled_from([1.0, 1e10, 1e30, 1e100, 1e160, 1e200, 0.0, -1.0]))
    name = draw(st.sampled_from(["W_Q", "W_K", "E", "W_V", "W_O"]))
    params = {**params, name: params[name] * scale}
    if draw(st.booleans()):  # a hostile replacement for one argument
        which = draw(st.sampled_from(["params", "cfg", "array"]))
        if which == "params":
            params = draw(
                st.sampled_from([{}, None, "w", {"W_Q": np.zeros(3)}, {**params, "W_O": params["W_O"][:, :2]}])
            )
        elif which == "cfg":
            cfg = draw(st.sampled_from(["alibi", None, {"scheme": "alibi"}]))
        else:
            params = {**params, "W_Q": np.full_like(params["W_Q"], draw(st.sampled_from([np.nan, np.inf])))}
    return params, cfg


@FUZZ
@given(W=NUMBER, s=NUMBER, eps=NUMBER)
def test_cut_offset(W, s, eps):
    from poskernels.model.engine.cut import cut_offset

    assert_only_library_error(cut_offset, W, s, eps)


@FUZZ
@given(head=_heads(CUT_SCHEMES), query_tokens=ARRAY, eps=NUMBER)
def test_certified_cut_and_content_width(head, query_tokens, eps):
    from poskernels.model.engine.cut import certified_cut, content_width

    params, cfg = head
    assert_only_library_error(certified_cut, params, cfg, query_tokens, eps)
    assert_only_library_error(content_width, params, cfg, query_tokens)
    assert_only_library_error(certified_cut, params, cfg, [16], eps)


@FUZZ
@given(head=_heads(), tokens=TOKENS, chunk=SIZE, eps=st.one_of(st.none(), NUMBER, st.just(1e-12)))
def test_stream_logits(head, tokens, chunk, eps):
    from poskernels.model.engine.stream import stream_logits, stream_many

    params, cfg = head
    assert_only_library_error(stream_logits, params, cfg, tokens, None, PLAIN, chunk, eps)
    assert_only_library_error(stream_many, [(params, cfg, PLAIN)], tokens, chunk=chunk if chunk != 0 else 1, eps=eps)


@FUZZ
@given(head=_heads(), tokens=TOKENS, k=SIZE, chunk=SIZE)
def test_recent_weights(head, tokens, k, chunk):
    from poskernels.model.engine.stream import recent_weights

    params, cfg = head
    assert_only_library_error(recent_weights, params, cfg, tokens, k, PLAIN, chunk)


@FUZZ
@given(logits=ARRAY, targets=ARRAY)
def test_cross_entropies(logits, targets):
    assert_only_library_error(cross_entropy, logits, targets)
    assert_only_library_error(stack_cross_entropy, logits, targets)


@FUZZ
@given(batch=SIZE, r=SIZE, n=st.one_of(st.none(), SIZE), n_symbols=SIZE, seed=st.integers(0, 3))
def test_needle_batch(batch, r, n, n_symbols, seed):
    from poskernels.tasks.needle import needle_batch

    assert_only_library_error(needle_batch, np.random.default_rng(seed), batch, r, n, n_symbols)


@FUZZ
@given(
    task=st.one_of(st.sampled_from(["length", "distance"]), st.text(max_size=4), NUMBER),
    x=SIZE,
    count=SIZE,
    seed=NUMBER,
    n_train=SIZE,
)
def test_long_context_sequences(task, x, count, seed, n_train):
    from poskernels.experiments.long_sets import sequences

    assert_only_library_error(sequences, task, x, count, seed, n_train)


@FUZZ
@given(seed=st.one_of(NUMBER, st.lists(NUMBER, max_size=3)), seeds=st.one_of(NUMBER, st.lists(NUMBER, max_size=3)))
def test_trainer_arguments(seed, seeds):
    from poskernels.model.config import TrainConfig
    from poskernels.model.train import train, train_many, train_stack

    config = TrainConfig(steps=1, batch=2)
    assert_only_library_error(train, config, seed)
    assert_only_library_error(train_stack, config, seeds)
    assert_only_library_error(train_many, [(config, seed)], workers=1)
    assert_only_library_error(train_many, seeds, workers=1)


DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64]


@FUZZ
@given(
    x=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=1, max_dims=5, max_side=4),
        elements=st.floats(-1e6, 1e6) | st.sampled_from([np.inf, 1e308, 0.0]),
    ),  # fmt: skip
    dtype=st.sampled_from(DTYPES),
    positions=ARRAY,
    inv_freq=ARRAY,
    planes=st.one_of(st.none(), SIZE),
    factor=NUMBER,
    layout=st.one_of(st.sampled_from(["pairs", "half"]), NUMBER),
    seq_dim=SIZE,
)
def test_torch_rope(x, dtype, positions, inv_freq, planes, factor, layout, seq_dim):
    from poskernels.torch_rope import apply_rope, cos_sin

    with np.errstate(over="ignore"):  # 1e308 past float32: the tensor holds inf, which apply_rope must refuse
        t = torch.from_numpy(x).to(dtype)
    assert_only_library_error(apply_rope, t, positions, inv_freq, planes, factor, layout, seq_dim)
    assert_only_library_error(apply_rope, t, np.arange(x.shape[-2] if x.ndim > 1 else 1), inv_freq, planes)
    assert_only_library_error(cos_sin, positions, inv_freq, dtype, None, factor)
