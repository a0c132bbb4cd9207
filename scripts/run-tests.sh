#!/usr/bin/env bash
# README command (2): set up, build and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${KCAST_BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)"
