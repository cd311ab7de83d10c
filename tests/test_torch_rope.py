"""RoPE on torch tensors (:mod:`poskernels.torch_rope`): oracles against NumPy and transformers, gradcheck, dtypes.

Oracles: the NumPy :func:`poskernels.encodings.apply_rope` in float64 (Definition 4 written independently),
transformers' ``LlamaRotaryEmbedding`` + ``apply_rotary_pos_emb`` after :func:`to_half_split`, and float64
central differences (``torch.autograd.gradcheck``).  Property: relativity (Proposition 3 (i)) on random instances.
"""

from __future__ import annotations

import json
import math
from importlib import resources

import numpy as np
import pytest
import torch  # noqa: E402 - the test extra installs it
from hypothesis import given, settings
from hypothesis import strategies as st

from poskernels import apply_rope as apply_rope_any  # noqa: E402
from poskernels.census.config import config_extension, load_config  # noqa: E402
from poskernels.encodings import apply_rope as apply_rope_np  # noqa: E402
from poskernels.encodings import omega, to_half_split  # noqa: E402
from poskernels.errors import PosKernelsError  # noqa: E402
from poskernels.torch_rope import apply_rope  # noqa: E402

EPS32 = float(np.finfo(np.float32).eps)


@pytest.mark.parametrize("planes", [None, 3])
def test_matches_numpy_in_float64(planes):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 2, 10, 12, dtype=torch.float64, generator=g)  # (batch, heads, n, d)
    pos = np.arange(10) * 3.5  # fractional positions, as PI reads them
    ours = apply_rope(x, torch.from_numpy(pos), omega(12), rotated_planes=planes)
    ref = apply_rope_np(x.numpy(), pos, omega(12), rotated_planes=planes)
    np.testing.assert_allclose(ours.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_batch_positions_rotate_each_sequence_by_its_own_row():
    x = torch.randn(2, 3, 5, 8, dtype=torch.float64)  # (batch, heads, n, d)
    pos = torch.tensor([[0, 1, 2, 3, 4], [100, 101, 102, 103, 104]])  # (batch, n), as transformers passes
    out = apply_rope(x, pos, omega(8))
    for b in range(2):
        np.testing.assert_allclose(out[b].numpy(), apply_rope_np(x[b].numpy(), pos[b].numpy(), omega(8)), atol=1e-12)


def test_gradcheck():
    x = torch.randn(2, 6, 8, dtype=torch.float64, requires_grad=True)
    pos = torch.tensor([[0.0, 1, 2, 3, 4, 5], [7, 8, 9, 10, 11, 12]])
    assert torch.autograd.gradcheck(lambda t: apply_rope(t, pos, omega(8), attention_factor=1.1), (x,))
    assert torch.autograd.gradgradcheck(lambda t: apply_rope(t, pos, omega(8), rotated_planes=2), (x,))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_keeps_dtype_and_device_and_flows_gradients(dtype):
    x = torch.randn(1, 2, 7, 16).to(dtype).requires_grad_()
    out = apply_rope(x, torch.arange(7)[None], omega(16))
    assert out.dtype == dtype and out.device == x.device
    ref = apply_rope_np(x.detach().double().numpy(), np.arange(7), omega(16))
    tol = {torch.bfloat16: 2e-2, torch.float16: 2e-3, torch.float32: 1e-5}[dtype]
    np.testing.assert_allclose(out.detach().double().numpy(), ref, atol=tol * 4)
    out.float().square().sum().backward()  # rotation is an isometry: d|Rx|^2/dx = 2x
    np.testing.assert_allclose(x.grad.double().numpy(), 2 * x.detach().double().numpy(), atol=tol * 8)


def test_the_package_apply_rope_dispatches_torch_tensors():
    x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
    out = apply_rope_any(x, torch.arange(4), omega(8))
    assert torch.is_tensor(out) and out.requires_grad


@pytest.mark.parametrize("name", ["llama-3.1-8b", "qwen2.5-7b-yarn", "phi-3-mini-128k"])
def test_matches_transformers_apply_rotary_pos_emb(name):
    import transformers  # noqa: F401
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    cfg = load_config(name)
    ext, _, _ = config_extension(cfg, cfg.training_length)  # what the module holds at load time
    text = (resources.files("poskernels.census") / "data" / "configs" / f"{name}.json").read_text()
    raw = {k: v for k, v in json.loads(text).items() if not k.startswith("_") and k != "model_type"}
    if (raw.get("rope_scaling") or {}).get("type") == "su":
        raw["rope_scaling"] = {**raw["rope_scaling"], "rope_type": "longrope"}
        raw["rope_scaling"].pop("type")
    hf = LlamaRotaryEmbedding(transformers.LlamaConfig(**raw))
    d = cfg.rotary_dim
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 2, 3, 20, d, generator=g).unbind(0)  # (batch, heads, n, d) each, this library's layout
    pos = torch.stack([torch.arange(20), 1000 + torch.arange(20)])  # (batch, n)
    cos, sin = hf(q, pos)  # (batch, n, d), attention factor included
    qh, kh = apply_rotary_pos_emb(to_half_split_t(q), to_half_split_t(k), cos, sin)
    qo, ko = (apply_rope(t, pos, ext.inv_freq, attention_factor=ext.attention_factor) for t in (q, k))
    scale = 4 * 1020 * EPS32 * float(q.norm(dim=-1).max() * k.norm(dim=-1).max()) * ext.attention_factor**2
    torch.testing.assert_close(qo @ ko.transpose(-1, -2), qh @ kh.transpose(-1, -2), atol=scale, rtol=0)
    # the "half" layout applies directly to transformers' tensors
    torch.testing.assert_close(
        apply_rope(to_half_split_t(q), pos, ext.inv_freq, attention_factor=ext.attention_factor, layout="half"),
        qh,
        atol=4 * 1020 * EPS32 * ext.attention_factor * float(q.abs().max()),
        rtol=0,
    )


