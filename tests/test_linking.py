"""Title and identifier linking: the fast linker must give exactly the exhaustive scorer's links."""

from __future__ import annotations

import csv
import json
import sys
import tarfile

import numpy as np
import polars as pl
import pytest
from lxml import etree

from corpus.graph.linking import (
    LinkingInputError,
    link_exact,
    link_titles,
    link_titles_exhaustive,
    min_overlap,
    score_from_counts,
    title_score,
    trigrams,
)
from corpus.papers.normalize import normalize_doi, normalize_title, normalize_titles

TEI = "{http://www.tei-c.org/ns/1.0}"


# ---------------------------------------------------------------------------
# real titles from ../shared/data
# ---------------------------------------------------------------------------


def _tei_bib_titles(data) -> list[str]:
    out = []
    for path in sorted(data.rglob("*.xml")):
        if "tei" not in str(path).lower():
            continue
        try:
            root = etree.parse(str(path)).getroot()
        except etree.XMLSyntaxError:
            continue
        for bib in root.iter(f"{TEI}biblStruct"):
            for xp in (f"{TEI}analytic/{TEI}title", f"{TEI}monogr/{TEI}title"):
                el = bib.find(xp)
                if el is not None and "".join(el.itertext()).strip():
                    out.append(" ".join("".join(el.itertext()).split()))
                    break
    return out


def _s2orc_titles(data) -> list[str]:
    base = data / "s2orc_family" / "s2orc_repo"
    titles = [json.loads(line)["title"] for line in (base / "metadata_sample_20200705.jsonl").open()]
    csv.field_size_limit(sys.maxsize)
    with (base / "metadata_sample.tsv").open(newline="") as fh:
        titles += [row["title"] for row in csv.DictReader(fh, delimiter="\t")]
    return [t for t in titles if t]


def _unarxive_bib_raw(data) -> list[str]:
    path = data / "s2orc_family" / "unarXive" / "unarXive_data_sample.tar.gz"
    with tarfile.open(path) as tf:
        member = next(m for m in tf.getmembers() if m.name.endswith(".jsonl"))
        docs = [json.loads(line) for line in tf.extractfile(member)]
    return [b["bib_entry_raw"] for d in docs for b in d["bib_entries"].values() if b.get("bib_entry_raw")]


@pytest.fixture(scope="module")
def real(shared_data):
    return {
        "tei": _tei_bib_titles(shared_data),
        "s2orc": _s2orc_titles(shared_data),
        "unarxive": _unarxive_bib_raw(shared_data),
    }


def _perturb(title: str, rng: np.random.Generator) -> str:
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return title.upper()
    if kind == 1:
        s = list(title)
        for _ in range(int(rng.integers(1, 4))):
            s[int(rng.integers(0, len(s)))] = "x"
        return "".join(s)
    if kind == 2:
        return title[: max(3, int(len(title) * 0.85))]
    if kind == 3 and ":" in title:
        return title.split(":", 1)[0]
    return title.replace(" ", "-") + "."


def _frames(paper_titles, entry_titles, rng, n_citing=None):
    papers = pl.DataFrame(
        {"paper_id": [f"p{i:05d}" for i in range(len(paper_titles))], "norm_title": paper_titles}
    ).with_columns(normalize_titles(pl.col("norm_title")))
    n_citing = n_citing or len(paper_titles)
    entries = pl.DataFrame(
        {
            "entry_id": [f"e{i:05d}" for i in range(len(entry_titles))],
            "citing_id": [f"p{i:05d}" for i in rng.integers(0, n_citing, size=len(entry_titles))],
            "norm_title": entry_titles,
        }
    ).with_columns(normalize_titles(pl.col("norm_title")))
    return entries, papers


# ---------------------------------------------------------------------------
# normalisation and the score
# ---------------------------------------------------------------------------


def test_normalize_title_cases():
    assert normalize_title("  Deep   Learning: A Survey! ") == "deeplearningasurvey"
    assert normalize_title("Schrödinger’s ﬁnite ＡＢＣ") == "schrodingersfiniteabc"
    assert normalize_title("Pre-training vs. pre training") == normalize_title("pretraining VS pretraining")
    assert normalize_title("Über 3 Qubits — 한국어") == "uber3qubits한국어"
    assert normalize_title(None) == "" and normalize_title("!!!") == ""


