/*
 * test-attach.c -- attach URLs (SPEC 10.4): the URL under a base (host and
 * port, or a server's --public-url), its sig verifying for that agent and
 * no other, and the errors for an unknown agent and an overlong host.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/attach.h>

#include "testutil.h"

static void
test_attach__url_under_a_base_carries_a_verifying_sig(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	const char *want = "https://huddle.example.test/team/mcp?roomTeamId=dev"
			   "&postAuthorAgentId=coder&sig=";
	char *url = NULL, *sig;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(hd_attach_url_base(&url, fx->st,
			 "https://huddle.example.test/team", "coder", &err),
	    &err);
	assert_memory_equal(url, want, strlen(want));
	sig = url + strlen(want);
	assert_int_equal(strlen(sig), HD_ATTACH_SIG_HEX);
	assert_int_equal(hd_attach_verify(fx->st, "dev", "coder", sig), 1);
	assert_int_equal(hd_attach_verify(fx->st, "dev", "manager", sig), 0);
	free(url);
}

static void
test_attach__host_and_port_is_the_same_url_under_http(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char *a = NULL, *b = NULL, host[400];

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(
	    hd_attach_url(&a, fx->st, "127.0.0.1", 7411, "coder", &err), &err);
	assert_hd_ok(hd_attach_url_base(&b, fx->st, "http://127.0.0.1:7411",
			 "coder", &err),
	    &err);
	assert_string_equal(a, b);
	free(a);
	free(b);
	memset(host, 'h', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	a = NULL;
	assert_int_equal(hd_attach_url(&a, fx->st, host, 1, "coder", &err),
	    HD_EINVAL);
	assert_null(a);
}

static void
test_attach__an_unknown_agent_is_named(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char *url = NULL;

	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_hd_err(hd_attach_url_base(&url, fx->st, "http://127.0.0.1:1",
			  "ghost", &err),
	    HD_ENOTFOUND, "agent \"ghost\" not found", &err);
	assert_null(url);
}

#define T(f) cmocka_unit_test_setup_teardown(f, hd_fixture_setup, \
    hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_attach__url_under_a_base_carries_a_verifying_sig),
		T(test_attach__host_and_port_is_the_same_url_under_http),
		T(test_attach__an_unknown_agent_is_named),
	};
	return cmocka_run_group_tests_name("unit/team/attach", tests, NULL,
	    NULL);
}
