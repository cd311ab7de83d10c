"""The census as text: the plane table wrapped to a width, the interpolation bound, the context lines.

:func:`render_census` prints what :func:`~poskernels.census.compute.census_all` computed (one section per layer type
when the config has several); :func:`census_lines` is its prose part alone (the lab's census view shows it).
``poskernels census`` (:mod:`poskernels.cli.census`) prints it.
"""

from __future__ import annotations

import shutil

from .context import BASE_SCAN_MAX

__all__ = ["census_lines", "render_census", "terminal_width"]


def _table(headers: list[str], rows: list[list[str]], width: int | None = None, keep: int = 1) -> str:
    """Right-aligned columns; past ``width`` characters the columns after the first ``keep`` wrap into blocks.

    >>> print(_table(["j", "a", "b"], [["0", "1.5", "2"]], width=8))
    j    a
    -  ---
    0  1.5
    <BLANKLINE>
    j  b
    -  -
    0  2
    """
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    blocks, current = [], list(range(keep))
    for i in range(keep, len(headers)):
        used = sum(widths[c] + 2 for c in current) + widths[i]
        if width is not None and len(current) > keep and used > width:
            blocks.append(current)
            current = list(range(keep))
        current.append(i)
    blocks.append(current)
    out = []
    for cols in blocks:
        lines = ["  ".join(headers[c].rjust(widths[c]) for c in cols), "  ".join("-" * widths[c] for c in cols)]
        lines += ["  ".join(r[c].rjust(widths[c]) for c in cols) for r in rows]
        out.append("\n".join(lines))
    return "\n\n".join(out)


def terminal_width() -> int:
    """The terminal's width, held within 80..120 columns (100 when it cannot be told).

    Returns
    -------
    int
        Columns.

    Examples
    --------
    >>> 80 <= terminal_width() <= 120
    True
    """
    return max(80, min(120, shutil.get_terminal_size((100, 24)).columns))


def _g(x: float | None) -> str:
    return "inf" if x is None else f"{x:.4g}"


def _planes(planes: list[int]) -> str:
    if not planes:
        return "none"
    return (
        f"{len(planes)} ({planes[0]}..{planes[-1]})"
        if planes == list(range(planes[0], planes[-1] + 1))
        else (f"{len(planes)} {planes}")
    )


def _context_lines(data: dict, names: list[str]) -> list[str]:
    """The few lines above the plane table: what the frequencies mean for the target length."""
    c, cfg, N = data["context"], data["config"], data["target_length"]
    first = c["first_negative_offset"]
    shown = ["native"] + [n for n in names if n in first]
    base, bound = c["smallest_base"], c.get("base_bound") or {}
    scanned = (
        f"on a grid of {bound['steps_per_decade']} bases per decade (steps of {100 * bound['step']:.2g}%), the "
        f"smallest passing is {base:.3g} and every grid base from {bound['every_base_passes_from']:.3g} to "
        f"{bound['checked_to']:.3g} passes (a finer grid can find smaller passing bases, and failing ones above)"
        if base is not None
        else (
            "none up to 1e12"
            if c["smallest_base_grid_per_decade"]
            else (
                f"not scanned past N = {BASE_SCAN_MAX}"
                if N > BASE_SCAN_MAX
                else f"not scanned: {c['base_not_scanned']}"
                if c.get("base_not_scanned")
                else "not scanned"
            )
        )
    )
    lm = data["logit_multiplier"]
    lines = [
        f"critical dimension (Liu et al. 2023): {c['critical_dimension']} of d = {cfg['rotary_dim']} dimensions turn "
        f"a whole circle in L; extrapolation bound T_extra = {_g(c['extrapolation_bound'])} tokens",
        "kernel sum_j cos(Delta f_j), first negative offset up to N - 1 (Men et al. 2024; none = nonnegative): "
        + ", ".join(f"{n} {first[n] if first[n] is not None else 'none'}" for n in shown),
        f"bases whose native kernel stays nonnegative on 0..N-1 (Men et al.'s bound): {scanned}; "
        f"this config's base {cfg['rope_theta']:g}",
        "planes reading angles training never produced at N (Theorem 5 (i)): "
        + ", ".join(f"{n} {_planes(c['unseen_planes'][n])}" for n in shown),
        f"logit multiplier {lm['total']:.4g} = " + " x ".join(f"{k} {v:.4g}" for k, v in lm["parts"].items()),
    ]
    if "layers_without_rope" in lm:
        nope = lm["layers_without_rope"]
        lines.append(
            f"{nope['count']} of {nope['of']} layers have no RoPE; their queries are scaled by "
            f"{nope['temperature_at_target']:.4g} at N = {N} (attention-temperature tuning)"
        )
    att = cfg.get("attention") or {}
    if att.get("layers_without_rope") and "layers_without_rope" not in lm:
        lines.append(
            f"{att['layers_without_rope']} of {att['layers']} layers have no RoPE (no_rope_layers entries 0): they "
            "read positions only through the causal mask; this census is of the other "
            f"{att['layers'] - att['layers_without_rope']}"
        )
    read = data.get("longrope_factors")
    if read:
        lines.append(
            f"LongRoPE lists: config = {read['config']} (transformers' module holds short_factor and switches to "
            f"long_factor for the whole sequence once it passes L = {read['switch_at']}); config_short = short_factor"
        )
    for name, why in data.get("not_applicable", {}).items():
        lines.append(f"map {name} not applicable: {why}")
    return lines


