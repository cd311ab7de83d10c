"""The kernel's first zero and the smallest base that keeps it away (Men et al. 2024, "Base of RoPE Bounds Context
Length").

Theorem 1's kernel ``kappa_d(Delta) = sum_j cos(Delta theta_j)`` is the expected score of a key that matches its
query; Men et al. bound usable context by the first offset where it turns negative, and give the smallest base
whose kernel stays nonnegative up to a length.  The bases that keep it nonnegative do **not** form an interval, so
the smallest is found by a scan over bases, never by bisection; offsets run to 10**6 and are evaluated in chunks.

Each public function checks its arguments once and hands them to its unchecked core (``_first_negative_offset``):
the base scans try hundreds of bases of one width through the core, not through the checking entry point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..encodings import omega  # noqa: F401  (the Examples)
from ..encodings.codes import code_kernel, plane_frequencies
from ..errors import PosKernelsError, check_array, check_base, check_even_dimension, check_int, check_real

__all__ = [
    "BaseBounds",
    "base_bounds",
    "first_negative_offset",
    "smallest_nonnegative_base",
]

#: Offsets of one row of :func:`first_negative_offset`'s table (``CHUNK x d/2`` complex exponentials).
CHUNK = 1 << 10

#: Largest offset the kernel is scanned to (Men et al.'s curve stops at 10**6; past it, pass ``max_offset``).
MAX_SCAN = 10**7

def _kernel(offsets: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``kappa(Delta) = sum_j cos(Delta theta_j)`` at each offset; ``offsets`` (n,), ``theta`` (P,) -> (n,)."""
    return code_kernel(offsets, theta)  # (n,): the planes' cosines summed


def _kernel_blocks(theta: np.ndarray, start: int, stop: int, chunk: int):
    """Yield ``(first offset, kappa at offsets first..first+n-1)`` over ``start..stop-1``, one block at a time.

    The engine of :func:`_kernel`: ``cos((s + c) theta) = Re(e^{i s theta} e^{i c theta})``, so one table
    ``T[c, j] = e^{i c theta_j}`` (chunk, P) built per call turns every block of ``K`` chunk starts into one
    matrix product ``Re(W T^T)`` (K, chunk), with ``W[k, j] = e^{i s_k theta_j}`` (K, P).
    """
    T = np.exp(1j * np.arange(chunk, dtype=np.float64)[:, None] * theta[None, :])  # (chunk, P)
    per_block = 64
    for first in range(start, stop, chunk * per_block):
        s = np.arange(first, min(first + chunk * per_block, stop), chunk, dtype=np.float64)  # (K,) chunk starts
        W = np.exp(1j * s[:, None] * theta[None, :])  # (K, P)
        values = (W @ T.T).real.ravel()  # (K * chunk,) offsets first, first + 1, ...
        yield first, values[: stop - first]


def first_negative_offset(theta: ArrayLike, max_offset: int, chunk: int = CHUNK) -> int | None:
    """The first integer offset ``0 <= Delta <= max_offset`` where ``sum_j cos(Delta theta_j) < 0``, or None.

    Men et al. (2024) read a model's usable context as the offsets before its kernel's first zero.
    The offsets are evaluated in blocks (a matrix product per block, see :func:`_kernel_blocks`;
    the direct sum of cosines is :func:`_kernel`, and the tests hold the two equal), so ``max_offset = 10**6``
    at ``d = 128`` never holds ``64 x 10**6`` cosines at once, and a kernel that turns negative early stops early.

    Parameters
    ----------
    theta : array_like, shape (P,)
        Frequencies (trained, or after an extension map).
    max_offset : int
        Last offset looked at, at most :data:`MAX_SCAN`.
    chunk : int, optional
        Offsets per block; default 1024.

    Returns
    -------
    int or None
        The first offset with a negative kernel; None if the kernel stays nonnegative up to `max_offset`.

    Raises
    ------
    PosKernelsError
        If `theta` is not a non-empty 1-d finite array, or `max_offset` or `chunk` is out of range.

    Examples
    --------
    >>> first_negative_offset([1.0], 10)  # cos turns negative past pi / 2
    2
    >>> first_negative_offset(omega(128, 1e4), 10**5)
    1707
    >>> first_negative_offset(omega(128, 5e5), 10**5)
    18438
    >>> first_negative_offset(omega(128, 1e7), 10**5) is None
    True
    """
    theta = check_array("theta", theta)
    if theta.ndim != 1 or theta.size == 0:
        raise PosKernelsError(f"theta must be a non-empty 1-d array of frequencies; got shape {theta.shape}")
    max_offset = check_int("the largest offset", max_offset, 0, MAX_SCAN, "the kernel is scanned offset by offset")
    chunk = check_int("chunk", chunk, 1, 1 << 20)
    return _first_negative_offset(theta, max_offset, chunk)


