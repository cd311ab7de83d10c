"""``reproduce`` draws the figures of the finished sections while the last background section computes.

The fidelity section follows the long context in :data:`poskernels.page.SECTIONS` and computes in its turn; the early
figures must still start when the run waits on the long context (they once waited for the last section of the page,
which no longer computes in the background, and every figure was drawn at the end).
"""

from __future__ import annotations

import argparse

from poskernels import page
from poskernels.cli import reproduce


def test_waiting_on_the_last_background_section_starts_the_early_figures(monkeypatch, tmp_path):
    drawn, told = [], []

    def fake_assemble(ctx, only, include_trained, each, idle):
        for section in page.SECTIONS:
            if section.key in page.AFTER:
                told.append(section.key)
                idle(section)  # the run waits on this background section
        return ctx.numbers

    def fake_writer(ctx, out, payload):
        return []

    monkeypatch.setattr(page, "assemble", fake_assemble)
    monkeypatch.setattr(reproduce, "_early_figures", lambda numbers, ctx, out: drawn.append(sorted(numbers)))
    monkeypatch.setattr(reproduce._lab_figures, "write_figures", fake_writer)
    monkeypatch.setattr(reproduce, "_REPRODUCE_WRITERS", [fake_writer])
    ctx = page.Context(log=lambda msg: None, first_seed=0)
    args = argparse.Namespace(quiet=True, only=None, no_train=False)
    status = reproduce._reproduce_into(tmp_path, ctx, list(page.SECTIONS), args, reproduce._bar(True), 0.0)
    assert status == 0
    assert told == ["filings", "long"]
    assert len(drawn) == 1  # once, when the run waits on the long context, not on the filings before it


def test_the_last_background_section_is_followed_only_by_sections_that_read_no_head():
    last = reproduce._last_background(page.SECTIONS)
    after = page.SECTIONS[page.SECTIONS.index(last) + 1 :]
    assert last.key == "long"
    assert all(s.key not in page.AFTER for s in after)
    assert reproduce._last_background([s for s in page.SECTIONS if s.key not in page.AFTER]) is None