def test_vectorised_normalisation_equals_scalar_on_real_titles(real):
    titles = real["tei"] + real["s2orc"] + real["unarxive"][:3000] + ["ΟΔΟΣ Σ", "İstanbul", "x² ½ Ⅻ"]
    assert len(titles) > 4000
    vec = normalize_titles(pl.Series(titles)).to_list()
    assert vec == [normalize_title(t) for t in titles]


def test_title_score_by_hand():
    # {abc, bcd} vs {abc, bce}: i=1, J=1/3, C=1/2, S=2JC/(J+C)=0.4
    assert title_score("abcd", "abce", normalized=True) == pytest.approx(0.4)
    # containment: "abcde" (3 grams) inside "abcdef" (4): J=3/4, C=1 -> S=6/7
    assert title_score("abcde", "abcdef", normalized=True) == pytest.approx(6 / 7)
    assert title_score("Same Title", "same-title!") == 1.0
    assert title_score("ab", "ab") == 0.0  # no 3-grams, never a link
    assert trigrams("aaaa") == frozenset({"aaa"})
    # the bound used by the prefix filter: a pair just above 0.8 respects it
    assert min_overlap(30) == 20 and min_overlap(31) == 21


def test_bad_inputs():
    e = pl.DataFrame({"entry_id": ["a", "a"], "citing_id": ["x", "y"], "norm_title": ["abcd", "abce"]})
    p = pl.DataFrame({"paper_id": ["p"], "norm_title": ["abcd"]})
    with pytest.raises(LinkingInputError, match="not unique"):
        link_titles(e, p)
    with pytest.raises(LinkingInputError, match="lacks column"):
        link_titles(e.drop("citing_id"), p)
    with pytest.raises(LinkingInputError, match="threshold"):
        link_titles(e.head(1), p, threshold=1.0)


# ---------------------------------------------------------------------------
# fast linker == exhaustive scorer
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [0.8, 0.6, 0.9])
def test_fast_equals_exhaustive_on_real_titles(real, threshold):
    rng = np.random.default_rng(7)
    paper_titles = real["s2orc"] + real["tei"][::2]
    copies = [_perturb(paper_titles[i], rng) for i in rng.integers(0, len(paper_titles), size=1500)]
    entry_titles = real["tei"] + real["unarxive"][:1500] + copies
    entries, papers = _frames(paper_titles, entry_titles, rng)
    fast = link_titles(entries, papers, threshold)
    ref = link_titles_exhaustive(entries, papers, threshold)
    assert fast.height > 1000
    assert fast.equals(ref)


def test_fast_equals_exhaustive_on_generated_titles_with_ties():
    rng = np.random.default_rng(11)
    words = [
        w
        for w in "alpha beta gamma delta quantum field theory graph neural network learning deep "
        "model sparse dense random walk spectral method analysis of on for a the with".split()
    ]
    titles = [" ".join(rng.choice(words, size=int(rng.integers(3, 9)))) for _ in range(3000)]
    titles += titles[:200]  # duplicate paper titles: ties broken by the smallest paper_id
    entry_titles = [_perturb(titles[i], rng) for i in rng.integers(0, len(titles), size=3000)]
    entries, papers = _frames(titles, entry_titles, rng)
    fast = link_titles(entries, papers)
    ref = link_titles_exhaustive(entries, papers)
    assert fast.height > 1500
    assert fast.equals(ref)


def test_self_citation_is_never_a_link_and_tie_break():
    papers = pl.DataFrame(
        {"paper_id": ["p2", "p1", "p3"], "norm_title": ["graphneuralnets"] * 2 + ["graphneuralnetz"]}
    )
    entries = pl.DataFrame(
        {
            "entry_id": ["e1", "e2"],
            "citing_id": ["p1", "p9"],
            "norm_title": ["graphneuralnets", "graphneuralnets"],
        }
    )
    out = link_titles(entries, papers)
    # e1 is written by p1: its own title is skipped, p2 (same title) wins; e2 ties p1/p2 -> p1
    assert out.rows() == [("e1", "p2", 1.0), ("e2", "p1", 1.0)]
    alone = link_titles(entries.head(1), papers.filter(pl.col("paper_id") == "p1"))
    assert alone.height == 0


