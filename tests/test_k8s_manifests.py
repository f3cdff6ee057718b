"""The Kubernetes path without a cluster: the manifests Dagster would submit, rendered and checked.

No cluster image can be pulled here and no `helm` binary installs from the registries this
project reaches, so the chart itself is not rendered (docker/README.md says so). What is
rendered, by the pinned dagster-k8s code itself, is what reaches the cluster at run time:

* the run Job K8sRunLauncher submits for a ``corpus_daily`` run (its real ``launch_run``, the
  Kubernetes API client replaced by one that records the body), with the instance of
  docker/k8s/dagster-instance.yaml and the container context the chart hands to launched
  runs from docker/k8s/values.yaml (``includeConfigInLaunchedRuns``: env, volumes, mounts,
  pod security context, as the 1.13 chart passes them);
* a step Job of ``CORPUS_EXECUTOR=k8s`` (the k8s_job_executor's config from the settings);
* the Pipes worker pod (PipesK8sClient) of a heavy stage.

Each is serialised through the Kubernetes client's models (which reject unknown fields and
wrong types) and checked against the same settings the compose stack runs with: the data
root and landing zone at /data and /landing, the image, non-root uid 10001, the claims.
"""

from pathlib import Path

import dagster as dg
import pytest
import yaml

from corpus_assets import deployment as dep
from corpus_assets.definitions import defs
from corpus_assets.deployment import DeploymentSettings

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "docker" / "k8s"
VALUES = yaml.safe_load((K8S / "values.yaml").read_text())
(CODE,) = VALUES["dagster-user-deployments"]["deployments"]
IMAGE = f"{CODE['image']['repository']}:{CODE['image']['tag']}"


