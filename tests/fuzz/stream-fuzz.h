/*
 * stream-fuzz.h -- what the stream-parser fuzz targets share: a parser
 * (stream_fuzz) fed any output under the real turn driver, with these
 * checks on every input:
 *  (1) the sink sees exactly one done, and it is the last event; exactly
 *      one cost comes before it (the runtime's or the driver's estimate);
 *  (2) a turn succeeds only when the process exited 0, and the driver's
 *      code agrees with the reason (negative exactly for error);
 *  (3) the reply is at most HD_RUNTIME_OUTPUT_MAX bytes plus the
 *      truncation note, and never NULL;
 *  (4) error and status messages hold no control characters and start
 *      with the runtime's prefix;
 *  (5) nothing crashes or leaks (ASan and UBSan check the replay).
 * The turn and its adapter are turn-fuzz.h's; STREAM_FUZZ_JSON_TOKENS are
 * the pieces of JSON lines every stream target's replay glues together.
 * Header-only; one target includes it once.
 */
#ifndef HD_STREAM_FUZZ_H
#define HD_STREAM_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/runtime.h>

#include "fuzz.h"
#include "runtime/runtime_int.h"
#include "turn-fuzz.h"

/* The bytes JSON lines are made of, ahead of a target's own tokens. */
#define STREAM_FUZZ_JSON_TOKENS                                                \
	"\n", "\r\n", "{", "}", "[", "]", ",", "\"", "\\u0000", "\\u0001",     \
	    "\\n", "\xe2\x80\x94", "\xff"

/* The parser under fuzzing, behind four calls; open gets the first input
 * byte (it may pick the parser's settings from it). */
typedef struct stream_fuzz {
	const char *prefix; /* every status and error starts with it */
	void *(*open)(uint8_t first);
	int (*line)(void *p, hd_runtime_emit *em, const char *l, size_t n);
	void (*finish)(
	    void *p, hd_runtime_emit *em, int exit_code, const char *tail);
	void (*close)(void *p); /* may check what the parser kept */
} stream_fuzz;

typedef struct input {
	const stream_fuzz *f;
	const uint8_t *data;
	size_t size;
	uint8_t first;
	int exit_code;
	const char *tail;
} input;

typedef struct seen {
	size_t events, dones, costs;
	int after_done; /* an event came after done */
	int last_was_done;
} seen;

static const input *cur;

static int
clean_line(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static void
sink(const hd_runtime_event *ev, void *payload)
{
	seen *s = payload;

	if (s->dones > 0)
		s->after_done = 1;
	s->events++;
	s->last_was_done = ev->kind == HD_RT_DONE;
	switch (ev->kind) {
	case HD_RT_DONE: s->dones++; break;
	case HD_RT_COST: s->costs++; break;
	case HD_RT_ERROR:
		check(ev->text != NULL && ev->len == strlen(ev->text),
		    "an error without its text");
		check(clean_line(ev->text, ev->len),
		    "a control character in an error");
		break;
	case HD_RT_STATUS:
		check(ev->text != NULL && ev->len == strlen(ev->text),
		    "a status without its text");
		check(clean_line(ev->text, ev->len),
		    "a control character in a status");
		check(strncmp(ev->text, cur->f->prefix,
			  strlen(cur->f->prefix)) == 0,
		    "a status without the runtime's name");
		break;
	case HD_RT_TEXT_DELTA:
		check(ev->len > 0 && ev->text != NULL, "an empty text_delta");
		break;
	case HD_RT_TOOL_CALL:
	case HD_RT_TOOL_RESULT: break;
	}
}

static int
feed_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	void *cs = cur->f->open(cur->first);
	const char *p = (const char *)cur->data, *end = p + cur->size, *nl;
	int rc;

	(void)in;
	if (cs == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		rc = cur->f->line(cs, em, p, (size_t)(nl - p));
		check(rc == 0 || rc == -1, "a line returned neither 0 nor -1");
		p = nl + 1;
	}
	cur->f->finish(cs, em, cur->exit_code, cur->tail);
	cur->f->close(cs);
	return 0;
}

static const hd_runtime_adapter feed_adapter =
    TURN_FUZZ_ADAPTER("stream (fuzz)", feed_run);

/* One input: the first byte picks the exit status (0, 1, 2 or -1,
 * killed) and the stderr tail (and whatever open makes of it); the rest
 * is the output, split into lines at '\n' and fed line by line. */
static int
stream_fuzz_one(const stream_fuzz *f, const uint8_t *data, size_t size)
{
	static const int codes[] = {0, 1, 2, -1};
	static const char *const tails[] = {"",
	    "Error: boom\n\tat x\x01y\nWARNING: proceeding, even though x\n",
	    "\xe2\x80\x94 tail"};
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	input in;
	seen s;
	int rc;

	memset(&in, 0, sizeof(in));
	memset(&s, 0, sizeof(s));
	in.f = f;
	if (size > 0) {
		in.first = data[0];
		in.exit_code = codes[data[0] % 4];
		in.tail = tails[(data[0] / 4) % 3];
		data++;
		size--;
	} else
		in.tail = "";
	in.data = data;
	in.size = size;
	cur = &in;
	rc = turn_fuzz_run(&res, &feed_adapter, sink, &s, &err);
	cur = NULL;

	/* (1) */
	check(s.dones == 1, "not exactly one done");
	check(s.last_was_done && !s.after_done, "done is not the last event");
	check(s.costs == 1, "not exactly one cost");
	/* (2) */
	check(res.reason != HD_DONE_SUCCESS || in.exit_code == 0,
	    "success after a nonzero exit");
	check((rc < 0) == (res.reason == HD_DONE_ERROR),
	    "the code disagrees with the reason");
	/* (3) */
	check(res.text != NULL, "no reply");
	check(res.text[res.text_len] == '\0', "the reply is not terminated");
	check(res.text_len <=
		  HD_RUNTIME_OUTPUT_MAX + strlen(HD_RUNTIME_TRUNCATED_NOTE),
	    "the reply is over the cap");
	/* (4) */
	if (res.reason == HD_DONE_ERROR) {
		check(res.error != NULL, "an error turn without a message");
		check(clean_line(res.error, strlen(res.error)),
		    "a control character in the turn's error");
		check(strncmp(res.error, f->prefix, strlen(f->prefix)) == 0,
		    "an error without the runtime's name");
	}
	hd_runtime_result_dispose(&res);
	return 0;
}

#endif
