"""Synthetic full text for the demo landing zone: one English scientific paper per record.

:func:`make_paper` turns an OAI record plus the earlier demo papers it may cite
into a :class:`PaperText` -- sections, paragraphs of sentences whose parts are
plain text, citations (:class:`Cite`) and figure references (:class:`FigRef`), a
bibliography (:class:`BibRef`), figures and one display equation. The writers in
:mod:`corpus.sample.documents` render the same paper as Grobid TEI, LaTeX and PDF
text, so both parsers see one paper and the linker one set of references.

Why it looks the way it does:

* sentences come from templates over real English scientific vocabulary, so cld2
  calls them English and peS2o's unigram filter (mean log2 word probability above
  -20 with wordfreq) keeps them; no word dominates (peS2o's 7.5 % top-word rule);
* section titles come mostly from CiteWorth's App. A list, with a few others
  (``Preliminaries``, ``Numerical Setup``) that CiteWorth must reject;
* most citations end their sentence (``... reported before [3].`` or
  ``(Smith et al., 2019).``), some sit mid-sentence or are narrative
  (``Smith et al. (2019) showed``), so CiteWorth keeps some paragraphs and drops others;
* each paper cites 5-40 earlier demo papers by exact title, noisy title, arXiv id or
  DOI (:data:`LINK_KINDS`), chosen with preferential attachment so in-degrees are
  skewed, plus outside references that link to nothing; some bodies name earlier
  papers as ``arXiv:<id>`` (co-citation edges);
* a few papers are planted to fail filters (:data:`PLANTS`): very short, French,
  German, a gibberish section, a leaked numeric table.

Everything is drawn from ``random.Random(f"{seed}:text:{id}")`` and the pool of
earlier papers, so a seed gives the same papers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = [
    "Cite",
    "FigRef",
    "BibRef",
    "Section",
    "PaperText",
    "PoolPaper",
    "LINK_KINDS",
    "PLANTS",
    "make_paper",
    "render_plain",
    "cite_label",
    "noisy_title",
]

LINK_KINDS = ("exact_title", "noisy_title", "arxiv_id", "doi")
PLANTS = ("short", "french", "german", "gibberish", "numbers")

# ---------------------------------------------------------------- model


@dataclass(slots=True)
class Cite:
    """A citation of bibliography entries (0-based indexes); ``narrative``: "Smith et al. (2019)"."""

    refs: tuple[int, ...]
    narrative: bool = False


@dataclass(slots=True)
class FigRef:
    """A reference to figure ``n`` (1-based)."""

    n: int


Part = str | Cite | FigRef


@dataclass(slots=True)
class BibRef:
    """One bibliography entry as the citing paper prints it, and what it truly points to."""

    title: str
    authors: list[tuple[str, str]]  # (forenames, surname)
    year: int
    venue: str
    doi: str = ""
    arxiv_id: str = ""
    cited_id: str | None = None  # the demo paper meant, None for outside references
    kind: str = "outside"  # one of LINK_KINDS or "outside"


@dataclass(slots=True)
class Section:
    title: str
    paragraphs: list[list[Part]]  # a paragraph is a run of parts; sentences end in ". "


@dataclass
class PaperText:
    id: str
    title: str
    abstract: str
    authors: list[tuple[str, str]]
    year: int
    style: str  # BRACKET | NAME-YEAR
    sections: list[Section]
    bib: list[BibRef]
    figures: list[str]  # captions
    equation: tuple[str, str]  # (LaTeX, text) of the display equation, after section 2's first paragraph
    plant: str | None = None
    lang: str = "en"
    arxiv_mentions: list[str] = field(default_factory=list)

    def words(self) -> int:
        return sum(
            len(p.split()) for s in self.sections for para in s.paragraphs for p in para if isinstance(p, str)
        )


@dataclass(slots=True)
class PoolPaper:
    """What a later paper needs to cite an earlier demo paper."""

    id: str
    title: str
    authors: list[tuple[str, str]]
    year: int
    venue: str
    doi: str


# ---------------------------------------------------------------- vocabulary

_W = str.split
_TERMS = {
    "cs": _W(
        "training objective|language model|neural network|attention mechanism|loss function|search space|"
        "feature representation|training set|test accuracy|gradient estimate|learning rate|decision boundary|"
        "retrieval system|image classifier|graph embedding|reward signal|memory footprint|inference cost|"
        "model capacity|data distribution|baseline method|error rate|benchmark suite|parameter count|"
        "optimization procedure|sampling strategy|label noise|generalization gap|encoder layer|query latency",
        "|",
    ),
    "math": _W(
        "main theorem|boundary condition|spectral gap|compact manifold|linear operator|energy estimate|"
        "error bound|convergence rate|invariant measure|fundamental group|weak solution|moduli space|"
        "coefficient field|generating function|orthogonal basis|lower bound|upper bound|Sobolev space|"
        "random walk|eigenvalue problem|fixed point|polynomial identity|Hilbert space|Lie algebra|"
        "curvature condition|integral operator|finite group|regularity result|density argument|limit case",
        "|",
    ),
    "phys": _W(
        "ground state|phase transition|coupling constant|magnetic field|energy spectrum|correlation length|"
        "cross section|critical temperature|decay rate|scattering amplitude|dark matter halo|gauge field|"
        "spin chain|quantum state|electron density|thermal conductivity|lattice spacing|boundary layer|"
        "emission line|detector response|neutrino flux|band structure|order parameter|heat capacity|"
        "black hole|light curve|wave function|particle number|effective potential|power spectrum",
        "|",
    ),
    "bio": _W(
        "gene expression|protein structure|cell population|neural activity|signaling pathway|growth rate|"
        "mutation rate|binding affinity|immune response|population size|tissue sample|species richness|"
        "firing rate|metabolic network|fitness landscape|transcription factor|cell cycle|host range",
        "|",
    ),
    "econ": _W(
        "interest rate|price index|labor market|treatment effect|risk premium|asset price|demand curve|"
        "policy rule|welfare loss|trade flow|panel data|credit spread|exchange rate|market power|"
        "tax rate|household income|consumption path|investment decision",
        "|",
    ),
}
_PLURAL_EXCEPT = {"analysis": "analyses", "data": "data", "spectrum": "spectra", "gap": "gaps"}
_ADJ = _W(
    "robust efficient simple general accurate stable consistent systematic significant detailed careful "
    "standard natural previous recent classical modern complete explicit direct similar typical strong "
    "weak large small sharp smooth reliable practical careful important central relevant independent"
)
_ADV = _W(
    "significantly substantially clearly slightly consistently strongly considerably markedly "
    "noticeably steadily largely partly directly"
)
_VERB_PAST = _W(
    "studied analyzed measured estimated computed derived examined compared tested observed reported "
    "characterized described evaluated investigated established confirmed identified"
)
_VERB_PRES = _W(
    "improves reduces increases controls determines affects explains predicts limits shapes changes "
    "dominates follows exceeds matches supports constrains"
)
_METHOD = [
    "numerical simulations",
    "a controlled experiment",
    "a simple analytical model",
    "an extensive parameter study",
    "a series of careful measurements",
    "standard statistical tests",
    "a direct calculation",
    "an ablation study",
    "a perturbative expansion",
    "a large public dataset",
]
_SAMPLE_WORDS = _W("several many most some these both various multiple different")
_SENTENCES = [
    "We {vp} the {t} under a wide range of conditions and found that it {vs} the {t} {adv}.",
    "The {a} {t} {vs} the {t} in most of the settings that we consider here.",
    "In practice, the {t} is often {vp} with {m}, which makes the comparison more difficult.",
    "A {a} {t} is essential for a {a} description of the {t}.",
    "Our analysis shows that the {t} {vs} the {t} only when the {t} is large enough.",
    "To make this precise, we first introduce the {t} and then discuss its main properties.",
    "This choice keeps the {t} small while the {t} remains {a} over the whole range.",
    "We therefore expect the {t} to depend {adv} on the {t} and much less on the {t}.",
    "As a result, {sw} {ts} can be {vp} with the same {t} at almost no extra cost.",
    "The main difficulty is that the {t} is not known in advance and has to be estimated from data.",
    "These findings suggest that a {a} {t} is a useful tool for understanding the {t}.",
    "It is worth noting that the {t} was {vp} in a separate step, after the {t} had been fixed.",
    "For this reason, we report both the {t} and the {t} for every configuration.",
    "The resulting {t} agrees well with the expected {t} within the estimated uncertainty.",
    "Using {m}, we {vp} how the {t} changes when the {t} is increased by a factor of {num}.",
    "One can show that the {t} remains bounded, provided that the {t} is {a}.",
    "Table {num} lists the values of the {t} that we obtained for {sw} {ts}.",
    "Taken together, these results indicate that the {t} is far more {a} than previously thought.",
    "We also find that the {t} {vs} the {t}, although the effect is {adv} smaller.",
    "The {t} and the {t} are closely related, and we treat them within one framework.",
    "Most of the computing time is spent on the {t}, which grows with the size of the problem.",
    "When the {t} is small, the {t} is well described by a {a} approximation.",
    "In the remainder of this section, we describe the {t} in more detail.",
    "Our approach differs from earlier work mainly in the way the {t} is treated.",
]
_INTRO = [
    "Understanding the {t} is a central problem in the study of {ts}.",
    "Over the past decade, the {t} has attracted considerable attention from both theory and experiment.",
    "Despite this progress, a {a} account of the {t} is still missing.",
    "In this paper, we address this question by studying the {t} in a {a} setting.",
    "The rest of this paper is organized as follows.",
]
_CONCLUDE = [
    "We have presented a {a} study of the {t} and its relation to the {t}.",
    "Our results show that the {t} {vs} the {t} in a way that is both {a} and {a}.",
    "Several questions remain open, in particular the role of the {t} at large scales.",
    "We hope that this work will motivate further studies of the {t}.",
]
# Citation at the end of the sentence: the text before "§" then the citation then ".".
_CITE_END = [
    "This problem has been studied extensively in recent years§.",
    "Similar behavior of the {t} was reported in earlier studies§.",
    "The {t} is usually {vp} with {m}§.",
    "A {a} treatment of the {t} was proposed previously§.",
    "Related ideas have also been applied to the {t}§.",
    "Comparable values of the {t} were obtained with a different method§.",
    "Several extensions of this approach are now available§.",
    "This observation is consistent with previous measurements§.",
    "The standard formulation of the {t} goes back to earlier work§.",
    "Other authors have argued that the {t} is less important§.",
]
# Citation in the middle of the sentence (CiteWorth rejects the paragraph).
_CITE_MID = [
    "Following the approach of§, we {vp} the {t} with {m}.",
    "The method of§ is used here as a baseline for the {t}.",
    "Unlike§, we do not assume that the {t} is known.",
]
_CITE_NARRATIVE = [
    "§ showed that the {t} {vs} the {t}.",
    "§ {vp} the {t} with {m}.",
]
_FIG = [
    "Figure § shows the {t} as a function of the {t}.",
    "The dependence of the {t} on the {t} is shown in Figure §.",
]
_SECTION_TITLES_MIDDLE = [
    "Related Work",
    "Background",
    "Method",
    "Methods",
    "Methodology",
    "Proposed Method",
    "Experiments",
    "Experimental Results",
    "Results",
    "Results and Discussion",
    "Analysis",
    "Evaluation",
    "Implementation Details",
    "Discussion",
    "Limitations",
    "Motivation",
    "Overview",
    # not in CiteWorth App. A: its paragraphs must be rejected as "section"
    "Preliminaries",
    "Numerical Setup",
    "Theoretical Framework",
    "Data Collection",
]
_SECTION_FIRST = ["Introduction", "Introduction", "Introduction", "Motivation"]
_SECTION_LAST = ["Conclusion", "Conclusions", "Conclusions and Future Work", "Discussion and Conclusion"]
VENUES = {
    "cs": ["Advances in Neural Information Processing Systems", "Proceedings of ICML", "Proceedings of ACL"],
    "math": ["Annals of Mathematics", "Inventiones Mathematicae", "Duke Mathematical Journal"],
    "phys": ["Physical Review D", "Physical Review Letters", "Journal of High Energy Physics"],
    "bio": ["PLoS Computational Biology", "Journal of Theoretical Biology", "Biophysical Journal"],
    "econ": ["Econometrica", "Journal of Econometrics", "Quantitative Finance"],
}
_OUTSIDE_JOURNALS = ["nima", "physa", "neucom", "jcp", "cpc", "aml", "jmaa", "patcog"]
_FIRST_NAMES = _W("Anna Wei Ravi Maria John Yuki Pierre Olga Carlos Laura Kenji Fatima David Elena Hao Sofia")
_SURNAMES = _W(
    "Smith Wang Kumar Garcia Müller Tanaka Rossi Ivanov Kim Novak Dubois Silva Chen Nielsen Park Lopez "
    "Brown Singh Moreau Becker Costa Sato Horvath Jensen"
)

# Real French and German scientific sentences (planted non-English papers).
_FRENCH = [
    "Dans cet article, nous étudions le comportement des solutions pour des conditions aux limites générales.",
    "Les résultats numériques montrent que la méthode proposée converge rapidement vers la solution exacte.",
    "Nous présentons une nouvelle approche fondée sur une analyse détaillée des données expérimentales.",
    "Cette hypothèse est raisonnable lorsque la température reste inférieure à la valeur critique.",
    "La figure montre l'évolution de l'énergie en fonction du temps pour plusieurs valeurs du paramètre.",
    "Il convient de noter que cette estimation dépend fortement du choix de la discrétisation.",
    "Les mesures ont été effectuées à température ambiante avec un dispositif expérimental standard.",
    "Nos résultats confirment les prédictions théoriques obtenues dans des travaux antérieurs.",
    "Dans la suite, nous supposons que le domaine est borné et que sa frontière est régulière.",
    "La principale difficulté provient de la non-linéarité du problème et de l'absence de symétrie.",
    "Nous comparons ensuite notre modèle avec les méthodes classiques utilisées dans la littérature.",
    "Enfin, nous discutons les limites de cette étude ainsi que plusieurs perspectives de recherche.",
]
_GERMAN = [
    "In dieser Arbeit untersuchen wir das Verhalten der Lösungen unter allgemeinen Randbedingungen.",
    "Die numerischen Ergebnisse zeigen, dass das vorgeschlagene Verfahren schnell gegen die exakte Lösung konvergiert.",
    "Wir stellen einen neuen Ansatz vor, der auf einer genauen Analyse der experimentellen Daten beruht.",
    "Diese Annahme ist gerechtfertigt, solange die Temperatur unterhalb des kritischen Wertes bleibt.",
    "Die Abbildung zeigt die zeitliche Entwicklung der Energie für verschiedene Werte des Parameters.",
    "Es ist zu beachten, dass diese Abschätzung stark von der Wahl der Diskretisierung abhängt.",
    "Die Messungen wurden bei Raumtemperatur mit einem handelsüblichen Versuchsaufbau durchgeführt.",
    "Unsere Ergebnisse bestätigen die theoretischen Vorhersagen aus früheren Arbeiten.",
    "Im Folgenden nehmen wir an, dass das Gebiet beschränkt ist und einen glatten Rand besitzt.",
    "Die wesentliche Schwierigkeit liegt in der Nichtlinearität des Problems und der fehlenden Symmetrie.",
    "Anschließend vergleichen wir unser Modell mit den klassischen Methoden aus der Literatur.",
    "Abschließend diskutieren wir die Grenzen dieser Untersuchung und mögliche weitere Forschungsfragen.",
]
_FR_TITLES = ["Introduction", "Modèle et méthodes", "Résultats", "Discussion", "Conclusion"]
_DE_TITLES = ["Einleitung", "Modell und Methoden", "Ergebnisse", "Diskussion", "Zusammenfassung"]
_EQUATIONS = [  # (LaTeX, the text Grobid extracts from the PDF)
    (
        r"E(\theta) = \sum_{i=1}^{N} \left( y_i - f(x_i; \theta) \right)^2",
        "E(θ) = ∑ N i=1 (y i − f (x i ; θ)) 2",
    ),
    (r"\partial_t u = \Delta u + \lambda u (1 - u)", "∂ t u = ∆u + λu(1 − u)"),
    (r"Z = \int \mathcal{D}\phi \, e^{-S[\phi]}", "Z = Dφ e −S[φ]"),
    (r"\| T f \|_{L^2} \leq C \| f \|_{H^1}", "T f L 2 ≤ C f H 1"),
    (
        r"H = -J \sum_{\langle i j \rangle} \sigma_i \sigma_j - h \sum_i \sigma_i",
        "H = −J ij σ i σ j − h i σ i",
    ),
]


def _plural(term: str) -> str:
    head, _, last = term.rpartition(" ")
    if last in _PLURAL_EXCEPT:
        word = _PLURAL_EXCEPT[last]
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        word = last[:-1] + "ies"
    elif last.endswith(("s", "x", "ch", "sh")):
        word = last + "es"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


class _Slots(dict):
    """``str.format_map`` source that draws a fresh word for every slot."""

    def __init__(self, rng: random.Random, terms: list[str]):
        super().__init__()
        self.rng, self.terms = rng, terms

    def __missing__(self, key: str) -> str:
        r = self.rng.random
        if key == "t":
            return self.terms[int(r() * len(self.terms))]
        if key == "ts":
            return _plural(self.terms[int(r() * len(self.terms))])
        pool = _POOLS.get(key)
        if pool is not None:
            return pool[int(r() * len(pool))]
        if key == "num":
            return str(2 + int(r() * 9))
        raise KeyError(key)


_DET = ["the", "the", "the", "this", "our", "each", "such a", "that", "one", "any"]
_DET_CAP = ["The", "The", "This", "Our", "Each", "Such a", "That", "One"]


def _with_determiners(templates: list[str]) -> list[str]:
    """``the {t}`` -> ``{d} {t}``: varied determiners keep "the" under peS2o's 7.5 % top-word cap."""
    return [t.replace("the {t}", "{d} {t}").replace("The {t}", "{D} {t}") for t in templates]


