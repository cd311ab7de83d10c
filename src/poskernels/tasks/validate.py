"""Checks at the tasks' public edges: a sampler's sizes and probabilities, refused before anything is drawn."""

from __future__ import annotations

from ..errors import PosKernelsError, check_budget, check_positive_int, check_real

__all__ = ["MAX_CUE_TOKENS", "check_cue_sizes"]

#: Tokens of one cue batch, ``batch x n``: 2**28 (2 GiB of int64), room for long test sets read in one draw.
MAX_CUE_TOKENS = 2**28


def check_cue_sizes(batch, n, mark_prob) -> tuple[int, int, float]:
    """The cue sampler's ``batch``, ``n`` (``>= 2``; ``batch x n`` at most :data:`MAX_CUE_TOKENS`) and ``mark_prob``.

    Parameters
    ----------
    batch : int
        Sequences of the batch.
    n : int
        Length of each sequence, query included.
    mark_prob : float
        Chance that a content token is marked, in ``(0, 1]``.

    Returns
    -------
    tuple of (int, int, float)
        ``(batch, n, mark_prob)`` as checked.

    Raises
    ------
    PosKernelsError
        If a size is not a positive integer, ``n < 2``, the batch is too large or ``mark_prob`` lies outside
        ``(0, 1]``.

    Examples
    --------
    >>> check_cue_sizes(128, 32, 0.1)
    (128, 32, 0.1)
    >>> check_cue_sizes(10**6, 10**6, 10**400)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: a cue batch of 1000000 x 1000000 tokens would hold ...
    """
    batch, n = check_positive_int("batch", batch), check_positive_int("n", n)
    if n < 2:
        raise PosKernelsError(f"n must be >= 2 (at least one content token and the query); got {n}")
    check_budget(f"a cue batch of {batch} x {n} tokens", batch * n, MAX_CUE_TOKENS)
    mark_prob = check_real("mark_prob", mark_prob, 0, 1, open_lo=True)  # 10**400 or NaN: refused, no OverflowError
    return batch, n, mark_prob
