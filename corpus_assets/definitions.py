"""The one Definitions object of the ``corpus`` code location."""

from __future__ import annotations

import dagster as dg

from corpus_assets import bulk, citeworth, files, graph, ingest, papers, parse, pes2o
from corpus_assets.deployment import build_pipes_resource, executor_def
from corpus_assets.jobs import all_jobs
from resources.arxiv import ArxivResource
from resources.grobid import GrobidResource
from resources.store import CorpusStore
from sensors.endpoint import arxiv_endpoint_sensor
from sensors.landing import landing_oai_sensor


def build_resources() -> dict:
    """Resources from the environment (CORPUS_HOME, CORPUS_LANDING, CORPUS_SOURCE ...)."""
    return {
        "corpus": CorpusStore.from_env(),
        "arxiv": ArxivResource.from_env(),
        "grobid": GrobidResource(),
        "pipes": build_pipes_resource(),  # heavy stages run as Pipes workers (CORPUS_DEPLOYMENT)
    }


defs = dg.Definitions(
    assets=dg.load_assets_from_modules([ingest, files, parse, papers, graph, pes2o, citeworth, bulk]),
    asset_checks=dg.load_asset_checks_from_modules([citeworth]),
    jobs=[*all_jobs, bulk.bulk_index_job],
    sensors=[landing_oai_sensor, arxiv_endpoint_sensor],
    resources=build_resources(),
    executor=executor_def(),  # in process by default; CORPUS_EXECUTOR=celery|k8s for steps across machines
)
