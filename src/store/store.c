/*
 * store.c -- the connection to HUDDLE_HOME/huddle.db.
 *
 * Many processes open the database at once (the server, CLI calls, stdio MCP
 * servers), so every rule here holds across processes:
 *  (1) Every connection runs in WAL mode with foreign keys on and
 *      synchronous=NORMAL: a committed write survives kill -9 of any
 *      process (the WAL frame is in the OS before COMMIT returns).
 *  (2) Every read-modify-write runs in BEGIN IMMEDIATE via hd_store_write,
 *      so the write lock is taken before anything is read.
 *  (3) SQLITE_BUSY is retried by our busy handler with jittered exponential
 *      backoff (50 us doubling to 5 ms) under a wall-clock budget, default
 *      2000 ms, measured from the start of the operation; past the budget
 *      the caller gets HD_EBUSY. Jitter keeps many waiting processes from
 *      waking in lock step.
 *  (4) Migrations run at open, each in its own BEGIN IMMEDIATE, and re-read
 *      user_version inside the transaction so two processes opening a fresh
 *      home at once apply each migration exactly once.
 *  (5) Writers also queue on a process-shared mutex (queue.c) around
 *      BEGIN IMMEDIATE ... COMMIT, so a waiting writer is handed the lock
 *      when it is released instead of sleeping through the gap.
 *  (6) Stores open on the "huddle" VFS (vfs.c): SQLite's unix VFS, with a
 *      commit's WAL frames written in one system call.
 *  (7) WAL checkpoints run on the store's worker thread (worker.c), not
 *      inside the commit that crosses the threshold.
 *  (8) Damaged or protected storage is named, never papered over. A 0-byte
 *      or non-SQLite huddle.db is refused, never replaced: a new store is
 *      built under a private name and linked into place (store_create), so
 *      a 0-byte huddle.db is never one being born. An existing file's mode
 *      is never changed. A file we may not write opens read-only and every
 *      write is refused ("database is read-only: PATH"). Storage errors
 *      name the path and the errno ("database or disk is full: PATH
 *      (ENOSPC)"), SQLITE_CORRUPT says "database is damaged".
 *  (9) PRAGMA quick_check does not run on every open: it reads every page,
 *      so on a large store it costs many times what a whole command does
 *      (bench-store measures both). `huddle serve` runs
 *      it once at startup (cmd-serve.c) and refuses a damaged store;
 *      `huddle restore` runs it on the backup. In between, a damaged page
 *      fails the statement that reads it with "database is damaged".
 * (10) A write that must not commit without another is tied to it with
 *      hd_store_fail_txn: the transaction is rolled back and its caller
 *      gets that error even where a caller in between ignored it (an
 *      event, which exists exactly when the change it describes does).
 *      A savepoint rolled back forgets the failures marked inside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/util.h>
#include <huddle/version.h>

#include "pg.h"
#include "sqlite.h"

#define STMT_CACHE 96

struct hd_store {
	sqlite3 *db;
	hd_pg *pg; /* the PostgreSQL backend (pg.c), or NULL: SQLite */
	char *home;
	char *path;
	int busy_budget_ms;
	int64_t
	    deadline_us; /* op-wide deadline while in hd_store_write, or 0 */
	int64_t wait_start_us;
	int txn_depth;
	int readonly; /* opened read-only: the file or its mount */
	hd_store_watch *watch;   /* watch.c; NULL until the first wait */
	hd_store_queue *queue;   /* queue.c; NULL: writers do without */
	hd_store_worker *worker; /* worker.c; NULL: inline checkpoints */
	hd_store_memo *memo;     /* memo.c; NULL until the first put */
	struct {
		const char *sql;
		sqlite3_stmt *stmt;
	} cache[STMT_CACHE];
	int ncache;
	/* hd_store_fail_txn: the failure that refuses the open write (code
	 * 0: none), and at each open savepoint the failure it started with,
	 * which a rollback to it restores (see hd_store_savepoint). */
	hd_err fail;
	int nsp;
	hd_code sp_fail[HD_STORE_SAVEPOINT_MAX];
	/* hd_store_uuid's pool: random bytes drawn from OpenSSL a block at a
	 * time (see rnd_pool). NULL until the first id. */
	struct rnd_pool *rnd;
	int rnd_wipes; /* the kernel zeroes the pool in a forked child */
};

/*
 * A forked child must never mint the ids its parent will mint, so a pool
 * drawn before a fork must not be used after it. The pool lives in its own
 * mapping marked MADV_WIPEONFORK: a child sees it zeroed, so `left` reads 0
 * and the child draws its own bytes. Asking getpid() on every id instead
 * costs a system call per id, and an exchange turn mints several. Where
 * the kernel refuses the advice (before Linux 4.14) the pool remembers
 * the process that drew it. Bytes are drawn 4 KiB at a time: a RAND_bytes
 * call costs nearly the same whatever its size, so a large draw spreads
 * that cost over many ids (bench-exchange shows it).
 */
#define RND_POOL 4096
struct rnd_pool {
	size_t left; /* unused bytes at the end of bytes[] */
	pid_t pid;   /* who drew them, when !rnd_wipes */
	unsigned char bytes[RND_POOL];
};

static int
store_busy(void *arg, int count)
{
	hd_store *st = arg;
	int64_t now = hd_mono_us(), deadline, backoff;

	if (st->deadline_us != 0)
		deadline = st->deadline_us;
	else {
		if (count == 0)
			st->wait_start_us = now;
		deadline =
		    st->wait_start_us + (int64_t)st->busy_budget_ms * 1000;
	}
	if (now >= deadline)
		return 0;
	backoff = (int64_t)50 << (count < 7 ? count : 7);
	if (backoff > 5000)
		backoff = 5000;
	backoff = backoff / 2 + hd_jitter((uint32_t)(backoff / 2) + 1);
	if (now + backoff > deadline)
		backoff = deadline - now;
	hd_sleep_us(backoff);
	return 1;
}

