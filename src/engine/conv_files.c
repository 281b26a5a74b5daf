/*
 * conv_files.c -- what a reply carries besides mentions (room and file tags)
 * and the files it attaches: the `[#team: ...]` and `[send_file: ...]`
 * parser (pure), the long answer's cut (pure), and the tags applied to a
 * reply before it is recorded (reads the agent and its files). The files
 * are stored by the domain module (table conversation_files,
 * src/conversation/files.c) in the reply's transaction.
 *  (1) Room and file tags are found only outside mention tags, with the
 *      same bracket rule as mentions.c: a tag's body ends at the ']' that
 *      balances its '['.
 *  (2) Applying the tags (hd_conv__tags_apply) removes every room tag and
 *      every file tag whose file is attached; a file that cannot be
 *      attached leaves its tag in the text followed by ` (file not
 *      attached: <why>)`. So the user-facing answer, the room post and the
 *      aggregate never show a tag that did its job.
 *  (3) A file is attached only when its real path (symlinks resolved) lies
 *      under the real path of the agent's work directory, it is a regular
 *      file opened without following a final symlink, and the reply's
 *      files stay within HD_CONVERSATION_FILES_MAX bytes in all. The work
 *      directory is runtime_config.workdir, else runtime_config.cwd (the
 *      exec runtime's), else the agent's persistent home
 *      HUDDLE_HOME/homes/<runtime>/<agent>; a relative path in a tag is
 *      taken from it.
 *  (4) Bytes are read before the reply's transaction and written in it
 *      (hd_convstore_files_add), so a reply and its files commit together.
 * Callers: conv_record.c (hd_conv__record); the surfaces through
 * conversation.h (the parser, the cut).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/agent.h>
#include <huddle/buf.h>
#include <huddle/util.h>

#include "conversation_int.h"

#define NO_MATCH ((size_t)-1)
#define NO_RESPONSE "(no response)"

static int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

/* ---- the parser (pure) -------------------------------------------------- */

void
hd_reply_tags_dispose(hd_reply_tags *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->tags[i].team);
		free(t->tags[i].body);
	}
	free(t->tags);
	memset(t, 0, sizeof(*t));
}

/* close[i] for each text[i] == '[': the offset of the ']' balancing it,
 * or NO_MATCH; other entries are unused. One pass with a stack. */
static size_t *
match_brackets(const char *text, size_t len)
{
	size_t *close, *stack, depth = 0, i;

	close = malloc((len + 1) * sizeof(*close));
	stack = malloc((len + 1) * sizeof(*stack));
	if (close == NULL || stack == NULL) {
		free(close);
		free(stack);
		return NULL;
	}
	for (i = 0; i < len; i++) {
		if (text[i] == '[') {
			close[i] = NO_MATCH;
			stack[depth++] = i;
		} else if (text[i] == ']' && depth > 0)
			close[stack[--depth]] = i;
	}
	free(stack);
	return close;
}

/* The colon of a room tag candidate at i (`[#` id `:`), or NO_MATCH; the
 * id's span in *id, *idlen. */
static size_t
room_colon(const char *text, size_t len, size_t i, size_t *id, size_t *idlen)
{
	size_t p = i + 2;

	while (p < len && (text[p] == ' ' || text[p] == '\t'))
		p++;
	*id = p;
	while (p < len && hd_conv__is_id_char(text[p]))
		p++;
	if ((*idlen = p - *id) == 0)
		return NO_MATCH;
	while (p < len && (text[p] == ' ' || text[p] == '\t'))
		p++;
	return p < len && text[p] == ':' ? p : NO_MATCH;
}

#define SEND_FILE "[send_file:"

