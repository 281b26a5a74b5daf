/*
 * proc.c -- one child process per turn, for the adapters that run a
 * command (exec, claude-code, codex): its argv and environment, its spawn,
 * and the supervision loop that feeds its input, drains its output and
 * ends it. Also the line reader the JSON-stream adapters parse through.
 * Owns no table and no global state.
 *  (1) The command runs in its own process group (vfork, then setpgid in
 *      the child before exec), so the whole group can be signalled. No
 *      process of the group outlives the turn: on timeout or abort the
 *      group gets SIGTERM, then SIGKILL after PROC_GRACE_MS; when the
 *      command exits by itself, whatever it left behind in its group is
 *      killed. The leader is always reaped (no zombie), and its pid is
 *      reaped only after the last signal to the group, so the group id
 *      can never name a recycled process. The caller must not reap
 *      children it did not spawn (no waitpid(-1) in a SIGCHLD handler),
 *      or the turn cannot learn how its command ended.
 *  (2) Nothing blocks: the input is written to a non-blocking pipe from
 *      the same poll() loop that drains both output pipes, so a command
 *      that never reads its input cannot deadlock the turn, and one that
 *      closes it early costs an EPIPE, never a SIGPIPE: SIGPIPE is blocked
 *      in this thread while the child runs and a pending one it caused is
 *      consumed before the mask is restored. Process-wide signal state is
 *      never changed, so turns run concurrently on several threads.
 *  (3) Only the child's ends of the pipes reach it: every pipe is
 *      O_CLOEXEC and the child closes every descriptor above 2. Without
 *      input its standard input is /dev/null (a CLI that reads a pipe
 *      when stdin is not a TTY never waits for one).
 *  (4) Standard output goes to the caller's callback as it arrives, while
 *      this loop keeps draining, so a chatty command never blocks on a
 *      full pipe; standard error is kept only as a tail for messages.
 *  (5) The child's signal mask is empty and SIGPIPE, SIGINT, SIGQUIT,
 *      SIGTERM, SIGHUP and SIGCHLD start at their defaults, whatever the
 *      caller's thread blocks or ignores.
 *  (6) The environment is the caller's, then the config's env, then the
 *      adapter's own pairs, then huddle's identity variables, which win:
 *      HUDDLE_AGENT, HUDDLE_TEAM, HUDDLE_HOME, HUDDLE_MCP_URL,
 *      HUDDLE_MCP_TOKEN and HUDDLE_AGENT_HOME (the runtime home). Identity
 *      variables the caller itself inherited are never passed on, so a
 *      child can never act under its parent's identity. The caller's
 *      environment is read while the turn starts, so no thread may
 *      setenv() meanwhile; the command is looked up on the PATH of the
 *      environment the child gets.
 *  (7) cwd (relative to the caller's working directory) is entered before
 *      the command is looked up, so a relative command such as
 *      "./agent.sh" is relative to cwd when cwd is given.
 *  (8) The line reader hands over each line without its newline; a line
 *      longer than its limit is cut there, flagged, and the rest of it up
 *      to the newline skipped, so one runaway line costs a bounded buffer.
 *  (9) The command dies with huddle: the child sets PR_SET_PDEATHSIG to
 *      SIGKILL before exec (which posix_spawn cannot do, hence vfork: as
 *      cheap as posix_spawn's own clone, no page of huddle copied) and
 *      then checks that getppid() is still the process that forked it,
 *      so a huddle killed between vfork and prctl leaves no orphan. The
 *      kernel fires it when the *thread* that forked exits, not the
 *      process; that thread is the one in hd_proc_run, which returns only
 *      after the leader is reaped (1), so it cannot end while the command
 *      runs: the signal comes only when huddle itself dies. That holds
 *      for every caller: `huddle ask`'s and `huddle serve`'s conversation
 *      workers, the supervisor's turn threads and the exchange's thread
 *      all run their turns through here, and a worker that ends when idle
 *      has no turn running. Only the leader gets the signal: what it
 *      started stays in its group, which is why on_spawn reports the pid
 *      (= the group id) and its start time, for the engine to record with
 *      the running turn and kill the group (hd_proc_group_kill) before it
 *      runs that turn again after a crash. The child, between vfork and
 *      exec, makes only async-signal-safe system calls on what the
 *      parent prepared (argv, environment, the resolved command, the
 *      pipes), with every signal blocked until it reset each handler
 *      the caller installed, so none runs in the memory it shares.
 * Callers: exec.c, claude.c, codex.c, doctor.c (through cfg.c for the
 * JSON-stream adapters).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <huddle/util.h>

#include "runtime_int.h"

extern char **environ;

#define PROC_GRACE_MS 500  /* SIGTERM -> SIGKILL */
#define PROC_DRAIN_MS 2000 /* after SIGKILL, wait this long for EOF */
#define PROC_SLICE_MS 20   /* how often the abort flag is looked at */
#define PROC_READ_CHUNK 65536
#define PROC_WRITE_CHUNK 65536
#define PROC_TAIL_BYTES 4096 /* stderr kept for messages */
#define PROC_TAIL_LINES 20

