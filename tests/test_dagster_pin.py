"""The Dagster pin: one release for every Dagster package, every place that names it agrees, and the
image's requirement lists (docker/requirements.py) keep Dagster's packages in a layer of their own.

Moving the pin (docker/README.md, "A new Dagster") is ``python docker/requirements.py pyproject.toml
--repin X.Y.Z``; this test then names each other place that still says the old release (a comment
that says what the pinned Dagster does is checked again against the new one before it is moved).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("docker_requirements", REPO / "docker" / "requirements.py")
_requirements = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_requirements)
dagster_pins, repin, requirements = (
    _requirements.dagster_pins,
    _requirements.repin,
    _requirements.requirements,
)

PYPROJECT = (REPO / "pyproject.toml").read_text()
IMAGE_EXTRAS = "docker,postgres,celery,k8s"
# a Dagster release named in prose: "Dagster 1.13.27", "dagster 1.13.27", "chart 1.13.27",
# "--version 1.13.27" (not an address such as 127.0.0.1)
MENTION = re.compile(r"(?i)(?:dagster|chart|--version)\b[^\n]{0,40}?(?<![\d.])([01]\.\d+\.\d+)(?![\d.])")


def _pins() -> tuple[str, str]:
    """(core release, integrations release) the pyproject pins."""
    pins = dagster_pins(PYPROJECT)
    core = {v for v in pins.values() if v.startswith("1.")}
    libs = {v for v in pins.values() if v.startswith("0.")}
    assert len(core) == 1 and len(libs) == 1, pins
    return core.pop(), libs.pop()


def test_every_dagster_package_is_pinned_to_one_release_and_its_integrations_to_their_twin():
    pins = dagster_pins(PYPROJECT)
    assert {"dagster", "dagster-webserver", "dagster-postgres", "dagster-docker", "dagster-k8s",
            "dagster-celery"} <= set(pins)  # fmt: skip
    core, libs = _pins()
    assert pins["dagster"] == pins["dagster-webserver"] == core
    # Dagster's libraries are released with it, as 0.(M+16).P beside 1.M.P
    major, minor, patch = core.split(".")
    assert libs == f"0.{int(minor) + 16}.{patch}", (core, libs)
    # every Dagster requirement of the project is an exact pin (none floats to another release)
    project = tomllib.loads(PYPROJECT)["project"]
    every = list(project["dependencies"]) + [
        r for rs in project["optional-dependencies"].values() for r in rs
    ]
    dagster = [r for r in every if r.startswith("dagster")]
    assert len(dagster) == len(pins) and all("==" in r for r in dagster), dagster


def test_every_place_that_names_the_pinned_dagster_names_the_pin():
    core, libs = _pins()
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    found = {}
    for name in files.stdout.splitlines():
        path = REPO / name
        # code and configuration (the README's prose may tell of other releases: its Helm command is below)
        if path.suffix not in {".py", ".yaml", ".yml", ".toml", ".sh", ".cfg", ""} or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for version in MENTION.findall(line):
                found[f"{name}:{number}"] = version
    assert found, "no place names the pinned Dagster (the pattern no longer finds them)"
    stale = {place: v for place, v in found.items() if v != (core if v.startswith("1.") else libs)}
    assert not stale, f"these name another Dagster than the pin {core} / {libs}: {stale}"
    # the Helm chart the README installs is the pinned release
    assert f"--version {core} " in (REPO / "docker" / "README.md").read_text()


def test_the_image_installs_dagster_apart_from_every_other_pin():
    """requirements.py's two parts are the whole list, split at Dagster's packages; the
    Dockerfile installs the others first and Dagster's packages in the layer after, each list
    a file of its own, so a Dagster upgrade reuses the layer below (docker's cache is by content)."""
    every = requirements(PYPROJECT, IMAGE_EXTRAS)
    dagster = requirements(PYPROJECT, IMAGE_EXTRAS, "dagster")
    others = requirements(PYPROJECT, IMAGE_EXTRAS, "others")
    assert sorted(dagster + others) == sorted(every) and not set(dagster) & set(others)
    assert {r.split("==")[0] for r in dagster} == set(dagster_pins(PYPROJECT))
    assert not any(r.startswith("dagster") for r in others)
    dockerfile = (REPO / "docker" / "Dockerfile").read_text()
    order = [
        "--part others > /others.txt",
        "--part dagster > /dagster.txt",
        "FROM ${BASE_IMAGE} AS build",
        "COPY --from=requirements /others.txt",
        "RUN pip install --no-cache-dir -r /tmp/others.txt",
        "COPY --from=requirements /dagster.txt",
        "RUN pip install --no-cache-dir -r /tmp/dagster.txt -r /tmp/others.txt",
        "COPY pyproject.toml setup.py ./",
    ]
    at = [dockerfile.index(step) for step in order]
    assert at == sorted(at), dict(zip(order, at, strict=True))


def test_repin_moves_every_dagster_pin_and_nothing_else():
    core, libs = _pins()
    assert repin(PYPROJECT, core) == PYPROJECT
    moved = repin(PYPROJECT, "1.12.22")
    assert dagster_pins(moved) == {
        name: "1.12.22" if v.startswith("1.") else "0.28.22" for name, v in dagster_pins(PYPROJECT).items()
    }
    changed = [(a, b) for a, b in zip(PYPROJECT.splitlines(), moved.splitlines(), strict=True) if a != b]
    assert len(changed) == len(dagster_pins(PYPROJECT))
    assert all(re.sub(r"\d+\.\d+\.\d+", "V", a) == re.sub(r"\d+\.\d+\.\d+", "V", b) for a, b in changed)
    assert tomllib.loads(moved)["project"]["name"] == "corpus"
    # the command the README gives
    done = subprocess.run(
        [sys.executable, str(REPO / "docker" / "requirements.py"), str(REPO / "pyproject.toml"), "--repin", "1.12.22"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout == moved