int
hd_reply_tags_parse(
    hd_reply_tags *out, const char *text, size_t len, hd_err *err)
{
	hd_mentions m;
	hd_reply_tag tag, *grown;
	size_t *close = NULL, i = 0, mt = 0, colon, id = 0, idlen = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&tag, 0, sizeof(tag));
	if ((rc = hd_mentions_parse(&m, text, len, err)) < 0)
		goto done;
	if ((close = match_brackets(text, len)) == NULL)
		goto nomem;
	while (i < len) {
		if (mt < m.ntags && i == m.tags[mt].start) { /* (1) */
			i = m.tags[mt++].end;
			continue;
		}
		if (text[i] != '[' || close[i] == NO_MATCH) {
			i++;
			continue;
		}
		colon = NO_MATCH;
		if (i + 1 < len && text[i + 1] == '#') {
			colon = room_colon(text, len, i, &id, &idlen);
			tag.kind = HD_REPLY_TAG_ROOM;
		} else if (len - i >= strlen(SEND_FILE) &&
			   strncmp(text + i, SEND_FILE, strlen(SEND_FILE)) ==
			       0) {
			colon = i + strlen(SEND_FILE) - 1;
			tag.kind = HD_REPLY_TAG_FILE;
		}
		if (colon == NO_MATCH || colon > close[i]) {
			i++;
			continue;
		}
		tag.start = i;
		tag.end = close[i] + 1;
		if ((tag.kind == HD_REPLY_TAG_ROOM &&
			(tag.team = hd_conv__dup_trim(text + id, idlen, 1)) == NULL) ||
		    (tag.body = hd_conv__dup_trim(
			 text + colon + 1, close[i] - colon - 1, 0)) == NULL)
			goto nomem;
		grown = realloc(out->tags, (out->n + 1) * sizeof(*grown));
		if (grown == NULL)
			goto nomem;
		out->tags = grown;
		out->tags[out->n++] = tag;
		memset(&tag, 0, sizeof(tag));
		i = close[i] + 1;
		while (mt < m.ntags && m.tags[mt].start < i)
			mt++;
	}
	goto done;
nomem:
	rc = oom(err);
done:
	free(tag.team);
	free(tag.body);
	free(close);
	hd_mentions_dispose(&m);
	return rc;
}

/* ---- the long answer's cut (pure) --------------------------------------- */

int
hd_conversation_cut(
    char **out, const char *text, size_t max, const char *name, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(0);
	size_t chars = 0, keep = 0, i, len = strlen(text);
	char num[32], sep[48];
	int n, k, j;

	*out = NULL;
	for (i = 0; i < len; i++)
		if (((unsigned char)text[i] & 0xc0) != 0x80) {
			if (chars == max)
				keep = i;
			chars++;
		}
	if (chars <= max)
		return 0;
	/* N with thousands separators */
	n = snprintf(num, sizeof(num), "%zu", chars);
	for (k = j = 0; k < n; k++) {
		if (k > 0 && (n - k) % 3 == 0)
			sep[j++] = ',';
		sep[j++] = num[k];
	}
	sep[j] = '\0';
	hd_buf_put(&b, text, keep);
	hd_buf_printf(&b,
	    "\xe2\x80\xa6 [the full answer, %s characters, is attached as %s]",
	    sep, name);
	if (hd_buf_failed(&b) || (*out = hd_buf_detach(&b)) == NULL) {
		hd_buf_dispose(&b);
		return oom(err);
	}
	return 0;
}

/* ---- applying the tags to a reply --------------------------------------- */

void
hd_conv__tagged_dispose(hd_conv_tagged *t)
{
	size_t i;

	free(t->text);
	for (i = 0; i < t->nroom; i++) {
		free(t->room[i].team);
		free(t->room[i].body);
	}
	free(t->room);
	for (i = 0; i < t->nfiles; i++) {
		free(t->files[i].name);
		free(t->files[i].content);
	}
	free(t->files);
	memset(t, 0, sizeof(*t));
}