def test_signature_bound_never_below_the_overlap(real):
    """The 128-bit signature bound the fast linker filters with is an upper bound on |X ∩ Y|."""
    from corpus.graph.linking import _missing, _sets, _signatures, _vocab

    titles = [normalize_title(t) for t in real["s2orc"] + real["tei"]]
    titles = [t for t in titles if len(t) >= 3]
    vocab = _vocab([titles])
    sets = _sets(titles, vocab)
    sig = _signatures(sets)
    rng = np.random.default_rng(5)
    a = rng.integers(0, len(titles), size=20_000)
    b = np.where(rng.random(20_000) < 0.5, rng.integers(0, len(titles), size=20_000), a)  # half identical
    grams = [trigrams(t) for t in titles]
    inter = np.array([len(grams[i] & grams[j]) for i, j in zip(a.tolist(), b.tolist(), strict=True)])
    bound_a = sets.sizes[a] - _missing(sig[0][a], sig[0][b]) - _missing(sig[1][a], sig[1][b])
    bound_b = sets.sizes[b] - _missing(sig[0][b], sig[0][a]) - _missing(sig[1][b], sig[1][a])
    assert (np.minimum(bound_a, bound_b) >= inter).all()
    assert (np.minimum(bound_a, bound_b) == inter)[a == b].all()
    assert (np.minimum(bound_a, bound_b) < sets.sizes[a])[a != b].mean() > 0.9  # and it is tight


def test_fast_equals_exhaustive_at_the_size_window_edges(real):
    """Truncated titles (containment) and padded ones put pairs near M = 1.5 m and S = 0.8."""
    rng = np.random.default_rng(13)
    papers = [t for t in real["s2orc"] if len(normalize_title(t)) >= 30][:800]
    entries = []
    for t in papers:
        n = len(t)
        entries.append(t[: int(n * rng.uniform(0.6, 0.8))])  # the smaller side of a containment pair
        entries.append(t + " " + t[: int(n * rng.uniform(0.2, 0.6))])  # the larger side
    for threshold in (0.8, 0.7):
        e_frame, p_frame = _frames(papers, entries, rng)
        fast = link_titles(e_frame, p_frame, threshold)
        ref = link_titles_exhaustive(e_frame, p_frame, threshold)
        assert fast.height > 300
        assert fast.equals(ref)


# ---------------------------------------------------------------------------
# exact links
# ---------------------------------------------------------------------------


def test_normalize_doi():
    assert normalize_doi("https://doi.org/10.1145/1105.321114.") == "10.1145/1105.321114"
    assert normalize_doi("DOI: 10.1002/2016JB013287") == "10.1002/2016jb013287"
    assert normalize_doi("http://dx.doi.org/10.1090/tran/8674") == "10.1090/tran/8674"
    assert normalize_doi("not a doi") is None and normalize_doi(None) is None


def test_link_exact_precedence_and_self():
    papers = pl.DataFrame(
        {
            "paper_id": ["1806.01261", "hep-th/9901001", "2101.00001", "2101.00002"],
            "doi": [None, "10.1000/X", "10.2000/y", "10.2000/Y"],
        }
    )
    entries = pl.DataFrame(
        {
            "entry_id": ["a", "b", "c", "d", "e", "f"],
            "citing_id": ["z", "z", "z", "hep-th/9901001", "z", "z"],
            "arxiv_id": [
                "arXiv:1806.01261v2",
                "hep-th/9901001",
                None,
                "hep-th/9901001v1",
                "1806.01261",
                "junk",
            ],
            "doi": [None, "https://doi.org/10.2000/y", "doi:10.2000/Y", None, "10.1000/x", "10.4040/none"],
        }
    )
    out = link_exact(entries, papers)
    assert out.rows() == [
        ("a", "1806.01261", "arxiv_id"),
        ("b", "hep-th/9901001", "arxiv_id"),  # arXiv id beats the DOI
        ("c", "2101.00001", "doi"),  # two papers share the DOI: smallest paper_id
        ("e", "1806.01261", "arxiv_id"),
    ]  # d cites itself, f matches nothing