static int
store_rnd_pool(hd_store *st, hd_err *err)
{
	void *page;

	page = mmap(NULL, sizeof(struct rnd_pool), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	st->rnd = page;
#ifdef MADV_WIPEONFORK
	st->rnd_wipes =
	    madvise(page, sizeof(struct rnd_pool), MADV_WIPEONFORK) == 0;
#endif
	return 0;
}

int
hd_store_uuid(hd_store *st, char out[37], hd_err *err)
{
	struct rnd_pool *p;
	int rc;

	if (st->rnd == NULL && (rc = store_rnd_pool(st, err)) < 0)
		return rc;
	p = st->rnd;
	/* A post mints two ids (the post and its event), an exchange turn
	 * nine: draw the bytes in blocks (see rnd_pool). */
	if (p->left < 16 || (!st->rnd_wipes && p->pid != getpid())) {
		if ((rc = hd_random_bytes(p->bytes, sizeof(p->bytes), err)) < 0)
			return rc;
		p->left = sizeof(p->bytes);
		p->pid = st->rnd_wipes ? 0 : getpid();
	}
	p->left -= 16;
	hd_uuid_format(out, p->bytes + p->left);
	memset(p->bytes + p->left, 0, 16); /* never handed out twice */
	return 0;
}

/* " (ENOSPC)" when SQLite saw a system error, else "": storage errors name
 * the errno the operating system gave, which says more than SQLite's text
 * ("disk I/O error" is EIO, EFBIG or EDQUOT). */
static const char *
store_errno_note(hd_store *st, char *buf, size_t len)
{
	int e = hd_store__vfs_take_errno();
	const char *name;

	if (e <= 0)
		e = sqlite3_system_errno(st->db);
	name = e > 0 ? strerrorname_np(e) : NULL;
	if (e <= 0)
		return "";
	if (name != NULL)
		snprintf(buf, len, " (%s)", name);
	else
		snprintf(buf, len, " (errno %d)", e);
	return buf;
}

int
hd_store_sqlerr(hd_store *st, int src, hd_err *err)
{
	int prim = src & 0xff;
	char note[48];

	if (__builtin_expect(st->pg != NULL, 0))
		return hd_pg_sqlerr(st->pg, st->busy_budget_ms, err);
	if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED)
		return hd_err_set(err, HD_EBUSY,
		    "database is busy: gave up after %d ms",
		    st->busy_budget_ms);
	if (src == SQLITE_CONSTRAINT_UNIQUE ||
	    src == SQLITE_CONSTRAINT_PRIMARYKEY)
		return hd_err_set(
		    err, HD_EEXISTS, "%s", sqlite3_errmsg(st->db));
	if (prim == SQLITE_NOMEM)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	if (prim == SQLITE_READONLY)
		return hd_err_set(
		    err, HD_EREFUSED, "database is read-only: %s", st->path);
	if (prim == SQLITE_CORRUPT)
		return hd_err_set(err, HD_ERR,
		    "database is damaged: %s: %s; restore it from a backup "
		    "(huddle restore)",
		    st->path, sqlite3_errmsg(st->db));
	if (prim == SQLITE_NOTADB)
		return hd_err_set(err, HD_EREFUSED,
		    "not a huddle database: %s (file is not a database)",
		    st->path);
	if (prim == SQLITE_FULL || prim == SQLITE_IOERR ||
	    prim == SQLITE_CANTOPEN || prim == SQLITE_PERM)
		return hd_err_set(err, HD_ERR, "%s: %s%s",
		    sqlite3_errstr(prim), st->path,
		    store_errno_note(st, note, sizeof(note)));
	return hd_err_set(
	    err, HD_ERR, "database error: %s", sqlite3_errmsg(st->db));
}

int
hd_store_exec(hd_store *st, const char *sql, hd_err *err)
{
	char *msg = NULL;
	int src;

	if (__builtin_expect(st->pg != NULL, 0))
		return hd_pg_exec(st->pg, sql, err);
	src = sqlite3_exec(st->db, sql, NULL, NULL, &msg);
	sqlite3_free(msg);
	if (src != SQLITE_OK)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

int
hd_store_step1(hd_store *st, const char *sql, hd_err *err)
{
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_prepare(st, &s, sql, err)) < 0)
		return rc;
	return hd_store_step_done(st, s, err);
}

int
hd_store_step_done(hd_store *st, hd_stmt *s, hd_err *err)
{
	int src = hd_stmt_step(s);

	hd_store_reset(s);
	if (src != SQLITE_DONE && src != SQLITE_ROW)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

void
hd_stmt_bind_vals(hd_stmt *s, const hd_val *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int idx = (int)i + 1;

		switch (v[i].kind) {
		case HD_VAL_INT:
			hd_stmt_bind_int(s, idx, v[i].i);
			break;
		case HD_VAL_TEXT:
			hd_stmt_bind_textn(s, idx, v[i].p, (int)v[i].n);
			break;
		case HD_VAL_BLOB:
			hd_stmt_bind_blob(s, idx, v[i].p, (size_t)v[i].n);
			break;
		case HD_VAL_NULL:
		default:
			hd_stmt_bind_null(s, idx);
			break;
		}
	}
}

int
hd_store_query_(hd_store *st, hd_stmt **out, hd_err *err, const char *sql,
    const hd_val *v, size_t n)
{
	int rc;

	if ((rc = hd_store_prepare(st, out, sql, err)) < 0)
		return rc;
	hd_stmt_bind_vals(*out, v, n);
	return 0;
}

