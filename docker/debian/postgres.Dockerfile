# PostgreSQL from Debian's packages, for sites that cannot pull postgres:16-bookworm; the same
# interface as the official image where the stack uses it: POSTGRES_USER / POSTGRES_PASSWORD /
# POSTGRES_DB on first start, data in /var/lib/postgresql/data, `pg_isready` and `psql` on PATH.
#   docker build --build-arg BASE_IMAGE=corpus-base:bookworm -f docker/debian/postgres.Dockerfile docker/debian
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
# no cluster at install time: the entrypoint makes one in the volume on first start
RUN mkdir -p /etc/postgresql-common \
 && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /run/postgresql \
 && chown -R postgres:postgres /var/lib/postgresql /run/postgresql \
 && chmod 700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["postgres-entrypoint.sh"]
CMD ["postgres"]