def _fill(template: str, slots: _Slots) -> str:
    return template.format_map(slots)


_POOLS = {"a": _ADJ, "adv": _ADV, "vp": _VERB_PAST, "vs": _VERB_PRES, "m": _METHOD, "sw": _SAMPLE_WORDS}
_POOLS.update(d=_DET, D=_DET_CAP)
_SENTENCES, _INTRO, _CONCLUDE = map(_with_determiners, (_SENTENCES, _INTRO, _CONCLUDE))
_CITE_END, _CITE_MID, _CITE_NARRATIVE, _FIG = map(
    _with_determiners, (_CITE_END, _CITE_MID, _CITE_NARRATIVE, _FIG)
)


# ---------------------------------------------------------------- bibliography


def noisy_title(title: str, rng: random.Random) -> str:
    """The title as a careless bibliography prints it: case, punctuation, one typo or a lost subtitle."""
    r = rng.random()
    if r < 0.25:
        return title.upper() if rng.random() < 0.3 else title.lower()
    if r < 0.5:
        out = title.replace(":", "").replace("-", " ")
        return out + "." if not out.endswith(".") else out
    if r < 0.75 and ":" in title:
        head = title.split(":", 1)[0]
        if len(head) >= 0.75 * len(title):
            return head
    words = title.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
    if not long:
        return title.lower()
    i = long[int(rng.random() * len(long))]
    w = words[i]
    j = 1 + int(rng.random() * (len(w) - 3))
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]  # swap two letters
    return " ".join(words)


