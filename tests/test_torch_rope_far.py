"""``torch_rope`` far out: angles formed in float64, so low-precision tensors at 10^6 are as accurate as at 10^3.

Every error is measured against the same tensor rotated in float64 by the NumPy :func:`apply_rope` (Definition 4
written apart); every refusal is one :class:`PosKernelsError` that quotes the value, never torch's error, NaN or inf.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from poskernels.encodings import apply_rope as apply_rope_np
from poskernels.encodings import omega
from poskernels.errors import PosKernelsError
from poskernels.torch_rope import ANGLE_LIMITS, MAX_POSITION, apply_rope, cos_sin

LOW = [torch.float32, torch.bfloat16, torch.float16]


def _error(dtype, start: int, d: int = 64, n: int = 32, layout: str = "pairs") -> float:
    """Largest |apply_rope(x) - float64 rotation of x| over positions ``start .. start + n - 1``, in units of the
    dtype's eps (x is exactly representable in the dtype, so only the rotation's own error counts)."""
    g = torch.Generator().manual_seed(start % 1000)
    x = torch.randn(n, d, generator=g).to(dtype)
    pos = np.arange(start, start + n)
    ref = apply_rope_np(x.double().numpy(), pos, omega(d))
    if layout == "half":
        perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # pairs -> halves
        out = apply_rope(x[:, perm], torch.from_numpy(pos), omega(d), layout="half").double().numpy()
        ref = ref[:, perm]
    else:
        out = apply_rope(x, torch.from_numpy(pos), omega(d)).double().numpy()
    return float(np.abs(out - ref).max()) / float(torch.finfo(dtype).eps)


@pytest.mark.parametrize("layout", ["pairs", "half"])
@pytest.mark.parametrize("dtype", LOW)
def test_the_error_at_a_million_is_the_error_at_a_thousand(dtype, layout):
    near, far = _error(dtype, 1_000, layout=layout), _error(dtype, 1_000_000, layout=layout)
    assert far <= 1.5 * near + 1 and far < 8  # a few eps of the dtype; float32 angles gave 0.08 / 1.2e-7 = 7e5 eps


@pytest.mark.parametrize("dtype", LOW)
def test_far_positions_up_to_the_limit_stay_within_a_few_eps(dtype):
    start = int(ANGLE_LIMITS[dtype]) - 40  # theta_0 = 1: the largest angle allowed is the position itself
    assert _error(dtype, start) < 8


def test_two_to_the_24_and_the_next_position_rotate_differently_in_float32():
    x = torch.ones(2, 2)
    out = apply_rope(x, torch.tensor([2**24, 2**24 + 1]), [1.0])
    ref = apply_rope_np(np.ones((2, 2)), [2**24, 2**24 + 1], [1.0])
    assert not torch.equal(out[0], out[1])
    np.testing.assert_allclose(out.double().numpy(), ref, rtol=0, atol=4 * float(torch.finfo(torch.float32).eps))


def test_relative_scores_survive_far_out_in_bfloat16():
    d, shift = 64, 700_000
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 8, d, generator=g).to(torch.bfloat16).unbind(0)
    pos = torch.arange(8)
    near = apply_rope(q, pos, omega(d)).float() @ apply_rope(k, pos, omega(d)).float().T
    far = apply_rope(q, pos + shift, omega(d)).float() @ apply_rope(k, pos + shift, omega(d)).float().T
    scale = float(q.float().norm(dim=-1).max() * k.float().norm(dim=-1).max())
    assert float((near - far).abs().max()) < 8 * float(torch.finfo(torch.bfloat16).eps) * scale


@pytest.mark.parametrize(
    ("positions", "quoted"),
    [
        ([1e30], "1e+30"),
        (torch.tensor([2**53 + 2]), "9007199254740994"),
        (torch.tensor([10**18]), "1000000000000000000"),
        (torch.tensor([1e30], dtype=torch.float64), "1e+30"),
        ([-1e17], "1e+17"),
    ],
)
@pytest.mark.parametrize("dtype", [*LOW, torch.float64])
def test_positions_past_float64_resolution_are_refused(dtype, positions, quoted):
    with pytest.raises(PosKernelsError, match=r"within 2\*\*53") as err:
        apply_rope(torch.ones(1, 2, dtype=dtype), positions, [1e-30])  # tiny theta: the position itself is refused
    assert quoted in str(err.value)


def test_the_largest_position_is_accepted_in_float64():
    out = apply_rope(torch.ones(1, 2, dtype=torch.float64), torch.tensor([MAX_POSITION]), [1e-10])
    np.testing.assert_allclose(out.numpy(), apply_rope_np(np.ones((1, 2)), [float(MAX_POSITION)], [1e-10]))


@pytest.mark.parametrize("dtype", LOW)
def test_an_angle_just_past_the_dtypes_limit_is_refused_and_just_below_accepted(dtype):
    limit = ANGLE_LIMITS[dtype]
    x = torch.ones(1, 2, dtype=dtype)
    apply_rope(x, torch.tensor([int(limit)]), [1.0])
    with pytest.raises(PosKernelsError, match=f"for {str(dtype).removeprefix('torch.')} output"):
        apply_rope(x, torch.tensor([int(limit) + 1]), [1.0])
    with pytest.raises(PosKernelsError, match="for"):
        cos_sin(torch.tensor([int(limit) + 1]), [1.0], dtype)


@pytest.mark.parametrize(
    ("dtype", "factor"), [(torch.float32, 1e300), (torch.float16, 7e4), (torch.bfloat16, 1e39), (torch.float32, 3.5e38)]
)
def test_an_attention_factor_past_the_dtype_is_refused(dtype, factor):
    with pytest.raises(PosKernelsError, match="attention_factor") as err:
        apply_rope(torch.ones(2, 4, dtype=dtype), torch.arange(2), omega(4), attention_factor=factor)
    assert f"{factor!r}" in str(err.value) and str(dtype).removeprefix("torch.") in str(err.value)
    with pytest.raises(PosKernelsError, match="overflows"):
        cos_sin(torch.arange(2), omega(4), dtype, attention_factor=factor)


@pytest.mark.parametrize(
    ("dtype", "value", "factor"),
    [(torch.float32, 3e38, 10.0), (torch.float16, 6e4, 2.0), (torch.bfloat16, 3e38, 4.0), (torch.float32, 3e38, 1.0)],
)
def test_a_rotation_that_overflows_the_dtype_is_refused(dtype, value, factor):
    x = torch.full((2, 2), value, dtype=dtype)  # the second position's rotation adds two near-largest values
    with pytest.raises(PosKernelsError, match="the rotated x overflows") as err:
        apply_rope(x, torch.tensor([0, 1]), [np.pi / 4], attention_factor=factor)
    assert f"{factor!r}" in str(err.value)


def test_a_large_but_safe_rotation_is_kept():
    x = torch.full((1, 2), 1e38)
    out = apply_rope(x, torch.tensor([0]), [1.0], attention_factor=2.0)
    assert torch.isfinite(out).all() and float(out.max()) == pytest.approx(2e38, rel=1e-6)


def _meta():
    return torch.ones(3, 4, device="meta")


def _sparse():
    return torch.ones(3, 4).to_sparse()


def _csr():
    return torch.ones(3, 4).to_sparse_csr()


def _nested():
    return torch.nested.nested_tensor([torch.ones(3, 4), torch.ones(2, 4)])


@pytest.mark.parametrize(
    "make, kind", [(_meta, "meta"), (_sparse, "sparse_coo"), (_csr, "sparse_csr"), (_nested, "nested")]
)
def test_meta_sparse_and_nested_x_get_the_librarys_error(make, kind):
    with pytest.raises(PosKernelsError, match="dense tensor with values") as err:
        apply_rope(make(), torch.arange(3), omega(4))
    assert kind in str(err.value)


@pytest.mark.parametrize(
    "positions, kind",
    [
        (torch.arange(3, device="meta"), "meta"),
        (torch.arange(3).to_sparse(), "sparse_coo"),
    ],
)
def test_meta_and_sparse_positions_get_the_librarys_error(positions, kind):
    with pytest.raises(PosKernelsError, match="positions must be a dense tensor") as err:
        apply_rope(torch.ones(3, 4), positions, omega(4))
    assert kind in str(err.value)
    with pytest.raises(PosKernelsError, match="positions must be a dense tensor"):
        cos_sin(positions, omega(4))


@pytest.mark.parametrize(
    "inv_freq", [torch.ones(2, device="meta"), torch.ones(2).to_sparse(), torch.nested.nested_tensor([torch.ones(2)])]
)
def test_meta_sparse_and_nested_frequencies_get_the_librarys_error(inv_freq):
    with pytest.raises(PosKernelsError, match="inv_freq must be a dense tensor"):
        apply_rope(torch.ones(3, 4), torch.arange(3), inv_freq)
