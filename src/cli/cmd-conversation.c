/*
 * cmd-conversation.c -- `huddle conversation files ID [--save DIR]`: the
 * files a conversation's replies attached ([send_file: ...] tags and the
 * whole text of a cut answer, conversation.h (6)).
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
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_conversation = {
    .name = "conversation",
    .summary = "The files of a conversation (see ask)",
    .subs = conversation_subs,
};
