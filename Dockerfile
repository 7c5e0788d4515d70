# recapd container image.
#
# There is no Docker engine on the development machines, so this file is
# kept honest by running only commands that CI runs too (scripts/test.sh):
#   cargo build --release --locked      (the build stages)
#   recapd health                       (the HEALTHCHECK; CI probes a live server with it)

# ---- dependencies: cached until Cargo.toml, Cargo.lock, build.rs, .cargo/,
# the domain crate's manifest or proto/ change
FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
# The build's flags (x86-64-v2 on x86-64), and the workspace's domain
# crate as its manifest and an empty library until the real build.
COPY .cargo ./.cargo
COPY crates/domain/Cargo.toml ./crates/domain/Cargo.toml
RUN mkdir crates/domain/src && touch crates/domain/src/lib.rs
# The workspace's other member, the benchmark tool: cargo needs its manifest
# to load the workspace (and to check Cargo.lock), but builds only recapd,
# so none of its sources or protos are copied.
COPY bench/Cargo.toml ./bench/Cargo.toml
COPY proto ./proto
RUN mkdir src \
    && echo 'fn main() {}' > src/main.rs \
    && touch src/lib.rs \
    && cargo build --release --locked \
    && rm -rf src
# ---- the real build
COPY crates ./crates
COPY src ./src
RUN touch src/main.rs src/lib.rs crates/domain/src/lib.rs && cargo build --release --locked

# ---- runtime: small, non-root, data on a volume
FROM debian:bookworm-slim
# The system's root certificates: for PostgreSQL's sslmode=verify-full
# without sslrootcert, and for `recapd health|import|export --tls`.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --home-dir /var/lib/recapd --create-home recapd \
    && mkdir -p /var/lib/recapd/data && chown recapd /var/lib/recapd/data
COPY --from=build /src/target/release/recapd /usr/local/bin/recapd
USER recapd
ENV RECAPD_LISTEN=0.0.0.0:50051 \
    RECAPD_METRICS_LISTEN=0.0.0.0:9464 \
    RECAPD_DATA_DIR=/var/lib/recapd/data
VOLUME ["/var/lib/recapd/data"]
EXPOSE 50051 9464
# `recapd health` dials --listen (0.0.0.0 means this host) and asks grpc.health.v1;
# with RECAPD_TLS_CERT set it dials over TLS, trusting that certificate.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/recapd", "health"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/recapd"]
