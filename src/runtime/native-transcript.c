/*
 * native-transcript.c -- a native session's transcript (native.c (3)):
 * one append-only JSON-lines file per session in the agent's home,
 * native/<session>.jsonl (0600), one neutral message (native.h) a line.
 *  (1) The file is the only source of truth. A line is written whole
 *      with one write() as its message is made, with no fsync: what a
 *      turn wrote survives kill -9 of its process (the page cache holds
 *      it), not a power cut. A line that does not parse (a crash
 *      mid-write, or the first one read mid-file) is skipped; a file
 *      that does not end in a newline (that crash) gets one when a turn
 *      resumes it, so the torn line never swallows the next.
 *  (2) The resent history is the window: the file's last
 *      HD_NATIVE_HISTORY_MAX messages whose lines total at most
 *      HD_NATIVE_HISTORY_BYTES, among the lines that start inside its
 *      last HD_NATIVE_TAIL_BYTES (only those are read, so a long-lived
 *      session costs a turn no more than a short one); sent from its
 *      first user message on, so no tool result goes without its call.
 *      Only the lines the window needs are parsed: the tail is scanned
 *      from its end, and the scan stops at the first cap reached.
 *  (3) A process remembers the windows of the sessions it last wrote
 *      (at most NATIVE_KEPT_SESSIONS of them and NATIVE_KEPT_BYTES of
 *      their lines, least recently used dropped first), each keyed by
 *      the file's path, device, inode, size and mtime as its turn left
 *      it. A turn resuming a session whose file still has exactly that
 *      key takes the window instead of reading the file; any other
 *      write to the file (another process's, a truncation) changes the
 *      key, and the file is read again. The remembered window is, by
 *      construction, what reading the file would give: a line this turn
 *      wrote is kept as its message only when the bytes written read
 *      back as it (Jansson's dump and load round-trip every value but a
 *      string holding NUL, which a read refuses: a line that may hold
 *      one is parsed back instead), the caps of (2) are applied on every
 *      line added, and a turn any of whose writes failed or was cut, or
 *      whose file's size is not what its own writes make it, remembers
 *      nothing. A message kept is never changed afterwards. With each
 *      message the window keeps its wire form (native-wire.c (6)) for
 *      the provider of the turn that last sent it, those this turn made
 *      included (hd_native__transcript_sent), so a message is
 *      serialised once, not once per model call. A window is held by
 *      one turn at a time (taken out, put back at the end, in the record
 *      it came in), so no JSON value is ever used by two threads.
 *  (4) Directories are made only when the file cannot be created for
 *      their lack (ENOENT): a turn resuming a session opens one file and
 *      makes nothing.
 * Callers: native.c; tests/unit/runtime/test-native-transcript.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/util.h>

#include "native.h"

#define NATIVE_KEPT_SESSIONS 16
#define NATIVE_KEPT_BYTES (4 * 1024 * 1024)

/* ---- the window (2) ---- */

static void
window_dispose(hd_native_window *w)
{
	json_decref(w->msgs);
	json_decref(w->wire);
	free(w->lines);
	memset(w, 0, sizeof(*w));
}

/* The first k messages dropped. */
static void
window_drop(hd_native_window *w, size_t k)
{
	size_t i;

	if (k == 0)
		return;
	for (i = 0; i < k; i++)
		w->bytes -= w->lines[i].len;
	memmove(w->lines, w->lines + k, (w->n - k) * sizeof(*w->lines));
	w->n -= k;
	for (i = 0; i < k; i++) {
		json_array_remove(w->msgs, 0);
		json_array_remove(w->wire, 0);
	}
}

/* m (taken), read from the line of len bytes at start, as the window's
 * last message; older ones dropped while a cap is passed. -1: no
 * memory (m dropped). */
static int
window_push(hd_native_window *w, json_t *m, size_t len, off_t start)
{
	hd_native_line *grown;
	size_t k = 0, bytes;

	if ((w->msgs == NULL && (w->msgs = json_array()) == NULL) ||
	    (w->wire == NULL && (w->wire = json_array()) == NULL)) {
		json_decref(m);
		return -1;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;

		if ((grown = realloc(w->lines, cap * sizeof(*grown))) == NULL) {
			json_decref(m);
			return -1;
		}
		w->lines = grown;
		w->cap = cap;
	}
	if (json_array_append_new(w->wire, json_null()) < 0) {
		json_decref(m);
		return -1;
	}
	if (json_array_append_new(w->msgs, m) < 0) {
		json_array_remove(w->wire, w->n);
		return -1;
	}
	w->lines[w->n].len = len;
	w->lines[w->n].start = start;
	w->n++;
	w->bytes += len;
	bytes = w->bytes;
	while (k < w->n && (w->n - k > HD_NATIVE_HISTORY_MAX ||
			       bytes > HD_NATIVE_HISTORY_BYTES))
		bytes -= w->lines[k++].len;
	window_drop(w, k);
	return 0;
}