int
hd_store_run_(hd_store *st, hd_err *err, const char *sql, const hd_val *v,
    size_t n)
{
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_query_(st, &s, err, sql, v, n)) < 0)
		return rc;
	return hd_store_step_done(st, s, err);
}

int
hd_store_get_int_(hd_store *st, int64_t *out, hd_err *err, const char *sql,
    const hd_val *v, size_t n)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_query_(st, &s, err, sql, v, n)) < 0)
		return rc;
	src = hd_stmt_step(s);
	if (src == HD_ROW)
		*out = hd_stmt_int(s, 0);
	hd_store_reset(s);
	if (src == HD_ROW)
		return 1;
	if (src == HD_DONE)
		return 0;
	return hd_store_sqlerr(st, src, err);
}

static int
store_user_version(hd_store *st, int *out, hd_err *err)
{
	sqlite3_stmt *s;
	int src;

	if ((src = sqlite3_prepare_v2(
		 st->db, "PRAGMA user_version", -1, &s, NULL)) != SQLITE_OK)
		return hd_store_sqlerr(st, src, err);
	src = sqlite3_step(s);
	if (src != SQLITE_ROW) {
		sqlite3_finalize(s);
		return hd_store_sqlerr(st, src, err);
	}
	*out = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return 0;
}

static int
store_migrate_one(hd_store *st, void *payload, hd_err *err)
{
	int target = *(int *)payload, have = 0, rc;
	char sql[64];

	if ((rc = store_user_version(st, &have, err)) < 0)
		return rc;
	if (have >= target) /* another process got here first */
		return 0;
	if ((rc = hd_store_exec(st, hd_store_migrations[target - 1], err)) < 0)
		return rc;
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", target);
	return hd_store_exec(st, sql, err);
}

static int
store_migrate(hd_store *st, hd_err *err)
{
	int have = 0, v, rc;

	if ((rc = store_user_version(st, &have, err)) < 0)
		return rc;
	if (have > hd_store_nmigrations)
		return hd_err_set(err, HD_EREFUSED,
		    "%s has schema version %d but this huddle (%s) knows only "
		    "up "
		    "to %d; upgrade huddle",
		    st->path, have, hd_version(), hd_store_nmigrations);
	if (have < hd_store_nmigrations && st->readonly)
		return hd_err_set(err, HD_EREFUSED,
		    "database is read-only: %s: it has schema version %d and "
		    "needs %d; open it once with write access to upgrade it",
		    st->path, have, hd_store_nmigrations);
	for (v = have + 1; v <= hd_store_nmigrations; v++)
		if ((rc = hd_store_write(st, store_migrate_one, &v, err)) < 0)
			return rc;
	return 0;
}

/* SQLite's memory statistics take a process-wide mutex on every malloc and
 * free; huddle never reads them, and the HTTP server's threads would queue
 * on that mutex. The setting must precede sqlite3_initialize, hence once,
 * before the first open; it fails harmlessly if the embedding program has
 * already initialised SQLite. The "huddle" VFS (vfs.c) is registered here
 * too, once for the process. */
static void
store_configure_sqlite(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	hd_store__vfs_register();
}

/*
 * A new store is made whole under a private name and linked into place, so
 * huddle.db, once it exists, always has at least its first page: a 0-byte
 * file is never a store being born (two processes opening a fresh home at
 * once see either no file or a whole one) and can be refused as damaged.
 * link() fails with EEXIST when another process got there first; its file
 * is then the store. The new file is 0600; an existing one keeps its mode.
 */
static int
store_create(const char *path, const char *vfs, hd_err *err)
{
	char tmp[PATH_MAX];
	sqlite3 *db = NULL;
	int src, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.new-%ld", path, (long)getpid());
	unlink(tmp);
	src = sqlite3_open_v2(tmp, &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	    vfs);
	if (src == SQLITE_OK)
		src = sqlite3_exec(db,
		    "PRAGMA page_size=2048; PRAGMA journal_mode=WAL;", NULL,
		    NULL, NULL);
	if (src != SQLITE_OK) {
		rc = hd_err_set(err, HD_ERR, "cannot create %s: %s", path,
		    db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(src));
		goto done;
	}
	sqlite3_close(db);
	db = NULL;
	if (chmod(tmp, 0600) != 0 || (link(tmp, path) != 0 && errno != EEXIST))
		rc = hd_err_set(err, HD_ERR, "cannot create %s: %s", path,
		    strerror(errno));
done:
	sqlite3_close(db);
	unlink(tmp);
	return rc;
}

/* What sits at path must be a SQLite database, or nothing (a new home).
 * Sets *exists. The first 16 bytes of every SQLite file are its magic;
 * magic=0 skips reading them, for the live database: closing any file
 * descriptor of it would drop every POSIX lock this process holds on it,
 * and with them the other connections' claim to the WAL (SQLite's own
 * read of page 1 answers SQLITE_NOTADB instead, see hd_store_sqlerr). */
static int
store_check_file(const char *path, int magic, int *exists, hd_err *err)
{
	static const char sqlite_magic[16] = "SQLite format 3";
	char head[16];
	struct stat sb;
	ssize_t n;
	int fd;

	*exists = 0;
	if (stat(path, &sb) != 0) {
		if (errno == ENOENT)
			return 0;
		return hd_err_set(err, HD_ERR, "cannot open %s: %s", path,
		    strerror(errno));
	}
	*exists = 1;
	if (!S_ISREG(sb.st_mode))
		return hd_err_set(err, HD_EREFUSED,
		    "not a huddle database: %s (not a regular file)", path);
	if (sb.st_size == 0)
		return hd_err_set(err, HD_EREFUSED,
		    "not a huddle database: %s (0 bytes)", path);
	if (!magic)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return hd_err_set(err, HD_ERR, "cannot open %s: %s", path,
		    strerror(errno));
	n = pread(fd, head, sizeof(head), 0);
	close(fd);
	if (n != (ssize_t)sizeof(head) || memcmp(head, sqlite_magic, 16) != 0)
		return hd_err_set(err, HD_EREFUSED,
		    "not a huddle database: %s (file is not a database)", path);
	return 0;
}

