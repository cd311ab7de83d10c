"""The words of the synthetic filings: company names and sentence templates for three kinds of document.

Pure data, no logic.  :mod:`poskernels.tasks.filings.corpus` draws from it.

Slots in a template: ``{P}`` the parent (the filer), ``{S}`` a subsidiary, ``{C}`` a competitor; these become
entity spans.  The other slots (``{pct}``, ``{amount}``, ``{period}``, ...) are filled with plain words and
numbers.  A *mention* template names at least one company; a *filler* template names none and often refers back
to "the company", which is the case study's point: between bursts of names the filing only says "the company".

Examples
--------
>>> from poskernels.tasks.filings.text import KINDS, MENTION, FILLER
>>> KINDS
('mdna', 'earnings_call', '8k')
>>> all(len(MENTION[k]) >= 8 and len(FILLER[k]) >= 12 for k in KINDS)
True
"""

from __future__ import annotations

__all__ = ["FILLER", "FIRST_WORDS", "INDUSTRY_WORDS", "KINDS", "MENTION", "OPENING", "SLOT_VALUES", "SUFFIXES"]

#: The three kinds of document, as the article names them: MD&A sections, earnings-call excerpts, 8-K reports.
KINDS: tuple[str, ...] = ("mdna", "earnings_call", "8k")

#: First words of company names (surnames and places); none is an English word a filing would otherwise use.
FIRST_WORDS: tuple[str, ...] = (
    "Marrow", "Dunmore", "Siskin", "Fenwick", "Halloway", "Brackett", "Corwin", "Ashgrove", "Tellam", "Whitcombe",
    "Pellham", "Granger", "Kestrel", "Norrland", "Ostrander", "Quillon", "Ravensworth", "Stanmore", "Thornbury",
    "Vexley", "Wendover", "Yarrow", "Alder", "Birchfield", "Calloway", "Delmont", "Everly", "Fairhaven", "Glenrock",
    "Harwick", "Ingram", "Jessop", "Kilbride", "Lyndon", "Merriman", "Northcote", "Orrin", "Penrose", "Redfern",
    "Sable", "Tamworth", "Umber", "Varga", "Westerly", "Ardent", "Bellmont", "Carrick", "Drayton",
)  # fmt: skip

#: Second words: the industry.
INDUSTRY_WORDS: tuple[str, ...] = (
    "Freight", "Aerospace", "Apparel", "Logistics", "Holdings", "Foods", "Energy", "Pharmaceuticals",
    "Semiconductor", "Capital", "Minerals", "Chemicals", "Retail", "Health", "Networks", "Software", "Materials",
    "Marine", "Motors", "Textiles", "Timber", "Water", "Brewing", "Industries", "Biosciences", "Instruments",
)  # fmt: skip

#: An optional third word, so some names run to three words ("Kestrel Marine Services").
SUFFIXES: tuple[str, ...] = ("Group", "Partners", "Systems", "International", "Services")

#: Values of the plain slots.  Numbers are drawn separately (see ``corpus._fill``).
SLOT_VALUES: dict[str, tuple[str, ...]] = {
    "period": ("third quarter", "fourth quarter", "first quarter", "second quarter", "fiscal year", "first half"),
    "prior": ("prior year", "same quarter last year", "prior quarter", "previous fiscal year"),
    "segment": ("industrial", "consumer", "international", "services", "transportation", "specialty", "wholesale"),
    "direction": ("increased", "decreased", "declined", "rose", "improved"),
    "month": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October"),
    "officer": ("Chief Executive Officer", "Chief Financial Officer", "Chief Operating Officer", "Treasurer"),
}

#: Sentences that open a document of each kind (the first one names the parent).
OPENING: dict[str, tuple[str, ...]] = {
    "mdna": (
        "{P} is a holding company whose subsidiaries operate in the {segment} and {segment2} markets.",
        "The following discussion of the financial condition of {P} should be read with its consolidated statements.",
        "{P} reported net revenue of {amount} million for the {period}, compared with {amount2} million for the "
        "{prior}.",
    ),
    "earnings_call": (
        "Operator: Good morning, and welcome to the {P} {period} earnings conference call.",
        "Operator: Welcome to the {P} results call for the {period}. All lines are in a listen-only mode.",
    ),
    "8k": (
        "Item 2.02 Results of Operations and Financial Condition. On {month} {day}, {P} issued a press release "
        "announcing its results for the {period}.",
        "Item 1.01 Entry into a Material Definitive Agreement. On {month} {day}, {P} entered into a credit agreement "
        "with a group of lenders.",
    ),
}