/* The messages of lines that start inside the last HD_NATIVE_TAIL_BYTES
 * of a file of size bytes: those before are dropped. */
static void
window_clip(hd_native_window *w, off_t size)
{
	off_t from = size > HD_NATIVE_TAIL_BYTES ? size - HD_NATIVE_TAIL_BYTES
						 : 0;
	size_t k = 0;

	if (from == 0)
		return;
	/* read_window drops the line that starts at from too: its first
	 * whole line is the one after the first newline read */
	while (k < w->n && w->lines[k].start <= from)
		k++;
	window_drop(w, k);
}

/* A line as a message: a JSON object with a string role, else NULL. */
static json_t *
line_message(const char *line, size_t len)
{
	json_t *m = json_loadb(line, len, 0, NULL);

	if (m == NULL || !json_is_string(json_object_get(m, "role"))) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/* The window of the file open on fd, of size bytes (2); *torn is 1 when
 * it does not end in a newline. -1 with errno when it cannot be read. */
static int
read_window(hd_native_window *w, int *torn, int fd, off_t size)
{
	off_t from = size > HD_NATIVE_TAIL_BYTES ? size - HD_NATIVE_TAIL_BYTES
						 : 0;
	size_t want = (size_t)(size - from), got = 0, skip = 0, pos, ls;
	size_t len, n = 0, bytes = 0, cap = 0, i;
	struct found {
		json_t *m;
		size_t len, at;
	} *found = NULL, *grown;
	const char *nl;
	ssize_t r;
	char *buf;
	json_t *m;

	memset(w, 0, sizeof(*w));
	*torn = 0;
	if ((buf = malloc(want + 1)) == NULL)
		return -1;
	while (got < want &&
	       (r = pread(fd, buf + got, want - got, from + (off_t)got)) > 0)
		got += (size_t)r;
	*torn = got > 0 && buf[got - 1] != '\n';
	if (from > 0 && (nl = memchr(buf, '\n', got)) != NULL)
		skip = (size_t)(nl + 1 - buf);
	/* lines from the last back: [ls, pos) */
	pos = got;
	while (n < HD_NATIVE_HISTORY_MAX) {
		nl = pos > skip ? memrchr(buf + skip, '\n', pos - skip) : NULL;
		ls = nl != NULL ? (size_t)(nl + 1 - buf) : skip;
		len = pos - ls;
		if (len > 0 && buf[ls + len - 1] == '\r')
			len--;
		if (len > 0 && (m = line_message(buf + ls, len)) != NULL) {
			if (bytes + len > HD_NATIVE_HISTORY_BYTES) {
				json_decref(m);
				break;
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				if ((grown = realloc(found, cap * sizeof(*grown))) ==
				    NULL) {
					json_decref(m);
					break;
				}
				found = grown;
			}
			found[n].m = m;
			found[n].len = len;
			found[n].at = ls;
			n++;
			bytes += len;
		}
		if (ls == skip)
			break;
		pos = ls - 1;
	}
	free(buf);
	for (i = n; i > 0; i--)
		window_push(w, found[i - 1].m, found[i - 1].len,
		    from + (off_t)found[i - 1].at);
	free(found);
	return 0;
}

/* ---- the windows a process remembers (3) ---- */

typedef struct kept {
	char path[sizeof(((hd_native_transcript *)0)->path)];
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint64_t used;
	hd_native_window win;
} kept;

static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static kept *kept_list[NATIVE_KEPT_SESSIONS];
static size_t kept_bytes;
static uint64_t kept_tick;

static void
kept_free(kept *k)
{
	if (k != NULL)
		window_dispose(&k->win);
	free(k);
}

/* Slot i out of the list (the caller holds kept_mu). */
static kept *
kept_remove(size_t i)
{
	kept *k = kept_list[i];

	kept_list[i] = NULL;
	kept_bytes -= k->win.bytes;
	return k;
}

/* The window kept for path when the file is still as sb says; 1 when
 * it moved into *w, its record (emptied) into *slot for kept_put to keep
 * the turn's window in again. A stale one is dropped. */
static int
kept_take(
    hd_native_window *w, kept **slot, const char *path, const struct stat *sb)
{
	kept *k = NULL;
	size_t i;
	int hit;

	pthread_mutex_lock(&kept_mu);
	for (i = 0; i < NATIVE_KEPT_SESSIONS; i++)
		if (kept_list[i] != NULL && strcmp(kept_list[i]->path, path) == 0) {
			k = kept_remove(i);
			break;
		}
	pthread_mutex_unlock(&kept_mu);
	if (k == NULL)
		return 0;
	hit = k->dev == sb->st_dev && k->ino == sb->st_ino &&
	      k->size == sb->st_size &&
	      k->mtime.tv_sec == sb->st_mtim.tv_sec &&
	      k->mtime.tv_nsec == sb->st_mtim.tv_nsec;
	if (!hit) {
		kept_free(k);
		return 0;
	}
	*w = k->win;
	memset(&k->win, 0, sizeof(k->win));
	*slot = k;
	return 1;
}

/* w (taken) kept for path as sb says the file is, in slot (taken: the
 * record kept_take emptied, of the same path) or a new record. */
static void
kept_put(hd_native_window *w, kept *slot, const char *path,
    const struct stat *sb)
{
	kept *k = slot != NULL ? slot : calloc(1, sizeof(*k)), *old = NULL;
	size_t i, lru;

	if (k == NULL || w->bytes > NATIVE_KEPT_BYTES) {
		free(k);
		window_dispose(w);
		return;
	}
	if (slot == NULL)
		snprintf(k->path, sizeof(k->path), "%s", path);
	k->dev = sb->st_dev;
	k->ino = sb->st_ino;
	k->size = sb->st_size;
	k->mtime = sb->st_mtim;
	k->win = *w;
	memset(w, 0, sizeof(*w));
	pthread_mutex_lock(&kept_mu);
	k->used = ++kept_tick;
	for (;;) { /* room: a free slot within the bytes, dropping the LRU */
		size_t n = 0;

		lru = NATIVE_KEPT_SESSIONS;
		for (i = 0; i < NATIVE_KEPT_SESSIONS; i++)
			if (kept_list[i] != NULL) {
				n++;
				if (lru == NATIVE_KEPT_SESSIONS ||
				    kept_list[i]->used < kept_list[lru]->used)
					lru = i;
			}
		if (n < NATIVE_KEPT_SESSIONS &&
		    kept_bytes + k->win.bytes <= NATIVE_KEPT_BYTES)
			break;
		old = kept_remove(lru);
		pthread_mutex_unlock(&kept_mu);
		kept_free(old);
		pthread_mutex_lock(&kept_mu);
	}
	for (i = 0; kept_list[i] != NULL; i++)
		;
	kept_list[i] = k;
	kept_bytes += k->win.bytes;
	pthread_mutex_unlock(&kept_mu);
}

/* ---- the transcript ---- */

int
hd_native__session_ok(const char *s)
{
	size_t i, n = s != NULL ? strlen(s) : 0;

	if (n < 8 || n > 48 || strncmp(s, "native-", 7) != 0)
		return 0;
	for (i = 7; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
			(s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* A new session's file, its directories made when missing (4). */
static int
open_new(hd_native_transcript *tr, const char *dir, hd_err *err)
{
	char hex[33];
	struct stat sb;
	int rc;

	if ((rc = hd_random_hex(hex, 12, err)) < 0)
		return rc;
	snprintf(tr->session, sizeof(tr->session), "native-%s", hex);
	snprintf(tr->path, sizeof(tr->path), "%s/%s.jsonl", dir, tr->session);
	tr->fd = open(tr->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0600);
	if (tr->fd < 0 && errno == ENOENT) {
		if ((rc = hd_mkdir_p(dir, 0700, err)) < 0)
			return rc;
		tr->fd = open(tr->path,
		    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	}
	if (tr->fd < 0)
		return hd_err_set(err, HD_ERR, "cannot write %s: %s", tr->path,
		    strerror(errno));
	if (fstat(tr->fd, &sb) == 0)
		tr->end = sb.st_size;
	else
		tr->intact = 0;
	return 0;
}

int
hd_native__transcript_open(hd_native_transcript *tr, const char *home,
    const char *resume, hd_err *err)
{
	char dir[sizeof(tr->path) - 64];
	struct stat sb;
	kept *slot = NULL;
	int torn = 0;

	memset(tr, 0, sizeof(*tr));
	tr->fd = -1;
	tr->intact = 1;
	if (home == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "the native runtime needs its home directory");
	snprintf(dir, sizeof(dir), "%s/native", home);
	if (resume == NULL || !hd_native__session_ok(resume))
		return open_new(tr, dir, err);
	snprintf(tr->path, sizeof(tr->path), "%s/%s.jsonl", dir, resume);
	if ((tr->fd = open(tr->path, O_RDWR | O_APPEND | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return open_new(tr, dir, err);
		return hd_err_set(err, HD_ERR, "cannot write %s: %s", tr->path,
		    strerror(errno));
	}
	snprintf(tr->session, sizeof(tr->session), "%s", resume);
	tr->resumed = 1;
	if (fstat(tr->fd, &sb) < 0)
		return hd_err_set(err, HD_ERR, "cannot read %s: %s", tr->path,
		    strerror(errno));
	tr->end = sb.st_size;
	if (kept_take(&tr->win, &slot, tr->path, &sb)) {
		tr->slot = slot;
		window_clip(&tr->win, sb.st_size);
	} else if (read_window(&tr->win, &torn, tr->fd, sb.st_size) < 0)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	if (torn) { /* (1): the torn line ends here, not in ours */
		if (write(tr->fd, "\n", 1) == 1)
			tr->end++;
		else
			tr->intact = 0;
	}
	return 0;
}

json_t *
hd_native__transcript_history(
    hd_native_transcript *tr, hd_native_provider p, json_t **wire)
{
	hd_native_window *w = &tr->win;
	json_t *out = json_array(), *f;
	size_t i, from = 0;

	*wire = json_array();
	if (w->wire_for != p) { /* pieces made for the other provider */
		for (i = 0; i < w->n; i++)
			json_array_set_new(w->wire, i, json_null());
		w->wire_for = p;
	}
	while (from < w->n &&
	       strcmp(json_string_value(json_object_get(
			  json_array_get(w->msgs, from), "role")),
		   "user") != 0)
		from++;
	for (i = from; i < w->n; i++) /* the pieces not made yet */
		if (!json_is_string(json_array_get(w->wire, i)) &&
		    (f = hd_native__wire(p, json_array_get(w->msgs, i))) != NULL)
			json_array_set_new(w->wire, i, f);
	/* the window whole, then its lines before the first user message
	 * dropped; the two kept parallel (none of either when short of
	 * memory) */
	if (w->n > 0 && (json_array_extend(out, w->msgs) < 0 ||
			    json_array_extend(*wire, w->wire) < 0)) {
		json_array_clear(out);
		json_array_clear(*wire);
		return out;
	}
	for (i = 0; i < from; i++) {
		json_array_remove(out, 0);
		json_array_remove(*wire, 0);
	}
	return out;
}

int
hd_native__transcript_add(hd_native_transcript *tr, json_t *m)
{
	char buf[4096], *heap, *s;
	size_t len;
	json_t *back;
	ssize_t n;
	int rc = 0;

	/* room for the newline past the line: one write */
	if ((s = hd_native__dump(
		 m, buf, sizeof(buf) - 1, &len, &heap)) == NULL) {
		tr->intact = 0;
		errno = ENOMEM;
		return -1;
	}
	s[len] = '\n';
	n = tr->fd >= 0 ? write(tr->fd, s, len + 1) : -1;
	if (n != (ssize_t)(len + 1)) {
		if (n >= 0 || tr->fd < 0)
			errno = tr->fd < 0 ? EBADF : EIO; /* cut short */
		tr->intact = 0;
		rc = -1;
	} else if (tr->intact) {
		/* (3): the window gets what a read of this line gives: m
		 * itself, unless a string in it may hold NUL (a read skips
		 * such a line): then the line is parsed back */
		back = memmem(s, len, "\\u0000", 6) == NULL &&
			       json_is_string(json_object_get(m, "role"))
			   ? json_incref(m)
			   : line_message(s, len);
		if (back != NULL && window_push(&tr->win, back, len, tr->end) < 0)
			tr->intact = 0;
		tr->end += (off_t)len + 1;
	}
	free(heap);
	return rc;
}

void
hd_native__transcript_sent(hd_native_transcript *tr, hd_native_provider p,
    const json_t *sent, const json_t *wire)
{
	hd_native_window *w = &tr->win;
	size_t i, j;
	json_t *f;

	if (w->wire_for != p) {
		for (i = 0; i < w->n; i++)
			json_array_set_new(w->wire, i, json_null());
		w->wire_for = p;
	}
	for (i = w->n; i > 0; i--) {
		if (json_is_string(json_array_get(w->wire, i - 1)))
			continue;
		for (j = json_array_size(sent); j > 0; j--)
			if (json_array_get(sent, j - 1) ==
			    json_array_get(w->msgs, i - 1))
				break;
		f = j > 0 ? json_array_get(wire, j - 1) : NULL;
		if (json_is_string(f))
			json_array_set(w->wire, i - 1, f);
	}
}

void
hd_native__transcript_close(hd_native_transcript *tr)
{
	struct stat sb;

	if (tr->fd >= 0) {
		if (tr->intact && fstat(tr->fd, &sb) == 0 &&
		    sb.st_size == tr->end) {
			kept_put(&tr->win, tr->slot, tr->path, &sb);
			tr->slot = NULL;
		}
		close(tr->fd);
		tr->fd = -1;
	}
	free(tr->slot); /* emptied by kept_take: no window in it */
	tr->slot = NULL;
	window_dispose(&tr->win);
}