def _first_negative_offset(theta: np.ndarray, max_offset: int, chunk: int = CHUNK) -> int | None:
    """:func:`first_negative_offset` of checked arguments: ``theta`` (P,) finite, ``0 <= max_offset <= MAX_SCAN``."""
    # every cos(Delta theta_j) >= 0 while Delta |theta_j| <= pi / 2: no offset up to `safe` can be negative
    fastest = float(np.max(np.abs(theta)))
    safe = max_offset if fastest == 0.0 else min(max_offset, math.floor(math.pi / 2 / fastest))
    for first, values in _scan(theta, max_offset + 1, chunk, start=safe + 1 if safe > 0 else 0):
        negative = np.flatnonzero(values < 0)
        if negative.size:
            return int(first + negative[0])
    return None


def _scan(theta: np.ndarray, stop: int, chunk: int, start: int = 0):
    """``(first offset, kappa from there)`` over ``start..stop-1``: the first ``4 chunk`` offsets by the direct sum
    (:func:`_kernel`) in blocks that double from 256, so a kernel that turns negative ``Delta`` past ``start``
    costs at most about ``2 Delta`` offsets; the rest by the engine (:func:`_kernel_blocks`)."""
    direct = min(stop, start + 4 * chunk)
    a, width = start, 256
    while a < direct:
        b = min(a + width, direct)
        yield a, _kernel(np.arange(a, b, dtype=np.float64), theta)
        a, width = b, 2 * width
    if direct < stop:
        yield from _kernel_blocks(theta, direct, stop, chunk)


def smallest_nonnegative_base(
    d: int, length: int, low: float = 2.0, high: float = 1e12, steps_per_decade: int = 200
) -> float | None:
    """The smallest base on a geometric grid whose kernel stays nonnegative on every offset ``0..length - 1``.

    Men et al. (2024)'s lower bound on the base for a context of ``length`` tokens.  The bases that pass do
    not form an interval (a base can pass while a larger one fails), so a bisection finds the wrong answer;
    this scans the grid ``low * 10**(k / steps_per_decade)`` upward and returns the first base that passes
    (resolution: one grid step, ``10**(1/steps_per_decade) - 1``, 1.2 % by default).  None if no base up to
    ``high`` passes.

    Parameters
    ----------
    d : int
        The even head width.
    length : int
        The context: offsets ``0..length - 1`` are checked.
    low, high : float, optional
        The grid's first base and the largest looked at (default 2 and 1e12).
    steps_per_decade : int, optional
        The grid's resolution; default 200.

    Returns
    -------
    float or None
        The first grid base that passes, or None.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer, `length` not a positive integer, ``low < high`` fails or the scan
        passes the work budget.

    Examples
    --------
    >>> b = smallest_nonnegative_base(128, 1024)
    >>> round(b, -2)
    4300.0
    >>> first_negative_offset(omega(128, b), 1023) is None
    True
    """
    d = check_even_dimension(d)
    length = check_int("the context length", length, 2, MAX_SCAN + 1, "the kernel is scanned offset by offset")
    low, high = check_base(low), check_base(high)
    if not low < high:
        raise PosKernelsError(f"need low < high; got low = {low!r}, high = {high!r}")
    n = math.ceil(steps_per_decade * math.log10(high / low))
    bases = low * 10 ** (np.arange(n + 1) / steps_per_decade)  # (n + 1,) the grid, ascending
    for start in range(0, bases.size, 32):
        batch = bases[start : start + 32]  # (B,) tried together on the first offsets, where most fail
        for b in batch[_nonnegative_on(batch, d, min(length, 512))]:
            if _first_negative_offset(plane_frequencies(d, float(b)), length - 1) is None:
                return float(b)
    return None