/*
 * A read-only WAL database is read through its -shm, which SQLite must be
 * able to create when it is missing: on a read-only mount (or directory)
 * it cannot, and the first read fails with SQLITE_CANTOPEN. Nobody can
 * write such a database either, so it is then opened immutable (no
 * locks, no -shm): every read still works, every write is refused.
 */
static int
store_open_immutable(hd_store *st, hd_err *err)
{
	char uri[PATH_MAX * 3 + 32];
	size_t o;
	const char *p;
	int src;

	src = sqlite3_exec(
	    st->db, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL);
	if ((src & 0xff) != SQLITE_CANTOPEN)
		return 0;
	sqlite3_close(st->db);
	st->db = NULL;
	o = (size_t)snprintf(uri, sizeof(uri), "file:");
	for (p = st->path; *p != '\0' && o + 4 < sizeof(uri); p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			o += (size_t)snprintf(uri + o, sizeof(uri) - o, "%%%02X",
			    (unsigned char)*p);
		else
			uri[o++] = *p;
	}
	snprintf(uri + o, sizeof(uri) - o, "?immutable=1");
	src = sqlite3_open_v2(uri, &st->db,
	    SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
	    hd_store__vfs_name());
	if (src != SQLITE_OK)
		return st->db != NULL
			   ? hd_store_sqlerr(st, src, err)
			   : hd_err_set(err, HD_ERR, "cannot open %s: %s",
				 st->path, sqlite3_errstr(src));
	return 0;
}

/* HUDDLE_STORE names a PostgreSQL database (pg.c): the home still
 * holds what is not in the database (logs, sockets); the path is the URL
 * with its password masked. */
static int
store_open_pg(hd_store **out, const char *home, const char *url, hd_err *err)
{
	hd_store *st;
	int rc;

	if ((rc = hd_store__backend_claim(HD_STORE_BACKEND_PG, err)) < 0)
		return rc;
	if ((rc = hd_mkdir_p(home, 0700, err)) < 0)
		return rc;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	st->busy_budget_ms = HD_STORE_BUSY_BUDGET_MS;
	if ((st->home = strdup(home)) == NULL ||
	    (st->path = hd_store_mask_url(url)) == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = hd_pg_open(&st->pg, url, err)) < 0)
		goto fail;
	*out = st;
	return 0;
fail:
	hd_store_close(st);
	return rc;
}

int
hd_store_open(hd_store **out, const char *home, hd_err *err)
{
	static pthread_once_t configured = PTHREAD_ONCE_INIT;

	hd_store *st;
	const char *url;
	size_t n;
	int src, rc, exists;

	*out = NULL;
	if ((rc = hd_pg_selected(&url, err)) < 0)
		return rc;
	if (rc == 1)
		return store_open_pg(out, home, url, err);
	if ((rc = hd_store__backend_claim(HD_STORE_BACKEND_SQLITE, err)) < 0)
		return rc;
	pthread_once(&configured, store_configure_sqlite);
	if ((rc = hd_mkdir_p(home, 0700, err)) < 0)
		return rc;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	st->busy_budget_ms = HD_STORE_BUSY_BUDGET_MS;
	n = strlen(home) + sizeof("/huddle.db");
	if ((st->home = strdup(home)) == NULL ||
	    (st->path = malloc(n)) == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto fail;
	}
	snprintf(st->path, n, "%s/huddle.db", home);
	if ((rc = store_check_file(st->path, 0, &exists, err)) < 0)
		goto fail;
	if (!exists &&
	    (rc = store_create(st->path, hd_store__vfs_name(), err)) < 0)
		goto fail;
	/* No SQLITE_OPEN_CREATE: the file exists now, and one that vanished
	 * is an error, not a new empty store. A file we may not write (its
	 * mode, a read-only mount) opens read-only: SQLite falls back by
	 * itself, and every write then fails as "database is read-only". */
	src = sqlite3_open_v2(st->path, &st->db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, hd_store__vfs_name());
	if (src != SQLITE_OK) {
		rc = st->db != NULL
			 ? hd_store_sqlerr(st, src, err)
			 : hd_err_set(err, HD_ERR, "cannot open %s: %s",
			       st->path, sqlite3_errstr(src));
		goto fail;
	}
	st->readonly = sqlite3_db_readonly(st->db, "main") == 1;
	if (st->readonly && (rc = store_open_immutable(st, err)) < 0)
		goto fail;
	sqlite3_busy_handler(st->db, store_busy, st);
	sqlite3_extended_result_codes(st->db, 1);
	/* A new store gets 2 KiB pages. Huddle's rows are small (a post, an
	 * event, a status are 100-300 bytes) and every commit writes each page
	 * it touched whole into the WAL, checksummed: a turn of an exchange
	 * touches about 8 pages, a room post 5. Half-size pages halve those
	 * bytes and checksums (bench-exchange and bench-room measure the
	 * gain). The pragma only applies before the file's first page is
	 * written, so an existing store keeps its page size. */
	if ((rc = hd_store_exec(st,
		 st->readonly ? "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;"
			      : "PRAGMA page_size=2048;"
				"PRAGMA journal_mode=WAL; PRAGMA "
				"synchronous=NORMAL;"
				"PRAGMA foreign_keys=ON; PRAGMA "
				"temp_store=MEMORY;",
		 err)) < 0)
		goto fail;
	st->queue = hd_store__queue_open(home);
	/* after the pragmas: the hook replaces SQLite's automatic checkpoint */
	st->worker = hd_store__worker_new(st->path, hd_store__vfs_name());
	sqlite3_wal_hook(st->db, hd_store__ckpt_hook, st->worker);
	if ((rc = store_migrate(st, err)) < 0)
		goto fail;
	*out = st;
	return 0;
fail:
	hd_store_close(st);
	return rc;
}