def _outside_ref(rng: random.Random, year: int, terms: list[str], fld: str) -> BibRef:
    t1, t2 = rng.choice(terms), rng.choice(terms)
    form = rng.random()
    if form < 0.4:
        title = f"On the {t1} of {_plural(t2)}"
    elif form < 0.7:
        title = f"A {rng.choice(_ADJ)} approach to the {t1} in {_plural(t2)}"
    else:
        title = f"{_plural(t1).capitalize()} and {_plural(t2)}: a {rng.choice(_ADJ)} review"
    n = 1 + int(rng.expovariate(0.6))
    authors = [(rng.choice(_FIRST_NAMES), rng.choice(_SURNAMES)) for _ in range(min(n, 6))]
    y = max(1970, year - 1 - int(rng.expovariate(0.15)))
    doi = ""
    if rng.random() < 0.4:
        doi = f"10.1016/j.{rng.choice(_OUTSIDE_JOURNALS)}.{y}.{rng.randrange(10**5):05d}"
    return BibRef(title, authors, y, rng.choice(VENUES[fld]), doi=doi)


def _demo_ref(p: PoolPaper, rng: random.Random) -> BibRef:
    r = rng.random()
    if r < 0.40:
        kind = "exact_title"
    elif r < 0.65:
        kind = "noisy_title"
    elif r < 0.90 or not p.doi:
        kind = "arxiv_id"
    else:
        kind = "doi"
    title = p.title
    arxiv_id = doi = ""
    if kind == "noisy_title":
        title = noisy_title(p.title, rng)
    elif kind == "arxiv_id":
        arxiv_id = p.id
        if rng.random() < 0.2:
            title = ""  # kept and linked by its id (DESIGN §5: do not drop title-less entries)
    elif kind == "doi":
        doi = p.doi
    return BibRef(title, p.authors, p.year, p.venue, doi=doi, arxiv_id=arxiv_id, cited_id=p.id, kind=kind)


