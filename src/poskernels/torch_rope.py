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

Angles ``m theta_j`` are formed in float64 whatever the input's dtype, and cos and sin are cast to it before the
rotation: float32, bfloat16 and float16 tensors at positions near ``10**6`` are as accurate as at ``10**3``
(transformers forms them in float32, whose angle at ``10**6`` is off by up to 0.03 rad).  A position float64 cannot
tell from the next (``|m| > 2**53``) is refused, and so is an angle whose float64 rounding would pass half the input
dtype's own resolution (``|m| theta > 2**52 eps``: ``2**29`` for float32, ``2**45`` for bfloat16, ``2**42`` for
float16, :data:`ANGLE_LIMITS`; for float64 input, an angle past float64's range, as on the NumPy side), never turned
into a number.  An attention factor past the dtype's range, or a rotation whose
result overflows it, is refused; meta, sparse and nested tensors are refused with the library's error.  Only floating
tensors are rotated (float16, bfloat16, float32, float64): an integer tensor would truncate cos and sin, a complex or
bool one is not a vector of reals.

**Where the positions go.**  ``seq_dim`` is the axis of ``x`` that holds the ``n`` positions (default ``-2``:
``(..., n, d)``; rotary-embedding-torch's argument of the same name).  Positions ``(n,)`` apply along it for every
other axis; positions ``(batch, n)`` pair their rows with ``x``'s first axis (the batch, as transformers passes
``position_ids``; ``batch`` may be 1) and apply to every axis between (the heads).  So ``(batch, heads, n, d)``,
``(batch, n, heads, d)`` with ``seq_dim=1``, ``(batch, n, d)`` and any higher rank follow one rule.  This module
imports torch when it is imported: ``import poskernels`` does not.

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
from numpy.typing import ArrayLike

from .errors import MissingDependencyError, PosKernelsError, check_array, check_int, check_positive_real

try:
    import torch
except ImportError as err:  # the library's own error, naming the extra to install
    raise MissingDependencyError.of("torch", "torch", "poskernels.torch_rope") from err

__all__ = ["ANGLE_LIMITS", "DTYPES", "LAYOUTS", "MAX_POSITION", "apply_rope", "cos_sin"]

#: Where plane ``j`` lives in the rotated width ``r``: consecutive pairs, or first half with second half.
LAYOUTS = ("pairs", "half")

#: The dtypes rotated: the floating ones a model holds queries and keys in.
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

#: The largest ``|m|``: past ``2**53`` float64 cannot tell position ``m`` from ``m + 1``.
MAX_POSITION = 2**53

#: The largest angle ``|m| theta`` for each dtype: its float64 rounding (at most ``|m theta| 2**-53``) stays within half
#: the dtype's resolution at 1 (``eps / 2``), i.e. within what casting cos and sin to it costs anyway; float64 input
#: is rotated in its own arithmetic, as the NumPy side does, up to float64's range.
ANGLE_LIMITS = {t: 2.0**52 * float(torch.finfo(t).eps) for t in DTYPES[:3]} | {
    torch.float64: float(torch.finfo(torch.float64).max)
}


def _name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _check_tensor(name: str, value) -> None:
    """Refuse what torch would answer with its own error, or silently: meta, sparse and nested tensors."""
    if not torch.is_tensor(value):
        return
    kind = (
        "a nested tensor"
        if getattr(value, "is_nested", False)
        else "a meta tensor (no values)"
        if value.is_meta
        else f"a {value.layout} tensor"
        if value.layout != torch.strided
        else None
    )
    if kind is not None:
        raise PosKernelsError(
            f"{name} must be a dense tensor with values (torch.strided, on a real device); got {kind}: use "
            ".to_dense(), or one tensor per sequence for a nested one"
        )


def _check_dtype(what: str, dtype) -> torch.dtype:
    if dtype not in DTYPES:
        accepted = ", ".join(str(t).removeprefix("torch.") for t in DTYPES)
        raise PosKernelsError(
            f"{what} must be a floating dtype ({accepted}): integers would truncate cos and sin, complex and bool "
            f"are not real vectors; got {dtype}"
        )
    return dtype


