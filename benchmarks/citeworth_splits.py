"""CiteWorth release at scale: paragraphs/s and papers/s per CPU second, peak memory, and the
cost of one new day against a full build.

    python benchmarks/citeworth_splits.py [CORPUS_HOME] [--papers N | --papers-per-day P] [--days D]
                                          [--kept K] [--rejected R] [--sentences S] [--cite-share C]
                                          [--repeat P] [--new-day] [--per-field N] [--seed X]
                                          [--workdir DIR] [--keep] [--no-audit]

Without CORPUS_HOME, ``--papers`` papers are spread over ``--days`` daily
``citeworth_paragraphs`` and ``citeworth_candidates`` partitions of a temporary
CORPUS_HOME (default: a day per 1,000 papers, about arXiv's daily volume), written as
``citeworth_day`` writes them: :class:`corpus.release.citeworth.ParagraphResult` /
:class:`~corpus.release.citeworth.Sample` objects -> ``_paragraph_row`` -> ``_frame`` with
``PARAGRAPH_SCHEMA`` / ``CANDIDATE_SCHEMA`` -> ``Store.write_partition``. A candidate paper
has ~``--kept`` kept paragraphs of ~``--sentences`` sentences (each cite-worthy with
probability ``--cite-share``: ``[n]`` or ``(Name et al., year)`` at the end, removed in
the sample text as the extractor does) and ~``--rejected`` rejected paragraphs (text and
a reason, no samples); a share of papers are no candidate (dropped, no text) and have
no paragraph. Fields follow arXiv's skew (Physics, Mathematics and Computer Science
~90 %). A ``--repeat`` share of papers is delivered again on a later day with new
paragraphs (a new version: the release must keep only the latest day's). Sentences are
slices of one pool of Zipf-sampled words, so texts are distinct for the compressor.

``build_release`` (what the ``citeworth_splits`` asset calls) runs on the generated days: a
full build. With ``--new-day``, one more day is written (``--days``' average of new papers plus
a ``--new-day-repeat`` share of that many earlier papers delivered again) and
``build_release`` runs again: the incremental run. Generation and each release run in their own
child process, so each one's CPU seconds and peak RSS (VmHWM) are its own; ``audit_release``
(the asset check) runs in this process after the full build. With ``--workdir`` the data goes
there and is removed afterwards (unless ``--keep``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path

import polars as pl
from _common import cpu_timer, hwm_mb, in_child, result, timer

from corpus.release import citeworth as cw
from corpus.release import citeworth_release
from corpus.store import Store

FIRST_DAY = dt.date(2023, 2, 1)
#: Rough share of arXiv papers per CiteWorth field (corpus.papers.fields mapping of primary categories).
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


def _population(args: argparse.Namespace, extra: int = 0) -> tuple[list[str], list[str]]:
    """Ids and fields of the generated papers (and ``extra`` more, for the new day)."""
    import numpy as np

    n = args.papers + extra
    rng = np.random.default_rng(args.seed)
    shares = np.array(list(FIELD_SHARES.values())) / sum(FIELD_SHARES.values())
    fields = rng.choice(list(FIELD_SHARES), size=n, p=shares).tolist()
    ids = [f"{23 + (i // 90_000) // 12:02d}{1 + (i // 90_000) % 12:02d}.{i % 90_000:05d}" for i in range(n)]
    return ids, fields


def _write_day(store: Store, day: str, todo: list[int], ids, fields, args, pool, rnd, totals: dict) -> None:
    frames, rows, cands = [], [], []
    for i in sorted(todo):
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


def generate(home: str, args: argparse.Namespace) -> dict:
    """Write the daily partitions; returns counts, bytes, CPU seconds and peak RSS of this process."""
    import random

    import numpy as np

    with cpu_timer() as cpu, timer() as wall:
        rnd = random.Random(args.seed)
        rng = np.random.default_rng(args.seed + 7)
        pool = WordPool(4_000_000, args.seed)
        n, days = args.papers, args.days
        ids, fields = _population(args)
        primary = np.arange(n) * days // n  # papers in id order over the days
        again = np.full(n, -1)
        repeat = (rng.random(n) < args.repeat) & (primary < days - 1)
        again[repeat] = primary[repeat] + 1 + (rng.random(repeat.sum()) * (days - 1 - primary[repeat]))
        store = Store(Path(home))
        totals = {"paragraph_rows": 0, "kept_rows": 0, "candidates": 0}
        for d in range(days):
            day = (FIRST_DAY + dt.timedelta(days=d)).isoformat()
            todo = np.concatenate([np.flatnonzero(primary == d), np.flatnonzero(again == d)]).tolist()
            _write_day(store, day, todo, ids, fields, args, pool, rnd, totals)
    size = sum(
        p.stat().st_size for a in (cw.PARAGRAPHS, cw.CANDIDATES) for p in Path(home, a).rglob("*.parquet")
    )
    return {**totals, "repeats": int(repeat.sum()), "bytes": size, "cpu_s": cpu["s"], "wall_s": wall["s"],
            "peak_mb": hwm_mb()}  # fmt: skip


def new_day(home: str, args: argparse.Namespace) -> dict:
    """One more day: ``papers / days`` new papers and re-delivered earlier ones."""
    import random

    import numpy as np

    rnd = random.Random(args.seed + 1)
    rng = np.random.default_rng(args.seed + 1)
    per_day = max(1, args.papers // args.days)
    ids, fields = _population(args, per_day)
    again = rng.choice(args.papers, size=max(1, round(per_day * args.new_day_repeat)), replace=False).tolist()
    day = (FIRST_DAY + dt.timedelta(days=args.days)).isoformat()
    totals = {"paragraph_rows": 0, "kept_rows": 0, "candidates": 0}
    todo = [*range(args.papers, args.papers + per_day), *again]
    _write_day(
        Store(Path(home)), day, todo, ids, fields, args, WordPool(4_000_000, args.seed + 1), rnd, totals
    )
    return {"day": day, "new": per_day, "again": len(again), **totals}


def _new_day_child(home: str, args: argparse.Namespace, out) -> None:
    out.put(new_day(home, args))


def _release_child(home: str, args: argparse.Namespace, out) -> None:
    start = time.process_time()
    with timer() as wall:
        summary = citeworth_release.build_release(home, seed=args.seed, per_field=args.per_field)
    out.put(
        {"summary": summary, "cpu_s": time.process_time() - start, "wall_s": wall["s"], "peak_mb": hwm_mb()}
    )


def _generate_child(home: str, args: argparse.Namespace, out) -> None:
    out.put(generate(home, args))


def release(home: Path, args: argparse.Namespace, label: str) -> dict:
    run = in_child(_release_child, str(home), args)
    summary, cpu = run["summary"], run["cpu_s"]
    out = cw.release_dir(home)
    jsonl_mb = sum((out / f"{s}.jsonl").stat().st_size for s in cw.SPLIT_NAMES) / 2**20
    avail, paras, papers = summary["available_paragraphs"], summary["paragraphs"], summary["papers"]
    if label == "full":
        print(f"  cap {summary['per_field_cap']:,}/field; released per field: "
              + ", ".join(f"{f} {n:,}" for f, n in summary["released_per_field"].items()))  # fmt: skip
        print(f"  splits {summary['paragraphs_per_split']}, {summary['stats']['total_sentences']:,} sentences, "
              f"cite-worthy {summary['stats']['cite_worthy_share']:.3f}, JSONL {jsonl_mb:,.0f} MB")  # fmt: skip
    print(f"build_release ({label}, mode {summary['mode']}, cap {summary['per_field_cap']:,}, "
          f"{summary['files_written']} split files written): {avail:,} kept paragraphs in, {paras:,} paragraphs "
          f"of {papers:,} papers out, {cpu:.2f} CPU s / {run['wall_s']:.2f} wall s = {avail / cpu:,.0f} kept "
          f"paragraphs/CPU-s; peak RSS {run['peak_mb']:,.0f} MB")  # fmt: skip
    return {"summary": summary, "cpu_s": cpu, "wall_s": run["wall_s"], "peak_mb": run["peak_mb"],
            "jsonl_mb": jsonl_mb}  # fmt: skip


def audit(home: Path) -> dict:
    with cpu_timer() as acpu, timer() as awall:
        a = cw.audit_release(cw.release_dir(home))
    print(f"audit_release: {a['sentences']:,} sentences in {acpu['s']:.1f} CPU s / {awall['s']:.1f} wall s "
          f"= {a['sentences'] / max(acpu['s'], 1e-9):,.0f} sentences/CPU-s, leftover rate {a['rate']:.4f}")  # fmt: skip
    return {"cpu_s": acpu["s"], "wall_s": awall["s"], "sentences": a["sentences"], "rate": a["rate"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "home", nargs="?", type=Path, help="a CORPUS_HOME with citeworth partitions (no generation)"
    )
    ap.add_argument("--papers", type=int, default=50_000)
    ap.add_argument("--papers-per-day", type=int, help="papers = this x --days (overrides --papers)")
    ap.add_argument("--days", type=int, help="daily partitions (default: one per 1,000 papers)")
    ap.add_argument("--kept", type=float, default=10.0, help="mean kept paragraphs of a candidate paper")
    ap.add_argument(
        "--rejected", type=float, default=20.0, help="mean rejected paragraphs of a candidate paper"
    )
    ap.add_argument("--sentences", type=float, default=5.0, help="mean sentences of a paragraph")
    ap.add_argument("--cite-share", type=float, default=0.18, help="share of cite-worthy sentences")
    ap.add_argument("--non-candidates", type=float, default=0.1, help="share of papers without paragraphs")
    ap.add_argument("--repeat", type=float, default=0.1, help="share of papers delivered again later")
    ap.add_argument("--new-day", action="store_true", help="then one new day, released incrementally")
    ap.add_argument("--new-day-repeat", type=float, default=0.05,
                    help="earlier papers the new day delivers again, as a share of its new papers")  # fmt: skip
    ap.add_argument("--per-field", type=int, help="fixed per-field cap (default: the median of the fields)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", type=Path, help="where to generate (removed afterwards unless --keep)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-audit", action="store_true", help="skip audit_release")
    args = ap.parse_args()
    if args.papers_per_day and args.days:
        args.papers = args.papers_per_day * args.days
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
            gen = in_child(_generate_child, str(home), args)
            print(f"generate: {args.papers:,} papers ({gen['repeats']:,} delivered again) over {args.days} days: "
                  f"{gen['paragraph_rows']:,} paragraph rows ({gen['kept_rows']:,} kept), "
                  f"{gen['bytes'] / 2**20:,.0f} MB of Parquet in {gen['cpu_s']:.1f} CPU s / {gen['wall_s']:.1f} "
                  f"wall s, peak RSS {gen['peak_mb']:,.0f} MB")  # fmt: skip
        rel = release(home, args, "full")
        aud = {"cpu_s": 0.0, "wall_s": 0.0, "sentences": 0, "rate": 0.0} if args.no_audit else audit(home)
        values = {}
        if args.new_day:
            if args.home is not None:
                ap.error("--new-day needs generated data (no CORPUS_HOME)")
            day = in_child(_new_day_child, str(home), args)
            print(f"new day {day['day']}: {day['new']:,} new papers, {day['again']:,} delivered again, "
                  f"{day['kept_rows']:,} kept paragraphs")  # fmt: skip
            inc = release(home, args, "new day")
            values = {"new_day_papers": day["new"], "new_day_again": day["again"], "new_day_cpu_s": inc["cpu_s"],
                      "new_day_peak_mb": inc["peak_mb"], "new_day_share": inc["cpu_s"] / rel["cpu_s"]}  # fmt: skip
            print(f"one new day: {inc['cpu_s']:.2f} CPU s = {100 * inc['cpu_s'] / rel['cpu_s']:.1f} % of the full "
                  f"build's {rel['cpu_s']:.2f} CPU s; peak RSS {inc['peak_mb']:,.0f} MB (full: "
                  f"{rel['peak_mb']:,.0f} MB)")  # fmt: skip
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
            papers_per_cpu_s=(args.papers if gen else papers) / rel["cpu_s"],
            jsonl_mb=rel["jsonl_mb"],
            release_peak_mb=rel["peak_mb"],
            audit_cpu_s=aud["cpu_s"],
            audit_sentences_per_cpu_s=aud["sentences"] / max(aud["cpu_s"], 1e-9),
            leftover_rate=aud["rate"],
            peak_mb=rel["peak_mb"],
            **values,
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
        elif args.home is None and not args.keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
