"""LaTeX source -> the S2ORC-style :class:`~corpus.parse.document.StructuredDoc` (``source="latex"``).

pylatexenc turns LaTeX into text at ~120-190 kB/s here, too slow for whole papers, so the
document is read by a token front end (TeX's mouth and gullet, as LaTeXML splits them) and then
structured with compiled regexes and a brace matcher, one concern per module:

1. the front end, read as TeX reads it: :mod:`~corpus.parse.latex.tokens` (verbatim, category
   codes, tokens), :mod:`~corpus.parse.latex.recovery` (braces repaired as TeX recovers from
   them), :mod:`~corpus.parse.latex.expand` (the paper's macros, from
   :mod:`~corpus.parse.latex.definitions`, expanded as token lists; its conditionals decided by
   :mod:`~corpus.parse.latex.conditionals`; math shifts paired and font switches applied by
   :mod:`~corpus.parse.latex.modes`), written back as regular LaTeX for the stages below;
   :mod:`~corpus.parse.latex.glossary`: glossary and acronym references;
2. :mod:`~corpus.parse.latex.environments`: figures, tables, listings and display equations
   cut out of the body, kept as ``ref_entries`` (FIGREFn, TABREFn, LSTREFn, EQREFn: equations
   numbered by :mod:`~corpus.parse.latex.equations` and anchored in their paragraph by an
   equation span); :mod:`~corpus.parse.latex.front`: the title, the abstract, and the front
   matter left out;
3. :mod:`~corpus.parse.latex.sections`: the body split at headings (nested titles joined
   with ``::``); :mod:`~corpus.parse.latex.numbering`: one walk of the paper in document order
   steps its counters as LaTeX steps them (:mod:`~corpus.parse.latex.counters`: the class's own
   numbering), numbers headings, floats and equations, and gives each label its target;
4. :mod:`~corpus.parse.latex.paragraphs`: paragraphs at blank lines / ``\\par`` /
   ``\\item`` (never at single line breaks, the cause of S2ORC's 93 "paragraphs" per LaTeX
   paper); commands whose arguments are no text dropped by one table
   (:mod:`~corpus.parse.latex.commands`); cite and ref commands become spans
   (:mod:`~corpus.parse.latex.cites` and :mod:`~corpus.parse.latex.refs`, printed as the paper prints them:
   :mod:`~corpus.parse.latex.style`), the text between converted by
   :mod:`~corpus.parse.latex.text` (math accents and alphabets: :mod:`~corpus.parse.latex.math_symbols`).

Footnotes are paragraphs of their own, appended to the body with section ``""`` (as
:mod:`corpus.parse.tei` does with Grobid's). Bibliographies are read by
:mod:`corpus.parse.latex.bib.sources` and :mod:`corpus.parse.latex.bib.entries`.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from corpus.ingest.eprint import EprintError, Failure, LatexSource, UnpackLimits, UnpackResult, load_eprint
from corpus.parse.document import StructuredDoc
from corpus.parse.latex.bib.entries import alpha_labels, parse_bib_file, parse_bibliography
from corpus.parse.latex.bib.sources import bibliography
from corpus.parse.latex.cites import DEFCITEALIAS_RE, quotations
from corpus.parse.latex.commands import drop_definitions, knowledge_quotes
from corpus.parse.latex.counters import (
    class_counters,
    decide_switches,
    document_class,
    package_options,
    take_the_definitions,
    with_options,
)
from corpus.parse.latex.environments import take_out, user_environments
from corpus.parse.latex.expand import expand_source
from corpus.parse.latex.front import front_line, front_matter, title
from corpus.parse.latex.glossary import glossary
from corpus.parse.latex.labels import class_theorems, theorems
from corpus.parse.latex.numbering import Document, number, strip_marks
from corpus.parse.latex.paragraphs import INTERPRETED, convert, paragraphs
from corpus.parse.latex.recovery import balance_braces
from corpus.parse.latex.refs import ref_names
from corpus.parse.latex.sections import name_sections, split_sections, with_heads
from corpus.parse.latex.spans import Context
from corpus.parse.latex.style import cite_mode
from corpus.parse.latex.text import (
    _plain,
    _pylatexenc,  # noqa: F401  (benchmarks/latex_parse.py clears its cache)
    latex_to_text,
)

__all__ = [
    "LatexError",
    "LatexParseResult",
    "balance_braces",
    "latex_to_text",
    "parse_bib_file",
    "parse_bibliography",
    "parse_eprint",
    "parse_latex",
]

# 2: issue 27 (brace recovery, cite modes, labels, symbols, .bib via bibtexparser); 3: rows name the
# parser (PARSER_NAME), not its version, which the partition's provenance records (corpus.store);
# 4: issue 34 (math accents and alphabets, one argument table, theorem headings, citation forms,
# front matter, bibliography fields, equations kept as spans, unclosed environments recovered);
# 5: issue 43's token front end (macros as token lists, conditionals and math shifts as TeX reads
# them, font switches in groups); 6: issues 43/44 on top of it: counters stepped as LaTeX steps
# them in one walk (\label takes the current label anywhere, class numbering and appendices,
# secnumdepth, refs in headings, hyperref and cleveref names); layout commands, front matter,
# abstracts and maths where LaTeX puts them; every printed bibliography list read, bibliography
# fields and VTeX markup, citation labels and natbib's mode from what it is told; 7: a shipped
# package's option code, trackchanges; 8: a ref or cite inside inline math cuts no math shift loose;
# 9: a macro body's line end is a space (a body on a new line makes no blank line where it is used)
PARSER_VERSION = "corpus.parse.latex/9"
# What a LaTeX document's ``parser_version`` says. Not the version: a version in every row would
# change every LaTeX paper's rows at each bump, so nothing downstream could tell a fix that
# changes three papers from one that changes none (corpus.provenance).
PARSER_NAME = "corpus.parse.latex"
LatexError = EprintError  # per-paper failures carry a code, like the e-print ones
_NO_WORDS = re.compile(r"[\W\d_]*")
SKIPPED_CODES = frozenset({"pdf_only", "ps_only", "pdf_wrapper"})  # no LaTeX to parse, by design


def parse_latex(source: LatexSource, paper_id: str, warnings: list[str] | None = None) -> StructuredDoc:
    """One paper's LaTeX -> :class:`StructuredDoc`; raises :class:`LatexError` (codes
    ``unbalanced_braces`` past repair, ``macro_blowup``) for broken input. What TeX recovers
    from (unbalanced braces, an environment never closed) is repaired as TeX does and
    appended to ``warnings``."""
    names = ref_names(source.text)  # as written: \renewcommand{\sectionautorefname}{Section}, \let
    # \renewcommand{\thefigure}: a mark the counter walk reads where it stands (the front end
    # would make it a definition, its place lost)
    marked, the_defs = take_the_definitions(source.text)
    cls, options = document_class(source.text)
    loaded = package_options(source.text)
    # the e-print's own .sty files with the code of the options they are given (the class's are
    # global: every package sees them), as \ProcessOptions runs it: read for their macros and counters
    packages = {
        name: with_options(package, loaded.get(name[:-4], options)) if name.endswith(".sty") else package
        for name, package in source.packages.items()
    }
    optioned = source.model_copy(update={"text": marked, "packages": packages})
    text, environments = expand_source(optioned, INTERPRETED, warnings)
    text = glossary(text)
    scripts = [  # their counters (jheppub's \numberwithin)
        take_the_definitions(decide_switches(package))
        for name, package in packages.items()
        if name.endswith(".sty")
    ]
    begin = re.search(r"\\begin\s*\{document\}", text)
    preamble, body = (text[: begin.start()], text[begin.end() :]) if begin else ("", text)
    end = re.search(r"\\end\s*\{document\}", body)
    body = body[: end.start()] if end else body
    body = drop_definitions(body)  # \fancypagestyle, \titlespacing: no text where given, no heading
    body = knowledge_quotes(preamble, body)
    body = quotations(body)  # csquotes: the keys its quotations cite are cited keys

    items, from_bbl = bibliography(source, body, "\n".join(environments))
    labels_author_year = sum(1 for it in items if it.short) * 2 >= len(items) > 0 if from_bbl else None
    mode = cite_mode(preamble, text, source.packages, labels_author_year)
    bib = {it.key.lower(): it for it in reversed(items)}  # BibTeX matches keys whatever their case
    bib.update({it.key: it for it in items})
    if mode.alpha and not from_bbl:
        alpha_labels(items, mode.alpha_style)
    ctx = Context(bib=bib, style=mode.style, cite_form=mode.cite, numbers=mode.numbers, cite_as=mode.cite_as)
    ctx.alpha, ctx.alpha_style = mode.alpha, mode.alpha_style
    ctx.ref_names = names
    for m in DEFCITEALIAS_RE.finditer(text):
        ctx.aliases[m.group(1).strip()] = ctx.aliases[m.group(1).strip().lower()] = _plain(m.group(2))
    doc = StructuredDoc(
        paper_id=paper_id,
        source="latex",
        title=title(preamble + body, body),
        bib_entries={it.entry.ref_id: it.entry for it in items},
        citation_style=ctx.style,  # type: ignore[arg-type]
        parser_version=PARSER_NAME,
    )

    definitions = "\n".join(
        [preamble, *environments, *source.packages.values()]
    )  # the paper's and its .sty's
    taken = take_out(body, user_environments(definitions, body), doc.ref_entries, warnings)
    ctx.equations = {k: e.latex or "" for k, e in doc.ref_entries.items() if e.type == "equation"}
    abstract_latex, front, body = front_matter(preamble, taken.body, taken.abstracts)
    segments, headings = split_sections(body)
    shipped = [source.packages.get(cls + ".cls", ""), *source.packages.values(), source.text]
    counted = Document(
        classes=class_counters(cls, options, any(h.level == 0 for h in headings), shipped),
        # declared anywhere (front matter too), then the class's own that the paper leaves undefined
        theorems=theorems(definitions + taken.body, class_theorems(cls, options)),
        regions=taken.regions,
        equations=taken.equations,
        the_defs=the_defs,
        alg_options=preamble,
        scripts=scripts,
    )
    heads = number(counted, preamble, front, body, headings, ctx.labels, doc.ref_entries)
    name_sections(segments, headings, doc.ref_entries, lambda latex: _title_text(latex, ctx))

    for chunk in abstract_latex:  # an ornament after a hand-made abstract ("⋈") is none of it
        doc.abstract.extend(paragraphs(chunk, ctx, "Abstract", None, _NO_WORDS.fullmatch))
    for n, seg in enumerate(segments):  # before the first heading, keyword and date lines are front matter
        paras = paragraphs(with_heads(seg, heads), ctx, seg.path, seg.num, front_line if n == 0 else None)
        (doc.back_matter if seg.back_matter else doc.body_text).extend(paras)
    for chunk in taken.acknowledgments:
        doc.back_matter.extend(paragraphs(chunk, ctx, "Acknowledgments", None))
    for ref_id, caption in taken.captions:  # cites in captions print as the paper prints them
        para = convert(strip_marks(caption), ctx) if caption.strip() else None
        doc.ref_entries[ref_id].text = para.text if para else ""
    doc.body_text.extend(ctx.footnotes)
    return doc


def _title_text(latex: str, ctx: Context) -> str:
    """A heading's title as it prints: its refs their numbers, its cites as the text's (its
    notes are no part of it)."""
    para = convert(latex, replace(ctx, footnotes=[], orphan_eqs=[], held_notes={}))
    return para.text if para is not None else _plain(latex)


# ----------------------------------------------------------------------------- whole e-print


class LatexParseResult(BaseModel):
    """One e-print through unpack + parse: a document or a failure, never an exception."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    paper_id: str
    kind: str
    doc: StructuredDoc | None = None
    failure: Failure | None = None
    main: str | None = None
    warnings: list[str] = []

    @property
    def status(self) -> str:
        """``ok`` (a document), ``skipped`` (no LaTeX to parse: PDF-only or PDF-wrapper
        e-prints) or ``failed``."""
        if self.doc is not None:
            return "ok"
        return "skipped" if self.failure is not None and self.failure.code in SKIPPED_CODES else "failed"


