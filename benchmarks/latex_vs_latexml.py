"""The LaTeX parser against LaTeXML 0.8.7 on real papers: what each one reads, paper by paper.

    python benchmarks/latex_vs_latexml.py [--papers DIR] [--manifest TSV] [--cache DIR]
        [--only SLUG ...] [--report FILE] [--json FILE] [--top N]
        [--run-latexml | --latexml-only] [--expl3-cpu S]

A paper is an e-print (``<papers>/<slug>.tar.gz``) listed in the manifest
(``benchmarks/latex_papers.tsv``: slug, repository, commit, path of the main file, licence,
class, bibliography kind, field). Each e-print is the main file's folder at that commit, as an
author uploads it to arXiv: its TeX sources, .bib, .bbl, .sty, .cls and .bst files (and small
data files the text reads), without images or the folder's other documents.

Our parser (:func:`corpus.parse.latex.parse_eprint`, imported from the running venv, so each
worktree measures its own parser) runs on the e-print in a forked child, one paper at a time:
its CPU seconds (the parse alone) and peak RSS are the paper's own. The parent first parses a
few papers of the set in process (``WARM_PAPERS``), as a daily run's worker has by its second
paper: the modules a parse imports on first use (the .bib reader, ~0.2 s) and the regular
expressions it compiles are then not charged to whichever paper happens to need them first;
``--cold`` measures each child without that. LaTeXML runs as ``latexmlc
--post --format=xml --preload=[localrawstyles]latexml.sty`` (the paper's own .sty files read, the
TeX installation's only through LaTeXML's bindings, as ar5iv does) on the manifest's main file,
niced, under CPU, memory and wall limits; ``--expl3-cpu S`` stops a run still loading expl3
after S CPU seconds (LaTeXML 0.8.7 digests ``expl3-code.tex`` for minutes). Its XML and status
are cached under ``<cache>/<sha>-latexml<version>-<options>``, keyed by the e-print's content
hash, failures included. By default only the cache is read (LaTeXML is slow and the machine
shared); ``--run-latexml`` converts what is missing first, ``--latexml-only`` only converts.

What is compared, like with like:
* body text, as word tokens (NFKC, case-folded, runs of letters or digits; a word split by a
  font change stays one): our ``body_text`` and ``back_matter`` paragraphs, the footnote
  paragraphs (section ``""``, appended by the parser) last; LaTeXML's sections and appendices in
  order, its acknowledgements after them and its footnotes last, as ours are. Left out on both
  sides: the title, authors, abstract, keywords and other front matter; section headings
  (compared on their own); figure and table floats with their captions (compared on their
  own), tabulars and verbatim text; display equations; the bibliography; the references a
  citation or a ref prints (ours: the cite and ref spans' text; LaTeXML: its ``ltx:ref``
  elements and, in a citation, the cited items' author names), compared on their own. What a
  citation prints besides (``\\citep[see e.g.][p. 5]``) stays on both sides. Inline maths stays
  too: ours prints it as text; LaTeXML's is its presentation tokens (``XMTok``, ``XMText``) in
  reading order, a product of letters written together (``ds``), scripts apart from their base
  and accents on their letter (``ĥ``). Theorem heads ("Lemma 1.") are text on both sides.
  LaTeXML's ``ltx:ERROR`` (an undefined macro's name) is left out and counted.
* the alignment: :class:`difflib.SequenceMatcher` on the two token lists, without its junk
  heuristic (which drops frequent words and miscounts); *lost* is the share of LaTeXML's tokens
  in no matching block, *extra* the share of ours in none. Two readings that differ only in
  where words break ("d s d t" / "ds dt") agree, and a run of at least ``MOVED`` tokens that the
  other side has elsewhere (text in another order) is neither lost nor extra. The disagreeing
  passages shown are the largest unmatched blocks.
* a paper where LaTeXML read less than half of our words (a class or package it could not
  digest) is listed apart and left out of the token figures: the loss is LaTeXML's.
* headings: LaTeXML's ``title`` of every sectioning element (part .. subparagraph, appendix)
  against our ``SECREF`` entries, aligned by normalised title; matched ones also by number.
* citations: LaTeXML's ``ltx:ref`` inside ``ltx:cite`` pointing at a bibliography item
  (resolved) or not; ours: cite spans, resolved when their ``ref_id`` names a bibliography
  entry. A paper agrees when both count the same citations and ours resolves at least as many.
* refs: the numbers internal refs print, in order (LaTeXML's ``ref_tag``), against ours (ref
  span texts without brackets), aligned; a label LaTeXML cannot find counts as ``??``.
* bibliography sizes, abstract tokens (lost/extra), captions' tokens (lost/extra), titles.
* CPU: ours per paper, the parse alone, in its child; LaTeXML's from the cache (user + system
  of its process); the ratio is over the papers both converted.

Ends with ``RESULT papers=.. ours_parsed=.. latexml_parsed=.. median_lost=.. ...``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import difflib
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lxml import etree

import corpus
from corpus.parse.latex import PARSER_VERSION, parse_eprint

HERE = Path(__file__).resolve().parent
SCRATCH = Path(os.environ.get("LATEX_PAPERS_SCRATCH", "/work/scratch"))
LATEXML_OPTIONS = ["--post", "--format=xml", "--nocomments", "--preload=[localrawstyles]latexml.sty"]
LATEXML_CPU_S = 150
LATEXML_WALL_S = 1800
LATEXML_MEMORY = 3 * 2**30
OURS_WALL_S = 300
NS = "{http://dlmf.nist.gov/LaTeXML}"
_WORD = re.compile(r"[^\W_]+")


# ---------------------------------------------------------------------------------------------
# tokens and alignment


def surface(text: str) -> list[str]:
    """Word tokens as printed: NFKC (math alphabets to letters), runs of letters or digits."""
    return _WORD.findall(unicodedata.normalize("NFKC", text))


def words(text: str) -> list[str]:
    """Word tokens as compared: :func:`surface`'s, case-folded."""
    return [t.casefold() for t in surface(text)]


