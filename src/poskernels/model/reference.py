"""The same head written plainly in PyTorch, with autograd: an independent reference and a baseline.

Nothing here is token-factored or hand-differentiated: the head builds ``h``, ``q``, ``k``, ``v`` per
position, rotates with explicit cosines and sines, and lets autograd take the gradient.  Each scheme enters
through its :class:`Terms` in :data:`REFERENCE_TERMS` (a code, a turn or a bias, written here from the
article's definitions and the :mod:`poskernels.encodings` functions, never through the head's own hooks), so
the reference stays an independent oracle of :data:`poskernels.encodings.SCHEMES`.  The tests
check the NumPy head's logits and hand-written gradients against it; ``benchmarks/bench_torch.py``
times it.  Requires the optional ``torch`` dependency (extra ``bench``; also in ``test``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..encodings import omega, shaw_clip, sinusoidal_code, t5_bucket
from ..errors import MissingDependencyError, PosKernelsError
from .config import HeadConfig
from .reading import PLAIN

__all__ = [
    "REFERENCE_TERMS",
    "NoTerms",
    "Terms",
    "reference_terms",
    "torch_logits",
    "torch_loss_and_grad",
    "torch_params",
    "torch_stack_logits",
    "torch_stack_loss_and_grad",
    "torch_table",
]


def _torch():
    try:
        import torch  # optional dependency, imported when used
    except ImportError as err:
        raise MissingDependencyError.of("torch", "torch", "the PyTorch reference head") from err
    return torch


def _tensor(values, dtype):
    """A NumPy array as a constant tensor of ``dtype``."""
    return _torch().tensor(np.asarray(values), dtype=dtype)


def torch_params(params: dict, dtype=None, requires_grad: bool = True) -> dict:
    """Copy NumPy parameters into leaf tensors (float64 unless ``dtype`` says otherwise)."""
    torch = _torch()
    dtype = torch.float64 if dtype is None else dtype
    return {k: torch.tensor(np.asarray(v), dtype=dtype, requires_grad=requires_grad) for k, v in params.items()}


def torch_table(tp: dict, cfg: HeadConfig):
    """The embedding of every token id, ``(M, V, d)``, written plainly (:func:`poskernels.model.head.token_table`)."""
    torch = _torch()
    if cfg.embedding == "table":
        return tp["E"]
    S = (cfg.vocab - 1) // 2
    E, m = tp["E"], tp["m"]  # (M, S+1, d), (M, d)
    return torch.cat([E[:, :S], E[:, :S] + m[:, None, :], E[:, S:]], dim=1)  # unmarked, marked, query


def _sinusoidal_code(tp: dict, cfg: HeadConfig, n, dtype):
    """Definition 2 at positions ``0..n-1``, or at the positions ``n`` given (an array: randomized positions)."""
    positions = np.arange(n) if np.ndim(n) == 0 else np.asarray(n, dtype=float)
    return _tensor(sinusoidal_code(positions, cfg.d, cfg.base), dtype)  # (n, d)


def _ssmax_scale(tp: dict, cfg: HeadConfig, n: int, dtype):
    """Nakanishi 2025: the logits of a query over ``n`` keys times ``s log n``, ``s`` the head's own scalar."""
    return tp["ssmax_s"][:, :, None] * float(np.log(n))  # (M, 1, 1)


def _learned_code(tp: dict, cfg: HeadConfig, n: int, dtype):
    return tp["P"][:, None, :n]  # (M, 1, n, d), Definition 1: rows 0..n-1 of the table


def _rope_turn(v, cfg: HeadConfig, positions, dtype, query=False, reading=PLAIN):
    """Definition 4: turn plane ``p`` of ``v`` by ``m theta_p`` at position ``m``, cosine first (Definition 5: a
    reading's frequencies replace ``theta = omega(d, b)``)."""
    theta = omega(cfg.d, cfg.base) if reading.inv_freq is None else np.asarray(reading.inv_freq, dtype=float)
    return _turn(v, np.asarray(positions)[..., None] * theta, dtype)


