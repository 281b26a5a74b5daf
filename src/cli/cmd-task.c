/*
 * cmd-task.c -- `huddle task ...`: the board (SPEC 4) from the shell.
 * create and list are written here: each parses its arguments, calls one
 * hd_board_* function and renders the task. The other subcommands (show,
 * claim, auto-claim, assign, delegate, start, complete, fail, release,
 * cancel, retry, link, comment) are entries of the operation table
 * (src/ops/ops-board.c) made into commands by cli-ops.c; what is here of
 * them is how they are shown (hd_cli_renders_task). Without --as the
 * actor is "user".
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "cli.h"

/* Parse a task id argument; a usage error (exit 2) when malformed. */
static int
task_id_arg(hd_cli *c, const char *s, const char *what, int64_t *out)
{
	hd_err err = HD_ERR_INIT;

	if (hd_parse_i64(out, s, what, &err) < 0)
		return hd_cli_usage(c, "%s", err.msg);
	if (*out <= 0)
		return hd_cli_usage(c,
		    "%s must be a positive integer, not "
		    "\"%.64s\"",
		    what, s);
	return 0;
}

/* The actor: --as, else "user". */
static const char *
actor(hd_cli *c)
{
	const char *as = hd_cli_opt_str(c, "as");

	return as != NULL ? as : HD_BOARD_USER;
}

/* "3, 4" for a list of ids, into buf; NULL when there are none. */
static const char *
ids_text(char *buf, size_t len, const int64_t *ids, size_t n)
{
	size_t i, off = 0;

	if (n == 0)
		return NULL;
	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%lld",
		    i ? "," : "", (long long)ids[i]);
	return buf;
}

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

