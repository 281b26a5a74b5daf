#!/bin/sh
# tags-agent.sh -- an exec agent for test-reply-tags.sh: it reads its
# turn's prompt on stdin and prints the fixed reply of the last
# `case=<name>` in it (the delivered message comes last), each reply
# carrying the tags under test. WORK is its work directory (env).
set -u
c=$(grep -o 'case=[a-z-]*' | tail -n 1)
case "$c" in
case=room) echo "Posted the news. [#dev: build is green]" ;;
case=unknown-team) echo "Trying. [#nowhere: hello]" ;;
case=other-team) echo "Trying. [#ops: hello from dev]" ;;
case=empty) echo "Nothing to say. [#dev:   ]" ;;
case=file) echo "Here is the report. [send_file: report.txt] And the data: [send_file: $WORK/sub/data.json]" ;;
case=outside) echo "Have a look. [send_file: /etc/passwd]" ;;
case=escape) echo "Have a look. [send_file: link.txt]" ;;
case=missing) echo "Have a look. [send_file: nope.txt]" ;;
case=dir) echo "Have a look. [send_file: sub]" ;;
case=long) sh "$(dirname "$0")/long-answer.sh" ;;
*) echo "no case in the prompt" ;;
esac
