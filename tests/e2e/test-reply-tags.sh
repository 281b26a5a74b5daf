#!/usr/bin/env bash
# test-reply-tags.sh -- a reply's room and file tags through `huddle ask`,
# with an exec agent whose replies are fixed (agents/tags-agent.sh): [#team: ...]
# posts to its own team's room as the agent and is dropped, with a
# mention_dropped event, for an unknown team, a team it is not in, or an
# empty message; [send_file: ...] attaches files inside the agent's
# workdir (bytes checked with `huddle conversation files --save` and over
# REST) and leaves a note for a file outside it, a symlink escaping it, a
# missing file and a directory; an answer over 4000 characters is cut and
# attached whole as answer-<seq>.md.
. "$(dirname "$0")/lib.sh"

agent="$HUDDLE_SRC/tests/e2e/agents/tags-agent.sh"
work="$T_TMP/work"
mkdir -p "$work/sub"
printf 'the quarterly report\nline two\n' >"$work/report.txt"
printf '{"answer": 42}' >"$work/sub/data.json"
ln -s /etc/passwd "$work/link.txt"
cat >"$T_TMP/dev.json" <<JSON
{"team": "dev", "agents": [
  {"id": "coder", "leader": true, "runtime": "exec", "runtime_config": {
    "command": ["sh", "$agent"], "cwd": "$work", "env": {"WORK": "$work"}}}
]}
JSON
cat >"$T_TMP/ops.json" <<'JSON'
{"team": "ops", "agents": [
  {"id": "oncall", "leader": true, "runtime": "scripted", "runtime_config": {"default": "ok"}}
]}
JSON
run init
expect_rc 0 "init"
for f in dev ops; do
	run up "$T_TMP/$f.json"
	expect_rc 0 "up $f"
done

# ask CASE: ask dev for the reply of CASE; $conv is its conversation id
ask() {
	run ask dev "case=$1"
	conv=$(printf '%s\n' "$ERR" | sed -n 's/^note: conversation //p')
}
# dropped: the reasons of the mention_dropped events of conversation $conv
dropped() {
	"$HUDDLE" events --kind mention_dropped --json |
		python3 -c 'import json,sys; print([(e["data"]["target"], e["data"]["reason"]) for e in json.load(sys.stdin) if e["data"]["conversation_id"] == sys.argv[1]])' "$conv"
}

# [#dev: ...]: the tag leaves the answer, its message is a room post by
# the agent.
ask room
expect_rc 0 "ask room"
expect_eq "$OUT" "@coder: Posted the news.
=== answered: 1 reply ===" "the room tag is removed from the answer"
run chat read dev --json
expect_eq "$(json_get "$OUT" '[(p["authorAgentId"], p["kind"], p["body"]) for p in j["posts"]][-3:]')" \
	"[('user', 'user', 'case=room'), ('coder', 'peer', 'build is green'), ('coder', 'peer', 'Posted the news.')]" \
	"the tag's message is posted as the agent"
expect_eq "$(dropped)" "[]" "nothing dropped"

ask unknown-team
expect_eq "$OUT" "@coder: Trying.
=== answered: 1 reply ===" "an unknown team's tag is removed"
expect_eq "$(dropped)" "[('#nowhere', 'unknown team')]" "unknown team: mention_dropped"
ask other-team
expect_eq "$(dropped)" "[('#ops', 'not a member of team ops')]" "another team: mention_dropped"
run chat read ops --json
expect_eq "$(json_get "$OUT" 'len(j["posts"])')" "0" "nothing posted in ops"
ask empty
expect_eq "$OUT" "@coder: Nothing to say.
=== answered: 1 reply ===" "an empty room tag is removed"
expect_eq "$(dropped)" "[('#dev', 'empty message')]" "empty message: mention_dropped"

# [send_file: ...] inside the workdir, relative and absolute: attached.
ask file
expect_rc 0 "ask file"
expect_eq "$OUT" "@coder: Here is the report. And the data:
=== answered: 1 reply ===
=== attachments ===
file 1 from @coder: report.txt (30 bytes, text/plain)
file 2 from @coder: data.json (14 bytes, application/json)" "files attached, tags removed"
expect_contains "$ERR" "note: save the attachments with 'huddle conversation files $conv --save DIR'" "how to save them"
file_conv=$conv
run conversation files "$file_conv"
expect_rc 0 "conversation files"
expect_eq "$OUT" "ID  SEQ  AGENT  NAME        TYPE              SIZE
1   1    coder  report.txt  text/plain        30
2   1    coder  data.json   application/json  14" "conversation files lists them"
run conversation files "$file_conv" --json
expect_eq "$(json_get "$OUT" '[(f["id"], f["name"], f["size"]) for f in j["files"]]')" "[(1, 'report.txt', 30), (2, 'data.json', 14)]" "conversation files --json"
mkdir "$T_TMP/saved"
run conversation files "$file_conv" --save "$T_TMP/saved"
expect_rc 0 "save"
expect_eq "$OUT" "saved $T_TMP/saved/report.txt (30 bytes)
saved $T_TMP/saved/data.json (14 bytes)" "save prints what it wrote"
cmp -s "$T_TMP/saved/report.txt" "$work/report.txt" && cmp -s "$T_TMP/saved/data.json" "$work/sub/data.json"
RC=$?
expect_rc 0 "saved bytes match"
run conversation files "$file_conv" --save "$T_TMP/saved"
expect_rc 1 "save never overwrites"
expect_eq "$ERR" "huddle: cannot create $T_TMP/saved/report.txt: it exists already" "save names the file"
run conversation files nope
expect_rc 1 "unknown conversation"
expect_eq "$ERR" "huddle: conversation \"nope\" not found" "unknown conversation message"
run conversation files
expect_rc 2 "files without an id"