# ---------------------------------------------------------------------------
# incremental == full recomputation
# ---------------------------------------------------------------------------


def _days(real, rng):
    titles = real["s2orc"][:1500] + real["tei"][:300]
    ids = [f"{2001 + i // 900:04d}.{i % 900 + 1:05d}" for i in range(len(titles))]
    papers = pl.DataFrame({"paper_id": ids, "doi": [None] * len(ids), "norm_title": titles})
    papers = papers.with_columns(normalize_titles(pl.col("norm_title")))
    rows = []
    for k in range(3000):
        i = int(rng.integers(0, len(titles)))
        use_id = rng.random() < 0.15
        rows.append(
            {
                "entry_id": f"E{k:05d}",
                "citing_id": ids[int(rng.integers(0, len(ids)))],
                "arxiv_id": f"arXiv:{ids[i]}" if use_id else None,
                "doi": None,
                "norm_title": normalize_title(_perturb(titles[i], rng) if rng.random() < 0.8 else titles[-i]),
            }
        )
    entries = pl.DataFrame(rows)
    day = rng.integers(0, 3, size=papers.height)
    eday = pl.DataFrame({"citing_id": ids, "d": day})
    entries = entries.join(eday, on="citing_id", how="left", maintain_order="left")
    return papers.with_columns(pl.Series("d", day)), entries


def test_incremental_equals_full(real, tmp_path):
    """Real titles (S2ORC metadata, Grobid bibliographies) over three days, then a fourth that
    re-delivers five papers with a changed title and a re-parsed citing paper: citation_links
    updated day by day equals link_entries over everything."""
    from corpus.graph.citation_links import links_by_definition, read_links, update_links
    from corpus.papers.bibliography import bib_frame
    from corpus.papers.metadata import papers_frame
    from corpus.store import Store

    rng = np.random.default_rng(3)
    papers, entries = _days(real, rng)
    store = Store(tmp_path)
    for day in (0, 1, 2, 3):
        p = papers.filter(pl.col("d") == day)
        e = entries.filter(pl.col("d") == day)
        if day == 3:  # new versions: changed titles, one bibliography delivered again
            p = papers.head(5).with_columns(pl.lit("completelydifferenttitlenow").alias("norm_title"))
            cid = entries["citing_id"][0]
            p = pl.concat([p, papers.filter(pl.col("paper_id") == cid)])
            e = entries.filter(pl.col("citing_id") == cid).head(2)
        rows = [
            {"id": r["paper_id"], "norm_title": r["norm_title"], "kept": True}
            for r in p.iter_rows(named=True)
        ]
        store.write_partition("papers", f"2021-05-0{day + 1}", papers_frame(rows))
        bib = [{**r, "ref_id": r["entry_id"]} for r in e.drop("d").iter_rows(named=True)]
        store.write_partition("bib_entries", f"2021-05-0{day + 1}", bib_frame(bib))
        summary = update_links(tmp_path)
        assert summary["mode"] == ("full" if day == 0 else "incremental")
        full = links_by_definition(tmp_path)
        assert read_links(store).equals(full), f"day {day}"
    assert full.height > 500 and set(full["via"].unique()) == {"arxiv_id", "title"}


def test_signatures_in_blocks_equal_one_block(real, monkeypatch):
    import corpus.graph.linking as lk

    titles = [normalize_title(t) for t in real["s2orc"] + real["tei"]]
    sets = lk._sets(titles, lk._vocab([titles]))
    whole = lk._signatures(sets)
    monkeypatch.setattr(lk, "_SIGNATURE_ROWS", 7)
    blocks = lk._signatures(sets)
    assert all(np.array_equal(a, b) for a, b in zip(whole, blocks, strict=True))
    assert int(np.count_nonzero(whole[0] | whole[1])) > len(titles) * 0.9


