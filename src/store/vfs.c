/*
 * vfs.c -- "huddle", a thin VFS over SQLite's default (unix) VFS that
 * writes each commit's WAL frames with one system call instead of two per
 * frame.
 *
 * Why. SQLite appends a WAL frame as two writes: its 24-byte header, then
 * the page. A room post touches about 6 pages, an exchange turn about 12,
 * so a commit costs 12 to 25 pwrite calls, and each system call has a
 * fixed cost before it does any work: many small writes cost several
 * times what the same bytes cost in one (bench-store measures it). Every
 * other byte and lock goes to the unix VFS untouched; only the -wal file's
 * frame writes are gathered.
 *
 *  (1) Only the shape SQLite uses for frames is gathered: a 24-byte frame
 *      header, then the page written right after it. Any other write (the
 *      WAL header, a write elsewhere in the file) first writes what is
 *      gathered, then goes straight through, so the file sees the same
 *      writes in the same order, fewer of them.
 *  (2) A commit is never published before its frames are written. SQLite
 *      publishes a commit by updating the wal-index header after its last
 *      frame write; the last frame of a commit carries the database size
 *      in its header (non-zero only there), so when that frame's page
 *      arrives everything gathered is written, inside that xWrite call:
 *      a failure (disk full) is reported to SQLite as the write's error,
 *      the transaction fails, and nothing committed before is touched.
 *  (3) Every other way to look at the file first writes what is gathered:
 *      read, size, sync, truncate, file controls, close. The database's
 *      shared-memory barrier (which SQLite calls between the two copies of
 *      the wal-index header) does too, as a second line behind (2).
 *  (4) kill -9 while frames are gathered loses only frames of a commit
 *      that was never published: the same as dying between two of SQLite's
 *      own writes. Acknowledged commits are in the file before COMMIT
 *      returns, as before.
 *  (5) A gathered write failed: the bytes are dropped (SQLite writes those
 *      frames again at the same offsets when it retries), never written
 *      later behind its back.
 *  (6) The WAL file finds its database file through
 *      sqlite3_database_file_object(), documented for VFS shims; both are
 *      used by one connection, so by one thread at a time: no locks here.
 *  (7) HUDDLE_NO_WAL_BATCH=1 opens stores on the default VFS instead.
 * Callers: store.c (hd_store__vfs_name, at open).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "sqlite.h"

#define HD_LOG_COMPONENT "store"
#include <huddle/log.h>

#define VFS_NAME "huddle"
#define FRAME_HDR 24          /* a WAL frame header, as SQLite writes it */
/* Past this, write what is gathered: the unix VFS writes at most 128 KiB
 * - 1 bytes per call (its seekAndWrite masks the length with 0x1ffff), and
 * a 64 KiB page with its header must still fit. */
#define GATHER_MAX (120 * 1024)

typedef struct hd_vfs_file hd_vfs_file;
struct hd_vfs_file {
	sqlite3_file base;
	sqlite3_file *real;  /* the unix VFS's file, right after this struct */
	/* the -wal file */
	unsigned char *buf;  /* gathered frames, starting at off */
	size_t len;
	sqlite3_int64 off;
	sqlite3_int64 page_at; /* where the page of the last header goes */
	int in_frame;          /* a header was written; its page comes next */
	int commit;            /* ... and it is the last frame of a commit */
	hd_vfs_file *db;       /* the database file this WAL belongs to */
	/* the database file */
	hd_vfs_file *wal; /* its open WAL, or NULL */
};

/* Registered once (hd_store__vfs_name); read-only afterwards. */
static sqlite3_vfs hd_vfs;

static sqlite3_vfs *
real_vfs(void)
{
	return hd_vfs.pAppData;
}

/*
 * The errno of this thread's last failed write, for error messages: SQLite
 * asks the VFS for the errno (xGetLastError) only on some paths, after
 * other system calls may have replaced it, so a disk-full commit was
 * reported without ENOSPC. Set only when a write fails; read and cleared by
 * hd_store__vfs_take_errno.
 */
static _Thread_local int vfs_write_errno;

/* Every write to a real file goes through here; nothing added on success. */
static int
real_write(sqlite3_file *real, const void *z, int amt, sqlite3_int64 off)
{
	int rc = real->pMethods->xWrite(real, z, amt, off);

	if (rc != SQLITE_OK)
		vfs_write_errno = errno;
	return rc;
}

