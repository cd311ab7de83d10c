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
5. the order of the maps' records (:func:`~poskernels.extension.map_registry.advised_types`).

How each map's block is written is its record's (:attr:`~poskernels.extension.map_spec.MapSpec.block`).

Each map's ``why`` names the first criterion on which it falls below the map ranked above it.
"""

from __future__ import annotations

import math

import numpy as np

from ..extension.maps import criterion_order, reach, spec_of

__all__ = ["CHANGED", "CRITERION", "block_for", "changed_planes", "criterion", "rank", "reach"]

#: Relative change of a plane's frequency counted as changed.
CHANGED = 0.01


def criterion() -> str:
    """The ranking's criterion in words, its tie-break in the order of the registered maps.

    Returns
    -------
    str
        The five steps of the ranking, as ``advise`` prints them.

    Examples
    --------
    >>> criterion().startswith("ranked by: (1) the map the weights were trained with")
    True
    """
    return (
        "ranked by: (1) the map the weights were trained with (kept when it reaches N, else rescaled); (2) fewest "
        "planes reading angles training never produced (Theorem 5 (i)); (3) fewest planes that turned a whole circle "
        "in training with their frequency moved more than 1% from the trained one; (4) the kernel nonnegative "
        f"longest (Men et al. 2024); (5) {criterion_order()}"
    )


#: The criterion for the built-in maps (:func:`criterion` reads maps registered later too).
CRITERION = criterion()


def block_for(rope_type: str, cfg, N: int) -> tuple[dict | None, int, str]:
    """The ``rope_parameters`` block for ``rope_type`` at ``N``, its ``max_position_embeddings``, and how it was made.

    Returns ``(None, 0, why)`` when the map is not advised (dynamic where it would lower
    ``max_position_embeddings``).  ``how`` is ``kept``, ``rescaled`` or ``written`` (a map the model did not ship).

    Parameters
    ----------
    rope_type : str
        A registered rope type (``"linear"``, ``"yarn"``, ...).
    cfg : RopeConfig
        The model's RoPE (:func:`poskernels.census.config.parse_config`).
    N : int
        The target length.

    Returns
    -------
    block : dict or None
        The ``rope_parameters`` to write.
    max_position_embeddings : int
        The value to write beside it.
    how : str
        ``kept``, ``rescaled`` or ``written``; why not, when ``block`` is None.

    Raises
    ------
    PosKernelsError
        If ``rope_type`` is not a registered rope type.

    Examples
    --------
    >>> from poskernels.census.config import load_config
    >>> block_for("yarn", load_config("llama-3-8b"), 32768)
    ({'rope_type': 'yarn', 'rope_theta': 500000.0, 'factor': 4.0, 'original_max_position_embeddings': 8192},
     32768, 'written')
    """
    own, spec = spec_of(cfg.rope_type), spec_of(rope_type)
    if own.alone and spec is not own:  # proportional RoPE: its own map alone
        return None, 0, own.alone.format(rope_type=rope_type)
    if spec.block is None:
        return None, 0, f"advise writes no block for rope type {rope_type!r}"
    return spec.block(spec, cfg, N)


def changed_planes(trained: np.ndarray, inv_freq: np.ndarray, turned: np.ndarray) -> list[int]:
    """Planes that turned a whole circle in training (``turned``) whose frequency moves by more than :data:`CHANGED`.

    Parameters
    ----------
    trained : ndarray, shape (P,)
        The trained frequencies.
    inv_freq : ndarray, shape (P,)
        A map's frequencies.
    turned : ndarray of bool, shape (P,)
        The planes that turned a whole circle within the training length.

    Returns
    -------
    list of int
        Those planes, moved by more than :data:`CHANGED` (relative).

    Examples
    --------
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
    "it comes later in {order}",
)


def rank(rows: dict, order: tuple) -> list[str]:
    """The advised maps best first (:data:`CRITERION`); each row gets ``rank`` and ``why`` (its place, in words).

    Parameters
    ----------
    rows : dict of str to dict
        By rope type: ``how`` (see :func:`block_for`) and ``verdicts`` (``unseen_planes``, ``planes_changed``,
        ``first_negative_offset``); updated in place.
    order : tuple of str
        The registered maps' order, the last tie-break.

    Returns
    -------
    list of str
        The rope types, best first.

    Examples
    --------
    >>> def row(moved):
    ...     return {"how": "written", "verdicts": {"unseen_planes": [], "planes_changed": moved,
    ...                                            "first_negative_offset": 100}}
    >>> rows = {"linear": row([1, 2]), "yarn": row([1])}
    >>> rank(rows, ("linear", "yarn")), rows["linear"]["rank"]
    (['yarn', 'linear'], 2)
    >>> rows["linear"]["why"].split(";")[0]
    'below yarn: more trained planes have their frequency moved (2 against 1)'
    """
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
            said = _SAID[k].format(a=a[k], b=b[k], order=criterion_order())
        row["why"] = f"below {ranked[i - 1]}: {said}; {made}; {facts}"
    return ranked
