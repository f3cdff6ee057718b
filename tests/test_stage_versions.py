"""Every asset's code version is its stage's version constant, read where the stage owns it."""

from __future__ import annotations

import importlib

import pytest

from corpus import versions


@pytest.mark.parametrize("asset", sorted(versions.STAGES))
def test_the_version_read_from_source_is_the_one_the_module_holds(asset: str):
    """The code server reads the constants from source (it must not import the parsers);
    what it reads is what the stage itself writes into its partitions' provenance."""
    path, name = versions.STAGES[asset]
    module = importlib.import_module(versions.module_name(asset))
    assert getattr(module, name) == versions.code_version(asset)


def test_every_asset_of_the_definitions_declares_its_stage_version():
    from corpus_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    declared = {k.to_user_string(): graph.get(k).code_version for k in graph.get_all_asset_keys()}
    assert declared == {a: versions.code_version(a) for a in declared}
    assert set(declared) == set(versions.STAGES)


def test_the_latex_parser_version_keeps_its_name():
    from corpus.parse.latex import PARSER_VERSION

    assert versions.code_version("latex_parses") == PARSER_VERSION


def test_an_unknown_asset_is_a_clear_error():
    with pytest.raises(KeyError, match="corpus.versions.STAGES"):
        versions.code_version("no_such_asset")
