/*
 * runtime.h -- runtime adapters: run one turn of an agent (SPEC 9).
 *
 * An adapter (scripted, exec, ...) is a table of functions: its name, its
 * capabilities, and run(), which takes a turn (the agent, its team, the
 * prompt, the session to resume, its home, its MCP attach URL and token, a
 * timeout and an abort flag) and reports what happens as a stream of events
 * to a sink: text_delta, tool_call, tool_result, status, cost, error and
 * exactly one terminal done, always last.
 *
 * Engines call hd_runtime_run() (find the adapter, plan, prepare the home,
 * run, clean up) or, with an adapter and a home in hand,
 * hd_runtime_run_turn(). Both guarantee the sink sees exactly one done and
 * that it comes last, whatever the adapter does, cap the reply at
 * HD_RUNTIME_OUTPUT_MAX bytes, and estimate the cost when the runtime
 * reports none (SPEC 8.2). Both are safe to call from several threads at
 * once: nothing is shared between turns.
 *
 * The host branches only on the plan from hd_runtime_resolve_integration(),
 * never on a runtime's name (SPEC 9.2).
 */
#ifndef HUDDLE_RUNTIME_H
#define HUDDLE_RUNTIME_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "agent.h"
#include "buf.h"
#include "err.h"

/* The reply of one turn is capped here; past it the text is dropped and
 * HD_RUNTIME_TRUNCATED_NOTE is appended once. */
#define HD_RUNTIME_OUTPUT_MAX (1024 * 1024)
#define HD_RUNTIME_TRUNCATED_NOTE                                              \
	"\n[output truncated: the agent wrote more than 1 MiB]"

/* The file huddle owns in every runtime home, rewritten every run. */
#define HD_RUNTIME_MCP_FILE "huddle-mcp.json"

/* ---- capabilities and the integration plan (SPEC 9.1, 9.2) ---- */

typedef enum hd_runtime_class {
	HD_RUNTIME_WRAPPED_ONESHOT = 0, /* the default when caps are omitted */
	HD_RUNTIME_NATIVE = 1,
	HD_RUNTIME_CONNECTED_SUBSTRATE = 2,
} hd_runtime_class;

typedef enum hd_home_scope {
	HD_HOME_SCOPE_NONE = 0,         /* the runtime uses no directory */
	HD_HOME_SCOPE_PER_IDENTITY = 1, /* one home per agent */
	HD_HOME_SCOPE_PER_RUN = 2,      /* a fresh home per turn */
} hd_home_scope;

typedef enum hd_native_keep {
	HD_NATIVE_NONE = 0,
	HD_NATIVE_PRESERVE = 1,
} hd_native_keep;

typedef enum hd_native_channels {
	HD_CHANNELS_NONE = 0,
	HD_CHANNELS_NATIVE = 1,
	HD_CHANNELS_GATEWAY = 2,
} hd_native_channels;

/* Whether the runtime's agent can be handed huddle's tools (its MCP
 * server); none when it cannot carry a per-agent binding (an OpenClaw
 * Gateway's config is process-wide): its room participation is then
 * server-mediated, the engines posting its replies (an addition to SPEC
 * 9.1's capabilities). */
typedef enum hd_huddle_tools {
	HD_TOOLS_MCP = 0, /* the default */
	HD_TOOLS_NONE = 1,
} hd_huddle_tools;

/* What an adapter declares about itself. */
typedef struct hd_runtime_caps {
	hd_runtime_class runtime_class;
	struct {
		hd_home_scope scope;
		int persist; /* 1: the home outlives the run */
	} native_home;
	hd_native_keep native_memory;
	hd_native_keep native_skills;
	hd_native_channels native_channels;
	int native_scheduler; /* 1: the runtime has its own scheduler */
	hd_huddle_tools huddle_tools;
} hd_runtime_caps;

typedef enum hd_home_kind {
	HD_HOME_EPHEMERAL = 0,
	HD_HOME_PERSISTENT = 1,
	HD_HOME_CONNECTED = 2,
} hd_home_kind;