def cite_label(ref: BibRef, narrative: bool = False) -> str:
    """``Smith et al., 2019`` (or ``Smith et al. (2019)`` when narrative) for name-year papers."""
    names = [last for _, last in ref.authors] or ["Anonymous"]
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who} ({ref.year})" if narrative else f"{who}, {ref.year}"


# ---------------------------------------------------------------- the paper


def _pick_cited(pool: list[PoolPaper], weights: list[int], k: int, rng: random.Random) -> list[PoolPaper]:
    """``k`` distinct earlier papers, half uniformly, half by preferential attachment (``weights``
    holds pool indexes, one more each time a paper is cited)."""
    if not pool:
        return []
    k = min(k, len(pool))
    chosen: dict[int, None] = {}
    tries = 0
    while len(chosen) < k and tries < 4 * k + 20:
        tries += 1
        if weights and rng.random() < 0.5:
            i = weights[int(rng.random() * len(weights))]
        else:
            i = int(rng.random() * len(pool))
        chosen.setdefault(i, None)
    return [pool[i] for i in chosen]


def _sections_plan(rng: random.Random, n_paragraphs: int) -> list[str]:
    n_sections = min(rng.randint(5, 12), n_paragraphs)
    middle = rng.sample(_SECTION_TITLES_MIDDLE, n_sections - 2)
    return [rng.choice(_SECTION_FIRST), *middle, rng.choice(_SECTION_LAST)]


