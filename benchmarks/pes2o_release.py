"""peS2o release writer at scale: documents/s per core, MB/s of JSONL, peak memory, and the
cost of one new day against a full build.

    python benchmarks/pes2o_release.py [CORPUS_HOME] [--papers N | --papers-per-day P] [--days D]
                                       [--words W] [--fulltext F] [--repeat R] [--new-day]
                                       [--workdir DIR] [--version v1] [--workers K]

Without CORPUS_HOME, ``--papers`` papers are spread over ``--days`` daily ``pes2o``
partitions of a temporary CORPUS_HOME (``Store.write_partition`` of ``pes2o_frame``
rows, as ``pes2o_day`` writes them), every day before the cutoff: every paper has an ``s2ag``
row (title and abstract, ~``--s2ag-words`` words) and an ``s2orc`` row, which has a full
text of ``--words`` words (default 5000; peS2o averages ~4-8k, lower it to fit the disk) for
a ``--fulltext`` share of papers and is ``no_full_text`` otherwise. v1/v2 mostly keep, with
drops for the real reasons (``paper_filter`` with a detail too); a ``--repeat`` share of
papers is listed again on a later day with a new text (the release keeps the latest);
``created`` spreads over 1991 ... cutoff (recent years denser) with a few after the cutoff
or unknown, so train and valid are both non-empty. Texts are cheap: slices of one pool of
Zipf-sampled words (with paragraph breaks and some non-ASCII words), so each document is
distinct for gzip and zstd.

The full build runs ``write_release(home, version)`` on the generated days. With
``--new-day``, one more day is then written (``--days``' average of new papers, plus a
``--new-day-repeat`` share of that many earlier papers, drawn from the whole history,
delivered again with a new text) and ``write_release`` runs again: the incremental run, which
writes only the shards the day changes. Generation and each release run in their own child
process, so each one's CPU seconds (its threads and any build processes it starts) and peak
RSS are its own. With ``--workdir`` the data goes there and is removed afterwards (unless
``--keep``); otherwise a TemporaryDirectory.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path

from _common import cpu_timer, hwm_mb, in_child, result, timer

from corpus.release.pes2o_release import RULES, ReleaseSettings, write_release
from corpus.release.pes2o_table import pes2o_frame
from corpus.store import Store

CUTOFF = dt.date.fromisoformat(ReleaseSettings().cutoff)
EPOCH = dt.date(1970, 1, 1)
SIGNALS = (
    '{"paper_id":"%s","year":%s,"title_words":9,"abstract_words":180,"title_lang":"en",'
    '"abstract_lang":"en","title_avg_log2_prob":-11.2,"abstract_avg_log2_prob":-10.7,'
    '"abstract_ocr_matches":0,"abstract_ocr_prone":false,"ta_top_words":["the","of"],'
    '"ta_top_counts":[14,9],"paragraph_langs":["en","en","en","en"],"paper_lang":"en",'
    '"words":%d,"paragraphs":%d,"sections":[],"top_word":"the","top_word_count":310,"top_word_share":0.06}'
)


# --------------------------------------------------------------------------- text


class TextPool:
    """One long string of Zipf-sampled words; a document is ``n`` consecutive words of it."""

    def __init__(self, words: int, seed: int) -> None:
        import numpy as np

        rng = np.random.default_rng(seed)
        letters = np.array(list("etaoinshrdlcumwfgypbvkjxqz"))
        freq = np.array([12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.4,
                         2.2, 2.0, 2.0, 1.9, 1.5, 1.0, 0.8, 0.2, 0.2, 0.1, 0.1])  # fmt: skip
        vocab_size = 30_000
        lengths = np.clip(rng.poisson(6, vocab_size), 1, 18)
        chars = rng.choice(letters, size=int(lengths.sum()), p=freq / freq.sum())
        cuts = np.cumsum(lengths)[:-1]
        vocab = ["".join(w) for w in np.split(chars, cuts)]
        for i in range(0, vocab_size, 47):  # ~2% non-ASCII words (ensure_ascii=False path)
            vocab[i] = vocab[i] + "éα"[i % 2]
        zipf = 1.0 / (np.arange(vocab_size) + 2.7)
        idx = rng.choice(vocab_size, size=words, p=zipf / zipf.sum())
        seps = np.where(rng.random(words) < 1 / 120, "\n\n", " ")  # paragraphs of ~120 words
        pieces = [vocab[i] for i in idx.tolist()]
        word_len = np.array([len(w) for w in vocab])[idx]
        sep_len = np.where(seps == " ", 1, 2)
        self.starts = np.concatenate([[0], np.cumsum(word_len + sep_len)])[:-1]
        self.ends = self.starts + word_len
        self.text = "".join(w + s for w, s in zip(pieces, seps.tolist(), strict=True))
        self.words = words

    def take(self, rng, n: int) -> str:
        """``n`` whitespace words (``len(text.split()) == n``) from a random place."""
        k = int(rng.integers(0, self.words - n))
        return self.text[int(self.starts[k]) : int(self.ends[k + n - 1])]


# --------------------------------------------------------------------------- generation


def _verdicts(rng, source: str, has_text: bool) -> tuple[bool, str | None, bool, str | None, str | None]:
    """(v1_keep, v1_reason, v2_keep, v2_reason, detail): mostly kept, drops by the real reasons."""
    u = rng.random()
    if u < 0.03:
        return False, "paper_filter", False, "paper_filter", "not_english"
    if source == "s2orc" and not has_text:
        return False, "no_full_text", False, "no_full_text", None
    if u < 0.12:  # a content rule drops both versions
        reason = RULES[source][3 + int(rng.integers(0, len(RULES[source]) - 3))]
        return False, reason, False, reason, None
    if u < 0.16:  # v2 is stricter on a few
        return True, None, False, RULES[source][-1], None
    return True, None, True, None, None


def _created(rng) -> dt.date | None:
    u = rng.random()
    if u < 0.005:
        return None
    if u < 0.025:  # after the cutoff: counted, in no split
        return CUTOFF + dt.timedelta(days=1 + int(rng.integers(0, 365)))
    back = min(int(rng.exponential(6 * 365)), (CUTOFF - dt.date(1991, 8, 14)).days)
    return CUTOFF - dt.timedelta(days=back)


def _paper_rows(i: int, day: dt.date, args, rng, pool: TextPool, full: bool) -> list[dict]:
    created = _created(rng)
    year = created.year if created else None
    pid = f"{(created or day):%y%m}.{i:07d}"
    base = {
        "id": pid,
        "added": f"{day.isoformat()}T00:00:00.000Z",
        "created": f"{created.isoformat()}T00:00:00.000Z" if created else None,
        "created_date": created,
        "year": year,
    }
    rows = []
    for source in ("s2orc", "s2ag"):
        has_text = source == "s2ag" or full
        v1, r1, v2, r2, detail = _verdicts(rng, source, has_text)
        n = args.words if source == "s2orc" else max(20, int(rng.normal(args.s2ag_words, 40)))
        row = {**base, "source": source, "v1_keep": v1, "v1_reason": r1, "v2_keep": v2, "v2_reason": r2,
               "detail": detail}  # fmt: skip
        if r1 != "paper_filter":
            row["signals"] = SIGNALS % (pid, year if year else "null", n if has_text else 0, n // 120)
        if v1 or v2:
            row["text"], row["words"] = pool.take(rng, n), n
        rows.append(row)
    return rows


def first_day(args: argparse.Namespace) -> dt.date:
    """The generated days end two days before the cutoff (the new day is the last one before it)."""
    return CUTOFF - dt.timedelta(days=args.days + 2)


def generate(home: str, args: argparse.Namespace) -> dict:
    """Write the daily partitions; returns counts, bytes, CPU seconds and peak RSS of this process."""
    import numpy as np

    with cpu_timer() as cpu, timer() as wall:
        rng = np.random.default_rng(args.seed)
        pool = TextPool(max(4_000_000, 40 * args.words), args.seed)
        n = args.papers
        primary = np.arange(n) * args.days // n  # papers in id order over the days
        full = rng.random(n) < args.fulltext
        again = np.full(n, -1)
        repeat = (rng.random(n) < args.repeat) & (primary < args.days - 1)
        again[repeat] = primary[repeat] + 1 + (rng.random(repeat.sum()) * (args.days - 1 - primary[repeat]))
        store = Store(Path(home))
        rows_written = 0
        for d in range(args.days):
            day = first_day(args) + dt.timedelta(days=d)
            ids = np.concatenate([np.flatnonzero(primary == d), np.flatnonzero(again == d)])
            rows = [r for i in ids.tolist() for r in _paper_rows(i, day, args, rng, pool, bool(full[i]))]
            store.write_partition("pes2o", day.isoformat(), pes2o_frame(rows))
            rows_written += len(rows)
            del rows
    size = sum(p.stat().st_size for p in Path(home, "pes2o").rglob("*.parquet"))
    return {"rows": rows_written, "repeats": int(repeat.sum()), "fulltext": int(full.sum()),
            "bytes": size, "cpu_s": cpu["s"], "wall_s": wall["s"], "peak_mb": hwm_mb()}  # fmt: skip


def _generate_child(home: str, args: argparse.Namespace, out) -> None:
    out.put(generate(home, args))


# --------------------------------------------------------------------------- release


def new_day(home: str, args: argparse.Namespace) -> dict:
    """One more day after the generated ones: new papers and re-delivered earlier ones."""
    import numpy as np

    rng = np.random.default_rng(args.seed + 1)
    pool = TextPool(max(4_000_000, 40 * args.words), args.seed + 1)
    day = first_day(args) + dt.timedelta(days=args.days)
    per_day = max(1, args.papers // args.days)
    new = range(args.papers, args.papers + per_day)
    again = rng.choice(args.papers, size=max(1, round(per_day * args.new_day_repeat)), replace=False)
    full = rng.random(args.papers + per_day) < args.fulltext
    ids = [*new, *sorted(int(i) for i in again)]
    rows = [r for i in ids for r in _paper_rows(i, day, args, rng, pool, bool(full[i]))]
    Store(Path(home)).write_partition("pes2o", day.isoformat(), pes2o_frame(rows))
    return {"day": day.isoformat(), "new": per_day, "again": len(again), "rows": len(rows)}


def _new_day_child(home: str, args: argparse.Namespace, out) -> None:
    out.put(new_day(home, args))


def _release_child(home: str, args: argparse.Namespace, out) -> None:
    import resource

    settings = ReleaseSettings(max_shard_bytes=args.max_shard_mb << 20)
    start = time.process_time()
    with timer() as wall:
        summary = write_release(home, args.version, settings, workers=args.workers)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    out.put({
        "summary": {k: v for k, v in summary.items() if k not in ("funnel", "inputs")},
        "cpu_s": time.process_time() - start + kids.ru_utime + kids.ru_stime,
        "wall_s": wall["s"],
        "peak_mb": max(hwm_mb(), kids.ru_maxrss / 1024),
    })  # fmt: skip


def release(home: Path, args: argparse.Namespace, label: str) -> dict:
    run = in_child(_release_child, str(home), args)
    summary, cpu = run["summary"], run["cpu_s"]
    docs = sum(s["documents"] for s in summary["stats"])
    root = home.joinpath("releases", "pes2o", args.version)
    jsonl_mb = sum(_gzip_size(root / f["path"]) for f in summary["files"] if f["format"] == "jsonl") / 2**20
    gz_mb = sum(f["bytes"] for f in summary["files"] if f["format"] == "jsonl") / 2**20
    pq_mb = sum(f["bytes"] for f in summary["files"] if f["format"] == "parquet") / 2**20
    if label == "full":
        for s in summary["stats"]:
            print(f"  {s['source']:5} {s['split']:5} {s['documents']:>9,} docs {s['words']:>14,} words")
    print(f"  shards: {len(summary['files']) // 2} ({summary['shards_written']} written, "
          f"{summary['shards_reused']} kept)  jsonl {jsonl_mb:,.0f} MB -> gz {gz_mb:,.0f} MB, "
          f"parquet {pq_mb:,.0f} MB")  # fmt: skip
    print(f"release {args.version} ({label}, mode {summary['mode']}): {docs:,} docs in {cpu:.2f} CPU s / "
          f"{run['wall_s']:.2f} wall s = {docs / cpu:,.0f} docs/CPU-s, {jsonl_mb / cpu:.1f} MB/CPU-s of JSONL; "
          f"peak RSS {run['peak_mb']:,.0f} MB")  # fmt: skip
    return {"docs": docs, "jsonl_mb": jsonl_mb, "cpu_s": cpu, "wall_s": run["wall_s"], "peak_mb": run["peak_mb"],
            "written": summary["shards_written"], "shards": len(summary["files"]) // 2}  # fmt: skip


def _gzip_size(path: Path) -> int:
    """Uncompressed bytes of a gzip file from its trailer (ISIZE: exact below 4 GiB, and a
    shard holds at most max_shard_bytes)."""
    with open(path, "rb") as fh:
        fh.seek(-4, 2)
        return int.from_bytes(fh.read(4), "little")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("home", nargs="?", type=Path, help="a CORPUS_HOME with pes2o partitions (no generation)")
    ap.add_argument("--papers", type=int, default=50_000)
    ap.add_argument("--papers-per-day", type=int, help="papers = this x --days (overrides --papers)")
    ap.add_argument("--days", type=int, default=50)
    ap.add_argument("--words", type=int, default=5000, help="words of an s2orc full text")
    ap.add_argument("--s2ag-words", type=int, default=200, help="mean words of an s2ag title + abstract")
    ap.add_argument("--fulltext", type=float, default=0.3, help="share of papers with a full text")
    ap.add_argument("--repeat", type=float, default=0.05, help="share of papers listed again later")
    ap.add_argument("--new-day", action="store_true", help="then one new day, released incrementally")
    ap.add_argument("--new-day-repeat", type=float, default=0.05,
                    help="earlier papers the new day delivers again, as a share of its new papers")  # fmt: skip
    ap.add_argument("--version", default="v1", choices=("v1", "v2"))
    ap.add_argument("--max-shard-mb", type=int, default=128, help="JSONL MB per shard before gzip")
    ap.add_argument("--workers", type=int, default=1, help="build processes (0: one per CPU)")
    ap.add_argument("--workdir", type=Path, help="where to generate (removed afterwards unless --keep)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.papers_per_day:
        args.papers = args.papers_per_day * args.days
    args.workers = args.workers or None

    tmp = None
    if args.home is not None:
        home, gen = args.home, None
    else:
        if args.workdir is not None:
            args.workdir.mkdir(parents=True, exist_ok=True)
            home = Path(tempfile.mkdtemp(dir=args.workdir, prefix="pes2o-release-"))
        else:
            tmp = tempfile.TemporaryDirectory(prefix="pes2o-release-")
            home = Path(tmp.name)
    try:
        if args.home is None:
            gen = in_child(_generate_child, str(home), args)
            print(f"generate: {args.papers:,} papers, {gen['rows']:,} rows ({gen['repeats']:,} repeated, "
                  f"{gen['fulltext']:,} with full text) over {args.days} days: {gen['bytes'] / 2**20:,.0f} MB "
                  f"of Parquet in {gen['cpu_s']:.1f} CPU s / {gen['wall_s']:.1f} wall s, "
                  f"peak RSS {gen['peak_mb']:,.0f} MB")  # fmt: skip
        rel = release(home, args, "full")
        values = {}
        if args.new_day:
            if args.home is not None:
                ap.error("--new-day needs generated data (no CORPUS_HOME)")
            day = in_child(_new_day_child, str(home), args)
            print(f"new day {day['day']}: {day['new']:,} new papers, {day['again']:,} delivered again")
            inc = release(home, args, "new day")
            values = {"new_day_papers": day["new"], "new_day_again": day["again"], "new_day_cpu_s": inc["cpu_s"],
                      "new_day_peak_mb": inc["peak_mb"], "new_day_shards_written": inc["written"],
                      "new_day_share": inc["cpu_s"] / rel["cpu_s"]}  # fmt: skip
            print(f"one new day: {inc['cpu_s']:.2f} CPU s = {100 * inc['cpu_s'] / rel['cpu_s']:.1f} % of the full "
                  f"build's {rel['cpu_s']:.2f} CPU s; {inc['written']} of {inc['shards']} shards written; "
                  f"peak RSS {inc['peak_mb']:,.0f} MB (full: {rel['peak_mb']:,.0f} MB)")  # fmt: skip
        out_mb = sum(p.stat().st_size for p in (home / "releases").rglob("*") if p.is_file()) / 2**20
        result(
            papers=args.papers if gen else 0,
            days=args.days if gen else 0,
            words=args.words if gen else 0,
            gen_rows=gen["rows"] if gen else 0,
            gen_cpu_s=gen["cpu_s"] if gen else 0.0,
            gen_peak_mb=gen["peak_mb"] if gen else 0.0,
            input_mb=gen["bytes"] / 2**20 if gen else 0.0,
            docs=rel["docs"],
            release_cpu_s=rel["cpu_s"],
            release_wall_s=rel["wall_s"],
            docs_per_cpu_s=rel["docs"] / rel["cpu_s"],
            jsonl_mb=rel["jsonl_mb"],
            jsonl_mb_per_cpu_s=rel["jsonl_mb"] / rel["cpu_s"],
            output_mb=out_mb,
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
