/*
 * room_int.h -- what the room's files share.
 */
#ifndef HD_ROOM_INT_H
#define HD_ROOM_INT_H

#include <huddle/room.h>

/* hd_room_post without the batching (room.c): one post, in its own write
 * transaction or the caller's open one. Same contract and errors. */
int hd_room__post_one(hd_post **out, hd_store *st, const char *team,
    const char *kind, const char *author, const char *body, hd_err *err);

/* Delete room's lock row, whoever holds it (lock.c; team removal). */
int hd_room__lock_purge(hd_store *st, const char *room, hd_err *err);

#endif
