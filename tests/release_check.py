"""Does every cross-day asset's own record of what it read name every built day of its inputs,
with that day's current content? (the release manifests, the state of the links and the graph).
Shared by the race tests and the daemon test."""

from __future__ import annotations

import json

from corpus.store import Store, partition_fingerprint


def releases_read_every_day(store: Store) -> dict[str, bool]:
    from corpus.graph import citation_graph, citation_links
    from corpus.graph.deliveries import same_content
    from corpus.release.citeworth_release import _inputs as citeworth_inputs
    from corpus.release.pes2o_release import release_dir
    from corpus.release.settings import DEFAULT_CUTOFF

    out = {}
    want = {d: partition_fingerprint(store.partition_dir("pes2o", d)) for d in store.partitions("pes2o")}
    want = {d: fp for d, fp in want.items() if d <= DEFAULT_CUTOFF}
    for version in ("v1", "v2"):
        manifest = json.loads((release_dir(store.home, version) / "manifest.json").read_text())
        out[f"pes2o_{version}"] = manifest["inputs"] == want and bool(want)
    manifest = json.loads((store.home / "releases" / "citeworth" / "manifest.json").read_text())
    out["citeworth_splits"] = manifest["inputs"] == citeworth_inputs(store)
    links_state = json.loads(
        (store.asset_dir("citation_links") / "_state" / "shard-0" / "state.json").read_text()
    )["fingerprints"]
    now = citation_links.fingerprints(store)
    out["citation_links"] = set(links_state) == set(now) and all(
        same_content(links_state[d], now[d]) for d in now
    )
    graph_state = json.loads((store.asset_dir("citation_graph") / "_state" / "state.json").read_text())[
        "fingerprints"
    ]
    now = citation_graph._fingerprints(store, {})
    out["citation_graph"] = set(graph_state) == set(now) and all(
        same_content(graph_state[d], now[d]) for d in now
    )
    return out
