/*
 * memory.h -- team memory: short facts agents and the user save and
 * search (docs/memory.md is the contract).
 *
 * A fact is a text, a scope and tags, saved in a team by an agent or
 * the user:
 *   - scope "team": read by every member of its team (and the user);
 *   - scope "global": read from every team;
 *   - scope "agent": read only by the agent that saved it, in its team.
 * A read (search, list) as agent A in team T sees T's team facts, every
 * global fact and A's own agent facts -- never another team's team or
 * agent facts, never another agent's private ones. The user (agent NULL)
 * sees T's team facts and the global ones.
 *
 * Search is SQLite FTS5 over the text and the tags, ranked by bm25 (best
 * first); the index is kept by the same transaction as the fact. The
 * query is the user's words, never FTS5 syntax: quotes, parentheses,
 * NEAR, AND, OR, * and column filters are plain words (hd_memory_fts_query).
 * A fact whose expires_at has passed is never returned.
 *
 * A text that looks like a secret (an API key's shape, a PEM private
 * key, a bearer token) is refused before anything is written, with an
 * error naming the pattern and never the text (hd_memory_secret).
 */
#ifndef HUDDLE_MEMORY_H
#define HUDDLE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_MEMORY_TEXT_MAX 4000 /* code points of a fact */
#define HD_MEMORY_TAGS_MAX 16	/* tags of a fact */
#define HD_MEMORY_LIMIT_DEFAULT 10
#define HD_MEMORY_LIMIT_MAX 200
#define HD_MEMORY_TERMS_MAX 32 /* words of a query used (the first) */
#define HD_MEMORY_USER "user"  /* source of a fact the user saved */

typedef struct hd_fact {
	int64_t id;
	char *team_id;	/* the team it was saved in */
	char *scope;	/* team | global | agent */
	char *agent_id; /* scope agent: whose it is; else NULL */
	char *text;
	char **tags; /* ntags of them, lowercase slugs, in the saved order */
	size_t ntags;
	char *source_agent;  /* who saved it: an agent id, or "user" */
	int64_t source_task; /* the task it came from, or 0 */
	int64_t created_at;  /* ms */
	int64_t expires_at;  /* ms, or 0: never */
	double rank;	     /* search: bm25, lower is better; list: 0 */
} hd_fact;

typedef struct hd_facts {
	hd_fact *items;
	size_t n;
} hd_facts;

typedef struct hd_fact_spec {
	const char *team;
	const char *agent; /* the saver; NULL: the user */
	const char *text;
	const char *scope; /* NULL: "team" */
	const char *const *tags;
	size_t ntags;
	int64_t task;	    /* the source task, or 0 */
	int64_t expires_at; /* ms, or 0: never */
} hd_fact_spec;

/*
 * Save a fact. Checks, before anything is written: the team exists, the
 * agent (when given) is a member (`no member "x" in team t`), the text
 * (1..HD_MEMORY_TEXT_MAX code points, valid UTF-8, not blank), no secret
 * in it (`the text looks like <pattern>; memory never stores secrets`,
 * HD_EREFUSED), the scope (`scope must be team, global or agent`; agent
 * needs an agent: `scope agent needs an acting agent`), each tag (a
 * slug, at most HD_MEMORY_TAGS_MAX), the task (in the team), expires_at
 * (in the future). *out (when non-NULL): the fact, hd_fact_free it.
 */
int hd_memory_save(
    hd_fact **out, hd_store *st, const hd_fact_spec *spec, hd_err *err);

typedef struct hd_memory_query {
	const char *team;
	const char *agent; /* the reader; NULL: the user */
	const char *text;  /* search: the words; list: unused */
	const char *tag;   /* only facts with this tag, or NULL */
	int limit;	   /* 0: HD_MEMORY_LIMIT_DEFAULT; at most _MAX */
	int64_t now;	   /* 0: the clock (tests pass their own) */
} hd_memory_query;

/* The facts q's reader may see matching q->text, best first (bm25), at
 * most limit. `the query has no words to search for` (HD_EINVAL) when
 * q->text holds no word. Dispose with hd_facts_dispose. */
int hd_memory_search(
    hd_facts *out, hd_store *st, const hd_memory_query *q, hd_err *err);

/* The facts q's reader may see, newest first, at most limit. */
int hd_memory_list(
    hd_facts *out, hd_store *st, const hd_memory_query *q, hd_err *err);

/*
 * Forget fact id as agent (NULL: the user) in team. Only a fact the
 * reader sees, saved in this team (a global fact is forgotten from the
 * team that saved it): else `no fact N in team t` (HD_ENOTFOUND), the
 * same answer whether it does not exist or is someone else's.
 */
int hd_memory_forget(hd_store *st, const char *team, const char *agent,
    int64_t id, hd_err *err);

/* The pattern text looks like a secret of ("an Anthropic API key
 * (sk-ant-...)"), or NULL. Pure. */
const char *hd_memory_secret(const char *text);

/* The FTS5 query for the user's words in text: each word (a run of
 * letters and digits) quoted, the first HD_MEMORY_TERMS_MAX distinct
 * ones joined by OR. *out malloc'd; HD_EINVAL when there is no word. */
int hd_memory_fts_query(char **out, const char *text, hd_err *err);

/* An expiry: a duration from now ("90s", "30m", "12h", "7d", "2w") or a
 * UTC time ("2027-01-31", "2027-01-31T12:00:00Z") into *out (ms).
 * `expires must be a duration like 7d or a UTC time like
 * 2027-01-31T12:00:00Z, not "x"` (HD_EINVAL). */
int hd_memory_parse_expires(
    int64_t *out, const char *s, int64_t now, hd_err *err);

/* {id, text, scope, team, agent, tags, source: {agent, task},
 * created_at, expires_at} (+ rank for a search hit when with_rank). */
json_t *hd_fact_to_json(const hd_fact *f, int with_rank);

void hd_fact_free(hd_fact *f);
void hd_facts_dispose(hd_facts *l);

/* Team removal (src/lifecycle/remove.c): the facts saved in team, its
 * global ones too, counted and deleted. */
int hd_memory_team_count(
    int64_t *n, hd_store *st, const char *team, hd_err *err);
int hd_memory_team_purge(hd_store *st, const char *team, hd_err *err);

#endif