/* What the host does for a runtime, derived from its caps alone. */
typedef struct hd_runtime_plan {
	hd_home_kind home;
	int preserve_skills;
	int preserve_memory;
	int use_gateway_channels;
	int co_run_scheduler; /* always 0: huddle never co-runs a scheduler */
	/* 1 when the host must hand the runtime a directory (a persistent or
	 * ephemeral home); 0 for connected runtimes and for runtimes that
	 * declare no home (an addition to SPEC 9.2's plan). */
	int needs_dir;
	/* 1 when the agent has huddle's tools; 0: it has none, and its
	 * prompt must not offer them (caps.huddle_tools; an addition too) */
	int huddle_tools;
} hd_runtime_plan;

/*
 * The pure function of SPEC 9.2. caps NULL means "omitted": a
 * wrapped-oneshot runtime with an ephemeral home and nothing preserved.
 *  - connected-substrate: home connected, nothing preserved,
 *    use_gateway_channels iff native_channels is gateway;
 *  - otherwise persistent only for a per-identity home with persist set,
 *    else ephemeral;
 *  - preserve_* only with a persistent home (a misdeclared adapter
 *    degrades to the safe default); co_run_scheduler is always 0;
 *  - huddle_tools unless caps say none (omitted caps: the tools).
 */
hd_runtime_plan hd_runtime_resolve_integration(const hd_runtime_caps *caps);

/* "persistent", "ephemeral", "connected". */
const char *hd_runtime_home_kind_name(hd_home_kind k);

/* ---- events ---- */

typedef enum hd_runtime_event_kind {
	HD_RT_TEXT_DELTA = 0,
	HD_RT_TOOL_CALL = 1,
	HD_RT_TOOL_RESULT = 2,
	HD_RT_STATUS = 3,
	HD_RT_COST = 4,
	HD_RT_ERROR = 5,
	HD_RT_DONE = 6,
} hd_runtime_event_kind;

typedef enum hd_done_reason {
	HD_DONE_SUCCESS = 0,
	HD_DONE_MAX_TURNS = 1,
	HD_DONE_ABORTED = 2,
	HD_DONE_ERROR = 3,
} hd_done_reason;

/*
 * Cost of a turn. Spend is kept in micro-cents (1 USD = 100,000,000
 * micro-cents, the unit of SPEC 8.2 budgets) so estimates are exact
 * integers; usd is the same figure as a double, for display.
 */
typedef struct hd_runtime_cost {
	double usd;
	int64_t microcents;
	int64_t input_tokens;
	int64_t output_tokens;
	int estimated; /* 1: huddle's estimate, not the runtime's report */
} hd_runtime_cost;

/*
 * One event. Every pointer is borrowed and valid only during the sink
 * call. Fields by kind:
 *   text_delta   text, len (bytes, not NUL-terminated)
 *   tool_call    name, id, data (the input) -- any may be NULL
 *   tool_result  name, id, data (the output), is_error
 *   status       text (NUL-terminated), len
 *   cost         cost
 *   error        text (the message, one line), len
 *   done         reason, summary, native_session_id (each may be NULL)
 */
typedef struct hd_runtime_event {
	hd_runtime_event_kind kind;
	const char *text;
	size_t len;
	const char *name;
	const char *id;
	const json_t *data;
	int is_error;
	hd_runtime_cost cost;
	hd_done_reason reason;
	const char *summary;
	const char *native_session_id;
} hd_runtime_event;

/* Receives every event of a turn, in order, on the thread running it. */
typedef void (*hd_runtime_sink)(const hd_runtime_event *ev, void *payload);

/* "text_delta", ..., "done"; "success", "max_turns", "aborted", "error". */
const char *hd_runtime_event_kind_name(hd_runtime_event_kind k);
const char *hd_runtime_done_name(hd_done_reason r);

/* ---- a turn ---- */

