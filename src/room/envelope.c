/* clang-format off */
/*
 * envelope.c -- how a room post is delivered to a runtime (SPEC 5), byte
 * for byte:
 *
 *   [Inter-session message · from=<author> · kind=<kind> · seq=<seq> · isUser=false]
 *   | <body line 1>
 *   | <body line 2>
 *
 * Pure functions; no tables.
 *  (1) Defang first: each '[' followed by the 21 bytes "inter-session
 *      message" (ASCII case-insensitive) through the next ']' -- which may
 *      lie on a later line -- becomes "[peer-quoted header]". An opener
 *      with no later ']' is copied as it is (and so is everything after
 *      it, since no later opener can have a ']' either).
 *  (2) Then split on '\n' only ('\r' stays part of its line) and prefix
 *      every line, empty ones included, with "| "; an empty body yields a
 *      single "| " line.
 *  (3) So the output holds exactly one header, on its first line: every
 *      other line starts with "| ", and no "[inter-session message" with a
 *      later ']' survives anywhere in the body (tests/fuzz/fuzz-envelope.c
 *      checks both). Control characters in author or kind (which are ids
 *      and fixed words in practice) become spaces, so they cannot break
 *      the header line either.
 */
/* clang-format on */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <huddle/buf.h>
#include <huddle/envelope.h>

#define OPENER "inter-session message"  /* after the '[' */
#define OPENER_LEN (sizeof(OPENER) - 1) /* 21 */
#define DEFANGED "[peer-quoted header]"

/* Length of the embedded header starting at body[i] (a '['), through its
 * closing ']', or 0 when there is none there (1). */
static size_t
header_at(const char *body, size_t len, size_t i)
{
	const char *close;

	if (len - i < 1 + OPENER_LEN ||
	    strncasecmp(body + i + 1, OPENER, OPENER_LEN) != 0)
		return 0;
	close =
	    memchr(body + i + 1 + OPENER_LEN, ']', len - i - 1 - OPENER_LEN);
	return close != NULL ? (size_t)(close - (body + i)) + 1 : 0;
}

/* Append body, defanged (1), to b. */
static void
defang_into(hd_buf *b, const char *body, size_t len)
{
	size_t i = 0, start = 0, hlen;
	const char *open;

	while (i < len && (open = memchr(body + i, '[', len - i)) != NULL) {
		i = (size_t)(open - body);
		if ((hlen = header_at(body, len, i)) == 0) {
			i++;
			continue;
		}
		hd_buf_put(b, body + start, i - start);
		hd_buf_puts(b, DEFANGED);
		i += hlen;
		start = i;
	}
	hd_buf_put(b, body + start, len - start);
}

int
hd_envelope_defang(
    char **out, size_t *outlen, const char *body, size_t body_len, hd_err *err)
{
	/* defanging never lengthens: a header is >= 23 bytes, DEFANGED 20 */
	hd_buf b = HD_BUF_INIT(0);

	*out = NULL;
	if (outlen != NULL)
		*outlen = 0;
	defang_into(&b, body, body_len);
	if (hd_buf_failed(&b))
		return hd_buf_error(&b, "post body", err);
	if (outlen != NULL)
		*outlen = b.len;
	if ((*out = hd_buf_detach(&b)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

/* A header field: control characters become spaces (3). Clean runs go in
 * whole, not a byte at a time. */
static void
put_field(hd_buf *b, const char *s)
{
	const char *run = s;

	for (; s != NULL && *s != '\0'; s++) {
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			continue;
		hd_buf_put(b, run, (size_t)(s - run));
		hd_buf_putc(b, ' ');
		run = s + 1;
	}
	if (s != NULL)
		hd_buf_put(b, run, (size_t)(s - run));
}

int
hd_envelope_append(hd_buf *b, const char *author, const char *kind, int64_t seq,
    const char *body, size_t body_len, hd_err *err)
{
	hd_buf clean = HD_BUF_INIT(0);
	const char *line, *nl, *end;

	if (body_len > 0 && memchr(body, '[', body_len) != NULL) {
		defang_into(&clean, body, body_len);
		if (hd_buf_failed(&clean)) {
			int rc = hd_buf_error(&clean, "post body", err);

			hd_buf_dispose(&clean);
			return rc;
		}
		line = hd_buf_cstr(&clean);
		end = line + clean.len;
	} else { /* nothing to defang: the body as it is */
		line = body_len > 0 ? body : "";
		end = line + body_len;
	}
	hd_buf_puts(b, "[Inter-session message \xc2\xb7 from=");
	put_field(b, author);
	hd_buf_puts(b, " \xc2\xb7 kind=");
	put_field(b, kind);
	hd_buf_puts(b, " \xc2\xb7 seq=");
	hd_buf_put_i64(b, seq);
	hd_buf_puts(b, " \xc2\xb7 isUser=false]");
	for (;;) { /* (2): n newlines make n + 1 lines */
		nl = memchr(line, '\n', (size_t)(end - line));
		hd_buf_puts(b, "\n| ");
		hd_buf_put(b, line, (size_t)((nl != NULL ? nl : end) - line));
		if (nl == NULL)
			break;
		line = nl + 1;
	}
	hd_buf_dispose(&clean);
	return 0;
}

int
hd_envelope_wrap(char **out, const char *author, const char *kind, int64_t seq,
    const char *body, size_t body_len, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(HD_ENVELOPE_MAX);
	int rc;

	*out = NULL;
	if ((rc = hd_envelope_append(
		 &b, author, kind, seq, body, body_len, err)) < 0)
		goto done;
	if (hd_buf_failed(&b)) {
		rc = hd_buf_error(&b, "envelope", err);
		goto done;
	}
	if ((*out = hd_buf_detach(&b)) == NULL)
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
done:
	hd_buf_dispose(&b);
	return rc;
}
