/* version.c -- the library's version string. */
#include <huddle/version.h>

const char *
hd_version(void)
{
	return HD_VERSION;
}