def _read_from(cfg: dict) -> list[str]:
    """Lines saying where the width and base came from when that is not the plain keys."""
    notes, read = [], cfg.get("read_from") or {}
    if read.get("part"):
        notes.append(f"read from the config's {read['part']} (a multimodal wrapper)")
    if read.get("width") == "qk_rope_head_dim":
        notes.append("multi-head latent attention: the rotary width is qk_rope_head_dim")
    if read.get("partial_rotation") in ("rotary_pct", "rotary_dim"):
        notes.append(f"partial rotation from {read['partial_rotation']}")
    if read.get("base") == "assumed":
        notes.append("rope_theta is absent from the config: b = 10000 assumed (transformers' common default)")
    elif read.get("base") == "transformers default":
        notes.append(f"rope_theta is absent: b = {cfg['rope_theta']:g}, the default of transformers' config class")
    if read.get("defaults"):
        by_source: dict[str, list[str]] = {}
        for key, where in read["defaults"].items():
            by_source.setdefault(where, []).append(key)
        for where, keys in by_source.items():
            notes.append(f"absent from the file, taken as the model class's ({where}): {', '.join(keys)}")
    if str(read.get("training_length", "")).startswith("max_position_embeddings / factor"):
        notes.append(
            f"training length L = max_position_embeddings / factor = {cfg['training_length']} (linear scaling "
            "without original_max_position_embeddings: the factor is read as the extension ratio)"
        )
    if read.get("proportional"):
        pr = read["proportional"]
        notes.append(
            f"proportional RoPE (p-RoPE as transformers ships it): {pr['turning_planes']} of {pr['planes']} planes "
            f"turn, at rope_theta^(-2j/head_dim) = {pr['rope_theta']:g}^(-2j/{2 * pr['planes']}), the other "
            f"{pr['planes'] - pr['turning_planes']} never turn (frequency 0); the census reads the turning planes, "
            f"base b = {pr['rope_theta']:g}^({cfg['rotary_dim']}/{2 * pr['planes']}) = {cfg['rope_theta']:.6g} over d"
        )
    if read.get("mrope_section"):
        notes.append(f"mrope_section {read['mrope_section']}: on text all three position ids coincide, as read here")
    return notes


def _short(name: str) -> str:
    return {"yarn_hf_untruncated": "yarn_hf_untr"}.get(name, name)


def _map_names(maps: dict) -> list[str]:
    names = [n for n in maps if n != "none"]
    own = [n for n in ("config", "config_short") if n in maps]  # the config's own map first, beside the planes
    return own + [n for n in names if n not in own]


