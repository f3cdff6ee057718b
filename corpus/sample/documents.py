"""PDF, Grobid TEI and LaTeX e-print writers for the synthetic landing zone.

:class:`FullTextWriter` is an ``also`` writer of :func:`corpus.sample.landing_zone.generate_landing`:
called with every record in datestamp order, it makes the paper's text once per id
(:func:`corpus.sample.text.make_paper`, citing only papers seen before it) and writes

* ``pdf/<name>.pdf`` for ~70 % of papers: a small hand-made PDF whose page count and
  first-page size follow a plan (:data:`PDF_PLANS`: portrait letter/A4 with 4-30
  pages, some over 50 pages, some landscape, some cut short), first page with text;
* ``tei/<name>.tei.xml`` for most PDFs that pass the S2ORC PDF filters: Grobid
  0.8-style TEI of the same paper (header, body divs with numbered heads, bibr and
  figure refs, a formula, figures, listBibl with DOI/arXiv idnos and raw references).
  The other PDFs stay "pending" when no Grobid runs;
* ``src/<name>.tar.gz`` (or ``.gz`` / ``.pdf``) for ~40 % of papers: an e-print with
  a main .tex (``\\documentclass``, sections, ``\\cite``, ``\\ref``, an equation, a
  figure) and a .bbl, sometimes an ``\\input`` file, a few broken on purpose
  (:data:`SRC_PLANS`: an unsafe ``../`` member, a PDF-only e-print, no main file);
* ``sample_manifest.jsonl`` (on :meth:`FullTextWriter.close`): per paper what was
  planned -- files, PDF plan, e-print plan, planted filter failure, and every demo
  citation with its intended link kind -- the ground truth tests and demos check against.

Deterministic for a seed: every choice is drawn from ``random.Random(f"{seed}:...:{id}")``,
gzip and tar headers carry fixed times.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import tarfile
import unicodedata
from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape

from corpus.ingest import arxiv_ids
from corpus.ingest.records import ArxivRecord
from corpus.sample.text import (
    PLANTS,
    VENUES,
    Cite,
    FigRef,
    PaperText,
    PoolPaper,
    cite_label,
    make_paper,
    render_plain,
)

__all__ = [
    "FullTextWriter",
    "PDF_PLANS",
    "SRC_PLANS",
    "pdf_bytes",
    "tei_xml",
    "latex_files",
    "MANIFEST",
]

MANIFEST = "sample_manifest.jsonl"
PDF_PLANS = ("portrait", "long", "landscape", "rotated", "corrupt")
SRC_PLANS = ("tar", "tar_input", "gzip_tex", "unsafe_path", "pdf_only", "no_main_tex")
GOOD_SRC = frozenset(("tar", "tar_input", "gzip_tex"))
LETTER, A4 = (612.0, 792.0), (595.276, 841.89)
GROBID_VERSION = "0.8.0"
_POOL_CAP = 50_000
_WEIGHT_CAP = 200_000


def _write(path: Path, data: bytes) -> None:
    """Temp file + rename (readers never see half a file); no fsync: a generator can re-run."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _field(category: str) -> str:
    archive = category.split(".", 1)[0]
    if archive in ("cs", "stat", "eess"):
        return "cs"
    if archive == "math":
        return "math"
    if archive == "q-bio":
        return "bio"
    if archive in ("q-fin", "econ"):
        return "econ"
    return "phys"


# ---------------------------------------------------------------- PDF


