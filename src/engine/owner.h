/*
 * owner.h (private) -- who runs a piece of durable engine work, and
 * whether it still can: the conversation engine's conversations and the
 * supervisor's turns are each owned by one engine, named
 * "<pid>:<process start>:<nonce>", and taken over only once that engine
 * is gone. Nothing outside src/engine/ includes this.
 */
#ifndef HD_OWNER_H
#define HD_OWNER_H

#include <stdint.h>

typedef struct hd_owner_id {
	char token[80];
	int64_t pid;
	int64_t start; /* the process's start time (/proc/<pid>/stat) */
} hd_owner_id;

/* The start time of process pid (clock ticks since boot), 0 when it is
 * gone or a zombie, -1 when it cannot be told. */
int64_t hd_owner_proc_start(int64_t pid);

/* Name an engine of this process: its pid, its start time and nonce. */
void hd_owner_init(hd_owner_id *o, const char *nonce);

/* An engine of this process is alive from register to unregister. */
int hd_owner_register(const char *token);
void hd_owner_unregister(const char *token);

/*
 * 1 while owner can still work: in this process, while registered; in
 * another, while that process lives (same pid and start time, not a
 * zombie). A NULL owner or pid <= 0 (released) is not alive. Without a
 * start time only the pid can be asked: a zombie or a recycled pid then
 * reads alive until reaped or gone, which delays a take-over, never
 * doubles one.
 */
int hd_owner_alive(const char *owner, int64_t pid, int64_t start);

#endif
