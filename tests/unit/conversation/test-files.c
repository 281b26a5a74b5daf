/*
 * test-files.c -- what a reply attaches, through the engine: a file in the
 * agent's home is stored with the reply and read back byte for byte, a
 * file over the size cap leaves its tag and a note, an unknown file id is
 * refused, and a long answer is stored cut with its whole text attached
 * as answer-<seq>.md (also what the reply callback and the aggregate
 * see).
 */
#include <fcntl.h>
#include <unistd.h>

#include <huddle/util.h>

#include "conv-test.h"

/* HUDDLE_HOME/homes/scripted/<agent>/<name> with len bytes of text
 * (repeated), or a sparse file of len bytes when text is NULL. */
static void
home_file(hd_fixture *fx, const char *agent, const char *name, const char *text,
    off_t len)
{
	char dir[512], path[600];
	hd_err err = HD_ERR_INIT;
	int fd;

	snprintf(dir, sizeof(dir), "%s/homes/scripted/%s", fx->home, agent);
	assert_hd_ok(hd_mkdir_p(dir, 0700, &err), &err);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	if (text != NULL)
		assert_int_equal(write(fd, text, (size_t)len), len);
	else
		assert_int_equal(ftruncate(fd, len), 0);
	close(fd);
}

static void
test_files__attached_with_the_reply_and_capped(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_conversation_file *f = NULL;
	hd_err err = HD_ERR_INIT;
	char id[37], want[256];

	ct_team(fx, "dev", NULL);
	ct_scripted(fx, "dev", "coder", 1,
	    "Report: [send_file: r.txt] [send_file: big.bin] [#dev: posted]");
	home_file(fx, "coder", "r.txt", "hello", 5);
	home_file(fx, "coder", "big.bin", NULL, HD_CONVERSATION_FILES_MAX + 1);
	e = ct_engine(fx, NULL);
	ct_ask(fx, e, "dev", "the report please", id);
	hd_conversation_engine_stop(e);

	c = ct_get(fx, id);
	snprintf(want, sizeof(want),
	    "Report: [send_file: big.bin] (file not attached: big.bin is %d "
	    "bytes; a reply attaches at most %d bytes in all)",
	    HD_CONVERSATION_FILES_MAX + 1, HD_CONVERSATION_FILES_MAX);
	assert_int_equal(c->nreplies, 1);
	assert_string_equal(c->replies[0].body, want);
	assert_string_equal(c->response, want);
	assert_int_equal(c->nfiles, 1);
	assert_int_equal(c->files[0].seq, 1);
	assert_string_equal(c->files[0].agent, "coder");
	assert_string_equal(c->files[0].name, "r.txt");
	assert_string_equal(c->files[0].media_type, "text/plain");
	assert_int_equal(c->files[0].size, 5);
	assert_null(c->files[0].content); /* listed without bytes */

	assert_hd_ok(
	    hd_conversation_file_get(&f, fx->st, id, c->files[0].id, &err),
	    &err);
	assert_int_equal(f->size, 5);
	assert_memory_equal(f->content, "hello", 5);
	hd_conversation_file_free(f);
	f = NULL;
	assert_int_equal(
	    hd_conversation_file_get(&f, fx->st, id, 99, &err), HD_ENOTFOUND);
	snprintf(
	    want, sizeof(want), "file 99 not found in conversation %s", id);
	assert_string_equal(err.msg, want);
	assert_int_equal(
	    hd_conversation_file_get(&f, fx->st, "nope", c->files[0].id, &err),
	    HD_ENOTFOUND);
	assert_string_equal(err.msg, "conversation \"nope\" not found");
	assert_null(f);
	hd_conversation_free(c);
}

static void
test_files__a_long_answer_is_cut_and_attached_whole(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_conversation_file *f = NULL;
	hd_err err = HD_ERR_INIT;
	ct_log log;
	char id[37], full[4100], cut[4200], line[4300];

	/* 3999 'a' then "éé": 4001 characters, 4003 bytes */
	memset(full, 'a', 3999);
	memcpy(full + 3999, "\xc3\xa9\xc3\xa9", 5);
	snprintf(cut, sizeof(cut),
	    "%.4001s\xe2\x80\xa6 [the full answer, 4,001 characters, is "
	    "attached as answer-1.md]",
	    full);
	ct_team(fx, "dev", NULL);
	ct_scripted(fx, "dev", "coder", 1, full);
	ct_log_init(&log);
	e = ct_engine(fx, &log);
	ct_ask(fx, e, "dev", "tell me everything", id);
	hd_conversation_engine_stop(e);

	c = ct_get(fx, id);
	assert_string_equal(c->replies[0].body, cut);
	assert_string_equal(c->response, cut);
	assert_int_equal(log.n, 1);
	snprintf(line, sizeof(line), "%s|1|coder|%s", id, cut);
	assert_string_equal(log.lines[0], line);
	assert_int_equal(c->nfiles, 1);
	assert_string_equal(c->files[0].name, "answer-1.md");
	assert_string_equal(c->files[0].media_type, "text/markdown");
	assert_hd_ok(
	    hd_conversation_file_get(&f, fx->st, id, c->files[0].id, &err),
	    &err);
	assert_int_equal(f->size, strlen(full));
	assert_memory_equal(f->content, full, strlen(full));
	hd_conversation_file_free(f);
	hd_conversation_free(c);
	ct_log_dispose(&log);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_files__attached_with_the_reply_and_capped),
	    hd_fixture_test(
		test_files__a_long_answer_is_cut_and_attached_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