# Files that cannot be attached: the tag stays, with a note.
ask outside
expect_eq "$OUT" "@coder: Have a look. [send_file: /etc/passwd] (file not attached: /etc/passwd is outside coder's workdir)
=== answered: 1 reply ===" "outside the workdir"
ask escape
expect_eq "$(printf '%s\n' "$OUT" | head -n 1)" "@coder: Have a look. [send_file: link.txt] (file not attached: link.txt is outside coder's workdir)" "a symlink out of the workdir"
ask missing
expect_eq "$(printf '%s\n' "$OUT" | head -n 1)" "@coder: Have a look. [send_file: nope.txt] (file not attached: nope.txt does not exist)" "a missing file"
ask dir
expect_eq "$(printf '%s\n' "$OUT" | head -n 1)" "@coder: Have a look. [send_file: sub] (file not attached: sub is a directory)" "a directory"
run conversation files "$conv" --json
expect_eq "$(json_get "$OUT" 'j["files"]')" "[]" "nothing attached"

# A long answer: its first 4000 characters and a note; the whole text is
# answer-1.md.
full=$(sh "$HUDDLE_SRC/tests/e2e/agents/long-answer.sh")
ask long
expect_rc 0 "ask long"
long_conv=$conv
want=$(python3 -c 'import sys; t=sys.argv[1]; print(t[:4000] + "\u2026 [the full answer, {:,} characters, is attached as answer-1.md]".format(len(t)))' "$full")
expect_eq "$(printf '%s\n' "$OUT" | sed -n '1,/^=== answered: 1 reply ===$/p' | sed '$d' | sed '1s/^@coder: //')" "$want" "the answer is cut with a note, shown once"
expect_contains "$OUT" "file 3 from @coder: answer-1.md (8749 bytes, text/markdown)" "the whole answer is attached"
mkdir "$T_TMP/long"
run conversation files "$long_conv" --save "$T_TMP/long"
expect_eq "$(cat "$T_TMP/long/answer-1.md")" "$full" "answer-1.md is the whole answer"

# Over REST: the list and the bytes.
serve_bg
list=$(curl -s "$url/api/conversations/$file_conv/files")
expect_eq "$(json_get "$list" '(j["conversationId"], [(f["id"], f["seq"], f["agent"], f["name"], f["mediaType"], f["size"]) for f in j["files"]])')" \
	"('$file_conv', [(1, 1, 'coder', 'report.txt', 'text/plain', 30), (2, 1, 'coder', 'data.json', 'application/json', 14)])" "GET files"
conv_json=$(curl -s "$url/api/conversations/$file_conv")
expect_eq "$(json_get "$conv_json" '[f["name"] for f in j["files"]]')" "['report.txt', 'data.json']" "GET conversation lists its files"
code=$(curl -s -D "$T_TMP/h.txt" -o "$T_TMP/got.txt" -w '%{http_code}' "$url/api/conversations/$file_conv/files/1")
expect_eq "$code" "200" "GET a file"
cmp -s "$T_TMP/got.txt" "$work/report.txt"
RC=$?
expect_rc 0 "the bytes over REST match"
headers=$(tr -d '\r' <"$T_TMP/h.txt")
expect_contains "$headers" "Content-Type: text/plain" "its media type"
expect_contains "$headers" "Content-Disposition: attachment; filename=\"report.txt\"; filename*=UTF-8''report.txt" "its disposition"
code=$(curl -s -o "$T_TMP/got.json" -w '%{http_code}' "$url/api/conversations/$file_conv/files/2")
cmp -s "$T_TMP/got.json" "$work/sub/data.json"
RC=$?
expect_rc 0 "the second file's bytes match"
expect_curl "404 {\"error\":\"file 3 not found in conversation $file_conv\"}" "a file of another conversation" "$url/api/conversations/$file_conv/files/3"
expect_curl '400 {"error":"file id must be a positive integer"}' "a bad file id" "$url/api/conversations/$file_conv/files/x"
expect_curl '404 {"error":"conversation \"nope\" not found"}' "files of an unknown conversation" "$url/api/conversations/nope/files"
kill -INT "$serve_pid"
wait "$serve_pid"
RC=$?
expect_rc 0 "serve stops cleanly"
finish