def _pdf_text(s: str) -> str:
    s = s.encode("ascii", "replace").decode()
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(
    pages: int, size: tuple[float, float], lines: list[str], rotate: int = 0, cut_short: bool = False
) -> bytes:
    """A minimal valid PDF: ``pages`` pages of ``size`` points, ``lines`` of text on page 1.

    ``rotate`` sets ``/Rotate`` on the page tree; ``cut_short`` returns the file cut in
    the middle of its page tree, as an interrupted download leaves it (unreadable)."""
    w, h = size
    y, ops = h - 72, []
    for i, line in enumerate(lines):
        ops.append(f"BT /F1 {14 if i == 0 else 10} Tf 72 {y:.0f} Td ({_pdf_text(line)}) Tj ET")
        y -= 20 if i == 0 else 13
    content = "\n".join(ops).encode()
    first_page = 5
    kids = " ".join(f"{first_page + i} 0 R" for i in range(pages))
    rot = f" /Rotate {rotate}" if rotate else ""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} /MediaBox [0 0 {w:g} {h:g}]{rot} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    objs.append(b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
    objs.extend(b"<< /Type /Page /Parent 2 0 R >>" for _ in range(pages - 1))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    if cut_short:
        return bytes(out[: offsets[1] + 24])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def _pdf_plan(rng: random.Random) -> dict:
    r = rng.random()
    size = LETTER if rng.random() < 0.5 else A4
    if r < 0.84:
        return {"plan": "portrait", "pages": rng.randint(4, 30), "size": size, "rotate": 0}
    if r < 0.89:
        return {"plan": "long", "pages": rng.randint(51, 140), "size": size, "rotate": 0}
    if r < 0.92:
        return {"plan": "landscape", "pages": rng.randint(8, 40), "size": (size[1], size[0]), "rotate": 0}
    if r < 0.95:
        return {"plan": "rotated", "pages": rng.randint(8, 40), "size": size, "rotate": 90}
    return {"plan": "corrupt", "pages": rng.randint(4, 30), "size": size, "rotate": 0}


def pdf_passes(plan: dict) -> bool:
    """Whether the S2ORC PDF filters (corpus.ingest.pdf.pdf_filter) should let this plan through."""
    return plan["plan"] == "portrait"


# ---------------------------------------------------------------- TEI

_TEI_OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<TEI xml:space="preserve" xmlns="http://www.tei-c.org/ns/1.0" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://www.tei-c.org/ns/1.0 https://raw.githubusercontent.com/kermitt2/grobid/master/'
    'grobid-home/schemas/xsd/Grobid.xsd"\n xmlns:xlink="http://www.w3.org/1999/xlink">\n'
)
_NS = ' xmlns="http://www.tei-c.org/ns/1.0"'


def _x(s: str) -> str:
    return escape(s)


def _pers(first: str, last: str) -> str:
    names = first.replace(".", ". ").split()
    out = ["<persName>"]
    if names:
        out.append(f'<forename type="first">{_x(names[0].rstrip("."))}</forename>')
        out.extend(f'<forename type="middle">{_x(n.rstrip("."))}</forename>' for n in names[1:])
    out.append(f"<surname>{_x(last)}</surname></persName>")
    return "".join(out)


def _raw_reference(paper: PaperText, i: int) -> str:
    b = paper.bib[i]
    names = ", ".join(f"{f} {last}".strip() for f, last in b.authors)
    parts = [f"{names}. {b.year}."]
    if b.title:
        parts.append(f"{b.title}.")
    parts.append(f"{b.venue}.")
    if b.arxiv_id:
        parts.append(f"arXiv:{b.arxiv_id}.")
    if b.doi:
        parts.append(f"doi:{b.doi}")
    return " ".join(parts)


def _tei_bibl(paper: PaperText, i: int) -> str:
    b = paper.bib[i]
    authors = "".join(f"<author>{_pers(f, last)}</author>" for f, last in b.authors)
    title = f'<title level="a" type="main">{_x(b.title)}</title>' if b.title else ""
    ids = f'<idno type="DOI">{_x(b.doi)}</idno>' if b.doi else ""
    ids += f'<idno type="arXiv">arXiv:{b.arxiv_id}</idno>' if b.arxiv_id else ""
    return (
        f'<biblStruct xml:id="b{i}">\n\t<analytic>{title}{authors}{ids}</analytic>\n'
        f'\t<monogr><title level="j">{_x(b.venue)}</title>'
        f'<imprint><date type="published" when="{b.year}">{b.year}</date></imprint></monogr>\n'
        f'\t<note type="raw_reference">{_x(_raw_reference(paper, i))}</note>\n</biblStruct>\n'
    )


def _tei_cite(c: Cite, paper: PaperText, rng: random.Random) -> str:
    def ref(i: int, text: str) -> str:
        target = "" if rng.random() < 0.04 else f' target="#b{i}"'  # Grobid leaves a few unresolved
        return f'<ref type="bibr"{target}>{_x(text)}</ref>'

    if paper.style == "BRACKET":
        nums = [str(i + 1) for i in c.refs]
        if len(nums) == 1:
            return ref(c.refs[0], f"[{nums[0]}]")
        texts = [f"[{nums[0]},"] + [f"{n}," for n in nums[1:-1]] + [f"{nums[-1]}]"]
        return " ".join(ref(i, t) for i, t in zip(c.refs, texts, strict=True))
    if c.narrative:
        return ref(c.refs[0], cite_label(paper.bib[c.refs[0]], narrative=True))
    labels = [cite_label(paper.bib[i]) for i in c.refs]
    texts = [f"{lab};" for lab in labels]
    texts[0] = "(" + texts[0]
    texts[-1] = texts[-1][:-1] + ")"
    return " ".join(ref(i, t) for i, t in zip(c.refs, texts, strict=True))


