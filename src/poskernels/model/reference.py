"""The same head written plainly in PyTorch, with autograd: an independent reference and a baseline.

Nothing here is token-factored or hand-differentiated: the head builds ``h``, ``q``, ``k``, ``v`` per
position, rotates with explicit cosines and sines, and lets autograd take the gradient.  The tests
check the NumPy head's logits and hand-written gradients against it; ``benchmarks/bench_torch.py``
times it.  Requires the optional ``torch`` dependency (extra ``bench``; also in ``test``).
"""

from __future__ import annotations

import numpy as np

from ..encodings import omega, shaw_clip, sinusoidal_code, t5_bucket
from .config import HeadConfig

__all__ = [
    "torch_logits",
    "torch_loss_and_grad",
    "torch_params",
    "torch_stack_logits",
    "torch_stack_loss_and_grad",
    "torch_table",
]


def _torch():
    import torch  # optional dependency, imported when used

    return torch


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


def torch_stack_logits(tp: dict, cfg: HeadConfig, tokens):
    """Logits at the last position of a stack of ``M`` heads, shape ``(M, B, C)``, written position by position.

    Parameters
    ----------
    tp : dict of torch.Tensor
        Stacked parameters (leading model axis ``M``), from :func:`torch_params`.
    cfg : HeadConfig
    tokens : array_like of int, shape (M, B, n)
    """
    torch = _torch()
    x = torch.as_tensor(np.asarray(tokens), dtype=torch.long)
    M, B, n = x.shape
    T = torch_table(tp, cfg)  # (M, V, d)
    dtype = T.dtype
    H = T[torch.arange(M)[:, None, None], x]  # (M, B, n, d)
    if cfg.scheme == "sinusoidal":
        H = H + torch.tensor(sinusoidal_code(np.arange(n), cfg.d, cfg.base), dtype=dtype)
    if cfg.scheme == "learned":
        H = H + tp["P"][:, None, :n]
    d = H.shape[-1]
    q = torch.bmm(H[:, :, -1], tp["W_Q"])  # (M, B, d)
    K = torch.bmm(H.reshape(M, B * n, d), tp["W_K"]).reshape(M, B, n, d)  # one GEMM per model
    V = torch.bmm(H.reshape(M, B * n, d), tp["W_V"]).reshape(M, B, n, d)
    if cfg.scheme == "rope":  # Definition 4: turn plane p by m theta_p, cosine first
        ang = torch.tensor(np.arange(n)[:, None] * omega(cfg.d, cfg.base), dtype=dtype)  # (n, P)
        c, s = torch.cos(ang), torch.sin(ang)

        def rotate(v, cos, sin):
            v0, v1 = v[..., 0::2], v[..., 1::2]
            return torch.stack([cos * v0 - sin * v1, sin * v0 + cos * v1], dim=-1).flatten(-2)

        q = rotate(q, c[-1], s[-1])
        K = rotate(K, c, s)
    z = torch.einsum("mbd,mbnd->mbn", q, K) / cfg.tau  # (M, B, n)
    r = (n - 1) - np.arange(n)  # offsets of the keys
    if cfg.scheme == "alibi":
        z = z - cfg.alibi_slope * torch.tensor(r, dtype=dtype)
    if cfg.scheme == "t5":
        z = z + tp["beta"][:, None, torch.as_tensor(t5_bucket(-r, cfg.t5_buckets, cfg.t5_max_distance))]
    if cfg.scheme == "shaw":
        a_r = tp["A"][:, torch.as_tensor(shaw_clip(r, cfg.shaw_clip))]  # (M, n, d)
        z = z + q @ a_r.transpose(1, 2) / cfg.tau
    attn = torch.softmax(z, dim=-1)  # (M, B, n)
    o = torch.einsum("mbn,mbnd->mbd", attn, V)  # (M, B, d)
    return o @ tp["W_O"]  # (M, B, C)


def torch_logits(tp: dict, cfg: HeadConfig, tokens):
    """Logits at the last position of one head, shape ``(B, C)`` (:func:`torch_stack_logits` of one).

    Parameters
    ----------
    tp : dict of torch.Tensor
        One head's parameters, from :func:`torch_params`.
    cfg : HeadConfig
    tokens : array_like of int, shape (B, n)
    """
    return torch_stack_logits({k: v[None] for k, v in tp.items()}, cfg, np.asarray(tokens)[None])[0]


def torch_loss_and_grad(params: dict, cfg: HeadConfig, tokens, targets) -> tuple[float, dict]:
    """Cross-entropy at the last position and its autograd gradient, as NumPy arrays (float64).

    Examples
    --------
    >>> from poskernels.model.head import init_params, loss_and_grad
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
    logits = torch_logits(tp, cfg, tokens)
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