def _as_numpy(name: str, value) -> np.ndarray:
    """A tensor or array_like as a finite float64 NumPy array (bool, complex, NaN and infinities refused)."""
    _check_tensor(name, value)
    if torch.is_tensor(value):
        if value.dtype == torch.bool or value.is_complex():
            raise PosKernelsError(f"{name} must be real numbers; got a tensor of dtype {value.dtype}")
        value = value.detach().to("cpu", torch.float64).numpy()
    return check_array(name, value)


def _frequencies(inv_freq, device) -> torch.Tensor:
    theta = _as_numpy("inv_freq", inv_freq)
    if theta.ndim != 1 or theta.size == 0 or np.any(theta < 0):
        raise PosKernelsError(
            f"inv_freq must be a non-empty 1-d array of finite frequencies >= 0; got shape {theta.shape}: "
            f"{np.array2string(theta, threshold=6)}"
        )
    return torch.from_numpy(theta).to(device)


def _positions(positions, device) -> torch.Tensor:
    """Positions as a tensor on ``device``: integer tensors as they are, anything else finite float64."""
    _check_tensor("positions", positions)
    if torch.is_tensor(positions) and not positions.is_floating_point() and positions.dtype != torch.bool:
        if positions.is_complex():
            raise PosKernelsError(f"positions must be real numbers; got a tensor of dtype {positions.dtype}")
        return positions.to(device)
    if torch.is_tensor(positions) and positions.is_floating_point():
        bad = ~torch.isfinite(positions)
        if bool(bad.any()):
            at = tuple(int(i) for i in bad.nonzero()[0])
            raise PosKernelsError(f"positions must be finite; got {positions[at].item()!r} at index {at}")
        return positions.to(device)
    return torch.from_numpy(_as_numpy("positions", positions)).to(device)