# ---------------------------------------------------------------------------
# the persisted entry index (corpus.graph.link_index)
# ---------------------------------------------------------------------------


def _all_pairs(query_titles, entry_titles, t):
    """Every (query, entry) with S > t, exhaustively from Python 3-gram sets."""
    q_sets = [trigrams(s) for s in query_titles]
    postings: dict[str, list[int]] = {}
    for k, s in enumerate(entry_titles):
        for g in trigrams(s):
            postings.setdefault(g, []).append(k)
    sizes = np.array([len(trigrams(s)) for s in entry_titles])
    out = set()
    for q, grams in enumerate(q_sets):
        inter = np.zeros(len(entry_titles), np.int64)
        for g in grams:
            inter[postings.get(g, [])] += 1
        score = score_from_counts(inter, len(grams), sizes)
        out |= {(q, int(e)) for e in np.flatnonzero(score > t)}
    return out


def test_gram_order_remembers_sets_that_stay_right_as_it_grows(real):
    """The sets a gram order keeps for the titles it was extended with (a new day's entries, looked
    up and then indexed) equal the sets computed afresh, after later extensions too."""
    from corpus.graph.link_index import GramOrder

    titles = [normalize_title(x) for x in real["s2orc"][:300]]
    order = GramOrder.freeze(titles[:100])
    assert GramOrder.freeze([]).extend(titles[:3]) > 0  # an empty order ranks every gram
    order.extend(titles[100:200])
    order.extend([*titles[200:], "zzqx qqzv wwjk"])  # grams never seen: ranked after the others
    assert set(titles[100:200]) <= set(order._memo)
    fresh = GramOrder(order.frozen, order.added, order.titles)  # the same order, nothing kept
    for batch in (titles[100:200], titles[150:300] + titles[150:160], titles[:50], ["zzqx qqzv wwjk"], []):
        got, want = order.sets(batch), fresh.sets(batch)
        assert np.array_equal(got.offsets, want.offsets) and np.array_equal(got.ranks, want.ranks)


def _indexed_and_query_titles(real, rng, unarxive: int, keep: int, s2orc: int, near: int):
    """Distinct real bibliography titles to index, and queries: other real titles and ``near``
    perturbed copies of indexed ones."""
    base = [normalize_title(x) for x in real["tei"] + real["unarxive"][:unarxive]]
    base = [x for x in dict.fromkeys(base) if len(x) >= 3][:keep]
    queries = [normalize_title(x) for x in real["s2orc"][:s2orc]]
    queries += [normalize_title(_perturb(base[int(i)], rng)) for i in rng.integers(0, len(base), near)]
    return base, queries


def _index_entries(titles: list[str], citers: int, with_ids: bool) -> pl.DataFrame:
    """Index entries of ``titles`` cited by ``citers`` papers, some with arXiv ids and DOIs."""
    n = len(titles)
    return pl.DataFrame(
        {
            "entry_id": [f"e{i:05d}" for i in range(n)],
            "citing_id": [f"2101.{i % citers:05d}" for i in range(n)],
            "arxiv_id": [f"2203.{i % 50:05d}" if with_ids and i % 7 == 0 else None for i in range(n)],
            "doi": [f"10.1/x{i % 30}" if with_ids and i % 5 == 0 else None for i in range(n)],
            "norm_title": titles,
        }
    )


