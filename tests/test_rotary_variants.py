"""The rotary family's kernels over offsets (xPos, p-RoPE, partial rotary) and what their papers state.

Each scheme's frequencies against their definitions (and partial rotary against transformers' own rotary code),
each kernel against the head's one score, xPos's decaying envelope and its attention resolution above RoPE's
(Sun et al. 2022), p-RoPE's offset-independent channel and its first negative offset (Barbero et al. 2024).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from poskernels.encodings import SCHEMES, omega, rotary_variants
from poskernels.encodings.rotary_variants import (
    XPOS_PAPER_SCALE_BASE,
    PartialRotary,
    PRope,
    XPos,
    p_rope_frequencies,
    partial_rotary_frequencies,
    rotated_planes,
    xpos_frequencies,
    xpos_zeta,
)
from poskernels.errors import PosKernelsError
from poskernels.model.config import HeadConfig
from poskernels.model.engine.scores import pair_scores
from poskernels.model.reading import Reading, frequencies
from poskernels.model.score import score
from poskernels.theory.rotary_variants import (
    attention_resolution,
    first_negative_offset,
    p_rope_kernel,
    partial_rotary_kernel,
    rope_kernel,
    rotary_kernel,
    xpos_envelope,
    xpos_kernel,
)

#: Every registered scheme of :mod:`poskernels.encodings.rotary_variants` (xPos at both scale bases, p-RoPE, partial
#: rotary), read from the registry: a new variant there is checked here, and fails until it has its paper and kernel.
FAMILY = tuple(name for name, s in SCHEMES.items() if type(s).__module__ == rotary_variants.__name__)
#: Each variant's paper, by its class (a subclass, xPos's rescaled scale base, has its base's).
PAPERS = {XPos: ("Sun et al.", 2022), PRope: ("Barbero et al.", 2024), PartialRotary: ("Black et al.", 2022)}


def _by_class(table: dict, name: str):
    """The entry of ``table`` for the registered scheme ``name``'s class or the nearest base it has there."""
    return next(value for cls, value in table.items() if isinstance(SCHEMES[name], cls))
DIMS = st.sampled_from([4, 8, 16, 32, 64, 128])


def test_the_family_is_registered_with_its_papers():
    assert {"xpos", "p_rope", "partial_rotary"} <= set(FAMILY)
    for name in FAMILY:
        s, (paper, year) = SCHEMES[name], _by_class(PAPERS, name)
        assert s.rotary and s.relative and not s.in_article and (s.paper, s.year) == (paper, year)
        assert s.article.startswith(f"{paper} {year}")


def test_xpos_frequencies_are_torchscales():
    # torchscale's XPOS: scale = (arange(0, d, 2) + 0.4 d) / (1.4 d); the query times scale^{m / scale_base}, the
    # key times scale^{-m / scale_base}: the product of a key r back carries scale^{r / scale_base}
    d, sb = 16, 16.0
    torchscale = (np.arange(0, d, 2) + 0.4 * d) / (1.4 * d)
    assert np.allclose(xpos_zeta(d), torchscale, rtol=0, atol=1e-15)
    f = xpos_frequencies(d, 1e4, sb)
    assert np.allclose(f.real, omega(d), rtol=0, atol=0)
    r = np.arange(50)
    assert np.allclose(np.exp(r[:, None] * f.imag), torchscale ** (r[:, None] / sb), rtol=1e-13)
    assert np.array_equal(frequencies(HeadConfig(scheme="xpos_rescaled")), f)  # the rescaled variant: 16 = L / 2
    assert np.array_equal(frequencies(HeadConfig(scheme="xpos")), xpos_frequencies(d, 1e4, XPOS_PAPER_SCALE_BASE))
    assert XPOS_PAPER_SCALE_BASE == 512.0 and SCHEMES["xpos"].settings["xpos_scale_base"].default == 512.0
    assert SCHEMES["xpos_rescaled"].settings["xpos_scale_base"].default == 16.0


