/*
 * runtime_int.h -- shared inside src/runtime only: the built-in adapters
 * and small helpers the adapters share.
 */
#ifndef HD_RUNTIME_INT_H
#define HD_RUNTIME_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include <jansson.h>

#include <huddle/buf.h>

#include <huddle/err.h>
#include <huddle/runtime.h>

extern const hd_runtime_adapter hd_runtime__scripted;
extern const hd_runtime_adapter hd_runtime__exec;
extern const hd_runtime_adapter hd_runtime__claude;
extern const hd_runtime_adapter hd_runtime__codex;
extern const hd_runtime_adapter hd_runtime__native;
extern const hd_runtime_adapter hd_runtime__hermes;
extern const hd_runtime_adapter hd_runtime__openclaw;

/* ---- the user's own CLI home, seeding an agent's (home.c) ---- */

/* The user's own directory of a CLI: $env_var, else $HOME/dot_dir; ""
 * when neither can be told. */
void hd_runtime__user_dir(
    char *out, size_t outlen, const char *env_var, const char *dot_dir);

/* Seed a prepared home from the user's directory dir: each of names
 * (NULL-terminated) readable there is copied when absent from
 * home (what hd_runtime_home_prepare does with spec->seeds), for an
 * adapter that knows its seeds only once it runs. Nothing when dir is ""
 * or is home itself. */
int hd_runtime__seed_from(const char *home, const char *dir,
    const char *const *names, hd_err *err);

/* ---- child processes (proc.c) ---- */

/* A NULL-terminated vector of owned strings; appends never fail loudly
 * (oom is sticky, as hd_buf's failure is). */
typedef struct hd_strv {
	char **v;
	size_t n, cap;
	int oom;
} hd_strv;

void hd_strv_add(hd_strv *s, char *str);        /* takes str (NULL: oom) */
void hd_strv_adds(hd_strv *s, const char *str); /* copies str */
void hd_strv_dispose(hd_strv *s);

/* "key=value", malloc'd. */
char *hd_runtime__env_pair(const char *key, const char *value);

/*
 * A child's environment (proc.c (6)): the caller's, then cfg_env (an
 * object of strings, or NULL), then extra ("KEY=value" strings, NULL
 * terminated, or NULL), then huddle's identity variables from in.
 */
void hd_runtime__env(hd_strv *env, const hd_runtime_turn *in,
    const json_t *cfg_env, char *const *extra);

/* HUDDLE_STORE when set and not empty (the store a PostgreSQL node
 * serves), else NULL. It reaches the stdio MCP server (runtime.c's
 * mcp_command) through the environment only, never its command line:
 * the agent CLI inherits it (hd_runtime__env), and an adapter whose CLI
 * starts MCP servers with an environment of its own passes it on. */
const char *hd_runtime__store_env(void);

/* What a runtime printed, quoted into an error or a status line (b):
 * only its first line with HD_QUOTE_FIRST_LINE; control characters made
 * spaces; no trailing blank (a space, a tab, a control character); at
 * most max bytes, cut where a character starts (whatever the bytes:
 * the emitter scrubs what is not UTF-8), with "..." after a cut when
 * HD_QUOTE_ELLIPSIS. Returns the bytes added: 0 says the text says
 * nothing, and the caller says something else (an error never ends in
 * a bare "prefix: "). */
enum { HD_QUOTE_FIRST_LINE = 1, HD_QUOTE_ELLIPSIS = 2 };
size_t hd_runtime__quote(
    hd_buf *b, const char *s, size_t len, size_t max, unsigned flags);

/* The value of key in a "KEY=value" vector, or NULL. Borrowed. */
const char *hd_runtime__env_get(char *const *env, const char *key);

/* The executable name would run as on path (a colon list; NULL: a
 * default), malloc'd; NULL when there is none. A name with a '/' is
 * checked as it is. */
char *hd_runtime__which(const char *name, const char *path);

/* Standard output as it arrives; (NULL, 0) once at its end. */
typedef void (*hd_proc_out_fn)(void *ctx, const char *data, size_t n);

