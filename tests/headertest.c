/* headertest.c -- the public API compiles on its own, -pedantic. */
#include <huddle/huddle.h>

int hd_headertest_dummy(void);

int
hd_headertest_dummy(void)
{
	return HD_OK;
}
