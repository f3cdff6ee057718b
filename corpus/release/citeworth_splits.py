"""CiteWorth's release rules over many papers: the stable train/dev/test split of a paper,
the balance over fields, Table 2's statistics and the audit of leftover citation markers
(citeworth-paper.txt §3-4, Table 2-3). :mod:`corpus.release.citeworth_release` applies them to
the store; the rules for one paper are :mod:`corpus.release.citeworth_rules`."""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from corpus.ingest.arxiv_ids import try_normalize
from corpus.papers.fields import CITEWORTH_FIELDS
from corpus.release.citeworth_rules import LABEL_CITE_WORTHY, leftover_marker
from corpus.store import atomic_path

SPLIT_NAMES: tuple[str, ...] = ("train", "dev", "test")
TOKEN_RE = re.compile(r"\w+|[^\w\s]")  # Table 2's tokens: \w+ runs and single punctuation marks
CITEWORTH_LEFTOVER_RATE = 0.019  # citeworth-paper.txt Table 3: "less than 2 %", 1.9 % measured


# --- splits, balance, statistics --------------------------------------------------------------
def _hash_int(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def split_for(paper_id: str) -> str:
    """``train`` / ``dev`` / ``test`` (80/10/10) from a stable hash of the paper id.

    The id is canonicalised first (arXiv version and prefix dropped), so a paper never
    spans two splits and re-running or adding days never moves it.
    """
    key = try_normalize(paper_id) or paper_id.strip()
    bucket = _hash_int(f"citeworth-split:{key}") % 100
    return "train" if bucket < 80 else ("dev" if bucket < 90 else "test")


def _row_field(row: dict) -> str:
    f = row.get("field") or (row.get("mag_field_of_study") or [None])[0]
    if f not in CITEWORTH_FIELDS:
        raise ValueError(f"row {row.get('paper_id')!r}/{row.get('section_index')!r} has field {f!r}")
    return f


def balance(rows: Iterable[dict], seed: int = 0, per_field: int | None = None) -> list[dict]:
    """Sample paragraph rows evenly across the 10 fields, deterministically by ``seed``.

    Each field gets ``per_field`` rows, or all it has if fewer (the data allows no more);
    with ``per_field=None`` every non-empty field gets as many as the smallest one has.
    The choice depends only on ``seed``, ``paper_id`` and ``section_index``, never on
    input order. Output is ordered by field, then by that hash.
    """
    by_field: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for row in rows:
        key = _hash_int(f"{seed}|{row['paper_id']}|{row.get('section_index', 0)}")
        by_field[_row_field(row)].append((key, row))
    if not by_field:
        return []
    n = per_field if per_field is not None else min(len(v) for v in by_field.values())
    out: list[dict] = []
    for f in CITEWORTH_FIELDS:
        items = sorted(by_field.get(f, []), key=lambda kr: (kr[0], kr[1]["paper_id"]))
        out.extend(r for _, r in items[:n])
    return out


def split_rows(rows: Iterable[dict]) -> dict[str, list[dict]]:
    """Rows grouped by :func:`split_for` of their paper (each row gets a ``split`` key)."""
    out: dict[str, list[dict]] = {"train": [], "dev": [], "test": []}
    for row in rows:
        split = split_for(row["paper_id"])
        out[split].append({**row, "split": split})
    return out


def write_release(rows: Iterable[dict], out_dir: Path) -> dict[str, int]:
    """Write paragraph rows to ``out_dir/{train,dev,test}.jsonl`` by :func:`split_for`.

    Rows are sorted by (paper_id, section_index) so a re-run writes the same bytes;
    each file is replaced atomically. Returns the row count per split.
    """
    by_split = split_rows(rows)
    counts: dict[str, int] = {}
    for split, items in by_split.items():
        items.sort(key=lambda r: (str(r["paper_id"]), r.get("section_index", 0)))
        with atomic_path(Path(out_dir) / f"{split}.jsonl") as tmp, open(tmp, "w", encoding="utf-8") as fh:
            for row in items:
                row = {k: v for k, v in row.items() if k != "split"}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        counts[split] = len(items)
    return counts


def stats(items: Iterable[dict]) -> dict:
    """Table 2's statistics over paragraph rows (with ``samples``) or sample dicts.

    Tokens are ``\\w+`` runs and single punctuation marks (scispaCy-like); per-split
    counts appear when rows carry a ``split`` key.
    """
    lengths: list[int] = []
    tokens = cite = 0
    per_split: dict[str, int] = defaultdict(int)
    per_field: dict[str, int] = defaultdict(int)
    for item in items:
        samples = item.get("samples", [item])
        for s in samples:
            text = s["text"]
            lengths.append(len(text))
            tokens += len(TOKEN_RE.findall(text))
            cite += s["label"] == LABEL_CITE_WORTHY
            if "split" in item:
                per_split[item["split"]] += 1
            if "samples" in item and item.get("field"):
                per_field[item["field"]] += 1
    n = len(lengths)
    out: dict = {
        "total_sentences": n,
        "total_tokens": tokens,
        "cite_worthy": cite,
        "non_cite_worthy": n - cite,
        "cite_worthy_share": cite / n if n else 0.0,
        "min_chars": min(lengths) if n else 0,
        "max_chars": max(lengths) if n else 0,
        "mean_chars": statistics.fmean(lengths) if n else 0.0,
        "median_chars": statistics.median(lengths) if n else 0.0,
    }
    for split in ("train", "dev", "test"):
        if per_split:
            out[f"{split}_sentences"] = per_split.get(split, 0)
    if per_field:
        out["sentences_per_field"] = dict(per_field)
    return out


def default_cap(counts: dict[str, int]) -> int:
    """The default per-field cap **(choice)**: the median of the non-empty fields' counts.

    CiteWorth samples the 10 fields evenly. arXiv is mostly Physics, Mathematics and
    Computer Science, so capping at the *smallest* field (true evenness) would throw
    away nearly all data for the sake of, say, Psychology (q-bio.NC only). The median
    cuts the large fields down to a typical field's size and keeps the small ones whole.
    """
    sizes = [n for n in counts.values() if n > 0]
    return math.ceil(statistics.median(sizes)) if sizes else 0


_HASH_CHUNK = 200_000  # keys hashed at a time: Python strings for a slice only, not the corpus


def _key_hashes(keys: pl.DataFrame, seed: int) -> pl.Series:
    """:func:`balance`'s per-row hash of ``seed|paper_id|section_index``, a slice at a time."""
    parts = []
    for start in range(0, keys.height, _HASH_CHUNK):
        chunk = keys.slice(start, _HASH_CHUNK)
        ids, idx = chunk["paper_id"].to_list(), chunk["section_index"].to_list()
        parts.append(
            pl.Series("_h", [_hash_int(f"{seed}|{p}|{i}") for p, i in zip(ids, idx, strict=True)], pl.UInt64)
        )
    return pl.concat(parts) if parts else pl.Series("_h", [], pl.UInt64)


def balanced_keys(keys: pl.DataFrame, seed: int = 0, per_field: int | None = None) -> pl.DataFrame:
    """:func:`balance` on a frame of ``paper_id, section_index, field``: the same rows chosen,
    without a Python dict per row (a corpus-wide key table has millions of rows)."""
    bad = keys.filter(~pl.col("field").is_in(CITEWORTH_FIELDS))
    if bad.height:
        row = bad.row(0, named=True)
        raise ValueError(f"row {row['paper_id']!r}/{row['section_index']!r} has field {row['field']!r}")
    if keys.is_empty():
        return keys
    n = per_field if per_field is not None else keys.group_by("field").len()["len"].min()
    return (
        keys.with_columns(_key_hashes(keys, seed))
        .sort("_h", "paper_id")
        .filter(pl.int_range(pl.len()).over("field") < n)
        .drop("_h")
    )


class _SentenceStats:
    """:func:`stats` over released sentences (``{"text", "label", "split"}`` items), added a frame
    of rows at a time: the same numbers without a dict per sentence (lengths are a histogram,
    which gives the exact median)."""

    def __init__(self) -> None:
        self.lengths: Counter[int] = Counter()
        self.tokens = 0
        self.cite = 0
        self.per_split: Counter[str] = Counter()

    def add(self, split: str, rows: pl.DataFrame) -> None:
        flat = rows.select("samples").explode("samples", empty_as_null=False).unnest("samples")
        texts = flat["text"].to_list()
        self.lengths.update(map(len, texts))
        self.tokens += sum(len(TOKEN_RE.findall(t)) for t in texts)
        self.cite += int((flat["label"] == LABEL_CITE_WORTHY).sum())
        self.per_split[split] += len(texts)

    def _kth(self, k: int) -> int:
        """The ``k``-th smallest length (0-based)."""
        for length in sorted(self.lengths):
            k -= self.lengths[length]
            if k < 0:
                return length
        raise IndexError(k)

    def result(self) -> dict:
        n = self.lengths.total()
        if n:
            total = sum(length * c for length, c in self.lengths.items())
            mid = n // 2
            median = self._kth(mid) if n % 2 else (self._kth(mid - 1) + self._kth(mid)) / 2
        out: dict = {
            "total_sentences": n,
            "total_tokens": self.tokens,
            "cite_worthy": self.cite,
            "non_cite_worthy": n - self.cite,
            "cite_worthy_share": self.cite / n if n else 0.0,
            "min_chars": min(self.lengths) if n else 0,
            "max_chars": max(self.lengths) if n else 0,
            "mean_chars": float(total) / n if n else 0.0,
            "median_chars": median if n else 0.0,
        }
        for split in SPLIT_NAMES:
            if n:
                out[f"{split}_sentences"] = self.per_split.get(split, 0)
        return out


def audit_release(out_dir: str | Path, examples: int = 10) -> dict:
    """Leftover citation markers in the released sentences (:func:`leftover_marker`).

    Reads the JSONL files line by line, so it audits exactly what was released. The
    rate is over all sentences of all splits; CiteWorth measured 1.9 %.
    """
    out_dir = Path(out_dir)
    n = 0
    per_split: dict[str, int] = {}
    by_marker: dict[str, int] = defaultdict(int)
    flagged: list[dict] = []
    for split in SPLIT_NAMES:
        path = out_dir / f"{split}.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: materialise citeworth_splits first")
        per_split[split] = 0
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                for s in row["samples"]:
                    n += 1
                    per_split[split] += 1
                    marker = leftover_marker(s["text"])
                    if marker:
                        by_marker[marker] += 1
                        if len(flagged) < examples:
                            flagged.append({"paper_id": row["paper_id"], "marker": marker, "text": s["text"]})
    bad = sum(by_marker.values())
    return {
        "sentences": n,
        "sentences_per_split": per_split,
        "with_marker": bad,
        "rate": bad / n if n else 0.0,
        "by_marker": dict(by_marker),
        "examples": flagged,
    }