void
hd_store_close(hd_store *st)
{
	int i;

	if (st == NULL)
		return;
	hd_store__watch_free(st->watch);
	hd_store__queue_close(st->queue);
	/* before the connection: the worker checkpoints the same file */
	hd_store__worker_free(st->worker);
	hd_store__memo_free(st->memo);
	hd_pg_close(st->pg);
	for (i = 0; i < st->ncache; i++)
		sqlite3_finalize(st->cache[i].stmt);
	if (st->db != NULL)
		sqlite3_close(st->db);
	if (st->rnd != NULL)
		munmap(st->rnd, sizeof(struct rnd_pool));
	free(st->home);
	free(st->path);
	free(st);
}

const char *
hd_store_home(const hd_store *st)
{
	return st->home;
}

const char *
hd_store_path(const hd_store *st)
{
	return st->path;
}

sqlite3 *
hd_store_db(hd_store *st)
{
	return st->db;
}

hd_pg *
hd_store__pg(hd_store *st)
{
	return st->pg;
}

const char *
hd_store_backend_name(const hd_store *st)
{
	return st->pg != NULL ? "postgresql" : "sqlite";
}

const char *
hd_store_dialect(const hd_store *st, const char *sqlite_sql, const char *pg_sql)
{
	return st->pg != NULL ? pg_sql : sqlite_sql;
}

hd_store_watch **
hd_store__watch_slot(hd_store *st)
{
	return &st->watch;
}

void
hd_store_set_busy_budget(hd_store *st, int ms)
{
	st->busy_budget_ms = ms > 0 ? ms : HD_STORE_BUSY_BUDGET_MS;
}

int
hd_store_schema_version(void)
{
	return hd_store_nmigrations;
}

int
hd_store_file_version(hd_store *st, hd_err *err)
{
	int v = 0, rc;

	if (st->pg != NULL)
		return hd_pg_schema_version(st->pg, err);
	if ((rc = store_user_version(st, &v, err)) < 0)
		return rc;
	return v;
}

int
hd_store_prepare(hd_store *st, hd_stmt **out, const char *sql, hd_err *err)
{
	sqlite3_stmt *s;
	int i, src;

	if (__builtin_expect(st->pg != NULL, 0))
		return hd_pg_prepare(st->pg, out, sql, err);
	/* Callers pass string literals, so the pointer finds the entry; the
	 * text comparison only catches the same SQL from another literal. */
	for (i = 0; i < st->ncache; i++)
		if (st->cache[i].sql == sql)
			goto found;
	for (i = 0; i < st->ncache; i++)
		if (strcmp(st->cache[i].sql, sql) == 0)
			goto found;
	i = -1;
found:
	if (i >= 0) {
		s = st->cache[i].stmt;
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
		*out = hd_stmt_of(s);
		return 0;
	}
	src = sqlite3_prepare_v3(st->db, sql, -1,
	    st->ncache < STMT_CACHE ? SQLITE_PREPARE_PERSISTENT : 0, &s, NULL);
	if (src != SQLITE_OK)
		return hd_store_sqlerr(st, src, err);
	if (st->ncache == STMT_CACHE) {
		/* full: evict the oldest entry; statements are cheap to redo */
		sqlite3_finalize(st->cache[0].stmt);
		memmove(&st->cache[0], &st->cache[1],
		    sizeof(st->cache[0]) * (STMT_CACHE - 1));
		st->ncache--;
	}
	st->cache[st->ncache].sql = sql;
	st->cache[st->ncache].stmt = s;
	st->ncache++;
	*out = hd_stmt_of(s);
	return 0;
}

/* Reset only: hd_store_prepare clears the bindings when it hands the
 * statement out again, which every use goes through, so clearing here as
 * well did the same work twice per statement. A stale SQLITE_STATIC
 * pointer left bound is never read: SQLite reads bindings only in step. */
void
hd_store_reset(hd_stmt *stmt)
{
	if (hd_store__is_pg()) {
		if (stmt != NULL)
			hd_pg_reset(stmt);
		return;
	}
	if (stmt != NULL)
		sqlite3_reset(hd_stmt_sqlite(stmt));
}

/* Reset every cached statement: a statement left mid-step would keep a
 * read snapshot (and with it a WAL read lock) open past its transaction. */
static void
store_reset_all(hd_store *st)
{
	int i;

	for (i = 0; i < st->ncache; i++)
		if (sqlite3_stmt_busy(st->cache[i].stmt))
			sqlite3_reset(st->cache[i].stmt);
}

/* BEGIN, COMMIT and ROLLBACK go through the statement cache: sqlite3_exec
 * would parse them again on every transaction, which is a measurable share
 * of a one-row write. */
static int
store_step_ctl(hd_store *st, const char *sql)
{
	hd_stmt *s;
	int src;

	if (hd_store_prepare(st, &s, sql, NULL) < 0)
		return sqlite3_errcode(st->db);
	src = hd_stmt_step(s);
	hd_store_reset(s);
	return src == SQLITE_DONE || src == SQLITE_ROW ? SQLITE_OK : src;
}

/* A transaction's body, on either backend: run fn inside the open
 * transaction, reset every statement so no snapshot outlives it, and let
 * a failure marked with hd_store_fail_txn refuse the whole write (10). */
