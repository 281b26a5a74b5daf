/*
 * host.c -- which process is which on this host, across restarts of
 * huddle (util.h): a process is named by its pid and its start time
 * (field 22 of /proc/<pid>/stat, clock ticks since boot), which together
 * never name two processes within one boot; the boot is named by
 * /proc/sys/kernel/random/boot_id and the host by gethostname().
 *  (1) hd_proc_group_kill signals a recorded process group only while the
 *      recording still names it: when its leader's pid is alive it must
 *      have the recorded start time (else the number was reused and the
 *      group is someone else's); when the leader is gone, a group with
 *      its id can only hold the leader's own leftovers, since Linux never
 *      hands out a pid that is still some group's id.
 * Callers: engine/owner.c (engine liveness), room/lock.c,
 * engine/conv_adopt.c and conversation/queue.c (the running turn's
 * process), runtime/proc.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/util.h>

int64_t
hd_proc_start(int64_t pid)
{
	char path[64], buf[1024], *p, *tok, *save = NULL;
	long long start = -1;
	ssize_t n;
	int fd, field;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) state ... starttime(22) ...": comm may hold anything,
	 * so count from the last ')' */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	for (field = 3, tok = strtok_r(p + 1, " ", &save); tok != NULL;
	     tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 3 && (tok[0] == 'Z' || tok[0] == 'X'))
			return 0; /* dead, not yet reaped */
		if (field == 22) {
			start = strtoll(tok, NULL, 10);
			break;
		}
	}
	return start < 0 ? -1 : start;
}

void
hd_boot_id(char *out, size_t outlen)
{
	ssize_t n = -1;
	int fd;

	out[0] = '\0';
	if ((fd = open("/proc/sys/kernel/random/boot_id",
		 O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, out, outlen - 1);
		close(fd);
	}
	if (n <= 0) {
		out[0] = '\0';
		return;
	}
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
}

void
hd_host_name(char *out, size_t outlen)
{
	if (gethostname(out, outlen) != 0)
		out[0] = '\0';
	out[outlen - 1] = '\0';
}

int
hd_proc_here(const char *host, const char *boot)
{
	char h[256], b[64];

	if (host == NULL || boot == NULL || host[0] == '\0' || boot[0] == '\0')
		return 0;
	hd_host_name(h, sizeof(h));
	hd_boot_id(b, sizeof(b));
	return strcmp(h, host) == 0 && strcmp(b, boot) == 0;
}

int
hd_proc_group_kill(int64_t pgid, int64_t start)
{
	int64_t now;

	if (pgid <= 1 || start <= 0 || pgid == (int64_t)getpgrp())
		return 0;
	if ((now = hd_proc_start(pgid)) < 0)
		return 0; /* cannot be told: leave it */
	if (now != 0 && now != start)
		return 0; /* (1) the number names another process now */
	return kill(-(pid_t)pgid, SIGKILL) == 0;
}
