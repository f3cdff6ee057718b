"""Synthetic landing zones for the demo, tests and benchmarks (``python -m corpus.sample``).

One record model (:class:`corpus.ingest.records.ArxivRecord`, built by
:func:`iter_sample_records` in datestamp order) feeds several writers:

* :class:`OaiArxivWriter` -- ``DIR/oai/<YYYY-MM-DD>.xml``, one OAI-PMH ListRecords
  reply per datestamp day in arXiv's ``arXiv`` metadata format, byte-compatible
  with ``shared/landing/oai`` (envelope, namespaces, element order, title and
  abstract hard-wrapped at 72/79 columns). Big days can be split into pages
  ``<day>-pNNN.xml`` chained by ``resumptionToken`` (the last one empty), as the
  endpoint serves them;
* :class:`KaggleWriter` -- the same records as Kaggle snapshot lines;
* :func:`abs_text` -- the same record as an arXiv ``.abs`` file.

* :class:`corpus.sample.documents.FullTextWriter` (``full_text=True``, CLI ``--full-text``) --
  the same records as papers: ``pdf/``, ``tei/``, ``src/`` files and
  ``sample_manifest.jsonl`` (what was planned, the ground truth for tests).

What the records look like: new submissions on their announcement day (new-style
4-digit ids before 2015, 5-digit after, old-style ``archive/YYMMNNN`` before April
2007, numbers consistent with the creation month); revisions of papers seen
earlier in the run (same id on a later day, next version, ``created < updated``);
revisions of older papers (old-style ids with archive-consistent categories such
as ``math/0309136`` in ``math.GT``); realistic categories with cross-lists, sets,
English-like titles and abstracts from word lists, authors with particles,
suffixes, affiliations and collaborations, some DOIs, journal-refs, report
numbers, MSC/ACM classes and licences. Everything is derived from ``seed``, so a
seed gives byte-identical files. Memory is bounded (one page of text, a capped
reservoir of revisable papers, per-month id counters), so 1M records stream.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from corpus.ingest.records import ArxivRecord, AuthorName, Version
from corpus.store import atomic_path

__all__ = [
    "SampleSummary",
    "day_counts",
    "iter_sample_records",
    "generate_landing",
    "OaiArxivWriter",
    "KaggleWriter",
    "abs_text",
    "authors_to_raw",
    "main",
]

NEW_STYLE_START = dt.date(2007, 4, 1)
FIVE_DIGIT_START = dt.date(2015, 1, 1)
OAI_BASE_URL = "http://export.arxiv.org/oai2"

# ---------------------------------------------------------------- taxonomy

# (category, weight); the archive is the part before the dot.
_CATEGORIES: list[tuple[str, float]] = [
    *((c, 6.0) for c in "cs.LG cs.CV cs.CL cs.AI".split()),
    *(
        (c, 1.5)
        for c in "cs.RO cs.CR cs.IT cs.DS cs.NI cs.SE cs.IR cs.HC cs.DC cs.SY cs.NE cs.GT cs.LO".split()
    ),
    *(
        (c, 0.6)
        for c in "cs.CG cs.CC cs.DB cs.DL cs.DM cs.FL cs.MA cs.MS cs.PL cs.SC cs.SD cs.SI cs.CY".split()
    ),
    *(
        (c, 3.0)
        for c in "hep-ph hep-th quant-ph gr-qc astro-ph.GA astro-ph.CO astro-ph.SR astro-ph.HE".split()
    ),
    *((c, 1.5) for c in "hep-ex hep-lat nucl-th nucl-ex astro-ph.EP astro-ph.IM math-ph".split()),
    *((c, 3.0) for c in "cond-mat.mes-hall cond-mat.mtrl-sci cond-mat.str-el cond-mat.stat-mech".split()),
    *((c, 1.2) for c in "cond-mat.soft cond-mat.supr-con cond-mat.quant-gas cond-mat.dis-nn".split()),
    *((c, 2.0) for c in "math.AP math.PR math.CO math.OC math.NA math.AG math.DG math.NT".split()),
    *((c, 1.0) for c in "math.FA math.GT math.GR math.DS math.RT math.CA math.ST math.LO math.QA".split()),
    *(
        (c, 0.5)
        for c in "math.AC math.AT math.CT math.CV math.GM math.GN math.HO math.KT math.MG math.OA".split()
    ),
    *(
        (c, 1.0)
        for c in "physics.optics physics.flu-dyn physics.atom-ph physics.chem-ph physics.comp-ph".split()
    ),
    *(
        (c, 0.6)
        for c in "physics.plasm-ph physics.bio-ph physics.soc-ph physics.ins-det physics.app-ph".split()
    ),
    *((c, 1.5) for c in "stat.ML stat.ME stat.AP eess.SP eess.IV eess.SY eess.AS".split()),
    *((c, 0.8) for c in "q-bio.NC q-bio.QM q-bio.PE q-bio.BM q-fin.ST q-fin.MF econ.EM econ.TH".split()),
    *((c, 0.8) for c in "nlin.CD nlin.SI nlin.PS nlin.AO".split()),
]
_CAT_NAMES = [c for c, _ in _CATEGORIES]
_CAT_CUM: list[float] = []
_acc = 0.0
for _c, _w in _CATEGORIES:
    _acc += _w
    _CAT_CUM.append(_acc)

# Cross-lists tend to stay near the primary.
_NEAR = {
    "cs": "cs.LG cs.AI stat.ML cs.IT math.OC eess.SP".split(),
    "stat": "stat.ML cs.LG math.ST stat.ME".split(),
    "eess": "eess.SP cs.LG cs.IT eess.SY".split(),
    "math": "math.PR math.AP math-ph math.MP math.CO cs.IT".split(),
    "math-ph": "math.MP hep-th quant-ph".split(),
    "hep-ph": "hep-ex hep-lat nucl-th astro-ph.CO".split(),
    "hep-th": "gr-qc hep-ph math-ph math.MP".split(),
    "hep-ex": "hep-ph physics.ins-det".split(),
    "quant-ph": "cond-mat.mes-hall physics.optics cs.IT hep-th".split(),
    "gr-qc": "hep-th astro-ph.CO astro-ph.HE".split(),
    "astro-ph": "gr-qc hep-ph astro-ph.IM physics.space-ph".split(),
    "cond-mat": "quant-ph physics.comp-ph cond-mat.stat-mech cond-mat.mtrl-sci".split(),
    "physics": "cond-mat.soft physics.comp-ph cs.LG".split(),
    "q-bio": "physics.bio-ph stat.AP cs.LG".split(),
    "q-fin": "stat.AP econ.EM math.PR".split(),
    "econ": "q-fin.ST stat.ME cs.GT".split(),
    "nlin": "math.DS cond-mat.stat-mech physics.flu-dyn".split(),
}

# Old-style archives: (archive, first YYMM issued, categories used with it).
_OLD_ARCHIVES: list[tuple[str, int, list[str]]] = [
    ("hep-th", 9108, ["hep-th"]),
    ("hep-ph", 9203, ["hep-ph"]),
    ("hep-lat", 9202, ["hep-lat"]),
    ("hep-ex", 9404, ["hep-ex"]),
    ("astro-ph", 9204, ["astro-ph"]),
    (
        "cond-mat",
        9204,
        "cond-mat.str-el cond-mat.mes-hall cond-mat.stat-mech cond-mat.supr-con cond-mat.soft".split(),
    ),
    ("gr-qc", 9207, ["gr-qc"]),
    ("nucl-th", 9210, ["nucl-th"]),
    ("nucl-ex", 9412, ["nucl-ex"]),
    ("quant-ph", 9412, ["quant-ph"]),
    ("math", 9202, "math.GT math.AG math.CO math.PR math.DG math.NT math.AP math.FA math.QA math.GR".split()),
    ("math-ph", 9609, ["math-ph"]),
    (
        "physics",
        9610,
        "physics.optics physics.flu-dyn physics.atom-ph physics.chem-ph physics.plasm-ph".split(),
    ),
    ("cs", 9809, "cs.LG cs.AI cs.CL cs.DS cs.LO cs.CC cs.IT".split()),
    ("nlin", 1, "nlin.CD nlin.SI nlin.PS nlin.AO".split()),
    ("q-bio", 309, "q-bio.NC q-bio.PE q-bio.BM q-bio.QM".split()),
]
_OLD_CATS = {a: cats for a, _, cats in _OLD_ARCHIVES}


def _yymm_key(yymm: int) -> int:
    """9108 -> 199108, 309 -> 200309: comparable months across the century."""
    yy, mm = divmod(yymm, 100)
    return (1900 + yy if yy >= 91 else 2000 + yy) * 100 + mm


_SET_ARCHIVES = frozenset("cs math stat eess econ q-bio q-fin".split())


def _archive(category: str) -> str:
    return category.split(".", 1)[0]


def oai_set(category: str) -> str:
    """arXiv's OAI set for a category: ``cs``, ``math``, ``physics:hep-th`` ..."""
    archive = _archive(category)
    return archive if archive in _SET_ARCHIVES else f"physics:{archive}"


