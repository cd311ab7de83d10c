"""RoPE on PyTorch tensors (Definition 4), for users of transformers and rotary-embedding-torch.

:func:`apply_rope` rotates queries or keys held as torch tensors: the result keeps the input's dtype
(bfloat16 and float16 included) and device, autograd flows through it, and positions may be one row
``(n,)`` or one row per sequence ``(batch, n)``, as transformers passes ``position_ids``.  The frequencies
are anything the library hands out (:func:`~poskernels.encodings.omega`, ``Extension.inv_freq`` of a map or
of a model's census), as a NumPy array or a tensor.

Two layouts: ``"pairs"`` rotates consecutive coordinates ``(2j, 2j+1)`` (this library's, the article's
Definition 2 and GPT-J's); ``"half"`` rotates ``j`` with ``j + r/2`` inside the rotated width ``r``
(transformers' ``rotate_half``, GPT-NeoX's).  A vector in the first layout, reordered by
:func:`~poskernels.encodings.to_half_split`, gets the same scores in the second.

Angles ``m theta_j`` are computed in float32 (float64 for float64 input) and cos and sin cast to the
input's dtype before the rotation, as transformers does.  This module imports torch when it is imported:
``import poskernels`` does not.

Examples
--------
>>> import torch
>>> from poskernels.encodings import omega
>>> q = torch.randn(2, 4, 16, 8, dtype=torch.bfloat16, requires_grad=True)  # (batch, heads, n, d)
>>> pos = torch.arange(16).repeat(2, 1)  # (batch, n)
>>> out = apply_rope(q, pos, omega(8))
>>> out.dtype, out.shape
(torch.bfloat16, torch.Size([2, 4, 16, 8]))
>>> out.float().sum().backward(); q.grad.shape
torch.Size([2, 4, 16, 8])
"""

from __future__ import annotations

import numpy as np
import torch

from .errors import PosKernelsError

__all__ = ["LAYOUTS", "apply_rope", "cos_sin"]

#: Where plane ``j`` lives in the rotated width ``r``: consecutive pairs, or first half with second half.
LAYOUTS = ("pairs", "half")


def _frequencies(inv_freq, device) -> torch.Tensor:
    theta = torch.as_tensor(np.asarray(inv_freq.detach().cpu() if torch.is_tensor(inv_freq) else inv_freq))
    if theta.ndim != 1 or theta.numel() == 0 or not bool(torch.all(torch.isfinite(theta) & (theta >= 0))):
        raise PosKernelsError(f"inv_freq must be a non-empty 1-d array of finite frequencies >= 0; got {inv_freq!r}")
    return theta.to(device=device, dtype=torch.float64)


def cos_sin(positions, inv_freq, dtype=torch.float32, device=None, attention_factor: float = 1.0):
    """``cos(m theta_j)`` and ``sin(m theta_j)`` times ``attention_factor``, shape ``positions.shape + (P,)``.

    >>> c, s = cos_sin(torch.arange(3), [1.0, 0.5])
    >>> c.shape, round(float(s[2, 0]), 4)
    (torch.Size([3, 2]), 0.9093)
    """
    pos = torch.as_tensor(positions, device=device)
    if pos.is_floating_point() and not bool(torch.all(torch.isfinite(pos))):
        raise PosKernelsError(f"positions must be finite; got {positions!r}")
    work = torch.float64 if dtype == torch.float64 else torch.float32  # transformers: float32 angles
    theta = _frequencies(inv_freq, pos.device).to(work)  # (P,)
    ang = pos.to(work)[..., None] * theta  # (..., n, P)
    return (ang.cos() * attention_factor).to(dtype), (ang.sin() * attention_factor).to(dtype)


def apply_rope(
    x: torch.Tensor,
    positions,
    inv_freq,
    rotated_planes: int | None = None,
    attention_factor: float = 1.0,
    layout: str = "pairs",
) -> torch.Tensor:
    """Rotate ``x`` by its positions: ``x_m -> a R_theta(m) x_m`` on the first ``rotated_planes`` planes.

    Parameters
    ----------
    x : torch.Tensor, shape (..., n, d)
        Queries or keys; for ``(batch, heads, n, d)`` positions of shape ``(batch, n)`` apply to every head.
    positions : tensor or array_like, shape (n,) or (batch, n)
        Integer or real positions (position interpolation reads fractional ones).
    inv_freq : array_like or torch.Tensor, shape (P,)
        Per-plane frequencies.
    rotated_planes : int, optional
        Planes rotated (partial rotary embeddings); default ``P``.  The rest of ``x`` passes unchanged.
    attention_factor : float, default 1.0
        Multiplies cos and sin (transformers' ``attention_scaling``: YaRN, LongRoPE).
    layout : {"pairs", "half"}
        Consecutive pairs (this library) or ``rotate_half`` halves (transformers).

    Returns
    -------
    torch.Tensor, shape (..., n, d), the dtype and device of ``x``

    Notes
    -----
    Plane ``j`` of position ``m``: ``(x_a, x_b) -> a (c x_a - s x_b, s x_a + c x_b)`` with
    ``c = cos(m theta_j)``, ``s = sin(m theta_j)`` (Definition 4), ``a`` the attention factor.

    Examples
    --------
    >>> from poskernels.encodings import omega, apply_rope as apply_rope_np
    >>> x = torch.randn(5, 8, dtype=torch.float64)
    >>> torch.allclose(apply_rope(x, torch.arange(5), omega(8)),
    ...                torch.from_numpy(apply_rope_np(x.numpy(), range(5), omega(8))))
    True
    """
    if not torch.is_tensor(x):
        raise PosKernelsError(
            f"x must be a torch tensor (use poskernels.encodings.apply_rope for arrays); got {type(x)}"
        )
    if layout not in LAYOUTS:
        raise PosKernelsError(f"unknown layout {layout!r}; accepted: {', '.join(LAYOUTS)}")
    if x.ndim < 2 or x.shape[-1] % 2:
        raise PosKernelsError(f"x must have shape (..., n, d) with d even; got shape {tuple(x.shape)}")
    d, n = x.shape[-1], x.shape[-2]
    theta = _frequencies(inv_freq, x.device)
    planes = theta.numel() if rotated_planes is None else rotated_planes
    if isinstance(planes, bool) or not isinstance(planes, int) or not 0 <= planes <= min(theta.numel(), d // 2):
        raise PosKernelsError(
            f"rotated_planes must be a whole number in [0, {min(theta.numel(), d // 2)}] for d = {d} and "
            f"{theta.numel()} frequencies; got {rotated_planes!r}"
        )
    pos = torch.as_tensor(positions, device=x.device)
    if pos.ndim not in (1, 2) or pos.shape[-1] != n:
        raise PosKernelsError(f"positions must have shape ({n},) or (batch, {n}) to match x; got {tuple(pos.shape)}")
    if pos.ndim == 2 and x.ndim == 4:
        pos = pos[:, None, :]  # (batch, 1, n): the same positions for every head
    c, s = cos_sin(pos, theta[:planes], x.dtype, x.device, attention_factor)  # (..., n, P) each
    r = 2 * planes
    if layout == "pairs":
        a, b = x[..., 0:r:2], x[..., 1:r:2]  # (..., n, P) each
        rotated = torch.stack((c * a - s * b, s * a + c * b), dim=-1).flatten(-2)  # (..., n, r)
    else:
        a, b = x[..., :planes], x[..., planes:r]  # (..., n, P) each
        rotated = torch.cat((c * a - s * b, s * a + c * b), dim=-1)  # (..., n, r)
    return torch.cat((rotated, x[..., r:]), dim=-1) if r < d else rotated
