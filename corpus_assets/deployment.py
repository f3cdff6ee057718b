"""Where the pipeline runs, chosen by settings, never by code changes (DESIGN.md §4).

``CORPUS_DEPLOYMENT=local|docker|k8s`` picks how heavy stages run through Dagster Pipes
(a subprocess, a container via ``PipesDockerClient``, a pod via ``PipesK8sClient``): the
worker (:mod:`corpus_assets.worker`) is the same in all three. ``CORPUS_EXECUTOR=
inprocess|celery|k8s`` picks how the steps of a run are spread: in process (the default;
the multiprocess executor costs 3-4 s a step here), over Celery workers (Redis broker) or
one Kubernetes job per step. The instance side (storage, run launcher) lives in
``dagster.yaml`` (local), ``docker/dagster.yaml`` (compose) and ``docker/k8s/`` (Helm).

The heavy assets call :func:`run_stage`; the Definitions take :func:`build_pipes_resource`
under the key ``pipes`` and :func:`executor_def` as their executor.

Each integration is an optional extra of the package (``docker``, ``k8s``, ``celery``,
``postgres``): it is imported only when a setting asks for it (:func:`integration`), so the
Definitions load on a base install, and a missing extra is an error naming what to install.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import dagster as dg
import yaml
from pydantic import BaseModel, ConfigDict, Field

from corpus_assets.worker import StageRequest, run_request

Deployment = Literal["local", "docker", "k8s", "inprocess"]
ExecutorKind = Literal["inprocess", "celery", "k8s"]
DEPLOYMENTS: tuple[str, ...] = ("local", "docker", "k8s", "inprocess")
EXECUTORS: tuple[str, ...] = ("inprocess", "celery", "k8s")
REPO = Path(__file__).resolve().parents[1]
WORKER_MODULE = "corpus_assets.worker"
WORKER_LABEL = (
    "io.corpus.pipes-worker"  # on every worker container: `docker container prune --filter label=...`
)
CALL_LABEL = "io.corpus.pipes-call"  # one Pipes call's container, removed when the call ends
RUN_ID_LABEL = "dagster/run_id"  # the run a container works for (DockerRunLauncher sets it on runs)
NO_HEALTHCHECK = {"test": ["NONE"]}  # workers and run containers: no health check, whatever the image says
STDERR_TAIL_LINES = 40
# Settings the worker reads itself, passed on to its container or pod (a subprocess inherits them).
WORKER_SETTINGS = ("CORPUS_PAPER_TIMEOUT_S",)
# The optional extra that installs each integration (pyproject.toml).
EXTRAS = {
    "dagster_docker": "docker",
    "dagster_k8s": "k8s",
    "dagster_celery": "celery",
    "dagster_postgres": "postgres",
}


def integration(module: str, needed_by: str) -> ModuleType:
    """Import a deployment integration, or fail with the ``pip install`` of its extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = EXTRAS[module.split(".")[0]]
        raise ImportError(
            f"{needed_by} needs `pip install 'corpus[{extra}]'` (from a checkout: "
            f"pip install -e '.[{extra}]'); {module} could not be imported: {exc}"
        ) from exc


def _choice(name: str, allowed: Sequence[str], default: str, env: Mapping[str, str] | None) -> str:
    value = (env if env is not None else os.environ).get(name, "").strip() or default
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(allowed)}")
    return value


def deployment(env: Mapping[str, str] | None = None) -> Deployment:
    """``CORPUS_DEPLOYMENT`` (default ``local``); anything else is a clear error."""
    return _choice("CORPUS_DEPLOYMENT", DEPLOYMENTS, "local", env)  # type: ignore[return-value]


def executor_kind(env: Mapping[str, str] | None = None) -> ExecutorKind:
    """``CORPUS_EXECUTOR`` (default ``inprocess``)."""
    return _choice("CORPUS_EXECUTOR", EXECUTORS, "inprocess", env)  # type: ignore[return-value]