def cos_sin(
    positions: torch.Tensor | ArrayLike,
    inv_freq: torch.Tensor | ArrayLike,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
    attention_factor: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos(m theta_j)`` and ``sin(m theta_j)`` times ``attention_factor``, shape ``positions.shape + (P,)``.

    The angles are formed in float64 and refused past :data:`MAX_POSITION` or :data:`ANGLE_LIMITS` of ``dtype``.

    Parameters
    ----------
    positions : torch.Tensor or array_like
        Positions ``m``, any shape (``(batch, n)`` as transformers holds them).
    inv_freq : torch.Tensor or array_like, shape (P,)
        The frequencies ``theta_j``, finite and ``>= 0`` (an extension's ``inv_freq``).
    dtype : torch.dtype, optional
        A floating dtype for the output; default ``torch.float32``.
    device : torch.device or str, optional
        Where the output lives; default the positions' device (or the CPU).
    attention_factor : float, optional
        The multiplier on cos and sin (YaRN's, LongRoPE's); default 1.

    Returns
    -------
    tuple of torch.Tensor
        ``(cos, sin)``, each of shape ``positions.shape + (P,)`` and of `dtype`.

    Raises
    ------
    PosKernelsError
        If `inv_freq` is not a non-empty 1-d array of finite frequencies ``>= 0``, `dtype` is not floating,
        `attention_factor` not a finite positive number, or an angle passes what `dtype` resolves.

    Examples
    --------
    >>> c, s = cos_sin(torch.arange(3), [1.0, 0.5])
    >>> c.shape, round(float(s[2, 0]), 4)
    (torch.Size([3, 2]), 0.9093)
    >>> cos_sin(torch.arange(3), [1e39], torch.bfloat16)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the angle m theta reaches 2e+39 for bfloat16 output; ...
    """
    dtype = _check_dtype("dtype", dtype)
    factor = check_positive_real("attention_factor", attention_factor)
    pos = _positions(positions, device)
    return _cos_sin(pos, _frequencies(inv_freq, pos.device), dtype, factor)


def _cos_sin(pos: torch.Tensor, theta: torch.Tensor, dtype, factor: float):
    """:func:`cos_sin` of checked arguments (``theta`` float64 on ``pos``'s device, possibly empty)."""
    top = float(torch.finfo(dtype).max)
    if factor > top:
        raise PosKernelsError(
            f"attention_factor {factor!r} overflows {_name(dtype)} (largest {top:.4g}): cos and sin times it would be "
            f"inf; it must stay below that"
        )
    m_top = _largest(pos)
    if m_top > MAX_POSITION:
        raise PosKernelsError(
            f"positions must stay within 2**53 = {MAX_POSITION} in magnitude, where float64 still tells m from m + 1; "
            f"got |m| = {_shown(pos)}"
        )
    th_top = float(theta.max()) if theta.numel() else 0.0
    limit = ANGLE_LIMITS[dtype]
    if m_top * th_top > limit:
        raise PosKernelsError(
            f"the angle m theta reaches {m_top * th_top:.3g} for {_name(dtype)} output; past {limit:.4g} "
            + (
                "it overflows float64"
                if dtype == torch.float64
                else f"its float64 rounding exceeds what {_name(dtype)} resolves"
            )
            + f" (largest |m| {_shown(pos)}, largest theta {th_top!r}): "
            "use smaller positions (they are relative: shift them) or lower frequencies"
        )
    ang = pos.to(torch.float64)[..., None] * theta  # (..., P), exact positions times float64 frequencies
    return (ang.cos() * factor).to(dtype), (ang.sin() * factor).to(dtype)


def _largest(pos: torch.Tensor) -> int | float:
    """The largest ``|m|``, exact for integer tensors (an int64 past ``2**53`` is not rounded, -2**63 not wrapped)."""
    if not pos.numel():
        return 0
    if pos.is_floating_point():
        return float(pos.abs().max())
    return max(int(pos.max()), -int(pos.min()))


def _shown(pos: torch.Tensor) -> str:
    return repr(_largest(pos))


def _seq_axis(seq_dim, ndim: int) -> int:
    """The axis (``0..ndim-2``) that ``seq_dim`` names; the last axis holds the coordinates, never positions."""
    why = f"an axis of the {ndim}-d x other than the last, which holds d; -{ndim}..-2 count from the end"
    seq_dim = check_int("seq_dim", seq_dim, -ndim, ndim - 2, why)
    if seq_dim == -1:
        raise PosKernelsError(f"seq_dim must name an axis of x other than the last (which holds d); got {seq_dim}")
    return seq_dim % ndim


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor | ArrayLike,
    inv_freq: torch.Tensor | ArrayLike,
    rotated_planes: int | None = None,
    attention_factor: float = 1.0,
    layout: str = "pairs",
    seq_dim: int = -2,
) -> torch.Tensor:
    """Rotate ``x`` by its positions: ``x_m -> a R_theta(m) x_m`` on the first ``rotated_planes`` planes.

    Parameters
    ----------
    x : torch.Tensor, shape (..., n, d) (``n`` on axis ``seq_dim``)
        Queries or keys, of a floating dtype; for ``(batch, heads, n, d)`` positions of shape ``(batch, n)`` apply
        to every head.
    positions : tensor or array_like, shape (n,) or (batch, n)
        Integer or real positions (position interpolation reads fractional ones).  ``(n,)`` applies along
        ``seq_dim`` for every other axis; ``(batch, n)`` pairs row ``b`` with ``x[b]`` (``batch`` is ``x.shape[0]``
        or 1) and applies along ``seq_dim`` for every axis between.
    inv_freq : array_like or torch.Tensor, shape (P,)
        Per-plane frequencies.
    rotated_planes : int, optional
        Planes rotated (partial rotary embeddings); default ``P``.  The rest of ``x`` passes unchanged.
    attention_factor : float, default 1.0
        Multiplies cos and sin (transformers' ``attention_scaling``: YaRN, LongRoPE); finite, positive, within the
        dtype's range, and the rotated result must be too.
    layout : {"pairs", "half"}
        Consecutive pairs (this library) or ``rotate_half`` halves (transformers).
    seq_dim : int, default -2
        The axis of ``x`` holding the positions (``1`` for ``(batch, n, heads, d)``); never the last.

    Returns
    -------
    torch.Tensor, the shape, dtype and device of ``x``

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
    >>> y = torch.randn(2, 5, 3, 8, dtype=torch.float64)  # (batch, n, heads, d): positions on axis 1
    >>> pos = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])  # (batch, n)
    >>> torch.allclose(apply_rope(y, pos, omega(8), seq_dim=1).transpose(1, 2),
    ...                apply_rope(y.transpose(1, 2), pos, omega(8)))
    True
    """
    if not torch.is_tensor(x):
        raise PosKernelsError(
            f"x must be a torch tensor (use poskernels.encodings.apply_rope for arrays); got {type(x)}"
        )
    _check_tensor("x", x)
    _check_dtype("x", x.dtype)
    bad = ~torch.isfinite(x.detach())
    if bool(bad.any()):  # an infinite coordinate turns into NaN (inf * 0) as the NumPy side refuses it
        at = tuple(int(i) for i in bad.nonzero()[0])
        raise PosKernelsError(f"x must be finite; got {x[at].item()!r} at index {at}")
    if layout not in LAYOUTS:
        raise PosKernelsError(f"unknown layout {layout!r}; accepted: {', '.join(LAYOUTS)}")
    if x.ndim < 2 or x.shape[-1] % 2:
        raise PosKernelsError(f"x must have shape (..., n, d) with d even; got shape {tuple(x.shape)}")
    axis = _seq_axis(seq_dim, x.ndim)
    d, n = x.shape[-1], x.shape[axis]
    theta = _frequencies(inv_freq, x.device)
    top = min(theta.numel(), d // 2)
    planes = theta.numel() if rotated_planes is None else rotated_planes
    planes = check_int("rotated_planes", planes, 0, top, f"for d = {d} and {theta.numel()} frequencies")
    pos = _positions(positions, x.device)
    shape = [1] * (x.ndim - 1)  # every axis of x but d: n on the positions' axis, the batch on the first
    shape[axis] = n
    if pos.ndim == 2 and axis > 0 and pos.shape[1] == n and pos.shape[0] in (1, x.shape[0]):
        shape[0] = pos.shape[0]
    elif pos.shape != (n,):
        batch = f"(batch, {n}) with batch = {x.shape[0]} (x's axis 0) or 1" if axis > 0 else "no batch form"
        raise PosKernelsError(
            f"positions must have shape ({n},) or {batch}, to match x of shape {tuple(x.shape)} whose axis {axis} "
            f"(seq_dim = {seq_dim}) holds the positions; got {tuple(pos.shape)}"
        )
    factor = check_positive_real("attention_factor", attention_factor)
    c, s = _cos_sin(pos.reshape(shape), theta[:planes], x.dtype, factor)  # (..., P) each
    r = 2 * planes
    if layout == "pairs":
        a, b = x[..., 0:r:2], x[..., 1:r:2]  # (..., P) each
        rotated = torch.stack((c * a - s * b, s * a + c * b), dim=-1).flatten(-2)  # (..., r)
    else:
        a, b = x[..., :planes], x[..., planes:r]  # (..., P) each
        rotated = torch.cat((c * a - s * b, s * a + c * b), dim=-1)  # (..., r)
    bad = ~torch.isfinite(rotated.detach())
    if bool(bad.any()):  # finite x and cos, sin: the rotation (or the attention factor) passed the dtype's range
        at = tuple(int(i) for i in bad.nonzero()[0])
        raise PosKernelsError(
            f"the rotated x overflows {_name(x.dtype)} (largest {float(torch.finfo(x.dtype).max):.4g}) at index {at}: "
            f"|x| up to {float(x.detach().abs().max()):.4g} times the attention factor {factor!r}; scale x down or "
            "rotate in a wider dtype"
        )
    return torch.cat((rotated, x[..., r:]), dim=-1) if r < d else rotated
