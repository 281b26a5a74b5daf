/*
 * pg.c -- the store on PostgreSQL (libpq): the connection, the SQL
 * translator, the statement interface of store.h and the transactions
 * store.c runs. Selected by HUDDLE_STORE=postgres://... (hd_pg_selected).
 *
 * Invariants:
 *  (1) One backend per process (hd_store__backend): stmt.c's calls test
 *      that one process-wide value with __builtin_expect before their
 *      SQLite call, so SQLite's statement path keeps one predicted branch
 *      and no indirect call; opening the other kind after the first store
 *      is refused with a clear error.
 *  (2) Modules keep one SQL text for both backends. Each statement is
 *      translated once per connection (hd_pg_translate in pg_sql.c,
 *      table-driven) and prepared under its own name (PQprepare); the
 *      cache is keyed by the SQL pointer as SQLite's. After a reconnect the connection's
 *      generation moves on and each statement is prepared again on its
 *      next step.
 *  (3) Parameters go as text (integers formatted, text as is) or binary
 *      (blobs, as bytea); results come back as text: hd_pg_int maps the
 *      booleans 't'/'f' to 1/0, hd_pg_blob unescapes bytea.
 *  (4) INSERTs into a table with a generated key get ` RETURNING key`
 *      (the map is read from information_schema at open), so last_id
 *      costs no extra round trip; hd_pg_changes is PQcmdTuples of the last
 *      INSERT, UPDATE or DELETE.
 *  (5) Writers are serialized across connections and nodes exactly as
 *      SQLite's one writer: BEGIN and pg_advisory_xact_lock(HD_PG_WRITE_KEY)
 *      in one round trip, waiting at most the busy budget (lock_timeout).
 *      The commit bumps huddle_data_version, NOTIFYs huddle_change with
 *      this connection's backend pid and COMMITs in one round trip. A
 *      write outside any transaction (autocommit) announces itself after
 *      it, so a follower still wakes.
 *  (6) A lost connection is "database unreachable: HOST: libpq's message"
 *      (HD_EBUSY: hd_store_write reconnects and retries within the busy
 *      budget), except a COMMIT whose answer never came: its outcome is
 *      unknown, so it is an error (HD_ERR) and never retried.
 *  (7) Migrations run under a session advisory lock (HD_PG_MIGRATE_KEY),
 *      each in its own transaction with huddle_schema's version, so two
 *      nodes starting at once migrate once; a database newer than this
 *      binary is refused as on SQLite.
 *
 * Callers: store.c, stmt.c and watch.c (dispatching store.h's calls when
 * hd_store__is_pg()), watch_pg.c, tests/unit/store/test-pg.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpq-fe.h>

#include <huddle/util.h>
#include <huddle/version.h>

#include "pg.h"

#define HD_PG_WRITE_KEY 0x48756464 /* "Hudd": the writers' lock */
#define HD_PG_MIGRATE_KEY 0x4875644d
#define PG_CACHE 256
#define PG_BYTEAOID 17
#define PG_TEXTOID 25
/* hd_pg_step's answer on failure: any code but HD_ROW and HD_DONE; the
 * failure itself waits in pg->state and pg->msg for hd_pg_sqlerr. */
#define PG_FAILED 1

struct hd_pg_stmt {
	hd_pg *pg;
	char name[16];
	char *sql;        /* translated */
	unsigned gen;     /* the connection generation it was prepared on */
	int nparams;
	int returning;    /* (4): the rows are the new key, not results */
	const char **vals;
	int *lens;
	int *fmts;
	char **copies;    /* per parameter: what this statement owns */
	char (*ibuf)[24]; /* per parameter: a formatted integer */
	PGresult *res;
	int row, nrows;
	unsigned char **unesc; /* per column: hd_pg_blob's unescaped bytes */
	int nunesc;
};
typedef struct hd_pg_stmt hd_pg_stmt;

