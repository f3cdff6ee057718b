"""Title-linking benchmark: the fast prefix-filter linker against generated noisy titles.

Usage::

    python benchmarks/linking.py                 # 10k, 100k and 1M entries x titles
    python benchmarks/linking.py --sizes 10000 100000
    python benchmarks/linking.py TITLES.txt      # real titles, one per line, as the papers

Papers get generated titles (words drawn Zipf-like from wordfreq's English list,
a quarter with a subtitle); entries are, for 70 %, a noisy copy of a random
paper's title (case change, punctuation, 1-3 typos, truncation, dropped
subtitle, or unchanged) and otherwise an unrelated title.  For each size it
reports wall seconds and entries/s (the entry blocks run on 2 threads), the
linker's CPU seconds (the honest figure on a shared machine), the peak memory
right after linking and at the end, the share of entries linked and of noisy
copies linked to their source, and equality with the exhaustive scorer on a
sample (the sample's entries against *all* papers, so the check is exact for
those entries).

Realism of the generated titles (checked on the ~3,050 real titles of
../shared/data, S2ORC metadata samples and Grobid TEI bibliographies, self-joined
at equal size): they are *not* more repetitive than real ones — the prefix join
gives 13.1 candidates per title on generated titles and 18.6 on real ones — but
they are shorter (49 vs 66 normalised characters on average), and the join's
work grows with the title length, so expect a real corpus to cost more than a
generated one of the same size (1.4x the candidates at 3k titles; not measured
at 1M for lack of real titles).  Pass a file of real titles to measure on those.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import wordfreq
from _common import peak_mb, result, timer

from corpus.graph.linking import _codes, link_titles, link_titles_exhaustive, score_from_counts
from corpus.papers.normalize import normalize_titles

_PUNCT = list(",.:;!?-()'\"")


def _vocabulary() -> tuple[np.ndarray, np.ndarray]:
    words = np.array([w for w in wordfreq.top_n_list("en", 30000) if w.isalpha()], dtype=object)
    p = 1.0 / np.arange(1, len(words) + 1) ** 0.9
    return words, p / p.sum()


def generate_titles(n: int, rng: np.random.Generator) -> list[str]:
    """``n`` title-like strings of 3-16 words, a quarter with a ``: subtitle``."""
    words, p = _vocabulary()
    k = rng.integers(3, 17, size=n)
    idx = rng.choice(len(words), size=int(k.sum()), p=p)
    cap = rng.random(int(k.sum())) < 0.6
    toks = [w.capitalize() if c else w for w, c in zip(words[idx].tolist(), cap.tolist(), strict=True)]
    sub = rng.random(n) < 0.25
    cuts = rng.integers(2, 6, size=n)
    out, pos = [], 0
    for i in range(n):
        ki = int(k[i])
        ws = toks[pos : pos + ki]
        pos += ki
        if sub[i] and ki > cuts[i] + 1:
            c = int(cuts[i])
            out.append(" ".join(ws[:c]) + ": " + " ".join(ws[c:]))
        else:
            out.append(" ".join(ws))
    return out


def perturb(title: str, rng: np.random.Generator) -> str:
    """One kind of bibliography noise: case, punctuation, typos, truncation, dropped subtitle."""
    kind = rng.integers(0, 6)
    if kind == 0:
        return title.upper() if rng.random() < 0.5 else title.lower()
    if kind == 1:
        toks = title.split(" ")
        i = int(rng.integers(0, len(toks)))
        toks[i] = toks[i] + str(rng.choice(_PUNCT))
        return " ".join(toks).replace(":", " -") if rng.random() < 0.5 else " ".join(toks)
    if kind == 2:
        s = list(title)
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(0, len(s)))
            op = rng.integers(0, 3)
            if op == 0:
                s[i] = chr(ord("a") + int(rng.integers(0, 26)))
            elif op == 1 and len(s) > 5:
                del s[i]
            else:
                s.insert(i, chr(ord("a") + int(rng.integers(0, 26))))
        return "".join(s)
    if kind == 3:
        return title[: max(3, int(len(title) * rng.uniform(0.75, 0.95)))]
    if kind == 4 and ":" in title:
        return title.split(":", 1)[0]
    return title


def make_frames(n_entries: int, n_papers: int, seed: int = 0, titles: list[str] | None = None):
    """(entries, papers, source) where ``source[i]`` is the paper row entry i was copied from, or -1."""
    rng = np.random.default_rng(seed)
    p_titles = titles[:n_papers] if titles else generate_titles(n_papers, rng)
    n_papers = len(p_titles)
    copy = rng.random(n_entries) < 0.7
    src = np.where(copy, rng.integers(0, n_papers, size=n_entries), -1)
    fresh = iter(generate_titles(int((~copy).sum()), rng))
    e_titles = [perturb(p_titles[s], rng) if s >= 0 else next(fresh) for s in src.tolist()]
    papers = pl.DataFrame({"paper_id": [f"p{i:07d}" for i in range(n_papers)], "norm_title": p_titles})
    entries = pl.DataFrame(
        {
            "entry_id": [f"e{i:07d}" for i in range(n_entries)],
            "citing_id": [f"p{i:07d}" for i in rng.integers(0, n_papers, size=n_entries)],
            "norm_title": e_titles,
        }
    )
    norm = normalize_titles(pl.col("norm_title"))
    return entries.with_columns(norm), papers.with_columns(norm), src


def exhaustive_codes(sub: pl.DataFrame, papers: pl.DataFrame, t: float = 0.8) -> pl.DataFrame:
    """Every (sample entry, paper) overlap from an inverted index of all paper 3-gram codes,
    with no filter at all: per entry, the postings of each of its grams are counted per
    paper (``bincount`` over all papers).  For sizes where the pure-Python reference
    would not fit in memory; same self-citation rule, threshold and tie-break."""
    row, code = _codes(papers["norm_title"].to_list())
    frame = pl.DataFrame({"r": row, "code": code}).unique()  # distinct grams per paper
    frame = frame.sort("code")
    p_code, p_row = frame["code"].to_numpy(), frame["r"].to_numpy()
    p_size = np.bincount(p_row, minlength=papers.height)
    p_ids = papers["paper_id"]
    p_order = np.empty(papers.height, np.int64)
    p_order[p_ids.arg_sort().to_numpy()] = np.arange(papers.height)
    self_row = dict(zip(p_ids.to_list(), range(papers.height), strict=True))
    rows = []
    for eid, cid, title in sub.select("entry_id", "citing_id", "norm_title").iter_rows():
        _, e_code = _codes([title or ""])
        e_code = np.unique(e_code)
        if len(e_code) == 0:
            continue
        lo = np.searchsorted(p_code, e_code, side="left")
        hi = np.searchsorted(p_code, e_code, side="right")
        hits = np.concatenate([p_row[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
        inter = np.bincount(hits, minlength=papers.height)
        score = score_from_counts(inter, len(e_code), p_size)
        if cid in self_row:
            score[self_row[cid]] = 0.0
        ok = np.flatnonzero(score > t)
        if len(ok):
            best = ok[np.lexsort((p_order[ok], -score[ok]))[0]]
            rows.append((eid, p_ids[int(best)], float(score[best])))
    schema = {"entry_id": pl.String, "cited_id": pl.String, "score": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row").sort("entry_id")


def run(n: int, sample: int, titles: list[str] | None) -> dict:
    with timer() as gen_t:
        entries, papers, src = make_frames(n, n, titles=titles)
    cpu0 = time.process_time()
    with timer() as t:
        links = link_titles(entries, papers)
    cpu = time.process_time() - cpu0
    link_peak = peak_mb()  # before the exhaustive check, which has its own footprint
    print(
        f"n={n} link_s={t['s']:.4g} link_cpu_s={cpu:.4g} link_peak_mb={link_peak:.0f} (checking...)",
        flush=True,
    )
    # exactness on a sample of entries against all papers
    rng = np.random.default_rng(1)
    pick = np.sort(rng.choice(entries.height, size=min(sample, entries.height), replace=False))
    sub = entries[pick]
    with timer() as ex_t:
        ref = link_titles_exhaustive(sub, papers) if n <= 200_000 else exhaustive_codes(sub, papers)
    fast_sub = links.join(sub.select("entry_id"), on="entry_id", how="semi")
    equal = fast_sub.equals(ref)
    linked_src = links.join(
        pl.DataFrame({"entry_id": entries["entry_id"], "src": src}).filter(pl.col("src") >= 0),
        on="entry_id",
    )
    recall = linked_src.filter(
        pl.col("cited_id") == pl.format("p{}", pl.col("src").cast(pl.String).str.zfill(7))
    ).height / max(int((src >= 0).sum()), 1)
    out = {
        "n": n,
        "gen_s": gen_t["s"],
        "link_s": t["s"],
        "link_cpu_s": cpu,
        "entries_per_s": n / t["s"],
        "linked": links.height / n,
        "copy_recall": recall,
        "sample": len(pick),
        "exhaustive_s": ex_t["s"],
        "equal": equal,
        "link_peak_mb": link_peak,
        "peak_mb": peak_mb(),
    }
    print(
        " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in out.items()), flush=True
    )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="*", type=Path, help="text files of real titles, one per line")
    ap.add_argument("--sizes", nargs="*", type=int, default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--sample", type=int, default=500, help="entries checked against the exhaustive scorer")
    args = ap.parse_args(argv)
    titles = None
    if args.inputs:
        titles = [
            ln.strip() for p in args.inputs for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()
        ]
        args.sizes = [len(titles)]
    runs = [run(n, args.sample, titles) for n in args.sizes]
    last = runs[-1]
    result(
        **{f"entries_per_s_{r['n']}": round(r["entries_per_s"]) for r in runs},
        **{f"link_s_{r['n']}": r["link_s"] for r in runs},
        **{f"link_cpu_s_{r['n']}": r["link_cpu_s"] for r in runs},
        link_peak_mb=round(max(r["link_peak_mb"] for r in runs)),
        peak_mb=round(peak_mb()),
        equal_sample=int(all(r["equal"] for r in runs)),
        copy_recall=last["copy_recall"],
    )
    if not all(r["equal"] for r in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