@dataclass
class Alignment:
    """How two token lists align: tokens of ``ref`` (LaTeXML) unmatched, of ``ours`` unmatched,
    and the unmatched blocks largest first as (lost words, extra words)."""

    ref_n: int
    ours_n: int
    lost: int
    extra: int
    blocks: list[tuple[list[str], list[str]]] = field(default_factory=list)

    @property
    def lost_share(self) -> float:
        return self.lost / self.ref_n if self.ref_n else 0.0

    @property
    def extra_share(self) -> float:
        return self.extra / self.ours_n if self.ours_n else 0.0


def align(
    ref: list[str],
    ours: list[str],
    keep: int = 8,
    ref_shown: list[str] | None = None,
    ours_shown: list[str] | None = None,
) -> Alignment:
    """Align ``ours`` to ``ref`` token by token (no junk heuristic: a frequent word counts as
    any other) and keep the ``keep`` largest disagreeing blocks. Two readings that differ only
    in where words break ("d s d t" and "ds dt": a formula's spacing) agree, and so does a run of
    at least ``MOVED`` tokens that one side has elsewhere (a block placed in another order, such
    as acknowledgements before or after the appendix): neither is text lost or added."""
    matcher = difflib.SequenceMatcher(None, ref, ours, autojunk=False)
    lost, extra = len(ref), len(ours)
    blocks = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and "".join(ref[i1:i2]) == "".join(ours[j1:j2])):
            lost, extra = lost - (i2 - i1), extra - (j2 - j1)
        else:
            blocks.append((ref[i1:i2], ours[j1:j2], i1, j1))
    lost_run = [t for a, _, _, _ in blocks for t in a]
    extra_run = [t for _, b, _, _ in blocks for t in b]
    moved = difflib.SequenceMatcher(None, lost_run, extra_run, autojunk=False).get_matching_blocks()
    moved_n = sum(b.size for b in moved if b.size >= MOVED)
    lost, extra = lost - moved_n, extra - moved_n
    blocks = [b for b in blocks if not _moved(b[:2], moved, lost_run, extra_run)]
    blocks.sort(key=lambda b: -(len(b[0]) + len(b[1])))
    ref_shown, ours_shown = ref_shown or ref, ours_shown or ours  # the words as printed, for the report
    blocks = [(ref_shown[i : i + len(a)], ours_shown[j : j + len(b)]) for a, b, i, j in blocks]
    return Alignment(len(ref), len(ours), max(lost, 0), max(extra, 0), blocks[:keep])


MOVED = 6


def _moved(block, moved, lost_run, extra_run) -> bool:
    """Whether a disagreeing block is (almost) all text the other side has elsewhere."""
    a, b = block
    if not a and not b:
        return True
    long = [m for m in moved if m.size >= MOVED]
    gone = sum(m.size for m in long if " ".join(lost_run[m.a : m.a + m.size]) in " ".join(a))
    came = sum(m.size for m in long if " ".join(extra_run[m.b : m.b + m.size]) in " ".join(b))
    return gone + came >= 0.9 * (len(a) + len(b))


def norm_title(text: str) -> str:
    return " ".join(words(text))


def norm_num(text: str) -> str:
    """A printed reference number as compared: brackets, "Section"/"Eq." words and spaces out."""
    text = unicodedata.normalize("NFKC", text).strip()
    text = re.sub(r"^(?:[^\W\d_]+\.?\s+)+(?=[\w(\[])", "", text)  # cleveref's "Section 2", "Fig. 6"
    text = re.sub(r"^[(\[]+|[)\]]+$", "", text)
    return text.replace(" ", "").replace("\u00a0", "")


# ---------------------------------------------------------------------------------------------
# the two views of a paper


@dataclass
class View:
    """What one parser read from a paper, in the shapes compared."""

    body: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)  # the body's words as printed (case kept)
    abstract: list[str] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    headings: list[tuple[str, str]] = field(default_factory=list)  # (number, title)
    cites: int = 0
    cites_resolved: int = 0
    refs: list[str] = field(default_factory=list)  # printed numbers, "" when unresolved
    bib: int = 0
    title: str = ""
    errors: int = 0


_SECTIONING = {
    "part",
    "chapter",
    "section",
    "subsection",
    "subsubsection",
    "paragraph",
    "subparagraph",
    "appendix",
}
_FRONT = {"title", "creator", "date", "abstract", "keywords", "classification", "subtitle", "toctitle"}
_SKIP = {
    "bibliography",
    "navigation",
    "resource",
    "equation",
    "equationgroup",
    "figure",
    "table",
    "float",
    "listing",
    "graphics",
    "tags",
    "tag",
    "indexmark",
    "rdf",
    "ERROR",
    "TOC",
    "index",
    "glossarydefinition",
    "tabular",
    "picture",
    "verbatim",
}
_UNRESOLVED_REF = {"", "?", "??"}


def _local(tag) -> str:
    return tag[len(NS) :] if isinstance(tag, str) and tag.startswith(NS) else ""


_INFIX = {"RELOP", "ADDOP", "MULOP", "ARROW", "METARELOP", "COMPOSEOP", "BINOP", "PUNCT", "MODIFIEROP"}
_SCRIPT = {"SUBSCRIPTOP", "SUPERSCRIPTOP", "FLOATSUBSCRIPT", "FLOATSUPERSCRIPT"}
_ACCENTS = {
    "^": "\u0302",
    "~": "\u0303",
    "˜": "\u0303",
    "¯": "\u0304",
    "˙": "\u0307",
    "¨": "\u0308",
    "ˇ": "\u030c",
    "→": "\u20d7",
    "˘": "\u0306",
    "´": "\u0301",
    "`": "\u0300",
}
_INVISIBLE = {"\u2062", "\u2061", "\u2063", "\u2064", ""}


