"""Bibliography fields read as the reference styles write them (issue 34, G): AAS conference
entries ("in ASP Conference Series, Vol. 485, ..."), IOP's "Surname I J" names without
periods, natbib's @misc titles that end with the year, escaped braces in titles, and free-form
"Surname I. and Surname I. Title (Publisher, year).". Cases written as those styles print them
(AASTeX's aasjournal.bst, iopart-num.bst, plainnat.bst); the real AAS papers of ../shared
keep what they had."""

from __future__ import annotations

import pytest
from conftest import DATA

from corpus.ingest.eprint import assemble_source, find_main_tex
from corpus.parse.latex import parse_bibliography, parse_latex


def _bib(items: str):
    return parse_bibliography("\\begin{thebibliography}{9}\n" + items + "\n\\end{thebibliography}")


def _names(e) -> list[tuple[str, str]]:
    return [(" ".join([a.first, *a.middle]).strip(), a.last) for a in e.authors]


def test_aas_conference_entries_have_a_venue_not_a_title() -> None:
    got = _bib(
        r"""\bibitem[{{Lang}(2014)}]{lang}
{Lang}, D. 2014, in Astronomical Society of the Pacific Conference Series, Vol. 485, Astronomical Data Analysis Software and Systems XXIII, ed. N.~Manset \& P.~Forshay, 281
\bibitem[{{Smith} {et~al.}(2010)}]{smith}
{Smith}, J., {Jones}, K., \& {Lee}, M. 2010, in Proc. SPIE, Vol. 7735, Ground-based and Airborne Instrumentation for Astronomy III, 773508
\bibitem[{{Bertin} \& {Arnouts}(1996)}]{sex}
{Bertin}, E., \& {Arnouts}, S. 1996, \aaps, 117, 393"""
    )
    lang, smith, sex = got["lang"], got["smith"], got["sex"]
    assert (lang.title, lang.venue, lang.volume, lang.year) == (
        "",
        "Astronomical Society of the Pacific Conference Series",
        "485",
        2014,
    )
    assert _names(lang) == [("D.", "Lang")]
    assert (smith.title, smith.venue, smith.volume) == ("", "Proc. SPIE", "7735")
    assert (sex.title, sex.venue) == ("", "A&AS")


def test_iop_names_without_periods() -> None:
    got = _bib(
        r"""\bibitem{a} Abbott B P \etal 2016 Observation of gravitational waves from a binary black hole merger {\it Phys. Rev. Lett.} {\bf 116} 061102
\bibitem{b} Smith J, Jones K L and Lee M 2019 {\it J. Phys. A: Math. Theor.} {\bf 52} 123001
\bibitem{c} Guo Y, Wang X-L and Zhang Q 2020 Quantum walks on graphs {\it New J. Phys.} {\bf 22} 013001
\bibitem{d} Nielsen M A and Chuang I L 2000 {\it Quantum Computation and Quantum Information} (Cambridge: Cambridge University Press)"""
    )
    assert _names(got["a"]) == [("B P", "Abbott")]
    assert got["a"].title == "Observation of gravitational waves from a binary black hole merger"
    assert got["a"].venue.startswith("Phys. Rev. Lett")
    assert _names(got["b"]) == [("J", "Smith"), ("K L", "Jones"), ("M", "Lee")]
    assert (got["b"].title, got["b"].year) == ("", 2019) and got["b"].venue.startswith("J. Phys. A")
    assert _names(got["c"]) == [("Y", "Guo"), ("X-L", "Wang"), ("Q", "Zhang")]
    assert got["c"].title == "Quantum walks on graphs"
    assert _names(got["d"]) == [("M A", "Nielsen"), ("I L", "Chuang")]
    assert got["d"].title == "Quantum Computation and Quantum Information"


def test_natbib_misc_titles_end_before_the_year() -> None:
    got = _bib(
        r"""\bibitem[OpenAI(2023)]{openai}
OpenAI.
\newblock Gpt-4 technical report, 2023.
\bibitem[Wolf et~al.(2020)Wolf, Debut, and Sanh]{wolf}
Thomas Wolf, Lysandre Debut, and Victor Sanh.
\newblock Transformers: State-of-the-art natural language processing, 2020.
\newblock URL \url{https://arxiv.org/abs/1910.03771}."""
    )
    assert got["openai"].title == "Gpt-4 technical report"
    assert got["wolf"].title == "Transformers: State-of-the-art natural language processing"
    assert "URL" not in got["wolf"].venue
    assert got["wolf"].other_ids["arXiv"] == ["1910.03771"]


@pytest.mark.parametrize(
    "bib",
    [
        "@article{a, author={Aad, G.}, title={The \\{ATLAS\\} detector at the \\{LHC\\}}, year=2008}",
        "@article{a, author={Aad, G.}, title={The {\\{}ATLAS{\\}} detector at the {\\{}LHC{\\}}}, year=2008}",
    ],
)
def test_braces_escaped_in_titles_are_dropped(bib: str) -> None:
    assert parse_bibliography(bib)["a"].title == "The ATLAS detector at the LHC"


def test_free_form_title_then_publisher_and_year() -> None:
    got = _bib(
        r"""\bibitem{g} Goodfellow I. and Bengio Y. Deep Learning (MIT Press, 2016).
\bibitem{h} Landau L. D. and Lifshitz E. M. Quantum Mechanics: Non-Relativistic Theory (Pergamon, Oxford, 1977)."""
    )
    assert (got["g"].title, got["g"].venue, got["g"].year) == ("Deep Learning", "MIT Press", 2016)
    assert _names(got["g"]) == [("I.", "Goodfellow"), ("Y.", "Bengio")]
    assert (got["h"].title, got["h"].venue) == ("Quantum Mechanics: Non-Relativistic Theory", "Pergamon")


@pytest.mark.parametrize("repo", ["katiebreivik+BackPop", "bruce-edelman+CoveringYourBasis"])
def test_real_aas_papers_keep_their_clean_entries(shared_data, repo: str) -> None:
    root = DATA / "fidelity" / "latex" / repo / "arxiv"
    doc = parse_latex(assemble_source(root, find_main_tex(root)), repo)
    conference = [e for e in doc.bib_entries.values() if ", in " in e.raw_text or " in Proc" in e.raw_text]
    for e in conference:
        assert not e.title.startswith("in "), e.raw_text
        assert e.venue not in ("Vol", "Vol."), e.raw_text