typedef struct hd_proc_spec {
	char *const *argv; /* argv[0] is looked up on envp's PATH */
	char *const *envp;
	const char *cwd;   /* or NULL: the caller's */
	const char *input; /* written to stdin, or NULL: /dev/null */
	size_t input_len;
	int64_t timeout_ms; /* > 0 */
	atomic_int *abort;  /* or NULL */
	hd_proc_out_fn on_out;
	void *ctx;
	/* or NULL: told the child's pid (its group's id) and start time
	 * once it runs, before its output is read (proc.c (9)) */
	void (*on_spawn)(void *spawn_ctx, int64_t pid, int64_t start);
	void *spawn_ctx;
} hd_proc_spec;

enum { HD_PROC_EXITED = 0, HD_PROC_TIMEOUT = 1, HD_PROC_ABORTED = 2 };

typedef struct hd_proc_result {
	int why;       /* HD_PROC_* */
	int exit_code; /* its exit status, or -1 when it did not exit */
	int signal;    /* the signal that ended it, or 0 */
	char *tail;    /* the end of its standard error (malloc'd) */
} hd_proc_result;

/*
 * Run a command to its end, or to its timeout or abort (the whole process
 * group killed either way; proc.c (1)). Returns 0 once it ran (read
 * out->why and exit_code), or a negative code with err set when it could
 * not start (`cannot run "claude": No such file or directory`). Dispose
 * out in either case.
 */
int hd_proc_run(hd_proc_result *out, const hd_proc_spec *spec, hd_err *err);
void hd_proc_result_dispose(hd_proc_result *r);

/* "exit status 3", "killed by signal 9 (SIGKILL)". */
void hd_proc_status_text(char *out, size_t outlen, const hd_proc_result *r);

/* Lines out of a byte stream (proc.c (8)): fn gets each line without its
 * newline (and without a '\r' before it); cut is 1 when the line was
 * longer than max and only its first max bytes are given. */
typedef void (*hd_line_fn)(void *ctx, const char *line, size_t len, int cut);

typedef struct hd_lines {
	hd_buf buf;
	size_t max;
	int cut, skipping;
	hd_line_fn fn;
	void *ctx;
} hd_lines;

void hd_lines_init(hd_lines *l, size_t max, hd_line_fn fn, void *ctx);
/* Bytes as they come; (NULL, 0) at the end flushes a last partial line.
 * Fits hd_proc_out_fn when ctx is the hd_lines. */
void hd_lines_feed(hd_lines *l, const char *data, size_t n);
void hd_lines_dispose(hd_lines *l);

/* ---- runtime_config and endings (cfg.c) ---- */

/* Every key of cfg is one of allowed: `runtime_config: unknown key "k"
 * for runtime NAME` otherwise. */
int hd_runtime__check_keys(const json_t *cfg, const char *const *allowed,
    const char *runtime, hd_err *err);

/* cfg[key] when it is a non-empty string, else dflt. Borrowed. */
const char *hd_runtime__cfg_str(
    const json_t *cfg, const char *key, const char *dflt);
/* Absent, or a non-empty string / an array of names / an integer in
 * [min, max] / an object of strings (env); HD_EINVAL naming the field. */
int hd_runtime__check_string(const json_t *cfg, const char *key, hd_err *err);
int hd_runtime__check_strings(const json_t *cfg, const char *key, hd_err *err);
int hd_runtime__check_int(const json_t *cfg, const char *key, long long min,
    long long max, hd_err *err);
int hd_runtime__check_env(const json_t *cfg, hd_err *err);

/* runtime_config.timeout_s (else default_s) in ms, or the turn's own
 * limit when that is shorter. */
int64_t hd_runtime__timeout_ms(
    const json_t *cfg, const hd_runtime_turn *in, int64_t default_s);

/* The child's environment (hd_runtime__env with the config's env and
 * extra) into env, and where runtime_config.bin (else dflt) runs from on
 * its PATH into *found (malloc'd). A missing binary ends the turn:
 * `<runtime>: 'claude' not found on PATH (runtime_config.bin)`. */
int hd_runtime__bin(char **found, hd_strv *env, const hd_runtime_turn *in,
    char *const *extra, const char *runtime, const char *dflt,
    hd_runtime_emit *em, hd_err *err);

/* The agent's work directory (cfg.c (2)) into out. */
int hd_runtime__workdir(char *out, size_t outlen, const json_t *cfg,
    const char *home, const char *runtime, hd_err *err);

/* At debug level, log what is about to run: cwd, the environment huddle
 * adds (extra: paths, never the config's values) and argv as JSON, the
 * prompt argument (prompt, when it is one of argv) as "{PROMPT}". */