def _math_text(math) -> str:
    """An inline formula as a text printing of it would read: the tokens in reading order, a
    product of letters written together ("ds", as ``$ds$`` prints), scripts apart from their
    base ("P ν" for ``P_\\nu``), each operator between its operands."""
    ids = {el.get(XMLID): el for el in math.iter() if el.get(XMLID)}

    def render(el, depth: int = 0) -> str:
        name = _local(el.tag)
        if depth > 200:
            return ""
        if name == "XMTok":
            return el.text or ""
        if name == "XMText":
            return "".join(el.itertext())
        if name == "XMRef":
            target = ids.get(el.get("idref"))
            return render(target, depth + 1) if target is not None else ""
        if name == "XMDual":
            kids = list(el)
            return render(kids[-1], depth + 1) if kids else ""
        if name == "XMHint":
            return ""
        kids = [k for k in el if _local(k.tag)]
        if name == "XMApp" and kids:
            op, args = kids[0], [render(k, depth + 1) for k in kids[1:]]
            role, text = op.get("role", ""), (op.text or "").strip() if _local(op.tag) == "XMTok" else None
            if role in _SCRIPT:
                return " ".join(args)
            if role in ("OVERACCENT", "UNDERACCENT") and len(args) == 1 and len(args[0].strip()) == 1:
                mark = _ACCENTS.get((op.text or "").strip(), "")  # \\hat{h} prints "ĥ", as ours does
                return unicodedata.normalize("NFC", args[0].strip() + mark)
            if text is not None and text in _INVISIBLE and role in ("MULOP", "APPLYOP", ""):
                return "".join(args)
            if role in _INFIX and text is not None:
                return f" {text} ".join(args)
            return " ".join([render(op, depth + 1), *args])
        return " ".join(render(k, depth + 1) for k in kids)

    xmath = math.find(NS + "XMath")
    return render(xmath) if xmath is not None else ""


def _text(el, skip=frozenset(_SKIP)) -> str:
    """The text of ``el`` as a reader sees it, formulas as their tokens, skipped parts out; a
    word split by a font change ("non-\\emph{linear}") stays one word, blocks stay apart."""
    parts: list[str] = []

    def walk(node) -> None:
        name = _local(node.tag)
        if name == "Math":
            parts.append(" " + _math_text(node) + " ")
        elif name not in skip and name not in ("cite", "note") and not (name == "ref" and _internal(node)):
            gap = "" if name in _INLINE else " "
            parts.append(gap + (node.text or ""))
            for kid in node:
                walk(kid)
                if kid.tail:
                    parts.append(kid.tail)
            parts.append(gap)

    if el.text:
        parts.append(el.text)
    for kid in el:
        walk(kid)
        if kid.tail:
            parts.append(kid.tail)
    return "".join(parts)


_INLINE = {"text", "emph", "sub", "sup", "glossaryref", "anchor", "ref", "del", "acronym"}


def _cite_notes(cite, names: dict[str, list[list[str]]]) -> list[str]:
    """The words a citation prints besides its references ("see e.g.", "Eq. (1)", "and references
    therein"): ours prints them outside its cite spans, so they are body text on both sides.
    LaTeXML prints author names as plain text: the cited items' names are taken out."""
    left = words(_text(cite, frozenset({"ref", "bibref"}) | _SKIP).replace("\u00a0", " "))
    for ref in cite.iter(NS + "ref"):
        for name in names.get(ref.get("idref"), []):
            if name and _sublist(left, name) is not None:
                i = _sublist(left, name)
                del left[i : i + len(name)]
                break
    return [w for w in left if w not in ("et", "al")]


def _sublist(hay: list[str], needle: list[str]) -> int | None:
    for i in range(len(hay) - len(needle) + 1):
        if hay[i : i + len(needle)] == needle:
            return i
    return None


def _internal(ref) -> bool:
    return bool(ref.get("labelref")) or (
        ref.get("idref") is not None and not ref.get("href", "").startswith("http")
    )


def _ref_number(ref) -> str:
    if "ltx_missing_label" in (ref.get("class") or ""):  # LaTeXML prints the label's key: TeX's "??"
        return "??"
    tags = ref.findall(f".//{NS}text[@class='ltx_ref_tag']")  # cleveref: "Section", "2"
    text = " ".join("".join(t.itertext()) for t in tags) if tags else "".join(ref.itertext())
    return norm_num(text)