def test_entry_index_finds_every_title_pair_and_id(real, tmp_path, monkeypatch):
    """Entries in several segments (some killed, then merged) under an order frozen from other
    titles (so many grams are added later): the index finds exactly the exhaustive pairs, in one
    block of queries or in many over threads (a full run's chunks)."""
    from corpus.graph import link_index
    from corpus.graph.link_index import TitleIndex

    base, queries = _indexed_and_query_titles(real, np.random.default_rng(11), 1500, 2500, 150, 250)
    entries = _index_entries(base, 400, with_ids=True)
    ix = TitleIndex(tmp_path / "index", None, 0.8)
    ix.refreeze([normalize_title(x) for x in real["s2orc"][150:400]])
    index = ix.entries
    for start in range(0, entries.height, 300):
        index.add(entries.slice(start, 300))
    index.kill_citing(pl.Series([f"2101.{i:05d}" for i in range(0, 400, 9)]))
    live = entries.filter(~pl.col("citing_id").is_in([f"2101.{i:05d}" for i in range(0, 400, 9)]))
    ix.extend_order(queries)

    def found(ix, workers=1):
        pairs = set()
        for i, q, r, _ in ix.match_titles(queries, workers):
            ids = ix.fields(i, r)["entry_id"].to_list()
            pairs |= {(int(a), b) for a, b in zip(q, ids, strict=True)}
        return pairs

    want = {(q, live["entry_id"][e]) for q, e in _all_pairs(queries, live["norm_title"].to_list(), 0.8)}
    assert len(want) > 100
    assert found(index) == want
    with monkeypatch.context() as m:
        m.setattr(link_index, "QUERY_BLOCK", 37)  # 7 blocks of queries, the last one short
        assert found(index, workers=3) == want
    index.compact()
    assert len(index.segments) < 9 and found(index) == want
    manifest = ix.manifest()
    reopened = TitleIndex(tmp_path / "index", manifest, 0.8).entries
    assert found(reopened) == want and reopened.live == live.height

    hits = reopened.match_arxiv(pl.Series(["2203.00007", "2203.00049", "9999.99999"]))
    got = {(int(q), e) for i, q, r in hits for q, e in zip(q, reopened.fields(i, r)["entry_id"], strict=True)}
    want_ax = {(k, e) for k, a in enumerate(["2203.00007", "2203.00049"]) for e in
               live.filter(pl.col("arxiv_id") == a)["entry_id"]}  # fmt: skip
    assert got == want_ax and got
    hits = reopened.match_doi(pl.Series(["10.1/x5", "10.1/x25", "10.1/x3"]))
    got = {(int(q), e) for i, q, r in hits for q, e in zip(q, reopened.fields(i, r)["entry_id"], strict=True)}
    want_doi = {(k, e) for k, d in enumerate(["10.1/x5", "10.1/x25", "10.1/x3"]) for e in
                live.filter(pl.col("doi") == d)["entry_id"]}  # fmt: skip
    assert got == want_doi and got
    # most entries leave: the mostly dead segment is rewritten alone, and still finds the rest
    gone = [f"2101.{i:05d}" for i in range(400) if i % 5]
    reopened.kill_citing(pl.Series(gone))
    reopened.compact()
    rest = live.filter(~pl.col("citing_id").is_in(gone))
    assert reopened.live == rest.height and all(len(s.dead) == 0 for _, s, _ in reopened.segments)
    want = {(q, rest["entry_id"][e]) for q, e in _all_pairs(queries, rest["norm_title"].to_list(), 0.8)}
    assert found(reopened) == want and want


