/*
 * exec.c -- the `exec` runtime (SPEC 9.4): any command is an agent.
 * runtime_config: {"command": [...], "prompt": "stdin"|"arg",
 *                  "timeout_s": 600, "env": {...}, "cwd": "..."}
 * The prompt goes to the command's standard input (or as its last
 * argument); what it writes to standard output is the reply, streamed as
 * text_delta; its standard error is kept only as a tail for messages.
 *  (1) The command runs in its own process group (posix_spawn with
 *      POSIX_SPAWN_SETPGROUP 0), so the whole group can be signalled. No
 *      process of the group outlives the turn: on timeout or abort the
 *      group gets SIGTERM, then SIGKILL after EXEC_GRACE_MS; when the
 *      command exits by itself, whatever it left behind in its group is
 *      killed. The leader is always reaped (no zombie), and its pid is
 *      reaped only after the last signal to the group, so the group id
 *      can never name a recycled process. The caller must not reap
 *      children it did not spawn (no waitpid(-1) in a SIGCHLD handler),
 *      or the turn cannot learn how its command ended.
 *  (2) Nothing blocks: the prompt is written to a non-blocking pipe from
 *      the same poll() loop that drains both output pipes, so a command
 *      that never reads its input cannot deadlock the turn, and one that
 *      closes it early costs an EPIPE, never a SIGPIPE: SIGPIPE is blocked
 *      in this thread while the turn runs and a pending one it caused is
 *      consumed before the mask is restored. Process-wide signal state is
 *      never changed, so turns run concurrently on several threads.
 *  (3) Only the child's ends of the pipes reach it: every pipe is
 *      O_CLOEXEC and the child closes every descriptor above 2.
 *  (4) The reply is capped by the emitter (HD_RUNTIME_OUTPUT_MAX) while
 *      this loop keeps draining, so a chatty command never blocks on a
 *      full pipe. Bytes pass through untouched; a UTF-8 sequence split
 *      between two reads is held back and sent whole.
 *  (5) The child's signal mask is empty and SIGPIPE, SIGINT, SIGQUIT,
 *      SIGTERM, SIGHUP and SIGCHLD start at their defaults, whatever the
 *      caller's thread blocks or ignores.
 *  (6) The environment is the caller's, then the config's env, then
 *      huddle's identity variables, which win: HUDDLE_AGENT, HUDDLE_TEAM,
 *      HUDDLE_HOME, HUDDLE_MCP_URL, HUDDLE_MCP_TOKEN and
 *      HUDDLE_AGENT_HOME (the runtime home). Identity variables the caller
 *      itself inherited are never passed on, so a child can never act
 *      under its parent's identity. The caller's environment is read
 *      while the turn starts, so no thread may setenv() meanwhile; the
 *      command is looked up on the caller's PATH.
 *  (7) cwd (relative to the caller's working directory) is entered
 *      before the command is looked up, so a relative command such as
 *      "./agent.sh" is relative to cwd when cwd is given.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

extern char **environ;

#define EXEC_DEFAULT_TIMEOUT_S 600
#define EXEC_GRACE_MS 500  /* SIGTERM -> SIGKILL */
#define EXEC_DRAIN_MS 2000 /* after SIGKILL, wait this long for EOF */
#define EXEC_SLICE_MS 20   /* how often the abort flag is looked at */
#define EXEC_READ_CHUNK 65536
#define EXEC_WRITE_CHUNK 65536
#define EXEC_TAIL_BYTES 4096 /* stderr kept for messages */
#define EXEC_TAIL_LINES 20

static const char *const identity_vars[] = {
    "HUDDLE_AGENT",
    "HUDDLE_TEAM",
    "HUDDLE_MCP_URL",
    "HUDDLE_MCP_TOKEN",
    "HUDDLE_AGENT_HOME",
    NULL,
};

static void
exec_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime_class = HD_RUNTIME_WRAPPED_ONESHOT;
	/* A command may keep state between turns in its own home. */
	out->native_home.scope = HD_HOME_SCOPE_PER_IDENTITY;
	out->native_home.persist = 1;
}

