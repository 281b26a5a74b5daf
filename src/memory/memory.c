/*
 * memory.c -- team memory (memory.h; docs/memory.md). Owns tables
 * memory_facts and memory_fts (schema.c, migration 17); nothing else
 * writes them.
 *  (1) Everything a save checks -- the text, its secrets (secret.c), the
 *      scope, the tags, the expiry -- is checked before the write; the
 *      team, the saver's membership and the source task inside the
 *      writing transaction, so no fact lands in a team its saver is not
 *      (or no longer) in.
 *  (2) The FTS index is written by the triggers on memory_facts
 *      (schema.c) in the statement that writes the fact: a fact and its
 *      index entry commit together or not at all. Facts are never
 *      updated, only inserted and deleted.
 *  (3) Who sees what is one SQL condition (VISIBLE), shared by search,
 *      list and forget: the reader's team's team facts, every global
 *      fact, the reader's own agent facts in its team; never a fact past
 *      its expires_at. A reader that is not a member of the team is
 *      refused before anything is read (`no member "x" in team t`).
 *  (4) Forget answers `no fact N in team t` alike for a fact that does
 *      not exist and one the caller may not touch, so a forget reveals
 *      nothing of other teams or agents.
 *  (5) A search's MATCH is hd_memory_fts_query's (query.c): the user's
 *      words, quoted, never FTS5 syntax.
 * Callers: the operation table (src/ops/ops-memory.c), the prompt
 * (src/engine/prompt.c: the facts for a turn's stimulus), team removal
 * (src/lifecycle/remove.c). Calls down only: the roster (team.c) and the
 * board (a source task's team).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/buf.h>
#include <huddle/memory.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include <store/store.h>

#define FACT_COLS                                                             \
	"f.id, f.team_id, f.scope, f.agent_id, f.text, f.tags,"               \
	" f.source_agent, f.source_task, f.created_at, f.expires_at"

/* (3): ?2 the team, ?3 the reader (NULL: the user), ?4 now, ?5 a tag or
 * NULL */
#define VISIBLE                                                               \
	" (f.scope = 'global' OR (f.team_id = ?2 AND (f.scope = 'team' OR"    \
	" (f.scope = 'agent' AND f.agent_id = ?3))))"                         \
	" AND (f.expires_at IS NULL OR f.expires_at > ?4)"                    \
	" AND (?5 IS NULL OR instr(f.tags, ' ' || ?5 || ' ') > 0)"

static const char *const scopes[] = {"team", "global", "agent", NULL};

void
hd_fact_free(hd_fact *f)
{
	size_t i;

	if (f == NULL)
		return;
	free(f->team_id);
	free(f->scope);
	free(f->agent_id);
	free(f->text);
	for (i = 0; i < f->ntags; i++)
		free(f->tags[i]);
	free(f->tags);
	free(f->source_agent);
	free(f);
}

static void
fact_dispose(void *item)
{
	hd_fact *f = item;
	size_t i;

	free(f->team_id);
	free(f->scope);
	free(f->agent_id);
	free(f->text);
	for (i = 0; i < f->ntags; i++)
		free(f->tags[i]);
	free(f->tags);
	free(f->source_agent);
	memset(f, 0, sizeof(*f));
}

void
hd_facts_dispose(hd_facts *l)
{
	if (l == NULL)
		return;
	hd_store_rows_free(l->items, l->n, sizeof(hd_fact), fact_dispose);
	l->items = NULL;
	l->n = 0;
}

/* " a b " into f->tags; 0, or -1 out of memory. */
static int
split_tags(hd_fact *f, const char *s)
{
	const char *p;
	size_t n = 0, len;

	for (p = s; *p != '\0'; p++)
		if (*p != ' ' && (p == s || p[-1] == ' '))
			n++;
	if (n == 0)
		return 0;
	if ((f->tags = calloc(n, sizeof(char *))) == NULL)
		return -1;
	for (p = s; *p != '\0';) {
		p += strspn(p, " ");
		if ((len = strcspn(p, " ")) == 0)
			break;
		if ((f->tags[f->ntags] = strndup(p, len)) == NULL)
			return -1;
		f->ntags++;
		p += len;
	}
	return 0;
}