static inline int
store_body(hd_store *st, hd_store_txn_fn fn, void *payload, hd_err *err)
{
	int rc;

	st->txn_depth++;
	hd_err_clear(err);
	hd_err_clear(&st->fail);
	st->nsp = 0;
	rc = fn(st, payload, err);
	st->txn_depth--;
	if (__builtin_expect(st->pg != NULL, 0))
		hd_pg_reset_all(st->pg);
	else
		store_reset_all(st);
	if (rc >= 0 && st->fail.code != HD_OK) { /* (10) */
		rc = st->fail.code;
		if (err != NULL)
			*err = st->fail;
	}
	return rc;
}

/* store_txn on PostgreSQL (pg.c (5), (6)): the same body, failure and
 * retry rules as SQLite's, with pg.c's begin and commit; a busy or lost
 * database is retried (reconnecting) until the budget is spent. */
static int
store_txn_pg(
    hd_store *st, int write, hd_store_txn_fn fn, void *payload, hd_err *err)
{
	int64_t left;
	int rc;

	st->deadline_us = hd_mono_us() + (int64_t)st->busy_budget_ms * 1000;
	for (;;) {
		left = (st->deadline_us - hd_mono_us()) / 1000;
		/* the lock waits what is left; a refusal names the whole
		 * budget, as SQLite's does */
		rc = hd_pg_begin(st->pg, write, left > 0 ? (int)left : 1,
		    st->busy_budget_ms, err);
		if (rc < 0) {
			if (rc == HD_EBUSY && hd_mono_us() < st->deadline_us) {
				hd_sleep_us(1000 + hd_jitter(4000));
				continue;
			}
			break;
		}
		rc = store_body(st, fn, payload, err);
		if (rc >= 0) {
			if ((rc = hd_pg_commit(st->pg, write, err)) == 0)
				break;
		}
		hd_pg_rollback(st->pg);
		if (rc != HD_EBUSY || hd_mono_us() >= st->deadline_us)
			break;
		hd_sleep_us(1000 + hd_jitter(4000));
	}
	st->deadline_us = 0;
	return rc;
}

static int
store_txn(
    hd_store *st, int write, hd_store_txn_fn fn, void *payload, hd_err *err)
{
	const char *begin = write ? "BEGIN IMMEDIATE" : "BEGIN";
	int64_t start = hd_mono_us();
	int64_t budget = (int64_t)st->busy_budget_ms * 1000;
	int rc, src;

	if (st->txn_depth > 0)
		return fn(st, payload, err);
	if (__builtin_expect(st->pg != NULL, 0))
		return store_txn_pg(st, write, fn, payload, err);
	st->deadline_us = start + budget;
	if (write)
		hd_store__queue_enter(st->queue, st->deadline_us);
	for (;;) {
		src = store_step_ctl(st, begin);
		if (src != SQLITE_OK) {
			rc = hd_store_sqlerr(st, src, err);
			if (rc == HD_EBUSY && hd_mono_us() < st->deadline_us)
				continue;
			break;
		}
		rc = store_body(st, fn, payload, err);
		if (rc >= 0) {
			src = store_step_ctl(st, "COMMIT");
			if (src == SQLITE_OK)
				break;
			rc = hd_store_sqlerr(st, src, err);
		}
		if (sqlite3_get_autocommit(st->db) == 0)
			store_step_ctl(st, "ROLLBACK");
		if (rc != HD_EBUSY || hd_mono_us() >= st->deadline_us)
			break;
		hd_sleep_us(50 + hd_jitter(500));
	}
	if (write)
		hd_store__queue_leave(st->queue);
	st->deadline_us = 0;
	return rc;
}

int
hd_store_write(hd_store *st, hd_store_txn_fn fn, void *payload, hd_err *err)
{
	return store_txn(st, 1, fn, payload, err);
}

int
hd_store_atomic(hd_store *st, hd_store_unit_fn fn, void *payload, hd_err *err)
{
	return store_txn(st, 1, fn, payload, err);
}

int
hd_store_read(hd_store *st, hd_store_txn_fn fn, void *payload, hd_err *err)
{
	return store_txn(st, 0, fn, payload, err);
}

int
hd_store_in_txn(const hd_store *st)
{
	return st->txn_depth > 0;
}

void
hd_store_fail_txn(hd_store *st, const hd_err *err)
{
	if (st->txn_depth == 0 || st->fail.code != HD_OK)
		return;
	if (err != NULL && err->code != HD_OK)
		st->fail = *err;
	else
		hd_err_set(&st->fail, HD_ERR, "a write in this transaction failed");
}

int
hd_store_txn_failure(hd_store *st, hd_err *err)
{
	if (st->fail.code == HD_OK)
		return 0;
	if (err != NULL)
		*err = st->fail;
	return st->fail.code;
}

/* One name for every savepoint: SQL's savepoints nest by name, and a
 * rollback or release names the newest of that name, which is the one
 * a LIFO caller means. */
int
hd_store_savepoint(hd_store *st, hd_err *err)
{
	int rc;

	if (st->txn_depth == 0)
		return hd_err_set(err, HD_EINVAL,
		    "a savepoint needs an open write transaction");
	if (st->nsp == HD_STORE_SAVEPOINT_MAX)
		return hd_err_set(err, HD_ERR, "savepoints nested past %d",
		    HD_STORE_SAVEPOINT_MAX);
	if ((rc = hd_store_step1(st, "SAVEPOINT hd_sp", err)) < 0)
		return rc;
	st->sp_fail[st->nsp++] = st->fail.code;
	return 0;
}

int
hd_store_savepoint_end(hd_store *st, int keep, hd_err *err)
{
	int rc = 0;

	if (st->nsp == 0)
		return hd_err_set(err, HD_EINVAL, "no savepoint is open");
	if (!keep) {
		if ((rc = hd_store_step1(st, "ROLLBACK TO hd_sp", err)) < 0)
			return rc;
		/* the failure marked since the savepoint went with its work */
		if (st->sp_fail[st->nsp - 1] == HD_OK)
			hd_err_clear(&st->fail);
	}
	st->nsp--;
	return hd_store_step1(st, "RELEASE hd_sp", err);
}

