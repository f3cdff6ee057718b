#!/usr/bin/env bash
# Build the images of the stack where no image registry can be reached: a Debian bookworm base
# made from Debian packages (mmdebstrap, then `docker import`), and from it the project image,
# the Grobid stand-in and Debian-package images for Postgres, Redis, the Docker socket proxy and
# the landing-zone filler. The base is made only when missing (FORCE=1 makes it again); the
# images are built every time, and docker's layer cache makes that cheap when nothing changed
# (a code change rebuilds only the project image's last layers).
#
#   docker/build-local-base.sh            # base + every image, tags in docker/local-images.env
#   docker/build-local-base.sh base       # only the base image
#
# Then run the stack on them: `docker-compose --env-file docker/local-images.env -f docker/docker-compose.yml up -d`.
# Needs: root (or a user mmdebstrap can unshare as), mmdebstrap, a Docker daemon, Debian's mirror.
# The host's extra CA certificates (/usr/local/share/ca-certificates/*.crt) go into the base, so
# HTTPS from inside builds (pip) trusts what the host trusts. The base has `python` and `pip` on
# PATH and no EXTERNALLY-MANAGED marker, like the official python image.
set -euo pipefail
cd "$(dirname "$0")/.."

DOCKER=${DOCKER:-/usr/bin/docker}
SUITE=${SUITE:-bookworm}
BASE_TAG=${BASE_TAG:-corpus-base:$SUITE}
PREFIX=${IMAGE_PREFIX:-corpus-local}
CA_DIR=${CA_DIR:-/usr/local/share/ca-certificates}
# the host's own Debian sources when they are bookworm's (mirrors, proxies), else the public mirror
MIRROR=${MIRROR:-}
if [ -z "$MIRROR" ]; then
  if [ -f /etc/apt/sources.list.d/debian.sources ] && grep -q "^Suites:.*\b$SUITE\b" /etc/apt/sources.list.d/debian.sources; then
    MIRROR=/etc/apt/sources.list.d/debian.sources
  else
    MIRROR=http://deb.debian.org/debian
  fi
fi

have() { "$DOCKER" image inspect "$1" >/dev/null 2>&1 && [ -z "${FORCE:-}" ]; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
report() {  # report TAG START_MS: wall time of the build and the image's size
  local size; size=$("$DOCKER" image inspect -f '{{.Size}}' "$1")
  printf 'built %-36s in %4d s, %4d MB\n' "$1" $(( ($(ms) - $2) / 1000 )) $(( size / 1000000 ))
}

build_base() {
  if have "$BASE_TAG"; then echo "have $BASE_TAG"; return; fi
  local t0 tar certs=(); t0=$(ms); tar=$(mktemp --suffix=.tar)
  trap 'rm -f "$tar"' RETURN
  shopt -s nullglob; certs=("$CA_DIR"/*.crt); shopt -u nullglob
  # python3-venv: the project image installs into a venv; python-is-python3: `python` on PATH
  # merged-usr hook: /usr merged by mmdebstrap itself, not by the usrmerge package (and the 50 MB
  # of perl it pulls in)
  mmdebstrap --variant=minbase --format=tar --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --include=ca-certificates,python3,python3-pip,python3-venv,python-is-python3 \
    --aptopt='Acquire::Check-Valid-Until "false"' --aptopt='Acquire::Check-Date "false"' \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='mkdir -p "$1/usr/local/share/ca-certificates"' \
    ${certs[0]:+--customize-hook="copy-in ${certs[*]} /usr/local/share/ca-certificates"} \
    --customize-hook='chroot "$1" update-ca-certificates' \
    --customize-hook='ln -sf pip3 "$1/usr/bin/pip"' \
    --customize-hook='rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$SUITE" "$tar" "$MIRROR"
  "$DOCKER" import \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["python3"]' \
    "$tar" "$BASE_TAG" >/dev/null
  report "$BASE_TAG" "$t0"
}

build() {  # build TAG DOCKERFILE [context]: always, docker's layer cache makes an unchanged image cheap
  local tag=$1 file=$2 context=${3:-.} t0
  t0=$(ms)
  "$DOCKER" build -q --force-rm --build-arg "BASE_IMAGE=$BASE_TAG" -f "$file" -t "$tag" "$context" >/dev/null
  report "$tag" "$t0"
}

build_base
[ "${1:-all}" = base ] && exit 0
build "$PREFIX/corpus:latest" docker/Dockerfile
build "$PREFIX/grobid-standin:latest" docker/grobid-standin/Dockerfile tests
build "$PREFIX/postgres:15" docker/debian/postgres.Dockerfile docker/debian
build "$PREFIX/redis:7" docker/debian/redis.Dockerfile docker/debian
build "$PREFIX/socket-proxy:latest" docker/debian/socket-proxy.Dockerfile docker/debian
build "$PREFIX/tools:latest" docker/debian/tools.Dockerfile docker/debian

echo "the stack on these images: docker-compose --env-file docker/local-images.env -f docker/docker-compose.yml ..."