def _field(category: str) -> str:
    archive = _archive(category)
    if archive in ("cs", "stat", "eess"):
        return "cs"
    if archive == "math":
        return "math"
    if archive in ("q-bio",):
        return "bio"
    if archive in ("q-fin", "econ"):
        return "econ"
    return "phys"


# ---------------------------------------------------------------- word lists

_W = str.split
_ADJ = _W(
    "robust efficient scalable novel general simple exact approximate nonlinear linear stochastic "
    "deterministic adaptive optimal local global sparse dense hierarchical distributed unified "
    "generalized improved accurate stable fast finite infinite discrete continuous quantum classical "
    "random effective strong weak high low large small dynamical statistical spectral geometric "
    "topological asymptotic explicit implicit multiscale universal critical coherent thermal"
)
_NOUN = {
    "cs": _W(
        "network model algorithm framework learning representation benchmark dataset transformer "
        "classifier policy agent optimization inference attention embedding architecture graph "
        "language task retrieval segmentation detection generation training method system protocol "
        "decoder encoder planner compiler scheduler cache kernel"
    ),
    "math": _W(
        "theorem conjecture manifold operator group space function equation inequality estimate "
        "bound measure algebra category module invariant surface curve lattice polynomial sequence "
        "solution domain norm series map field ring variety homology"
    ),
    "phys": _W(
        "field theory model lattice phase transition spectrum state dynamics scattering amplitude "
        "symmetry coupling correlation temperature density magnetization system particle galaxy "
        "star cluster halo emission detector neutrino boson fermion plasma wave entanglement qubit"
    ),
    "bio": _W(
        "protein network population gene cell neuron dynamics expression pathway model tissue "
        "species evolution signal sequence structure response"
    ),
    "econ": _W(
        "market price model estimator volatility risk portfolio equilibrium demand policy auction "
        "mechanism welfare inflation panel regression"
    ),
}
_VERB = _W(
    "propose study analyze derive present introduce investigate establish develop construct "
    "compute prove demonstrate characterize evaluate measure obtain extend classify compare"
)
_VERB3 = _W(
    "improves reduces enables reveals yields captures describes determines controls governs "
    "exhibits predicts explains requires preserves outperforms generalizes dominates"
)
_CONNECT = _W("of for in with under from on via between beyond without across")
_OPENERS = [
    "In this paper, we",
    "In this work, we",
    "Here we",
    "We",
    "In this note we",
    "Motivated by recent experiments, we",
]
_FINDINGS = [
    "Our results show that",
    "We find that",
    "Numerical experiments indicate that",
    "As a consequence,",
    "In particular,",
    "Moreover,",
    "We also show that",
]
_MATH_BITS = [
    "$O(n \\log n)$",
    "$\\alpha < 1$",
    "$d \\geq 3$",
    "$k$-regular",
    "$L^2$",
    "$\\mathbb{R}^n$",
    "$p < 0.05$",
    "$T_c$",
    "$N=4$",
    "$\\sqrt{s} = 13$ TeV",
]

