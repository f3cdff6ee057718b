"""corpus.parse.latex on real papers (structure, cite/ref spans, bibliography) and on broken input."""

from __future__ import annotations

import difflib
import gzip
import io
import re
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from conftest import DATA, LANDING

from corpus.ingest.eprint import LatexSource, assemble_source, find_main_tex, strip_comments
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import latex_to_text, parse_bibliography, parse_eprint, parse_latex

LATEX = DATA / "latex_sources"
S2ORC_EPRINT = LATEX / "s2orc-doc2json/1911.02782.gz"
SCIFACT_EPRINT = LATEX / "s2orc-doc2json/2004.14974.gz"
KORZEN = LATEX / "korzen_benchmark/astro-ph0001004"
DROP_REPO = LATEX / "paper_repos/DropImpact_PRL_arXiv"


def _all_paragraphs(doc: StructuredDoc):
    return doc.abstract + doc.body_text + doc.back_matter


def _check_spans(doc: StructuredDoc) -> None:
    for p in _all_paragraphs(doc):
        for span in p.cite_spans + p.ref_spans:
            assert p.text[span.start : span.end] == span.text
        assert "\\" not in p.text, p.text[:200]
    for span in (s for p in _all_paragraphs(doc) for s in p.cite_spans if s.ref_id):
        assert span.ref_id in doc.bib_entries


def _top_sections(doc: StructuredDoc) -> list[str]:
    out: list[str] = []
    for p in doc.body_text:
        top = p.section.split("::")[0]
        if top and top not in out:
            out.append(top)
    return out


@pytest.fixture(scope="module")
def s2orc(tmp_path_factory) -> StructuredDoc:
    res = parse_eprint(S2ORC_EPRINT, "1911.02782", tmp_path_factory.mktemp("s2orc"), keep=True)
    assert res.failure is None and res.doc is not None and res.main == "main.tex"
    return res.doc


def test_s2orc_sections_in_order(s2orc: StructuredDoc) -> None:
    assert s2orc.title == "S2ORC: The Semantic Scholar Open Research Corpus"
    assert s2orc.source == "latex"
    assert _top_sections(s2orc) == [
        "Introduction",
        "Constructing the corpus",
        "The S2ORC dataset",
        "Evaluation",
        "Pretraining BERT on S2ORC",
        "Applications of S2ORC",
        "Related work",
        "Conclusion",
        "Background & Terminology",
        "PDF filters",
        "The paper clustering problem",
        "S2ORC evaluation criteria",
        "Training corpus sizes for other language models",
        "Numeric representations in S2ORC-SciBERT",
    ]
    subs = [p.section for p in s2orc.body_text if p.section.startswith("Constructing the corpus::")]
    assert subs[0] == "Constructing the corpus::Processing PDFs"
    assert "Constructing the corpus::Processing PDFs::Selecting PDFs" in subs
    assert {p.section for p in s2orc.back_matter} == {"Acknowledgements"}
    nums = {p.section: p.sec_num for p in s2orc.body_text}
    assert nums["Introduction"] == "1" and nums["Constructing the corpus::Processing PDFs"] == "2.1"
    assert nums["PDF filters"] == "B"  # appendix numbering


def test_s2orc_paragraphs_split_on_blank_lines_only(s2orc: StructuredDoc) -> None:
    first = s2orc.body_text[0].text
    # two source lines, one line break: one paragraph
    assert first.startswith("Academic papers are an increasingly important textual domain")
    assert "Aside from capturing valuable knowledge" in first
    assert 40 <= len(s2orc.body_text) <= 90
    assert s2orc.abstract[0].text.startswith("We introduce S2ORC, a large corpus of 81.1M")
    assert all(len(p.text) > 20 for p in _without_footnotes(s2orc))
    # footnotes are paragraphs of their own after the body, without a section (as from Grobid)
    feet = s2orc.body_text[len(_without_footnotes(s2orc)) :]
    assert feet and all(p.section == "" for p in feet)
    assert any(p.text == "https://github.com/allenai/science-parse" for p in feet)


def _without_footnotes(doc: StructuredDoc) -> list:
    """The body paragraphs before the trailing footnote paragraphs (section "")."""
    n = len(doc.body_text)
    while n and doc.body_text[n - 1].section == "":
        n -= 1
    return doc.body_text[:n]