def census_lines(data: dict) -> list[str]:
    """The lines above the plane table of one census: what was read, and what it means for the target length.

    Parameters
    ----------
    data : dict
        One RoPE's census (:func:`~poskernels.census.compute.census`).

    Returns
    -------
    list of str
        The header lines.

    Examples
    --------
    >>> from poskernels.census.compute import census
    >>> from poskernels.census.config import load_config
    >>> lines = census_lines(census(load_config("mistral-7b"), scan_base=False))
    >>> next(line for line in lines if line.startswith("critical dimension"))[:41]
    'critical dimension (Liu et al. 2023): 120'
    """
    cfg, maps = data["config"], data["maps"]
    return [
        f"RoPE census: {cfg['name']}"
        + (f" ({cfg['model_type']})" if cfg["model_type"] else "")
        + (f", layer type {cfg['layer_type']}" if cfg.get("layer_type") else ""),
        f"rotary width d = {cfg['rotary_dim']} (head_dim {cfg['head_dim']}, partial_rotary_factor "
        f"{cfg['partial_rotary_factor']:g}), base b = {cfg['rope_theta']:g}, "
        f"training length L = {cfg['training_length']}, "
        f"rope type {cfg['rope_type']!r}",
        f"target length N = {data['target_length']}, kappa = N / L = {data['kappa']:.4g}; "
        f"config's own map: {maps['config']['map']} at kappa = {maps['config']['kappa']:.4g}",
        *_read_from(cfg),
        *_context_lines(data, _map_names(maps)),
    ]


def render_census(data: dict, width: int | None = 100) -> str:
    """The census as text: a header, one row per plane (map columns wrapped to ``width``), the summary lines.

    Parameters
    ----------
    data : dict
        A census (:func:`~poskernels.census.compute.census`, or :func:`~poskernels.census.compute.census_all`'s
        per-layer-type form).
    width : int or None
        Columns the table is wrapped to.

    Returns
    -------
    str
        What ``poskernels census`` prints.

    Examples
    --------
    >>> from poskernels.census.compute import census
    >>> from poskernels.census.config import load_config
    >>> data = census(load_config("mistral-7b"), scan_base=False)
    >>> text = render_census(data, 100)
    >>> text.splitlines()[0], max(len(line) for line in text.splitlines()) <= 100
    ('RoPE census: mistral-7b (mistral)', True)
    """
    if "layer_types" in data:
        return "\n\n".join(f"== layer type {lt} ==\n{render_census(d, width)}" for lt, d in data["layer_types"].items())
    maps = data["maps"]
    names = _map_names(maps)
    head = [
        *census_lines(data),
        "turns = (L - 1) / lambda_j over the training offsets; turn = a whole turn completes (Theorem 5 (i));",
        "map columns: factor = inv_freq / theta (1 = unchanged, 1/kappa = interpolated); yarn_hf_untr = "
        "yarn_hf_untruncated",
        "",
    ]
    rows = [
        [str(p["plane"]), _g(p["wavelength"]), _g(p["turns"]), "yes" if p["full_turn"] else "no", _g(p["theta_sq"])]
        + [_g(p["factors"][n]) for n in names]
        for p in data["planes"]
    ]
    table = _table(["j", "lambda_j", "turns", "turn", "theta_j^2"] + [_short(n) for n in names], rows, width)
    bound = data["interpolation_bound"]
    tail = [
        "",
        "attention factor (on cos and sin; logits scale by its square): "
        + ", ".join(f"{n} {maps[n]['attention_factor']:.4g}" for n in names),
        f"interpolation bound, Theorem 5 (iv): |a - l| <= (1/2)(D - D1)(D2 - D) sum_j |h_j| theta_j^2; "
        f"constant sum_j theta_j^2 = {bound['sum_theta_sq']:.4f} (corrected) vs d/(4 ln b) = "
        f"{bound['chen_constant']:.4f} (Chen et al. 2023, published): {bound['ratio']:.3f} times too small",
        "constant after each map, sum_j inv_freq_j^2: " + ", ".join(f"{n} {bound['after_map'][n]:.4g}" for n in names),
    ]
    for key, r in data["yarn_ramps"].items():
        tail.append(
            f"YaRN ramps ({key}): reference (linear in plane index) vs article (linear in turns): largest gap in "
            f"gamma {r['max_gap']:.3f} at plane {r['plane']} (factor gap {r['factor_gap']:.3f}), "
            f"{r['planes_differing']} planes differ"
        )
    return "\n".join(_wrap(line, width) for line in head + [table] + tail)


def _wrap(line: str, width: int | None) -> str:
    """Wrap a prose line at ``width`` (tables are already wrapped by column)."""
    if width is None or len(line) <= width or "\n" in line:
        return line
    import textwrap

    return "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False))

