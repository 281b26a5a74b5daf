/*
 * conv_adopt.c -- the end of a conversation and its take-over (SPEC 7):
 * completing one whose replies are all in (the aggregate, the transcript
 * file, conversation_completed), recording where a delivery's runtime
 * process runs, taking a gone engine's conversation over, and letting go
 * of an engine's own at stop. The rows are the domain module's
 * (conversation_store.h); this file groups them into the owning engine's
 * transactions.
 *  (1) A conversation completes only with pending 0 and only by its
 *      owner, in one UPDATE (hd_convstore_complete); the transcript is
 *      written before it, so a process that dies halfway leaves it
 *      running and whoever resumes it writes the whole file again.
 *  (2) A take-over is a compare-and-set on the owner seen (conversation.c
 *      (4)); in the same transaction the process groups the interrupted
 *      turns recorded are killed (conversation.c (6)), their agents go
 *      back to idle, and their deliveries are queued again.
 * Callers: conv_engine.c (finish, adopt, disown), the runtime's start
 * callback in conv_engine.c (hd_conv__running), cancel.c
 * (hd_conv__write_file).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/events.h>
#include <huddle/room.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "conversation_int.h"

#define HD_LOG_COMPONENT "conversation"
#include <huddle/log.h>

static int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

/* ---- finishing -------------------------------------------------------------
 */

/*
 * Write the transcript, mode 0600. No temporary file and rename: the
 * conversation is marked completed only after this returns, so a process
 * that dies halfway leaves it running, and whoever resumes it writes the
 * whole file again.
 */
int
hd_conv__write_file(const char *path, const char *text, hd_err *err)
{
	size_t len = strlen(text), off = 0;
	ssize_t w;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) <
	    0)
		return hd_err_set(
		    err, HD_ERR, "cannot write %s: %s", path, strerror(errno));
	while (off < len) {
		if ((w = write(fd, text + off, len - off)) < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return hd_err_set(err, HD_ERR, "cannot write %s: %s",
			    path, strerror(errno));
		}
		off += (size_t)w;
	}
	if (close(fd) < 0)
		return hd_err_set(
		    err, HD_ERR, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

struct finish_txn {
	const char *id;
	const hd_conv_owner *me;
	const char *response;
	const char *team;
	const char *path;
	int64_t total;
	int done;
};

static int
finish_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct finish_txn *t = payload;
	char *capped;
	int rc, changed;

	t->done = 0;
	if ((rc = hd_convstore_complete(&changed, st, t->id, t->response,
		 hd_now_ms(), t->me->token, err)) < 0)
		return rc;
	if (!changed)
		return 0;
	t->done = 1;
	if ((capped = hd_conv__cap_text(t->response, HD_ROOM_BODY_MAX)) == NULL)
		return oom(err);
	hd_events_append(st, "conversation_completed", t->team, 0, NULL,
	    json_pack("{s:s, s:I, s:i, s:s, s:s?}", "conversation_id", t->id,
		"total_messages", (json_int_t)t->total, "pending", 0,
		"response", capped, "transcript",
		t->path[0] != '\0' ? t->path : NULL));
	free(capped);
	return 0;
}

int
hd_conv__finish(int *done, hd_store *st, const char *id,
    const hd_conv_owner *me, hd_err *err)
{
	hd_conversation *c = NULL;
	hd_team *tm = NULL;
	char *response = NULL, *text = NULL, path[4096], dir[4096];
	hd_err werr = HD_ERR_INIT;
	struct finish_txn t;
	int rc;

	*done = 0;
	if ((rc = hd_conversation_get(&c, st, id, err)) < 0)
		goto done;
	if (strcmp(c->status, "running") != 0) {
		*done = 1;
		goto done;
	}
	if (c->pending != 0)
		goto done;
	if ((rc = hd_conversation_aggregate(&response, c, err)) < 0)
		goto done;
	if (hd_team_get(&tm, st, c->team_id, NULL) < 0)
		tm = NULL; /* removed since: the id stands in for the name */
	if ((rc = hd_conversation_transcript(
		 &text, c, tm != NULL ? tm->name : c->team_id, err)) < 0 ||
	    (rc = hd_conversation_transcript_path(
		 path, sizeof(path), hd_store_home(st), c, err)) < 0)
		goto done;
	snprintf(
	    dir, sizeof(dir), "%s/chats/%s", hd_store_home(st), c->team_id);
	if (hd_mkdir_p(dir, 0700, &werr) < 0 ||
	    hd_conv__write_file(path, text, &werr) < 0) {
		/* the user still gets the answer; only the file is missing */
		hd_log_error(
		    "conversation %s: no transcript: %s", id, werr.msg);
		path[0] = '\0';
	}
	memset(&t, 0, sizeof(t));
	t.id = id;
	t.me = me;
	t.response = response;
	t.team = c->team_id;
	t.path = path;
	t.total = c->total_messages;
	if ((rc = hd_conv__owner_write(st, me, finish_txn_fn, &t, err)) < 0)
		goto done;
	*done = t.done;
done:
	free(response);
	free(text);
	hd_team_free(tm);
	hd_conversation_free(c);
	return rc;
}

