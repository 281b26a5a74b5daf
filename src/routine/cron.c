/*
 * cron.c -- a routine's schedule (routine.h): the 5-field cron parser,
 * intervals, and the next fire time in a named time zone.
 *
 * Design:
 *  (1) A field is a bitset of the values it matches; the parser names
 *      the field and the token it could not read. Day-of-month and
 *      day-of-week follow cron's OR rule: when both are restricted, a
 *      day matches either; when one is `*`, only the other decides.
 *  (2) The next fire walks the wall clock of the zone forward from the
 *      wall time of `after` (inclusive), day by day (calendar arithmetic,
 *      no zone needed) and, on a matching day, through the matching hours
 *      and minutes; each candidate wall time is resolved to UTC and the
 *      first one later than `after` wins. Because the walk is over wall
 *      times, never instants, each wall time is considered once: a time
 *      that exists twice (fall back) resolves to its first occurrence
 *      and is never considered again, and one that does not exist (spring
 *      forward) resolves to the first valid wall time after the gap (the
 *      transition itself), so every such time in the gap fires at most
 *      once there.
 *  (3) Zone conversion uses the C library's tz database reader (mktime,
 *      localtime_r under TZ=zone, tzdata's files), which is correct and
 *      maintained, instead of a TZif parser of our own. TZ is process
 *      state, so every use is under tz_mu, held for a whole next-fire
 *      computation (the zone file is read once per computation, not per
 *      candidate). Thread safety of the switch itself: TZ is only ever
 *      replaced, never unset (unset is restored as ":/etc/localtime",
 *      glibc's default when TZ is absent), and glibc never frees an
 *      environment string it replaced nor the array it made when TZ was
 *      first added, so a getenv racing a switch on another thread reads
 *      the old or the new value, never freed memory. No other code in the
 *      server reads local time (its logs and stamps are UTC: gmtime_r);
 *      the CLI's table.c formats local times in its own single-threaded
 *      process.
 *  (4) A zone is checked by its file under the tz database (TZDIR or
 *      /usr/share/zoneinfo): glibc would silently treat an unknown name
 *      as UTC. Names are IANA names: letters, digits, '/', '_', '-', '+'.
 * Callers: routine.c, the unit tests (tests/unit/routine).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <huddle/routine.h>

static const char *const field_names[5] = {
    "minute", "hour", "day-of-month", "month", "day-of-week"};
static const int field_min[5] = {0, 0, 1, 1, 0};
static const int field_max[5] = {59, 23, 31, 12, 7};
static const char *const months[] = {"jan", "feb", "mar", "apr", "may",
    "jun", "jul", "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const days[] = {
    "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

/* A number or (month, day-of-week) a name at *p; advances *p. */
static int
read_value(const char **p, int field, int *out)
{
	const char *const *names = field == 3 ? months : field == 4 ? days : NULL;
	const char *s = *p;
	long v = 0;
	int i, digits = 0;

	if (names != NULL)
		for (i = 0; names[i] != NULL; i++)
			if (strncasecmp(s, names[i], 3) == 0) {
				*out = i + (field == 3 ? 1 : 0);
				*p = s + 3;
				return 0;
			}
	while (*s >= '0' && *s <= '9' && digits < 4) {
		v = v * 10 + (*s - '0');
		s++;
		digits++;
	}
	if (digits == 0 || (*s >= '0' && *s <= '9'))
		return -1;
	*out = (int)v;
	*p = s;
	return 0;
}

static int
field_err(hd_err *err, int field, const char *tok, size_t len)
{
	const char *hint = field == 3   ? "1-12 or jan-dec"
			   : field == 4 ? "0-7 or sun-sat"
					: NULL;

	if (hint != NULL)
		return hd_err_set(err, HD_EINVAL, "cron: bad %s \"%.*s\": use %s",
		    field_names[field], (int)(len > 40 ? 40 : len), tok, hint);
	return hd_err_set(err, HD_EINVAL, "cron: bad %s \"%.*s\": use %d-%d",
	    field_names[field], (int)(len > 40 ? 40 : len), tok,
	    field_min[field], field_max[field]);
}

