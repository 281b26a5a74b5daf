/*
 * fuzz-mentions.c -- the mention parser's promises (SPEC 7) for any text:
 *  (1) it terminates (in linear time: libFuzzer's -timeout catches a
 *      blow-up) and never fails short of memory;
 *  (2) tags come in order, never overlap, lie inside the text, start with
 *      "[@" and end with ']'; each body is a substring of its tag; every
 *      id is one or more of [a-z0-9_-] (lower-cased);
 *  (3) targets are unique, each is an id of the tag it names, and every
 *      id of every tag is a target (from its first tag);
 *  (4) shared context is the gaps between tags, joined and trimmed, and
 *      no gap holds a complete tag when parsed on its own;
 *  (5) the display and delivery renderers accept whatever the parser
 *      produced.
 * NULs in the input become spaces (a reply is a C string).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/conversation.h>

#include "fuzz.h"

static int
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

static int
id_ok(const char *id)
{
	if (*id == '\0')
		return 0;
	for (; *id != '\0'; id++)
		if (!((*id >= 'a' && *id <= 'z') ||
			(*id >= '0' && *id <= '9') || *id == '_' || *id == '-'))
			return 0;
	return 1;
}

/* (4): text[from, to) parsed alone holds no tag. */
static void
gap_has_no_tag(const char *text, size_t from, size_t to)
{
	hd_mentions g;
	hd_err err = HD_ERR_INIT;

	check(hd_mentions_parse(&g, text + from, to - from, &err) == 0,
	    "gap parse failed");
	check(g.ntags == 0, "a gap between tags holds a tag");
	hd_mentions_dispose(&g);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_mentions m;
	hd_err err = HD_ERR_INIT;
	hd_buf gaps = HD_BUF_INIT(0);
	char *text, *out = NULL;
	const char *g;
	size_t i, j, k, prev = 0, glen;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	for (i = 0; i < size; i++)
		text[i] = data[i] == '\0' ? ' ' : (char)data[i];
	text[size] = '\0';
	check(hd_mentions_parse(&m, text, size, &err) == 0, "parse failed");

	for (i = 0; i < m.ntags; i++) { /* (2) */
		const hd_mention_tag *t = &m.tags[i];

		check(
		    t->start >= prev && t->end > t->start + 3 && t->end <= size,
		    "tag span out of order or outside the text");
		check(text[t->start] == '[' && text[t->start + 1] == '@' &&
			  text[t->end - 1] == ']',
		    "tag span is not [@...]");
		check(t->nids > 0, "tag without ids");
		for (j = 0; j < t->nids; j++)
			check(id_ok(t->ids[j]), "bad id");
		check(strlen(t->body) <= t->end - t->start &&
			  memmem(text + t->start, t->end - t->start, t->body,
			      strlen(t->body)) != NULL,
		    "body is not inside its tag");
		check(t->body[0] == '\0' ||
			  (!is_ws(t->body[0]) &&
			      !is_ws(t->body[strlen(t->body) - 1])),
		    "body not trimmed");
		gap_has_no_tag(text, prev, t->start);
		hd_buf_put(&gaps, text + prev, t->start - prev);
		prev = t->end;
	}
	gap_has_no_tag(text, prev, size);
	hd_buf_put(&gaps, text + prev, size - prev);

	for (i = 0; i < m.ntargets; i++) { /* (3) */
		const hd_mention *mt = &m.targets[i];
		int named = 0;

		for (k = i + 1; k < m.ntargets; k++)
			check(strcmp(mt->target, m.targets[k].target) != 0,
			    "target taken twice");
		check(mt->tag < m.ntags, "target names no tag");
		for (j = 0; j < m.tags[mt->tag].nids; j++)
			named |=
			    strcmp(m.tags[mt->tag].ids[j], mt->target) == 0;
		check(named, "target is not an id of its tag");
		check(strcmp(mt->body, m.tags[mt->tag].body) == 0,
		    "target body differs from its tag's");
		for (k = 0; k < mt->tag; k++)
			for (j = 0; j < m.tags[k].nids; j++)
				check(strcmp(m.tags[k].ids[j], mt->target) != 0,
				    "an earlier tag named the target");
	}
	for (i = 0; i < m.ntags; i++)
		for (j = 0; j < m.tags[i].nids; j++) {
			int found = 0;

			for (k = 0; k < m.ntargets; k++)
				found |= strcmp(m.targets[k].target,
					     m.tags[i].ids[j]) == 0;
			check(found, "an id is not a target");
		}

	/* (4) */
	check(!hd_buf_failed(&gaps), "gap buffer");
	g = hd_buf_cstr(&gaps);
	glen = gaps.len;
	while (glen > 0 && is_ws(*g)) {
		g++;
		glen--;
	}
	while (glen > 0 && is_ws(g[glen - 1]))
		glen--;
	check(strlen(m.shared) == glen && memcmp(m.shared, g, glen) == 0,
	    "shared context is not the trimmed gaps");

	/* (5) */
	check(hd_mentions_display(&out, text, &err) == 0, "display failed");
	free(out);
	if (m.ntargets > 0) {
		check(
		    hd_mentions_delivery(&out, "coder", m.shared,
			m.targets[0].body, (int64_t)m.ntargets - 1, &err) == 0,
		    "delivery failed");
		free(out);
	}
	hd_buf_dispose(&gaps);
	hd_mentions_dispose(&m);
	free(text);
	return 0;
}

const char *const hd_fuzz_seeds[] = {
    "[@coder: fix the bug]",
    "Plan. [@coder: build] [@tester: test] Thanks.",
    "[@coder,reviewer: same]",
    "[@ coder , reviewer : x]",
    "[@Coder: x]",
    "[@coder: fix a[0] and [b]]",
    "[@coder: ask [@reviewer: check it] later]",
    "[@coder: oops [@reviewer: review it]",
    "[@coder: first] [@coder: second]",
    "[@coder:]",
    "[@coder no colon]",
    "ask @coder about it",
    "[@coder: note: use a:b]",
    "[@a[@b: x]: y]",
    "] [@a: x] ]",
    "[@a:[[[[[@a:[[[[[@a:[[[[",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "[@",
    "[",
    "]",
    ":",
    ",",
    " ",
    "\t",
    "\n",
    "coder",
    "Coder",
    "a",
    "@coder",
    "[@coder:",
    "[@coder,reviewer:",
    "[@ a , b :",
    "x",
    "-",
    "\xc3\xa9",
    "\xff",
    NULL,
};
