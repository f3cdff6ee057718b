"""The main file of an e-print is the one LaTeX (arXiv's AutoTeX) would build for the paper
(issue 34, D): not a latexdiff ``diff.tex``, a pandoc template, a rebuttal or an old draft in a
subdirectory, whatever their names and sizes. Each layout is a real paper from ../shared
(CoveringYourBasis: ms.tex + inputs + ms.bbl) with the distractor an author leaves beside it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import DATA

from corpus.ingest.eprint import assemble_source, find_main_tex, main_file
from corpus.parse.latex import parse_latex

BASIS = DATA / "fidelity" / "latex" / "bruce-edelman+CoveringYourBasis" / "arxiv"


@pytest.fixture
def eprint(shared_data, tmp_path: Path) -> Path:
    root = tmp_path / "eprint"
    shutil.copytree(BASIS, root)
    return root


def _latexdiff(text: str) -> str:
    """What latexdiff writes: its preamble commands, then every changed word run marked as
    deleted (the old wording) and added (the new one), so the file is larger than the paper."""
    preamble = (
        "%DIF LATEXDIFF DIFFERENCE FILE\n"
        "\\providecommand{\\DIFadd}[1]{{\\protect\\color{blue}\\uwave{#1}}}\n"
        "\\providecommand{\\DIFdel}[1]{{\\protect\\color{red}\\sout{#1}}}\n"
        "\\providecommand{\\DIFaddbegin}{} \\providecommand{\\DIFaddend}{}\n"
        "\\providecommand{\\DIFdelbegin}{} \\providecommand{\\DIFdelend}{}\n"
    )
    text = text.replace("\\begin{document}", preamble + "\\begin{document}", 1)
    return re.sub(
        r"(?m)^([A-Z][^\\\n%]{40,})$",
        lambda m: (
            f"\\DIFdelbegin \\DIFdel{{{m.group(1)} (old wording)}}\\DIFdelend "
            f"\\DIFaddbegin \\DIFadd{{{m.group(1)}}}\\DIFaddend"
        ),
        text,
    )


def test_latexdiff_output_is_not_the_paper(eprint: Path) -> None:
    ms = (eprint / "ms.tex").read_text()
    for name in ("intro", "methods", "results", "conclusion"):  # the diff inlines its sections
        ms = ms.replace("\\input{" + name + "}", (eprint / f"{name}.tex").read_text())
    (eprint / "diff.tex").write_text(_latexdiff(ms))
    assert (eprint / "diff.tex").stat().st_size > (eprint / "ms.tex").stat().st_size
    (eprint / "ms.tex").rename(eprint / "edelman_basis.tex")  # no conventional name to lean on
    (eprint / "ms.bbl").rename(eprint / "edelman_basis.bbl")
    main, why = main_file(eprint)
    assert main == eprint / "edelman_basis.tex"
    assert "latexdiff" in why


_PANDOC_TEMPLATE = r"""\documentclass[$if(fontsize)$$fontsize$,$endif$]{article}
$if(title)$\title{$title$}$endif$
$for(author)$\author{$author$}$endfor$
\begin{document}
$if(title)$\maketitle$endif$
$if(abstract)$\begin{abstract}$abstract$\end{abstract}$endif$
$body$
$if(bibliography)$\bibliography{$for(bibliography)$$bibliography$$sep$,$endfor$}$endif$
\end{document}
"""


def test_pandoc_template_named_article_is_not_the_paper(eprint: Path) -> None:
    (eprint / "ms.tex").rename(eprint / "edelman_basis.tex")
    (eprint / "ms.bbl").rename(eprint / "edelman_basis.bbl")
    (eprint / "article.tex").write_text(_PANDOC_TEMPLATE)
    main, why = main_file(eprint)
    assert main == eprint / "edelman_basis.tex"
    assert "template" in why
    doc = parse_latex(assemble_source(eprint, main), "basis")
    assert len(doc.body_text) > 30


def test_documentclass_from_an_input_and_a_rebuttal_beside(eprint: Path) -> None:
    """The paper's ``\\documentclass`` sits in ``header.tex``, which ms.tex inputs; the response
    to the referees is a document of its own. LaTeX builds ms.tex."""
    ms = (eprint / "ms.tex").read_text()
    cut = ms.index("\\begin{document}")
    (eprint / "header.tex").write_text(ms[:cut])
    (eprint / "ms.tex").write_text("\\input{header}\n" + ms[cut:])
    (eprint / "rebuttal.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\section*{Response to the referee}\n"
        + "We thank the referee for the careful reading of our manuscript. " * 40
        + "\n\\end{document}\n"
    )
    main, _ = main_file(eprint)
    assert main == eprint / "ms.tex"
    src = assemble_source(eprint, main)
    doc = parse_latex(src, "basis")
    good = parse_latex(assemble_source(BASIS, BASIS / "ms.tex"), "basis")
    assert [p.text for p in doc.body_text] == [p.text for p in good.body_text]
    # named like any file: the rebuttal is still told apart by what it reaches (no bibliography, small)
    (eprint / "rebuttal.tex").rename(eprint / "answers.tex")
    assert main_file(eprint)[0] == eprint / "ms.tex"


def test_old_draft_in_a_subdirectory_loses_to_the_final_file(eprint: Path) -> None:
    extras = eprint / "extras"
    extras.mkdir()
    draft = (eprint / "ms.tex").read_text().replace("\\input{results}", "")
    (extras / "main.tex").write_text(draft)  # the conventional name, one level down
    (eprint / "ms.tex").rename(eprint / "edelman_basis_final.tex")
    (eprint / "ms.bbl").rename(eprint / "edelman_basis_final.bbl")
    main, why = main_file(eprint)
    assert main == eprint / "edelman_basis_final.tex", why


def test_arxiv_readme_names_the_toplevel_file(eprint: Path) -> None:
    """arXiv's 00README (or 00README.XXX / 00README.json) says which file is the top level:
    LaTeX builds that one, whatever else is there."""
    (eprint / "supplement.tex").write_text((eprint / "ms.tex").read_text())
    (eprint / "00README.json").write_text(
        json.dumps({"sources": [{"filename": "supplement.tex", "usage": "toplevel"}]})
    )
    assert main_file(eprint) == (eprint / "supplement.tex", "00README: toplevel")
    (eprint / "00README.json").unlink()
    (eprint / "00README.XXX").write_text("ms.tex ignore\n")
    assert find_main_tex(eprint) == eprint / "supplement.tex"


def test_main_file_reasons_on_the_real_layouts(shared_data) -> None:
    assert main_file(BASIS) == (BASIS / "ms.tex", "the only document")
    repo = DATA / "latex_sources" / "paper_repos" / "DropImpact_PRL_arXiv"
    main, why = main_file(repo)
    assert main == repo / "ms.tex" and "supplement" in why


def test_many_documents_and_a_shared_input_stay_fast(tmp_path: Path) -> None:
    """Hundreds of documents that all input one large file: the choice reads each file once."""
    import time

    (tmp_path / "macros.tex").write_text("\\newcommand{\\x}{x}\n" * 20_000)
    for i in range(200):
        (tmp_path / f"doc{i:03}.tex").write_text(
            "\\documentclass{article}\\input{macros}\\begin{document}" + "w " * (i + 1) + "\\end{document}\n"
        )
    start = time.process_time()
    main, why = main_file(tmp_path)
    assert main == tmp_path / "doc199.tex" and "larger" in why
    assert time.process_time() - start < 10


def test_latexdiff_output_loses_to_a_paper_with_marks_left_in_it(eprint: Path) -> None:
    """Issue 44: the paper an author submits can keep a few latexdiff marks (a change accepted by
    hand); the difference file beside it holds hundreds. Of two marked documents the one with
    fewer marks is the paper, whatever their names and sizes."""
    ms = (eprint / "ms.tex").read_text()
    for name in ("intro", "methods", "results", "conclusion"):
        ms = ms.replace("\\input{" + name + "}", (eprint / f"{name}.tex").read_text())
    (eprint / "changes.tex").write_text(_latexdiff(ms))
    intro = (eprint / "intro.tex").read_text()
    (eprint / "intro.tex").write_text("\\DIFaddbegin \\DIFaddend " + intro)  # left in the paper
    (eprint / "ms.tex").rename(eprint / "edelman_basis.tex")
    (eprint / "ms.bbl").rename(eprint / "edelman_basis.bbl")
    main, why = main_file(eprint)
    assert main == eprint / "edelman_basis.tex"
    assert "latexdiff" in why


def test_a_difference_file_named_diff_without_marks_loses(eprint: Path) -> None:
    """latexdiff-vc and git-latexdiff name their output ``<name>-diff<rev>.tex``; one run on two
    identical versions holds no mark, only latexdiff's ``%DIF`` header comments."""
    text = (eprint / "ms.tex").read_text()
    (eprint / "ms-diffHEAD~1.tex").write_text("%DIF LATEXDIFF DIFFERENCE FILE\n" + text + "\n" * 2000)
    (eprint / "ms.tex").rename(eprint / "edelman_basis.tex")
    (eprint / "ms.bbl").rename(eprint / "edelman_basis.bbl")
    assert main_file(eprint)[0] == eprint / "edelman_basis.tex"


def test_input_through_a_let_alias_reads_the_file_or_nothing(eprint: Path) -> None:
    """``\\let\\conditionalinput\\@input`` (LaTeX's input-if-it-exists): the alias inputs what is
    there and prints nothing for a file the e-print does not hold, never its path."""
    ms = (eprint / "ms.tex").read_text()
    ms = ms.replace(
        "\\begin{document}",
        "\\makeatletter\\let\\conditionalinput\\@input\\makeatother\n\\begin{document}",
        1,
    )
    ms = ms.replace(
        "\\input{intro.tex}", "\\conditionalinput{intro}\n\\conditionalinput{/home/author/paper/extra.tex}"
    )
    assert "\\conditionalinput{intro}" in ms
    (eprint / "ms.tex").write_text(ms)
    doc = parse_latex(assemble_source(eprint, eprint / "ms.tex"), "basis")
    good = parse_latex(assemble_source(BASIS, BASIS / "ms.tex"), "basis")
    texts = [p.text for p in doc.body_text]
    assert texts == [p.text for p in good.body_text]
    assert not any("extra.tex" in t or "/home" in t for t in texts)