int
hd_store__vfs_take_errno(void)
{
	int e = vfs_write_errno;

	vfs_write_errno = 0;
	return e;
}

/* ---- gathering (the -wal file) ---- */

/* Write what is gathered, in one call; (5) on failure. */
static int
gather_flush(hd_vfs_file *p)
{
	int rc;

	if (p->len == 0)
		return SQLITE_OK;
	rc = real_write(p->real, p->buf, (int)p->len, p->off);
	p->len = 0;
	return rc;
}

/* Append z at off, which continues the gathered bytes (or starts them);
 * SQLITE_NOMEM when no buffer can be had: the caller writes directly. */
static int
gather_put(hd_vfs_file *p, const void *z, int amt, sqlite3_int64 off)
{
	size_t need = (size_t)amt;
	int rc;

	if (p->len > 0 && (off != p->off + (sqlite3_int64)p->len ||
			      p->len + need > GATHER_MAX))
		if ((rc = gather_flush(p)) != SQLITE_OK)
			return rc;
	if (p->len + need > GATHER_MAX)
		return SQLITE_NOMEM; /* larger than any frame: write it directly */
	if (p->buf == NULL) {
		if ((p->buf = malloc(GATHER_MAX)) == NULL)
			return SQLITE_NOMEM;
	}
	if (p->len == 0)
		p->off = off;
	memcpy(p->buf + p->len, z, need);
	p->len += need;
	return SQLITE_OK;
}

static unsigned
get_u32(const unsigned char *b)
{
	return (unsigned)b[0] << 24 | (unsigned)b[1] << 16 |
	       (unsigned)b[2] << 8 | (unsigned)b[3];
}

static int
wal_write(sqlite3_file *f, const void *z, int amt, sqlite3_int64 off)
{
	hd_vfs_file *p = (hd_vfs_file *)f;
	int rc, commit;

	if (amt == FRAME_HDR) { /* (1) a frame header */
		rc = gather_put(p, z, amt, off);
		if (rc == SQLITE_NOMEM && (rc = gather_flush(p)) == SQLITE_OK)
			rc = real_write(p->real, z, amt, off);
		p->in_frame = rc == SQLITE_OK;
		p->page_at = off + FRAME_HDR;
		p->commit = get_u32((const unsigned char *)z + 4) != 0;
		return rc;
	}
	if (p->in_frame && off == p->page_at) { /* its page */
		p->in_frame = 0;
		commit = p->commit;
		rc = gather_put(p, z, amt, off);
		if (rc == SQLITE_NOMEM && (rc = gather_flush(p)) == SQLITE_OK)
			rc = real_write(p->real, z, amt, off);
		if (rc != SQLITE_OK) {
			p->len = 0; /* (5) */
			return rc;
		}
		return commit ? gather_flush(p) : SQLITE_OK; /* (2) */
	}
	p->in_frame = 0; /* (1) anything else goes straight through */
	if ((rc = gather_flush(p)) != SQLITE_OK)
		return rc;
	return real_write(p->real, z, amt, off);
}

static int
wal_read(sqlite3_file *f, void *z, int amt, sqlite3_int64 off)
{
	hd_vfs_file *p = (hd_vfs_file *)f;
	int rc;

	if ((rc = gather_flush(p)) != SQLITE_OK)
		return rc;
	return p->real->pMethods->xRead(p->real, z, amt, off);
}

static int
wal_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	hd_vfs_file *p = (hd_vfs_file *)f;
	int rc;

	p->in_frame = 0;
	if ((rc = gather_flush(p)) != SQLITE_OK)
		return rc;
	return p->real->pMethods->xTruncate(p->real, size);
}

static int
wal_sync(sqlite3_file *f, int flags)
{
	hd_vfs_file *p = (hd_vfs_file *)f;
	int rc;

	if ((rc = gather_flush(p)) != SQLITE_OK)
		return rc;
	return p->real->pMethods->xSync(p->real, flags);
}

static int
wal_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	hd_vfs_file *p = (hd_vfs_file *)f;
	int rc;

	if ((rc = gather_flush(p)) != SQLITE_OK)
		return rc;
	return p->real->pMethods->xFileSize(p->real, size);
}

