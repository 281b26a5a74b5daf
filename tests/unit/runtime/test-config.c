/*
 * test-config.c -- what each runtime accepts in runtime_config, checked
 * by its adapter (check_config) through hd_runtime_check_config, the
 * check the surfaces hand the domain: a table of configs per runtime and
 * the exact refusal of each, runtimes this build lacks (the list read
 * from the adapter table), NULL runtime as scripted, NULL config as none;
 * and the domain refusing through it, with nothing written.
 */
#include <stdio.h>
#include <string.h>

#include <huddle/runtime.h>
#include <huddle/team.h>

#include "testutil.h"

typedef struct ccase {
	const char *runtime;
	const char *cfg;  /* JSON text, or NULL: no config */
	const char *want; /* the refusal, or NULL: accepted */
} ccase;

#define PRICE_MSG(k)                                                           \
	"runtime_config.prices." k " must be a number >= 0 (USD per million "  \
	"tokens)"

static const ccase cases[] = {
    /* scripted */
    {NULL, "{\"rules\": [{\"when\": \"a\", \"reply\": \"b\"}]}", NULL},
    {"scripted", NULL, NULL},
    {"scripted", "{\"defualt\": \"x\"}",
	"runtime_config: unknown key \"defualt\" for runtime scripted"},
    {"scripted", "{\"rules\": {}}", "runtime_config.rules must be an array"},
    {"scripted", "{\"rules\": [{\"when\": \"x\"}]}",
	"runtime_config.rules[0] must be {\"when\": text, \"reply\": text}"},
    {"scripted", "{\"delay_ms\": -1}",
	"runtime_config.delay_ms must be an integer from 0 to 600000"},
    /* exec */
    {"exec", "{\"command\": [\"./agent.sh\"], \"prompt\": \"arg\"}", NULL},
    {"exec", "{\"command\": []}",
	"runtime_config.command must be a non-empty array of strings"},
    {"exec", "{\"command\": [\"x\"], \"prompt\": \"file\"}",
	"runtime_config.prompt must be \"stdin\" or \"arg\""},
    {"exec", "{\"command\": [\"x\"], \"env\": {\"A=B\": \"c\"}}",
	"runtime_config.env must be an object of strings"},
    /* claude-code */
    {"claude-code", NULL, NULL},
    {"claude-code",
	"{\"bin\": \"/opt/claude\", \"model\": \"m\", \"workdir\": \"/tmp\", "
	"\"allowed_tools\": [\"Read\", \"Bash(git status)\"], \"env\": "
	"{\"ANTHROPIC_BASE_URL\": \"http://127.0.0.1:1\"}, \"timeout_s\": 60, "
	"\"home\": \"private\", \"max_turns\": 8}",
	NULL},
    {"claude-code", "{\"home\": \"mine\"}",
	"runtime_config.home must be \"user\" or \"private\""},
    {"claude-code", "{\"bin\": \"\"}",
	"runtime_config.bin must be a non-empty string"},
    {"claude-code", "{\"allowed_tools\": [\"Read,Write\"]}",
	"runtime_config.allowed_tools must be an array of names (no commas)"},
    {"claude-code", "{\"timeout_s\": 0}",
	"runtime_config.timeout_s must be an integer from 1 to 86400"},
    {"claude-code", "{\"max_turns\": 1001}",
	"runtime_config.max_turns must be an integer from 1 to 1000"},
    {"claude-code", "{\"prices\": {}}",
	"runtime_config: unknown key \"prices\" for runtime claude-code"},
    /* codex */
    {"codex",
	"{\"model\": \"gpt-5\", \"overrides\": {\"model_provider\": \"p\", "
	"\"model_providers.p\": {\"base_url\": \"http://127.0.0.1:1/v1\"}}, "
	"\"prices\": {\"input\": 1, \"output\": 2}}",
	NULL},
    {"codex", "{\"overrides\": []}",
	"runtime_config.overrides must be an object of Codex config keys "
	"and values"},
    {"codex", "{\"overrides\": {\"mcp_servers.huddle.url\": \"x\"}}",
	"runtime_config.overrides.mcp_servers.huddle.url: huddle's own MCP "
	"server is set by huddle"},
    {"codex", "{\"overrides\": {\"a=b\": 1}}",
	"runtime_config.overrides.a=b: a key without '=' and a non-null "
	"value"},
    {"codex", "{\"prices\": {\"input\": 1}}", PRICE_MSG("output")},
    {"codex", "{\"home\": \"private\"}",
	"runtime_config: unknown key \"home\" for runtime codex"},
    /* any runtime: an object or nothing */
    {"codex", "[1]", "runtime_config must be a JSON object"},
    /* runtimes this build lacks */
    {"openai", NULL,
	"runtime \"openai\" is not available in this build: use scripted, "
	"exec, claude-code, codex, native, hermes or openclaw"},
    {"gpt", "{}",
	"runtime \"gpt\" is not available in this build: use scripted, exec, "
	"claude-code, codex, native, hermes or openclaw"},
};

