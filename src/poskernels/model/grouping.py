"""How training jobs group: the seeds of one configuration into a *stack*, and stacks of one training stream into a
*bundle*.

A stack advances its heads with one forward/backward/Adam call per step (:mod:`poskernels.model.train_loop`); a
bundle steps its stacks in lockstep on one draw of each seed's batches, since heads of different schemes with the
same seed see the same sequences.  Neither changes a head's bits, so the grouping is free to suit the pool:
:func:`stacks` and :func:`bundles` split until every process has work.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import check_positive_int
from .config import TrainConfig
from .train_loop import stream_signature

__all__ = ["BUNDLE_SIZE", "bundles", "stacks"]


def stacks(jobs: Sequence[tuple[TrainConfig, int]], parts: int = 1) -> list[tuple[TrainConfig, list[int]]]:
    """Group ``(config, seed)`` jobs into stacks: the seeds of one configuration, in first appearance order.

    With ``parts > 1`` the stacks are split, as evenly as their sizes allow, until there are at
    least ``parts`` of them (so a pool of ``parts`` processes has work for each); stacking never
    changes a head, so the split is free to choose.

    Parameters
    ----------
    jobs : sequence of (TrainConfig, int)
        The ``(config, seed)`` pairs (a repeated pair counts once).
    parts : int
        Stacks wanted at least, where the seeds allow.

    Returns
    -------
    list of (TrainConfig, list of int)
        Each stack's configuration and seeds.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> a, b = preset("quick", "nope"), preset("quick", "rope")
    >>> [(c.head.scheme, s) for c, s in stacks([(a, 0), (b, 0), (a, 1), (a, 2)])]
    [('nope', [0, 1, 2]), ('rope', [0])]
    >>> [(c.head.scheme, s) for c, s in stacks([(a, 0), (b, 0), (a, 1), (a, 2)], parts=3)]
    [('nope', [0, 1]), ('nope', [2]), ('rope', [0])]
    """
    groups: dict[TrainConfig, list[int]] = {}
    for config, seed in jobs:
        seeds = groups.setdefault(config, [])
        if seed not in seeds:
            seeds.append(seed)
    out = [(config, seeds) for config, seeds in groups.items()]
    while len(out) < parts:
        i = max(range(len(out)), key=lambda j: len(out[j][1]), default=None)
        if i is None or len(out[i][1]) < 2:
            break
        config, seeds = out[i]
        half = (len(seeds) + 1) // 2
        out[i : i + 1] = [(config, seeds[:half]), (config, seeds[half:])]
    return out


#: Most stacks trained in lockstep on one draw (:func:`bundles`): a bundle of ``k`` draws each seed's batches once
#: where its stacks alone draw them ``k`` times, and a pool's last job is at most ``k`` stacks long.
BUNDLE_SIZE = 4


def bundles(stacks_: Sequence[tuple[TrainConfig, list[int]]], parts: int = 1,
            size: int = BUNDLE_SIZE) -> list[list[tuple[TrainConfig, list[int]]]]:  # fmt: skip
    """Group stacks that read one training stream (the same seeds, :func:`stream_signature`) into bundles of at most
    ``size``, each to train in lockstep on one draw (:func:`train_bundle`), and split them until there are at least
    ``parts`` where the stacks allow (a pool of ``parts`` processes has work for each).

    Parameters
    ----------
    stacks_ : sequence of (TrainConfig, list of int)
        Stacks, as :func:`stacks` gives them.
    parts : int
        Bundles wanted at least, where the stacks allow.
    size : int
        Most stacks in a bundle.

    Returns
    -------
    list of list of (TrainConfig, list of int)
        The bundles, each in the stacks' order; every stack in exactly one.

    Examples
    --------
    >>> from poskernels.model.config import preset
    >>> s = [(preset("quick", k), [0, 1]) for k in ("nope", "rope", "alibi")] + [(preset("quick", "t5"), [2])]
    >>> [[c.head.scheme for c, _ in b] for b in bundles(s)]  # t5 reads other seeds: a bundle of its own
    [['nope', 'rope', 'alibi'], ['t5']]
    >>> [[c.head.scheme for c, _ in b] for b in bundles(s, size=2)]
    [['nope'], ['rope', 'alibi'], ['t5']]
    >>> [[c.head.scheme for c, _ in b] for b in bundles(s, parts=4)]
    [['nope'], ['rope'], ['alibi'], ['t5']]
    """
    check_positive_int("parts", parts)
    check_positive_int("size", size)
    groups: dict[tuple, list] = {}
    for config, seeds in stacks_:
        groups.setdefault((stream_signature(config), tuple(seeds)), []).append((config, list(seeds)))
    out = []
    for members in groups.values():
        count = -(-len(members) // size)  # bundles of this stream: as even as the stacks allow
        out += [members[i * len(members) // count : (i + 1) * len(members) // count] for i in range(count)]
    while len(out) < parts:
        i = max(range(len(out)), key=lambda j: len(out[j]), default=None)
        if i is None or len(out[i]) < 2:
            break
        half = len(out[i]) // 2
        out[i : i + 1] = [out[i][:half], out[i][half:]]
    return out