def _tei_paragraph(parts: list, paper: PaperText, rng: random.Random) -> str:
    out = ["<p>"]
    for p in parts:
        if isinstance(p, str):
            out.append(_x(p))
        elif isinstance(p, Cite):
            out.append(_tei_cite(p, paper, rng))
        else:
            out.append(f'<ref type="figure" target="#fig_{p.n - 1}">{p.n}</ref>')
    out.append("</p>")
    return "".join(out)


def tei_xml(paper: PaperText, seed: int = 0) -> bytes:
    """The paper as Grobid 0.8 would write it (what ``corpus.parse.tei.parse_tei`` reads)."""
    rng = random.Random(f"{seed}:tei:{paper.id}")
    numbered = rng.random() < 0.8
    authors = "".join(
        f'<author>{_pers(f, last)}<affiliation key="aff0"><orgName type="institution">'
        f"Institute {k % 3 + 1}</orgName></affiliation></author>\n"
        for k, (f, last) in enumerate(paper.authors)
        if f  # collaborations without forenames are not persons to Grobid
    )
    out = [
        _TEI_OPEN,
        f'\t<teiHeader xml:lang="{paper.lang}">\n\t\t<fileDesc>\n\t\t\t<titleStmt>\n',
        f'\t\t\t\t<title level="a" type="main">{_x(paper.title)}</title>\n\t\t\t</titleStmt>\n',
        "\t\t\t<publicationStmt>\n\t\t\t\t<publisher/>\n",
        '\t\t\t\t<availability status="unknown"><licence/></availability>\n',
        f'\t\t\t\t<date type="published" when="{paper.year}">{paper.year}</date>\n',
        "\t\t\t</publicationStmt>\n\t\t\t<sourceDesc>\n\t\t\t\t<biblStruct>\n\t\t\t\t\t<analytic>\n",
        authors,
        f'\t\t\t\t\t\t<title level="a" type="main">{_x(paper.title)}</title>\n\t\t\t\t\t</analytic>\n',
        "\t\t\t\t\t<monogr><imprint><date/></imprint></monogr>\n",
        f'\t\t\t\t\t<idno type="arXiv">arXiv:{paper.id}</idno>\n',
        "\t\t\t\t</biblStruct>\n\t\t\t</sourceDesc>\n\t\t</fileDesc>\n",
        "\t\t<encodingDesc>\n\t\t\t<appInfo>\n",
        f'\t\t\t\t<application version="{GROBID_VERSION}" ident="GROBID" when="{paper.year + 1}-01-01T00:00+0000">\n',
        "\t\t\t\t\t<desc>GROBID - A machine learning software for extracting information from scholarly "
        'documents</desc>\n\t\t\t\t\t<ref target="https://github.com/kermitt2/grobid"/>\n',
        "\t\t\t\t</application>\n\t\t\t</appInfo>\n\t\t</encodingDesc>\n",
        f"\t\t<profileDesc>\n\t\t\t<abstract>\n<div{_NS}><p>{_x(paper.abstract)}</p></div>\n",
        "\t\t\t</abstract>\n\t\t</profileDesc>\n\t</teiHeader>\n",
        f'\t<text xml:lang="{paper.lang}">\n\t\t<body>\n',
    ]
    for s_i, sec in enumerate(paper.sections):
        head = f'<head n="{s_i + 1}">' if numbered else "<head>"
        body = [f"<div{_NS}>{head}{_x(sec.title)}</head>"]
        for p_i, parts in enumerate(sec.paragraphs):
            body.append(_tei_paragraph(parts, paper, rng))
            if s_i == 1 and p_i == 0:
                body.append(
                    f'<formula xml:id="formula_0">{_x(paper.equation[1])}<label>(1)</label></formula>'
                )
        out.append("".join(body) + "</div>\n")
    for n, caption in enumerate(paper.figures, 1):
        out.append(
            f'<figure{_NS} xml:id="fig_{n - 1}"><head>Figure {n} .</head><label>{n}</label>'
            f"<figDesc>Figure {n}. {_x(caption)}</figDesc></figure>\n"
        )
    out.append("\t\t</body>\n\t\t<back>\n")
    out.append(f'<div{_NS} type="acknowledgement">\n<div><head>Acknowledgements</head>')
    out.append("<p>We thank our colleagues for helpful discussions.</p></div>\n</div>\n")
    out.append('\t\t\t<div type="references">\n\n\t\t\t\t<listBibl>\n\n')
    out.extend(_tei_bibl(paper, i) for i in range(len(paper.bib)))
    out.append("\t\t\t\t</listBibl>\n\t\t\t</div>\n\t\t</back>\n\t</text>\n</TEI>\n")
    return "".join(out).encode("utf-8")


