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

__all__ = ["torch_logits", "torch_loss_and_grad", "torch_params"]


def _torch():
    import torch  # optional dependency, imported when used

    return torch


def torch_params(params: dict, dtype=None, requires_grad: bool = True) -> dict:
    """Copy NumPy parameters into leaf tensors (float64 unless ``dtype`` says otherwise)."""
    torch = _torch()
    dtype = torch.float64 if dtype is None else dtype
    return {k: torch.tensor(np.asarray(v), dtype=dtype, requires_grad=requires_grad) for k, v in params.items()}


def torch_logits(tp: dict, cfg: HeadConfig, tokens):
    """Logits at the last position, shape ``(B, C)``, written position by position.

    Parameters
    ----------
    tp : dict of torch.Tensor
        From :func:`torch_params`.
    cfg : HeadConfig
    tokens : array_like of int, shape (B, n)
    """
    torch = _torch()
    x = torch.as_tensor(np.asarray(tokens), dtype=torch.long)
    B, n = x.shape
    dtype = tp["E"].dtype
    H = tp["E"][x]  # (B, n, d)
    if cfg.scheme == "sinusoidal":
        H = H + torch.tensor(sinusoidal_code(np.arange(n), cfg.d, cfg.base), dtype=dtype)
    if cfg.scheme == "learned":
        H = H + tp["P"][:n]
    q = H[:, -1] @ tp["W_Q"]  # (B, d)
    K = H @ tp["W_K"]  # (B, n, d)
    V = H @ tp["W_V"]  # (B, n, d)
    if cfg.scheme == "rope":  # Definition 4: turn plane p by m theta_p, cosine first
        ang = torch.tensor(np.arange(n)[:, None] * omega(cfg.d, cfg.base), dtype=dtype)  # (n, P)
        c, s = torch.cos(ang), torch.sin(ang)

        def rotate(v, cos, sin):
            v0, v1 = v[..., 0::2], v[..., 1::2]
            return torch.stack([cos * v0 - sin * v1, sin * v0 + cos * v1], dim=-1).flatten(-2)

        q = rotate(q, c[-1], s[-1])
        K = rotate(K, c, s)
    z = torch.einsum("bd,bnd->bn", q, K) / cfg.tau  # (B, n)
    r = (n - 1) - np.arange(n)  # offsets of the keys
    if cfg.scheme == "alibi":
        z = z - cfg.alibi_slope * torch.tensor(r, dtype=dtype)
    if cfg.scheme == "t5":
        z = z + tp["beta"][torch.as_tensor(t5_bucket(-r, cfg.t5_buckets, cfg.t5_max_distance))]
    if cfg.scheme == "shaw":
        a_r = tp["A"][torch.as_tensor(shaw_clip(r, cfg.shaw_clip))]  # (n, d)
        z = z + q @ a_r.T / cfg.tau
    attn = torch.softmax(z, dim=1)  # (B, n)
    o = torch.einsum("bn,bnd->bd", attn, V)  # (B, d)
    return o @ tp["W_O"]  # (B, C)


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
    >>> bool(np.isclose(loss, ours) and np.allclose(g["W_Q"], h["W_Q"]))
    True
    """
    torch = _torch()
    tp = torch_params(params)
    logits = torch_logits(tp, cfg, tokens)
    loss = torch.nn.functional.cross_entropy(logits, torch.as_tensor(np.asarray(targets), dtype=torch.long))
    loss.backward()
    return float(loss.detach()), {k: v.grad.numpy() for k, v in tp.items()}