class DeploymentSettings(BaseModel):
    """Every knob of the three deployments, from the environment (names in ``from_env``).

    Paths: the worker sees the data root and the landing zone at the same paths as the
    code that launches it (``home``/``landing``); containers and pods mount the volumes /
    claims there, so stage params never need rewriting.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    deployment: Deployment = "local"
    executor: ExecutorKind = "inprocess"
    home: str = "./data"
    landing: str = "./landing"
    python: str = Field(default=sys.executable, description="local: the worker's interpreter")
    worker_image: str = "corpus:latest"
    docker_network: str = "corpus"
    home_volume: str = "corpus_data"
    landing_volume: str = "corpus_landing"
    k8s_namespace: str = "corpus"
    k8s_home_claim: str = "corpus-data"
    k8s_landing_claim: str = "corpus-landing"
    k8s_service_account: str | None = None
    k8s_worker_cpu: str = "1"
    k8s_worker_memory: str = "2Gi"
    k8s_max_concurrent: int = Field(default=8, ge=1)
    celery_broker: str = "redis://redis:6379/0"
    celery_backend: str = "redis://redis:6379/1"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DeploymentSettings:
        env = dict(os.environ if env is None else env)
        names = {
            "home": "CORPUS_HOME",
            "landing": "CORPUS_LANDING",
            "worker_image": "CORPUS_WORKER_IMAGE",
            "docker_network": "CORPUS_DOCKER_NETWORK",
            "home_volume": "CORPUS_HOME_VOLUME",
            "landing_volume": "CORPUS_LANDING_VOLUME",
            "k8s_namespace": "CORPUS_K8S_NAMESPACE",
            "k8s_home_claim": "CORPUS_K8S_HOME_CLAIM",
            "k8s_landing_claim": "CORPUS_K8S_LANDING_CLAIM",
            "k8s_service_account": "CORPUS_K8S_SERVICE_ACCOUNT",
            "k8s_worker_cpu": "CORPUS_K8S_WORKER_CPU",
            "k8s_worker_memory": "CORPUS_K8S_WORKER_MEMORY",
            "k8s_max_concurrent": "CORPUS_K8S_MAX_CONCURRENT",
            "celery_broker": "CORPUS_CELERY_BROKER",
            "celery_backend": "CORPUS_CELERY_BACKEND",
        }
        values: dict[str, Any] = {k: env[v] for k, v in names.items() if env.get(v)}
        if "worker_image" not in values and env.get("DAGSTER_CURRENT_IMAGE"):
            values["worker_image"] = env["DAGSTER_CURRENT_IMAGE"]  # the code location's own image
        return cls(deployment=deployment(env), executor=executor_kind(env), **values)


# ---------------------------------------------------------------- Pipes clients


class _KeepsHandler:
    """A message reader that remembers its last session's handler, so :func:`run_stage`
    can read the worker's error report even when the client raises."""

    last_handler = None

    @contextmanager
    def read_messages(self, handler):
        self.last_handler = handler
        with super().read_messages(handler) as params:  # type: ignore[misc]
            yield params


class TempFileReader(_KeepsHandler, dg.PipesTempFileMessageReader):
    pass


class WorkerExited(RuntimeError):
    """A Pipes worker process ended with a non-zero exit code (the message has its stderr's tail)."""


class StderrTailSubprocessClient(dg.PipesSubprocessClient):
    """``PipesSubprocessClient`` that forwards the worker's stderr and keeps its tail, so a
    failure (even a crash before Pipes opens) is raised with what the worker said."""

    def run(  # type: ignore[override]
        self,
        *,
        context: dg.OpExecutionContext | dg.AssetExecutionContext,
        extras: dict | None = None,
        command: str | Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> dg.PipesClientCompletedInvocation:
        with dg.open_pipes_session(
            context=context,
            context_injector=self.context_injector,
            message_reader=self.message_reader,
            extras=extras,
        ) as session:
            process = subprocess.Popen(
                command,
                cwd=cwd or self.cwd,
                env={**os.environ, **self.env, **(env or {}), **session.get_bootstrap_env_vars()},
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
            )
            tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
            pump = threading.Thread(target=_pump, args=(process.stderr, tail), daemon=True)
            pump.start()
            try:
                process.wait()  # an interrupt ends it at once (corpus.parallel.interrupts_end_waits)
            except dg.DagsterExecutionInterruptedError:
                context.log.info("[pipes] interrupted: sending SIGINT to the worker")
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=self.termination_timeout_seconds)
                except subprocess.TimeoutExpired:
                    context.log.warning("[pipes] the worker did not stop after SIGINT: killed")
                    process.kill()
                    process.wait()
                raise
            finally:
                pump.join(timeout=10)
            if process.returncode != 0:
                raise WorkerExited(
                    f"worker exited with code {process.returncode}; stderr tail:\n" + "".join(tail)
                )
        return dg.PipesClientCompletedInvocation(session)