def test_the_scale_base_keeps_the_papers_ratio_to_the_training_length():
    # the paper's decay of its fastest plane over its 1,024-token window, and ours over 32 tokens at gamma = 16
    zeta0 = xpos_zeta(16)[0]
    assert zeta0 ** (1024 / XPOS_PAPER_SCALE_BASE) == pytest.approx(zeta0 ** (32 / 16.0), rel=1e-12)
    assert zeta0 ** (31 / XPOS_PAPER_SCALE_BASE) > 0.9  # the paper's own gamma at our window: almost no decay


@given(d=DIMS, sb=st.floats(1.0, 4096.0), gx=st.floats(0.05, 2.0), seed=st.integers(0, 2**16))
def test_xpos_envelope_decreases_to_zero_and_bounds_the_kernel(d, sb, gx, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d), rng.normal(size=d)
    r = np.sort(rng.uniform(0, 50 * sb, size=64))
    env = xpos_envelope(r, d, sb, gx, q, k)
    assert np.all(np.diff(env) <= 1e-12 * env[0])  # decreasing in the offset
    assert xpos_envelope([1e6 * sb], d, sb, gx, q, k)[0] < 1e-100 * max(env[0], 1e-300) + 1e-300  # to 0
    kern = xpos_kernel(r, d, 1e4, sb, gx, q, k)
    assert np.all(np.abs(kern) <= env * (1 + 1e-12) + 1e-12)
    # RoPE's bound sum |q_j||k_j| is the envelope at 0, and it does not fall
    assert env[0] <= xpos_envelope([0.0], d, sb, gx, q, k)[0] * (1 + 1e-12)


@pytest.mark.parametrize(("d", "sb", "N"), [(128, 512.0, 1024), (128, 512.0, 4096), (16, 16.0, 32), (16, 16.0, 256)])
def test_xpos_raises_the_attention_resolution_above_ropes(d, sb, N):
    # Sun et al. 2022's measure, of the expected score with the all-ones query and key (the score of the paper's
    # figure), at its settings (d = 128, gamma = 512) and at ours (d = 16, gamma = 16), scores scaled by 1/sqrt(d)
    r = np.arange(N + 2)
    rope = attention_resolution(rope_kernel(r, d) / np.sqrt(d))
    xpos = attention_resolution(xpos_kernel(r, d, 1e4, sb) / np.sqrt(d))
    assert xpos > rope > 0


def test_attention_resolution_against_its_formula():
    s = np.random.default_rng(0).normal(size=20)
    e = np.exp(s)
    want = sum(e[i] * (e[i] - e[i + 1]) for i in range(19)) / e[:19].sum() ** 2
    assert attention_resolution(s) == pytest.approx(want, rel=1e-12)
    assert attention_resolution(s + 700.0) == pytest.approx(want, rel=1e-9)  # no overflow


@given(d=DIMS, p=st.floats(0.01, 1.0), seed=st.integers(0, 2**16))
def test_p_rope_is_a_constant_channel_plus_ropes_kernel_on_the_turned_planes(d, p, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d), rng.normal(size=d)
    n = rotated_planes(d, p)
    r = rng.integers(0, 10**6, size=32).astype(float)
    semantic = q[2 * n :] @ k[2 * n :]  # the unturned planes: <q_j, k_j>, whatever the offset
    turned = rotary_kernel(r, omega(d)[:n], q[: 2 * n], k[: 2 * n]) if n else 0.0
    assert np.allclose(p_rope_kernel(r, d, 1e4, p, q, k), semantic + turned, rtol=1e-10, atol=1e-10)


@given(d=DIMS, p=st.floats(0.01, 1.0), base=st.floats(10.0, 1e6))
def test_p_rope_lies_above_rope_and_its_first_negative_offset_comes_no_sooner(d, p, base):
    r = np.arange(4000)
    rope, prope = rope_kernel(r, d, base), p_rope_kernel(r, d, base, p)
    assert np.all(prope >= rope - 1e-9)  # each dropped plane gives 2 >= 2 cos(r theta)
    a, b = first_negative_offset(rope), first_negative_offset(prope)
    assert b is None or (a is not None and b >= a)


