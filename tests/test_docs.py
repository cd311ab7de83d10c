"""The documentation builds, offline, with no warning, and every link in it and in the README resolves.

``make docs`` runs ``sphinx-build -W --keep-going -n``; this test runs the same build into a temporary folder
(so ``make test`` fails when the docs do not build), with the tutorial notebook executed in it, and checks what
a reader would look for: the API reference has a page for each public module, the executed tutorial shows its
figures, and a generated table is on its page.  Links: every relative link of README.md and of the Markdown pages
under docs/ names a file that exists (Sphinx checks the links between its pages; this covers the README, which
GitHub renders, and the pages read there too).  A reference to a name that does not exist fails the build
(checked on a one-page site with the same configuration).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SPHINX = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html"]


def _env(out: Path) -> dict:
    src = str(ROOT / "src")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])]),
        "POSKERNELS_NOTEBOOK_OUT": str(out),
        "POSKERNELS_NOTEBOOK_TRAINED": "0",
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1"),
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    html = out / "html"
    run = subprocess.run(
        [*SPHINX, str(DOCS), str(html)], env=_env(out / "notebook"), capture_output=True, text=True, timeout=600
    )
    return run, html


def test_the_docs_build_with_no_warning(site):
    run, html = site
    warnings = [ln for ln in run.stderr.splitlines() if "WARNING" in ln and "Kernel is running over TCP" not in ln]
    assert run.returncode == 0 and not warnings, run.stderr[-4000:]
    assert (html / "index.html").is_file()


def test_the_api_reference_has_every_public_module(site):
    _, html = site
    for module in (
        "poskernels.encodings.codes",
        "poskernels.theory.kernel",
        "poskernels.extension.article",
        "poskernels.torch_rope",
        "poskernels.census.config",
        "poskernels.errors",
    ):
        page = html / "api" / "generated" / f"{module}.html"
        assert page.is_file(), module
    kernel = (html / "api" / "generated" / "poskernels.theory.kernel.html").read_text(encoding="utf-8")
    assert 'id="poskernels.theory.kernel.kappa_d"' in kernel and "Examples" in kernel  # numpydoc's sections


def test_the_tutorial_is_shown_executed(site):
    _, html = site
    page = (html / "tutorial.html").read_text(encoding="utf-8")
    assert page.count("<img") >= 4 + 5  # its figures, drawn at build time, the shipped results' five among them
    # every table and figure shown (the shipped results where the build must not train), no skip notice
    assert "trained part skipped" not in page and not re.search(r"skipped \w+: payload part", page)
    assert "scores unchanged by a shift of every position by 100: True" in page


def test_generated_tables_and_figures_are_on_their_pages(site):
    _, html = site
    page = (html / "article" / "window.html").read_text(encoding="utf-8")
    assert "0.542" in page and "±" in page  # the article's figure beside ours
    assert "tournament_accuracy.png" in page
    assert len(list((html / "_images").glob("*.png"))) >= 7  # every figure of the article's pages, copied in


def _links(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    return re.findall(r"\]\(([^)\s]+)\)", text)


def _drawn_at_build() -> set[str]:
    # docs/conf.py draws these into docs/_generated/ (ignored by git) on every build
    from poskernels.lab.figures import FIGURES

    return {f"{name}.png" for name in FIGURES} | {"census_llama31.png"}


def test_every_relative_link_of_the_readme_and_the_docs_resolves():
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    pages = [p for p in pages if not {"_build", "generated", "_generated"} & set(p.parts)]
    checked = drawn = 0
    for page in pages:
        for link in _links(page):
            if re.match(r"[a-z]+:", link) or link.startswith("#"):
                continue
            target = (page.parent / link.split("#")[0]).resolve()
            if target.parent == (DOCS / "_generated").resolve():
                assert target.name in _drawn_at_build(), f"{page.relative_to(ROOT)}: {link!r} is not drawn"
                drawn += 1
                continue
            assert target.exists(), f"{page.relative_to(ROOT)}: link {link!r} names no file"
            checked += 1
    assert checked >= 20 and drawn == len(_drawn_at_build())  # each figure on its page


def test_a_reference_to_a_missing_name_fails_the_build(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DOCS / "conf.py", src / "conf.py")
    (src / "index.md").write_text(
        "# t\n\n{func}`poskernels.theory.kernel.kappa_d` resolves; {func}`poskernels.theory.kernel.no_such` does not\n"
        "\n```{eval-rst}\n.. automodule:: poskernels.theory.kernel\n   :no-members:\n```\n"
    )
    run = subprocess.run(
        [*SPHINX, str(src), str(tmp_path / "html")], env=_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert run.returncode != 0
    assert "no_such" in run.stderr and "kappa_d" not in run.stderr


def test_every_arxiv_id_of_the_bibliography_is_a_link():
    text = (DOCS / "bibliography.md").read_text(encoding="utf-8")
    ids = re.findall(r"arXiv:(\d{4}\.\d{4,5})", text)
    linked = re.findall(r"\[arXiv:(\d{4}\.\d{4,5})\]\(https://arxiv\.org/abs/(\d{4}\.\d{4,5})\)", text)
    assert len(ids) >= 15 and len(linked) == len(ids) and all(a == b for a, b in linked)


def test_every_guide_links_into_the_api_reference():
    for page in [*sorted((DOCS / "guide").glob("*.md")), DOCS / "getting-started.md"]:
        text = page.read_text(encoding="utf-8")
        assert re.search(r"\{(mod|func)\}`~?poskernels\.", text) and "api/index.md" in text, page.name


def test_the_most_used_functions_have_parameters_and_an_example():
    import inspect

    from poskernels.encodings import alibi_bias, alibi_slopes, apply_rope, omega, shaw_clip, sinusoidal_code
    from poskernels.extension import extend, ntk_aware, position_interpolation, yarn
    from poskernels.theory.alibi import alibi_horizon, alibi_tail_bound, alibi_tail_weight
    from poskernels.theory.rope import rope_offset_score

    for f in (extend, position_interpolation, ntk_aware, yarn, omega, apply_rope, sinusoidal_code, alibi_slopes,
              alibi_bias, shaw_clip, alibi_horizon, alibi_tail_bound, alibi_tail_weight, rope_offset_score):
        doc = inspect.getdoc(f)
        assert "Parameters\n----------" in doc and ">>> " in doc, f.__name__
