/*
 * native.h -- shared inside src/runtime only: the native runtime's wire
 * formats (native-wire.c), which native.c drives and the unit tests and
 * fuzz target exercise alone, and its transcript (native-transcript.c).
 *
 * A native session's messages are kept provider-neutral (one JSON object
 * each, the lines of its transcript file):
 *   {"role":"user","text":"..."}
 *   {"role":"assistant","text":"...","calls":[{"id","name","args"}]}
 *       (args: the arguments as the model wrote them, a string)
 *   {"role":"tool","id":"...","name":"...","text":"...","is_error":bool}
 * and turned into either provider's request here.
 */
#ifndef HD_RUNTIME_NATIVE_H
#define HD_RUNTIME_NATIVE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include <huddle/buf.h>
#include <huddle/err.h>

/* ---- SSE framing (the text/event-stream line protocol) ---- */

/* One dispatched event: its `event:` name ("" when none) and its data
 * lines joined by '\n' (len bytes, NUL-terminated). */
typedef void (*hd_sse_fn)(
    void *ctx, const char *event, const char *data, size_t len);

/* An event's data past this is dropped and the event reported cut. */
#define HD_SSE_EVENT_MAX (8 * 1024 * 1024)

typedef struct hd_sse {
	hd_buf line;   /* the line being read */
	hd_buf data;   /* the event's data so far */
	char event[64];
	int have_data; /* a data: line was seen */
	int cr;        /* the last byte was '\r' (CRLF counts once) */
	int over;      /* this event went over HD_SSE_EVENT_MAX */
	int cut;       /* 1 once any event went over HD_SSE_EVENT_MAX */
	hd_sse_fn fn;
	void *ctx;
} hd_sse;

void hd_sse_init(hd_sse *s, hd_sse_fn fn, void *ctx);
/* Bytes as they arrive, in any split. Lines end in \n, \r\n or \r; a
 * blank line dispatches the event; `:` lines are comments; `data:` and
 * `event:` fields lose one leading space; other fields are ignored. An
 * event not ended by a blank line is never dispatched (the stream was
 * cut). */
void hd_sse_feed(hd_sse *s, const char *data, size_t n);
void hd_sse_dispose(hd_sse *s);

/* ---- providers ---- */

typedef enum hd_native_provider {
	HD_NATIVE_OPENAI = 0,
	HD_NATIVE_ANTHROPIC = 1,
} hd_native_provider;

/* "openai", "anthropic". */
const char *hd_native__provider_name(hd_native_provider p);

/*
 * The request body of one model call, a new reference: the model, the
 * system prompt (or NULL), the messages (the neutral form above; tool
 * results in a row become one Anthropic user message), the tools
 * ([{"name","description","input_schema"}], or NULL/empty: none),
 * streaming on (OpenAI: usage included).
 */
json_t *hd_native__request(hd_native_provider p, const char *model,
    const char *system, const json_t *messages, const json_t *tools);

/*
 * The same body built from kept pieces (native-wire.c (6)): the body's
 * members but messages, serialised without braces (hd_native__envelope,
 * malloc'd, made once a turn); each message's wire form serialised (a
 * new JSON string, "" for a role not sent; NULL: no memory); and the
 * body joined from them (malloc'd, or NULL), filling wire -- an array
 * parallel to messages, JSON null where a piece is not made yet -- with
 * the pieces it had to make. Parses to what hd_native__request gives.
 */
char *hd_native__envelope(hd_native_provider p, const char *model,
    const char *system, const json_t *tools);
json_t *hd_native__wire(hd_native_provider p, const json_t *m);
/* v as compact JSON text, json_dumps's bytes (*len of them, not
 * NUL-terminated): in buf when they fit in its first size bytes, else in
 * *heap, malloc'd with a byte of room past them (the caller frees it;
 * NULL when buf served; a caller wanting that byte in buf too passes one
 * less than its size). No reallocation and no copy, as json_dumps makes.
 * NULL when v cannot be serialised or no memory. */
char *hd_native__dump(
    const json_t *v, char *buf, size_t size, size_t *len, char **heap);
char *hd_native__body(hd_native_provider p, const char *envelope,
    const char *system, const json_t *messages, json_t *wire);

/* A body kept for a turn's next model call: a turn's messages only grow
 * from call to call, so the next body is this one extended in place
 * (native-wire.c (6)), not joined again. */
typedef struct hd_native_join {
	int first;       /* no message written yet */
	int run;         /* Anthropic: a user message of results is open */
	int block_first; /* ... and holds no result yet */
} hd_native_join;

typedef struct hd_native_body {
	char *text;  /* the body, NUL-terminated (malloc'd), or NULL */
	size_t len;
	size_t n;    /* the messages it holds */
	size_t end;  /* where they end: the rest is the body's close */
	hd_native_join join; /* the join's state there */
} hd_native_body;

/* b made the body of messages (as hd_native__body): extended when it
 * holds a body of their first b->n (made by this from the same
 * provider, envelope, system prompt and messages: the caller's
 * promise), else made anew. 0, or -1 when out of memory (b emptied). */
