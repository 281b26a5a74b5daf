/*
 * identity.c -- who a REST write acts as (SPEC 10.4, 11).
 *
 * A REST request acts as the human user ("user") unless it proves an
 * agent's identity with two headers:
 *   Huddle-Agent: <team>/<agent>
 *   Huddle-Signature: <sig>
 * where sig is the agent's attach signature -- the sig= of its attach URL
 * (`huddle attach AGENT --format json`), HMAC-SHA256 over (team, agent)
 * with the store's attach secret (team/attach.c) -- checked like an
 * attach URL's (hd_http_attach_ok: constant time, verified once per distinct triple).
 * The bearer token (server.c (4)) is a separate, server-wide check.
 *  (1) Without proof, a body may name no acting agent, or "user"; naming
 *      any agent (from, as, agent, ...) is refused with 403: a local
 *      process cannot act as the leader through REST.
 *  (2) With proof, the named agent must be the proven one (403 otherwise,
 *      "user" included); naming nobody acts as the proven agent.
 *  (3) Headers that are present but do not verify are refused with 403
 *      whatever the body names: a bad credential is never read as none.
 *      Only one of the two headers is refused the same way, and so is a
 *      Huddle-Agent that is not two valid names around one '/'
 *      (hd_http_credential_parse, pure, for tests/fuzz/fuzz-attach.c).
 *  (4) The proven agent must still be in the signed team (an id deleted
 *      and added again elsewhere keeps no old credential); one read of the
 *      agent. Whether it may write where the route writes -- the room,
 *      board or mailbox of a team -- the domain decides, as for every
 *      actor (a member of the team; 404/422 otherwise, the same answers
 *      the CLI and MCP get).
 * Callers: the write routes of route-chat.c, and
 * route-ops.c (the operation table's routes).
 */
#include <string.h>

#include <huddle/agent.h>
#include <huddle/util.h>

#include "http.h"

#define AGENT_HEADER "Huddle-Agent"
#define SIG_HEADER "Huddle-Signature"

int
hd_http_credential_parse(const char *who, char team[HD_HTTP_ACTOR_MAX],
    char agent[HD_HTTP_ACTOR_MAX])
{
	const char *slash = strchr(who, '/');
	size_t tlen = slash != NULL ? (size_t)(slash - who) : 0;

	team[0] = agent[0] = '\0';
	if (slash == NULL || tlen >= HD_HTTP_ACTOR_MAX ||
	    strlen(slash + 1) >= HD_HTTP_ACTOR_MAX)
		return -1;
	memcpy(team, who, tlen);
	team[tlen] = '\0';
	memcpy(agent, slash + 1, strlen(slash + 1) + 1);
	if (!hd_slug_ok(team) || !hd_slug_ok(agent)) {
		team[0] = agent[0] = '\0';
		return -1;
	}
	return 0;
}

/* The proof in r's headers: 1 with team and agent when both headers are
 * present and verify, 0 when neither is present, -1 after answering 403
 * (3). */
static int
proof(hd_http_req *r, char team[HD_HTTP_ACTOR_MAX],
    char agent[HD_HTTP_ACTOR_MAX])
{
	const char *who = hd_http_header(r, AGENT_HEADER);
	const char *sig = hd_http_header(r, SIG_HEADER);

	if (who == NULL && sig == NULL)
		return 0;
	if (who == NULL || sig == NULL) {
		hd_http_error(r, 403, "%s and %s go together: send both, or "
				      "neither to act as the user",
		    AGENT_HEADER, SIG_HEADER);
		return -1;
	}
	if (hd_http_credential_parse(who, team, agent) < 0) {
		hd_http_error(r, 403, "%s must be TEAM/AGENT", AGENT_HEADER);
		return -1;
	}
	if (!hd_http_attach_ok(r->srv, team, agent, sig)) {
		hd_http_error(r, 403, "%s is not the signature of %s/%s",
		    SIG_HEADER, team, agent);
		return -1;
	}
	return 1;
}

int
hd_http_acting(
    hd_http_req *r, const char *named, char actor[HD_HTTP_ACTOR_MAX])
{
	char pteam[HD_HTTP_ACTOR_MAX], pagent[HD_HTTP_ACTOR_MAX];
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;
	int proven, rc;

	actor[0] = '\0';
	if ((proven = proof(r, pteam, pagent)) < 0)
		return -1;
	if (!proven) {
		if (named == NULL || strcmp(named, HD_HTTP_USER) == 0) {
			memcpy(actor, HD_HTTP_USER, sizeof(HD_HTTP_USER));
			return 0;
		}
		/* (1); named may be anything a client sent: bounded */
		hd_http_error(r, 403,
		    "acting as \"%.64s\" needs its credential: send %s: "
		    "TEAM/AGENT and %s: <its attach sig>, or name no agent to "
		    "act as the user",
		    named, AGENT_HEADER, SIG_HEADER);
		return -1;
	}
	rc = hd_agent_get(&a, r->st, pagent, &err); /* (4) */
	if (rc == 0 && (a->team_id == NULL || strcmp(a->team_id, pteam) != 0))
		rc = hd_err_set(&err, HD_EREFUSED, "agent %s is no longer in "
						   "team %s", pagent, pteam);
	hd_agent_free(a);
	if (rc == HD_ENOTFOUND || rc == HD_EREFUSED) {
		hd_http_error(r, 403, "the credential is not valid: %s", err.msg);
		return -1;
	}
	if (rc < 0) {
		hd_http_fail(r, &err);
		return -1;
	}
	if (named != NULL && strcmp(named, pagent) != 0) { /* (2) */
		hd_http_error(r, 403,
		    "the credential is %s/%s's: it cannot act as \"%.64s\"",
		    pteam, pagent, named);
		return -1;
	}
	memcpy(actor, pagent, strlen(pagent) + 1);
	return 0;
}
