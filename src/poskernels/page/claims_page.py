"""The README's and the documentation's tables of trained claims, from the shipped calibration.

``claims_calibration.json`` is written by ``examples/claim_calibration.py`` from seed blocks the tests do not run:
for every claim of :data:`poskernels.claims.CLAIMS` its threshold, size (how often a fresh block of ten seeds fails
it while it holds) and false-pass rate (how often it passes when false).  :func:`unresolved_markdown` lists the
claims ten seeds do not resolve (false pass above 5%), :func:`claims_markdown` every claim.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["CALIBRATION", "calibration", "claims_markdown", "unresolved_markdown"]

#: The calibration the README's claim tables are rendered from.
CALIBRATION = Path(__file__).parent / "claims_calibration.json"


def calibration(path=CALIBRATION) -> dict | None:
    """The shipped calibration, or None before one is made.

    Parameters
    ----------
    path : str or path-like
        The calibration file (default: :data:`CALIBRATION`).

    Returns
    -------
    dict or None
        ``claims`` (a row per claim: ``id``, ``threshold``, ``size``, ``false_pass``, ``resolved``, ...) and the
        pool's figures; None when the file does not exist.

    Examples
    --------
    >>> sorted(calibration()["claims"][0])[:4]
    ['false_pass', 'finding', 'id', 'kind']
    >>> calibration("no-such-calibration.json") is None
    True
    """
    path = Path(path)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _md(text: str) -> str:
    """A table cell: a ``|`` of the text (an absolute value) escaped."""
    return text.replace("|", "\\|")


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.2f}%"


def _stat(x) -> str:
    return "—" if x is None else f"{x:.4g}"


def _summary(cal: dict) -> str:
    rows = cal["claims"]
    measured = [r for r in rows if r["size"] is not None]
    weak = [r for r in measured if not r["resolved"]]
    blocks = ", ".join(str(f) for f in cal.get("first_seeds", []))
    return (
        f"{len(rows)} claims; thresholds set and measured on {cal['seeds']} pooled seeds (blocks starting {blocks}),"
        f" none of them a seed the tests run (0–9, 1000–1009); {cal['draws']} blocks of ten drawn for each rate."
        f" Joint size (a fresh block fails at least one asserted claim): {_pct(cal['joint_size'])}. Claims not"
        f" resolved by ten seeds (false pass above {_pct(cal['max_false_pass'])}"
        + (f" or size above {_pct(cal['max_size'])}" if "max_size" in cal else "")
        + f"): {len(weak)} of {len(measured)} measured"
        f" ({len(rows) - len(measured)} not measured: the pool's numbers.json lacks what they read)."
        + (
            f" The rows of {sum('kept_from' in r for r in rows)} claims the pool's blocks do not read are kept from an"
            f" earlier pool of {cal.get('kept_seeds')} seeds (blocks starting"
            f" {', '.join(str(f) for f in cal['kept_from_seeds'])}), marked *(earlier pool)*."
            if any("kept_from" in r for r in rows)
            else ""
        )
    )


def _unresolved(row: dict, max_false_pass: float) -> str:
    """Why a claim that is not a finding is not asserted: '' where it is."""
    if row["resolved"] is None:
        return "not measured on the pool"
    if row["resolved"]:
        return ""
    if row["false_pass"] > max_false_pass:
        return "not resolved by ten seeds: passes when false"
    return "not resolved by ten seeds: fails fresh blocks"


def unresolved_markdown(numbers: dict | None = None, path=CALIBRATION) -> str:
    """The findings: every claim reported and not asserted (README region ``claims-unresolved``).

    Those ten seeds do not resolve (false pass above 5%), those the pool could not measure, and those marked a
    finding (``Claim.finding``: a paper's claim that does not hold here, or a reading reported beside the paper's),
    each with its rates and why.

    Parameters
    ----------
    numbers : dict, optional
        Unused: a region's renderer takes a ``numbers.json`` dict; this one reads the calibration.
    path : str or path-like
        The calibration file (default: :data:`CALIBRATION`).

    Returns
    -------
    str
        Markdown: a summary, then a table row per finding; ``- no calibration shipped`` without the file.

    Examples
    --------
    >>> unresolved_markdown().splitlines()[2]
    '| finding (not asserted) | statistic and threshold | on the pooled seeds | size | passes when false | why |'
    >>> unresolved_markdown(path="no-such-calibration.json")
    '- no calibration shipped'
    """
    cal = calibration(path)
    if cal is None:
        return "- no calibration shipped"
    lines = [
        _summary(cal),
        "",
        "| finding (not asserted) | statistic and threshold | on the pooled seeds | size | passes when false | why |",
        "|---|---|---|---|---|---|",
    ]
    for r in cal["claims"]:
        why = r.get("finding") or _unresolved(r, cal.get("max_false_pass", 0.05))
        if why:
            lines.append(
                f"| `{r['id']}` | {_md(r['threshold'])} | {_stat(r.get('pooled'))} | {_pct(r['size'])} |"
                f" {_pct(r['false_pass'])} | {_md(why)} |"
            )
    return "\n".join(lines)


def claims_markdown(numbers: dict | None = None, path=CALIBRATION) -> str:
    """Every claim with its threshold, null, size and power (the documentation's region ``claims-all``).

    Parameters
    ----------
    numbers : dict, optional
        Unused: a region's renderer takes a ``numbers.json`` dict; this one reads the calibration.
    path : str or path-like
        The calibration file (default: :data:`CALIBRATION`).

    Returns
    -------
    str
        Markdown: a summary, then a table row per claim; ``- no calibration shipped`` without the file.

    Examples
    --------
    >>> claims_markdown().splitlines()[2]
    '| claim | statistic and threshold | null | size | power | resolved by ten seeds |'
    """
    cal = calibration(path)
    if cal is None:
        return "- no calibration shipped"
    lines = [
        _summary(cal),
        "",
        "| claim | statistic and threshold | null | size | power | resolved by ten seeds |",
        "|---|---|---|---|---|---|",
    ]
    for r in cal["claims"]:
        word = {True: "yes", False: "**no**", None: "not measured"}[r["resolved"]]
        word += " (a finding: reported, not asserted)" if r.get("finding") else ""
        word += " *(earlier pool)*" if "kept_from" in r else ""
        rates = f"{_pct(r['size'])} | {_pct(r['power'])}"
        lines.append(f"| `{r['id']}` | {_md(r['threshold'])} | {r['null']} | {rates} | {word} |")
    return "\n".join(lines)
