"""How ``poskernels advise`` writes each block and ranks the maps: from the map the weights were trained with.

A model that ships an extension (DeepSeek-V3's YaRN x40, Llama 3.1's llama3 x8, Phi-3's LongRoPE) was trained with
its frequencies: the advice starts from that map.  It is **kept** as shipped when it already reaches the target
(:func:`reach`: the longer of ``factor L`` and the declared ``max_position_embeddings``; dynamic NTK follows
the sequence length and always does) and **rescaled** otherwise
(the same type and options, ``factor = N / L``).  No block lowers the model's ``max_position_embeddings``:
transformers' dynamic NTK scales only past ``max_position_embeddings``, so where that is above ``L`` dynamic is not
advised, with the reason.

The maps are ranked by :data:`CRITERION`, each criterion a census fact of the block at ``N``:

1. the map the weights were trained with (kept or rescaled) first;
2. fewest planes reading angles training never produced (Theorem 5 (i));
3. fewest planes that turned a whole circle in training whose frequency the map moves by more than 1% from the
   trained frequencies (:data:`CHANGED`): the weights' scores inside the window stay as learned;
4. the kernel ``sum_j cos(Delta f_j)`` nonnegative longest (Men et al. 2024);
5. the order of :data:`~poskernels.advise_cli.ADVISED_TYPES`.

Each map's ``why`` names the first criterion on which it falls below the map ranked above it.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["CHANGED", "CRITERION", "block_for", "changed_planes", "rank", "reach"]

#: Relative change of a plane's frequency counted as changed.
CHANGED = 0.01

CRITERION = (
    "ranked by: (1) the map the weights were trained with (kept when it reaches N, else rescaled); (2) fewest planes "
    "reading angles training never produced (Theorem 5 (i)); (3) fewest planes that turned a whole circle in "
    "training with their frequency moved more than 1% from the trained one; (4) the kernel nonnegative longest "
    "(Men et al. 2024); (5) the order yarn, llama3, longrope, linear, dynamic"
)

_OPTIONS = {  # the options a shipped map carries over when it is rescaled
    "yarn": ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"),
    "llama3": ("low_freq_factor", "high_freq_factor"),
    "longrope": ("short_factor", "long_factor", "attention_factor"),
}


def reach(cfg) -> float:
    """How far the shipped map reaches: the longer of ``factor L`` and ``max_position_embeddings`` (the length the
    config declares for it; LongRoPE's lists were searched for it); dynamic NTK follows the length: any ``N``."""
    if cfg.rope_type == "dynamic":
        return math.inf
    if cfg.rope_type == "default":
        return cfg.training_length
    return max(cfg.factor * cfg.training_length, cfg.max_position_embeddings)


def block_for(rope_type: str, cfg, N: int) -> tuple[dict | None, int, str]:
    """The ``rope_parameters`` block for ``rope_type`` at ``N``, its ``max_position_embeddings``, and how it was made.

    Returns ``(None, 0, why)`` when the map is not advised (dynamic where it would lower
    ``max_position_embeddings``).  ``how`` is ``kept``, ``rescaled`` or ``written`` (a map the model did not ship).
    """
    L, own = cfg.training_length, cfg.rope_type
    keep_max = max(cfg.max_position_embeddings, N)  # never lowered
    if own == "proportional" or rope_type == "proportional":
        return _proportional(rope_type, cfg, N, keep_max)
    block = {"rope_type": rope_type, "rope_theta": cfg.base}
    if cfg.partial_rotary_factor != 1.0 and cfg.read_from.get("width") != "qk_rope_head_dim":
        block["partial_rotary_factor"] = cfg.partial_rotary_factor
    if cfg.read_from.get("mrope_section"):
        block["mrope_section"] = cfg.read_from["mrope_section"]
    if rope_type == own:  # the shipped map: its own options
        block |= {k: cfg.scaling[k] for k in _OPTIONS.get(own, ()) if cfg.scaling.get(k) is not None}
    if rope_type == "dynamic":  # transformers' dynamic NTK scales past max_position_embeddings: it must stay L
        if cfg.max_position_embeddings > L:
            return (
                None,
                0,
                (
                    f"transformers' dynamic NTK scales only past max_position_embeddings, so it would lower "
                    f"max_position_embeddings from {cfg.max_position_embeddings} to L = {L}"
                ),
            )
        factor = cfg.factor if own == "dynamic" else N / L
        return block | {"factor": factor}, L, "kept" if own == "dynamic" else "written"
    how = "written"
    if rope_type == own:
        how = "kept" if reach(cfg) >= N else "rescaled"
    factor = cfg.factor if how == "kept" else N / L
    block |= {"factor": factor, "original_max_position_embeddings": L}
    if rope_type == "linear" and keep_max == N:  # transformers' linear reads no length: L = N / factor, as read
        del block["original_max_position_embeddings"]
    if rope_type == "llama3" and own != "llama3":
        block |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
    if rope_type == "longrope":
        block |= {k: list(cfg.scaling[k]) for k in ("short_factor", "long_factor")}
        del block["factor"]  # LongRoPE's factor is max_position_embeddings / original
    return block, keep_max, how


def _proportional(rope_type: str, cfg, N: int, keep_max: int) -> tuple[dict | None, int, str]:
    """Proportional RoPE takes one option, ``factor`` (the turning planes divided by it): its own map alone."""
    if rope_type != "proportional":
        return (
            None,
            0,
            (
                "the model's proportional RoPE pairs coordinates j and j + head_dim / 2 over every plane (the ones "
                f"that do not turn included); a {rope_type} block rotates a partial width, pairing them otherwise"
            ),
        )
    how = "kept" if reach(cfg) >= N else "rescaled"
    block = {
        "rope_type": "proportional",
        "rope_theta": cfg.read_from["proportional"]["rope_theta"],
        "partial_rotary_factor": cfg.partial_rotary_factor,
        "factor": cfg.factor if how == "kept" else N / cfg.training_length,
        "original_max_position_embeddings": cfg.training_length,  # what the census reads L from
    }
    return block, keep_max, how


def changed_planes(trained: np.ndarray, inv_freq: np.ndarray, turned: np.ndarray) -> list[int]:
    """Planes that turned a whole circle in training (``turned``) whose frequency moves by more than :data:`CHANGED`.

    >>> changed_planes(np.array([1.0, 0.1]), np.array([1.0, 0.05]), np.array([True, True]))
    [1]
    """
    moved = np.abs(np.asarray(inv_freq) / trained - 1) > CHANGED  # (P,)
    return np.flatnonzero(moved & turned).tolist()


def _key(row: dict) -> tuple:
    v = row["verdicts"]
    first = v["first_negative_offset"]
    return (row["how"] == "written", len(v["unseen_planes"]), len(v["planes_changed"]), -(first or math.inf))


_SAID = (
    "it is not the map the weights were trained with",
    "more planes read angles training never produced ({a} against {b})",
    "more trained planes have their frequency moved ({a} against {b})",
    "its kernel turns negative sooner (at {a}, against {b})",
    "it comes later in the order yarn, llama3, longrope, linear, dynamic",
)


def rank(rows: dict, order: tuple) -> list[str]:
    """The advised maps best first (:data:`CRITERION`); each row gets ``rank`` and ``why`` (its place, in words)."""
    pos = {t: i for i, t in enumerate(order)}
    ranked = sorted(rows, key=lambda t: (*_key(rows[t]), pos[t]))
    for i, t in enumerate(ranked):
        row, v = rows[t], rows[t]["verdicts"]
        facts = (
            f"{len(v['unseen_planes'])} planes reading unseen angles, {len(v['planes_changed'])} trained planes moved, "
            f"kernel first negative at "
            f"{v['first_negative_offset'] if v['first_negative_offset'] is not None else 'none up to N - 1'}"
        )
        made = {
            "kept": "the map the weights were trained with, kept: it reaches N",
            "rescaled": "the map the weights were trained with, rescaled to reach N",
            "written": "a map the model did not ship",
        }[row["how"]]
        row["rank"] = i + 1
        if i == 0:
            row["why"] = f"first: {made}; {facts}"
            continue
        above = rows[ranked[i - 1]]
        a, b = (*_key(row), pos[t]), (*_key(above), pos[ranked[i - 1]])
        k = next(j for j in range(5) if a[j] != b[j])
        shown = [None, None, None, (row, above), None][k]
        if k == 3:
            fa, fb = (r["verdicts"]["first_negative_offset"] for r in shown)
            said = _SAID[3].format(a=fa, b=fb if fb is not None else "none up to N - 1")
        else:
            said = _SAID[k].format(a=a[k], b=b[k])
        row["why"] = f"below {ranked[i - 1]}: {said}; {made}; {facts}"
    return ranked
