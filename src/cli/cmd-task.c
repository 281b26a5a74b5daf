/*
 * cmd-task.c -- `huddle task ...`: the board (SPEC 4) from the shell.
 * Each subcommand parses its arguments, calls one hd_board_* function and
 * renders the task; without --as the actor is "user".
 */
#include <stdlib.h>
#include <string.h>

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

static void
print_task(const hd_task *t)
{
	char when[32], deps[256], blocked[256], *meta;
	size_t i;

	printf("task #%lld: %s\n", (long long)t->id, t->subject);
	printf("  team:        %s\n", t->team_id);
	printf("  status:      %s\n", t->status);
	printf("  owner:       %s\n", t->owner ? t->owner : "(none)");
	printf("  priority:    %lld\n", (long long)t->priority);
	if (t->active_form != NULL)
		printf("  active form: %s\n", t->active_form);
	if (t->description[0] != '\0')
		printf("  description: %s\n", t->description);
	printf("  depends on:  %s\n",
	    t->ndepends_on
		? ids_text(deps, sizeof(deps), t->depends_on, t->ndepends_on)
		: "(nothing)");
	if (t->parent_id > 0)
		printf("  parent:      #%lld\n", (long long)t->parent_id);
	if (t->nchildren > 0)
		printf("  subtasks:    %s\n",
		    ids_text(deps, sizeof(deps), t->children, t->nchildren));
	printf("  blocked by:  %s\n", t->nblocked_by
					  ? ids_text(blocked, sizeof(blocked),
						t->blocked_by, t->nblocked_by)
					  : "(nothing)");
	if (json_object_size(t->metadata) > 0) {
		meta = json_dumps(t->metadata, JSON_COMPACT | JSON_SORT_KEYS);
		printf("  metadata:    %s\n", meta ? meta : "{}");
		free(meta);
	}
	if (t->result != NULL)
		printf("  %s %s\n",
		    strcmp(t->status, "failed") == 0 ? "reason:     "
						     : "result:     ",
		    t->result);
	hd_cli_time(when, sizeof(when), t->created_at);
	printf("  created:     %s by %s\n", when,
	    t->created_by ? t->created_by : "(unknown)");
	if (t->has_comments) {
		printf("  comments (%zu):\n", t->ncomments);
		for (i = 0; i < t->ncomments; i++) {
			hd_cli_time(
			    when, sizeof(when), t->comments[i].created_at);
			printf("    %s %s: %s\n", when, t->comments[i].author,
			    t->comments[i].body);
		}
	}
}

/* How many of the tasks a completion made ready its line names. */
#define READY_NAMED 10

/* Append "; now ready: #7, #9" (the first READY_NAMED ids, then
 * " and 3 more") to buf when completing t made tasks ready. */
static void
append_ready(char *buf, size_t len, const hd_task *t)
{
	size_t i, off = strlen(buf),
		  named = t->nunblocked < READY_NAMED ? t->nunblocked
						      : READY_NAMED;

	for (i = 0; i < named && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s#%lld",
		    i ? ", " : "; now ready: ", (long long)t->unblocked[i]);
	if (t->nunblocked > named && off < len)
		snprintf(buf + off, len - off, " and %zu more",
		    t->nunblocked - named);
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
done_task(hd_cli *c, hd_task *t, const char *what)
{
	if (c->json)
		hd_cli_json(hd_task_to_json(t));
	else
		printf("task #%lld \"%s\" %s\n", (long long)t->id, t->subject,
		    what);
	hd_task_free(t);
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

static int
cmd_task_show(hd_cli *c)
{
	hd_task *t = NULL;
	hd_store *st;
	int64_t id;
	int rc;

	if ((rc = task_id_arg(c, c->argv[0], "task id", &id)))
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_board_get(&t, st, id, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(hd_task_to_json(t));
	else
		print_task(t);
	hd_task_free(t);
	return HD_EXIT_OK;
}

static int
cmd_task_claim(hd_cli *c)
{
	const char *as = hd_cli_opt_str(c, "as");
	hd_task *t = NULL;
	hd_store *st;
	int64_t id;
	char what[128];
	int rc;

	if ((rc = task_id_arg(c, c->argv[0], "task id", &id)))
		return rc;
	if (as == NULL)
		return hd_cli_usage(c, "'%s' needs --as AGENT", c->path);
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_board_claim(&t, st, id, as, &c->err) < 0)
		return hd_cli_fail(c);
	snprintf(what, sizeof(what), "claimed by %s", t->owner);
	return done_task(c, t, what);
}

static int
cmd_task_auto_claim(hd_cli *c)
{
	const char *as = hd_cli_opt_str(c, "as");
	hd_task *t = NULL;
	hd_store *st;
	char what[128];

	if (as == NULL)
		return hd_cli_usage(c, "'%s' needs --as AGENT", c->path);
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_board_auto_claim(&t, st, c->argv[0], as, &c->err) < 0)
		return hd_cli_fail(c);
	snprintf(what, sizeof(what), "claimed by %s", t->owner);
	return done_task(c, t, what);
}

/* delegate TEAM TITLE --to AGENT: create, assign and tell, one act. */
static int
cmd_task_delegate(hd_cli *c)
{
	hd_task_spec spec = {0};
	const char *to = hd_cli_opt_str(c, "to");
	hd_task *t = NULL;
	hd_store *st;
	int64_t prio = 0;
	char what[128];
	int rc;

	if (to == NULL)
		return hd_cli_usage(c, "'%s' needs --to AGENT", c->path);
	spec.team = c->argv[0];
	spec.subject = c->argv[1];
	spec.description = hd_cli_opt_str(c, "description");
	spec.created_by = actor(c);
	if ((rc = hd_cli_opt_int(c, "priority", INT32_MIN, INT32_MAX, &prio)))
		return rc;
	spec.priority = prio;
	if ((rc = parent_opt(c, &spec)) != 0)
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_board_delegate(&t, st, &spec, to, &c->err) < 0)
		return hd_cli_fail(c);
	snprintf(what, sizeof(what), "delegated to %s", t->owner);
	return done_task(c, t, what);
}