int hd_native__body_make(hd_native_body *b, hd_native_provider p,
    const char *envelope, const char *system, const json_t *messages,
    json_t *wire);
void hd_native__body_dispose(hd_native_body *b);

/* What one streamed reply said. */
typedef struct hd_native_reply {
	hd_buf text;     /* the text, as deltas arrived */
	json_t *calls;   /* [{"id","name","args"}], args a string */
	int64_t input;   /* input tokens, cached ones included */
	int64_t cached;
	int64_t output;
	int have_usage;
	int finished;    /* the provider's end of reply was seen */
	char *stop;      /* the stop / finish reason, or NULL */
	char *error;     /* an error the stream carried, or NULL */
	size_t malformed; /* events that were not JSON of a known shape */
} hd_native_reply;

/* Text deltas, as they arrive (for the turn's text_delta events). */
typedef void (*hd_native_text_fn)(void *ctx, const char *text, size_t len);

typedef struct hd_native_stream {
	hd_native_provider provider;
	hd_native_reply r;
	hd_sse sse;
	hd_native_text_fn on_text;
	void *ctx;
	json_t *partial; /* Anthropic: index -> {"id","name","args"} being
			    streamed; OpenAI: index -> the same */
} hd_native_stream;

void hd_native__stream_init(hd_native_stream *ns, hd_native_provider p,
    hd_native_text_fn on_text, void *ctx);
/* The response body's bytes, in any split. */
void hd_native__stream_feed(hd_native_stream *ns, const char *data, size_t n);
/* One SSE event (what feed dispatches; the tests call it directly).
 * Returns 0, or -1 for an event that was not JSON of a known shape. */
int hd_native__stream_event(
    hd_native_stream *ns, const char *event, const char *data, size_t len);
/* After the body ended: tool calls whose streaming had not closed are
 * moved into r.calls in order. */
void hd_native__stream_end(hd_native_stream *ns);
void hd_native__stream_dispose(hd_native_stream *ns);

/* The message of a provider's JSON error body ({"error": {"message"}} or
 * {"error": "..."} or {"message": "..."}), malloc'd; the body's first
 * line (at most 300 bytes) when it is not one; NULL when empty. */
char *hd_native__error_message(const char *body, size_t len);

/* ---- the transcript (native-transcript.c) ---- */

/* A turn resends at most this many messages of its session ... */
#define HD_NATIVE_HISTORY_MAX 200
/* ... whose lines total at most this many bytes ... */
#define HD_NATIVE_HISTORY_BYTES (512 * 1024)
/* ... read from at most the file's last this many bytes. */
#define HD_NATIVE_TAIL_BYTES (2 * HD_NATIVE_HISTORY_BYTES)

typedef struct hd_native_line {
	size_t len;  /* the line's length, without its newline */
	off_t start; /* where it starts in the file */
} hd_native_line;

/* The messages a resuming turn may resend (native-transcript.c (2)). */
typedef struct hd_native_window {
	json_t *msgs;          /* the messages, oldest first */
	json_t *wire;          /* each one's hd_native__wire, or null */
	hd_native_provider wire_for;
	hd_native_line *lines; /* each one's line */
	size_t n, cap;
	size_t bytes; /* the lines' lengths, summed */
} hd_native_window;

typedef struct hd_native_transcript {
	char session[64];
	char path[PATH_MAX + 128];
	int fd;
	int resumed; /* 1: an existing session's file, resumed */
	int intact;  /* every line this turn wrote was written whole */
	off_t end;   /* the file's size as this turn's writes left it */
	hd_native_window win;
	void *slot;  /* the record win was kept in, to keep it in again */
} hd_native_transcript;

/* 1 when s is a native session id ("native-" and lowercase hex). */
int hd_native__session_ok(const char *s);
/* The transcript of session resume in home/native, or of a new session
 * (tr->resumed 0) when resume is NULL, not a session id, or has no file
 * there. */
int hd_native__transcript_open(hd_native_transcript *tr, const char *home,
    const char *resume, hd_err *err);
/* The messages to resend, a new array: the window from its first user
 * message on; *wire, a new array parallel to it, their wire forms for p
 * (those the window lacked made now, and kept with it). */
json_t *hd_native__transcript_history(
    hd_native_transcript *tr, hd_native_provider p, json_t **wire);
/* m as the transcript's next line; -1 with errno when it could not be
 * written whole. m may be kept with the window: it must not change
 * afterwards. */
int hd_native__transcript_add(hd_native_transcript *tr, json_t *m);
/* The messages the turn sent (its history and what it added) and their
 * wire forms for p (native-wire.c (6)), for the window to keep for the
 * session's next turn: called before close. */
void hd_native__transcript_sent(hd_native_transcript *tr,
    hd_native_provider p, const json_t *sent, const json_t *wire);
/* Closes the file; the window is remembered for the session's next turn
 * when nothing but this turn wrote the file. */
void hd_native__transcript_close(hd_native_transcript *tr);

#endif
