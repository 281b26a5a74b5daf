/*
 * presence.c -- HUDDLE_HOME/serve.json: a running `huddle serve` says
 * where it listens, so engines run by the CLI (huddle ask, huddle
 * exchange) attach their agents to it over HTTP with signed URLs instead
 * of starting a stdio MCP server per turn (SPEC 10.4).
 *  (1) The file is {"pid", "start", "host", "bind", "port",
 *      "public_url", "token", "tls"} where start is the process's start time
 *      (field 22 of /proc/<pid>/stat), host is where a local client
 *      connects (the bind address, or 127.0.0.1 for a wildcard), bind the
 *      listen address as given, public_url the --public-url base (or
 *      null), token says whether the server requires a bearer token (it
 *      never holds the token itself) and tls whether it speaks HTTPS
 *      (a record without it, from an older server, is plain HTTP). Written 0600 through a temporary
 *      file and rename, so a reader never sees half of it.
 *  (2) A reader trusts it only while that pid is alive with that start
 *      time (a recycled pid is not the server), and only without a token
 *      (a CLI does not know it) and without TLS (the engines' turns would
 *      have to trust the certificate; they attach over stdio instead);
 *      otherwise it answers "no server".
 *  (3) The server removes it when it stops, and only when it is its own
 *      (the pid in it is this process): a second server on the same home
 *      does not erase the first one's file.
 *  (4) hd_http_presence_alive and hd_http_presence_read answer for any
 *      server (token or not), by the same pid and start-time test as (2);
 *      read returns the whole record (a record missing a field of (1)
 *      that every writer sets is no server).
 * Callers: cmd-serve.c (write, remove), cmd-ask.c, cmd-exchange.c and
 * cmd-autorun.c (find), cmd-attach.c (read: the URL it prints),
 * cmd-backup.c (alive: restore refuses under a running server).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "http.h"

#define PRESENCE_FILE "serve.json"

/* The start time of pid (clock ticks since boot), or -1. */
static long long
proc_start(long pid)
{
	char path[64], buf[1024], *p;
	long long start = -1;
	FILE *f;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL) {
		/* after "(comm)" come fields 3, 4, ...; start is field 22 */
		for (field = 2; p != NULL && field < 22; field++)
			p = strchr(p + 1, ' ');
		if (p != NULL)
			start = strtoll(p + 1, NULL, 10);
	}
	fclose(f);
	return start;
}

static void
presence_path(char *out, size_t outlen, const char *home)
{
	snprintf(out, outlen, "%s/%s", home, PRESENCE_FILE);
}

int
hd_http_presence_write(
    const char *home, const hd_http_presence *p, hd_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	json_t *j;
	int rc = 0;

	presence_path(path, sizeof(path), home);
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	j = json_pack("{s:I, s:I, s:s, s:s, s:i, s:s?, s:b, s:b}", "pid",
	    (json_int_t)getpid(), "start",
	    (json_int_t)proc_start((long)getpid()), "host", p->host, "bind",
	    p->bind, "port", p->port, "public_url",
	    p->public_url[0] != '\0' ? p->public_url : NULL, "token", p->token,
	    "tls", p->tls);
	if (j == NULL || json_dump_file(j, tmp, JSON_COMPACT) != 0 ||
	    chmod(tmp, 0600) != 0 || rename(tmp, path) != 0) {
		rc = hd_err_set(
		    err, HD_ERR, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	json_decref(j);
	return rc;
}

void
hd_http_presence_remove(const char *home)
{
	char path[PATH_MAX];
	json_t *j;

	presence_path(path, sizeof(path), home);
	j = json_load_file(path, 0, NULL);
	if (json_integer_value(json_object_get(j, "pid")) ==
	    (json_int_t)getpid())
		unlink(path); /* (3) */
	json_decref(j);
}

int
hd_http_presence_find(const char *home, char *host, size_t hostlen, int *port)
{
	char path[PATH_MAX];
	json_t *j;
	long pid;
	int found = 0;

	presence_path(path, sizeof(path), home);
	if ((j = json_load_file(path, 0, NULL)) == NULL)
		return 0;
	pid = (long)json_integer_value(json_object_get(j, "pid"));
	if (pid > 0 && json_is_string(json_object_get(j, "host")) &&
	    json_is_integer(json_object_get(j, "port")) &&
	    json_is_false(json_object_get(j, "token")) &&
	    !json_is_true(json_object_get(j, "tls")) && /* (2) */
	    proc_start(pid) >= 0 &&
	    proc_start(pid) ==
		(long long)json_integer_value(json_object_get(j, "start"))) {
		snprintf(host, hostlen, "%s",
		    json_string_value(json_object_get(j, "host")));
		*port = (int)json_integer_value(json_object_get(j, "port"));
		found = *port > 0 && *port < 65536;
	}
	json_decref(j);
	return found;
}

long
hd_http_presence_alive(const char *home)
{
	char path[PATH_MAX];
	json_t *j;
	long pid, alive = 0;

	presence_path(path, sizeof(path), home);
	if ((j = json_load_file(path, 0, NULL)) == NULL)
		return 0;
	pid = (long)json_integer_value(json_object_get(j, "pid"));
	if (pid > 0 && proc_start(pid) >= 0 &&
	    proc_start(pid) ==
		(long long)json_integer_value(json_object_get(j, "start")))
		alive = pid; /* (4) */
	json_decref(j);
	return alive;
}

int
hd_http_presence_read(const char *home, hd_http_presence *p)
{
	char path[PATH_MAX];
	json_t *j, *pub;
	long pid;
	int found = 0;

	memset(p, 0, sizeof(*p));
	presence_path(path, sizeof(path), home);
	if ((j = json_load_file(path, 0, NULL)) == NULL)
		return 0;
	pid = (long)json_integer_value(json_object_get(j, "pid"));
	pub = json_object_get(j, "public_url");
	if (pid > 0 && json_is_string(json_object_get(j, "host")) &&
	    json_is_string(json_object_get(j, "bind")) &&
	    json_is_integer(json_object_get(j, "port")) &&
	    json_is_boolean(json_object_get(j, "token")) &&
	    (pub == NULL || json_is_null(pub) || json_is_string(pub)) &&
	    proc_start(pid) >= 0 &&
	    proc_start(pid) ==
		(long long)json_integer_value(json_object_get(j, "start"))) {
		p->pid = pid;
		snprintf(p->host, sizeof(p->host), "%s",
		    json_string_value(json_object_get(j, "host")));
		snprintf(p->bind, sizeof(p->bind), "%s",
		    json_string_value(json_object_get(j, "bind")));
		if (json_is_string(pub))
			snprintf(p->public_url, sizeof(p->public_url), "%s",
			    json_string_value(pub));
		p->port = (int)json_integer_value(json_object_get(j, "port"));
		p->token = json_is_true(json_object_get(j, "token"));
		p->tls = json_is_true(json_object_get(j, "tls"));
		found = p->port > 0 && p->port < 65536; /* (4) */
	}
	json_decref(j);
	return found;
}
