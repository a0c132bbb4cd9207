# Sourced by the import benchmarks (bench_import.sh, bench_kineto.sh): KCAST, the binary given as the
# argument, in $KCAST, or the first build*/kcast there is; WORK, a scratch folder removed on exit.
# usage: . scripts/bench_setup.sh SCRIPT_NAME [KCAST_BINARY]
KCAST="${2:-${KCAST:-}}"
if [ -z "$KCAST" ]; then
  for b in build/kcast build-*/kcast; do [ -x "$b" ] && KCAST="$b" && break; done
fi
[ -x "${KCAST:-}" ] || { echo "$1: no kcast binary (pass it as the 2nd argument)" >&2; exit 2; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
