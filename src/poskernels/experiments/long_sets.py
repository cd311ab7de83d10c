"""The held-out sets far past the window: the cue task at a length, the needle task at an offset, up to 10^5 tokens.

* **Length**: the cue task (:func:`poskernels.tasks.cue.cue_batch`) at a length ``n``.
* **Distance**: the needle task (:func:`poskernels.tasks.needle.needle_batch`): one marked token ``r`` positions
  before the query, in a sequence of ``max(32, r + 1)`` tokens (the training length while the needle fits in it;
  the needle is the first token past it).

Each point draws :data:`COUNT` sequences from ``SeedSequence([TEST_SEED, task, n or r])``, seeded apart from
training and from the tournament's test sets, the same for every head; the long-context reading
(:mod:`poskernels.experiments.long_context`) reads them.
"""

from __future__ import annotations

import numpy as np

from ..errors import check_budget, check_int, check_name
from ..tasks.cue import cue_batch
from ..tasks.needle import needle_batch
from ..tasks.validate import MAX_CUE_TOKENS

__all__ = ["COUNT", "MAX_LENGTH", "TEST_SEED", "sequences"]

COUNT = 500  # sequences a point
TEST_SEED = 27_182_818  # sequences from SeedSequence([TEST_SEED, task, n or r]), apart from training and the tournament
_TASK_IDS = {"length": 0, "distance": 1}


def sequences(
    task: str, x: int, count: int = COUNT, seed: int = TEST_SEED, n_train: int = 32
) -> tuple[np.ndarray, np.ndarray]:
    """The test sequences of one point: ``(tokens uint8 (count, n), targets (count,))``.

    ``x`` is the length ``n`` (``"length"``, at least 2) or the offset ``r`` (``"distance"``, at least 1, in a
    sequence of ``max(n_train, r + 1)`` tokens: the training length while the needle fits in it); ``seed`` is the
    test stream's (default :data:`TEST_SEED`).
    Drawn in blocks so a long set never holds more than about ``2^22`` int64 tokens at once.

    Parameters
    ----------
    task : {"length", "distance"}
        The cue task at length ``x``, or the needle task at offset ``x``.
    x : int
        The length (>= 2) or the needle's offset (>= 1), at most :data:`MAX_LENGTH`.
    count : int, optional
        Sequences (default :data:`COUNT`).
    seed : int, optional
        The test stream's seed (default :data:`TEST_SEED`).
    n_train : int, optional
        The training length a needle sequence is at least as long as (default 32).

    Returns
    -------
    tokens : ndarray of uint8, shape (count, n)
        The sequences.
    targets : ndarray, shape (count,)
        The answer of each.

    Raises
    ------
    PosKernelsError
        If ``task`` is neither task, or ``x``, ``count``, ``seed`` or ``n_train`` is out of range, or the set would
        pass the token budget.

    Examples
    --------
    >>> t, y = sequences("distance", 5, 4)
    >>> t.shape, t.dtype.name, bool((t[:, 32 - 1 - 5] >= 8).all())
    ((4, 32), 'uint8', True)
    >>> sequences("distance", 5, 4, n_train=8)[0].shape  # a head trained at 8 reads its needle at length 8
    (4, 8)
    >>> sequences("length", 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: the length n (the query and at least one key) must be an integer in [2, ...got 1
    """
    task, x, count, seed = _check_point(task, x, count, seed)
    n_train = check_int("n_train", n_train, 1, MAX_LENGTH)
    rng = np.random.default_rng(np.random.SeedSequence([seed, _TASK_IDS[task], x]))
    n = x if task == "length" else max(n_train, x + 1)
    check_budget(f"the test set of {count} sequences of {n} tokens", count * n, MAX_CUE_TOKENS)  # uint8 tokens
    step = max(1, (1 << 22) // n)
    blocks = []
    for i in range(0, count, step):
        b = min(step, count - i)
        if task == "length":
            blocks.append(cue_batch(rng, b, n, dtype=np.uint8))  # the same ids as int64, 8 times fewer bytes
        else:
            blocks.append(needle_batch(rng, b, x, n))
    return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


#: Longest sequence (and farthest needle) a point reads: 2**24 tokens, about 170 times the article's longest.
MAX_LENGTH = 2**24


def _check_point(task, x, count, seed) -> tuple[str, int, int, int]:
    """One point's ``task``, ``x`` (a length >= 2, or an offset >= 1), ``count`` (>= 1) and ``seed``, else raise."""
    task = check_name("long-context task", task, _TASK_IDS)
    lo, what = (2, "length n (the query and at least one key)") if task == "length" else (1, "needle offset r")
    x = check_int(f"the {what}", x, lo, MAX_LENGTH, "a point reads count sequences that long")
    count = check_int("count (sequences a point)", count, 1, MAX_CUE_TOKENS)
    seed = check_int("the test seed", seed, 0, 2**63 - 1)
    return task, x, count, seed
