/*
 * session.c -- session lineage (SPEC 2 `sessions`, SPEC 8.1). Owns table
 * sessions; nothing else writes it (team.c deletes a team's rows with the
 * team). It lives in the team module because a row is a fact about one
 * agent (which native sessions its runtime went through), like the rest
 * of what this module keeps per agent.
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
	hd_stmt *s;
	char id[37];
	int rc, src;

	if (native == NULL || native[0] == '\0' ||
	    (parent != NULL && strcmp(native, parent) == 0)) /* (1) */
		return 0;
	if ((rc = hd_uuid(id, err)) < 0)
		return rc;
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO sessions(id, agent_id, team_id, runtime, "
		 "native_session_id, parent_session_id, created_at) "
		 "VALUES (?, ?, ?, ?, ?, ?, ?)",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, id);
	hd_stmt_bind_text(s, 2, agent);
	hd_stmt_bind_text_copy(s, 3, team);
	hd_stmt_bind_text(s, 4, runtime);
	hd_stmt_bind_text(s, 5, native);
	hd_stmt_bind_text_copy(s, 6, parent);
	hd_stmt_bind_int(s, 7, hd_now_ms());
	if ((src = hd_stmt_step(s)) != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

static void
session_dispose(hd_session *s)
{
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
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		session_dispose(&l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

int
hd_session_list(hd_sessions *out, hd_store *st, const char *agent, hd_err *err)
{
	hd_stmt *s;
	hd_session *items = NULL, *ni, *x;
	size_t n = 0, cap = 0;
	int rc, src;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id, agent_id, team_id, runtime, native_session_id, "
		 "parent_session_id, created_at FROM sessions "
		 "WHERE agent_id = ? ORDER BY created_at, rowid",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			if ((ni = realloc(items, cap * sizeof(*ni))) == NULL) {
				rc =
				    hd_err_set(err, HD_ENOMEM, "out of memory");
				goto done;
			}
			items = ni;
		}
		x = &items[n++];
		memset(x, 0, sizeof(*x));
		x->id = hd_store_col_dup(s, 0);
		x->agent_id = hd_store_col_dup(s, 1);
		x->team_id = hd_store_col_dup(s, 2);
		x->runtime = hd_store_col_dup(s, 3);
		x->native_session_id = hd_store_col_dup(s, 4);
		x->parent_session_id = hd_store_col_dup(s, 5);
		x->created_at = hd_stmt_int(s, 6);
		if (x->id == NULL || x->agent_id == NULL ||
		    x->runtime == NULL || x->native_session_id == NULL) {
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
			goto done;
		}
	}
	if (src != HD_DONE) {
		rc = hd_store_sqlerr(st, src, err);
		goto done;
	}
	out->items = items;
	out->n = n;
	items = NULL;
	n = 0;
done:
	hd_store_reset(s);
	while (n > 0)
		session_dispose(&items[--n]);
	free(items);
	return rc;
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
