/*
 * fuzz-exec-output.c -- the exec runtime's reply (src/runtime/exec.c
 * (1)): a command's standard output, arriving in pieces of any size, goes
 * on as text_delta events through the real turn driver. The first input
 * byte picks how the output is cut (piece sizes 1 to 16, cycling from
 * it); the rest is the output. For every input:
 *  (1) the deltas, joined, are the output byte for byte: nothing lost,
 *      changed or reordered, also when it is not UTF-8;
 *  (2) when the output is valid UTF-8, so is every delta: a sequence cut
 *      between two reads is held back and sent whole;
 *  (3) no delta is empty, and the turn's reply is the output;
 *  (4) nothing crashes or leaks (ASan and UBSan).
 * (claude.c and codex.c have their own targets; scripted writes its
 * replies itself and parses no output.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "fuzz.h"
#include "runtime/runtime_int.h"
#include "turn-fuzz.h"

static const uint8_t *out_data;
static size_t out_size;
static uint8_t cut;

struct seen {
	hd_buf text;
	int utf8; /* the output is valid UTF-8 */
};

static void
sink(const hd_runtime_event *ev, void *payload)
{
	struct seen *s = payload;

	if (ev->kind != HD_RT_TEXT_DELTA)
		return;
	check(ev->len > 0 && ev->text != NULL, "an empty text_delta"); /* (3) */
	check(!s->utf8 || hd_utf8_ok(ev->text, ev->len),
	    "a delta cut a UTF-8 sequence"); /* (2) */
	hd_buf_put(&s->text, ev->text, ev->len);
}

static int
feed_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	hd_exec_reply rs;
	size_t off = 0, n, step = cut;

	(void)in;
	(void)err;
	memset(&rs, 0, sizeof(rs));
	rs.em = em;
	while (off < out_size) {
		n = fuzz_piece(&step, out_size - off);
		hd_exec__reply_out(&rs, (const char *)out_data + off, n);
		off += n;
	}
	hd_exec__reply_out(&rs, NULL, 0);
	return 0;
}

static const hd_runtime_adapter feed_adapter =
    TURN_FUZZ_ADAPTER("exec output (fuzz)", feed_run);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	struct seen s;

	cut = 0;
	if (size > 0) {
		cut = data[0];
		data++;
		size--;
	}
	out_data = data;
	out_size = size;
	memset(&s, 0, sizeof(s));
	s.utf8 = hd_utf8_ok((const char *)data, size);
	check(turn_fuzz_run(&res, &feed_adapter, sink, &s, &err) == 0,
	    "the turn failed");
	check(!hd_buf_failed(&s.text), "out of memory");
	check(s.text.len == size &&
		  (size == 0 || memcmp(s.text.ptr, data, size) == 0),
	    "the deltas are not the output"); /* (1) */
	check(res.text != NULL && res.text_len == size &&
		  (size == 0 || memcmp(res.text, data, size) == 0),
	    "the reply is not the output"); /* (3) */
	hd_buf_dispose(&s.text);
	hd_runtime_result_dispose(&res);
	return 0;
}

const char *const hd_fuzz_seeds[] = {
    "\x01hello",
    "\x02h\xc3\xa9llo w\xc3\xb6rld",
    "\x03\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac",
    "\x04\xf0\x9f\x98\x80 \xf0\x9f\x98\x80",
    "\x05\xff\xfe broken \xc3",
    "\x06trailing lead \xe2\x82",
    "\x07\x80\x80\x80 continuation first",
    "\x08line one\nline two\r\n",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "a", " ", "\n", "\r\n", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
    "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\x80", "\xbf", "\xff", "\xf8",
    "\xc0\x80", "\xed\xa0\x80", NULL,
};