/* ---- argv and environment ---- */

typedef struct strv {
	char **v;
	size_t n, cap;
	int oom;
} strv;

static void
strv_add(strv *s, char *str) /* takes str */
{
	char **nv;

	if (str == NULL || s->oom) {
		free(str);
		s->oom = 1;
		return;
	}
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		if ((nv = realloc(s->v, s->cap * sizeof(*nv))) == NULL) {
			free(str);
			s->oom = 1;
			return;
		}
		s->v = nv;
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

static void
strv_dispose(strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static char *
env_pair(const char *key, const char *value)
{
	size_t n = strlen(key) + strlen(value) + 2;
	char *p = malloc(n);

	if (p != NULL)
		snprintf(p, n, "%s=%s", key, value);
	return p;
}

/* 1 when the environment entry "KEY=..." has key key. */
static int
env_is(const char *entry, const char *key)
{
	size_t n = strlen(key);

	return strncmp(entry, key, n) == 0 && entry[n] == '=';
}

/* (6) */
static void
build_env(strv *env, const hd_runtime_turn *in, const json_t *cfg_env)
{
	const char *key, *team = in->team ? in->team : in->agent->team_id;
	json_t *v;
	char **e;
	int i, skip;

	for (e = environ; e != NULL && *e != NULL; e++) {
		skip = in->huddle_home != NULL && env_is(*e, "HUDDLE_HOME");
		for (i = 0; identity_vars[i] != NULL && !skip; i++)
			skip = env_is(*e, identity_vars[i]);
		if (!skip && cfg_env != NULL) {
			json_object_foreach ((json_t *)cfg_env, key, v)
				if (env_is(*e, key))
					skip = 1;
		}
		if (!skip)
			strv_add(env, strdup(*e));
	}
	json_object_foreach ((json_t *)cfg_env, key, v) {
		skip = strcmp(key, "HUDDLE_HOME") == 0 && in->huddle_home;
		for (i = 0; identity_vars[i] != NULL && !skip; i++)
			skip = strcmp(key, identity_vars[i]) == 0;
		if (!skip && json_is_string(v))
			strv_add(env, env_pair(key, json_string_value(v)));
	}
	strv_add(env, env_pair("HUDDLE_AGENT", in->agent->id));
	if (team != NULL)
		strv_add(env, env_pair("HUDDLE_TEAM", team));
	if (in->huddle_home != NULL)
		strv_add(env, env_pair("HUDDLE_HOME", in->huddle_home));
	if (in->mcp_url != NULL)
		strv_add(env, env_pair("HUDDLE_MCP_URL", in->mcp_url));
	if (in->mcp_token != NULL)
		strv_add(env, env_pair("HUDDLE_MCP_TOKEN", in->mcp_token));
	if (in->home_dir != NULL)
		strv_add(env, env_pair("HUDDLE_AGENT_HOME", in->home_dir));
}

/* ---- the child ---- */

typedef struct child {
	pid_t pid;
	int in_fd;  /* we write the prompt here; -1 when done */
	int out_fd; /* the reply */
	int err_fd; /* the error tail */
	int pidfd;  /* readable when the leader exits; -1 without pidfd */
} child;

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int
open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

static int
spawn_child(child *c, char **argv, char **envp, const char *cwd,
    int prompt_stdin, hd_err *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	int inp[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
	int rc = 0, src;

	c->pid = -1;
	c->in_fd = c->out_fd = c->err_fd = c->pidfd = -1;
	if ((prompt_stdin && pipe2(inp, O_CLOEXEC) != 0) ||
	    pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
		rc = hd_err_set(
		    err, HD_ERR, "cannot make a pipe: %s", strerror(errno));
		goto done;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	if (prompt_stdin)
		posix_spawn_file_actions_adddup2(&fa, inp[0], 0);
	else
		posix_spawn_file_actions_addopen(
		    &fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	if (cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* (3) */
#endif
	sigemptyset(&none);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGPIPE);
	sigaddset(&defaults, SIGINT);
	sigaddset(&defaults, SIGQUIT);
	sigaddset(&defaults, SIGTERM);
	sigaddset(&defaults, SIGHUP);
	sigaddset(&defaults, SIGCHLD);
	posix_spawnattr_setsigmask(&attr, &none); /* (5) */
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setpgroup(&attr, 0); /* (1) */
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
					    POSIX_SPAWN_SETSIGMASK |
					    POSIX_SPAWN_SETSIGDEF);
	src = posix_spawnp(&c->pid, argv[0], &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (src != 0) {
		c->pid = -1;
		if (src == ENOENT && cwd != NULL && access(cwd, X_OK) != 0)
			rc = hd_err_set(err, HD_ERR, "cannot run in %s: %s",
			    cwd, strerror(errno));
		else
			rc =
			    hd_err_set(err, HD_ERR, "cannot run \"%.200s\": %s",
				argv[0], strerror(src));
		goto done;
	}
	c->in_fd = inp[1];
	c->out_fd = outp[0];
	c->err_fd = errp[0];
	inp[1] = outp[0] = errp[0] = -1;
	if (c->in_fd >= 0)
		fcntl(c->in_fd, F_SETFL, fcntl(c->in_fd, F_GETFL) | O_NONBLOCK);
	fcntl(c->out_fd, F_SETFL, fcntl(c->out_fd, F_GETFL) | O_NONBLOCK);
	fcntl(c->err_fd, F_SETFL, fcntl(c->err_fd, F_GETFL) | O_NONBLOCK);
	c->pidfd = open_pidfd(c->pid);
done:
	close_fd(&inp[0]);
	close_fd(&inp[1]);
	close_fd(&outp[0]);
	close_fd(&outp[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	return rc;
}

/* 1 once the leader has exited; it stays unreaped (WNOWAIT), see (1). */
static int
leader_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno == ECHILD; /* someone else reaped it: gone */
	return si.si_pid == pid;
}

/* ---- the turn ---- */

typedef struct run_state {
	const char *prompt; /* written to the child's input */
	size_t prompt_len, prompt_off;
	int saw_epipe;
	char carry[4]; /* an unfinished UTF-8 sequence, (4) */
	size_t ncarry;
	hd_buf tail; /* the child's standard error */
} run_state;

/* Send a read's bytes on, holding back an unfinished UTF-8 sequence. */
static void
emit_bytes(hd_runtime_emit *em, run_state *rs, char *buf, size_t n, int eof)
{
	size_t keep = 0, i, need;
	unsigned char lead;

	if (!eof && n > 0) {
		for (i = n; i > 0 && n - i < 3; i--) {
			lead = (unsigned char)buf[i - 1];
			if ((lead & 0xc0) == 0x80)
				continue;
			if (lead >= 0xf0 && lead <= 0xf7)
				need = 4;
			else if (lead >= 0xe0 && lead <= 0xef)
				need = 3;
			else if (lead >= 0xc0 && lead <= 0xdf)
				need = 2;
			else
				need = 1; /* ASCII or not a lead: send it */
			if (need > n - (i - 1))
				keep = n - (i - 1);
			break;
		}
	}
	hd_runtime_emit_text(em, buf, n - keep);
	memcpy(rs->carry, buf + n - keep, keep);
	rs->ncarry = keep;
}

/* Keep the last EXEC_TAIL_BYTES (and at most twice that) of the error
 * stream. */
static void
keep_tail(run_state *rs, const char *buf, size_t n)
{
	size_t drop;

	if (n > EXEC_TAIL_BYTES) {
		buf += n - EXEC_TAIL_BYTES;
		n = EXEC_TAIL_BYTES;
	}
	hd_buf_put(&rs->tail, buf, n);
	if (!hd_buf_failed(&rs->tail) && rs->tail.len > 2 * EXEC_TAIL_BYTES) {
		drop = rs->tail.len - EXEC_TAIL_BYTES;
		memmove(rs->tail.ptr, rs->tail.ptr + drop, EXEC_TAIL_BYTES);
		rs->tail.len = EXEC_TAIL_BYTES;
		rs->tail.ptr[rs->tail.len] = '\0';
	}
}

/* The last EXEC_TAIL_LINES lines of at most EXEC_TAIL_BYTES of standard
 * error, trailing blanks trimmed; borrowed from rs. */
static const char *
tail_text(run_state *rs)
{
	char *s = rs->tail.ptr;
	size_t len = rs->tail.len, start, lines = 0, i;

	if (s == NULL || hd_buf_failed(&rs->tail))
		return "";
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r' ||
			      s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	s[len] = '\0';
	start = len > EXEC_TAIL_BYTES ? len - EXEC_TAIL_BYTES : 0;
	for (i = len; i > start; i--)
		if (s[i - 1] == '\n' && ++lines == EXEC_TAIL_LINES) {
			start = i;
			break;
		}
	/* never start inside a UTF-8 sequence */
	while (start < len && ((unsigned char)s[start] & 0xc0) == 0x80)
		start++;
	return s + start;
}

/* Read what is there on fd; returns 0 at EOF (fd closed), 1 otherwise. */
static int
drain(int *fd, int is_reply, hd_runtime_emit *em, run_state *rs)
{
	char buf[EXEC_READ_CHUNK + 4];
	ssize_t n;

	for (;;) {
		if (is_reply && rs->ncarry > 0)
			memcpy(buf, rs->carry, rs->ncarry);
		n = read(
		    *fd, buf + (is_reply ? rs->ncarry : 0), EXEC_READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		if (n <= 0) { /* EOF, or an error that ends the stream */
			if (is_reply && rs->ncarry > 0)
				emit_bytes(em, rs, buf, rs->ncarry, 1);
			close_fd(fd);
			return 0;
		}
		if (is_reply)
			emit_bytes(em, rs, buf, rs->ncarry + (size_t)n, 0);
		else
			keep_tail(rs, buf, (size_t)n);
		if (n < EXEC_READ_CHUNK)
			return 1;
	}
}

/* Write as much of the prompt as the pipe takes; closes when done. */
static void
feed(child *c, run_state *rs)
{
	size_t want;
	ssize_t n;

	while (c->in_fd >= 0) {
		if (rs->prompt_off == rs->prompt_len) {
			close_fd(
			    &c->in_fd); /* EOF tells the command to start */
			return;
		}
		want = rs->prompt_len - rs->prompt_off;
		if (want > EXEC_WRITE_CHUNK)
			want = EXEC_WRITE_CHUNK;
		n = write(c->in_fd, rs->prompt + rs->prompt_off, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) { /* EPIPE: it stopped reading; that is its right */
			rs->saw_epipe |= errno == EPIPE;
			close_fd(&c->in_fd);
			return;
		}
		rs->prompt_off += (size_t)n;
	}
}

static void
signal_group(pid_t pid, int sig)
{
	if (kill(-pid, sig) != 0 && errno == ESRCH)
		kill(pid, sig); /* the group is gone; the leader, if any */
}

/* Where the supervision of a child stands. */
enum { STAGE_RUN = 0, STAGE_TERM = 1, STAGE_KILL = 2 };
enum { WHY_NONE = 0, WHY_TIMEOUT, WHY_ABORT };

/*
 * The poll loop of (1), (2) and (4). Returns why it stopped (WHY_*) and
 * leaves the leader reaped with its wait status in *status.
 *   STAGE_RUN  -> STAGE_TERM  timeout or abort: SIGTERM to the group
 *   STAGE_TERM -> STAGE_KILL  EXEC_GRACE_MS later: SIGKILL to the group
 *   STAGE_RUN|TERM -> KILL    the leader exited: SIGKILL to what is left
 * In STAGE_KILL the pipes get EXEC_DRAIN_MS to reach EOF.
 */
static int
supervise(child *c, run_state *rs, hd_runtime_emit *em,
    const hd_runtime_turn *in, int64_t timeout_ms, int *status)
{
	struct pollfd pfd[4];
	int64_t now = hd_mono_ms(), deadline = now + timeout_ms;
	int64_t until, wait_ms, slice;
	int why = WHY_NONE, stage = STAGE_RUN, exited = 0, n, i;

	until = deadline;
	feed(c, rs);
	while (c->out_fd >= 0 || c->err_fd >= 0 || !exited) {
		n = 0;
		if (c->in_fd >= 0) {
			pfd[n].fd = c->in_fd;
			pfd[n++].events = POLLOUT;
		}
		if (c->out_fd >= 0) {
			pfd[n].fd = c->out_fd;
			pfd[n++].events = POLLIN;
		}
		if (c->err_fd >= 0) {
			pfd[n].fd = c->err_fd;
			pfd[n++].events = POLLIN;
		}
		if (!exited && c->pidfd >= 0) {
			pfd[n].fd = c->pidfd;
			pfd[n++].events = POLLIN;
		}
		/* Without a pidfd the leader's exit is seen by looking:
		 * often once its pipes are closed, since that is when it
		 * exits. The abort flag is looked at every slice. */
		slice = -1;
		if (in->abort != NULL)
			slice = EXEC_SLICE_MS;
		if (!exited && c->pidfd < 0)
			slice =
			    c->out_fd < 0 && c->err_fd < 0 ? 1 : EXEC_SLICE_MS;
		wait_ms = until - hd_mono_ms();
		if (slice >= 0 && wait_ms > slice)
			wait_ms = slice;
		if (wait_ms < 0)
			wait_ms = 0;
		if (poll(pfd, (nfds_t)n, (int)wait_ms) < 0 && errno != EINTR)
			break; /* cannot happen with valid fds; stop cleanly */
		for (i = 0; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == c->in_fd)
				feed(c, rs);
			else if (pfd[i].fd == c->out_fd)
				drain(&c->out_fd, 1, em, rs);
			else if (pfd[i].fd == c->err_fd)
				drain(&c->err_fd, 0, em, rs);
		}
		now = hd_mono_ms();
		if (!exited && leader_exited(c->pid)) {
			exited = 1;
			close_fd(&c->pidfd);
			close_fd(&c->in_fd);
			if (stage !=
			    STAGE_KILL) { /* (1): nothing outlives it */
				signal_group(c->pid, SIGKILL);
				stage = STAGE_KILL;
				until = now + EXEC_DRAIN_MS;
			}
		}
		if (stage == STAGE_RUN &&
		    (hd_runtime_aborted(in) || now >= deadline)) {
			why = hd_runtime_aborted(in) ? WHY_ABORT : WHY_TIMEOUT;
			close_fd(&c->in_fd);
			signal_group(c->pid, SIGTERM);
			stage = STAGE_TERM;
			until = now + EXEC_GRACE_MS;
		} else if (stage == STAGE_TERM && now >= until) {
			signal_group(c->pid, SIGKILL);
			stage = STAGE_KILL;
			until = now + EXEC_DRAIN_MS;
		} else if (stage == STAGE_KILL && now >= until) {
			/* A process outside the group holds the pipes (it left
			 * with setsid); the turn does not wait for it. */
			close_fd(&c->out_fd);
			close_fd(&c->err_fd);
			if (!exited)
				break;
		}
	}
	if (!exited)
		signal_group(c->pid, SIGKILL);
	while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
		;
	c->pid = -1;
	return why;
}

static int
exec_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config, *cmd, *v;
	strv argv = {0}, env = {0};
	run_state rs;
	child c = {-1, -1, -1, -1, -1};
	sigset_t pipe_set, old_mask, pending;
	const char *mode, *cwd = NULL, *tail;
	char msg[64];
	int64_t timeout_ms = EXEC_DEFAULT_TIMEOUT_S * 1000LL;
	int rc, why, status = 0, pipe_was_pending, masked = 0;
	size_t i;

	memset(&rs, 0, sizeof(rs));
	rs.tail = (hd_buf)HD_BUF_INIT(0);
	if ((rc = hd_agent_check_runtime("exec", cfg, err)) < 0)
		return rc;
	cmd = json_object_get(cfg, "command");
	if (cmd == NULL) /* an empty config passes the check; not a run */
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.command must be a non-empty array of "
		    "strings");
	json_array_foreach (cmd, i, v)
		strv_add(&argv, strdup(json_string_value(v)));
	mode = json_string_value(json_object_get(cfg, "prompt"));
	if (mode != NULL && strcmp(mode, "arg") == 0)
		strv_add(&argv, strdup(in->prompt));
	else {
		rs.prompt = in->prompt;
		rs.prompt_len = strlen(in->prompt);
	}
	if ((v = json_object_get(cfg, "timeout_s")) != NULL)
		timeout_ms = json_integer_value(v) * 1000;
	if (in->timeout_ms > 0 && in->timeout_ms < timeout_ms)
		timeout_ms = in->timeout_ms;
	cwd = json_string_value(json_object_get(cfg, "cwd"));
	build_env(&env, in, json_object_get(cfg, "env"));
	if (argv.oom || env.oom) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	if (hd_runtime_aborted(in)) {
		hd_runtime_emit_done(em, HD_DONE_ABORTED, NULL, NULL);
		goto done;
	}

	/* (2): SIGPIPE off for this thread only, for the whole turn. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	pipe_was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	masked = 1;

	if ((rc = spawn_child(&c, argv.v, env.v, cwd, rs.prompt != NULL, err)) <
	    0)
		goto done;
	why = supervise(&c, &rs, em, in, timeout_ms, &status);
	tail = tail_text(&rs);
	if (why == WHY_ABORT)
		hd_runtime_emit_done(em, HD_DONE_ABORTED, NULL, NULL);
	else if (why == WHY_TIMEOUT) {
		hd_runtime__timeout_msg(msg, sizeof(msg), timeout_ms);
		hd_runtime_emit_error(
		    em, "%s%s%s", msg, tail[0] ? ": " : "", tail);
		hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
		rc = hd_err_set(
		    err, HD_ETIMEOUT, "%s%s%s", msg, tail[0] ? ": " : "", tail);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, NULL);
	else {
		if (WIFEXITED(status))
			snprintf(msg, sizeof(msg), "exit status %d",
			    WEXITSTATUS(status));
		else
			snprintf(msg, sizeof(msg),
			    "killed by signal %d (SIG%s)", WTERMSIG(status),
			    sigabbrev_np(WTERMSIG(status))
				? sigabbrev_np(WTERMSIG(status))
				: "?");
		hd_runtime_emit_error(
		    em, "%s%s%s", msg, tail[0] ? ": " : "", tail);
		hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
		rc = hd_err_set(
		    err, HD_ERR, "%s%s%s", msg, tail[0] ? ": " : "", tail);
	}
done:
	close_fd(&c.in_fd);
	close_fd(&c.out_fd);
	close_fd(&c.err_fd);
	close_fd(&c.pidfd);
	if (masked) {
		struct timespec zero = {0, 0};

		/* A SIGPIPE our own write raised is pending on this thread;
		 * take it before unblocking so it is never delivered. */
		if (rs.saw_epipe && !pipe_was_pending)
			while (sigtimedwait(&pipe_set, NULL, &zero) < 0 &&
			       errno == EINTR)
				;
		pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	}
	hd_buf_dispose(&rs.tail);
	strv_dispose(&argv);
	strv_dispose(&env);
	return rc;
}

const hd_runtime_adapter hd_runtime__exec = {
    .name = "exec",
    .label = "exec",
    .is_scripted = 0,
    .capabilities = exec_caps,
    .run = exec_run,
};
