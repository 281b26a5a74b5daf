/*
 * ops-memory.c -- team memory's operations (ops.h; docs/memory.md): save,
 * search, list and forget a fact, each one library call (memory.h).
 *
 * Who reads and writes is the acting identity, never an argument: over
 * MCP the bound team and agent (memory_save, memory_search,
 * memory_forget), on the CLI the TEAM argument and --as (without it, the
 * user), over REST the team in the path and the agent the request
 * proves (identity.c; without proof, the user). An unbound MCP session
 * (hd_op_call.unbound: the agent named in its arguments, proven by
 * nothing) acts as the user. So an agent's private facts are only ever
 * read by that agent, and the user sees a team's team facts and the
 * global ones.
 *
 * memory.save answers {fact}; memory.search {query, facts} with each
 * hit's bm25 rank, best first; memory.list {facts}, newest first;
 * memory.forget {forgotten: id}. REST: POST /api/teams/:team/memory,
 * GET /api/teams/:team/memory/search?q=, GET /api/teams/:team/memory,
 * DELETE /api/teams/:team/memory/:id. The CLI's renderers are
 * cmd-memory.c's. An expiry is text on every surface (a duration like 7d
 * or a UTC time), read by hd_memory_parse_expires.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/memory.h>
#include <huddle/util.h>

#include "ops.h"

/* The acting agent, NULL for the user -- and for an unbound MCP
 * session, whose agent nothing proves: its private facts are not for
 * whoever names it. */
static const char *
reader(const hd_op_call *c)
{
	if (c->agent == NULL || strcmp(c->agent, HD_BOARD_USER) == 0 ||
	    c->unbound)
		return NULL;
	return c->agent;
}

static json_t *
facts_json(const hd_facts *l, int with_rank)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(a, hd_fact_to_json(&l->items[i], with_rank));
	return a;
}

