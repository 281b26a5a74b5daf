/*
 * util.c -- time, names, randomness and files (util.h). Platform details
 * stay here so the layers above read as plain C.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/rand.h>

#include <huddle/util.h>

int64_t
hd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
hd_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
hd_mono_ms(void)
{
	return hd_mono_us() / 1000;
}

void
hd_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
hd_timespec_in(struct timespec *ts, int64_t ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

void
hd_sleep_us(int64_t us)
{
	struct timespec ts, rem;

	if (us <= 0)
		return;
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
		ts = rem;
}

void
hd_time_iso(char *out, size_t outlen, int64_t ms)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (int)(ms % 1000));
}

int
hd_slug_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (i >= 50)
			return 0;
		if (!alnum && (i == 0 || (c != '-' && c != '_')))
			return 0;
	}
	return 1;
}

int
hd_slug_check(const char *what, const char *s, hd_err *err)
{
	if (hd_slug_ok(s))
		return 0;
	return hd_err_set(err, HD_EINVAL,
	    "invalid %s name \"%.128s\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    what, s != NULL ? s : "");
}

size_t
hd_utf8_prefix(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t n, k;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			n = 1;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3;
			cp = c & 0x07;
		} else
			return i;
		if (len - i <= n)
			return i;
		for (k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
		    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += n + 1;
	}
	return len;
}

int
hd_utf8_ok(const char *s, size_t len)
{
	return hd_utf8_prefix(s, len) == len;
}

size_t
hd_utf8_cut(const char *s, size_t max)
{
	size_t len = strnlen(s, max);

	return hd_utf8_prefix(s, len);
}

void
hd_utf8_scrub(char *s)
{
	size_t len = strlen(s), i = 0;

	while ((i += hd_utf8_prefix(s + i, len - i)) < len)
		s[i++] = '?';
}

void
hd_utf8_line(char *s)
{
	hd_utf8_scrub(s);
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

long
hd_utf8_chars(const char *s)
{
	size_t len = strlen(s), i;
	long n = 0;

	if (!hd_utf8_ok(s, len))
		return -1;
	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

int
hd_text_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '\0' || strchr(HD_TEXT_BLANK_CHARS, s[i]) == NULL)
			return 0;
	return 1;
}

int
hd_text_check(const char *what, const char *s, long min, long max,
    hd_err *err)
{
	long n = hd_utf8_chars(s);

	if (n < 0)
		return hd_err_set(err, HD_EINVAL, "%s must be valid UTF-8", what);
	if (min > 0 && hd_text_blank(s, strlen(s)))
		return hd_err_set(err, HD_EINVAL, "%s must not be empty", what);
	if (n < min)
		return hd_err_set(err, HD_EINVAL,
		    min == 1 ? "%s must not be empty" : "%s is too short", what);
	if (n > max)
		return hd_err_set(err, HD_EINVAL,
		    "%s is %ld characters; the limit is %ld", what, n, max);
	return 0;
}

int
hd_random_bytes(void *buf, size_t n, hd_err *err)
{
	if (n > INT_MAX || RAND_bytes(buf, (int)n) != 1)
		return hd_err_set(err, HD_ERR, "no random bytes available");
	return 0;
}

void
hd_uuid_format(char out[37], unsigned char r[16])
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o;

	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	/* by hand, not snprintf: ids are minted on every post and event */
	for (i = 0, o = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[r[i] >> 4];
		out[o++] = hex[r[i] & 0x0f];
	}
	out[o] = '\0';
}

int
hd_uuid(char out[37], hd_err *err)
{
	unsigned char r[16];
	int rc;

	if ((rc = hd_random_bytes(r, sizeof(r), err)) < 0)
		return rc;
	hd_uuid_format(out, r);
	return 0;
}

int
hd_random_hex(char *out, size_t nbytes, hd_err *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[64];
	size_t i;
	int rc;

	if (nbytes > sizeof(r))
		return hd_err_set(err, HD_EINVAL, "random id too long");
	if ((rc = hd_random_bytes(r, nbytes, err)) < 0)
		return rc;
	for (i = 0; i < nbytes; i++) {
		out[2 * i] = hex[r[i] >> 4];
		out[2 * i + 1] = hex[r[i] & 15];
	}
	out[2 * nbytes] = '\0';
	return 0;
}

