"""What every stage makes of the real files in ../shared, as one fingerprint per asset, and the
record of those fingerprints with the stage versions that made them (stage_outputs.json).

tests/test_stage_versions.py fails when a stage's output changes while its version does not
(an existing corpus would never re-derive what changed), and when a version moves without the
record (so the record always says which version makes which output). After a deliberate change
to a stage: bump its version (corpus.versions names the constant), then

    python tests/stage_outputs.py --update

The inputs: every day of the real landing zone (../shared/landing: OAI pages, PDFs, Grobid TEI,
LaTeX e-prints) run through the daily stage functions and the cross-day ones, as the assets
call them; and, for the two parsers that change most, every other real file: the LaTeX papers
(../shared/data/fidelity/latex, latex_sources) and the Grobid TEI (fidelity/tei, grobid_tei,
pdf_tei_pairs). A fingerprint is over rows (their JSON), not Parquet bytes, so a new polars
that writes other bytes for the same rows changes nothing here.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CORPUS_SHARED", REPO.parent / "shared")).resolve()  # as tests/conftest.py
RECORD = Path(__file__).with_name("data") / "stage_outputs.json"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _hash_rows(h, frame) -> None:
    h.update(json.dumps(frame.to_dicts(), sort_keys=True, default=str, ensure_ascii=False).encode())


def _hash_files(h, root: Path, pattern: str = "*") -> None:
    for path in sorted(p for p in root.rglob(pattern) if p.is_file() and not p.name.startswith(".")):
        if "_state" in path.relative_to(root).parts:
            continue  # a stage's working state (named by run), not its output
        if path.suffix == ".parquet":
            import polars as pl

            h.update(path.relative_to(root).as_posix().encode())
            _hash_rows(h, pl.read_parquet(path))
        elif path.name not in ("state.json", "lock"):
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())


def real_latex_inputs() -> list[Path]:
    """Every real LaTeX paper under ../shared/data (e-prints and unpacked source folders)."""
    data = SHARED / "data"
    found: list[Path] = []
    for repo in sorted((data / "fidelity/latex").iterdir()):
        found += [d for d in sorted(repo.iterdir()) if d.is_dir() and any(d.rglob("*.tex"))]
    found += sorted((data / "latex_sources/s2orc-doc2json").glob("*.gz"))
    for group in ("engrafo", "korzen_benchmark", "paper_repos"):
        found += sorted(p for p in (data / "latex_sources" / group).iterdir() if p.is_dir())
    return found


def real_tei_inputs() -> list[Path]:
    data = SHARED / "data"
    found = [*sorted((data / "fidelity/tei").rglob("*.xml")), *sorted((data / "grobid_tei").rglob("*.xml"))]
    found += sorted((data / "pdf_tei_pairs").rglob("*.tei.xml"))
    return found


def _latex_rows(paths: Iterable[Path], scratch: Path) -> list[dict]:
    """latex_parses rows of real papers, made by the stage's own row function."""
    from corpus.ingest.eprint import EprintError, assemble_source, find_main_tex, load_eprint
    from corpus.parse.days import _latex_row

    rows = []
    for i, path in enumerate(paths):
        paper_id = f"real-{i}"
        try:
            if path.is_dir():
                source, failure = assemble_source(path, find_main_tex(path)), None
            else:
                _, source, failure = load_eprint(path, scratch / paper_id)
        except EprintError as exc:
            source, failure = None, exc.failure()
        task = (paper_id, source.model_dump_json() if source else None, failure.code if failure else None)
        rows.append(_latex_row(task))
    return rows


def _tei_rows(paths: Iterable[Path]) -> list[dict]:
    from corpus.parse.days import parse_row
    from corpus.parse.tei import TeiError, parse_tei_dict

    rows = []
    for i, path in enumerate(paths):
        try:
            rows.append(parse_row(f"tei-{i}", "grobid", parse_tei_dict(path.read_bytes(), f"tei-{i}")))
        except TeiError as exc:
            rows.append(
                parse_row(f"tei-{i}", "grobid", status="failed", reason=f"{type(exc).__name__}: {exc}"[:300])
            )
    return rows


