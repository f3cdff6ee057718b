"""The DuckDB views over the store (Store.refresh_views): made once per asset, in a child
process, and never failing a run when DuckDB is held by someone else."""

from __future__ import annotations

import logging

import duckdb
import polars as pl

from corpus.store import Store


def test_views_are_made_in_a_child_read_new_days_and_survive_a_held_lock(tmp_path, caplog):
    store = Store(tmp_path / "data")
    store.write_partition("papers", "2024-01-01", pl.DataFrame({"id": ["a", "b"]}))
    db = store.refresh_views(["papers"])
    assert db == store.views_db()
    store.write_partition("papers", "2024-01-02", pl.DataFrame({"id": ["c"]}))
    assert store.refresh_views(["papers"]) == db  # made once: the marker stands
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.sql("select count(*) from papers").fetchone() == (3,)  # the new day, read at query time

    store.write_partition("bib_entries", "2024-01-01", pl.DataFrame({"entry_id": ["e1"]}))
    holder = duckdb.connect(str(db))  # a user's shell holds the database for writing
    try:
        with caplog.at_level(logging.WARNING, logger="corpus.store"):
            assert store.refresh_views(["bib_entries"]) is None
        assert "views of" in caplog.text and "not created" in caplog.text
    finally:
        holder.close()
    assert store.refresh_views(["bib_entries"]) == db  # tried again on the next call
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.sql("select count(*) from bib_entries").fetchone() == (1,)
