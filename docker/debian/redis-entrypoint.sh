#!/bin/sh
# `redis-server ARGS`: listen on the container's interfaces without protected mode (the network
# is the compose network, nothing is published); any other command runs as given.
set -eu
if [ "${1:-}" = redis-server ]; then
  shift
  exec redis-server --bind 0.0.0.0 --protected-mode no "$@"
fi
exec "$@"