# ---------------------------------------------------------------- LaTeX

_TEX_SPECIAL = str.maketrans({"%": r"\%", "&": r"\&", "#": r"\#", "_": r"\_"})


def _tex(s: str) -> str:
    """Escape text, leaving ``$...$`` math alone."""
    if "$" not in s:
        return s.translate(_TEX_SPECIAL)
    pieces = s.split("$")
    return "$".join(p if i % 2 else p.translate(_TEX_SPECIAL) for i, p in enumerate(pieces))


def _ascii(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower()


def _keys(paper: PaperText) -> list[str]:
    seen: Counter[str] = Counter()
    keys = []
    for b in paper.bib:
        base = "".join(c for c in _ascii(b.authors[0][1] if b.authors else "anon") if c.isalpha()) or "anon"
        base = f"{base}{b.year}"
        seen[base] += 1
        keys.append(base if seen[base] == 1 else f"{base}{chr(96 + seen[base])}")
    return keys


def _tex_names(authors: list[tuple[str, str]]) -> str:
    names = [f"{f}~{last}".strip("~") for f, last in authors]
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


def _bbl(paper: PaperText, keys: list[str]) -> str:
    out = [f"\\begin{{thebibliography}}{{{len(paper.bib)}}}\n"]
    natbib = paper.style == "NAME-YEAR"
    for b, key in zip(paper.bib, keys, strict=True):
        if natbib:
            short = cite_label(b, narrative=True).replace(" et al.", " et~al.")
            full = ", ".join(last for _, last in b.authors)
            out.append(f"\n\\bibitem[{_tex(short)}{_tex(full)}]{{{key}}}\n")
        else:
            out.append(f"\n\\bibitem{{{key}}}\n")
        out.append(f"{_tex(_tex_names(b.authors))}.\n")
        if b.title:
            out.append(f"\\newblock {_tex(b.title)}.\n")
        out.append(f"\\newblock {{\\em {_tex(b.venue)}}}, {b.year}.\n")
        if b.arxiv_id:
            out.append(f"\\newblock arXiv:{b.arxiv_id}.\n")
        if b.doi:
            out.append(f"\\newblock doi:{b.doi}.\n")
    out.append("\n\\end{thebibliography}\n")
    return "".join(out)


def _tex_paragraph(parts: list, paper: PaperText, keys: list[str]) -> str:
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(_tex(p))
        elif isinstance(p, Cite):
            ks = ",".join(keys[i] for i in p.refs)
            if paper.style == "BRACKET":
                out[-1:] = [out[-1].rstrip() + "~"] if out else []
                out.append(f"\\cite{{{ks}}}")
            elif p.narrative:
                out.append(f"\\citet{{{ks}}}")
            else:
                out.append(f"\\citep{{{ks}}}")
        elif isinstance(p, FigRef):
            out[-1:] = [out[-1].rstrip() + "~"] if out else []
            out.append(f"\\ref{{fig:{p.n}}}")
    return "".join(out)


def latex_files(paper: PaperText, split_input: bool, inline_bib: bool) -> dict[str, str]:
    """The e-print's files: ``main.tex`` (+ ``sections/body.tex`` when ``split_input``) and
    ``main.bbl`` (or an inline ``thebibliography`` when ``inline_bib``)."""
    keys = _keys(paper)
    natbib = paper.style == "NAME-YEAR"
    authors = " \\and ".join(_tex(f"{f} {last}".strip()) for f, last in paper.authors[:8])
    pre = [
        "\\documentclass[11pt]{article}\n",
        "\\usepackage[utf8]{inputenc}\n\\usepackage{amsmath,amssymb}\n\\usepackage{graphicx}\n",
        "\\usepackage[round]{natbib}\n" if natbib else "",
        "\\newcommand{\\R}{\\mathbb{R}}\n",
        f"\\title{{{_tex(paper.title)}}}\n\\author{{{authors}}}\n\n\\begin{{document}}\n\\maketitle\n\n",
        f"\\begin{{abstract}}\n{_tex(paper.abstract)}\n\\end{{abstract}}\n\n",
    ]
    sections = []
    for s_i, sec in enumerate(paper.sections):
        chunk = [f"\\section{{{_tex(sec.title)}}}\\label{{sec:{s_i + 1}}}\n\n"]
        for p_i, parts in enumerate(sec.paragraphs):
            chunk.append(_tex_paragraph(parts, paper, keys) + "\n\n")
            if s_i == 1 and p_i == 0:
                chunk.append(
                    f"\\begin{{equation}}\n{paper.equation[0]}\n\\label{{eq:main}}\n\\end{{equation}}\n\n"
                )
                for n, caption in enumerate(paper.figures, 1):
                    chunk.append(
                        "\\begin{figure}[t]\n\\centering\n"
                        f"\\includegraphics[width=0.8\\linewidth]{{fig{n}.pdf}}\n"
                        f"\\caption{{{_tex(caption)}}}\n\\label{{fig:{n}}}\n\\end{{figure}}\n\n"
                    )
        sections.append("".join(chunk))
    style = "plainnat" if natbib else "plain"
    bib = _bbl(paper, keys) if inline_bib else f"\\bibliographystyle{{{style}}}\n\\bibliography{{refs}}\n"
    tail = f"\n{bib}\n\\end{{document}}\n"
    files: dict[str, str] = {}
    if split_input and len(sections) > 1:
        files["main.tex"] = "".join(pre) + sections[0] + "\\input{sections/body}\n" + tail
        files["sections/body.tex"] = "".join(sections[1:])
    else:
        files["main.tex"] = "".join(pre) + "".join(sections) + tail
    if not inline_bib:
        files["main.bbl"] = _bbl(paper, keys)
    return files


def _tar_gz(files: dict[str, bytes], mtime: int) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), mtime, 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(buf.getvalue(), compresslevel=6, mtime=mtime)


