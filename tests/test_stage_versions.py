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


def test_a_stage_whose_output_changed_has_a_new_version_and_the_record_says_so():
    """What each stage makes of the real files in ../shared equals the record, at the version
    the record names (tests/stage_outputs.py). An output change without a version bump would
    leave every existing corpus with the old rows for ever (nothing re-derives them). A stage
    whose inputs changed is not held to it (its rows follow its inputs: existing corpora
    re-derive it because its inputs' content changed); its own code change is then told only
    by its author."""
    from stage_outputs import current, recorded

    from corpus.provenance import upstream_closure
    from corpus_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    deps = {
        k.to_user_string(): [p.to_user_string() for p in graph.get(k).parent_keys]
        for k in graph.get_all_asset_keys()
    }
    upstream = upstream_closure(deps)
    now, record = current(), recorded()
    changed = {a for a, found in now.items() if found["fingerprint"] != record.get(a, {}).get("fingerprint")}
    problems = []
    for asset, found in sorted(now.items()):
        was = record.get(asset)
        module, name = versions.STAGES[asset]
        if was is None:
            problems.append(f"{asset}: not in the record")
        elif asset in changed and found["version"] == was["version"] and not (upstream[asset] & changed):
            problems.append(
                f"{asset}: its output on the real files changed but its version did not: bump {name} "
                f"in corpus/{module}, then run `python tests/stage_outputs.py --update`"
            )
        elif found != was:
            problems.append(
                f"{asset}: version {found['version']} (record: {was['version']}), output "
                f"{'changed' if asset in changed else 'the same'}: run `python tests/stage_outputs.py "
                "--update` and commit the record with the change"
            )
    assert not problems, "\n".join(problems)
