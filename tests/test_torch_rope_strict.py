"""``torch_rope`` as strict as the NumPy side: hostile dtypes, angles past the working dtype, every rank and layout.

The property test draws a dtype, a rank (2 to 5), the axis of the positions, one row or one row per sequence of
positions, a layout, partial rotation, an attention factor and every device torch has here, and compares with a
float64 reference built from the NumPy :func:`poskernels.encodings.apply_rope` (Definition 4 written apart), one
sequence at a time after moving the positions' axis into place: the rule of where positions go is checked against
an independent construction, not against itself.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels.encodings import apply_rope as apply_rope_np
from poskernels.encodings import omega
from poskernels.errors import PosKernelsError
from poskernels.torch_rope import apply_rope, cos_sin
from quoting import assert_quotes

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
EPS32 = float(torch.finfo(torch.float32).eps)


def _reference(x: np.ndarray, pos: np.ndarray, theta, planes: int, factor: float, layout: str, axis: int):
    """float64 rotation of ``x`` (positions on ``axis``; 2-d positions row by row along axis 0) by the NumPy code."""
    xm = np.moveaxis(x, axis, -2)  # (..., n, d), axis 0 still first when the positions are per sequence
    r = 2 * planes
    if layout == "half":  # halves (j, j + P) inside the rotated width -> consecutive pairs
        pairs = xm.copy()
        pairs[..., 0:r:2], pairs[..., 1:r:2] = xm[..., :planes], xm[..., planes:r]
        xm = pairs
    if pos.ndim == 1:
        out = apply_rope_np(xm, pos, theta, rotated_planes=planes)
    else:
        out = np.stack(
            [apply_rope_np(xm[b], pos[b % pos.shape[0]], theta, rotated_planes=planes) for b in range(len(xm))]
        )
    out[..., :r] *= factor
    if layout == "half":
        half = out.copy()
        half[..., :planes], half[..., planes:r] = out[..., 0:r:2], out[..., 1:r:2]
        out = half
    return np.moveaxis(out, -2, axis)


@st.composite
def _cases(draw):
    rank = draw(st.integers(2, 5))
    batched = rank >= 3 and draw(st.booleans())
    axis = draw(st.integers(1 if batched else 0, rank - 2))
    d = 2 * draw(st.integers(1, 4))
    shape = [draw(st.integers(1, 3)) for _ in range(rank - 1)] + [d]
    shape[axis] = draw(st.integers(1, 6))
    n = shape[axis]
    rows = (draw(st.sampled_from([1, shape[0]])),) if batched else ()
    integer = draw(st.booleans())
    if integer:
        pos = np.array(
            draw(st.lists(st.integers(-50, 500), min_size=n * (rows or (1,))[0], max_size=n * (rows or (1,))[0]))
        )
    else:
        pos = np.array(
            draw(st.lists(st.floats(-50, 500), min_size=n * (rows or (1,))[0], max_size=n * (rows or (1,))[0]))
        )
    pos = pos.reshape(rows + (n,))
    theta_size = draw(st.integers(1, d // 2 + 1))
    planes = draw(st.one_of(st.none(), st.integers(0, min(theta_size, d // 2))))
    if planes is None and theta_size > d // 2:
        planes = d // 2
    return {
        "shape": shape,
        "axis": axis,
        "seq_dim": draw(st.sampled_from([axis, axis - rank])),
        "pos": pos,
        "theta": omega(2 * theta_size, draw(st.sampled_from([10.0, 10_000.0]))),
        "planes": planes,
        "factor": draw(st.floats(0.5, 2.0)),
        "layout": draw(st.sampled_from(["pairs", "half"])),
        "dtype": draw(st.sampled_from(FLOATS)),
        "device": draw(st.sampled_from(DEVICES)),
        "seed": draw(st.integers(0, 2**31 - 1)),
    }


@settings(max_examples=250)
@given(case=_cases())
def test_every_dtype_rank_axis_and_layout_matches_a_float64_reference(case):
    g = torch.Generator().manual_seed(case["seed"])
    x = torch.randn(case["shape"], generator=g, dtype=torch.float64).to(case["dtype"])
    pos = torch.from_numpy(case["pos"]) if case["pos"].dtype.kind == "i" else case["pos"].tolist()
    kwargs = {"attention_factor": case["factor"], "layout": case["layout"], "seq_dim": case["seq_dim"]}
    out = apply_rope(x.to(case["device"]), pos, case["theta"], case["planes"], **kwargs)
    assert out.dtype == case["dtype"] and out.shape == x.shape and out.device.type == case["device"]
    planes = case["planes"] if case["planes"] is not None else case["theta"].size
    ref = _reference(x.double().numpy(), case["pos"].astype(float), case["theta"], planes, case["factor"],
                     case["layout"], case["axis"])  # fmt: skip
    unit = float(torch.finfo(case["dtype"]).eps)
    angle = 0.0 if case["dtype"] == torch.float64 else 2 * 500 * EPS32  # float32 angles m theta, |m theta| <= 500
    tol = (8 * unit + angle) * case["factor"] * (float(x.double().abs().max()) + 1e-300) + 1e-300
    np.testing.assert_allclose(out.double().cpu().numpy(), ref, rtol=0, atol=tol)


def test_five_dimensional_input_with_batch_positions_rotates_along_the_sequence_axis():
    # (batch, a, b, n, d) with (batch, n) positions and batch == b: the old broadcast paired rows with axis 2
    x = torch.randn(3, 2, 3, 4, 8, dtype=torch.float64)
    pos = torch.tensor([[0, 1, 2, 3], [10, 11, 12, 13], [100, 101, 102, 103]])
    out = apply_rope(x, pos, omega(8))
    for b in range(3):
        np.testing.assert_allclose(out[b].numpy(), apply_rope_np(x[b].numpy(), pos[b].numpy(), omega(8)), atol=1e-12)


def test_batch_first_sequence_second_layout_through_seq_dim():
    x = torch.randn(2, 5, 3, 8, dtype=torch.float64)  # (batch, n, heads, d), as flash-attention holds it
    pos = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])
    got = apply_rope(x, pos, omega(8), seq_dim=1)
    want = apply_rope(x.transpose(1, 2), pos, omega(8)).transpose(1, 2)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize(
    "dtype", [torch.int8, torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64, torch.complex128]
)
def test_non_floating_inputs_are_refused_by_dtype(dtype):
    x = torch.ones(4, 8).to(dtype)
    with pytest.raises(PosKernelsError, match="floating dtype") as err:
        apply_rope(x, torch.arange(4), omega(8))
    assert_quotes(str(err.value), str(dtype))


@pytest.mark.parametrize(
    ("dtype", "inv_freq", "positions", "quoted"),
    [
        (torch.float32, [1e39, 1.0], torch.arange(4), "reaches 3e+39 for float32"),  # fits float64, not the limit
        (torch.bfloat16, [1e39, 1.0], torch.arange(4), "for bfloat16 output"),
        (torch.float16, [1e30, 1.0], torch.arange(4) + 10**10, "for float16 output"),
        (torch.float32, [1.0, 1.0], [0.0, 1.0, 2.0, 1e39], "within 2**53"),
        (torch.float64, [1e300, 1.0], [0.0, 1.0, 2.0, 1e10], "reaches inf for float64"),
        (torch.float64, [1.0], torch.tensor([2**53 + 1]), "|m| = 9007199254740993"),
        (torch.float32, [1.0], torch.tensor([-(2**63)]), "|m| = 9223372036854775808"),  # int64's least, not wrapped
        (torch.float32, [1.0], [2.0**29 + 1], "for float32 output"),
        (torch.bfloat16, [1.0], [2.0**45 + 2**20], "for bfloat16 output"),
    ],
)
def test_angles_past_what_float64_resolves_for_the_dtype_are_refused(dtype, inv_freq, positions, quoted):
    with pytest.raises(PosKernelsError) as err:
        apply_rope(torch.ones(len(positions), 2 * len(inv_freq), dtype=dtype), positions, inv_freq)
    assert quoted in str(err.value)


def test_frequencies_past_float32_are_fine_for_float64_input():
    out = apply_rope(torch.ones(3, 4, dtype=torch.float64), torch.arange(3), [1e39, 1.0])
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("factor", [float("nan"), float("inf"), -1.0, 0.0, True, "2", None, 10**400])
def test_attention_factor_must_be_finite_and_positive(factor):
    with pytest.raises(PosKernelsError, match="attention_factor must be a finite positive number"):
        apply_rope(torch.ones(3, 4), torch.arange(3), omega(4), attention_factor=factor)
    with pytest.raises(PosKernelsError, match="attention_factor"):
        cos_sin(torch.arange(3), omega(4), attention_factor=factor)


@pytest.mark.parametrize(
    ("x_shape", "positions", "kwargs", "named"),
    [
        ((2, 3, 5, 8), torch.arange(4), {}, "axis 2 (seq_dim = -2)"),
        ((2, 5, 3, 8), torch.arange(3), {"seq_dim": 1}, "axis 1 (seq_dim = 1)"),
        ((2, 5, 3, 8), torch.zeros(3, 5), {"seq_dim": 1}, "batch = 2 (x's axis 0)"),
        ((5, 8), torch.zeros(2, 5), {}, "no batch form"),  # 2-d positions on a 2-d x broadcast into a new batch
        ((5, 3, 8), torch.zeros(5, 3), {"seq_dim": 0}, "no batch form"),
        ((2, 5, 8), torch.zeros(2, 5, 1), {}, "got (2, 5, 1)"),
    ],
)
def test_a_shape_mismatch_names_the_axis_that_holds_the_positions(x_shape, positions, kwargs, named):
    with pytest.raises(PosKernelsError) as err:
        apply_rope(torch.ones(x_shape), positions, omega(8), **kwargs)
    assert named in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "quoted"),
    [
        ({"seq_dim": -1}, "seq_dim must name an axis of x other than the last"),
        ({"seq_dim": 2}, "an axis of the 3-d x other than the last"),
        ({"seq_dim": 4}, "got 4"),
        ({"seq_dim": 1.0}, "got 1.0"),
        ({"seq_dim": True}, "got True"),
        ({"positions": torch.tensor([True, False, True])}, "dtype torch.bool"),
        ({"positions": torch.tensor([1j, 2j, 3j])}, "complex"),
        ({"positions": ["a", "b", "c"]}, "array of numbers"),
        ({"positions": torch.tensor([0.0, float("nan"), 2.0])}, "nan at index (1,)"),
        ({"positions": [0.0, float("inf"), 2.0]}, "inf at index 1"),
        ({"inv_freq": torch.tensor([1.0, 2.0]) * 1j}, "complex"),
        ({"inv_freq": torch.tensor([True, False])}, "dtype torch.bool"),
        ({"inv_freq": [1.0, -0.5]}, "frequencies >= 0"),
        ({"inv_freq": [[1.0, 0.5]]}, "1-d"),
        ({"inv_freq": []}, "non-empty"),
        ({"rotated_planes": 2.0}, "got 2.0"),
        ({"rotated_planes": 3}, "got 3"),
        ({"layout": ["pairs"]}, "unknown layout"),
    ],
)
def test_bad_arguments_are_refused_with_the_value(kwargs, quoted):
    args = {"x": torch.ones(2, 3, 4), "positions": torch.arange(3), "inv_freq": omega(4), **kwargs}
    with pytest.raises(PosKernelsError) as err:
        apply_rope(**args)
    assert quoted in str(err.value)


def test_numpy_integer_planes_are_accepted_as_on_the_numpy_side():
    x = torch.randn(3, 8, dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, range(3), omega(8), np.int64(2)), apply_rope(x, range(3), omega(8), 2))


@pytest.mark.parametrize("dtype", [torch.int32, torch.bool, torch.complex64, torch.float8_e4m3fn])
def test_cos_sin_refuses_a_non_floating_dtype(dtype):
    with pytest.raises(PosKernelsError, match="dtype must be a floating dtype"):
        cos_sin(torch.arange(3), omega(4), dtype)
