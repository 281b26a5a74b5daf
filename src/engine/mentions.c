/*
 * mentions.c -- the pure text functions of conversations (SPEC 7): the
 * mention-tag parser, the text a mentioned agent receives, the aggregate's
 * rendering of a reply, and the routing of the user's message
 * (mentions.h, whose contract this keeps). No database, no threads.
 *  (1) Linear time on any input: every '[' is matched to its ']' once, up
 *      front, with a stack (the ']' that balances a '[' is the first point
 *      after it where ']' outnumber '['), so a tag candidate costs only its
 *      id list, and id lists never overlap (a '[' ends one).
 *  (2) A tag is `[@` ids `:` body `]` (conversation.h); a candidate that
 *      fails is not a tag and scanning resumes right after its `[@`; an
 *      accepted tag's body (nested tags included) is skipped whole.
 *  (3) Each target is taken from the first tag naming it; the tags list
 *      keeps every tag, for display.
 *  (4) Shared context = the gaps between tags, joined, trimmed. Each gap
 *      parsed alone holds no tag: it was scanned with the same rules and
 *      every candidate in it failed for a reason local to the gap.
 * Callers: the conversation engine (conversation.c routes, conv_record.c
 * parses and delivers, conv_files.c shares hd_conv__dup_trim and
 * hd_conv__is_id_char), `huddle ask` and the demo (hd_mentions_display),
 * tests/fuzz/fuzz-mentions.c.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/mentions.h>

#include "conversation_int.h"

#define NO_MATCH ((size_t)-1)

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

int
hd_conv__is_id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

char *
hd_conv__dup_trim(const char *s, size_t n, int lc)
{
	char *out;
	size_t i;

	while (n > 0 && is_space(s[0])) {
		s++;
		n--;
	}
	while (n > 0 && is_space(s[n - 1]))
		n--;
	if ((out = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		out[i] = lc ? lower(s[i]) : s[i];
	out[n] = '\0';
	return out;
}

/*
 * Match brackets (1): opens[k] is the offset of the k-th '[', close[k] the
 * offset of the ']' that balances it or NO_MATCH.
 */
static int
match_brackets(size_t **opens_out, size_t **close_out, size_t *nopen,
    const char *text, size_t len)
{
	size_t *opens = NULL, *close = NULL, *stack = NULL, n = 0, depth = 0;
	size_t i, k;

	for (i = 0; i < len; i++)
		n += text[i] == '[';
	*opens_out = *close_out = NULL;
	*nopen = n;
	if (n == 0)
		return 0;
	opens = malloc(n * sizeof(*opens));
	close = malloc(n * sizeof(*close));
	stack = malloc(n * sizeof(*stack));
	if (opens == NULL || close == NULL || stack == NULL) {
		free(opens);
		free(close);
		free(stack);
		return -1;
	}
	for (i = 0, k = 0; i < len; i++) {
		if (text[i] == '[') {
			opens[k] = i;
			close[k] = NO_MATCH;
			stack[depth++] = k++;
		} else if (text[i] == ']' && depth > 0)
			close[stack[--depth]] = i;
	}
	free(stack);
	*opens_out = opens;
	*close_out = close;
	return 0;
}

/*
 * Read the id list of a candidate whose '[' is at i: on success *colon is
 * the offset of its ':' and the ids are appended to tag. Returns 1 (ids
 * read), 0 (not a tag) or -1 (out of memory).
 */
static int
read_ids(
    hd_mention_tag *tag, const char *text, size_t len, size_t i, size_t *colon)
{
	size_t p = i + 2, id_start, id_len;
	char **grown;

	for (;;) {
		while (p < len && (text[p] == ' ' || text[p] == '\t'))
			p++;
		id_start = p;
		while (p < len && hd_conv__is_id_char(text[p]))
			p++;
		if ((id_len = p - id_start) == 0)
			return 0;
		while (p < len && (text[p] == ' ' || text[p] == '\t'))
			p++;
		if (p >= len || (text[p] != ',' && text[p] != ':'))
			return 0;
		grown = realloc(tag->ids, (tag->nids + 1) * sizeof(*grown));
		if (grown == NULL)
			return -1;
		tag->ids = grown;
		if ((tag->ids[tag->nids] =
			    hd_conv__dup_trim(text + id_start, id_len, 1)) == NULL)
			return -1;
		tag->nids++;
		if (text[p] == ':') {
			*colon = p;
			return 1;
		}
		p++; /* past ',' */
	}
}

static void
tag_dispose(hd_mention_tag *t)
{
	size_t i;

	for (i = 0; i < t->nids; i++)
		free(t->ids[i]);
	free(t->ids);
	free(t->body);
	memset(t, 0, sizeof(*t));
}

void
hd_mentions_dispose(hd_mentions *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->ntags; i++)
		tag_dispose(&m->tags[i]);
	free(m->tags);
	for (i = 0; i < m->ntargets; i++) {
		free(m->targets[i].target);
		free(m->targets[i].body);
	}
	free(m->targets);
	free(m->shared);
	memset(m, 0, sizeof(*m));
}

/* Take the targets of tags[t] not already taken (3). */
static int
add_targets(hd_mentions *m, size_t t)
{
	const hd_mention_tag *tag = &m->tags[t];
	hd_mention *grown;
	size_t i, j;

	for (i = 0; i < tag->nids; i++) {
		for (j = 0; j < m->ntargets; j++)
			if (strcmp(m->targets[j].target, tag->ids[i]) == 0)
				break;
		if (j < m->ntargets)
			continue;
		grown = realloc(m->targets, (m->ntargets + 1) * sizeof(*grown));
		if (grown == NULL)
			return -1;
		m->targets = grown;
		grown = &m->targets[m->ntargets];
		grown->tag = t;
		grown->target = strdup(tag->ids[i]);
		grown->body = strdup(tag->body);
		if (grown->target == NULL || grown->body == NULL) {
			free(grown->target);
			free(grown->body);
			return -1;
		}
		m->ntargets++;
	}
	return 0;
}

