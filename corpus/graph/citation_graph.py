"""The citation graph over every day, kept up to date day by day (the ``citation_graph`` asset).

Storage under ``$CORPUS_HOME/citation_graph/``:

* ``edges-<day>.parquet`` (EDGE_SCHEMA, sorted by citing_id, cited_id): the edges of the papers
  whose deciding (latest) delivery is that day, between nodes (papers kept in their latest
  delivery). Every edge is in exactly one file, so ``citation_graph/*.parquet`` is the graph.
* ``_state/``: ``state.json`` (input fingerprints per day, the statistics), every delivery and
  each paper's deciding row (corpus.graph.deliveries), the node codes (a permanent integer per paper
  that ever was a node), the full-text arXiv ids each day names (to find the days whose edges a
  node that comes or goes changes), ``degrees-<run>.npz``: every node code's in- and out-degree,
  and under ``days/``, per day and named by the run that built it (a run that dies leaves the
  committed ones as they were): ``<day>-<run>.parquet``, the day's edges (``edges-<day>.parquet``
  is a hard link to it, made when the run commits), ``<day>-<run>.npy``, the same rows as node
  codes, and ``<day>-<run>.links.arrow``, a hash of each citing paper's links.

A day's edges come from its ``citation_links`` files (bibliography links, with the ``mentions``
of their entries from ``bib_entries``) and its ``fulltext_ids`` rows (arXiv ids in the body
text), of the papers it decides (:func:`corpus.graph.network.build_edges`); a paper's edges depend
on its own inputs only. They are built again only for the days whose inputs changed, whose
deciding papers moved, or which name in their full text a paper that became or stopped being a
node (a bibliography link only ever points at a node: when one goes, citation_links rewrites the
day files that linked it). A day whose own papers, bibliography and full text did not change
(most of them: a paper delivered again leaves its older day, whose links file loses its rows) is
patched, not built: its stored rows are kept but for the papers that left it and those whose
links (by their hash) or full-text targets changed, whose edges are built again alone; the
result is the rows a build gives (tested), for a few milliseconds instead of a build.

The Table 2 statistics come from integer node codes, never the ids, and a new day costs what it
changed, not the graph: the degrees are kept and updated with the code rows of the days built
(their old rows out, their new ones in), so nodes, edges, mean degree, the isolated share and
the degree plot are exact after every run from the degree arrays alone. The statistics that need
every edge at once, the largest weak component's share and the power-law fits (a search over
x_min), are computed again from every day's code rows when the graph has grown or shrunk by
:data:`WHOLE_GRAPH_REFRESH` (nodes or edges) since they were last, and on every run while it has
fewer than :data:`WHOLE_GRAPH_ALWAYS` edges; in between they are the last ones computed, and the
summary says at which size (``whole_graph_at``).

A run is :func:`plan_graph` (what changed; new state tables written aside), :func:`build_days`
for the planned days (in parallel steps: each day is independent), then :func:`finish_graph`
(statistics, then the new state replaces the old). A run that dies is planned again from the
old state by the next: its days are still changed there, and rebuilt.
"""

from __future__ import annotations

import json
import os
import shutil
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
    degree_plot_from,
    table2,
)
from corpus.papers.fulltext_ids import FULLTEXT_IDS
from corpus.parallel import available_cpus, map_ordered
from corpus.store import Store, atomic_path, atomic_write_bytes, scan_days
from corpus.versions import FIRST_RECORDED

ASSET = "citation_graph"
STATE_DIR = "_state"
VERSION = 4  # 4: degrees kept, day files by run, patched days (3: node table by hash, via in the
# code files, IPC tables; other versions: a full run)
WHOLE_GRAPH_REFRESH = 0.05  # the WCC share and power-law fits are redone when N or E moved 5 %
WHOLE_GRAPH_ALWAYS = 500_000  # ... and on every run below this many edges (~0.3 CPU s)
WHOLE_GRAPH_STATS = ("alpha_in", "alpha_out", "xmin_in", "xmin_out", "wcc_share")
_NAMED = {"day": pl.String, "cited_id": pl.String}
_OWN = ("papers", "bib_entries", FULLTEXT_IDS)  # a day's own inputs: a change of one builds it in full
_LINK_COLUMNS = ["entry_id", "citing_id", "cited_id", "via", "score"]
_LINK_HASH = {"citing_id": pl.String, "h": pl.UInt64}
# days to build worth one more process (~1 CPU s to start): a new day's ~100 touched days stay in one
_DAYS_PER_WORKER = 64


