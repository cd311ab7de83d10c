"""The :class:`RopeConfig` record (a model's RoPE as read from its config) and the extension it asks for at a target
length (:func:`config_extension`); :mod:`~poskernels.census.config.parse` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ...encodings import omega
from ...errors import PosKernelsError
from ...extension import Extension, extend
from ...extension.maps import spec_of

__all__ = ["RopeConfig", "config_extension"]


@dataclass(frozen=True)
class RopeConfig:
    """The RoPE part of a model config.

    Attributes
    ----------
    name : str
        Bundled name or file path.
    head_dim : int
    rotary_dim : int
        ``d``: the width RoPE rotates, ``int(head_dim * partial_rotary_factor)``, even.
    partial_rotary_factor : float
    base : float
        ``b = rope_theta``.
    max_position_embeddings : int
    training_length : int
        ``L``, the length the frequencies were trained at.
    rope_type : str
        Canonical type, a key of :data:`ROPE_TYPES` other than ``su``.
    scaling : dict
        The scaling dict as read (JSON-ready).
    model_type : str or None
    source : str or None
        The bundled file's ``_source`` note.
    layer_type : str or None
        The layer type whose RoPE this is, when the config sets one per layer type.
    read_from : dict
        Which key gave the width, the partial rotation and the base (``"assumed"`` for a base the file
        lacks), and ``part`` (``"text_config"``) or ``mrope_section`` when they apply.
    """

    name: str
    head_dim: int
    rotary_dim: int
    partial_rotary_factor: float
    base: float
    max_position_embeddings: int
    training_length: int
    rope_type: str
    scaling: dict = field(repr=False)
    model_type: str | None = None
    source: str | None = None
    layer_type: str | None = None
    read_from: dict = field(default_factory=dict, repr=False, compare=False)
    attention: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def theta(self) -> np.ndarray:
        """Trained frequencies ``b**(-2j/d)``, shape ``(d/2,)``: computed (and `d`, `b` checked) once, read-only."""
        theta = omega(self.rotary_dim, self.base)
        theta.flags.writeable = False
        return theta

    @property
    def factor(self) -> float:
        """The config's extension factor (LongRoPE: ``max_position_embeddings / L`` unless given; 1 if none)."""
        if spec_of(self.rope_type).factor_from_lengths and "factor" not in self.scaling:
            return self.max_position_embeddings / self.training_length
        return float(self.scaling.get("factor", 1.0))

    def default_target_length(self) -> int:
        """The length the config extends to, ``max(max_position_embeddings, factor L)``; ``4 L`` for plain RoPE.

        A factor whose ``factor L`` passes ``2**53`` (``factor: 1e308``) is refused, naming the key.
        """
        spec = spec_of(self.rope_type)
        if spec.plain or (spec.plain_at_unit_factor and self.factor == 1):
            return 4 * self.training_length
        extended = self.factor * self.training_length
        if not extended <= 2**53:  # also NaN
            raise PosKernelsError(
                f"config key 'factor' = {self.scaling.get('factor', self.factor)!r} gives the extended length "
                f"factor * L = {extended:.3g} (L = {self.training_length}), past 2**53; the factor must keep it "
                "within 2**53, or give --target-length"
            )
        return max(self.max_position_embeddings, round(extended))

    def map_options(self, name: str) -> dict:
        """Keyword options the config supplies for the registry map ``name`` (empty unless it is the config's own)."""
        spec = spec_of(self.rope_type)
        if name not in (spec.map, *(m for _, _, m in spec.variants)):
            return {}
        keys = [o.name for o in spec.options if o.passed]
        return {k: self.scaling[k] for k in keys if self.scaling.get(k) is not None}

    def summary(self) -> dict:
        """What was read, JSON-ready."""
        return {
            "name": self.name,
            "model_type": self.model_type,
            "head_dim": self.head_dim,
            "partial_rotary_factor": self.partial_rotary_factor,
            "rotary_dim": self.rotary_dim,
            "rope_theta": self.base,
            "max_position_embeddings": self.max_position_embeddings,
            "training_length": self.training_length,
            "rope_type": self.rope_type,
            "rope_scaling": self.scaling,
            "source": self.source,
            "layer_type": self.layer_type,
            "read_from": self.read_from,
            "attention": self.attention,
        }


def config_extension(cfg: RopeConfig, target_length: int) -> tuple[Extension, float, int]:
    """The extension the config itself asks for, read at ``target_length``.

    Parameters
    ----------
    cfg : RopeConfig
        A parsed config (:func:`parse_config`).
    target_length : int
        The context length the extension is read at.

    Returns
    -------
    extension : Extension
        The map's frequencies and attention factor (:func:`poskernels.extension.extend`).
    kappa : float
        The config's factor for the static maps (linear, YaRN, Llama 3); for the maps that follow the sequence
        length, the ratio of ``target_length`` to their reference length (dynamic NTK against
        ``max_position_embeddings``, LongRoPE's switch against ``L``).
    L : int
        That reference length.

    Examples
    --------
    >>> from poskernels.census.config import load_config
    >>> e, kappa, L = config_extension(load_config("qwen2.5-7b-yarn"), 131072)
    >>> e.name, kappa, L, round(e.attention_factor, 4)
    ('yarn_hf', 4.0, 32768, 1.1386)
    """
    spec = spec_of(cfg.rope_type)
    L = cfg.training_length
    if spec.plain:
        kappa = 1.0
    elif spec.follows is not None:  # dynamic NTK against max_position_embeddings, LongRoPE's switch against L
        if spec.follows == "max_position_embeddings":
            L = cfg.max_position_embeddings
        kappa = max(target_length, L) / L
    else:  # the config's factor (proportional: transformers divides the turning planes by it, PI at it)
        kappa = cfg.factor
    name = spec.variant(cfg.scaling)
    options = cfg.map_options(name)
    if spec.factor_from_lengths:
        options["factor"] = cfg.factor
    return extend(name, cfg.theta, kappa, L, **options), kappa, L
