/*
 * testutil.c -- the per-test fixture of testutil.h.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/team.h>

#include "testutil.h"

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
hd_rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int
hd_fixture_setup(void **state)
{
	hd_fixture *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	hd_err err = HD_ERR_INIT;

	if (fx == NULL)
		return -1;
	snprintf(fx->home, sizeof(fx->home), "%s/huddle-test-XXXXXX",
	    tmp ? tmp : "/tmp");
	if (mkdtemp(fx->home) == NULL) {
		free(fx);
		return -1;
	}
	if (hd_store_open(&fx->st, fx->home, &err) != 0) {
		fprintf(stderr, "store open: %s\n", err.msg);
		hd_rm_rf(fx->home);
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

int
hd_fixture_teardown(void **state)
{
	hd_fixture *fx = *state;

	if (fx == NULL)
		return 0;
	hd_store_close(fx->st);
	hd_rm_rf(fx->home);
	free(fx);
	return 0;
}

void
hd_fixture_team(hd_fixture *fx, const char *team, ...)
{
	hd_team_spec ts = {0};
	hd_agent_spec as;
	hd_err err = HD_ERR_INIT;
	const char *id;
	va_list ap;
	int first = 1;

	ts.id = team;
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	va_start(ap, team);
	while ((id = va_arg(ap, const char *)) != NULL) {
		memset(&as, 0, sizeof(as));
		as.id = id;
		as.team = team;
		as.leader = first;
		first = 0;
		assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	}
	va_end(ap);
}
