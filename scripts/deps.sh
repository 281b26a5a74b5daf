#!/usr/bin/env bash
# deps.sh -- install the Debian packages huddle needs, for one purpose.
#
# Idempotent: when every package is present it prints nothing and exits 0.
# Otherwise it names what it installs, runs apt-get (through sudo when not
# root) and fails with a clear message when it cannot.
#
#   scripts/deps.sh [run]   what building and running huddle needs (make run),
#                           libpq-dev among them (the store's PostgreSQL
#                           backend links libpq)
#   scripts/deps.sh test    also the tests' (make test): cmocka, the e2e scripts' curl,
#                           python3 and sqlite3, Node.js/npm and Chromium,
#                           dpkg-dev (make package: dpkg-shlibdeps)
#                           openssl (test-tls.sh makes its CA with it)
#                           man-db/groff-base (the man page's render
#                           check), zsh (its completion's test) and
#                           python3-yaml (test-hermes.sh's stand-in reads
#                           config.yaml with PyYAML, as Hermes does),
#                           postgresql (initdb, pg_ctl, postgres, psql: the
#                           throwaway cluster of the unit-pg set,
#                           tests/pg/cluster.sh) and iproute2 (ss: its
#                           test sees that cluster listens on no TCP port)
#   scripts/deps.sh fuzz    also clang and its libFuzzer runtime (make fuzz)
#
# The sanitizer build of `make test` uses the compiler's own runtimes
# (gcc's libasan/libubsan come with build-essential).
set -euo pipefail

run=(build-essential cmake pkg-config libsqlite3-dev libjansson-dev
     libmicrohttpd-dev libssl-dev libcurl4-openssl-dev libwebsockets-dev
     libpq-dev tzdata)
case "${1:-run}" in
run) pkgs=("${run[@]}") ;;
test) pkgs=("${run[@]}" libcmocka-dev libcurl4-openssl-dev curl python3
	    sqlite3 nodejs npm chromium dpkg-dev openssl man-db groff-base
	    zsh python3-yaml postgresql iproute2) ;;
fuzz) pkgs=("${run[@]}" clang libclang-rt-14-dev) ;;
*)
	echo "usage: scripts/deps.sh [run|test|fuzz]" >&2
	exit 2
	;;
esac

missing=()
for p in "${pkgs[@]}"; do
	# nodejs/npm may come from elsewhere than Debian (e.g. nodesource, nvm):
	# a working command counts as present.
	case "$p" in
	nodejs) command -v node >/dev/null 2>&1 && continue ;;
	npm) command -v npm >/dev/null 2>&1 && continue ;;
	chromium) command -v chromium >/dev/null 2>&1 && continue ;;
	esac
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing+=("$p") ;;
	esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing ${missing[*]}" >&2
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: apt-get not found; install these packages by hand: ${missing[*]}" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "deps.sh: not root and sudo is missing; as root run: apt-get install ${missing[*]}" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get update -qq >/dev/null; then
	echo "deps.sh: apt-get update failed; check the network or apt sources" >&2
	exit 1
fi
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
	echo "deps.sh: apt-get install failed for: ${missing[*]}" >&2
	exit 1
fi
echo "deps.sh: installed ${missing[*]}" >&2
