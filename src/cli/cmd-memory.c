/*
 * cmd-memory.c -- `huddle memory save|search|list|forget`: team memory
 * from the command line (docs/memory.md). All four are the operation
 * table's (src/ops/ops-memory.c, made commands by cli-ops.c); what is
 * here is how they are shown (hd_cli_renders_memory).
 *
 * Human output is one fact a line, `#<id> [<scope>] <text>`, with its tags
 * and expiry after it, control characters shown as spaces so a fact
 * cannot drive the terminal; --json is the operation's JSON (snake_case,
 * as REST answers it).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* text for people: control characters as spaces */
static void
print_clean(const char *s)
{
	for (; *s != '\0'; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
}

static void
print_fact(const json_t *f)
{
	const json_t *tags = json_object_get(f, "tags"), *t;
	json_int_t exp = json_integer_value(json_object_get(f, "expires_at"));
	char when[32];
	size_t i;

	printf("#%lld [%s] ",
	    (long long)json_integer_value(json_object_get(f, "id")),
	    json_string_value(json_object_get(f, "scope")));
	print_clean(json_string_value(json_object_get(f, "text")));
	json_array_foreach (tags, i, t)
		printf("%s#%s", i == 0 ? "  " : " ", json_string_value(t));
	if (exp > 0) {
		hd_cli_time(when, sizeof(when), exp);
		printf("  (expires %s)", when);
	}
	putchar('\n');
}

static int
render_saved(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *f = json_object_get(result, "fact");

	(void)args;
	if (c->json)
		hd_cli_json(json_incref((json_t *)f));
	else
		printf("saved fact #%lld (%s) in %s\n",
		    (long long)json_integer_value(json_object_get(f, "id")),
		    json_string_value(json_object_get(f, "scope")),
		    json_string_value(json_object_get(f, "team")));
	return HD_EXIT_OK;
}

static int
render_facts(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *facts = json_object_get(result, "facts"), *f;
	size_t i;

	(void)args;
	if (c->json)
		hd_cli_json(json_deep_copy(result));
	else if (json_array_size(facts) == 0)
		printf("no facts\n");
	else
		json_array_foreach (facts, i, f)
			print_fact(f);
	return HD_EXIT_OK;
}

static int
render_forgotten(hd_cli *c, const json_t *result, const json_t *args)
{
	(void)args;
	if (c->json)
		hd_cli_json(json_deep_copy(result));
	else
		printf("forgot fact #%lld\n",
		    (long long)json_integer_value(
			json_object_get(result, "forgotten")));
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_memory[] = {
    {"memory.save", render_saved},
    {"memory.search", render_facts},
    {"memory.list", render_facts},
    {"memory.forget", render_forgotten},
    {NULL, NULL},
};

static const hd_cli_cmd memory_subs[] = {
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_memory = {
    .name = "memory",
    .summary = "Save and search a team's memory: short facts",
    .subs = memory_subs,
};
