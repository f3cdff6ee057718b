"""arXiv categories -> the 10 CiteWorth fields and a broad (MAG-like) field of study.

CiteWorth (citeworth-paper.txt §3.2) samples paragraphs evenly from 10 Microsoft
Academic Graph fields and puts each paragraph in exactly one. arXiv papers carry
no MAG labels, so the field comes from the arXiv *primary* category (SPEC.md §7,
choice) through one table, :data:`TAXONOMY`, that lists every arXiv category
(https://arxiv.org/category_taxonomy, including the retired archives such as
``alg-geom`` or ``chao-dyn`` and the physics sub-archives) with its name, its
CiteWorth field and its field of study.

Choices (everything else follows the archive: cs -> Computer Science, math ->
Mathematics, every physics archive -> Physics, q-bio -> Biology):

* ``cond-mat.mtrl-sci`` (and the retired ``mtrl-th``) -> Materials Science.
* ``physics.chem-ph`` (and the retired ``chem-ph``) -> Chemistry.
* ``physics.med-ph`` and ``q-bio.TO`` (tissues and organs) -> Medicine.
* ``q-bio.NC`` (neurons and cognition) -> Psychology: it is arXiv's only home of
  cognition and behaviour; without it CiteWorth's Psychology field could never be
  filled from arXiv. Its field of study stays Biology (neuroscience).
* ``econ.*`` and ``q-fin.*`` -> Economics; as field of study, the finance-practice
  categories (q-fin.GN, PM, RM, TR) are Business, as in MAG.
* ``eess.*`` and ``cs.SY`` (an alias of eess.SY) -> Engineering.
* ``stat.ML`` -> Computer Science (MAG files machine learning there); every other
  ``stat.*`` -> Mathematics. ``math.IT`` (alias of cs.IT) -> Computer Science;
  ``math.MP`` (alias of math-ph) -> Physics; ``cs.NA`` (alias of math.NA) ->
  Mathematics.
* Field of study only: ``physics.geo-ph`` -> Geology, ``physics.ao-ph`` /
  ``ao-sci`` -> Environmental Science (their CiteWorth field is Physics).

Fallbacks of :func:`citeworth_field` / :func:`field_of_study`, in order: the
primary (first) category; an unknown category of a known archive (a category
arXiv adds later) takes its archive's default; then the other categories in
order; otherwise :class:`UnknownCategory`. Inputs may be category codes
(``hep-th``, ``cs.LG``), OAI set specs (``physics:hep-th``, ``cs``) or the
names oai_dc ``<dc:subject>`` uses (``Computer Science - Learning``).
"""

from __future__ import annotations

import re

CITEWORTH_FIELDS: tuple[str, ...] = (
    "Biology",
    "Medicine",
    "Engineering",
    "Chemistry",
    "Psychology",
    "Computer Science",
    "Materials Science",
    "Economics",
    "Mathematics",
    "Physics",
)

_BIO, _MED, _ENG, _CHEM, _PSY, _CS, _MS, _ECON, _MATH, _PHYS = CITEWORTH_FIELDS

# archive -> (display name used in "Name - Category" subjects, CiteWorth default, field-of-study default)
ARCHIVES: dict[str, tuple[str, str, str]] = {
    "cs": ("Computer Science", _CS, _CS),
    "econ": ("Economics", _ECON, _ECON),
    "eess": ("Electrical Engineering and Systems Science", _ENG, _ENG),
    "math": ("Mathematics", _MATH, _MATH),
    "astro-ph": ("Astrophysics", _PHYS, _PHYS),
    "cond-mat": ("Condensed Matter", _PHYS, _PHYS),
    "gr-qc": ("General Relativity and Quantum Cosmology", _PHYS, _PHYS),
    "hep-ex": ("High Energy Physics - Experiment", _PHYS, _PHYS),
    "hep-lat": ("High Energy Physics - Lattice", _PHYS, _PHYS),
    "hep-ph": ("High Energy Physics - Phenomenology", _PHYS, _PHYS),
    "hep-th": ("High Energy Physics - Theory", _PHYS, _PHYS),
    "math-ph": ("Mathematical Physics", _PHYS, _PHYS),
    "nlin": ("Nonlinear Sciences", _PHYS, _PHYS),
    "nucl-ex": ("Nuclear Experiment", _PHYS, _PHYS),
    "nucl-th": ("Nuclear Theory", _PHYS, _PHYS),
    "physics": ("Physics", _PHYS, _PHYS),
    "quant-ph": ("Quantum Physics", _PHYS, _PHYS),
    "q-bio": ("Quantitative Biology", _BIO, _BIO),
    "q-fin": ("Quantitative Finance", _ECON, _ECON),
    "stat": ("Statistics", _MATH, _MATH),
}

