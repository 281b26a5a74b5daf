#!/usr/bin/env bash
# run.sh BUILD_DIR HOME -- what `make run` does after building: apply the
# example team into HOME (a home under the build directory, so trying
# huddle never touches ~/.huddle) and show it.
set -euo pipefail
build=${1:-build}
home=$(realpath -m "${2:-$build/home}")
huddle="$build/huddle"
here=$(cd "$(dirname "$0")/.." && pwd)

"$huddle" --home "$home" up "$here/examples/dev-team.json" >/dev/null
echo "== the example team (HUDDLE_HOME=$home) =="
"$huddle" --home "$home" team show dev
echo
echo "Try it yourself:"
echo "  export HUDDLE_HOME=$home"
echo "  $huddle team list"
echo "  $huddle agent show coder"
echo "  $huddle events --team dev"
