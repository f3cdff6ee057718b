"""The citation graph over every day, kept up to date day by day (the ``citation_graph`` asset).

Storage under ``$CORPUS_HOME/citation_graph/``:

* ``edges-<day>.parquet`` (EDGE_SCHEMA, sorted by citing_id, cited_id): the edges of the papers
  whose deciding (latest) delivery is that day, between nodes (papers kept in their latest
  delivery). Every edge is in exactly one file, so ``citation_graph/*.parquet`` is the graph.
* ``_state/``: ``state.json`` (input fingerprints per day, the statistics), every delivery and
  each paper's deciding row (corpus.graph.deliveries), the node codes (a permanent integer per paper
  that ever was a node), the full-text arXiv ids each day names (to find the days whose edges a
  node that comes or goes changes), and ``codes/<day>.npy``: each day's edges as node codes.

A day's edges come from its ``citation_links`` files (bibliography links, with the ``mentions``
of their entries from ``bib_entries``) and its ``fulltext_ids`` rows (arXiv ids in the body
text), of the papers it decides (:func:`corpus.graph.network.build_edges`). They are built again only
for the days whose inputs changed, whose deciding papers moved, or which name in their full text
a paper that became or stopped being a node (a bibliography link only ever points at a node:
when one goes, citation_links rewrites the day files that linked it). The Table 2 statistics
are computed from the node codes of every day, integers only (16 bytes an edge), never the ids.

A run is :func:`plan_graph` (what changed; new state tables written aside), :func:`build_days`
for the planned days (in parallel steps: each day is independent), then :func:`finish_graph`
(statistics, then the new state replaces the old). A run that dies is planned again from the
old state by the next: its days are still changed there, and rebuilt.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import numpy as np
import polars as pl

from corpus.graph import deliveries
from corpus.graph.citation_links import ASSET as LINKS_ASSET
from corpus.graph.deliveries import DELIVERY_SCHEMA, same_content, stamp
from corpus.graph.link_index import fixed_bytes, fnv1a, remove_paths
from corpus.graph.network import (
    EDGE_SCHEMA,
    GRAPH_VERSION,
    VIA_ORDER,
    build_edges,
    code_degrees,
    degree_plot_from,
    table2,
)
from corpus.papers.fulltext_ids import FULLTEXT_IDS
from corpus.store import Store, atomic_path, atomic_write_bytes, scan_days
from corpus.versions import FIRST_RECORDED

ASSET = "citation_graph"
STATE_DIR = "_state"
VERSION = 3  # 3: node table by hash, via in the code files, IPC tables (other versions: a full run)
_NAMED = {"day": pl.String, "cited_id": pl.String}


def _root(store: Store) -> Path:
    return store.asset_dir(ASSET)


def _state_dir(store: Store) -> Path:
    return _root(store) / STATE_DIR


def edge_file(store: Store, day: str) -> Path:
    return _root(store) / f"edges-{day}.parquet"


def _code_file(store: Store, day: str) -> Path:
    return _state_dir(store) / "codes" / f"{day}.npy"


def read_edges(store: Store) -> pl.DataFrame:
    """Every edge, sorted by (citing_id, cited_id) (all at once: for tests and small corpora)."""
    files = sorted(_root(store).glob("edges-*.parquet"))
    if not files:
        return pl.DataFrame(schema=EDGE_SCHEMA)
    return pl.concat([pl.read_parquet(f) for f in files]).cast(EDGE_SCHEMA).sort("citing_id", "cited_id")


def _load_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    # a graph built by other graph code is built again in full
    return data if data.get("code", FIRST_RECORDED["citation_graph"]) == GRAPH_VERSION else None


def _fingerprints(store: Store, old: dict) -> dict[str, dict]:
    """``{day: {input: stamp}}`` over the days with ``papers``: their papers, bib_entries and
    fulltext_ids files and every citation_links file of the day."""
    out = {}
    links = store.asset_dir(LINKS_ASSET)
    for day in store.partitions("papers"):
        prev = old.get(day, {})
        paths = {"papers": store.partition_dir("papers", day) / "part-0.parquet"}
        for asset in ("bib_entries", FULLTEXT_IDS):
            path = store.partition_dir(asset, day) / "part-0.parquet"
            if path.exists():
                paths[asset] = path
        for path in sorted((links / f"date={day}").glob("part-*.parquet")):
            paths[f"links/{path.name}"] = path
        out[day] = {k: stamp(p, prev.get(k)) for k, p in paths.items()}
    return out


# --------------------------------------------------------------------------- plan


def plan_graph(home: str | Path) -> dict:
    """Work out which days' edges must be built again and write the run's new state tables
    aside (``_state/plan.json`` names them); return the plan (``days`` to build, ``mode``)."""
    store = Store(Path(home))
    sdir = _state_dir(store)
    sdir.mkdir(parents=True, exist_ok=True)
    state = _load_json(sdir / "state.json")
    old_fps = (state or {}).get("fingerprints", {})
    fps = _fingerprints(store, old_fps)
    run = uuid.uuid4().hex
    plan = {"version": VERSION, "code": GRAPH_VERSION, "run": run, "fingerprints": fps, "gone": []}
    if state is None:
        delivered, latest = deliveries.full(store, list(fps))
        nodes = _NodeTable.of(latest.filter(pl.col("kept"))["id"])
        days = list(fps)
        named = pl.DataFrame(schema=_NAMED)
        plan["mode"] = "full"
    else:
        changed = [d for d in fps if not same_content(old_fps.get(d), fps[d])]
        gone = [d for d in old_fps if d not in fps]
        if not changed and not gone:
            plan = {**plan, "mode": "unchanged", "days": []}
            atomic_write_bytes(sdir / "plan.json", json.dumps(plan, sort_keys=True).encode())
            return plan
        old_delivered = pl.read_ipc(sdir / state["deliveries"], memory_map=False).cast(DELIVERY_SCHEMA)
        old_latest = deliveries.read_latest(sdir / state["latest"])
        change = deliveries.update(store, old_delivered, old_latest, changed, gone)
        delivered, latest = change.deliveries, change.latest
        named = pl.read_ipc(sdir / state["named"], memory_map=False).cast(_NAMED)
        was = change.before.filter(pl.col("kept"))["id"]
        now = change.after.filter(pl.col("kept"))["id"]
        left, came = was.filter(~was.is_in(now.implode())), now.filter(~now.is_in(was.implode()))
        nodes = _NodeTable.load(sdir, state["nodes"]).update(left, came)
        touched = change.touched
        days = set(changed) | set(touched["old_day"].drop_nulls()) | set(touched["day"].drop_nulls())
        days |= set(named.filter(pl.col("cited_id").is_in(pl.concat([left, came]).implode()))["day"])
        days = sorted(d for d in days if d in fps)
        plan["gone"] = gone
        plan["mode"] = "incremental"
    # the arXiv ids each planned day names in its full text (of the papers it decides)
    out_days = pl.Series(days + plan["gone"], dtype=pl.String).implode()
    named = pl.concat([named.filter(~pl.col("day").is_in(out_days)), _named(store, days, latest)])
    plan["tables"] = {}
    for key, frame in {"deliveries": delivered, "latest": latest, "named": named}.items():
        name = f"{key}-{run}.arrow"  # Arrow IPC, uncompressed: read and written whole every run
        frame.write_ipc(sdir / name, compression="uncompressed")
        plan["tables"][key] = name
    plan["tables"]["nodes"] = nodes.save(sdir, run)
    plan["days"] = days
    atomic_write_bytes(sdir / "plan.json", json.dumps(plan, sort_keys=True).encode())
    return plan


def _named(store: Store, days: list[str], latest: pl.DataFrame) -> pl.DataFrame:
    parts = []
    for day in days:
        path = store.partition_dir(FULLTEXT_IDS, day) / "part-0.parquet"
        if not path.exists():
            continue
        rows = scan_days([path], {"citing_id": pl.String, "cited_id": pl.String}).collect()
        decided = latest.filter(pl.col("day") == day).select(pl.col("id").alias("citing_id"))
        rows = rows.join(decided, on="citing_id", how="semi").select(pl.lit(day).alias("day"), "cited_id")
        parts.append(rows.unique())
    return pl.concat(parts).cast(_NAMED) if parts else pl.DataFrame(schema=_NAMED)


def read_plan(home: str | Path) -> dict:
    plan = _load_json(_state_dir(Store(Path(home))) / "plan.json")
    if plan is None:
        raise ValueError("no citation_graph plan: run plan_graph first")
    return plan


# --------------------------------------------------------------------------- build


class _NodeTable:
    """The graph's nodes: each id's permanent integer code, looked up by a 64-bit hash of the id
    (sorted; a match is checked against the id itself). A paper that stops being a node loses its
    code; one that becomes a node gets the next unused code."""

    def __init__(self, hashes: np.ndarray, ids: np.ndarray, codes: np.ndarray, next_code: int):
        self.hashes, self.ids, self.codes, self.next_code = hashes, ids, codes, next_code

    @classmethod
    def of(cls, ids: pl.Series) -> _NodeTable:
        return cls(np.zeros(0, np.uint64), np.zeros(0, "S1"), np.zeros(0, np.int64), 0).update(
            pl.Series([], dtype=pl.String), ids
        )

    def update(self, left: pl.Series, came: pl.Series) -> _NodeTable:
        """Without the ids that ``left``, with those that ``came`` (new codes)."""
        gone = self.find(left)
        keep = np.ones(len(self.hashes), bool)
        keep[gone[gone >= 0]] = False
        new_ids = fixed_bytes(came) if len(came) else np.zeros(0, "S1")
        width = max(self.ids.dtype.itemsize, new_ids.dtype.itemsize, 1)
        hashes = np.concatenate([self.hashes[keep], fnv1a(came)])
        ids = np.concatenate([self.ids[keep].astype(f"S{width}"), new_ids.astype(f"S{width}")])
        codes = np.concatenate([self.codes[keep], self.next_code + np.arange(len(came), dtype=np.int64)])
        order = np.argsort(hashes, kind="stable")
        hashes, ids, codes = hashes[order], ids[order], codes[order]
        if len(hashes) > 1 and (hashes[1:] == hashes[:-1]).any():
            dup = ids[np.flatnonzero(hashes[1:] == hashes[:-1])[0]].decode()
            raise ValueError(f"two node ids share a 64-bit hash (or one is listed twice), e.g. {dup!r}")
        return _NodeTable(hashes, ids, codes, self.next_code + len(came))

    def find(self, ids: pl.Series) -> np.ndarray:
        """The position of each id in the table, -1 when it is not a node."""
        if len(self.hashes) == 0 or len(ids) == 0:
            return np.full(len(ids), -1, np.int64)
        h = fnv1a(ids)
        at = np.minimum(np.searchsorted(self.hashes, h), len(self.hashes) - 1)
        hit = self.hashes[at] == h
        if hit.any():  # a hash is not proof: compare the ids where the hashes match
            q = fixed_bytes(ids.filter(pl.Series(hit)))
            w = self.ids.dtype.itemsize
            same = (np.char.str_len(q) <= w) & (self.ids[at[hit]] == q.astype(f"S{w}"))
            hit[np.flatnonzero(hit)[~same]] = False
        return np.where(hit, at, -1)

    def code(self, ids: pl.Series) -> np.ndarray:
        """The node code of each id, -1 when it is not a node."""
        at = self.find(ids)
        return np.where(at >= 0, self.codes[np.maximum(at, 0)] if len(self.codes) else -1, -1)

    def save(self, sdir: Path, run: str) -> str:
        name = f"nodes-{run}.npz"
        np.savez(sdir / name, hashes=self.hashes, ids=self.ids, codes=self.codes, next_code=self.next_code)
        return name

    @classmethod
    def load(cls, sdir: Path, name: str) -> _NodeTable:
        with np.load(sdir / name) as z:
            return cls(z["hashes"], z["ids"], z["codes"], int(z["next_code"]))


def build_days(home: str | Path, part: int = 0, parts: int = 1) -> int:
    """Build the edge and code files of the planned days ``part::parts`` (steps may run at once:
    each day is its own files); return how many days were built."""
    store = Store(Path(home))
    plan = read_plan(home)
    if not plan["days"]:
        return 0
    latest = deliveries.read_latest(_state_dir(store) / plan["tables"]["latest"])
    nodes = _NodeTable.load(_state_dir(store), plan["tables"]["nodes"])
    days = plan["days"][part::parts]
    for day in days:
        _build_day(store, day, latest.filter(pl.col("day") == day), nodes)
    return len(days)


def day_edges(store: Store, day: str, decided: pl.DataFrame) -> pl.DataFrame:
    """The edges (EDGE_SCHEMA) of the papers ``decided`` by ``day`` (their latest delivery),
    before the node filter: bibliography links with their entries' mentions, full-text ids."""
    links_dir = store.asset_dir(LINKS_ASSET) / f"date={day}"
    files = sorted(links_dir.glob("part-*.parquet"))
    cols = ["entry_id", "citing_id", "cited_id", "via", "score"]
    links = pl.concat([pl.read_parquet(f, columns=cols) for f in files]) if files else None
    bib = store.partition_dir("bib_entries", day) / "part-0.parquet"
    if (
        links is not None
    ):  # (citation_links files hold the papers the day decides; if they lag, still only those)
        links = links.join(decided.select(pl.col("id").alias("citing_id")), on="citing_id", how="semi")
        mentions = (
            scan_days([bib], {"entry_id": pl.String, "mentions": pl.Int64}).collect()
            if bib.exists()
            else None
        )
        if mentions is not None:
            links = links.join(mentions.unique("entry_id"), on="entry_id", how="left")
        links = links.with_columns(
            pl.col("mentions").fill_null(0) if mentions is not None else pl.lit(0).alias("mentions")
        )
    fulltext = None
    ft = store.partition_dir(FULLTEXT_IDS, day) / "part-0.parquet"
    if ft.exists():
        rows = scan_days(
            [ft], {"citing_id": pl.String, "cited_id": pl.String, "mentions": pl.Int64}
        ).collect()
        rows = rows.join(decided.select(pl.col("id").alias("citing_id")), on="citing_id", how="semi")
        fulltext = rows.group_by("citing_id", "cited_id").agg(pl.col("mentions").sum())
    if links is None and fulltext is None:
        return pl.DataFrame(schema=EDGE_SCHEMA)
    if links is None:
        links = pl.DataFrame(
            schema={**{c: pl.String for c in cols}, "score": pl.Float64, "mentions": pl.Int64}
        )
    return build_edges(links, fulltext)


