/*
 * eventlog.c -- `huddle serve` logs the engine's events: one line on
 * stderr per turn started or ended, conversation and exchange state
 * change, autorun turn, engine error (engine_kind below), whichever
 * process of this home ran it (the server's own engines, or a CLI's
 * `huddle exchange`), as it commits to the event log.
 *  (1) One thread of its own, with its own store connection, follows the
 *      log from its head at start (nothing older is logged): it reads
 *      what was committed after the last event it saw, logs the engine's
 *      events among them, and sleeps in hd_store_wait_change until the
 *      next commit anywhere, in slices of EVLOG_SLICE_MS so a stop is
 *      seen. It reads committed rows only, so a line is never written
 *      for a turn whose transaction was rolled back.
 *  (2) It runs only when info lines are written at all (not with
 *      --quiet, --log-level warn or HUDDLE_LOG=warn): a server that logs
 *      nothing pays nothing per commit.
 *  (3) The line names the event, its team and agent, and the event's
 *      data as key=value (in JSON: an "event" member), without what the
 *      agents said (reply, message, body, text, prompt) or anything that
 *      might be a secret (keys holding token, sig, url, secret), and with
 *      each string cut to EVLOG_STR_MAX bytes (on a character boundary):
 *      a line stays short and says what happened, not the conversation.
 * Callers: server.c (hd_http_start, hd_http_stop).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_int.h"

#define HD_LOG_COMPONENT "event"
#include <huddle/log.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/util.h>

#define EVLOG_BATCH 1000
#define EVLOG_SLICE_MS 500
#define EVLOG_STR_MAX 160

/* The engine's event kinds: what runs turns and holds conversations. */
static int
engine_kind(const char *kind)
{
	static const char *const prefixes[] = {"turn_", "exchange_",
	    "autorun_", "conversation_", NULL};
	static const char *const kinds[] = {"error", "budget_exceeded",
	    "agent_parked", "agent_unparked", "session_reset", NULL};
	int i;

	for (i = 0; prefixes[i] != NULL; i++)
		if (strncmp(kind, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	for (i = 0; kinds[i] != NULL; i++)
		if (strcmp(kind, kinds[i]) == 0)
			return 1;
	return 0;
}

/* 1 for a data key left out of the line (3). */
static int
key_left_out(const char *key)
{
	static const char *const said[] = {"reply", "message", "body", "text",
	    "prompt", NULL};
	static const char *const secret[] = {"token", "sig", "url", "secret",
	    NULL};
	int i;

	for (i = 0; said[i] != NULL; i++)
		if (strcmp(key, said[i]) == 0)
			return 1;
	for (i = 0; secret[i] != NULL; i++)
		if (strstr(key, secret[i]) != NULL)
			return 1;
	return 0;
}

/* s cut to EVLOG_STR_MAX bytes on a UTF-8 character boundary. */
static json_t *
short_string(const char *s)
{
	size_t n = strlen(s);

	if (n <= EVLOG_STR_MAX)
		return json_string(s);
	n = EVLOG_STR_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return json_sprintf("%.*s...", (int)n, s);
}

/* The data the line shows (3): a new object. */
static json_t *
shown_data(const json_t *data)
{
	json_t *out = json_object(), *v;
	const char *key;

	if (out == NULL || !json_is_object(data))
		return out;
	json_object_foreach((json_t *)data, key, v) {
		if (key_left_out(key))
			continue;
		json_object_set_new(out, key,
		    json_is_string(v) ? short_string(json_string_value(v))
				      : json_deep_copy(v));
	}
	return out;
}

/* ` key=value` for each member of data; strings bare when they are one
 * plain word, else JSON-quoted, as every other value is JSON. */
static void
put_pairs(hd_buf *b, const json_t *data)
{
	const char *key, *s;
	json_t *v;
	char *text;

	json_object_foreach((json_t *)data, key, v) {
		s = json_string_value(v);
		if (s != NULL && s[0] != '\0' && strpbrk(s, " \t\"=\\") == NULL) {
			hd_buf_printf(b, " %s=%s", key, s);
			continue;
		}
		if ((text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT)) == NULL)
			continue;
		hd_buf_printf(b, " %s=%s", key, text);
		free(text);
	}
}

/* The line: in text the kind, team, agent and data as key=value; in
 * JSON that as msg, and the event as a member. */
static void
log_event(const hd_event *e)
{
	json_t *data = shown_data(e->data);
	hd_buf b = HD_BUF_INIT(0);

	if (data == NULL)
		return;
	hd_buf_printf(&b, "%s", e->kind);
	if (e->team_id != NULL)
		hd_buf_printf(&b, " team=%s", e->team_id);
	if (e->agent_id != NULL)
		hd_buf_printf(&b, " agent=%s", e->agent_id);
	if (e->task_id > 0)
		hd_buf_printf(&b, " task=%lld", (long long)e->task_id);
	put_pairs(&b, data);
	if (hd_buf_failed(&b))
		json_decref(data);
	else if (hd_log_json())
		hd_log_with(HD_LOG_INFO, HD_LOG_COMPONENT,
		    json_pack("{s:{s:I, s:s, s:s?, s:s?, s:I, s:o}}", "event",
			"seq", (json_int_t)e->seq, "kind", e->kind, "team",
			e->team_id, "agent", e->agent_id, "task_id",
			(json_int_t)e->task_id, "data", data),
		    "%s", hd_buf_cstr(&b));
	else {
		json_decref(data);
		hd_log_info("%s", hd_buf_cstr(&b));
	}
	hd_buf_dispose(&b);
}

static void *
evlog_main(void *arg)
{
	hd_http_server *srv = arg;
	hd_event_filter f = {0};
	hd_event_list l;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	uint64_t cursor = 0;
	size_t i;

	if (hd_store_open(&st, srv->home, &err) < 0 ||
	    hd_events_head(&f.after_seq, st, &err) < 0) {
		hd_log_error("engine events are not logged: %s", err.msg);
		hd_store_close(st);
		return NULL;
	}
	f.limit = EVLOG_BATCH;
	while (!atomic_load(&srv->evlog_stopping)) {
		if (hd_store_change_cursor(st, &cursor, &err) < 0 ||
		    hd_events_list(&l, st, &f, &err) < 0) {
			hd_log_warn("engine events: %s", err.msg);
			hd_sleep_us(200000);
			continue;
		}
		for (i = 0; i < l.n; i++)
			if (engine_kind(l.items[i].kind))
				log_event(&l.items[i]);
		if (l.n > 0)
			f.after_seq = l.items[l.n - 1].seq;
		i = l.n;
		hd_event_list_dispose(&l);
		if (i == EVLOG_BATCH)
			continue; /* more to read right away */
		if (hd_store_wait_change(st, &cursor, EVLOG_SLICE_MS, &err) < 0) {
			hd_log_warn("engine events: %s", err.msg);
			hd_sleep_us(200000);
		}
	}
	hd_store_close(st);
	return NULL;
}

int
hd_http__evlog_start(hd_http_server *srv, hd_err *err)
{
	if (!hd_log_enabled(HD_LOG_INFO)) /* (2) */
		return 0;
	atomic_store(&srv->evlog_stopping, 0);
	if (pthread_create(&srv->evlog_thread, NULL, evlog_main, srv) != 0)
		return hd_err_set(err, HD_ERR,
		    "cannot start the engine event log thread");
	srv->evlog_started = 1;
	return 0;
}

void
hd_http__evlog_stop(hd_http_server *srv)
{
	if (!srv->evlog_started)
		return;
	atomic_store(&srv->evlog_stopping, 1);
	pthread_join(srv->evlog_thread, NULL);
	srv->evlog_started = 0;
}
