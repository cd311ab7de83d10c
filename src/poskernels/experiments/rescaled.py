"""A trained RoPE head re-read, with no further training, through the context-extension maps (Definition 5).

Each RoPE head of the tournament is also read through PI, NTK-aware and YaRN at ``kappa = n / L``
(:data:`poskernels.extension.MAPS`; the readers of :data:`RESCALED_READERS`, from
:data:`poskernels.experiments.readers.READERS`), at the lengths :data:`RESCALED_LENGTHS`:
:func:`rescaled_reading` is the reading of one map at one length, :func:`read_rescaled_hits` and
:func:`read_rescaled` one head through every map, and :func:`rescaled_table` the cells over the seeds.
"""

from __future__ import annotations

from ..encodings import SCHEMES
from ..errors import PosKernelsError
from ..model.head import Reading
from ..model.trained import TrainedHead
from ..seeds import stat_table
from .held_out import head_hits, hit_rate
from .readers import READERS

__all__ = [
    "RESCALED_LENGTHS",
    "RESCALED_READERS",
    "read_rescaled",
    "read_rescaled_hits",
    "rescaled_reading",
    "rescaled_table",
]

RESCALED_LENGTHS = (32, 64, 128, 256)  # at 32 kappa = 1: each map reads the head as trained (the lab's curves)

#: Re-readings of a trained RoPE head: reader name -> context-extension map (Definition 5), from :data:`READERS`.
RESCALED_READERS = {name: m for name, (scheme, m) in READERS.items() if scheme == "rope"}


def rescaled_reading(head: TrainedHead, name: str, n: int) -> Reading:
    """The reading of a RoPE head through the map ``name`` at ``kappa = n / L`` (at least 1).

    Parameters
    ----------
    head : TrainedHead
        A rotary head.
    name : str
        A map of :data:`poskernels.extension.MAPS` (``"pi"``, ``"ntk"``, ``"yarn"``, ...).
    n : int
        The length read.

    Returns
    -------
    Reading
        :meth:`poskernels.model.reading.Reading.through` the map at ``kappa = max(1, n / n_train)``.

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary.

    Examples
    --------
    >>> import numpy as np
    >>> from poskernels.model.config import preset
    >>> h = TrainedHead(preset("tournament", "rope"), 0, {}, np.zeros(0), "")
    >>> rescaled_reading(h, "pi", 128).inv_freq[:2].round(4).tolist()
    [0.25, 0.0791]
    >>> rescaled_reading(TrainedHead(preset("tournament", "alibi"), 0, {}, np.zeros(0), ""), "pi", 128)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: only RoPE heads can be re-read through an extension map; got 'alibi'
    """
    cfg = head.head
    if not SCHEMES[cfg.scheme].rotary:
        raise PosKernelsError(f"only RoPE heads can be re-read through an extension map; got {cfg.scheme!r}")
    return Reading.through(cfg, name, max(1.0, n / cfg.n_train))


def read_rescaled_hits(head: TrainedHead, lengths=RESCALED_LENGTHS) -> dict:
    """``{reader: {str(n): head_hits}}`` of one RoPE head read through every map of :data:`RESCALED_READERS`.

    Parameters
    ----------
    head : TrainedHead
        A RoPE head.
    lengths : iterable of int, optional
        The test lengths (default :data:`RESCALED_LENGTHS`).

    Returns
    -------
    dict
        ``reader -> {str(n): ndarray of bool, shape (2000,)}``, each map at ``kappa = n / L``
        (:func:`rescaled_reading`).

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary, or diverged in training.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> {r: sorted(by) for r, by in read_rescaled_hits(head, [64]).items()}
    {'rope': ['64'], 'rope_pi': ['64'], 'rope_ntk': ['64'], 'rope_yarn': ['64']}
    """
    return {
        reader: {str(n): head_hits(head, n, rescaled_reading(head, name, n)) for n in lengths}
        for reader, name in RESCALED_READERS.items()
    }


def read_rescaled(head: TrainedHead, lengths=RESCALED_LENGTHS) -> dict:
    """``{reader: {str(n): accuracy}}`` of one RoPE head read through every map of :data:`RESCALED_READERS`.

    Parameters
    ----------
    head : TrainedHead
        A RoPE head.
    lengths : iterable of int, optional
        The test lengths (default :data:`RESCALED_LENGTHS`).

    Returns
    -------
    dict
        ``reader -> {str(n): accuracy}``, the means of :func:`read_rescaled_hits`.

    Raises
    ------
    PosKernelsError
        If ``head`` is not rotary, or diverged in training.

    Examples
    --------
    >>> from poskernels.model import HeadConfig, TrainConfig
    >>> from poskernels.model.train import train
    >>> head = train(TrainConfig(head=HeadConfig(scheme="rope"), steps=3, batch=8), seed=0)  # 3 steps: cheap
    >>> read_rescaled(head, [64])
    {'rope': {'64': 0.1405}, 'rope_pi': {'64': 0.142}, 'rope_ntk': {'64': 0.1415}, 'rope_yarn': {'64': 0.141}}
    """
    return {r: {n: hit_rate(h) for n, h in by.items()} for r, by in read_rescaled_hits(head, lengths).items()}


def rescaled_table(readings: dict, seeds, lengths=RESCALED_LENGTHS) -> dict:
    """``accuracy[reader][n]``, ``stderr`` and ``per_seed[reader][n]`` for the RoPE heads read through each map.

    ``readings[("rope", seed)]["rescaled"]`` comes from :func:`read_rescaled`.

    Parameters
    ----------
    readings : dict
        ``("rope", seed) -> {"rescaled": {reader: {str(n): float}}, ...}`` for every seed.
    seeds : sequence of int
        The seeds of each cell.
    lengths : iterable of int, optional
        The columns (default :data:`RESCALED_LENGTHS`).

    Returns
    -------
    dict
        ``accuracy``, ``stderr`` and ``per_seed`` by reader of :data:`RESCALED_READERS` and ``str(n)``, and ``seeds``.

    Examples
    --------
    >>> readings = {("rope", s): {"rescaled": {r: {"64": acc} for r in RESCALED_READERS}}
    ...             for s, acc in ((0, 0.5), (1, 0.7))}
    >>> t = rescaled_table(readings, [0, 1], lengths=(64,))
    >>> t["accuracy"]
    {'rope': {'64': 0.6}, 'rope_pi': {'64': 0.6}, 'rope_ntk': {'64': 0.6}, 'rope_yarn': {'64': 0.6}}
    """
    per_seed = {
        reader: {str(n): [readings["rope", s]["rescaled"][reader][str(n)] for s in seeds] for n in lengths}
        for reader in RESCALED_READERS
    }
    mean, stderr = stat_table(per_seed)
    return {"accuracy": mean, "stderr": stderr, "per_seed": per_seed, "seeds": [int(s) for s in seeds]}
