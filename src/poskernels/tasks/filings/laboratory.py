"""The laboratory's filing: one held-out filing written by hand in the article's shape (the article's "one
held-out filing" of the finance case study), in neither split of the synthetic corpus
(:mod:`poskernels.tasks.filings.corpus`).  Its entity spans are found in its text, never typed.
"""

from __future__ import annotations

import re

from .corpus import Filing, Mention

__all__ = ["LABORATORY_COMPANIES", "LABORATORY_TEXT", "laboratory_filing"]

#: The laboratory's filing, written by hand in the article's shape ("Finance case study"): Marrow Freight named six
#: times, Dunmore Aerospace and Siskin Apparel once each, Fenwick Logistics at token 64 and never again, and 45
#: tokens later "a result the company called disappointing"; 209 tokens.  It is in neither split of the corpus.
LABORATORY_TEXT = (
    "Marrow Freight is a holding company whose subsidiaries haul freight across North America. In the third quarter "
    "Marrow Freight completed the acquisition of Dunmore Aerospace, which now operates as a subsidiary. Siskin "
    "Apparel, the largest customer of Marrow Freight, renewed its three-year freight contract with Marrow Freight. "
    "Marrow Freight reported revenue of 1,240 million, and Marrow Freight expects volumes to grow. Pricing pressure "
    "from Fenwick Logistics reduced margins in the regional segment. Operating expenses rose 4 percent, mainly on "
    "higher fuel and wages. Cash provided by operating activities was 212 million, and capital expenditures were 95 "
    "million. Liquidity decreased during the quarter, a result the company called disappointing. The company repaid "
    "60 million of borrowings under its revolving credit facility and remains in compliance with all covenants. "
    "Backlog at the end of the quarter was 410 million. The company expects capital expenditures of approximately "
    "120 million next year, weighted to the first half. The effective tax rate was 24 percent. Management believes "
    "that existing cash and available credit will be sufficient to fund operations for at least the next twelve "
    "months. Raw material costs were volatile, and the company passed most increases through to customers."
)


#: The companies the laboratory's filing names, in order of first appearance.
LABORATORY_COMPANIES = ("Marrow Freight", "Dunmore Aerospace", "Siskin Apparel", "Fenwick Logistics")


def laboratory_filing() -> Filing:
    """The held-out filing of the laboratory (the article's "one held-out filing").

    Its entity spans are found by searching the text for the four names, so no offset is typed by hand.

    Returns
    -------
    Filing
        The filing, its mentions found in its text.

    Examples
    --------
    >>> f = laboratory_filing()
    >>> [m.company for m in f.mentions].count("Marrow Freight"), f.mentions[-1].company
    (6, 'Fenwick Logistics')
    """
    pattern = re.compile("|".join(re.escape(name) for name in LABORATORY_COMPANIES))
    mentions = tuple(Mention(m.start(), m.end(), m.group()) for m in pattern.finditer(LABORATORY_TEXT))
    return Filing(doc_id="laboratory", kind="mdna", text=LABORATORY_TEXT, mentions=mentions)