/* One field (tok, len bytes) into *bits. */
static int
parse_field(uint64_t *bits, int *any, int field, const char *tok, size_t len,
    hd_err *err)
{
	const char *p = tok, *end = tok + len;
	int lo, hi, step, v, star;

	*bits = 0;
	*any = len == 1 && tok[0] == '*';
	while (p < end) {
		const char *item = p;

		star = 0;
		if (*p == '*') {
			lo = field_min[field];
			hi = field == 4 ? 6 : field_max[field];
			p++;
			star = 1;
		} else {
			if (read_value(&p, field, &lo) < 0)
				return field_err(err, field, tok, len);
			hi = lo;
			if (p < end && *p == '-') {
				p++;
				if (read_value(&p, field, &hi) < 0)
					return field_err(err, field, tok, len);
			}
		}
		step = 1;
		if (p < end && *p == '/') {
			p++;
			if (read_value(&p, -1, &step) < 0 || step < 1 ||
			    step > field_max[field])
				return field_err(err, field, tok, len);
			if (!star && hi == lo)
				hi = field == 4 ? 6 : field_max[field];
		}
		if (p < end && *p != ',')
			return field_err(err, field, tok, len);
		if (lo < field_min[field] || hi > field_max[field] || lo > hi)
			return field_err(err, field, item,
			    (size_t)((p < end ? p : end) - item));
		for (v = lo; v <= hi; v += step)
			*bits |= 1ULL << (field == 4 && v == 7 ? 0 : v);
		if (p < end)
			p++; /* the comma */
		if (p == end && end[-1] == ',')
			return field_err(err, field, tok, len);
	}
	return 0;
}

int
hd_cron_parse(hd_cron *out, const char *expr, hd_err *err)
{
	const char *tok[6], *p;
	size_t len[6];
	uint64_t bits[5];
	int any[5], n = 0, i, rc;

	memset(out, 0, sizeof(*out));
	if (expr == NULL)
		return hd_err_set(err, HD_EINVAL, "cron: no expression");
	if (strlen(expr) > HD_ROUTINE_CRON_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "cron: the expression is longer than %d bytes",
		    HD_ROUTINE_CRON_MAX);
	for (p = expr; *p != '\0';) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		if (n == 6)
			break;
		tok[n] = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		len[n] = (size_t)(p - tok[n]);
		n++;
	}
	if (n != 5)
		return hd_err_set(err, HD_EINVAL,
		    "cron: needs 5 fields (minute hour day-of-month month "
		    "day-of-week), got %s%d",
		    n == 6 ? "more than " : "", n == 6 ? 5 : n);
	for (i = 0; i < 5; i++)
		if ((rc = parse_field(
			 &bits[i], &any[i], i, tok[i], len[i], err)) < 0)
			return rc;
	out->minute = bits[0];
	out->hour = (uint32_t)bits[1];
	out->dom = (uint32_t)bits[2];
	out->month = (uint16_t)bits[3];
	out->dow = (uint8_t)bits[4];
	out->dom_any = any[2];
	out->dow_any = any[4];
	return 0;
}

int
hd_routine_parse_every(int64_t *out_s, const char *text, hd_err *err)
{
	char *end = NULL;
	long long v;
	int64_t mul;

	if (text == NULL || text[0] < '0' || text[0] > '9')
		goto bad;
	v = strtoll(text, &end, 10);
	if (end == NULL || end[0] == '\0' || end[1] != '\0' || v <= 0 ||
	    v > HD_ROUTINE_EVERY_MAX_S)
		goto bad;
	switch (end[0]) {
	case 's': mul = 1; break;
	case 'm': mul = 60; break;
	case 'h': mul = 3600; break;
	case 'd': mul = 86400; break;
	default: goto bad;
	}
	if (v * mul < HD_ROUTINE_EVERY_MIN_S || v * mul > HD_ROUTINE_EVERY_MAX_S)
		goto bad;
	*out_s = v * mul;
	return 0;
bad:
	return hd_err_set(err, HD_EINVAL,
	    "bad interval \"%.40s\": use N followed by s, m, h or d (at least "
	    "1m, at most 366d)",
	    text != NULL ? text : "");
}

/* ---- zones (3) (4) ------------------------------------------------------ */

static pthread_mutex_t tz_mu = PTHREAD_MUTEX_INITIALIZER;

static int
zone_name_ok(const char *z)
{
	size_t i, n = strlen(z);

	if (n == 0 || n > HD_ROUTINE_TZ_MAX || z[0] == '/' || z[0] == '.' ||
	    strstr(z, "..") != NULL)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = z[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			(ch >= '0' && ch <= '9') || ch == '/' || ch == '_' ||
			ch == '-' || ch == '+'))
			return 0;
	}
	return 1;
}

int
hd_tz_check(const char *zone, hd_err *err)
{
	const char *dir = getenv("TZDIR");
	char path[512];
	struct stat sb;

	if (zone != NULL && strcmp(zone, "UTC") == 0)
		return 0;
	if (zone == NULL || !zone_name_ok(zone))
		goto bad;
	snprintf(path, sizeof(path), "%s/%s",
	    dir != NULL && dir[0] != '\0' ? dir : "/usr/share/zoneinfo", zone);
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		return 0;
bad:
	return hd_err_set(err, HD_EINVAL,
	    "unknown time zone \"%.64s\": use an IANA name such as "
	    "Europe/Berlin (the system's tz database, package tzdata)",
	    zone != NULL ? zone : "");
}

