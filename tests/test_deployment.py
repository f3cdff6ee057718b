"""Every deployment's Definitions, run config, instance and container files, without Docker or Kubernetes.

What is checked here is configuration: the Definitions load, run config validates against
the real executor schemas, instances construct (Postgres storage is schema-checked only,
no server runs), compose/Helm files parse and agree with the settings the code reads.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import dagster as dg
import pytest
import yaml

from corpus_assets import deployment as dep
from corpus_assets.dagster_internals import instance_config_problems
from corpus_assets.definitions import defs
from corpus_assets.deployment import DeploymentSettings

REPO = Path(__file__).resolve().parents[1]
DOCKER = REPO / "docker"
COMBINATIONS = [
    ("local", "inprocess"),
    ("inprocess", "inprocess"),
    ("docker", "inprocess"),
    ("docker", "celery"),
    ("k8s", "inprocess"),
    ("k8s", "k8s"),
    ("k8s", "celery"),
]


def _settings(deployment: str, executor: str = "inprocess") -> DeploymentSettings:
    return DeploymentSettings.from_env(
        {
            "CORPUS_DEPLOYMENT": deployment,
            "CORPUS_EXECUTOR": executor,
            "CORPUS_HOME": "/data",
            "CORPUS_LANDING": "/landing",
        }
    )


def _compose() -> dict:
    """docker-compose.yml as compose reads it with no .env: ``${VAR:-default}`` -> default."""
    text = (DOCKER / "docker-compose.yml").read_text()
    return yaml.safe_load(re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", text))


def test_settings_choose_the_deployment_and_executor_or_fail_clearly():
    assert dep.deployment({}) == "local" and dep.executor_kind({}) == "inprocess"
    assert dep.deployment({"CORPUS_DEPLOYMENT": "k8s"}) == "k8s"
    assert dep.executor_kind({"CORPUS_EXECUTOR": "celery"}) == "celery"
    with pytest.raises(
        ValueError, match=r"CORPUS_DEPLOYMENT='kubernetes' is not one of local, docker, k8s, inprocess"
    ):
        dep.deployment({"CORPUS_DEPLOYMENT": "kubernetes"})
    with pytest.raises(ValueError, match="CORPUS_EXECUTOR='multiprocess'"):
        dep.executor_kind({"CORPUS_EXECUTOR": "multiprocess"})
    s = DeploymentSettings.from_env(
        {"DAGSTER_CURRENT_IMAGE": "reg/corpus:7", "CORPUS_K8S_MAX_CONCURRENT": "3"}
    )
    assert s.worker_image == "reg/corpus:7" and s.k8s_max_concurrent == 3


@pytest.mark.parametrize(("deployment", "executor"), COMBINATIONS)
def test_definitions_load_and_run_config_validates(deployment, executor):
    settings = _settings(deployment, executor)
    d = dep.deployment_definitions(defs, settings)
    dg.Definitions.validate_loadable(d)
    job = d.resolve_job_def("corpus_daily")
    assert job.executor_def.name == {"inprocess": "in_process", "celery": "celery", "k8s": "k8s"}[executor]
    assert dg.validate_run_config(job, {}) is not None  # configured from the settings: no run config needed
    assert "pipes" in d.resources

    # the same job with the bare executor: the run config that selects it fits the real schema
    bare = dg.Definitions(
        assets=defs.assets,
        asset_checks=defs.asset_checks,
        jobs=defs.jobs,
        resources=defs.resources,
        executor=dep.base_executor(executor),
    )
    run_config = dep.executor_run_config(executor, settings)
    checked = dg.validate_run_config(bare.resolve_job_def("corpus_daily"), run_config)["execution"]
    if executor == "celery":
        assert checked["celery"]["broker"] == "redis://redis:6379/0"
    if executor == "k8s":
        assert checked["k8s"]["job_namespace"] == "corpus"
        assert checked["k8s"]["volume_mounts"][0]["mount_path"] == "/data"


def test_bad_executor_config_is_rejected():
    bare = dg.Definitions(
        assets=defs.assets,
        asset_checks=defs.asset_checks,
        jobs=defs.jobs,
        resources=defs.resources,
        executor=dep.base_executor("celery"),
    )
    with pytest.raises(dg.DagsterInvalidConfigError):
        dg.validate_run_config(
            bare.resolve_job_def("corpus_daily"), {"execution": {"config": {"brokers": "x"}}}
        )


def test_local_instance_constructs():
    config = dep.instance_config("local")
    with dg.instance_for_test(overrides=config) as instance:
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert isinstance(instance.run_launcher, dg.DefaultRunLauncher)  # LocalRunLauncher: + health check
        # 4 in the repo file; `make dagster-home` renders it with the machine's cores
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 4
        assert instance.run_retries_enabled


def _full_schema_check(kind: str, tmp_path: Path) -> None:
    """The whole dagster.yaml against Dagster's instance schema, as the daemon would load it."""
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(dep.instance_config(kind)))
    instance_config_problems(str(tmp_path))


