/*
 * test-home.c -- runtime homes (SPEC 9.3): persistent homes at
 * HUDDLE_HOME/homes/<runtime>/<agent>/ made 0700, huddle's MCP config
 * rewritten every run, seeds copied only when absent, the runtime's own
 * files untouched across runs, ephemeral homes removed after the run, and
 * no path ever built from a bad name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/runtime.h>
#include <huddle/util.h>

#include "testutil.h"

static const hd_runtime_plan persistent = {HD_HOME_PERSISTENT, 0, 0, 0, 0, 1, 1};
static const hd_runtime_plan ephemeral = {HD_HOME_EPHEMERAL, 0, 0, 0, 0, 1, 1};

static int
mode_of(const char *path)
{
	struct stat sb;

	assert_int_equal(lstat(path, &sb), 0);
	return (int)(sb.st_mode & 07777);
}

static void
spec_for(hd_runtime_home_spec *s, const hd_fixture *fx, const char *url,
    const char *token)
{
	memset(s, 0, sizeof(*s));
	s->huddle_home = fx->home;
	s->runtime = "exec";
	s->agent = "coder";
	s->mcp_url = url;
	s->mcp_token = token;
}

static void
test_home__persistent_home_is_0700_at_its_path(void **state)
{
	hd_fixture *fx = *state;
	hd_runtime_home_spec s;
	hd_runtime_home h;
	hd_err err = HD_ERR_INIT;
	char want[512], path[600];

	spec_for(&s, fx, NULL, NULL);
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	snprintf(want, sizeof(want), "%s/homes/exec/coder", fx->home);
	assert_string_equal(h.path, want);
	assert_int_equal(h.ephemeral, 0);
	assert_int_equal(mode_of(h.path), 0700);
	snprintf(path, sizeof(path), "%s/homes", fx->home);
	assert_int_equal(mode_of(path), 0700);
	snprintf(path, sizeof(path), "%s/homes/exec", fx->home);
	assert_int_equal(mode_of(path), 0700);
	/* no URL: no MCP config */
	snprintf(path, sizeof(path), "%s/" HD_RUNTIME_MCP_FILE, h.path);
	assert_int_equal(access(path, F_OK), -1);
	hd_runtime_home_release(&h);
	/* a persistent home stays */
	assert_int_equal(mode_of(want), 0700);
	assert_null(h.path);

	/* a home someone loosened is tightened back to 0700 */
	assert_int_equal(chmod(want, 0755), 0);
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	assert_int_equal(mode_of(want), 0700);
	hd_runtime_home_release(&h);
}