void hd_runtime__log_run(const char *runtime, char *const *argv,
    const char *prompt, const char *cwd, char *const *extra);

/* End the turn in error with this message (error, then done); err gets
 * it too. Returns the negative code. */
int hd_runtime__fail(hd_runtime_emit *em, hd_err *err, const char *fmt, ...)
    HD_PRINTFLIKE(3, 4);

/* After hd_proc_run: an abort ends the turn aborted (0), a timeout in
 * error (`<runtime>: timed out after 5 s ...`, a negative code); 1 when
 * the process exited by itself and the caller reads how. */
int hd_runtime__ended(hd_runtime_emit *em, const hd_proc_result *pr,
    int64_t timeout_ms, const char *runtime, hd_err *err);

/* ---- doctor hooks' helpers (doctor.c) ---- */

void hd_runtime__doctor_problem(json_t *report, const char *fmt, ...)
    HD_PRINTFLIKE(2, 3);
/* A variable as the agent's runtime would see it: config env, else ours. */
const char *hd_runtime__doctor_env(const json_t *cfg, const char *key);
/* "binary": where bin is on the runtime's PATH and its --version; a
 * problem naming runtime_config.<cfg_key> when it is missing. -1 then. */
int hd_runtime__doctor_bin(
    json_t *report, const hd_agent *a, const char *bin, const char *cfg_key);
/* "env": which of names are set; a problem "no credentials: <needs>" when
 * none is and nothing else satisfies the runtime. */
void hd_runtime__doctor_needs(json_t *report, const hd_agent *a,
    const char *needs, const char *const *names, int satisfied_otherwise);

/* A prompt longer than this goes to a CLI on its standard input: Linux
 * caps one argument at 128 KiB (MAX_ARG_STRLEN). */
#define HD_RUNTIME_ARG_PROMPT_MAX (96 * 1024)

/* A JSON-lines CLI's parser, for hd_runtime__run_stream (cfg.c (4)). */
#define HD_RUNTIME_LINE_MAX (8 * 1024 * 1024)

typedef struct hd_runtime_stream {
	const char *runtime; /* "claude-code": the messages' prefix */
	void *parser;
	int (*line)(void *parser, hd_runtime_emit *em, const char *line,
	    size_t len);
	void (*finish)(void *parser, hd_runtime_emit *em, int exit_code,
	    const char *stderr_tail);
} hd_runtime_stream;

/*
 * A one-shot CLI turn as claude.c and codex.c prepare it (cfg.c (5)):
 * begin checks the config and finds the model, the time limit and the
 * work directory; the adapter then adds its own environment (extra),
 * calls hd_runtime__bin, writes its argv (the prompt with
 * hd_runtime__cli_prompt) and makes its parser; run runs it.
 */
typedef struct hd_runtime_cli {
	const char *runtime; /* "claude-code": the messages' prefix */
	const char *model;   /* runtime_config.model, or NULL */
	char work[PATH_MAX]; /* the work directory (cfg.c (2)) */
	hd_strv argv, env, extra;
	char *found; /* the binary, where it is on PATH */
	hd_proc_spec ps;
} hd_runtime_cli;

/* check the config (check), then the agent's home, model, time limit and
 * work directory. A failure ends the turn ("<runtime>: <why>"). */
int hd_runtime__cli_begin(hd_runtime_cli *c, const hd_runtime_turn *in,
    const char *runtime, int (*check)(const json_t *cfg, hd_err *err),
    int64_t default_timeout_s, hd_runtime_emit *em, hd_err *err);
/* The prompt as the next argument, or past the kernel's limit for one
 * (HD_RUNTIME_ARG_PROMPT_MAX) on stdin, with stdin_arg (or nothing) as
 * the argument. */
void hd_runtime__cli_prompt(
    hd_runtime_cli *c, const hd_runtime_turn *in, const char *stdin_arg);
/* Run the command with rs's parser (NULL: out of memory) through
 * hd_runtime__run_stream. */
int hd_runtime__cli_run(hd_runtime_cli *c, const hd_runtime_turn *in,
    const hd_runtime_stream *rs, hd_runtime_emit *em, hd_err *err);
void hd_runtime__cli_dispose(hd_runtime_cli *c);

/* The capabilities of a wrapped one-shot CLI whose config, work
 * directory and sessions live in one home per agent (claude, codex). */
