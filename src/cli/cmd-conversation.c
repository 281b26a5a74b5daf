/*
 * cmd-conversation.c -- `huddle conversation files ID [--save DIR]`: the
 * files a conversation's replies attached ([send_file: ...] tags and the
 * whole text of a cut answer, conversation.h (6)); `huddle conversation
 * show ID`: its status and replies; `huddle conversation cancel [TEAM] ID
 * [--as AGENT]`: cancel a running one (cancel.h).
 *
 * show: `conversation <id> in <team>: <status> (<n> replies, <p>
 * pending)`, then each reply as `@<agent>: <body>`; --json the REST shape.
 * cancel: asks the engine running it, waits up to CANCEL_WAIT_MS for the
 * end and prints `conversation <id> cancelled`; --json {"id","status"}.
 * One that already ended is refused (conflict, exit 1).
 *
 * Output: one row per file, `ID SEQ AGENT NAME TYPE SIZE`; --json the
 * REST list ({"conversationId","files":[...]}). --save DIR writes each
 * file to DIR/<name> and prints `saved DIR/<name> (N bytes)`; a file that
 * exists already is never overwritten (the command fails, naming it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/cancel.h>
#include <huddle/conversation.h>

#include "cli.h"

/* Write f to dir/<f's name>, which must not exist. */
static int
save_file(hd_cli *c, const char *dir, const hd_conversation_file *f, char *path,
    size_t pathlen)
{
	size_t off = 0;
	ssize_t n;
	int fd;

	/* names are base names (conv_files.c); say no to anything else */
	if (strchr(f->name, '/') != NULL || strcmp(f->name, ".") == 0 ||
	    strcmp(f->name, "..") == 0)
		return hd_err_set(&c->err, HD_EINVAL,
		    "file %lld has an unsafe name \"%.128s\"", (long long)f->id,
		    f->name);
	if ((size_t)snprintf(path, pathlen, "%s/%s", dir, f->name) >= pathlen)
		return hd_err_set(
		    &c->err, HD_EINVAL, "path too long in %s", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) <
	    0)
		return hd_err_set(&c->err, HD_ERR, "cannot create %s: %s", path,
		    errno == EEXIST ? "it exists already" : strerror(errno));
	while (off < (size_t)f->size &&
	       (n = write(fd, f->content + off, (size_t)f->size - off)) > 0)
		off += (size_t)n;
	if (close(fd) != 0 || off < (size_t)f->size)
		return hd_err_set(&c->err, HD_ERR, "cannot write %s: %s", path,
		    strerror(errno));
	return 0;
}

