#!/usr/bin/env bash
# test-docs.sh -- the reference pages cannot drift from the binary
# (tests/e2e/docs.py does the work; its header says how):
#  (1) the generated sections of docs/cli.md, docs/mcp.md and docs/rest.md
#      (every command's --help, the real MCP tools/list, the operation
#      table's routes) are what the binary says now, and docs/rest.md has a
#      heading for every route the server matches and for no other;
#  (2) every ```console example of docs/cli.md, mcp.md, rest.md,
#      configuration.md, runtimes.md and memory.md runs, each page in a fresh home
#      with its own `huddle serve`, and prints what the page shows; a
#      difference names the page, the line and what differs;
#  (1') docs/runtimes.md lists every runtime with exactly the
#      runtime_config keys its check accepts, and docs/configuration.md
#      every environment variable huddle reads or sets and every option of
#      `huddle serve`;
#  (3) the checks can fail: a route heading taken out or made up, a
#      runtime key or a variable left out, a shown output changed; each is
#      reported with its page (and line where there is one).
. "$(dirname "$0")/lib.sh"
: "${HUDDLE_DOCS_DUMP:?set HUDDLE_DOCS_DUMP to build/tests/hd_docs_dump}"
export HUDDLE_DOCS_DUMP
docs_py=$HUDDLE_SRC/tests/e2e/docs.py
huddle_on_path
export PATH
unset HUDDLE_TOKEN HUDDLE_LOG   # the examples show what a default environment prints

# (1)
OUT=$(python3 "$docs_py" check 2>&1)
RC=$?
ERR=
expect_rc 0 "the generated sections, the routes, the runtimes' keys and the variables match the binary"

# (2)
for page in cli mcp rest configuration runtimes memory; do
	export HUDDLE_HOME=$T_TMP/home-$page
	serve_bg
	OUT=$(DOCS_PORT=$port python3 "$docs_py" run "$HUDDLE_SRC/docs/$page.md" 2>&1)
	RC=$?
	expect_rc 0 "docs/$page.md: every example prints what the page shows"
	kill "$serve_pid" 2>/dev/null
	wait "$serve_pid" 2>/dev/null
done

# (3)
mkdir -p "$T_TMP/docs"
cp "$HUDDLE_SRC"/docs/*.md "$T_TMP/docs/"
sed -i '/^### GET \/api\/runtimes$/d' "$T_TMP/docs/rest.md"
echo '### GET /api/nowhere' >>"$T_TMP/docs/rest.md"
OUT=$(HUDDLE_DOCS_DIR=$T_TMP/docs python3 "$docs_py" check 2>&1)
RC=$?
expect_rc 1 "a route missing from the page fails the check"
expect_contains "$OUT" "route GET /api/runtimes exists but has no heading" "naming the route missing"
expect_contains "$OUT" "rest.md:$(wc -l <"$T_TMP/docs/rest.md"): route GET /api/nowhere is documented but the server has no such route" \
	"and the route that does not exist, with its line"
sed -i '/^| `delay_ms` |/d' "$T_TMP/docs/runtimes.md"
sed -i 's/^| `HUDDLE_NO_WAL_BATCH` |/| `HUDDLE_NO_WAL_BATCHES` |/' "$T_TMP/docs/configuration.md"
OUT=$(HUDDLE_DOCS_DIR=$T_TMP/docs python3 "$docs_py" check 2>&1)
RC=$?
expect_rc 1 "a runtime key or an environment variable missing from its page fails the check"
expect_contains "$OUT" "runtime scripted takes runtime_config.delay_ms; the page does not say" \
	"naming the runtime and the key"
expect_contains "$OUT" "docs/configuration.md: no word of HUDDLE_NO_WAL_BATCH (src/store/vfs.c reads or sets it)" \
	"naming the variable and who reads it"
cat >"$T_TMP/docs/wrong.md" <<'PAGE'
# a page whose example is wrong

```console
$ huddle team list --json
{"teams": [{"id": "dev", "…": "…"}]}
```
PAGE
export HUDDLE_HOME=$T_TMP/home-wrong
OUT=$(DOCS_PORT=1 python3 "$docs_py" run "$T_TMP/docs/wrong.md" 2>&1)
RC=$?
expect_rc 1 "an example printing other than its page shows fails"
expect_contains "$OUT" "$T_TMP/docs/wrong.md:4: \`huddle team list --json\` printed other than the page shows" \
	"naming the page and the line"
finish
