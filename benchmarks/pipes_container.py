"""A real landing day's corpus_daily with its heavy stages as Pipes subprocesses vs Pipes containers.

    python benchmarks/pipes_container.py [--day 2020-01-08] [--repeats 3] [--image corpus-local/corpus:latest]

Needs a Docker daemon and the project image (docker/build-local-base.sh, or
`docker build -f docker/Dockerfile`); run it with no other container busy, since the container
side is read from the cgroup every container is charged to. Each repeat runs the day's
``corpus_daily`` job in process in a fresh child process on a fresh data root (the day's OAI page,
PDF and recorded TEI copied from ../shared/landing into a temporary landing zone, so no Grobid is
needed), with ``CORPUS_DEPLOYMENT=local`` (each heavy stage a ``python -m corpus_assets.worker``
subprocess) and ``CORPUS_DEPLOYMENT=docker`` (each one a container of the image, the data root
and landing zone bind-mounted at the same paths).

CPU: the child process tree (``wait4`` rusage: the run, its Pipes subprocesses and their pools);
for containers also the docker cgroup (every container's CPU) and dockerd, containerd and the
shims. The difference divided by the heavy stages the day ran is the per-step overhead of a
container.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, SHARED, result

sys.path.insert(0, str(REPO / "docker"))
from stack import DOCKER, docker_cpu_seconds  # noqa: E402

CHILD = """
import os, sys, warnings
os.umask(0)  # what this root process creates, the containers' uid 10001 can write into
warnings.filterwarnings("ignore")
from corpus_assets.definitions import defs
result = defs.resolve_job_def("corpus_daily").execute_in_process(
    partition_key=sys.argv[1], raise_on_error=True,
    run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}}},
)
steps = [e for e in result.all_events if e.event_type_value == "STEP_SUCCESS"]
print("steps", len(steps))
"""
PIPES_STAGES = 5  # arxiv_pdfs, arxiv_sources, grobid_tei, pdf_parses, latex_parses


def landing_for(day: str, root: Path) -> Path:
    src = SHARED / "landing"
    page = (src / "oai" / f"{day}.xml").read_text()
    landing = root / "landing"
    for sub in ("oai", "pdf", "tei", "src"):
        (landing / sub).mkdir(parents=True)
    shutil.copy(src / "oai" / f"{day}.xml", landing / "oai")
    for path in [*(src / "pdf").glob("*.pdf"), *(src / "tei").glob("*.xml"), *(src / "src").glob("*")]:
        stem = path.name.split(".tei.xml")[0].removesuffix(".pdf").removesuffix(".tar.gz").removesuffix(".gz")
        if f"<id>{stem.replace('_', '/')}</id>" in page:
            shutil.copy(path, landing / path.parent.name)
    return landing


def one_run(mode: str, day: str, image: str, root: Path) -> dict:
    work = Path(tempfile.mkdtemp(dir=root))
    landing = landing_for(day, work)
    home = work / "data"
    home.mkdir()
    for path in (work, home, *landing.rglob("*")):
        path.chmod(0o777 if path.is_dir() else 0o666)  # the container's uid 10001 writes here
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORPUS_", "DAGSTER_"))}
    env |= {
        "CORPUS_DEPLOYMENT": mode,
        "CORPUS_HOME": str(home),
        "CORPUS_LANDING": str(landing),
        "CORPUS_START_DATE": "2007-04-01",
        "CORPUS_WORKER_IMAGE": image,
        "CORPUS_HOME_VOLUME": str(home),  # a host path: bind-mounted at the same path
        "CORPUS_LANDING_VOLUME": str(landing),
        "CORPUS_DOCKER_NETWORK": "bridge",
        "DOCKER_HOST": os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"),
        "PYTHONPATH": str(REPO),
    }
    docker0 = docker_cpu_seconds() if mode == "docker" else 0.0
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, day], env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(child.pid, 0)
    out, err = child.stdout.read().decode(), child.stderr.read().decode()
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{mode} run failed:\n{out[-2000:]}\n{err[-4000:]}")
    tree = usage.ru_utime + usage.ru_stime
    containers = (docker_cpu_seconds() - docker0) if mode == "docker" else 0.0
    steps = int(out.split("steps")[-1].split()[0])
    shutil.rmtree(work, ignore_errors=True)
    return {
        "cpu_s": tree + containers,
        "tree_cpu_s": tree,
        "container_cpu_s": containers,
        "wall_s": wall,
        "steps": steps,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--day", default="2020-01-08")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--image", default="corpus-local/corpus:latest")
    args = parser.parse_args()
    if subprocess.run([DOCKER, "image", "inspect", args.image], capture_output=True).returncode != 0:
        raise SystemExit(f"no image {args.image}: build it first (docker/build-local-base.sh)")
    if docker_cpu_seconds() is None:
        raise SystemExit("the docker cgroup's CPU accounting is not readable here (cgroup v1, cgroupfs)")
    runs: dict[str, list[dict]] = {"local": [], "docker": []}
    with tempfile.TemporaryDirectory(prefix="pipes-bench-") as tmp:
        root = Path(tmp)
        root.chmod(0o777)
        for _ in range(args.repeats):
            for mode in ("local", "docker"):  # interleaved: drifting load hits both alike
                r = one_run(mode, args.day, args.image, root)
                runs[mode].append(r)
                print(f"{mode:6s} cpu {r['cpu_s']:6.2f} s (tree {r['tree_cpu_s']:.2f} + containers "
                      f"{r['container_cpu_s']:.2f})  wall {r['wall_s']:5.1f} s  steps {r['steps']}", flush=True)  # fmt: skip

    def median(mode: str, key: str) -> float:
        values = sorted(r[key] for r in runs[mode])
        return values[len(values) // 2]

    local, docker = median("local", "cpu_s"), median("docker", "cpu_s")
    result(
        day=args.day,
        local_cpu_s=local,
        docker_cpu_s=docker,
        local_wall_s=median("local", "wall_s"),
        docker_wall_s=median("docker", "wall_s"),
        container_overhead_cpu_s_per_step=(docker - local) / PIPES_STAGES,
    )


if __name__ == "__main__":
    main()
