"""The project's pinned requirements, for the image's dependency layers, and its Dagster pins moved.

    python docker/requirements.py pyproject.toml docker,postgres,celery,k8s                  # every pin
    python docker/requirements.py pyproject.toml docker,postgres,celery,k8s --part dagster   # Dagster's packages
    python docker/requirements.py pyproject.toml docker,postgres,celery,k8s --part others    # every other pin
    python docker/requirements.py pyproject.toml --repin 1.13.26 > moved.toml                # another Dagster

The image installs every other pin, then Dagster's packages in a layer of their own, before it
copies the code: a code change rebuilds one small layer, a Dagster upgrade the Dagster layer only.
``--repin`` prints pyproject.toml with every Dagster pin moved to one release: ``dagster`` and
``dagster-webserver`` to it, the integrations (``dagster-postgres``, ``dagster-docker`` ...) to
their matching 0.x release, found from the pins' own pairing (1.M.P with 0.(M+16).P: the minor
numbers apart by 16, the same patch). docker/test_upgrade.py builds its "before" image from it;
moving the pin is the same command on the repository's file.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib

# a Dagster pin as pyproject.toml writes it: "dagster==1.M.P", "dagster-postgres==0.N.P"
PIN = re.compile(r'"(dagster(?:-[a-z0-9-]+)?)==(\d+)\.(\d+)\.(\d+)"')


def is_dagster(requirement: str) -> bool:
    return re.match(r"dagster(-[a-z0-9-]+)?\s*(==|$)", requirement) is not None


def requirements(pyproject: str, extras: str, part: str = "all") -> list[str]:
    project = tomllib.loads(pyproject)["project"]
    optional = project["optional-dependencies"]
    pins = list(project["dependencies"])
    for extra in filter(None, extras.split(",")):
        pins += [r for r in optional[extra] if not r.startswith("corpus[")]
    if part == "dagster":
        return [r for r in pins if is_dagster(r)]
    if part == "others":
        return [r for r in pins if not is_dagster(r)]
    return pins


def dagster_pins(pyproject: str) -> dict[str, str]:
    """Each Dagster package pyproject.toml pins, and its version."""
    return {m[1]: ".".join(m.groups()[1:]) for m in PIN.finditer(pyproject)}


def repin(pyproject: str, version: str) -> str:
    """pyproject.toml with dagster and dagster-webserver at ``version`` and the integrations at
    their matching release, paired the way the current pins pair."""
    pins = dagster_pins(pyproject)
    core = [int(x) for x in pins["dagster"].split(".")]
    libs = {v for name, v in pins.items() if v.startswith("0.")}
    if len(libs) != 1 or not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise SystemExit(f"cannot repin: integrations at {sorted(libs)}, asked for {version!r}")
    offset = int(libs.pop().split(".")[1]) - core[1]
    major, minor, patch = (int(x) for x in version.split("."))

    def moved(m: re.Match) -> str:
        if m[2] == "0":
            return f'"{m[1]}==0.{minor + offset}.{patch}"'
        return f'"{m[1]}=={major}.{minor}.{patch}"'

    return PIN.sub(moved, pyproject)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pyproject")
    parser.add_argument("extras", nargs="?", default="")
    parser.add_argument("--part", choices=["all", "dagster", "others"], default="all")
    parser.add_argument("--repin", metavar="VERSION", help="print pyproject.toml with Dagster at VERSION")
    args = parser.parse_args(argv)
    with open(args.pyproject) as fh:
        text = fh.read()
    if args.repin:
        sys.stdout.write(repin(text, args.repin))
    else:
        print("\n".join(requirements(text, args.extras, args.part)))


if __name__ == "__main__":
    main()