uint32_t
hd_jitter(uint32_t n)
{
	uint32_t r;

	if (n == 0)
		return 0;
	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = (uint32_t)hd_mono_us();
	return r % n;
}

int
hd_mkdir_p(const char *path, int mode, hd_err *err)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path), i;

	if (len == 0 || len >= sizeof(tmp))
		return hd_err_set(err, HD_EINVAL, "bad directory path \"%.128s\"",
		    path);
	memcpy(tmp, path, len + 1);
	for (i = 1; i <= len; i++) {
		struct stat sb;

		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, (mode_t)mode) != 0 && errno != EEXIST)
			return hd_err_set(err, HD_ERR, "cannot create %s: %s", tmp,
			    strerror(errno));
		if (stat(tmp, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return hd_err_set(err, HD_ERR, "%s is not a directory",
			    tmp);
		if (i < len)
			tmp[i] = '/';
	}
	return 0;
}

char *
hd_home_resolve(const char *override, hd_err *err)
{
	const char *env, *home;
	char *out;
	size_t n;

	if (override != NULL && override[0] != '\0')
		return strdup(override);
	if ((env = getenv("HUDDLE_HOME")) != NULL && env[0] != '\0')
		return strdup(env);
	if ((home = getenv("HOME")) == NULL || home[0] == '\0') {
		hd_err_set(err, HD_EINVAL,
		    "cannot find a home: set HUDDLE_HOME or pass --home DIR");
		return NULL;
	}
	n = strlen(home) + sizeof("/.huddle");
	if ((out = malloc(n)) == NULL) {
		hd_err_set(err, HD_ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(out, n, "%s/.huddle", home);
	return out;
}

int
hd_read_file(char **out, size_t *outlen, const char *path, size_t max,
    hd_err *err)
{
	FILE *f;
	char *data = NULL;
	size_t len = 0, cap = 0, n;
	int rc = 0;

	if ((f = fopen(path, "rb")) == NULL)
		return hd_err_set(err, errno == ENOENT ? HD_ENOTFOUND : HD_ERR,
		    "cannot read %s: %s", path, strerror(errno));
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *nd;

			cap = cap ? cap * 2 : 8192;
			if ((nd = realloc(data, cap)) == NULL) {
				rc = hd_err_set(err, HD_ENOMEM, "out of memory");
				goto done;
			}
			data = nd;
		}
		n = fread(data + len, 1, cap - len - 1, f);
		len += n;
		if (len > max) {
			rc = hd_err_set(err, HD_ETOOBIG,
			    "%s is over the limit of %zu bytes", path, max);
			goto done;
		}
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		rc = hd_err_set(err, HD_ERR, "cannot read %s", path);
		goto done;
	}
	data[len] = '\0';
	*out = data;
	if (outlen != NULL)
		*outlen = len;
	data = NULL;
done:
	free(data);
	fclose(f);
	return rc;
}

int
hd_parse_duration(int64_t *ms, const char *s, const char *units, int64_t max_ms)
{
	static const struct {
		char unit;
		int64_t ms;
	} scale[] = {{'s', 1000}, {'m', 60000}, {'h', 3600000},
	    {'d', 86400000}, {'w', 7 * 86400000LL}};
	size_t len = strlen(s), i;
	char digits[24];
	int64_t n = 0;

	if (len < 2 || len >= sizeof(digits) ||
	    strspn(s, "0123456789") != len - 1 ||
	    strchr(units, s[len - 1]) == NULL)
		return 0;
	memcpy(digits, s, len - 1);
	digits[len - 1] = '\0';
	for (i = 0; i < sizeof(scale) / sizeof(scale[0]); i++)
		if (s[len - 1] == scale[i].unit &&
		    hd_parse_i64(&n, digits, "duration", NULL) == 0 && n > 0 &&
		    n <= max_ms / scale[i].ms) {
			*ms = n * scale[i].ms;
			return 1;
		}
	return 0;
}

int
hd_parse_i64(int64_t *out, const char *s, const char *what, hd_err *err)
{
	char *end;
	long long v;

	errno = 0;
	if (s == NULL || *s == '\0')
		goto bad;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		goto bad;
	*out = (int64_t)v;
	return 0;
bad:
	return hd_err_set(err, HD_EINVAL, "%s must be an integer, not \"%.64s\"",
	    what, s != NULL ? s : "");
}
