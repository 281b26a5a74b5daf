/*
 * queue.c -- the writers' queue: huddle writers to one home wait for each
 * other on a process-shared mutex instead of polling SQLite's write lock.
 *
 * Why. SQLite has one writer at a time; a connection that finds the write
 * lock taken can only sleep and try again (our busy handler backs off from
 * 50 us to 5 ms). With several writing processes the lock is usually free
 * for a while before a sleeper notices, and throughput is lost to those
 * gaps (bench-room's 8-process figure). A futex-based mutex hands the
 * lock to the next waiter the moment the holder releases it.
 *
 *  (1) The mutex lives in huddle.db-writers, a small file in the home
 *      mapped MAP_SHARED by every connection; it is PTHREAD_PROCESS_SHARED
 *      and robust. The file is initialised once, under flock(2), and a
 *      magic word written last says it is ready; a half-initialised file
 *      (a crash during set-up) is initialised again.
 *  (2) hd_store_write takes the mutex before BEGIN IMMEDIATE and releases
 *      it after COMMIT or ROLLBACK. It is an optimisation only: SQLite's
 *      own lock still decides who writes, so a writer that bypasses the
 *      queue (the sqlite3 shell, an older huddle) is merely slower, never
 *      unsafe.
 *  (3) Never a hang: the wait is bounded by the operation's busy budget
 *      (pthread_mutex_timedlock); past it the writer
 *      goes on to SQLite, whose busy handler reports the familiar
 *      `database is busy` if the lock is really held. A holder that died
 *      (kill -9) hands the mutex on as EOWNERDEAD; the next writer marks it
 *      consistent and carries on. If the file cannot be created or mapped
 *      (read-only home, no space), writers simply do without the queue.
 *  (4) One queue handle per connection, used by its one thread; nothing
 *      global.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <huddle/util.h>

#include "store.h"

#define QUEUE_MAGIC 0x68647771u /* "hdwq" */
#define QUEUE_VERSION 1u

/* The shared file's layout. */
typedef struct queue_shared {
	pthread_mutex_t mu;
	uint32_t version;
	uint32_t magic; /* written last, after mu is ready */
} queue_shared;

struct hd_store_queue {
	queue_shared *sh;
	int held;
};

static int
queue_init_file(int fd, queue_shared **out)
{
	pthread_mutexattr_t at;
	queue_shared *sh;
	struct stat sb;
	int rc = -1;

	if (flock(fd, LOCK_EX) != 0)
		return -1;
	if (fstat(fd, &sb) != 0 ||
	    ((size_t)sb.st_size < sizeof(*sh) &&
		ftruncate(fd, (off_t)sizeof(*sh)) != 0))
		goto out;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		goto out;
	if (__atomic_load_n(&sh->magic, __ATOMIC_ACQUIRE) != QUEUE_MAGIC ||
	    sh->version != QUEUE_VERSION) {
		/* (1): nobody uses a mutex whose magic is not yet written */
		if (pthread_mutexattr_init(&at) != 0) {
			munmap(sh, sizeof(*sh));
			goto out;
		}
		pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
		pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
		if (pthread_mutex_init(&sh->mu, &at) != 0) {
			pthread_mutexattr_destroy(&at);
			munmap(sh, sizeof(*sh));
			goto out;
		}
		pthread_mutexattr_destroy(&at);
		sh->version = QUEUE_VERSION;
		__atomic_store_n(&sh->magic, QUEUE_MAGIC, __ATOMIC_RELEASE);
	}
	*out = sh;
	rc = 0;
out:
	flock(fd, LOCK_UN);
	return rc;
}

hd_store_queue *
hd_store__queue_open(const char *home)
{
	hd_store_queue *q;
	queue_shared *sh = NULL;
	char path[4096];
	int fd;

	if (getenv("HUDDLE_NO_WRITE_QUEUE") != NULL)
		return NULL;
	if (snprintf(path, sizeof(path), "%s/huddle.db-writers", home) >=
	    (int)sizeof(path))
		return NULL;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return NULL;
	if (queue_init_file(fd, &sh) < 0) {
		close(fd);
		return NULL;
	}
	close(fd); /* the mapping stays valid */
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		munmap(sh, sizeof(*sh));
		return NULL;
	}
	q->sh = sh;
	return q;
}

void
hd_store__queue_close(hd_store_queue *q)
{
	if (q == NULL)
		return;
	hd_store__queue_leave(q);
	munmap(q->sh, sizeof(*q->sh));
	free(q);
}

int
hd_store__queue_enter(hd_store_queue *q, int64_t deadline_us)
{
	struct timespec ts;
	int64_t left;
	int rc;

	if (q == NULL)
		return -1;
	if (q->held)
		return 0;
	/* timedlock takes a CLOCK_REALTIME deadline: translate the monotonic
	 * one (pthread_mutex_clocklock would not need this, but sanitizers
	 * do not know it and then report every unlock as unmatched) */
	left = deadline_us - hd_mono_us();
	if (left < 0)
		left = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(left / 1000000);
	ts.tv_nsec += (long)(left % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	rc = pthread_mutex_timedlock(&q->sh->mu, &ts);
	if (rc == EOWNERDEAD) {
		/* (3): the holder died; the mutex guards no data of its own */
		pthread_mutex_consistent(&q->sh->mu);
		rc = 0;
	}
	q->held = rc == 0; /* else (3): go on without the queue */
	return q->held ? 0 : -1;
}

void
hd_store__queue_leave(hd_store_queue *q)
{
	if (q == NULL || !q->held)
		return;
	pthread_mutex_unlock(&q->sh->mu);
	q->held = 0;
}