def parse_eprint(
    path: Path, paper_id: str, scratch: Path, limits: UnpackLimits | None = None, keep: bool = False
) -> LatexParseResult:
    """Unpack ``path`` into ``scratch``, parse it, and (unless ``keep``) empty ``scratch`` again."""
    unpacked: UnpackResult | None = None
    try:
        unpacked, source, failure = load_eprint(Path(path), Path(scratch), limits)
        kind = unpacked.kind
        if failure is not None or source is None:
            return LatexParseResult(paper_id=paper_id, kind=kind, failure=failure)
        warnings = list(source.warnings) + [f"non_utf8: {f} decoded as latin-1" for f in source.non_utf8]
        try:
            doc = parse_latex(source, paper_id, warnings)
        except LatexError as exc:
            return LatexParseResult(
                paper_id=paper_id, kind=kind, failure=exc.failure(), main=source.main, warnings=warnings
            )
        except (RecursionError, ValueError, IndexError) as exc:  # a parser bug must not sink the batch
            fail = Failure(code="parse_error", message=f"{type(exc).__name__}: {exc}")
            return LatexParseResult(
                paper_id=paper_id, kind=kind, failure=fail, main=source.main, warnings=warnings
            )
        return LatexParseResult(paper_id=paper_id, kind=kind, doc=doc, main=source.main, warnings=warnings)
    finally:
        if not keep and Path(scratch).exists():
            for child in Path(scratch).iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