typedef struct hd_runtime_turn {
	const hd_agent *agent; /* id, team_id, runtime, runtime_config */
	const char *team;      /* default: agent->team_id */
	const char *prompt;
	size_t context_len; /* prompt's first bytes that are context, not
			       what the turn must answer: an exchange's
			       standing context (who the agent is, its
			       team), a delivery's everything but its
			       message (prompt.h); 0: none */
	const char *resume_session_id; /* native session to resume, or NULL */
	const char *home_dir;          /* the runtime's home, or NULL */
	/* 1: whatever the plan says, a runtime that keeps a home gets a
	 * fresh ephemeral one for this turn, nothing preserved (a
	 * verification's throwaway critic: it must share no state) */
	int ephemeral_home;
	const char *huddle_home;       /* HUDDLE_HOME, or NULL */
	const char *mcp_url;           /* the agent's attach URL, or NULL */
	const char *mcp_token;         /* its token, or NULL */
	/* Without a URL, the stdio MCP server that serves this agent:
	 * `huddle mcp --team T --agent A --home H` with absolute paths
	 * (argv, NULL-terminated; the store is HUDDLE_STORE in its
	 * environment, never an argument); hd_runtime_run() fills it in. */
	const char *const *mcp_command;
	int64_t timeout_ms; /* 0: only the adapter's own limit */
	atomic_int *abort;  /* or NULL; set non-zero to stop */
	/* Or NULL: called on the turn's thread once the adapter's command
	 * runs, with its pid (the id of its process group) and start time
	 * (hd_proc_start), so the caller can record what runs and kill the
	 * group if it is restarted after a crash. The command dies with the
	 * thread that runs the turn (SIGKILL, PR_SET_PDEATHSIG); processes
	 * it starts do not, but stay in its group. */
	void (*on_spawn)(void *spawn_ctx, int64_t pgid, int64_t start);
	void *spawn_ctx;
} hd_runtime_turn;

/*
 * A shell command run for an engine outside any turn (a verification
 * gate, runtime/shell.c): `/bin/sh -c cmd` in cwd (NULL: ours) as agent
 * of team (huddle's identity variables), its standard error merged into
 * its output, until it ends, timeout_ms passes (killed, its whole
 * process group) or *abort is set. out->exit_code is its exit status, -1
 * when it did not exit; out->how says how it ended (`exit status 3`,
 * `timed out after 600 s`); out->output is the last keep bytes it wrote.
 * A negative return: it could not start (err says why). Dispose out
 * either way.
 */
typedef struct hd_runtime_shell_result {
	int exit_code;
	char how[96];
	char *output;
} hd_runtime_shell_result;

int hd_runtime_shell(hd_runtime_shell_result *out, const hd_agent *agent,
    const char *team, const char *huddle_home, const char *cmd,
    const char *cwd, int64_t timeout_ms, size_t keep, atomic_int *abort,
    hd_err *err);
void hd_runtime_shell_dispose(hd_runtime_shell_result *r);

/* 1 once the turn's abort flag is set. */
int hd_runtime_aborted(const hd_runtime_turn *in);

/*
 * What a turn produced, for callers that do not stream. Owned: release
 * with hd_runtime_result_dispose().
 */
typedef struct hd_runtime_result {
	char *text; /* the reply (capped, see above); never NULL once run */
	size_t text_len;
	hd_done_reason reason;
	char *error;             /* the last error message, or NULL */
	char *summary;           /* from done, or NULL */
	char *native_session_id; /* from done, or NULL */
	hd_runtime_cost cost;    /* summed over cost events */
	int truncated; /* 1: the reply went over HD_RUNTIME_OUTPUT_MAX */
	int64_t duration_ms;
} hd_runtime_result;

void hd_runtime_result_dispose(hd_runtime_result *r);

/* {"reason", "text", "error", "summary", "native_session_id",
 *  "truncated", "duration_ms", "cost": {"usd", "microcents",
 *  "input_tokens", "output_tokens", "estimated"}}. New reference. */
json_t *hd_runtime_result_to_json(const hd_runtime_result *r);

/* ---- adapters ---- */

/* The emitter an adapter reports through (owned by hd_runtime_run_turn). */
typedef struct hd_runtime_emit hd_runtime_emit;

/* What a model's tokens cost, USD per million tokens. */
typedef struct hd_price {
	double input;
	double cached; /* cached input tokens */
	double output;
} hd_price;

/* One row of an adapter's price list: the models whose name starts with
 * prefix cost price. A list ends with a row whose prefix is NULL. */