/* bsearch order of hd_board_list's answer: ids descending. */
static int
task_id_desc(const void *a, const void *b)
{
	int64_t x = ((const hd_task *)a)->id, y = ((const hd_task *)b)->id;

	return x > y ? -1 : x < y;
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

/* --parent ID into spec->parent_id (0 when not given). */
static int
parent_opt(hd_cli *c, hd_task_spec *spec)
{
	const char *p = hd_cli_opt_str(c, "parent");

	spec->parent_id = 0;
	return p != NULL ? task_id_arg(c, p, "--parent", &spec->parent_id) : 0;
}

static int
cmd_task_create(hd_cli *c)
{
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_store *st;
	json_t *meta = NULL;
	const char *const *kv;
	const char *deps = hd_cli_opt_str(c, "depends-on");
	int64_t ids[HD_TASK_DEPS_MAX], prio = 0;
	size_t nids = 0;
	int i, n, rc;

	spec.team = c->argv[0];
	spec.subject = c->argv[1];
	spec.description = hd_cli_opt_str(c, "description");
	spec.active_form = hd_cli_opt_str(c, "active-form");
	spec.created_by = actor(c);
	if ((rc = hd_cli_opt_int(c, "priority", INT32_MIN, INT32_MAX, &prio)))
		return rc;
	spec.priority = prio;
	if ((rc = parent_opt(c, &spec)) != 0)
		return rc;
	if (deps != NULL) {
		char *copy = strdup(deps), *tok, *save = NULL;

		if (copy == NULL)
			return hd_cli_usage(c, "out of memory");
		for (tok = strtok_r(copy, ",", &save); tok != NULL;
		     tok = strtok_r(NULL, ",", &save)) {
			if (nids == HD_TASK_DEPS_MAX) {
				free(copy);
				return hd_cli_usage(c,
				    "--depends-on takes at "
				    "most %d ids",
				    HD_TASK_DEPS_MAX);
			}
			if ((rc = task_id_arg(
				 c, tok, "--depends-on", &ids[nids])) != 0) {
				free(copy);
				return rc;
			}
			nids++;
		}
		free(copy);
		spec.depends_on = ids;
		spec.ndepends_on = nids;
	}
	n = hd_cli_opt_all(c, "meta", &kv);
	if (n > 0) {
		meta = json_object();
		for (i = 0; i < n; i++) {
			const char *eq = strchr(kv[i], '=');
			char *key;

			if (eq == NULL || eq == kv[i]) {
				json_decref(meta);
				return hd_cli_usage(c,
				    "--meta must be KEY=VALUE, "
				    "not \"%.64s\"",
				    kv[i]);
			}
			key = strndup(kv[i], (size_t)(eq - kv[i]));
			json_object_set_new(meta, key, json_string(eq + 1));
			free(key);
		}
		spec.metadata = meta;
	}
	rc = HD_EXIT_FAIL;
	if (hd_cli_store(c, &st) != 0)
		goto done;
	if (hd_board_create(&t, st, &spec, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json)
		hd_cli_json(hd_task_to_json(t));
	else
		printf("created task #%lld \"%s\" in team %s\n",
		    (long long)t->id, t->subject, t->team_id);
	rc = HD_EXIT_OK;
done:
	hd_task_free(t);
	json_decref(meta);
	return rc;
}

/* --tree: t, then its subtasks among the listed ones (ids ascending),
 * each level indented two more spaces and marked with an arrow. */
static void
print_tree(const hd_tasks *l, const hd_task *t, int depth)
{
	hd_task key;
	const hd_task *ch;
	size_t i;

	printf("%*s%s#%lld [%s] %s%s%s%s\n", depth * 2, "",
	    depth > 0 ? "\xe2\x86\xb3 " : "", (long long)t->id, t->status,
	    t->subject, t->owner ? " (" : "", t->owner ? t->owner : "",
	    t->owner ? ")" : "");
	if (depth > HD_TEAM_TASK_DEPTH_MAX) /* a forest: cannot happen */
		return;
	for (i = 0; i < t->nchildren; i++) {
		key.id = t->children[i];
		ch = bsearch(&key, l->items, l->n, sizeof(key), task_id_desc);
		if (ch != NULL)
			print_tree(l, ch, depth + 1);
	}
}

/* The listed tasks as a tree: those whose parent is not listed (roots
 * among them), oldest first, each with its subtasks under it. */
static void
print_forest(const hd_tasks *l)
{
	hd_task key;
	size_t i;

	for (i = l->n; i-- > 0;) {
		key.id = l->items[i].parent_id;
		if (key.id > 0 && bsearch(&key, l->items, l->n, sizeof(key),
				      task_id_desc) != NULL)
			continue;
		print_tree(l, &l->items[i], 0);
	}
}

static int
cmd_task_list(hd_cli *c)
{
	hd_task_filter f = {0};
	hd_tasks l;
	hd_store *st;
	hd_table *tab;
	json_t *arr;
	int64_t limit = 0;
	size_t i;
	int rc;

	f.status = hd_cli_opt_str(c, "status");
	f.owner = hd_cli_opt_str(c, "owner");
	f.ready = hd_cli_flag(c, "ready");
	f.blocked = hd_cli_flag(c, "blocked");
	f.nmeta = (size_t)hd_cli_opt_all(c, "meta", &f.meta);
	if ((rc = hd_cli_opt_int(c, "limit", 1, 1000000, &limit)))
		return rc;
	f.limit = (int)limit;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_board_list(&l, st, c->argv[0], &f, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		arr = json_array();
		for (i = 0; i < l.n; i++)
			json_array_append_new(
			    arr, hd_task_to_json(&l.items[i]));
		hd_cli_json(arr);
	} else if (l.n == 0)
		printf("no tasks\n");
	else if (hd_cli_flag(c, "tree"))
		print_forest(&l);
	else {
		tab = hd_table_new(
		    6, "ID", "STATUS", "OWNER", "PRI", "SUBJECT", "BLOCKED BY");
		for (i = 0; i < l.n; i++) {
			const hd_task *t = &l.items[i];
			char id[24], pri[24], blocked[256];

			snprintf(id, sizeof(id), "%lld", (long long)t->id);
			snprintf(
			    pri, sizeof(pri), "%lld", (long long)t->priority);
			hd_table_row(tab, id, t->status, t->owner, pri,
			    t->subject,
			    ids_text(blocked, sizeof(blocked), t->blocked_by,
				t->nblocked_by));
		}
		hd_table_print(tab, stdout, "");
		hd_table_free(tab);
	}
	hd_tasks_dispose(&l);
	return HD_EXIT_OK;
}

#define OPT_AS_USER                                                            \
	{                                                                      \
		"as", 0, "AGENT", "act as AGENT (default: user)", 0            \
	}
#define OPT_END                                                                \
	{                                                                      \
		NULL, 0, NULL, NULL, 0                                         \
	}

static const hd_cli_opt create_opts[] = {
    {"description", 'd', "TEXT", "what needs doing (up to 10000 chars)", 0},
    {"depends-on", 0, "ID,...", "tasks of the same team this waits for", 0},
    {"priority", 'p', "N", "higher is claimed first (default 0)", 0},
    {"meta", 0, "KEY=VALUE", "a metadata entry (a string)", 1},
    {"active-form", 0, "TEXT", "what to show while it runs", 0},
    {"parent", 0, "ID", "make it a subtask of task ID (same team)", 0},
    {"as", 0, "AGENT", "create as AGENT, a member (default: user)", 0},
    OPT_END,
};

static const hd_cli_opt list_opts[] = {
    {"status", 's', "STATUS", "only tasks in STATUS", 0},
    {"owner", 'o', "AGENT", "only tasks owned by AGENT", 0},
    {"ready", 0, NULL, "only ready tasks (pending, unowned, unblocked)", 0},
    {"blocked", 0, NULL, "only tasks waiting on unfinished ones", 0},
    {"meta", 0, "KEY=VALUE", "only tasks whose metadata KEY is VALUE", 1},
    {"limit", 'n', "N", "at most N tasks", 0},
    {"tree", 0, NULL, "show subtasks indented under their parents", 0},
    OPT_END,
};

static const hd_cli_cmd task_subs[] = {
    {"create", "TEAM SUBJECT", "Create a task", 2, 2, create_opts,
	cmd_task_create, NULL,
	"Example: huddle task create dev \"Write docs\" --depends-on 3,4 "
	"--priority 2 --meta area=docs. With --parent ID it is a subtask; "
	"the team's caps (huddle team update --max-children, "
	"--max-task-depth, --max-new-roots) bound how many and how deep."},
    {"list", "TEAM", "List a team's tasks, newest first", 1, 1, list_opts,
	cmd_task_list, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

/* ---- the table's task commands, shown (cli-ops.c) ---- */

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
    {NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_task = {
    .name = "task",
    .summary = "The board: create, claim and move tasks",
    .subs = task_subs,
};