def test_docker_instance_constructs(tmp_path, monkeypatch):
    from dagster_docker import DockerRunLauncher
    from dagster_postgres import DagsterPostgresStorage

    for name, value in {
        "DAGSTER_POSTGRES_HOST": "postgres",
        "DAGSTER_POSTGRES_USER": "u",
        "DAGSTER_POSTGRES_PASSWORD": "p",
        "DAGSTER_POSTGRES_DB": "d",
    }.items():
        monkeypatch.setenv(name, value)
    config = dep.instance_config("docker")
    _full_schema_check("docker", tmp_path)
    # Postgres: schema and env vars only (no server here)
    checked = dg._config.process_config(DagsterPostgresStorage.config_type(), config["storage"]["postgres"])  # noqa: SLF001
    assert checked.success, checked.errors
    assert checked.value["postgres_db"]["hostname"] == "postgres"

    overrides = {k: v for k, v in config.items() if k != "storage"}
    overrides["compute_logs"] = {**config["compute_logs"], "config": {"base_dir": str(tmp_path / "logs")}}
    with dg.instance_for_test(overrides=overrides) as instance:
        launcher = instance.run_launcher
        assert isinstance(launcher, DockerRunLauncher)  # built without contacting Docker
        from corpus_assets.compute_logs import TailComputeLogManager

        assert isinstance(instance.compute_log_manager, TailComputeLogManager)  # no watcher processes
        assert launcher.networks == ["corpus"]
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        env_vars = set(launcher.env_vars)
    compose = _compose()
    corpus_env = compose["x-corpus-env"]
    assert env_vars <= set(corpus_env), "every variable a run container gets is set in compose"
    assert {
        "CORPUS_WORKER_IMAGE",
        "CORPUS_HOME_VOLUME",
        "CORPUS_LANDING_VOLUME",
        "CORPUS_DOCKER_NETWORK",
    } <= env_vars
    volumes = config["run_launcher"]["config"]["container_kwargs"]["volumes"]
    assert {v.split(":")[0] for v in volumes} <= {v["name"] for v in compose["volumes"].values()}


def test_k8s_instance_constructs(tmp_path, kubeconfig):
    from dagster_k8s import K8sRunLauncher

    config = dep.instance_config("k8s")
    _full_schema_check("k8s", tmp_path)
    launcher_config = {
        **config["run_launcher"]["config"],
        "load_incluster_config": False,
        "kubeconfig_file": str(kubeconfig),
    }
    overrides = {k: v for k, v in config.items() if k != "storage"}
    overrides["run_launcher"] = {**config["run_launcher"], "config": launcher_config}
    with dg.instance_for_test(overrides=overrides) as instance:
        launcher = instance.run_launcher
        assert isinstance(launcher, K8sRunLauncher)  # no cluster contacted
        assert launcher.job_namespace == _settings("k8s").k8s_namespace
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 8