/* Switch TZ to zone under tz_mu; *saved: what to put back. */
static void
tz_enter(const char *zone, char *saved, size_t len)
{
	const char *old;

	pthread_mutex_lock(&tz_mu);
	old = getenv("TZ");
	snprintf(saved, len, "%s", old != NULL ? old : ":/etc/localtime");
	setenv("TZ", zone, 1);
	tzset();
}

static void
tz_leave(const char *saved)
{
	setenv("TZ", saved, 1);
	tzset();
	pthread_mutex_unlock(&tz_mu);
}

/* ---- calendar (2) ------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int
day_matches(const hd_cron *c, int64_t day)
{
	int64_t y;
	int m, d, dow = (int)(((day % 7) + 11) % 7); /* 1970-01-01: Thursday */
	int dom_ok, dow_ok;

	civil_from_days(day, &y, &m, &d);
	if (!(c->month & (1u << m)))
		return 0;
	dom_ok = (c->dom >> d) & 1u;
	dow_ok = (c->dow >> dow) & 1u;
	if (c->dom_any || c->dow_any)
		return dom_ok && dow_ok;
	return dom_ok || dow_ok; /* (1) */
}

/* The earliest instant whose wall time in the current TZ is (day,
 * minute of day): 1 with *t, 0 when the wall time does not exist. */
static int
wall_to_utc(time_t *t, int64_t day, int mod)
{
	static const int dst[3] = {-1, 0, 1};
	int64_t y;
	int m, d, i, found = 0;

	civil_from_days(day, &y, &m, &d);
	for (i = 0; i < 3; i++) {
		struct tm tm, back;
		time_t u;

		memset(&tm, 0, sizeof(tm));
		tm.tm_year = (int)(y - 1900);
		tm.tm_mon = m - 1;
		tm.tm_mday = d;
		tm.tm_hour = mod / 60;
		tm.tm_min = mod % 60;
		tm.tm_isdst = dst[i];
		if ((u = mktime(&tm)) == (time_t)-1)
			continue;
		if (localtime_r(&u, &back) == NULL ||
		    back.tm_year != (int)(y - 1900) || back.tm_mon != m - 1 ||
		    back.tm_mday != d || back.tm_hour != mod / 60 ||
		    back.tm_min != mod % 60)
			continue;
		if (!found || u < *t)
			*t = u;
		found = 1;
	}
	return found;
}

/* (2): a wall time in a gap resolves to the first valid one after it. */
static int
resolve(time_t *t, int64_t day, int mod)
{
	int k;

	for (k = 0; k <= 24 * 60; k++) {
		int64_t w = day * 1440 + mod + k;

		if (wall_to_utc(t, w / 1440, (int)(w % 1440)))
			return 1;
	}
	return 0;
}

#define SEARCH_DAYS (366 * 30)

int
hd_cron_next(int64_t *out, const hd_cron *c, const char *zone,
    int64_t after_ms, hd_err *err)
{
	char saved[256];
	time_t after_s = (time_t)(after_ms / 1000), t = 0;
	struct tm lt;
	int64_t day, first;
	int start_mod, h, mi, rc = 0;

	if (zone == NULL)
		zone = "UTC";
	if ((rc = hd_tz_check(zone, err)) < 0)
		return rc;
	tz_enter(zone, saved, sizeof(saved));
	if (localtime_r(&after_s, &lt) == NULL) {
		tz_leave(saved);
		return hd_err_set(err, HD_EINVAL, "time out of range");
	}
	first = days_from_civil(lt.tm_year + 1900, lt.tm_mon + 1, lt.tm_mday);
	start_mod = lt.tm_hour * 60 + lt.tm_min;
	for (day = first; day < first + SEARCH_DAYS && rc == 0; day++) {
		if (!day_matches(c, day))
			continue;
		for (h = 0; h < 24 && rc == 0; h++) {
			if (!((c->hour >> h) & 1u) ||
			    (day == first && h < start_mod / 60))
				continue;
			for (mi = 0; mi < 60; mi++) {
				int mod = h * 60 + mi;

				if (!((c->minute >> mi) & 1ULL) ||
				    (day == first && mod < start_mod))
					continue;
				if (!resolve(&t, day, mod))
					continue;
				if ((int64_t)t * 1000 > after_ms) {
					*out = (int64_t)t * 1000;
					rc = 1;
					break;
				}
			}
		}
	}
	tz_leave(saved);
	return rc;
}
