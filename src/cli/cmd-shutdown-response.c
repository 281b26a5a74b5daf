/*
 * cmd-shutdown-response.c -- how `huddle shutdown-response` shows its
 * answer to a pending team shutdown (or to a shutdown_request sent one to
 * one): the command is the operation table's mail.shutdown_response
 * (src/ops/ops-mail.c, made a command by cli-ops.c); the answer goes to
 * whoever asked. Also holds the one-line description of a shutdown
 * request (its JSON, hd_shutdown_to_json) that `team shutdown` prints
 * too.
 */
#include <string.h>

#include "cli.h"

static const char *
jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void
print_names(FILE *f, const json_t *names)
{
	const json_t *v;
	size_t i;

	json_array_foreach (names, i, v)
		fprintf(f, "%s%s", i ? ", " : "", json_string_value(v));
}

void
hd_cli_shutdown_describe(FILE *f, const json_t *s)
{
	char span[32];
	const char *outcome = jstr(s, "outcome"), *team = jstr(s, "team");
	const json_t *approved = json_object_get(s, "approved");
	int64_t ms = json_integer_value(json_object_get(s, "deadline")) -
		     json_integer_value(json_object_get(s, "requested_at"));

	if (ms % 1000 == 0)
		snprintf(span, sizeof(span), "%lld s", (long long)(ms / 1000));
	else
		snprintf(span, sizeof(span), "%lld ms", (long long)ms);
	if (strcmp(outcome, "pending") == 0) {
		fprintf(f, "team %s is shutting down: request %s waits for ",
		    team, jstr(s, "request_id"));
		print_names(f, json_object_get(s, "pending"));
		fprintf(f, " to approve (timeout %s)\n", span);
	} else if (strcmp(outcome, "shutdown") == 0) {
		fprintf(f, "team %s is shut down", team);
		if (json_array_size(approved) > 0) {
			fprintf(f, " (approved by ");
			print_names(f, approved);
			fprintf(f, ")\n");
		} else
			fprintf(f, " (no member was working)\n");
	} else if (strcmp(outcome, "refused") == 0)
		fprintf(f,
		    "shutdown of team %s was refused by %s: %s; the team is "
		    "active again\n",
		    team, jstr(s, "refused_by") ? jstr(s, "refused_by") : "?",
		    jstr(s, "refusal_reason") ? jstr(s, "refusal_reason") : "");
	else if (strcmp(outcome, "timeout") == 0) {
		fprintf(f, "shutdown of team %s timed out: no answer from ",
		    team);
		print_names(f, json_object_get(s, "pending"));
		fprintf(f, " within %s; the team is active again\n", span);
	} else
		fprintf(f, "shutdown request %s of team %s was %s\n",
		    jstr(s, "request_id"), team, outcome);
}

static int
render_shutdown_response(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *s = json_object_get(result, "shutdown");
	const char *rid = jstr(result, "request_id"), *by = jstr(result, "by");
	const char *to = jstr(result, "to");
	int approve = json_is_true(json_object_get(result, "approve"));

	(void)args;
	if (c->json)
		/* a one-to-one request has no team record: the answer */
		hd_cli_json(!json_is_null(s)
				? json_deep_copy(s)
				: json_pack("{s:s, s:s, s:s?, s:b}", "request_id",
				      rid, "by", by, "to", to, "approve",
				      approve));
	else if (!json_is_null(s)) {
		printf("%s %s as %s\n", approve ? "approved" : "refused", rid,
		    by);
		hd_cli_shutdown_describe(stdout, s);
	} else
		printf("%s %s as %s; the answer went to %s\n",
		    approve ? "approved" : "refused", rid, by,
		    to != NULL ? to : "nobody");
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_shutdown[] = {
    {"mail.shutdown_response", render_shutdown_response},
    {NULL, NULL},
};
