"""sensors/containers.py: which containers the cleanup sensor removes, on a real instance.

Docker itself is faked here (a list of containers with labels, states and logs); the stack test
(`make test-containers`) runs the sensor against real containers. What is checked: only
containers of runs in this instance that ended at least the grace period ago are touched; a
still-running worker of a finished run is stopped first; a non-zero exit or a stop leaves the
log's tail in the run's events.
"""

import time
from dataclasses import dataclass, field

import dagster as dg
from dagster import DagsterRunStatus

from corpus_assets.dagster_internals import create_test_run as create_run_for_test
from corpus_assets.deployment import RUN_ID_LABEL, WORKER_LABEL
from sensors.containers import GRACE_SECONDS, RUN_CONTAINER_LABEL, remove_finished


@dataclass
class FakeContainer:
    short_id: str
    labels: dict
    status: str = "exited"
    exit_code: int = 0
    log: bytes = b""
    events: list = field(default_factory=list)

    @property
    def attrs(self) -> dict:
        return {"State": {"ExitCode": self.exit_code}}

    def stop(self, timeout: int) -> None:
        self.events.append("stop")
        self.status, self.exit_code = "exited", 143

    def reload(self) -> None:
        pass

    def logs(self, tail: int) -> bytes:
        return b"\n".join(self.log.splitlines()[-tail:])

    def remove(self, force: bool) -> None:
        self.events.append("remove")


class FakeClient:
    def __init__(self, containers: list[FakeContainer]):
        self.all = containers

    class _Containers:
        def __init__(self, outer):
            self.outer = outer

        def list(self, all: bool, filters: dict) -> list[FakeContainer]:  # noqa: A002 - docker's name
            wanted = filters["label"]
            return [c for c in self.outer.all if all and all_labels(c, wanted)]

    @property
    def containers(self):
        return self._Containers(self)


def all_labels(container: FakeContainer, labels: list[str]) -> bool:
    return all(label in container.labels for label in labels)


def test_only_containers_of_runs_that_ended_a_grace_period_ago_are_removed():
    with dg.instance_for_test() as instance:
        done = create_run_for_test(instance, status=DagsterRunStatus.SUCCESS)
        killed = create_run_for_test(instance, status=DagsterRunStatus.FAILURE)
        going = create_run_for_test(instance, status=DagsterRunStatus.STARTED)
        run_label = {RUN_CONTAINER_LABEL: "1"}
        worker_label = {WORKER_LABEL: "1"}
        containers = {
            "done-run": FakeContainer("a1", {**run_label, RUN_ID_LABEL: done.run_id}),
            "done-worker": FakeContainer("a2", {**worker_label, RUN_ID_LABEL: done.run_id}),
            "killed-run": FakeContainer(
                "b1", {**run_label, RUN_ID_LABEL: killed.run_id}, exit_code=137, log=b"step 3\nkilled"
            ),
            "orphan-worker": FakeContainer(
                "b2", {**worker_label, RUN_ID_LABEL: killed.run_id}, status="running", log=b"parsing day"
            ),
            "going-run": FakeContainer("c1", {**run_label, RUN_ID_LABEL: going.run_id}, status="running"),
            "other-deployment": FakeContainer("d1", {**run_label, RUN_ID_LABEL: "not-a-run-here"}),
        }
        client = FakeClient(list(containers.values()))

        assert remove_finished(instance, client, now=time.time()) == {"run": 0, "worker": 0, "stopped": 0}
        assert not any(c.events for c in containers.values()), "inside the grace period: nothing"

        counts = remove_finished(instance, client, now=time.time() + GRACE_SECONDS + 1)
        assert counts == {"run": 2, "worker": 2, "stopped": 1}
        assert containers["orphan-worker"].events == ["stop", "remove"]
        for name in ("done-run", "done-worker", "killed-run"):
            assert containers[name].events == ["remove"], name
        assert containers["going-run"].events == [] and containers["other-deployment"].events == []

        messages = [
            e.message
            for e in instance.all_logs(killed.run_id)
            if e.dagster_event and e.dagster_event.event_type_value == "ENGINE_EVENT"
        ]
        assert any("exited with code 137" in m and "killed" in m for m in messages), messages
        assert any("stopped after its run ended" in m and "parsing day" in m for m in messages), messages
        assert not [e for e in instance.all_logs(done.run_id) if "removed" in (e.message or "")]
