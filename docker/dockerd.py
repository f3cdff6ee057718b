#!/usr/bin/env python3
"""Start a Docker daemon for `make test-containers` when none answers, and put the host back.

    python3 docker/dockerd.py start   # a daemon answers afterwards; records the host's state first
    python3 docker/dockerd.py stop    # only if `start` started one: stop it, then restore the host

A daemon that was already answering is used and left alone. One that `start` started is
stopped by `stop`, which then removes what dockerd leaves behind on the host: the `docker0`
bridge and any `br-*` bridge that was not there before, the iptables rules and chains it
added (by comparing `iptables-save` with the copy taken before), and the sysctls it changed
(`net.ipv4.ip_forward`, the bridge netfilter switches) set back to their recorded values.
Standard library only: it runs before anything else is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

DOCKER = os.environ.get("DOCKER", "/usr/bin/docker")
DOCKERD = shutil.which("dockerd", path="/usr/sbin:/usr/bin:/sbin:/bin") or "dockerd"
STATE = Path(os.environ.get("CORPUS_DOCKERD_STATE", "/run/corpus-test-dockerd/state.json"))
LOG = STATE.with_name("dockerd.log")
SYSCTLS = (
    "net.ipv4.ip_forward",
    "net.ipv4.conf.all.forwarding",
    "net.bridge.bridge-nf-call-iptables",
    "net.bridge.bridge-nf-call-ip6tables",
)
RUN_DIRS = ("/run/docker", "/run/containerd")  # dockerd's runtime state, removed if it made them
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 60


def _run(cmd: list[str], timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def daemon_answers() -> bool:
    try:
        return _run([DOCKER, "version", "--format", "{{.Server.Version}}"], timeout=15).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def links() -> list[str]:
    done = _run(["ip", "-o", "link", "show"])
    return [line.split(":")[1].strip().split("@")[0] for line in done.stdout.splitlines() if ":" in line]


def sysctls() -> dict[str, str]:
    values = {}
    for name in SYSCTLS:
        path = Path("/proc/sys") / name.replace(".", "/")
        if path.exists():
            values[name] = path.read_text().strip()
    return values


def iptables_save(binary: str) -> list[str]:
    if shutil.which(binary) is None:
        return []
    done = _run([binary])
    return [line for line in done.stdout.splitlines() if line and not line.startswith("#")]


def record() -> dict:
    return {
        "links": links(),
        "sysctls": sysctls(),
        "iptables": iptables_save("iptables-save"),
        "ip6tables": iptables_save("ip6tables-save"),
        "nft_tables": nft_tables(),
        "run_dirs": [d for d in RUN_DIRS if Path(d).exists()],
    }


def nft_tables() -> list[str]:
    """``family name`` of each nftables table (iptables-nft creates ``ip filter``, ``ip nat``)."""
    if shutil.which("nft") is None:
        return []
    done = _run(["nft", "list", "tables"])
    return [line.split(None, 1)[1] for line in done.stdout.splitlines() if line.startswith("table ")]


def start() -> int:
    if daemon_answers():
        print(f"dockerd: a daemon already answers ({DOCKER}); using it, it will be left running")
        return 0
    if shutil.which(DOCKERD) is None and not Path(DOCKERD).exists():
        print("dockerd: not installed (apt-get install docker.io)", file=sys.stderr)
        return 2
    STATE.parent.mkdir(parents=True, exist_ok=True)
    state = record()
    log = LOG.open("ab")
    process = subprocess.Popen(
        [DOCKERD], stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
    )
    state["pid"] = process.pid
    STATE.write_text(json.dumps(state, indent=1))
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            print(f"dockerd: exited with {process.returncode}; see {LOG}", file=sys.stderr)
            restore(state)
            STATE.unlink(missing_ok=True)
            return 1
        if daemon_answers():
            print(f"dockerd: started (pid {process.pid}, log {LOG}); `stop` puts the host back")
            return 0
        time.sleep(1)
    print(f"dockerd: no answer after {START_TIMEOUT_S} s; see {LOG}", file=sys.stderr)
    return 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    comm = Path(f"/proc/{pid}/comm")
    return comm.exists() and comm.read_text().strip() == "dockerd"


def stop() -> int:
    if not STATE.exists():
        print("dockerd: not started by `start`; nothing to stop")
        return 0
    state = json.loads(STATE.read_text())
    pid = int(state["pid"])
    if _alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        if _alive(pid):
            print(f"dockerd: pid {pid} ignored SIGTERM for {STOP_TIMEOUT_S} s; SIGKILL", file=sys.stderr)
            os.kill(pid, signal.SIGKILL)
            time.sleep(1)
    restore(state)
    STATE.unlink(missing_ok=True)
    print(f"dockerd: stopped (pid {pid}); bridges, iptables and sysctls as recorded before it started")
    return 0


BUILTIN_CHAINS = {"INPUT", "FORWARD", "OUTPUT", "PREROUTING", "POSTROUTING"}


def _table_rules(lines: list[str]) -> dict[str, tuple[dict[str, str], list[str]]]:
    """table -> ({chain: policy}, rules) from iptables-save lines."""
    tables: dict[str, tuple[dict[str, str], list[str]]] = {}
    current = None
    for line in lines:
        if line.startswith("*"):
            current = line[1:]
            tables[current] = ({}, [])
        elif current and line.startswith(":"):
            chain, policy = line[1:].split()[:2]
            tables[current][0][chain] = policy
        elif current and line.startswith("-A "):
            tables[current][1].append(line)
    return tables


def restore_iptables(binary: str, before: list[str]) -> None:
    if shutil.which(binary) is None:
        return
    now, was = _table_rules(iptables_save(f"{binary}-save")), _table_rules(before)
    for table, (chains, rules) in now.items():
        old_chains, old_rules = was.get(table, ({}, []))
        for rule in reversed(rules):  # added rules, newest first
            if rule not in old_rules:
                _run([binary, "-t", table, "-D", *shlex.split(rule)[1:]])
        for chain, policy in chains.items():  # dockerd sets FORWARD to DROP
            if chain in BUILTIN_CHAINS and policy != old_chains.get(chain, "ACCEPT"):
                _run([binary, "-t", table, "-P", chain, old_chains.get(chain, "ACCEPT")])
        added = [c for c in chains if c not in old_chains and c not in BUILTIN_CHAINS]
        for chain in added:
            _run([binary, "-t", table, "-F", chain])
        for chain in added:
            _run([binary, "-t", table, "-X", chain])


def restore(state: dict) -> None:
    for link in links():
        if link not in state["links"] and (link == "docker0" or link.startswith(("br-", "veth"))):
            _run(["ip", "link", "delete", link])
    restore_iptables("iptables", state["iptables"])
    restore_iptables("ip6tables", state["ip6tables"])
    for table in nft_tables():  # tables iptables-nft created for dockerd, now empty of rules
        if table not in state.get("nft_tables", []):
            listing = _run(["nft", "list", "table", *table.split()]).stdout
            if not any(
                line.strip() and not line.strip().startswith(("table", "chain", "type", "}"))
                for line in listing.splitlines()
            ):
                _run(["nft", "delete", "table", *table.split()])
    for directory in RUN_DIRS:
        if directory not in state.get("run_dirs", RUN_DIRS) and not any(
            line.split()[1].startswith(directory) for line in Path("/proc/mounts").read_text().splitlines()
        ):
            shutil.rmtree(directory, ignore_errors=True)
    for name, value in state["sysctls"].items():
        path = Path("/proc/sys") / name.replace(".", "/")
        if path.exists() and path.read_text().strip() != value:
            path.write_text(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop", "status"])
    args = parser.parse_args(argv)
    if args.action == "start":
        return start()
    if args.action == "stop":
        return stop()
    print(json.dumps({"answers": daemon_answers(), "started_here": STATE.exists()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
