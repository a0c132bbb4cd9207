#!/usr/bin/env bash
# Records the golden synth outputs that tests/synth/golden_test.cc compares byte for byte: for each
# case of tests/data/golden/cases.txt (NAME ARGS..., OUT standing for a temporary file and TESTDATA
# for tests/data), the exit
# code, stdout, stderr and the file OUT of `kcast synth ARGS`, gzipped into one file. Run it only
# when an output is meant to change, with the binary that changes it, and say why in the commit:
#   scripts/record_golden.sh build/kcast
set -euo pipefail
cd "$(dirname "$0")/.."
KCAST=${1:-build/kcast}
CASES=tests/data/golden/cases.txt
OUT=tests/data/golden/synth_outputs.txt.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/all"
while read -r name args; do
  case "$name" in ''|'#'*) continue ;; esac
  out="$tmp/out"
  rm -f "$out"
  set +e
  # shellcheck disable=SC2086
  args=${args//TESTDATA/$PWD/tests/data}
  "$KCAST" synth ${args//OUT/$out} >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  set -e
  {
    echo "=== case $name rc=$rc"
    echo "--- stdout"; cat "$tmp/stdout"
    echo "--- stderr"; sed -e "s#$out#OUT#g" -e "s#$PWD/tests/data#TESTDATA#g" "$tmp/stderr"
    echo "--- OUT"; if [ -f "$out" ]; then cat "$out"; fi
  } >>"$tmp/all"
done <"$CASES"
gzip -9n <"$tmp/all" >"$OUT.tmp" && mv "$OUT.tmp" "$OUT"
echo "recorded $(grep -c '^=== case' "$tmp/all") cases, $(wc -c <"$tmp/all") bytes -> $OUT ($(wc -c <"$OUT") gzipped)"
