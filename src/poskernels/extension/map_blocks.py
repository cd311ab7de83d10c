"""The blocks ``poskernels advise`` writes for a map: a record's :attr:`~poskernels.extension.map_spec.MapSpec.block`.

Each writer is ``block(spec, cfg, N) -> (rope_parameters or None, max_position_embeddings, how)``: the
``rope_parameters`` block that reads the model's heads through the map ``spec`` at length ``N`` (None: it cannot,
and ``how`` says why), the ``max_position_embeddings`` to write beside it, and ``how`` the block was made:
``"kept"`` (the shipped map reaches ``N``), ``"rescaled"`` (the shipped map at a new factor) or ``"written"`` (a
map the model did not ship).  :func:`factor_block` serves the maps set by a factor (linear, YaRN, Llama 3,
LongRoPE), :func:`dynamic_block` dynamic NTK, :func:`proportional_block` proportional RoPE.  The config is a
:class:`~poskernels.census.config.RopeConfig` read duck-typed: this module imports nothing above the math floor.

>>> from poskernels.extension.map_registry import spec_of
>>> spec_of("linear").block is factor_block, spec_of("dynamic").block is dynamic_block
(True, True)
"""

from __future__ import annotations

from typing import Any  # cfg: a RopeConfig, read duck-typed (this floor imports nothing above it)

from .map_registry import reach
from .map_spec import MapSpec

__all__ = ["dynamic_block", "factor_block", "proportional_block"]


def _base_block(spec: MapSpec, cfg: Any) -> dict:
    block = {"rope_type": spec.rope_type, "rope_theta": cfg.base}
    if cfg.partial_rotary_factor != 1.0 and cfg.read_from.get("width") != "qk_rope_head_dim":
        block["partial_rotary_factor"] = cfg.partial_rotary_factor
    if cfg.read_from.get("mrope_section"):
        block["mrope_section"] = cfg.read_from["mrope_section"]
    if spec.rope_type == cfg.rope_type:  # the shipped map: its own options
        for o in spec.options:
            if o.carried and cfg.scaling.get(o.name) is not None:
                v = cfg.scaling[o.name]
                block[o.name] = list(v) if o.kind == "factors" else v
    return block


def factor_block(spec: MapSpec, cfg: Any, N: int) -> tuple[dict | None, int, str]:
    """The block of a map set by a factor: factor ``N / L``, or the shipped map kept where it reaches ``N``.

    ``L`` is written as ``original_max_position_embeddings`` (transformers' linear reads it from the factor where
    ``max_position_embeddings`` becomes ``N``: then none is written) and ``max_position_embeddings`` is never
    lowered.  A map the model did not ship gets its options' ``written`` values; the shipped one keeps its own.
    LongRoPE's factor is ``max_position_embeddings / L``, so no factor is written for it.

    Parameters
    ----------
    spec : MapSpec
        The record of the map to write (its ``rope_type`` and options).
    cfg : RopeConfig
        The model's parsed config (:func:`poskernels.census.config.parse_config`), read duck-typed.
    N : int
        The sequence length the block is to read at.

    Returns
    -------
    rope_parameters : dict
        The block, with ``rope_type``, ``rope_theta``, ``factor`` and ``original_max_position_embeddings``.
    max_position_embeddings : int
        The longer of the config's and ``N``.
    how : str
        ``"kept"`` (the shipped map reaches ``N``: its factor kept), ``"rescaled"`` or ``"written"``.

    Raises
    ------
    PosKernelsError
        The config's rope type is not registered (:func:`~poskernels.extension.map_registry.reach`).

    Examples
    --------
    >>> from poskernels.extension.map_registry import spec_of
    >>> from poskernels.census.config import parse_config
    >>> shape = {"head_dim": 128, "max_position_embeddings": 4096}
    >>> yarn = {"rope_type": "yarn", "rope_theta": 1e4, "factor": 8.0, "original_max_position_embeddings": 4096}
    >>> block, n, how = factor_block(spec_of("yarn"), parse_config(shape | {"rope_parameters": yarn}), 65536)
    >>> block, n, how  # the shipped 8 L reaches 32768 only: rescaled  # doctest: +NORMALIZE_WHITESPACE
    ({'rope_type': 'yarn', 'rope_theta': 10000.0, 'factor': 16.0, 'original_max_position_embeddings': 4096},
     65536, 'rescaled')
    >>> block, n, how = factor_block(spec_of("llama3"), parse_config(shape | {"rope_theta": 1e4}), 16384)
    >>> block["factor"], block["low_freq_factor"], block["high_freq_factor"], n, how
    (4.0, 1.0, 4.0, 16384, 'written')
    """
    L, own = cfg.training_length, spec.rope_type == cfg.rope_type
    keep_max = max(cfg.max_position_embeddings, N)  # never lowered
    block = _base_block(spec, cfg)
    how = ("kept" if reach(cfg) >= N else "rescaled") if own else "written"
    block |= {"factor": cfg.factor if how == "kept" else N / L, "original_max_position_embeddings": L}
    if spec.length_from_factor and keep_max == N:  # transformers' linear reads no length: L = N / factor, as read
        del block["original_max_position_embeddings"]
    if not own:
        block |= {o.name: o.written for o in spec.options if o.written is not None}
    if spec.factor_from_lengths:
        del block["factor"]  # LongRoPE's factor is max_position_embeddings / original
    return block, keep_max, how