def make_paper(
    rec_id: str,
    title: str,
    abstract: str,
    authors: list[tuple[str, str]],
    year: int,
    fld: str,
    seed: int,
    pool: list[PoolPaper],
    weights: list[int],
    plant: str | None = None,
) -> PaperText:
    """One paper for record ``rec_id``; cites papers of ``pool`` (earlier demo papers)."""
    rng = random.Random(f"{seed}:text:{rec_id}")
    terms = _TERMS[fld]
    slots = _Slots(rng, terms)
    style = "NAME-YEAR" if rng.random() < (0.5 if fld in ("cs", "econ", "bio") else 0.25) else "BRACKET"

    cited = _pick_cited(pool, weights, rng.randint(5, 40), rng)
    bib = [_demo_ref(p, rng) for p in cited]
    bib.extend(_outside_ref(rng, year, terms, fld) for _ in range(rng.randint(2, 12)))
    rng.shuffle(bib)
    if style == "NAME-YEAR":  # name-year bibliographies are alphabetical
        bib.sort(key=lambda b: ((b.authors[0][1] if b.authors else "~"), b.year))
    n_figs = rng.randint(1, 4)
    figures = [
        _fill(
            rng.choice(
                [
                    "Comparison of the {t} for {sw} {ts}.",
                    "The {t} as a function of the {t}.",
                    "Schematic overview of the {t} and the {t}.",
                ]
            ),
            slots,
        )  # fmt: skip
        for _ in range(n_figs)
    ]
    paper = PaperText(
        id=rec_id,
        title=title,
        abstract=abstract,
        authors=authors,
        year=year,
        style=style,
        sections=[],
        bib=bib,
        figures=figures,
        equation=rng.choice(_EQUATIONS),
        plant=plant,
    )
    if plant in ("french", "german"):
        _foreign(paper, rng, plant)
        return paper
    if plant == "short":
        text = _fill(rng.choice(_INTRO[:3]), slots).rstrip(".")
        paper.sections = [Section("Introduction", [[text + " ", Cite((0,)), "."] if bib else [text + "."]])]
        return paper

    n_paragraphs = rng.randint(6, 20)
    titles = _sections_plan(rng, n_paragraphs)
    per = [1] * len(titles)
    for _ in range(n_paragraphs - len(titles)):
        per[int(rng.random() * len(titles))] += 1
    unused = list(range(len(bib)))
    rng.shuffle(unused)
    fig_next = 1
    mentions = [p.id for p in cited if rng.random() < 0.06][:2] if rng.random() < 0.35 else []
    paper.arxiv_mentions = mentions
    for s_i, (sec_title, n_par) in enumerate(zip(titles, per, strict=True)):
        paragraphs: list[list[Part]] = []
        for p_i in range(n_par):
            parts: list[Part] = []
            n_sent = rng.randint(4, 8)
            for k in range(n_sent):
                if s_i == 0 and p_i == 0 and k < 2:
                    tpl, kind = _INTRO[k], "plain"
                elif s_i == len(titles) - 1 and p_i == 0 and k == 0:
                    tpl, kind = _CONCLUDE[0], "plain"
                else:
                    r = rng.random()
                    if r < 0.22 and bib:
                        tpl, kind = rng.choice(_CITE_END), "cite"
                    elif r < 0.25 and bib:
                        if style == "NAME-YEAR" and rng.random() < 0.5:
                            tpl, kind = rng.choice(_CITE_NARRATIVE), "narrative"
                        else:
                            tpl, kind = rng.choice(_CITE_MID), "cite"
                    elif r < 0.28 and fig_next <= n_figs:
                        tpl, kind = rng.choice(_FIG), "fig"
                    else:
                        tpl, kind = rng.choice(_SENTENCES), "plain"
                if kind == "plain":
                    parts.append(_fill(tpl, slots) + " ")
                    continue
                head, tail = tpl.split("§")
                head, tail = _fill(head, slots), _fill(tail, slots)
                if kind == "fig":
                    parts += [head, FigRef(fig_next), tail + " "]
                    fig_next += 1
                    continue
                n_refs = 1 if kind == "narrative" or rng.random() < 0.6 else rng.randint(2, 3)
                refs = []
                for _ in range(n_refs):
                    if not unused:
                        unused = list(range(len(bib)))
                        rng.shuffle(unused)
                    refs.append(unused.pop())
                refs = sorted(set(refs))
                if kind == "narrative":
                    parts += [Cite(tuple(refs), narrative=True), tail + " "]
                else:
                    parts += [head.rstrip() + " ", Cite(tuple(refs)), tail + " "]
            if mentions and s_i == 1 and p_i == 0:
                for aid in mentions:
                    parts.append(
                        f"A closely related construction is described in arXiv:{aid} in full detail. "
                    )
            if parts and isinstance(parts[-1], str):
                parts[-1] = parts[-1].rstrip()
            paragraphs.append(parts)
        paper.sections.append(Section(sec_title, paragraphs))
    while fig_next <= n_figs:  # every figure is referred to somewhere
        sec = paper.sections[1 + int(rng.random() * (len(paper.sections) - 1))]
        head, tail = (_fill(x, slots) for x in rng.choice(_FIG).split("§"))
        sec.paragraphs[-1] += [" " + head, FigRef(fig_next), tail]
        fig_next += 1
    if plant == "gibberish":
        paper.sections.insert(
            len(paper.sections) // 2,
            Section("Supplementary Data", [[_gibberish(rng, 35)]]),
        )
    elif plant == "numbers":
        cells = " ".join(f"{rng.choice(['0.00', '0.01', '0.05', '0.10'])}" for _ in range(900))
        paper.sections.insert(len(paper.sections) - 1, Section("Results", [[f"Table 2 values: {cells}"]]))
    while paper.words() < 600:  # the 600-word floor: grow the longest section
        paper.sections[-1].paragraphs[-1].append(" " + _fill(rng.choice(_SENTENCES), slots))
    return paper