def to_half_split_t(x):
    return torch.from_numpy(to_half_split(x.numpy()))


@settings(max_examples=30, deadline=None)
@given(half=st.integers(1, 16), shift=st.integers(-500, 500), seed=st.integers(0, 2**32 - 1))
def test_relativity_property(half, shift, seed):
    """Proposition 3 (i): the score of positions (m, n) equals that of (m + t, n + t)."""
    d = 2 * half
    rng = np.random.default_rng(seed)
    q, k = torch.from_numpy(rng.normal(size=(2, 1, d)))  # (1, d) each
    m, n = rng.integers(0, 1000, size=2)
    s1 = apply_rope(q, [m], omega(d)) @ apply_rope(k, [n], omega(d)).T
    s2 = apply_rope(q, [m + shift], omega(d)) @ apply_rope(k, [n + shift], omega(d)).T
    assert math.isclose(float(s1), float(s2), rel_tol=1e-9, abs_tol=1e-9 * d)


@pytest.mark.parametrize(
    ("kwargs", "detail"),
    [
        ({"x": np.zeros((4, 8))}, "torch tensor"),
        ({"positions": torch.arange(5)}, "positions must have shape (4,)"),
        ({"layout": "interleaved"}, "unknown layout 'interleaved'"),
        ({"rotated_planes": 9}, "got 9"),
        ({"inv_freq": [float("nan")] * 4}, "got [nan"),
    ],
)
def test_bad_input_is_refused(kwargs, detail):
    args = {"x": torch.zeros(4, 8), "positions": torch.arange(4), "inv_freq": omega(8), **kwargs}
    with pytest.raises(PosKernelsError) as err:
        apply_rope(**args)
    assert detail in str(err.value)


def test_maps_take_a_models_torch_inv_freq_and_hand_back_what_apply_rope_takes():
    from poskernels import extend

    buffer = torch.tensor(omega(16), dtype=torch.float32, requires_grad=True)  # as a module holds it
    ext = extend("yarn_hf", buffer, 4, 32)
    np.testing.assert_allclose(ext.theta, omega(16), rtol=1e-6)
    x = torch.randn(2, 5, 16, dtype=torch.bfloat16)
    assert apply_rope(x, torch.arange(5), ext.inv_freq, attention_factor=ext.attention_factor).dtype == torch.bfloat16