def _turn(v, ang, dtype):
    torch = _torch()
    ang = _tensor(ang, dtype)  # (..., P)
    cos, sin = torch.cos(ang), torch.sin(ang)
    v0, v1 = v[..., 0::2], v[..., 1::2]
    return torch.stack([cos * v0 - sin * v1, sin * v0 + cos * v1], dim=-1).flatten(-2)


def _alibi_bias(tp: dict, cfg: HeadConfig, q, r: np.ndarray, dtype):
    return -cfg.alibi_slope * _tensor(r, dtype)  # (n,), Definition 3: -s r


def _t5_bias(tp: dict, cfg: HeadConfig, q, r: np.ndarray, dtype):
    buckets = _torch().as_tensor(t5_bucket(-r, cfg.t5_buckets, cfg.t5_max_distance))  # (n,) T5's own buckets
    return tp["beta"][:, None, buckets]  # (M, 1, n)


def _shaw_bias(tp: dict, cfg: HeadConfig, q, r: np.ndarray, dtype):
    a_r = tp["A"][:, _torch().as_tensor(shaw_clip(r, cfg.shaw_clip))]  # (M, n, d): a_min(r, K)
    return q @ a_r.transpose(1, 2) / cfg.tau  # (M, B, n)


def _kerple_log_bias(tp: dict, cfg: HeadConfig, q, r: np.ndarray, dtype):
    """Chi et al. 2022: ``-r1 log(1 + r2 r)`` with ``r1 = e^{a1}``, ``r2 = e^{a2}``."""
    torch = _torch()
    r1, r2 = torch.exp(tp["kerple_a1"])[:, :, None], torch.exp(tp["kerple_a2"])[:, :, None]  # (M, 1, 1) each
    return -r1 * torch.log(1 + r2 * _tensor(r, dtype))  # (M, 1, n)


def _kerple_power_bias(tp: dict, cfg: HeadConfig, q, r: np.ndarray, dtype):
    """Chi et al. 2022: ``-r1 r^r2`` with ``r1 = e^{a1}``, ``r2 = 2 sigma(a2)``."""
    torch = _torch()
    r1, r2 = torch.exp(tp["kerple_a1"])[:, :, None], 2 * torch.sigmoid(tp["kerple_a2"])[:, :, None]  # (M, 1, 1)
    rt = _tensor(r, dtype)  # (n,) offsets >= 0; at r = 0 the term is 0 and so is its gradient
    safe = torch.where(rt > 0, rt, torch.ones_like(rt))
    return torch.where(rt > 0, -r1 * torch.exp(r2 * torch.log(safe)), torch.zeros_like(rt))  # (M, 1, n)


def _fire_bias(tp: dict, cfg: HeadConfig, q, r: np.ndarray, dtype):
    """Li et al. 2023: ``f(log(c r + 1) / log(c max(L, t) + 1))``, ``f`` a ReLU MLP of one hidden layer.

    ``c = c_0 e^{a_c}`` (``c_0`` 0.1, or 1 for ``fire_c1``), ``L = n_train e^{a_L}``; the query sits at the last
    position, ``t = n - 1 = r[0]``.
    """
    torch = _torch()
    rt = _tensor(r, dtype)  # (n,)
    c0 = {"fire": 0.1, "fire_c1": 1.0}[cfg.scheme]  # the paper's code's init_c, and the variant's
    c, L = c0 * torch.exp(tp["fire_ac"]), cfg.n_train * torch.exp(tp["fire_aL"])  # (M, 1) each
    t = torch.full_like(L, float(r[0]))  # (M, 1)
    u = torch.log(c * rt + 1) / torch.log(c * torch.maximum(L, t) + 1)  # (M, n)
    hidden = torch.relu(u[..., None] * tp["fire_w1"][:, None, :] + tp["fire_b1"][:, None, :])  # (M, n, H)
    return (hidden @ tp["fire_w2"][..., None])[..., 0][:, None, :]  # (M, 1, n)


