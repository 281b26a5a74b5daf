/*
 * cli.h -- the command-line surface: the command table, parsed arguments,
 * and the one place errors are printed.
 *
 * A command is one hd_cli_cmd in a cmd-<name>.c file, listed in main.c's
 * table, or an entry of the operation table (src/ops/ops.h) made into a
 * subcommand by cli-ops.c. The dispatcher handles --home, --json, --help, unknown commands
 * and options, and positional counts the same way for every command, so a
 * command function only reads its arguments, calls the library and renders.
 * Exit codes: 0 success, 1 refused or failed, 2 usage error.
 */
#ifndef HD_CLI_H
#define HD_CLI_H

#include <stdio.h>

#include <jansson.h>

#include <huddle/autorun.h>
#include <huddle/exchange.h>
#include <huddle/shutdown.h>

#define HD_EXIT_OK 0
#define HD_EXIT_FAIL 1
#define HD_EXIT_USAGE 2

typedef struct hd_cli_opt {
	const char *name;  /* long name, without the dashes */
	int short_name;	   /* or 0 */
	const char *arg;   /* metavariable; NULL for a flag */
	const char *help;
	int multi;	   /* may be given more than once */
} hd_cli_opt;

typedef struct hd_cli hd_cli;
typedef int (*hd_cli_fn)(hd_cli *cli);

typedef struct hd_cli_cmd {
	const char *name;
	const char *args;    /* positional synopsis, e.g. "TEAM AGENT" */
	const char *summary; /* one line */
	int min_args;
	int max_args;	     /* -1: any number */
	const hd_cli_opt *opts; /* NULL-name terminated, or NULL */
	hd_cli_fn fn;	     /* NULL when the command has subcommands */
	const struct hd_cli_cmd *subs; /* NULL-name terminated, or NULL */
	const char *details; /* more help text, or NULL */
} hd_cli_cmd;

#define HD_CLI_MAX_OPTS 32
#define HD_CLI_MAX_VALS 64

struct hd_cli {
	const char *home_opt; /* --home, or NULL */
	const char *store_opt; /* --store, or NULL (store-select.c) */
	int json;	      /* --json */
	const char *path;     /* "team create", for messages */
	const hd_cli_cmd *cmd;
	int argc;	      /* positionals */
	char **argv;
	struct {
		const hd_cli_opt *opt;
		const char *vals[HD_CLI_MAX_VALS];
		int n;
	} parsed[HD_CLI_MAX_OPTS];
	int nparsed;
	hd_store *st; /* opened on first use */
	hd_err err;
};

/* The last value of an option, or NULL when absent. */
const char *hd_cli_opt_str(hd_cli *c, const char *name);
/* 1 when a flag (or any option of that name) was given. */
int hd_cli_flag(hd_cli *c, const char *name);
/* All values of a repeatable option; returns the count. */
int hd_cli_opt_all(hd_cli *c, const char *name, const char *const **vals);
/* Parse an integer option; absent leaves *out alone. Usage error text on
 * failure (return HD_EXIT_USAGE), else 0. */
int hd_cli_opt_int(hd_cli *c, const char *name, int64_t min, int64_t max,
    int64_t *out);

/* Open the store (once); on failure print the error and return 1. */
int hd_cli_store(hd_cli *c, hd_store **out);

/*
 * Which store (store-select.c). hd_cli_store_select applies --store (or
 * checks HUDDLE_STORE) before a command runs: 0, or the usage error's
 * exit code. hd_cli_store_pg: 1 when the selected store is PostgreSQL.
 * hd_cli_store_describe: "postgresql://user:***@host/db" (the password
 * masked) or "sqlite HOME/huddle.db" into out; 0 or the failure's exit
 * code (printed).
 * hd_cli_store_url_ok: 1 when v is a value --store accepts.
 */
int hd_cli_store_select(hd_cli *c);
int hd_cli_store_pg(void);
int hd_cli_store_describe(hd_cli *c, char *out, size_t len);
int hd_cli_store_url_ok(const char *v);

/* The team as positional pos (-1 or absent: only the option), with the
 * older --team kept as an alias: *team from whichever was given (or
 * NULL); a usage error when the two disagree, else 0. */