def test_helm_values_agree_with_the_settings():
    values = yaml.safe_load((DOCKER / "k8s" / "values.yaml").read_text())
    (code,) = values["dagster-user-deployments"]["deployments"]
    args = code["codeServerArgs"]
    assert args[args.index("-m") + 1] == "corpus_assets.definitions"
    assert args[args.index("--location-name") + 1] == "corpus"
    env = {e["name"]: e["value"] for e in code["env"]}
    s = DeploymentSettings.from_env(env)
    assert s.deployment == "k8s" and (s.home, s.landing) == ("/data", "/landing")
    claims = {v["persistentVolumeClaim"]["claimName"] for v in code["volumes"]}
    assert claims == {s.k8s_home_claim, s.k8s_landing_claim}
    assert {m["mountPath"] for m in code["volumeMounts"]} == {s.home, s.landing}
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    namespace = values["runLauncher"]["config"]["k8sRunLauncher"]["jobNamespace"]
    assert (
        namespace == s.k8s_namespace == dep.instance_config("k8s")["run_launcher"]["config"]["job_namespace"]
    )
    queued = values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"]
    assert (
        queued["maxConcurrentRuns"]
        == dep.instance_config("k8s")["run_coordinator"]["config"]["max_concurrent_runs"]
    )
    rbac = list(yaml.safe_load_all((DOCKER / "k8s" / "pipes-rbac.yaml").read_text()))
    assert {d["kind"] for d in rbac} == {"ServiceAccount", "Role", "RoleBinding"}
    assert s.k8s_service_account == next(d for d in rbac if d["kind"] == "ServiceAccount")["metadata"]["name"]


def test_compose_names_every_service_volume_and_healthcheck():
    compose = _compose()
    services = compose["services"]
    assert set(services) == {
        "postgres",
        "grobid",
        "docker-proxy",
        "code",
        "webserver",
        "daemon",
        "redis",
        "celery-worker",
        "migrate",
    }
    healthchecked = {name for name, svc in services.items() if "healthcheck" in svc}
    assert healthchecked == {"postgres", "grobid", "code", "webserver", "daemon", "redis"}
    assert services["daemon"]["healthcheck"]["test"] == ["CMD", "dagster-daemon", "liveness-check"]
    assert "name" not in compose, "docker-compose 1.29 (Debian's) rejects a top-level name"
    grobid = services["grobid"]
    assert "lfoppiano/grobid:0.8" in grobid["image"]
    assert "/api/isalive" in " ".join(grobid["healthcheck"]["test"])
    assert "ports" not in grobid, "Grobid stays inside the compose network unless asked"
    published = {name: svc["ports"] for name, svc in services.items() if "ports" in svc}
    assert list(published) == ["webserver"]
    assert all(p.startswith("127.0.0.1:") for p in published["webserver"])
    extra = yaml.safe_load((DOCKER / "compose.grobid-port.yml").read_text())
    assert all(p.startswith("127.0.0.1:") for p in extra["services"]["grobid"]["ports"])

    assert {v["name"] for v in compose["volumes"].values()} == {
        "corpus_data",
        "corpus_landing",
        "dagster_logs",
        "dagster_postgres",
        "redis_data",
    }
    for name in ("code", "celery-worker"):
        assert {"corpus_data:/data", "corpus_landing:/landing"} <= set(services[name]["volumes"])
    env = services["code"]["environment"]
    s = DeploymentSettings.from_env({k: str(v) for k, v in env.items()})
    assert s.deployment == "docker" and (s.home, s.landing) == ("/data", "/landing")
    assert (s.home_volume, s.landing_volume) == ("corpus_data", "corpus_landing")
    assert s.docker_network == compose["networks"]["corpus"]["name"] == "corpus"
    assert env["DAGSTER_CURRENT_IMAGE"] == services["code"]["image"] == s.worker_image
    assert env["GROBID_URL"] == "http://grobid:8070"
    assert s.celery_broker.startswith("redis://redis:")
    assert set(services["redis"]["profiles"]) == set(services["celery-worker"]["profiles"]) == {"celery"}
    for name in ("webserver", "daemon"):
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert services[name]["depends_on"]["code"]["condition"] == "service_healthy"
        # the storage is migrated to the image's Dagster before they start (issue 32, item 5)
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    migrate = services["migrate"]
    assert migrate["command"] == ["dagster", "instance", "migrate"] and migrate["restart"] == "no"
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate["image"] == services["daemon"]["image"] == services["webserver"]["image"]
    # Redis keeps queued steps and unread results through a restart (the chaos test killed it)
    assert (
        "--appendonly" in services["redis"]["command"] and "redis_data:/data" in services["redis"]["volumes"]
    )
    assert all("corpus" in svc["networks"] for svc in services.values())