struct hd_pg {
	PGconn *conn;
	char *url;
	char *masked;
	unsigned gen; /* moves on with every (re)connect: (2) */
	int txn;      /* a transaction of ours is open */
	int pid;      /* the backend's pid, for NOTIFY's payload */
	char *commit_sql;
	unsigned nextname;
	struct {
		const char *sql;
		hd_pg_stmt *stmt;
	} cache[PG_CACHE];
	int ncache;
	char **tables, **keys; /* (4) */
	size_t nkeys;
	int64_t changes, last_id;
	char state[6]; /* SQLSTATE of the last failure ("" none) */
	char *msg;     /* its message */
	int lost;      /* the connection went away during the last call */
	hd_pg_watch *watch;
};

atomic_int hd_store__backend;

int
hd_store__backend_claim(int backend, hd_err *err)
{
	int have = HD_STORE_BACKEND_NONE;

	if (atomic_compare_exchange_strong(&hd_store__backend, &have, backend) ||
	    have == backend)
		return 0;
	return hd_err_set(err, HD_EREFUSED,
	    "this process already runs the %s store; it cannot open a %s "
	    "store too (one backend per process)",
	    have == HD_STORE_BACKEND_PG ? "PostgreSQL" : "SQLite",
	    backend == HD_STORE_BACKEND_PG ? "PostgreSQL" : "SQLite");
}

int
hd_pg_selected(const char **url, hd_err *err)
{
	const char *v = getenv("HUDDLE_STORE");

	*url = NULL;
	if (v == NULL || *v == '\0')
		return 0;
	if (strncmp(v, "postgres://", 11) != 0 &&
	    strncmp(v, "postgresql://", 13) != 0)
		return hd_err_set(err, HD_EINVAL,
		    "HUDDLE_STORE: not a postgres:// URL: %s (unset it for the "
		    "SQLite store under the home)",
		    v);
	*url = v;
	return 1;
}

/* ---- failures ---- */

static void
pg_fail(hd_pg *pg, const char *state, const char *msg)
{
	char *m = strdup(msg != NULL ? msg : "unknown error");
	size_t n;

	snprintf(pg->state, sizeof(pg->state), "%s", state);
	free(pg->msg);
	pg->msg = m;
	if (m != NULL) /* libpq ends its messages with a newline */
		for (n = strlen(m); n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' ');
		    n--)
			m[n - 1] = '\0';
}

/* A failed result (or none): remember its SQLSTATE and message. A
 * connection that is gone is "08006", whatever the result says. */
static void
pg_fail_res(hd_pg *pg, const PGresult *res)
{
	const char *state = NULL;

	if (PQstatus(pg->conn) != CONNECTION_OK) {
		pg->lost = 1;
		pg_fail(pg, "08006", PQerrorMessage(pg->conn));
		return;
	}
	if (res != NULL)
		state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	pg_fail(pg, state != NULL ? state : "XX000",
	    res != NULL && *PQresultErrorMessage(res) != '\0'
		? PQresultErrorMessage(res)
		: PQerrorMessage(pg->conn));
}

static const char *
pg_host(hd_pg *pg)
{
	const char *h = pg->conn != NULL ? PQhost(pg->conn) : NULL;

	return h != NULL && *h != '\0' ? h : pg->masked;
}

int
hd_pg_sqlerr(hd_pg *pg, int budget_ms, hd_err *err)
{
	const char *st = pg->state, *m = pg->msg != NULL ? pg->msg : "";

	if (strcmp(st, "23505") == 0)
		return hd_err_set(err, HD_EEXISTS, "%s", m);
	if (strcmp(st, "40001") == 0 || strcmp(st, "40P01") == 0 ||
	    strcmp(st, "55P03") == 0)
		return hd_err_set(err, HD_EBUSY,
		    "database is busy: gave up after %d ms", budget_ms);
	if (strcmp(st, "25006") == 0)
		return hd_err_set(
		    err, HD_EREFUSED, "database is read-only: %s", pg->masked);
	if (strncmp(st, "08", 2) == 0 || strncmp(st, "57P", 3) == 0)
		return hd_err_set(err, HD_EBUSY, "database unreachable: %s: %s",
		    pg_host(pg), m);
	if (strcmp(st, "53200") == 0)
		return hd_err_set(err, HD_ENOMEM, "out of memory: %s", m);
	return hd_err_set(err, HD_ERR, "database error: %s", m);
}

/* ---- the connection ---- */

static void
pg_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg; /* NOTICEs ("already exists, skipping") are not errors */
}