@dataclass(frozen=True)
class BaseBounds:
    """Men et al.'s base bound as a bound is reported: two figures on one grid of bases, with its resolution.

    Attributes
    ----------
    smallest_passing : float or None
        The smallest grid base whose kernel stays nonnegative on ``0..length - 1`` (a base that passes, so the
        smallest base of all is at most this; a finer grid can find a smaller one: the passing bases have islands).
    every_base_passes_from : float or None
        The grid base past the last failing grid base up to ``checked_to``: every grid base from here to
        ``checked_to`` passes (a finer grid can find a failing base above it).
    checked_to : float
        The largest grid base checked (``span`` times the smallest passing one, or ``high``).
    steps_per_decade : int
        The grid's resolution: consecutive bases differ by ``10**(1/steps_per_decade)``.
    """

    smallest_passing: float | None
    every_base_passes_from: float | None
    checked_to: float
    steps_per_decade: int

    @property
    def step(self) -> float:
        """The relative step between grid bases, ``10**(1/steps_per_decade) - 1`` (4.7% at 50 per decade)."""
        return 10 ** (1 / self.steps_per_decade) - 1


def base_bounds(
    d: int, length: int, steps_per_decade: int = 50, low: float = 2.0, high: float = 1e12, span: float = 20.0
) -> BaseBounds:
    """The smallest passing base and the base from which every base passes, on the grid ``low * 10**(k / S)``.

    Bases are checked upward from ``low``; past the first that passes, up to ``span`` times it (at most ``high``),
    every grid base is checked, and the one after the last failure is where every checked base passes.  Both
    figures are statements about this grid (``S = steps_per_decade``); a scan at ten times the resolution holds
    them as bounds (its smallest passing base is at most the first, its last failure at least the second's
    predecessor: ``tests/test_census_context.py``).

    Parameters
    ----------
    d : int
        The even head width.
    length : int
        The context: offsets ``0..length - 1`` are checked.
    steps_per_decade : int, optional
        The grid's resolution ``S``; default 50.
    low, high : float, optional
        The grid's first base and the largest looked at (default 2 and 1e12).
    span : float, optional
        How far past the first passing base to keep checking, as a ratio; default 20.

    Returns
    -------
    BaseBounds
        The two figures, the largest base checked and the grid's resolution.

    Raises
    ------
    PosKernelsError
        If `d` is not a positive even integer, `length` not a positive integer, or a grid setting is out of range.

    Examples
    --------
    >>> r = base_bounds(32, 1024, steps_per_decade=50, low=10.0)
    >>> f"{r.smallest_passing:.4g} {r.every_base_passes_from:.4g} {r.step:.3f}"
    '6.026e+04 1.585e+05 0.047'
    """
    d = check_even_dimension(d)
    length = check_int("the context length", length, 2, MAX_SCAN + 1, "the kernel is scanned offset by offset")
    steps = check_int("steps_per_decade", steps_per_decade, 1, 10**4)
    low, high = check_base(low), check_base(high)
    if not low < high:
        raise PosKernelsError(f"need low < high; got low = {low!r}, high = {high!r}")
    span = check_real("span", span, 1)  # a span below 1 would stop before the first passing base
    n = math.ceil(steps * math.log10(high / low))
    bases = low * 10 ** (np.arange(n + 1) / steps)  # (n + 1,) the grid, ascending
    first = last_fail = None
    for start in range(0, bases.size, 32):
        batch = bases[start : start + 32]  # (B,) tried together on the first offsets, where most fail
        early = _nonnegative_on(batch, d, min(length, 512))
        for k, b in enumerate(batch):
            i = start + k
            if first is not None and b > span * bases[first]:
                break
            ok = bool(early[k]) and _first_negative_offset(plane_frequencies(d, float(b)), length - 1) is None
            if ok and first is None:
                first = i
            elif not ok and first is not None:
                last_fail = i
        else:
            continue
        break
    if first is None:
        return BaseBounds(None, None, float(bases[-1]), steps)
    top = min(float(span * bases[first]), float(bases[-1]))
    stop = bases[last_fail + 1] if last_fail is not None else bases[first]
    return BaseBounds(float(bases[first]), float(stop), float(bases[bases <= top][-1]), steps)

def _nonnegative_on(bases: np.ndarray, d: int, n: int) -> np.ndarray:
    """Which of ``bases`` (B,) keep the kernel nonnegative on offsets ``0..n-1`` (a mask (B,))."""
    if bases.size == 0:
        return np.zeros(0, dtype=bool)
    theta = bases[:, None] ** (-np.arange(0, d, 2) / d)[None, :]  # (B, d/2): omega(d, b) per base
    offsets = np.arange(n, dtype=np.float64)  # (n,)
    kernel = np.cos(offsets[None, :, None] * theta[:, None, :]).sum(axis=2)  # (B, n)
    return (kernel >= 0).all(axis=1)
