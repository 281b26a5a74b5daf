/*
 * home.c -- runtime homes (SPEC 9.3): observe, never clobber. Owns the
 * directories HUDDLE_HOME/homes/<runtime>/<agent>/ and ephemeral homes;
 * owns no table.
 *  (1) A path is built only from names that pass hd_slug_ok, so a home is
 *      always exactly HUDDLE_HOME/homes/<runtime>/<agent>.
 *  (2) Homes are 0700, created before the runtime runs.
 *  (3) huddle writes only the files it owns (HD_RUNTIME_MCP_FILE), and
 *      rewrites them every run through a temporary file and rename(), so a
 *      runtime never reads half a file and a link planted in its place is
 *      replaced, not followed.
 *  (4) A seed is copied only when its name is absent (link(2) of a full
 *      temporary copy, which fails when the name exists), so a runtime's
 *      own edits win forever. Everything else in the home is the
 *      runtime's and is never read, changed or removed.
 *  (5) An ephemeral home is a fresh mkdtemp directory, removed with all its
 *      contents after the run; removal never follows a symbolic link.
 * Persistent homes of the same agent may be prepared by two turns at once:
 * (3) and (4) keep both correct without a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

#define HOME_COPY_CHUNK 65536

/* Write len bytes at fd; 0 or -1 (errno set). */
static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A temporary file next to dest: "<dir>/.<base>.huddle-XXXXXX", open
 * with mode; on failure tmp is "". */
static int
temp_beside(char *tmp, size_t tmplen, const char *dir, const char *base,
    int mode, hd_err *err)
{
	int fd;

	if ((size_t)snprintf(tmp, tmplen, "%s/.%s.huddle-XXXXXX", dir, base) >=
	    tmplen) {
		tmp[0] = '\0';
		return hd_err_set(err, HD_EINVAL, "path too long in %s", dir);
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		tmp[0] = '\0';
		return hd_err_set(err, HD_ERR, "cannot create a file in %s: %s",
		    dir, strerror(errno));
	}
	if (fchmod(fd, (mode_t)mode) != 0) {
		int e = errno;

		close(fd);
		unlink(tmp);
		tmp[0] = '\0';
		return hd_err_set(err, HD_ERR, "cannot create a file in %s: %s",
		    dir, strerror(e));
	}
	return fd;
}

/* (3): the MCP config (Claude Code's --mcp-config shape, which generic
 * clients read too): the HTTP attach URL, else the stdio command, else
 * its removal when there is neither. */
static int
write_mcp(const char *home, const char *url, const char *token,
    const char *const *command, hd_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	json_t *cfg = NULL;
	char *text = NULL;
	int fd = -1, rc = 0, e;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", home,
		HD_RUNTIME_MCP_FILE) >= sizeof(path))
		return hd_err_set(err, HD_EINVAL, "path too long in %s", home);
	if (url == NULL && (command == NULL || command[0] == NULL)) {
		if (unlink(path) != 0 && errno != ENOENT)
			return hd_err_set(err, HD_ERR, "cannot remove %s: %s",
			    path, strerror(errno));
		return 0;
	}
	if (url != NULL)
		cfg = json_pack("{s:{s:{s:s, s:s}}}", "mcpServers", "huddle",
		    "type", "http", "url", url);
	else {
		json_t *args = json_array();
		size_t i;

		for (i = 1; command[i] != NULL; i++)
			json_array_append_new(args, json_string(command[i]));
		cfg =
		    json_pack("{s:{s:{s:s, s:s, s:o}}}", "mcpServers", "huddle",
			"type", "stdio", "command", command[0], "args", args);
	}
	if (cfg != NULL && url != NULL && token != NULL) {
		json_t *srv = json_object_get(
		    json_object_get(cfg, "mcpServers"), "huddle");
		json_t *hdr = json_object();
		char bearer[1024];

		snprintf(bearer, sizeof(bearer), "Bearer %s", token);
		json_object_set_new(hdr, "Authorization", json_string(bearer));
		json_object_set_new(srv, "headers", hdr);
	}
	if (cfg == NULL ||
	    (text = json_dumps(cfg, JSON_INDENT(2) | JSON_PRESERVE_ORDER)) ==
		NULL) {
		rc = hd_err_set(err, HD_EINVAL,
		    "the MCP attach URL and command must be valid UTF-8");
		goto done;
	}
	if ((fd = temp_beside(
		 tmp, sizeof(tmp), home, HD_RUNTIME_MCP_FILE, 0600, err)) < 0) {
		rc = fd;
		goto done;
	}
	e = write_all(fd, text, strlen(text)) != 0 ||
		    write_all(fd, "\n", 1) != 0
		? errno
		: 0;
	if (close(fd) != 0 && e == 0)
		e = errno;
	fd = -1;
	if (e == 0 && rename(tmp, path) != 0)
		e = errno;
	if (e != 0) {
		unlink(tmp);
		rc = hd_err_set(
		    err, HD_ERR, "cannot write %s: %s", path, strerror(e));
	}
