# syntax=docker/dockerfile:1

# Both binaries are built once; each runtime image is a stage of its own, so
# the image to embed in a Crossplane package is chosen with --target:
#
#   docker build --target provider --tag provider-litellm-runtime .
#   docker build --target function --tag function-litellm-runtime .
#
# package/build.sh runs these and the `crossplane xpkg build` commands.

# The toolchain the project is tested with. Debian 12 (bookworm), to match the
# glibc of the distroless cc-debian12 runtime: the binaries link glibc (rustls
# with aws-lc-rs, whose C parts are compiled here).
ARG RUST_VERSION=1.95.0

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
# Cargo.toml names the benches; cargo reads their paths even for --bin builds.
COPY benches benches
COPY src src
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin provider-litellm --bin function-litellm \
    && mkdir -p /out \
    && cp target/release/provider-litellm target/release/function-litellm /out/

# provider-litellm: /healthz, /readyz and /metrics on 0.0.0.0:8080, the port
# Crossplane's package runtime names `metrics` on every provider Deployment.
FROM gcr.io/distroless/cc-debian12:nonroot AS provider
COPY --from=build /out/provider-litellm /usr/local/bin/provider-litellm
# Numeric, so runAsNonRoot can verify it (Crossplane runs packages as 2000:2000
# unless a DeploymentRuntimeConfig says otherwise).
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/provider-litellm"]

# function-litellm: gRPC on 0.0.0.0:9443 (mTLS from TLS_SERVER_CERTS_DIR, which
# Crossplane sets) and /metrics on :8080.
FROM gcr.io/distroless/cc-debian12:nonroot AS function
COPY --from=build /out/function-litellm /usr/local/bin/function-litellm
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["/usr/local/bin/function-litellm"]