def latexml_view(xml: bytes) -> View:
    """LaTeXML's post-processed XML -> :class:`View` (see the module docstring for the parts)."""
    root = etree.fromstring(xml, parser=etree.XMLParser(huge_tree=True, recover=True))
    view = View()
    bibkeys = {item.get(XMLID) for item in root.iter(NS + "bibitem")}
    names = {  # what a citation prints of each item: its (short and full) author names
        item.get(XMLID): [
            words(_text(tag, frozenset()))
            for tag in item.iter(NS + "tag")
            if tag.get("role") in ("authors", "fullauthors")
        ]
        for item in root.iter(NS + "bibitem")
    }
    view.bib = len(bibkeys)
    view.errors = sum(1 for _ in root.iter(NS + "ERROR"))
    title = root.find(NS + "title")
    view.title = _text(title) if title is not None else ""
    for abstract in root.iter(NS + "abstract"):
        view.abstract += words(_text(abstract))
    for float_ in root.iter(NS + "figure", NS + "table", NS + "float"):
        for cap in float_.findall(NS + "caption"):
            view.captions += words(_text(cap))
    body: list[str] = []
    notes: list[str] = []

    def walk(node, out: list[str]) -> None:
        """Text of ``node`` into ``out`` (footnotes into ``notes``), headings, cites and refs
        recorded on the way."""
        name = _local(node.tag)
        if not name:
            return
        if name in _SECTIONING:
            head = node.find(NS + "title")
            if head is not None:
                tag = head.find(NS + "tag")
                num = "".join(tag.itertext()).strip() if tag is not None else ""
                view.headings.append((num, " ".join(_text(head).split())))
        if name == "cite":
            for ref in node.iter(NS + "ref"):
                view.cites += 1
                view.cites_resolved += ref.get("idref") in bibkeys
            for missing in node.iter(NS + "bibref"):
                view.cites += len((missing.get("bibrefs") or "").split(","))
            out.append(" " + " ".join(_cite_notes(node, names)) + " ")
            return
        if name == "ref" and _internal(node):
            view.refs.append(_ref_number(node))
            return
        if name == "note":
            if node.get("role") == "footnote":
                notes.append(" ")
                for kid in node:
                    if _local(kid.tag) != "tags":
                        walk(kid, notes)
                    if kid.tail:
                        notes.append(kid.tail)
                notes.append(" ")
            return
        if name == "Math":
            if node.get("mode") == "inline":
                out.append(" " + _math_text(node) + " ")
            return
        theorem_head = name == "tag" and _local(node.getparent().tag) == "title"  # "Proposition 1."
        if (name in _SKIP and not theorem_head) or name in _FRONT and name != "title":
            return
        if name == "title" and _local(node.getparent().tag) in _SECTIONING | {"document"}:
            return
        gap = "" if name in _INLINE else " "
        out.append(gap + (node.text or ""))
        for kid in node:
            walk(kid, out)
            if kid.tail:
                out.append(kid.tail)
        out.append(gap)

    acknowledgements: list[str] = []
    for kid in root:
        name = _local(kid.tag)
        if name in _FRONT or name == "note":  # front matter, its notes (thanks, affiliations)
            continue
        walk(kid, acknowledgements if name == "acknowledgements" else body)
        if kid.tail:
            body.append(kid.tail)
    # ours keeps the acknowledgements after the body (back matter) and the footnotes last
    text = "".join(body) + " " + "".join(acknowledgements) + " " + "".join(notes)
    view.shown = surface(text)
    view.body = [t.casefold() for t in view.shown]
    return view


XMLID = "{http://www.w3.org/XML/1998/namespace}id"


def _without_spans(text: str, spans) -> str:
    """``text`` with the spans' characters taken out (a space in their place)."""
    out, pos = [], 0
    for span in sorted(spans, key=lambda s: s["start"]):
        if span["start"] >= pos:
            out.append(text[pos : span["start"]])
            pos = span["end"]
    out.append(text[pos:])
    return " ".join(out)


def ours_view(doc: dict) -> View:
    """Our StructuredDoc (as a dict) -> :class:`View`."""
    view = View(title=doc.get("title", ""))
    bib = doc.get("bib_entries", {})
    view.bib = len(bib)
    for p in doc.get("abstract", []):
        view.abstract += words(_without_spans(p["text"], p["cite_spans"] + p["ref_spans"]))
    paras = doc.get("body_text", [])
    tail = len(paras)
    while tail and paras[tail - 1].get("section", "") == "":  # footnotes: appended, section ""
        tail -= 1
    tail = tail or len(paras)
    # our footnotes (section "") follow the body; the back matter goes before them, as LaTeXML has it
    for p in paras[:tail] + doc.get("back_matter", []) + paras[tail:]:
        view.shown += surface(_without_spans(p["text"], p["cite_spans"] + p["ref_spans"]))
        view.cites += len(p["cite_spans"])
        view.cites_resolved += sum(1 for s in p["cite_spans"] if s.get("ref_id") in bib)
        view.refs += [norm_num(s["text"]) for s in p["ref_spans"]]
    view.body = [t.casefold() for t in view.shown]
    for key, entry in doc.get("ref_entries", {}).items():
        if key.startswith("SECREF"):
            view.headings.append((entry.get("num") or "", " ".join(entry.get("text", "").split())))
        elif key.startswith(("FIGREF", "TABREF")):
            view.captions += words(entry.get("text", ""))
    return view


# ---------------------------------------------------------------------------------------------
# running the two parsers


@dataclass
class Run:
    """One parser's run on one paper: its status, cost and (when it converted) its view."""

    ok: bool = False
    status: str = ""
    cpu_s: float = 0.0
    wall_s: float = 0.0
    peak_mb: float = 0.0
    main: str = ""
    warnings: int = 0


