/*
 * shutdown.h -- the team shutdown protocol (SPEC 6).
 *
 * States of one shutdown request (hd_shutdown.outcome), each transition
 * made inside one BEGIN IMMEDIATE transaction, so it holds across
 * processes:
 *
 *   (start) -> shutdown    no member but the leader is `working`: the team
 *                          goes `shutdown` at once
 *   (start) -> pending     the team goes `shutting_down`; each working
 *                          member (the leader excepted: it asked) is set
 *                          `shutdown_requested` and gets one
 *                          `shutdown_request` carrying the request id
 *   pending -> pending     a member approves (a `shutdown_response` with
 *                          approve, or an `idle` message, which going
 *                          idle sends): it is set `shutdown`
 *   pending -> shutdown    the last pending member approved: the team goes
 *                          `shutdown`
 *   pending -> refused     a member refuses (with a reason)   } the team
 *   pending -> timeout     no answer by the deadline          } goes back to
 *                                                             } `active`
 *   pending -> cancelled   the team's status was changed by hand
 *
 * On refused and timeout the members still asked go back to what their
 * work says (`working` in a turn or holding a started task, else `idle`:
 * activity.h; members that approved stay `shutdown`), and the leader gets the news
 * in its mailbox: the refusing member's own shutdown_response when it was
 * addressed to the leader, else a shutdown_response from "huddle"
 * (approve false, the reason; `timeout` for a timeout). Nothing is ever
 * deleted.
 *
 * A shutdown_request can also be sent one to one (hd_mailbox_send, with a
 * request_id of the sender's own): it has no record, no timeout and no
 * effect on the team. Its answer, a shutdown_response with the same
 * request_id, goes back to the one who asked, and an approval sets the
 * member who gives it `shutdown`.
 *
 * The request is stored durably in kv under "shutdown:<team>" as JSON and
 * kept after it ends (the latest request per team). Its timeout (default
 * 60 s) is evaluated whenever the team's state is read
 * (hd_team_snapshot_get), a shutdown_response or idle message arrives, a
 * new shutdown is asked for, and by hd_team_shutdown_wait.
 */
#ifndef HUDDLE_SHUTDOWN_H
#define HUDDLE_SHUTDOWN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "mailbox.h"
#include "store.h"

#define HD_SHUTDOWN_TIMEOUT_MS 60000
#define HD_SHUTDOWN_TIMEOUT_MAX_MS (24 * 3600 * 1000) /* one day */

typedef struct hd_shutdown {
	char *team_id;
	char *request_id;   /* "shutdown-" + 16 random hex digits */
	char *requested_by; /* the leader, or NULL when the team had none */
	char *reason;       /* why, as given; or NULL */
	char *outcome; /* pending | shutdown | refused | timeout | cancelled */
	char *refused_by;     /* refused: the member; else NULL */
	char *refusal_reason; /* refused: its reason; else NULL */
	int64_t requested_at;
	int64_t deadline;    /* requested_at + timeout */
	int64_t finished_at; /* 0 while pending */
	char **pending;      /* members asked who have not approved yet */
	size_t npending;
	char **approved; /* members who approved, in order */
	size_t napproved;
} hd_shutdown;

/*
 * Ask team to shut down as its leader, with an optional reason and a
 * timeout in milliseconds (0: HD_SHUTDOWN_TIMEOUT_MS; at most
 * HD_SHUTDOWN_TIMEOUT_MAX_MS). *out is the request: outcome "shutdown"
 * when nobody had to be asked, else "pending" with the members asked.
 * `team "x" not found`; `team "dev" is already shutting down (request
 * shutdown-...)` and `team "dev" is already shut down` (HD_EREFUSED).
 * Free *out with hd_shutdown_free().
 */
int hd_team_shutdown(hd_shutdown **out, hd_store *st, const char *team,
    const char *reason, int64_t timeout_ms, hd_err *err);

/*
 * The team's latest shutdown request after evaluating its timeout, or
 * *out = NULL when it never had one. `team "x" not found`.
 */
int hd_shutdown_get(
    hd_shutdown **out, hd_store *st, const char *team, hd_err *err);

/*
 * Who asked request_id, for agent to answer in team: the leader that made
 * the team's request when request_id is the team's (latest) request,
 * else the sender of the newest shutdown_request with that request_id
 * sent to agent one to one. *out is that agent (malloc'd; free() it), or
 * NULL when the team's request was made by a team without a leader (the
 * answer is then recorded, not sent: hd_shutdown_answer). `no shutdown
 * request "x" in team dev` (HD_ENOTFOUND) when it is neither;
 * `shutdown_response needs a request_id` (HD_EINVAL) without one.
 */
int hd_shutdown_requester(char **out, hd_store *st, const char *team,
    const char *agent, const char *request_id, hd_err *err);

/*
 * Send spec, a shutdown_response (spec->type NULL or
 * "shutdown_response"), from spec->from: to spec->to when given, else to
 * whoever asked (hd_shutdown_requester), found in the same transaction
 * that sends it. The rules of hd_mailbox_send apply; the asker of a
 * team request made without a leader gets nothing, the answer is recorded
 * and *out is NULL. *out (when non-NULL) is the message sent:
 * hd_message_free() it. Refusals: hd_shutdown_requester's, `no member "x"
 * in team dev` for the sender, and the content and shutdown_response
 * checks of hd_mailbox_send, all before anything is written.
 */
int hd_shutdown_answer(hd_message **out, hd_store *st,
    const hd_message_spec *spec, hd_err *err);

/*
 * Answer request_id as agent: approve = 1, or 0 with a reason, through
 * hd_shutdown_answer (so to whoever asked, the team's request or one
 * sent one to one) with the text `Approved shutdown request <id>` or
 * `Refused shutdown request <id>: <reason>`. *out (when non-NULL) is the
 * team's request afterwards, or NULL when request_id was a one-to-one
 * request. An answer to a request that already ended, or from a member
 * that was not asked or already approved, changes nothing.
 * `no shutdown request "x" in team dev` (HD_ENOTFOUND).
 */
int hd_shutdown_respond(hd_shutdown **out, hd_store *st, const char *team,
    const char *agent, const char *request_id, int approve, const char *reason,
    hd_err *err);

/* Evaluate the timeout of team's pending request now (see above). */
int hd_shutdown_expire(hd_store *st, const char *team, hd_err *err);

/*
 * Block until request_id of team is no longer pending and set *out to
 * it. timeout_ms bounds the wait (0: until the request's own deadline,
 * which always ends it). HD_ETIMEOUT `shutdown request shutdown-x of
 * team dev is still pending after 500 ms` when the bound runs out first;
 * `no shutdown request "x" in team dev` when it is not the team's latest
 * request.
 */
int hd_team_shutdown_wait(hd_shutdown **out, hd_store *st, const char *team,
    const char *request_id, int64_t timeout_ms, hd_err *err);

/* {"team","request_id","requested_by","reason","outcome","refused_by",
 * "refusal_reason","requested_at","deadline","finished_at","pending":[],
 * "approved":[]}. A new reference. */
json_t *hd_shutdown_to_json(const hd_shutdown *s);

/* NULL-safe. */
void hd_shutdown_free(hd_shutdown *s);

/* A team's shutdown record (team removal, src/lifecycle/remove.c, in its write
 * transaction): delete it. */
int hd_shutdown_team_purge(hd_store *st, const char *team, hd_err *err);

#endif