def _root(store: Store) -> Path:
    return store.asset_dir(ASSET)


def _state_dir(store: Store) -> Path:
    return _root(store) / STATE_DIR


def edge_file(store: Store, day: str) -> Path:
    return _root(store) / f"edges-{day}.parquet"


def _day_file(store: Store, day: str, run: str, kind: str) -> Path:
    """A day's stored rows, as built by ``run``: ``kind`` ``parquet`` (edges), ``npy`` (the same
    rows as ``(src, dst, via)`` node codes) or ``links.arrow`` (each citing paper's link hash)."""
    return _state_dir(store) / "days" / f"{day}-{run}.{kind}"


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
        own = [d for d in changed if not same_content(_own(old_fps.get(d)), _own(fps[d]))]
        gone = [d for d in old_fps if d not in fps]
        if not changed and not gone:
            plan = {**plan, "mode": "unchanged", "days": []}
            atomic_write_bytes(sdir / "plan.json", json.dumps(plan, sort_keys=True).encode())
            return plan
        old_delivered = pl.read_ipc(sdir / state["deliveries"], memory_map=False).cast(DELIVERY_SCHEMA)
        old_latest = deliveries.read_latest(sdir / state["latest"])
        change = deliveries.update(store, old_delivered, old_latest, own, gone)  # links move no paper
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
        # built in full: a day whose own inputs changed, or that decides a paper it did not
        plan["full_days"] = sorted((set(own) | set(touched["day"].drop_nulls())) & set(days))
        moved = pl.concat([left, came]).to_frame("id")
        plan["gone"] = gone
        plan["mode"] = "incremental"
    # the arXiv ids each planned day names in its full text (of the papers it decides)
    out_days = pl.Series(days + plan["gone"], dtype=pl.String).implode()
    named = pl.concat([named.filter(~pl.col("day").is_in(out_days)), _named(store, days, latest)])
    plan["tables"] = {}
    tables = {"deliveries": delivered, "latest": latest, "named": named}
    if plan["mode"] == "incremental":
        tables["moved"] = moved  # papers that became or stopped being nodes
        # the planned days whose full text names one of them: the only ones a patch reads it for
        naming = named.filter(pl.col("cited_id").is_in(moved["id"].implode()))["day"]
        plan["naming"] = sorted(set(naming) & set(days))
    else:
        plan["full_days"] = days
    for key, frame in tables.items():
        name = f"{key}-{run}.arrow"  # Arrow IPC, uncompressed: read and written whole every run
        frame.write_ipc(sdir / name, compression="uncompressed")
        plan["tables"][key] = name
    plan["tables"]["nodes"] = nodes.save(sdir, run)
    plan["days"] = days
    atomic_write_bytes(sdir / "plan.json", json.dumps(plan, sort_keys=True).encode())
    return plan


def _own(stamps: dict | None) -> dict | None:
    """The stamps of a day's own inputs (not its citation_links files)."""
    return None if stamps is None else {k: v for k, v in stamps.items() if k in _OWN}


def _named(store: Store, days: list[str], latest: pl.DataFrame) -> pl.DataFrame:
    parts = []
    decided_by = _decided_by_day(latest, days)
    for day in days:
        path = store.partition_dir(FULLTEXT_IDS, day) / "part-0.parquet"
        if not path.exists() or day not in decided_by:
            continue
        rows = scan_days([path], {"citing_id": pl.String, "cited_id": pl.String}).collect()
        decided = decided_by[day].select(pl.col("id").alias("citing_id"))
        rows = rows.join(decided, on="citing_id", how="semi").select(pl.lit(day).alias("day"), "cited_id")
        parts.append(rows.unique())
    return pl.concat(parts).cast(_NAMED) if parts else pl.DataFrame(schema=_NAMED)


def _decided_by_day(latest: pl.DataFrame, days: list[str]) -> dict[str, pl.DataFrame]:
    """The deciding rows of each of ``days`` that has any, split in one pass (a filter per day
    would read every paper's row for each)."""
    rows = latest.filter(pl.col("day").is_in(pl.Series(days, dtype=pl.String).implode()))
    return {key[0]: part for key, part in rows.partition_by("day", as_dict=True).items()}


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


