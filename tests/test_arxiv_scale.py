"""benchmarks/arxiv_scale.py: the scale harness writes what the daily assets write, and runs.

The harness writes the cross-day job's daily inputs directly (no parsing), so its tables are
compared with the daily stages' own output on the project's generated papers (a small landing
zone of corpus.sample, every daily stage run as the assets call them):

* the same schema: every column, in order, with its type;
* per column, statistics within the tolerances of ``TOLERANCES`` below: null share, true share,
  mean of numbers, mean length of text and lists. The harness's distributions are calibrated on
  the real papers in ../shared, which are larger than the generator's (30k characters of body
  text against 6k, 40 references against 20), so the tolerances are wide where the two differ on
  purpose and say so;
* the values the stages can write (reason codes, sources, fields), and the invariants the
  cross-day assets rely on (keys unique in a day, entry ids made from the paper id, titles
  normalised by the linker's own function, word counts, text only for kept documents).

The smoke test runs the harness itself on a few small days (the full job, then a new day) and
checks its RESULT line.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests"))

import arxiv_scale  # noqa: E402

TABLES = ["papers", "fulltext_ids", "bib_entries", "pes2o", "citeworth_paragraphs", "citeworth_candidates"]

# Default tolerances: |null share, harness - stages| <= NULL; true shares within TRUE; means of
# numbers, text lengths and list lengths within a factor RATIO of each other.
NULL, TRUE, RATIO = 0.25, 0.25, 3.0
# Where the harness differs from the generator on purpose (calibrated on real papers), the
# tolerance says how far, and why.
TOLERANCES: dict[tuple[str, str], dict[str, float]] = {
    # real papers: 71 body paragraphs and 30.6k characters (landing parses); the generator's 9 and 6.1k
    ("papers", "n_body_paragraphs"): {"ratio": 12.0},
    ("papers", "text_chars"): {"ratio": 8.0},
    # the generator gives a DOI and journal-ref to 15 % of papers, TeX sources to 39 %; real arXiv
    # papers: ~90 % LaTeX (92 % with full text here); its ids are old-style (astro-ph/0503001)
    ("papers", "has_latex"): {"true": 0.5},
    ("papers", "parse_source"): {"null": 0.3},
    ("papers", "parser_version"): {"null": 0.3},
    # the landing zone's real papers all have a license; the generator's 75 %, the harness's 40 %
    ("papers", "license"): {"null": 0.5},
    # updated: the harness's days hold 15 % revisions, the generator's small store 30 %
    ("papers", "updated"): {"null": 0.3},
    # real references carry publications (journal, volume, page): 26-56 %; the generator's none
    ("bib_entries", "pub_journal"): {"null": 0.5},
    ("bib_entries", "pub_volume"): {"null": 0.5},
    ("bib_entries", "pub_page"): {"null": 0.5},
    ("bib_entries", "pub_year"): {"null": 0.5},
    # raw reference strings: real LaTeX parses keep them (21 %), the generator's all of them
    ("bib_entries", "raw_text"): {"null": 0.85},
    # venue: the generator names one for every entry, real parses for 80 %, the harness ~65 %
    ("bib_entries", "venue"): {"null": 0.4},
    # real papers: 71 paragraphs, 7 % kept (CiteWorth: 6.3 a paper); the generator 9, 52 % kept
    ("citeworth_paragraphs", "kept"): {"true": 0.5},
    ("citeworth_paragraphs", "section_index"): {"ratio": 12.0},
    ("citeworth_paragraphs", "n_sentences"): {"ratio": 10.0},
    ("citeworth_paragraphs", "n_cite_worthy"): {"ratio": 10.0},
    ("citeworth_paragraphs", "samples"): {"ratio": 10.0},
    ("citeworth_paragraphs", "detail"): {"ratio": 5.0},
    ("citeworth_paragraphs", "reason"): {"null": 0.5},
    ("citeworth_candidates", "paragraphs"): {"ratio": 12.0},
    ("citeworth_candidates", "sentences"): {"ratio": 4.0},
    ("citeworth_candidates", "parse_source"): {"null": 0.3},
    ("citeworth_candidates", "reason"): {"null": 0.3},
    # peS2o texts: real full texts are 5x the generator's (32k characters against 4k)
    ("pes2o", "text"): {"ratio": 8.0},
    ("pes2o", "words"): {"ratio": 8.0},
    # the harness's signals are a short stand-in (the releases read verdicts, text and words)
    ("pes2o", "signals"): {"ratio": 12.0},
}


def column_stats(frame: pl.DataFrame) -> dict[str, dict[str, float]]:
    """Per column: null share, and the true share / mean / mean length of what is not null."""
    out: dict[str, dict[str, float]] = {}
    for name, dtype in frame.schema.items():
        col = frame[name]
        stats = {"null": col.null_count() / max(frame.height, 1)}
        values = col.drop_nulls()
        if values.is_empty():
            pass  # nothing to compare but the null share
        elif dtype == pl.Boolean:
            stats["true"] = float(values.mean() or 0.0)
        elif dtype.is_numeric():
            stats["mean"] = float(values.mean() or 0.0)
        elif dtype == pl.String:
            stats["mean"] = float(values.str.len_chars().mean() or 0.0)
        elif isinstance(dtype, pl.List):
            stats["mean"] = float(values.list.len().mean() or 0.0)
        out[name] = stats
    return out


def _within(a: float, b: float, ratio: float) -> bool:
    if a == b:
        return True
    if min(a, b) <= 0:
        return max(a, b) <= 1.0  # zero against (almost) zero
    return max(a, b) / min(a, b) <= ratio


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """(harness tables, daily stages' tables) of two small days each."""
    from stage_outputs import build_landing_days

    from corpus.sample.landing_zone import generate_landing

    root = tmp_path_factory.mktemp("scale")
    generate_landing(root / "landing", n_records=240, days=2, seed=7, full_text=True)
    build_landing_days(root / "stages", root / "landing")
    v = arxiv_scale.vocab(1.0)
    harness = {t: [] for t in TABLES}
    for d in (40, 41):  # days with older papers to cite and revise
        for t, frame in arxiv_scale.make_day(d, 200, v).items():
            harness[t].append(frame)
    stages = {t: pl.read_parquet(root / "stages" / t / "date=*" / "part-0.parquet") for t in TABLES}
    return {t: pl.concat(f) for t, f in harness.items()}, stages


@pytest.mark.parametrize("table", TABLES)
def test_same_schema_as_the_daily_stages(stores, table):
    harness, stages = stores
    assert harness[table].schema == stages[table].schema


@pytest.mark.parametrize("table", TABLES)
def test_column_statistics_within_tolerances(stores, table):
    harness, stages = (column_stats(s[table]) for s in stores)
    bad = []
    for col, ours in harness.items():
        theirs = stages[col]
        tol = {"null": NULL, "true": TRUE, "ratio": RATIO} | TOLERANCES.get((table, col), {})
        if abs(ours["null"] - theirs["null"]) > tol["null"]:
            bad.append(f"{col}: null share {ours['null']:.3f} vs {theirs['null']:.3f}")
        if "true" in ours and "true" in theirs and abs(ours["true"] - theirs["true"]) > tol["true"]:
            bad.append(f"{col}: true share {ours['true']:.3f} vs {theirs['true']:.3f}")
        if "mean" in ours and "mean" in theirs and not _within(ours["mean"], theirs["mean"], tol["ratio"]):
            bad.append(f"{col}: mean {ours['mean']:.2f} vs {theirs['mean']:.2f}")
    assert not bad, f"{table}: " + "; ".join(bad)


def test_values_the_stages_can_write(stores):
    from corpus.papers.fields import CITEWORTH_FIELDS
    from corpus.papers.metadata import FILTERS, PARSE_REASONS
    from corpus.release.citeworth import P_DROPPED, P_NO_TEXT
    from corpus.release.citeworth_rules import LABEL_CITE_WORTHY, LABEL_NOT_CITE_WORTHY, REASONS
    from corpus.release.pes2o_table import RULES

    h = stores[0]
    papers, pes2o, par, cand = h["papers"], h["pes2o"], h["citeworth_paragraphs"], h["citeworth_candidates"]
    assert set(papers["drop_reason"].drop_nulls()) <= {c for c, _ in FILTERS}
    assert set(papers["parse_reason"]) <= set(PARSE_REASONS)
    assert set(papers["parse_source"].drop_nulls()) == {"latex", "grobid"}
    assert set(papers["field"]) <= set(CITEWORTH_FIELDS)
    for source, rules in RULES.items():
        rows = pes2o.filter(pl.col("source") == source)
        assert set(rows["v1_reason"].drop_nulls()) | set(rows["v2_reason"].drop_nulls()) <= set(rules)
    assert set(par["reason"].drop_nulls()) <= set(REASONS)
    labels = (
        par.select(pl.col("samples").explode(empty_as_null=False).struct.field("label"))
        .drop_nulls()
        .to_series()
    )
    assert set(labels) == {LABEL_CITE_WORTHY, LABEL_NOT_CITE_WORTHY}
    assert set(cand["reason"].drop_nulls()) <= {P_DROPPED, P_NO_TEXT}


def test_invariants_the_cross_day_assets_rely_on(stores):
    from corpus.papers.normalize import normalize_title

    h = stores[0]
    papers, bib, pes2o, par = h["papers"], h["bib_entries"], h["pes2o"], h["citeworth_paragraphs"]
    # per day (the two days concatenated: a paper revised on the second day is in both)
    assert papers.select(pl.struct("id", "datestamp").is_unique().all()).item()
    assert bib["entry_id"].n_unique() <= bib.height
    assert (bib["entry_id"] == bib["citing_id"] + "#" + bib["ref_id"]).all()
    live = papers.filter(pl.col("kept") & pl.col("parse_source").is_not_null())["id"]
    assert set(bib["citing_id"]) <= set(live) and set(par["paper_id"]) <= set(live)
    assert set(h["fulltext_ids"]["citing_id"]) <= set(live)
    for title, norm in papers.select("title", "norm_title").iter_rows():
        assert norm == normalize_title(title)
    for title, norm in bib.select("title", "norm_title").iter_rows():
        assert norm == (normalize_title(title) or None)
    kept = pes2o.filter(pl.col("v1_keep") | pl.col("v2_keep"))
    assert kept["text"].null_count() == 0
    assert (
        pes2o.filter(~pl.col("v1_keep") & ~pl.col("v2_keep"))["text"].null_count()
        == pes2o.height - kept.height
    )
    for text, words in kept.select("text", "words").iter_rows():
        assert words == len(text.split())
    assert pes2o.group_by("id", "added").len()["len"].unique().to_list() == [2]
    # every ID an entry names is an arXiv id the linker reads, in either form
    assert bib["arxiv_id"].drop_nulls().str.contains(r"^(\d{4}\.\d{5}|[a-z-]+/\d{7})$").all()
    # a revision is a paper of an earlier day delivered again with the same id
    for _, day in papers.group_by("datestamp"):
        revised = day.filter(pl.col("updated").is_not_null())
        assert revised.height > 0 and not set(revised["id"]) & set(
            day.filter(pl.col("updated").is_null())["id"]
        )
        assert (revised["created"] < revised["datestamp"]).all()


def test_calibration_on_real_papers(stores):
    """The figures the harness's docstring states, measured on what it writes."""
    h = stores[0]
    papers, bib = h["papers"], h["bib_entries"]
    live = papers.filter(pl.col("kept") & pl.col("parse_source").is_not_null())
    refs = bib.height / live.height
    assert 34 <= refs <= 46, refs  # real: 40.6 (unarXive), 48 (landing parses)
    ax = bib["arxiv_id"].is_not_null().mean()
    assert 0.12 <= ax <= 0.20, ax  # real: 13.3 %, 20.1 %
    assert 60 <= papers["title"].str.len_chars().mean() <= 85  # real: 71.7
    revised = papers["updated"].is_not_null().mean()
    assert 0.12 <= revised <= 0.18, revised  # 15 % of a day's records
    text = live["n_body_paragraphs"].mean()
    assert 55 <= text <= 90, text  # real: 71.5


def _harness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """benchmarks/arxiv_scale.py run as a user runs it, one writer process, its temporary files
    and Dagster home under ``tmp_path``."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("DAGSTER_HOME", None)
    cmd = [sys.executable, "benchmarks/arxiv_scale.py", *args, "--workers", "1"]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def test_smoke_result_line(tmp_path):
    """The harness on three small days: the full corpus_graph job, then a new day; its RESULT line."""
    done = _harness(tmp_path, "--days", "3", "--papers-per-day", "40")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("RESULT "), last
    values = dict(re.findall(r"(\w+)=(\S+)", last))
    for key in ("days", "papers", "entries", "full_cpu_s", "full_wall_s", "full_peak_gb", "newday_cpu_s",
                "newday_peak_gb", "store_gb"):  # fmt: skip
        assert key in values, key
    assert values["days"] == "3" and values["papers"] == "120"
    assert int(values["entries"]) > 1000
    assert float(values["full_cpu_s"]) > 0 and float(values["newday_cpu_s"]) > 0
    assert 0 < float(values["full_peak_gb"]) < 4
    assert "citation_links" in done.stdout and "citeworth_splits" in done.stdout


def test_some_assets_by_asset(tmp_path):
    """``--by-asset --assets`` (a build of all of arXiv measured one asset at a time, over sessions):
    only the named assets run, in the full build and in the new day, and the RESULT line names them."""
    small = ("--days", "2", "--papers-per-day", "30")
    refused = _harness(tmp_path, *small, "--assets", "citation_links")
    assert refused.returncode == 2 and "--assets needs --by-asset" in refused.stderr
    keep = tmp_path / "keep"
    done = _harness(
        tmp_path, *small, "--keep", str(keep), "--by-asset", "--assets", "citation_graph,citation_links"
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    values = dict(re.findall(r"(\w+)=(\S+)", last))
    assert values["assets"] == "citation_links,citation_graph"  # job order
    assert float(values["newday_cpu_s"]) > 0
    measured = json.loads((keep / "d2-30x1" / "measured.json").read_text())
    assert set(measured["full_by_asset"]) == {"citation_links", "citation_graph"}
    ran = {step.split(".")[0] for step in measured["newday"]["steps"]}
    assert ran == {"citation_links", "citation_graph"}, ran
    # another asset on the same kept store (the next session's): it is built and given its new day
    done = _harness(tmp_path, *small, "--keep", str(keep), "--by-asset", "--assets", "citeworth_splits")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (
        dict(re.findall(r"(\w+)=(\S+)", done.stdout.strip().splitlines()[-1]))["assets"] == "citeworth_splits"
    )
    measured = json.loads((keep / "d2-30x1" / "measured.json").read_text())
    assert set(measured["full_by_asset"]) == {"citation_links", "citation_graph", "citeworth_splits"}
    assert {step.split(".")[0] for step in measured["newday"]["steps"]} == {"citeworth_splits"}
    assert measured["newdays"] == 2
