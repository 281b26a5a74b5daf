/*
 * conv-test.h -- helpers the conversation tests share (static inline, so
 * each test executable takes only what it uses): teams of scripted and
 * exec agents (and the slow fan-out team the cancel and resume tests
 * share), an engine whose replies are logged, and readers for the
 * deliveries and events a conversation left.
 */
#ifndef HD_CONV_TEST_H
#define HD_CONV_TEST_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/buf.h>
#include <huddle/conversation.h>
#include <huddle/events.h>
#include <huddle/team.h>

#include "testutil.h"

/* Generous bound on a conversation; never reached when things work. */
#define CT_WAIT_MS 120000

/* Replies as the on_reply callback saw them: "conv|seq|agent|body". */
typedef struct ct_log {
	pthread_mutex_t lock;
	char **lines;
	size_t n;
} ct_log;

static inline void
ct_on_reply(const hd_conversation_reply_info *r, void *payload)
{
	ct_log *log = payload;
	char *line;
	size_t len = strlen(r->conversation_id) + strlen(r->agent) +
		     strlen(r->body) + 32;

	line = malloc(len);
	snprintf(line, len, "%s|%lld|%s|%s", r->conversation_id,
	    (long long)r->seq, r->agent, r->body);
	pthread_mutex_lock(&log->lock);
	log->lines = realloc(log->lines, (log->n + 1) * sizeof(*log->lines));
	log->lines[log->n++] = line;
	pthread_mutex_unlock(&log->lock);
}

static inline void
ct_log_init(ct_log *log)
{
	memset(log, 0, sizeof(*log));
	pthread_mutex_init(&log->lock, NULL);
}

static inline void
ct_log_dispose(ct_log *log)
{
	size_t i;

	for (i = 0; i < log->n; i++)
		free(log->lines[i]);
	free(log->lines);
	pthread_mutex_destroy(&log->lock);
}

static inline void
ct_team(hd_fixture *fx, const char *team, const char *name)
{
	hd_team_spec ts = {0};
	hd_err err = HD_ERR_INIT;

	ts.id = team;
	ts.name = name;
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
}

/* Add agent id to team with runtime and runtime_config (JSON text). */
static inline void
ct_agent(hd_fixture *fx, const char *team, const char *id, int leader,
    const char *runtime, const char *config)
{
	hd_agent_spec as;
	hd_err err = HD_ERR_INIT;
	json_error_t jerr;
	json_t *cfg = json_loads(config, 0, &jerr);

	if (cfg == NULL)
		fail_msg("bad config %s: %s", config, jerr.text);
	memset(&as, 0, sizeof(as));
	as.id = id;
	as.team = team;
	as.leader = leader;
	as.runtime = runtime;
	as.runtime_config = cfg;
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	json_decref(cfg);
}

/* A scripted agent replying `reply` to everything. */
static inline void
ct_scripted(hd_fixture *fx, const char *team, const char *id, int leader,
    const char *reply)
{
	json_t *cfg = json_pack("{s:s}", "default", reply);
	char *text = json_dumps(cfg, 0);

	ct_agent(fx, team, id, leader, "scripted", text);
	free(text);
	json_decref(cfg);
}

/* An exec agent running script path. */
static inline void
ct_exec(hd_fixture *fx, const char *team, const char *id, int leader,
    const char *path)
{
	json_t *cfg = json_pack("{s:[s]}", "command", path);
	char *text = json_dumps(cfg, 0);

	ct_agent(fx, team, id, leader, "exec", text);
	free(text);
	json_decref(cfg);
}

static inline hd_conversation_engine *
ct_engine(hd_fixture *fx, ct_log *log)
{
	hd_conversation_engine_config cfg;
	hd_conversation_engine *e = NULL;
	hd_err err = HD_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	cfg.home = fx->home;
	cfg.on_reply = log != NULL ? ct_on_reply : NULL;
	cfg.payload = log;
	assert_hd_ok(hd_conversation_engine_start(&e, &cfg, &err), &err);
	return e;
}

