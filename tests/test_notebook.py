"""The companion notebook runs headless as a notebook, top to bottom, shows its figures inline, and prints the
article's numbers from the package.

The notebook is kept in jupytext's percent format (``notebooks/positional_encodings.py``).  The test converts it
with jupytext and executes it with nbclient in a fresh kernel, as Jupyter would, with the trained sections of the
article skipped (``POSKERNELS_NOTEBOOK_TRAINED=0``; the tutorial still trains its own heads) so that its work is
five short heads (counted in its cache, not timed), its trained tables and figures the shipped results'; then it
counts the image outputs: one per figure the notebook says it showed.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import jupytext
import nbclient
import pytest

from conftest import FIRST_SEED
from poskernels import page
from poskernels.model.config import preset
from poskernels.model.train import head_path
from poskernels.page.readme import REFERENCE_NUMBERS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "positional_encodings.py"
SHIPPED = json.loads(REFERENCE_NUMBERS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("notebook")
    saved = dict(os.environ)
    src = str(ROOT / "src")
    os.environ.update(
        POSKERNELS_NOTEBOOK_OUT=str(out),
        POSKERNELS_NOTEBOOK_TRAINED="0",
        PYTHONPATH=os.pathsep.join([src, *filter(None, [saved.get("PYTHONPATH")])]),
    )
    try:
        nb = jupytext.read(NOTEBOOK)
        nbclient.NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
        ).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    heads = sorted(p.name for p in (out / "cache").rglob("*.npz"))
    return nb, outputs, text, heads, out


def _tutorial_heads() -> list[str]:
    """The heads the notebook trains with its trained sections off: its own RoPE head and one of four schemes."""
    run = preset("quick", "rope")
    own = replace(run, head=replace(run.head, d=32, base=500.0))
    configs = [own] + [preset("quick", s) for s in ("nope", "sinusoidal", "rope", "alibi")]
    return sorted(head_path(Path("."), c, 0).name for c in configs)


def test_notebook_runs_in_order_training_only_its_five_short_heads(run):
    nb, outputs, _, heads, _ = run
    assert heads == _tutorial_heads()  # the work bound: five heads of the 200-step preset, nothing of the article's
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))  # top to bottom, every cell once
    assert not [o for o in outputs if o.output_type == "error"]


def test_figures_show_inline(run):
    _, outputs, text, _, out = run
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.get("data", {})]
    announced = [ln for ln in text.splitlines() if ln.startswith("figure: ")]
    assert len(images) == len(announced) >= 4  # census, kernel, trained head, Theorem 1's ruler
    for line in announced:
        assert Path(line.removeprefix("figure: ")).stat().st_size > 10_000


def test_notebook_teaches_the_api_on_the_readers_arrays(run):
    _, _, text, _, _ = run
    assert "scores unchanged by a shift of every position by 100: True" in text
    assert "torch: torch.bfloat16 (2, 4, 6, 16) | gradient (2, 4, 6, 16)" in text
    assert "d = 128, b = 500000, L = 8192, rope type 'llama3'" in text
    assert "length  128: accuracy" in text and "through YaRN" in text


def test_notebook_prints_the_articles_numbers(run):
    _, _, text, _, _ = run
    assert "<p(3), p(10)> / (d/2) = 0.737" in text  # Figure A's readout at m = 3, n = 10
    assert "(2/d) kappa_d(7)      = 0.737" in text  # the same number through Theorem 1 (i)
    assert "shift is a rotation: True" in text and "|p(m)|^2 = d/2: True" in text  # Proposition 2 (i), (iii)
    assert "positions recovered from the counter: [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]" in text  # Proposition 1 (i)
    # Article, after Theorem 5: NTK-aware factors at kappa = 4, and YaRN's
    assert "ntk   factors at kappa = 4: [1.0, 0.82, 0.673, 0.552, 0.453, 0.371, 0.305, 0.25]" in text
    assert "yarn  factors at kappa = 4: [0.349, 0.265, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]" in text


def test_notebook_prints_every_registered_section(run):
    _, _, text, _, _ = run
    assert "is not part of this installation" not in text
    for s in page.SECTIONS:  # each deterministic section's table, exactly as `reproduce` prints it
        if not s.trained:
            assert s.render(s.compute(page.Context(log=lambda m: None, first_seed=FIRST_SEED))) in text
        else:  # the build must not train: the shipped results' table, the one the docs show
            assert f"[section {s.key!r}: the shipped results of a full `poskernels reproduce`, seeds 0-9]" in text
            assert s.render(SHIPPED[s.key]) in text


def test_every_figure_is_shown_when_nothing_of_the_article_trains(run):
    # from the shipped payload: no figure skipped, each of the laboratory's static figures shown
    from poskernels.lab.figures import FIGURES

    _, _, text, _, out = run
    assert "skipped" not in text
    for name in FIGURES:
        assert f"figure: {out / name}.png" in text, name


def test_notebook_computes_at_once_and_writes_only_under_its_folder(run):
    nb, _, text, _, out = run
    first_image = next(
        i for i, cell in enumerate(nb.cells) if any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
    )
    assert first_image <= 3  # the fourth cell (the second code cell) draws a figure; the first has computed
    assert "scores unchanged" in "".join(o.get("text", "") for o in nb.cells[1].get("outputs", []))
    assert f"figures and caches go to {out}" in text
    for line in text.splitlines():
        if line.startswith("figure: "):
            assert Path(line.removeprefix("figure: ")).resolve().is_relative_to(out.resolve()), line
    assert (out / "cache").is_dir()  # the tutorial's head is cached under the notebook's folder


def test_the_census_cell_says_the_kappa_it_plots(run):
    _, _, text, _, _ = run
    assert "census at N = 131072 tokens: kappa = N / L = 16, the kappa of the plot" in text
    assert "the config's own map, llama3: kappa = its factor = 8, slowest plane's factor 0.1250" in text


def test_each_article_section_computes_in_the_open(run):
    _, _, text, _, _ = run
    assert "best bag reader at n = 32, exactly: 0.546631" in text  # Proposition 1 (ii), the article's 0.547
    assert "T5 bucket of offsets [0, 15, 16, 112, 113, 1000] : [0, 15, 16, 30, 31, 31]" in text  # from 113 on
    assert "at offset 256: d = 8192 gives 0.335 | I_b 0.335 | ruler 0.335" in text  # Theorem 1
    assert "Chen's constant d/(4 ln b) too small by, d = 16 / 128: 2.56 / 1.15" in text  # Theorem 5 (iv)
    for scheme in ("nope", "sinusoidal", "rope", "alibi"):  # the small tournament, one row per scheme
        assert any(line.startswith(scheme + " ") and line.count(".") == 5 for line in text.splitlines()), scheme
    assert "rope + PI at 256:" in text and "ALiBi, needle at offset r =  1024:" in text

