"""The same head written plainly in PyTorch, with autograd: an independent reference and a baseline.

Nothing here is token-factored or hand-differentiated: the head builds ``h``, ``q``, ``k``, ``v`` per
position, rotates with explicit cosines and sines, and lets autograd take the gradient.  Each scheme enters
through its :class:`Terms`, read off its own class by :func:`reference_terms`: a code, a turn, a bias or a scale
that the scheme writes in torch beside its NumPy hooks (``reference_code``, ``reference_turn``, ``reference_bias``,
``reference_scale``, from the paper's definition, never through the head's hooks; a built-in scheme as a user's
does), so the reference stays an independent oracle of :data:`poskernels.encodings.SCHEMES`.  The tests
check the NumPy head's logits and hand-written gradients against it; ``benchmarks/bench_torch.py``
times it.  Requires the optional ``torch`` dependency (extra ``bench``; also in ``test``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..encodings.torch_terms import tensor as _tensor
from ..encodings.torch_terms import torch_module as _torch
from ..encodings.torch_terms import turn as _turn
from ..errors import PosKernelsError
from .config import HeadConfig
from .reading import PLAIN

__all__ = [
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


def torch_params(params: dict, dtype=None, requires_grad: bool = True) -> dict:
    """Copy NumPy parameters into leaf tensors (float64 unless ``dtype`` says otherwise).

    Parameters
    ----------
    params : dict of array_like
        A head's (or a stack's) parameters.
    dtype : torch.dtype, optional
        ``torch.float64`` by default.
    requires_grad : bool
        Whether autograd tracks them.

    Returns
    -------
    dict of torch.Tensor
        One leaf tensor per parameter.

    Examples
    --------
    >>> from poskernels.model.head import forward, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> tp = torch_params(p)
    >>> tp["W_Q"].dtype, tp["W_Q"].requires_grad, tuple(tp["W_Q"].shape)
    (torch.float64, True, (16, 16))
    """
    torch = _torch()
    dtype = torch.float64 if dtype is None else dtype
    return {k: torch.tensor(np.asarray(v), dtype=dtype, requires_grad=requires_grad) for k, v in params.items()}


def torch_table(tp: dict, cfg: HeadConfig):
    """The embedding of every token id, ``(M, V, d)``, written plainly (:func:`poskernels.model.head.token_table`).

    Parameters
    ----------
    tp : dict of torch.Tensor
        Stacked parameters (leading model axis ``M``).
    cfg : HeadConfig
        The heads.

    Returns
    -------
    torch.Tensor, shape (M, V, d)
        Row ``x`` of model ``m`` is the embedding of token ``x``.

    Examples
    --------
    >>> from poskernels.model.embedding import token_table
    >>> from poskernels.model.head import forward, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> T = torch_table({k: v[None] for k, v in torch_params(p).items()}, cfg)
    >>> tuple(T.shape), bool(np.allclose(T[0].detach().numpy(), token_table(p, cfg)))
    ((1, 17, 16), True)
    """
    torch = _torch()
    if cfg.embedding == "table":
        return tp["E"]
    S = (cfg.vocab - 1) // 2
    E, m = tp["E"], tp["m"]  # (M, S+1, d), (M, d)
    return torch.cat([E[:, :S], E[:, :S] + m[:, None, :], E[:, S:]], dim=1)  # unmarked, marked, query


@dataclass(frozen=True)
class Terms:
    """How one scheme enters the reference head, written plainly for autograd (none of the NumPy head's hooks): its
    class's ``reference_*`` hooks, read by :func:`reference_terms`.

    Attributes
    ----------
    code : callable or None
        ``code(tp, cfg, n, dtype)``: the absolute code added to every embedding, broadcast against ``(M, B, n, d)``.
    turn : callable or None
        ``turn(v, cfg, positions, dtype, query=False, reading=None)``: the turn of a query or key at its positions
        (``reading`` a :class:`~poskernels.model.reading.Reading`, None as trained).
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


def _schemes():
    """:data:`poskernels.encodings.SCHEMES`, looked up when a scheme's terms are read (this module holds no scheme)."""
    from ..encodings import SCHEMES

    return SCHEMES


class NoTerms(PosKernelsError):
    """The reference has no terms for a scheme (one from outside that writes no ``reference_code`` / ``_bias``)."""


#: The hook of its terms in torch a scheme must write where it acts (a transform's fixed frequencies are turned here).
_OWN = {"input": "code", "score": "bias"}


def reference_terms(name: str) -> Terms:
    """The terms of scheme ``name`` in the reference: the ``reference_*`` hooks of its class (:class:`NoTerms` when
    it lacks the one it needs).

    Every scheme, built-in or registered from outside, writes its term in torch from its definition, never through
    its NumPy hooks: ``reference_code(tp, cfg, n, dtype)``, ``reference_bias(tp, cfg, q, r, dtype)``,
    ``reference_scale(tp, cfg, n, dtype)`` for a logit scale of the key count, and for a turn
    ``reference_turn(v, cfg, positions, dtype, query=False, reading=None)``; a rotary scheme that writes no turn has
    its transform's frequencies turned here.

    Parameters
    ----------
    name : str
        A registered scheme's name.

    Returns
    -------
    Terms
        Its code, turn, bias and scale in torch (None where it has none).

    Raises
    ------
    NoTerms
        A :class:`~poskernels.errors.PosKernelsError`: the scheme is not registered, or lacks the torch term it
        needs.

    Examples
    --------
    >>> reference_terms("alibi").bias is not None, reference_terms("alibi").turn
    (True, None)
    """
    schemes = _schemes()
    if name not in schemes:
        raise NoTerms(f"the reference has no terms for scheme {name!r}, which is not registered; "
                      f"registered: {', '.join(schemes)}")  # fmt: skip
    scheme = schemes[name]
    code, turn, bias, scale = (getattr(scheme, f"reference_{h}", None) for h in ("code", "turn", "bias", "scale"))
    own = _OWN.get(scheme.where)
    if own is not None and {"code": code, "bias": bias}[own] is None:
        raise NoTerms(
            f"the reference has no terms for scheme {name!r}: it writes {own} but not "
            f"reference_{own}(tp, cfg, {'n' if own == 'code' else 'q, r'}, dtype), its term in torch"
        )
    if scheme.scale_grows and scale is None:
        raise NoTerms(f"the reference has no terms for scheme {name!r}: its logit scale reads n but it writes no "
                      "reference_scale(tp, cfg, n, dtype), its scale in torch")  # fmt: skip
    if scheme.rotary and turn is None:
        turn = _transform_turn
    return Terms(code=code, turn=turn, bias=bias, scale=scale)


def _transform_turn(v, cfg: HeadConfig, positions, dtype, query=False, reading=None):
    """A transform's frequencies ``theta`` (complex: ``w - i g``, a rotation with decay), turned in torch: plane
    ``p`` at position ``m`` times ``e^{i m theta_p}`` for a key, ``e^{i m conj(theta_p)}`` for a query."""
    theta = np.asarray(_schemes()[cfg.scheme].transform(cfg, PLAIN if reading is None else reading))  # (P,) fixed
    rate = np.conj(theta) if query else theta
    m = np.asarray(positions, dtype=float)[..., None]  # (..., 1)
    return _turn(v, m * rate.real, dtype) * _tensor(np.exp(-m * rate.imag), dtype).repeat_interleave(2, dim=-1)


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

    Returns
    -------
    torch.Tensor, shape (M, B, C)
        The logits, differentiable in ``tp``.

    Raises
    ------
    NoTerms
        If the scheme has no terms in the reference (:func:`reference_terms`).

    Examples
    --------
    >>> from poskernels.model.head import forward, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> ps = [p, init_params(cfg, np.random.default_rng(1))]
    >>> stacked = {k: np.stack([q[k] for q in ps]) for k in p}
    >>> x = np.random.default_rng(2).integers(0, cfg.vocab, size=(3, 8))
    >>> z = torch_stack_logits(torch_params(stacked), cfg, np.stack([x, x])).detach().numpy()
    >>> z.shape, bool(np.allclose(z[1], forward(ps[1], cfg, x)[0]))
    ((2, 3, 8), True)
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
    scale = 1.0 if terms.scale is not None else float(_schemes()[cfg.scheme].logit_scale(cfg, PLAIN))
    if scale != 1.0:  # a scheme with a constant logit scale of its own
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
    positions : array_like, shape (n,), optional
        As for :func:`torch_stack_logits`.

    Returns
    -------
    torch.Tensor, shape (B, C)
        The logits, differentiable in ``tp``.

    Examples
    --------
    >>> from poskernels.model.head import forward, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> x = np.random.default_rng(1).integers(0, cfg.vocab, size=(3, 8))
    >>> bool(np.allclose(torch_logits(torch_params(p), cfg, x).detach().numpy(), forward(p, cfg, x)[0]))
    True
    """
    return torch_stack_logits({k: v[None] for k, v in tp.items()}, cfg, np.asarray(tokens)[None], positions)[0]


def torch_loss_and_grad(params: dict, cfg: HeadConfig, tokens, targets, positions=None) -> tuple[float, dict]:
    """Cross-entropy at the last position and its autograd gradient, as NumPy arrays (float64).

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters.
    cfg : HeadConfig
        The head.
    tokens : array_like of int, shape (B, n)
        Sequences.
    targets : array_like of int, shape (B,)
        Their targets.
    positions : array_like, shape (n,), optional
        As for :func:`torch_stack_logits`.

    Returns
    -------
    loss : float
        The mean cross-entropy.
    grads : dict of ndarray
        Its gradient, one array per parameter.

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

    Parameters
    ----------
    params : dict of ndarray
        Stacked parameters (leading model axis ``M``).
    cfg : HeadConfig
        The heads.
    tokens : array_like of int, shape (M, B, n)
        Each model's sequences.
    targets : array_like of int, shape (M, B)
        Their targets.

    Returns
    -------
    losses : ndarray, shape (M,)
        Each model's mean cross-entropy.
    grads : dict of ndarray
        The gradient, stacked like ``params``.

    Examples
    --------
    >>> from poskernels.model.head import forward, init_params
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> ps = [p, init_params(cfg, np.random.default_rng(1))]
    >>> stacked = {k: np.stack([q[k] for q in ps]) for k in p}
    >>> x, y = np.random.default_rng(2).integers(0, cfg.vocab, size=(3, 8)), np.array([0, 1, 2])
    >>> losses, g = torch_stack_loss_and_grad(stacked, cfg, np.stack([x, x]), np.stack([y, y]))
    >>> one, g1 = torch_loss_and_grad(ps[1], cfg, x, y)
    >>> losses.shape, bool(np.isclose(losses[1], one)), bool(np.allclose(g["W_Q"][1], g1["W_Q"]))
    ((2,), True, True)
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
