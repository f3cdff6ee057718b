"""The one Definitions object of the ``corpus`` code location.

Loading it imports no data library (polars, numpy, the parsers): the asset modules import the
``corpus`` stages inside the asset bodies, so the code server, which only describes the assets,
stays ~50 MB smaller and loads in ~0.6 s instead of ~0.8 (tests/test_layers.py holds this).
"""

from __future__ import annotations

import dagster as dg

from corpus.versions import code_version
from corpus_assets import bulk, citeworth, files, graph, ingest, papers, parse, pes2o
from corpus_assets.common import OWNERS
from corpus_assets.deployment import build_pipes_resource, deployment, executor_def
from corpus_assets.freshness import up_to_date_check
from corpus_assets.jobs import DAILY_ASSETS, UNPARTITIONED_ASSETS, all_jobs
from corpus_assets.rederive_plan import code_check, daily_graph
from corpus_assets.run_monitoring import pool_slots
from resources.arxiv import ArxivResource
from resources.grobid import GrobidResource
from resources.store import CorpusStore
from sensors.cross_day import build_catch_up_sensor
from sensors.endpoint import arxiv_endpoint_sensor
from sensors.landing import landing_oai_sensor
from sensors.rederive import build_rederive_sensor, corpus_code_versions
from sensors.rest_of_day import build_rest_of_day_sensor


def build_resources() -> dict:
    """Resources from the environment (CORPUS_HOME, CORPUS_LANDING, CORPUS_SOURCE ...)."""
    return {
        "corpus": CorpusStore.from_env(),
        "arxiv": ArxivResource.from_env(),
        "grobid": GrobidResource(),
        "pipes": build_pipes_resource(),  # heavy stages run as Pipes workers (CORPUS_DEPLOYMENT)
    }


BUILT_DAYS = "FAILED,MATERIALIZED,MATERIALIZING"  # the Partitions tab's status filter without "missing"


def built_days_hint(name: str) -> str:
    """Where a daily asset's built days are: its Partitions tab lists every day since the first
    partition, built or not (7,000+ for all of arXiv), newest first."""
    return (
        f"\n\nBuilt days: the [Partitions tab without missing days](/assets/{name}?view=partitions"
        f"&status={BUILT_DAYS}) (or untick *Missing* there)."
    )


def with_owners_and_version(spec: dg.AssetSpec) -> dg.AssetSpec:
    """Each asset's owners and code version (its stage's, corpus.versions: recorded on every
    materialisation); daily ones also say where their built days are listed. No automation
    condition: the sensors ask for every run, as runs of the project's jobs (corpus_assets.jobs)."""
    name = spec.key.to_user_string()
    spec = spec.replace_attributes(owners=OWNERS, code_version=code_version(name))
    if name in DAILY_ASSETS:
        spec = spec.replace_attributes(description=(spec.description or "") + built_days_hint(name))
    return spec


assets = dg.with_source_code_references(
    dg.map_asset_specs(
        with_owners_and_version,
        dg.load_assets_from_modules([ingest, files, parse, papers, graph, pes2o, citeworth, bulk]),
    )
)


def cross_day_reads(assets_defs) -> dict[str, list[str]]:
    """What each cross-day asset reads (its deps: the lineage is the truth), in job order."""
    deps = {
        key.to_user_string(): sorted(k.to_user_string() for k in a.asset_deps[key])
        for a in assets_defs
        for key in a.keys
    }
    return {name: deps[name] for name in UNPARTITIONED_ASSETS}


READS = cross_day_reads(assets)
DAILY = daily_graph(assets)  # what each daily asset reads, and the multi-assets' tables (make rederive)


def deployment_sensors() -> list[dg.SensorDefinition]:
    """Under docker compose, the sensor that removes finished runs' containers."""
    if deployment() != "docker":
        return []
    from sensors.containers import docker_container_cleanup

    return [docker_container_cleanup]


defs = dg.Definitions(
    assets=assets,
    asset_checks=[
        *dg.load_asset_checks_from_modules([citeworth]),
        *(up_to_date_check(asset, READS) for asset in READS),
        *(code_check(asset) for asset in DAILY_ASSETS),
    ],
    jobs=[*all_jobs, bulk.bulk_index_job],
    sensors=[
        landing_oai_sensor,
        arxiv_endpoint_sensor,
        build_rest_of_day_sensor(DAILY),
        build_catch_up_sensor(READS),
        corpus_code_versions,
        build_rederive_sensor(DAILY),
        pool_slots,
        *deployment_sensors(),
    ],
    resources=build_resources(),
    executor=executor_def(),  # in process by default; CORPUS_EXECUTOR=celery|k8s for steps across machines
)