/* ---- taking over ------------------------------------------------------------
 */

struct adopt_txn {
	const char *id;
	const char *old_owner;
	const hd_conv_owner *me;
	int adopted;
	char **agents;
	size_t nagents;
	int64_t pending;
	char team[64];
};

struct running_txn {
	const hd_conv_claim *c;
	int64_t pgid, start;
};

static int
running_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct running_txn *t = payload;
	char host[256], boot[40];

	hd_host_name(host, sizeof(host));
	hd_boot_id(boot, sizeof(boot));
	return hd_convstore_run_record(
	    st, t->c->delivery_id, host, boot, t->pgid, t->start, err);
}

int
hd_conv__running(hd_store *st, const hd_conv_claim *c,
    const hd_conv_owner *me, int64_t pgid, int64_t start, hd_err *err)
{
	struct running_txn t = {c, pgid, start};

	return hd_conv__owner_write(st, me, running_txn_fn, &t, err);
}

static int
adopt_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct adopt_txn *t = payload;
	size_t i;
	int rc, requeued, changed;

	t->adopted = 0;
	hd_strv_free(t->agents, t->nagents);
	t->agents = NULL;
	t->nagents = 0;
	if ((rc = hd_convstore_adopt(&changed, st, t->id, t->old_owner,
		 t->me->token, t->me->pid, t->me->start, err)) < 0)
		return rc;
	if (!changed)
		return 0; /* someone else was faster, or it completed */
	t->adopted = 1;

	/* (6) what the interrupted turns started, killed before they run
	 * again */
	if ((rc = hd_convstore_kill_running(st, t->id, err)) < 0)
		return rc;
	/* the interrupted turns: their agents are idle again */
	if ((rc = hd_convstore_running_agents(
		 &t->agents, &t->nagents, st, t->id, err)) < 0)
		return rc;
	for (i = 0; i < t->nagents; i++)
		hd_conv__activity(
		    st, NULL, t->agents[i], HD_CONV_ACT_ABORT, NULL);
	requeued = (int)t->nagents;
	hd_strv_free(t->agents, t->nagents);
	t->agents = NULL;
	t->nagents = 0;
	if ((rc = hd_convstore_requeue_all(st, t->id, err)) < 0)
		return rc;

	if ((rc = hd_convstore_queued_agents(
		 &t->agents, &t->nagents, st, t->id, err)) < 0 ||
	    (rc = hd_convstore_pending_team(
		 &t->pending, t->team, sizeof(t->team), st, t->id, err)) < 0)
		return rc;
	hd_events_append(st, "conversation_resumed", t->team, 0, NULL,
	    json_pack("{s:s, s:s?, s:i, s:I}", "conversation_id", t->id,
		"previous_owner", t->old_owner, "requeued", requeued, "pending",
		(json_int_t)t->pending));
	return 0;
}

int
hd_conv__adopt(int *adopted, char ***agents, size_t *nagents, int64_t *pending,
    hd_store *st, const char *id, const char *old_owner,
    const hd_conv_owner *me, hd_err *err)
{
	struct adopt_txn t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.old_owner = old_owner;
	t.me = me;
	*adopted = 0;
	*agents = NULL;
	*nagents = 0;
	*pending = 0;
	if ((rc = hd_conv__owner_write(st, me, adopt_txn_fn, &t, err)) < 0) {
		hd_strv_free(t.agents, t.nagents);
		return rc;
	}
	if (t.adopted)
		hd_log_info("conversation %s resumed (was %s; %lld pending)",
		    id, old_owner != NULL ? old_owner : "released",
		    (long long)t.pending);
	*adopted = t.adopted;
	*agents = t.agents;
	*nagents = t.nagents;
	*pending = t.pending;
	return 0;
}

static int
disown_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	const hd_conv_owner *me = payload;

	return hd_convstore_disown(st, me->token, err);
}

int
hd_conv__disown(hd_store *st, const hd_conv_owner *me, hd_err *err)
{
	return hd_conv__owner_write(st, me, disown_txn_fn, (void *)me, err);
}