# Retired archives -> the category that absorbed them (arXiv's own mapping).
RETIRED: dict[str, str] = {
    "acc-phys": "physics.acc-ph",
    "adap-org": "nlin.AO",
    "alg-geom": "math.AG",
    "ao-sci": "physics.ao-ph",
    "atom-ph": "physics.atom-ph",
    "bayes-an": "physics.data-an",
    "chao-dyn": "nlin.CD",
    "chem-ph": "physics.chem-ph",
    "cmp-lg": "cs.CL",
    "comp-gas": "nlin.CG",
    "dg-ga": "math.DG",
    "funct-an": "math.FA",
    "mtrl-th": "cond-mat.mtrl-sci",
    "patt-sol": "nlin.PS",
    "plasm-ph": "physics.plasm-ph",
    "q-alg": "math.QA",
    "solv-int": "nlin.SI",
    "supr-con": "cond-mat.supr-con",
}

# code | arXiv name | CiteWorth field | field of study ("" = the archive's default)
_TABLE = """
cs.AI|Artificial Intelligence||
cs.AR|Hardware Architecture||
cs.CC|Computational Complexity||
cs.CE|Computational Engineering, Finance, and Science||
cs.CG|Computational Geometry||
cs.CL|Computation and Language||
cs.CR|Cryptography and Security||
cs.CV|Computer Vision and Pattern Recognition||
cs.CY|Computers and Society||
cs.DB|Databases||
cs.DC|Distributed, Parallel, and Cluster Computing||
cs.DL|Digital Libraries||
cs.DM|Discrete Mathematics||
cs.DS|Data Structures and Algorithms||
cs.ET|Emerging Technologies||
cs.FL|Formal Languages and Automata Theory||
cs.GL|General Literature||
cs.GR|Graphics||
cs.GT|Computer Science and Game Theory||
cs.HC|Human-Computer Interaction||
cs.IR|Information Retrieval||
cs.IT|Information Theory||
cs.LG|Machine Learning||
cs.LO|Logic in Computer Science||
cs.MA|Multiagent Systems||
cs.MM|Multimedia||
cs.MS|Mathematical Software||
cs.NA|Numerical Analysis|Mathematics|Mathematics
cs.NE|Neural and Evolutionary Computing||
cs.NI|Networking and Internet Architecture||
cs.OH|Other Computer Science||
cs.OS|Operating Systems||
cs.PF|Performance||
cs.PL|Programming Languages||
cs.RO|Robotics||
cs.SC|Symbolic Computation||
cs.SD|Sound||
cs.SE|Software Engineering||
cs.SI|Social and Information Networks||
cs.SY|Systems and Control|Engineering|Engineering
econ.EM|Econometrics||
econ.GN|General Economics||
econ.TH|Theoretical Economics||
eess.AS|Audio and Speech Processing||
eess.IV|Image and Video Processing||
eess.SP|Signal Processing||
eess.SY|Systems and Control||
math.AC|Commutative Algebra||
math.AG|Algebraic Geometry||
math.AP|Analysis of PDEs||
math.AT|Algebraic Topology||
math.CA|Classical Analysis and ODEs||
math.CO|Combinatorics||
math.CT|Category Theory||
math.CV|Complex Variables||
math.DG|Differential Geometry||
math.DS|Dynamical Systems||
math.FA|Functional Analysis||
math.GM|General Mathematics||
math.GN|General Topology||
math.GR|Group Theory||
math.GT|Geometric Topology||
math.HO|History and Overview||
math.IT|Information Theory|Computer Science|Computer Science
math.KT|K-Theory and Homology||
math.LO|Logic||
math.MG|Metric Geometry||
math.MP|Mathematical Physics|Physics|Physics
math.NA|Numerical Analysis||
math.NT|Number Theory||
math.OA|Operator Algebras||
math.OC|Optimization and Control||
math.PR|Probability||
math.QA|Quantum Algebra||
math.RA|Rings and Algebras||
math.RT|Representation Theory||
math.SG|Symplectic Geometry||
math.SP|Spectral Theory||
math.ST|Statistics Theory||
astro-ph.CO|Cosmology and Nongalactic Astrophysics||
astro-ph.EP|Earth and Planetary Astrophysics||
astro-ph.GA|Astrophysics of Galaxies||
astro-ph.HE|High Energy Astrophysical Phenomena||
astro-ph.IM|Instrumentation and Methods for Astrophysics||
astro-ph.SR|Solar and Stellar Astrophysics||
cond-mat.dis-nn|Disordered Systems and Neural Networks||
cond-mat.mes-hall|Mesoscale and Nanoscale Physics||
cond-mat.mtrl-sci|Materials Science|Materials Science|Materials Science
cond-mat.other|Other Condensed Matter||
cond-mat.quant-gas|Quantum Gases||
cond-mat.soft|Soft Condensed Matter||
cond-mat.stat-mech|Statistical Mechanics||
cond-mat.str-el|Strongly Correlated Electrons||
cond-mat.supr-con|Superconductivity||
gr-qc|General Relativity and Quantum Cosmology||
hep-ex|High Energy Physics - Experiment||
hep-lat|High Energy Physics - Lattice||
hep-ph|High Energy Physics - Phenomenology||
hep-th|High Energy Physics - Theory||
math-ph|Mathematical Physics||
nlin.AO|Adaptation and Self-Organizing Systems||
nlin.CD|Chaotic Dynamics||
nlin.CG|Cellular Automata and Lattice Gases||
nlin.PS|Pattern Formation and Solitons||
nlin.SI|Exactly Solvable and Integrable Systems||
nucl-ex|Nuclear Experiment||
nucl-th|Nuclear Theory||
physics.acc-ph|Accelerator Physics||
physics.ao-ph|Atmospheric and Oceanic Physics||Environmental Science
physics.app-ph|Applied Physics||
physics.atm-clus|Atomic and Molecular Clusters||
physics.atom-ph|Atomic Physics||
physics.bio-ph|Biological Physics||
physics.chem-ph|Chemical Physics|Chemistry|Chemistry
physics.class-ph|Classical Physics||
physics.comp-ph|Computational Physics||
physics.data-an|Data Analysis, Statistics and Probability||
physics.ed-ph|Physics Education||
physics.flu-dyn|Fluid Dynamics||
physics.gen-ph|General Physics||
physics.geo-ph|Geophysics||Geology
physics.hist-ph|History and Philosophy of Physics||
physics.ins-det|Instrumentation and Detectors||
physics.med-ph|Medical Physics|Medicine|Medicine
physics.optics|Optics||
physics.plasm-ph|Plasma Physics||
physics.pop-ph|Popular Physics||
physics.soc-ph|Physics and Society||
physics.space-ph|Space Physics||
quant-ph|Quantum Physics||
q-bio.BM|Biomolecules||
q-bio.CB|Cell Behavior||
q-bio.GN|Genomics||
q-bio.MN|Molecular Networks||
q-bio.NC|Neurons and Cognition|Psychology|Biology
q-bio.OT|Other Quantitative Biology||
q-bio.PE|Populations and Evolution||
q-bio.QM|Quantitative Methods||
q-bio.SC|Subcellular Processes||
q-bio.TO|Tissues and Organs|Medicine|Medicine
q-fin.CP|Computational Finance||
q-fin.EC|Economics||
q-fin.GN|General Finance||Business
q-fin.MF|Mathematical Finance||
q-fin.PM|Portfolio Management||Business
q-fin.PR|Pricing of Securities||
q-fin.RM|Risk Management||Business
q-fin.ST|Statistical Finance||
q-fin.TR|Trading and Market Microstructure||Business
stat.AP|Applications||
stat.CO|Computation||
stat.ME|Methodology||
stat.ML|Machine Learning|Computer Science|Computer Science
stat.OT|Other Statistics||
stat.TH|Statistics Theory||
"""