typedef struct hd_price_row {
	const char *prefix;
	hd_price price;
} hd_price_row;

typedef struct hd_runtime_adapter {
	const char *name;  /* the agents.runtime value */
	const char *label; /* how surfaces show it, e.g. "scripted" */
	int is_scripted;   /* 1: canned replies, not a model; say so */
	void (*capabilities)(hd_runtime_caps *out);
	/*
	 * Run one turn. Report through em; end with hd_runtime_emit_done().
	 * Return 0, or a negative code with err set for a failure the adapter
	 * did not report as done (the caller turns it into error + done).
	 * Must return promptly once in->abort is set.
	 */
	int (*run)(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err);
	/* Check a runtime_config (an object): HD_EINVAL naming the field.
	 * Agents are written through it (hd_runtime_check_config). */
	int (*check_config)(const json_t *cfg, hd_err *err);
	/* Or NULL: the list prices of the models this runtime runs, for a
	 * runtime that reports tokens but no cost (price.c); a model it
	 * does not list costs SPEC 8.2's default. */
	const hd_price_row *prices;
	/* Or NULL: how `huddle attach` adds huddle to this runtime's CLI
	 * by hand (the formats it writes; see hd_runtime_attacher). */
	const struct hd_runtime_attacher *attach;
	/* Or NULL: add to report what huddle doctor says of this runtime
	 * for agent a, whose persistent home is home_dir (or NULL):
	 * "binary", "env", and "problems" appended (doctor.c). */
	void (*doctor)(const hd_agent *a, const char *home_dir, json_t *report);
} hd_runtime_adapter;

/* ---- attaching a runtime's CLI by hand (`huddle attach`, SPEC 10.4) ----
 *
 * Each adapter whose runtime is a CLI people also run themselves says how
 * to add huddle's MCP server to it: the command that does it, the config
 * file it reads, the words around them. `huddle attach` asks every
 * adapter of the table, in its order, and names no runtime itself; no
 * writer says a secret's value, only the variables that hold them. */

typedef struct hd_runtime_attach {
	const char *name;      /* the MCP server's name: huddle-<agent> */
	const char *team;
	const char *agent;
	const char *url_var;   /* the variable holding the signed URL */
	const char *token_var; /* the one holding the bearer token, or
				  NULL: the server wants none */
	const char *exe;       /* the stdio server: exe --home home mcp */
	const char *home;      /*   --team team --agent agent (absolute) */
	int stdio;             /* 1: the stdio server, not the URL */
} hd_runtime_attach;

typedef struct hd_runtime_attacher {
	/* `huddle attach --format FORMAT`, and the key of command() in
	 * --json's "commands" */
	const char *format;
	/* The one command that adds huddle to the CLI's own config
	 * (malloc'd; NULL when memory ran out). */
	char *(*command)(const hd_runtime_attach *x);
	/* The text format's block for this runtime, appended to out: what
	 * command (as command() made it) does, and what else to set. step
	 * numbers the block among the URL's steps (unused with stdio). */
	void (*text)(hd_buf *out, const hd_runtime_attach *x,
	    const char *command, int step);
	/* Or NULL: what --json says beyond the command, into commands and
	 * out (the whole answer), after every runtime's command is in. */
	void (*json)(json_t *commands, json_t *out, const hd_runtime_attach *x);
	/* --format FORMAT: a JSON document (*doc, a new reference) or text
	 * appended to out. 0, or a negative code with err set. */
	int (*config)(const hd_runtime_attach *x, json_t **doc, hd_buf *out,
	    hd_err *err);
} hd_runtime_attacher;

/* s as one shell word, appended to b: as is when it needs no quoting,
 * else in single quotes (a ' inside as '\''). For the commands attach
 * prints. */
void hd_runtime_sh_word(hd_buf *b, const char *s);

/*
 * Find the adapter for a runtime name. A runtime agents may come to name
 * that this build has no adapter for: `runtime "openclaw" is not available
 * in this build yet` (HD_ENOTFOUND); any other name: `unknown runtime
 * "x": use scripted, exec, claude-code, codex or hermes` (HD_EINVAL; the
 * list is the adapter table's). *out is a static adapter; never free it.
 */
