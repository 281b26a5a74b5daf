/*
 * fake.h -- a fake runtime for exchange tests: records every turn it is
 * asked to run (agent, prompt, resumed session), answers from a small
 * per-agent script, and lets a test act while a turn runs (post to the
 * room, move the board, set the abort flag). Header-only; each test file
 * includes it once.
 */
#ifndef HD_TEST_FAKE_H
#define HD_TEST_FAKE_H

#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/runtime.h>

#define FAKE_MAX_CALLS 128
#define FAKE_MAX_RULES 8

typedef struct fake_rule {
	const char *agent;  /* NULL: any agent */
	const char *text;   /* the reply; NULL: "<agent> here" */
	const char *native; /* native session id to report, or NULL */
	const char *error;  /* non-NULL: the turn fails with this */
	int64_t microcents; /* reported cost; 0: none (estimate-free) */
} fake_rule;

typedef struct fake fake;

/* Called while a turn runs, before it answers. */
typedef void (*fake_hook)(fake *f, const hd_runtime_turn *in);

struct fake {
	fake_rule rules[FAKE_MAX_RULES];
	size_t nrules;
	fake_hook during;
	void *user;
	/* what was asked */
	char *agents[FAKE_MAX_CALLS];
	char *prompts[FAKE_MAX_CALLS];  /* past the standing context */
	char *contexts[FAKE_MAX_CALLS]; /* the standing context */
	char *resumed[FAKE_MAX_CALLS];  /* NULL when none */
	char *status_during[FAKE_MAX_CALLS];
	size_t n;
	hd_store *st; /* to read the agent's status during the turn */
};

static inline void
fake_init(fake *f, hd_store *st)
{
	memset(f, 0, sizeof(*f));
	f->st = st;
}

static inline void
fake_rule_add(fake *f, const char *agent, const char *text, const char *native,
    const char *error, int64_t microcents)
{
	fake_rule *r = &f->rules[f->nrules++];

	r->agent = agent;
	r->text = text;
	r->native = native;
	r->error = error;
	r->microcents = microcents;
}

static inline void
fake_dispose(fake *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->agents[i]);
		free(f->prompts[i]);
		free(f->contexts[i]);
		free(f->resumed[i]);
		free(f->status_during[i]);
	}
	f->n = 0;
}

static inline int
fake_run(
    void *ctx, hd_runtime_result *out, const hd_runtime_turn *in, hd_err *err)
{
	fake *f = ctx;
	const fake_rule *r = NULL;
	hd_agent *a = NULL;
	hd_err e = HD_ERR_INIT;
	char text[256];
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < f->nrules && r == NULL; i++)
		if (f->rules[i].agent == NULL ||
		    strcmp(f->rules[i].agent, in->agent->id) == 0)
			r = &f->rules[i];
	if (f->n < FAKE_MAX_CALLS) {
		f->agents[f->n] = strdup(in->agent->id);
		/* the context and the rest, without the blank line
		 * between them (prompt.h) */
		f->contexts[f->n] = strndup(in->prompt, in->context_len);
		f->prompts[f->n] = strdup(
		    in->prompt + in->context_len +
		    (strncmp(in->prompt + in->context_len, "\n\n", 2) == 0
			    ? 2
			    : 0));
		f->resumed[f->n] = in->resume_session_id
				       ? strdup(in->resume_session_id)
				       : NULL;
		if (f->st != NULL &&
		    hd_agent_get(&a, f->st, in->agent->id, &e) == 0)
			f->status_during[f->n] = strdup(a->status);
		hd_agent_free(a);
		f->n++;
	}
	if (f->during != NULL)
		f->during(f, in);
	if (r != NULL && r->error != NULL) {
		out->text = strdup("");
		out->reason = HD_DONE_ERROR;
		out->error = strdup(r->error);
		return hd_err_set(err, HD_ERR, "%s", r->error);
	}
	if (r != NULL && r->text != NULL)
		out->text = strdup(r->text);
	else {
		snprintf(text, sizeof(text), "%s here", in->agent->id);
		out->text = strdup(text);
	}
	out->text_len = strlen(out->text);
	out->reason = HD_DONE_SUCCESS;
	if (r != NULL && r->native != NULL)
		out->native_session_id = strdup(r->native);
	if (r != NULL && r->microcents > 0) {
		out->cost.microcents = r->microcents;
		out->cost.usd = (double)r->microcents / 1e8;
	}
	return 0;
}

/* The data of the last event of kind for team (a new reference). */
static inline json_t *
last_event_data(hd_store *st, const char *team, const char *kind)
{
	hd_event_filter f = {0};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;
	json_t *d = NULL;

	f.team = team;
	f.kind = kind;
	f.limit = 1;
	if (hd_events_list(&l, st, &f, &err) != 0)
		return NULL;
	if (l.n > 0)
		d = json_incref(l.items[l.n - 1].data);
	hd_event_list_dispose(&l);
	return d;
}

#endif
