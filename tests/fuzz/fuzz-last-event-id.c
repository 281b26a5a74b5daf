/*
 * fuzz-last-event-id.c -- an SSE client's Last-Event-ID (src/http/sse.c
 * (6)) on any header value and any log head. The first input byte is the
 * head -- or, when it is 0xff, the next eight are (big-endian, made
 * non-negative) -- and the rest the header value (a C string, as
 * libmicrohttpd hands it over). For every input:
 *  (1) an empty value resumes from now (-1); any other either parses as
 *      an integer >= 0 -- the same one hd_parse_i64 reads -- or is refused
 *      (HD_EINVAL, with a message) and resumes nowhere;
 *  (2) an id at or below the head resumes right after it, with no note;
 *      one beyond it resumes from the head, with a note that is a single
 *      SSE comment line ("': '... then a blank line) naming both numbers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include <http/http.h>

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_err err = HD_ERR_INIT, err2 = HD_ERR_INIT;
	uint64_t h = 0;
	int64_t head, id = 0, plain = 0, at;
	long long a = 0, b = 0;
	char *value, note[160], tail[8];
	size_t i, n;
	int rc;

	if (size > 0 && data[0] == 0xff) {
		for (i = 1; i < 9 && i < size; i++)
			h = h << 8 | data[i];
	} else if (size > 0) {
		h = data[0];
		i = 1;
	} else
		i = 0;
	head = (int64_t)(h & INT64_MAX);
	data += i;
	size -= i;
	if ((value = malloc(size + 1)) == NULL)
		return 0;
	for (i = 0; i < size; i++)
		value[i] = data[i] == '\0' ? ' ' : (char)data[i];
	value[size] = '\0';

	/* (1) */
	rc = hd_http_sse_last_id(&id, value, &err);
	if (value[0] == '\0')
		check(rc == 0 && id == -1, "an empty value does not mean now");
	else if (rc == 0) {
		check(id >= 0, "a negative id passed");
		check(hd_parse_i64(&plain, value, "x", &err2) == 0 && plain == id,
		    "the id is not the integer the value spells");
	} else {
		check(rc == HD_EINVAL && id == -1 && err.msg[0] != '\0',
		    "a refusal is not HD_EINVAL with a message");
		check(hd_parse_i64(&plain, value, "x", &err2) < 0 || plain < 0,
		    "an integer >= 0 was refused");
	}
	if (rc < 0 || id < 0) {
		free(value);
		return 0;
	}

	/* (2) */
	at = hd_http_sse_resume(note, sizeof(note), id, head);
	if (id <= head)
		check(at == id && note[0] == '\0', "a known id was moved");
	else {
		check(at == head, "an id beyond the head does not resume there");
		n = strlen(note);
		check(n > 4 && strncmp(note, ": ", 2) == 0 &&
			  strcmp(note + n - 2, "\n\n") == 0 &&
			  memchr(note, '\n', n - 2) == NULL &&
			  strchr(note, '\r') == NULL,
		    "the note is not one comment line");
		check(sscanf(note,
			  ": last-event-id %lld is beyond the head %lld; "
			  "resuming from the head%7s",
			  &a, &b, tail) == 2 &&
			  a == id && b == head,
		    "the note does not name the id and the head");
	}
	free(value);
	return 0;
}

/* The head first (see above). */
const char *const hd_fuzz_seeds[] = {
    "\x01" "5",
    "\x0a" "5",
    "\x0a" "10",
    "\x0a" "999999999",
    "\x0a" "-3",
    "\x0a" "abc",
    "\x0a" " 7",
    "\x0a" "+7",
    "\x0a" "0x10",
    "\x0a" "",
    "\xff\x7f\xff\xff\xff\xff\xff\xff\xff" "9223372036854775807",
    "\xff\x7f\xff\xff\xff\xff\xff\xff\xfe" "9223372036854775807",
    "\x01" "9223372036854775808",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "\x00", "\x01", "\x7f", "\xff", "0", "1", "9", "-", "+", " ", "\t",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "e", "x", ".", NULL,
};