static int
tool_memory_save(json_t **result, const hd_op_call *c, hd_err *err)
{
	const json_t *tags = json_object_get(c->args, "tags"), *t;
	const char *expires = hd_op_str(c, "expires");
	const char *tv[HD_MEMORY_TAGS_MAX + 1];
	hd_fact_spec spec;
	hd_fact *f = NULL;
	size_t i;
	int rc;

	memset(&spec, 0, sizeof(spec));
	spec.team = c->team;
	spec.agent = reader(c);
	spec.text = hd_op_str(c, "text");
	spec.scope = hd_op_str(c, "scope");
	hd_op_int(c, "task", 0, &spec.task);
	json_array_foreach (tags, i, t) {
		if (i >= HD_MEMORY_TAGS_MAX)
			return hd_err_set(err, HD_EINVAL,
			    "a fact has at most %d tags", HD_MEMORY_TAGS_MAX);
		tv[i] = json_string_value(t);
	}
	spec.tags = tv;
	spec.ntags = json_array_size(tags);
	if (expires != NULL &&
	    (rc = hd_memory_parse_expires(
		 &spec.expires_at, expires, hd_now_ms(), err)) < 0)
		return rc;
	if ((rc = hd_memory_save(&f, c->st, &spec, err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "fact", hd_fact_to_json(f, 0));
	hd_fact_free(f);
	return 0;
}

static void
query_of(hd_memory_query *q, const hd_op_call *c)
{
	int64_t limit;

	memset(q, 0, sizeof(*q));
	q->team = c->team;
	q->agent = reader(c);
	q->text = hd_op_str(c, "query");
	q->tag = hd_op_str(c, "tag");
	hd_op_int(c, "limit", 0, &limit);
	q->limit = (int)limit;
}

static int
tool_memory_search(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_memory_query q;
	hd_facts l;
	int rc;

	query_of(&q, c);
	if ((rc = hd_memory_search(&l, c->st, &q, err)) < 0)
		return rc;
	*result = json_pack("{s:s, s:o}", "query", q.text, "facts",
	    facts_json(&l, 1));
	hd_facts_dispose(&l);
	return 0;
}

static int
tool_memory_list(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_memory_query q;
	hd_facts l;
	int rc;

	query_of(&q, c);
	if ((rc = hd_memory_list(&l, c->st, &q, err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "facts", facts_json(&l, 0));
	hd_facts_dispose(&l);
	return 0;
}

static int
tool_memory_forget(json_t **result, const hd_op_call *c, hd_err *err)
{
	int64_t id;
	int rc;

	hd_op_int(c, "id", 0, &id);
	if ((rc = hd_memory_forget(c->st, c->team, reader(c), id, err)) < 0)
		return rc;
	*result = json_pack("{s:I}", "forgotten", (json_int_t)id);
	return 0;
}

#define ARGS_END {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL}

#define TEAM_ARG                                                              \
	{"team", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL,     \
	    NULL, ":team", "TEAM", 0, NULL, NULL, "team"}

static const char *const scope_values[] = {"team", "global", "agent", NULL};

static const hd_op_arg save_args[] = {
    TEAM_ARG,
    {"text", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL,
	"the fact, 1-4000 characters; never a secret (API keys, private "
	"keys, bearer tokens are refused)",
	NULL, "TEXT", 0, NULL, NULL, "text"},
    {"scope", HD_OPT_ENUM, 0, 0, 0, scope_values,
	"who reads it: team (your team, the default), global (every team) "
	"or agent (only you)",
	NULL, "--scope", 0,
	"who reads it: team (the default), global (every team) or agent "
	"(only --as)",
	"SCOPE", NULL},
    {"tags", HD_OPT_STRS, 0, 0, HD_MEMORY_TAGS_MAX, NULL,
	"tags to filter by, each 1-50 lowercase letters, digits, '-' or '_'",
	NULL, "--tag", 0, "a tag (lowercase letters, digits, '-', '_')", "TAG",
	NULL},
    {"expires", HD_OPT_STR, 0, 0, 64, NULL,
	"when it stops being returned: a duration (90s, 30m, 12h, 7d, 2w) "
	"or a UTC time (2027-01-31T12:00:00Z); default never",
	NULL, "--expires", 0,
	"forget it after a duration (7d, 12h) or at a UTC time", "WHEN", NULL},
    {"task", HD_OPT_INT, HD_OPA_ID, 0, 0, NULL,
	"the task it came from, in your team", NULL, "--task", 0,
	"the task it came from", "ID", "task id"},
    ARGS_END,
};

static const hd_op_arg search_args[] = {
    TEAM_ARG,
    {"query", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL,
	"the words to look for (plain words: no search syntax)", "q",
	"QUERY", 0, NULL, NULL, "query"},
    {"limit", HD_OPT_INT, 0, 1, HD_MEMORY_LIMIT_MAX, NULL,
	"at most this many facts, 1-200 (default 10)", NULL, "--limit", 'n',
	"at most N facts, 1-200 (default 10)", "N", NULL},
    {"tag", HD_OPT_STR, 0, 0, 0, NULL, "only facts with this tag", NULL,
	"--tag", 0, "only facts with this tag", "TAG", NULL},
    ARGS_END,
};

static const hd_op_arg list_args[] = {
    TEAM_ARG,
    {"limit", HD_OPT_INT, HD_OPA_NO_MCP, 1, HD_MEMORY_LIMIT_MAX, NULL, NULL,
	NULL, "--limit", 'n', "at most N facts, 1-200 (default 10)", "N",
	NULL},
    {"tag", HD_OPT_STR, HD_OPA_NO_MCP, 0, 0, NULL, NULL, NULL, "--tag", 0,
	"only facts with this tag", "TAG", NULL},
    ARGS_END,
};

static const hd_op_arg forget_args[] = {
    TEAM_ARG,
    {"id", HD_OPT_INT, HD_OPA_REQUIRED | HD_OPA_ID, 0, 0, NULL,
	"the fact's id (from memory_search)", ":id", "ID", 0, NULL, NULL,
	"fact id"},
    ARGS_END,
};

#define AS_HELP "act as this member agent (default: the user)"

const hd_op hd_ops_memory[] = {
    {.name = "memory.save", .who = HD_OPW_MEMBER,
	.flags = HD_OPF_WRITE | HD_OPF_NEEDS_TEAM | HD_OPF_NEEDS_AGENT,
	.args = save_args, .fn = tool_memory_save, .mcp = "memory_save",
	.mcp_desc =
	    "Save a fact to team memory: something worth knowing later "
	    "(a decision, where a thing lives, a gotcha). scope team (the "
	    "default) is read by your team, global by every team, agent only "
	    "by you. Never save secrets: text that looks like an API key, a "
	    "private key or a bearer token is refused. Returns the fact with "
	    "its id.",
	.mcp_agent_desc = "the saving agent", .method = "POST",
	.path = "/api/teams/:team/memory", .status = 201,
	.cli = "memory save", .cli_summary = "Save a fact to a team's memory",
	.cli_details =
	    "Example: huddle memory save dev 'the staging DB is on port 5433' "
	    "--as coder --tag db\nA text that looks like a secret is refused, "
	    "naming the pattern.",
	.cli_as_help = AS_HELP},
    {.name = "memory.search", .who = HD_OPW_MEMBER,
	.flags = HD_OPF_NEEDS_TEAM | HD_OPF_NEEDS_AGENT, .args = search_args,
	.fn = tool_memory_search, .mcp = "memory_search",
	.mcp_desc =
	    "Search team memory: the facts you may read (your team's, global "
	    "ones, your own private ones) that share words with query, best "
	    "match first (bm25). Plain words: quotes and operators are just "
	    "text.",
	.mcp_agent_desc = "the reading agent", .method = "GET",
	.path = "/api/teams/:team/memory/search", .status = 200,
	.cli = "memory search",
	.cli_summary = "Search a team's memory, best match first",
	.cli_details = "Example: huddle memory search dev 'staging database' "
		       "--as coder",
	.cli_as_help = AS_HELP},
    {.name = "memory.list", .who = HD_OPW_MEMBER, .args = list_args,
	.fn = tool_memory_list, .method = "GET",
	.path = "/api/teams/:team/memory", .status = 200, .cli = "memory list",
	.cli_summary = "List the facts of a team's memory, newest first",
	.cli_as_help = AS_HELP},
    {.name = "memory.forget", .who = HD_OPW_MEMBER,
	.flags = HD_OPF_WRITE | HD_OPF_NEEDS_TEAM | HD_OPF_NEEDS_AGENT,
	.args = forget_args, .fn = tool_memory_forget, .mcp = "memory_forget",
	.mcp_desc =
	    "Forget (delete) a fact saved in your team, by its id: a team or "
	    "global fact your team saved, or one of your own private ones.",
	.mcp_agent_desc = "the forgetting agent", .method = "DELETE",
	.path = "/api/teams/:team/memory/:id", .status = 200,
	.cli = "memory forget", .cli_summary = "Forget a fact by its id",
	.cli_as_help = AS_HELP},
    {.name = NULL},
};