def test_image_workspace_and_celery_files():
    dockerfile = (DOCKER / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=python:3.11-slim-bookworm" in dockerfile
    assert "HEALTHCHECK NONE" in dockerfile  # run and Pipes containers inherit no health check
    user = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("USER ")]
    assert user and user[-1] not in {"root", "0"}
    assert '"code-server", "start"' in dockerfile and '"corpus"' in dockerfile
    workspace = yaml.safe_load((DOCKER / "workspace.yaml").read_text())
    (server,) = [entry["grpc_server"] for entry in workspace["load_from"]]
    assert server == {"host": "code", "port": 4000, "location_name": "corpus"}
    celery = yaml.safe_load((DOCKER / "celery.yaml").read_text())
    assert celery["execution"]["config"]["broker"] == {"env": "CORPUS_CELERY_BROKER"}
    # the workers acknowledge a step when it ends (a killed worker's step is handed out again), and
    # wait for a restarting Redis as the executor does
    for name, timeout in (("celery.yaml", 4 * 3600), ("celery.test.yaml", 60)):
        source = yaml.safe_load((DOCKER / name).read_text())["execution"]["config"]["config_source"]
        assert source["task_acks_late"] and source["task_reject_on_worker_lost"], name
        transport = dict(source["broker_transport_options"])
        assert transport.pop("visibility_timeout") == timeout, name
        for key, value in dep.CELERY_CONFIG_SOURCE.items():
            assert (transport if key == "broker_transport_options" else source[key]) == value, (name, key)
    dockerignore = (REPO / ".dockerignore").read_text().split()
    assert {".venv", "data", "landing", ".dagster_home"} <= set(dockerignore)


def test_an_upgrade_image_differs_only_in_its_last_layer_and_migrates_first():
    """docker/test_upgrade.py swaps in an image built with another CORPUS_CODE_VERSION: the build
    argument comes after every COPY and RUN (a seconds-long build, the rest from docker's cache),
    and the stack migrates its storage with the image before the webserver and daemon start."""
    lines = (DOCKER / "Dockerfile").read_text().splitlines()
    arg = lines.index('ARG CORPUS_CODE_VERSION=""')
    assert not [line for line in lines[arg:] if line.startswith(("COPY", "RUN"))]
    services = _compose()["services"]
    assert services["migrate"]["command"] == ["dagster", "instance", "migrate"]
    assert [name for name, svc in services.items() if "migrate" in svc.get("command", [])] == ["migrate"]


def test_image_build_stage_copies_everything_the_wheel_build_needs():
    """The wheel is built from the COPY'd files only: setup.py and the C source must be among them."""
    stages = (DOCKER / "Dockerfile").read_text().split("\nFROM ")
    (build_stage,) = [s for s in stages if s.startswith("${BASE_IMAGE} AS build\n")]
    copied = set()
    for line in build_stage.splitlines():
        if line.startswith("COPY ") and "--from" not in line:
            copied.update(line.split()[1:-1])
    assert {"pyproject.toml", "setup.py", "corpus"} <= copied
    sources = re.findall(r'"([\w/]+\.c)"', (REPO / "setup.py").read_text())
    assert sources == ["corpus/_tally.c", "corpus/_prefix.c"]
    for source in sources:
        assert (REPO / source).is_file() and source.split("/")[0] in copied
    dockerignore = (REPO / ".dockerignore").read_text().split()
    assert "**/*.so" in dockerignore  # a locally built extension never enters the image