def _compose_settings() -> DeploymentSettings:
    """The settings the compose stack's code location runs with (docker-compose.yml)."""
    import re

    text = (REPO / "docker" / "docker-compose.yml").read_text()
    compose = yaml.safe_load(re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", text))
    env = compose["services"]["code"]["environment"]
    return DeploymentSettings.from_env({k: str(v) for k, v in env.items()})


def _chart_container_context() -> dict:
    """What the chart passes to runs launched from the user deployment (includeConfigInLaunchedRuns)."""
    return {
        "k8s": {
            "env": CODE["env"],
            "volumes": CODE["volumes"],
            "volume_mounts": CODE["volumeMounts"],
            "namespace": VALUES["runLauncher"]["config"]["k8sRunLauncher"]["jobNamespace"],
            "image_pull_policy": CODE["image"]["pullPolicy"],
            "run_k8s_config": {"pod_spec_config": {"security_context": CODE["podSecurityContext"]}},
        }
    }


@pytest.fixture
def launcher_instance(tmp_path, monkeypatch, kubeconfig):
    config = dep.instance_config("k8s")
    launcher = {
        **config["run_launcher"],
        "config": {**config["run_launcher"]["config"], "load_incluster_config": False, "kubeconfig_file": str(kubeconfig)},
    }  # fmt: skip
    overrides = {k: v for k, v in config.items() if k != "storage"} | {"run_launcher": launcher}
    with dg.instance_for_test(overrides=overrides) as instance:
        yield instance


def _env(container) -> dict[str, str]:
    return {e.name: e.value for e in container.env or [] if e.value is not None}


def test_the_run_job_k8s_run_launcher_submits(launcher_instance, monkeypatch):
    from dagster_k8s.launcher import K8sRunLauncher
    from kubernetes.client import ApiClient

    from corpus_assets.dagster_internals import (
        create_test_run,
        job_python_origin,
        launch_run_context,
        remote_repository_origin,
    )

    launcher = launcher_instance.run_launcher
    assert isinstance(launcher, K8sRunLauncher)
    submitted = []
    monkeypatch.setattr(
        launcher._api_client,  # noqa: SLF001 - the one call that would reach a cluster
        "create_namespaced_job_with_retries",
        lambda body, namespace: submitted.append((namespace, body)),
    )
    code_origin = job_python_origin(
        "corpus_daily", "corpus_assets.definitions", "/opt/venv/bin/python", IMAGE, _chart_container_context()
    )
    remote = remote_repository_origin(grpc=("corpus", 3030)).get_job_origin("corpus_daily")
    run = create_test_run(
        launcher_instance,
        job_name="corpus_daily",
        job_code_origin=code_origin,
        remote_job_origin=remote,
        tags={"dagster/partition": "2020-01-08"},
    )
    launcher.launch_run(launch_run_context(run))
    ((namespace, job),) = submitted
    manifest = ApiClient().sanitize_for_serialization(job)  # the JSON the API server would get

    settings = _compose_settings()
    assert namespace == "corpus" == dep.instance_config("k8s")["run_launcher"]["config"]["job_namespace"]
    assert manifest["kind"] == "Job" and manifest["metadata"]["labels"]["dagster/run-id"] == run.run_id
    pod = job.spec.template.spec
    (container,) = pod.containers
    assert container.image == IMAGE
    # the code server's own interpreter: the image's venv (docker/Dockerfile)
    assert container.args[:5] == ["/opt/venv/bin/python", "-m", "dagster", "api", "execute_run"]
    assert "ENV PATH=/opt/venv/bin:$PATH" in (REPO / "docker" / "Dockerfile").read_text()
    env = _env(container)
    run_settings = DeploymentSettings.from_env(env)
    assert run_settings.deployment == "k8s" and settings.deployment == "docker"
    for field in ("home", "landing", "executor"):
        assert getattr(run_settings, field) == getattr(settings, field), field
    assert env["CORPUS_WORKER_IMAGE"] == IMAGE  # Pipes pods run the image the run runs
    mounts = {m.mount_path: m.name for m in container.volume_mounts}
    claims = {v.name: v.persistent_volume_claim.claim_name for v in pod.volumes if v.persistent_volume_claim}
    assert {p: claims[n] for p, n in mounts.items() if n in claims} == {
        settings.home: run_settings.k8s_home_claim,
        settings.landing: run_settings.k8s_landing_claim,
    }
    assert pod.security_context.run_as_user == 10001 and pod.security_context.run_as_non_root
    assert pod.service_account_name == VALUES["global"]["serviceAccountName"]
    resources = dep.instance_config("k8s")["run_launcher"]["config"]["run_k8s_config"]["container_config"][
        "resources"
    ]
    assert container.resources.requests == resources["requests"]
    pg = next(e for e in container.env if e.name == "DAGSTER_PG_PASSWORD")
    assert pg.value_from.secret_key_ref.name == "dagster-postgresql-secret"


def test_the_step_job_of_the_k8s_executor_and_the_pipes_pod():
    """CORPUS_EXECUTOR=k8s: the step Job's config validates against the real executor and mounts
    what the worker needs; the Pipes pod of a heavy stage has the same paths and claims."""
    from dagster_k8s.job import DagsterK8sJobConfig, UserDefinedDagsterK8sConfig, construct_dagster_k8s_job
    from dagster_k8s.pipes import build_pod_body
    from kubernetes.client import ApiClient

    env = {e["name"]: e["value"] for e in CODE["env"]} | {"CORPUS_EXECUTOR": "k8s"}
    settings = DeploymentSettings.from_env(env)
    executor_config = dep.executor_config("k8s", settings)
    job_def = dep.deployment_definitions(defs, settings).resolve_job_def("corpus_daily")
    assert job_def.executor_def.name == "k8s"

    job_config = DagsterK8sJobConfig(
        job_image=IMAGE,
        dagster_home="/opt/dagster/dagster_home",
        instance_config_map="dagster-instance",
        volume_mounts=executor_config["volume_mounts"],
        volumes=executor_config["volumes"],
        env_vars=executor_config["env_vars"],
    )
    step = construct_dagster_k8s_job(
        job_config, ["dagster", "api", "execute_step"], "dagster-step-x", UserDefinedDagsterK8sConfig(),
        component="step_worker",
    )  # fmt: skip
    ApiClient().sanitize_for_serialization(step)
    (container,) = step.spec.template.spec.containers
    step_env = {e.name: e.value for e in container.env if e.value}
    assert step_env.items() >= {"CORPUS_HOME": settings.home, "CORPUS_LANDING": settings.landing}.items()
    assert {m.mount_path for m in container.volume_mounts} >= {settings.home, settings.landing}

    client = dep.pipes_client(settings)
    kwargs = dep.launch_kwargs(client, settings, run_id="1b2c3d4e-0000-4000-8000-000000000000")
    pod = build_pod_body(
        pod_name="dagster-pipes-x", image=kwargs["image"], command=kwargs["command"], env_vars=kwargs["env"],
        base_pod_meta=kwargs["base_pod_meta"], base_pod_spec=kwargs["base_pod_spec"],
    )  # fmt: skip
    manifest = ApiClient().sanitize_for_serialization(pod)
    assert manifest["metadata"]["labels"]["dagster/run_id"] == "1b2c3d4e-0000-4000-8000-000000000000"
    (worker,) = pod.spec.containers
    assert worker.image == IMAGE and worker.command == ["python", "-m", "corpus_assets.worker"]
    assert (
        {m.mount_path for m in worker.volume_mounts}
        == {settings.home, settings.landing}
        == {"/data", "/landing"}
    )
    assert pod.spec.security_context.run_as_user == 10001
    assert pod.spec.service_account_name == settings.k8s_service_account


def test_webserver_and_daemon_migrate_the_storage_before_they_start():
    """Issue 32: `dagster instance migrate` in an init container of both pods (the chart's
    ``extraPrependedInitContainers``), with the code location's image, the instance the chart
    renders at its DAGSTER_HOME and the Postgres password its secret holds; each a valid
    Kubernetes container. The chart's rendering itself is not run here (no helm)."""
    from kubernetes.client import ApiClient, V1Container

    instance = yaml.safe_load((K8S / "dagster-instance.yaml").read_text())
    home = instance["run_launcher"]["config"]["dagster_home"]
    secret = instance["run_launcher"]["config"]["postgres_password_secret"]
    api = ApiClient()
    for component in ("dagsterWebserver", "dagsterDaemon"):
        (init,) = VALUES[component]["extraPrependedInitContainers"]
        assert set(init) <= set(V1Container.attribute_map.values()), component  # no unknown field
        container = api._ApiClient__deserialize(init, V1Container)
        assert container.command == ["dagster", "instance", "migrate"], component
        assert container.image == IMAGE, component
        env = {e.name: e for e in container.env}
        assert env["DAGSTER_HOME"].value == home
        assert env["DAGSTER_PG_PASSWORD"].value_from.secret_key_ref.name == secret
        assert instance["storage"]["postgres"]["postgres_db"]["password"] == {"env": "DAGSTER_PG_PASSWORD"}
        (mount,) = container.volume_mounts
        assert (mount.name, mount.mount_path, mount.sub_path) == (
            "dagster-instance",
            f"{home}/dagster.yaml",
            "dagster.yaml",
        )
    assert VALUES["dagsterDaemon"]["runRetries"] == {"enabled": True, "maxRetries": 1}
    assert instance["run_retries"] == {"enabled": True, "max_retries": 1}
