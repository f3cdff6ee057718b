"""What the synthetic arXiv records are made of: arXiv's categories (weights, neighbours for
cross-lists, the old-style archives and their categories), OAI sets and fields of study, and the
word lists titles, abstracts, names, affiliations, journals and licences are drawn from."""

from __future__ import annotations

import itertools

# ---------------------------------------------------------------- taxonomy

# (category, weight); the archive is the part before the dot.
CATEGORIES: list[tuple[str, float]] = [
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
CAT_NAMES = [c for c, _ in CATEGORIES]
CAT_CUM: list[float] = list(itertools.accumulate(w for _, w in CATEGORIES))  # for bisect

# Cross-lists tend to stay near the primary.
NEAR = {
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
OLD_ARCHIVES: list[tuple[str, int, list[str]]] = [
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
OLD_CATS = {a: cats for a, _, cats in OLD_ARCHIVES}


def yymm_key(yymm: int) -> int:
    """9108 -> 199108, 309 -> 200309: comparable months across the century."""
    yy, mm = divmod(yymm, 100)
    return (1900 + yy if yy >= 91 else 2000 + yy) * 100 + mm


SET_ARCHIVES = frozenset("cs math stat eess econ q-bio q-fin".split())


def archive_of(category: str) -> str:
    return category.split(".", 1)[0]


def oai_set(category: str) -> str:
    """arXiv's OAI set for a category: ``cs``, ``math``, ``physics:hep-th`` ..."""
    archive = archive_of(category)
    return archive if archive in SET_ARCHIVES else f"physics:{archive}"


def field_of(category: str) -> str:
    archive = archive_of(category)
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
ADJ = _W(
    "robust efficient scalable novel general simple exact approximate nonlinear linear stochastic "
    "deterministic adaptive optimal local global sparse dense hierarchical distributed unified "
    "generalized improved accurate stable fast finite infinite discrete continuous quantum classical "
    "random effective strong weak high low large small dynamical statistical spectral geometric "
    "topological asymptotic explicit implicit multiscale universal critical coherent thermal"
)
NOUN = {
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
VERB = _W(
    "propose study analyze derive present introduce investigate establish develop construct "
    "compute prove demonstrate characterize evaluate measure obtain extend classify compare"
)
VERB3 = _W(
    "improves reduces enables reveals yields captures describes determines controls governs "
    "exhibits predicts explains requires preserves outperforms generalizes dominates"
)
CONNECT = _W("of for in with under from on via between beyond without across")
OPENERS = [
    "In this paper, we",
    "In this work, we",
    "Here we",
    "We",
    "In this note we",
    "Motivated by recent experiments, we",
]
FINDINGS = [
    "Our results show that",
    "We find that",
    "Numerical experiments indicate that",
    "As a consequence,",
    "In particular,",
    "Moreover,",
    "We also show that",
]
MATH_BITS = [
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

FIRST = _W(
    "Maria Anna Laura Sofia Elena Julia Clara Hannah Emma Sarah Yuki Mei Wei Li Jing Xin Hao Ming "
    "Ravi Priya Arjun Anil Sunita Omar Fatima Ahmed Leila Mehmet Ayse Olga Ivan Dmitri Sergei Natalia "
    "Pierre Jean-Pierre Marie-Claire Hans Anna-Lena Klaus Jürgen Sören José Joao Luis Ana Carlos "
    "Giulia Marco Paolo Lorenzo Chiara Kenji Hiroshi Takeshi Min-Jun Ji-Woo Seo-yeon Thomas James "
    "John Robert Michael David Richard Daniel Matthew Andrew Emily Olivia Grace Peter Paul Nikolai "
    "Zoltán Ágnes Bjørn Søren Kateřina Tomáš Xiao-Lin Yu-Ming Chao-Hsi"
)
LAST = _W(
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
PARTICLE_LAST = [
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
SUFFIXES = ["Jr.", "Sr.", "II", "III"]
COLLABORATIONS = {
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
AFFILIATIONS = [
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
JOURNALS = {
    "cs": ["Proceedings of NeurIPS", "IEEE Trans. Inf. Theory", "J. Mach. Learn. Res.", "Proceedings of ACL"],
    "math": ["Ann. of Math.", "Invent. Math.", "Duke Math. J.", "J. Amer. Math. Soc.", "Adv. Math."],
    "phys": ["Phys. Rev. D", "Phys. Rev. Lett.", "JHEP", "Astrophys. J.", "Phys. Rev. B", "Nucl. Phys. B"],
    "bio": ["PLoS Comput. Biol.", "J. Theor. Biol.", "Biophys. J."],
    "econ": ["Econometrica", "J. Econometrics", "Quant. Finance"],
}
DOI_PREFIX = {"cs": "10.1109", "math": "10.4007", "phys": "10.1103", "bio": "10.1371", "econ": "10.3982"}
LICENSES = [
    "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    "http://creativecommons.org/licenses/by/4.0/",
    "http://creativecommons.org/licenses/by/4.0/",
    "http://creativecommons.org/licenses/by-nc-sa/4.0/",
    "http://creativecommons.org/licenses/by-sa/4.0/",
    "http://creativecommons.org/publicdomain/zero/1.0/",
]
MSC = ["05C85", "35Q55", "60J10", "57M27", "14J32", "11F11", "46L05", "53C44", "90C25", "65N30"]
ACM = ["I.2.6", "F.2.2", "H.3.3", "I.4.8", "C.2.4", "D.3.4"]
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