static int
wal_file_control(sqlite3_file *f, int op, void *arg)
{
	hd_vfs_file *p = (hd_vfs_file *)f;
	int rc;

	if ((rc = gather_flush(p)) != SQLITE_OK)
		return rc;
	return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int
wal_close(sqlite3_file *f)
{
	hd_vfs_file *p = (hd_vfs_file *)f;
	int rc = gather_flush(p), crc;

	if (p->db != NULL && p->db->wal == p)
		p->db->wal = NULL;
	free(p->buf);
	p->buf = NULL;
	crc = p->real->pMethods->xClose(p->real);
	return rc != SQLITE_OK ? rc : crc;
}

/* ---- the database file (and every other file): straight through ---- */

static int
db_close(sqlite3_file *f)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	if (p->wal != NULL)
		p->wal->db = NULL;
	return p->real->pMethods->xClose(p->real);
}

static int
db_read(sqlite3_file *f, void *z, int amt, sqlite3_int64 off)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xRead(p->real, z, amt, off);
}

static int
db_write(sqlite3_file *f, const void *z, int amt, sqlite3_int64 off)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return real_write(p->real, z, amt, off);
}

static int
db_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xTruncate(p->real, size);
}

static int
db_sync(sqlite3_file *f, int flags)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xSync(p->real, flags);
}

static int
db_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xFileSize(p->real, size);
}

static int
db_file_control(sqlite3_file *f, int op, void *arg)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int
any_lock(sqlite3_file *f, int level)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xLock(p->real, level);
}

static int
any_unlock(sqlite3_file *f, int level)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xUnlock(p->real, level);
}

static int
any_check_reserved(sqlite3_file *f, int *out)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int
any_sector_size(sqlite3_file *f)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xSectorSize(p->real);
}

static int
any_device_characteristics(sqlite3_file *f)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int
any_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xShmMap(p->real, pg, pgsz, extend, pp);
}

static int
any_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

/* (3) SQLite calls this between the two copies of the wal-index header it
 * writes to publish a commit: nothing gathered may stay behind it. (2)
 * has already written a commit's frames by now; this only guards against
 * a write shape SQLite has never used, and it cannot report an error. */
static void
db_shm_barrier(sqlite3_file *f)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	if (p->wal != NULL && p->wal->len > 0 &&
	    gather_flush(p->wal) != SQLITE_OK)
		hd_log_error("cannot write WAL frames before a barrier");
	p->real->pMethods->xShmBarrier(p->real);
}

static int
any_shm_unmap(sqlite3_file *f, int del)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xShmUnmap(p->real, del);
}

static int
any_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xFetch(p->real, off, amt, pp);
}

static int
any_unfetch(sqlite3_file *f, sqlite3_int64 off, void *page)
{
	hd_vfs_file *p = (hd_vfs_file *)f;

	return p->real->pMethods->xUnfetch(p->real, off, page);
}

static const sqlite3_io_methods db_io = {
    3,
    db_close,
    db_read,
    db_write,
    db_truncate,
    db_sync,
    db_file_size,
    any_lock,
    any_unlock,
    any_check_reserved,
    db_file_control,
    any_sector_size,
    any_device_characteristics,
    any_shm_map,
    any_shm_lock,
    db_shm_barrier,
    any_shm_unmap,
    any_fetch,
    any_unfetch,
};

/* The WAL is never memory-mapped nor shared-memory (the database file
 * carries the wal-index), so version 1 is all it needs. */