void hd_runtime__cli_caps(hd_runtime_caps *out);

/* The config checks every CLI adapter makes: keys, bin, model, workdir,
 * env and timeout_s. */
int hd_runtime__cli_check(const json_t *cfg, const char *const *keys,
    const char *runtime, hd_err *err);

/*
 * Run spec's command (argv, envp, cwd, input, timeout_ms; in's abort),
 * logging it at debug with extra (the environment huddle adds), and feed
 * its standard output to rs's parser line by line as it comes; then end
 * the turn: aborted, timed out (error, the group killed), or the parser's
 * finish when it exited by itself. 0, or a negative code with err set.
 */
int hd_runtime__run_stream(hd_runtime_emit *em, const hd_runtime_turn *in,
    const hd_runtime_stream *rs, const hd_proc_spec *spec,
    char *const *extra, hd_err *err);

/* ---- prices (price.c): what a model's tokens cost, for runtimes that
 * report tokens but no cost (codex) ---- */

/*
 * The price of model on runtime rt: runtime_config.prices ({"input",
 * "cached", "output"}, USD per million tokens) when given, else rt's
 * price list (rt->prices, matched by model-name prefix; rt may be NULL:
 * none), else the SPEC 8.2 default ($3 in and cached, $15 out). Returns
 * 0, or HD_EINVAL with err set when prices is present but malformed.
 */
int hd_runtime__price(hd_price *out, const hd_runtime_adapter *rt,
    const char *model, const json_t *prices, hd_err *err);

/* The cost of a turn's tokens at price p, flagged estimated. input
 * counts every input token, cached ones included; cached <= input. */
void hd_runtime__price_cost(hd_runtime_cost *out, const hd_price *p,
    int64_t input, int64_t cached, int64_t output);

/* ---- claude.c: the `claude -p --output-format stream-json --verbose`
 * stream, one line at a time ---- */

typedef struct hd_claude_stream hd_claude_stream;

hd_claude_stream *hd_claude__stream_new(void);
void hd_claude__stream_free(hd_claude_stream *cs);

/*
 * One line of output, without its newline (may be empty, truncated or
 * garbage). Emits as it arrives: tool_use blocks of assistant lines as
 * tool_call, tool_result blocks of user lines as tool_result, text blocks
 * as text_delta, api_retry system lines as status. The result line is
 * remembered. Returns 0, or -1 for a line that is not a JSON object of a
 * known shape (counted; the turn goes on).
 */
int hd_claude__stream_line(
    hd_claude_stream *cs, hd_runtime_emit *em, const char *line, size_t len);

/*
 * The process ended: exit_code is its exit status, or -1 when it was
 * killed; stderr_tail is the last of its standard error ("" when none).
 * Emits the reply (the result line's `result`, hd_runtime_emit_reply),
 * the cost (total_cost_usd and usage, not estimated), the
 * permission_denials as a status warning, and ends the turn with done:
 * success with the session id, or error with a clear message
 * ("claude-code: API error 400: ..." for is_error with api_error_status,
 * "claude-code: exit status 1: <tail>" when no result line came, ...).
 * Does not emit done when the caller already knows the turn failed
 * (timeout, abort): call it only for a process that exited by itself.
 */
void hd_claude__stream_finish(hd_claude_stream *cs, hd_runtime_emit *em,
    int exit_code, const char *stderr_tail);

/* The session id seen so far (system/init or result), or NULL. */
const char *hd_claude__stream_session(const hd_claude_stream *cs);

/* ---- exec.c: the reply, passed through (exec.c (1)) ---- */

typedef struct hd_exec_reply {
	hd_runtime_emit *em;
	char carry[4]; /* an unfinished UTF-8 sequence */
	size_t ncarry;
} hd_exec_reply;

/* proc.c's on_out for an exec turn: ctx is an hd_exec_reply; data NULL
 * marks the end (what was held back goes as it is). */
void hd_exec__reply_out(void *ctx, const char *data, size_t n);

/* ---- codex.c: the `codex exec --json` stream ---- */

typedef struct hd_codex_stream hd_codex_stream;

/* Cumulative token counts of a Codex thread (turn.completed.usage after a
 * resume counts the whole thread). */
typedef struct hd_codex_usage {
	int64_t input;
	int64_t cached;
	int64_t output;
} hd_codex_usage;

