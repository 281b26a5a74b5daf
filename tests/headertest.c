/*
 * headertest.c -- each public header compiles on its own, -pedantic, and
 * twice (its include guard holds). CMakeLists.txt compiles this once per
 * include/huddle/X.h with HD_HEADERTEST_HEADER set to <huddle/X.h> and
 * only X.h's layer on the include path (build/layers/<layer>/), so a
 * header that includes one of a higher layer fails the build too.
 */
#include HD_HEADERTEST_HEADER
#include HD_HEADERTEST_HEADER

int hd_headertest_dummy(void);

int
hd_headertest_dummy(void)
{
	return 0;
}
