/*
 * session.c -- session lineage (SPEC 2 `sessions`, SPEC 8.1). Owns table
 * sessions; nothing else writes it (hd_team_drop_rows deletes a team's
 * rows with the team). It lives in the team module because a row is a
 * fact about one agent (which native sessions its runtime went through),
 * like the rest of what this module keeps per agent.
 *  (1) A row means "this agent's runtime is now in native session X,
 *      continued from Y (or from nothing)". Continuing the same session
 *      adds nothing, so the table grows with rotations, not with turns.
 *  (2) Rows are never updated or deleted.
 * Callers: the engines, each recording the session a turn ended in
 * with the turn's save (engine/turn.c, conversation.c, sv_turn.c), the
 * tests.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/session.h>
#include <huddle/util.h>

#include <store/store.h>

int
hd_session_record(hd_store *st, const char *agent, const char *team,
    const char *runtime, const char *native, const char *parent, hd_err *err)
{
	char id[37];
	int rc;

	if (native == NULL || native[0] == '\0' ||
	    (parent != NULL && strcmp(native, parent) == 0)) /* (1) */
		return 0;
	if ((rc = hd_uuid(id, err)) < 0)
		return rc;
	return hd_store_run(st, err,
	    "INSERT INTO sessions(id, agent_id, team_id, runtime, "
	    "native_session_id, parent_session_id, created_at) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?)",
	    HD_TEXT(id), HD_TEXT(agent), HD_TEXT(team), HD_TEXT(runtime),
	    HD_TEXT(native), HD_TEXT(parent), HD_INT(hd_now_ms()));
}

static int
session_row(void *item, hd_stmt *s, void *ctx)
{
	hd_session *x = item;

	(void)ctx;
	memset(x, 0, sizeof(*x));
	x->id = hd_store_col_dup(s, 0);
	x->agent_id = hd_store_col_dup(s, 1);
	x->team_id = hd_store_col_dup(s, 2);
	x->runtime = hd_store_col_dup(s, 3);
	x->native_session_id = hd_store_col_dup(s, 4);
	x->parent_session_id = hd_store_col_dup(s, 5);
	x->created_at = hd_stmt_int(s, 6);
	return x->id == NULL || x->agent_id == NULL || x->runtime == NULL ||
		       x->native_session_id == NULL
		   ? -1
		   : 0;
}

static void
session_dispose(void *item)
{
	hd_session *s = item;

	free(s->id);
	free(s->agent_id);
	free(s->team_id);
	free(s->runtime);
	free(s->native_session_id);
	free(s->parent_session_id);
}

void
hd_sessions_dispose(hd_sessions *l)
{
	if (l == NULL)
		return;
	hd_store_rows_free(l->items, l->n, sizeof(*l->items), session_dispose);
	l->items = NULL;
	l->n = 0;
}

int
hd_session_list(hd_sessions *out, hd_store *st, const char *agent, hd_err *err)
{
	hd_stmt *s;
	void *items;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (rc = hd_store_query(st, &s, err,
		 "SELECT id, agent_id, team_id, runtime, native_session_id, "
		 "parent_session_id, created_at FROM sessions "
		 "WHERE agent_id = ? ORDER BY created_at, rowid",
		 HD_TEXT(agent))) < 0 ||
	    (rc = hd_store_rows(st, s, sizeof(hd_session), session_row,
		 session_dispose, NULL, &items, &out->n, err)) < 0)
		return rc;
	out->items = items;
	return 0;
}

json_t *
hd_session_to_json(const hd_session *s)
{
	return json_pack("{s:s, s:s, s:o, s:s, s:s, s:o, s:I}", "id", s->id,
	    "agent_id", s->agent_id, "team_id",
	    s->team_id ? json_string(s->team_id) : json_null(), "runtime",
	    s->runtime, "native_session_id", s->native_session_id,
	    "parent_session_id",
	    s->parent_session_id ? json_string(s->parent_session_id)
				 : json_null(),
	    "created_at", (json_int_t)s->created_at);
}
