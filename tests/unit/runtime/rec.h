/*
 * rec.h -- a recording sink for runtime tests: keeps every event's kind,
 * a copy of its text, and the concatenated reply, so tests can assert the
 * exact sequence a turn produced. Header-only; each test file includes it
 * once.
 */
#ifndef HD_TEST_REC_H
#define HD_TEST_REC_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#define REC_MAX 4096

typedef struct rec {
	hd_runtime_event_kind kinds[REC_MAX];
	char *texts[REC_MAX];
	size_t n;
	hd_buf reply;          /* every text_delta, concatenated */
	int deltas_valid_utf8; /* 1 while every delta was whole UTF-8 */
	hd_done_reason reason;
	hd_runtime_cost cost;      /* the last cost event */
	atomic_int *abort_on_text; /* set this on the first text_delta */
} rec;

static inline void
rec_init(rec *r)
{
	memset(r, 0, sizeof(*r));
	r->reply = (hd_buf)HD_BUF_INIT(0);
	r->deltas_valid_utf8 = 1;
}

static inline void
rec_dispose(rec *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->texts[i]);
	hd_buf_dispose(&r->reply);
}

static inline void
rec_sink(const hd_runtime_event *ev, void *payload)
{
	rec *r = payload;

	if (r->n < REC_MAX) {
		r->kinds[r->n] = ev->kind;
		r->texts[r->n] = ev->text && ev->kind != HD_RT_TEXT_DELTA
				     ? strdup(ev->text)
				     : NULL;
		r->n++;
	}
	if (ev->kind == HD_RT_TEXT_DELTA) {
		hd_buf_put(&r->reply, ev->text, ev->len);
		if (!hd_utf8_ok(ev->text, ev->len))
			r->deltas_valid_utf8 = 0;
		if (r->abort_on_text != NULL)
			atomic_store(r->abort_on_text, 1);
	}
	if (ev->kind == HD_RT_DONE)
		r->reason = ev->reason;
	if (ev->kind == HD_RT_COST)
		r->cost = ev->cost;
}

/* The kinds as a string: "text_delta,cost,done". */
static inline const char *
rec_kinds(rec *r)
{
	static char out[8192];
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < r->n && len < sizeof(out) - 32; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s",
		    i ? "," : "", hd_runtime_event_kind_name(r->kinds[i]));
	return out;
}

/* How many events of a kind. */
static inline size_t
rec_count(rec *r, hd_runtime_event_kind k)
{
	size_t i, n = 0;

	for (i = 0; i < r->n; i++)
		n += r->kinds[i] == k;
	return n;
}

/* An in-memory agent for runtime tests (no store needed). */
static inline void
test_agent(hd_agent *a, const char *id, const char *runtime, const char *cfg)
{
	memset(a, 0, sizeof(*a));
	a->id = (char *)id;
	a->name = (char *)id;
	a->team_id = (char *)"dev";
	a->role = (char *)"";
	a->runtime = (char *)runtime;
	a->status = (char *)"idle";
	a->runtime_config = json_loads(cfg, 0, NULL);
	assert_non_null(a->runtime_config);
}

#endif