def latexml_version() -> str:
    try:
        out = subprocess.run(["latexml", "--VERSION"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "none"
    m = re.search(r"version\s+([\w.]+)", out.stdout + out.stderr)
    return m.group(1) if m else "unknown"


def tex_installation() -> str:
    """The TeX packages LaTeXML's bindings read raw files from (pgf for TikZ, ...): their
    Debian versions, or "" where dpkg cannot tell."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", "texlive*"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return "\n".join(sorted(line for line in out.stdout.splitlines() if len(line.split()) == 2))


def cache_dir(cache: Path, eprint: Path, version: str, tex: str = "") -> Path:
    """Where LaTeXML's output for ``eprint`` is kept: keyed by its content, LaTeXML's version,
    the options and the TeX installation LaTeXML reads."""
    digest = hashlib.sha256(eprint.read_bytes()).hexdigest()[:20]
    options = hashlib.sha256((" ".join(LATEXML_OPTIONS) + "\n" + tex).encode()).hexdigest()[:6]
    return cache / f"{digest}-latexml{version}-{options}"


def _limits() -> None:  # in the child, before exec
    os.nice(5)
    resource.setrlimit(resource.RLIMIT_CPU, (LATEXML_CPU_S, LATEXML_CPU_S + 5))
    resource.setrlimit(resource.RLIMIT_AS, (LATEXML_MEMORY, LATEXML_MEMORY))


def _cpu_s(pid: int) -> float:
    """CPU seconds a running process has used so far (utime + stime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_latexml(eprint: Path, main: str, out: Path, expl3_cpu_s: float | None = None) -> Run:
    """LaTeXML on ``main`` of the unpacked e-print, limited; the XML and a ``run.json`` go to ``out``.
    With ``expl3_cpu_s``, a run still loading expl3 (LaTeXML 0.8.7 digests ``expl3-code.tex``
    for minutes, issue 43) after that many CPU seconds is stopped and said so."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="latexml-", dir=out.parent) as tmp:
        work = Path(tmp)
        with tarfile.open(eprint) as tar:
            tar.extractall(work, filter="data")
        dest = work / "latexml-out.xml"
        cmd = ["latexmlc", *LATEXML_OPTIONS, f"--timeout={LATEXML_WALL_S}", f"--dest={dest}", main]
        start = time.perf_counter()
        with open(out / "log.txt", "wb") as log:
            proc = subprocess.Popen(cmd, cwd=work, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_limits)
            deadline = start + LATEXML_WALL_S + 60
            stopped = ""
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                used = _cpu_s(proc.pid)
                if expl3_cpu_s is not None and used >= expl3_cpu_s and _loading_expl3(out / "log.txt"):
                    stopped = f"stopped: still loading expl3 after {used:.0f} CPU s"
                if time.perf_counter() > deadline or stopped:
                    proc.kill()
                    pid, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.5)
        proc.returncode = os.waitstatus_to_exitcode(status)
        run = Run(
            cpu_s=usage.ru_utime + usage.ru_stime,
            wall_s=time.perf_counter() - start,
            peak_mb=usage.ru_maxrss / 1024,
            main=main,
        )
        log_text = (out / "log.txt").read_text(errors="replace")
        if dest.exists() and dest.stat().st_size > 0 and b"<document" in dest.read_bytes()[:4000]:
            shutil.copyfile(dest, out / "out.xml")
            run.ok = True
            m = re.search(r"(Post-processing|Conversion) complete: ([^\n(]*)", log_text)
            run.status = m.group(2).strip() if m else "converted"
        elif stopped:
            run.status = stopped
        elif proc.returncode < 0 or run.cpu_s >= LATEXML_CPU_S - 1 or "timeout" in log_text[-2000:].lower():
            run.status = f"timeout (cpu {run.cpu_s:.0f} s, wall {run.wall_s:.0f} s)"
        else:
            fatal = re.findall(r"^(?:Fatal|Error):[^\n]*", log_text, re.M)
            run.status = "fatal: " + (fatal[-1][:160] if fatal else f"exit {proc.returncode}")
    (out / "run.json").write_text(json.dumps(asdict(run)))
    return run


def _loading_expl3(log: Path) -> bool:
    """Whether LaTeXML's log ends inside expl3's code (the last file it opened)."""
    try:
        with open(log, "rb") as fh:
            fh.seek(max(0, fh.seek(0, 2) - 3000))
            tail = fh.read().decode(errors="replace")
    except OSError:
        return False
    opened = re.findall(r"\(Processing definitions (\S+)", tail)
    return bool(opened) and "l3kernel" in opened[-1]


def cached_latexml(
    eprint: Path,
    main: str,
    cache: Path,
    version: str,
    convert: bool,
    expl3_cpu_s: float | None = None,
    tex: str = "",
) -> tuple[Run | None, Path]:
    where = cache_dir(cache, eprint, version, tex)
    if (where / "run.json").exists():
        return _partial(Run(**json.loads((where / "run.json").read_text()))), where
    if not convert:
        return None, where
    return _partial(run_latexml(eprint, main, where, expl3_cpu_s)), where


def _partial(run: Run) -> Run:
    """A conversion LaTeXML ended on a fatal error ("Too many errors") wrote part of the paper
    only: not a conversion to compare against."""
    if run.ok and re.search(r"\bfatal error", run.status):
        run.ok, run.status = False, "fatal: stopped part way (" + run.status[:100] + ")"
    return run


def _ours_child(eprint: Path, slug: str, scratch: Path, out: Path) -> None:
    try:
        start = time.process_time()
        res = parse_eprint(eprint, slug, scratch)
        payload = {
            "cpu_s": time.process_time() - start,
            "doc": res.doc.model_dump() if res.doc else None,
            "failure": f"{res.failure.code}: {res.failure.message}"[:200] if res.failure else "",
            "main": res.main or "",
            "warnings": len(res.warnings),
        }
    except Exception as exc:  # noqa: BLE001  (a crash is a result here, reported per paper)
        payload = {
            "doc": None,
            "failure": f"crash: {type(exc).__name__}: {exc}"[:200],
            "main": "",
            "warnings": 0,
        }
    out.write_text(json.dumps(payload))


WARM_PAPERS = 3


def warm_up(eprints: list[Path], scratch: Path) -> None:
    """Parse the first papers that have a .bib and the first that have none, in this process, so
    forked children start as a worker does after its first papers (see the module docstring)."""
    with_bib, without = [], []
    for eprint in eprints:
        if not eprint.exists():
            continue
        try:
            with tarfile.open(eprint) as tar:
                has_bib = any(name.endswith(".bib") for name in tar.getnames())
        except (tarfile.TarError, OSError):
            continue  # a broken e-print warms nothing; its own run reports it
        (with_bib if has_bib else without).append(eprint)
    for eprint in with_bib[: WARM_PAPERS - 1] + without[:1]:
        with contextlib.suppress(Exception):  # a warm-up only; the paper's own run reports it
            parse_eprint(eprint, eprint.name, scratch)


def run_ours(eprint: Path, slug: str, scratch: Path) -> tuple[Run, dict | None]:
    """Our parser on the e-print in a forked child: its own CPU seconds and peak RSS."""
    out = scratch / f"{slug}.json"
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: parse, write, leave without running the parent's cleanup
        code = 0
        try:
            _ours_child(eprint, slug, scratch / "unpack", out)
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    deadline = start + OURS_WALL_S
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() > deadline:
            os.kill(pid, 9)
            done, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.01)
    run = Run(
        cpu_s=usage.ru_utime + usage.ru_stime,
        wall_s=time.perf_counter() - start,
        peak_mb=usage.ru_maxrss / 1024,
    )
    if not out.exists():
        run.status = f"no result (exit {os.waitstatus_to_exitcode(status)}, wall {run.wall_s:.0f} s)"
        return run, None
    payload = json.loads(out.read_text())
    out.unlink()
    run.main, run.warnings = payload["main"], payload["warnings"]
    run.cpu_s = payload.get("cpu_s", run.cpu_s)  # the parse alone, not the JSON written after it
    run.ok = payload["doc"] is not None
    run.status = "parsed" if run.ok else payload["failure"]
    return run, payload["doc"]


# ---------------------------------------------------------------------------------------------
# comparing and reporting


@dataclass
class Paper:
    """One manifest row."""

    slug: str
    repository: str = ""
    commit: str = ""
    main: str = ""
    licence: str = ""
    doc_class: str = ""
    bibliography: str = ""
    field: str = ""


def tex_kb(eprint: Path) -> float:
    """Size of the e-print's TeX sources (.tex, .bbl, .bib), kB: what the parser reads."""
    with tarfile.open(eprint) as tar:
        return sum(m.size for m in tar.getmembers() if m.name.endswith((".tex", ".bbl", ".bib"))) / 1000


def read_manifest(path: Path) -> list[Paper]:
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return [
        Paper(
            r["slug"],
            r["repository"],
            r["commit"],
            r["main"],
            r["licence"],
            r["class"],
            r["bibliography"],
            r["field"],
        )
        for r in rows
    ]


def _pairs(ref: list[tuple[str, str]], ours: list[tuple[str, str]]) -> tuple[int, int]:
    """Headings agreeing by title, and of those, by number too."""
    a = [norm_title(t) for _, t in ref]
    b = [norm_title(t) for _, t in ours]
    titles = numbers = 0
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            titles += 1
            numbers += norm_num(ref[block.a + k][0]) == norm_num(ours[block.b + k][0])
    return titles, numbers


def compare(ref: View, ours: View) -> dict:
    """Per-paper figures of LaTeXML's view ``ref`` against ours (the report's columns)."""
    body = align(ref.body, ours.body, ref_shown=ref.shown, ours_shown=ours.shown)
    abstract = align(ref.abstract, ours.abstract, keep=0)
    captions = align(ref.captions, ours.captions, keep=0)
    titles, numbers = _pairs(ref.headings, ours.headings)
    ref_nums = [n for n in ref.refs]
    refs = difflib.SequenceMatcher(None, ref_nums, ours.refs, autojunk=False)
    refs_matched = sum(b.size for b in refs.get_matching_blocks())
    refs_diff = [
        [" ".join(ref_nums[i1:i2][:6]), " ".join(ours.refs[j1:j2][:6])]
        for tag, i1, i2, j1, j2 in refs.get_opcodes()
        if tag != "equal"
    ][:6]
    return {
        "tokens_latexml": body.ref_n,
        "tokens_ours": body.ours_n,
        "lost": round(body.lost_share, 4),
        "extra": round(body.extra_share, 4),
        "passages": [[" ".join(a[:60]), " ".join(b[:60]), len(a), len(b)] for a, b in body.blocks],
        "abstract_lost": round(abstract.lost_share, 4),
        "abstract_extra": round(abstract.extra_share, 4),
        "abstract_latexml": abstract.ref_n,
        "abstract_ours": abstract.ours_n,
        "captions_lost": round(captions.lost_share, 4),
        "captions_extra": round(captions.extra_share, 4),
        "headings_latexml": len(ref.headings),
        "headings_ours": len(ours.headings),
        "headings_title_agree": titles,
        "headings_number_agree": numbers,
        "cites_latexml": ref.cites,
        "cites_latexml_resolved": ref.cites_resolved,
        "cites_ours": ours.cites,
        "cites_ours_resolved": ours.cites_resolved,
        "refs_latexml": len(ref.refs),
        "refs_latexml_unresolved": sum(1 for n in ref.refs if n in _UNRESOLVED_REF),
        "refs_ours": len(ours.refs),
        "refs_ours_unresolved": sum(1 for n in ours.refs if n in _UNRESOLVED_REF),
        "refs_agree": refs_matched,
        "refs_diff": refs_diff,
        "bib_latexml": ref.bib,
        "bib_ours": ours.bib,
        "latexml_errors": ref.errors,
        "title_agree": norm_title(ref.title) == norm_title(ours.title),
        # LaTeXML read less than half of the text we read: its failure (a class or package it could
        # not digest), compared on its own rather than in the token figures
        "latexml_incomplete": body.ref_n < 0.5 * body.ours_n and body.ours_n >= 200,
    }


def agrees(row: dict) -> dict[str, bool]:
    """Whether a paper's headings, citations and refs agree (the summary's counts)."""
    return {
        "headings": row["headings_title_agree"] == row["headings_latexml"] == row["headings_ours"],
        "cites": row["cites_ours"] == row["cites_latexml"]
        and row["cites_ours_resolved"] >= row["cites_latexml_resolved"],
        "refs": row["refs_agree"] == row["refs_latexml"] == row["refs_ours"],
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def summary(rows: list[dict]) -> dict:
    both = [r for r in rows if r.get("compare") and not r["compare"]["latexml_incomplete"]]
    lost = [r["compare"]["lost"] for r in both]
    extra = [r["compare"]["extra"] for r in both]
    cpu_l = sum(r["latexml"]["cpu_s"] for r in both)
    cpu_o = sum(r["ours"]["cpu_s"] for r in both)
    agree = [agrees(r["compare"]) for r in both]
    return {
        "papers": len(rows),
        "ours_parsed": sum(1 for r in rows if r["ours"]["ok"]),
        "latexml_parsed": sum(1 for r in rows if r.get("latexml") and r["latexml"]["ok"]),
        "latexml_missing": sum(1 for r in rows if not r.get("latexml")),
        "latexml_incomplete": sum(1 for r in rows if r.get("compare") and r["compare"]["latexml_incomplete"]),
        "both": len(both),
        "median_lost": statistics.median(lost) if lost else 0.0,
        "worst_lost": max(lost, default=0.0),
        "median_extra": statistics.median(extra) if extra else 0.0,
        "worst_extra": max(extra, default=0.0),
        "over_2pct": sum(1 for a, b in zip(lost, extra, strict=True) if a > 0.02 or b > 0.02),
        "headings_agree": sum(a["headings"] for a in agree),
        "cites_agree": sum(a["cites"] for a in agree),
        "refs_agree": sum(a["refs"] for a in agree),
        "bib_agree": sum(1 for r in both if r["compare"]["bib_latexml"] == r["compare"]["bib_ours"]),
        "cpu_latexml_s": cpu_l,
        "cpu_ours_s": cpu_o,
        "cpu_ratio": cpu_l / cpu_o if cpu_o else 0.0,
        "ours_cpu_median_s": statistics.median([r["ours"]["cpu_s"] for r in rows]) if rows else 0.0,
        "ours_peak_mb_max": max((r["ours"]["peak_mb"] for r in rows), default=0.0),
        "ours_by_size": _by_size(rows),
    }


def _by_size(rows: list[dict]) -> list[tuple[str, int, float, float]]:
    """Our CPU per paper by source size (thirds of the set): (sizes, papers, median CPU s, median
    CPU ms per source kB) - how the parse cost grows with the paper."""
    done = sorted((r for r in rows if r["ours"]["ok"] and r.get("tex_kb")), key=lambda r: r["tex_kb"])
    out = []
    for part in (
        done[: len(done) // 3],
        done[len(done) // 3 : 2 * len(done) // 3],
        done[2 * len(done) // 3 :],
    ):
        if part:
            label = f"{part[0]['tex_kb']:.0f}-{part[-1]['tex_kb']:.0f} kB"
            cpu = statistics.median(r["ours"]["cpu_s"] for r in part)
            per_kb = statistics.median(1000 * r["ours"]["cpu_s"] / r["tex_kb"] for r in part)
            out.append((label, len(part), cpu, per_kb))
    return out


def badness(row: dict) -> float:
    c = row.get("compare")
    return c["lost"] + c["extra"] if c else -1.0


def report(rows: list[dict], top: int, title: str) -> str:
    s = summary(rows)
    both = s["both"]
    out = [
        f"# {title}",
        "",
        "| figure | value |",
        "|---|---|",
        f"| papers | {s['papers']} |",
        f"| parsed by ours | {s['ours_parsed']} |",
        f"| converted by LaTeXML | {s['latexml_parsed']}"
        + (f" ({s['latexml_missing']} not run yet)" if s["latexml_missing"] else "")
        + " |",
        f"| compared (both converted, LaTeXML's text complete) | {both} |",
        f"| LaTeXML's body less than half of ours (its failure; listed below, not in the figures) | {s['latexml_incomplete']} |",
        f"| body tokens lost (LaTeXML's missing from ours): median / worst | {_pct(s['median_lost'])} / {_pct(s['worst_lost'])} |",
        f"| body tokens extra (ours absent from LaTeXML's): median / worst | {_pct(s['median_extra'])} / {_pct(s['worst_extra'])} |",
        f"| papers over 2 % lost or extra | {s['over_2pct']} of {both} |",
        f"| headings agreeing (all titles) | {s['headings_agree']} of {both} |",
        f"| citations agreeing (count, resolved) | {s['cites_agree']} of {both} |",
        f"| refs agreeing (all numbers) | {s['refs_agree']} of {both} |",
        f"| bibliography sizes equal | {s['bib_agree']} of {both} |",
        f"| CPU: LaTeXML / ours on papers both converted | {s['cpu_latexml_s']:.0f} s / {s['cpu_ours_s']:.1f} s = {s['cpu_ratio']:.0f}x |",
        f"| ours: median CPU per paper, largest peak RSS of a paper's process | {s['ours_cpu_median_s']:.2f} s, {s['ours_peak_mb_max']:.0f} MB |",
        *(
            f"| ours by source size {label} ({n} papers): median CPU, per source kB | {cpu:.3f} s, {per_kb:.2f} ms |"
            for label, n, cpu, per_kb in s["ours_by_size"]
        ),
        "",
    ]
    ours_failed = [r for r in rows if not r["ours"]["ok"]]
    if ours_failed:
        out += ["## Papers our parser failed on", "", "| paper | status |", "|---|---|"]
        out += [f"| {r['slug']} | {r['ours']['status']} |" for r in ours_failed] + [""]
    kinds: dict[str, list[str]] = {}
    for r in rows:
        lx = r.get("latexml")
        if lx and not lx["ok"]:
            kind = re.sub(r"\b\d+(\.\d+)?\b", "N", lx["status"])[:70]
            kinds.setdefault(kind, []).append(r["slug"])
    if kinds:
        out += ["## Papers LaTeXML did not convert", "", "| status | papers | which |", "|---|---|---|"]
        for kind, slugs in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            out.append(f"| {kind} | {len(slugs)} | {', '.join(slugs)} |")
        out.append("")
    short = [r for r in rows if r.get("compare") and r["compare"]["latexml_incomplete"]]
    if short:
        out += [
            "## LaTeXML read less than half of the text",
            "",
            "| paper | tokens LaTeXML / ours | LaTeXML's status |",
            "|---|---|---|",
        ]
        for r in short:
            c = r["compare"]
            out.append(
                f"| {r['slug']} | {c['tokens_latexml']} / {c['tokens_ours']} | {r['latexml']['status'][:120]} |"
            )
        out.append("")
    ranked = sorted(
        (r for r in rows if r.get("compare") and not r["compare"]["latexml_incomplete"]),
        key=badness,
        reverse=True,
    )
    out += [
        f"## Worst papers (top {min(top, len(ranked))} by lost + extra)",
        "",
        "| # | paper | class | field | tokens L/O | lost | extra | headings L/O/agree | cites L/O (resolved) | refs L/O/agree | bib L/O |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(ranked[:top], 1):
        c = r["compare"]
        out.append(
            f"| {n} | {r['slug']} | {r['class']} | {r['field']} | {c['tokens_latexml']}/{c['tokens_ours']} | {_pct(c['lost'])} | "
            f"{_pct(c['extra'])} | {c['headings_latexml']}/{c['headings_ours']}/{c['headings_title_agree']} | "
            f"{c['cites_latexml']} ({c['cites_latexml_resolved']})/{c['cites_ours']} ({c['cites_ours_resolved']}) | "
            f"{c['refs_latexml']}/{c['refs_ours']}/{c['refs_agree']} | {c['bib_latexml']}/{c['bib_ours']} |"
        )
    out.append("")
    for n, r in enumerate(ranked[:top], 1):
        c = r["compare"]
        out += [
            f"### {n}. {r['slug']} ({r['class']}, {r['field']}): lost {_pct(c['lost'])}, extra {_pct(c['extra'])}",
            "",
        ]
        if c["refs_diff"]:
            out.append(
                "- refs differing (LaTeXML → ours): "
                + "; ".join(f"«{a}» → «{b}»" for a, b in c["refs_diff"][:4])
            )
        for lost, extra, n_lost, n_extra in c["passages"][:4]:
            if n_lost:
                out.append(f"- LaTeXML only ({n_lost} tokens): «{lost}{' …' if n_lost > 60 else ''}»")
            if n_extra:
                out.append(f"- ours only ({n_extra} tokens): «{extra}{' …' if n_extra > 60 else ''}»")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=Path, default=SCRATCH / "latex-papers")
    ap.add_argument("--manifest", type=Path, default=HERE / "latex_papers.tsv")
    ap.add_argument("--cache", type=Path, default=SCRATCH / "latexml-cache")
    ap.add_argument("--only", nargs="*", default=None, metavar="SLUG")
    ap.add_argument("--report", type=Path, default=None, help="write the Markdown report here")
    ap.add_argument("--json", type=Path, default=None, help="write every paper's figures here")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--cold", action="store_true", help="no warm-up: each paper pays first-use imports")
    ap.add_argument("--run-latexml", action="store_true", help="convert papers LaTeXML has not seen")
    ap.add_argument("--latexml-only", action="store_true", help="only fill the LaTeXML cache")
    ap.add_argument(
        "--expl3-cpu",
        type=float,
        default=None,
        help="stop a LaTeXML run still loading expl3 after this many CPU s (default: the CPU limit)",
    )
    args = ap.parse_args(argv)

    papers = read_manifest(args.manifest)
    if args.only:  # in the order given
        by_slug = {p.slug: p for p in papers}
        papers = [by_slug[s] for s in dict.fromkeys(args.only) if s in by_slug]
    if not args.papers.is_dir():  # a fresh clone: the papers are not in the repository
        print(
            f"no papers under {args.papers}: each is its repository's main-file folder at the manifest's "
            "commit, packed as a .tar.gz (see the module docstring); pass --papers DIR",
            file=sys.stderr,
        )
        papers = []
    version, tex = latexml_version(), tex_installation()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="latex-vs-latexml-") as tmp:
        scratch = Path(tmp)
        if not (args.cold or args.latexml_only):
            warm_up([args.papers / f"{p.slug}.tar.gz" for p in papers], scratch / "warm")
        for paper in papers:
            eprint = args.papers / f"{paper.slug}.tar.gz"
            if not eprint.exists():
                print(f"{paper.slug}: no e-print at {eprint}", file=sys.stderr)
                continue
            main_name = Path(paper.main).name
            convert = args.run_latexml or args.latexml_only
            lx, where = cached_latexml(eprint, main_name, args.cache, version, convert, args.expl3_cpu, tex)
            if args.latexml_only:
                print(
                    f"{paper.slug}\t{lx.status}\tcpu {lx.cpu_s:.1f} s\twall {lx.wall_s:.0f} s\t{lx.peak_mb:.0f} MB",
                    flush=True,
                )
                continue
            ours, doc = run_ours(eprint, paper.slug, scratch)
            row = {"slug": paper.slug, "class": paper.doc_class, "field": paper.field, "ours": asdict(ours)}
            row["tex_kb"] = tex_kb(eprint)
            row["latexml"] = asdict(lx) if lx else None
            if ours.ok and lx and lx.ok:
                row["compare"] = compare(latexml_view((where / "out.xml").read_bytes()), ours_view(doc))
            rows.append(row)
            c = row.get("compare")
            print(
                f"{paper.slug}: ours {ours.status} ({ours.cpu_s:.2f} s, {ours.peak_mb:.0f} MB); "
                f"LaTeXML {lx.status if lx else 'not run'}"
                + (f"; lost {_pct(c['lost'])}, extra {_pct(c['extra'])}" if c else ""),
                file=sys.stderr,
                flush=True,
            )
    if args.latexml_only:
        return
    where_from = Path(corpus.__file__).resolve().parents[1]
    text = report(
        rows,
        args.top,
        f"Our LaTeX parser ({PARSER_VERSION}, {where_from}; {'cold' if args.cold else 'warm'}) against LaTeXML {version}",
    )
    if args.report:
        args.report.write_text(text + "\n")
    else:
        print(text)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    # imported here, after corpus: _common puts this tree on sys.path, and corpus must stay the venv's
    from _common import result

    s = summary(rows)
    result(
        papers=s["papers"],
        ours_parsed=s["ours_parsed"],
        latexml_parsed=s["latexml_parsed"],
        compared=s["both"],
        median_lost=round(s["median_lost"], 4),
        worst_lost=round(s["worst_lost"], 4),
        median_extra=round(s["median_extra"], 4),
        worst_extra=round(s["worst_extra"], 4),
        over_2pct=s["over_2pct"],
        headings_agree=s["headings_agree"],
        cites_agree=s["cites_agree"],
        refs_agree=s["refs_agree"],
        cpu_ratio=round(s["cpu_ratio"]),
        ours_peak_mb=round(s["ours_peak_mb_max"]),
    )


if __name__ == "__main__":
    main()