#: Sentences that name companies.
MENTION: dict[str, tuple[str, ...]] = {
    "mdna": (
        "{P} reported segment revenue of {amount} million in the {segment} segment.",
        "During the {period}, {P} completed the acquisition of {S}, which now operates as a wholly owned subsidiary.",
        "{S}, a subsidiary of {P}, contributed {amount} million of revenue.",
        "Pricing pressure from {C} reduced margins in the {segment} segment.",
        "Competition from {C} and {C} intensified as new capacity came online.",
        "{S} renewed its supply agreement with {C} on similar terms.",
        "Management of {P} believes that {C} will continue to compete on price.",
        "{C} announced a plant closure, which {P} expects to benefit its volumes.",
        "Revenue at {S} {direction} {pct} percent, while {P} as a whole grew {pct2} percent.",
        "{P} guarantees certain obligations of {S} under its revolving credit facility.",
        "{S} and {S}, both subsidiaries of {P}, share a distribution network with {P}.",
        "{P} competes with {C} and {C}, and {P} holds the largest share.",
        "Sales by {S} to {C} fell, and {P} offset the decline.",
        "{P} reported revenue of {amount} million, and {P} expects volumes to grow.",
        "{P} repurchased {count} million of its shares during the {period}.",
        "At {P}, orders {direction} {pct} percent in the {segment} segment.",
        "{P} opened two distribution centers, and management of {P} expects them to lower costs.",
        "{P} amended its credit facility to extend the maturity to {year}.",
        "Net income at {P} was {amount} million.",
    ),
    "earnings_call": (
        "{officer}: Thank you, and good morning. {P} delivered revenue of {amount} million this quarter.",
        "Analyst: How should we think about pricing from {C} in the {segment} business?",
        "{officer}: The integration of {S} is ahead of plan, and {P} now expects synergies of {amount} million.",
        "{officer}: We continue to see {C} bidding aggressively, but {P} has held its share.",
        "Analyst: Could you give us an update on {S} and its contract with {C}?",
        "{officer}: {S} grew orders {pct} percent, and we remain confident in the outlook for {P}.",
        "Analyst: Is {C} still the main competitor you meet in {segment} bids?",
        "{officer}: At {P}, free cash flow was {amount} million for the quarter.",
        "{officer}: {S} and {S} both beat plan, and {P} raised guidance.",
        "Analyst: You mentioned {C}. Does {P} see {C} as a threat to {P}?",
        "{officer}: {P} won the contract over {C}, and {S} will deliver it for {P}.",
        "{officer}: {P} had a strong quarter, and {P} is raising its outlook for the year.",
        "Analyst: Does {P} still plan to buy back shares this year?",
        "{officer}: Revenue at {P} grew {pct} percent, ahead of our plan.",
        "{officer}: Margins at {P} improved for the third straight quarter.",
        "Analyst: How much debt does {P} want to carry at the end of {year}?",
        "{officer}: {P} ended the quarter with {amount} million of cash, and {P} has no maturities until {year}.",
    ),
    "8k": (
        "On {month} {day}, {P} entered into a definitive agreement to acquire {S} for {amount} million in cash.",
        "{P} announced that {S} had been awarded a contract of approximately {amount} million.",
        "{P} and {C} agreed to settle all pending patent litigation between them.",
        "A copy of the press release issued by {P} is furnished as Exhibit 99.1.",
        "{S}, a wholly owned subsidiary of {P}, sold its {segment} assets to {C}.",
        "The board of directors of {P} appointed a new {officer}, effective {month} {day}.",
        "{C} filed a complaint against {S} alleging breach of a supply agreement.",
        "{P} completed the sale of its interest in {S} to {C}.",
        "{P} and its subsidiaries {S} and {S} are parties to the agreement with {P} lenders.",
        "{S} will merge into {P}, and {P} will assume the notes of {S}.",
        "{C} and {C} each received notice that {P} terminated its supply contracts.",
        "The board of directors of {P} declared a quarterly dividend payable on {month} {day}.",
        "{P} will report results for the {period} on {month} {day}.",
        "On {month} {day}, {P} redeemed all of its outstanding senior notes.",
        "{P} issued a press release announcing the transaction, and {P} filed it as Exhibit 99.1.",
        "The registrant, {P}, has elected to furnish this information.",
        "{P} expects the transaction to add to its earnings in the first full year.",
    ),
}

