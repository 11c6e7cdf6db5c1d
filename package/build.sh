#!/usr/bin/env bash
# Builds the two runtime images from the Dockerfile, then the two Crossplane
# packages with those images embedded: provider-litellm.xpkg and
# function-litellm.xpkg in the repository root. Needs Docker (BuildKit) and
# the Crossplane CLI; `crossplane xpkg build` reads each image from the local
# Docker daemon. README.md (Install into a cluster) shows the same commands.
set -euo pipefail
cd "$(dirname "$0")/.."

docker build --target provider --tag provider-litellm-runtime .
docker build --target function --tag function-litellm-runtime .
crossplane xpkg build --package-root=package/provider --examples-root=examples/provider --embed-runtime-image=provider-litellm-runtime --package-file=provider-litellm.xpkg
crossplane xpkg build --package-root=package/function --examples-root=examples/function --embed-runtime-image=function-litellm-runtime --package-file=function-litellm.xpkg