class _RemovesContainers:
    """``PipesDockerClient`` that removes the worker container once it has ended and its logs
    were read (the client only stops it: exited workers piled up and held the volumes, so
    ``docker compose down -v`` failed). Each call labels its container with a fresh id and
    removes what carries that label, whatever the outcome."""

    def run(self, *, container_kwargs: Mapping[str, Any] | None = None, **kwargs):  # type: ignore[override]
        import uuid

        import docker

        call = uuid.uuid4().hex
        container_kwargs = dict(container_kwargs or {})
        container_kwargs["labels"] = {**container_kwargs.get("labels", {}), CALL_LABEL: call}
        try:
            return super().run(container_kwargs=container_kwargs, **kwargs)  # type: ignore[misc]
        finally:
            client = docker.from_env()
            try:
                for container in client.containers.list(all=True, filters={"label": f"{CALL_LABEL}={call}"}):
                    container.remove(force=True)
            finally:
                client.close()


def _pump(stream, tail: deque) -> None:
    for line in stream:
        tail.append(line)
        sys.stderr.write(line)
    stream.close()


def pipes_client(settings: DeploymentSettings | None = None) -> dg.PipesClient:
    """The Pipes client of the deployment. Constructing it never contacts Docker or Kubernetes."""
    settings = settings or DeploymentSettings.from_env()
    if settings.deployment in ("inprocess", "local"):  # inprocess: built, never launched
        return StderrTailSubprocessClient(cwd=str(REPO), message_reader=TempFileReader())
    if settings.deployment == "docker":
        docker = integration("dagster_docker", "CORPUS_DEPLOYMENT=docker (Pipes containers)")
        reader = type("DockerLogsReader", (_KeepsHandler, docker.PipesDockerLogsMessageReader), {})()
        client_class = type("RemovingPipesDockerClient", (_RemovesContainers, docker.PipesDockerClient), {})
        return client_class(message_reader=reader)
    k8s = integration("dagster_k8s", "CORPUS_DEPLOYMENT=k8s (Pipes pods)")
    reader = type("K8sLogsReader", (_KeepsHandler, k8s.PipesK8sPodLogsMessageReader), {})()
    return k8s.PipesK8sClient(message_reader=reader)


def build_pipes_resource() -> dg.PipesClient:
    """The resource under the key ``pipes`` (a Pipes client is a resource as it is)."""
    return pipes_client()


def worker_command(settings: DeploymentSettings) -> list[str]:
    python = settings.python if settings.deployment == "local" else "python"
    return [python, "-m", WORKER_MODULE]