static const char *const identity_vars[] = {
    "HUDDLE_AGENT",
    "HUDDLE_TEAM",
    "HUDDLE_MCP_URL",
    "HUDDLE_MCP_TOKEN",
    "HUDDLE_AGENT_HOME",
    NULL,
};

/* ---- string vectors ---- */

void
hd_strv_add(hd_strv *s, char *str)
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

void
hd_strv_adds(hd_strv *s, const char *str)
{
	hd_strv_add(s, str != NULL ? strdup(str) : NULL);
}

void
hd_strv_dispose(hd_strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

char *
hd_runtime__env_pair(const char *key, const char *value)
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

/* 1 when key is one huddle sets itself (6). */
static int
env_reserved(const char *key, const hd_runtime_turn *in)
{
	int i;

	if (in->huddle_home != NULL && strcmp(key, "HUDDLE_HOME") == 0)
		return 1;
	for (i = 0; identity_vars[i] != NULL; i++)
		if (strcmp(key, identity_vars[i]) == 0)
			return 1;
	return 0;
}

/* The key of "KEY=value" into buf; 0 when it does not fit. */
static int
key_of(char *buf, size_t size, const char *entry)
{
	size_t n = strcspn(entry, "=");

	if (n >= size)
		return 0;
	memcpy(buf, entry, n);
	buf[n] = '\0';
	return 1;
}

/* 1 when list ("KEY=value" strings, NULL-terminated, or NULL) sets key. */
static int
list_sets(char *const *list, const char *key)
{
	for (; list != NULL && *list != NULL; list++)
		if (env_is(*list, key))
			return 1;
	return 0;
}

/* (6): each later source wins over the ones before it. */
void
hd_runtime__env(hd_strv *env, const hd_runtime_turn *in, const json_t *cfg_env,
    char *const *extra)
{
	const char *key, *team = in->team ? in->team : in->agent->team_id;
	char buf[256];
	json_t *v;
	char **e;

	for (e = environ; e != NULL && *e != NULL; e++)
		if (key_of(buf, sizeof(buf), *e) && !env_reserved(buf, in) &&
		    json_object_get(cfg_env, buf) == NULL &&
		    !list_sets(extra, buf))
			hd_strv_adds(env, *e);
	json_object_foreach ((json_t *)cfg_env, key, v)
		if (!env_reserved(key, in) && json_is_string(v) &&
		    !list_sets(extra, key))
			hd_strv_add(env,
			    hd_runtime__env_pair(key, json_string_value(v)));
	for (; extra != NULL && *extra != NULL; extra++)
		if (key_of(buf, sizeof(buf), *extra) && !env_reserved(buf, in))
			hd_strv_adds(env, *extra);
	hd_strv_add(env, hd_runtime__env_pair("HUDDLE_AGENT", in->agent->id));
	if (team != NULL)
		hd_strv_add(env, hd_runtime__env_pair("HUDDLE_TEAM", team));
	if (in->huddle_home != NULL)
		hd_strv_add(
		    env, hd_runtime__env_pair("HUDDLE_HOME", in->huddle_home));
	if (in->mcp_url != NULL)
		hd_strv_add(
		    env, hd_runtime__env_pair("HUDDLE_MCP_URL", in->mcp_url));
	if (in->mcp_token != NULL)
		hd_strv_add(env,
		    hd_runtime__env_pair("HUDDLE_MCP_TOKEN", in->mcp_token));
	if (in->home_dir != NULL)
		hd_strv_add(env,
		    hd_runtime__env_pair("HUDDLE_AGENT_HOME", in->home_dir));
}

const char *
hd_runtime__env_get(char *const *env, const char *key)
{
	size_t n = strlen(key);

	for (; env != NULL && *env != NULL; env++)
		if (strncmp(*env, key, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/* Where name would run from on path: a malloc'd path, or NULL. */
char *
hd_runtime__which(const char *name, const char *path)
{
	const char *p, *end;
	char *full;
	size_t n;
	struct stat sb;

	if (name == NULL || name[0] == '\0')
		return NULL;
	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0 && stat(name, &sb) == 0 &&
			       S_ISREG(sb.st_mode)
			   ? strdup(name)
			   : NULL;
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p != '\0'; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		n = (size_t)(end - p);
		if ((full = malloc(n + strlen(name) + 3)) == NULL)
			return NULL;
		if (n == 0)
			snprintf(full, strlen(name) + 3, "./%s", name);
		else
			snprintf(full, n + strlen(name) + 2, "%.*s/%s", (int)n,
			    p, name);
		if (access(full, X_OK) == 0 && stat(full, &sb) == 0 &&
		    S_ISREG(sb.st_mode))
			return full;
		free(full);
	}
	return NULL;
}

/* ---- the child ---- */

typedef struct child {
	pid_t pid;
	int in_fd;  /* we write the input here; -1 when done */
	int out_fd; /* standard output */
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

/* The child's own PATH is the one that counts (6); the caller's is
 * the fallback. Looked up here, before the fork (9). */
static char *
resolve_cmd(const char *cmd, char *const *envp)
{
	char *full;

	if (strchr(cmd, '/') != NULL)
		return strdup(cmd);
	full = hd_runtime__which(cmd, hd_runtime__env_get(envp, "PATH"));
	if (full == NULL)
		full = hd_runtime__which(cmd, getenv("PATH"));
	return full != NULL ? full : strdup(cmd);
}

/* What the child reports on its way to exec (nothing once it ran). */
enum { FAIL_SETUP = 1, FAIL_CWD = 2, FAIL_EXEC = 3, FAIL_ORPHAN = 4 };

/* In the child: tell the parent why, and go. Async-signal-safe. */
static _Noreturn void
child_fail(int fd, int stage)
{
	int msg[2] = {stage, errno};
	ssize_t n;

	do
		n = write(fd, msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
	_exit(127);
}

/*
 * The child between vfork and exec (1), (3), (5), (9): only async-signal-
 * safe system calls on what the parent prepared, writing nothing of the
 * parent's memory but errno (it shares it until exec). src are the
 * parent's pipe ends (or -1: /dev/null), moved above 2 first so no dup2
 * clobbers another.
 */
static _Noreturn void
child_exec(const char *cmd, char *const *argv, char *const *envp,
    const char *cwd, const int src[3], int report, pid_t parent)
{
	static const int defaults[] = {
	    SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD};
	struct sigaction sa, cur;
	sigset_t none;
	int fd[3], i;

	if (setpgid(0, 0) != 0) /* (1) */
		child_fail(report, FAIL_SETUP);
	/* (9) dies with the thread that forked it; and if that already
	 * happened before this line, the parent is no longer ours */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		child_fail(report, FAIL_SETUP);
	if (getppid() != parent) {
		errno = ESRCH;
		child_fail(report, FAIL_ORPHAN);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	/* every signal is blocked until here; a handler of the caller's
	 * must never run in this child, which shares its memory (vfork) */
	for (i = 1; i < NSIG; i++)
		if (i != SIGKILL && i != SIGSTOP &&
		    sigaction(i, NULL, &cur) == 0 &&
		    ((cur.sa_flags & SA_SIGINFO) != 0 ||
			(cur.sa_handler != SIG_DFL &&
			    cur.sa_handler != SIG_IGN)))
			sigaction(i, &sa, NULL);
	for (i = 0; i < (int)(sizeof(defaults) / sizeof(defaults[0])); i++)
		sigaction(defaults[i], &sa, NULL); /* (5) */
	for (i = 0; i < 3; i++) {
		fd[i] = src[i] >= 0
			    ? fcntl(src[i], F_DUPFD_CLOEXEC, 3)
			    : open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd[i] < 0)
			child_fail(report, FAIL_SETUP);
	}
	for (i = 0; i < 3; i++)
		if (dup2(fd[i], i) < 0) /* the copy is not close-on-exec */
			child_fail(report, FAIL_SETUP);
	if (cwd != NULL && chdir(cwd) != 0) /* (7) */
		child_fail(report, FAIL_CWD);
#if defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
	/* (3): whatever a library opened without O_CLOEXEC stays here */
	syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* (5) */
	execve(cmd, argv, envp);
	child_fail(report, FAIL_EXEC);
}

/* vfork: this thread waits until the child execs (or fails), and no page
 * of a large process is copied; every signal stays blocked across it
 * (the child unblocks them once the handlers are reset). Apart, so that
 * no local of the caller lives across the vfork. */
static pid_t
vfork_exec(const char *cmd, char *const *argv, char *const *envp,
    const char *cwd, const int src[3], int report, pid_t parent,
    int *fork_errno)
{
	sigset_t all, old;
	pid_t pid;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = vfork();
	if (pid == 0)
		child_exec(cmd, argv, envp, cwd, src, report, parent);
	*fork_errno = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pid;
}

static int
spawn_child(child *c, char *const *argv, char *const *envp, const char *cwd,
    int with_input, hd_err *err)
{
	int inp[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
	int rep[2] = {-1, -1}, src[3], msg[2] = {0, 0}, rc = 0, status;
	int fork_errno = 0;
	pid_t parent = getpid(), pid;
	char *cmd = NULL;
	ssize_t n;

	c->pid = -1;
	c->in_fd = c->out_fd = c->err_fd = c->pidfd = -1;
	if ((with_input && pipe2(inp, O_CLOEXEC) != 0) ||
	    pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
	    pipe2(rep, O_CLOEXEC) != 0) {
		rc = hd_err_set(
		    err, HD_ERR, "cannot make a pipe: %s", strerror(errno));
		goto done;
	}
	/* (7): a relative command is relative to cwd, which the child
	 * enters first; a bare name is looked up on the child's PATH, then
	 * on the caller's */
	cmd = cwd != NULL && strchr(argv[0], '/') != NULL
		  ? strdup(argv[0])
		  : resolve_cmd(argv[0], envp);
	if (cmd == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	if (strchr(cmd, '/') == NULL) {
		rc = hd_err_set(err, HD_ERR, "cannot run \"%.200s\": %s",
		    argv[0], strerror(ENOENT));
		goto done;
	}
	src[0] = with_input ? inp[0] : -1;
	src[1] = outp[1];
	src[2] = errp[1];
	pid = vfork_exec(
	    cmd, argv, envp, cwd, src, rep[1], parent, &fork_errno);
	if ((c->pid = pid) < 0) {
		rc = hd_err_set(err, HD_ERR, "cannot run \"%.200s\": %s",
		    argv[0], strerror(fork_errno));
		goto done;
	}
	close_fd(&rep[1]);
	do /* EOF: it ran (the pipe closed on exec) */
		n = read(rep[0], msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
		c->pid = -1;
		if (msg[0] == FAIL_CWD)
			rc = hd_err_set(err, HD_ERR, "cannot run in %s: %s",
			    cwd, strerror(msg[1]));
		else
			rc =
			    hd_err_set(err, HD_ERR, "cannot run \"%.200s\": %s",
				argv[0], strerror(msg[1]));
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
	free(cmd);
	close_fd(&inp[0]);
	close_fd(&inp[1]);
	close_fd(&outp[0]);
	close_fd(&outp[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&rep[0]);
	close_fd(&rep[1]);
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

/* ---- supervision ---- */

typedef struct run_state {
	const hd_proc_spec *spec;
	size_t input_off;
	int saw_epipe;
	hd_buf tail; /* the child's standard error */
} run_state;

/* Keep the last PROC_TAIL_BYTES (and at most twice that) of the error
 * stream. */
static void
keep_tail(run_state *rs, const char *buf, size_t n)
{
	size_t drop;

	if (n > PROC_TAIL_BYTES) {
		buf += n - PROC_TAIL_BYTES;
		n = PROC_TAIL_BYTES;
	}
	hd_buf_put(&rs->tail, buf, n);
	if (!hd_buf_failed(&rs->tail) && rs->tail.len > 2 * PROC_TAIL_BYTES) {
		drop = rs->tail.len - PROC_TAIL_BYTES;
		memmove(rs->tail.ptr, rs->tail.ptr + drop, PROC_TAIL_BYTES);
		rs->tail.len = PROC_TAIL_BYTES;
		rs->tail.ptr[rs->tail.len] = '\0';
	}
}

/* The last PROC_TAIL_LINES lines of at most PROC_TAIL_BYTES of standard
 * error, trailing blanks and control characters trimmed, malloc'd (""
 * when there was none, or nothing but those: "exit status 1: " then
 * nothing would say nothing). */
static char *
tail_text(run_state *rs)
{
	char *s = rs->tail.ptr;
	size_t len = rs->tail.len, start, lines = 0, i;

	if (s == NULL || hd_buf_failed(&rs->tail))
		return strdup("");
	while (len > 0 && ((unsigned char)s[len - 1] <= 0x20 ||
			      s[len - 1] == 0x7f))
		len--;
	s[len] = '\0';
	start = len > PROC_TAIL_BYTES ? len - PROC_TAIL_BYTES : 0;
	for (i = len; i > start; i--)
		if (s[i - 1] == '\n' && ++lines == PROC_TAIL_LINES) {
			start = i;
			break;
		}
	/* never start inside a UTF-8 sequence */
	while (start < len && ((unsigned char)s[start] & 0xc0) == 0x80)
		start++;
	return strdup(s + start);
}

/* Read what is there on fd; returns 0 at EOF (fd closed), 1 otherwise. */
static int
drain(int *fd, int is_out, run_state *rs)
{
	char buf[PROC_READ_CHUNK];
	ssize_t n;

	for (;;) {
		n = read(*fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		if (n <= 0) { /* EOF, or an error that ends the stream */
			if (is_out && rs->spec->on_out != NULL)
				rs->spec->on_out(rs->spec->ctx, NULL, 0);
			close_fd(fd);
			return 0;
		}
		if (!is_out)
			keep_tail(rs, buf, (size_t)n);
		else if (rs->spec->on_out != NULL)
			rs->spec->on_out(rs->spec->ctx, buf, (size_t)n);
		if (n < (ssize_t)sizeof(buf))
			return 1;
	}
}

/* Write as much of the input as the pipe takes; closes when done. */
static void
feed(child *c, run_state *rs)
{
	const hd_proc_spec *spec = rs->spec;
	size_t want;
	ssize_t n;

	while (c->in_fd >= 0) {
		if (rs->input_off == spec->input_len) {
			close_fd(&c->in_fd); /* EOF tells it to start */
			return;
		}
		want = spec->input_len - rs->input_off;
		if (want > PROC_WRITE_CHUNK)
			want = PROC_WRITE_CHUNK;
		n = write(c->in_fd, spec->input + rs->input_off, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) { /* EPIPE: it stopped reading; that is its right */
			rs->saw_epipe |= errno == EPIPE;
			close_fd(&c->in_fd);
			return;
		}
		rs->input_off += (size_t)n;
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

static int
aborted(const hd_proc_spec *spec)
{
	return spec->abort != NULL && atomic_load(spec->abort) != 0;
}

/*
 * The poll loop of (1), (2) and (4). Returns why it stopped (HD_PROC_*)
 * and leaves the leader reaped with its wait status in *status.
 *   STAGE_RUN  -> STAGE_TERM  timeout or abort: SIGTERM to the group
 *   STAGE_TERM -> STAGE_KILL  PROC_GRACE_MS later: SIGKILL to the group
 *   STAGE_RUN|TERM -> KILL    the leader exited: SIGKILL to what is left
 * In STAGE_KILL the pipes get PROC_DRAIN_MS to reach EOF.
 */
static int
supervise(child *c, run_state *rs, int *status)
{
	const hd_proc_spec *spec = rs->spec;
	struct pollfd pfd[4];
	int64_t now = hd_mono_ms(), deadline = now + spec->timeout_ms;
	int64_t until, wait_ms, slice;
	int why = HD_PROC_EXITED, stage = STAGE_RUN, exited = 0, n, i;

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
		if (spec->abort != NULL)
			slice = PROC_SLICE_MS;
		if (!exited && c->pidfd < 0)
			slice =
			    c->out_fd < 0 && c->err_fd < 0 ? 1 : PROC_SLICE_MS;
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
				drain(&c->out_fd, 1, rs);
			else if (pfd[i].fd == c->err_fd)
				drain(&c->err_fd, 0, rs);
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
				until = now + PROC_DRAIN_MS;
			}
		}
		if (stage == STAGE_RUN && (aborted(spec) || now >= deadline)) {
			why = aborted(spec) ? HD_PROC_ABORTED : HD_PROC_TIMEOUT;
			close_fd(&c->in_fd);
			signal_group(c->pid, SIGTERM);
			stage = STAGE_TERM;
			until = now + PROC_GRACE_MS;
		} else if (stage == STAGE_TERM && now >= until) {
			signal_group(c->pid, SIGKILL);
			stage = STAGE_KILL;
			until = now + PROC_DRAIN_MS;
		} else if (stage == STAGE_KILL && now >= until) {
			/* A process outside the group holds the pipes (it left
			 * with setsid); the turn does not wait for it. */
			if (c->out_fd >= 0 && spec->on_out != NULL)
				spec->on_out(spec->ctx, NULL, 0);
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

int
hd_proc_run(hd_proc_result *out, const hd_proc_spec *spec, hd_err *err)
{
	run_state rs;
	child c = {-1, -1, -1, -1, -1};
	sigset_t pipe_set, old_mask, pending;
	int rc, status = 0, pipe_was_pending;

	memset(out, 0, sizeof(*out));
	out->exit_code = -1;
	memset(&rs, 0, sizeof(rs));
	rs.spec = spec;
	rs.tail = (hd_buf)HD_BUF_INIT(0);
	if (aborted(spec)) {
		out->why = HD_PROC_ABORTED;
		out->tail = strdup("");
		return 0;
	}

	/* (2): SIGPIPE off for this thread only, while the child runs. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	pipe_was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);

	rc = spawn_child(
	    &c, spec->argv, spec->envp, spec->cwd, spec->input != NULL, err);
	if (rc == 0) {
		if (spec->on_spawn != NULL) /* (9) */
			spec->on_spawn(
			    spec->spawn_ctx, c.pid, hd_proc_start(c.pid));
		out->why = supervise(&c, &rs, &status);
		if (WIFEXITED(status))
			out->exit_code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			out->signal = WTERMSIG(status);
		out->tail = tail_text(&rs);
	}
	close_fd(&c.in_fd);
	close_fd(&c.out_fd);
	close_fd(&c.err_fd);
	close_fd(&c.pidfd);
	{
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
	return rc;
}

void
hd_proc_result_dispose(hd_proc_result *r)
{
	if (r == NULL)
		return;
	free(r->tail);
	r->tail = NULL;
}

void
hd_proc_status_text(char *out, size_t outlen, const hd_proc_result *r)
{
	if (r->exit_code >= 0)
		snprintf(out, outlen, "exit status %d", r->exit_code);
	else if (r->signal > 0)
		snprintf(out, outlen, "killed by signal %d (SIG%s)", r->signal,
		    sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?");
	else
		snprintf(out, outlen, "ended abnormally");
}

/* ---- lines (8) ---- */

void
hd_lines_init(hd_lines *l, size_t max, hd_line_fn fn, void *ctx)
{
	memset(l, 0, sizeof(*l));
	l->buf = (hd_buf)HD_BUF_INIT(0);
	l->max = max;
	l->fn = fn;
	l->ctx = ctx;
}

static void
line_out(hd_lines *l)
{
	size_t len = l->buf.len;

	if (len > 0 && l->buf.ptr[len - 1] == '\r')
		len--;
	l->fn(l->ctx, hd_buf_cstr(&l->buf), len, l->cut);
	hd_buf_reset(&l->buf);
	l->cut = 0;
}

void
hd_lines_feed(hd_lines *l, const char *data, size_t n)
{
	const char *nl;
	size_t take, room;

	if (data == NULL) { /* end of stream: a last line without '\n' */
		if (l->buf.len > 0 || l->cut)
			line_out(l);
		l->skipping = 0;
		return;
	}
	while (n > 0) {
		nl = memchr(data, '\n', n);
		take = nl != NULL ? (size_t)(nl - data) : n;
		if (!l->skipping) {
			room = l->max > l->buf.len ? l->max - l->buf.len : 0;
			if (take > room) {
				hd_buf_put(&l->buf, data, room);
				l->cut = 1;
				l->skipping = 1;
			} else
				hd_buf_put(&l->buf, data, take);
		}
		if (nl == NULL)
			return;
		line_out(l);
		l->skipping = 0;
		data += take + 1;
		n -= take + 1;
	}
}

void
hd_lines_dispose(hd_lines *l)
{
	hd_buf_dispose(&l->buf);
}