def _xpos_turn(v, cfg: HeadConfig, positions, dtype, query=False, reading=PLAIN):
    """Sun et al. 2022 (torchscale's ``XPOS``): RoPE's turn, then plane ``j`` scaled by ``zeta_j^{m / gamma}`` for
    a query and ``zeta_j^{-m / gamma}`` for a key, ``zeta_j = (2j + gamma_x d) / ((1 + gamma_x) d)``."""
    zeta = (np.arange(0, cfg.d, 2) + cfg.xpos_gamma * cfg.d) / ((1 + cfg.xpos_gamma) * cfg.d)  # (P,)
    m = np.asarray(positions, dtype=float)[..., None]  # (..., 1)
    scale = zeta ** ((m if query else -m) / cfg.xpos_scale_base)  # (..., P)
    turned = _rope_turn(v, cfg, positions, dtype, query, reading)
    return turned * _tensor(scale, dtype).repeat_interleave(2, dim=-1)


def _p_rope_turn(v, cfg: HeadConfig, positions, dtype, query=False, reading=PLAIN):
    """Barbero et al. 2024: the fastest ``floor(p d / 2)`` planes turn by RoPE's ``theta``, the others not at all."""
    torch = _torch()
    k = int(np.floor(cfg.prope_p * (cfg.d // 2) + 1e-9))  # planes that turn
    turned = _rope_turn(v, cfg, positions, dtype, query, reading)
    return torch.cat([turned[..., : 2 * k], v[..., 2 * k :]], dim=-1)


def _partial_rotary_turn(v, cfg: HeadConfig, positions, dtype, query=False, reading=PLAIN):
    """GPT-NeoX's ``rotary_pct`` (transformers' ``partial_rotary_factor``): the first ``d_r = int(f d)`` coordinates
    turn by ``b^{-2i/d_r}`` (consecutive pairs here), the others not at all."""
    torch = _torch()
    d_r = int(cfg.d * cfg.partial_rotary_factor + 1e-9)
    P = d_r // 2
    theta = cfg.base ** (-np.arange(0, 2 * P, 2) / d_r) if reading.inv_freq is None else reading.inv_freq[:P]
    ang = np.asarray(positions, dtype=float)[..., None] * np.asarray(theta, dtype=float)  # (..., P)
    return torch.cat([_turn(v[..., : 2 * P], ang, dtype), v[..., 2 * P :]], dim=-1)


@dataclass(frozen=True)
class Terms:
    """How one scheme enters the reference head, written plainly for autograd (none of the NumPy head's hooks).

    Attributes
    ----------
    code : callable or None
        ``code(tp, cfg, n, dtype)``: the absolute code added to every embedding, broadcast against ``(M, B, n, d)``.
    turn : callable or None
        ``turn(v, cfg, positions, dtype, query=False, reading=PLAIN)``: the turn of a query or key at its positions.
    bias : callable or None
        ``bias(tp, cfg, q, r, dtype)``: the term added to the logits at offsets ``r`` (NumPy, ``(n,)``),
        broadcast against ``(M, B, n)``.
    scale : callable or None
        ``scale(tp, cfg, n, dtype)``: the logit scale of a query over ``n`` keys, broadcast against ``(M, B, n)``.
    """

    code: Callable | None = None
    turn: Callable | None = None
    bias: Callable | None = None
    scale: Callable | None = None


def _outside():
    """``(BUILT_IN, SCHEMES)``, looked up only for a scheme from outside: the built-in terms never read the registry."""
    from ..encodings import BUILT_IN, SCHEMES

    return BUILT_IN, SCHEMES


class NoTerms(PosKernelsError):
    """The reference has no terms for a scheme (one from outside that writes no ``reference_code`` / ``_bias``)."""


def _outside_terms(name: str) -> Terms:
    """The terms of a scheme registered from outside: the ``reference_code`` / ``reference_bias`` its author writes
    in torch from its definition (never its NumPy hooks), and its transform's fixed frequencies turned here."""
    scheme = _outside()[1][name]
    code, bias = getattr(scheme, "reference_code", None), getattr(scheme, "reference_bias", None)
    hook = {"input": ("code", code), "score": ("bias", bias)}.get(scheme.where)
    if hook is not None and hook[1] is None:
        raise NoTerms(
            f"the reference has no terms for scheme {name!r}: it writes {hook[0]} but not "
            f"reference_{hook[0]}(tp, cfg, {'n' if hook[0] == 'code' else 'q, r'}, dtype), its term in torch"
        )
    scale = getattr(scheme, "reference_scale", None)
    if scheme.scale_grows and scale is None:
        raise NoTerms(f"the reference has no terms for scheme {name!r}: its logit scale reads n but it writes no "
                      "reference_scale(tp, cfg, n, dtype), its scale in torch")  # fmt: skip
    return Terms(code=code, turn=_transform_turn if scheme.rotary else None, bias=bias, scale=scale)


def _transform_turn(v, cfg: HeadConfig, positions, dtype, query=False, reading=PLAIN):
    """A transform's frequencies ``theta`` (complex: ``w - i g``, a rotation with decay), turned in torch: plane
    ``p`` at position ``m`` times ``e^{i m theta_p}`` for a key, ``e^{i m conj(theta_p)}`` for a query."""
    theta = np.asarray(_outside()[1][cfg.scheme].transform(cfg, reading))  # (P,) fixed by the configuration
    rate = np.conj(theta) if query else theta
    m = np.asarray(positions, dtype=float)[..., None]  # (..., 1)
    return _turn(v, m * rate.real, dtype) * _tensor(np.exp(-m * rate.imag), dtype).repeat_interleave(2, dim=-1)


#: Every scheme's terms in the reference, by the names of :data:`poskernels.encodings.SCHEMES` (a test checks
#: that both registries name the same schemes).
REFERENCE_TERMS: dict[str, Terms] = {
    "nope": Terms(),
    "sinusoidal": Terms(code=_sinusoidal_code),
    "learned": Terms(code=_learned_code),
    "rope": Terms(turn=_rope_turn),
    "alibi": Terms(bias=_alibi_bias),
    "t5": Terms(bias=_t5_bias),
    "shaw": Terms(bias=_shaw_bias),
    "kerple_log": Terms(bias=_kerple_log_bias),
    "kerple_power": Terms(bias=_kerple_power_bias),
    "fire": Terms(bias=_fire_bias),
    "xpos": Terms(turn=_xpos_turn),
    "p_rope": Terms(turn=_p_rope_turn),
    "partial_rotary": Terms(turn=_partial_rotary_turn),
    "nope_ssmax": Terms(scale=_ssmax_scale),
    "rope_ssmax": Terms(turn=_rope_turn, scale=_ssmax_scale),
    "sinusoidal_randpos": Terms(code=_sinusoidal_code),  # trained at random positions: pass them (positions=)
    "rope_randpos": Terms(turn=_rope_turn),
    "xpos_rescaled": Terms(turn=_xpos_turn),  # the same turn at its own scale base
    "fire_c1": Terms(bias=_fire_bias),
}


def reference_terms(name: str) -> Terms:
    """The terms of scheme ``name`` in the reference (:class:`NoTerms` when it has none)."""
    if name in REFERENCE_TERMS:
        return REFERENCE_TERMS[name]
    built_in, schemes = _outside()
    if name in schemes and name not in built_in:
        return _outside_terms(name)
    raise NoTerms(f"the reference has no terms for scheme {name!r}; it has: {', '.join(REFERENCE_TERMS)}")


def torch_stack_logits(tp: dict, cfg: HeadConfig, tokens, positions=None):
    """Logits at the last position of a stack of ``M`` heads, shape ``(M, B, C)``, written position by position.

    Parameters
    ----------
    tp : dict of torch.Tensor
        Stacked parameters (leading model axis ``M``), from :func:`torch_params`.
    cfg : HeadConfig
    tokens : array_like of int, shape (M, B, n)
    positions : array_like, shape (n,), optional
        The keys' positions (default ``0..n-1``; randomized positions pass an ordered subset); the query is at the
        last.
    """
    torch = _torch()
    terms = reference_terms(cfg.scheme)
    x = torch.as_tensor(np.asarray(tokens), dtype=torch.long)
    M, B, n = x.shape
    T = torch_table(tp, cfg)  # (M, V, d)
    dtype = T.dtype
    H = T[torch.arange(M)[:, None, None], x]  # (M, B, n, d)
    pos = np.arange(n) if positions is None else np.asarray(positions, dtype=float)  # (n,)
    if terms.code is not None:
        H = H + terms.code(tp, cfg, n if positions is None else pos, dtype)
    d = H.shape[-1]
    q = torch.bmm(H[:, :, -1], tp["W_Q"])  # (M, B, d)
    K = torch.bmm(H.reshape(M, B * n, d), tp["W_K"]).reshape(M, B, n, d)  # one GEMM per model
    V = torch.bmm(H.reshape(M, B * n, d), tp["W_V"]).reshape(M, B, n, d)
    q0 = q  # the bias reads the query before any turn
    if terms.turn is not None:
        q = terms.turn(q, cfg, pos[-1], dtype, query=True)  # the query sits at the last position
        K = terms.turn(K, cfg, pos, dtype)
    z = torch.einsum("mbd,mbnd->mbn", q, K) / cfg.tau  # (M, B, n)
    own = cfg.scheme in REFERENCE_TERMS or terms.scale is not None
    scale = 1.0 if own else float(_outside()[1][cfg.scheme].logit_scale(cfg, PLAIN))
    if scale != 1.0:  # a scheme from outside with a logit scale of its own
        z = z * scale
    if terms.scale is not None:  # a logit scale of the n keys the query sees
        z = z * terms.scale(tp, cfg, n, dtype)
    if terms.bias is not None:
        z = z + terms.bias(tp, cfg, q0, pos[-1] - pos, dtype)  # offsets r = t - j of the keys
    attn = torch.softmax(z, dim=-1)  # (M, B, n)
    o = torch.einsum("mbn,mbnd->mbd", attn, V)  # (M, B, d)
    return o @ tp["W_O"]  # (M, B, C)


def torch_logits(tp: dict, cfg: HeadConfig, tokens, positions=None):
    """Logits at the last position of one head, shape ``(B, C)`` (:func:`torch_stack_logits` of one).

    Parameters
    ----------
    tp : dict of torch.Tensor
        One head's parameters, from :func:`torch_params`.
    cfg : HeadConfig
    tokens : array_like of int, shape (B, n)
    """
    return torch_stack_logits({k: v[None] for k, v in tp.items()}, cfg, np.asarray(tokens)[None], positions)[0]


def torch_loss_and_grad(params: dict, cfg: HeadConfig, tokens, targets, positions=None) -> tuple[float, dict]:
    """Cross-entropy at the last position and its autograd gradient, as NumPy arrays (float64).

    Examples
    --------
    >>> from poskernels.model.head import init_params
    >>> from poskernels.model.engine.one_head import loss_and_grad
    >>> from poskernels.tasks.cue import cue_batch
    >>> rng = np.random.default_rng(0)
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, rng)
    >>> x, y = cue_batch(rng, 4, 12)
    >>> loss, g = torch_loss_and_grad(p, cfg, x, y)
    >>> ours, h = loss_and_grad(p, cfg, x, y)
    >>> bool(np.isclose(loss, ours) and np.allclose(g["W_Q"], h["W_Q"]) and np.allclose(g["m"], h["m"]))
    True
    """
    torch = _torch()
    tp = torch_params(params)
    logits = torch_logits(tp, cfg, tokens, positions)
    loss = torch.nn.functional.cross_entropy(logits, torch.as_tensor(np.asarray(targets), dtype=torch.long))
    loss.backward()
    return float(loss.detach()), {k: v.grad.numpy() for k, v in tp.items()}


def torch_stack_loss_and_grad(params: dict, cfg: HeadConfig, tokens, targets) -> tuple[np.ndarray, dict]:
    """Each model's cross-entropy ``(M,)`` and the autograd gradient of their sum, for stacked parameters.

    The models share no parameter, so the gradient of the sum is each model's own gradient.
    """
    torch = _torch()
    tp = torch_params(params)
    logits = torch_stack_logits(tp, cfg, tokens)  # (M, B, C)
    M, B, C = logits.shape
    y = torch.as_tensor(np.asarray(targets), dtype=torch.long)
    losses = torch.nn.functional.cross_entropy(logits.reshape(M * B, C), y.reshape(-1), reduction="none")
    losses = losses.reshape(M, B).mean(dim=1)  # (M,)
    losses.sum().backward()
    return losses.detach().numpy(), {k: v.grad.numpy() for k, v in tp.items()}
