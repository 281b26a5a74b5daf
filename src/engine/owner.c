/*
 * owner.c -- engine liveness (owner.h), shared by the conversation engine
 * (conv_engine.c) and the supervisor (supervisor.c).
 *  (1) The registry is this process's alone, a short list under one
 *      mutex: an engine registers its token before it takes any work and
 *      unregisters it after it released all of it, so work found owned by
 *      a token of this process that is not registered was left by an
 *      engine that stopped, and may be taken over.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/util.h>

#include "owner.h"

struct reg {
	struct reg *next;
	char token[80];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg *regs;

int64_t
hd_owner_proc_start(int64_t pid)
{
	return hd_proc_start(pid); /* util/host.c */
}

void
hd_owner_init(hd_owner_id *o, const char *nonce)
{
	o->pid = (int64_t)getpid();
	o->start = hd_owner_proc_start(o->pid);
	if (o->start < 0)
		o->start = 0;
	snprintf(o->token, sizeof(o->token), "%lld:%lld:%s", (long long)o->pid,
	    (long long)o->start, nonce);
}

int
hd_owner_register(const char *token)
{
	struct reg *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -1;
	snprintf(r->token, sizeof(r->token), "%s", token);
	pthread_mutex_lock(&reg_lock);
	r->next = regs;
	regs = r;
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

void
hd_owner_unregister(const char *token)
{
	struct reg **p, *r = NULL;

	pthread_mutex_lock(&reg_lock);
	for (p = &regs; *p != NULL; p = &(*p)->next)
		if (strcmp((*p)->token, token) == 0) {
			r = *p;
			*p = r->next;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	free(r);
}

int
hd_owner_alive(const char *owner, int64_t pid, int64_t start)
{
	const struct reg *r;
	int64_t now_start;
	int alive = 0;

	if (owner == NULL || pid <= 0)
		return 0; /* released */
	if (pid == (int64_t)getpid()) {
		pthread_mutex_lock(&reg_lock);
		for (r = regs; r != NULL && !alive; r = r->next)
			alive = strcmp(r->token, owner) == 0;
		pthread_mutex_unlock(&reg_lock);
		return alive;
	}
	if (start <= 0 || (now_start = hd_owner_proc_start(pid)) < 0)
		return kill((pid_t)pid, 0) == 0 || errno == EPERM;
	return now_start != 0 && now_start == start;
}