def test_p_rope_moves_the_first_negative_offset_out_at_d_128_but_not_at_16():
    r = np.arange(40_000)
    assert first_negative_offset(rope_kernel(r, 128)) == 1707
    assert first_negative_offset(p_rope_kernel(r, 128, p=0.75)) > 10 * 1707
    # at d = 16 the two dropped planes have wavelengths 6,283 and 19,869: by r = 91 they have barely turned
    assert first_negative_offset(rope_kernel(r, 16)) == first_negative_offset(p_rope_kernel(r, 16, p=0.75)) == 91


@given(d=DIMS, f=st.sampled_from([0.125, 0.25, 0.4, 0.5, 0.75, 1.0]), seed=st.integers(0, 2**16))
def test_partial_rotary_is_p_ropes_form_with_the_rotary_widths_frequencies(d, f, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d), rng.normal(size=d)
    d_r = int(d * f)
    P = d_r // 2
    r = rng.integers(0, 10**5, size=16).astype(float)
    semantic = q[2 * P :] @ k[2 * P :]
    turned = rotary_kernel(r, omega(2 * P, 1e4) if P else [], q[: 2 * P], k[: 2 * P]) if P else 0.0
    if d_r % 2 == 0:  # an even rotary width: its own frequencies are omega(d_r)
        assert np.allclose(partial_rotary_kernel(r, d, 1e4, f, q, k), semantic + turned, rtol=1e-10, atol=1e-10)
    assert np.count_nonzero(partial_rotary_frequencies(d, 1e4, f)) == P


