"""CiteWorth release at scale: paragraphs/s and papers/s (CPU and wall) and peak memory.

    python benchmarks/citeworth_splits.py [CORPUS_HOME] [--papers N] [--days D] [--workdir DIR]
                                          [--kept K] [--rejected R] [--sentences S] [--cite-share C]
                                          [--repeat P] [--seed X] [--keep] [--no-audit]

Without CORPUS_HOME, ``--papers`` papers are spread over ``--days`` daily
``citeworth_paragraphs`` and ``citeworth_candidates`` partitions of a temporary
CORPUS_HOME (default: a day per 1,000 papers, about arXiv's daily volume), written as
``citeworth_day`` writes them: :class:`corpus.citeworth.ParagraphResult` /
:class:`~corpus.citeworth.Sample` objects -> ``_paragraph_row`` -> ``_frame`` with
``PARAGRAPH_SCHEMA`` / ``CANDIDATE_SCHEMA`` -> ``Store.write_partition``. A candidate paper
has ~``--kept`` kept paragraphs of ~``--sentences`` sentences (each cite-worthy with
probability ``--cite-share``: ``[n]`` or ``(Name et al., year)`` at the end, removed in
the sample text as the extractor does) and ~``--rejected`` rejected paragraphs (text and
a reason, no samples); a share of papers are no candidate (dropped, no text) and have
no paragraph. Fields follow arXiv's skew (Physics, Mathematics and Computer Science
~90 %). A ``--repeat`` share of papers is delivered again on a later day with new
paragraphs (a new version: the release must keep only the latest day's). Sentences are
slices of one pool of Zipf-sampled words, so texts are distinct for the compressor.

Generation runs in a child process (its CPU time and peak RSS are reported apart);
then ``build_release`` (what the ``citeworth_splits`` asset calls) and ``audit_release``
(its asset check) run in this process, so the peak RSS is the release's. With
``--workdir`` the data goes there and is removed afterwards (unless ``--keep``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing as mp
import shutil
import tempfile
import threading
import time
from pathlib import Path

import polars as pl
from _common import cpu_timer, peak_mb, result, timer

from corpus import citeworth as cw
from corpus.store import Store

FIRST_DAY = dt.date(2023, 2, 1)
#: Rough share of arXiv papers per CiteWorth field (corpus.fields mapping of primary categories).
FIELD_SHARES: dict[str, float] = {
    "Physics": 0.45,
    "Mathematics": 0.22,
    "Computer Science": 0.22,
    "Engineering": 0.03,
    "Materials Science": 0.025,
    "Biology": 0.02,
    "Economics": 0.02,
    "Chemistry": 0.01,
    "Medicine": 0.003,
    "Psychology": 0.002,
}
SURNAMES = ("Smith", "Zhang", "Müller", "García", "Kowalski", "Nakamura", "Okafor", "Ivanova", "Rossi", "Li")


class WordPool:
    """One long string of Zipf-sampled lower-case words; a sentence is a slice of it."""

    def __init__(self, words: int, seed: int) -> None:
        import numpy as np

        rng = np.random.default_rng(seed)
        letters = np.array(list("etaoinshrdlcumwfgypbvkjxqz"))
        freq = np.array([12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.4,
                         2.2, 2.0, 2.0, 1.9, 1.5, 1.0, 0.8, 0.2, 0.2, 0.1, 0.1])  # fmt: skip
        vocab_size = 30_000
        lengths = np.clip(rng.poisson(6, vocab_size), 3, 16)  # >= 3 letters: no accidental "of." ending
        chars = rng.choice(letters, size=int(lengths.sum()), p=freq / freq.sum())
        vocab = ["".join(w) for w in np.split(chars, np.cumsum(lengths)[:-1])]
        for i in range(0, vocab_size, 53):  # ~2 % non-ASCII words (JSON escaping, UTF-8 widths)
            vocab[i] += "éα"[i % 2]
        zipf = 1.0 / (np.arange(vocab_size) + 2.7)
        idx = rng.choice(vocab_size, size=words, p=zipf / zipf.sum())
        pieces = [vocab[i] for i in idx.tolist()]
        word_len = np.array([len(w) for w in vocab])[idx] + 1
        self.starts = np.concatenate([[0], np.cumsum(word_len)])[:-1].tolist()
        self.text = " ".join(pieces) + " "
        self.words = words

    def sentence(self, rng_int, n: int) -> str:
        """``n`` words from a random place, capitalised, without the final mark."""
        k = rng_int(0, self.words - n - 1)
        s = self.text[self.starts[k] : self.starts[k + n] - 1]
        return s[0].upper() + s[1:]


def _paper(pid: str, fld: str, args, pool: WordPool, rnd) -> tuple[list[dict], dict]:
    """(paragraph rows, candidate row) of one paper, as ``citeworth_day`` builds them."""
    cand = {"paper_id": pid, "field": fld, "parse_source": "grobid" if rnd.random() < 0.6 else "latex"}
    cand.update(paragraphs=0, kept_paragraphs=0, sentences=0, cite_worthy=0)
    u = rnd.random()
    if u < args.non_candidates:  # dropped by the papers filters, or no full text
        cand.update(reason=cw.P_DROPPED if u < args.non_candidates / 2 else cw.P_NO_TEXT, detail="generated")
        return [], cand
    n_kept = max(1, round(rnd.gauss(args.kept, args.kept / 3)))
    n_rej = max(0, round(rnd.gauss(args.rejected, args.rejected / 3)))
    kinds = [True] * n_kept + [False] * n_rej
    rnd.shuffle(kinds)
    rows = []
    section = rnd.choice(cw.PERMISSIBLE_SECTION_TITLES)
    for idx, kept in enumerate(kinds):
        if rnd.random() < 0.15:
            section = rnd.choice(cw.PERMISSIBLE_SECTION_TITLES)
        res = cw.ParagraphResult(pid, idx, section.title(), fld, "", kept=kept)
        n_sent = max(1, min(15, round(rnd.gauss(args.sentences, 1.8))))
        originals = []
        for _ in range(n_sent):
            text = pool.sentence(rnd.randint, max(4, round(rnd.gauss(21, 7))))
            if kept and rnd.random() < args.cite_share:
                if rnd.random() < 0.6:
                    ref = rnd.randint(1, 60)
                    cite, refs = f"[{ref}]", [f"BIBREF{ref - 1}"]
                else:
                    cite = f"({rnd.choice(SURNAMES)} et al., {rnd.randint(1990, 2023)})"
                    refs = [f"BIBREF{rnd.randint(0, 59)}"]
                original = f"{text} {cite}."
                res.samples.append(cw.Sample(text + ".", cw.LABEL_CITE_WORTHY, original, [refs], [cite]))
            else:
                original = text + "."
                if kept:
                    res.samples.append(cw.Sample(original, cw.LABEL_NOT_CITE_WORTHY, original))
            originals.append(original)
        res.original_text = " ".join(originals)
        if not kept:
            res.reason = rnd.choice(cw.REASONS[1:-2])
            res.detail = f"sentence {rnd.randint(0, n_sent - 1)}: {originals[-1][-60:]!r}"
        rows.append(cw._paragraph_row(res))
    kept_rows = [r for r in rows if r["kept"]]
    cand.update(
        reason=None,
        paragraphs=len(rows),
        kept_paragraphs=len(kept_rows),
        sentences=sum(r["n_sentences"] for r in kept_rows),
        cite_worthy=sum(r["n_cite_worthy"] for r in kept_rows),
    )
    return rows, cand


def generate(home: str, args: argparse.Namespace) -> dict:
    """Write the daily partitions; returns counts, bytes, CPU seconds and peak RSS of this process."""
    import random

    import numpy as np

    with cpu_timer() as cpu, timer() as wall:
        rnd = random.Random(args.seed)
        rng = np.random.default_rng(args.seed)
        pool = WordPool(4_000_000, args.seed)
        n, days = args.papers, args.days
        fields = rng.choice(
            list(FIELD_SHARES), size=n, p=np.array(list(FIELD_SHARES.values())) / sum(FIELD_SHARES.values())
        ).tolist()
        primary = np.arange(n) * days // n  # papers in id order over the days
        again = np.full(n, -1)
        repeat = (rng.random(n) < args.repeat) & (primary < days - 1)
        again[repeat] = primary[repeat] + 1 + (rng.random(repeat.sum()) * (days - 1 - primary[repeat]))
        ids = [
            f"{23 + (i // 90_000) // 12:02d}{1 + (i // 90_000) % 12:02d}.{i % 90_000:05d}" for i in range(n)
        ]
        store = Store(Path(home))
        totals = {"paragraph_rows": 0, "kept_rows": 0, "candidates": 0}
        for d in range(days):
            day = (FIRST_DAY + dt.timedelta(days=d)).isoformat()
            todo = np.concatenate([np.flatnonzero(primary == d), np.flatnonzero(again == d)])
            frames, rows, cands = [], [], []
            for i in sorted(todo.tolist()):
                mine, cand = _paper(ids[i], fields[i], args, pool, rnd)
                rows.extend(mine)
                cands.append(cand)
                totals["kept_rows"] += cand["kept_paragraphs"]
                if len(rows) >= 4096:
                    frames.append(cw._frame(rows, cw.PARAGRAPH_SCHEMA))
                    totals["paragraph_rows"] += len(rows)
                    rows = []
            frames.append(cw._frame(rows, cw.PARAGRAPH_SCHEMA))
            totals["paragraph_rows"] += len(rows)
            totals["candidates"] += len(cands)
            store.write_partition(cw.PARAGRAPHS, day, pl.concat(frames, how="vertical"))
            store.write_partition(cw.CANDIDATES, day, cw._frame(cands, cw.CANDIDATE_SCHEMA))
    size = sum(
        p.stat().st_size for a in (cw.PARAGRAPHS, cw.CANDIDATES) for p in Path(home, a).rglob("*.parquet")
    )
    return {**totals, "repeats": int(repeat.sum()), "bytes": size, "cpu_s": cpu["s"], "wall_s": wall["s"],
            "peak_mb": peak_mb()}  # fmt: skip


def _generate_child(home: str, args: argparse.Namespace, out) -> None:
    out.put(generate(home, args))


class RssTrace:
    """Samples VmRSS every ``every`` seconds, to see *when* the peak happens."""

    def __init__(self, every: float = 1.0) -> None:
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        start = time.perf_counter()
        while not self._stop.wait(self._every):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    self.samples.append((time.perf_counter() - start, int(line.split()[1]) / 1024))

    def __enter__(self) -> RssTrace:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def release(home: Path, args: argparse.Namespace) -> dict:
    base_mb = peak_mb()
    with RssTrace(args.trace_every) as trace, cpu_timer() as cpu, timer() as wall:
        summary = cw.build_release(home, seed=args.seed, per_field=args.per_field)
    rel_peak = peak_mb()
    out = cw.release_dir(home)
    jsonl_mb = sum((out / f"{s}.jsonl").stat().st_size for s in cw.SPLIT_NAMES) / 2**20
    avail, paras, papers = summary["available_paragraphs"], summary["paragraphs"], summary["papers"]
    print(f"  cap {summary['per_field_cap']:,}/field; released per field: "
          + ", ".join(f"{f} {n:,}" for f, n in summary["released_per_field"].items()))  # fmt: skip
    print(f"  splits {summary['paragraphs_per_split']}, {summary['stats']['total_sentences']:,} sentences, "
          f"cite-worthy {summary['stats']['cite_worthy_share']:.3f}, JSONL {jsonl_mb:,.0f} MB")  # fmt: skip
    if trace.samples:
        step = max(1, len(trace.samples) // 20)
        print("  RSS MB over time: " + " ".join(f"{t:.0f}s:{m:.0f}" for t, m in trace.samples[::step]))
    print(f"build_release: {avail:,} kept paragraphs in, {paras:,} paragraphs of {papers:,} papers out, "
          f"{cpu['s']:.1f} CPU s / {wall['s']:.1f} wall s = {avail / cpu['s']:,.0f} kept paragraphs/CPU-s; "
          f"peak RSS {rel_peak:,.0f} MB (before: {base_mb:,.0f} MB)")  # fmt: skip
    audit = {"cpu_s": 0.0, "wall_s": 0.0, "sentences": 0, "rate": 0.0}
    if not args.no_audit:
        with cpu_timer() as acpu, timer() as awall:
            a = cw.audit_release(out)
        audit = {"cpu_s": acpu["s"], "wall_s": awall["s"], "sentences": a["sentences"], "rate": a["rate"]}
        print(f"audit_release: {a['sentences']:,} sentences in {acpu['s']:.1f} CPU s / {awall['s']:.1f} wall s "
              f"= {a['sentences'] / max(acpu['s'], 1e-9):,.0f} sentences/CPU-s, leftover rate {a['rate']:.4f}; "
              f"peak RSS {peak_mb():,.0f} MB")  # fmt: skip
    return {"summary": summary, "cpu_s": cpu["s"], "wall_s": wall["s"], "peak_mb": rel_peak,
            "jsonl_mb": jsonl_mb, "audit": audit}  # fmt: skip


def new_day(home: Path, args: argparse.Namespace) -> dict:
    """One more day: ``papers/days`` new papers and a ``--repeat`` share of that many papers of the
    last two weeks delivered again; then the release again (incremental)."""
    import random

    rnd = random.Random(args.seed + 1)
    store = Store(home)
    days = store.partitions(cw.PARAGRAPHS)
    day = (dt.date.fromisoformat(days[-1]) + dt.timedelta(days=1)).isoformat()
    pool = WordPool(1_000_000, args.seed + 1)
    per_day = max(1, args.papers // args.days)
    recent = pl.concat(
        [store.read_partition(cw.CANDIDATES, d).select("paper_id", "field") for d in days[-14:]]
    )
    again = recent.sample(min(recent.height, int(per_day * args.repeat) + 1), seed=1).rows()
    fresh = [(f"2999.{i:05d}", rnd.choice(list(FIELD_SHARES))) for i in range(per_day)]
    rows, cands = [], []
    for pid, fld in sorted(fresh + again):
        mine, cand = _paper(pid, fld, args, pool, rnd)
        rows.extend(mine)
        cands.append(cand)
    store.write_partition(cw.PARAGRAPHS, day, cw._frame(rows, cw.PARAGRAPH_SCHEMA))
    store.write_partition(cw.CANDIDATES, day, cw._frame(cands, cw.CANDIDATE_SCHEMA))
    with cpu_timer() as cpu, timer() as wall:
        summary = cw.build_release(home, seed=args.seed, per_field=args.per_field)
    print(
        f"new day {day}: {per_day:,} new papers + {len(again):,} re-delivered: {summary['mode']}, "
        f"{summary['splits_rewritten']} split file(s) merged in {cpu['s']:.1f} CPU s / {wall['s']:.1f} wall s"
    )
    return {"cpu_s": cpu["s"], "wall_s": wall["s"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "home", nargs="?", type=Path, help="a CORPUS_HOME with citeworth partitions (no generation)"
    )
    ap.add_argument("--papers", type=int, default=50_000)
    ap.add_argument("--days", type=int, help="daily partitions (default: one per 1,000 papers)")
    ap.add_argument("--kept", type=float, default=10.0, help="mean kept paragraphs of a candidate paper")
    ap.add_argument(
        "--rejected", type=float, default=20.0, help="mean rejected paragraphs of a candidate paper"
    )
    ap.add_argument("--sentences", type=float, default=5.0, help="mean sentences of a paragraph")
    ap.add_argument("--cite-share", type=float, default=0.18, help="share of cite-worthy sentences")
    ap.add_argument("--non-candidates", type=float, default=0.1, help="share of papers without paragraphs")
    ap.add_argument("--repeat", type=float, default=0.1, help="share of papers delivered again later")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-field", type=int, help="a fixed per-field cap (default: the median of the fields)")
    ap.add_argument("--workdir", type=Path, help="where to generate (removed afterwards unless --keep)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-audit", action="store_true", help="skip audit_release")
    ap.add_argument("--trace-every", type=float, default=2.0, help="RSS sampling period, seconds")
    args = ap.parse_args()
    args.days = args.days or max(1, args.papers // 1000)

    tmp = None
    if args.home is not None:
        home, gen = args.home, None
    elif args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        home = Path(tempfile.mkdtemp(dir=args.workdir, prefix="citeworth-splits-"))
    else:
        tmp = tempfile.TemporaryDirectory(prefix="citeworth-splits-")
        home = Path(tmp.name)
    try:
        if args.home is None:
            ctx = mp.get_context("spawn")  # a fresh process: its peak RSS is the generation's alone
            q = ctx.Queue()
            child = ctx.Process(target=_generate_child, args=(str(home), args, q))
            child.start()
            gen = q.get()
            child.join()
            print(f"generate: {args.papers:,} papers ({gen['repeats']:,} delivered again) over {args.days} days: "
                  f"{gen['paragraph_rows']:,} paragraph rows ({gen['kept_rows']:,} kept), "
                  f"{gen['bytes'] / 2**20:,.0f} MB of Parquet in {gen['cpu_s']:.1f} CPU s / {gen['wall_s']:.1f} "
                  f"wall s, peak RSS {gen['peak_mb']:,.0f} MB")  # fmt: skip
        rel = release(home, args)
        inc = new_day(home, args)
        s = rel["summary"]
        avail, paras, papers = s["available_paragraphs"], s["paragraphs"], s["papers"]
        result(
            papers=args.papers if gen else 0,
            days=args.days if gen else 0,
            gen_rows=gen["paragraph_rows"] if gen else 0,
            gen_cpu_s=gen["cpu_s"] if gen else 0.0,
            gen_peak_mb=gen["peak_mb"] if gen else 0.0,
            input_mb=gen["bytes"] / 2**20 if gen else 0.0,
            kept_paragraphs=avail,
            released=paras,
            released_papers=papers,
            release_cpu_s=rel["cpu_s"],
            release_wall_s=rel["wall_s"],
            paragraphs_per_cpu_s=avail / rel["cpu_s"],
            paragraphs_per_wall_s=avail / rel["wall_s"],
            papers_per_cpu_s=(args.papers if gen else papers) / rel["cpu_s"],
            papers_per_wall_s=(args.papers if gen else papers) / rel["wall_s"],
            jsonl_mb=rel["jsonl_mb"],
            release_peak_mb=rel["peak_mb"],
            audit_cpu_s=rel["audit"]["cpu_s"],
            audit_sentences_per_cpu_s=rel["audit"]["sentences"] / max(rel["audit"]["cpu_s"], 1e-9),
            leftover_rate=rel["audit"]["rate"],
            new_day_cpu_s=inc["cpu_s"],
            new_day_share=inc["cpu_s"] / rel["cpu_s"],
            peak_mb=peak_mb(),
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
        elif args.home is None and not args.keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