/* assign ID AGENT, or assign ID --auto: the board picks the member. */
static int
cmd_task_assign(hd_cli *c)
{
	int automatic = hd_cli_flag(c, "auto");
	hd_board_pick pick;
	hd_task *t = NULL;
	hd_store *st;
	json_t *j;
	int64_t id;
	char what[256];
	int rc;

	if ((rc = task_id_arg(c, c->argv[0], "task id", &id)))
		return rc;
	if (automatic && c->argc > 1)
		return hd_cli_usage(c, "give AGENT or --auto, not both");
	if (!automatic && c->argc < 2)
		return hd_cli_usage(c, "'%s' needs AGENT or --auto", c->path);
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (!automatic) {
		if (hd_board_assign(
			&t, st, id, c->argv[1], actor(c), &c->err) < 0)
			return hd_cli_fail(c);
		snprintf(what, sizeof(what), "assigned to %s", t->owner);
		return done_task(c, t, what);
	}
	if (hd_board_assign_auto(&t, &pick, st, id, actor(c), &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		j = hd_task_to_json(t);
		json_object_set_new(j, "assignee", json_string(pick.agent));
		json_object_set_new(
		    j, "picked_because", json_string(pick.reason));
		hd_cli_json(j);
		hd_task_free(t);
		return HD_EXIT_OK;
	}
	snprintf(what, sizeof(what), "assigned to %s (auto: %s)", t->owner,
	    pick.reason);
	return done_task(c, t, what);
}

/* start, complete, fail, release, cancel, retry: one shape. */
static int
cmd_task_move(hd_cli *c)
{
	const char *verb = c->cmd->name;
	hd_task *t = NULL;
	hd_store *st;
	int64_t id;
	char what[384];
	int rc;

	if ((rc = task_id_arg(c, c->argv[0], "task id", &id)))
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (strcmp(verb, "start") == 0)
		rc = hd_board_start(&t, st, id, actor(c), &c->err);
	else if (strcmp(verb, "complete") == 0)
		rc = hd_board_complete(
		    &t, st, id, actor(c), hd_cli_opt_str(c, "result"), &c->err);
	else if (strcmp(verb, "fail") == 0)
		rc = hd_board_fail(
		    &t, st, id, actor(c), hd_cli_opt_str(c, "reason"), &c->err);
	else if (strcmp(verb, "release") == 0)
		rc = hd_board_release(&t, st, id, actor(c), &c->err);
	else if (strcmp(verb, "cancel") == 0)
		rc = hd_board_cancel(&t, st, id, actor(c), &c->err);
	else
		rc = hd_board_retry(&t, st, id, actor(c), &c->err);
	if (rc < 0)
		return hd_cli_fail(c);
	snprintf(what, sizeof(what), "is now %s", t->status);
	append_ready(what, sizeof(what), t);
	return done_task(c, t, what);
}

static int
cmd_task_link(hd_cli *c)
{
	const char *dep_s = hd_cli_opt_str(c, "depends-on");
	hd_task *t = NULL;
	hd_store *st;
	int64_t id, dep;
	char what[64];
	int rc;

	if ((rc = task_id_arg(c, c->argv[0], "task id", &id)))
		return rc;
	if (dep_s == NULL)
		return hd_cli_usage(c, "'%s' needs --depends-on ID", c->path);
	if ((rc = task_id_arg(c, dep_s, "--depends-on", &dep)))
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_board_link(&t, st, id, dep, actor(c), &c->err) < 0)
		return hd_cli_fail(c);
	snprintf(what, sizeof(what), "depends on #%lld", (long long)dep);
	return done_task(c, t, what);
}

