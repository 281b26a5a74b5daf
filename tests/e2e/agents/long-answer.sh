#!/bin/sh
# long-answer.sh -- an answer of 8,499 characters (250 numbered lines, each
# with a two-byte character) for test-reply-tags.sh: it prints it, and the
# test prints it too to compare with what was attached.
i=0
while [ $i -lt 250 ]; do
	printf 'line %03d of the long answer, caf\303\251\n' $i
	i=$((i + 1))
done
