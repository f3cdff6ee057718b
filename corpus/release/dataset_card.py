"""Hugging Face dataset cards for the releases: ``README.md`` with YAML front matter.

``datasets.load_dataset(<release dir>)`` reads the card's ``configs`` (one per config,
``data_files`` a list of ``{split, path}`` with globs relative to the directory) and
builds the table from the files; ``dataset_info`` gives the features (``name`` with
``dtype``, or ``list`` for a sequence and a list of fields for a struct, as
``datasets.Features._to_yaml_list`` writes them) and the split sizes. The YAML is written
by hand with JSON-quoted strings (valid YAML scalars), so no YAML library is needed and
the same summary always gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpus.store import atomic_write_bytes

__all__ = ["CARD_NAME", "CardConfig", "card_text", "markdown_table", "write_card"]

CARD_NAME = "README.md"


@dataclass(frozen=True)
class CardConfig:
    """One loadable configuration: ``data_files`` maps a split name to glob patterns
    (relative to the release directory); ``examples`` the split's row count (``datasets``
    checks it when loading) and ``num_bytes`` its size on disk."""

    name: str
    data_files: Mapping[str, Sequence[str]]
    examples: Mapping[str, int] = field(default_factory=dict)
    num_bytes: Mapping[str, int] = field(default_factory=dict)
    default: bool = False


def _q(value: Any) -> str:
    """A YAML scalar: strings JSON-quoted (so ':' or '#' never change their meaning)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _feature_lines(feature: Any, indent: str) -> list[str]:
    """Lines of one feature's type under ``indent``: ``dtype``, ``list`` or struct fields."""
    if isinstance(feature, str):
        return [f"{indent}dtype: {feature}"]
    if isinstance(feature, list):  # a sequence of the one type inside
        (inner,) = feature
        if isinstance(inner, str):
            return [f"{indent}list: {inner}"]
        if isinstance(inner, dict):
            return [f"{indent}list:", *_struct_lines(inner, indent + "  ")]
        return [f"{indent}list:", *_feature_lines(inner, indent + "  ")]
    raise TypeError(f"unsupported feature type {feature!r}")


def _struct_lines(fields: Mapping[str, Any], indent: str) -> list[str]:
    lines = []
    for name, feature in fields.items():
        lines.append(f"{indent}- name: {_q(name)}")
        if isinstance(feature, dict):
            lines.append(f"{indent}  struct:")
            lines += _struct_lines(feature, indent + "  ")
        else:
            lines += _feature_lines(feature, indent + "  ")
    return lines


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A GitHub markdown table; integers with thousands separators."""

    def cell(v: Any) -> str:
        if isinstance(v, bool) or v is None:
            return "" if v is None else str(v)
        if isinstance(v, int):
            return f"{v:,}"
        if isinstance(v, float):
            return f"{v:,.4g}"
        return str(v).replace("|", "\\|")

    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    out += ["| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(out)


def card_text(
    *,
    title: str,
    summary: str,
    configs: Sequence[CardConfig],
    features: Mapping[str, Any],
    licence: str,
    sections: Mapping[str, str],
    tags: Sequence[str] = (),
) -> str:
    """The card: YAML front matter (licence, configs, dataset_info) then markdown sections.

    ``features`` maps a column to ``"string"``/``"int64"``..., ``[type]`` for a list or a
    dict of fields for a struct (``[{...}]`` a list of structs).
    """
    yaml = ["---", f"license: {_q(licence)}", "language:", "- en", f"pretty_name: {_q(title)}"]
    if tags:
        yaml += ["tags:", *(f"- {_q(t)}" for t in tags)]
    yaml.append("configs:")
    for c in configs:
        yaml.append(f"- config_name: {_q(c.name)}")
        if c.default:
            yaml.append("  default: true")
        yaml.append("  data_files:")
        for split, paths in c.data_files.items():
            yaml += [f"  - split: {_q(split)}", "    path:", *(f"    - {_q(p)}" for p in paths)]
    yaml.append("dataset_info:")
    for c in configs:
        yaml += [f"- config_name: {_q(c.name)}", "  features:", *_struct_lines(features, "  ")]
        yaml.append("  splits:")
        for split in c.data_files:
            yaml += [
                f"  - name: {_q(split)}",
                f"    num_bytes: {int(c.num_bytes.get(split, 0))}",
                f"    num_examples: {int(c.examples.get(split, 0))}",
            ]
    yaml.append("---")
    body = [f"# {title}", "", summary.strip(), ""]
    for heading, text in sections.items():
        body += [f"## {heading}", "", text.strip(), ""]
    return "\n".join(yaml) + "\n\n" + "\n".join(body)


def write_card(directory: Path, text: str) -> Path:
    """Write ``directory/README.md`` atomically."""
    path = Path(directory) / CARD_NAME
    atomic_write_bytes(path, text.encode("utf-8"))
    return path
