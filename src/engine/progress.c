/*
 * progress.c -- an exchange's progress as of its last commit, as text
 * kept with its room lock (lock.c (4)), so that the same exchange run
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
 * Callers: exchange.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

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

char *
hd_exchange__progress_dump(const hd_exchange__progress *p,
    const char *const *ids, size_t n, char *const *speakers, size_t nspeakers,
    const char *also)
{
	json_t *o = json_object(), *pending = json_array(), *spoke = json_array();
	json_t *turns = json_object(), *sp = json_array();
	char *text;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p->pending[i])
			json_array_append_new(pending, json_string(ids[i]));
		if (p->spoke[i])
			json_array_append_new(spoke, json_string(ids[i]));
		if (p->turns[i] > 0)
			json_object_set_new(
			    turns, ids[i], json_integer(p->turns[i]));
	}
	for (i = 0; i < nspeakers; i++)
		json_array_append_new(sp, json_string(speakers[i]));
	if (also != NULL)
		json_array_append_new(sp, json_string(also));
	json_object_set_new(o, "stimulus", json_string(p->stimulus));
	json_object_set_new(o, "stim_seq", json_integer(p->stim_seq));
	json_object_set_new(o, "max_turns", json_integer(p->max_turns));
	json_object_set_new(o, "taken", json_integer(p->taken));
	json_object_set_new(o, "last",
	    p->last >= 0 && (size_t)p->last < n ? json_string(ids[p->last])
						: json_null());
	json_object_set_new(o, "running",
	    p->running != NULL ? json_string(p->running) : json_null());
	json_object_set_new(o, "pending", pending);
	json_object_set_new(o, "spoke", spoke);
	json_object_set_new(o, "turns", turns);
	json_object_set_new(o, "speakers", sp);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
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