/* After every (re)connect: the pid NOTIFY names and a fresh
 * generation, so every statement is prepared again (2). */
static int
pg_connected(hd_pg *pg, hd_err *err)
{
	char buf[256];

	pg->gen++;
	pg->txn = 0;
	pg->pid = PQbackendPID(pg->conn);
	PQsetNoticeProcessor(pg->conn, pg_quiet, NULL);
	snprintf(buf, sizeof(buf),
	    "UPDATE huddle_data_version SET v = v + 1; "
	    "NOTIFY huddle_change, '%d'; COMMIT",
	    pg->pid);
	free(pg->commit_sql);
	if ((pg->commit_sql = strdup(buf)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

static int
pg_unreachable(hd_pg *pg, int code, hd_err *err)
{
	pg->lost = 1;
	pg_fail(pg, "08006", PQerrorMessage(pg->conn));
	return hd_err_set(err, code, "database unreachable: %s: %s",
	    pg_host(pg), pg->msg != NULL ? pg->msg : "");
}

/* Reconnect a connection that went away: 0, or HD_EBUSY. */
static int
pg_reconnect(hd_pg *pg, hd_err *err)
{
	if (PQstatus(pg->conn) == CONNECTION_OK)
		return 0;
	PQreset(pg->conn);
	if (PQstatus(pg->conn) != CONNECTION_OK)
		return pg_unreachable(pg, HD_EBUSY, err);
	pg->lost = 0;
	return pg_connected(pg, err);
}

int
hd_pg_exec(hd_pg *pg, const char *sql, hd_err *err)
{
	PGresult *res;
	int rc = 0;

	res = PQexec(pg->conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK) {
		pg_fail_res(pg, res);
		rc = hd_pg_sqlerr(pg, 0, err);
	}
	PQclear(res);
	return rc;
}

/* One integer answer of a query without parameters. */
static int
pg_get_int(hd_pg *pg, const char *sql, int64_t *out, hd_err *err)
{
	PGresult *res = PQexec(pg->conn, sql);
	int rc = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		pg_fail_res(pg, res);
		rc = hd_pg_sqlerr(pg, 0, err);
	} else
		*out = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return rc;
}

int
hd_pg_schema_version(hd_pg *pg, hd_err *err)
{
	int64_t v = 0;
	int rc;

	if ((rc = pg_get_int(pg, "SELECT version FROM huddle_schema", &v,
		 err)) < 0)
		return rc;
	return (int)v;
}

/* (7) Under the migration lock: the store's own tables, then every
 * migration this database lacks, each with its version in one
 * transaction. */
static int
pg_migrate(hd_pg *pg, hd_err *err)
{
	char sql[96];
	int64_t have = 0;
	int rc, v;

	snprintf(sql, sizeof(sql), "SELECT pg_advisory_lock(%d)",
	    HD_PG_MIGRATE_KEY);
	if ((rc = hd_pg_exec(pg, sql, err)) < 0)
		return rc;
	if ((rc = hd_pg_exec(pg,
		 "CREATE TABLE IF NOT EXISTS huddle_schema ("
		 "  version BIGINT NOT NULL);"
		 "INSERT INTO huddle_schema SELECT 0 WHERE NOT EXISTS"
		 "  (SELECT 1 FROM huddle_schema);"
		 "CREATE TABLE IF NOT EXISTS huddle_data_version ("
		 "  v BIGINT NOT NULL);"
		 "INSERT INTO huddle_data_version SELECT 0 WHERE NOT EXISTS"
		 "  (SELECT 1 FROM huddle_data_version)",
		 err)) < 0)
		goto done;
	if ((rc = pg_get_int(pg, "SELECT version FROM huddle_schema", &have,
		 err)) < 0)
		goto done;
	if (have > hd_store_pg_nmigrations) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "%s has schema version %d but this huddle (%s) knows only "
		    "up to %d; upgrade huddle",
		    pg->masked, (int)have, hd_version(),
		    hd_store_pg_nmigrations);
		goto done;
	}
	for (v = (int)have + 1; v <= hd_store_pg_nmigrations; v++) {
		if ((rc = hd_pg_exec(pg, "BEGIN", err)) < 0)
			goto done;
		snprintf(sql, sizeof(sql),
		    "UPDATE huddle_schema SET version = %d", v);
		if ((rc = hd_pg_exec(pg, hd_store_pg_migrations[v - 1], err)) <
			0 ||
		    (rc = hd_pg_exec(pg, sql, err)) < 0 ||
		    (rc = hd_pg_exec(pg, "COMMIT", err)) < 0) {
			hd_err tmp = HD_ERR_INIT;

			hd_pg_exec(pg, "ROLLBACK", &tmp);
			if (err != NULL)
				hd_err_set(err, err->code,
				    "migration %d of %s failed: %s", v,
				    pg->masked, err->msg);
			goto done;
		}
	}
done:
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%d)",
	    HD_PG_MIGRATE_KEY);
	{
		hd_err tmp = HD_ERR_INIT;

		hd_pg_exec(pg, sql, &tmp);
	}
	return rc;
}