int hd_cli_team_arg(hd_cli *c, int pos, const char **team);
/* The acting agent: --as, or the older option alias (e.g. "agent", or
 * NULL for none); a usage error when the two disagree, else 0. */
int hd_cli_as(hd_cli *c, const char *alias, const char **as);
/* 0 when agent is a member of team; else prints `agent "x" is not in team
 * y` (or not found) and returns HD_EXIT_FAIL. */
int hd_cli_agent_in(hd_cli *c, const char *team, const char *agent);

/* Print `huddle: <err>` on stderr; return HD_EXIT_FAIL. Under --json the
 * line is `{"error": "<err>", "code": "<name>"}` instead, the name stable
 * for the hd_err code: invalid, not_found, exists, conflict, refused,
 * too_big, busy, out_of_memory, timed_out, error. */
int hd_cli_fail(hd_cli *c);
/* Print `huddle: <msg>` and a hint to --help; return HD_EXIT_USAGE. Under
 * --json: `{"error": "<msg>", "code": "usage"}`. */
int hd_cli_usage(hd_cli *c, const char *fmt, ...) HD_PRINTFLIKE(2, 3);
/* Print `huddle: warning: <msg>` on stderr. */
void hd_cli_warn(const char *fmt, ...) HD_PRINTFLIKE(1, 2);

/* Print a JSON value on stdout, indented, and steal it. */
void hd_cli_json(json_t *v);

/* --public-url (cmd-serve.c; serve and attach take it): an http(s) base
 * with a host, no query or fragment, its trailing slash dropped. 0 with
 * out filled ("" for a NULL url), else a usage error. */
int hd_cli_public_url(hd_cli *c, const char *url, char *out, size_t outlen);

/* Aligned text tables for human output. */
typedef struct hd_table hd_table;
hd_table *hd_table_new(int ncols, ...); /* the column headings */
void hd_table_row(hd_table *t, ...);	/* ncols strings (NULL prints "-") */
void hd_table_print(hd_table *t, FILE *f, const char *indent);
void hd_table_free(hd_table *t);

/* Format ms-since-epoch for people: "2026-11-22 10:29:03". */
void hd_cli_time(char *out, size_t outlen, int64_t ms);

/* One line (with its newline) describing a shutdown request's state, from
 * its JSON (hd_shutdown_to_json). */
void hd_cli_shutdown_describe(FILE *f, const json_t *s);

/* Showing an exchange as it runs (cmd-exchange.c; the demo uses it too).
 * Pass a view as the exchange's observer payload. */
typedef struct hd_cli_exchange_view {
	int json;     /* print nothing; collect turns */
	int header;   /* print "exchange in <room> ..." before the first
			 turn shown (a resumed exchange's is not turn 1) */
	json_t *turns; /* or NULL: each turn as JSON is appended here */
	/* called after a turn is printed (the demo moves its board here) */
	void (*after_turn)(const hd_exchange_step *s, void *payload);
	void *after_payload;
	int failed; /* turns that ended in error, counted here */
	int64_t requested_turns; /* --max-turns, or 0: warn when lowered */
	int shown;  /* a turn was shown (the header is out) */
} hd_cli_exchange_view;

void hd_cli_exchange_selected(const hd_exchange_step *s, void *payload);
void hd_cli_exchange_turn(const hd_exchange_step *s, void *payload);
/* `ended: <reason> after N turns (a, b)`; for no_pending_obligation, what
 * it means and `huddle ask` for conversations routed by @mentions. */
void hd_cli_exchange_print_end(const hd_exchange_result *r);
/* text with every non-empty line prefixed by indent, control characters
 * shown as spaces, ending with a newline. */
void hd_cli_print_indented(const char *text, const char *indent);

/* The status line on stderr while agents work (progress.c): NULL (and
 * every call a no-op) unless stderr is a terminal and neither --json nor
 * quiet. Items are copied. Hide it before printing, show it after. */
typedef struct hd_cli_progress hd_cli_progress;
typedef struct hd_cli_progress_item {
	char name[64];
	int working;      /* else waiting */
	int64_t since_ms; /* working since (ms since the epoch), or 0 */
} hd_cli_progress_item;