int
hd_mentions_parse(hd_mentions *out, const char *text, size_t len, hd_err *err)
{
	size_t *opens = NULL, *close = NULL, nopen = 0, k = 0, i = 0;
	size_t gap = 0, colon = 0;
	hd_buf shared = HD_BUF_INIT(0);
	hd_mention_tag cand, *grown;
	int rc = 0, r;

	memset(out, 0, sizeof(*out));
	memset(&cand, 0, sizeof(cand));
	if (match_brackets(&opens, &close, &nopen, text, len) < 0)
		goto oom;
	while (i + 1 < len) {
		if (text[i] != '[' || text[i + 1] != '@') {
			i++;
			continue;
		}
		while (opens[k] < i) /* k: the ordinal of the '[' at i */
			k++;
		if ((r = read_ids(&cand, text, len, i, &colon)) < 0)
			goto oom;
		if (r == 0 || close[k] == NO_MATCH) { /* (2) not a tag */
			tag_dispose(&cand);
			i += 2;
			continue;
		}
		cand.start = i;
		cand.end = close[k] + 1;
		if ((cand.body = hd_conv__dup_trim(
			 text + colon + 1, close[k] - colon - 1, 0)) == NULL)
			goto oom;
		grown = realloc(out->tags, (out->ntags + 1) * sizeof(*grown));
		if (grown == NULL)
			goto oom;
		out->tags = grown;
		out->tags[out->ntags++] = cand;
		memset(&cand, 0, sizeof(cand));
		if (add_targets(out, out->ntags - 1) < 0)
			goto oom;
		hd_buf_put(&shared, text + gap, i - gap);
		gap = i = close[k] + 1;
	}
	hd_buf_put(&shared, text + gap, len - gap);
	if (hd_buf_failed(&shared) ||
	    (out->shared = hd_conv__dup_trim(hd_buf_cstr(&shared), shared.len, 0)) ==
		NULL)
		goto oom;
	goto done;
oom:
	rc = hd_err_set(err, HD_ENOMEM, "out of memory");
done:
	tag_dispose(&cand);
	hd_buf_dispose(&shared);
	free(opens);
	free(close);
	return rc;
}

int
hd_mentions_delivery(char **out, const char *from, const char *shared,
    const char *body, int64_t others, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(0);

	*out = NULL;
	hd_buf_printf(&b, "[Message from teammate @%s]:\n", from);
	if (shared != NULL && shared[0] != '\0') {
		hd_buf_puts(&b, shared);
		hd_buf_puts(&b, "\n\n------\n\nDirected to you:\n");
	}
	hd_buf_puts(&b, body != NULL ? body : "");
	if (others > 0)
		hd_buf_printf(&b,
		    "\n\n------\n\n[%lld other teammate response(s) are still "
		    "being processed and will be delivered when ready. Do not "
		    "re-mention teammates who haven't responded yet.]",
		    (long long)others);
	if (hd_buf_failed(&b))
		return hd_buf_error(&b, "delivery", err);
	if ((*out = hd_buf_detach(&b)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

int
hd_mentions_display(char **out, const char *text, hd_err *err)
{
	hd_mentions m;
	hd_buf b = HD_BUF_INIT(0);
	size_t len = strlen(text), gap = 0, i, j;
	int rc;

	*out = NULL;
	if ((rc = hd_mentions_parse(&m, text, len, err)) < 0)
		goto done;
	for (i = 0; i < m.ntags; i++) {
		const hd_mention_tag *t = &m.tags[i];

		hd_buf_put(&b, text + gap, t->start - gap);
		hd_buf_puts(&b, "\xe2\x86\x92 @"); /* → */
		for (j = 0; j < t->nids; j++) {
			if (j > 0)
				hd_buf_putc(&b, ',');
			hd_buf_puts(&b, t->ids[j]);
		}
		hd_buf_putc(&b, ':');
		if (t->body[0] != '\0') {
			hd_buf_putc(&b, ' ');
			hd_buf_puts(&b, t->body);
		}
		gap = t->end;
	}
	hd_buf_put(&b, text + gap, len - gap);
	if (hd_buf_failed(&b))
		rc = hd_buf_error(&b, "reply", err);
	else if ((*out = hd_buf_detach(&b)) == NULL)
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
done:
	hd_buf_dispose(&b);
	hd_mentions_dispose(&m);
	return rc;
}

void
hd_conversation_route(hd_conversation_route_result *out, const char *message,
    const char *team, const char *const *members, size_t nmembers,
    const char *leader)
{
	char word[64];
	size_t n = 0, i;
	const char *p;

	memset(out, 0, sizeof(*out));
	out->agent = leader;
	if (message[0] != '@')
		return;
	for (p = message + 1; hd_conv__is_id_char(*p) && n < sizeof(word) - 1; p++)
		word[n++] = lower(*p);
	word[n] = '\0';
	/* `@<word> `: a space must follow the word (a bare `@x` or `@x,` is
	 * just text) */
	if (n == 0 || (*p != ' ' && *p != '\t'))
		return;
	while (*p == ' ' || *p == '\t')
		p++;
	for (i = 0; i < nmembers; i++)
		if (strcmp(members[i], word) == 0) {
			out->agent = members[i];
			out->offset = (size_t)(p - message);
			return;
		}
	if (strcmp(word, team) == 0) {
		out->offset = (size_t)(p - message);
		return;
	}
	memcpy(out->dropped, word, n + 1);
}