/* A row of FACT_COLS (+ rank at 10 when present). */
static int
fact_fill(void *item, hd_stmt *s, void *ctx)
{
	hd_fact *f = item;
	const int *with_rank = ctx;

	memset(f, 0, sizeof(*f));
	f->id = hd_stmt_int(s, 0);
	f->team_id = hd_store_col_dup(s, 1);
	f->scope = hd_store_col_dup(s, 2);
	f->agent_id = hd_store_col_dup(s, 3);
	f->text = hd_store_col_dup(s, 4);
	f->source_agent = hd_store_col_dup(s, 6);
	f->source_task = hd_stmt_int(s, 7);
	f->created_at = hd_stmt_int(s, 8);
	f->expires_at = hd_stmt_int(s, 9);
	if (*with_rank)
		f->rank = hd_stmt_double(s, 10);
	if (f->team_id == NULL || f->scope == NULL || f->text == NULL ||
	    f->source_agent == NULL ||
	    (f->agent_id == NULL && !hd_stmt_is_null(s, 3)) ||
	    split_tags(f, hd_stmt_text(s, 5) != NULL ? hd_stmt_text(s, 5) : "") <
		0)
		return -1;
	return 0;
}

/* The team exists and agent (when given) is in it (1, 3). */
static int
check_reader(hd_store *st, const char *team, const char *agent, hd_err *err)
{
	int rc;

	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (agent == NULL)
		return hd_team_exists(st, team, err);
	return hd_team_member_check(st, team, agent, err);
}

/* ---- save ------------------------------------------------------------- */

struct save {
	const hd_fact_spec *spec;
	const char *scope;
	const char *tags; /* " a b " */
	int64_t now;
	int64_t id;
};

static int
save_txn(hd_store *st, void *payload, hd_err *err)
{
	struct save *s = payload;
	const hd_fact_spec *sp = s->spec;
	hd_task *t = NULL;
	int rc;

	if ((rc = check_reader(st, sp->team, sp->agent, err)) < 0)
		return rc;
	if (sp->task > 0) {
		if ((rc = hd_board_get(&t, st, sp->task, err)) < 0)
			return rc;
		rc = strcmp(t->team_id, sp->team) == 0
			 ? 0
			 : hd_err_set(err, HD_ENOTFOUND, "task %lld not found",
			       (long long)sp->task);
		hd_task_free(t);
		if (rc < 0)
			return rc;
	}
	if ((rc = hd_store_run(st, err,
		 "INSERT INTO memory_facts (team_id, scope, agent_id, text,"
		 " tags, source_agent, source_task, created_at, expires_at)"
		 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		 HD_TEXT(sp->team), HD_TEXT(s->scope),
		 HD_TEXT(strcmp(s->scope, "agent") == 0 ? sp->agent : NULL),
		 HD_TEXT(sp->text), HD_TEXT(s->tags),
		 HD_TEXT(sp->agent != NULL ? sp->agent : HD_MEMORY_USER),
		 HD_INT_OR_NULL(sp->task > 0, sp->task), HD_INT(s->now),
		 HD_INT_OR_NULL(sp->expires_at > 0, sp->expires_at))) < 0)
		return rc;
	s->id = hd_store_last_id(st);
	return 0;
}

/* Everything a save checks before the write (1). */
static int
save_check(const hd_fact_spec *sp, const char **scope, int64_t now,
    hd_err *err)
{
	const char *secret;
	size_t i, j;
	int rc;

	if (sp->text == NULL)
		return hd_err_set(err, HD_EINVAL, "text is required");
	if ((rc = hd_text_check("text", sp->text, 1, HD_MEMORY_TEXT_MAX,
		 err)) < 0)
		return rc;
	if ((secret = hd_memory_secret(sp->text)) != NULL)
		return hd_err_set(err, HD_EREFUSED,
		    "the text looks like %s; memory never stores secrets: "
		    "leave the secret out, or say where it is kept",
		    secret);
	*scope = sp->scope != NULL ? sp->scope : "team";
	for (i = 0; scopes[i] != NULL; i++)
		if (strcmp(scopes[i], *scope) == 0)
			break;
	if (scopes[i] == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "scope must be team, global or agent, not \"%.32s\"",
		    *scope);
	if (strcmp(*scope, "agent") == 0 && sp->agent == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "scope agent needs an acting agent: a private fact is "
		    "an agent's own");
	if (sp->ntags > HD_MEMORY_TAGS_MAX)
		return hd_err_set(err, HD_EINVAL, "a fact has at most %d tags",
		    HD_MEMORY_TAGS_MAX);
	for (i = 0; i < sp->ntags; i++) {
		if (!hd_slug_ok(sp->tags[i]))
			return hd_err_set(err, HD_EINVAL,
			    "invalid tag \"%.64s\": use 1-50 lowercase "
			    "letters, digits, '-' or '_'",
			    sp->tags[i]);
		for (j = 0; j < i; j++)
			if (strcmp(sp->tags[j], sp->tags[i]) == 0)
				return hd_err_set(err, HD_EINVAL,
				    "tag \"%s\" is given twice", sp->tags[i]);
	}
	if (sp->task < 0)
		return hd_err_set(
		    err, HD_EINVAL, "task must be a positive integer");
	if (sp->expires_at != 0 && sp->expires_at <= now)
		return hd_err_set(err, HD_EINVAL, "expires is in the past");
	return 0;
}