def test_s2orc_one_cite_span_per_key_occurrence(s2orc: StructuredDoc) -> None:
    # Independent count: cite keys in the body outside floats and footnotes, in order;
    # then those in footnotes, which follow the body as paragraphs of their own.
    tex = strip_comments(S2ORC_TEX_CACHE.text)
    body = tex[tex.index("\\begin{document}") : tex.index("\\end{document}")]
    body = re.sub(r"\\begin\{(figure|table)(\*?)\}.*?\\end\{\1\2\}", "", body, flags=re.S)
    footnote = re.compile(r"\\footnote\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
    cite = re.compile(r"\\cite[tp]?\{([^}]*)\}")
    foot_keys = [
        k.strip() for f in footnote.findall(body) for m in cite.finditer(f) for k in m.group(1).split(",")
    ]
    keys = [k.strip() for m in cite.finditer(footnote.sub("", body)) for k in m.group(1).split(",")]
    assert len(keys) == 61 and len(foot_keys) == 2
    bib = parse_bibliography(S2ORC_TEX_CACHE.bbl or "")
    main = s2orc.abstract + _without_footnotes(s2orc) + s2orc.back_matter
    spans = [s for p in main for s in p.cite_spans]
    assert [s.ref_id for s in spans] == [bib[k].ref_id for k in keys]
    feet = s2orc.body_text[len(_without_footnotes(s2orc)) :]
    assert [s.ref_id for p in feet for s in p.cite_spans] == [bib[k].ref_id for k in foot_keys]
    spans += [s for p in feet for s in p.cite_spans]
    assert s2orc.citation_style == "NAME-YEAR"
    texts = Counter(s.text for s in spans)
    assert texts["Ammar et al., 2018"] >= 2 and texts["Saier and Färber (2019)"] >= 2
    _check_spans(s2orc)


def test_s2orc_bib_entries_match_bibitems(s2orc: StructuredDoc) -> None:
    assert len(s2orc.bib_entries) == (S2ORC_TEX_CACHE.bbl or "").count("\\bibitem") == 55
    ammar = s2orc.bib_entries["BIBREF1"]
    assert ammar.title == "Construction of the literature graph in semantic scholar"
    assert ammar.year == 2018 and ammar.other_ids["DOI"] == ["10.18653/v1/N18-3011"]
    assert [a.last for a in ammar.authors[:3]] == ["Ammar", "Groeneveld", "Bhagavatula"]
    assert ammar.venue.startswith("Proceedings of the 2018 Conference of the North American Chapter")
    assert ammar.raw_text.startswith("Waleed Ammar, Dirk Groeneveld")
    with_arxiv = [e for e in s2orc.bib_entries.values() if e.other_ids.get("arXiv")]
    assert with_arxiv, "CoRR abs/ and arXiv: ids are picked up"
    assert all(e.title for e in s2orc.bib_entries.values())


def test_s2orc_refs_figures_tables_equations(s2orc: StructuredDoc) -> None:
    refs = s2orc.ref_entries
    assert refs["TABREF0"].text.startswith("A comparison of S2ORC with other publicly-available")
    assert refs["TABREF0"].latex and "\\begin{tabular}" in refs["TABREF0"].latex
    assert refs["FIGREF0"].type == "figure" and refs["FIGREF0"].text.startswith(
        "Inline citations and references"
    )
    eqs = [r for r in refs.values() if r.type == "equation"]
    assert len(eqs) == 3 and "\\frac{2 \\times J \\times C}{J + C}" in eqs[0].latex
    body = " ".join(p.text for p in s2orc.body_text)
    assert "J + C" not in body and "toprule" not in body and "81.1M" in body
    table_ref = next(s for p in s2orc.body_text for s in p.ref_spans if s.ref_id == "TABREF0")
    assert table_ref.text == "1"
    unresolved = [s for p in s2orc.body_text for s in p.ref_spans if s.ref_id is None]
    assert unresolved == []


class _Cache:
    text = ""
    bbl: str | None = None


S2ORC_TEX_CACHE = _Cache()


@pytest.fixture(scope="module", autouse=True)
def _s2orc_raw_tex() -> None:
    with tarfile.open(S2ORC_EPRINT) as tar:
        S2ORC_TEX_CACHE.text = tar.extractfile("main.tex").read().decode()
        S2ORC_TEX_CACHE.bbl = tar.extractfile("main.bbl").read().decode()


def test_scifact_multi_file(tmp_path: Path) -> None:
    res = parse_eprint(SCIFACT_EPRINT, "2004.14974", tmp_path / "s")
    assert res.failure is None and res.doc is not None and res.main == "emnlp2020.tex"
    doc = res.doc
    assert doc.title == "Fact or Fiction: Verifying Scientific Claims"
    assert doc.abstract[0].text.startswith("We introduce scientific claim verification")
    tops = _top_sections(doc)
    assert tops[:4] == [
        "Introduction",
        "Background and task definition",
        "The SciFact dataset",
        "The SciFact task",
    ]
    assert "The SciFact dataset::Claim writing" in {p.section for p in doc.body_text}
    assert len(doc.bib_entries) == 36 and doc.citation_style == "NAME-YEAR"
    spans = [s for p in _all_paragraphs(doc) for s in p.cite_spans]
    assert len(spans) >= 40 and all(s.ref_id for s in spans)
    assert any("SciFact" in p.text for p in doc.body_text)  # \ours macro expanded
    _check_spans(doc)
    assert not any(tmp_path.joinpath("s").iterdir())  # scratch emptied after parsing


@pytest.mark.parametrize("paper", ["1707.08043", "1708.00137"])
def test_engrafo_inline_thebibliography(paper: str) -> None:
    root = LATEX / "engrafo" / paper
    tex = (root / "main.tex").read_bytes().decode("latin-1")
    doc = parse_latex(assemble_source(root, find_main_tex(root)), paper)
    n_items = len(re.findall(r"^\\bibitem", strip_comments(tex), flags=re.M))
    assert len(doc.bib_entries) == n_items > 5
    assert doc.citation_style == "BRACKET"
    spans = [s for p in _all_paragraphs(doc) for s in p.cite_spans]
    assert spans and all(s.ref_id for s in spans)
    # a citation of several keys prints in one pair of brackets, "[1, 4]" or "[3, 5–7]" with
    # the cite package (issue 34): each span is one number (a range: one span per entry it covers)
    for s in spans:
        assert re.fullmatch(r"\[?\d+(?:\u2013\d+)?\]?", s.text), s.text
        nums = [int(x) for x in re.findall(r"\d+", s.text)]
        assert nums[0] <= doc.bib_entries[s.ref_id].num + 1 <= nums[-1]
    _check_spans(doc)
    assert "Introduction" in _top_sections(doc)


def test_landing_source_and_paper_repo(tmp_path: Path) -> None:
    res = parse_eprint(LANDING / "src/2408.12714.tar.gz", "2408.12714", tmp_path / "s")
    assert res.failure is None and res.doc is not None and res.main == "ms.tex"
    doc = res.doc
    assert doc.title.startswith("Unifying theory of scaling in drop impact")
    assert len(doc.bib_entries) == 56 and doc.citation_style == "BRACKET"
    spans = [s for p in doc.body_text for s in p.cite_spans]
    assert len(spans) >= 60 and all(s.ref_id for s in spans)
    jos = doc.bib_entries["BIBREF0"]
    assert jos.title == "Drop impact on a solid surface" and jos.year == 2016
    assert [a.last for a in jos.authors] == ["Josserand", "Thoroddsen"]
    _check_spans(doc)
    repo_doc = parse_latex(assemble_source(DROP_REPO, find_main_tex(DROP_REPO)), "repo")
    assert [p.text for p in repo_doc.body_text] == [p.text for p in doc.body_text]


def test_bib_file_parsing() -> None:
    bib = parse_bibliography((DROP_REPO / "refs.bib").read_text())
    assert len(bib) == 185 - 45  # entries minus @string/@preamble
    jos = next(e for k, e in bib.items() if k == "Josserand2016")
    assert jos.title == "Drop impact on a solid surface" and jos.year == 2016
    assert jos.venue == "Annu. Rev. Fluid Mech." and jos.pages == "365-391"
    assert jos.other_ids["DOI"] == ["10.1146/annurev-fluid-122414-034401"]
    assert [(a.first, a.last) for a in jos.authors] == [("C.", "Josserand"), ("S.", "Thoroddsen")]


def test_korzen_ground_truth_similarity() -> None:
    doc = parse_latex(assemble_source(KORZEN, find_main_tex(KORZEN)), "astro-ph/0001004")
    ours, last = [doc.title], ""
    for p in doc.body_text + doc.back_matter:
        if p.section != last:
            old = last.split("::")
            ours += [t for i, t in enumerate(p.section.split("::")) if i >= len(old) or old[i] != t]
            last = p.section
        ours.append(p.text)
    truth = re.sub(r"\(\d+\)", "", (KORZEN / "astro-ph0001004.body.txt").read_text()).replace(
        "[formula]", " "
    )
    a, b = " ".join(ours).split(), truth.split()
    ratio = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    overlap = sum((Counter(a) & Counter(b)).values())
    f1 = 2 * overlap / (len(a) + len(b))
    print(f"astro-ph0001004 vs ground truth: difflib word ratio={ratio:.3f} token F1={f1:.3f}")
    assert ratio > 0.92 and f1 > 0.92
    assert len(doc.bib_entries) == 37  # the \reference list of the PASP style


# ----------------------------------------------------------------------------- synthetic


def _doc(
    body: str, preamble: str = "", bbl: str | None = None, bib: list[str] | None = None
) -> StructuredDoc:
    text = f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    return parse_latex(LatexSource(main="main.tex", text=strip_comments(text), bbl=bbl, bib=bib or []), "t")


BBL = """\\begin{thebibliography}{2}
\\bibitem{a} A. Author, ``A first title,'' J. Things 1 (2001).
\\bibitem{b} B. Writer, {\\em Second title here}, Phys. Rev. {\\bf 2}, 3 (2002). arXiv:1901.00001
\\end{thebibliography}"""


def test_macros_comments_and_paragraphs() -> None:
    doc = _doc(
        "\\section{Intro \\name}\nThe \\name{} works,\nsee \\pair{x}{y} % hidden \\cite{a}\nand \\dd.\n\n"
        "Second \\emph{para}~here.\\footnote{dropped}\n",
        preamble="\\newcommand{\\name}{\\textsc{Tool}\\xspace}\n\\newcommand\\pair[2]{(#1, #2)}\n\\def\\dd{done}",
    )
    assert [p.text for p in doc.body_text] == [
        "The Tool works, see (x, y) and done.",
        "Second para here.",
        "dropped",  # the footnote: a paragraph of its own after the body
    ]
    assert doc.body_text[2].section == ""
    assert doc.body_text[0].section == "Intro Tool" and doc.body_text[0].cite_spans == []


def test_bracket_cites_refs_and_equations() -> None:
    doc = _doc(
        "\\section{S}\\label{sec:s}\nAs shown~\\cite{a,b} and \\cite{zz}, see Eq.~\\eqref{eq:1}, "
        "\\autoref{fig:f} and Sec.~\\ref{sec:s}.\n\\begin{equation}x=1\\label{eq:1}\\end{equation}\nafter.\n"
        "\\begin{figure}\\caption{A cap \\cite{a}.}\\label{fig:f}\\end{figure}\n",
        bbl=BBL,
    )
    p = doc.body_text[0]
    assert p.text == "As shown [1, 2] and [?], see Eq. (1), Figure 1 and Sec. 1. after."
    assert [(s.text, s.ref_id) for s in p.cite_spans] == [
        ("[1", "BIBREF0"),
        ("2]", "BIBREF1"),
        ("[?]", None),
    ]
    assert [(s.text, s.ref_id) for s in p.ref_spans] == [
        ("(1)", "EQREF0"),
        ("Figure 1", "FIGREF0"),
        ("1", "SECREF0"),
    ]
    assert doc.ref_entries["FIGREF0"].text.startswith("A cap")
    assert doc.ref_entries["EQREF0"].latex.startswith("x=1")
    a, b = doc.bib_entries["BIBREF0"], doc.bib_entries["BIBREF1"]
    assert (a.title, a.year, b.title, b.other_ids) == (
        "A first title",
        2001,
        "Second title here",
        {"arXiv": ["1901.00001"]},
    )
    _check_spans(doc)


def test_natbib_name_year_and_bib_fallback() -> None:
    bib = "@article{k1, author={Smith, John and Doe, Jane and Roe, R.}, title={T one}, year=2019, journal={J}}\n"
    bib += "@inproceedings{k2, author={Lee, Ann}, title={T two}, year={2020}, booktitle={Conf}}\n"
    bib += "@misc{unused, title={never cited}}"
    doc = _doc(
        "Text \\citep{k2,k1}. \\citet{k1} said so \\citep[see][p.~3]{k2}.",
        preamble="\\usepackage{natbib}\n\\bibliographystyle{plainnat}",
        bib=[bib],
    )
    assert doc.citation_style == "NAME-YEAR"
    p = doc.body_text[0]
    assert (
        p.text == "Text (Lee, 2020; Smith et al., 2019). Smith et al. (2019) said so (see Lee, 2020, p. 3)."
    )
    assert [s.text for s in p.cite_spans] == [
        "Lee, 2020",
        "Smith et al., 2019",
        "Smith et al. (2019)",
        "Lee, 2020",
    ]
    assert list(doc.bib_entries) == ["BIBREF0", "BIBREF1"]  # only cited keys, in citation order
    assert doc.bib_entries["BIBREF0"].title == "T two"
    _check_spans(doc)


def test_latex_to_text_pieces() -> None:
    assert (
        latex_to_text("Schr\\\"odinger's \\emph{cat} costs 5\\% -- ``ok'' $\\alpha_1$")
        == "Schrödinger's cat costs 5% – “ok” α_1"
    )


# ----------------------------------------------------------------------------- broken input


def _targz(path: Path, files: dict[str, bytes]) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(buf.getvalue()))
    return path