def dynamic_block(spec: MapSpec, cfg: Any, N: int) -> tuple[dict | None, int, str]:
    """The block of dynamic NTK, which scales only past ``max_position_embeddings``: that must stay ``L``.

    A config whose ``max_position_embeddings`` exceeds its training length ``L`` is not advised dynamic NTK (it
    would have to be lowered to ``L``); otherwise the block has factor ``N / L`` (the shipped map's own factor
    where the model ships it) and ``max_position_embeddings`` stays ``L``.

    Parameters
    ----------
    spec : MapSpec
        The record of dynamic NTK (or of a map written the same way).
    cfg : RopeConfig
        The model's parsed config (:func:`poskernels.census.config.parse_config`), read duck-typed.
    N : int
        The sequence length the block is to read at.

    Returns
    -------
    rope_parameters : dict or None
        The block (``rope_type``, ``rope_theta``, ``factor``), or None where it is not advised.
    max_position_embeddings : int
        ``L`` (0 where not advised).
    how : str
        ``"kept"`` or ``"written"``, or why it is not advised.

    Examples
    --------
    >>> from poskernels.extension.map_registry import spec_of
    >>> from poskernels.census.config import parse_config
    >>> plain = parse_config({"head_dim": 128, "max_position_embeddings": 4096, "rope_theta": 1e4})
    >>> dynamic_block(spec_of("dynamic"), plain, 16384)
    ({'rope_type': 'dynamic', 'rope_theta': 10000.0, 'factor': 4.0}, 4096, 'written')
    >>> yarn = {"rope_type": "yarn", "rope_theta": 1e4, "factor": 8.0, "original_max_position_embeddings": 4096}
    >>> cfg = parse_config({"head_dim": 128, "max_position_embeddings": 32768, "rope_parameters": yarn})
    >>> block, n, how = dynamic_block(spec_of("dynamic"), cfg, 65536)
    >>> block, n
    (None, 0)
    >>> print(how)  # doctest: +NORMALIZE_WHITESPACE
    transformers' dynamic NTK scales only past max_position_embeddings, so it would lower
    max_position_embeddings from 32768 to L = 4096
    """
    L, own = cfg.training_length, spec.rope_type == cfg.rope_type
    if cfg.max_position_embeddings > L:
        return (
            None,
            0,
            (
                f"transformers' dynamic NTK scales only past max_position_embeddings, so it would lower "
                f"max_position_embeddings from {cfg.max_position_embeddings} to L = {L}"
            ),
        )
    block = _base_block(spec, cfg) | {"factor": cfg.factor if own else N / L}
    return block, L, "kept" if own else "written"


def proportional_block(spec: MapSpec, cfg: Any, N: int) -> tuple[dict | None, int, str]:
    """The block of proportional RoPE: its one option, ``factor`` (the turning planes' frequencies divided by it).

    The block keeps the config's own ``rope_theta`` and ``partial_rotary_factor`` (the turning planes' base and
    share, as transformers reads them) and writes ``L`` as ``original_max_position_embeddings``, which the census
    reads ``L`` from; the factor is the shipped one where it reaches ``N``, else ``N / L``.

    Parameters
    ----------
    spec : MapSpec
        The record of proportional RoPE.
    cfg : RopeConfig
        The model's parsed config (:func:`poskernels.census.config.parse_config`), read duck-typed; a proportional
        RoPE config (its ``read_from["proportional"]``).
    N : int
        The sequence length the block is to read at.

    Returns
    -------
    rope_parameters : dict
        The block: ``rope_type``, ``rope_theta``, ``partial_rotary_factor``, ``factor`` and
        ``original_max_position_embeddings``.
    max_position_embeddings : int
        The longer of the config's and ``N``.
    how : str
        ``"kept"`` or ``"rescaled"``.

    Raises
    ------
    PosKernelsError
        The config's rope type is not registered (:func:`~poskernels.extension.map_registry.reach`).

    Examples
    --------
    >>> from poskernels.extension.map_registry import spec_of
    >>> from poskernels.census.config import parse_config
    >>> p = {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25, "factor": 1.0}
    >>> cfg = parse_config({"head_dim": 512, "max_position_embeddings": 131072, "rope_parameters": p})
    >>> block, n, how = proportional_block(spec_of("proportional"), cfg, 4 * 131072)
    >>> block["rope_theta"], block["partial_rotary_factor"], block["factor"], n, how
    (1000000.0, 0.25, 4.0, 524288, 'rescaled')
    """
    how = "kept" if reach(cfg) >= N else "rescaled"
    block = {
        "rope_type": spec.rope_type,
        "rope_theta": cfg.read_from["proportional"]["rope_theta"],
        "partial_rotary_factor": cfg.partial_rotary_factor,
        "factor": cfg.factor if how == "kept" else N / cfg.training_length,
        "original_max_position_embeddings": cfg.training_length,  # what the census reads L from
    }
    return block, max(cfg.max_position_embeddings, N), how