static const sqlite3_io_methods wal_io = {
    1,
    wal_close,
    wal_read,
    wal_write,
    wal_truncate,
    wal_sync,
    wal_file_size,
    any_lock,
    any_unlock,
    any_check_reserved,
    wal_file_control,
    any_sector_size,
    any_device_characteristics,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

/* ---- the VFS ---- */

static int
vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
    int *out_flags)
{
	hd_vfs_file *p = (hd_vfs_file *)f;
	sqlite3_vfs *real = real_vfs();
	sqlite3_file *dbf;
	int rc;

	(void)vfs;
	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)(p + 1);
	rc = real->xOpen(real, name, p->real, flags, out_flags);
	if (rc != SQLITE_OK) {
		if (p->real->pMethods != NULL)
			p->real->pMethods->xClose(p->real);
		p->base.pMethods = NULL;
		return rc;
	}
	if (p->real->pMethods->iVersion < 3) {
		/* registration checked for the unix VFS, whose files all
		 * have version-3 methods; anything else is not a file this
		 * shim can forward for, so it is refused, not half served */
		p->real->pMethods->xClose(p->real);
		p->base.pMethods = NULL;
		return SQLITE_CANTOPEN;
	}
	if ((flags & SQLITE_OPEN_WAL) != 0 && name != NULL) {
		p->base.pMethods = &wal_io;
		dbf = sqlite3_database_file_object(name);
		if (dbf != NULL && dbf->pMethods == &db_io) {
			p->db = (hd_vfs_file *)dbf;
			p->db->wal = p;
		}
	} else
		p->base.pMethods = &db_io;
	return SQLITE_OK;
}

static int
vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	return real_vfs()->xDelete(real_vfs(), name, sync_dir);
}

static int
vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return real_vfs()->xAccess(real_vfs(), name, flags, out);
}

static int
vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return real_vfs()->xFullPathname(real_vfs(), name, n, out);
}

static void *
vfs_dl_open(sqlite3_vfs *vfs, const char *name)
{
	(void)vfs;
	return real_vfs()->xDlOpen(real_vfs(), name);
}

static void
vfs_dl_error(sqlite3_vfs *vfs, int n, char *msg)
{
	(void)vfs;
	real_vfs()->xDlError(real_vfs(), n, msg);
}

static void (*vfs_dl_sym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	(void)vfs;
	return real_vfs()->xDlSym(real_vfs(), h, sym);
}

static void
vfs_dl_close(sqlite3_vfs *vfs, void *h)
{
	(void)vfs;
	real_vfs()->xDlClose(real_vfs(), h);
}

static int
vfs_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real_vfs()->xRandomness(real_vfs(), n, out);
}

static int
vfs_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return real_vfs()->xSleep(real_vfs(), us);
}

static int
vfs_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return real_vfs()->xCurrentTime(real_vfs(), out);
}

static int
vfs_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real_vfs()->xGetLastError
		   ? real_vfs()->xGetLastError(real_vfs(), n, out)
		   : 0;
}

static int
vfs_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return real_vfs()->xCurrentTimeInt64(real_vfs(), out);
}

/* Register the VFS (once, from store.c's pthread_once). Leaves it
 * unregistered when the default VFS is not one it can wrap. */
void
hd_store__vfs_register(void)
{
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);

	/* only over the unix VFS, the one its write shapes were read from;
	 * with another default, stores open on that one as they are */
	if (real == NULL || real->iVersion < 2 ||
	    real->xCurrentTimeInt64 == NULL || real->zName == NULL ||
	    strncmp(real->zName, "unix", 4) != 0)
		return;
	hd_vfs.iVersion = 2;
	hd_vfs.szOsFile = (int)sizeof(hd_vfs_file) + real->szOsFile;
	hd_vfs.mxPathname = real->mxPathname;
	hd_vfs.zName = VFS_NAME;
	hd_vfs.pAppData = real;
	hd_vfs.xOpen = vfs_open;
	hd_vfs.xDelete = vfs_delete;
	hd_vfs.xAccess = vfs_access;
	hd_vfs.xFullPathname = vfs_full_pathname;
	hd_vfs.xDlOpen = vfs_dl_open;
	hd_vfs.xDlError = vfs_dl_error;
	hd_vfs.xDlSym = vfs_dl_sym;
	hd_vfs.xDlClose = vfs_dl_close;
	hd_vfs.xRandomness = vfs_randomness;
	hd_vfs.xSleep = vfs_sleep;
	hd_vfs.xCurrentTime = vfs_current_time;
	hd_vfs.xGetLastError = vfs_last_error;
	hd_vfs.xCurrentTimeInt64 = vfs_current_time_int64;
	if (sqlite3_vfs_register(&hd_vfs, 0) != SQLITE_OK)
		hd_vfs.zName = NULL;
}

const char *
hd_store__vfs_name(void)
{
	const char *off = getenv("HUDDLE_NO_WAL_BATCH");

	if (off != NULL && off[0] != '\0' && strcmp(off, "0") != 0)
		return NULL;
	return hd_vfs.zName;
}
