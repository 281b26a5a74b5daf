/*
 * err.c -- filling hd_err. Messages are made one line of valid UTF-8
 * here, once, so no surface has to sanitise them again: a control
 * character becomes a space, and a byte that starts no valid character
 * ('%.64s' of a name cut a character in two, or the bytes were never
 * UTF-8) becomes '?', so JSON can always carry the message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <huddle/err.h>
#include <huddle/util.h>

int
hd_err_set(hd_err *err, hd_code code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	hd_utf8_line(err->msg);
	return code;
}

void
hd_err_clear(hd_err *err)
{
	if (err == NULL)
		return;
	err->code = HD_OK;
	err->msg[0] = '\0';
}

const char *
hd_code_name(int code)
{
	switch (code) {
	case HD_OK: return "ok";
	case HD_EINVAL: return "invalid";
	case HD_ENOTFOUND: return "not found";
	case HD_EEXISTS: return "exists";
	case HD_ECONFLICT: return "conflict";
	case HD_EREFUSED: return "refused";
	case HD_ETOOBIG: return "too big";
	case HD_EBUSY: return "busy";
	case HD_ENOMEM: return "out of memory";
	case HD_ETIMEOUT: return "timed out";
	default: return "error";
	}
}
