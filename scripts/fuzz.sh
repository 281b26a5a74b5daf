#!/usr/bin/env bash
# fuzz.sh BUILD_DIR SECONDS -- run every libFuzzer target built in
# BUILD_DIR/tests/fuzz (configure with CC=clang -DHUDDLE_FUZZ=ON; `make
# fuzz` does) for SECONDS each, FUZZ_JOBS (default: nproc) at a time, so
# the whole run takes about SECONDS x targets / FUZZ_JOBS.
#
# Each target keeps a growing corpus in BUILD_DIR/fuzz/<target>/corpus
# (seeded from tests/fuzz/corpus/<target>/ when that exists) and uses
# tests/fuzz/<target>.dict when present. A crash, leak, sanitizer report
# or timeout fails the run; the input that caused it is saved under
# BUILD_DIR/fuzz/<target>/ and can be replayed with the plain build's
# tests/fuzz/replay_<name> FILE.
set -euo pipefail

build=${1:?usage: scripts/fuzz.sh BUILD_DIR SECONDS}
secs=${2:-30}
src=$(cd "$(dirname "$0")/.." && pwd)

shopt -s nullglob
targets=()
for t in "$build"/tests/fuzz/fuzz-*; do
	[ -f "$t" ] && [ -x "$t" ] && targets+=("$t")
done
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets in $build/tests/fuzz;" \
		"configure with CC=clang -DHUDDLE_FUZZ=ON" >&2
	exit 1
fi

jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1

# run_one TARGET: fuzz it for $secs; its exit status goes to DIR/rc
run_one() {
	local t=$1 name dir args corpora rc=0
	name=$(basename "$t")
	dir="$build/fuzz/$name"
	args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048
		-artifact_prefix="$dir/" -print_final_stats=1)
	[ -f "$src/tests/fuzz/$name.dict" ] && args+=(-dict="$src/tests/fuzz/$name.dict")
	corpora=("$dir/corpus")
	[ -d "$src/tests/fuzz/corpus/$name" ] && corpora+=("$src/tests/fuzz/corpus/$name")
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"$t" "${args[@]}" "${corpora[@]}" >"$dir/log" 2>&1 || rc=$?
	echo "$rc" >"$dir/rc"
}

echo "fuzz.sh: ${#targets[@]} target(s), ${secs}s each, $jobs at a time"
running=0
for t in "${targets[@]}"; do
	name=$(basename "$t")
	mkdir -p "$build/fuzz/$name/corpus"
	rm -f "$build/fuzz/$name/rc"
	if [ "$running" -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	echo "fuzz.sh: $name (log: $build/fuzz/$name/log)"
	run_one "$t" &
	running=$((running + 1))
done
wait || true

failed=()
for t in "${targets[@]}"; do
	name=$(basename "$t")
	dir="$build/fuzz/$name"
	if [ "$(cat "$dir/rc" 2>/dev/null)" = 0 ]; then
		echo "fuzz.sh: $name:"
		grep -E '^stat::number_of_executed_units|^Done' "$dir/log" | tail -2 | sed 's/^/  /'
	else
		failed+=("$name")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	# Last, so that a log cut to its tail (CI's) still shows why: each
	# failure's exit status, the sanitizer's or libFuzzer's verdict lines,
	# the input it saved (with its bytes in base64, to replay it where the
	# build directory is gone), then the log's last lines.
	for name in "${failed[@]}"; do
		dir="$build/fuzz/$name"
		echo "fuzz.sh: $name FAILED (exit $(cat "$dir/rc" 2>/dev/null || echo '?')); log: $dir/log" >&2
		grep -E '==ERROR|^SUMMARY|violated:|deadly signal|ALARM|timeout|out-of-memory|LeakSanitizer|runtime error|Test unit written|^Base64' \
			"$dir/log" | head -20 | cut -c1-300 | sed 's/^/  /' >&2 || true
		echo "  last lines:" >&2
		tail -8 "$dir/log" | cut -c1-300 | sed 's/^/  /' >&2
	done
	echo "fuzz.sh: failed: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz.sh: ${#targets[@]} target(s) ran ${secs}s each without a crash"