static void
test_config__the_table(void **state)
{
	hd_err err = HD_ERR_INIT;
	json_error_t jerr;
	json_t *cfg;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const ccase *c = &cases[i];

		cfg = NULL;
		if (c->cfg != NULL &&
		    (cfg = json_loads(c->cfg, JSON_DECODE_ANY, &jerr)) == NULL)
			fail_msg("case %zu: bad JSON: %s", i, jerr.text);
		hd_err_clear(&err);
		rc = hd_runtime_check_config(c->runtime, cfg, &err);
		if (c->want == NULL && rc != 0)
			fail_msg("case %zu (%s %s) refused: %s", i,
			    c->runtime ? c->runtime : "(null)",
			    c->cfg ? c->cfg : "(null)", err.msg);
		if (c->want != NULL) {
			if (rc != HD_EINVAL || strcmp(err.msg, c->want) != 0)
				fail_msg("case %zu (%s %s):\n got  %d [%s]\n "
					 "want [%s]",
				    i, c->runtime ? c->runtime : "(null)",
				    c->cfg ? c->cfg : "(null)", rc, err.msg,
				    c->want);
		}
		json_decref(cfg);
	}
}

/* Through the domain: the surfaces hand the check down, and a refused
 * agent is not written, in one team file or one at a time. */
static void
test_config__the_domain_refuses_through_it(void **state)
{
	hd_fixture *fx = *state;
	hd_agent_spec as = {0};
	hd_apply_report rep;
	hd_agents l;
	hd_err err = HD_ERR_INIT;
	json_t *doc, *cfg;

	hd_fixture_team(fx, "dev", "manager", NULL);
	cfg = json_loads("{\"home\": \"mine\"}", 0, NULL);
	as.team = "dev";
	as.id = "cc";
	as.runtime = "claude-code";
	as.runtime_config = cfg;
	as.check = hd_runtime_check_config;
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "runtime_config.home must be \"user\" or \"private\"", &err);
	json_decref(cfg);
	doc = json_loads("{\"team\": \"dev\", \"agents\": [{\"id\": \"ok\"}, "
			 "{\"id\": \"cx\", \"runtime\": \"codex\", "
			 "\"runtime_config\": {\"overrides\": 7}}]}",
	    0, NULL);
	assert_hd_err(hd_team_apply_json(&rep, fx->st, doc, "dev.json",
			  hd_runtime_check_config, &err),
	    HD_EINVAL,
	    "dev.json: agents[1].runtime_config.overrides must be an object "
	    "of Codex config keys and values",
	    &err);
	json_decref(doc);
	assert_hd_ok(hd_agent_list(&l, fx->st, "dev", &err), &err);
	assert_int_equal(l.n, 1); /* the leader only: nothing was written */
	hd_agents_dispose(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config__the_table),
	    hd_fixture_test(test_config__the_domain_refuses_through_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