/* Start a conversation and wait for it; id gets its id. */
static inline void
ct_ask(hd_fixture *fx, hd_conversation_engine *e, const char *team,
    const char *message, char id[37])
{
	hd_conversation_spec spec = {team, message, "test"};
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_conversation_start(id, e, fx->st, &spec, &err), &err);
	assert_hd_ok(
	    hd_conversation_wait(e, fx->st, id, CT_WAIT_MS, &err), &err);
}

static inline hd_conversation *
ct_get(hd_fixture *fx, const char *id)
{
	hd_conversation *c = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_conversation_get(&c, fx->st, id, &err), &err);
	return c;
}

/* The events of kind (NULL: any) about conversation id, oldest first. */
static inline hd_event_list
ct_events(hd_fixture *fx, const char *kind, const char *id)
{
	hd_event_filter f = {NULL, kind, 0, HD_EVENTS_LIMIT_MAX};
	hd_event_list l, out = {NULL, 0};
	hd_err err = HD_ERR_INIT;
	size_t i;

	f.after_seq = 0;
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	out.items = calloc(l.n + 1, sizeof(*out.items));
	for (i = 0; i < l.n; i++) {
		const char *cid = json_string_value(
		    json_object_get(l.items[i].data, "conversation_id"));

		if (id == NULL || (cid != NULL && strcmp(cid, id) == 0)) {
			out.items[out.n++] = l.items[i];
			memset(&l.items[i], 0, sizeof(l.items[i]));
		}
	}
	hd_event_list_dispose(&l);
	return out;
}

/* pending as the events of conversation id tell it, "1 4 3 2 1 0". */
static inline char *
ct_pending_trail(hd_fixture *fx, const char *id)
{
	hd_event_list l = ct_events(fx, NULL, id);
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	for (i = 0; i < l.n; i++) {
		const char *k = l.items[i].kind;

		if (strcmp(k, "conversation_started") != 0 &&
		    strcmp(k, "conversation_reply") != 0 &&
		    strcmp(k, "conversation_completed") != 0)
			continue;
		hd_buf_printf(&b, "%s%lld", b.len ? " " : "",
		    (long long)json_integer_value(
			json_object_get(l.items[i].data, "pending")));
	}
	hd_event_list_dispose(&l);
	return hd_buf_detach(&b);
}

/* "agent: body" of each reply, joined by " | ". */
static inline char *
ct_replies(const hd_conversation *c)
{
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	for (i = 0; i < c->nreplies; i++)
		hd_buf_printf(&b, "%s%s: %s", i ? " | " : "",
		    c->replies[i].agent, c->replies[i].body);
	return b.len ? hd_buf_detach(&b) : strdup("");
}

/* The team of the cancel and resume tests: the manager fans out to a
 * coder that never finishes by itself and a quick reviewer. */
static inline void
ct_slow_team(hd_fixture *fx)
{
	ct_team(fx, "dev", "Dev team");
	ct_scripted(fx, "dev", "manager", 1,
	    "Fanning out. [@coder: slow job] [@reviewer: quick job]");
	ct_agent(fx, "dev", "coder", 0, "scripted",
	    "{\"default\": \"coded\", \"delay_ms\": 600000}");
	ct_scripted(fx, "dev", "reviewer", 0, "reviewed");
}

/* The state of the delivery to agent in conversation c, or "". */
static inline const char *
ct_state_of(const hd_conversation *c, const char *agent)
{
	size_t i;

	for (i = 0; i < c->ndeliveries; i++)
		if (strcmp(c->deliveries[i].to_agent, agent) == 0)
			return c->deliveries[i].state;
	return "";
}

/* Wait (bounded) until ct_slow_team's coder runs and its reviewer has
 * answered in conversation id. */
static inline void
ct_wait_coder_running(hd_fixture *fx, const char *id)
{
	hd_conversation *c;
	int i, ok = 0;

	for (i = 0; i < 3000 && !ok; i++) {
		c = ct_get(fx, id);
		ok = strcmp(ct_state_of(c, "coder"), "running") == 0 &&
		     strcmp(ct_state_of(c, "reviewer"), "done") == 0;
		hd_conversation_free(c);
		if (!ok)
			usleep(20000);
	}
	assert_true(ok);
}

#endif