def _compose_commands() -> list[list[str]]:
    """The Compose implementations on this machine: Debian's docker-compose 1.29, the v2 plugin."""
    found = []
    if shutil.which("docker-compose"):
        found.append(["docker-compose"])
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, timeout=20)
        if probe.returncode == 0:
            found.append(["docker", "compose"])
    return found


@pytest.mark.skipif(not _compose_commands(), reason="neither docker-compose nor the compose plugin here")
@pytest.mark.parametrize("env_file", [None, "local-images.env"])
def test_compose_config_with_each_compose_on_this_machine(env_file):
    """Both Composes read the file (v1 rejected a top-level ``name:``); make test-containers runs it."""
    for compose in _compose_commands():
        extra = ["--env-file", str(DOCKER / env_file)] if env_file else []
        files = ["-f", str(DOCKER / "docker-compose.yml"), "-f", str(DOCKER / "compose.test.yml")]
        done = subprocess.run(
            [*compose, *extra, "-p", "corpus", *files, "--profile", "celery", "config"],
            capture_output=True, text=True, timeout=60, cwd=REPO,
        )  # fmt: skip
        assert done.returncode == 0, (compose, done.stderr)
        services = yaml.safe_load(done.stdout)["services"]
        assert {"postgres", "grobid", "code", "webserver", "daemon", "redis", "celery-worker"} <= set(
            services
        )
        if env_file:
            assert services["postgres"]["image"].startswith("corpus-local/")


def test_pipes_clients_and_launch_settings_per_deployment(monkeypatch):
    from dagster_docker import PipesDockerClient
    from dagster_k8s import PipesK8sClient
    from dagster_k8s.pipes import build_pod_body

    local = dep.pipes_client(_settings("local"))
    assert isinstance(local, dg.PipesSubprocessClient)
    assert dep.launch_kwargs(local, _settings("local"))["command"][1:] == ["-m", "corpus_assets.worker"]

    docker_settings = _settings("docker")
    client = dep.pipes_client(docker_settings)
    assert isinstance(client, PipesDockerClient)
    kwargs = dep.launch_kwargs(client, docker_settings)
    assert kwargs["command"] == ["python", "-m", "corpus_assets.worker"]
    assert kwargs["container_kwargs"]["volumes"] == {
        "corpus_data": {"bind": "/data", "mode": "rw"},
        "corpus_landing": {"bind": "/landing", "mode": "rw"},
    }
    assert kwargs["container_kwargs"]["network"] == "corpus"
    assert "CORPUS_PAPER_TIMEOUT_S" not in kwargs["env"]
    monkeypatch.setenv("CORPUS_PAPER_TIMEOUT_S", "30")  # a setting the worker reads reaches its container
    assert dep.launch_kwargs(client, docker_settings)["env"]["CORPUS_PAPER_TIMEOUT_S"] == "30"

    k8s_settings = _settings("k8s")
    client = dep.pipes_client(k8s_settings)
    assert isinstance(client, PipesK8sClient)
    kwargs = dep.launch_kwargs(client, k8s_settings)
    pod = build_pod_body(
        pod_name="w", image=kwargs["image"], command=kwargs["command"], env_vars=kwargs["env"],
        base_pod_meta=kwargs["base_pod_meta"], base_pod_spec=kwargs["base_pod_spec"],
    )  # fmt: skip
    container = pod.spec.containers[0]
    assert container.image == "corpus:latest" and container.command == [
        "python",
        "-m",
        "corpus_assets.worker",
    ]
    assert {m.mount_path for m in container.volume_mounts} == {"/data", "/landing"}
    assert {v.persistent_volume_claim.claim_name for v in pod.spec.volumes} == {
        "corpus-data",
        "corpus-landing",
    }
    assert pod.spec.security_context.run_as_non_root is True
    assert kwargs["namespace"] == "corpus"
    with pytest.raises(TypeError, match="no launch settings"):
        dep.launch_kwargs(object(), k8s_settings)  # type: ignore[arg-type]


