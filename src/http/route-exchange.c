/*
 * route-exchange.c -- POST /api/team-chat/exchange (SPEC 11): run one
 * bounded exchange (SPEC 8) and answer when it ends. Compatibility shape:
 *   {teamId, stimulus?, firstSpeakers?, maxExchangeTurns?} ->
 *   200 {"ok":true,"roomId","result":{"turnsTaken","endedReason",
 *        "speakers"}}
 *   400 `teamId is required`; 404 `team not found`;
 *   409 `an exchange is already running for this room`;
 *   422 for the other refusals (no agents, unknown first speaker,
 *   budget_paused:team|agent, ...).
 *  (1) An exchange runs for minutes: it runs on a thread of its own with
 *      the connection suspended (hd_http_defer), never on MHD's workers.
 *  (2) A client that disconnects aborts the exchange between turns; a
 *      server that stops aborts it between turns and stops the running
 *      turn too (the watch copies the server's flag into the turn's).
 *  (3) Cancel (cancel.h): POST /api/teams/<team>/exchange/cancel asks
 *      the exchange running in the team's room (whichever process runs
 *      it) to stop; it stops its running turn and ends `cancelled` (the
 *      endedReason its own request gets, and turn_bound_hit's reason).
 *      Answered once the room is free: 200 {"ok":true,"roomId",
 *      "status":"cancelled"}, or after CANCEL_WAIT_MS 202 with "status":
 *      "cancelling"; 404 `team "x" not found`; 409 `no exchange is
 *      running in team dev's room`.
 */
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define HD_LOG_COMPONENT "http"
#include <huddle/log.h>
#include <huddle/cancel.h>
#include <huddle/exchange.h>

typedef struct exch_job {
	char *team;
	char *stimulus; /* or NULL */
	char **first;
	size_t nfirst;
	int has_max;
	int64_t max_turns;
	int port; /* so exec agents get attach URLs to this server (0 under
		     TLS: they attach over stdio) */
	atomic_int cancel;     /* set by the watch (3) */
	atomic_int turn_abort; /* set by the watch: a cancel, a stop (2) */
} exch_job;

static void
exch_job_free(void *payload)
{
	exch_job *j = payload;
	size_t i;

	if (j == NULL)
		return;
	free(j->team);
	free(j->stimulus);
	for (i = 0; i < j->nfirst; i++)
		free(j->first[i]);
	free(j->first);
	free(j);
}

static void
exch_run(hd_http_req *r, void *payload)
{
	exch_job *j = payload;
	hd_exchange_spec spec;
	hd_exchange_result res;
	hd_exchange_watch *watch = NULL;
	hd_err err = HD_ERR_INIT;
	int rc;

	memset(&spec, 0, sizeof(spec));
	spec.team = j->team;
	spec.stimulus = j->stimulus;
	spec.first_speakers = (const char *const *)j->first;
	spec.nfirst = j->nfirst;
	spec.max_turns = j->has_max ? &j->max_turns : NULL;
	spec.abort = r->cancel;
	spec.abort_turn = r->stopping;
	atomic_init(&j->cancel, 0);
	atomic_init(&j->turn_abort, 0);
	if (hd_exchange_watch_start(&watch, hd_store_home(r->st), j->team,
		&j->cancel, &j->turn_abort, r->stopping, &err) == 0) {
		spec.cancel = &j->cancel;
		spec.abort_turn = &j->turn_abort;
	} else /* not cancellable; the server's stop still reaches it */
		hd_log_warn("%s", err.msg);
	spec.mcp_port = j->port;
	rc = hd_exchange_run(&res, r->st, &spec, &err);
	hd_exchange_watch_stop(watch);
	if (rc < 0) {
		if (err.code == HD_ENOTFOUND)
			hd_http_error(r, 404, "team not found");
		else
			hd_http_fail(r, &err);
	} else
		hd_http_json(r, 200,
		    json_pack("{s:b, s:s, s:o}", "ok", 1, "roomId", res.room_id,
			"result", hd_exchange_result_to_json(&res)));
	hd_exchange_result_dispose(&res);
}