_FIRST = _W(
    "Maria Anna Laura Sofia Elena Julia Clara Hannah Emma Sarah Yuki Mei Wei Li Jing Xin Hao Ming "
    "Ravi Priya Arjun Anil Sunita Omar Fatima Ahmed Leila Mehmet Ayse Olga Ivan Dmitri Sergei Natalia "
    "Pierre Jean-Pierre Marie-Claire Hans Anna-Lena Klaus Jürgen Sören José Joao Luis Ana Carlos "
    "Giulia Marco Paolo Lorenzo Chiara Kenji Hiroshi Takeshi Min-Jun Ji-Woo Seo-yeon Thomas James "
    "John Robert Michael David Richard Daniel Matthew Andrew Emily Olivia Grace Peter Paul Nikolai "
    "Zoltán Ágnes Bjørn Søren Kateřina Tomáš Xiao-Lin Yu-Ming Chao-Hsi"
)
_LAST = _W(
    "Smith Johnson Brown Miller Wilson Taylor Anderson Thomas Moore Martin Clark Lewis Walker Young "
    "Wang Li Zhang Liu Chen Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo Lin "
    "Kumar Singh Sharma Patel Gupta Iyer Reddy Nair Kim Lee Park Choi Jung Kang Tanaka Suzuki "
    "Watanabe Yamamoto Nakamura Kobayashi Müller Schmidt Schneider Fischer Weber Wagner Becker "
    "Hoffmann Schäfer Koch Rossi Russo Ferrari Esposito Bianchi Romano Colombo García Fernández "
    "González Rodríguez López Martínez Sánchez Pérez Silva Santos Oliveira Souza Costa Ivanov "
    "Smirnov Kuznetsov Popov Petrov Novak Dvořák Horváth Nagy Kowalski Nowak Andersen Nielsen "
    "Hansen Johansson Karlsson Lindqvist O'Brien O'Connor McDonald MacLeod Abu-Salem Ben-David "
    "Al-Khalili Dubois Lefebvre Moreau Laurent Fontaine Rousseau Mishra Banerjee Chatterjee"
)
_PARTICLE_LAST = [
    "van der Berg",
    "van Dijk",
    "de Vries",
    "van den Bosch",
    "von Neumann",
    "de la Cruz",
    "da Silva",
    "di Stefano",
    "del Rio",
    "ter Haar",
    "dos Santos",
    "du Pont",
    "von der Heide",
    "de Jong",
]
_SUFFIXES = ["Jr.", "Sr.", "II", "III"]
_COLLABORATIONS = {
    "hep": ["ATLAS", "CMS", "LHCb", "ALICE", "Belle II", "BaBar", "CDF", "D0", "BESIII", "NA62"],
    "astro": [
        "IceCube",
        "Fermi-LAT",
        "Planck",
        "DES",
        "H.E.S.S.",
        "Pierre Auger",
        "LIGO Scientific",
        "Virgo",
    ],
    "nucl": ["STAR", "PHENIX", "KATRIN", "Super-Kamiokande", "T2K", "NOvA"],
}
_AFFILIATIONS = [
    "MIT",
    "CERN",
    "Stanford University",
    "University of Cambridge",
    "Max Planck Institute for Physics, Munich",
    "ETH Zurich",
    "Tsinghua University",
    "Peking University",
    "University of Tokyo",
    "Indian Institute of Science, Bangalore",
    "Universidade de São Paulo",
    "Sorbonne Université, Paris",
    "Weizmann Institute of Science",
    "University of Toronto",
    "Caltech",
    "INFN, Sezione di Roma",
    "DESY, Hamburg",
    "KEK, Tsukuba",
    "Fermilab",
    "University of Melbourne",
    "Seoul National University",
    "Universität Heidelberg",
    "Niels Bohr Institute, Copenhagen",
    "Perimeter Institute",
    "Institute for Advanced Study, Princeton",
]
_JOURNALS = {
    "cs": ["Proceedings of NeurIPS", "IEEE Trans. Inf. Theory", "J. Mach. Learn. Res.", "Proceedings of ACL"],
    "math": ["Ann. of Math.", "Invent. Math.", "Duke Math. J.", "J. Amer. Math. Soc.", "Adv. Math."],
    "phys": ["Phys. Rev. D", "Phys. Rev. Lett.", "JHEP", "Astrophys. J.", "Phys. Rev. B", "Nucl. Phys. B"],
    "bio": ["PLoS Comput. Biol.", "J. Theor. Biol.", "Biophys. J."],
    "econ": ["Econometrica", "J. Econometrics", "Quant. Finance"],
}
_DOI_PREFIX = {"cs": "10.1109", "math": "10.4007", "phys": "10.1103", "bio": "10.1371", "econ": "10.3982"}
_LICENSES = [
    "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    "http://creativecommons.org/licenses/by/4.0/",
    "http://creativecommons.org/licenses/by/4.0/",
    "http://creativecommons.org/licenses/by-nc-sa/4.0/",
    "http://creativecommons.org/licenses/by-sa/4.0/",
    "http://creativecommons.org/publicdomain/zero/1.0/",
]
_MSC = ["05C85", "35Q55", "60J10", "57M27", "14J32", "11F11", "46L05", "53C44", "90C25", "65N30"]
_ACM = ["I.2.6", "F.2.2", "H.3.3", "I.4.8", "C.2.4", "D.3.4"]
_WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


# ---------------------------------------------------------------- text synthesis


class _Rng(random.Random):
    """``random.Random`` with a cheaper ``choice`` (one float instead of getrandbits loops)."""

    def choice(self, seq):  # type: ignore[override]
        return seq[int(self.random() * len(seq))]


_IRREGULAR = {
    "spectrum": "spectra",
    "matrix": "matrices",
    "analysis": "analyses",
    "criterion": "criteria",
    "phenomenon": "phenomena",
    "series": "series",
}


