"""All of arXiv, measured: the cross-day job over N generated days of 1,000 papers.

    python benchmarks/arxiv_scale.py --days N [--keep DIR] [--papers-per-day 1000]
                                     [--text-scale 1.0] [--workers W] [--max-rss-gb 13.5]

It writes, directly in the store's layout and without running the daily assets, the daily
partitions the cross-day assets read (``papers``, ``fulltext_ids``, ``bib_entries``, ``pes2o``,
``citeworth_paragraphs``, ``citeworth_candidates``) for N days, each partition through
:meth:`corpus.store.Store.write_partition` (so with its provenance: content fingerprint and the
stage's code version), in one process per core, each a range of days. It records each partition
in a fresh Dagster instance as a materialisation through Dagster's public API
(``DagsterInstance.report_runless_asset_event``) with the metadata the daily assets give it (the
row count, the content ``fingerprint`` the catch-up sensor compares, the column schema, the
stage's code version tag), so the catch-up sensor and each cross-day asset's ``up_to_date``
check see the days as built. Then it runs the real ``corpus_graph`` job (``dagster job
execute``, a fresh process), then writes one new day (N + 1, with its revisions of older
papers) and runs the job again. It ends with one line::

    RESULT days=N papers=P entries=E full_cpu_s=... full_wall_s=... full_peak_gb=...
           newday_cpu_s=... newday_peak_gb=... store_gb=...

CPU and peak RSS are the whole process tree's (/proc samples every 0.2 s); per step of the job
(from the run's event log: each step's start and end) it also prints CPU s, wall, busy cores and
peak RSS, summed per asset. ``--keep DIR`` keeps everything there: the generated days in
``DIR/pool-<papers a day>x<text scale>/`` (written once, shared by every ``--days``: a store of
N days hard-links days 1..N from it, so 1,024 and 2,400 days cost the disk of 2,401), and each
N's store, instance and figures in ``DIR/d<N>-.../`` (``measured.json``): a second invocation
reuses the days and the phases already measured, so a long run can go over several sessions
(``--force full`` measures a phase again on the state as it is). Two invocations on one DIR run
their jobs one at a time.

Days are made by the functions of paper indices (counter-based hashes), so every paper of every
day is decided by the seed alone and a revision re-creates its paper's bibliography without
reading the old day. The distributions, each calibrated on the real papers in ``../shared``
(numbers measured there in brackets; ``--calibrate`` recomputes them):

* **papers a day**: 1,000 new papers (``--papers-per-day``), plus revisions of older papers making
  15 % of the day's records (176 a day): 70 % of them of papers from the last 60 days, 30 % of any
  earlier day (arXiv's new versions come mostly within weeks; some papers are revised years on).
  A revision is a new delivery of the paper: same id and bibliography (+1 entry for 30 % of them),
  a new text, 5 % a retitled paper, and a DOI and journal-ref for 35 % of those without.
* **references per paper** (a paper with full text): lognormal, mean 40, sigma 0.5 (unarXive
  sample, ../shared/data/titleless: 1,786 entries of 44 papers, mean 40.6, median 36; the real
  landing zone's 15 parsed papers: mean 48, median 41; all of arXiv: ~96M entries / 2.4M).
* **what a reference carries**: an arXiv id 16 % (unarXive strings 13.3 %, landing parses 20.1 %),
  else a DOI 11 % (15.3 %, 10.6 %), else a title only 53 % (landing parses: 69.9 % title and no
  id), else a journal reference only 18 % (unarXive physics strings: 44.7 % journal, volume and
  page with no id; landing parses 0.1 %), else nothing usable 2 % (landing 1.0 %). A titled
  reference also names its publication 25 % of the time (landing 25.6 %).
* **what it cites**: a paper of the corpus for 90 % of arXiv-id, 60 % of DOI, 35 % of title and
  40 % of journal references (the rest: works outside the corpus, with ids, DOIs, titles and
  publications of their own). A cited paper is an earlier one: half the time a recent one (age
  log-uniform), half the time an old one (``floor(p * u**3)``: a heavy tail of much-cited papers).
* **titles**: words drawn from the real titles (and the longer words of the abstracts) of the arXiv
  snapshot in ../shared/data/arxiv_metadata_snapshot (60 %) and from wordfreq's English list
  (40 %, frequencies flattened to the power 0.6: the long tail of rare words the title index's
  prefix filter relies on); word count lognormal, mean 9.1, sigma 0.38 (the snapshot's 200 titles:
  9.1 words, sd 3.6, 66.6 characters; the landing zone's 41: 71.7; generated: ~69). A cited title
  is the cited paper's title, exact after normalisation for 70 %, with one word dropped for 25 %,
  two for 5 % (most of those below the 0.8 score). Near-duplicate titles: 2 % of papers take an
  earlier paper's title with its last word changed (sequels, errata; too few real titles here to
  measure).
* **text**: a paper with full text (92 %: arXiv's LaTeX share, and Grobid under ``fallback`` for
  the rest) has a lognormal number of body paragraphs, mean 70 (landing parses: 71.5), of mean
  430 characters (real CiteWorth paragraphs 413; bodies 30.6k characters, peS2o s2orc texts 32.1k),
  times ``--text-scale``; abstracts mean 1,130 characters (1,132). Words from wordfreq's English
  frequencies: text lengths and compression are real, the words are not.
* **releases**: peS2o keeps 90 % of s2orc documents with full text and 96 % of s2ag (v2 drops a
  further 0.5 % of s2ag); CiteWorth keeps ~7 % of a paper's paragraphs (CiteWorth released 1.2M
  paragraphs from 190k papers: 6.3 a paper; landing 1.3 %, generator 52 %), 4-6 sentences each,
  a third of them cite-worthy.
* **full-text arXiv ids**: Poisson, mean 0.8 a paper with text (generator 0.35; arXiv-as-a-dataset
  found more, in every part of the text), 85 % of them papers of the corpus.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from _common import REPO, SHARED, TreeSampler, result

START = dt.date(2017, 1, 1)  # 2,401 days end in 2023: every day is a past partition
SEED = 45
DAILY_READ = [
    "papers",
    "fulltext_ids",
    "bib_entries",
    "pes2o",
    "citeworth_paragraphs",
    "citeworth_candidates",
]

# ------------------------------------------------------------------ calibration (see the docstring)
REVISION_SHARE = 0.15
RECENT_REVISIONS, RECENT_DAYS = 0.70, 60
REFS_MEAN, REFS_SIGMA = 40.0, 0.5
REF_KINDS = {"arxiv": 0.16, "doi": 0.11, "title": 0.53, "pub": 0.18, "none": 0.02}
IN_CORPUS = {"arxiv": 0.90, "doi": 0.60, "title": 0.35, "pub": 0.40}
TITLED_PUB = 0.25
TITLE_WORDS_MEAN, TITLE_WORDS_SIGMA = 9.1, 0.38
TITLE_WF_POWER = 0.6
TITLE_NOISE = (0.70, 0.25, 0.05)  # exact, one word changed, two
NEAR_DUPLICATE = 0.02
FULL_TEXT = 0.92
LATEX_SHARE = 0.82  # of those with full text; the rest Grobid
PARAGRAPHS_MEAN, PARAGRAPHS_SIGMA = 70.0, 0.45
PARAGRAPH_CHARS = 430
ABSTRACT_CHARS = 1130
KEPT_PAPER = 0.97
DOI_SHARE, JREF_SHARE, PUBLISHED_ON_REVISION = 0.15, 0.12, 0.35
S2ORC_KEEP, S2AG_KEEP, V2_OCR_DROP = 0.90, 0.96, 0.005
CITEWORTH_KEPT = 0.07
FULLTEXT_IDS_MEAN = 0.8
AUTHORS_MEAN = 6.0
JOURNALS = [
    "Phys. Rev. Lett.", "Phys. Rev. D", "Phys. Rev. B", "Phys. Rev. A", "Phys. Rev. E", "Astrophys. J.",
    "Mon. Not. R. Astron. Soc.", "Astron. Astrophys.", "Nucl. Phys. B", "Phys. Lett. B", "J. Math. Phys.",
    "Commun. Math. Phys.", "J. Fluid Mech.", "Nature", "Science", "Invent. Math.", "J. Chem. Phys.",
    "Class. Quantum Grav.", "Eur. Phys. J. C", "New J. Phys.", "J. Stat. Mech.", "Adv. Math.",
    "Neural Comput.", "IEEE Trans. Inf. Theory", "Appl. Phys. Lett.", "Proc. Natl. Acad. Sci. USA",
]  # fmt: skip
CATEGORIES = [  # (primary category, share): arXiv's submissions by archive, roughly
    ("cs.LG", 0.10), ("cs.CV", 0.07), ("cs.CL", 0.05), ("cs.AI", 0.03), ("cs.IT", 0.02), ("cs.DS", 0.02),
    ("math.AP", 0.03), ("math.PR", 0.03), ("math.CO", 0.03), ("math.AG", 0.02), ("math.NT", 0.02),
    ("math.OC", 0.02), ("stat.ME", 0.02), ("stat.ML", 0.02), ("hep-ph", 0.05), ("hep-th", 0.04),
    ("gr-qc", 0.02), ("astro-ph.GA", 0.04), ("astro-ph.CO", 0.03), ("astro-ph.SR", 0.03),
    ("cond-mat.mtrl-sci", 0.04), ("cond-mat.str-el", 0.03), ("cond-mat.mes-hall", 0.03),
    ("quant-ph", 0.06), ("physics.optics", 0.02), ("physics.flu-dyn", 0.02), ("eess.SP", 0.02),
    ("q-bio.NC", 0.01), ("q-bio.PE", 0.01), ("econ.EM", 0.01), ("physics.chem-ph", 0.02),
    ("nucl-th", 0.01), ("eess.IV", 0.01), ("cs.RO", 0.02),
]  # fmt: skip
SECTIONS_PERMISSIBLE = ["Introduction", "Related Work", "Discussion", "Conclusion", "Background"]
SECTIONS_OTHER = ["Methods", "Results", "Experiments", "Model", "Analysis", "Setup", "Proof", "Appendix"]
REJECT_REASONS = {  # rejected paragraphs' reasons (real landing parses, 1,058 rows)
    "section_not_permissible": 0.665, "no_citation": 0.214, "citation_not_at_end": 0.087,
    "citation_form": 0.015, "lowercase_start": 0.013, "too_short": 0.002, "hanging_marker": 0.002,
    "bad_final_punctuation": 0.001, "missed_citation": 0.001,
}  # fmt: skip
_HANGING_WORDS = {"like", "reference", "including", "include", "with", "instance", "example", "also", "at",
                  "following", "of", "from", "to", "in", "by", "see", "as", "eg", "viz"}  # fmt: skip
SURNAMES = "Smith Wang Zhang Li Kumar Garcia Muller Rossi Tanaka Kim Novak Silva Ivanov Cohen Dubois".split()


# ------------------------------------------------------------------ counter-based randomness
_M64 = (1 << 64) - 1


def _hash(*keys) -> np.ndarray:  # noqa: F821 (numpy is imported in the workers)
    """splitmix64 of the keys combined (arrays broadcast): the same keys give the same bits."""
    import numpy as np

    with np.errstate(over="ignore"):
        x = np.uint64(0x9E3779B97F4A7C15)
        for i, k in enumerate(keys):
            x = x * np.uint64(0xBF58476D1CE4E5B9 + 2 * i) + np.asarray(k).astype(np.uint64)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _unit(*keys) -> np.ndarray:  # noqa: F821
    """Uniform [0, 1) from the keys."""
    return (_hash(*keys) >> 11).astype("float64") * (1.0 / (1 << 53))


def _normal(*keys) -> np.ndarray:  # noqa: F821
    import numpy as np

    u1 = np.maximum(_unit(*keys, 1), 1e-12)
    u2 = _unit(*keys, 2)
    return np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)


def _lognormal(mean: float, sigma: float, *keys) -> np.ndarray:  # noqa: F821
    import numpy as np

    return np.exp(math.log(mean) - sigma * sigma / 2 + sigma * _normal(*keys))


def _strs(values) -> pl.Series:  # noqa: F821
    """Text (None: null) from a numpy array of objects or strings."""
    import polars as pl

    return pl.Series(values.tolist() if hasattr(values, "tolist") else list(values), dtype=pl.String)


def _pick(shares: dict[str, float], u) -> np.ndarray:  # noqa: F821
    """Index into ``shares`` (in order) for uniforms ``u``."""
    import numpy as np

    cdf = np.cumsum(np.array(list(shares.values()), dtype="float64"))
    return np.minimum(np.searchsorted(cdf / cdf[-1], u, side="right"), len(shares) - 1)


# salts: one per decision, so that decisions are independent
(S_TITLE_N, S_TITLE_W, S_TITLE_SRC, S_DUP, S_DUP_OF, S_FULL, S_LATEX, S_PARAS, S_REFS, S_KIND, S_CORPUS,
 S_TARGET, S_NOISE, S_NOISE_W, S_EXT, S_DOI, S_JREF, S_JOURNAL, S_CAT, S_KEPT, S_AUTH, S_TEXT, S_ABS,
 S_PES2O, S_CW, S_FT, S_MISC, S_REV, S_PUB_T, S_YEAR) = range(1, 31)  # fmt: skip


# ------------------------------------------------------------------ what every worker builds once
class Vocab:
    """Words and text of the generated papers (built once per process, the same in each)."""

    def __init__(self, text_scale: float = 1.0):
        import numpy as np
        import polars as pl

        from corpus.graph.publication_links import publication_rows
        from corpus.papers.fields import citeworth_field, field_of_study
        from corpus.release.pes2o import log2_table

        self.text_scale = text_scale
        sci: Counter[str] = Counter()
        snapshot = SHARED / "data" / "arxiv_metadata_snapshot" / "arxiv-metadata-oai-snapshot.json"
        with open(snapshot, encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                sci.update(re.findall(r"[a-z]{2,}", rec["title"].lower()) * 3)
                sci.update(w for w in re.findall(r"[a-z]{2,}", rec.get("abstract", "").lower()) if len(w) > 3)
        table = log2_table()
        freq = sorted(((p, w) for w, p in table.items() if w.isascii() and w.isalpha() and len(w) > 1),
                      reverse=True)[:200_000]  # fmt: skip
        self.sci_words = pl.Series([w for w, _ in sci.most_common()], dtype=pl.String)
        self.sci_cdf = np.cumsum([c for _, c in sci.most_common()], dtype="float64")
        self.sci_cdf /= self.sci_cdf[-1]
        self.wf_words = pl.Series([w for _, w in freq], dtype=pl.String)
        wf = np.exp2(np.array([p for p, _ in freq]))
        self.wf_cdf = np.cumsum(wf)
        self.wf_cdf /= self.wf_cdf[-1]
        self.wf_title_cdf = np.cumsum(wf**TITLE_WF_POWER)  # titles favour rarer, longer words
        self.wf_title_cdf /= self.wf_title_cdf[-1]
        # A text pool: wordfreq's English words by frequency, sentences of 8-30 words, none ending
        # on a word CiteWorth's hanging-citation rule reads as a citation left behind ("of.").
        rng = np.random.default_rng(SEED)
        n = 3_000_000
        words = self.wf_words.gather(np.searchsorted(self.wf_cdf, rng.random(n))).to_list()
        finals = [w for w in words[: n // 4] if len(w) >= 5 and w not in _HANGING_WORDS]
        ends = set(np.cumsum(rng.integers(8, 31, n // 8)).tolist())
        parts, starts, pos, cap = [], [], 0, True
        for i, w in enumerate(words):
            if w in ("et", "al"):  # "et al." is a missed citation to CiteWorth's audit
                w = "the"
            if cap:
                starts.append(pos)
                w = w.capitalize()
            cap = i in ends
            if cap:
                w = finals[i % len(finals)] + ". "
            else:
                w += " "
            parts.append(w)
            pos += len(w)
        starts.append(pos)
        self.pool = "".join(parts)
        self.sentence_starts = np.array(starts, dtype=np.int64)
        cats = [c for c, _ in CATEGORIES]
        self.categories = pl.Series(cats)
        self.cat_shares = {c: s for c, s in CATEGORIES}
        self.fields = pl.Series([citeworth_field([c]) for c in cats])
        self.fos = pl.Series([field_of_study([c]) for c in cats])
        pubs = publication_rows([f"{j} 10, 100 (2001)" for j in JOURNALS])
        self.pub_journal = pubs["pub_journal"]
        self.journals = pl.Series(JOURNALS)
        self.all_words = pl.concat([self.sci_words, self.wf_words])

    # -- titles
    def words(self, keys, n_words, salt) -> tuple:  # noqa: F821
        """(row of each word, word) for titles of n_words[i] words decided by (keys[i], salt, j):
        rows in order, words in order within a row."""
        import numpy as np

        rows = np.repeat(np.arange(len(keys)), n_words)
        j = np.arange(rows.size) - np.repeat(np.cumsum(n_words) - n_words, n_words)
        k = np.repeat(np.asarray(keys, dtype=np.uint64), n_words)
        u, sci = _unit(k, salt, S_TITLE_W, j), _unit(k, salt, S_TITLE_SRC, j) < 0.6
        idx = np.empty(rows.size, np.int64)
        idx[sci] = np.minimum(np.searchsorted(self.sci_cdf, u[sci]), len(self.sci_cdf) - 1)
        idx[~sci] = len(self.sci_cdf) + np.minimum(
            np.searchsorted(self.wf_title_cdf, u[~sci]), len(self.wf_cdf) - 1
        )
        return rows, j, idx

    def n_words(self, keys, salt):
        import numpy as np

        n = np.rint(
            _lognormal(TITLE_WORDS_MEAN, TITLE_WORDS_SIGMA, np.asarray(keys, np.uint64), salt, S_TITLE_N)
        )
        return np.clip(n, 2, 40).astype(np.int64)

    def join(self, rows, idx, n_rows: int):
        """Titles from word indices (rows in order): the first letter upper case."""
        import polars as pl

        frame = pl.DataFrame({"row": rows, "w": self.all_words.gather(idx)})
        out = frame.group_by("row", maintain_order=True).agg(pl.col("w").str.join(" "))
        full = pl.Series([None] * n_rows, dtype=pl.String)
        if len(out):
            full = full.scatter(out["row"].to_numpy(), out["w"])
        return full.str.slice(0, 1).str.to_uppercase() + full.str.slice(1)

    def titles(self, keys, salt: int = 0):
        """A title for each key (``salt`` > 0: drawn for something other than a paper)."""
        rows, _, idx = self.words(keys, self.n_words(keys, salt), salt)
        return self.join(rows, idx, len(keys))

    def _base(self, papers):
        """Each paper's title words: 2 % of papers take an earlier paper's title with their last
        word changed (near duplicates)."""
        import numpy as np

        papers = np.asarray(papers, dtype=np.int64)
        dup = (_unit(papers, S_DUP) < NEAR_DUPLICATE) & (papers > 0)
        base = np.where(dup, (_unit(papers, S_DUP_OF) * np.maximum(papers, 1)).astype(np.int64), papers)
        n = self.n_words(base, 0)
        rows, j, idx = self.words(base, n, 0)
        last = np.cumsum(n) - 1
        mine = last[dup[rows[last]]]
        if mine.size:
            own = self.words(papers[rows[mine]], np.ones(mine.size, np.int64), S_DUP)[2]
            idx[mine] = own
        return rows, j, idx, n

    def paper_titles(self, papers):
        rows, _, idx, _ = self._base(papers)
        return self.join(rows, idx, len(papers))

    def cited_titles(self, targets, keys):
        """How a reference writes its target's title: exact (70 %), one word dropped (25 %), two (5 %)."""
        import numpy as np

        rows, j, idx, n = self._base(targets)
        noise = _pick(dict(enumerate(TITLE_NOISE)), _unit(keys, S_NOISE))
        d1 = (_unit(keys, S_NOISE_W, 1) * n).astype(np.int64)
        d2 = (_unit(keys, S_NOISE_W, 2) * n).astype(np.int64)
        nz = noise[rows]
        keep = (nz == 0) | ((j != d1[rows]) & ((nz < 2) | (j != d2[rows])))
        return self.join(rows[keep], idx[keep], len(targets))

    # -- text
    def slices(self, lengths, keys):
        """Text of the given lengths, each from a sentence start of the pool chosen by its key."""
        import numpy as np

        starts = self.sentence_starts[
            (_unit(keys, S_TEXT) * (len(self.sentence_starts) - 200)).astype(np.int64)
        ]
        pool = self.pool
        return [
            pool[s : s + n].rstrip() + "." for s, n in zip(starts.tolist(), lengths.tolist(), strict=True)
        ]

    def sentences(self, keys):
        """One whole sentence of the pool for each key."""
        import numpy as np

        i = (_unit(keys, S_TEXT) * (len(self.sentence_starts) - 2)).astype(np.int64)
        pool, a, b = self.pool, self.sentence_starts[i].tolist(), self.sentence_starts[i + 1].tolist()
        return [pool[s:e].rstrip() for s, e in zip(a, b, strict=True)]