def launch_kwargs(
    client: dg.PipesClient, settings: DeploymentSettings, run_id: str | None = None
) -> dict[str, Any]:
    """What ``client.run`` needs besides ``context`` and ``extras``, per kind of client.
    ``run_id`` labels the worker container or pod with its run (an orphan of a dead run is
    found by it: sensors/containers.py)."""
    labels = {WORKER_LABEL: "1", **({RUN_ID_LABEL: run_id} if run_id else {})}
    command = worker_command(settings)
    env = {"CORPUS_HOME": settings.home, "CORPUS_LANDING": settings.landing, "PYTHONUNBUFFERED": "1"}
    env.update({name: os.environ[name] for name in WORKER_SETTINGS if os.environ.get(name)})
    if isinstance(client, dg.PipesSubprocessClient):
        return {"command": command, "env": env}
    # a client of one integration never needs the other installed: look only at loaded modules
    docker, k8s = sys.modules.get("dagster_docker"), sys.modules.get("dagster_k8s")
    if docker is not None and isinstance(client, docker.PipesDockerClient):
        return {
            "image": settings.worker_image,
            "command": command,
            "env": env,
            "container_kwargs": {
                "volumes": {
                    settings.home_volume: {"bind": settings.home, "mode": "rw"},
                    settings.landing_volume: {"bind": settings.landing, "mode": "rw"},
                },
                "network": settings.docker_network,  # Grobid is reached by its service name
                "labels": labels,
                "healthcheck": NO_HEALTHCHECK,
            },
        }
    if k8s is not None and isinstance(client, k8s.PipesK8sClient):
        return {
            "image": settings.worker_image,
            "command": command,
            "namespace": settings.k8s_namespace,
            "env": env,
            "base_pod_meta": {"labels": labels},
            "base_pod_spec": k8s_worker_pod_spec(settings),
        }
    raise TypeError(f"no launch settings for a {type(client).__name__}")


def k8s_worker_pod_spec(settings: DeploymentSettings) -> dict[str, Any]:
    """The worker pod: the data and landing claims mounted at the same paths, non-root, bounded."""
    spec: dict[str, Any] = {
        "restart_policy": "Never",
        "security_context": {"run_as_non_root": True, "run_as_user": 10001, "fs_group": 10001},
        "volumes": [
            {"name": "corpus-data", "persistent_volume_claim": {"claim_name": settings.k8s_home_claim}},
            {"name": "corpus-landing", "persistent_volume_claim": {"claim_name": settings.k8s_landing_claim}},
        ],
        "containers": [
            {
                "name": "dagster-pipes-execution",
                "volume_mounts": [
                    {"name": "corpus-data", "mount_path": settings.home},
                    {"name": "corpus-landing", "mount_path": settings.landing},
                ],
                "resources": {
                    "requests": {"cpu": settings.k8s_worker_cpu, "memory": settings.k8s_worker_memory},
                    "limits": {"memory": settings.k8s_worker_memory},
                },
            }
        ],
    }
    if settings.k8s_service_account:
        spec["service_account_name"] = settings.k8s_service_account
    return spec


# ---------------------------------------------------------------- running a stage


