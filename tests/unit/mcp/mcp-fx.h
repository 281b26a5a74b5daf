/*
 * mcp-fx.h -- the fixture the MCP tests share: a store with teams dev
 * (manager, coder) and ops (sre), a server and one session; call() sends
 * a raw message, tool() a tools/call and returns its parsed result.
 * Header-only; each test file includes it once.
 */
#ifndef HD_TEST_MCP_FX_H
#define HD_TEST_MCP_FX_H

#include <stdlib.h>
#include <string.h>

#include <mcp/mcp.h>

#include "testutil.h"

struct mcp_fx {
	hd_fixture base;
	hd_mcp_server *srv;
	hd_mcp_session s;
};

static inline int
setup(void **state)
{
	hd_fixture *base;
	struct mcp_fx *fx;
	hd_err err = HD_ERR_INIT;

	if (hd_fixture_setup((void **)&base) != 0)
		return -1;
	fx = calloc(1, sizeof(*fx));
	fx->base = *base;
	free(base);
	if (hd_mcp_server_new(&fx->srv, &err) != 0)
		return -1;
	hd_mcp_session_init(&fx->s, fx->srv, fx->base.st);
	hd_fixture_team(&fx->base, "dev", "manager", "coder", NULL);
	hd_fixture_team(&fx->base, "ops", "sre", NULL);
	*state = fx;
	return 0;
}

static inline int
teardown(void **state)
{
	struct mcp_fx *fx = *state;
	hd_fixture *base = malloc(sizeof(*base));

	hd_mcp_server_free(fx->srv);
	*base = fx->base;
	free(fx);
	*state = base;
	return hd_fixture_teardown(state);
}

/* Send msg; return the reply (caller frees) or NULL. */
static inline char *
call(struct mcp_fx *fx, const char *msg)
{
	char *reply = NULL;

	hd_mcp_handle(&reply, &fx->s, msg, strlen(msg));
	return reply;
}

/* tools/call: return the parsed result object. */
static inline json_t *
tool(struct mcp_fx *fx, const char *name, const char *args)
{
	char msg[4096], *reply;
	json_t *j, *res;

	snprintf(msg, sizeof(msg),
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
	    name, args);
	reply = call(fx, msg);
	assert_non_null(reply);
	j = json_loads(reply, 0, NULL);
	free(reply);
	assert_non_null(j);
	res = json_incref(json_object_get(j, "result"));
	json_decref(j);
	assert_non_null(res);
	return res;
}

#endif
