# syntax=docker/dockerfile:1
# Multi-stage build of the liken-dra node daemon on Debian bookworm.
#   docker build -t liken-dra .                 the node daemon image (last stage)
#   docker build --target test -t liken-dra:e2e .   plus umockdev and the recorded machines (hack/e2e-kind.sh)
FROM debian:bookworm AS build
WORKDIR /src
COPY hack/install-deps.sh hack/install-deps.sh
RUN ./hack/install-deps.sh
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLIKEN_BUILD_TESTS=OFF \
 && cmake --build /build -j"$(nproc)" --target liken-dra \
 && strip /build/liken-dra

FROM debian:bookworm-slim AS base
# gRPC, protobuf, Abseil, re2, c-ares, yaml-cpp and zlib are linked into the binary from Debian's static archives
# (cmd/static_deps.cmake); what Debian ships only as shared libraries is installed here.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libcpprest2.10 libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 pci.ids ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/liken-dra /usr/bin/liken-dra
ENTRYPOINT ["/usr/bin/liken-dra"]
CMD ["run"]

FROM base AS test
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends umockdev \
 && rm -rf /var/lib/apt/lists/*
COPY test/machines/*.umockdev /usr/share/liken-dra/machines/
# Not "/": umockdev's preload resolves a relative name against it (hack/build-image.sh says why).
WORKDIR /usr/share/liken-dra/machines

FROM base AS runtime
