#!/usr/bin/env bash
# run.sh BUILD_DIR HOME [PORT] -- what `make run` does after building:
# apply the example team into HOME (a home under the build directory, so
# trying huddle never touches ~/.huddle), say how to use it, then run
# `huddle serve` in the foreground until Ctrl-C.
set -euo pipefail
build=${1:-build}
home=$(realpath -m "${2:-$build/home}")
port=${3:-7340}
here=$(cd "$(dirname "$0")/.." && pwd)
huddle=$(realpath "$build/huddle")

case "$port" in
'' | *[!0-9]*)
	echo "make run: PORT must be a number, not \"$port\"" >&2
	exit 2
	;;
esac

# A port someone already listens on: say so before anything else, with
# the way out. (serve itself also refuses, should the port be taken in
# between.)
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
	echo "make run: port $port is taken (another huddle, or another program)." >&2
	echo "make run: pick another one: make run PORT=$((port + 1))" >&2
	exit 1
fi

"$huddle" --home "$home" up "$here/examples/dev-team.json" >/dev/null

cat <<EOF
The example team "dev" is ready: a lead and three scripted agents.
Its data lives in $home, not in ~/.huddle.

In the dashboard: the board, the room, the agents; ask the team or start an exchange.
From another terminal:
  attach Claude Code or Codex as coder (prints the commands to run; it finds this server):
    $huddle --home $home attach dev coder
  post in the room:
    $huddle --home $home chat post dev "hello team"
Ctrl-C stops the server.

EOF
set +e
"$huddle" --home "$home" serve --port "$port"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	echo "make run: the server did not start; if port $port is taken, pick another: make run PORT=$((port + 1))" >&2
fi
exit "$rc"