def _build_day(store: Store, day: str, decided: pl.DataFrame, nodes: _NodeTable) -> None:
    edges = day_edges(store, day, decided)
    src, dst = nodes.code(edges["citing_id"]), nodes.code(edges["cited_id"])
    keep = (src >= 0) & (dst >= 0)
    edges = edges.filter(pl.Series(keep))
    path, codes = edge_file(store, day), _code_file(store, day)
    if edges.is_empty():
        path.unlink(missing_ok=True)
        codes.unlink(missing_ok=True)
        return
    with atomic_path(path) as tmp:
        edges.cast(EDGE_SCHEMA).write_parquet(tmp, compression="zstd", statistics=True)
    codes.parent.mkdir(parents=True, exist_ok=True)
    via = (
        edges["via"].replace_strict({v: i for i, v in enumerate(VIA_ORDER)}, return_dtype=pl.Int64).to_numpy()
    )
    with atomic_path(codes) as tmp, open(tmp, "wb") as fh:
        np.save(fh, np.stack([src[keep], dst[keep], via], axis=1).astype(np.int32))


# --------------------------------------------------------------------------- finish


def _graph_codes(store: Store, nodes_table: str, days: dict) -> tuple[np.ndarray, np.ndarray]:
    """``is_node[code]`` and the ``(src, dst, via)`` code rows of every day's edges between
    nodes (a day built before its citation_links caught up may still name a node that left)."""
    nodes = _NodeTable.load(_state_dir(store), nodes_table)
    is_node = np.zeros(nodes.next_code, dtype=bool)
    is_node[nodes.codes] = True
    parts = [np.load(f) for d in days if (f := _code_file(store, d)).exists()]
    rows = np.concatenate(parts) if parts else np.zeros((0, 3), np.int64)
    return is_node, rows[is_node[rows[:, 0]] & is_node[rows[:, 1]]]