static void
test_home__mcp_config_is_rewritten_every_run(void **state)
{
	hd_fixture *fx = *state;
	hd_runtime_home_spec s;
	hd_runtime_home h;
	hd_err err = HD_ERR_INIT;
	char path[600], *text;

	spec_for(
	    &s, fx, "http://127.0.0.1:7340/mcp?roomTeamId=dev&sig=aa", "tok-1");
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	snprintf(path, sizeof(path), "%s/" HD_RUNTIME_MCP_FILE, h.path);
	assert_int_equal(mode_of(path), 0600);
	text = hd_read_text(path);
	assert_string_equal(text,
	    "{\n"
	    "  \"mcpServers\": {\n"
	    "    \"huddle\": {\n"
	    "      \"type\": \"http\",\n"
	    "      \"url\": "
	    "\"http://127.0.0.1:7340/mcp?roomTeamId=dev&sig=aa\",\n"
	    "      \"headers\": {\n"
	    "        \"Authorization\": \"Bearer tok-1\"\n"
	    "      }\n"
	    "    }\n"
	    "  }\n"
	    "}\n");
	free(text);
	hd_runtime_home_release(&h);

	/* someone (the runtime, a user) edits huddle's file: next run it is
	 * huddle's again, with the new URL and token */
	hd_write_file(path, "{\"edited\": true}");
	spec_for(&s, fx, "http://127.0.0.1:9999/mcp", "tok-2");
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	text = hd_read_text(path);
	assert_non_null(strstr(text, "\"url\": \"http://127.0.0.1:9999/mcp\""));
	assert_non_null(strstr(text, "Bearer tok-2"));
	assert_null(strstr(text, "edited"));
	free(text);
	hd_runtime_home_release(&h);

	/* a link planted in its place is replaced, never followed */
	{
		char outside[600];

		snprintf(outside, sizeof(outside), "%s/outside.txt", fx->home);
		hd_write_file(outside, "precious");
		unlink(path);
		assert_int_equal(symlink(outside, path), 0);
		assert_hd_ok(
		    hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
		text = hd_read_text(outside);
		assert_string_equal(text, "precious");
		free(text);
		assert_int_equal(mode_of(path) & 0777, 0600); /* a file now */
		hd_runtime_home_release(&h);
	}

	/* no URL any more: huddle's stale file (and token) goes */
	spec_for(&s, fx, NULL, NULL);
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	hd_runtime_home_release(&h);
}

static void
test_home__runtime_files_persist_untouched(void **state)
{
	hd_fixture *fx = *state;
	hd_runtime_home_spec s;
	hd_runtime_home h;
	hd_err err = HD_ERR_INIT;
	char path[600], sub[600], *text;

	spec_for(&s, fx, "http://x/mcp", NULL);
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	snprintf(path, sizeof(path), "%s/memory.md", h.path);
	hd_write_file(path, "I remember the last turn");
	snprintf(sub, sizeof(sub), "%s/sessions", h.path);
	assert_int_equal(mkdir(sub, 0755), 0);
	hd_runtime_home_release(&h);

	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	text = hd_read_text(path);
	assert_string_equal(text, "I remember the last turn");
	free(text);
	assert_int_equal(mode_of(sub), 0755); /* not huddle's to tighten */
	hd_runtime_home_release(&h);
}

static void
test_home__seeds_are_copied_only_when_absent(void **state)
{
	hd_fixture *fx = *state;
	hd_runtime_home_spec s;
	hd_runtime_home h;
	hd_runtime_seed seeds[2];
	hd_err err = HD_ERR_INIT;
	char src1[600], src2[600], dest1[600], dest2[600], dir[600], *text;

	snprintf(src1, sizeof(src1), "%s/seed-config.toml", fx->home);
	snprintf(src2, sizeof(src2), "%s/seed-settings.json", fx->home);
	hd_write_file(src1, "model = \"v1\"\n");
	hd_write_file(src2, "{\"v\": 1}");
	seeds[0].src = src1;
	seeds[0].name = "config.toml";
	seeds[1].src = src2;
	seeds[1].name = ".claude/settings.json";
	spec_for(&s, fx, NULL, NULL);
	s.seeds = seeds;
	s.nseeds = 2;
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	snprintf(dest1, sizeof(dest1), "%s/config.toml", h.path);
	snprintf(dest2, sizeof(dest2), "%s/.claude/settings.json", h.path);
	snprintf(dir, sizeof(dir), "%s/.claude", h.path);
	text = hd_read_text(dest1);
	assert_string_equal(text, "model = \"v1\"\n");
	free(text);
	text = hd_read_text(dest2);
	assert_string_equal(text, "{\"v\": 1}");
	free(text);
	assert_int_equal(mode_of(dir), 0700);
	assert_int_equal(mode_of(dest1), 0600);
	hd_runtime_home_release(&h);

	/* the runtime edits its copy, the seed changes: the edit wins */
	hd_write_file(dest1, "model = \"mine\"\n");
	hd_write_file(src1, "model = \"v2\"\n");
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	text = hd_read_text(dest1);
	assert_string_equal(text, "model = \"mine\"\n");
	free(text);
	hd_runtime_home_release(&h);

	/* removed by the runtime: seeded again, from the current seed */
	unlink(dest1);
	assert_hd_ok(hd_runtime_home_prepare(&h, &persistent, &s, &err), &err);
	text = hd_read_text(dest1);
	assert_string_equal(text, "model = \"v2\"\n");
	free(text);
	hd_runtime_home_release(&h);

	/* a missing seed source is an error */
	seeds[0].src = "/nonexistent/seed.toml";
	unlink(dest1);
	assert_hd_err(hd_runtime_home_prepare(&h, &persistent, &s, &err),
	    HD_ENOTFOUND,
	    "cannot read seed /nonexistent/seed.toml: No such file or "
	    "directory",
	    &err);
	hd_runtime_home_release(&h);
}

static void
test_home__bad_seed_names_are_refused(void **state)
{
	hd_fixture *fx = *state;
	static const char *const bad[] = {"../escape", "/etc/passwd",
	    "a/../../b", "a//b", "./x", "", HD_RUNTIME_MCP_FILE, "dir/"};
	hd_runtime_home_spec s;
	hd_runtime_home h;
	hd_runtime_seed seed;
	hd_err err = HD_ERR_INIT;
	char src[600], want[300];
	size_t i;

	snprintf(src, sizeof(src), "%s/seed", fx->home);
	hd_write_file(src, "x");
	spec_for(&s, fx, NULL, NULL);
	s.seeds = &seed;
	s.nseeds = 1;
	seed.src = src;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		seed.name = bad[i];
		snprintf(want, sizeof(want),
		    "invalid seed name \"%s\": use a relative path inside the "
		    "home",
		    bad[i]);
		assert_hd_err(
		    hd_runtime_home_prepare(&h, &persistent, &s, &err),
		    HD_EINVAL, want, &err);
		hd_runtime_home_release(&h);
	}
}