def _src_plan(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.62:
        return "tar"
    if r < 0.80:
        return "tar_input"
    if r < 0.94:
        return "gzip_tex"
    return ("unsafe_path", "pdf_only", "no_main_tex")[int(rng.random() * 3)]


# ---------------------------------------------------------------- the writer


class FullTextWriter:
    """PDF / TEI / e-print files for each record (once per id), plus the manifest.

    Use as ``generate_landing(..., also=[w.write])`` then ``w.close()``, or pass
    ``full_text=True`` to :func:`corpus.sample.landing_zone.generate_landing`, which does both.
    ``pdf_share``, ``src_share`` and ``tei_share`` (of passing PDFs) set the coverage."""

    def __init__(
        self,
        out: str | Path,
        seed: int = 0,
        pdf_share: float = 0.7,
        src_share: float = 0.4,
        tei_share: float = 0.85,
        plant_share: float = 0.015,
    ):
        self.root = Path(out)
        self.seed = seed
        self.pdf_share, self.src_share, self.tei_share, self.plant_share = (
            pdf_share,
            src_share,
            tei_share,
            plant_share,
        )
        self.pool: list[PoolPaper] = []
        self.weights: list[int] = []
        self.index: dict[str, int] = {}
        self.done: set[str] = set()
        self.stats: Counter[str] = Counter()
        self.rng = random.Random(f"{seed}:pool")
        for sub in ("pdf", "tei", "src"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self._manifest_tmp = self.root / f".{MANIFEST}.tmp"
        self._fh = open(self._manifest_tmp, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def _plant(self, rng: random.Random) -> str | None:
        """Papers 10, 20 ... 50 carry one planted failure each (so even a small demo has all
        of them), later ones at ``plant_share``."""
        n = len(self.done)
        if n % 10 == 0 and 10 <= n <= 10 * len(PLANTS):
            return PLANTS[n // 10 - 1]
        if n <= 10 * len(PLANTS) or rng.random() >= self.plant_share:
            return None
        return PLANTS[int(rng.random() * len(PLANTS))]

    def write(self, rec: ArxivRecord) -> None:
        if rec.id in self.done:  # a revision: same paper, same files; a DOI may have appeared
            i = self.index.get(rec.id)
            if i is not None and rec.doi and not self.pool[i].doi:
                self.pool[i].doi = rec.doi
            return
        self.done.add(rec.id)
        rng = random.Random(f"{self.seed}:files:{rec.id}")
        authors = [(a.forenames, a.keyname) for a in rec.authors]
        fld = _field(rec.categories[0])
        year = rec.created.year
        plant = self._plant(rng)
        paper = make_paper(
            rec.id, rec.title, rec.abstract, authors, year, fld, self.seed, self.pool, self.weights, plant
        )
        name = arxiv_ids.to_file_name(rec.id)
        entry: dict = {"id": rec.id, "style": paper.style, "plant": plant, "lang": paper.lang}
        if rng.random() < self.pdf_share or plant:  # planted papers always reach the filters
            plan = _pdf_plan(rng)
            if plant:
                plan.update(plan="portrait", pages=8, size=LETTER, rotate=0)
            lines = [
                paper.title,
                ", ".join(f"{f} {last}".strip() for f, last in authors[:6]),
                f"arXiv:{rec.id}",
            ]
            data = pdf_bytes(plan["pages"], plan["size"], lines, plan["rotate"], plan["plan"] == "corrupt")
            _write(self.root / "pdf" / f"{name}.pdf", data)
            entry["pdf"] = {"plan": plan["plan"], "pages": plan["pages"], "size": list(plan["size"]),
                            "rotate": plan["rotate"]}  # fmt: skip
            self.stats[f"pdf_{plan['plan']}"] += 1
            if pdf_passes(plan) and (rng.random() < self.tei_share or plant):
                _write(self.root / "tei" / f"{name}.tei.xml", tei_xml(paper, self.seed))
                entry["tei"] = True
                self.stats["tei"] += 1
        if rng.random() < self.src_share:
            src = _src_plan(rng)
            self._write_src(paper, name, src, rng, rec)
            entry["src"] = src
            self.stats[f"src_{src}"] += 1
        entry["cites"] = [[b.cited_id, b.kind] for b in paper.bib if b.cited_id]
        entry["outside_refs"] = sum(1 for b in paper.bib if not b.cited_id)
        entry["arxiv_mentions"] = paper.arxiv_mentions
        if plant:
            self.stats[f"plant_{plant}"] += 1
        self._fh.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._remember(rec, paper, fld)

    def _remember(self, rec: ArxivRecord, paper: PaperText, fld: str) -> None:
        for b in paper.bib:
            if b.cited_id is not None and b.cited_id in self.index and len(self.weights) < _WEIGHT_CAP:
                self.weights.append(self.index[b.cited_id])
        item = PoolPaper(rec.id, rec.title, paper.authors[:4], paper.year, VENUES[fld][0], rec.doi)
        if len(self.pool) < _POOL_CAP:
            self.index[rec.id] = len(self.pool)
            self.pool.append(item)
        else:  # bounded memory: replace a random earlier paper
            j = self.rng.randrange(_POOL_CAP)
            self.index.pop(self.pool[j].id, None)
            self.pool[j] = item
            self.index[rec.id] = j
        self.stats["papers"] += 1

    def _write_src(
        self, paper: PaperText, name: str, plan: str, rng: random.Random, rec: ArxivRecord
    ) -> None:
        mtime = 1_200_000_000 + (rec.created.toordinal() - 733_000) * 86_400
        folder = self.root / "src"
        if plan == "pdf_only":
            _write(folder / f"{name}.pdf", pdf_bytes(6, LETTER, [paper.title]))
            return
        if plan == "gzip_tex":
            text = latex_files(paper, split_input=False, inline_bib=True)["main.tex"]
            _write(folder / f"{name}.gz", gzip.compress(text.encode(), compresslevel=6, mtime=mtime))
            return
        files = latex_files(paper, split_input=plan == "tar_input", inline_bib=False)
        data = {k: v.encode("utf-8") for k, v in files.items()}
        for n in range(1, len(paper.figures) + 1):
            data[f"fig{n}.pdf"] = pdf_bytes(1, (300.0, 200.0), [])
        if plan == "unsafe_path":
            data["../outside.tex"] = b"% written outside the archive\n"
        elif plan == "no_main_tex":
            data = {"macros.sty": b"\\newcommand{\\R}{\\mathbb{R}}\n", "notes.txt": b"source not included\n"}
        _write(folder / f"{name}.tar.gz", _tar_gz(data, mtime))

    def close(self) -> None:
        """Finish the manifest (atomically); call once after the last record."""
        if self._fh.closed:
            return
        self._fh.close()
        os.replace(self._manifest_tmp, self.root / MANIFEST)

    def summary(self) -> dict:
        return dict(sorted(self.stats.items()))


def plain_text(paper: PaperText) -> str:
    """The paper body as plain text (sections and paragraphs), e.g. for language checks."""
    return "\n\n".join(render_plain(p, paper) for s in paper.sections for p in s.paragraphs)