done:
	if (fd >= 0)
		close(fd);
	free(text);
	json_decref(cfg);
	return rc;
}

/* A seed name is a relative path of plain components, none of them "."
 * or "..", and never a file huddle owns. */
static int
seed_name_ok(const char *name)
{
	const char *p = name, *slash;
	size_t n;

	if (name == NULL || name[0] == '\0' || name[0] == '/' ||
	    strcmp(name, HD_RUNTIME_MCP_FILE) == 0 || strlen(name) > 255)
		return 0;
	for (;;) {
		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (slash == NULL)
			return 1;
		p = slash + 1;
	}
}

/* (4): copy src to home/name unless name exists. */
static int
seed_one(const char *home, const hd_runtime_seed *s, hd_err *err)
{
	char dest[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX], buf[HOME_COPY_CHUNK];
	const char *base;
	struct stat sb;
	ssize_t n;
	int in = -1, out = -1, rc = 0;

	tmp[0] = '\0';
	if (!seed_name_ok(s->name))
		return hd_err_set(err, HD_EINVAL,
		    "invalid seed name \"%.128s\": use a relative path inside "
		    "the home",
		    s->name ? s->name : "");
	if ((size_t)snprintf(dest, sizeof(dest), "%s/%s", home, s->name) >=
	    sizeof(dest))
		return hd_err_set(err, HD_EINVAL, "path too long in %s", home);
	if (lstat(dest, &sb) == 0)
		return 0; /* present: the runtime's now */
	memcpy(dir, dest, strlen(dest) + 1);
	*strrchr(dir, '/') = '\0';
	base = strrchr(dest, '/') + 1;
	if ((rc = hd_mkdir_p(dir, 0700, err)) < 0)
		return rc;
	if ((in = open(s->src, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(in, &sb) != 0) {
		rc = hd_err_set(err, errno == ENOENT ? HD_ENOTFOUND : HD_ERR,
		    "cannot read seed %s: %s", s->src, strerror(errno));
		goto done;
	}
	if ((out = temp_beside(tmp, sizeof(tmp), dir, base,
		 (int)((sb.st_mode & 0700) | 0600), err)) < 0) {
		rc = out;
		goto done;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write_all(out, buf, (size_t)n) != 0) {
			rc = hd_err_set(err, HD_ERR, "cannot copy seed %s: %s",
			    s->src, strerror(errno));
			goto done;
		}
	}
	if (close(out) != 0) {
		out = -1;
		rc = hd_err_set(err, HD_ERR, "cannot copy seed %s: %s", s->src,
		    strerror(errno));
		goto done;
	}
	out = -1;
	if (link(tmp, dest) != 0 && errno != EEXIST)
		rc = hd_err_set(
		    err, HD_ERR, "cannot write %s: %s", dest, strerror(errno));
done:
	if (out >= 0)
		close(out);
	if (tmp[0] != '\0') /* linked or not, the temporary name goes */
		unlink(tmp);
	if (in >= 0)
		close(in);
	return rc;
}

static int
persistent_dir(char **out, const hd_runtime_home_spec *spec, hd_err *err)
{
	char path[PATH_MAX];
	struct stat sb;
	int rc;

	if (spec->huddle_home == NULL || spec->huddle_home[0] == '\0')
		return hd_err_set(err, HD_EINVAL,
		    "the persistent home of agent %s needs HUDDLE_HOME",
		    spec->agent);
	if ((size_t)snprintf(path, sizeof(path), "%s/homes/%s/%s",
		spec->huddle_home, spec->runtime, spec->agent) >= sizeof(path))
		return hd_err_set(
		    err, HD_EINVAL, "path too long in %s", spec->huddle_home);
	if ((rc = hd_mkdir_p(path, 0700, err)) < 0)
		return rc;
	if (lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return hd_err_set(err, HD_ERR, "%s is not a directory", path);
	/* (2): a home made before by hand or an older huddle gets tightened;
	 * only its owner can, and only its owner's matters. */
	if ((sb.st_mode & 07777) != 0700 && sb.st_uid == geteuid() &&
	    chmod(path, 0700) != 0)
		return hd_err_set(
		    err, HD_ERR, "cannot chmod %s: %s", path, strerror(errno));
	if ((*out = strdup(path)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

static int
ephemeral_dir(char **out, const hd_runtime_home_spec *spec, hd_err *err)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	if ((size_t)snprintf(path, sizeof(path), "%s/huddle-%s-%s-XXXXXX", tmp,
		spec->runtime, spec->agent) >= sizeof(path))
		return hd_err_set(err, HD_EINVAL, "path too long in %s", tmp);
	if (mkdtemp(path) == NULL) /* 0700 by definition */
		return hd_err_set(err, HD_ERR, "cannot create a home in %s: %s",
		    tmp, strerror(errno));
	if ((*out = strdup(path)) == NULL) {
		rmdir(path);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	return 0;
}

int
hd_runtime_home_prepare(hd_runtime_home *out, const hd_runtime_plan *plan,
    const hd_runtime_home_spec *spec, hd_err *err)
{
	size_t i;
	int rc;

	out->path = NULL;
	out->ephemeral = 0;
	if (plan->home == HD_HOME_CONNECTED || !plan->needs_dir)
		return 0;
	if ((rc = hd_slug_check("runtime", spec->runtime, err)) < 0 ||
	    (rc = hd_slug_check("agent", spec->agent, err)) < 0) /* (1) */
		return rc;
	if (plan->home == HD_HOME_PERSISTENT)
		rc = persistent_dir(&out->path, spec, err);
	else {
		rc = ephemeral_dir(&out->path, spec, err);
		out->ephemeral = rc == 0;
	}
	if (rc < 0)
		return rc;
	if ((rc = write_mcp(out->path, spec->mcp_url, spec->mcp_token,
		 spec->mcp_command, err)) < 0)
		return rc;
	for (i = 0; i < spec->nseeds; i++)
		if ((rc = seed_one(out->path, &spec->seeds[i], err)) < 0)
			return rc;
	return 0;
}

void
hd_runtime__user_dir(
    char *out, size_t outlen, const char *env_var, const char *dot_dir)
{
	const char *src = getenv(env_var), *h = getenv("HOME");

	out[0] = '\0';
	if (src != NULL && src[0] != '\0')
		snprintf(out, outlen, "%s", src);
	else if (h != NULL && h[0] != '\0')
		snprintf(out, outlen, "%s/%s", h, dot_dir);
}

int
hd_runtime__seed_from(const char *home, const char *dir,
    const char *const *names, hd_err *err)
{
	char path[PATH_MAX];
	hd_runtime_seed seed;
	size_t i;
	int rc;

	if (dir[0] == '\0' || strcmp(dir, home) == 0)
		return 0;
	for (i = 0; names[i] != NULL; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
			names[i]) >= sizeof(path) ||
		    access(path, R_OK) != 0)
			continue;
		seed.src = path;
		seed.name = names[i];
		if ((rc = seed_one(home, &seed, err)) < 0)
			return rc;
	}
	return 0;
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0; /* keep going: remove what can be removed */
}

void
hd_runtime_home_release(hd_runtime_home *h)
{
	if (h == NULL)
		return;
	if (h->ephemeral && h->path != NULL) /* (5) */
		nftw(h->path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	free(h->path);
	h->path = NULL;
	h->ephemeral = 0;
}
