#!/usr/bin/env bash
# test-dashboard-words.sh -- what the dashboard says, in a real headless
# Chromium: agents' replies as sanitized Markdown with their tags as chips,
# the team's answer shown once, the events log as sentences with their
# JSON behind a toggle, costs in cents, the exchange's end in words, and
# never "null" on screen. Starts `huddle serve` on a free port with a fresh
# home holding two teams without a description (words: scripted agents
# whose canned replies carry Markdown, hostile HTML and a costly text;
# quiet: one agent that takes ten minutes to answer, so a conversation
# stays waiting for it), runs dashboard-words.test.mjs at 1440x900 and at
# 390x844, then stops the server. Screenshots go to
# <build dir>/e2e-screenshots/words/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-words

# The teams: written by python so the replies' Markdown and HTML stay
# exactly as an agent would send them.
python3 - "$T_TMP" <<'PY'
import json, sys
d = sys.argv[1]
lead_rules = [
    {"when": "markdown please", "reply":
        "## Plan\n\n- first **step**\n- second step\n\nRun `make build` first:\n\n"
        "```\nmake build && ctest\n```\n\n"
        "See [the docs](https://example.com/docs) and [this](javascript:alert(1)).\n\n"
        "[@coder: please review the plan]"},
    {"when": "hostile", "reply":
        "Look: <script>window.__pwned = 1</script> and "
        "<img src=x onerror=\"window.__pwned = 2\"> and <b>bold?</b>"},
]
words = {"team": "words", "agents": [
    {"id": "lead", "leader": True, "runtime": "scripted",
     "runtime_config": {"rules": lead_rules, "default": "Noted."}},
    {"id": "coder", "runtime": "scripted",
     "runtime_config": {"default": "Reviewed: looks *good* to me."}},
    # 3,900 characters: an estimate above a cent (SPEC 8.2), not cut
    {"id": "spender", "runtime": "scripted",
     "runtime_config": {"default": "spend " * 650}},
]}
quiet = {"team": "quiet", "agents": [
    {"id": "sleepy", "leader": True, "runtime": "scripted",
     "runtime_config": {"default": "finally awake", "delay_ms": 600000}},
]}
for name, team in (("words", words), ("quiet", quiet)):
    with open(f"{d}/{name}.json", "w") as f:
        json.dump(team, f)
PY
for t in words quiet; do
	run up "$T_TMP/$t.json"
	expect_rc 0 "apply team $t"
done

browser_serve
browser_run dashboard-words dashboard-words.test.mjs
finish