static const char *
media_type(const char *name)
{
	static const char *const types[][2] = {
	    {".md", "text/markdown"},
	    {".txt", "text/plain"},
	    {".log", "text/plain"},
	    {".csv", "text/csv"},
	    {".json", "application/json"},
	    {".html", "text/html"},
	    {".xml", "application/xml"},
	    {".pdf", "application/pdf"},
	    {".png", "image/png"},
	    {".jpg", "image/jpeg"},
	    {".jpeg", "image/jpeg"},
	    {".gif", "image/gif"},
	    {".svg", "image/svg+xml"},
	    {".zip", "application/zip"},
	    {".gz", "application/gzip"},
	    {".tar", "application/x-tar"},
	};
	const char *dot = strrchr(name, '.');
	size_t i;

	if (dot != NULL)
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcasecmp(dot, types[i][0]) == 0)
				return types[i][1];
	return "application/octet-stream";
}

/* The agent's work directory, resolved (3); "" with *why set when there
 * is none to resolve. */
static void
agent_workdir(char *out, size_t outlen, char *why, size_t whylen, hd_store *st,
    const char *agent)
{
	hd_agent *a = NULL;
	hd_err aerr = HD_ERR_INIT;
	const char *given = NULL;
	char path[PATH_MAX], real[PATH_MAX];

	out[0] = '\0';
	if (hd_agent_get(&a, st, agent, &aerr) < 0) {
		snprintf(why, whylen, "%s", aerr.msg);
		return;
	}
	given =
	    json_string_value(json_object_get(a->runtime_config, "workdir"));
	if (given == NULL)
		given = json_string_value(
		    json_object_get(a->runtime_config, "cwd"));
	if (given != NULL)
		snprintf(path, sizeof(path), "%s", given);
	else
		snprintf(path, sizeof(path), "%s/homes/%s/%s",
		    hd_store_home(st), a->runtime, agent);
	if (realpath(path, real) == NULL)
		snprintf(
		    why, whylen, "%s's workdir %s does not exist", agent, path);
	else
		snprintf(out, outlen, "%s", real);
	hd_agent_free(a);
}

/* 1 when real lies under dir (both resolved). */
static int
is_under(const char *real, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(real, dir, n) == 0 && real[n] == '/';
}

/*
 * Read the file a tag names into *f, or set why (the note) and return 0
 * with nothing read. *total is what the reply attached so far. -1: out of
 * memory.
 */
static int
read_file(hd_conv_attach *f, char *why, size_t whylen, const char *workdir,
    const char *agent, const char *path, size_t *total)
{
	char full[PATH_MAX], real[PATH_MAX];
	const char *base;
	struct stat sb;
	ssize_t got;
	size_t off = 0;
	int fd;

	memset(f, 0, sizeof(*f));
	if (path[0] == '\0') {
		snprintf(why, whylen, "no path given");
		return 0;
	}
	if ((size_t)snprintf(full, sizeof(full), "%s%s%s",
		path[0] == '/' ? "" : workdir, path[0] == '/' ? "" : "/",
		path) >= sizeof(full)) {
		snprintf(why, whylen, "the path is too long");
		return 0;
	}
	if (stat(full, &sb) != 0 || realpath(full, real) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			snprintf(why, whylen, "%s does not exist", path);
		else
			snprintf(why, whylen, "%s is not readable (%s)", path,
			    strerror(errno));
		return 0;
	}
	if (!is_under(real, workdir)) {
		snprintf(
		    why, whylen, "%s is outside %s's workdir", path, agent);
		return 0;
	}
	if (S_ISDIR(sb.st_mode)) {
		snprintf(why, whylen, "%s is a directory", path);
		return 0;
	}
	if ((fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "%s is not readable (%s)", path,
		    strerror(errno));
		return 0;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		snprintf(why, whylen, "%s is not a regular file", path);
		close(fd);
		return 0;
	}
	if ((size_t)sb.st_size > HD_CONVERSATION_FILES_MAX - *total) {
		snprintf(why, whylen,
		    "%s is %lld bytes; a reply attaches at most %d bytes in "
		    "all",
		    path, (long long)sb.st_size, HD_CONVERSATION_FILES_MAX);
		close(fd);
		return 0;
	}
	base = strrchr(real, '/') + 1;
	if ((f->content = malloc((size_t)sb.st_size + 1)) == NULL ||
	    (f->name = strdup(base)) == NULL) {
		free(f->content);
		f->content = NULL;
		close(fd);
		return -1;
	}
	while (off < (size_t)sb.st_size &&
	       (got = read(fd, f->content + off, (size_t)sb.st_size - off)) > 0)
		off += (size_t)got;
	close(fd);
	f->size = off; /* a file that shrank meanwhile: what was there */
	f->media_type = media_type(base);
	*total += off;
	return 1;
}

