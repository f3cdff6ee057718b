#!/usr/bin/env bash
# `make test-containers`: the compose deployment, run for real on this machine.
#  1. installs what is missing (root, apt): docker.io, docker-compose (Debian's 1.29), mmdebstrap;
#  2. starts dockerd if no daemon answers, after recording the host's bridges, iptables and sysctls;
#  3. builds the Debian base and every image (docker/build-local-base.sh; cached between runs);
#  4. runs the stack's tests, given as arguments (default docker/test_stack.py: the stack up on real
#     landing days, checks (a)-(f), stack down -v; docker/test_chaos.py: faults, see its docstring;
#     docker/test_upgrade.py: an image swapped in place);
#  5. removes whatever the stack left, stops the daemon it started and puts the host back
#     (docker0, the iptables chains, ip_forward as found): on success, failure or interrupt.
# Where Docker cannot run at all (no daemon answers and none can be started), it says so and
# exits 0 without testing; CORPUS_REQUIRE_CONTAINERS=1 makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export DOCKER=${DOCKER:-/usr/bin/docker}
PY=${PYTHON:-.venv/bin/python}
t_start=$(date +%s)

log() { printf '== test-containers: %s\n' "$*"; }

missing=()
{ [ -x /usr/bin/docker ] && [ -x /usr/sbin/dockerd ]; } || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || "$DOCKER" compose version >/dev/null 2>&1 || missing+=(docker-compose)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
if [ ${#missing[@]} -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "needs ${missing[*]} (Debian packages) and cannot install them here (not root, or no apt)" >&2
    exit 2
  fi
  log "installing ${missing[*]}"
  # no service may start during the install (we start dockerd ourselves, and stop it again)
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && added_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" iptables >/dev/null
  [ -n "$added_policy" ] && rm -f /usr/sbin/policy-rc.d
fi

cleanup() {
  local rc=$?
  if "$DOCKER" version >/dev/null 2>&1; then
    # what an interrupted test may have left: launched run and Pipes containers, then the stack
    ids=$("$DOCKER" ps -aq --filter label=dagster/run_id; "$DOCKER" ps -aq --filter label=io.corpus.pipes-worker
         "$DOCKER" ps -aq --filter label=io.corpus.chaos)
    [ -n "$ids" ] && "$DOCKER" rm -f $ids >/dev/null 2>&1 || true
    if command -v docker-compose >/dev/null 2>&1; then compose=(docker-compose); else compose=("$DOCKER" compose); fi
    "${compose[@]}" --env-file docker/local-images.env -p corpus -f docker/docker-compose.yml \
      -f docker/compose.test.yml --profile celery down -v --remove-orphans --timeout 10 >/dev/null 2>&1 || true
  fi
  python3 docker/dockerd.py stop || rc=1
  log "done in $(( $(date +%s) - t_start )) s"
  exit $rc
}

if ! python3 docker/dockerd.py start; then
  if [ "${CORPUS_REQUIRE_CONTAINERS:-}" = 1 ]; then
    log "FAILED: Docker cannot run on this machine (see above)" >&2
    exit 1
  fi
  log "SKIPPED: Docker cannot run on this machine (no daemon answers and dockerd would not start; see above)."
  log "SKIPPED: the compose deployment was not tested here."
  exit 0
fi
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building images (docker/build-local-base.sh)"
t_build=$(date +%s)
bash docker/build-local-base.sh
log "images ready in $(( $(date +%s) - t_build )) s"

[ $# -gt 0 ] || set -- docker/test_stack.py
# Each file in its own pytest process, so each gets its own stack (the session fixtures of
# docker/conftest.py): the upgrade test counts the days it built itself, not a chaos test's.
# Each test carries its own time limit; no traceback dumps of the long ones (faulthandler).
failed=()
for tests in "$@"; do
  log "running $tests"
  "$PY" -m pytest "$tests" -p no:cacheprovider -q -ra -o faulthandler_timeout=0 || failed+=("$tests")
done
if [ ${#failed[@]} -gt 0 ]; then
  log "FAILED: ${failed[*]}" >&2
  exit 1
fi
