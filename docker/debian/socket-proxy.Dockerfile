# The Docker API behind a filter, from Debian's haproxy, for sites that cannot pull
# tecnativa/docker-socket-proxy: the same environment switches (CONTAINERS, IMAGES, NETWORKS,
# VOLUMES, POST, DELETE, ... = 1 allows that part; PING, VERSION, EVENTS default on), listening
# on 2375 inside the compose network. Mount the socket read-only at /var/run/docker.sock.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends haproxy \
 && rm -rf /var/lib/apt/lists/*
COPY socket-proxy.cfg /etc/haproxy/socket-proxy.cfg
ENV CONTAINERS=0 IMAGES=0 NETWORKS=0 VOLUMES=0 INFO=0 EXEC=0 POST=0 DELETE=0 \
    PING=1 VERSION=1 EVENTS=1 SOCKET_PATH=/var/run/docker.sock
EXPOSE 2375
CMD ["haproxy", "-W", "-db", "-f", "/etc/haproxy/socket-proxy.cfg"]
