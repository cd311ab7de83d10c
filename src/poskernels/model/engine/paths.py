"""The stack's score paths, one table: the first path that takes a score computes its softmax.

Three ways to the same weights, by what the score holds, each a forward beside its backward in its own module:

* :class:`~poskernels.model.engine.content_path.ContentPath` (no position, ALiBi, T5, Shaw, Kerple, FIRE): one
  weighted count per token;
* :class:`~poskernels.model.engine.rotary_path.RotaryPath` (a head that turns, nothing added): one gather per key
  from the turned table;
* :class:`~poskernels.model.engine.token_path.TokenPath` (an added code, a score shift, a turn with a bias): every
  key's own weight;

and :class:`~poskernels.model.engine.token_path.ExactPath`, the token path with every score itself, for a model
whose row sum underflowed.  A path is a class with ``name``, ``takes(terms)``, ``mass(c, table, ptable, shift)``
(the ``(M, B, V)`` unnormalized mass on each token), ``read_out(c, Z, logits, W_O)`` (its share of the logits, after
the normalization, in place), ``backward(c, dlogits, s, dEO)`` (``(dtable, dptable, dPO)`` from ``dL/dlogits``, the
softmax's mean ``s = dlogits . logits`` and ``dEO = C^T dlogits``; ``dL/dC = dlogits EO^T`` where it needs it) and
``attention(c)``.

>>> choose_path(ScoreTerms(exact=False, shifted=False, coded=False, rotary=True, positional=False)).name
'rotary'
>>> choose_path(ScoreTerms(exact=False, shifted=False, coded=False, rotary=True, positional=True)).name
'token'
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from .content_path import ContentPath
from .rotary_path import RotaryPath
from .token_path import ExactPath, TokenPath

__all__ = ["PATHS", "ScoreTerms", "choose_path"]


class ScoreTerms(NamedTuple):
    """What a stack's score holds, as the paths read it."""

    exact: bool  #: the exact pass of a model whose rows underflowed
    shifted: bool  #: a score shift is added
    coded: bool  #: the head adds a code to its input
    rotary: bool  #: the head turns its queries and keys
    positional: bool  #: the score has a position term (the code's share, a bias)


#: The score paths, in the order they are offered a score: the first that takes it computes it.
PATHS = (ExactPath, ContentPath, RotaryPath, TokenPath)


@lru_cache(maxsize=32)
def choose_path(terms: ScoreTerms):
    """The first path of :data:`PATHS` that takes a score holding ``terms`` (the token path takes any).

    Parameters
    ----------
    terms : ScoreTerms
        What the score holds.

    Returns
    -------
    type
        The path's class (its ``name``: ``"exact"``, ``"content"``, ``"rotary"`` or ``"token"``).

    Examples
    --------
    >>> choose_path(ScoreTerms(exact=False, shifted=False, coded=False, rotary=False, positional=True)).name
    'content'
    >>> choose_path(ScoreTerms(exact=True, shifted=False, coded=False, rotary=True, positional=False)).name
    'exact'
    """
    return next(path for path in PATHS if path.takes(terms))
