# recapd container image.
#
# There is no Docker engine on the development machines, so this file is
# kept honest by running, step for step, the same commands CI runs:
#   cargo build --release --locked   (the build stage)
#   recapd health --addr ...         (the HEALTHCHECK)

# ---- build: dependencies first, so the layer is cached until Cargo.lock changes
FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
COPY proto ./proto
RUN mkdir src && echo 'fn main() {}' > src/main.rs && echo '' > src/lib.rs \
    && cargo build --release --locked \
    && rm -rf src target/release/deps/recapd* target/release/deps/librecapd* target/release/recapd*
COPY src ./src
RUN cargo build --release --locked

# ---- runtime: small, non-root
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home-dir /var/lib/recapd --create-home recapd
COPY --from=build /src/target/release/recapd /usr/local/bin/recapd
USER recapd
ENV RECAPD_LISTEN=0.0.0.0:50051 \
    RECAPD_DATA_DIR=/var/lib/recapd/data
VOLUME ["/var/lib/recapd/data"]
EXPOSE 50051
ENTRYPOINT ["/usr/local/bin/recapd"]