hd_cli_progress *hd_cli_progress_start(hd_cli *c, int quiet);
void hd_cli_progress_set(hd_cli_progress *p, const char *prefix,
    const hd_cli_progress_item *items, size_t n);
void hd_cli_progress_hide(hd_cli_progress *p);
void hd_cli_progress_show(hd_cli_progress *p);
void hd_cli_progress_stop(hd_cli_progress *p);

/* The supervisor by hand (cmd-autorun.c): subcommands of agent and team,
 * the --autorun/--turns-per-hour/--park-after options of team update
 * (*given 1 when any was passed; non-zero return: exit with it), and the
 * autorun part of team state (hd_supervisor_state's JSON). */
int hd_cli_agent_wake(hd_cli *c);
int hd_cli_agent_park(hd_cli *c);
int hd_cli_agent_unpark(hd_cli *c);
int hd_cli_team_pause(hd_cli *c);
int hd_cli_team_resume(hd_cli *c);
int hd_cli_autorun_opts(hd_cli *c, hd_autorun_spec *spec, int *given);
void hd_cli_autorun_print(const json_t *state);

/* The commands the operation table makes (cli-ops.c): cmd's own
 * subcommands followed by each table entry spelled "<cmd> SUB"; NULL
 * when cmd has no subcommands. */
const hd_cli_cmd *hd_cli_subs(const hd_cli_cmd *cmd);
/* The commands: the hand-written ones (hand, NULL-terminated), then
 * each table entry spelled in one word. */
const hd_cli_cmd *const *hd_cli_commands(const hd_cli_cmd *const *hand);

/* `huddle complete -- WORD...` (complete.c): print the shell completions
 * of the last WORD, from table (hd_cli_commands) and the common options;
 * always HD_EXIT_OK. */
int hd_cli_complete(const hd_cli_cmd *const *table, const hd_cli_opt *common,
    int argc, char **argv);

/* How a table-made command shows its operation's result (its --json
 * too); without one the result is printed as JSON. */
typedef struct hd_cli_render {
	const char *op; /* the entry's name, "task.claim" */
	int (*fn)(hd_cli *c, const json_t *result, const json_t *args);
} hd_cli_render;

extern const hd_cli_render hd_cli_renders_task[];
extern const hd_cli_render hd_cli_renders_agent[];
extern const hd_cli_render hd_cli_renders_chat[];
extern const hd_cli_render hd_cli_renders_team[];
extern const hd_cli_render hd_cli_renders_mail[];
extern const hd_cli_render hd_cli_renders_send[];
extern const hd_cli_render hd_cli_renders_shutdown[];
extern const hd_cli_render hd_cli_renders_memory[];
extern const hd_cli_render hd_cli_renders_routine[];
extern const hd_cli_render hd_cli_renders_spend[];

/* The commands. */
extern const hd_cli_cmd hd_cli_cmd_init;
extern const hd_cli_cmd hd_cli_cmd_up;
extern const hd_cli_cmd hd_cli_cmd_team;
extern const hd_cli_cmd hd_cli_cmd_agent;
extern const hd_cli_cmd hd_cli_cmd_task;
extern const hd_cli_cmd hd_cli_cmd_chat;
extern const hd_cli_cmd hd_cli_cmd_memory;
extern const hd_cli_cmd hd_cli_cmd_events;
extern const hd_cli_cmd hd_cli_cmd_mcp;
extern const hd_cli_cmd hd_cli_cmd_attach;
extern const hd_cli_cmd hd_cli_cmd_serve;
extern const hd_cli_cmd hd_cli_cmd_exchange;
extern const hd_cli_cmd hd_cli_cmd_budget;
extern const hd_cli_cmd hd_cli_cmd_routine;
extern const hd_cli_cmd hd_cli_cmd_demo;
extern const hd_cli_cmd hd_cli_cmd_ask;
extern const hd_cli_cmd hd_cli_cmd_conversation;
extern const hd_cli_cmd hd_cli_cmd_doctor;
extern const hd_cli_cmd hd_cli_cmd_backup;
extern const hd_cli_cmd hd_cli_cmd_restore;

#endif
