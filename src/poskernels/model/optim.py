"""Adam, written in the package, and the central-difference gradient check.

Adam (Kingma and Ba 2015, Algorithm 1) updates one flat parameter vector in place; the head's
arrays are views into it (:func:`flatten`), so a step is a handful of vector operations
whatever the number of arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import PosKernelsError

__all__ = ["AdamState", "adam_init", "adam_step", "central_difference", "flatten"]


def flatten(params: dict) -> tuple[np.ndarray, dict]:
    """Copy ``params`` into one flat float64 vector and return it with views shaped like the arrays.

    Writing into the vector updates the views (and vice versa).

    Parameters
    ----------
    params : dict of str to array_like
        The arrays, in order.

    Returns
    -------
    flat : ndarray of float64
        Every entry, array after array.
    views : dict of str to ndarray
        Views into ``flat``, shaped like ``params``.

    Examples
    --------
    >>> flat, views = flatten({"a": np.ones((2, 2)), "b": np.zeros(3)})
    >>> flat[:] = np.arange(7.0)
    >>> views["a"].tolist(), views["b"].tolist()
    ([[0.0, 1.0], [2.0, 3.0]], [4.0, 5.0, 6.0])
    """
    flat = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in params.values()])
    views, start = {}, 0
    for k, v in params.items():
        size = int(np.prod(np.shape(v)))
        views[k] = flat[start : start + size].reshape(np.shape(v))
        start += size
    return flat, views


@dataclass
class AdamState:
    """Adam's first and second moments and step count (and two scratch vectors, so a step allocates nothing)."""

    m: np.ndarray
    v: np.ndarray
    t: int = 0
    work: tuple = field(default=(), repr=False, compare=False)


def adam_init(size: int) -> AdamState:
    """Zero moments for ``size`` parameters.

    Parameters
    ----------
    size : int
        Parameters of the flat vector.

    Returns
    -------
    AdamState
        Zero moments at step 0.

    Examples
    --------
    >>> s = adam_init(3)
    >>> s.m.tolist(), s.v.tolist(), s.t
    ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0)
    """
    return AdamState(np.zeros(size), np.zeros(size), 0, (np.empty(size), np.empty(size)))


def adam_step(
    x: np.ndarray,
    g: np.ndarray,
    state: AdamState,
    lr: float = 1e-2,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
) -> None:
    """One Adam step, in place on ``x`` and ``state`` (bias-corrected moments).

    ``x <- x - lr * mhat / (sqrt(vhat) + eps)`` with ``mhat = m / (1 - beta1^t)`` and
    ``vhat = v / (1 - beta2^t)``.

    Parameters
    ----------
    x : ndarray
        The flat parameters, updated in place.
    g : ndarray
        Their gradient, of ``x``'s shape.
    state : AdamState
        The moments (:func:`adam_init`), updated in place.
    lr, beta1, beta2, eps : float
        Adam's step size, moment decays and denominator floor.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If ``x``, ``g`` and the state do not share one shape.

    Examples
    --------
    The first step moves every coordinate by ``lr`` against the sign of its gradient:

    >>> x = np.array([1.0, -2.0]); s = adam_init(2)
    >>> adam_step(x, np.array([3.0, -0.5]), s, lr=0.1)
    >>> x.round(6).tolist()
    [0.9, -1.9]
    """
    if x.shape != g.shape or x.shape != state.m.shape:
        raise PosKernelsError(
            f"x, g and the Adam state must share one shape; got {x.shape}, {g.shape}, {state.m.shape}"
        )
    if len(state.work) != 2 or state.work[0].shape != x.shape:
        state.work = (np.empty(x.shape), np.empty(x.shape))
    a, denom = state.work  # scratch: every operation below writes into m, v, x or these
    state.t += 1
    state.m *= beta1
    state.m += np.multiply(g, 1.0 - beta1, out=a)
    state.v *= beta2
    np.multiply(g, g, out=a)
    a *= 1.0 - beta2
    state.v += a
    step = lr / (1.0 - beta1**state.t)
    np.divide(state.v, 1.0 - beta2**state.t, out=denom)
    np.sqrt(denom, out=denom)
    denom += eps
    np.multiply(state.m, step, out=a)
    a /= denom
    x -= a


def central_difference(f: Callable[[], float], x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Numerical gradient of ``f()`` with respect to the array ``x``, which ``f`` reads, entry by entry.

    ``(f(x + h e_i) - f(x - h e_i)) / 2h`` in float64; ``x`` is restored.

    Parameters
    ----------
    f : callable
        ``f() -> float``, reading ``x``.
    x : ndarray of float64
        The array, moved entry by entry and restored.
    h : float
        The step.

    Returns
    -------
    ndarray
        The gradient, of ``x``'s shape.

    Raises
    ------
    PosKernelsError
        If ``x`` is not float64.

    Examples
    --------
    >>> x = np.array([1.0, 2.0])
    >>> central_difference(lambda: float(np.sum(x ** 3)), x).round(6).tolist()
    [3.0, 12.0]
    """
    if x.dtype != np.float64:
        raise PosKernelsError(f"central differences need a float64 array; got {x.dtype}")
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + h
        fp = f()
        flat[i] = old - h
        fm = f()
        flat[i] = old
        gflat[i] = (fp - fm) / (2 * h)
    return grad
