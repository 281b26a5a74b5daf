/*
 * test-native-transcript.c -- a native session's transcript
 * (src/runtime/native-transcript.c) on real files: a new session's file
 * and directory, resumed with what was written; the window a process
 * remembers is what reading the file gives (its messages, caps and wire
 * pieces), checked against a read of the same file after every step of
 * a long random history with other writers' lines, torn lines and
 * garbage in it; another writer's line is seen; a torn last line does
 * not swallow the next one; a line no read takes back (NUL in a string)
 * is not remembered either.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "runtime/native.h"

static json_t *
msg_user(const char *text)
{
	return json_pack("{s:s, s:s}", "role", "user", "text", text);
}

static void
add_all(hd_native_transcript *tr, json_t *msgs)
{
	json_t *m;
	size_t i;

	json_array_foreach (msgs, i, m)
		assert_int_equal(hd_native__transcript_add(tr, m), 0);
}

/* The session's history as a turn resuming it now gets it; force_read:
 * the file's mtime moved first, so nothing remembered can be used. */
static json_t *
history(const char *home, const char *session, int force_read,
    json_t **wire)
{
	hd_native_transcript tr;
	hd_err err = HD_ERR_INIT;
	json_t *h, *w;

	if (force_read) { /* a time the file never had before */
		static time_t when = 1000;
		char path[PATH_MAX + 128];
		struct timespec ts[2] = {{when, 0}, {when, 0}};

		when++;
		snprintf(path, sizeof(path), "%s/native/%s.jsonl", home,
		    session);
		assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	}
	assert_int_equal(hd_native__transcript_open(&tr, home, session, &err),
	    0);
	assert_int_equal(tr.resumed, 1);
	h = hd_native__transcript_history(&tr, HD_NATIVE_OPENAI, &w);
	assert_int_equal(json_array_size(w), json_array_size(h));
	hd_native__transcript_close(&tr);
	if (wire != NULL)
		*wire = w;
	else
		json_decref(w);
	return h;
}

static void
append_raw(const char *home, const char *session, const char *bytes,
    size_t len)
{
	char path[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/native/%s.jsonl", home, session);
	assert_non_null(f = fopen(path, "a"));
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	fclose(f);
}

static void
test_native_transcript__new_then_resumed(void **state)
{
	hd_fixture *fx = *state;
	hd_native_transcript tr;
	hd_err err = HD_ERR_INIT;
	char ahome[600], session[64], path[PATH_MAX + 128];
	json_t *msgs, *h, *wire;
	struct stat sb;
	char *body, *env;

	snprintf(ahome, sizeof(ahome), "%s/agent-home", fx->home);
	/* no home yet: the directories are made when the file needs them */
	assert_int_equal(
	    hd_native__transcript_open(&tr, ahome, NULL, &err), 0);
	assert_int_equal(tr.resumed, 0);
	assert_true(hd_native__session_ok(tr.session));
	snprintf(session, sizeof(session), "%s", tr.session);
	msgs = json_loads(
	    "[{\"role\":\"user\",\"text\":\"claim one\"},"
	    "{\"role\":\"assistant\",\"text\":\"\",\"calls\":[{\"id\":\"c1\","
	    "\"name\":\"task_claim\",\"args\":\"{}\"}]},"
	    "{\"role\":\"tool\",\"id\":\"c1\",\"name\":\"task_claim\","
	    "\"text\":\"claimed\",\"is_error\":false},"
	    "{\"role\":\"assistant\",\"text\":\"done \\u00e9\"}]",
	    0, NULL);
	add_all(&tr, msgs);
	hd_native__transcript_close(&tr);
	snprintf(path, sizeof(path), "%s/native/%s.jsonl", ahome, session);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);

	h = history(ahome, session, 0, &wire); /* remembered */
	assert_true(json_equal(h, msgs));
	env = hd_native__envelope(HD_NATIVE_OPENAI, "m", NULL, NULL);
	body = hd_native__body(HD_NATIVE_OPENAI, env, NULL, h, wire);
	{
		json_t *got = json_loads(body, 0, NULL);
		json_t *want = hd_native__request(
		    HD_NATIVE_OPENAI, "m", NULL, msgs, NULL);

		assert_true(json_equal(got, want));
		json_decref(got);
		json_decref(want);
	}
	free(body);
	free(env);
	json_decref(wire);
	json_decref(h);
	h = history(ahome, session, 1, NULL); /* read */
	assert_true(json_equal(h, msgs));
	json_decref(h);

	/* a session that is not there: a new one, the old id unused */
	assert_int_equal(hd_native__transcript_open(
			     &tr, ahome, "native-00112233", &err),
	    0);
	assert_int_equal(tr.resumed, 0);
	assert_string_not_equal(tr.session, "native-00112233");
	hd_native__transcript_close(&tr);
	json_decref(msgs);
}

