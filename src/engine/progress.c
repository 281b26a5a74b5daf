/*
 * progress.c -- an exchange's progress as of its last commit, as text
 * kept with its room lock (room/lock.c (4)), so that the same exchange run
 * again after its process died resumes where it was (exchange.c (11)).
 * Owns no table.
 *  (1) The progress is what the loop's bookkeeping holds between two
 *      steps: who owes a turn, who spoke, how many turns each took, the
 *      last speaker, the turns taken and their speakers, the bound, the
 *      stimulus post, and the speaker whose turn was begun and is running
 *      (or none). Participants are named by id, so a roster that changed
 *      meanwhile maps onto the new one: an id no longer in the team is
 *      dropped.
 *  (2) "The same exchange" is the same room and the same stimulus: the
 *      progress keeps the stimulus's SHA-256, never its text.
 *  (3) Anything malformed reads as no progress: the exchange then starts
 *      over, it never fails on it.
 *  (4) The text holds only agent ids (slugs: hd_slug_ok), a hex digest
 *      and integers, so it is printed directly, as turn.c prints its
 *      events (one per step of every exchange: no json_t to build), and
 *      read back with Jansson.
 * Callers: exchange.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <huddle/buf.h>

#include "exchange_int.h"

void
hd_exchange__stimulus_hash(char out[65], const char *stimulus)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	const char *s = stimulus != NULL ? stimulus : "";

	out[0] = '\0';
	if (EVP_Digest(s, strlen(s), md, &len, EVP_sha256(), NULL) != 1)
		return;
	for (i = 0; i < len && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* ,"key":[ids where on[i]] */
static void
put_ids(hd_buf *b, const char *key, const char *const *ids, size_t n,
    const unsigned char *on)
{
	size_t i, k = 0;

	hd_buf_printf(b, ",\"%s\":[", key);
	for (i = 0; i < n; i++)
		if (on[i])
			hd_buf_printf(b, "%s\"%s\"", k++ ? "," : "", ids[i]);
	hd_buf_putc(b, ']');
}

char *
hd_exchange__progress_dump(const hd_exchange__progress *p,
    const char *const *ids, size_t n, char *const *speakers, size_t nspeakers,
    const char *also)
{
	hd_buf b = HD_BUF_INIT(0);
	size_t i, k = 0;

	/* (4) */
	hd_buf_printf(&b, "{\"stimulus\":\"%s\",\"stim_seq\":", p->stimulus);
	hd_buf_put_i64(&b, p->stim_seq);
	hd_buf_printf(&b, ",\"max_turns\":%d,\"taken\":%d", p->max_turns,
	    p->taken);
	if (p->last >= 0 && (size_t)p->last < n)
		hd_buf_printf(&b, ",\"last\":\"%s\"", ids[p->last]);
	if (p->running != NULL)
		hd_buf_printf(&b, ",\"running\":\"%s\"", p->running);
	put_ids(&b, "pending", ids, n, p->pending);
	put_ids(&b, "spoke", ids, n, p->spoke);
	hd_buf_puts(&b, ",\"turns\":{");
	for (i = 0; i < n; i++)
		if (p->turns[i] > 0)
			hd_buf_printf(&b, "%s\"%s\":%d", k++ ? "," : "",
			    ids[i], p->turns[i]);
	hd_buf_puts(&b, "},\"speakers\":[");
	for (i = 0; i < nspeakers; i++)
		hd_buf_printf(&b, "%s\"%s\"", i ? "," : "", speakers[i]);
	if (also != NULL)
		hd_buf_printf(&b, "%s\"%s\"", nspeakers ? "," : "", also);
	hd_buf_puts(&b, "]}");
	return hd_buf_detach(&b);
}

static int
index_of(const char *const *ids, size_t n, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(ids[i], s) == 0)
			return (int)i;
	return -1;
}

int
hd_exchange__progress_load(hd_exchange__progress *p, json_t **speakers,
    const char *text, const char *const *ids, size_t n)
{
	json_t *o = json_loads(text, 0, NULL), *v, *sp;
	const char *key;
	size_t i;
	int j;

	*speakers = NULL;
	if (!json_is_object(o) ||
	    !json_is_string(json_object_get(o, "stimulus")) ||
	    !json_is_integer(json_object_get(o, "max_turns")) ||
	    !json_is_integer(json_object_get(o, "taken")) ||
	    !json_is_array(sp = json_object_get(o, "speakers"))) {
		json_decref(o); /* (3) */
		return 0;
	}
	memset(p->pending, 0, n);
	memset(p->spoke, 0, n);
	memset(p->turns, 0, n * sizeof(*p->turns));
	snprintf(p->stimulus, sizeof(p->stimulus), "%s",
	    json_string_value(json_object_get(o, "stimulus")));
	p->stim_seq = json_integer_value(json_object_get(o, "stim_seq"));
	p->max_turns = (int)json_integer_value(json_object_get(o, "max_turns"));
	p->taken = (int)json_integer_value(json_object_get(o, "taken"));
	p->last = index_of(ids, n, json_object_get(o, "last"));
	j = index_of(ids, n, json_object_get(o, "running"));
	p->running = j >= 0 ? ids[j] : NULL;
	json_array_foreach (json_object_get(o, "pending"), i, v)
		if ((j = index_of(ids, n, v)) >= 0)
			p->pending[j] = 1;
	json_array_foreach (json_object_get(o, "spoke"), i, v)
		if ((j = index_of(ids, n, v)) >= 0)
			p->spoke[j] = 1;
	json_object_foreach (json_object_get(o, "turns"), key, v)
		for (i = 0; i < n; i++)
			if (strcmp(ids[i], key) == 0 && json_is_integer(v))
				p->turns[i] = (int)json_integer_value(v);
	if (p->max_turns < 1 || p->taken < 0) {
		json_decref(o);
		return 0;
	}
	*speakers = json_incref(sp);
	json_decref(o);
	return 1;
}
