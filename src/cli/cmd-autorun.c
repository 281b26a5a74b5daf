/*
 * cmd-autorun.c -- the supervisor by hand: `huddle agent wake|park|unpark
 * AGENT`, `huddle team pause|resume TEAM`, `huddle team update TEAM
 * --autorun on|off` (its settings part), and the autorun part of `huddle
 * team state`. Each goes through supervisor.h or autorun.h; none needs a
 * server running (a wake waits for one, and says so).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/supervisor.h>

#include <http/http.h>
#include "cli.h"

/* A note on stderr when no server runs the supervisor on this home. */
static void
note_no_server(hd_store *st)
{
	char host[256];
	int port;

	if (!hd_http_presence_find(
		hd_store_home(st), host, sizeof(host), &port))
		fprintf(stderr,
		    "note: no 'huddle serve' seems to run on this home; the "
		    "wake waits for one\n");
}

int
hd_cli_agent_wake(hd_cli *c)
{
	hd_store *st;
	int64_t id = 0;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_supervisor_wake(
		&id, st, c->argv[0], hd_cli_opt_str(c, "note"), &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(json_pack(
		    "{s:s, s:I}", "agent", c->argv[0], "wake", (json_int_t)id));
	else {
		printf("queued wake %lld for %s\n", (long long)id, c->argv[0]);
		note_no_server(st);
	}
	return HD_EXIT_OK;
}

static int
park_common(hd_cli *c, int park)
{
	hd_store *st;
	int changed = 0;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if ((park ? hd_supervisor_park(&changed, st, c->argv[0],
			hd_cli_opt_str(c, "reason"), &c->err)
		  : hd_supervisor_unpark(&changed, st, c->argv[0], &c->err)) <
	    0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(json_pack("{s:s, s:b, s:b}", "agent", c->argv[0],
		    "parked", park, "changed", changed));
	else if (changed)
		printf("%s %s\n", c->argv[0], park ? "parked" : "unparked");
	else
		printf("%s was already %s\n", c->argv[0],
		    park ? "parked" : "unparked");
	return HD_EXIT_OK;
}

int
hd_cli_agent_park(hd_cli *c)
{
	return park_common(c, 1);
}

int
hd_cli_agent_unpark(hd_cli *c)
{
	return park_common(c, 0);
}

static int
pause_common(hd_cli *c, int paused)
{
	hd_autorun_spec spec = HD_AUTORUN_SPEC_INIT;
	hd_autorun ar;
	hd_store *st;

	spec.paused = paused;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_autorun_set(&ar, st, c->argv[0], &spec, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		json_t *o = hd_autorun_to_json(&ar);

		json_object_set_new(o, "team", json_string(c->argv[0]));
		hd_cli_json(o);
	} else
		printf("team %s %s%s\n", c->argv[0],
		    paused ? "paused: nobody is woken until 'huddle team "
			     "resume'"
			   : "resumed",
		    !paused && !ar.on ? " (autorun is off: turn it on with "
					"'huddle team update --autorun on')"
				      : "");
	return HD_EXIT_OK;
}

int
hd_cli_team_pause(hd_cli *c)
{
	return pause_common(c, 1);
}

int
hd_cli_team_resume(hd_cli *c)
{
	return pause_common(c, 0);
}

int
hd_cli_autorun_opts(hd_cli *c, hd_autorun_spec *spec, int *given)
{
	const char *on = hd_cli_opt_str(c, "autorun");
	int rc;

	*spec = (hd_autorun_spec)HD_AUTORUN_SPEC_INIT;
	*given = 0;
	if (on != NULL) {
		if (strcmp(on, "on") == 0)
			spec->on = 1;
		else if (strcmp(on, "off") == 0)
			spec->on = 0;
		else
			return hd_cli_usage(c,
			    "--autorun must be on or off, not \"%.64s\"", on);
		*given = 1;
	}
	if ((rc = hd_cli_opt_int(c, "turns-per-hour", 1,
		 HD_AUTORUN_TURNS_PER_HOUR_MAX, &spec->turns_per_hour)) != 0 ||
	    (rc = hd_cli_opt_int(c, "park-after", 1, HD_AUTORUN_PARK_AFTER_MAX,
		 &spec->park_after)) != 0)
		return rc;
	*given |= spec->turns_per_hour != 0 || spec->park_after != 0;
	return 0;
}

static const char *
str_or(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : dflt;
}

/* "message", "task #5", ... for a queued wake or a turn's reason. */
static void
reason_text(char *out, size_t len, const json_t *w)
{
	json_t *ref = json_object_get(w, "ref");
	const char *r = str_or(w, "reason", "?");

	if (json_is_integer(ref) && strcmp(r, "message") != 0)
		snprintf(out, len, "%s #%lld", r,
		    (long long)json_integer_value(ref));
	else
		snprintf(out, len, "%s", r);
}

static void
print_turn(const char *label, const json_t *t)
{
	char when[32], why[64];
	const json_t *rs = json_object_get(t, "reasons"), *r;
	size_t i;

	hd_cli_time(when, sizeof(when),
	    json_integer_value(json_object_get(t, "started_at")));
	printf("    %s: turn %lld, %s at %s, for", label,
	    (long long)json_integer_value(json_object_get(t, "id")),
	    str_or(t, "status", "?"), when);
	json_array_foreach (rs, i, r) {
		reason_text(why, sizeof(why), r);
		printf("%s %s", i ? "," : "", why);
	}
	if (json_is_integer(json_object_get(t, "progress")))
		printf("; %lld board/mail change%s",
		    (long long)json_integer_value(
			json_object_get(t, "progress")),
		    json_integer_value(json_object_get(t, "progress")) == 1
			? ""
			: "s");
	if (json_is_string(json_object_get(t, "error")))
		printf("; error: %s", str_or(t, "error", ""));
	putchar('\n');
}

void
hd_cli_autorun_print(const json_t *state)
{
	const json_t *ar = json_object_get(state, "autorun");
	const json_t *agents = json_object_get(state, "agents"), *a, *q, *w;
	char why[64];
	size_t i, j;

	printf("\nAutorun: %s%s (%lld turns/hour per agent, parked after %lld "
	       "idle turns)\n",
	    json_is_true(json_object_get(ar, "on")) ? "on" : "off",
	    json_is_true(json_object_get(ar, "paused")) ? ", paused" : "",
	    (long long)json_integer_value(
		json_object_get(ar, "turns_per_hour")),
	    (long long)json_integer_value(json_object_get(ar, "park_after")));
	json_array_foreach (agents, i, a) {
		q = json_object_get(a, "queue");
		printf("  %s (%s, %s): %lld turn%s in the last hour",
		    str_or(a, "agent", "?"), str_or(a, "runtime", "?"),
		    str_or(a, "status", "?"),
		    (long long)json_integer_value(
			json_object_get(a, "turns_last_hour")),
		    json_integer_value(json_object_get(a, "turns_last_hour")) ==
			    1
			? ""
			: "s");
		if (json_is_string(json_object_get(a, "parked")))
			printf("; parked: %s", str_or(a, "parked", ""));
		putchar('\n');
		if (json_array_size(q) > 0) {
			printf("    queue:");
			json_array_foreach (q, j, w) {
				reason_text(why, sizeof(why), w);
				printf("%s %s%s", j ? "," : "", why,
				    json_is_true(json_object_get(w, "resumed"))
					? " (resumed)"
					: "");
			}
			putchar('\n');
		}
		if (json_is_object(json_object_get(a, "running")))
			print_turn("running", json_object_get(a, "running"));
		if (json_is_object(json_object_get(a, "last_turn")))
			print_turn("last", json_object_get(a, "last_turn"));
	}
}
