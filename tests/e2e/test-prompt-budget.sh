#!/usr/bin/env bash
# test-prompt-budget.sh -- the prompt budget through a real engine: an
# exec agent whose command reports the size of the prompt it was handed
# and the first and last room posts in it. A room of 200 KB gives
# `huddle exchange` and `huddle ask` prompts of a few KB, and each turn's
# catch-up starts right after the last post the previous one showed.
# HUDDLE_PROMPT_ROOM_CHARS moves the budget.
. "$(dirname "$0")/lib.sh"

"$HUDDLE" team create dev >/dev/null
"$HUDDLE" agent add dev manager --leader >/dev/null
"$HUDDLE" agent add dev reporter --runtime exec --config '{"command": ["sh", "-c",
	"p=$(cat); printf \"bytes=%s first=%s last=%s\" \"$(printf %s \"$p\" | wc -c)\" \"$(printf %s \"$p\" | grep -o \"seq=[0-9]*\" | head -n 1 | cut -d= -f2)\" \"$(printf %s \"$p\" | grep -o \"seq=[0-9]*\" | tail -n 1 | cut -d= -f2)\""]}' >/dev/null

body=$(head -c 2000 /dev/zero | tr '\0' x)
for i in $(seq 100); do
	"$HUDDLE" chat post dev "$i $body" --as manager >/dev/null || fail "post $i"
done

# last_reply: the reporter's reply (the room's last post) as bytes, first,
# last
last_reply() {
	reply=$("$HUDDLE" chat read dev --json --limit 500 |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["posts"][-1]["body"])')
	bytes=$(sed -n 's/^bytes=\([0-9]*\) .*/\1/p' <<<"$reply")
	first=$(sed -n 's/.* first=\([0-9]*\) .*/\1/p' <<<"$reply")
	last=$(sed -n 's/.* last=\([0-9]*\)$/\1/p' <<<"$reply")
}
# report: one exchange turn of the reporter, then last_reply
report() {
	"$HUDDLE" exchange dev --stimulus "How big is it?" --first reporter --max-turns 1 >/dev/null ||
		fail "exchange: $*"
	last_reply
}

report first turn
# 4,000 characters of catch-up, plus the standing context and the request
if [ -n "$bytes" ] && [ "$bytes" -lt 6000 ]; then pass; else
	fail "a 200 KB room gave a $bytes-byte prompt (reply: $reply)"
fi
expect_eq "$first" 1 "the catch-up starts at the oldest post"
if [ -n "$last" ] && [ "$last" -ge 2 ] && [ "$last" -lt 10 ]; then pass; else
	fail "the catch-up stops at the budget: last seq [$last] (reply: $reply)"
fi

prev=$last
report second turn
expect_eq "$first" $((prev + 1)) "the next turn resumes right after the last post shown"
if [ -n "$bytes" ] && [ "$bytes" -lt 6000 ]; then pass; else
	fail "second prompt: $bytes bytes (reply: $reply)"
fi

# the budget from the environment: 20,000 characters of catch-up
prev=$last
HUDDLE_PROMPT_ROOM_CHARS=20000 report larger budget
expect_eq "$first" $((prev + 1)) "a larger budget resumes from the cursor too"
if [ -n "$bytes" ] && [ "$bytes" -gt 15000 ] && [ "$bytes" -lt 22000 ]; then pass; else
	fail "HUDDLE_PROMPT_ROOM_CHARS=20000 gave a $bytes-byte prompt (reply: $reply)"
fi

# the conversation engine (`huddle ask`) keeps the same budget and cursor
prev=$last
"$HUDDLE" ask dev "@reporter how big now?" >/dev/null 2>"$T_TMP/ask.err" || fail "ask"
last_reply
expect_eq "$first" $((prev + 1)) "ask: resumes right after the last post shown"
if [ -n "$bytes" ] && [ "$bytes" -lt 6000 ]; then pass; else
	fail "ask: a $bytes-byte prompt (reply: $reply)"
fi
finish