@pytest.mark.parametrize(("head_dim", "factor"), [(16, 0.25), (16, 0.5), (64, 0.25), (80, 0.4), (32, 1.0)])
def test_partial_rotary_scores_equal_transformers(head_dim, factor):
    # transformers' GPT-NeoX rotary: _compute_default_rope_parameters with partial_rotary_factor, then
    # apply_rotary_pos_emb (rotate_half on the first rotary_dim coordinates, half-split pairs i, i + rotary_dim/2).
    # Ours pairs consecutive coordinates, so the same vectors are mapped into our layout before scoring. (80, 0.4)
    # is Phi-2's head: 32 rotary dimensions.
    torch = pytest.importorskip("torch")
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding, apply_rotary_pos_emb

    config = GPTNeoXConfig(
        hidden_size=4 * head_dim,
        num_attention_heads=4,
        rope_parameters={"rope_type": "default", "rope_theta": 10_000.0, "partial_rotary_factor": factor},
    )
    emb = GPTNeoXRotaryEmbedding(config)
    d_r = int(head_dim * factor)
    assert np.allclose(emb.inv_freq.numpy(), partial_rotary_frequencies(head_dim, 1e4, factor)[: d_r // 2], rtol=1e-6)

    rng = np.random.default_rng(head_dim)
    n = 300
    q, k = rng.normal(size=(n, head_dim)), rng.normal(size=(n, head_dim))  # one query and key per position
    cos, sin = emb(torch.zeros(1, n, head_dim, dtype=torch.float64), torch.arange(n)[None])  # (1, n, d_r)
    cos, sin = cos.double(), sin.double()
    qt, kt = (torch.tensor(v)[None, None] for v in (q, k))  # (1, 1, n, d)
    qe, ke = apply_rotary_pos_emb(qt, kt, cos, sin)
    theirs = (qe[0, 0, -1] @ ke[0, 0].T).numpy()  # the last position's query against every key

    half = d_r // 2
    order = [c for i in range(half) for c in (i, i + half)] + list(range(d_r, head_dim))  # half-split -> pairs
    cfg = HeadConfig(scheme="partial_rotary", d=head_dim, settings={"partial_rotary_factor": factor})
    pos = np.arange(n, dtype=float)
    ours = score({}, cfg, q[-1:, order], pos[-1:], k[:, order], pos)[0] * cfg.tau  # (n,): <phi_t(q), phi_j(k)>
    assert np.allclose(ours, theirs, rtol=1e-5, atol=1e-5 * np.abs(theirs).max())


@pytest.mark.parametrize("name", FAMILY)
def test_each_kernel_is_the_heads_score(name):
    cfg = HeadConfig(scheme=name)
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=cfg.d), rng.normal(size=cfg.d)
    t, r = 5000.0, np.array([0.0, 1.0, 7.0, 31.0, 200.0, 4999.0])
    z = pair_scores({}, cfg, q, np.full(r.size, t), k, t - r) * cfg.tau  # (R,)
    kernels = {
        XPos: lambda: xpos_kernel(r, cfg.d, cfg.base, cfg.xpos_scale_base, cfg.xpos_gamma, q, k),
        PRope: lambda: p_rope_kernel(r, cfg.d, cfg.base, cfg.prope_p, q, k),
        PartialRotary: lambda: partial_rotary_kernel(r, cfg.d, cfg.base, cfg.partial_rotary_factor, q, k),
    }
    kernel = _by_class(kernels, name)()
    assert np.allclose(z, kernel, rtol=1e-9, atol=1e-9)


def test_a_reading_replaces_the_turned_planes_only():
    theta = np.linspace(1.0, 0.1, 8)
    reading = Reading(theta)
    assert np.array_equal(frequencies(HeadConfig(scheme="p_rope"), reading), np.r_[theta[:6], 0.0, 0.0])
    assert np.array_equal(frequencies(HeadConfig(scheme="partial_rotary"), reading), np.r_[theta[:2], np.zeros(6)])
    x = frequencies(HeadConfig(scheme="xpos"), reading)
    assert np.array_equal(x.real, theta) and np.array_equal(x.imag, xpos_frequencies(16, 1e4, 512.0).imag)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rotary_kernel([-1.0], [1.0]), "offsets r must be >= 0"),
        (lambda: rotary_kernel([1.0], [[1.0]]), "theta must have 1 dimension"),
        (lambda: rotary_kernel([1.0], [np.nan]), "theta must be finite"),
        (lambda: rotary_kernel([1.0], [1.0, 0.5], q=np.ones(3)), r"q must have shape \(4,\)"),
        (lambda: xpos_zeta(16, 0.0), r"gamma_x must be a finite number in \(0"),
        (lambda: xpos_frequencies(16, 1e4, -1.0), r"scale_base must be a finite number in \(0"),
        (lambda: p_rope_frequencies(16, 1e4, 1.5), r"p must be a finite number in \[0, 1\]"),
        (lambda: partial_rotary_frequencies(15, 1e4, 0.5), "15"),
        (lambda: attention_resolution([1.0]), "two offsets or more"),
        (lambda: HeadConfig(scheme="xpos", settings={"xpos_scale_base": 0}), "xpos_scale_base"),
        (lambda: HeadConfig(scheme="p_rope", settings={"prope_p": 2}), "prope_p"),
        (lambda: frequencies(HeadConfig(scheme="p_rope"), Reading(np.ones(3))), r"shape \(8,\)"),
    ],
)
def test_bad_input_is_refused_with_the_value(call, message):
    with pytest.raises(PosKernelsError, match=message):
        call()


@pytest.mark.parametrize("scale_base", [0, -1.0, "x"])
def test_the_envelope_refuses_the_scale_base_the_frequencies_refuse(scale_base):
    for call in (lambda: xpos_envelope([1.0], 16, scale_base), lambda: xpos_kernel([1.0], 16, scale_base=scale_base)):
        with pytest.raises(PosKernelsError, match=r"scale_base must be a finite number in \(0, inf\]; got"):
            call()
