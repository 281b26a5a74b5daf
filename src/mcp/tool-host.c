/*
 * tool-host.c -- the operation table's tools for the native runtime, run
 * in process: the implementation of runtime.h's hd_runtime_tool_host,
 * which the runtime layer (below this one) declares and calls.
 *  (1) It is MCP without the transport: a session is an hd_mcp_session
 *      bound to the turn's agent (so identity arguments are ignored, as
 *      for an attached agent, mcp.c (4)) on a store of its own, opened
 *      from HUDDLE_HOME for the turn; list is tools/list and call is
 *      tools/call, with their argument checks, their piggybacked mail
 *      and their error results. Nothing about a tool is written here.
 *  (2) The MCP server (each tool's schema) is built once per process, on
 *      first use, and only read afterwards; sessions are one turn's.
 *  (4) Opening a store costs milliseconds (the schema check, the pragmas),
 *      more than a whole model call on loopback, so a thread keeps the
 *      store of its last session (one, for one HUDDLE_HOME) for its next
 *      turn: a connection is never shared between threads (store.h), and
 *      the thread's store is closed when the thread ends (a key
 *      destructor). A session of another home, or a second session open
 *      on the same thread at once, opens its own. The tool list is the
 *      same for every bound session, so a kept session keeps it too (a
 *      copy of the thread's own: JSON values are not shared between
 *      threads, mcp.c's tools/list).
 *  (3) A call's text is what the model reads: the result's text blocks
 *      joined by a newline, or the error's message; 1 for an error. It
 *      is made from the same run as tools/call's result
 *      (hd_mcp__tools_call_text), not by writing that result out as JSON
 *      text and parsing it back.
 * Callers: main() registers it (src/cli/main.c); src/runtime/native.c
 * calls it through the registered host.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/runtime.h>
#include <huddle/store.h>

#include "mcp.h"
#include "mcp_int.h"

static pthread_once_t srv_once = PTHREAD_ONCE_INIT;
static hd_mcp_server *srv; /* (2) */
static pthread_key_t kept_key; /* (4): a thread's kept store */

typedef struct host_sess {
	hd_mcp_session s;
	hd_store *st;
	char home[PATH_MAX];
	json_t *list; /* the tools, made once for the thread (4) */
} host_sess;

/* (4): a thread's kept session, its store closed with the thread */
static void
kept_free(void *p)
{
	host_sess *h = p;

	if (h == NULL)
		return;
	hd_store_close(h->st);
	json_decref(h->list);
	free(h);
}

static void
srv_make(void)
{
	hd_err err = HD_ERR_INIT;

	if (pthread_key_create(&kept_key, kept_free) != 0 ||
	    hd_mcp_server_new(&srv, &err) < 0)
		srv = NULL;
}

static int
host_open(void **out, const char *huddle_home, const char *team,
    const char *agent, hd_err *err)
{
	host_sess *h;
	int rc;

	*out = NULL;
	pthread_once(&srv_once, srv_make);
	if (srv == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	h = pthread_getspecific(kept_key);
	if (h != NULL && strcmp(h->home, huddle_home) == 0)
		pthread_setspecific(kept_key, NULL); /* taken: (4) */
	else {
		h = NULL;
		if ((h = calloc(1, sizeof(*h))) == NULL)
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		snprintf(h->home, sizeof(h->home), "%s", huddle_home);
		if ((rc = hd_store_open(&h->st, huddle_home, err)) < 0) {
			free(h);
			return rc;
		}
	}
	hd_mcp_session_init(&h->s, srv, h->st);
	if ((rc = hd_mcp_session_bind(&h->s, team, agent, err)) < 0) {
		kept_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

static json_t *
host_list(void *sess)
{
	host_sess *h = sess;
	json_t *r, *out, *t;
	size_t i;

	if (h->list != NULL)
		return json_incref(h->list);
	r = hd_mcp__tools_list(&h->s);
	out = json_array();
	json_array_foreach (json_object_get(r, "tools"), i, t)
		json_array_append_new(out,
		    json_pack("{s:O, s:O, s:O}", "name",
			json_object_get(t, "name"), "description",
			json_object_get(t, "description"), "input_schema",
			json_object_get(t, "inputSchema")));
	json_decref(r);
	h->list = json_incref(out);
	return out;
}

static int
host_call(void *sess, const char *name, const json_t *args, char **text)
{
	host_sess *h = sess;
	int is_error = 1;

	/* (3): the outcome as text, straight from the run (mcp.c) */
	if ((*text = hd_mcp__tools_call_text(&h->s, name, args, &is_error)) ==
	    NULL) {
		*text = strdup("the tool gave no result");
		return 1;
	}
	return is_error;
}

static void
host_close(void *sess)
{
	host_sess *h = sess;

	if (h == NULL)
		return;
	/* (4): kept for the thread's next turn, in place of an older one */
	kept_free(pthread_getspecific(kept_key));
	if (pthread_setspecific(kept_key, h) != 0)
		kept_free(h);
}

static const hd_runtime_tool_host host = {
    .open = host_open,
    .list = host_list,
    .call = host_call,
    .close = host_close,
};

const hd_runtime_tool_host *
hd_mcp_tool_host(void)
{
	return &host;
}
