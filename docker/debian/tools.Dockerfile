# A few MB of shell tools (Debian's busybox-static in an empty image), for filling the landing
# volume where busybox cannot be pulled:
#   docker run --rm -v corpus_landing:/landing -v "$PWD/../shared/landing":/src:ro IMAGE cp -r /src/. /landing/
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static \
 && mkdir -p /out/bin /out/tmp \
 && cp /bin/busybox /out/bin/busybox \
 && for tool in $(/bin/busybox --list); do [ "$tool" = busybox ] || ln -sf busybox "/out/bin/$tool"; done \
 && chmod 1777 /out/tmp
FROM scratch
COPY --from=build /out /
ENV PATH=/bin
CMD ["sh"]
