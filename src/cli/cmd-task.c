/*
 * cmd-task.c -- `huddle task ...`: the board (SPEC 4) from the shell.
 * Every subcommand (create, list, show, claim, auto-claim, assign,
 * delegate, start, complete, fail, release, cancel, retry, link, comment,
 * verdict, verify)
 * is an entry of the operation table (src/ops/ops-board.c) made into a
 * command by cli-ops.c; what is here is how each is shown
 * (hd_cli_renders_task): list as a table, or with --tree each subtask
 * under its parent. Without --as the actor is "user".
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "cli.h"

/* A JSON id array as "3,4"; NULL when empty. */
static const char *
ids_json(char *buf, size_t len, const json_t *ids)
{
	const json_t *v;
	size_t i, off = 0;

	if (json_array_size(ids) == 0)
		return NULL;
	buf[0] = '\0';
	json_array_foreach (ids, i, v)
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%lld",
			    i ? "," : "", (long long)json_integer_value(v));
	return buf;
}

static const char *
jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long long
jint(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* A task's verification (verify.h), for people. */
static void
print_verify(const json_t *v)
{
	const char *s;

	if (v == NULL)
		return;
	if ((s = jstr(v, "gate")) != NULL)
		printf("  gate:        %s (%s, %llds)\n", s,
		    jstr(v, "workdir") ? jstr(v, "workdir") : "owner's workdir",
		    jint(v, "gate_timeout_s"));
	if ((s = jstr(v, "critic")) != NULL)
		printf("  critic:      %s (%llds)\n", s, jint(v, "critic_timeout_s"));
	printf("  verifying:   %s, %lld attempt%s\n", jstr(v, "state"),
	    jint(v, "attempts"), jint(v, "attempts") == 1 ? "" : "s");
	if (json_is_integer(json_object_get(v, "gate_exit")))
		printf("  gate exit:   %lld\n", jint(v, "gate_exit"));
	if ((s = jstr(v, "error")) != NULL)
		printf("  error:       %s\n", s);
	if ((s = jstr(v, "verdict")) != NULL)
		printf("  verdict:     %s by %s%s%s\n", s, jstr(v, "verdict_by"),
		    jstr(v, "reasons") ? ": " : "",
		    jstr(v, "reasons") ? jstr(v, "reasons") : "");
}

/* A task as hd_task_to_json has it, for people. */
static void
print_task(const json_t *t)
{
	char when[32], deps[256], blocked[256], *meta;
	const json_t *cs = json_object_get(t, "comments"), *cm;
	const char *owner = jstr(t, "owner"), *done;
	int failed = strcmp(jstr(t, "status"), "failed") == 0;
	size_t i;

	printf("task #%lld: %s\n", jint(t, "id"), jstr(t, "subject"));
	printf("  team:        %s\n", jstr(t, "team_id"));
	printf("  status:      %s\n", jstr(t, "status"));
	printf("  owner:       %s\n", owner ? owner : "(none)");
	printf("  priority:    %lld\n", jint(t, "priority"));
	if (jstr(t, "active_form") != NULL)
		printf("  active form: %s\n", jstr(t, "active_form"));
	if (jstr(t, "description")[0] != '\0')
		printf("  description: %s\n", jstr(t, "description"));
	printf("  depends on:  %s\n",
	    json_array_size(json_object_get(t, "depends_on"))
		? ids_json(deps, sizeof(deps), json_object_get(t, "depends_on"))
		: "(nothing)");
	if (jint(t, "parent_id") > 0)
		printf("  parent:      #%lld\n", jint(t, "parent_id"));
	if (json_array_size(json_object_get(t, "children")) > 0)
		printf("  subtasks:    %s\n",
		    ids_json(deps, sizeof(deps), json_object_get(t, "children")));
	printf("  blocked by:  %s\n",
	    json_array_size(json_object_get(t, "blocked_by"))
		? ids_json(blocked, sizeof(blocked),
		      json_object_get(t, "blocked_by"))
		: "(nothing)");
	if (json_object_size(json_object_get(t, "metadata")) > 0) {
		meta = json_dumps(json_object_get(t, "metadata"),
		    JSON_COMPACT | JSON_SORT_KEYS);
		printf("  metadata:    %s\n", meta ? meta : "{}");
		free(meta);
	}
	done = jstr(t, failed ? "reason" : "result");
	if (done != NULL)
		printf("  %s %s\n", failed ? "reason:     " : "result:     ",
		    done);
	print_verify(json_object_get(t, "verify"));
	hd_cli_time(when, sizeof(when), jint(t, "created_at"));
	printf("  created:     %s by %s\n", when,
	    jstr(t, "created_by") ? jstr(t, "created_by") : "(unknown)");
	if (cs != NULL) {
		printf("  comments (%zu):\n", json_array_size(cs));
		json_array_foreach (cs, i, cm) {
			hd_cli_time(when, sizeof(when), jint(cm, "created_at"));
			printf("    %s %s: %s\n", when, jstr(cm, "author"),
			    jstr(cm, "body"));
		}
	}
}

/* How many of the tasks a completion made ready its line names. */
#define READY_NAMED 10

/* Append "; now ready: #7, #9" (the first READY_NAMED ids, then
 * " and 3 more") to buf when completing t made tasks ready. */
static void
append_ready(char *buf, size_t len, const json_t *t)
{
	const json_t *ub = json_object_get(t, "unblocked");
	size_t i, off = strlen(buf), n = json_array_size(ub),
		  named = n < READY_NAMED ? n : READY_NAMED;

	for (i = 0; i < named && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s#%lld",
		    i ? ", " : "; now ready: ",
		    (long long)json_integer_value(json_array_get(ub, i)));
	if (n > named && off < len)
		snprintf(buf + off, len - off, " and %zu more", n - named);
}

/* Render a task after a change: JSON, or one line "task #5 "S" <what>". */
static int
done_task(hd_cli *c, const json_t *t, const char *what)
{
	if (c->json)
		hd_cli_json(json_deep_copy(t));
	else
		printf("task #%lld \"%s\" %s\n", jint(t, "id"),
		    jstr(t, "subject"), what);
	return HD_EXIT_OK;
}

/* ---- the table's task commands, shown (cli-ops.c) ---- */

static int
render_created(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *t = json_object_get(result, "task");

	(void)args;
	if (c->json)
		hd_cli_json(json_deep_copy(t));
	else
		printf("created task #%lld \"%s\" in team %s\n", jint(t, "id"),
		    jstr(t, "subject"), jstr(t, "team_id"));
	return HD_EXIT_OK;
}

/* The listed task of id, or NULL. */
static const json_t *
listed(const json_t *tasks, long long id)
{
	const json_t *t;
	size_t i;

	json_array_foreach (tasks, i, t)
		if (jint(t, "id") == id)
			return t;
	return NULL;
}

/* --tree: t, then its subtasks among the listed ones (ids ascending),
 * each level indented two more spaces and marked with an arrow. */
static void
print_tree(const json_t *tasks, const json_t *t, int depth)
{
	const json_t *ch, *id;
	const char *owner = jstr(t, "owner");
	size_t i;

	printf("%*s%s#%lld [%s] %s%s%s%s\n", depth * 2, "",
	    depth > 0 ? "\xe2\x86\xb3 " : "", jint(t, "id"), jstr(t, "status"),
	    jstr(t, "subject"), owner ? " (" : "", owner ? owner : "",
	    owner ? ")" : "");
	if (depth > HD_TEAM_TASK_DEPTH_MAX) /* a forest: cannot happen */
		return;
	json_array_foreach (json_object_get(t, "children"), i, id)
		if ((ch = listed(tasks, (long long)json_integer_value(id))) !=
		    NULL)
			print_tree(tasks, ch, depth + 1);
}

/* The listed tasks as a tree: those whose parent is not listed (roots
 * among them), oldest first, each with its subtasks under it. */
static void
print_forest(const json_t *tasks)
{
	size_t i;

	for (i = json_array_size(tasks); i-- > 0;) {
		const json_t *t = json_array_get(tasks, i);
		long long parent = jint(t, "parent_id");

		if (parent > 0 && listed(tasks, parent) != NULL)
			continue;
		print_tree(tasks, t, 0);
	}
}

static int
render_list(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *tasks = json_object_get(result, "tasks"), *t;
	hd_table *tab;
	size_t i;

	if (c->json)
		hd_cli_json(json_deep_copy(tasks));
	else if (json_array_size(tasks) == 0)
		printf("no tasks\n");
	else if (json_is_true(json_object_get(args, "tree")))
		print_forest(tasks);
	else {
		tab = hd_table_new(
		    6, "ID", "STATUS", "OWNER", "PRI", "SUBJECT", "BLOCKED BY");
		json_array_foreach (tasks, i, t) {
			char id[24], pri[24], blocked[256];

			snprintf(id, sizeof(id), "%lld", jint(t, "id"));
			snprintf(pri, sizeof(pri), "%lld", jint(t, "priority"));
			hd_table_row(tab, id, jstr(t, "status"), jstr(t, "owner"),
			    pri, jstr(t, "subject"),
			    ids_json(blocked, sizeof(blocked),
				json_object_get(t, "blocked_by")));
		}
		hd_table_print(tab, stdout, "");
		hd_table_free(tab);
	}
	return HD_EXIT_OK;
}

static int
render_show(hd_cli *c, const json_t *result, const json_t *args)
{
	(void)args;
	if (c->json)
		hd_cli_json(json_deep_copy(json_object_get(result, "task")));
	else
		print_task(json_object_get(result, "task"));
	return HD_EXIT_OK;
}

/* claim, delegate, assign: "<how> <owner>". */
static int
render_owned(hd_cli *c, const json_t *result, const char *how)
{
	const json_t *t = json_object_get(result, "task");
	char what[128];

	snprintf(what, sizeof(what), "%s %s", how, jstr(t, "owner"));
	return done_task(c, t, what);
}

static int
render_claimed(hd_cli *c, const json_t *result, const json_t *args)
{
	(void)args;
	return render_owned(c, result, "claimed by");
}

static int
render_delegated(hd_cli *c, const json_t *result, const json_t *args)
{
	(void)args;
	return render_owned(c, result, "delegated to");
}

/* assign ID AGENT, or --auto: the board picked, and says why. */
static int
render_assigned(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *t = json_object_get(result, "task");
	const char *why = jstr(result, "picked_because");
	json_t *j;
	char what[256];

	(void)args;
	if (why == NULL)
		return render_owned(c, result, "assigned to");
	if (c->json) {
		j = json_deep_copy(t);
		json_object_set_new(
		    j, "assignee", json_string(jstr(result, "assignee")));
		json_object_set_new(j, "picked_because", json_string(why));
		hd_cli_json(j);
		return HD_EXIT_OK;
	}
	snprintf(what, sizeof(what), "assigned to %s (auto: %s)",
	    jstr(t, "owner"), why);
	return done_task(c, t, what);
}

/* start, complete, fail, release, cancel, retry: one shape. */
static int
render_moved(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *t = json_object_get(result, "task");
	char what[384];

	(void)args;
	snprintf(what, sizeof(what), "is now %s", jstr(t, "status"));
	append_ready(what, sizeof(what), t);
	return done_task(c, t, what);
}

/* verify: where the run left the task (its error when it failed). */
static int
render_verified(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *t = json_object_get(result, "task");
	const json_t *v = json_object_get(t, "verify");
	char what[768];

	(void)args;
	if (v != NULL && jstr(v, "error") != NULL &&
	    strcmp(jstr(v, "state"), "failed") == 0)
		snprintf(what, sizeof(what), "is still %s: %s",
		    jstr(t, "status"), jstr(v, "error"));
	else if (strcmp(jstr(t, "status"), "in_progress") == 0 && v != NULL &&
		 jstr(v, "verdict_by") != NULL)
		snprintf(what, sizeof(what), "was rejected by %s; back to %s",
		    jstr(v, "verdict_by"), jstr(t, "owner"));
	else
		snprintf(what, sizeof(what), "is now %s", jstr(t, "status"));
	return done_task(c, t, what);
}

static int
render_linked(hd_cli *c, const json_t *result, const json_t *args)
{
	char what[64];

	snprintf(what, sizeof(what), "depends on #%lld", jint(args, "depends_on"));
	return done_task(c, json_object_get(result, "task"), what);
}

static int
render_commented(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *cm = json_object_get(result, "comment");

	if (c->json)
		hd_cli_json(json_deep_copy(cm));
	else
		printf("commented on task #%lld as %s\n", jint(args, "task_id"),
		    jstr(cm, "author"));
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_task[] = {
    {"task.create", render_created},
    {"task.list", render_list},
    {"task.get", render_show},
    {"task.claim", render_claimed},
    {"task.auto_claim", render_claimed},
    {"task.assign", render_assigned},
    {"task.delegate", render_delegated},
    {"task.start", render_moved},
    {"task.complete", render_moved},
    {"task.fail", render_moved},
    {"task.release", render_moved},
    {"task.cancel", render_moved},
    {"task.retry", render_moved},
    {"task.link", render_linked},
    {"task.comment", render_commented},
    {"task.verdict", render_moved},
    {"task.verify", render_verified},
    {NULL, NULL},
};

/* Every subcommand is the table's (cli-ops.c). */
static const hd_cli_cmd task_subs[] = {
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_task = {
    .name = "task",
    .summary = "The board: create, claim and move tasks",
    .subs = task_subs,
};
