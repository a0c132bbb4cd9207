#!/usr/bin/env bash
# Installs what kcast needs to build and test, from Debian packages. Idempotent: installs only
# what is missing. Works as root, or through sudo when not root.
set -euo pipefail
PKGS=(cmake g++ ninja-build pkg-config libeigen3-dev libceres-dev libboost-program-options-dev
      libfccp-dev libjemalloc-dev libgtest-dev libbenchmark-dev nlohmann-json3-dev libsqlite3-dev zlib1g-dev python3
      python3-dev python3-venv python3-setuptools python3-wheel pybind11-dev python3-pybind11 python3-pytest
      jupyter-nbconvert python3-ipykernel python3-matplotlib python3-distributed)
PKGS+=("$@")  # extra packages (e.g. clang for the fuzzers, chromium for the HTML screenshot)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