/*
 * A parser for one run. price: what tokens cost (hd_runtime__price).
 * base: the thread's totals before this run (zeros for a new thread), so
 * a resumed thread's cumulative usage is charged only for what is new.
 */
hd_codex_stream *hd_codex__stream_new(
    const hd_price *price, const hd_codex_usage *base);
void hd_codex__stream_free(hd_codex_stream *cs);

/*
 * One line (as hd_claude__stream_line): thread.started remembers the
 * thread id; item.started/item.completed of an mcp_tool_call emit
 * tool_call/tool_result; an agent_message emits text_delta and is
 * remembered as the reply (the last one wins); known warning items
 * (item.completed of type error, e.g. "Model metadata for ... not found")
 * become status; turn.completed gives usage; turn.failed and error are
 * remembered as the turn's error.
 */
int hd_codex__stream_line(
    hd_codex_stream *cs, hd_runtime_emit *em, const char *line, size_t len);

/* As hd_claude__stream_finish: reply, cost (estimated, from the new
 * tokens at the price), done or error ("codex: <turn.failed message>"). */
void hd_codex__stream_finish(hd_codex_stream *cs, hd_runtime_emit *em,
    int exit_code, const char *stderr_tail);

/* The thread id seen, or NULL; the thread's totals after this run. */
const char *hd_codex__stream_thread(const hd_codex_stream *cs);
void hd_codex__stream_usage(const hd_codex_stream *cs, hd_codex_usage *out);

/* ---- attach.c: for the adapters' attach writers ---- */

/* `EXE --home HOME mcp --team T --agent A`, each path a shell word, the
 * stdio server of x, appended to b. */
void hd_runtime__attach_stdio(hd_buf *b, const hd_runtime_attach *x);

/* Tests only: make rt the adapter table's last row (runtime.c has one
 * spare), as adding a runtime's row there would; NULL takes it out.
 * Call before anything reads the table. */
void hd_runtime__test_adapter(const hd_runtime_adapter *rt);

/* `timed out after 1.5 s` into out. */
void hd_runtime__timeout_msg(char *out, size_t outlen, int64_t ms);

/* ---- openclaw.c: an OpenClaw Gateway's frames (openclaw.c (1)-(5)) ----
 * A state machine with no I/O: the client hands it each WebSocket text
 * message and sends what it queues. */

typedef struct hd_openclaw hd_openclaw;

typedef struct hd_openclaw_opts {
	const char *token;    /* the Gateway's shared token, or NULL */
	const char *session;  /* the session key */
	const char *agent_id; /* the Gateway's agent, or NULL: its default */
	const char *message;  /* the prompt */
	const char *run_id;   /* chat.send's idempotency key (a UUID) */
	const char *team;     /* with agent: the device key's seed (2) */
	const char *agent;
	int64_t timeout_ms; /* told to the Gateway; 0: none */
} hd_openclaw_opts;

enum { HD_OPENCLAW_ABORT = 1, HD_OPENCLAW_TIMEOUT = 2 };

/* NULL when memory ran out. */
hd_openclaw *hd_openclaw__new(const hd_openclaw_opts *o);
void hd_openclaw__free(hd_openclaw *oc);
/* One message from the Gateway (any bytes): emits what it means, queues
 * the answer (connect after the challenge, chat.send after hello-ok).
 * 0, or -1 for one that is not a JSON object with a type (ignored). */
int hd_openclaw__frame(
    hd_openclaw *oc, hd_runtime_emit *em, const char *text, size_t len);
/* The next frame to send (malloc'd), or NULL. */
char *hd_openclaw__next_out(hd_openclaw *oc);
/* huddle stops the turn (why: HD_OPENCLAW_*): chat.abort is queued once
 * a run may exist, else the turn ends at once (5). */
void hd_openclaw__cancel(hd_openclaw *oc, hd_runtime_emit *em, int why);
/* The connection is gone (why: how, for the error): ends the turn
 * unless it ended. */
void hd_openclaw__closed(hd_openclaw *oc, hd_runtime_emit *em, const char *why);
/* 1 once the turn's done was emitted. */
int hd_openclaw__done(const hd_openclaw *oc);
/* 0, or the HD_OPENCLAW_* huddle cancelled with. */
int hd_openclaw__cancelled(const hd_openclaw *oc);

#endif
