"""Page section for "Order, and how a mask leaks it": ``prop1``, the exact best bag reader (Proposition 1).

Every number comes from :mod:`poskernels.theory`; this module only chooses the grid and prints it.
"""

from __future__ import annotations

from ..model.cache import cached_by_source
from ..theory import bag_reader
from ..theory.counting import bag_reader_accuracy
from .registry import Context, Section, format_table

__all__ = ["BAG_LENGTHS", "PROP1"]

BAG_LENGTHS = (32, 64, 128, 256)  # the tournament's test lengths


# --------------------------------------------------------------------------- Proposition 1


def _prop1(ctx: Context) -> dict:
    # Proposition 1 (ii): the best reader of a bag, exact by counting; 0.15 s of every run, so cached as JSON
    # under the lengths and the bag reader's source (poskernels.theory.bag_reader)
    accuracies = cached_by_source(
        ctx.cache_dir,
        "bag-reader",
        bag_reader,
        {"what": "bag_reader_accuracy", "n": list(BAG_LENGTHS)},
        lambda: {str(n): bag_reader_accuracy(n) for n in BAG_LENGTHS},
        ctx.log,
    )
    return {"bag_reader": accuracies}


def _prop1_render(data: dict) -> str:
    rows = [["best bag reader", *(data["bag_reader"][str(n)] for n in BAG_LENGTHS)]]
    return format_table(["length n", *map(str, BAG_LENGTHS)], rows)


PROP1 = Section("prop1", "Proposition 1 — the best bag reader, exact", _prop1, _prop1_render)