def paper_workers(context: dg.AssetExecutionContext | dg.OpExecutionContext) -> int:
    """Processes a day's per-paper work may use (PDF probing, unpacking, parsing, peS2o
    signals, CiteWorth paragraphs).

    ``CORPUS_WORKERS`` when set; otherwise the machine's cores shared among the runs that
    run, or soon will, beside this one: a lone run (a new day) gets every core, while a
    backfill's runs, which the queue starts side by side (max_concurrent_runs = cores), get
    one each, so the machine is used fully without oversubscribing it. Runs still starting
    or queued count (up to max_concurrent_runs): the first run of a backfill reaches its
    first per-paper step before the others have started, and alone it would take every core
    (on 64 cores, a pool of 64 processes beside 63 starting runs). The worker caps it again
    by the CPUs its own container or pod may use (corpus.parallel.available_cpus).
    """
    from corpus.parallel import available_cpus

    if os.environ.get("CORPUS_WORKERS", "").strip():
        return max(1, int(os.environ["CORPUS_WORKERS"]))
    cores = available_cpus()
    try:
        busy = runs_side_by_side(context.instance)
    except Exception:  # an ephemeral instance or a storage hiccup: assume this run is alone
        busy = 1
    return max(1, cores // max(1, busy))


def runs_side_by_side(instance: dg.DagsterInstance) -> int:
    """Runs started, starting or queued on ``instance``, at most as many as its run queue runs
    at once."""
    live = [dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.QUEUED]
    runs = instance.get_runs_count(dg.RunsFilter(statuses=live))
    limit = instance.get_concurrency_config().run_queue_config.max_concurrent_runs
    return min(runs, limit) if limit and limit > 0 else runs


class StageFailed(dg.Failure):
    """A worker failed: the message carries its own error report or stderr tail."""


def _errors(messages) -> list[dict]:
    return [m for m in messages if isinstance(m, dict) and m.get("kind") == "error"]


def _worker_errors(client: dg.PipesClient) -> list[dict]:
    handler = getattr(getattr(client, "message_reader", None), "last_handler", None)
    return [] if handler is None else _errors(handler.get_custom_messages())


class _InProcessPipes:
    """What :func:`corpus_assets.worker.run_request` needs of a Pipes context, in the run's own
    process (``CORPUS_DEPLOYMENT=inprocess``: no worker to start per step, about a CPU second
    and 150 MB each; per-paper work still runs in its process pool)."""

    def __init__(self, log) -> None:
        self.log, self.messages = log, []

    def report_custom_message(self, message: dict) -> None:
        self.messages.append(message)


def _stage_failed(request: StageRequest, settings, errors: list[dict], exc: Exception) -> StageFailed:
    detail = "\n".join(f"{e['day']}: {e['error']}\n{e['traceback']}" for e in errors) or str(exc)
    where = "in process" if settings.deployment == "inprocess" else f"in the {settings.deployment} worker"
    return StageFailed(
        description=f"{request.stage} failed {where} for {request.days}:\n{detail}",
        metadata={
            "stage": request.stage,
            "days": ", ".join(request.days),
            "worker_error": dg.MetadataValue.text(detail),
        },
    )


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim`` from the symbols already loaded (no ``find_library``: it runs
    ``ldconfig``), or None (macOS, musl: nothing to call)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def return_free_heap() -> bool:
    """Hand the C heap's free pages back to the kernel; False where there is no glibc.

    glibc returns only the top of its heap by itself; what the run's earlier steps freed below a
    live block (lxml trees, frames of a day's metadata) stays in the process. A run worker then
    idles at that size while its Pipes worker runs the stage: at 1,000 papers a day ~230 MB,
    of which ~60 MB was free heap that this hands back, in a few milliseconds.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def run_stage(
    context: dg.AssetExecutionContext | dg.OpExecutionContext,
    client: dg.PipesClient,
    stage: str,
    days: list[str],
    params: dict,
    settings: DeploymentSettings | None = None,
) -> list[dict]:
    """Run ``corpus.<group>.days.<stage>`` for each day through the Pipes worker.

    Returns the worker's per-day summaries in day order. Raises :class:`StageFailed` with
    the worker's traceback (or stderr tail) when it fails or leaves a day unreported.
    """
    settings = settings or DeploymentSettings.from_env()
    params = dict(params)
    if settings.deployment in ("inprocess", "local"):  # the worker may start elsewhere (cwd): absolute paths
        for key in ("home", "landing"):
            if params.get(key):
                params[key] = str(Path(params[key]).resolve())
    request = StageRequest.model_validate({"stage": stage, "days": list(days), "params": params})
    if settings.deployment == "inprocess":  # the worker's own loop, in the run's process
        pipes = _InProcessPipes(context.log)
        try:
            run_request(request, pipes)
        except Exception as exc:
            raise _stage_failed(request, settings, _errors(pipes.messages), exc) from exc
        messages = pipes.messages
    else:
        return_free_heap()  # this process waits while the worker works: hold no more than it uses
        try:
            invocation = client.run(
                context=context,
                extras=request.model_dump(mode="json"),
                **launch_kwargs(client, settings, context.run.run_id),
            )
        except Exception as exc:
            raise _stage_failed(request, settings, _worker_errors(client), exc) from exc
        messages = invocation.get_custom_messages()
    found = {
        m["day"]: m["summary"]
        for m in messages
        if isinstance(m, dict) and m.get("kind") == "summary" and m.get("stage") == stage
    }
    missing = [d for d in request.days if d not in found]
    if missing:
        raise StageFailed(description=f"{stage}: the worker reported no summary for {missing}")
    return [found[d] for d in request.days]


# ---------------------------------------------------------------- executors


# Celery settings of the run's executor (which sends steps and polls their results) that the
# workers' docker/celery.yaml repeats: a Redis that restarts (kill -9, an upgrade) is waited for
# instead of failing the run. Publishing a step retries for ~2 minutes (dagster_celery's default:
# 3 tries within 1.5 s), reading or storing a result for ~5 (Celery's default: not at all).
CELERY_CONFIG_SOURCE: dict[str, Any] = {
    "broker_transport_options": {
        "max_retries": 30,
        "interval_start": 0,
        "interval_step": 1,
        "interval_max": 5,
    },
    "result_backend_always_retry": True,
    "result_backend_max_retries": 30,
}


def executor_config(kind: ExecutorKind, settings: DeploymentSettings | None = None) -> dict[str, Any]:
    """The executor's config block (``execution: config:`` of a run) for each kind."""
    settings = settings or DeploymentSettings.from_env()
    if kind == "inprocess":
        return {}
    if kind == "celery":
        return {
            "broker": settings.celery_broker,
            "backend": settings.celery_backend,
            "config_source": CELERY_CONFIG_SOURCE,
        }
    if kind == "k8s":
        return {
            "job_namespace": settings.k8s_namespace,
            "max_concurrent": settings.k8s_max_concurrent,
            "env_vars": [f"CORPUS_HOME={settings.home}", f"CORPUS_LANDING={settings.landing}"],
            "volumes": [
                {"name": "corpus-data", "persistent_volume_claim": {"claim_name": settings.k8s_home_claim}},
                {
                    "name": "corpus-landing",
                    "persistent_volume_claim": {"claim_name": settings.k8s_landing_claim},
                },
            ],
            "volume_mounts": [
                {"name": "corpus-data", "mount_path": settings.home},
                {"name": "corpus-landing", "mount_path": settings.landing},
            ],
        }
    raise ValueError(f"unknown executor {kind!r}")


def base_executor(kind: ExecutorKind) -> dg.ExecutorDefinition:
    """The unconfigured executor (the one whose schema a run's ``execution`` block must fit)."""
    if kind == "inprocess":
        return dg.in_process_executor
    if kind == "celery":
        return integration("dagster_celery", "the celery executor (CORPUS_EXECUTOR=celery)").celery_executor
    if kind == "k8s":
        return integration("dagster_k8s", "the k8s executor (CORPUS_EXECUTOR=k8s)").k8s_job_executor
    raise ValueError(f"unknown executor {kind!r}")


def executor_def(
    kind: ExecutorKind | None = None, settings: DeploymentSettings | None = None
) -> dg.ExecutorDefinition:
    """The executor of the Definitions, configured from the settings (runs need no config)."""
    settings = settings or DeploymentSettings.from_env()
    kind = kind or settings.executor
    if kind == "inprocess":
        return dg.in_process_executor
    return base_executor(kind).configured(executor_config(kind, settings), name=base_executor(kind).name)


def executor_run_config(kind: ExecutorKind, settings: DeploymentSettings | None = None) -> dict:
    """The run config that selects ``kind`` on a job built with :func:`base_executor`."""
    return {"execution": {"config": executor_config(kind, settings)}}


# ---------------------------------------------------------------- instances and Definitions

INSTANCE_FILES = {
    "local": REPO / "dagster.yaml",
    "docker": REPO / "docker" / "dagster.yaml",
    "k8s": REPO / "docker" / "k8s" / "dagster-instance.yaml",
}


def instance_config(kind: Deployment) -> dict[str, Any]:
    """The ``dagster.yaml`` of a deployment as a dict (for k8s: what the Helm values render)."""
    if kind not in INSTANCE_FILES:
        raise ValueError(f"unknown deployment {kind!r}")
    return yaml.safe_load(INSTANCE_FILES[kind].read_text()) or {}


def deployment_definitions(
    defs: dg.Definitions, settings: DeploymentSettings | None = None
) -> dg.Definitions:
    """``defs`` with the deployment's executor and ``pipes`` resource (what definitions.py builds)."""
    settings = settings or DeploymentSettings.from_env()
    return dg.Definitions(
        assets=defs.assets,
        asset_checks=defs.asset_checks,
        jobs=defs.jobs,
        schedules=defs.schedules,
        sensors=defs.sensors,
        resources={**(defs.resources or {}), "pipes": pipes_client(settings)},
        executor=executor_def(settings.executor, settings),
        loggers=defs.loggers,
    )