#: Sentences that name no company; many refer back to "the company".
FILLER: dict[str, tuple[str, ...]] = {
    "mdna": (
        "Revenue {direction} {pct} percent compared with the {prior}, driven by volume and pricing.",
        "The company expects capital expenditures of approximately {amount} million in fiscal {year}.",
        "Operating expenses {direction} {pct} percent, primarily as a result of lower headcount.",
        "Liquidity decreased during the quarter, a result the company called disappointing.",
        "Cash provided by operating activities was {amount} million.",
        "The company believes that its existing cash and available credit will be sufficient to fund operations for "
        "at least the next twelve months.",
        "Gross margin was {pct} percent, compared with {pct2} percent a year earlier.",
        "Selling, general and administrative expenses rose to {amount} million.",
        "Interest expense declined because the company repaid {amount} million of borrowings.",
        "Foreign currency movements reduced reported revenue by approximately {pct} percent.",
        "The effective tax rate was {pct} percent for the {period}.",
        "Backlog at the end of the {period} was {amount} million.",
        "The company remains in compliance with all covenants under its credit agreement.",
        "Inventory levels {direction} as the company reduced safety stock.",
        "Management uses adjusted operating income to evaluate the performance of the business.",
        "Raw material costs were volatile, and the company passed most increases through to customers.",
        "Depreciation and amortization {direction} to {amount} million.",
        "The company recorded a restructuring charge of {amount} million related to facility consolidation.",
        "Pension expense is sensitive to the discount rate, which the company reviews each year.",
        "No customer accounted for more than {pct} percent of consolidated revenue.",
        "The company paid dividends of {amount} million during the {period}.",
        "Seasonal demand makes the second half stronger than the first.",
        "Goodwill was tested for impairment, and no impairment was recorded.",
        "Accounts receivable {direction} because collections slowed in the {segment} business.",
    ),
    "earnings_call": (
        "{officer}: Turning to the balance sheet, we ended the quarter with {amount} million in cash.",
        "Operator: Our next question comes from the line of an analyst. Please go ahead.",
        "Analyst: Thanks for taking my question. Can you talk about margins in the second half?",
        "{officer}: Sure. Gross margin was {pct} percent, up from {pct2} percent a year ago.",
        "{officer}: We expect the company to generate revenue growth of {pct} to {pct2} percent next year.",
        "Analyst: And how much of that is price versus volume?",
        "{officer}: Roughly two thirds volume and one third price, and the mix should hold.",
        "{officer}: Liquidity decreased, a result the company called disappointing, but it remains ample.",
        "Operator: This concludes the question and answer session.",
        "{officer}: Capital spending will be about {amount} million, weighted to the first half.",
        "Analyst: Great, thank you, and congratulations on the quarter.",
        "{officer}: We repurchased {count} million shares and the company will keep buying back stock.",
        "{officer}: Working capital {direction} by {amount} million on lower receivables.",
        "Analyst: Can you quantify the headwind from freight costs?",
        "{officer}: Demand in the {segment} business was softer than we expected in the {period}.",
        "Analyst: On capital allocation, is the priority still debt reduction?",
        "{officer}: Yes. The company wants leverage below two times by the end of {year}.",
        "{officer}: Our order book {direction} {pct} percent, and cancellations stayed low.",
        "Operator: Thank you. Our next question is a follow-up.",
        "Analyst: Can you walk us through the tax rate for next year?",
        "{officer}: We expect an effective rate near {pct} percent, excluding discrete items.",
        "{officer}: Before we take questions, a reminder that these remarks include forward-looking statements.",
    ),
    "8k": (
        "Item 9.01 Financial Statements and Exhibits.",
        "The information in this report shall not be deemed filed for purposes of Section 18 of the Exchange Act.",
        "Pursuant to the requirements of the Securities Exchange Act of 1934, the registrant has duly caused this "
        "report to be signed on its behalf.",
        "The company expects to file the agreement as an exhibit to its next quarterly report.",
        "The transaction is subject to customary closing conditions, including regulatory approval.",
        "Under the agreement, the company may borrow up to {amount} million on a revolving basis.",
        "Borrowings bear interest at a floating rate plus a margin of {pct} percent.",
        "This report contains forward-looking statements that involve risks and uncertainties.",
        "Actual results could differ materially from those the company currently anticipates.",
        "The company does not undertake to update any forward-looking statement.",
        "Exhibit 104 Cover Page Interactive Data File, embedded within the inline document.",
        "The purchase price is subject to adjustment for working capital at closing.",
        "The company intends to fund the payment with cash on hand and borrowings.",
        "Item 5.02 Departure of Directors or Certain Officers.",
        "Item 8.01 Other Events.",
        "The agreement contains customary representations, warranties and covenants.",
        "The facility matures in {year} and may be extended twice by one year.",
        "The foregoing description of the agreement is qualified in its entirety by the full text.",
        "A termination fee of {amount} million is payable in certain circumstances.",
        "The press release also reported that revenue {direction} {pct} percent.",
        "The company will hold a conference call to discuss the results on {month} {day}.",
    ),
}