static void
test_home__no_path_from_a_bad_name(void **state)
{
	hd_fixture *fx = *state;
	hd_runtime_home_spec s;
	hd_runtime_home h;
	hd_err err = HD_ERR_INIT;
	char path[600];

	spec_for(&s, fx, NULL, NULL);
	s.agent = "../evil";
	assert_hd_err(hd_runtime_home_prepare(&h, &persistent, &s, &err),
	    HD_EINVAL,
	    "invalid agent name \"../evil\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
	assert_null(h.path);
	s.agent = "coder";
	s.runtime = "Claude";
	assert_hd_err(hd_runtime_home_prepare(&h, &ephemeral, &s, &err),
	    HD_EINVAL,
	    "invalid runtime name \"Claude\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
	snprintf(path, sizeof(path), "%s/homes", fx->home);
	assert_int_equal(access(path, F_OK), -1); /* nothing was made */

	/* a persistent home needs HUDDLE_HOME */
	s.runtime = "exec";
	s.huddle_home = NULL;
	assert_hd_err(hd_runtime_home_prepare(&h, &persistent, &s, &err),
	    HD_EINVAL, "the persistent home of agent coder needs HUDDLE_HOME",
	    &err);
}

static void
test_home__ephemeral_home_is_removed_after_the_run(void **state)
{
	hd_fixture *fx = *state;
	hd_runtime_home_spec s;
	hd_runtime_home h, h2;
	hd_err err = HD_ERR_INIT;
	char path[600], outside[600], *copy, *text;

	spec_for(&s, fx, "http://x/mcp", "t");
	setenv("TMPDIR", fx->home, 1);
	assert_hd_ok(hd_runtime_home_prepare(&h, &ephemeral, &s, &err), &err);
	assert_hd_ok(hd_runtime_home_prepare(&h2, &ephemeral, &s, &err), &err);
	unsetenv("TMPDIR");
	assert_int_equal(h.ephemeral, 1);
	assert_string_not_equal(h.path, h2.path); /* fresh every time */
	assert_int_equal(strncmp(h.path, fx->home, strlen(fx->home)), 0);
	assert_int_equal(mode_of(h.path), 0700);
	snprintf(path, sizeof(path), "%s/" HD_RUNTIME_MCP_FILE, h.path);
	assert_int_equal(mode_of(path), 0600);

	/* the runtime fills it, with a link pointing outside */
	snprintf(outside, sizeof(outside), "%s/keep.txt", fx->home);
	hd_write_file(outside, "outside");
	snprintf(path, sizeof(path), "%s/deep/er", h.path);
	assert_hd_ok(hd_mkdir_p(path, 0755, &err), &err);
	snprintf(path, sizeof(path), "%s/deep/er/file", h.path);
	hd_write_file(path, "x");
	snprintf(path, sizeof(path), "%s/link", h.path);
	assert_int_equal(symlink(fx->home, path), 0);

	copy = strdup(h.path);
	hd_runtime_home_release(&h);
	assert_null(h.path);
	assert_int_equal(access(copy, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	text = hd_read_text(outside); /* the link was removed, not followed */
	assert_string_equal(text, "outside");
	free(text);
	free(copy);
	hd_runtime_home_release(&h2);
}

static void
test_home__plans_without_a_directory(void **state)
{
	hd_fixture *fx = *state;
	hd_runtime_plan connected = {HD_HOME_CONNECTED, 0, 0, 1, 0, 0, 0};
	hd_runtime_plan none = {HD_HOME_EPHEMERAL, 0, 0, 0, 0, 0, 1};
	hd_runtime_home_spec s;
	hd_runtime_home h;
	hd_err err = HD_ERR_INIT;

	spec_for(&s, fx, "http://x/mcp", "t");
	assert_hd_ok(hd_runtime_home_prepare(&h, &connected, &s, &err), &err);
	assert_null(h.path);
	hd_runtime_home_release(&h);
	assert_hd_ok(hd_runtime_home_prepare(&h, &none, &s, &err), &err);
	assert_null(h.path);
	hd_runtime_home_release(&h);
	hd_runtime_home_release(NULL);
}

/* hd_runtime_run prepares the plan's home and hands it to the runtime. */
static void
test_home__run_gives_exec_its_persistent_home(void **state)
{
	hd_fixture *fx = *state;
	hd_agent a;
	hd_runtime_turn t = {0};
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	char want[600];

	memset(&a, 0, sizeof(a));
	a.id = (char *)"coder";
	a.team_id = (char *)"dev";
	a.runtime = (char *)"exec";
	a.runtime_config =
	    json_loads("{\"command\": [\"sh\", \"-c\","
		       " \"printf %s \\\"$HUDDLE_AGENT_HOME\\\";"
		       " echo kept > \\\"$HUDDLE_AGENT_HOME/n\\\"\"]}",
		0, NULL);
	assert_non_null(a.runtime_config);
	t.agent = &a;
	t.prompt = "hi";
	t.huddle_home = fx->home;
	assert_hd_ok(hd_runtime_run(&res, &t, NULL, NULL, &err), &err);
	snprintf(want, sizeof(want), "%s/homes/exec/coder", fx->home);
	assert_string_equal(res.text, want);
	hd_runtime_result_dispose(&res);
	snprintf(want, sizeof(want), "%s/homes/exec/coder/n", fx->home);
	assert_int_equal(access(want, F_OK), 0);
	json_decref(a.runtime_config);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_home__persistent_home_is_0700_at_its_path),
	    hd_fixture_test(test_home__mcp_config_is_rewritten_every_run),
	    hd_fixture_test(test_home__runtime_files_persist_untouched),
	    hd_fixture_test(test_home__seeds_are_copied_only_when_absent),
	    hd_fixture_test(test_home__bad_seed_names_are_refused),
	    hd_fixture_test(test_home__no_path_from_a_bad_name),
	    hd_fixture_test(test_home__ephemeral_home_is_removed_after_the_run),
	    hd_fixture_test(test_home__plans_without_a_directory),
	    hd_fixture_test(test_home__run_gives_exec_its_persistent_home),
	};

	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
