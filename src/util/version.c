/*
 * version.c -- the library's version and commit strings.
 * HD_VERSION comes from CMakeLists.txt (project VERSION, a compile
 * definition of this file only) and hd__git_commit from the source the
 * build generates on every run (cmake/git-commit.cmake), so neither is
 * written by hand anywhere else. Callers: cli/main.c (--version),
 * mcp/mcp.c (serverInfo).
 */
#include <huddle/version.h>

extern const char hd__git_commit[];

const char *
hd_version(void)
{
	return HD_VERSION;
}

const char *
hd_version_commit(void)
{
	return hd__git_commit;
}
