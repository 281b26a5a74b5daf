#!/usr/bin/env bash
# run.sh BUILD_DIR -- run every benchmark; each prints its figure next to a
# baseline measured in the same run, as `name: X | baseline Y | ratio R`.
set -euo pipefail
build=${1:-build-release}
status=0
export HUDDLE_BIN=${HUDDLE_BIN:-$build/huddle}
for b in "$build"/bench/bench_*; do
	[ -x "$b" ] || continue
	"$b" || { echo "bench: $(basename "$b") failed" >&2; status=1; }
done
# the benchmarks that drive real agent CLIs are scripts
for b in "$(dirname "$0")"/bench-*.sh; do
	[ -f "$b" ] || continue
	bash "$b" "$build" || { echo "bench: $(basename "$b") failed" >&2; status=1; }
done
exit $status