static void
test_native_transcript__another_writer_is_seen(void **state)
{
	hd_fixture *fx = *state;
	hd_native_transcript tr;
	hd_err err = HD_ERR_INIT;
	char session[64];
	const char *line = "{\"role\":\"user\",\"text\":\"from elsewhere\"}\n";
	json_t *h, *m = msg_user("mine");

	assert_int_equal(
	    hd_native__transcript_open(&tr, fx->home, NULL, &err), 0);
	snprintf(session, sizeof(session), "%s", tr.session);
	assert_int_equal(hd_native__transcript_add(&tr, m), 0);
	hd_native__transcript_close(&tr); /* remembered ... */
	append_raw(fx->home, session, line, strlen(line)); /* ... then not */
	h = history(fx->home, session, 0, NULL);
	assert_int_equal(json_array_size(h), 2);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(h, 1), "text")),
	    "from elsewhere");
	json_decref(h);
	json_decref(m);
}

static void
test_native_transcript__a_torn_line_stays_alone(void **state)
{
	hd_fixture *fx = *state;
	hd_native_transcript tr;
	hd_err err = HD_ERR_INIT;
	char session[64], path[PATH_MAX + 128];
	json_t *h, *a = msg_user("before"), *b = msg_user("after");
	char *text;

	assert_int_equal(
	    hd_native__transcript_open(&tr, fx->home, NULL, &err), 0);
	snprintf(session, sizeof(session), "%s", tr.session);
	assert_int_equal(hd_native__transcript_add(&tr, a), 0);
	hd_native__transcript_close(&tr);
	append_raw(fx->home, session, "{\"role\":\"us", 11); /* a crash */
	assert_int_equal(
	    hd_native__transcript_open(&tr, fx->home, session, &err), 0);
	assert_int_equal(hd_native__transcript_add(&tr, b), 0);
	hd_native__transcript_close(&tr);
	snprintf(path, sizeof(path), "%s/native/%s.jsonl", fx->home, session);
	text = hd_read_text(path);
	assert_non_null(strstr(text, "\n{\"role\":\"us\n{\"role\":\"user\","
				     "\"text\":\"after\"}\n"));
	free(text);
	h = history(fx->home, session, 1, NULL);
	assert_int_equal(json_array_size(h), 2);
	assert_true(json_equal(json_array_get(h, 1), b));
	json_decref(h);
	h = history(fx->home, session, 0, NULL);
	assert_int_equal(json_array_size(h), 2);
	json_decref(h);
	json_decref(a);
	json_decref(b);
}

/* A message with NUL in a string is written (\u0000) but no read takes
 * it back: the remembered window does not have it either. */