static int
cmd_conversation_files(hd_cli *c)
{
	const char *dir = hd_cli_opt_str(c, "save");
	hd_conversation *conv = NULL;
	hd_conversation_file *f = NULL;
	hd_table *t = NULL;
	hd_store *st;
	json_t *files;
	char path[4096], id[32], seq[32], size[32];
	size_t i;
	int rc = HD_EXIT_FAIL;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_conversation_get(&conv, st, c->argv[0], &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (dir != NULL) {
		for (i = 0; i < conv->nfiles; i++) {
			if (hd_conversation_file_get(&f, st, conv->id,
				conv->files[i].id, &c->err) < 0 ||
			    save_file(c, dir, f, path, sizeof(path)) < 0) {
				rc = hd_cli_fail(c);
				goto done;
			}
			printf("saved %s (%lld bytes)\n", path,
			    (long long)f->size);
			hd_conversation_file_free(f);
			f = NULL;
		}
	} else if (c->json) {
		files = json_array();
		for (i = 0; i < conv->nfiles; i++)
			json_array_append_new(files,
			    hd_conversation_file_to_json(&conv->files[i]));
		hd_cli_json(json_pack(
		    "{s:s, s:o}", "conversationId", conv->id, "files", files));
	} else if (conv->nfiles == 0)
		printf("no files in conversation %s\n", conv->id);
	else {
		t = hd_table_new(
		    6, "ID", "SEQ", "AGENT", "NAME", "TYPE", "SIZE");
		for (i = 0; i < conv->nfiles; i++) {
			const hd_conversation_file *cf = &conv->files[i];

			snprintf(id, sizeof(id), "%lld", (long long)cf->id);
			snprintf(seq, sizeof(seq), "%lld", (long long)cf->seq);
			snprintf(
			    size, sizeof(size), "%lld", (long long)cf->size);
			hd_table_row(t, id, seq, cf->agent, cf->name,
			    cf->media_type, size);
		}
		hd_table_print(t, stdout, "");
	}
	rc = HD_EXIT_OK;
done:
	hd_table_free(t);
	hd_conversation_file_free(f);
	hd_conversation_free(conv);
	return rc;
}

static int
cmd_conversation_show(hd_cli *c)
{
	hd_conversation *conv = NULL;
	hd_store *st;
	size_t i;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_conversation_get(&conv, st, c->argv[0], &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(hd_conversation_to_json(conv));
	else {
		printf("conversation %s in %s: %s (%zu repl%s, %lld pending)\n",
		    conv->id, conv->team_id, conv->status, conv->nreplies,
		    conv->nreplies == 1 ? "y" : "ies", (long long)conv->pending);
		for (i = 0; i < conv->nreplies; i++) {
			printf("@%s:\n", conv->replies[i].agent);
			hd_cli_print_indented(conv->replies[i].body, "    ");
		}
	}
	hd_conversation_free(conv);
	return HD_EXIT_OK;
}

#define CANCEL_WAIT_MS 15000

static int
cmd_conversation_cancel(hd_cli *c)
{
	const char *team = c->argc == 2 ? c->argv[0] : NULL;
	const char *id = c->argv[c->argc - 1], *as = NULL;
	hd_conversation *conv = NULL;
	hd_store *st;
	int rc;

	if ((rc = hd_cli_as(c, NULL, &as)) != 0)
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_conversation_get(&conv, st, id, &c->err) < 0)
		return hd_cli_fail(c);
	if (team != NULL && strcmp(conv->team_id, team) != 0) {
		hd_err_set(&c->err, HD_ENOTFOUND,
		    "conversation %s is not in team %s", id, team);
		hd_conversation_free(conv);
		return hd_cli_fail(c);
	}
	team = conv->team_id;
	if (as != NULL && (rc = hd_cli_agent_in(c, team, as)) != 0)
		goto done;
	if (hd_conversation_cancel(NULL, st, id, as, &c->err) < 0 ||
	    hd_conversation_cancel_wait(st, id, CANCEL_WAIT_MS, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json)
		hd_cli_json(json_pack("{s:s, s:s}", "id", id, "status",
		    "cancelled"));
	else
		printf("conversation %s cancelled\n", id);
	rc = HD_EXIT_OK;
done:
	hd_conversation_free(conv);
	return rc;
}

static const hd_cli_opt conversation_cancel_opts[] = {
    {"as", 0, "AGENT", "the member cancelling it (default: the user)", 0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_opt conversation_files_opts[] = {
    {"save", 0, "DIR", "write each file to DIR/<name> (never overwrites)", 0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_cmd conversation_subs[] = {
    {"files", "ID",
	"List (or save) the files a conversation's replies "
	"attached",
	1, 1, conversation_files_opts, cmd_conversation_files, NULL,
	"Agents attach files with [send_file: path] tags; an answer over "
	"4000\ncharacters is attached whole as answer-<seq>.md. Over REST: "
	"GET\n/api/conversations/ID/files and .../files/FILE_ID."},
    {"show", "ID", "Show a conversation: its status and replies", 1, 1, NULL,
	cmd_conversation_show, NULL, NULL},
    {"cancel", "[TEAM] ID", "Cancel a running conversation", 1, 2,
	conversation_cancel_opts, cmd_conversation_cancel, NULL,
	"The engine running it stops its turns (their processes are "
	"killed) and\nends it cancelled; the replies so far are kept. "
	"Its agents go back to idle.\nOver REST: POST "
	"/api/conversations/ID/cancel."},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_conversation = {
    .name = "conversation",
    .summary = "Show, cancel, or list the files of a conversation (see ask)",
    .subs = conversation_subs,
};