_VOCAB: Vocab | None = None


def vocab(text_scale: float) -> Vocab:
    global _VOCAB
    if _VOCAB is None or _VOCAB.text_scale != text_scale:
        _VOCAB = Vocab(text_scale)
    return _VOCAB


# ------------------------------------------------------------------ one day
def day_name(d: int) -> str:
    return (START + dt.timedelta(days=d)).isoformat()


def paper_ids(papers, per_day: int):
    """arXiv ids (``YYMM.NNNNN``) of paper indices: born on day ``p // per_day``, numbered in
    their month in order."""
    import numpy as np
    import polars as pl

    papers = np.asarray(papers, dtype=np.int64)
    born = pl.Series(papers // per_day).cast(pl.Int32)
    date = pl.lit(START) + pl.duration(days=born)
    frame = pl.select(date.alias("d"), pl.Series("i", papers % per_day))
    seq = (frame["d"].dt.day().cast(pl.Int64) - 1) * per_day + frame["i"] + 1
    return pl.select(
        pl.format(
            "{}.{}",
            frame["d"].dt.strftime("%y%m"),
            seq.cast(pl.String).str.zfill(5),
        )
    ).to_series()


def external_ids(keys):
    """Old-style arXiv ids of works outside the corpus (before it starts)."""
    import numpy as np
    import polars as pl

    h = _hash(keys, S_EXT, 7)
    arch = pl.Series(["hep-th", "hep-ph", "astro-ph", "cond-mat", "gr-qc", "quant-ph", "math"]).gather(
        (h % np.uint64(7)).astype(np.int64)
    )
    yy = (91 + (h >> np.uint64(8)) % np.uint64(16)) % 100
    mm = 1 + (h >> np.uint64(16)) % np.uint64(12)
    nnn = 1 + (h >> np.uint64(24)) % np.uint64(999)
    num = pl.Series(yy.astype(np.int64) * 100000 + mm.astype(np.int64) * 1000 + nnn.astype(np.int64))
    return arch + "/" + num.cast(pl.String).str.zfill(7)


def _targets(citing, keys):
    """An earlier paper for each citing paper index: recent (age log-uniform) or old (p * u^3)."""
    import numpy as np

    p = np.asarray(citing, dtype=np.float64)
    u = _unit(keys, S_TARGET, 1)
    recent = p - np.floor(np.exp(u * np.log(np.maximum(p, 1.0))))
    old = np.floor(p * _unit(keys, S_TARGET, 2) ** 3)
    return np.clip(np.where(_unit(keys, S_TARGET, 3) < 0.5, recent, old), 0, np.maximum(p - 1, 0)).astype(
        np.int64
    )


def _doi(papers):
    import polars as pl

    return "10.5281/scale." + pl.Series(papers).cast(pl.String)


def _publication(papers, v: Vocab):
    """(journal as written, journal as bib_entries reads it, volume, page) of each paper's
    publication (whether or not its journal-ref says so yet)."""
    import numpy as np
    import polars as pl

    papers = np.asarray(papers, dtype=np.int64)
    j = (_hash(papers, S_JOURNAL) % np.uint64(len(JOURNALS))).astype(np.int64)
    vol = pl.Series(1 + (_hash(papers, S_JOURNAL, 2) % np.uint64(150)).astype(np.int64)).cast(pl.String)
    page = pl.Series(1 + (_hash(papers, S_JOURNAL, 3) % np.uint64(30000)).astype(np.int64)).cast(pl.String)
    return v.journals.gather(j), v.pub_journal.gather(j), vol, page


def revisions_of(d: int, per_day: int):
    """Indices of the older papers delivered again on day ``d`` (15 % of its records)."""
    import numpy as np

    if d == 0:
        return np.zeros(0, np.int64)
    rng = np.random.default_rng([SEED, d])
    n = round(per_day * REVISION_SHARE / (1 - REVISION_SHARE))
    born = d * per_day
    recent = rng.random(n) < RECENT_REVISIONS
    window = min(RECENT_DAYS, d) * per_day
    picks = np.where(
        recent, born - 1 - (rng.random(n) * window).astype(np.int64), (rng.random(n) * born).astype(np.int64)
    )
    return np.unique(picks)


def make_day(d: int, per_day: int, v: Vocab) -> dict[str, pl.DataFrame]:  # noqa: F821
    """The six daily tables of day ``d`` (index from START), with the daily assets' schemas."""
    import numpy as np
    import polars as pl

    from corpus.papers.bibliography import bib_schema
    from corpus.papers.metadata import papers_schema
    from corpus.papers.normalize import normalize_titles
    from corpus.release.citeworth import CANDIDATE_SCHEMA, PARAGRAPH_SCHEMA
    from corpus.release.pes2o_table import PES2O_SCHEMA

    assert per_day <= 3000, "ids are YYMM.NNNNN: at most 3,000 new papers a day"
    day = START + dt.timedelta(days=d)
    new = np.arange(d * per_day, (d + 1) * per_day, dtype=np.int64)
    rev = revisions_of(d, per_day)
    p = np.concatenate([new, rev])
    n = len(p)
    is_rev = np.arange(n) >= len(new)
    ver = np.where(is_rev, d + 1, 0)  # what differs between deliveries of a paper (text, extras)
    ids = paper_ids(p, per_day)
    born = p // per_day
    created = pl.select(pl.lit(START) + pl.duration(days=pl.Series(born))).to_series()
    titles = v.paper_titles(p)
    retitle = is_rev & (_unit(p, ver, S_REV) < 0.05)
    if retitle.any():
        extra = v.all_words.gather(v.words(p, np.ones(n, np.int64), S_REV)[2])
        words = (
            pl.Series(np.full(n, "", dtype=object))
            .cast(pl.String)
            .scatter(np.flatnonzero(retitle), extra.gather(np.flatnonzero(retitle)))
        )
        titles = pl.select(
            pl.when(pl.Series(retitle)).then(titles + " " + words).otherwise(titles)
        ).to_series()
    has_text = _unit(p, S_FULL) < FULL_TEXT
    latex = has_text & (_unit(p, S_LATEX) < LATEX_SHARE)
    kept = _unit(p, S_KEPT) < KEPT_PAPER
    drop = np.where(kept, None, np.where(_unit(p, S_KEPT, 2) < 0.7, "not_english", "short_text"))
    n_par = np.where(
        has_text, np.clip(np.rint(_lognormal(PARAGRAPHS_MEAN, PARAGRAPHS_SIGMA, p, S_PARAS)), 5, 400), 0
    )
    n_par = n_par.astype(np.int64)
    n_refs = np.where(has_text, np.clip(np.rint(_lognormal(REFS_MEAN, REFS_SIGMA, p, S_REFS)), 1, 600), 0)
    n_refs = (n_refs + (is_rev & has_text & (_unit(p, ver, S_REFS) < 0.3))).astype(np.int64)
    has_doi = (_unit(p, S_DOI) < DOI_SHARE) | (is_rev & (_unit(p, S_DOI, 2) < PUBLISHED_ON_REVISION))
    has_jref = (_unit(p, S_JREF) < JREF_SHARE) | (is_rev & (_unit(p, S_JREF, 2) < PUBLISHED_ON_REVISION))
    journal, _, vol, page = _publication(p, v)
    jref = pl.select(
        pl.when(pl.Series(has_jref)).then(pl.format("{} {} ({}) {}", journal, vol, created.dt.year(), page))
    ).to_series()
    cat = _pick(v.cat_shares, _unit(p, S_CAT))
    second = _pick(v.cat_shares, _unit(p, S_CAT, 2))
    primary = v.categories.gather(cat)
    cats = pl.select(
        pl.when(pl.Series(_unit(p, S_CAT, 3) < 0.4) & (pl.Series(cat) != pl.Series(second)))
        .then(pl.concat_list(primary, v.categories.gather(second)))
        .otherwise(pl.concat_list(primary))
    ).to_series()
    field = v.fields.gather(cat)

    # body paragraphs of the papers with text (kept or not: text_chars); strings only for the kept
    par_paper = np.repeat(np.arange(n), n_par)
    par_i = np.arange(par_paper.size) - np.repeat(np.cumsum(n_par) - n_par, n_par)
    par_key = _hash(p[par_paper], ver[par_paper], par_i)
    par_len = np.clip(np.rint(_lognormal(PARAGRAPH_CHARS * v.text_scale, 0.5, par_key, S_TEXT)), 20, 20000)
    par_len = par_len.astype(np.int64)
    abs_len = np.clip(np.rint(_lognormal(ABSTRACT_CHARS, 0.35, p, ver, S_ABS)), 200, 5000).astype(np.int64)
    body_chars = np.bincount(par_paper, weights=par_len + 2, minlength=n).astype(np.int64)
    abstracts = pl.Series(v.slices(abs_len, _hash(p, ver, S_ABS)), dtype=pl.String)
    authors_n = np.clip(np.rint(_lognormal(AUTHORS_MEAN, 0.7, p, S_AUTH)), 1, 200).astype(np.int64)
    arow = np.repeat(np.arange(n), authors_n)
    akey = _hash(p[arow], np.arange(arow.size), S_AUTH)
    surnames = pl.Series(SURNAMES).gather((akey % np.uint64(len(SURNAMES))).astype(np.int64))
    initials = pl.Series(list("ABCDEFGHJKLMNPRSTVW")).gather((akey >> np.uint64(20)) % np.uint64(19))
    authors = (
        pl.DataFrame({"row": arow, "first": initials + ".", "last": surnames})
        .with_columns(pl.lit([], pl.List(pl.String)).alias("middle"), pl.lit("").alias("suffix"))
        .group_by("row", maintain_order=True)
        .agg(pl.struct("first", "middle", "last", "suffix").alias("authors"))
    )["authors"]
    source = np.where(latex, "latex", np.where(has_text, "grobid", None))
    licenses = pl.Series(
        [
            None,
            "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
            "http://creativecommons.org/licenses/by/4.0/",
        ]
    )
    papers = pl.DataFrame(
        {
            "id": ids,
            "datestamp": pl.Series([day] * n),
            "title": titles,
            "norm_title": normalize_titles(titles),
            "authors": authors,
            "abstract": abstracts,
            "year": created.dt.year().cast(pl.Int64),
            "created": created,
            "updated": pl.Series([day if r else None for r in is_rev.tolist()], dtype=pl.Date),
            "license": licenses.gather(_pick({0: 0.6, 1: 0.25, 2: 0.15}, _unit(p, S_MISC))),
            "primary_category": primary,
            "categories": cats,
            "doi": pl.select(pl.when(pl.Series(has_doi)).then(_doi(p))).to_series(),
            "journal_ref": jref,
            "venue": jref,
            "field": field,
            "field_of_study": v.fos.gather(cat),
            "parse_source": _strs(source),
            "parse_reason": _strs(
                np.where(
                    latex,
                    np.where(_unit(p, S_LATEX, 2) < 0.5, "latex_preferred", "only_latex"),
                    np.where(has_text, "only_grobid", "no_parse"),
                )
            ),  # fmt: skip
            "parser_version": _strs(np.where(latex, "corpus.parse.latex", np.where(has_text, "0.8.0", None))),
            "has_grobid": (has_text & ~latex) | (latex & (_unit(p, S_LATEX, 2) < 0.5)),
            "has_latex": latex,
            "n_body_paragraphs": n_par,
            "n_bib_entries": n_refs,
            "text_chars": abs_len + body_chars,
            "language": _strs(np.where(drop == "not_english", "fr", "en")),
            "kept": kept,
            "drop_reason": _strs(drop),
        }
    )
    oai = pl.lit("oai")
    papers = papers.with_columns(
        title_source=oai, authors_source=oai, abstract_source=oai, year_source=oai,
        doi_source=pl.when(pl.col("doi").is_not_null()).then(oai),
        venue_source=pl.when(pl.col("venue").is_not_null()).then(oai),
        drop_detail=pl.when(pl.col("drop_reason") == "not_english")
        .then(pl.format("not_english: cld2 fr 92% reliable=True of {} bytes", pl.col("text_chars")))
        .when(pl.col("drop_reason").is_not_null()).then(pl.lit("short_text")),
    )  # fmt: skip
    schema = papers_schema()
    papers = papers.with_columns(
        [pl.lit(None, t).alias(c) for c, t in schema.items() if c not in papers.columns]
    )
    papers = papers.select(list(schema)).cast(schema)
    tables = {"papers": papers}

    # the kept papers with text: their paragraphs, bibliographies, full-text ids (as the stages read them)
    live = has_text & kept
    live_rows = np.flatnonzero(live)
    pmask = live[par_paper]
    lp, li, lkey, llen = par_paper[pmask], par_i[pmask], par_key[pmask], par_len[pmask]
    par_text = _strs(v.slices(llen, lkey))
    body = (
        pl.DataFrame({"row": lp, "i": li, "t": par_text})
        .group_by("row")
        .agg(pl.col("t").sort_by("i").str.join("\n\n"))
    )
    body = pl.DataFrame({"row": np.arange(n)}).join(body, on="row", how="left")["t"]
    tables["pes2o"] = _pes2o(
        p, ids, day, created, titles, abstracts, body, has_text, kept, drop, ver, n_par, PES2O_SCHEMA
    )
    tables["citeworth_paragraphs"], tables["citeworth_candidates"] = _citeworth(
        p,
        ids,
        field,
        source,
        has_text,
        kept,
        drop,
        n_par,
        lp,
        li,
        lkey,
        par_text,
        ver,
        PARAGRAPH_SCHEMA,
        CANDIDATE_SCHEMA,
        v,
    )
    tables["bib_entries"] = _bib_entries(p[live_rows], ids.gather(live_rows), source[live_rows], n_refs[live_rows],
                                         per_day, v, bib_schema(), normalize_titles)  # fmt: skip
    tables["fulltext_ids"] = _fulltext_ids(p[live_rows], ids.gather(live_rows), ver[live_rows], per_day)
    return tables


S2ORC_DROPS = {
    "too_few_paragraphs": 0.4,
    "top_word_not_alpha": 0.3,
    "too_few_words": 0.2,
    "top_word_too_frequent": 0.1,
}
S2AG_DROPS = {"abstract_too_short": 0.4, "abstract_low_probability": 0.3, "abstract_not_english": 0.2,
              "abstract_too_long": 0.1}  # fmt: skip


def _words(text: pl.Expr) -> pl.Expr:  # noqa: F821
    """Whitespace words of the generated texts (single spaces, paragraphs split by one blank
    line, nothing at either end): the real stage counts ``len(text.split())``."""
    import polars as pl

    count = text.str.count_matches(" ", literal=True) + text.str.count_matches("\n\n", literal=True) + 1
    return pl.when(text.is_not_null()).then(count.cast(pl.Int64))


def _pes2o(p, ids, day, created, titles, abstracts, body, has_text, kept, drop, ver, n_par, schema):
    """Two rows a paper (s2orc full text, s2ag title + abstract) with the v1/v2 verdicts."""
    import numpy as np
    import polars as pl

    n = len(p)
    u = _unit(p, ver, S_PES2O)
    s2orc_reason = np.where(
        ~has_text, "no_full_text", np.where(~kept, "paper_filter", np.where(u < S2ORC_KEEP, None, "drop"))
    ).astype(object)
    pick = np.array(list(S2ORC_DROPS))[_pick(S2ORC_DROPS, _unit(p, ver, S_PES2O, 2))]
    s2orc_reason = np.where(s2orc_reason == "drop", pick, s2orc_reason)
    u2 = _unit(p, ver, S_PES2O, 3)
    s2ag_reason = np.where(~kept, "paper_filter", np.where(u2 < S2AG_KEEP, None, "drop")).astype(object)
    pick = np.array(list(S2AG_DROPS))[_pick(S2AG_DROPS, _unit(p, ver, S_PES2O, 4))]
    s2ag_reason = np.where(s2ag_reason == "drop", pick, s2ag_reason)
    s2ag_v2 = np.where((s2ag_reason == None) & (_unit(p, ver, S_PES2O, 5) < V2_OCR_DROP), "ocr_spaced_letters",  # noqa: E711
                       s2ag_reason)  # fmt: skip
    head = titles + "\n\n" + abstracts
    stamp = pl.lit(f"{day.isoformat()}T00:00:00.000Z")
    created_ts = created.dt.strftime("%Y-%m-%dT00:00:00.000Z")
    rows = []
    for src, v1, v2, text in (
        ("s2orc", s2orc_reason, s2orc_reason, head + "\n\n" + body),
        ("s2ag", s2ag_reason, s2ag_v2, head),
    ):
        v1s, v2s = _strs(v1), _strs(v2)
        keep = v1s.is_null() | v2s.is_null()
        frame = pl.DataFrame(
            {
                "id": ids, "source": pl.Series([src] * n), "created": created_ts, "created_date": created,
                "year": created.dt.year().cast(pl.Int64), "v1_keep": v1s.is_null(), "v1_reason": v1s,
                "v2_keep": v2s.is_null(), "v2_reason": v2s,
                "detail": _strs(np.where(v1 == "paper_filter", drop, None)),
                "text": pl.select(pl.when(keep).then(text)).to_series(),
            }
        ).with_columns(added=stamp, words=_words(pl.col("text")))  # fmt: skip
        rows.append(frame)
    out = pl.concat([rows[0], rows[1]]).with_columns(
        pl.concat_str(
            pl.lit('{"paper_id":"'),
            pl.col("id"),
            pl.lit('","year":'),
            pl.col("year"),
            pl.lit(',"title_lang":"en","abstract_lang":"en","paper_lang":"en","words":'),
            pl.col("words").fill_null(0),
            pl.lit(',"paragraphs":'),
            pl.lit(pl.Series(np.tile(n_par, 2))),
            pl.lit(',"top_word":"the","abstract_ocr_matches":0}'),
        ).alias("signals")
    )  # the release reads verdicts, text and words: the signals are a short stand-in
    # s2orc then s2ag for each paper, as pes2o_day writes them
    return (
        out.with_columns(pl.Series("_o", np.concatenate([np.arange(n) * 2, np.arange(n) * 2 + 1])))
        .sort("_o")
        .select(list(schema))
        .cast(schema)
    )


def _citeworth(
    p, ids, field, source, has_text, kept, drop, n_par, lp, li, lkey, par_text, ver, pschema, cschema, v
):
    """citeworth_paragraphs (every body paragraph of a kept paper with text, kept or rejected with
    its reason) and citeworth_candidates (one row a paper)."""
    import numpy as np
    import polars as pl

    kept_par = _unit(lkey, S_CW) < CITEWORTH_KEPT
    reasons = np.array(list(REJECT_REASONS))[_pick(REJECT_REASONS, _unit(lkey, S_CW, 2))]
    reason = np.where(kept_par, None, reasons)
    permissible = kept_par | (reason != "section_not_permissible")
    sec = np.where(
        permissible,
        np.array(SECTIONS_PERMISSIBLE)[
            (_hash(lkey, S_CW, 3) % np.uint64(len(SECTIONS_PERMISSIBLE))).astype(np.int64)
        ],
        np.array(SECTIONS_OTHER)[(_hash(lkey, S_CW, 3) % np.uint64(len(SECTIONS_OTHER))).astype(np.int64)],
    )
    n_sent = np.where(kept_par, 3 + (_hash(lkey, S_CW, 4) % np.uint64(4)).astype(np.int64), 0)
    n_cw = np.where(kept_par, 1 + (_hash(lkey, S_CW, 5) % np.uint64(2)).astype(np.int64), 0)
    rows = np.flatnonzero(kept_par)
    # kept paragraphs: sentences (the last ones cite-worthy), each a sample as citeworth_day writes it
    s_row = np.repeat(rows, n_sent[rows])
    s_j = np.arange(s_row.size) - np.repeat(np.cumsum(n_sent[rows]) - n_sent[rows], n_sent[rows])
    s_key = _hash(lkey[s_row], s_j, S_CW)
    cite = s_j >= (n_sent[s_row] - n_cw[s_row])
    ref = 1 + (_hash(s_key, S_CW, 6) % np.uint64(60)).astype(np.int64)
    sent = _strs(v.sentences(s_key))
    marker = "[" + pl.Series(ref).cast(pl.String) + "]"
    cite_s = pl.Series(cite)
    sdf = pl.DataFrame({"row": s_row, "j": s_j, "text": sent}).with_columns(
        label=pl.when(cite_s).then(pl.lit("check-worthy")).otherwise(pl.lit("non-check-worthy")),
        original_text=pl.when(cite_s).then(sent.str.strip_suffix(".") + " " + marker + ".").otherwise(sent),
        ref_ids=pl.when(cite_s).then(
            pl.concat_list(pl.lit("BIBREF") + (pl.Series(ref) - 1).cast(pl.String)).reshape((-1, 1)).arr.to_list()
        ),
        citation_text=pl.when(cite_s).then(pl.concat_list(marker)).otherwise(pl.lit([], pl.List(pl.String))),
    )  # fmt: skip
    samples = sdf.group_by("row").agg(
        pl.struct("text", "label", "original_text", "ref_ids", "citation_text").sort_by("j").alias("samples"),
        pl.col("original_text").sort_by("j").str.join(" ").alias("joined"),
    )
    frame = pl.DataFrame({"row": np.arange(len(lp))}).join(samples, on="row", how="left")
    original = pl.select(
        pl.when(frame["joined"].is_not_null()).then(frame["joined"]).otherwise(par_text)
    ).to_series()
    detail = pl.select(
        pl.when(_strs(reason) == "section_not_permissible").then(pl.Series(sec))
        .when(pl.Series(kept_par)).then(pl.lit(""))
        .otherwise(pl.format("sentence 0: '{}'", par_text.str.slice(0, 60)))
    ).to_series()  # fmt: skip
    paragraphs = pl.DataFrame(
        {
            "paper_id": ids.gather(lp), "section_index": li, "section_title": _strs(sec),
            "field": field.gather(lp), "original_text": original,
            "samples": frame["samples"].fill_null(pl.lit([], pschema["samples"])),
            "kept": kept_par, "reason": _strs(reason), "detail": detail,
            "n_sentences": n_sent, "n_cite_worthy": n_cw,
        }
    ).select(list(pschema)).cast(pschema)  # fmt: skip
    per = paragraphs.with_columns(pl.Series("row", lp)).group_by("row").agg(
        pl.len().alias("paragraphs"), pl.col("kept").sum().alias("kept_paragraphs"),
        pl.col("n_sentences").sum().alias("sentences"), pl.col("n_cite_worthy").sum().alias("cite_worthy"),
    )  # fmt: skip
    cand = pl.DataFrame({"row": np.arange(len(p))}).join(per, on="row", how="left").fill_null(0)
    live = has_text & kept
    candidates = pl.DataFrame(
        {
            "paper_id": ids, "field": field, "parse_source": _strs(source),
            "reason": _strs(np.where(~kept, "paper_dropped", np.where(live, None, "no_full_text"))),
            "detail": _strs(np.where(~kept, drop, None)),
            "paragraphs": np.where(live, n_par, 0), "kept_paragraphs": cand["kept_paragraphs"],
            "sentences": cand["sentences"], "cite_worthy": cand["cite_worthy"],
        }
    ).select(list(cschema)).cast(cschema)  # fmt: skip
    return paragraphs, candidates


def _bib_entries(p, ids, source, n_refs, per_day, v: Vocab, schema, normalize_titles):
    """Every bibliography entry of the kept papers with text (what bib_entries writes)."""
    import numpy as np
    import polars as pl

    row = np.repeat(np.arange(len(p)), n_refs)
    k = np.arange(row.size) - np.repeat(np.cumsum(n_refs) - n_refs, n_refs)
    cp = p[row]
    key = _hash(cp, k)
    kinds = list(REF_KINDS)
    kind = np.array(kinds)[_pick(REF_KINDS, _unit(key, S_KIND))]
    share = np.array([IN_CORPUS.get(x, 0.0) for x in kinds])[_pick(REF_KINDS, _unit(key, S_KIND))]
    inside = (_unit(key, S_CORPUS) < share) & (cp > 0)
    q = _targets(cp, key)
    m = len(cp)
    titled = (kind == "title") | (
        ((kind == "arxiv") & (_unit(key, S_PUB_T) < 0.8)) | ((kind == "doi") & (_unit(key, S_PUB_T) < 0.85))
    )
    with_pub = (kind == "pub") | (titled & (_unit(key, S_PUB_T, 2) < TITLED_PUB))
    # titles: the target's as cited, or a title of a work outside the corpus
    title = _strs([""] * m)
    ins = np.flatnonzero(titled & inside)
    if ins.size:
        title = title.scatter(ins, v.cited_titles(q[ins], key[ins]))
    out = np.flatnonzero(titled & ~inside)
    if out.size:
        title = title.scatter(out, v.titles(key[out], salt=S_EXT))
    arxiv = pl.select(
        pl.when(pl.Series(kind == "arxiv") & pl.Series(inside)).then(paper_ids(q, per_day))
        .when(pl.Series(kind == "arxiv")).then(external_ids(key))
    ).to_series()  # fmt: skip
    ext_doi = "10.1016/j.ext." + pl.Series(_hash(key, S_EXT, 3) % np.uint64(10**9)).cast(pl.String)
    also_doi = (kind == "doi") | ((kind == "arxiv") & (_unit(key, S_DOI) < 0.1))
    doi = pl.select(
        pl.when(pl.Series(also_doi) & pl.Series(inside)).then(_doi(q)).when(pl.Series(also_doi)).then(ext_doi)
    ).to_series()  # fmt: skip
    qpub = _publication(
        np.where(inside, q, (_hash(key, S_EXT, 4) % np.uint64(10**9)).astype(np.int64) + 10**10), v
    )
    wp = pl.Series(with_pub)
    year_t = (START.year + q // (365 * per_day)).astype(np.int64)
    year = np.where(inside, year_t, 1980 + (_hash(key, S_YEAR) % np.uint64(40)).astype(np.int64))
    has_year = _unit(key, S_YEAR, 2) >= 0.05
    venue = pl.select(
        pl.when(pl.Series(kind == "arxiv")).then(pl.lit("arXiv preprint"))
        .when(wp).then(qpub[0])
        .when(pl.Series(_unit(key, S_MISC) < 0.5)).then(v.journals.gather((_hash(key, S_MISC) % np.uint64(len(JOURNALS))).astype(np.int64)))
    ).to_series()  # fmt: skip
    surname = pl.Series(SURNAMES).gather((_hash(key, S_AUTH) % np.uint64(len(SURNAMES))).astype(np.int64))
    has_surname = _unit(key, S_AUTH, 2) >= 0.05
    raw = pl.select(
        pl.when(pl.Series(_unit(key, S_MISC, 2) < 0.2))
        .then(pl.format("{}, A. {}. {} ({}).", surname, title, venue.fill_null("Preprint"), pl.Series(year)))
    ).to_series()  # fmt: skip
    frame = pl.DataFrame(
        {
            "entry_id": ids.gather(row) + "#BIBREF" + pl.Series(k).cast(pl.String),
            "citing_id": ids.gather(row), "ref_id": "BIBREF" + pl.Series(k).cast(pl.String),
            "source": _strs(source).gather(row), "title": title,
            "norm_title": pl.select(pl.when(title != "").then(normalize_titles(title))).to_series(),
            "doi": doi, "arxiv_id": arxiv,
            "year": pl.select(pl.when(pl.Series(has_year)).then(pl.Series(year))).to_series(),
            "first_author_surname": pl.select(pl.when(pl.Series(has_surname)).then(surname)).to_series(),
            "n_authors": np.clip(np.rint(_lognormal(4.7, 0.8, key, S_AUTH)), 1, 500).astype(np.int64),
            "venue": venue, "raw_text": raw,
            "mentions": 1 + np.floor(-np.log(np.maximum(_unit(key, S_MISC, 3), 1e-12)) / np.log(1 / 0.35)).astype(np.int64),
            "pub_journal": pl.select(pl.when(wp).then(qpub[1])).to_series(),
            "pub_volume": pl.select(pl.when(wp).then(qpub[2])).to_series(),
            "pub_page": pl.select(pl.when(wp).then(qpub[3])).to_series(),
            "pub_year": pl.select(pl.when(wp & pl.Series(has_year)).then(pl.Series(year))).to_series(),
        }
    )  # fmt: skip
    return frame.select(list(schema)).cast(schema)


def _fulltext_ids(p, ids, ver, per_day):
    """arXiv ids named in the body text of the kept papers with text."""
    import numpy as np
    import polars as pl

    u = _unit(p, ver, S_FT)
    cdf = np.cumsum(
        [math.exp(-FULLTEXT_IDS_MEAN) * FULLTEXT_IDS_MEAN**i / math.factorial(i) for i in range(12)]
    )
    n = np.searchsorted(cdf, u * cdf[-1]).astype(np.int64)
    row = np.repeat(np.arange(len(p)), n)
    j = np.arange(row.size) - np.repeat(np.cumsum(n) - n, n)
    key = _hash(p[row], j, S_FT)
    q = _targets(p[row], key)
    inside = (_unit(key, S_FT, 2) < 0.85) & (p[row] > 0)
    cited = pl.select(
        pl.when(pl.Series(inside)).then(paper_ids(q, per_day)).otherwise(external_ids(key))
    ).to_series()
    frame = pl.DataFrame(
        {
            "citing_id": ids.gather(row),
            "cited_id": cited,
            "mentions": 1 + (_unit(key, S_FT, 3) < 0.2).astype(np.int64),
        }
    )
    return frame.unique(["citing_id", "cited_id"], keep="first", maintain_order=True)


# ------------------------------------------------------------------ writing days
def _init_worker(text_scale: float) -> None:
    import corpus_assets  # noqa: F401  (polars' allocator set as the project's processes set it)

    vocab(text_scale)


def _write_days(job: tuple[str, list[int], int, float]) -> list[tuple[str, str, int]]:
    """Write the daily partitions of these days; (day, asset, rows) of each."""
    from corpus.store import Store

    home, days, per_day, text_scale = job
    store = Store(Path(home))
    out = []
    for d in days:
        for asset, frame in make_day(d, per_day, vocab(text_scale)).items():
            store.write_partition(asset, day_name(d), frame)
            out.append((day_name(d), asset, frame.height))
    return out


def write_days(home: Path, days: list[int], per_day: int, text_scale: float, workers: int) -> list[tuple]:
    """The days written by ``workers`` processes (spawned: polars' threads do not survive a fork),
    each taking runs of days in turn."""
    import multiprocessing as mp

    runs = [days[i : i + 4] for i in range(0, len(days), 4)]
    jobs = [(str(home), run, per_day, text_scale) for run in runs]
    if workers <= 1 or len(jobs) == 1:
        _init_worker(text_scale)
        return [row for job in jobs for row in _write_days(job)]
    with mp.get_context("spawn").Pool(min(workers, len(jobs)), _init_worker, (text_scale,)) as pool:
        return [row for rows in pool.imap_unordered(_write_days, jobs) for row in rows]


def record_days(dagster_home: Path, home: Path, written: list[tuple[str, str, int]]) -> float:
    """Each written partition as a materialisation in the instance, with the metadata the daily
    assets give theirs (corpus_assets.common.report_day): row count, content fingerprint, column
    schema, and the stage's code version as the event's tag. Returns the CPU seconds spent."""
    import dagster as dg

    from corpus.store import Store
    from corpus.versions import code_version
    from corpus_assets.columns import parquet_column_schema
    from corpus_assets.freshness import CODE_VERSION_TAG, FINGERPRINT

    started = time.process_time()
    store = Store(home)
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        for day, asset, rows in sorted(written):
            metadata = {"dagster/row_count": rows, FINGERPRINT: store.fingerprint(asset, day)}
            schema = parquet_column_schema(asset, store.partition_dir(asset, day) / "part-0.parquet")
            if schema is not None:
                metadata["dagster/column_schema"] = schema
            instance.report_runless_asset_event(
                dg.AssetMaterialization(
                    asset, partition=day, metadata=metadata, tags={CODE_VERSION_TAG: code_version(asset)}
                )
            )
    return time.process_time() - started


# ------------------------------------------------------------------ measuring the job
class Sampler(TreeSampler):
    """:class:`TreeSampler` that also keeps the tree's CPU and RSS over time (for the job's steps)
    and stops the tree when its RSS passes ``limit_mb`` (other work shares this machine)."""

    def __init__(self, pid: int, limit_mb: float, interval_s: float = 0.2):
        super().__init__(pid, interval_s)
        self.limit_mb, self.series, self.killed = limit_mb, [], False

    def _sample(self) -> float:
        cpu = super()._sample()
        rss = runnable = 0
        for p in self._tree():
            try:
                with open(f"/proc/{p}/statm") as fh:
                    rss += int(fh.read().split()[1]) * self._page
                for task in os.listdir(f"/proc/{p}/task"):
                    with open(f"/proc/{p}/task/{task}/stat") as fh:
                        runnable += fh.read().rsplit(")", 1)[1].split()[0] == "R"
            except (OSError, IndexError, ValueError):
                continue
        # runnable threads want a core whether or not the machine gives them one: the cores a
        # step could use on an idle machine, where CPU / wall only says what it got here
        self.series.append((time.time(), cpu, rss / 2**20, runnable))
        if rss / 2**20 > self.limit_mb and not self.killed:
            self.killed = True
            self.stop_tree()
        return cpu

    def stop_tree(self) -> None:
        for p in reversed(self._tree()):
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)

    def window(self, start: float, end: float) -> dict:
        inside = [s for s in self.series if start - self.interval_s <= s[0] <= end + self.interval_s]
        if len(inside) < 2:
            return {
                "cpu_s": 0.0,
                "wall_s": end - start,
                "cores": 0.0,
                "peak_mb": max((s[2] for s in inside), default=0),
            }
        cpu = inside[-1][1] - inside[0][1]
        wall = max(end - start, 1e-9)
        wants = sum(s[3] for s in inside) / len(inside)
        return {"cpu_s": cpu, "wall_s": wall, "cores": cpu / wall, "peak_mb": max(s[2] for s in inside),
                "runnable": wants}  # fmt: skip


CROSS_DAY = ["citation_links", "citation_graph", "pes2o_v1", "pes2o_v2", "citeworth_splits"]  # job order


def run_job(root: Path, cutoff: str, limit_gb: float, op: str | None = None) -> dict:
    """The ``corpus_graph`` job in a fresh process (``dagster job execute``, as corpus_graph.py
    runs it), sampled; per step and per asset from the run's event log."""
    import dagster as dg

    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CORPUS_") and k != "PYTHONPATH"},
        "CORPUS_HOME": str(root / "data"),
        "CORPUS_LANDING": str(root / "landing"),
        "CORPUS_START_DATE": START.isoformat(),
        "DAGSTER_HOME": str(root / "dagster_home"),
        "PYTHONPATH": str(REPO),
    }
    (root / "landing").mkdir(exist_ok=True)
    cmd = [
        sys.executable,
        "-W",
        "ignore",
        "-m",
        "dagster",
        "job",
        "execute",
        "-m",
        "corpus_assets.definitions",
    ]
    # the peS2o cutoff after the generated days (every day read), for the releases the run has
    ops = {v: {"config": {"cutoff": cutoff}} for v in ("pes2o_v1", "pes2o_v2") if op in (None, v)}
    config = root / f"job_config_{op or 'all'}.json"
    config.write_text(json.dumps({"ops": ops} if ops else {}))
    cmd += ["-j", "corpus_graph", "-c", str(config)]
    cmd += ["-o", op] if op else []  # one asset of the job (its ops), as --by-asset runs them
    log = root / f"job-{int(time.time())}.log"
    started = time.time()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        with Sampler(proc.pid, limit_gb * 1024) as tree:
            try:
                proc.wait()
            finally:  # this script stopped (Ctrl-C, SIGTERM): the job's tree goes with it
                if proc.poll() is None:
                    tree.stop_tree()
    wall = time.time() - started
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        why = f"stopped at {limit_gb} GB of RSS" if tree.killed else f"exit {proc.returncode}"
        raise SystemExit(f"corpus_graph failed ({why}); log {log}:\n{tail}")
    with dg.DagsterInstance.from_config(str(root / "dagster_home")) as instance:
        run = instance.get_runs(filters=dg.RunsFilter(job_name="corpus_graph"), limit=1)[0]
        events = instance.all_logs(
            run.run_id, of_type={dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS}
        )
    starts = {
        e.step_key: e.timestamp
        for e in events
        if e.dagster_event.event_type == dg.DagsterEventType.STEP_START
    }
    ends = {
        e.step_key: e.timestamp
        for e in events
        if e.dagster_event.event_type == dg.DagsterEventType.STEP_SUCCESS
    }
    steps = {k: tree.window(starts[k], ends[k]) for k in sorted(starts, key=starts.get) if k in ends}
    assets: dict[str, dict] = {}
    for key, fig in steps.items():
        asset = next((a for a in sorted(CROSS_DAY, key=len, reverse=True) if key.startswith(a)), key)
        agg = assets.setdefault(asset, {"cpu_s": 0.0, "wall_s": 0.0, "peak_mb": 0.0, "runnable": 0.0})
        agg["cpu_s"] += fig["cpu_s"]
        agg["runnable"] += fig.get("runnable", 0.0) * fig["wall_s"]
        agg["wall_s"] += fig["wall_s"]
        agg["peak_mb"] = max(agg["peak_mb"], fig["peak_mb"])
    for agg in assets.values():
        agg["cores"] = agg["cpu_s"] / max(agg["wall_s"], 1e-9)
        agg["runnable"] /= max(agg["wall_s"], 1e-9)
    return {
        "cpu_s": tree.cpu_s, "wall_s": wall, "peak_mb": tree.peak_rss_mb, "cores": tree.cpu_s / wall,
        "busy_cores": tree.busy_cores(), "steps": steps,
        "runnable": sum(x[3] for x in tree.series) / max(len(tree.series), 1), "assets": assets, "run_id": run.run_id,
        "load": os.getloadavg(), "log": str(log),
    }  # fmt: skip