int hd_runtime_find(
    const hd_runtime_adapter **out, const char *name, hd_err *err);

/* Every adapter this build has, in the table's order (the order the
 * refusals name them), ending with NULL: what a surface offers when an
 * agent is added (GET /api/runtimes). Static; never free it. */
const hd_runtime_adapter *const *hd_runtime_adapters(void);

/*
 * What the runtime layer accepts before an agent is written (an
 * hd_agent_runtime_check, for the surfaces to hand the domain): runtime
 * (NULL: scripted) has an adapter in this build, else `runtime "openclaw"
 * is not available in this build: use scripted, exec, claude-code, codex
 * or hermes` or the unknown-runtime message; cfg (NULL: none) is an object
 * of the shape that adapter checks, each refusal naming the field.
 * HD_EINVAL.
 */
int hd_runtime_check_config(
    const char *runtime, const json_t *cfg, hd_err *err);

/* Emitting, for adapters. Anything after done is dropped. A status and
 * an error reach the sink as one line of valid UTF-8, whatever bytes
 * they quote: a byte that starts no character becomes '?', a control
 * character a space (an error is also cut to 16 KiB and loses its
 * trailing blanks). */
void hd_runtime_emit_event(hd_runtime_emit *em, const hd_runtime_event *ev);
void hd_runtime_emit_text(hd_runtime_emit *em, const char *text, size_t len);
void hd_runtime_emit_status(hd_runtime_emit *em, const char *text);
void hd_runtime_emit_cost(hd_runtime_emit *em, const hd_runtime_cost *c);
void hd_runtime_emit_error(hd_runtime_emit *em, const char *fmt, ...)
    HD_PRINTFLIKE(2, 3);
void hd_runtime_emit_done(hd_runtime_emit *em, hd_done_reason reason,
    const char *summary, const char *native_session_id);
/*
 * The runtime's final word: the turn's reply becomes text (capped as
 * deltas are), whatever text_delta said before. For runtimes whose
 * stream narrates several steps (claude-code, codex) but name one final
 * answer. Sinks see nothing new: they saw the deltas as they came.
 */
void hd_runtime_emit_reply(hd_runtime_emit *em, const char *text, size_t len);
/* The text emitted so far (capped) and its length. Borrowed. */
const char *hd_runtime_emit_text_so_far(const hd_runtime_emit *em, size_t *len);

/*
 * Estimate a turn's cost (SPEC 8.2): ceil(chars / 4) tokens each way, at
 * SPEC 8.2's default price (written once, in src/runtime/price.c), flagged
 * estimated. chars counts UTF-8 code points (bytes that do not continue a
 * sequence).
 */
void hd_runtime_cost_estimate(hd_runtime_cost *out, const char *prompt,
    size_t prompt_len, const char *reply, size_t reply_len);

/*
 * Run one turn of in->agent on adapter rt, streaming events to sink (may
 * be NULL) and, when out is non-NULL, collecting them into *out (dispose
 * it even on failure). The sink sees exactly one done, last: the adapter's
 * first, or one made here (error when run() failed, aborted when the abort
 * flag is set, else success). A cost event comes before done: the
 * runtime's, or an estimate. Returns 0 when the turn ended success,
 * max_turns or aborted (read out->reason), HD_ETIMEOUT or another negative
 * code with err set to the error message when it ended in error.
 */
int hd_runtime_run_turn(hd_runtime_result *out, const hd_runtime_adapter *rt,
    const hd_runtime_turn *in, hd_runtime_sink sink, void *payload,
    hd_err *err);

/* ---- tools run in process (the native runtime) ----
 *
 * The native runtime gives a model huddle's tools and runs them in this
 * process as the agent. The tools are the operation table's, which lives
 * above this layer: the surface registers a host at process start
 * (hd_runtime_set_tool_host) and the runtime calls through it. Without a
 * host a native agent has no tools. Every function may be called from
 * any thread; a session belongs to one turn. */