def _draw_degrees(plot: Path, is_node: np.ndarray, src: np.ndarray, dst: np.ndarray) -> None:
    k_in, k_out = code_degrees(len(is_node), src, dst)
    atomic_write_bytes(plot, degree_plot_from(k_in[is_node], k_out[is_node]))


def finish_graph(home: str | Path, plot: Path | None = None) -> dict:
    """Statistics of the planned graph (Table 2, via counts; a degree plot when ``plot``), then
    commit the plan as the new state; return the statistics and counts."""
    store = Store(Path(home))
    sdir = _state_dir(store)
    state = _load_json(sdir / "state.json")
    plan = _load_json(sdir / "plan.json")
    if plan is None:
        raise ValueError("no citation_graph plan: run plan_graph first")
    if plan["mode"] == "unchanged":
        assert state is not None
        if plan["fingerprints"] != state["fingerprints"]:  # same bytes rewritten: keep the new stamps
            state["fingerprints"] = plan["fingerprints"]
            atomic_write_bytes(sdir / "state.json", json.dumps(state, sort_keys=True).encode())
        (sdir / "plan.json").unlink(missing_ok=True)
        if plot is not None and not plot.exists() and state["summary"]["nodes"]:  # e.g. a new store
            is_node, rows = _graph_codes(store, state["nodes"], state["fingerprints"])
            _draw_degrees(plot, is_node, rows[:, 0], rows[:, 1])
        return {**state["summary"], "mode": "unchanged", "days_built": 0}
    c0 = time.process_time()
    for day in plan["gone"]:
        edge_file(store, day).unlink(missing_ok=True)
        _code_file(store, day).unlink(missing_ok=True)
    if plan["mode"] == "full":  # files of an older layout or state that the plan does not name
        (_root(store) / "part-0.parquet").unlink(missing_ok=True)
        for path in [*_root(store).glob("edges-*.parquet"), *(sdir / "codes").glob("*.npy")]:
            day = path.name.removeprefix("edges-").removesuffix(".parquet").removesuffix(".npy")
            if day not in plan["fingerprints"]:
                path.unlink(missing_ok=True)
    is_node, rows = _graph_codes(store, plan["tables"]["nodes"], plan["fingerprints"])
    src, dst = rows[:, 0], rows[:, 1]
    summary: dict = {"nodes": int(is_node.sum()), "edges": len(src)}
    if summary["nodes"]:
        summary.update(table2(is_node, src, dst))
        if plot is not None:
            _draw_degrees(plot, is_node, src, dst)
    via = np.bincount(rows[:, 2], minlength=len(VIA_ORDER))
    summary["via"] = {v: int(n) for v, n in zip(VIA_ORDER, via, strict=True) if n}
    del rows, src, dst
    summary["stats_cpu_s"] = round(time.process_time() - c0, 3)
    new_state = {
        "version": VERSION,
        "code": GRAPH_VERSION,
        "fingerprints": plan["fingerprints"],
        "summary": summary,
        **plan["tables"],
    }
    atomic_write_bytes(sdir / "state.json", json.dumps(new_state, sort_keys=True).encode())
    (sdir / "plan.json").unlink(missing_ok=True)
    keep = {"state.json", "codes", *plan["tables"].values()}
    remove_paths([p for p in sdir.iterdir() if p.name not in keep])
    return {**summary, "mode": plan["mode"], "days_built": len(plan["days"])}


def update_graph(home: str | Path, plot: Path | None = None) -> dict:
    """Plan, build and finish in one call (the Dagster asset runs the build in parallel steps)."""
    plan_graph(home)
    build_days(home)
    return finish_graph(home, plot)
