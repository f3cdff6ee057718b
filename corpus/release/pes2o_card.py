"""What a peS2o release publishes besides its shards: its splits and document fields, the
filter funnel (rows and SVG) and the Hugging Face dataset card, all from the manifest's numbers
(corpus.release.pes2o_release writes them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from corpus.release.dataset_card import CardConfig, card_text, markdown_table
from corpus.release.pes2o_table import RULES, SOURCES

__all__ = ["DOC_FIELDS", "SPLITS", "funnel_rows", "funnel_svg", "pes2o_card"]

SPLITS = ("train", "valid")
DOC_FIELDS = ("added", "created", "id", "source", "text", "version")


def funnel_rows(reasons: Mapping[str, Mapping[str | None, int]], after_cutoff: Mapping[str, int],
                splits: Mapping[tuple[str, str], int]) -> list[dict]:  # fmt: skip
    """The filter funnel per source: ``{source, step, dropped, remaining}`` rows.

    ``reasons[source]`` counts each drop reason (``None`` = kept) over the input
    rows, in :data:`RULES` order (a reason not listed there is added after them,
    never lost); then ``created_after_cutoff`` and one ``split:<name>`` line per split.
    """
    out = []
    for source in SOURCES:
        counts = dict(reasons.get(source, {}))
        remaining = sum(counts.values())
        out.append({"source": source, "step": "input", "dropped": 0, "remaining": remaining})
        extra = sorted(r for r in counts if r is not None and r not in RULES[source])
        for reason in (*RULES[source], *extra):
            n = counts.get(reason, 0)
            remaining -= n
            out.append({"source": source, "step": reason, "dropped": n, "remaining": remaining})
        n = after_cutoff.get(source, 0)
        remaining -= n
        out.append({"source": source, "step": "created_after_cutoff", "dropped": n, "remaining": remaining})
        for split in SPLITS:
            out.append({"source": source, "step": f"split:{split}", "dropped": 0,
                        "remaining": splits.get((source, split), 0)})  # fmt: skip
    return out


def funnel_svg(funnel: list[dict], title: str = "peS2o filter funnel") -> bytes:
    """SVG of the funnel: documents remaining after each step, one panel per source."""
    from corpus.plots import hbar_panels_svg

    steps = [r for r in funnel if not r["step"].startswith("split:")]
    panels = [
        (source, [(r["step"], r["remaining"], r["dropped"]) for r in steps if r["source"] == source])
        for source in SOURCES
    ]
    return hbar_panels_svg(panels, title=title, xlabel="documents remaining")


# The release is written in three steps, each a function of files on disk, so a scheduler may


HF_SPLITS = {"train": "train", "valid": "validation"}  # release folder -> Hugging Face split name
DOC_FEATURES = {name: "string" for name in DOC_FIELDS}


def pes2o_card(summary: Mapping[str, Any]) -> str:
    """The release's dataset card: ``default`` (both sources) and one config per source."""
    version = summary["version"]
    docs = {(s["source"], s["split"]): s["documents"] for s in summary["stats"]}
    size: Counter[tuple[str, str]] = Counter()
    for f in summary["files"]:
        if f["format"] == "jsonl":
            split, name = f["path"].split("/")
            size[(name.split("-")[0], split)] += f["bytes"]

    def config(name: str, sources: tuple[str, ...], default: bool = False) -> CardConfig:
        files, examples, num_bytes = {}, {}, {}
        for split, hf in HF_SPLITS.items():
            n = sum(docs.get((src, split), 0) for src in sources)
            if n:
                files[hf] = [f"{split}/{src}-*.jsonl.gz" for src in sources if docs.get((src, split))]
                examples[hf] = n
                num_bytes[hf] = sum(size[(src, split)] for src in sources)  # gzip JSONL on disk
        return CardConfig(name, files, examples, num_bytes, default)

    configs = [config("default", SOURCES, default=True), *(config(src, (src,)) for src in SOURCES)]
    configs = [c for c in configs if c.data_files]
    cutoff = summary["settings"]["cutoff"]
    per_source = [f"`{c.name}`" for c in configs if c.name != "default"]
    if not configs:
        load = "No document is released yet (every input was filtered out or is after the cutoff): nothing to load."
    else:
        load = "Load it with `datasets.load_dataset(<this directory>)` (both sources)"
        if per_source:
            load += f" or with the {' / '.join(per_source)} configuration"
        load += "; each JSONL shard has a Parquet twin holding the same documents."
    return card_text(
        title=f"peS2o {version} (arXiv)",
        summary=(
            f"peS2o {version} built from arXiv by this project, as the peS2o dataset card describes it: "
            "`s2orc` documents are full text (title, abstract and body paragraphs from Grobid section "
            "headers and paragraphs or from LaTeX), `s2ag` documents are title and abstract. Knowledge "
            f"cutoff {cutoff}: only papers delivered (OAI datestamp) on or before it are read; train holds "
            "documents created before the month preceding the cutoff's month, validation the rest up to the "
            f"cutoff. {load} "
            "`manifest.json` lists every shard with its sha256 and the fingerprint of every daily input."
        ),
        configs=configs,
        features=DOC_FEATURES,
        licence="other",
        tags=["pes2o", "arxiv", "scientific-papers"],
        sections={
            "Statistics": markdown_table(summary["stats"], ["source", "split", "documents", "words"]),
            "Filter funnel": markdown_table(summary["funnel"], ["source", "step", "dropped", "remaining"]),
            "Licence": (
                "peS2o is released under ODC-By 1.0. The texts here are arXiv papers, each under the licence "
                "its authors chose (the `license` field of `arxiv_metadata`); many use arXiv's non-exclusive "
                "distribution licence, which does not allow redistribution. Check each paper's licence "
                "before you share this release."
            ),
        },
    )
