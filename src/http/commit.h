/*
 * commit.h -- the server's group committer for room posts (commit.c).
 */
#ifndef HD_COMMIT_H
#define HD_COMMIT_H

#include <pthread.h>

#include <huddle/huddle.h>

typedef struct hd_committer hd_committer;

/* A committer for the database under home. */
int hd_committer_start(hd_committer **out, const char *home, hd_err *err);

/* Queue one post and return once the transaction holding it committed;
 * st is the calling thread's connection, used when this thread ends up
 * leading the batch. Same contract and errors as hd_room_post. */
int hd_committer_post(hd_committer *c, hd_store *st, hd_post **out,
    const char *team, const char *kind, const char *author, const char *body,
    hd_err *err);

/* Free (after every poster has returned). NULL-safe. */
void hd_committer_stop(hd_committer *c);

#endif
