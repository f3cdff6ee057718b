"""The layers of corpus/ stay honest: the library never imports Dagster or the Dagster side of
the project, and a group imports only from the groups before it (DESIGN's diagram, left to
right), so a parser never depends on how a release is written."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# A module may import from its own layer and the layers before it; base: store, day_io, parallel,
# plots, scratch, versions, provenance.
LAYERS = ["base", "ingest", "parse", "papers", "graph", "release", "sample"]
DAGSTER_SIDE = ("dagster", "dagster_pipes", "corpus_assets", "resources", "sensors")
MODULES = sorted(CORPUS.rglob("*.py"))


def _module(path: Path) -> str:
    parts = path.relative_to(CORPUS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "base"


def _imports(source: str) -> list[tuple[int, str]]:
    """Every module the source imports, at any depth (imports inside functions count too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            if node.module == "corpus":  # from corpus import store
                found += [(node.lineno, f"corpus.{a.name}") for a in node.names]
    return found


def violations(module: str, source: str) -> list[str]:
    own = LAYERS.index(_layer(module))
    wrong = []
    for line, name in _imports(source):
        top = name.split(".")[0]
        if top in DAGSTER_SIDE:
            wrong.append(f"{module}:{line} imports {name} (corpus never imports the Dagster side)")
        elif top == "corpus" and name != "corpus" and LAYERS.index(_layer(name)) > own:
            wrong.append(f"{module}:{line} ({_layer(module)}) imports {name} ({_layer(name)}), a later layer")
    return wrong


def test_every_module_is_in_a_layer():
    layers = {_module(p): _layer(_module(p)) for p in MODULES}
    assert set(layers.values()) == set(LAYERS)
    assert {m for m, layer in layers.items() if layer == "base"} == {
        "corpus",
        "corpus.day_io",
        "corpus.heap",
        "corpus.parallel",
        "corpus.plots",
        "corpus.provenance",
        "corpus.scratch",
        "corpus.store",
        "corpus.versions",
    }


@pytest.mark.parametrize("path", MODULES, ids=_module)
def test_imports_respect_the_layers(path: Path):
    wrong = violations(_module(path), path.read_text(encoding="utf-8"))
    assert not wrong, "\n".join(wrong)


def test_the_rule_reports_what_it_should():
    source = "import dagster\nfrom corpus.release import pes2o\n\ndef f():\n    from corpus import sample\n"
    assert violations("corpus.parse.tei", source) == [
        "corpus.parse.tei:1 imports dagster (corpus never imports the Dagster side)",
        "corpus.parse.tei:2 (parse) imports corpus.release (release), a later layer",
        "corpus.parse.tei:5 (parse) imports corpus.sample (sample), a later layer",
    ]
    assert violations("corpus.release.pes2o", "from corpus.parse.document import StructuredDoc\n") == []
    assert violations("corpus.sample.bulk", "from corpus.release import pes2o\n") == []


# Libraries the stages need: loaded when a stage runs, not by every process that loads the
# definitions. The code server never runs one (polars and numpy alone: ~50 MB and 0.2 CPU s there).
CALL_TIME_ONLY = ("polars", "numpy", "scipy", "pyarrow", "pypdf", "duckdb", "pycld2")


def test_loading_the_definitions_leaves_the_stage_libraries_unloaded():
    import subprocess
    import sys

    code = (
        "import sys, corpus_assets.definitions\n"
        f"print(','.join(m for m in {CALL_TIME_ONLY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", f"loaded at import: {done.stdout.strip()}"


def test_counting_a_partitions_rows_reads_its_footer_without_pyarrow(tmp_path: Path):
    """Every daily run counts rows for its metadata: from the Parquet footer, through polars,
    so a run worker never maps pyarrow's ~50 MB of libraries for it."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom pathlib import Path\nimport polars as pl\n"
        "from corpus.store import Store\n"
        "store = Store(Path(sys.argv[1]))\n"
        "store.write_partition('papers', '2024-01-01', pl.DataFrame({'id': ['a', 'b', 'c']}))\n"
        "print(store.partition_rows('papers', '2024-01-01'), store.partition_rows('papers', '2024-01-02'),"
        " 'pyarrow' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code, str(tmp_path)],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["3", "0", "False"]
