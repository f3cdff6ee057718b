"""The house stays tidy: every module of corpus/ is one idea a newcomer can read (at most 1,000
lines), and no two modules import each other (an import circle, even inside a function, means
neither can be read or changed alone), in corpus/ and on the Dagster side (corpus_assets/,
sensors/, resources/), where resources never import the layer above them. Dagster's private
modules (``dagster._...``) are imported in one place only, corpus_assets/dagster_internals.py,
which says for each use why no public API serves."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from test_layers import MODULES, _module

MAX_LINES = 1000
# Being split by other work of issue 37; each entry goes when its module is under the limit
# (the test then says so).
TOO_LONG_FOR_NOW: set[str] = set()
# Known circles: none now. An entry (a frozenset of module names) would say which may stay for a
# while; the test says when one is no longer needed.
KNOWN_CIRCLES: set[frozenset[str]] = set()
NAMES = {_module(p): p for p in MODULES}
REPO = Path(__file__).resolve().parents[1]
DAGSTER_SIDE = ("corpus_assets", "sensors", "resources")
SIDE_NAMES = {
    ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): p
    for part in DAGSTER_SIDE
    for p in sorted((REPO / part).glob("*.py"))
}
INTERNALS = REPO / "corpus_assets" / "dagster_internals.py"
PRIVATE = re.compile(r"^\s*(?:from|import)\s+dagster\._", re.M)  # code, or code in a string a test runs


def _corpus_imports(path: Path, names=NAMES) -> set[str]:
    """The modules of ``names`` that ``path`` imports, at any depth (``from corpus.parse import tei``
    names the module ``corpus.parse.tei``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in found if m in names and m != "corpus"}


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Every set of modules that import each other, directly or around a longer loop (the
    strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_of_corpus_is_over_a_thousand_lines():
    lengths = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in NAMES.items()}
    too_long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert set(too_long) <= TOO_LONG_FOR_NOW, {n: too_long[n] for n in set(too_long) - TOO_LONG_FOR_NOW}
    done = {name for name in TOO_LONG_FOR_NOW if lengths.get(name, 0) <= MAX_LINES}
    assert not done, f"{sorted(done)} are {MAX_LINES} lines or fewer now: take them off TOO_LONG_FOR_NOW"


def test_no_two_modules_of_corpus_import_each_other():
    graph = {name: _corpus_imports(path) - {name} for name, path in NAMES.items()}
    circles = set(_circles(graph))
    assert circles <= KNOWN_CIRCLES, [sorted(c) for c in circles - KNOWN_CIRCLES]
    gone = KNOWN_CIRCLES - circles
    assert not gone, f"{[sorted(c) for c in gone]} no longer import each other: take them off KNOWN_CIRCLES"


def test_the_circle_finder_finds_pairs_and_longer_loops():
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert set(_circles(graph)) == {frozenset("ab"), frozenset("cde")}
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_two_modules_of_the_dagster_side_import_each_other():
    graph = {name: _corpus_imports(path, SIDE_NAMES) - {name} for name, path in SIDE_NAMES.items()}
    assert {"corpus_assets.definitions", "sensors.rederive", "resources.store"} <= set(graph)
    assert not _circles(graph), [sorted(c) for c in _circles(graph)]


def test_resources_never_import_the_dagster_layer_above_them():
    wrong = {
        name: sorted(m for m in _corpus_imports(path, SIDE_NAMES) if not m.startswith("resources"))
        for name, path in SIDE_NAMES.items()
        if name.startswith("resources")
    }
    assert not any(wrong.values()), wrong


def _private_imports(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [
        f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}" for m in PRIVATE.finditer(text)
    ]


def test_dagster_s_private_modules_are_imported_in_dagster_internals_only():
    """A private import is a place where a Dagster upgrade breaks silently: each one lives in
    corpus_assets/dagster_internals.py, which says why no public API serves and which test fails
    if an upgrade changes it. Tests, benchmarks and the container tests import from there too."""
    files = [
        p for part in (*DAGSTER_SIDE, "benchmarks", "tests", "docker") for p in (REPO / part).rglob("*.py")
    ]
    found = [hit for path in files if path != INTERNALS for hit in _private_imports(path)]
    assert not found, found
    assert _private_imports(INTERNALS)  # the rule finds them where they are


def test_dagster_internals_says_why_for_each_use():
    """Every private module it imports is named in its docstring's list (what, why, the test)."""
    text = INTERNALS.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text)) or ""
    for number in range(1, 8):
        assert f"\n{number}. **" in doc, number
    assert "Used by tests only" in doc