const void *
hd_store_memo_get(hd_store *st, const char *key, const char *text)
{
	return hd_store__memo_get(st->memo, key, text);
}

void
hd_store_memo_put(hd_store *st, const char *key, const char *text, void *value,
    hd_store_memo_free_fn free_fn)
{
	if (st->memo == NULL)
		st->memo = hd_store__memo_new(); /* NULL: the put just frees */
	hd_store__memo_put(st->memo, key, text, value, free_fn);
}

/* SQLite's pager counts commits of its own connection as they end, and
 * another connection's when a transaction begins and finds the WAL moved
 * on (the test in test-store pins both). */
int
hd_store_data_version(hd_store *st, uint32_t *out)
{
	unsigned int v = 0;

	if (__builtin_expect(st->pg != NULL, 0))
		return hd_pg_data_version(st->pg, out);
	if (sqlite3_file_control(
		st->db, "main", SQLITE_FCNTL_DATA_VERSION, &v) != SQLITE_OK)
		return -1;
	*out = v;
	return 0;
}

char *
hd_store_col_dup(hd_stmt *stmt, int col)
{
	const char *t;

	if (hd_stmt_is_null(stmt, col))
		return NULL;
	t = hd_stmt_text(stmt, col);
	return strdup(t != NULL ? t : "");
}

/* PRAGMA quick_check or integrity_check on db; the first problem, named
 * with path, in err. */
static int
store_check_db(sqlite3 *db, const char *path, int full, hd_err *err)
{
	sqlite3_stmt *s = NULL;
	const char *line;
	int src, rc = 0;

	src = sqlite3_prepare_v2(db,
	    full ? "PRAGMA integrity_check" : "PRAGMA quick_check", -1, &s,
	    NULL);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	if (src != SQLITE_ROW) {
		rc = hd_err_set(err, HD_ERR,
		    "database is damaged: %s: %s; restore it from a backup "
		    "(huddle restore)",
		    path, sqlite3_errmsg(db));
		goto done;
	}
	line = (const char *)sqlite3_column_text(s, 0);
	if (line == NULL || strcmp(line, "ok") != 0)
		rc = hd_err_set(err, HD_ERR,
		    "database is damaged: %s: %s; restore it from a backup "
		    "(huddle restore)",
		    path, line != NULL ? line : "no answer");
done:
	sqlite3_finalize(s);
	return rc;
}

/* The SQLite-file operations on a PostgreSQL store: refused, naming the
 * tool that does the job there (how: "back PostgreSQL up with pg_dump"). */
static int
store_not_pg(const char *what, const char *how, hd_err *err)
{
	return hd_err_set(
	    err, HD_EREFUSED, "%s is for the SQLite store; %s", what, how);
}

#define PG_CHECK_HOW "check PostgreSQL with its own tools (amcheck, pg_amcheck)"

int
hd_store_integrity(hd_store *st, hd_err *err)
{
	if (st->pg != NULL)
		return store_not_pg("an integrity check", PG_CHECK_HOW, err);
	return store_check_db(st->db, st->path, 1, err);
}

int
hd_store_quick_check(hd_store *st, hd_err *err)
{
	if (st->pg != NULL)
		return store_not_pg("a quick check", PG_CHECK_HOW, err);
	return store_check_db(st->db, st->path, 0, err);
}

/* Copy every page of src's main database into dst's, one snapshot. A busy
 * destination or source is retried for two seconds. */
static int
store_copy(sqlite3 *dst, sqlite3 *src, const char *dpath, hd_err *err)
{
	sqlite3_backup *b;
	int64_t deadline = hd_mono_us() + 2000000;
	int brc;

	if ((b = sqlite3_backup_init(dst, "main", src, "main")) == NULL)
		return hd_err_set(err, HD_ERR, "cannot write %s: %s", dpath,
		    sqlite3_errmsg(dst));
	while ((brc = sqlite3_backup_step(b, -1)) == SQLITE_BUSY ||
	    brc == SQLITE_LOCKED) {
		if (hd_mono_us() >= deadline)
			break;
		hd_sleep_us(1000);
	}
	sqlite3_backup_finish(b);
	if (brc != SQLITE_DONE)
		return hd_err_set(err, HD_ERR, "cannot write %s: %s", dpath,
		    sqlite3_errstr(brc));
	return 0;
}