#define CANCEL_WAIT_MS 10000

static void
cancel_wait(hd_http_req *r, void *payload)
{
	const char *team = payload;
	char room[HD_ROOM_ID_MAX];
	hd_err err = HD_ERR_INIT;
	int rc = hd_exchange_cancel_wait(r->st, team, CANCEL_WAIT_MS, &err);

	hd_room_id(room, sizeof(room), team);
	if (rc < 0 && rc != HD_ETIMEOUT)
		hd_http_fail(r, &err);
	else
		hd_http_json(r, rc == 0 ? 200 : 202,
		    json_pack("{s:b, s:s, s:s}", "ok", 1, "roomId", room,
			"status", rc == 0 ? "cancelled" : "cancelling"));
}

static int
route_cancel(hd_http_req *r)
{
	hd_err err = HD_ERR_INIT;
	char *team;

	if (hd_exchange_cancel(NULL, r->st, r->params[0], NULL, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	if ((team = strdup(r->params[0])) == NULL) {
		hd_http_error(r, 500, "out of memory");
		return 0;
	}
	hd_http_defer(r, cancel_wait, team, free);
	return 0;
}

static int
route_exchange(hd_http_req *r)
{
	json_t *body, *team, *stim, *first, *max, *v;
	exch_job *j = NULL;
	size_t i;

	if ((body = hd_http_body_object(r)) == NULL)
		return 0;
	team = json_object_get(body, "teamId");
	stim = json_object_get(body, "stimulus");
	first = json_object_get(body, "firstSpeakers");
	max = json_object_get(body, "maxExchangeTurns");
	if (!json_is_string(team) || json_string_length(team) == 0) {
		hd_http_error(r, 400, "teamId is required");
		goto done;
	}
	if (stim != NULL && !json_is_null(stim) && !json_is_string(stim)) {
		hd_http_error(r, 400, "stimulus must be a string");
		goto done;
	}
	if (first != NULL && !json_is_null(first)) {
		if (!json_is_array(first))
			goto bad_first;
		json_array_foreach (first, i, v) {
			if (!json_is_string(v))
				goto bad_first;
		}
	}
	if (max != NULL && !json_is_null(max) && !json_is_integer(max)) {
		hd_http_error(r, 400, "maxExchangeTurns must be an integer");
		goto done;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		goto oom;
	j->port = hd_http_local_mcp_port(r->srv);
	if ((j->team = strdup(json_string_value(team))) == NULL)
		goto oom;
	if (json_is_string(stim) &&
	    (j->stimulus = strdup(json_string_value(stim))) == NULL)
		goto oom;
	if (json_is_array(first) && json_array_size(first) > 0) {
		if ((j->first = calloc(
			 json_array_size(first), sizeof(*j->first))) == NULL)
			goto oom;
		json_array_foreach (first, i, v) {
			if ((j->first[i] = strdup(json_string_value(v))) ==
			    NULL)
				goto oom;
			j->nfirst++;
		}
	}
	if (json_is_integer(max)) {
		j->has_max = 1;
		j->max_turns = (int64_t)json_integer_value(max);
	}
	hd_http_defer(r, exch_run, j, exch_job_free); /* (1) */
	j = NULL;
	goto done;
bad_first:
	hd_http_error(r, 400, "firstSpeakers must be an array of agent ids");
	goto done;
oom:
	hd_http_error(r, 500, "out of memory");
done:
	exch_job_free(j);
	json_decref(body);
	return 0;
}

const hd_route hd_routes_exchange[] = {
    {"POST", "/api/team-chat/exchange", route_exchange},
    {"POST", "/api/teams/:team/exchange/cancel", route_cancel},
    {NULL, NULL, NULL},
};
