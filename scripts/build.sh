#!/usr/bin/env bash
# Configures and builds kcast in build/ (Release). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${KCAST_BUILD_DIR:-build}
JOBS=${KCAST_JOBS:-$(nproc)}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
# Everything: kcast, tests, benchmarks, and kcast-microbench when nvcc is present.
ninja -C "$BUILD" -j"$JOBS"