def build_landing_days(home: Path, landing: Path) -> list[str]:
    """Every daily stage of every day of ``landing``, as the assets call them (no Dagster);
    returns the days."""
    from corpus.ingest.days import FetchSettings, arxiv_pdfs_day, arxiv_sources_day
    from corpus.ingest.landing import LandingZone
    from corpus.ingest.records import failures_frame, records_frame
    from corpus.papers.days import bib_entries_day, papers_day
    from corpus.parse.days import grobid_tei_day, latex_parses_day, pdf_parses_day
    from corpus.release.citeworth import citeworth_day
    from corpus.release.pes2o_table import pes2o_day
    from corpus.store import Store

    zone = LandingZone(landing)
    days = sorted({p.stem for p in (landing / "oai").glob("*.xml")})
    found = zone.read_days(days)
    store = Store(home)
    for day in days:
        store.write_partition("arxiv_metadata", day, records_frame(found.records[day]))
        store.write_partition(
            "arxiv_metadata_failures", day, failures_frame([f for f in found.failures if f.datestamp == day])
        )
        arxiv_pdfs_day(home, landing, day, FetchSettings())
        arxiv_sources_day(home, landing, day, FetchSettings())
        latex_parses_day(home, day)  # before grobid_tei: its policy reads the day's LaTeX parses
        grobid_tei_day(home, landing, day, None)
        pdf_parses_day(home, day)
        papers_day(home, day)
        bib_entries_day(home, day)
        pes2o_day(home, day)
        citeworth_day(home, day)
    return days


def build_landing_store(home: Path, landing: Path) -> list[str]:
    """Every stage of every day of ``landing``, then the cross-day stages, as the assets call
    them (no Dagster); returns the days."""
    from corpus.graph.citation_graph import update_graph
    from corpus.graph.citation_links import update_links
    from corpus.release.citeworth_release import build_release
    from corpus.release.pes2o_release import write_release

    days = build_landing_days(home, landing)
    update_links(home)
    update_graph(home)
    for version in ("v1", "v2"):
        write_release(home, version)
    build_release(home)
    return days


def fingerprints() -> dict[str, str]:
    """{asset: fingerprint of its output on the real files}."""
    from corpus.day_io import frame
    from corpus.parse.days import PARSE_SCHEMA
    from corpus.versions import STAGES

    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home, scratch = Path(tmp) / "data", Path(tmp) / "scratch"
        build_landing_store(home, SHARED / "landing")
        extra = {
            "latex_parses": _latex_rows(real_latex_inputs(), scratch),
            "pdf_parses": _tei_rows(real_tei_inputs()),
        }
        for asset in STAGES:
            if asset == "arxiv_bulk_index":
                continue  # bulk archives: tests/test_bulk.py (no real tars in ../shared)
            h = hashlib.sha256()
            root = home / asset
            if asset.startswith("pes2o_v"):
                root = home / "releases" / "pes2o" / asset.removeprefix("pes2o_")
            elif asset == "citeworth_splits":
                root = home / "releases" / "citeworth"
            if root.exists():
                _hash_files(h, root)
            if asset in extra:
                _hash_rows(h, frame(extra[asset], PARSE_SCHEMA))
            out[asset] = h.hexdigest()[:20]
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def current() -> dict[str, dict[str, str]]:
    from corpus.versions import code_version

    return {a: {"version": code_version(a), "fingerprint": fp} for a, fp in sorted(fingerprints().items())}


def recorded() -> dict[str, dict[str, str]]:
    return json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/stage_outputs.py --update")
    now = current()
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    changed = sorted(a for a, v in now.items() if recorded().get(a) != v)
    RECORD.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {RECORD}; changed: {', '.join(changed) or 'nothing'}")