typedef struct hd_runtime_tool_host {
	/* A session acting as agent of team, on the store in huddle_home:
	 * *sess, or a negative code with err set. */
	int (*open)(void **sess, const char *huddle_home, const char *team,
	    const char *agent, hd_err *err);
	/* Every tool the session may call, a new reference:
	 * [{"name", "description", "input_schema"}]. */
	json_t *(*list)(void *sess);
	/* Call tool name with args (an object) as the session's agent: *text
	 * (malloc'd) is what the model reads, the result or the error's
	 * message. Returns 0 for a result, 1 for a tool error. */
	int (*call)(void *sess, const char *name, const json_t *args,
	    char **text);
	void (*close)(void *sess);
} hd_runtime_tool_host;

/* Register the host (static; NULL: none). Call before turns run. */
void hd_runtime_set_tool_host(const hd_runtime_tool_host *host);
const hd_runtime_tool_host *hd_runtime_get_tool_host(void);

/* ---- homes (SPEC 9.3) ---- */

typedef struct hd_runtime_seed {
	const char *src;  /* a file to copy */
	const char *name; /* relative path inside the home ("a/b.json") */
} hd_runtime_seed;

typedef struct hd_runtime_home_spec {
	const char *huddle_home;        /* required for a persistent home */
	const char *runtime;            /* slug */
	const char *agent;              /* slug */
	const char *mcp_url;            /* the HTTP attach URL, or NULL */
	const char *mcp_token;          /* or NULL */
	const char *const *mcp_command; /* without a URL: the stdio MCP
					   server (argv, NULL-terminated);
					   NULL too: no MCP config */
	const hd_runtime_seed *seeds;
	size_t nseeds;
} hd_runtime_home_spec;

typedef struct hd_runtime_home {
	char *path;    /* NULL when the plan gives no directory */
	int ephemeral; /* 1: removed by hd_runtime_home_release() */
} hd_runtime_home;

/*
 * Prepare the home a plan asks for, before a run:
 *  - persistent: HUDDLE_HOME/homes/<runtime>/<agent>/, created 0700 (the
 *    runtime and agent must be slugs: `invalid agent name ...`);
 *  - ephemeral: a fresh 0700 directory under $TMPDIR (or /tmp);
 *  - connected, or a plan that needs no directory: path NULL.
 * In a directory, huddle rewrites the files it owns (HD_RUNTIME_MCP_FILE
 * with the attach URL and token, else the stdio command, 0600; removed
 * when there is neither) and
 * copies each seed only when its name is absent; nothing else is touched.
 * Release with hd_runtime_home_release() even on failure.
 */
int hd_runtime_home_prepare(hd_runtime_home *out, const hd_runtime_plan *plan,
    const hd_runtime_home_spec *spec, hd_err *err);

/* Remove an ephemeral home (recursively, never following links) and free
 * the path. A persistent home is left as it is. NULL-safe. */
void hd_runtime_home_release(hd_runtime_home *h);

/*
 * What `huddle doctor` says of agent a without running a turn (doctor.c):
 * {"agent", "team", "runtime", "label", "scripted", "home_kind", "home",
 *  "home_exists", "binary": {"name", "path", "version"} (CLI runtimes),
 *  "env": {"needs", "present": [names]} (never values), "problems": [...],
 *  "ok"}. *out is a new reference.
 */
int hd_runtime_doctor(
    json_t **out, const hd_agent *a, const char *huddle_home, hd_err *err);

/*
 * The huddle binary runtimes start as their stdio MCP server: $HUDDLE_EXE
 * when it is an absolute path (for programs that link libhuddle but are
 * not huddle), else this process's own executable. Into buf; NULL when
 * it cannot be known.
 */
const char *hd_runtime_self_exe(char *buf, size_t size);

/*
 * Everything for one turn of an agent: find its adapter, resolve the plan
 * from its capabilities (a persistent home made ephemeral when
 * in->ephemeral_home), fill in the stdio MCP command when there is no
 * URL, prepare its home (unless in->home_dir is given; a persistent home
 * needs in->huddle_home), run the turn as
 * hd_runtime_run_turn() does, and release the home. A failure before the
 * run (unknown runtime, home) still reaches the sink as error + done.
 */
int hd_runtime_run(hd_runtime_result *out, const hd_runtime_turn *in,
    hd_runtime_sink sink, void *payload, hd_err *err);

#endif