int
hd_memory_save(
    hd_fact **out, hd_store *st, const hd_fact_spec *spec, hd_err *err)
{
	hd_buf tags = HD_BUF_INIT(0);
	struct save s;
	hd_fact *f = NULL;
	size_t i;
	int rc;

	if (out != NULL)
		*out = NULL;
	memset(&s, 0, sizeof(s));
	s.spec = spec;
	s.now = hd_now_ms();
	if ((rc = save_check(spec, &s.scope, s.now, err)) < 0)
		return rc;
	hd_buf_putc(&tags, ' ');
	for (i = 0; i < spec->ntags; i++) {
		hd_buf_puts(&tags, spec->tags[i]);
		hd_buf_putc(&tags, ' ');
	}
	if (hd_buf_failed(&tags)) {
		hd_buf_dispose(&tags);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	s.tags = hd_buf_cstr(&tags);
	rc = hd_store_write(st, save_txn, &s, err);
	if (rc == 0 && out != NULL) {
		if ((f = calloc(1, sizeof(*f))) == NULL ||
		    (f->team_id = strdup(spec->team)) == NULL ||
		    (f->scope = strdup(s.scope)) == NULL ||
		    (f->text = strdup(spec->text)) == NULL ||
		    (f->source_agent = strdup(spec->agent != NULL
					   ? spec->agent
					   : HD_MEMORY_USER)) == NULL ||
		    (strcmp(s.scope, "agent") == 0 &&
			(f->agent_id = strdup(spec->agent)) == NULL) ||
		    split_tags(f, s.tags) < 0)
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		else {
			f->id = s.id;
			f->source_task = spec->task;
			f->created_at = s.now;
			f->expires_at = spec->expires_at;
			*out = f;
			f = NULL;
		}
	}
	hd_fact_free(f);
	hd_buf_dispose(&tags);
	return rc;
}

/* ---- reads ------------------------------------------------------------ */

struct read {
	const hd_memory_query *q;
	const char *match; /* search: the FTS query; list: NULL */
	int limit;
	int64_t now;
	hd_facts *out;
};

static int
read_txn(hd_store *st, void *payload, hd_err *err)
{
	struct read *r = payload;
	const hd_memory_query *q = r->q;
	int with_rank = r->match != NULL;
	void *items = NULL;
	hd_stmt *s;
	int rc;

	if ((rc = check_reader(st, q->team, q->agent, err)) < 0)
		return rc;
	/* bm25: lower is better (5). PostgreSQL has no FTS5: memory_facts
	 * carries a tsvector there (schema_pg.c, migration 17), which the
	 * same quoted words joined by OR search through
	 * websearch_to_tsquery, ranked by ts_rank negated so lower is better
	 * there too; the store runs the text of its backend. */
	if (r->match != NULL)
		rc = hd_store_query(st, &s, err,
		    hd_store_dialect(st,
			"SELECT " FACT_COLS ", bm25(memory_fts, 1.0, 0.5)"
			" FROM memory_fts JOIN memory_facts f"
			" ON f.id = memory_fts.rowid"
			" WHERE memory_fts MATCH ?1 AND" VISIBLE
			" ORDER BY 11, f.id DESC LIMIT ?6",
			"SELECT " FACT_COLS ","
			" -ts_rank(f.fts, websearch_to_tsquery('simple', ?1))"
			" FROM memory_facts f"
			" WHERE f.fts @@ websearch_to_tsquery('simple', ?1) AND"
			VISIBLE " ORDER BY 11, f.id DESC LIMIT ?6"),
		    HD_TEXT(r->match), HD_TEXT(q->team), HD_TEXT(q->agent),
		    HD_INT(r->now), HD_TEXT(q->tag), HD_INT(r->limit));
	else
		rc = hd_store_query(st, &s, err,
		    "SELECT " FACT_COLS " FROM memory_facts f"
		    " WHERE ?1 IS NULL AND" VISIBLE
		    " ORDER BY f.id DESC LIMIT ?6",
		    HD_NULL, HD_TEXT(q->team), HD_TEXT(q->agent),
		    HD_INT(r->now), HD_TEXT(q->tag), HD_INT(r->limit));
	if (rc < 0)
		return rc;
	hd_facts_dispose(r->out); /* a busy retry starts over */
	if ((rc = hd_store_rows(st, s, sizeof(hd_fact), fact_fill,
		 fact_dispose, &with_rank, &items, &r->out->n, err)) < 0)
		return rc;
	r->out->items = items;
	return 0;
}

static int
memory_read(hd_facts *out, hd_store *st, const hd_memory_query *q,
    const char *match, hd_err *err)
{
	struct read r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.q = q;
	r.match = match;
	r.out = out;
	r.now = q->now > 0 ? q->now : hd_now_ms();
	r.limit = q->limit > 0 ? q->limit : HD_MEMORY_LIMIT_DEFAULT;
	if (q->limit < 0 || q->limit > HD_MEMORY_LIMIT_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "limit must be between 1 and %d", HD_MEMORY_LIMIT_MAX);
	if (q->tag != NULL && !hd_slug_ok(q->tag))
		return hd_err_set(err, HD_EINVAL,
		    "invalid tag \"%.64s\": use 1-50 lowercase letters, "
		    "digits, '-' or '_'",
		    q->tag);
	if ((rc = hd_store_read(st, read_txn, &r, err)) < 0)
		hd_facts_dispose(out); /* a failed read keeps nothing */
	return rc;
}

int
hd_memory_search(
    hd_facts *out, hd_store *st, const hd_memory_query *q, hd_err *err)
{
	char *match = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (q->text == NULL)
		return hd_err_set(err, HD_EINVAL, "query is required");
	if ((rc = hd_memory_fts_query(&match, q->text, err)) < 0)
		return rc;
	rc = memory_read(out, st, q, match, err);
	free(match);
	return rc;
}

int
hd_memory_list(
    hd_facts *out, hd_store *st, const hd_memory_query *q, hd_err *err)
{
	memset(out, 0, sizeof(*out));
	return memory_read(out, st, q, NULL, err);
}

/* ---- forget ----------------------------------------------------------- */

struct forget {
	const char *team, *agent;
	int64_t id;
};

static int
forget_txn(hd_store *st, void *payload, hd_err *err)
{
	struct forget *f = payload;
	int rc;

	if ((rc = check_reader(st, f->team, f->agent, err)) < 0)
		return rc;
	/* (4) saved here, and the caller's own when private */
	if ((rc = hd_store_run(st, err,
		 "DELETE FROM memory_facts WHERE id = ?1 AND team_id = ?2"
		 " AND (scope != 'agent' OR agent_id = ?3)",
		 HD_INT(f->id), HD_TEXT(f->team), HD_TEXT(f->agent))) < 0)
		return rc;
	if (hd_store_changes(st) == 0)
		return hd_err_set(err, HD_ENOTFOUND, "no fact %lld in team %s",
		    (long long)f->id, f->team);
	return 0;
}

int
hd_memory_forget(hd_store *st, const char *team, const char *agent,
    int64_t id, hd_err *err)
{
	struct forget f = {team, agent, id};

	if (id <= 0)
		return hd_err_set(
		    err, HD_EINVAL, "fact id must be a positive integer");
	return hd_store_write(st, forget_txn, &f, err);
}

/* ---- JSON and team removal -------------------------------------------- */

json_t *
hd_fact_to_json(const hd_fact *f, int with_rank)
{
	json_t *tags = json_array(), *o;
	size_t i;

	for (i = 0; i < f->ntags; i++)
		json_array_append_new(tags, json_string(f->tags[i]));
	o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:{s:s, s:o}, s:I, s:o}",
	    "id", (json_int_t)f->id, "text", f->text, "scope", f->scope,
	    "team", f->team_id, "agent",
	    f->agent_id != NULL ? json_string(f->agent_id) : json_null(),
	    "tags", tags, "source", "agent", f->source_agent, "task",
	    f->source_task > 0 ? json_integer(f->source_task) : json_null(),
	    "created_at", (json_int_t)f->created_at, "expires_at",
	    f->expires_at > 0 ? json_integer(f->expires_at) : json_null());
	if (o != NULL && with_rank)
		json_object_set_new(o, "rank", json_real(f->rank));
	return o;
}

int
hd_memory_team_count(int64_t *n, hd_store *st, const char *team, hd_err *err)
{
	int rc = hd_store_get_int(st, n, err,
	    "SELECT COUNT(*) FROM memory_facts INDEXED BY memory_facts_team"
	    " WHERE team_id = ?1",
	    HD_TEXT(team));

	return rc < 0 ? rc : 0;
}

int
hd_memory_team_purge(hd_store *st, const char *team, hd_err *err)
{
	return hd_store_run(st, err,
	    "DELETE FROM memory_facts WHERE team_id = ?1", HD_TEXT(team));
}
