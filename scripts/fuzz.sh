#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cc) with clang and runs each for N seconds
# (default 30) on a seed corpus made from tests/data/import. The whole project is compiled with
# -fsanitize=fuzzer-no-link,address,undefined so that coverage feedback and the sanitizers reach
# into the readers, not only into the fuzz entry points.
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]      (targets default to all *_fuzz)
# env:   BUILD_DIR (default build-fuzz), JOBS (default 1), FUZZ_ARGS (extra libFuzzer flags)
# Exit status: non-zero when a target fails to build or finds a crash (artifacts in $BUILD_DIR/artifacts).
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-30}"
shift || true
BUILD_DIR="${BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-1}"
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -g -O1"

cmake -S . -B "$BUILD_DIR" -G Ninja -DKCAST_FUZZ=ON -DKCAST_BUILD_TESTS=OFF -DKCAST_BUILD_BENCH=OFF -DKCAST_BUILD_MICROBENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" >/dev/null

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/*_fuzz.cc; do targets+=("$(basename "$f" .cc)"); done
fi
ninja -C "$BUILD_DIR" -j"$JOBS" "${targets[@]}"

# Seed corpora: the importer fixtures, per reader; SQLite seeds are built from the fixture SQL.
DATA=tests/data/import
CORPUS="$BUILD_DIR/corpus"
mkdir -p "$CORPUS" "$BUILD_DIR/artifacts"
seed() {  # seed TARGET FILE...
  mkdir -p "$CORPUS/$1"
  local t="$1"
  shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$CORPUS/$t/" || true; done
}
seed nsys_csv_fuzz "$DATA"/nsys_*.csv
seed ncu_csv_fuzz "$DATA"/ncu_*.csv
seed kineto_json_fuzz "$DATA"/kineto_*.json
for f in "$DATA"/kineto_*.json; do gzip -c "$f" > "$CORPUS/kineto_json_fuzz/$(basename "$f").gz"; done
mkdir -p "$CORPUS/nsys_sqlite_fuzz"
for f in "$DATA"/*.sql; do
  db="$CORPUS/nsys_sqlite_fuzz/$(basename "$f" .sql).sqlite"
  rm -f "$db"
  if command -v sqlite3 >/dev/null; then
    sqlite3 "$db" < "$f"
  else
    python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(open(sys.argv[2]).read()); c.close()' "$db" "$f"
  fi
done
seed hf_config_fuzz tests/data/synth/*.json data/synth/*.json
seed kernel_list_csv_fuzz tests/data/fuzz/*.csv
seed serve_dataset_fuzz tests/data/serve/*.csv tests/data/serve/*.jsonl
mkdir -p "$CORPUS/detect_format_fuzz"
for d in "$CORPUS"/*_fuzz; do [ "$d" = "$CORPUS/hf_config_fuzz" ] || cp "$d"/* "$CORPUS/detect_format_fuzz/" 2>/dev/null || true; done
cp "$DATA"/*.csv "$CORPUS/detect_format_fuzz/"

status=0
for t in "${targets[@]}"; do
  mkdir -p "$CORPUS/$t"
  echo "== $t: ${SECONDS_PER_TARGET}s"
  # Seeds stay read-only: new inputs go to a scratch directory listed first.
  mkdir -p "$BUILD_DIR/found/$t"
  if ! "$BUILD_DIR/$t" "$BUILD_DIR/found/$t" "$CORPUS/$t" -max_total_time="$SECONDS_PER_TARGET" \
      -timeout=20 -rss_limit_mb=4096 -max_len=65536 -artifact_prefix="$BUILD_DIR/artifacts/$t-" \
      -print_final_stats=1 ${FUZZ_ARGS:-} 2>"$BUILD_DIR/$t.log"; then
    echo "   FAILED: see $BUILD_DIR/$t.log and $BUILD_DIR/artifacts/"
    tail -n 30 "$BUILD_DIR/$t.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov:" "$BUILD_DIR/$t.log" | tail -n 3 | sed 's/^/   /'
  fi
done
exit $status