def combined(runs: list[dict]) -> dict:
    """One figure for the job run asset by asset: CPU and wall summed, the highest peak."""
    cpu, wall = sum(r["cpu_s"] for r in runs), sum(r["wall_s"] for r in runs)
    return {
        "cpu_s": cpu, "wall_s": wall, "peak_mb": max(r["peak_mb"] for r in runs), "cores": cpu / wall,
        "busy_cores": sum(r["busy_cores"] * r["wall_s"] for r in runs) / wall,
        "runnable": sum(r.get("runnable", 0.0) * r["wall_s"] for r in runs) / wall,
        "steps": {k: v for r in runs for k, v in r["steps"].items()},
        "assets": {k: v for r in runs for k, v in r["assets"].items()},
        "run_id": [r["run_id"] for r in runs], "load": runs[-1]["load"], "runs": len(runs),
    }  # fmt: skip


def store_bytes(home: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(home):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def report(label: str, fig: dict) -> None:
    load = ", ".join(f"{x:.1f}" for x in fig["load"])
    print(f"{label}: {fig['cpu_s']:.1f} CPU s, {fig['wall_s']:.1f} s wall, {fig['cores']:.2f} cores "
          f"(busy {fig['busy_cores']:.2f}; {fig.get('runnable', 0):.2f} threads runnable), peak {fig['peak_mb'] / 1024:.2f} GB; load {load}", flush=True)  # fmt: skip
    for asset, a in fig["assets"].items():
        print(f"  {asset:18s} {a['cpu_s']:9.1f} CPU s {a['wall_s']:9.1f} s wall {a['cores']:5.2f} cores "
              f"({a.get('runnable', 0):4.2f} threads runnable) peak {a['peak_mb'] / 1024:6.2f} GB", flush=True)  # fmt: skip


# ------------------------------------------------------------------ main
def day_complete(home: Path, d: int) -> bool:
    """Whether every table of day ``d`` is written (partitions are swapped in whole, with their
    provenance: a writer that was stopped leaves none half written)."""
    return all((home / a / f"date={day_name(d)}" / "_provenance").exists() for a in DAILY_READ)


def ensure_days(pool: Path, days: list[int], args: argparse.Namespace) -> dict:
    """Write the days the pool lacks; how long it took."""
    missing = [d for d in days if not day_complete(pool, d)]
    started, cpu0 = time.time(), _children_cpu()
    if missing:
        write_days(pool, missing, args.papers_per_day, args.text_scale, args.workers)
    wall, cpu = time.time() - started, _children_cpu() - cpu0
    papers = len(missing) * args.papers_per_day
    return {"days_written": len(missing), "wall_s": wall, "cpu_s": cpu, "load": os.getloadavg(),
            "papers_per_min": 60 * papers / wall if missing else None,
            "cpu_s_per_day": cpu / len(missing) if missing else None}  # fmt: skip


@contextlib.contextmanager
def job_lock(base: Path | None):
    """One measured job at a time under one --keep (two would share the cores and the memory)."""
    import fcntl

    if base is None:
        yield
        return
    with open(base / "job.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, required=True)
    parser.add_argument("--keep", type=Path, help="keep the days, stores and instances here (resumable)")
    parser.add_argument("--papers-per-day", type=int, default=1000)
    parser.add_argument("--text-scale", type=float, default=1.0, help="body text length / real (1.0)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes writing days")
    parser.add_argument("--max-rss-gb", type=float, default=13.5, help="stop the job above this RSS")
    parser.add_argument(
        "--by-asset", action="store_true", help="the full build as one run of the job per asset (resumable)"
    )
    parser.add_argument("--generate-only", action="store_true", help="only write the days (with --keep)")
    parser.add_argument(
        "--assets",
        default=",".join(CROSS_DAY),
        help="with --by-asset: the cross-day assets measured, full build and new day (default: all; the "
        "RESULT line names them when not all)",
    )
    parser.add_argument(
        "--force",
        nargs="*",
        default=[],
        choices=["full", "newday"],
        help="measure again (newday: one more new day, the day after the last one added)",
    )
    args = parser.parse_args()
    assets = [a for a in CROSS_DAY if a in args.assets.split(",")]  # in job order
    if set(args.assets.split(",")) - set(CROSS_DAY) or not assets:
        parser.error(f"--assets: some of {', '.join(CROSS_DAY)}")
    if assets != CROSS_DAY and not args.by_asset:
        parser.error("--assets needs --by-asset (a run of the whole job builds every asset)")
    import tempfile

    from corpus_graph import link_days

    from corpus.store import Store

    tmp, base = None, None
    tag = f"{args.papers_per_day}x{args.text_scale:g}"
    if args.keep:
        base = args.keep.resolve()
        pool, root = base / f"pool-{tag}", base / f"d{args.days}-{tag}"
        root.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="arxiv_scale-", dir=os.environ.get("TMPDIR"))
        pool = root = Path(tmp.name)
    pool_home, home, dagster_home = pool / "data", root / "data", root / "dagster_home"
    os.environ["DAGSTER_HOME"] = str(dagster_home)  # the instance's paths are relative to it
    state_path = root / "measured.json"
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    state["setup"] = {"days": args.days, "papers_per_day": args.papers_per_day, "text_scale": args.text_scale,
                      "seed": SEED}  # fmt: skip
    n = args.days

    def save() -> None:
        state_path.write_text(json.dumps(state, indent=1, default=str))

    def add_days(days: list[int]) -> dict:
        """Link the days into the store (from the pool) and record them in the instance."""
        names = [day_name(d) for d in days]
        if pool != root:
            link_days(pool_home, home, names)
        written = [(day, a, Store(home).partition_rows(a, day)) for day in names for a in DAILY_READ]
        return {"record_cpu_s": record_days(dagster_home, home, written),
                "records": sum(r for _, a, r in written if a == "papers"),
                "entries": sum(r for _, a, r in written if a == "bib_entries")}  # fmt: skip

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # finally blocks run: the job is stopped
    if args.generate_only:
        g = ensure_days(pool_home, list(range(n + 1)), args)
        print(f"{g['days_written']} days written in {g['wall_s']:.1f} s ({g['cpu_s']:.1f} CPU s)", flush=True)
        return
    try:
        if "generate" not in state:
            from backfill import instance_home

            instance_home(root)
            g = ensure_days(pool_home, list(range(n)), args)
            g.update(add_days(list(range(n))), papers=n * args.papers_per_day)
            state["generate"] = g
            save()
            rate = f"{g['papers_per_min']:,.0f} papers a minute, " if g["papers_per_min"] else ""
            print(f"{n} days: {g['records']} records ({g['papers']} papers), {g['entries']} bib entries; "
                  f"{g['days_written']} days written in {g['wall_s']:.1f} s ({rate}{g['cpu_s']:.1f} CPU s)",
                  flush=True)  # fmt: skip
        cutoff = (START + dt.timedelta(days=n + 1)).isoformat()  # every day read by the releases
        unmeasured = args.by_asset and any(a not in state.get("full_by_asset", {}) for a in assets)
        if "full" not in state or "full" in args.force or unmeasured:
            if args.by_asset:  # each asset's run kept as it ends: a stopped session loses one asset's
                parts = state.setdefault("full_by_asset", {})
                for asset in assets:
                    if asset not in parts or "full" in args.force:
                        with job_lock(base):
                            parts[asset] = run_job(root, cutoff, args.max_rss_gb, op=asset)
                        save()
                state["full"] = combined([parts[a] for a in assets])
            else:
                with job_lock(base):
                    state["full"] = run_job(root, cutoff, args.max_rss_gb)
            state["full"]["store_bytes"] = store_bytes(home)
            save()
        if args.by_asset and all(a in state.get("full_by_asset", {}) for a in assets):
            state["full"] = {
                **combined([state["full_by_asset"][a] for a in assets]),
                "store_bytes": state["full"].get("store_bytes", 0),
            }  # the assets measured now
        report(f"full build over {n} days", state["full"])
        other = state.get("newday", {}).get("asked", CROSS_DAY) != assets  # measured for other assets
        if "newday" not in state or "newday" in args.force or other:
            # the first new day, or (measured again: --force newday) the next one: the same day again
            # would find nothing new; an interrupted run measures its day again
            if "newday_written" not in state or "newday" in state:
                k = state.get("newdays", 1 if "newday_written" in state else 0)  # new days added so far
                if k and {"pes2o_v1", "pes2o_v2"} & set(assets):
                    sys.exit("a second new day is after the peS2o cutoff the full build used: measure it "
                             "with --by-asset --assets citation_links,citation_graph,citeworth_splits")  # fmt: skip
                ensure_days(pool_home, [n + k], args)
                state["newday_written"] = add_days([n + k])
                state["newdays"] = k + 1
                state.pop("newday", None)
                save()
            with job_lock(base):
                if assets == CROSS_DAY:
                    state["newday"] = run_job(root, cutoff, args.max_rss_gb)
                else:  # only the assets built: a run of the job would build the others in full
                    state["newday"] = combined([run_job(root, cutoff, args.max_rss_gb, op=a) for a in assets])
            state["newday"]["store_bytes"] = store_bytes(home)
            state["newday"]["asked"] = assets
            save()
        report(f"one new day ({state['newday_written']['records']} records)", state["newday"])
        full, new, g = state["full"], state["newday"], state["generate"]
        result(
            days=n, papers=g["papers"], entries=g["entries"],
            full_cpu_s=round(full["cpu_s"], 1), full_wall_s=round(full["wall_s"], 1),
            full_peak_gb=round(full["peak_mb"] / 1024, 2), newday_cpu_s=round(new["cpu_s"], 1),
            newday_peak_gb=round(new["peak_mb"] / 1024, 2), store_gb=round(new["store_bytes"] / 1e9, 2),
            full_cores=round(full["cores"], 2), newday_wall_s=round(new["wall_s"], 1),
            gen_papers_per_min=round(g["papers_per_min"] or 0), text_scale=args.text_scale,
            **({} if assets == CROSS_DAY else {"assets": ",".join(assets)}),
        )  # fmt: skip
    finally:
        if tmp is not None:
            tmp.cleanup()


def _children_cpu() -> float:
    """CPU seconds of this process and its finished children (the writers)."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


if __name__ == "__main__":
    main()