/* (4) Which tables have a generated key, and its column. */
static int
pg_load_keys(hd_pg *pg, hd_err *err)
{
	PGresult *res;
	int i, n, rc = 0;

	res = PQexec(pg->conn,
	    "SELECT table_name, column_name FROM information_schema.columns"
	    " WHERE table_schema = current_schema() AND (is_identity = 'YES'"
	    " OR column_default LIKE 'nextval(%')");
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		pg_fail_res(pg, res);
		rc = hd_pg_sqlerr(pg, 0, err);
		goto done;
	}
	n = PQntuples(res);
	pg->tables = calloc((size_t)n + 1, sizeof(char *));
	pg->keys = calloc((size_t)n + 1, sizeof(char *));
	if (pg->tables == NULL || pg->keys == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < n; i++) {
		pg->tables[i] = strdup(PQgetvalue(res, i, 0));
		pg->keys[i] = strdup(PQgetvalue(res, i, 1));
		pg->nkeys++;
		if (pg->tables[i] == NULL || pg->keys[i] == NULL) {
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
			goto done;
		}
	}
done:
	PQclear(res);
	return rc;
}

int
hd_pg_open(hd_pg **out, const char *url, hd_err *err)
{
	hd_pg *pg;
	int rc;

	*out = NULL;
	if ((pg = calloc(1, sizeof(*pg))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	if ((pg->url = strdup(url)) == NULL ||
	    (pg->masked = hd_store_mask_url(url)) == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto fail;
	}
	pg->conn = PQconnectdb(url);
	if (pg->conn == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto fail;
	}
	if (PQstatus(pg->conn) != CONNECTION_OK) {
		rc = pg_unreachable(pg, HD_ERR, err);
		goto fail;
	}
	if ((rc = pg_connected(pg, err)) < 0 ||
	    (rc = hd_pg_exec(pg, "SET client_min_messages = warning", err)) <
		0 ||
	    (rc = pg_migrate(pg, err)) < 0 || (rc = pg_load_keys(pg, err)) < 0)
		goto fail;
	*out = pg;
	return 0;
fail:
	hd_pg_close(pg);
	return rc;
}

static void
stmt_clear_result(hd_pg_stmt *s)
{
	int i;

	PQclear(s->res);
	s->res = NULL;
	s->row = -1;
	s->nrows = 0;
	for (i = 0; i < s->nunesc; i++) {
		PQfreemem(s->unesc[i]);
		s->unesc[i] = NULL;
	}
}

static void
stmt_free(hd_pg_stmt *s)
{
	int i;

	if (s == NULL)
		return;
	stmt_clear_result(s);
	for (i = 0; i < s->nparams; i++)
		free(s->copies[i]);
	free(s->unesc);
	free(s->copies);
	free(s->ibuf);
	free(s->vals);
	free(s->lens);
	free(s->fmts);
	free(s->sql);
	free(s);
}

void
hd_pg_close(hd_pg *pg)
{
	size_t i;
	int j;

	if (pg == NULL)
		return;
	hd_pg__watch_free(pg->watch);
	for (j = 0; j < pg->ncache; j++)
		stmt_free(pg->cache[j].stmt);
	if (pg->conn != NULL)
		PQfinish(pg->conn);
	for (i = 0; i < pg->nkeys; i++) {
		free(pg->tables[i]);
		free(pg->keys[i]);
	}
	free(pg->tables);
	free(pg->keys);
	free(pg->commit_sql);
	free(pg->msg);
	free(pg->url);
	free(pg->masked);
	free(pg);
}

const char *
hd_pg__url(hd_pg *pg)
{
	return pg->url;
}

hd_pg_watch **
hd_pg__watch_slot(hd_pg *pg)
{
	return &pg->watch;
}

int
hd_pg__own_pid(hd_pg *pg)
{
	return pg->pid;
}

/* ---- statements ---- */

static void
stmt_unbind(hd_pg_stmt *s)
{
	int i;

	for (i = 0; i < s->nparams; i++) {
		free(s->copies[i]);
		s->copies[i] = NULL;
		s->vals[i] = NULL;
		s->lens[i] = 0;
		s->fmts[i] = 0;
	}
}

static hd_pg_stmt *
stmt_new(hd_pg *pg, const char *sql)
{
	hd_pg_stmt *s = calloc(1, sizeof(*s));
	size_t np;

	if (s == NULL)
		return NULL;
	s->pg = pg;
	s->row = -1;
	s->sql = hd_pg_translate(sql, (const char *const *)pg->tables,
	    (const char *const *)pg->keys, pg->nkeys, &s->nparams,
	    &s->returning);
	np = s->nparams > 0 ? (size_t)s->nparams : 1;
	s->vals = calloc(np, sizeof(*s->vals));
	s->lens = calloc(np, sizeof(*s->lens));
	s->fmts = calloc(np, sizeof(*s->fmts));
	s->copies = calloc(np, sizeof(*s->copies));
	s->ibuf = calloc(np, sizeof(*s->ibuf));
	if (s->sql == NULL || s->vals == NULL || s->lens == NULL ||
	    s->fmts == NULL || s->copies == NULL || s->ibuf == NULL) {
		stmt_free(s);
		return NULL;
	}
	snprintf(s->name, sizeof(s->name), "hd%u", pg->nextname++);
	return s;
}

/* The parameter PostgreSQL could not type (42P18 indeterminate or
 * 42P08 ambiguous, "could not determine data type of parameter $N"): N,
 * or 0. */
static int
untyped_param(const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	if (state == NULL ||
	    (strcmp(state, "42P18") != 0 && strcmp(state, "42P08") != 0) ||
	    m == NULL ||
	    (m = strstr(m, "parameter $")) == NULL)
		return 0;
	return atoi(m + 11);
}

/*
 * Prepare s on the current connection (once per generation: (2)). A
 * parameter nothing in the statement types (`?3 IS NULL` alone) is
 * declared text and the statement prepared again: SQLite binds any
 * value there, and text is what a value with no context is. A failed
 * prepare aborts an open transaction, so inside one the tries run under
 * a savepoint (a statement is prepared once per connection: rare).
 */
static int
stmt_prepare(hd_pg_stmt *s)
{
	hd_pg *pg = s->pg;
	PGresult *res;
	Oid *types = NULL;
	int k, sp = PQtransactionStatus(pg->conn) == PQTRANS_INTRANS;

	if (sp)
		PQclear(PQexec(pg->conn, "SAVEPOINT hd_prepare"));
	for (;;) {
		res = PQprepare(pg->conn, s->name, s->sql, types != NULL
		    ? s->nparams : 0, types);
		if (PQresultStatus(res) == PGRES_COMMAND_OK)
			break;
		if (sp)
			PQclear(PQexec(
			    pg->conn, "ROLLBACK TO SAVEPOINT hd_prepare"));
		k = untyped_param(res);
		if (k < 1 || k > s->nparams ||
		    (types == NULL &&
			(types = calloc((size_t)s->nparams, sizeof(Oid))) ==
			    NULL) ||
		    types[k - 1] != 0) {
			pg_fail_res(pg, res);
			PQclear(res);
			free(types);
			if (sp)
				PQclear(PQexec(
				    pg->conn, "RELEASE SAVEPOINT hd_prepare"));
			return -1;
		}
		types[k - 1] = PG_TEXTOID;
		PQclear(res);
	}
	PQclear(res);
	free(types);
	if (sp)
		PQclear(PQexec(pg->conn, "RELEASE SAVEPOINT hd_prepare"));
	s->gen = pg->gen;
	return 0;
}

int
hd_pg_prepare(hd_pg *pg, hd_stmt **out, const char *sql, hd_err *err)
{
	hd_pg_stmt *s;
	char dealloc[32];
	int i, rc;

	for (i = 0; i < pg->ncache; i++)
		if (pg->cache[i].sql == sql)
			goto found;
	for (i = 0; i < pg->ncache; i++)
		if (strcmp(pg->cache[i].sql, sql) == 0)
			goto found;
	/* a new statement is prepared at once: outside a transaction a
	 * lost connection is taken up again first, as hd_pg_step does (6) */
	if (!pg->txn && PQstatus(pg->conn) != CONNECTION_OK &&
	    (rc = pg_reconnect(pg, err)) < 0)
		return rc;
	if ((s = stmt_new(pg, sql)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	if (stmt_prepare(s) < 0) {
		stmt_free(s);
		return hd_pg_sqlerr(pg, 0, err);
	}
	if (pg->ncache == PG_CACHE) {
		/* full: evict the oldest; statements are cheap to redo */
		snprintf(dealloc, sizeof(dealloc), "DEALLOCATE %s",
		    pg->cache[0].stmt->name);
		PQclear(PQexec(pg->conn, dealloc));
		stmt_free(pg->cache[0].stmt);
		memmove(&pg->cache[0], &pg->cache[1],
		    sizeof(pg->cache[0]) * (PG_CACHE - 1));
		pg->ncache--;
	}
	pg->cache[pg->ncache].sql = sql;
	pg->cache[pg->ncache].stmt = s;
	i = pg->ncache++;
found:
	s = pg->cache[i].stmt;
	stmt_clear_result(s);
	stmt_unbind(s);
	*out = (hd_stmt *)(void *)s;
	return 0;
}

static hd_pg_stmt *
pgs(hd_stmt *s)
{
	return (hd_pg_stmt *)(void *)s;
}

void
hd_pg_reset(hd_stmt *stmt)
{
	stmt_clear_result(pgs(stmt));
}

void
hd_pg_reset_all(hd_pg *pg)
{
	int i;

	for (i = 0; i < pg->ncache; i++)
		if (pg->cache[i].stmt->res != NULL)
			stmt_clear_result(pg->cache[i].stmt);
}

/* A parameter past the statement's own is ignored, as SQLite ignores
 * it with SQLITE_RANGE (nobody checks bind's answer). */
static int
bind_slot(hd_pg_stmt *s, int idx)
{
	if (idx < 1 || idx > s->nparams)
		return -1;
	free(s->copies[idx - 1]);
	s->copies[idx - 1] = NULL;
	return idx - 1;
}

void
hd_pg_bind_text(hd_stmt *stmt, int idx, const char *v, int n, int copy)
{
	hd_pg_stmt *s = pgs(stmt);
	int i = bind_slot(s, idx);

	if (i < 0)
		return;
	s->fmts[i] = 0;
	s->lens[i] = 0;
	if (v == NULL) {
		s->vals[i] = NULL;
		return;
	}
	/* text goes NUL-terminated: a length-bounded one is copied */
	if (copy || n >= 0) {
		size_t len = n >= 0 ? (size_t)n : strlen(v);

		if ((s->copies[i] = malloc(len + 1)) == NULL) {
			s->vals[i] = NULL; /* out of memory binds NULL */
			return;
		}
		memcpy(s->copies[i], v, len);
		s->copies[i][len] = '\0';
		v = s->copies[i];
	}
	s->vals[i] = v;
}

void
hd_pg_bind_int(hd_stmt *stmt, int idx, int64_t v)
{
	hd_pg_stmt *s = pgs(stmt);
	int i = bind_slot(s, idx);

	if (i < 0)
		return;
	snprintf(s->ibuf[i], sizeof(s->ibuf[i]), "%lld", (long long)v);
	s->vals[i] = s->ibuf[i];
	s->fmts[i] = 0;
}

void
hd_pg_bind_null(hd_stmt *stmt, int idx)
{
	hd_pg_stmt *s = pgs(stmt);
	int i = bind_slot(s, idx);

	if (i >= 0)
		s->vals[i] = NULL;
}

void
hd_pg_bind_blob(hd_stmt *stmt, int idx, const void *p, size_t n)
{
	hd_pg_stmt *s = pgs(stmt);
	int i = bind_slot(s, idx);

	if (i < 0)
		return;
	/* binary: a bytea's bytes as they are, NULs included; an empty
	 * blob still needs a non-NULL pointer to stay non-NULL */
	s->vals[i] = p != NULL ? (n > 0 ? p : "") : NULL;
	s->lens[i] = (int)n;
	s->fmts[i] = 1;
}

/* (5) A write outside any transaction announces itself after the fact. */
static void
pg_announce(hd_pg *pg)
{
	char sql[128];

	snprintf(sql, sizeof(sql),
	    "UPDATE huddle_data_version SET v = v + 1; "
	    "NOTIFY huddle_change, '%d'",
	    pg->pid);
	PQclear(PQexec(pg->conn, sql));
}

int
hd_pg_step(hd_stmt *stmt)
{
	hd_pg_stmt *s = pgs(stmt);
	hd_pg *pg = s->pg;
	ExecStatusType st;
	const char *cmd;

	if (s->res == NULL) {
		/* outside a transaction a lost connection is taken up again
		 * at once; inside one, the transaction is gone: (6) */
		if (!pg->txn && PQstatus(pg->conn) != CONNECTION_OK &&
		    pg_reconnect(pg, NULL) < 0)
			return PG_FAILED;
		if (s->gen != pg->gen && stmt_prepare(s) < 0)
			return PG_FAILED;
		s->res = PQexecPrepared(pg->conn, s->name, s->nparams,
		    s->vals, s->lens, s->fmts, 0);
		st = PQresultStatus(s->res);
		if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
			pg_fail_res(pg, s->res);
			PQclear(s->res);
			s->res = NULL;
			return PG_FAILED;
		}
		s->nrows = PQntuples(s->res);
		s->row = -1;
		cmd = PQcmdStatus(s->res);
		if (strncmp(cmd, "INSERT", 6) == 0 ||
		    strncmp(cmd, "UPDATE", 6) == 0 ||
		    strncmp(cmd, "DELETE", 6) == 0) {
			pg->changes = strtoll(PQcmdTuples(s->res), NULL, 10);
			if (!pg->txn && pg->changes > 0)
				pg_announce(pg);
		}
		if (s->returning) { /* (4) */
			if (s->nrows > 0)
				pg->last_id = strtoll(
				    PQgetvalue(s->res, 0, 0), NULL, 10);
			s->nrows = 0;
		}
		if (s->nunesc < PQnfields(s->res)) {
			unsigned char **u = realloc(s->unesc,
			    sizeof(*u) * (size_t)PQnfields(s->res));

			if (u != NULL) {
				memset(u + s->nunesc, 0,
				    sizeof(*u) *
					(size_t)(PQnfields(s->res) - s->nunesc));
				s->unesc = u;
				s->nunesc = PQnfields(s->res);
			}
		}
	}
	if (s->row + 1 < s->nrows) {
		s->row++;
		return HD_ROW;
	}
	s->row = s->nrows;
	return HD_DONE;
}

static const char *
cell(hd_pg_stmt *s, int col)
{
	if (s->res == NULL || s->row < 0 || s->row >= s->nrows || col < 0 ||
	    col >= PQnfields(s->res) || PQgetisnull(s->res, s->row, col))
		return NULL;
	return PQgetvalue(s->res, s->row, col);
}

int64_t
hd_pg_int(hd_stmt *stmt, int col)
{
	const char *v = cell(pgs(stmt), col);

	if (v == NULL)
		return 0;
	if (v[0] == 't' && v[1] == '\0')
		return 1;
	if (v[0] == 'f' && v[1] == '\0')
		return 0;
	if (strchr(v, '.') != NULL || strchr(v, 'e') != NULL)
		return (int64_t)strtod(v, NULL); /* a numeric: SQLite truncates */
	return (int64_t)strtoll(v, NULL, 10);
}

double
hd_pg_double(hd_stmt *stmt, int col)
{
	const char *v = cell(pgs(stmt), col);

	return v != NULL ? strtod(v, NULL) : 0.0;
}

const char *
hd_pg_text(hd_stmt *stmt, int col)
{
	return cell(pgs(stmt), col);
}

const void *
hd_pg_blob(hd_stmt *stmt, int col, size_t *len)
{
	hd_pg_stmt *s = pgs(stmt);
	const char *v = cell(s, col);

	*len = 0;
	if (v == NULL)
		return NULL;
	if (PQftype(s->res, col) != PG_BYTEAOID) {
		*len = (size_t)PQgetlength(s->res, s->row, col);
		return v;
	}
	if (col >= s->nunesc)
		return NULL;
	PQfreemem(s->unesc[col]);
	s->unesc[col] = PQunescapeBytea((const unsigned char *)v, len);
	return s->unesc[col];
}

int
hd_pg_is_null(hd_stmt *stmt, int col)
{
	return cell(pgs(stmt), col) == NULL;
}

int64_t
hd_pg_changes(hd_pg *pg)
{
	return pg->changes;
}

int64_t
hd_pg_last_id(hd_pg *pg)
{
	return pg->last_id;
}

/* ---- transactions ---- */

int
hd_pg_begin(hd_pg *pg, int write, int lock_ms, int budget_ms, hd_err *err)
{
	char sql[160];
	PGresult *res;
	int rc = 0;

	if ((rc = pg_reconnect(pg, err)) < 0)
		return rc;
	if (write)
		snprintf(sql, sizeof(sql),
		    "BEGIN; SET LOCAL lock_timeout = %d; "
		    "SELECT pg_advisory_xact_lock(%d)",
		    lock_ms > 0 ? lock_ms : 1, HD_PG_WRITE_KEY);
	else
		snprintf(sql, sizeof(sql),
		    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
	res = PQexec(pg->conn, sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK &&
	    PQresultStatus(res) != PGRES_COMMAND_OK) {
		pg_fail_res(pg, res);
		PQclear(res);
		rc = hd_pg_sqlerr(pg, budget_ms, err);
		if (PQstatus(pg->conn) == CONNECTION_OK &&
		    PQtransactionStatus(pg->conn) != PQTRANS_IDLE)
			PQclear(PQexec(pg->conn, "ROLLBACK"));
		return rc;
	}
	PQclear(res);
	pg->txn = 1;
	return 0;
}

int
hd_pg_commit(hd_pg *pg, int write, hd_err *err)
{
	PGresult *res;
	int rc = 0;

	res = PQexec(pg->conn, write ? pg->commit_sql : "COMMIT");
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		pg_fail_res(pg, res);
		if (pg->lost) /* (6): the outcome is unknown, never retry */
			rc = hd_err_set(err, HD_ERR,
			    "database unreachable: %s: %s; the outcome of the "
			    "last commit is unknown",
			    pg_host(pg), pg->msg != NULL ? pg->msg : "");
		else
			rc = hd_pg_sqlerr(pg, 0, err);
	} else if (strcmp(PQcmdStatus(res), "ROLLBACK") == 0) {
		/* COMMIT of a transaction a failed statement aborted */
		pg_fail(pg, "25P02", "the transaction was rolled back");
		rc = hd_pg_sqlerr(pg, 0, err);
	}
	PQclear(res);
	if (rc == 0 || PQtransactionStatus(pg->conn) == PQTRANS_IDLE)
		pg->txn = 0;
	return rc;
}

void
hd_pg_rollback(hd_pg *pg)
{
	if (PQstatus(pg->conn) == CONNECTION_OK &&
	    PQtransactionStatus(pg->conn) != PQTRANS_IDLE)
		PQclear(PQexec(pg->conn, "ROLLBACK"));
	pg->txn = 0;
}

int
hd_pg_data_version(hd_pg *pg, uint32_t *out)
{
	hd_stmt *s;
	int src;

	if (hd_pg_prepare(pg, &s, "SELECT v FROM huddle_data_version", NULL) <
	    0)
		return -1;
	src = hd_pg_step(s);
	if (src == HD_ROW)
		*out = (uint32_t)hd_pg_int(s, 0);
	hd_pg_reset(s);
	return src == HD_ROW ? 0 : -1;
}
