# Redis from Debian's packages (7.0 in bookworm), for sites that cannot pull redis:7-bookworm:
# `redis-server ARGS` as the command, reachable from the other containers of its network
# (Debian's build keeps Redis's protected mode on; the entrypoint turns it off, as the
# official image does), `redis-cli` for the health check.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/redis-entrypoint.sh
USER redis
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["redis-entrypoint.sh"]
CMD ["redis-server"]