def _mapped_kb(directory) -> int:
    """Resident kB of this process's mappings of files under ``directory`` (/proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                inside = len(head) > 5 and head[5].startswith(str(directory))
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")
def test_entry_index_lookups_release_each_segments_pages(real, tmp_path):
    """A lookup over every segment leaves none of the index's file pages mapped in the process:
    a new day's probes touch most postings pages of every segment, and at arXiv's size those
    mapped pages (the index's size, 7 GB at a million papers) were most of the run's RSS."""
    from corpus.graph.link_index import TitleIndex

    base = [x for x in dict.fromkeys(normalize_title(x) for x in real["s2orc"]) if len(x) >= 20]
    rng = np.random.default_rng(45)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    titles = [f"{base[i % len(base)]} {''.join(rng.choice(letters, 7))}" for i in range(40_000)]
    entries = _index_entries(titles, 5_000, with_ids=True)
    ix = TitleIndex(tmp_path / "index", None, 0.8)
    ix.refreeze(titles[:5_000])
    for start in (0, 20_000):
        ix.entries.add(entries.slice(start, 20_000))
    assert max(s.post_key.nbytes for _, s, _ in ix.entries.segments) > (1 << 20)  # memory-mapped
    queries = [titles[i] for i in range(0, 40_000, 40)] + [titles[7] + " revisited"]
    ix.extend_order(queries)
    assert _mapped_kb(tmp_path / "index") == 0
    hits = ix.entries.match_titles(queries)
    assert sum(len(q) for _, q, _, _ in hits) >= 1_000  # each query finds its own title at least
    assert _mapped_kb(tmp_path / "index") == 0
    found = ix.entries.match_arxiv(pl.Series(["2203.00007"]))
    assert sum(len(r) for _, _, r in found) > 0 and _mapped_kb(tmp_path / "index") == 0
    i, _, r, _ = hits[0]
    assert ix.entries.fields(i, r).height == len(r) and _mapped_kb(tmp_path / "index") == 0
    assert ix.entries.kill_citing(pl.Series(["2101.00003"])) == 8 and _mapped_kb(tmp_path / "index") == 0


def _numpy_candidates(seg, plan) -> set[int]:
    """The signature bounds of Segment.title_candidates written with numpy (its code before
    corpus._prefix): the pair codes q * n + r that pass both."""
    from corpus.graph.link_index import BASE
    from corpus.graph.linking import _EPS, _missing

    lo = np.searchsorted(seg.post_key, plan.starts)
    hi = np.searchsorted(seg.post_key, plan.stops, side="right")
    counts = np.maximum(hi - lo, 0)
    which = np.repeat(np.arange(len(lo)), counts)
    j = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)] or [np.zeros(0, np.int64)])
    q, y = plan.q_of[which], np.asarray(seg.post_key[j]) & np.int64(BASE - 1)
    xs, (q0, q1) = plan.sets.sizes[q], plan.sig
    need = plan.t * (2 * np.minimum(xs, y) + np.maximum(xs, y)) / (2.0 + plan.t) - _EPS
    keep = xs + y - np.bitwise_count(q0[q] ^ np.asarray(seg.post_sig[j])) > 2 * need
    q, j, y, xs, need = q[keep], j[keep], y[keep], xs[keep], need[keep]
    r = np.asarray(seg.post_row[j], dtype=np.int64)
    sig = np.asarray(seg.sig[r])
    ub_q = xs - _missing(q0[q], sig[:, 0]) - _missing(q1[q], sig[:, 1])
    ub_e = y - _missing(sig[:, 0], q0[q]) - _missing(sig[:, 1], q1[q])
    keep = np.minimum(ub_q, ub_e) > need
    return set((q[keep] * np.int64(seg.n) + r[keep]).tolist())


@pytest.mark.parametrize("t, eps", [(0.5, 0.0), (0.8, 0.0), (2 / 3, 0.0), (0.8, 1e-9)])
def test_prefix_join_loop_keeps_the_bounds_at_their_edges(t, eps):
    """corpus._prefix turns each bound into an integer once per set size: the pairs it keeps are
    those the double-precision tests keep, also where ``need`` or ``2 need`` is an exact integer
    (``eps`` 0, ``t`` 0.5: need = (2 min + max) / 5, its ties) and where a range's keys are unsorted."""
    from corpus._prefix import candidates

    rng = np.random.default_rng(23)
    n_items, n_post, mask, n_q = 300, 6000, 255, 3
    # items' signatures are a query's with 0-3 bits flipped: many postings sit near both bounds
    q0, q1 = (rng.integers(0, 2**63, n_q, dtype=np.int64).astype(np.uint64) for _ in range(2))

    def flipped(words: np.ndarray) -> np.ndarray:
        bits = np.uint64(1) << rng.integers(0, 64, (len(words), 3)).astype(np.uint64)
        return words ^ np.bitwise_xor.reduce(bits * rng.integers(0, 2, bits.shape).astype(np.uint64), axis=1)

    near = rng.integers(0, n_q, n_items)
    sig = np.stack([flipped(q0[near]), flipped(q1[near])], axis=1).reshape(-1)
    sizes = rng.integers(15, 31, n_items)  # close sizes: the size bound leaves many to the others
    post_row = rng.integers(0, n_items, n_post).astype(np.int32)
    post_key = ((rng.integers(0, 50, n_post) << 8) | sizes[post_row]).astype(np.int64)
    post_key[: n_post // 2] = np.sort(post_key[: n_post // 2])  # the first half sorted, as an index's
    post_sig = sig.reshape(-1, 2)[post_row, 0].copy()
    q_size = rng.integers(15, 31, n_q)
    lo = np.sort(rng.integers(0, n_post, 400))
    hi = np.minimum(lo + rng.integers(0, 200, 400), n_post)
    q_of = rng.integers(0, n_q, 400)
    got = np.frombuffer(
        candidates(post_key, post_sig, post_row, sig, lo, hi, q_of, q_size, q0, q1, t, eps, mask, n_items),
        dtype=np.int64,
    ).tolist()

    def popcount(v: int) -> int:
        return bin(v).count("1")

    want, s, ties = [], sig.reshape(-1, 2).tolist(), 0
    for a, b, q in zip(lo.tolist(), hi.tolist(), q_of.tolist(), strict=True):
        x, s0, s1 = int(q_size[q]), int(q0[q]), int(q1[q])
        for j in range(a, b):
            y, r = int(post_key[j]) & mask, int(post_row[j])
            need = t * float(2 * min(x, y) + max(x, y)) / (2.0 + t) - eps
            ties += need.is_integer() or (2 * need).is_integer()
            if not float(x + y - popcount(s0 ^ int(post_sig[j]))) > 2 * need:
                continue
            e0, e1 = s[r]
            ub_q = x - popcount(s0 & ~e0) - popcount(s1 & ~e1)
            ub_e = y - popcount(e0 & ~s0) - popcount(e1 & ~s1)
            if float(min(ub_q, ub_e)) > need:
                want.append(q * n_items + r)
    assert got == want and 100 < len(want) < sum((hi - lo).tolist()) / 2
    assert ties > 100 or (t, eps) != (0.5, 0.0)  # the tests compared at equality


@pytest.mark.parametrize("t", [0.5, 0.8, 0.95])
def test_prefix_join_loop_passes_the_pairs_the_numpy_bounds_pass(real, tmp_path, t):
    """corpus._prefix (C) keeps exactly the postings the numpy bounds keep, on real titles and
    near copies of them, with some items dead; and refuses arrays that do not fit together."""
    from corpus._prefix import candidates

    from corpus.graph.link_index import QueryPlan, TitleIndex

    base, queries = _indexed_and_query_titles(real, np.random.default_rng(5), 1200, 2000, 200, 300)
    entries = _index_entries(base, 300, with_ids=False)
    ix = TitleIndex(tmp_path / "index", None, t)
    ix.refreeze(base[::2])
    ix.entries.add(entries)
    ix.entries.kill_citing(pl.Series([f"2101.{i:05d}" for i in range(0, 300, 7)]))
    ix.extend_order(queries)
    plan = QueryPlan.of(ix.order.sets(queries), t)
    ((_, seg, _),) = ix.entries.segments
    q, r = seg.title_candidates(plan)
    want = _numpy_candidates(seg, plan)
    alive = {c for c in want if seg._alive(np.array([c % seg.n]))[0]}
    assert len(alive) > 50 and len(alive) < len(want)  # some dead items among them
    assert set((q * seg.n + r).tolist()) == alive
    with pytest.raises(ValueError, match="mismatched"):
        candidates(np.zeros(3, np.int64), np.zeros(2, np.uint64), np.zeros(3, np.int32), np.zeros(2, np.uint64),
                   np.zeros(1, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64), np.ones(1, np.int64),
                   np.zeros(1, np.uint64), np.zeros(1, np.uint64), t, 1e-9, 255, 1)  # fmt: skip
    with pytest.raises(ValueError, match="out of bounds"):
        candidates(
            np.zeros(2, np.int64),
            np.zeros(2, np.uint64),
            np.zeros(2, np.int32),
            np.zeros(2, np.uint64),
            np.zeros(1, np.int64),
            np.full(1, 3, np.int64),
            np.zeros(1, np.int64),
            np.ones(1, np.int64),
            np.zeros(1, np.uint64),
            np.zeros(1, np.uint64),
            t,
            1e-9,
            255,
            1,
        )  # a range past the postings