int
hd_store_backup(hd_store *st, const char *file, hd_err *err)
{
	char tmp[PATH_MAX];
	sqlite3 *dst = NULL;
	struct stat sb;
	int src, rc;

	if (st->pg != NULL)
		return store_not_pg("huddle backup",
		    "back PostgreSQL up with pg_dump", err);
	if (stat(file, &sb) == 0)
		return hd_err_set(err, HD_EEXISTS,
		    "%s already exists; choose a new file", file);
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", file, (long)getpid());
	unlink(tmp);
	src = sqlite3_open_v2(tmp, &dst,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (src != SQLITE_OK) {
		rc = hd_err_set(err, HD_ERR, "cannot write %s: %s", file,
		    dst != NULL ? sqlite3_errmsg(dst) : sqlite3_errstr(src));
		goto done;
	}
	if ((rc = store_copy(dst, st->db, file, err)) < 0)
		goto done;
	/* a backup is one self-contained file: no -wal beside it */
	src = sqlite3_exec(dst, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
	if (src != SQLITE_OK) {
		rc = hd_err_set(err, HD_ERR, "cannot write %s: %s", file,
		    sqlite3_errmsg(dst));
		goto done;
	}
	sqlite3_close(dst);
	dst = NULL;
	if (chmod(tmp, 0600) != 0 || link(tmp, file) != 0)
		rc = hd_err_set(err, errno == EEXIST ? HD_EEXISTS : HD_ERR,
		    "cannot write %s: %s", file, strerror(errno));
done:
	sqlite3_close(dst);
	unlink(tmp);
	return rc;
}

/* The backup at file is a huddle database this binary can open: SQLite's
 * magic, a schema version it knows, and a clean quick_check. */
static int
store_validate(sqlite3 *db, const char *file, hd_err *err)
{
	sqlite3_stmt *s = NULL;
	int v = -1, rc;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) ==
		SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (v < 1 || v > hd_store_nmigrations)
		return hd_err_set(err, HD_EREFUSED,
		    "not a huddle database: %s (schema version %d; this huddle "
		    "knows 1 to %d)",
		    file, v, hd_store_nmigrations);
	if ((rc = store_check_db(db, file, 0, err)) < 0)
		return rc;
	return 0;
}

int
hd_store_restore(const char *home, const char *file, hd_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32], old[PATH_MAX + 16];
	char side[PATH_MAX + 24], wal[PATH_MAX + 8], shm[PATH_MAX + 8];
	sqlite3 *from = NULL, *to = NULL, *live = NULL;
	const char *url;
	int exists, src, rc;

	if ((rc = hd_pg_selected(&url, err)) < 0)
		return rc;
	if (rc == 1)
		return store_not_pg("huddle restore",
		    "restore a pg_dump archive with pg_restore (or a plain "
		    "dump with psql)",
		    err);

	snprintf(path, sizeof(path), "%s/huddle.db", home);
	snprintf(tmp, sizeof(tmp), "%s.restore-%ld", path, (long)getpid());
	snprintf(old, sizeof(old), "%s.before-restore", path);
	if ((rc = store_check_file(file, 1, &exists, err)) < 0)
		goto done;
	if (!exists) {
		rc = hd_err_set(err, HD_ENOTFOUND, "no such file: %s", file);
		goto done;
	}
	if ((src = sqlite3_open_v2(file, &from, SQLITE_OPEN_READONLY, NULL)) !=
	    SQLITE_OK) {
		rc = hd_err_set(err, HD_ERR, "cannot read %s: %s", file,
		    from != NULL ? sqlite3_errmsg(from) : sqlite3_errstr(src));
		goto done;
	}
	if ((rc = store_validate(from, file, err)) < 0)
		goto done;
	/* copy into the home first: the swap below is two renames */
	unlink(tmp);
	if ((src = sqlite3_open_v2(tmp, &to,
		 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)) !=
	    SQLITE_OK) {
		rc = hd_err_set(err, HD_ERR, "cannot write %s: %s", tmp,
		    to != NULL ? sqlite3_errmsg(to) : sqlite3_errstr(src));
		goto done;
	}
	if ((rc = store_copy(to, from, tmp, err)) < 0)
		goto done;
	if (sqlite3_exec(to, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		rc = hd_err_set(err, HD_ERR, "cannot write %s: %s", tmp,
		    sqlite3_errmsg(to));
		goto done;
	}
	sqlite3_close(to);
	to = NULL;
	if (chmod(tmp, 0600) != 0) {
		rc = hd_err_set(err, HD_ERR, "cannot write %s: %s", tmp,
		    strerror(errno));
		goto done;
	}
	/* Fold the old store's WAL into it so huddle.db.before-restore is
	 * whole by itself; a damaged store may refuse, and then its -wal
	 * moves beside it under the name SQLite looks for. */
	if (sqlite3_open_v2(path, &live, SQLITE_OPEN_READWRITE, NULL) ==
	    SQLITE_OK)
		sqlite3_exec(live, "PRAGMA wal_checkpoint(TRUNCATE)", NULL,
		    NULL, NULL);
	sqlite3_close(live);
	live = NULL;
	if (rename(path, old) != 0 && errno != ENOENT) {
		rc = hd_err_set(err, HD_ERR, "cannot move %s aside: %s", path,
		    strerror(errno));
		goto done;
	}
	snprintf(side, sizeof(side), "%s-wal", old);
	unlink(side);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	if (rename(wal, side) != 0)
		unlink(wal);
	unlink(shm);
	if (rename(tmp, path) != 0)
		rc = hd_err_set(err, HD_ERR, "cannot move %s into place: %s",
		    path, strerror(errno));
done:
	sqlite3_close(live);
	sqlite3_close(to);
	sqlite3_close(from);
	unlink(tmp);
	return rc;
}

int
hd_store_kv_get(char **out, hd_store *st, const char *key, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*out = NULL;
	if ((rc = hd_store_prepare(
		 st, &s, "SELECT value FROM kv WHERE key=?", err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, key);
	src = hd_stmt_step(s);
	if (src == HD_ROW) {
		if ((*out = hd_store_col_dup(s, 0)) == NULL)
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
	} else if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

int
hd_store_kv_put(hd_store *st, const char *key, const char *value, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO kv(key, value, updated_at) VALUES (?, ?, ?) "
		 "ON CONFLICT(key) DO UPDATE SET value=excluded.value, "
		 "updated_at=excluded.updated_at",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, key);
	hd_stmt_bind_text(s, 2, value);
	hd_stmt_bind_int(s, 3, hd_now_ms());
	src = hd_stmt_step(s);
	if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

int
hd_store_kv_delete(hd_store *st, const char *key, int prefix, hd_err *err)
{
	if (!prefix)
		return hd_store_run(
		    st, err, "DELETE FROM kv WHERE key = ?1", HD_TEXT(key));
	return hd_store_run(st, err,
	    "DELETE FROM kv WHERE substr(key, 1, length(?1)) = ?1",
	    HD_TEXT(key));
}