def build_days(home: str | Path, part: int = 0, parts: int = 1, workers: int | None = None) -> int:
    """Build (or patch) the planned days ``part::parts`` into the run's day files (steps may run
    at once: each day is its own files); return how many days were built. Many days (a full
    build's) are shared out over ``workers`` processes, by default one per CPU: a step of the
    in-process executor would otherwise use one core."""
    store = Store(Path(home))
    sdir = _state_dir(store)
    plan = read_plan(home)
    if not plan["days"]:
        return 0
    if workers is None:
        workers = max(1, min(available_cpus(), len(plan["days"][part::parts]) // _DAYS_PER_WORKER))
    if workers > 1:
        shares = ((home, part + k * parts, parts * workers, 1) for k in range(workers))
        return sum(map_ordered(build_days, shares, workers, window=1))
    state = _load_json(sdir / "state.json")  # the committed files a patch starts from
    stored = state["days"] if state is not None and plan["mode"] == "incremental" else {}
    latest = deliveries.read_latest(sdir / plan["tables"]["latest"])
    nodes = _NodeTable.load(sdir, plan["tables"]["nodes"])
    is_node = _is_node(nodes)
    moved = pl.read_ipc(sdir / plan["tables"]["moved"])["id"] if "moved" in plan["tables"] else None
    naming = set(plan.get("naming", plan["days"]))  # a plan written before the list: every day
    full = set(plan["full_days"])
    days = plan["days"][part::parts]
    (sdir / "days").mkdir(parents=True, exist_ok=True)
    decided_by = _decided_by_day(latest, days)
    for day in days:
        decided = decided_by.get(day, latest.clear())
        if day in full or day not in stored or moved is None:
            rows = _built_rows(store, day, decided, nodes)
        else:
            names = moved if day in naming else None
            rows = _patched_rows(store, day, decided, nodes, is_node, stored[day], names)
        _write_day(store, day, plan["run"], *rows)
    return len(days)


def _day_links(store: Store, day: str, decided: pl.DataFrame) -> pl.DataFrame:
    """The link rows (``_LINK_COLUMNS``) of the papers ``decided`` by ``day`` (citation_links files
    hold the papers the day decides; if they lag, still only those)."""
    files = sorted((store.asset_dir(LINKS_ASSET) / f"date={day}").glob("part-*.parquet"))
    if not files:
        return pl.DataFrame(schema={**{c: pl.String for c in _LINK_COLUMNS}, "score": pl.Float64})
    links = pl.concat([pl.read_parquet(f, columns=_LINK_COLUMNS) for f in files])
    return links.join(decided.select(pl.col("id").alias("citing_id")), on="citing_id", how="semi")


def _link_hashes(links: pl.DataFrame) -> pl.DataFrame:
    """One hash per citing paper of its link rows (order-free): what its edges from links depend
    on, besides its bibliography's mentions."""
    row = pl.struct("entry_id", "cited_id", "via", pl.col("score").cast(pl.Float64)).hash(7)
    return links.group_by("citing_id").agg(row.bitwise_xor().alias("h")).cast(_LINK_HASH)


def day_edges(
    store: Store, day: str, decided: pl.DataFrame, links: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The edges (EDGE_SCHEMA) of the papers ``decided`` by ``day`` (their latest delivery),
    before the node filter: bibliography links (``links``: :func:`_day_links`, else read) with
    their entries' mentions, full-text ids."""
    links = _day_links(store, day, decided) if links is None else links
    ids = decided.select(pl.col("id").alias("citing_id"))
    bib = store.partition_dir("bib_entries", day) / "part-0.parquet"
    if links.height and bib.exists():
        mentions = scan_days([bib], {"entry_id": pl.String, "mentions": pl.Int64})
        mentions = mentions.join(links.lazy().select("entry_id"), on="entry_id", how="semi").collect()
        links = links.join(mentions.unique("entry_id"), on="entry_id", how="left")
        links = links.with_columns(pl.col("mentions").fill_null(0))
    else:
        links = links.with_columns(pl.lit(0, pl.Int64).alias("mentions"))
    fulltext = None
    ft = store.partition_dir(FULLTEXT_IDS, day) / "part-0.parquet"
    if ft.exists():
        rows = scan_days([ft], {"citing_id": pl.String, "cited_id": pl.String, "mentions": pl.Int64})
        rows = rows.join(ids.lazy(), on="citing_id", how="semi").collect()
        fulltext = rows.group_by("citing_id", "cited_id").agg(pl.col("mentions").sum())
    if not links.height and (fulltext is None or not fulltext.height):
        return pl.DataFrame(schema=EDGE_SCHEMA)
    return build_edges(links, fulltext)


def _with_codes(edges: pl.DataFrame, nodes: _NodeTable) -> pl.DataFrame:
    """The edges between nodes, with their ``(src, dst, via)`` codes as columns ``_s, _d, _v``."""
    src, dst = nodes.code(edges["citing_id"]), nodes.code(edges["cited_id"])
    via = edges["via"].replace_strict({v: i for i, v in enumerate(VIA_ORDER)}, return_dtype=pl.Int32)
    coded = edges.cast(EDGE_SCHEMA).with_columns(
        pl.Series("_s", src, pl.Int64), pl.Series("_d", dst, pl.Int64), via.alias("_v")
    )
    return coded.filter((pl.col("_s") >= 0) & (pl.col("_d") >= 0))


def _built_rows(
    store: Store, day: str, decided: pl.DataFrame, nodes: _NodeTable
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A day built from its inputs: (edges with codes, link hashes)."""
    links = _day_links(store, day, decided)
    return _with_codes(day_edges(store, day, decided, links), nodes), _link_hashes(links)


def _patched_rows(
    store: Store,
    day: str,
    decided: pl.DataFrame,
    nodes: _NodeTable,
    is_node: np.ndarray,
    old_run: str,
    moved: pl.Series | None,
) -> tuple[pl.DataFrame, pl.DataFrame, bool]:
    """A day whose own inputs did not change, from its stored rows: those of the papers it still
    decides, between nodes, are kept; the papers whose link rows (by hash) changed or whose full
    text names a paper that became or stopped being a node (one of ``moved``: None when the
    plan's ``naming`` days leave it out) are built again. The rows are still sorted
    (the last item says so) when none was built again."""
    links = _day_links(store, day, decided)
    hashes = _link_hashes(links)
    old_hashes = pl.read_ipc(_day_file(store, day, old_run, "links.arrow"), memory_map=False)
    redo = pl.concat(
        [
            hashes.join(old_hashes, on=["citing_id", "h"], how="anti")["citing_id"],
            old_hashes.join(hashes, on=["citing_id", "h"], how="anti")["citing_id"],
        ]
    )
    ft = store.partition_dir(FULLTEXT_IDS, day) / "part-0.parquet"
    if ft.exists() and moved is not None and len(moved):
        names = scan_days([ft], {"citing_id": pl.String, "cited_id": pl.String}).filter(
            pl.col("cited_id").is_in(moved.implode())
        )
        redo = pl.concat([redo, names.collect()["citing_id"]])
    ids = decided["id"]
    redo = redo.unique()
    redo = redo.filter(redo.is_in(ids.implode()))
    old = pl.read_parquet(_day_file(store, day, old_run, "parquet"))
    codes = np.load(_day_file(store, day, old_run, "npy"))
    keep = is_node[codes[:, 0]] & is_node[codes[:, 1]]
    old = old.with_columns(
        pl.Series("_s", codes[:, 0], pl.Int64), pl.Series("_d", codes[:, 1], pl.Int64),
        pl.Series("_v", codes[:, 2], pl.Int32),
    ).filter(pl.Series(keep) & pl.col("citing_id").is_in(ids.implode()) & ~pl.col("citing_id").is_in(redo.implode()))  # fmt: skip
    if len(redo):
        again = decided.filter(pl.col("id").is_in(redo.implode()))
        mine = links.filter(pl.col("citing_id").is_in(redo.implode()))
        old = pl.concat([old, _with_codes(day_edges(store, day, again, mine), nodes)])
    return old, hashes, not len(redo)


def _write_day(
    store: Store, day: str, run: str, edges: pl.DataFrame, hashes: pl.DataFrame, ordered: bool = False
) -> None:
    """The run's files of a day (published by :func:`finish_graph`); ``ordered``: the edges are
    sorted by (citing_id, cited_id) already."""
    edges = edges if ordered else edges.sort("citing_id", "cited_id")
    with atomic_path(_day_file(store, day, run, "parquet")) as tmp:
        edges.select(list(EDGE_SCHEMA)).write_parquet(tmp, compression="zstd", statistics=True)
    codes = edges.select("_s", "_d", "_v").to_numpy().astype(np.int32).reshape(-1, 3)
    with atomic_path(_day_file(store, day, run, "npy")) as tmp, open(tmp, "wb") as fh:
        np.save(fh, codes)
    with atomic_path(_day_file(store, day, run, "links.arrow")) as tmp:
        hashes.sort("citing_id").write_ipc(tmp, compression="uncompressed")


# --------------------------------------------------------------------------- finish


def _is_node(nodes: _NodeTable) -> np.ndarray:
    is_node = np.zeros(nodes.next_code, dtype=bool)
    is_node[nodes.codes] = True
    return is_node


def _graph_codes(store: Store, is_node: np.ndarray, files: dict[str, str]) -> np.ndarray:
    """The ``(src, dst, via)`` code rows of every day's edges between nodes (``files``: day ->
    the run that built it; a day built before its citation_links caught up may still name a
    node that left)."""
    parts = [np.load(_day_file(store, day, run, "npy")) for day, run in sorted(files.items())]
    rows = np.concatenate(parts) if parts else np.zeros((0, 3), np.int32)
    return rows[is_node[rows[:, 0]] & is_node[rows[:, 1]]]


def _publish(store: Store, day: str, run: str) -> None:
    """``edges-<day>.parquet`` becomes the day's edges as built by ``run`` (a hard link, or a copy
    where the file system has none); a day without edges has no file."""
    path, built = edge_file(store, day), _day_file(store, day, run, "parquet")
    if pl.scan_parquet(built).select(pl.len()).collect().item() == 0:
        path.unlink(missing_ok=True)
        return
    with atomic_path(path) as tmp:
        try:
            os.link(built, tmp)
        except OSError:
            shutil.copyfile(built, tmp)


class _Degrees:
    """In- and out-degree of every node code and the edges of each ``via``, over the code rows of
    every day (all of them: a row's ends are checked against the nodes when it is used)."""

    def __init__(self, k_in: np.ndarray, k_out: np.ndarray, via: np.ndarray):
        self.k_in, self.k_out, self.via = k_in, k_out, via

    @classmethod
    def of(cls, rows: np.ndarray, n: int) -> _Degrees:
        d = cls(np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(len(VIA_ORDER), np.int64))
        d.add(rows, 1)
        return d

    def add(self, rows: np.ndarray, sign: int) -> None:
        n = len(self.k_in)
        self.k_in += sign * np.bincount(rows[:, 1], minlength=n)[:n]
        self.k_out += sign * np.bincount(rows[:, 0], minlength=n)[:n]
        self.via += sign * np.bincount(rows[:, 2], minlength=len(VIA_ORDER))

    def grown(self, n: int) -> _Degrees:
        pad = max(0, n - len(self.k_in))
        return _Degrees(np.pad(self.k_in, (0, pad)), np.pad(self.k_out, (0, pad)), self.via)

    def exact_for(self, is_node: np.ndarray) -> bool:
        """Whether every row counted has both ends nodes (else the rows must be read to drop them)."""
        n = min(len(self.k_in), len(is_node))
        used = (self.k_in[:n] != 0) | (self.k_out[:n] != 0)
        return bool(is_node[:n][used].all()) and not (self.k_in[n:].any() or self.k_out[n:].any())

    def save(self, sdir: Path, run: str) -> str:
        name = f"degrees-{run}.npz"
        np.savez(sdir / name, k_in=self.k_in, k_out=self.k_out, via=self.via)
        return name

    @classmethod
    def load(cls, sdir: Path, name: str) -> _Degrees:
        with np.load(sdir / name) as z:
            return cls(z["k_in"], z["k_out"], z["via"])


def _draw_degrees(plot: Path, is_node: np.ndarray, k_in: np.ndarray, k_out: np.ndarray) -> None:
    atomic_write_bytes(plot, degree_plot_from(k_in[is_node], k_out[is_node]))


def _counts(is_node: np.ndarray, degrees: _Degrees) -> dict:
    """The Table 2 numbers that follow from the degrees: nodes, edges, mean degree, isolated share."""
    k_in, k_out = degrees.k_in[is_node], degrees.k_out[is_node]
    n, e = int(is_node.sum()), int(k_out.sum())
    out: dict = {"nodes": n, "edges": e}
    if n:
        out.update({"mean_degree": 2.0 * e / n, "isolated_share": float(np.mean((k_in == 0) & (k_out == 0)))})
    return out


def _whole_graph_due(old: dict | None, counts: dict) -> bool:
    """Whether this run computes the statistics that need every edge again (module docstring)."""
    at = (old or {}).get("whole_graph_at")
    if not at or counts["edges"] < WHOLE_GRAPH_ALWAYS:
        return True
    return any(abs(counts[k] - at[k]) > WHOLE_GRAPH_REFRESH * max(at[k], 1) for k in ("nodes", "edges"))


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
            degrees = _Degrees.load(sdir, state["degrees"])
            _draw_degrees(plot, _is_node(_NodeTable.load(sdir, state["nodes"])), degrees.k_in, degrees.k_out)
        return {**state["summary"], "mode": "unchanged", "days_built": 0}
    c0 = time.process_time()
    for day in plan["gone"]:
        edge_file(store, day).unlink(missing_ok=True)
    if plan["mode"] == "full":  # files of an older layout or state that the plan does not name
        (_root(store) / "part-0.parquet").unlink(missing_ok=True)
        for path in _root(store).glob("edges-*.parquet"):
            if path.name.removeprefix("edges-").removesuffix(".parquet") not in plan["fingerprints"]:
                path.unlink(missing_ok=True)
    old_files = dict(state["days"]) if state is not None and plan["mode"] == "incremental" else {}
    files = {d: r for d, r in old_files.items() if d not in plan["gone"]}
    files.update({d: plan["run"] for d in plan["days"]})
    for day in plan["days"]:
        _publish(store, day, plan["run"])
    is_node = _is_node(_NodeTable.load(sdir, plan["tables"]["nodes"]))
    rows = None
    if old_files:  # the degrees move by the rows of the days built or gone, old out and new in
        degrees = _Degrees.load(sdir, state["degrees"]).grown(len(is_node))
        for day in [*plan["days"], *plan["gone"]]:
            if day in old_files:
                degrees.add(np.load(_day_file(store, day, old_files[day], "npy")), -1)
            if day in plan["days"]:
                degrees.add(np.load(_day_file(store, day, plan["run"], "npy")), 1)
        if not degrees.exact_for(is_node):  # a row names a node that left: count from the rows
            rows = _graph_codes(store, is_node, files)
            degrees = _Degrees.of(rows, len(is_node))
    else:
        rows = _graph_codes(store, is_node, files)
        degrees = _Degrees.of(rows, len(is_node))
    summary = _counts(is_node, degrees)
    if summary["nodes"]:
        old = state["summary"] if state is not None and plan["mode"] == "incremental" else None
        if _whole_graph_due(old, summary):
            rows = rows if rows is not None else _graph_codes(store, is_node, files)
            whole = table2(is_node, rows[:, 0], rows[:, 1])
            summary.update({k: whole[k] for k in WHOLE_GRAPH_STATS})
            summary["whole_graph_at"] = {"nodes": summary["nodes"], "edges": summary["edges"]}
        else:
            summary.update({k: old[k] for k in (*WHOLE_GRAPH_STATS, "whole_graph_at")})
        if plot is not None:
            _draw_degrees(plot, is_node, degrees.k_in, degrees.k_out)
    summary["via"] = {v: int(n) for v, n in zip(VIA_ORDER, degrees.via, strict=True) if n}
    del rows
    summary["stats_cpu_s"] = round(time.process_time() - c0, 3)
    new_state = {
        "version": VERSION,
        "code": GRAPH_VERSION,
        "fingerprints": plan["fingerprints"],
        "summary": summary,
        "days": files,
        "degrees": degrees.save(sdir, plan["run"]),
        **plan["tables"],
    }
    atomic_write_bytes(sdir / "state.json", json.dumps(new_state, sort_keys=True).encode())
    (sdir / "plan.json").unlink(missing_ok=True)
    keep = {"state.json", "days", new_state["degrees"], *plan["tables"].values()}
    remove_paths([p for p in sdir.iterdir() if p.name not in keep])
    live = {f"{d}-{r}" for d, r in files.items()}
    remove_paths([p for p in (sdir / "days").glob("*") if p.name.split(".", 1)[0] not in live])
    return {**summary, "mode": plan["mode"], "days_built": len(plan["days"])}


def update_graph(home: str | Path, plot: Path | None = None) -> dict:
    """Plan, build and finish in one call (the Dagster asset runs the build in parallel steps)."""
    plan_graph(home)
    build_days(home)
    return finish_graph(home, plot)
