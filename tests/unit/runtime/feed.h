/*
 * feed.h -- the harness the stream-parser tests share: a test adapter
 * feeds lines (captured samples from tests/unit/runtime/samples/, found
 * through HUDDLE_SRC, or lines a test writes) to a parser (feed_parser:
 * claude.c's or codex.c's, set in `parser`) and ends with its finish and
 * a given exit status, all through the real turn driver
 * (hd_runtime_run_turn), so each test sees exactly the events, reply,
 * cost and messages a turn would. Header-only; include it once.
 */
#ifndef HD_TEST_FEED_H
#define HD_TEST_FEED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "rec.h"
#include "runtime/runtime_int.h"

#define MAX_LINES 128
#define MAX_TOOLS 16

/* What the adapter feeds, and what it saw. */
typedef struct feed {
	const char *lines[MAX_LINES];
	size_t lens[MAX_LINES];
	size_t n;
	int exit_code;
	const char *tail;
	int rcs[MAX_LINES]; /* the line parser's answers */
	char *session;      /* the session the parser kept, at the end */
	char *file_text;    /* a loaded sample, owned */
} feed;

/* The recording sink plus what rec.h does not keep: tool events. */
typedef struct tap {
	rec r;
	size_t ntools;
	hd_runtime_event_kind tool_kind[MAX_TOOLS];
	char *tool_name[MAX_TOOLS]; /* "(null)" when the event had none */
	char *tool_id[MAX_TOOLS];
	char *tool_data[MAX_TOOLS]; /* compact JSON, keys sorted */
	int tool_err[MAX_TOOLS];
} tap;

typedef struct turn_case {
	feed f;
	tap t;
	hd_agent agent;
	hd_runtime_turn turn;
	hd_runtime_result res;
	hd_err err;
	int rc;
} turn_case;

/* The stream parser under test, behind four calls. */
typedef struct feed_parser {
	void *(*open)(void);
	int (*line)(void *p, hd_runtime_emit *em, const char *l, size_t n);
	void (*finish)(
	    void *p, hd_runtime_emit *em, int exit_code, const char *tail);
	const char *(*session)(void *p);
	void (*close)(void *p);
} feed_parser;

static const feed_parser *parser; /* set by each test file's setup */
static feed *current;             /* the feed the adapter reads */

static int
feed_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	void *p = parser->open();
	size_t i;

	(void)in;
	(void)err;
	assert_non_null(p);
	for (i = 0; i < current->n; i++)
		current->rcs[i] =
		    parser->line(p, em, current->lines[i], current->lens[i]);
	parser->finish(p, em, current->exit_code, current->tail);
	if (parser->session(p) != NULL)
		current->session = strdup(parser->session(p));
	parser->close(p);
	return 0;
}

static void
feed_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
}

static const hd_runtime_adapter feed_adapter = {
    .name = "feed",
    .label = "feed (test)",
    .capabilities = feed_caps,
    .run = feed_run,
};

static char *
dup_or_null(const char *s)
{
	return strdup(s != NULL ? s : "(null)");
}

static void
tap_sink(const hd_runtime_event *ev, void *payload)
{
	tap *t = payload;
	size_t k = t->ntools;

	rec_sink(ev, &t->r);
	if ((ev->kind != HD_RT_TOOL_CALL && ev->kind != HD_RT_TOOL_RESULT) ||
	    k == MAX_TOOLS)
		return;
	t->tool_kind[k] = ev->kind;
	t->tool_name[k] = dup_or_null(ev->name);
	t->tool_id[k] = dup_or_null(ev->id);
	t->tool_data[k] =
	    ev->data != NULL
		? json_dumps(
		      ev->data, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
		: strdup("(null)");
	t->tool_err[k] = ev->is_error;
	t->ntools++;
}

static void
case_init(turn_case *c)
{
	memset(c, 0, sizeof(*c));
	c->agent.id = (char *)"coder";
	c->agent.team_id = (char *)"dev";
	c->agent.runtime = (char *)"feed";
	c->turn.agent = &c->agent;
	c->turn.prompt = "do the thing";
	c->err = (hd_err)HD_ERR_INIT;
	c->f.tail = "";
	rec_init(&c->t.r);
}

/* Lines written here, NULL-terminated. */
static void
case_lines(turn_case *c, const char *const *lines)
{
	for (c->f.n = 0; lines[c->f.n] != NULL; c->f.n++) {
		assert_true(c->f.n < MAX_LINES);
		c->f.lines[c->f.n] = lines[c->f.n];
		c->f.lens[c->f.n] = strlen(lines[c->f.n]);
	}
}

/* A captured sample, one line per '\n'. */
static void
case_sample(turn_case *c, const char *name)
{
	const char *src = getenv("HUDDLE_SRC");
	char path[1024], *p, *nl, *end;
	size_t len = 0;
	hd_err err = HD_ERR_INIT;

	if (src == NULL)
		fail_msg("HUDDLE_SRC is not set (ctest sets it to the source "
			 "tree)");
	snprintf(
	    path, sizeof(path), "%s/tests/unit/runtime/samples/%s", src, name);
	assert_hd_ok(
	    hd_read_file(&c->f.file_text, &len, path, 1 << 20, &err), &err);
	end = c->f.file_text + len;
	for (p = c->f.file_text; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		assert_true(c->f.n < MAX_LINES);
		c->f.lines[c->f.n] = p;
		c->f.lens[c->f.n] = (size_t)(nl - p);
		c->f.n++;
	}
}

static int
case_run(turn_case *c, int exit_code, const char *tail)
{
	c->f.exit_code = exit_code;
	c->f.tail = tail;
	current = &c->f;
	c->rc = hd_runtime_run_turn(
	    &c->res, &feed_adapter, &c->turn, tap_sink, &c->t, &c->err);
	current = NULL;
	return c->rc;
}

/* A new case fed `lines` (NULL-terminated), run to exit_code and tail;
 * case_run's answer. */
static int
case_feed_lines(turn_case *c, const char *const *lines, int exit_code,
    const char *tail)
{
	case_init(c);
	case_lines(c, lines);
	return case_run(c, exit_code, tail);
}

/* A new case fed the captured sample `name`, run to exit_code and tail;
 * case_run's answer. */
static int
case_feed_sample(
    turn_case *c, const char *name, int exit_code, const char *tail)
{
	case_init(c);
	case_sample(c, name);
	return case_run(c, exit_code, tail);
}

static void
case_dispose(turn_case *c)
{
	size_t i;

	for (i = 0; i < c->t.ntools; i++) {
		free(c->t.tool_name[i]);
		free(c->t.tool_id[i]);
		free(c->t.tool_data[i]);
	}
	rec_dispose(&c->t.r);
	hd_runtime_result_dispose(&c->res);
	free(c->f.session);
	free(c->f.file_text);
}

/* The text of the i-th event (status, error), as rec.h kept it. */
static const char *
ev_text(turn_case *c, size_t i)
{
	assert_true(i < c->t.r.n);
	return c->t.r.texts[i];
}

static void
assert_tool(turn_case *c, size_t k, hd_runtime_event_kind kind,
    const char *name, const char *id, const char *data, int is_error)
{
	assert_true(k < c->t.ntools);
	assert_int_equal(c->t.tool_kind[k], kind);
	assert_string_equal(c->t.tool_name[k], name);
	assert_string_equal(c->t.tool_id[k], id);
	assert_string_equal(c->t.tool_data[k], data);
	assert_int_equal(c->t.tool_err[k], is_error);
}

#endif