static int
cmd_task_comment(hd_cli *c)
{
	hd_task_comment *cm = NULL;
	hd_store *st;
	int64_t id;
	int rc;

	if ((rc = task_id_arg(c, c->argv[0], "task id", &id)))
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_board_comment(&cm, st, id, actor(c), c->argv[1], &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(hd_task_comment_to_json(cm));
	else
		printf("commented on task #%lld as %s\n", (long long)id,
		    cm->author);
	hd_task_comment_free(cm);
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

static const hd_cli_opt delegate_opts[] = {
    {"to", 0, "AGENT", "the member who gets the task (required)", 0},
    {"description", 'd', "TEXT", "what needs doing; also sent to AGENT", 0},
    {"priority", 'p', "N", "higher is claimed first (default 0)", 0},
    {"parent", 0, "ID", "make it a subtask of task ID (same team)", 0},
    {"as", 0, "AGENT", "delegate as AGENT, the leader (default: user)", 0},
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

static const hd_cli_opt claim_opts[] = {
    {"as", 0, "AGENT", "the claiming agent (required)", 0},
    OPT_END,
};

static const hd_cli_opt as_opts[] = {OPT_AS_USER, OPT_END};

static const hd_cli_opt assign_opts[] = {
    OPT_AS_USER,
    {"auto", 0, NULL, "pick the member: idle, fewest open tasks, lowest id",
	0},
    OPT_END,
};

static const hd_cli_opt complete_opts[] = {
    OPT_AS_USER,
    {"result", 'r', "TEXT", "what came of it", 0},
    OPT_END,
};

static const hd_cli_opt fail_opts[] = {
    OPT_AS_USER,
    {"reason", 'r', "TEXT", "why it failed", 0},
    OPT_END,
};

static const hd_cli_opt link_opts[] = {
    {"depends-on", 0, "ID", "the task ID must wait for (required)", 0},
    OPT_AS_USER,
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
    {"show", "ID", "Show a task with its dependencies and comments", 1, 1, NULL,
	cmd_task_show, NULL, NULL},
    {"claim", "ID", "Claim a ready task", 1, 1, claim_opts, cmd_task_claim,
	NULL,
	"Atomic across processes: of many claimers one wins; the "
	"others are told who."},
    {"auto-claim", "TEAM", "Claim the team's best ready task", 1, 1, claim_opts,
	cmd_task_auto_claim, NULL, "Highest priority first, then the oldest."},
    {"assign", "ID [AGENT]",
	"Claim a task for AGENT (--auto: the board picks)", 1, 2, assign_opts,
	cmd_task_assign, NULL,
	"Only the team leader or a user may assign. With --auto instead of "
	"AGENT the board picks the member, in the same transaction: an idle "
	"one (never working, in error or shutting down) with the fewest open "
	"tasks, then the lowest id; the leader only when it is the only "
	"member. Example: huddle task assign 5 --auto --as manager"},
    {"delegate", "TEAM TITLE",
	"Create a task, assign it and tell the assignee, in one act", 2, 2,
	delegate_opts, cmd_task_delegate, NULL,
	"Only the team leader or a user may delegate. An assignee in error "
	"or shutting down is refused, and then nothing is written. The "
	"assignee gets a task_update message: You were delegated task #7 "
	"\"X\" by manager: <description>. Example: huddle task delegate dev "
	"--to coder \"Fix the parser\" -d \"tests in tests/parse\" --as "
	"manager"},
    {"start", "ID", "Start a claimed task", 1, 1, as_opts, cmd_task_move, NULL,
	NULL},
    {"complete", "ID", "Complete a task", 1, 1, complete_opts, cmd_task_move,
	NULL, NULL},
    {"fail", "ID", "Mark a task failed", 1, 1, fail_opts, cmd_task_move, NULL,
	NULL},
    {"release", "ID", "Give a task back (owner cleared)", 1, 1, as_opts,
	cmd_task_move, NULL, NULL},
    {"cancel", "ID", "Cancel a task", 1, 1, as_opts, cmd_task_move, NULL, NULL},
    {"retry", "ID", "Reopen a failed task", 1, 1, as_opts, cmd_task_move, NULL,
	NULL},
    {"link", "ID", "Make a task wait for another", 1, 1, link_opts,
	cmd_task_link, NULL, "A link that would close a cycle is refused."},
    {"comment", "ID TEXT", "Comment on a task", 2, 2, as_opts, cmd_task_comment,
	NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_task = {
    .name = "task",
    .summary = "The board: create, claim and move tasks",
    .subs = task_subs,
};