def _gibberish(rng: random.Random, n_words: int) -> str:
    cons, vow = "bcdfghjklmnpqrstvwxz", "aeiouy"
    words = []
    for _ in range(n_words):
        n = rng.randint(4, 11)
        words.append("".join(rng.choice(cons) if (i % 3) else rng.choice(vow) for i in range(n)))
    return " ".join(words) + "."


def _foreign(paper: PaperText, rng: random.Random, lang: str) -> None:
    sentences, titles = (_FRENCH, _FR_TITLES) if lang == "french" else (_GERMAN, _DE_TITLES)
    paper.lang = "fr" if lang == "french" else "de"
    for title in titles:
        paras = []
        for _ in range(rng.randint(2, 3)):
            chosen = rng.sample(sentences, rng.randint(4, 7))
            paras.append([" ".join(chosen)])
        paper.sections.append(Section(title, paras))
    first = paper.sections[0].paragraphs[0]
    if paper.bib:
        first[:] = [first[0].rstrip(".") + " ", Cite((0,)), "."]


# ---------------------------------------------------------------- plain rendering


def render_cite(c: Cite, paper: PaperText) -> str:
    """A citation as printed: ``[3, 5]`` or ``(Smith et al., 2019; Lee, 2020)`` / ``Smith et al. (2019)``."""
    if paper.style == "BRACKET":
        return "[" + ", ".join(str(i + 1) for i in c.refs) + "]"
    if c.narrative:
        return cite_label(paper.bib[c.refs[0]], narrative=True)
    return "(" + "; ".join(cite_label(paper.bib[i]) for i in c.refs) + ")"


def render_plain(parts: list[Part], paper: PaperText) -> str:
    """A paragraph as plain text (what a PDF shows)."""
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, Cite):
            out.append(render_cite(p, paper))
        else:
            out.append(str(p.n))
    return "".join(out)
