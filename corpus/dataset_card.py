"""Hugging Face dataset cards for the releases, so ``datasets.load_dataset(<release dir>)``
works with no arguments.

A card is the release directory's ``README.md``: YAML front matter (``configs`` with
``data_files`` per split, ``dataset_info`` with the features and split sizes, the licence)
and a short markdown body (what the release is, the statistics table and the filter
funnel). The YAML feature syntax is the one ``datasets.Features._to_yaml_list`` writes.
Only splits that have files are listed: ``datasets`` refuses a pattern that matches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from corpus.store import atomic_write_bytes

STRING = {"dtype": "string"}
INT64 = {"dtype": "int64"}


@dataclass
class CardConfig:
    """One loadable configuration: a name and, per split, the files' glob and examples."""

    name: str
    data_files: dict[str, str]  # split -> glob relative to the release dir
    examples: dict[str, int] = field(default_factory=dict)  # split -> number of examples
    default: bool = False


def card_text(
    title: str,
    summary: str,
    configs: Sequence[CardConfig],
    features: Sequence[Mapping],
    licence: str,
    sections: Mapping[str, str],
) -> str:
    """The whole ``README.md``: front matter and body."""
    usable = [c for c in configs if c.data_files]
    front: dict = {"license": licence, "pretty_name": title, "language": ["en"]}
    if usable:
        front["configs"] = [
            {
                "config_name": c.name,
                **({"default": True} if c.default else {}),
                "data_files": [{"split": s, "path": p} for s, p in c.data_files.items()],
            }
            for c in usable
        ]
        front["dataset_info"] = [
            {
                "config_name": c.name,
                "features": [dict(f) for f in features],
                "splits": [{"name": s, "num_examples": c.examples.get(s, 0)} for s in c.data_files],
            }
            for c in usable
        ]
    body = [f"# {title}", "", summary.strip(), ""]
    if not usable:
        body += ["_This release holds no documents yet: there is nothing to load._", ""]
    for heading, text in sections.items():
        body += [f"## {heading}", "", text.strip(), ""]
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n" + "\n".join(body)


def write_card(directory: Path, text: str) -> Path:
    path = Path(directory) / "README.md"
    atomic_write_bytes(path, text.encode("utf-8"))
    return path


def markdown_table(rows: Sequence[Mapping], columns: Sequence[str]) -> str:
    """A markdown table of ``rows`` (numbers with thousands separators)."""

    def cell(value) -> str:
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)

    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)
    return head + "".join("\n| " + " | ".join(cell(r.get(c, "")) for c in columns) + " |" for r in rows)