def test_build_pipes_resource_follows_the_environment(monkeypatch):
    monkeypatch.setenv("CORPUS_DEPLOYMENT", "docker")
    from dagster_docker import PipesDockerClient

    assert isinstance(dep.build_pipes_resource(), PipesDockerClient)
    monkeypatch.setenv("CORPUS_DEPLOYMENT", "local")
    assert isinstance(dep.build_pipes_resource(), dg.PipesSubprocessClient)
    monkeypatch.setenv("CORPUS_EXECUTOR", "celery")
    assert dep.executor_def().name == "celery"


# Everything the extras install that a base install (`pip install -e .`) lacks, by top-level module.
ABSENT_ON_A_BASE_INSTALL = (
    "dagster_docker", "dagster_k8s", "dagster_celery", "dagster_postgres",
    "docker", "kubernetes", "celery", "redis", "psycopg2", "s3fs", "gcsfs",
)  # fmt: skip
_WITHOUT_EXTRAS = """
import importlib.abc, json, sys
ABSENT = set(sys.argv[1].split(","))

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ABSENT:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Absent())
import dagster as dg
from corpus_assets import deployment as dep
from corpus_assets.dagster_internals import instance_config_problems
from corpus_assets.definitions import defs

dg.Definitions.validate_loadable(defs)
local = dep.DeploymentSettings.from_env({})
client = dep.pipes_client(local)
errors = {}
for what, call in {
    "docker": lambda: dep.pipes_client(dep.DeploymentSettings.from_env({"CORPUS_DEPLOYMENT": "docker"})),
    "k8s": lambda: dep.executor_def("k8s", local),
    "celery": lambda: dep.base_executor("celery"),
}.items():
    try:
        call()
        errors[what] = None
    except ImportError as exc:
        errors[what] = str(exc)
print(json.dumps({
    "executor": defs.executor.name,
    "launch": dep.launch_kwargs(client, local)["command"][1:],
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ABSENT),
    "errors": errors,
}))
"""