def _archive_of(code: str) -> str:
    return code.split(".", 1)[0]


def _build() -> dict[str, tuple[str, str, str]]:
    table: dict[str, tuple[str, str, str]] = {}
    for line in _TABLE.strip().splitlines():
        code, name, cw, fos = line.split("|")
        _, cw_default, fos_default = ARCHIVES[_archive_of(code)]
        table[code] = (name, cw or cw_default, fos or fos_default)
    for archive, (name, cw, fos) in ARCHIVES.items():
        table.setdefault(archive, (name, cw, fos))  # bare archive codes (astro-ph, cond-mat before subjects)
    for old, new in RETIRED.items():
        table[old] = table[new]
    return table


#: Every arXiv category code -> (arXiv name, CiteWorth field, field of study).
TAXONOMY: dict[str, tuple[str, str, str]] = _build()

_LOWER = {code.lower(): code for code in TAXONOMY}


def _name_index() -> dict[str, str]:
    """oai_dc subject strings -> code: 'Computer Science - Machine Learning', 'Quantum Physics'."""
    index: dict[str, str] = {}
    for code, (name, _, _) in TAXONOMY.items():
        archive = _archive_of(code)
        if archive in ARCHIVES and "." in code:
            index[f"{ARCHIVES[archive][0]} - {name}".lower()] = code
        elif archive in ARCHIVES:
            index[name.lower()] = code
    for archive, (name, _, _) in ARCHIVES.items():
        index.setdefault(name.lower(), archive)
    return index