def _plural(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _title(rng: random.Random, nouns: list[str]) -> str:
    a, n = rng.choice, nouns

    def p(words: list[str]) -> str:
        return _plural(a(words))

    forms = (
        lambda: f"{a(_ADJ)} {a(n)} {a(_CONNECT)} {a(_ADJ)} {p(n)}",
        lambda: f"On the {a(n)} of {a(_ADJ)} {p(n)}",
        lambda: f"{a(_ADJ)} {p(n)} for {a(n)} {a(n)}: {a(_ADJ)} {p(n)} and {p(n)}",
        lambda: f"Towards {a(_ADJ)} {a(n)} {a(_CONNECT)} {a(_ADJ)} {p(n)}",
        lambda: f"{_a(a(_ADJ))} {a(n)} for {a(_ADJ)} {a(n)} {a(n)}",
        lambda: f"{a(n)} {a(n)} and {a(_ADJ)} {a(n)} {a(_CONNECT)} {a(_ADJ)} {p(n)}",
    )
    text = rng.choice(forms)()
    return text[0].upper() + text[1:]


def _sentence(rng: random.Random, nouns: list[str]) -> str:
    a, n = rng.choice, nouns

    def p(words: list[str]) -> str:
        return _plural(a(words))

    r = rng.random()
    if r < 0.25:
        s = f"{a(_OPENERS)} {a(_VERB)} {_a(a(_ADJ))} {a(n)} {a(_CONNECT)} {a(_ADJ)} {p(n)}"
    elif r < 0.5:
        s = f"{a(_FINDINGS)} the {a(_ADJ)} {a(n)} {a(_VERB3)} the {a(n)} {a(_CONNECT)} {a(_ADJ)} {p(n)}"
    elif r < 0.7:
        s = f"The {a(n)} {a(_VERB3)} {a(_ADJ)} {p(n)}, and the {a(n)} {a(_VERB3)} the {a(_ADJ)} {a(n)}"
    elif r < 0.85:
        s = f"Using {a(_ADJ)} {p(n)}, we {a(_VERB)} the {a(n)} {a(_CONNECT)} {p(n)} with {a(_MATH_BITS)}"
    else:
        s = f"This {a(n)} {a(_VERB3)} the {a(_ADJ)} {a(n)} by {rng.randint(2, 60)}% compared to previous {p(n)}"
    return s[0].upper() + s[1:] + "."


def _abstract(rng: random.Random, nouns: list[str]) -> str:
    n = rng.randint(5, 11)
    sentences = [_sentence(rng, nouns) for _ in range(n)]
    while sum(s.count(" ") + 1 for s in sentences) < 60:  # peS2o keeps abstracts of 50+ words
        sentences.append(_sentence(rng, nouns))
    if rng.random() < 0.05:
        sentences.insert(1, "We discuss R&D needs and the regime $x<1$ & $y>2$.")  # XML escaping
    return " ".join(sentences)


def _wrap(text: str, width: int, indent: str) -> list[str]:
    """Greedy hard wrap (arXiv's style); continuation lines start with ``indent``."""
    lines: list[str] = []
    cur: list[str] = []
    size = 0
    limit = width
    for word in text.split(" "):
        extra = len(word) + (1 if cur else 0)
        if cur and size + extra > limit:
            lines.append(" ".join(cur))
            cur, size, limit = [word], len(word), width - len(indent)
        else:
            cur.append(word)
            size += extra
    if cur:
        lines.append(" ".join(cur))
    return lines


def wrap_title(text: str) -> str:
    """Titles and comments: 72 columns, continuation lines indented by two spaces."""
    return "\n  ".join(_wrap(text, 72, "  "))


def wrap_abstract(text: str) -> str:
    """Abstracts: two leading spaces, 79 columns, a final newline (as arXiv serves them)."""
    return "\n".join(_wrap("  " + text, 79, "")) + "\n"


# ---------------------------------------------------------------- papers


def _rfc(day: dt.date, rng: random.Random) -> str:
    h, m, s = rng.randrange(24), rng.randrange(60), rng.randrange(60)
    return f"{_WEEKDAYS[day.weekday()]}, {day.day} {_MONTHS[day.month - 1]} {day.year} {h:02d}:{m:02d}:{s:02d} GMT"


def _person(rng: random.Random) -> AuthorName:
    r = rng.random()
    if r < 0.35:
        first = rng.choice(_FIRST)
    elif r < 0.7:
        first = f"{rng.choice('ABCDEFGHIJKLMNOPRSTVWYZ')}."
    elif r < 0.9:
        first = f"{rng.choice('ABCDEFGHJKLMNPRSTVW')}. {rng.choice('ABCDEFGHJKLMNPRSTVW')}."
    else:
        first = f"{rng.choice(_FIRST)} {rng.choice('ABCDEFGHJKLMNPRSTVW')}."
    last = rng.choice(_PARTICLE_LAST) if rng.random() < 0.08 else rng.choice(_LAST)
    suffix = rng.choice(_SUFFIXES) if rng.random() < 0.03 else ""
    return _construct(AuthorName, {"keyname": last, "forenames": first, "suffix": suffix, "affiliations": []})


def _authors(rng: random.Random, primary: str) -> list[AuthorName]:
    archive = _archive(primary)
    group = "hep" if archive in ("hep-ex", "hep-ph") else "astro" if archive == "astro-ph" else None
    group = group or ("nucl" if archive in ("nucl-ex",) else None)
    if group and rng.random() < 0.3:
        collab = rng.choice(_COLLABORATIONS[group])
        style = rng.random()
        keyname = f"{collab} Collaboration" if style < 0.5 else f"The {collab} Collaboration"
        name = _construct(AuthorName, {"keyname": keyname, "forenames": "", "suffix": "", "affiliations": []})
        if style < 0.5:
            return [name]
        people = [_person(rng) for _ in range(rng.randint(1, 4))]
        return [name, *people] if style < 0.75 else [*people, name]
    k = min(int(rng.expovariate(1 / 3.0)) + 1, 40)
    people = [_person(rng) for _ in range(k)]
    mode = rng.random()
    if mode < 0.25:  # one affiliation each, written "Name (Aff)"
        for p in people:
            p.affiliations = [rng.choice(_AFFILIATIONS)]
    elif mode < 0.37:  # numbered: "Name (1, 2) ... ((1) Aff, (2) Aff)"
        pool = rng.sample(_AFFILIATIONS, 3)
        for p in people:
            p.affiliations = sorted(rng.sample(pool, rng.randint(1, 2)), key=pool.index)
    return people


def authors_to_raw(authors: list[AuthorName]) -> str:
    """The arXiv author string for structured names (what arXivRaw, Kaggle and ``.abs`` carry)."""

    def name(a: AuthorName) -> str:
        return " ".join(p for p in (a.forenames, a.keyname, a.suffix) if p)

    numbered = any(len(a.affiliations) > 1 for a in authors)
    pool: list[str] = []
    parts: list[str] = []
    for a in authors:
        text = name(a)
        if a.affiliations and numbered:
            refs = []
            for aff in a.affiliations:
                if aff not in pool:
                    pool.append(aff)
                refs.append(str(pool.index(aff) + 1))
            text += f" ({', '.join(refs)})"
        elif a.affiliations:
            text += f" ({a.affiliations[0]})"
        parts.append(text)
    raw = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if pool:
        raw += " (" + ", ".join(f"({i}) {aff}" for i, aff in enumerate(pool, 1)) + ")"
    return raw


def _construct(cls: type, values: dict):
    """``cls.model_construct(**values)`` without its per-field loop (values are complete and valid).

    The generator makes ~6 models per record; this halves its run time. Tests check
    that the result equals a validated model."""
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


@dataclass
class _Paper:
    """What is remembered of a paper so that it can be revised later (small, bounded)."""

    id: str
    created: dt.date
    dates: list[str]  # RFC dates of the versions so far


def _content(seed: int, paper: _Paper, archive: str | None) -> dict:
    """Everything about a paper that does not change between versions, from (seed, id)."""
    rng = _Rng(f"{seed}:{paper.id}")
    if archive:  # old style: a subject class of the id's archive
        options = _OLD_CATS[archive]
        primary = options[rng.randrange(len(options))]
    else:
        primary = rng.choices(_CAT_NAMES, cum_weights=_CAT_CUM)[0]
    cats = [primary]
    for _ in range(rng.choice((0, 0, 0, 1, 1, 2, 3))):
        near = _NEAR.get(_archive(primary), _CAT_NAMES)
        c = rng.choice(near)
        if c not in cats:
            cats.append(c)
    fld = _field(primary)
    nouns = _NOUN[fld]
    authors = _authors(rng, primary)
    out = {
        "categories": cats,
        "title": _title(rng, nouns),
        "abstract": _abstract(rng, nouns),
        "authors": authors,
        "submitter": next((f"{a.forenames} {a.keyname}" for a in authors if a.forenames), "arXiv Admin"),
        "comments": f"{rng.randint(4, 60)} pages, {rng.randint(0, 15)} figures" if rng.random() < 0.7 else "",
        "report_no": f"{rng.choice(['CERN-TH', 'SLAC-PUB', 'DESY', 'MIT-CTP', 'KEK-TH'])}-{rng.randint(1000, 9999)}"
        if fld == "phys" and rng.random() < 0.1
        else "",
        "msc_class": "; ".join(rng.sample(_MSC, rng.randint(1, 2)))
        if fld == "math" and rng.random() < 0.3
        else "",
        "acm_class": rng.choice(_ACM) if fld == "cs" and rng.random() < 0.1 else "",
        "license": rng.choice(_LICENSES)
        if paper.created >= dt.date(2004, 1, 1) and rng.random() < 0.85
        else "",
        "journal": rng.choice(_JOURNALS[fld]),
        "doi_prefix": _DOI_PREFIX[fld],
        "pub_roll": rng.random(),
    }
    return out


def _record(seed: int, paper: _Paper, datestamp: dt.date, archive: str | None) -> ArxivRecord:
    c = _content(seed, paper, archive)
    nv = len(paper.dates)
    published = c["pub_roll"] < 0.08 + 0.12 * (nv - 1)  # later versions are more often published
    journal_ref = doi = ""
    comments = c["comments"]
    if published:
        year = (paper.created + dt.timedelta(days=200)).year
        journal_ref = (
            f"{c['journal']} {10 + int(c['pub_roll'] * 900)} ({year}) {100 + int(c['pub_roll'] * 9000)}"
        )
        suffix = paper.id.replace("/", ".").replace("-", "")
        doi = f"{c['doi_prefix']}/{suffix}"
        comments = (comments + "; " if comments else "") + "published version"
    versions = [
        _construct(Version, {"version": i + 1, "date": d, "size": "", "source_type": ""})
        for i, d in enumerate(paper.dates)
    ]
    cats = c["categories"]
    return _construct(
        ArxivRecord,
        {
            "id": paper.id,
            "version": nv,
            "datestamp": datestamp,
            "sets": sorted({oai_set(x) for x in cats}),
            "deleted": False,
            "submitter": c["submitter"],
            "authors_raw": authors_to_raw(c["authors"]),
            "authors": c["authors"],
            "title": c["title"],
            "abstract": c["abstract"],
            "comments": comments,
            "journal_ref": journal_ref,
            "doi": doi,
            "report_no": c["report_no"],
            "msc_class": c["msc_class"],
            "acm_class": c["acm_class"],
            "categories": cats,
            "license": c["license"],
            "versions": versions,
            "created": paper.created,
            "updated": datestamp if nv > 1 else None,
            "source_format": "arXiv",
        },
    )


# ---------------------------------------------------------------- ids and days


def day_counts(n_records: int, days: int, start: dt.date, seed: int) -> list[int]:
    """Records per datestamp day: weekdays heavier than weekends, jittered, summing to ``n_records``."""
    if days < 1 or n_records < 0:
        raise ValueError("need days >= 1 and n_records >= 0")
    rng = random.Random(f"{seed}:days")
    weights = []
    for i in range(days):
        d = start + dt.timedelta(days=i)
        base = 1.0 if d.weekday() < 5 else 0.35
        weights.append(base * rng.uniform(0.7, 1.3))
    total = sum(weights)
    raw = [n_records * w / total for w in weights]
    counts = [int(x) for x in raw]
    rest = n_records - sum(counts)
    order = sorted(range(days), key=lambda i: (raw[i] - counts[i], -i), reverse=True)
    for i in order[:rest]:
        counts[i] += 1
    return counts


class _Ids:
    """Unique ids consistent with their month: one counter per (archive or new-style, YYMM)."""

    def __init__(self) -> None:
        self.counters: dict[tuple[str, str], int] = {}

    def new(self, created: dt.date, rng: random.Random) -> tuple[str, str | None] | None:
        """A fresh id for a paper created on ``created`` (old style before April 2007); None if full."""
        yymm = f"{created.year % 100:02d}{created.month:02d}"
        if created < NEW_STYLE_START:
            ym = created.year * 100 + created.month
            eligible = [a for a, first, _ in _OLD_ARCHIVES if _yymm_key(first) <= ym]
            for archive in rng.sample(eligible, min(3, len(eligible))):
                n = self.counters.get((archive, yymm), 0) + 1
                if n <= 999:
                    self.counters[(archive, yymm)] = n
                    return f"{archive}/{yymm}{n:03d}", archive
            return None
        digits = 5 if created >= FIVE_DIGIT_START else 4
        n = self.counters.get(("new", yymm), 0) + 1
        if n >= 10**digits:
            return None
        self.counters[("new", yymm)] = n
        return f"{yymm}.{n:0{digits}d}", None


_EARLIEST = dt.date(1991, 8, 14)
_RESERVOIR_CAP = 20_000


class _Generator:
    """The state of one run: id counters and a capped reservoir of papers that may be revised."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = _Rng(seed)
        self.ids = _Ids()
        self.reservoir: list[tuple[_Paper, str | None]] = []
        self.stats = {"new_ids": 0, "revisions": 0, "old_style": 0}

    def run_revision(self, day: dt.date) -> tuple[_Paper, str | None] | None:
        """A paper announced earlier in the run gets its next version today."""
        if not self.reservoir:
            return None
        rng, res = self.rng, self.reservoir
        j = rng.randrange(len(res))
        res[j], res[-1] = res[-1], res[j]
        paper, archive = res.pop()
        paper.dates.append(_rfc(day, rng))
        return paper, archive

    def old_revision(self, day: dt.date) -> tuple[_Paper, str | None] | None:
        """A paper from before the run (often old-style) gets a new version today."""
        rng = self.rng
        span = (day - _EARLIEST).days - 30
        back = min(int(rng.expovariate(1 / 1500.0)) + 30, span) if span > 30 else 30
        created = max(day - dt.timedelta(days=back), _EARLIEST)
        got = self.ids.new(created, rng)
        if got is None:
            return None
        dates = [_rfc(created, rng)]
        middle = sorted(
            min(
                created + dt.timedelta(days=rng.randrange(1, max(2, (day - created).days))),
                day - dt.timedelta(days=1),
            )
            for _ in range(rng.choice((0, 0, 1, 2)))
        )
        dates.extend(_rfc(d, rng) for d in middle)
        dates.append(_rfc(day, rng))
        return _Paper(got[0], created, dates), got[1]

    def new_submission(self, day: dt.date) -> tuple[_Paper, str | None] | None:
        """A new paper announced today, submitted 0-3 days before (its id is from that month)."""
        rng = self.rng
        created = day - dt.timedelta(days=rng.choice((0, 0, 1, 1, 2, 3)))
        got = self.ids.new(created, rng)
        if got is None:
            created = day
            got = self.ids.new(day, rng)
        if got is None:
            return None
        return _Paper(got[0], created, [_rfc(created, rng)]), got[1]

    def day(self, day: dt.date, count: int) -> Iterator[ArxivRecord]:
        rng, stats = self.rng, self.stats
        today: list[tuple[_Paper, str | None]] = []
        for _ in range(count):
            r = rng.random()
            item = self.run_revision(day) if r < 0.15 else None
            if item is None and r < 0.27:
                item = self.old_revision(day)
                stats["new_ids"] += item is not None
            if item is None:
                item = self.new_submission(day)
                stats["new_ids"] += item is not None
            tries = 0
            while item is None and tries < 20:  # this month's id space is full: revise older papers
                item = self.old_revision(day)
                stats["new_ids"] += item is not None
                tries += 1
            if item is None:
                raise ValueError(f"no free arXiv ids left around {day}: too many records for these days")
            paper, archive = item
            rec = _record(self.seed, paper, day, archive)
            today.append(item)
            stats["revisions"] += len(paper.dates) > 1
            stats["old_style"] += archive is not None
            yield rec
        for item in today:  # revisable from tomorrow on: never twice on one day
            if len(self.reservoir) < _RESERVOIR_CAP:
                self.reservoir.append(item)
            else:
                self.reservoir[rng.randrange(_RESERVOIR_CAP)] = item


def iter_sample_records(
    n_records: int,
    days: int = 7,
    start: dt.date | str = "2007-03-30",
    seed: int = 0,
    counts: list[int] | None = None,
    stats: dict[str, int] | None = None,
) -> Iterator[ArxivRecord]:
    """Records in datestamp order (day by day, ``counts[i]`` on day ``i``); deterministic by seed.

    ``stats``, if given, is filled with ``new_ids`` (ids first seen in this run),
    ``revisions`` (records with version > 1) and ``old_style`` (records with old-style ids)."""
    start = dt.date.fromisoformat(start) if isinstance(start, str) else start
    counts = counts if counts is not None else day_counts(n_records, days, start, seed)
    gen = _Generator(seed)
    if stats is not None:
        stats.update(gen.stats)
        gen.stats = stats
    for i, count in enumerate(counts):
        yield from gen.day(start + dt.timedelta(days=i), count)


# ---------------------------------------------------------------- writers


def _esc(text: str) -> str:
    if "&" in text or "<" in text or ">" in text or '"' in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return text


_OAI_OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">\n'
)
_ARXIV_OPEN = (
    ' <arXiv xmlns="http://arxiv.org/OAI/arXiv/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://arxiv.org/OAI/arXiv/ http://arxiv.org/OAI/arXiv.xsd">\n'
)


def oai_record_xml(rec: ArxivRecord) -> str:
    """One ``<record>`` in arXiv's ``arXiv`` metadata format, element order as the endpoint's."""
    out = ["<record>\n<header>\n", f" <identifier>oai:arXiv.org:{rec.id}</identifier>\n"]
    out.append(f" <datestamp>{rec.datestamp.isoformat()}</datestamp>\n")
    out.extend(f" <setSpec>{s}</setSpec>\n" for s in rec.sets)
    out.append("</header>\n<metadata>\n")
    out.append(_ARXIV_OPEN)
    out.append(f" <id>{rec.id}</id><created>{rec.created.isoformat()}</created>")
    if rec.updated:
        out.append(f"<updated>{rec.updated.isoformat()}</updated>")
    out.append("<authors>")
    for a in rec.authors:
        out.append(f"<author><keyname>{_esc(a.keyname)}</keyname>")
        if a.forenames:
            out.append(f"<forenames>{_esc(a.forenames)}</forenames>")
        if a.suffix:
            out.append(f"<suffix>{_esc(a.suffix)}</suffix>")
        out.extend(f"<affiliation>{_esc(x)}</affiliation>" for x in a.affiliations)
        out.append("</author>")
    out.append(f"</authors><title>{_esc(wrap_title(rec.title))}</title>")
    out.append(f"<categories>{' '.join(rec.categories)}</categories>")
    for tag, value in (
        ("comments", wrap_title(rec.comments) if rec.comments else ""),
        ("report-no", rec.report_no),
        ("msc-class", rec.msc_class),
        ("acm-class", rec.acm_class),
        ("journal-ref", rec.journal_ref),
        ("doi", rec.doi),
        ("license", rec.license),
    ):
        if value:
            out.append(f"<{tag}>{_esc(value)}</{tag}>")
    out.append(f"<abstract>{_esc(wrap_abstract(rec.abstract))}</abstract></arXiv>\n</metadata>\n</record>\n")
    return "".join(out)


class OaiArxivWriter:
    """Writes each day's records as OAI-PMH ListRecords pages under ``<out>/oai/``, atomically."""

    def __init__(self, out: Path, page_size: int | None = None, seed: int = 0):
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be >= 1")
        self.dir = Path(out) / "oai"
        self.page_size = page_size
        self.seed = seed
        self.files: list[Path] = []

    def _names(self, day: dt.date, count: int) -> list[str]:
        if not self.page_size or count <= self.page_size:
            return [f"{day.isoformat()}.xml"]
        pages = -(-count // self.page_size)
        return [f"{day.isoformat()}-p{i:03d}.xml" for i in range(1, pages + 1)]

    def write_day(self, day: dt.date, records: Iterator[ArxivRecord], count: int) -> list[Path]:
        """Consume exactly ``count`` records (all with this datestamp) into this day's page files."""
        names = self._names(day, count)
        size = self.page_size if len(names) > 1 else max(count, 1)
        token_base = random.Random(f"{self.seed}:{day}").randrange(100000, 999999)
        response = f"{(day + dt.timedelta(days=1)).isoformat()}T02:56:16Z"
        written: list[Path] = []
        tokens = [f"{token_base}|{i * size + 1}" for i in range(len(names))]
        for page, name in enumerate(names):
            n = min(size, count - page * size)
            if page == 0:
                request = f'<request verb="ListRecords" until="{day}" from="{day}" metadataPrefix="arXiv">'
            else:
                request = f'<request verb="ListRecords" resumptionToken="{tokens[page]}">'
            parts = [
                _OAI_OPEN,
                f"<responseDate>{response}</responseDate>\n",
                f"{request}{OAI_BASE_URL}</request>\n",
            ]
            parts.append("<ListRecords>\n")
            for _ in range(n):
                rec = next(records)
                if rec.datestamp != day:
                    raise ValueError(f"record {rec.id} has datestamp {rec.datestamp}, page is for {day}")
                parts.append(oai_record_xml(rec))
            if len(names) > 1:
                attrs = f'cursor="{page * size}" completeListSize="{count}"'
                if page + 1 < len(names):
                    parts.append(f"<resumptionToken {attrs}>{tokens[page + 1]}</resumptionToken>\n")
                else:
                    parts.append(f"<resumptionToken {attrs}/>\n")
            parts.append("</ListRecords>\n</OAI-PMH>\n")
            path = self.dir / name
            with atomic_path(path) as tmp:
                tmp.write_bytes("".join(parts).encode("utf-8"))
            written.append(path)
        self.files.extend(written)
        return written


def kaggle_line(rec: ArxivRecord) -> str:
    """The record as one line of the Kaggle snapshot (current layout)."""
    obj = {
        "id": rec.id,
        "submitter": rec.submitter or None,
        "authors": rec.authors_raw,
        "title": wrap_title(rec.title),
        "comments": wrap_title(rec.comments) if rec.comments else None,
        "journal-ref": rec.journal_ref or None,
        "doi": rec.doi or None,
        "report-no": rec.report_no or None,
        "categories": " ".join(rec.categories),
        "license": rec.license or None,
        "abstract": wrap_abstract(rec.abstract),
        "versions": [{"version": f"v{v.version}", "created": v.date} for v in rec.versions],
        "update_date": rec.datestamp.isoformat() if rec.datestamp else None,
        "authors_parsed": [[a.keyname, a.forenames, a.suffix, *a.affiliations] for a in rec.authors],
    }
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"))


class KaggleWriter:
    """Kaggle snapshot lines to an open text stream (later records of an id supersede earlier ones)."""

    def __init__(self, fh: IO[str]):
        self.fh = fh

    def write(self, rec: ArxivRecord) -> None:
        self.fh.write(kaggle_line(rec) + "\n")


def abs_text(rec: ArxivRecord) -> str:
    """The record as an arXiv ``.abs`` file."""
    lines = ["-" * 78, "\\\\", f"arXiv:{rec.id}", f"From: {rec.submitter} <submitter@example.org>"]
    for v in rec.versions:
        label = "Date" if v.version == 1 else f"Date (revised v{v.version})"
        lines.append(f"{label}: {v.date}   ({v.size or '100kb'})")
    lines += ["", f"Title: {wrap_title(rec.title)}", f"Authors: {wrap_title(rec.authors_raw)}"]
    lines.append(f"Categories: {' '.join(rec.categories)}")
    for label, value in (
        ("Comments", rec.comments),
        ("Report-no", rec.report_no),
        ("MSC-class", rec.msc_class),
        ("ACM-class", rec.acm_class),
        ("Journal-ref", rec.journal_ref),
        ("DOI", rec.doi),
        ("License", rec.license),
    ):
        if value:
            lines.append(f"{label}: {wrap_title(value)}")
    lines += ["\\\\", wrap_abstract(rec.abstract).rstrip("\n"), "\\\\", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- driver


@dataclass
class SampleSummary:
    out: Path
    records: int
    per_day: dict[str, int] = field(default_factory=dict)  # ISO date -> records (days with none omitted)
    files: list[Path] = field(default_factory=list)
    distinct_ids: int = 0
    old_style: int = 0
    revisions: int = 0
    full_text: dict[str, int] = field(default_factory=dict)  # files written per kind (full_text=True)

    def as_dict(self) -> dict:
        extra = {"full_text": self.full_text} if self.full_text else {}
        return {
            "out": str(self.out),
            "records": self.records,
            "days": len(self.per_day),
            "files": len(self.files),
            "distinct_ids": self.distinct_ids,
            "old_style": self.old_style,
            "revisions": self.revisions,
            **extra,
        }


def _tee(
    records: Iterator[ArxivRecord], writers: Sequence[Callable[[ArxivRecord], object]]
) -> Iterator[ArxivRecord]:
    for rec in records:
        for write in writers:
            write(rec)
        yield rec


def generate_landing(
    out: str | Path,
    n_records: int = 1000,
    days: int = 7,
    start: dt.date | str = "2007-03-30",
    seed: int = 0,
    page_size: int | None = None,
    also: Sequence[Callable[[ArxivRecord], object]] = (),
    full_text: bool = False,
) -> SampleSummary:
    """Write a synthetic landing zone ``out/oai/*.xml``; stream, bounded memory, deterministic by seed.

    ``also``: more writers, each called with every record in datestamp order (e.g.
    ``KaggleWriter.write``). ``full_text``: also write every paper's PDF / TEI / e-print
    (:class:`corpus.sample.documents.FullTextWriter`); its counts go to ``summary.full_text``."""
    out = Path(out)
    writer_ft = None
    if full_text:
        from corpus.sample.documents import FullTextWriter

        writer_ft = FullTextWriter(out, seed=seed)
        also = [*also, writer_ft.write]
    start = dt.date.fromisoformat(start) if isinstance(start, str) else start
    counts = day_counts(n_records, days, start, seed)
    writer = OaiArxivWriter(out, page_size=page_size, seed=seed)
    summary = SampleSummary(out=out, records=n_records)
    stats: dict[str, int] = {}
    stream = iter_sample_records(n_records, days, start, seed, counts=counts, stats=stats)
    if also:
        stream = _tee(stream, also)
    for i, count in enumerate(counts):
        if count:
            day = start + dt.timedelta(days=i)
            writer.write_day(day, stream, count)
            summary.per_day[day.isoformat()] = count
    summary.files = writer.files
    if writer_ft is not None:
        writer_ft.close()
        summary.full_text = writer_ft.summary()
    summary.old_style, summary.revisions, summary.distinct_ids = (
        stats["old_style"],
        stats["revisions"],
        stats["new_ids"],
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m corpus.sample", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, type=Path, help="landing zone to write (DIR/oai/*.xml)")
    p.add_argument("--records", type=int, default=1000, help="OAI records in total (default 1000)")
    p.add_argument("--days", type=int, default=7, help="datestamp days (default 7)")
    p.add_argument(
        "--start", default="2007-03-30", help="first datestamp day, YYYY-MM-DD (default 2007-03-30)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--page-size", type=int, default=None, help="split days with more records into pages")
    p.add_argument(
        "--full-text",
        action="store_true",
        help="also write pdf/, tei/, src/ files and sample_manifest.jsonl (every asset of the demo gets rows)",
    )
    p.add_argument(
        "--bulk",
        type=Path,
        default=None,
        help="with --full-text: pack the PDFs and e-prints into a bulk root DIR in arXiv's layout "
        "(pdf/ and src/ tars + manifests) instead of leaving them in the landing zone",
    )
    args = p.parse_args(argv)
    if args.bulk and not args.full_text:
        p.error("--bulk needs --full-text (it packs the full-text files)")
    try:
        start = dt.date.fromisoformat(args.start)
    except ValueError:
        p.error(f"--start must be YYYY-MM-DD, got {args.start!r}")
    versions: dict[str, int] = {}

    def remember(rec: ArxivRecord) -> None:
        versions[rec.id] = max(versions.get(rec.id, 0), rec.version or 1)

    summary = generate_landing(
        args.out, args.records, args.days, start, args.seed, args.page_size,
        also=[remember] if args.bulk else [], full_text=args.full_text,
    )  # fmt: skip
    result = summary.as_dict()
    if args.bulk:
        from corpus.sample.bulk import move_files_out, write_bulk_root

        result["bulk"] = {"root": str(args.bulk), **write_bulk_root(args.out, args.bulk, versions)}
        move_files_out(args.out)
    print(json.dumps(result), file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
