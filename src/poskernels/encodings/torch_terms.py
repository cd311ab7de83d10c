"""What the schemes' terms in PyTorch share: torch imported when first used, a constant tensor, the plane turn.

Every scheme writes its term in the float64 reference head (:mod:`poskernels.model.reference`) in its own class,
beside its NumPy hooks, as a scheme from outside the package does (``docs/guide/your_own_scheme.md``):
``reference_code(tp, cfg, n, dtype)``, ``reference_bias(tp, cfg, q, r, dtype)``, ``reference_scale(tp, cfg, n,
dtype)`` and, for a turn, ``reference_turn(v, cfg, positions, dtype, query=False, reading=None)``.  Each is written
from the paper's definition for autograd, never through the scheme's NumPy hooks, so the reference stays an
independent oracle of the head.  ``import poskernels`` never imports torch: a hook imports it when it runs.

>>> import torch
>>> v = torch.tensor([1.0, 0.0], dtype=torch.float64)
>>> turn(v, np.array([np.pi / 2]), torch.float64).round(decimals=12).tolist()  # plane (0, 1) by a quarter turn
[0.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MissingDependencyError
from .codes import omega

__all__ = ["rope_turn", "tensor", "torch_module", "turn"]


def torch_module() -> Any:
    """``torch``, imported here when a term first needs it (the library's error when it is not installed).

    Returns
    -------
    module
        The ``torch`` module.

    Raises
    ------
    MissingDependencyError
        If torch is not installed; it names ``pip install 'poskernels[torch]'``.

    Examples
    --------
    >>> torch_module().__name__
    'torch'
    """
    try:
        import torch  # optional dependency, imported when used
    except ImportError as err:
        raise MissingDependencyError.of("torch", "torch", "the PyTorch reference head") from err
    return torch


def tensor(values: Any, dtype: Any) -> Any:
    """A NumPy array as a constant tensor of ``dtype``.

    Parameters
    ----------
    values : array_like
        The values (anything :func:`numpy.asarray` reads).
    dtype : torch.dtype
        The tensor's dtype.

    Returns
    -------
    torch.Tensor
        A tensor of the values' shape, not tracked by autograd.

    Examples
    --------
    >>> import torch
    >>> tensor([1, 2], torch.float64).tolist()
    [1.0, 2.0]
    """
    return torch_module().tensor(np.asarray(values), dtype=dtype)


def turn(v: Any, ang: np.ndarray, dtype: Any) -> Any:
    """Plane ``p`` of ``v`` (coordinates ``2p, 2p + 1``) turned by the angles ``ang`` ``(..., P)``, cosine first.

    Parameters
    ----------
    v : torch.Tensor, shape (..., 2P)
        The vectors, planes interleaved (``pairs`` layout).
    ang : ndarray, shape (..., P)
        The angle of each plane, broadcasting against ``v``'s leading axes.
    dtype : torch.dtype
        The dtype the angles' cosines and sines are formed in.

    Returns
    -------
    torch.Tensor, shape (..., 2P)
        ``v`` with plane ``p`` rotated by ``ang[..., p]``; autograd flows through ``v``.

    Examples
    --------
    >>> import torch
    >>> v = torch.tensor([0.0, 1.0], dtype=torch.float64)
    >>> turn(v, np.array([np.pi]), torch.float64).round(decimals=12).tolist()  # a half turn flips the plane
    [-0.0, -1.0]
    """
    torch = torch_module()
    ang = tensor(ang, dtype)  # (..., P)
    cos, sin = torch.cos(ang), torch.sin(ang)
    v0, v1 = v[..., 0::2], v[..., 1::2]
    return torch.stack([cos * v0 - sin * v1, sin * v0 + cos * v1], dim=-1).flatten(-2)


def rope_turn(v: Any, cfg: Any, positions: Any, dtype: Any, reading: Any = None) -> Any:
    """Definition 4: plane ``p`` of ``v`` turned by ``m theta_p`` at position ``m``, ``theta = omega(d, b)``
    (Definition 5: a reading's frequencies replace it; ``reading`` None is the head as trained).

    Parameters
    ----------
    v : torch.Tensor, shape (..., n, d)
        Queries or keys, planes interleaved.
    cfg : HeadConfig
        The head's configuration: its width ``d`` and base ``b``.
    positions : array_like, shape (n,)
        The positions ``m``.
    dtype : torch.dtype
        The dtype the angles are formed in.
    reading : Reading, optional
        A reading whose ``inv_freq`` replaces ``theta``; None (the default) reads the head as trained.

    Returns
    -------
    torch.Tensor, shape (..., n, d)
        ``v`` turned, position by position.

    Examples
    --------
    >>> import torch
    >>> from poskernels.model.config import HeadConfig
    >>> cfg = HeadConfig(scheme="rope")
    >>> v = torch.ones((2, cfg.d), dtype=torch.float64)
    >>> out = rope_turn(v, cfg, np.arange(2), torch.float64)
    >>> bool(torch.equal(out[0], v[0])), round(float(out[1].norm() - v[1].norm()), 12)  # position 0 stays; norms kept
    (True, 0.0)
    """
    inv_freq = None if reading is None else reading.inv_freq
    theta = omega(cfg.d, cfg.base) if inv_freq is None else np.asarray(inv_freq, dtype=float)
    return turn(v, np.asarray(positions)[..., None] * theta, dtype)