_NAMES = _name_index()
_GROUP_NAMES = {name.lower(): archive for archive, (name, _, _) in ARCHIVES.items()}
_CODE_RE = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$", re.IGNORECASE)


class UnknownCategory(ValueError):
    """No category in the list maps to a field (the message names them)."""


def canonical_category(raw: str) -> str | None:
    """A known category code for a code, OAI set spec or subject name, else ``None``."""
    s = raw.strip()
    if not s:
        return None
    if ":" in s and " " not in s:  # OAI set spec: physics:hep-th, physics:physics
        s = s.split(":", 1)[1]
    code = _LOWER.get(s.lower())
    if code:
        return code
    named = _NAMES.get(re.sub(r"\s+", " ", s).lower())
    if named:
        return named
    # "Computer Science - Learning" (an old subject name): fall back to the archive of the group name
    group = s.split(" - ", 1)[0].strip().lower()
    if " - " in s and group in _GROUP_NAMES:
        return _GROUP_NAMES[group]
    return None


def _lookup(raw: str) -> tuple[str, str, str] | None:
    code = canonical_category(raw)
    if code:
        return TAXONOMY[code]
    s = raw.strip()
    if _CODE_RE.match(s):  # a category arXiv added after this table: use its archive's default
        archive = _archive_of(s.split(":", 1)[-1]).lower()
        if archive in ARCHIVES:
            return ARCHIVES[archive]
    return None


def _resolve(categories: list[str] | str, slot: int) -> str:
    cats = categories.split() if isinstance(categories, str) else list(categories)
    for raw in cats:
        hit = _lookup(raw)
        if hit:
            return hit[slot]
    raise UnknownCategory(f"no known arXiv category in {cats!r}")


def citeworth_field(categories: list[str] | str) -> str:
    """One of :data:`CITEWORTH_FIELDS` from the primary category (first of the list;
    a space-separated string as in arXiv metadata works too); fallbacks in the module doc."""
    return _resolve(categories, 1)


def field_of_study(categories: list[str] | str) -> str:
    """A broad MAG-like field of study (MAG's level-0 names) from the primary category."""
    return _resolve(categories, 2)


def category_name(code: str) -> str:
    """arXiv's name of a category code (``cs.CL`` -> ``Computation and Language``)."""
    canon = canonical_category(code)
    if canon is None:
        raise UnknownCategory(f"unknown arXiv category {code!r}")
    return TAXONOMY[canon][0]