HEAD = b"\\documentclass{article}\n\\begin{document}\n"


def test_partition_of_bad_and_good_eprints_completes(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    papers = {
        "unbalanced": _targz(
            inputs / "u.tar.gz", {"m.tex": HEAD + b"\\section{A}\nText {never closed.\n\\end{document}"}
        ),
        "envs": _targz(
            inputs / "e.tar.gz", {"m.tex": HEAD + b"\\begin{figure}\\caption{x}\n\\end{document}"}
        ),
        "loop": _targz(
            inputs / "l.tar.gz", {"m.tex": HEAD + b"\\input{a}\\end{document}", "a.tex": b"\\input{m}"}
        ),
        "latin1": _targz(
            inputs / "n.tar.gz",
            {"m.tex": HEAD + "\\section{Caf\xe9}\nNa\xefve text.\n\\end{document}".encode("latin-1")},
        ),
        "pdf": inputs / "p.gz",
        "evil": _targz(inputs / "x.tar.gz", {"m.tex": HEAD, "../../escape.tex": b"x"}),
        "nomain": _targz(inputs / "z.tar.gz", {"notes.txt": b"hello"}),
        "real": S2ORC_EPRINT,
    }
    (inputs / "p.gz").write_bytes(gzip.compress(b"%PDF-1.5\n%%EOF\n"))
    before = {p for p in tmp_path.rglob("*")}
    results = {pid: parse_eprint(path, pid, tmp_path / "scratch" / pid) for pid, path in papers.items()}
    codes = {pid: (r.failure.code if r.failure else None) for pid, r in results.items()}
    assert codes == {
        "unbalanced": None,  # TeX only warns: closed at the end of its paragraph
        "envs": None,  # TeX recovers (issue 34): closed where its paragraph ends, with a warning
        "loop": "input_loop",
        "latin1": None,
        "pdf": "pdf_only",
        "evil": "unsafe_path",
        "nomain": "no_main_tex",
        "real": None,
    }
    assert all(r.failure.message for r in results.values() if r.failure)
    assert results["unbalanced"].doc.body_text[0].text == "Text never closed."
    assert [w.split(":")[0] for w in results["unbalanced"].warnings] == ["unbalanced_braces"]
    assert [w.split(":")[0] for w in results["envs"].warnings] == ["unbalanced_environment"]
    latin = results["latin1"]
    assert latin.doc is not None and latin.doc.body_text[0].text == "Naïve text."
    assert latin.doc.body_text[0].section == "Café" and latin.warnings == [
        "non_utf8: m.tex decoded as latin-1"
    ]
    after = {p for p in tmp_path.rglob("*")} - before
    assert all(
        p.is_dir() and p.is_relative_to(tmp_path / "scratch") for p in after
    )  # only (emptied) scratch dirs
    assert not (tmp_path.parent / "escape.tex").exists()