def test_definitions_load_without_the_deployment_extras():
    """A base install: the Definitions load, a local run needs no extra, and asking for an
    integration that is not installed names the extra to install."""
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRAS, ",".join(ABSENT_ON_A_BASE_INSTALL)],
        capture_output=True, text=True, timeout=180, cwd=REPO,
        env={k: v for k, v in os.environ.items() if not k.startswith("CORPUS_")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["executor"] == "in_process" and result["launch"] == ["-m", "corpus_assets.worker"]
    assert result["loaded"] == []
    errors = result["errors"]
    assert (
        "CORPUS_DEPLOYMENT=docker" in errors["docker"] and "pip install 'corpus[docker]'" in errors["docker"]
    )
    assert errors["k8s"].startswith(
        "the k8s executor (CORPUS_EXECUTOR=k8s) needs `pip install 'corpus[k8s]'`"
    )
    assert "pip install 'corpus[celery]'" in errors["celery"]


def test_integrations_are_extras_and_the_image_installs_the_ones_its_files_use():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    base, extras = project["dependencies"], project["optional-dependencies"]
    for module, extra in dep.EXTRAS.items():
        package = module.replace("_", "-")
        assert any(r.startswith(f"{package}==") for r in extras[extra]), (extra, package)
        assert not any(r.startswith(f"{package}==") for r in base), f"{package} is in the base install"
    assert not any(r.split("==")[0] in {"redis", "celery", "s3fs", "gcsfs"} for r in base)
    assert extras["all"] == [f"corpus[{','.join(['docker', 'k8s', 'celery', 'postgres', 'bulk'])}]"]
    assert "corpus[all]" in extras["dev"]  # make test installs every extra: no test skips for one

    # the integrations the image's own files name: instance launchers and storage, the Celery workers
    used = set()
    for kind in ("docker", "k8s"):
        config = dep.instance_config(kind)
        used.add(dep.EXTRAS[config["run_launcher"]["module"]])
        if "postgres" in config["storage"]:
            used.add("postgres")
    if any("dagster-celery" in svc.get("command", []) for svc in _compose()["services"].values()):
        used.add("celery")
    assert used == {"docker", "k8s", "postgres", "celery"}
    dockerfile = (DOCKER / "Dockerfile").read_text()
    (default,) = re.findall(r"^ARG CORPUS_EXTRAS=(\S+)$", dockerfile, flags=re.M)
    assert used <= set(default.split(",")) <= set(extras)
    for part in ("others", "dagster"):  # the two lists the build stage installs (tests/test_dagster_pin.py)
        assert f'requirements.py /src/pyproject.toml "${{CORPUS_EXTRAS}}" --part {part}' in dockerfile
    assert dockerfile.count("ARG CORPUS_EXTRAS\n") == 1  # the requirements stage sees the build argument


def test_paper_workers_share_the_cores_with_runs_still_starting_or_queued(monkeypatch) -> None:
    """A backfill's first run reaches its first per-paper step before the others have started:
    it must not take every core (on 64 cores, a 64-process pool beside 63 starting runs)."""
    from types import SimpleNamespace

    from dagster import DagsterRunStatus as S

    from corpus_assets.dagster_internals import create_test_run as create_run_for_test
    from corpus_assets.dagster_internals import remote_repository_origin

    monkeypatch.delenv("CORPUS_WORKERS", raising=False)
    monkeypatch.setattr("corpus.parallel.available_cpus", lambda: 8)
    limit = {"concurrency": {"runs": {"max_concurrent_runs": 4}}}
    with dg.instance_for_test(overrides=limit) as instance:
        context = SimpleNamespace(instance=instance)
        create_run_for_test(instance, status=S.STARTED)  # this run, alone: every core
        assert dep.paper_workers(context) == 8
        create_run_for_test(instance, status=S.STARTING)
        assert dep.paper_workers(context) == 4
        repo = remote_repository_origin()
        for _ in range(5):  # queued by a backfill
            origin = repo.get_job_origin("corpus_daily")
            create_run_for_test(instance, status=S.QUEUED, remote_job_origin=origin)
        assert dep.runs_side_by_side(instance) == 4  # no more than the queue runs at once
        assert dep.paper_workers(context) == 2
        for status in (S.SUCCESS, S.FAILURE, S.CANCELED):  # ended runs free their cores
            create_run_for_test(instance, status=status)
        assert dep.paper_workers(context) == 2
        monkeypatch.setenv("CORPUS_WORKERS", "3")
        assert dep.paper_workers(context) == 3


HEAP_PROBE = """
import sys
from corpus_assets.deployment import return_free_heap
def anon():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("RssAnon")) // 1024
blocks = [bytes(2000) for _ in range(60_000)]  # ~120 MB from malloc's heap (over pymalloc's 512 B)
keep = bytes(2000)  # a live block above them: glibc cannot give them back by trimming its top
del blocks
before = anon()
print(return_free_heap(), before - anon())
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RssAnon from /proc")
def test_a_run_worker_hands_its_free_heap_back_before_waiting_on_a_stage():
    """What earlier steps freed below a live block stays in a glibc process until trimmed;
    run_stage trims before it waits on its Pipes worker."""
    done = subprocess.run(
        [sys.executable, "-c", HEAP_PROBE], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    trimmed, freed_mb = done.stdout.split()
    if trimmed == "False":
        pytest.skip("no glibc malloc_trim here")
    assert int(freed_mb) > 60, f"only {freed_mb} MB handed back"
