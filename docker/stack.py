"""Drive the compose stack through its own interfaces, for `make test-containers`.

:class:`Stack` runs ``docker-compose`` (Debian's 1.29) or ``docker compose`` (v2) on
docker/docker-compose.yml plus docker/compose.test.yml, talks to the webserver's GraphQL on
127.0.0.1, reads Postgres with ``psql`` inside the postgres container, reads the data volume's
partitions with polars inside the code container, fills the landing volume with real days
from ../shared/landing, and reads Docker's own event stream for container starts and exit
codes. Every wait is bounded. Standard library only (it runs from the project's venv, but
needs none of it).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCKER_DIR = REPO / "docker"
DOCKER = os.environ.get("DOCKER", "/usr/bin/docker" if Path("/usr/bin/docker").exists() else "docker")
PROJECT = "corpus"
LOCATION = {"repositoryLocationName": "corpus", "repositoryName": "__repository__"}
RUN_LABEL = "io.corpus.run-container"
WORKER_LABEL = "io.corpus.pipes-worker"
RUN_ID_LABEL = "dagster/run_id"
FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}


class StackError(AssertionError):
    pass


def docker_cpu_seconds() -> float | None:
    """CPU seconds used so far by every container (cgroup v1 ``docker`` cpuacct parent, which
    keeps what removed containers used) plus dockerd and containerd themselves; None where
    that cgroup is not readable (cgroup v2, another cgroup driver)."""
    usage = Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage")
    if not usage.exists():
        return None
    total = int(usage.read_text()) / 1e9
    ticks = os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name in ("dockerd", "containerd") or name.startswith("containerd-shim"):
            fields = stat[stat.rindex(")") + 2 :].split()
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    return total


def compose_command() -> list[str]:
    """Debian's docker-compose 1.29 where installed, else the Compose v2 plugin."""
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    probe = subprocess.run([DOCKER, "compose", "version"], capture_output=True, timeout=30)
    if probe.returncode == 0:
        return [DOCKER, "compose"]
    raise StackError("neither docker-compose nor `docker compose` is installed")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Stack:
    landing_source: Path
    env_file: Path | None = DOCKER_DIR / "local-images.env"
    port: int = field(default_factory=free_port)
    password: str = field(default_factory=lambda: secrets.token_hex(12))
    extra_env: dict[str, str] = field(default_factory=dict)
    extra_files: tuple[str, ...] = ()  # compose files after docker-compose.yml and compose.test.yml
    compose: list[str] = field(default_factory=compose_command)
    log: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ commands

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CORPUS_", "DAGSTER_"))}
        env |= {
            "DAGSTER_WEBSERVER_PORT": str(self.port),
            "DAGSTER_POSTGRES_PASSWORD": self.password,
            "CORPUS_GRAPH_CRON": "* * * * *",  # cross-day catch-up every minute, not hourly
            "CORPUS_SHARED": str(self.landing_source.parent),
            "COMPOSE_HTTP_TIMEOUT": "300",
            "DOCKER_HOST": os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"),
        }
        return env | self.extra_env

    def run(
        self, cmd: list[str], timeout: float = 600, check: bool = True, **kw
    ) -> subprocess.CompletedProcess:
        t0 = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=self.env(), **kw)
        self.log.append(f"{time.monotonic() - t0:6.1f}s rc={done.returncode} {' '.join(cmd)[:200]}")
        if check and done.returncode != 0:
            raise StackError(
                f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        return done

    def compose_args(self, profiles: tuple[str, ...] = ()) -> list[str]:
        args = [*self.compose]
        if self.env_file is not None:
            args += ["--env-file", str(self.env_file)]
        args += [
            "-p",
            PROJECT,
            "-f",
            str(DOCKER_DIR / "docker-compose.yml"),
            "-f",
            str(DOCKER_DIR / "compose.test.yml"),
        ]
        for name in self.extra_files:
            args += ["-f", str(DOCKER_DIR / name)]
        for profile in profiles:
            args += ["--profile", profile]
        return args

    def dc(self, *args: str, profiles: tuple[str, ...] = (), timeout: float = 600, check: bool = True):
        return self.run([*self.compose_args(profiles), *args], timeout=timeout, check=check, cwd=REPO)

    def docker(self, *args: str, timeout: float = 120, check: bool = True, **kw):
        return self.run([DOCKER, *args], timeout=timeout, check=check, **kw)

    def image(self, name: str) -> str:
        """An image the env file names (``TOOLS_IMAGE`` etc.), or its default."""
        values = {}
        if self.env_file is not None:
            for line in self.env_file.read_text().splitlines():
                if "=" in line and not line.lstrip().startswith("#"):
                    key, value = line.split("=", 1)
                    values[key.strip()] = value.strip()
        defaults = {"TOOLS_IMAGE": "busybox:1.36", "CORPUS_IMAGE": "corpus:latest"}
        return os.environ.get(name) or values.get(name) or defaults[name]

    # ------------------------------------------------------------------ lifecycle

    def up(self, profiles: tuple[str, ...] = (), timeout_s: float = 600) -> None:
        self.dc("up", "-d", "--remove-orphans", profiles=profiles, timeout=timeout_s)
        self.wait_webserver(timeout_s)

    def wait_webserver(self, timeout_s: float = 600) -> None:
        deadline = time.monotonic() + timeout_s
        last = ""
        while time.monotonic() < deadline:
            try:
                data = self.gql("{ version workspaceOrError { ... on Workspace { locationEntries { name "
                                "locationOrLoadError { __typename } } } } }")  # fmt: skip
                entries = data["workspaceOrError"]["locationEntries"]
                if entries and entries[0]["locationOrLoadError"]["__typename"] == "RepositoryLocation":
                    return
                last = json.dumps(entries)
            except (OSError, StackError, KeyError, TypeError) as exc:
                last = str(exc)
            time.sleep(3)
        raise StackError(f"the webserver did not serve the corpus location within {timeout_s} s: {last}")

    def wait_daemon(self, timeout_s: float = 300) -> None:
        query = "{ instance { daemonHealth { allDaemonStatuses { daemonType healthy required } } } }"
        deadline, last = time.monotonic() + timeout_s, None
        while time.monotonic() < deadline:
            statuses = self.gql(query)["instance"]["daemonHealth"]["allDaemonStatuses"]
            last = {s["daemonType"]: s["healthy"] for s in statuses if s["required"]}
            if last and all(last.values()):
                return
            time.sleep(5)
        raise StackError(f"daemons not all healthy after {timeout_s} s: {last}")

    def down(self) -> None:
        """Everything the stack made: its services, run and worker containers, network, volumes.
        What launches containers stops first (the daemon launches runs, runs and Celery workers
        launch Pipes workers): one launched in between kept the network in use."""
        self.dc(
            "--profile",
            "celery",
            "stop",
            "--timeout",
            "10",
            "daemon",
            "celery-worker",
            check=False,
            timeout=120,
        )
        for attempt in range(2):
            launched = set()
            for label in (RUN_ID_LABEL, WORKER_LABEL):
                launched |= set(
                    self.docker("ps", "-aq", "--filter", f"label={label}", check=False).stdout.split()
                )
            # and whatever else holds one of its volumes (a fault's holder or a one-off left by a run
            # that was killed): `down -v` cannot remove a volume in use
            volumes = self.docker(
                "volume", "ls", "-q", "--filter", "label=com.docker.compose.project=corpus", check=False
            ).stdout.split()
            for volume in volumes:
                launched |= set(
                    self.docker("ps", "-aq", "--filter", f"volume={volume}", check=False).stdout.split()
                )
            if launched:
                self.docker("rm", "-f", *launched, check=False)
            done = self.dc("--profile", "celery", "down", "-v", "--remove-orphans", "--timeout", "20",
                           timeout=300, check=attempt == 1)  # fmt: skip
            if done.returncode == 0:
                return

    # ------------------------------------------------------------------ the landing volume

    def fill_landing(self, days: list[str], ids: list[str]) -> None:
        """Copy the papers' PDFs and e-prints, then each day's OAI page (renamed into place, so
        the sensor never reads half a page), from ../shared/landing into the landing volume.
        No tei/: every TEI has to come from Grobid (the stand-in) across the network."""
        script = ["mkdir -p /landing/oai /landing/pdf /landing/src"]
        for paper in ids:
            script.append(f"for f in /src/pdf/{paper}.pdf /src/src/{paper}.*; do [ -e \"$f\" ] && cp \"$f\" "
                          f"/landing/${{f#/src/}} || true; done")  # fmt: skip
        for day in days:
            script.append(f"cp /src/oai/{day}.xml /landing/oai/.{day}.xml.tmp && mv /landing/oai/.{day}.xml.tmp "
                          f"/landing/oai/{day}.xml")  # fmt: skip
        script.append("chown -R 10001:10001 /landing")
        self.docker(
            "run", "--rm", "-v", "corpus_landing:/landing", "-v", f"{self.landing_source}:/src:ro",
            self.image("TOOLS_IMAGE"), "sh", "-c", " && ".join(script),
        )  # fmt: skip

    # ------------------------------------------------------------------ interfaces

    def gql(self, query: str, variables: dict | None = None, timeout: float = 60) -> dict:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/graphql", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise StackError(f"GraphQL HTTP {exc.code}: {exc.read()[:2000]!r}") from exc
        if payload.get("errors"):
            raise StackError(f"GraphQL errors: {payload['errors']}")
        return payload["data"]

    def container(self, service: str) -> str:
        """The id of a service's (first) container: ``docker exec`` on it skips Compose's start-up."""
        done = self.docker(
            "ps", "-q", "--filter", f"label=com.docker.compose.project={PROJECT}",
            "--filter", f"label=com.docker.compose.service={service}",
        )  # fmt: skip
        ids = done.stdout.split()
        if not ids:
            raise StackError(f"no running container of service {service}")
        return ids[0]

    def exec(self, service: str, *cmd: str, timeout: float = 300) -> str:
        return self.docker("exec", self.container(service), *cmd, timeout=timeout).stdout

    def psql(self, sql: str) -> list[list[str]]:
        out = self.exec("postgres", "psql", "-U", "dagster", "-d", "dagster", "-At", "-F", "\t", "-c", sql)
        return [line.split("\t") for line in out.splitlines() if line]

    def code_python(self, script: str, *args: str, service: str = "code", timeout: float = 300) -> dict:
        """Run ``python -c script args`` in a service container; its last stdout line is JSON."""
        out = self.exec(service, "python", "-c", script, *args, timeout=timeout)
        return json.loads(out.strip().splitlines()[-1])

    def partition_rows(self, assets: list[str], days: list[str]) -> dict[str, int | None]:
        """Rows of each daily asset's partition (None: no partition) and of each unpartitioned asset."""
        return self.code_python(PARTITION_ROWS, ",".join(assets), ",".join(days))

    # ------------------------------------------------------------------ runs

    def sensor(self, name: str, running: bool) -> str:
        selector = {**LOCATION, "sensorName": name}
        if running:
            data = self.gql(
                "mutation($s: SensorSelector!) { startSensor(sensorSelector: $s) { __typename "
                "... on Sensor { sensorState { status } } ... on PythonError { message } } }",
                {"s": selector},
            )["startSensor"]
            return data.get("sensorState", {}).get("status") or json.dumps(data)
        state = self.gql(
            "query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { ... on Sensor { "
            "sensorState { id selectorId status } } } }",
            {"s": selector},
        )["sensorOrError"]["sensorState"]
        data = self.gql(
            "mutation($o: String, $s: String) { stopSensor(jobOriginId: $o, jobSelectorId: $s) { __typename "
            "... on StopSensorMutationResult { instigationState { status } } ... on PythonError { message } } }",
            {"o": state["id"], "s": state["selectorId"]},
        )["stopSensor"]
        return data.get("instigationState", {}).get("status") or json.dumps(data)

    def launch_daily(self, day: str) -> str:
        params = {
            "selector": {**LOCATION, "jobName": "corpus_daily"},
            "executionMetadata": {"tags": [{"key": "dagster/partition", "value": day}]},
            "runConfigData": {},
        }
        data = self.gql(LAUNCH, {"p": params})["launchRun"]
        if data["__typename"] != "LaunchRunSuccess":
            raise StackError(f"launch of corpus_daily {day}: {json.dumps(data)[:2000]}")
        return data["run"]["runId"]

    def reexecute(self, run_id: str) -> str:
        data = self.gql(REEXECUTE, {"p": {"parentRunId": run_id, "strategy": "FROM_FAILURE"}})
        data = data["launchRunReexecution"]
        if data["__typename"] != "LaunchRunSuccess":
            raise StackError(f"re-execution of {run_id}: {json.dumps(data)[:2000]}")
        return data["run"]["runId"]

    def run_status(self, run_id: str) -> str:
        rows = self.psql(f"select status from runs where run_id = '{run_id}'")
        return rows[0][0] if rows else "MISSING"

    def wait_run(self, run_id: str, timeout_s: float = 600, until: set[str] = FINISHED) -> str:
        deadline = time.monotonic() + timeout_s
        status = "MISSING"
        while time.monotonic() < deadline:
            status = self.run_status(run_id)
            if status in until:
                return status
            time.sleep(3)
        raise StackError(f"run {run_id} still {status} after {timeout_s} s")

    def runs(self, where: str = "true") -> list[dict]:
        rows = self.psql(
            "select run_id, pipeline_name, status, coalesce((select value from run_tags t where t.run_id = r.run_id "
            f"and t.key = 'dagster/partition'), '') from runs r where {where} order by create_timestamp"
        )  # fmt: skip
        return [dict(zip(("run_id", "job", "status", "partition"), row, strict=True)) for row in rows]

    def latest_materialization(self, asset: str) -> tuple[str, dict] | None:
        """(run id, metadata values) of an asset's latest materialisation, from Postgres."""
        rows = self.psql(
            "select run_id, event from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION' "
            f"and asset_key = '[\"{asset}\"]' order by id desc limit 1"
        )  # fmt: skip
        if not rows:
            return None
        event = json.loads(rows[0][1])["dagster_event"]["event_specific_data"]["materialization"]
        values = {
            m["label"]: m["entry_data"].get("value", m["entry_data"].get("text"))
            for m in event.get("metadata_entries", [])
        }
        return rows[0][0], values

    def wait_quiet(self, quiet_s: float = 75, timeout_s: float = 600) -> None:
        """Until no run has been queued, starting or started for ``quiet_s`` (longer than a
        cron tick of the automation and a landing-sensor interval)."""
        deadline, quiet_since = time.monotonic() + timeout_s, time.monotonic()
        while time.monotonic() < deadline:
            if self.runs("status in ('QUEUED', 'STARTING', 'STARTED', 'NOT_STARTED')"):
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= quiet_s:
                return
            time.sleep(5)
        raise StackError(f"runs still going after {timeout_s} s")

    def run_tag(self, run_id: str, key: str) -> str | None:
        rows = self.psql(f"select value from run_tags where run_id = '{run_id}' and key = '{key}'")
        return rows[0][0] if rows else None

    def step_events(self, run_id: str, event_type: str) -> list[str]:
        rows = self.psql(
            f"select step_key from event_logs where run_id = '{run_id}' and dagster_event_type = '{event_type}' "
            "order by id"
        )  # fmt: skip
        return [r[0] for r in rows]

    def service_cpu(self, seconds: float = 60) -> dict[str, float]:
        """Share of a core each running service container used over ``seconds`` (cgroup v1)."""
        root = Path("/sys/fs/cgroup/cpuacct/docker")

        def sample() -> dict[str, int]:
            out = {}
            for line in self.docker(
                "ps", "--no-trunc", "--format", '{{.ID}} {{.Label "com.docker.compose.service"}}'
            ).stdout.splitlines():
                cid, _, service = line.partition(" ")
                usage = root / cid / "cpuacct.usage"
                if service and usage.exists():
                    out[service] = int(usage.read_text())
            return out

        before, t0 = sample(), time.monotonic()
        time.sleep(seconds)
        after, elapsed = sample(), time.monotonic() - t0
        return {k: round((after[k] - before[k]) / 1e9 / elapsed, 3) for k in before if k in after}

    # ------------------------------------------------------------------ docker's own record

    def container_events(self, since: float, event: str = "die") -> list[dict]:
        """Docker's events for containers since ``since`` (epoch s): labels and exit codes."""
        done = self.docker(
            "events", "--since", f"{since:.0f}", "--until", f"{time.time():.0f}", "--filter", "type=container",
            "--filter", f"event={event}", "--format", "{{json .}}",
        )  # fmt: skip
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    def containers_of(self, run_id: str, since: float) -> dict[str, list[int]]:
        """Exit codes of the run's run container and Pipes workers, from Docker's die events."""
        found: dict[str, list[int]] = {"run": [], "worker": []}
        for e in self.container_events(since):
            attrs = e.get("Actor", {}).get("Attributes", {})
            if attrs.get(RUN_ID_LABEL) != run_id:
                continue
            kind = "worker" if WORKER_LABEL in attrs else "run" if RUN_LABEL in attrs else None
            if kind:
                found[kind].append(int(attrs.get("exitCode", -1)))
        return found

    def live_containers(self, label: str) -> list[dict]:
        done = self.docker("ps", "-a", "--filter", f"label={label}", "--format", "{{json .}}")
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


LAUNCH = """
mutation($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename
  ... on LaunchRunSuccess { run { runId } }
  ... on PythonError { message stack }
  ... on RunConfigValidationInvalid { errors { message } }
  ... on InvalidSubsetError { message }
} }
"""

REEXECUTE = """
mutation($p: ReexecutionParams!) { launchRunReexecution(reexecutionParams: $p) { __typename
  ... on LaunchRunSuccess { run { runId } }
  ... on PythonError { message stack }
} }
"""

PARTITION_ROWS = """
import glob, json, sys
import polars as pl
assets, days = sys.argv[1].split(","), [d for d in sys.argv[2].split(",") if d]
def rows(pattern):
    files = sorted(glob.glob(pattern))
    return sum(pl.scan_parquet(f).select(pl.len()).collect().item() for f in files) if files else None
out = {}
for asset in assets:
    if days and glob.glob(f"/data/{asset}/date=*"):
        for day in days:
            out[f"{asset}/{day}"] = rows(f"/data/{asset}/date={day}/*.parquet")
    else:
        out[asset] = rows(f"/data/{asset}/*.parquet")
print(json.dumps(out))
"""
