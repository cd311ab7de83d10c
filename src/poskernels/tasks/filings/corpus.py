"""The synthetic filings corpus: MD&A sections, earnings-call excerpts and 8-K reports with company mentions.

A filing names a parent company, its subsidiaries and its competitors in *bursts*, with long gaps between
them in which it only refers back to "the company".  That is the article's finance case study ("Finance case
study: which company was named last?"): the cue task of the tournament on documents shaped like filings.

Everything is generated from a :class:`numpy.random.Generator`, so a seed fixes the corpus bit for bit; nothing
is downloaded.  A filing is plain text plus its entity spans (character offsets), the same shape a user's own
annotated documents take in JSONL (:mod:`poskernels.tasks.filings.jsonl`).

How a filing is drawn (``FilingPlan`` holds the numbers):

1. a kind (MD&A, earnings call, 8-K), a parent, 1 to 3 subsidiaries and 1 or 2 competitors, all distinct names
   (at most 6 companies, within :data:`MAX_COMPANIES`);
2. a target length of about ``length_mean`` tokens and two bursts: the first opens the filing and names the
   parent, the second starts at a uniformly drawn token offset;
3. each burst is 1 to 3 sentences that name companies, a sentence naming only the parent drawn three times as
   often as one naming others; the text between bursts is filler sentences that name none, added until the next
   burst's offset (or the target length) is reached.

The defaults give the article's shape: a median of 196.5 tokens and 8 mentions, and 41% far queries.

Examples
--------
>>> import numpy as np
>>> f = generate_filing(np.random.default_rng(0), "doc-0")
>>> f.kind, len(f.mentions) >= 2, f.mentions[0].company == f.parent
('8k', True, True)
>>> m = f.mentions[0]
>>> f.text[m.start:m.end] == m.company
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...errors import PosKernelsError, check_int
from . import text as T

__all__ = [
    "MAX_COMPANIES",
    "WORD_RE",
    "Filing",
    "FilingPlan",
    "FilingsCorpus",
    "Mention",
    "generate_filing",
    "synthetic_corpus",
]

#: Most filings of one generated corpus (``n_train`` or ``n_test``).
MAX_FILINGS = 100_000

#: Companies per filing are capped so their first-appearance labels fit the 8 symbols of the cue task.
MAX_COMPANIES = 8

#: Longest filing (tokens) and most bursts a plan may ask for: every loop that fills a filing is bounded by them
#: (the default plan's filings are 100 to 330 tokens in 2 bursts).
MAX_FILING_TOKENS = 2**16
MAX_BURSTS = 64

#: A word: letters and digits, with inner ``. , ' & -`` kept ("8-K", "1,250", "99.1"); or one punctuation mark.
WORD_RE = re.compile(r"[A-Za-z0-9]+(?:[.,'\u2019&-][A-Za-z0-9]+)*|[^\sA-Za-z0-9]")

_SLOT_RE = re.compile(r"\{(\w+)\}")
_COMPANY_SLOTS = {"P": "parent", "S": "subsidiary", "C": "competitor"}


@dataclass(frozen=True)
class Mention:
    """One entity span: ``text[start:end]`` names ``company`` (character offsets, end exclusive)."""

    start: int
    end: int
    company: str


@dataclass(frozen=True)
class Filing:
    """A document: its text and its company mentions, in order of position.

    Attributes
    ----------
    doc_id : str
        Identifier, unique within a corpus.
    kind : str
        ``"mdna"``, ``"earnings_call"``, ``"8k"``, or a user's own label.
    text : str
        The document.
    mentions : tuple of Mention
        Sorted, non-overlapping entity spans.
    """

    doc_id: str
    kind: str
    text: str
    mentions: tuple[Mention, ...]

    @property
    def parent(self) -> str | None:
        """The first company named (the filer, in the generated corpus)."""
        return self.mentions[0].company if self.mentions else None


@dataclass(frozen=True)
class FilingPlan:
    """The numbers that shape a generated filing (defaults reach the article's corpus shape).

    Attributes
    ----------
    subsidiaries, competitors : tuple of int
        Their numbers, drawn uniformly from ``range(*subsidiaries)`` and ``range(*competitors)``: 1 to 3 and 1 to
        2, so a filing casts at most 6 companies and the labels training rarely sees (6, 7) never occur.
    length_mean, length_sd : float
        Target length in tokens, drawn normal and clipped to ``[length_min, length_max]``.
    bursts : tuple of int
        Number of bursts, drawn uniformly from ``range(*bursts)``.
    burst_sentences : tuple of float
        Probability that a burst has 1, 2, ... mention sentences.
    burst_window : tuple of float
        Later bursts start at offsets drawn uniformly in this fraction of the target length.
    parent_weight : float
        Weight of a mention sentence that names only the parent, against 1 for the others: filings name their
        filer most, so the filer is most often the company named last.
    """

    subsidiaries: tuple[int, int] = (1, 4)
    competitors: tuple[int, int] = (1, 3)
    length_mean: float = 186.0
    length_sd: float = 45.0
    length_min: int = 100
    length_max: int = 330
    bursts: tuple[int, int] = (2, 3)
    burst_sentences: tuple[float, ...] = (0.1, 0.4, 0.5)
    burst_window: tuple[float, float] = (0.1, 0.9)
    parent_weight: float = 3.0

    def __post_init__(self):
        def bad(field: str, accepted: str):
            raise PosKernelsError(f"FilingPlan.{field} must be {accepted}; got {getattr(self, field)!r}")

        for field, low in (("subsidiaries", 0), ("competitors", 0), ("bursts", 1)):
            lo, hi = getattr(self, field)
            if not (isinstance(lo, int) and isinstance(hi, int) and low <= lo < hi):
                bad(field, f"a range (lo, hi) of integers with {low} <= lo < hi")
        if self.subsidiaries[1] + self.competitors[1] - 1 > MAX_COMPANIES:  # 1 parent + the largest draws
            bad("competitors", f"small enough that at most {MAX_COMPANIES} companies are cast")
        if not (0 < self.length_min <= self.length_max) or not self.length_sd >= 0:
            bad("length_min", "positive and at most length_max, with length_sd >= 0")
        if not (isinstance(self.length_max, int) and self.length_max <= MAX_FILING_TOKENS):  # the filler loop's bound
            bad("length_max", f"a whole number of tokens, at most {MAX_FILING_TOKENS}")
        if not (np.isfinite(self.length_mean) and np.isfinite(self.length_sd)):
            bad("length_mean", "a finite mean with a finite length_sd")
        if self.bursts[1] > MAX_BURSTS:
            bad("bursts", f"a range (lo, hi) with hi at most {MAX_BURSTS}")
        p = np.asarray(self.burst_sentences, dtype=float)
        if p.ndim != 1 or p.size == 0 or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
            bad("burst_sentences", "probabilities of 1, 2, ... sentences, non-negative, summing to 1")
        lo, hi = self.burst_window
        if not 0.0 <= lo <= hi <= 1.0:
            bad("burst_window", "fractions 0 <= lo <= hi <= 1 of the target length")
        if not self.parent_weight > 0:
            bad("parent_weight", "a positive weight")


@dataclass(frozen=True)
class FilingsCorpus:
    """Training and held-out filings."""

    train: tuple[Filing, ...]
    test: tuple[Filing, ...]


def _company_names(rng: np.random.Generator, k: int) -> list[str]:
    """``k`` distinct multi-word names with distinct first words."""
    firsts = rng.choice(len(T.FIRST_WORDS), size=k, replace=False)
    names = []
    for i in firsts:
        name = f"{T.FIRST_WORDS[i]} {T.INDUSTRY_WORDS[rng.integers(len(T.INDUSTRY_WORDS))]}"
        if rng.random() < 0.2:
            name += f" {T.SUFFIXES[rng.integers(len(T.SUFFIXES))]}"
        names.append(name)
    return names


def _plain_value(rng: np.random.Generator, slot: str) -> str:
    if slot in ("pct", "pct2"):
        return str(int(rng.integers(1, 40)))
    if slot in ("amount", "amount2"):
        return f"{int(rng.integers(5, 2500)):,}"
    if slot == "year":
        return str(int(rng.integers(2015, 2026)))
    if slot == "day":
        return str(int(rng.integers(1, 29)))
    if slot == "count":
        return str(int(rng.integers(1, 12)))
    key = slot.rstrip("2")
    values = T.SLOT_VALUES[key]
    return values[rng.integers(len(values))]


def _fill(template: str, rng: np.random.Generator, roles: dict[str, list[str]]) -> tuple[str, list[tuple]]:
    """Fill one template: returns the sentence and its spans ``(start, end, company)`` relative to it."""
    out, spans, used, pos = [], [], set(), 0
    for match in _SLOT_RE.finditer(template):
        out.append(template[pos : match.start()])
        slot = match.group(1)
        if slot in _COMPANY_SLOTS:
            pool = [c for c in roles[_COMPANY_SLOTS[slot]] if c not in used]
            company = pool[rng.integers(len(pool))]
            used.add(company)
            start = sum(len(p) for p in out)
            spans.append((start, start + len(company), company))
            out.append(company)
        else:
            out.append(_plain_value(rng, slot))
        pos = match.end()
    out.append(template[pos:])
    return "".join(out), spans


@lru_cache(maxsize=1024)
def _slots(template: str) -> tuple[str, ...]:
    """A template's slots in order (``"{P} acquired {S}"`` -> ``("P", "S")``), parsed once per process."""
    return tuple(_SLOT_RE.findall(template))


def _eligible(templates: tuple[str, ...], roles: dict[str, list[str]]) -> list[str]:
    """Templates whose company slots the filing's cast can fill with distinct companies."""
    keep = []
    for t in templates:
        slots = _slots(t)
        if all(slots.count(s) <= len(roles[_COMPANY_SLOTS[s]]) for s in _COMPANY_SLOTS if s in slots):
            keep.append(t)
    return keep


def _names_only_parent(template: str) -> bool:
    """Whether every company slot of a template is the parent's."""
    return {s for s in _slots(template) if s in _COMPANY_SLOTS} == {"P"}


def _n_tokens(sentence: str, spans: list[tuple]) -> int:
    """Tokens of a sentence: one per entity span, plus the words outside the spans."""
    n, pos = len(spans), 0
    for start, end, _ in spans:
        n += len(WORD_RE.findall(sentence[pos:start]))
        pos = end
    return n + len(WORD_RE.findall(sentence[pos:]))


def generate_filing(rng: np.random.Generator, doc_id: str, kind: str | None = None, plan: FilingPlan | None = None):
    """Draw one synthetic filing.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    doc_id : str
        Identifier stored in the filing.
    kind : str, optional
        ``"mdna"``, ``"earnings_call"`` or ``"8k"``; drawn uniformly if omitted.
    plan : FilingPlan, optional
        Length and burst structure (defaults: the article's corpus shape).

    Returns
    -------
    Filing
        Its text and its company mentions (character spans).

    Raises
    ------
    PosKernelsError
        If `kind` is not one of the three.

    Examples
    --------
    >>> f = generate_filing(np.random.default_rng(0), "d0", "8k")
    >>> f.doc_id, f.kind, len(f.mentions)
    ('d0', '8k', 6)
    """
    plan = plan or FilingPlan()
    if kind is None:
        kind = T.KINDS[rng.integers(len(T.KINDS))]
    elif kind not in T.KINDS:
        raise PosKernelsError(f"unknown filing kind {kind!r}; accepted: {', '.join(T.KINDS)}")
    n_sub, n_comp = int(rng.integers(*plan.subsidiaries)), int(rng.integers(*plan.competitors))
    names = _company_names(rng, 1 + n_sub + n_comp)
    roles = {"parent": names[:1], "subsidiary": names[1 : 1 + n_sub], "competitor": names[1 + n_sub :]}
    target = int(np.clip(round(rng.normal(plan.length_mean, plan.length_sd)), plan.length_min, plan.length_max))
    n_bursts = int(rng.integers(*plan.bursts))
    starts = np.sort(rng.uniform(*plan.burst_window, size=n_bursts - 1) * target)  # (n_bursts - 1,) token offsets
    mention_t, filler_t = _eligible(T.MENTION[kind], roles), T.FILLER[kind]
    weight = np.array([plan.parent_weight if _names_only_parent(t) else 1.0 for t in mention_t])
    # (len(mention_t),) sentences ending on the parent are drawn more often

    sentences: list[tuple[str, list[tuple]]] = []
    n_tok = 0

    def emit(template: str) -> None:
        nonlocal n_tok
        sentence, spans = _fill(template, rng, roles)
        sentences.append((sentence, spans))
        n_tok += _n_tokens(sentence, spans)

    fillers: list[str] = []  # a shuffled deck, so a filing repeats a filler only after using them all

    def fill_until(limit: float) -> None:
        while n_tok < limit:
            if not fillers:
                fillers.extend(filler_t[i] for i in rng.permutation(len(filler_t)))
            emit(fillers.pop())

    emit(T.OPENING[kind][rng.integers(len(T.OPENING[kind]))])
    for burst in range(n_bursts):
        if burst > 0:
            fill_until(starts[burst - 1])
        n_sent = 1 + int(rng.choice(len(plan.burst_sentences), p=plan.burst_sentences))
        for _ in range(n_sent):
            pick = rng.choice(len(mention_t), p=weight / weight.sum())
            weight[pick] = 0.0 if (weight > 0).sum() > 1 else weight[pick]  # no mention sentence twice
            emit(mention_t[pick])
    fill_until(target)

    text, mentions, offset = [], [], 0
    for sentence, spans in sentences:
        mentions.extend(Mention(offset + s, offset + e, c) for s, e, c in spans)
        text.append(sentence)
        offset += len(sentence) + 1
    return Filing(doc_id=doc_id, kind=kind, text=" ".join(text), mentions=tuple(mentions))


def synthetic_corpus(seed: int = 0, n_train: int = 300, n_test: int = 100, plan: FilingPlan | None = None):
    """The corpus of the case study: ``n_train`` training and ``n_test`` held-out filings from one seed.

    Parameters
    ----------
    seed : int
        Seeds one :class:`numpy.random.Generator`; training filings are drawn first, then the test filings.
    n_train, n_test : int
        Sizes (the article: 300 and 100).
    plan : FilingPlan, optional

    Returns
    -------
    FilingsCorpus

    Examples
    --------
    >>> c = synthetic_corpus(seed=0, n_train=3, n_test=2)
    >>> [f.doc_id for f in c.train + c.test]
    ['train-0000', 'train-0001', 'train-0002', 'test-0000', 'test-0001']
    >>> c == synthetic_corpus(seed=0, n_train=3, n_test=2)
    True
    """
    for name, count in (("n_train", n_train), ("n_test", n_test)):  # a filing takes ~0.4 ms: 10**5 in under a minute
        check_int(name, count, 1, MAX_FILINGS, "filings of one generated corpus, each held in memory")
    check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    plan = plan or FilingPlan()  # checked once, not once a filing
    train = tuple(generate_filing(rng, f"train-{i:04d}", plan=plan) for i in range(n_train))
    test = tuple(generate_filing(rng, f"test-{i:04d}", plan=plan) for i in range(n_test))
    return FilingsCorpus(train=train, test=test)