static void
test_native_transcript__what_a_read_skips_is_not_remembered(void **state)
{
	hd_fixture *fx = *state;
	hd_native_transcript tr;
	hd_err err = HD_ERR_INIT;
	char session[64];
	json_t *a = msg_user("first"), *b, *c = msg_user("third"), *h;

	b = json_pack("{s:s, s:s%}", "role", "user", "text", "nul\0here", 8);
	assert_non_null(b);
	assert_int_equal(
	    hd_native__transcript_open(&tr, fx->home, NULL, &err), 0);
	snprintf(session, sizeof(session), "%s", tr.session);
	assert_int_equal(hd_native__transcript_add(&tr, a), 0);
	assert_int_equal(hd_native__transcript_add(&tr, b), 0);
	assert_int_equal(hd_native__transcript_add(&tr, c), 0);
	hd_native__transcript_close(&tr);
	h = history(fx->home, session, 0, NULL); /* remembered */
	assert_int_equal(json_array_size(h), 2);
	assert_true(json_equal(json_array_get(h, 1), c));
	json_decref(h);
	h = history(fx->home, session, 1, NULL); /* read */
	assert_int_equal(json_array_size(h), 2);
	json_decref(h);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

/* A message read before falls out of the tail the window reads once a
 * turn has written past it: the remembered window lets it go too. */
static void
test_native_transcript__the_tail_moves_on(void **state)
{
	hd_fixture *fx = *state;
	hd_native_transcript tr;
	hd_err err = HD_ERR_INIT;
	char session[64];
	size_t gap = HD_NATIVE_TAIL_BYTES - 100 * 1024;
	size_t len = 200 * 1024;
	char *text = malloc(gap + 1);
	json_t *a = msg_user("old"), *b, *h;

	assert_non_null(text);
	assert_int_equal(
	    hd_native__transcript_open(&tr, fx->home, NULL, &err), 0);
	snprintf(session, sizeof(session), "%s", tr.session);
	assert_int_equal(hd_native__transcript_add(&tr, a), 0);
	hd_native__transcript_close(&tr);
	memset(text, 'x', gap);
	text[gap - 1] = '\n'; /* one line no reader can parse */
	append_raw(fx->home, session, text, gap);
	assert_int_equal(
	    hd_native__transcript_open(&tr, fx->home, session, &err), 0);
	h = hd_native__transcript_history(&tr, HD_NATIVE_OPENAI, &b);
	assert_int_equal(json_array_size(h), 1); /* "old" is in the tail */
	json_decref(h);
	json_decref(b);
	memset(text, 'n', len);
	text[len] = '\0';
	b = msg_user(text);
	assert_int_equal(hd_native__transcript_add(&tr, b), 0);
	hd_native__transcript_close(&tr);
	h = history(fx->home, session, 0, NULL); /* remembered */
	assert_int_equal(json_array_size(h), 1);
	assert_true(json_equal(json_array_get(h, 0), b));
	json_decref(h);
	h = history(fx->home, session, 1, NULL); /* read */
	assert_int_equal(json_array_size(h), 1);
	json_decref(h);
	json_decref(a);
	json_decref(b);
	free(text);
}

/* A long random history: turns of small and large messages of every
 * role, other writers' valid lines, garbage lines (some longer than the
 * tail the window reads), torn lines. After each step the remembered
 * window, and then a read of the file, give the same history, within the
 * caps, from a user message on. */
static void
test_native_transcript__remembered_is_what_a_read_gives(void **state)
{
	hd_fixture *fx = *state;
	hd_native_transcript tr;
	hd_err err = HD_ERR_INIT;
	char session[64];
	unsigned seed = 12345;
	size_t big = 128 * 1024, step, i;
	char *text = malloc(big + 1);
	int capped_count = 0, capped_bytes = 0;

	assert_non_null(text);
	assert_int_equal(
	    hd_native__transcript_open(&tr, fx->home, NULL, &err), 0);
	snprintf(session, sizeof(session), "%s", tr.session);
	hd_native__transcript_close(&tr);
	for (step = 0; step < 160; step++) {
		unsigned r = (unsigned)rand_r(&seed);
		json_t *h1, *h2, *w1, *w2;
		size_t bytes = 0, n;

		if (r % 10 < 7) { /* a turn: a few messages */
			size_t k, count = 1 + (size_t)rand_r(&seed) % 8;

			json_t *sent = json_array(), *wire = json_array();

			assert_int_equal(hd_native__transcript_open(
					     &tr, fx->home, session, &err),
			    0);
			for (k = 0; k < count; k++) {
				static const char *roles[] = {
				    "user", "assistant", "tool"};
				/* small ones first, to reach the count
				 * cap; then some large, for the bytes */
				size_t len = step >= 80 && rand_r(&seed) % 6 == 0
						 ? (size_t)rand_r(&seed) % big
						 : (size_t)rand_r(&seed) % 40;
				json_t *m;

				memset(text, 'a' + (int)(k % 26), len);
				text[len] = '\0';
				m = json_pack("{s:s, s:s, s:s}", "role",
				    roles[rand_r(&seed) % 3], "id", "c",
				    "text", text);
				assert_int_equal(
				    hd_native__transcript_add(&tr, m), 0);
				/* the pieces a model call made, some */
				json_array_append(sent, m);
				json_array_append_new(wire,
				    k % 3 ? hd_native__wire(HD_NATIVE_OPENAI, m)
					  : json_null());
				json_decref(m);
			}
			hd_native__transcript_sent(
			    &tr, HD_NATIVE_OPENAI, sent, wire);
			hd_native__transcript_close(&tr);
			json_decref(sent);
			json_decref(wire);
		} else if (r % 10 == 7) { /* another writer's message */
			const char *l = "{\"role\":\"user\",\"text\":\"o\"}\n";

			append_raw(fx->home, session, l, strlen(l));
		} else if (r % 10 == 8) { /* garbage, later past the tail */
			size_t len = (size_t)rand_r(&seed) %
				     (step >= 80 ? 3 * big : 100);

			memset(text, 'x', len > big ? big : len);
			for (i = 0; i < len; i += big)
				append_raw(fx->home, session, text,
				    len - i > big ? big : len - i);
			append_raw(fx->home, session, "\n", 1);
		} else /* a torn line, as a crash leaves it */
			append_raw(fx->home, session, "{\"role\":\"tool\",", 15);
		h1 = history(fx->home, session, 0, &w1);
		h2 = history(fx->home, session, 1, &w2);
		assert_true(json_equal(h1, h2));
		assert_true(json_equal(w1, w2));
		n = json_array_size(h1);
		assert_true(n <= HD_NATIVE_HISTORY_MAX);
		for (i = 0; i < n; i++) {
			char *s = json_dumps(
			    json_array_get(h1, i), JSON_COMPACT);

			bytes += strlen(s);
			free(s);
		}
		assert_true(bytes <= HD_NATIVE_HISTORY_BYTES);
		if (n > 0)
			assert_string_equal(json_string_value(json_object_get(
						json_array_get(h1, 0), "role")),
			    "user");
		capped_count += n > HD_NATIVE_HISTORY_MAX - 10;
		capped_bytes += bytes > HD_NATIVE_HISTORY_BYTES / 2;
		json_decref(h1);
		json_decref(h2);
		json_decref(w1);
		json_decref(w2);
	}
	/* the walk reached both caps */
	assert_true(capped_count > 0);
	assert_true(capped_bytes > 0);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_native_transcript__new_then_resumed),
	    hd_fixture_test(test_native_transcript__another_writer_is_seen),
	    hd_fixture_test(test_native_transcript__a_torn_line_stays_alone),
	    hd_fixture_test(test_native_transcript__the_tail_moves_on),
	    hd_fixture_test(
		test_native_transcript__what_a_read_skips_is_not_remembered),
	    hd_fixture_test(
		test_native_transcript__remembered_is_what_a_read_gives),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