/* 1 when the space at reply[gap] goes with a tag just removed: `a [tag]
 * b` leaves `a b`, not `a  b`. */
static size_t
removed_space(const hd_buf *b, const char *reply, size_t len, size_t gap)
{
	return b->len > 0 && b->ptr[b->len - 1] == ' ' && gap < len &&
	       reply[gap] == ' ';
}

int
hd_conv__tags_apply(hd_conv_tagged *out, hd_store *st, const char *agent,
    const char *reply, hd_err *err)
{
	hd_reply_tags tags;
	hd_buf b = HD_BUF_INIT(0);
	char workdir[PATH_MAX], nowork[PATH_MAX + 128], why[PATH_MAX + 256];
	size_t len = strlen(reply), gap = 0, total = 0, i;
	int rc, r;

	memset(out, 0, sizeof(*out));
	nowork[0] = '\0';
	if ((rc = hd_reply_tags_parse(&tags, reply, len, err)) < 0)
		goto done;
	for (i = 0; i < tags.n; i++)
		if (tags.tags[i].kind == HD_REPLY_TAG_FILE) {
			agent_workdir(workdir, sizeof(workdir), nowork,
			    sizeof(nowork), st, agent);
			break;
		}
	for (i = 0; i < tags.n; i++) {
		hd_reply_tag *t = &tags.tags[i];
		void *grown;

		hd_buf_put(&b, reply + gap, t->start - gap);
		gap = t->end;
		if (t->kind == HD_REPLY_TAG_ROOM) { /* (2): always removed */
			grown = realloc(
			    out->room, (out->nroom + 1) * sizeof(*out->room));
			if (grown == NULL)
				goto nomem;
			out->room = grown;
			out->room[out->nroom++] = *t;
			t->team = t->body = NULL;
			gap += removed_space(&b, reply, len, gap);
			continue;
		}
		grown = realloc(
		    out->files, (out->nfiles + 1) * sizeof(*out->files));
		if (grown == NULL)
			goto nomem;
		out->files = grown;
		if (nowork[0] != '\0') {
			snprintf(why, sizeof(why), "%s", nowork);
			r = 0;
		} else if ((r = read_file(&out->files[out->nfiles], why,
				sizeof(why), workdir, agent, t->body, &total)) <
			   0)
			goto nomem;
		if (r == 1) {
			out->nfiles++;
			gap += removed_space(&b, reply, len, gap);
			continue;
		}
		hd_buf_put(&b, reply + t->start, t->end - t->start);
		hd_buf_printf(&b, " (file not attached: %s)", why);
	}
	hd_buf_put(&b, reply + gap, len - gap);
	if (hd_buf_failed(&b))
		goto nomem;
	out->text = hd_conv__dup_trim(hd_buf_cstr(&b), b.len, 0);
	if (out->text != NULL && out->text[0] == '\0') {
		free(out->text);
		out->text = strdup(NO_RESPONSE);
	}
	if (out->text == NULL)
		goto nomem;
	goto done;
nomem:
	rc = oom(err);
done:
	hd_buf_dispose(&b);
	hd_reply_tags_dispose(&tags);
	if (rc < 0)
		hd_conv__tagged_dispose(out);
	return rc;
}
