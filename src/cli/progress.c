/*
 * progress.c -- the status line `ask` and `exchange` keep on stderr while
 * agents work: who is working and for how long, who is waiting
 * (`coder working 12s · reviewer waiting`).
 *  (1) Only for a person: stderr a terminal, no --json, no --quiet.
 *      Otherwise hd_cli_progress_start gives NULL and every call is a
 *      no-op, so piped output never carries it.
 *  (2) The line is redrawn in place about once a second by a thread of
 *      its own ("\r", the line, erase to the end), cut to the terminal's
 *      width. Under TERM=dumb nothing is redrawn: a line is printed, with
 *      its newline, each time who works or waits changes.
 *  (3) The line is erased before the command prints anything (hide ...
 *      show around every output line, under the same lock as the
 *      redraw) and when it stops: no leftover on the terminal.
 *  (4) Colour only when NO_COLOR is unset and TERM is not dumb.
 * Callers: cmd-ask.c, cmd-exchange.c.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <huddle/buf.h>
#include <huddle/util.h>

#include "cli.h"

#define PROGRESS_TICK_MS 1000
#define PROGRESS_MAX_ITEMS 16

struct hd_cli_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	int dumb;   /* (2) a line per change */
	int color;  /* (4) */
	int hidden; /* (3) between hide and show */
	int shown;  /* the line is on the terminal now */
	char prefix[64];
	hd_cli_progress_item items[PROGRESS_MAX_ITEMS];
	size_t n;
	char *last_key; /* dumb: what was printed last */
};

static int
term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Visible columns of UTF-8 text (every code point one column). */
static size_t
columns(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The line (colours in b when color), and the key of who does what. */
static void
render(hd_cli_progress *p, hd_buf *b, hd_buf *key, int color, size_t width)
{
	char part[160], secs[32];
	size_t i, used = 0, plen;
	int64_t now = hd_now_ms(), el;

	if (p->prefix[0] != '\0') {
		hd_buf_printf(b, "%s ", p->prefix);
		hd_buf_printf(key, "%s|", p->prefix);
		used = columns(p->prefix) + 1;
	}
	for (i = 0; i < p->n; i++) {
		const hd_cli_progress_item *it = &p->items[i];

		secs[0] = '\0';
		if (it->working && it->since_ms > 0) {
			el = (now - it->since_ms) / 1000;
			snprintf(secs, sizeof(secs), " %llds",
			    (long long)(el < 0 ? 0 : el));
		}
		snprintf(part, sizeof(part), "%s%s %s%s", i > 0 ? " · " : "",
		    it->name, it->working ? "working" : "waiting", secs);
		hd_buf_printf(key, "%s=%d|", it->name, it->working);
		plen = columns(part);
		if (width > 0 && used + plen + 1 > width) {
			hd_buf_printf(b, " …");
			break;
		}
		used += plen;
		if (color)
			hd_buf_printf(b, "%s\033[1m%s\033[0m %s%s%s%s",
			    i > 0 ? " · " : "", it->name,
			    it->working ? "\033[33m" : "",
			    it->working ? "working" : "waiting",
			    it->working ? "\033[0m" : "", secs);
		else
			hd_buf_printf(b, "%s", part);
	}
}

/* Under p->lock. */
static void
draw(hd_cli_progress *p, int changed)
{
	hd_buf b = HD_BUF_INIT(0), key = HD_BUF_INIT(0);

	if (p->hidden)
		return;
	if (p->n == 0 && p->prefix[0] == '\0') {
		if (p->shown && !p->dumb)
			fputs("\r\033[K", stderr);
		p->shown = 0;
		fflush(stderr);
		return;
	}
	render(p, &b, &key, p->color, p->dumb ? 0 : (size_t)term_width());
	if (p->dumb) {
		/* (2): a line when who works or waits changes */
		if (changed && (p->last_key == NULL ||
				   strcmp(p->last_key, hd_buf_cstr(&key)) != 0)) {
			fprintf(stderr, "%s\n", hd_buf_cstr(&b));
			free(p->last_key);
			p->last_key = strdup(hd_buf_cstr(&key));
		}
	} else {
		fprintf(stderr, "\r%s\033[K", hd_buf_cstr(&b));
		p->shown = 1;
	}
	fflush(stderr);
	hd_buf_dispose(&b);
	hd_buf_dispose(&key);
}

static void
erase(hd_cli_progress *p)
{
	if (p->shown && !p->dumb) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->shown = 0;
}

static void *
progress_main(void *arg)
{
	hd_cli_progress *p = arg;
	struct timespec ts;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += PROGRESS_TICK_MS / 1000;
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
		if (!p->stop && !p->dumb)
			draw(p, 0);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

hd_cli_progress *
hd_cli_progress_start(hd_cli *c, int quiet)
{
	const char *term = getenv("TERM");
	hd_cli_progress *p;
	sigset_t all, old;
	int rc;

	if (quiet || c->json || !isatty(STDERR_FILENO)) /* (1) */
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->dumb = term == NULL || strcmp(term, "dumb") == 0;
	p->color = !p->dumb && getenv("NO_COLOR") == NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* the caller's signals go to the caller's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&p->thread, NULL, progress_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->cond);
		free(p);
		return NULL;
	}
	return p;
}

void
hd_cli_progress_set(hd_cli_progress *p, const char *prefix,
    const hd_cli_progress_item *items, size_t n)
{
	size_t i;
	int changed;

	if (p == NULL)
		return;
	if (n > PROGRESS_MAX_ITEMS)
		n = PROGRESS_MAX_ITEMS;
	pthread_mutex_lock(&p->lock);
	/* drawn now when who works or waits changed, else by the tick */
	changed = n != p->n ||
		  strcmp(p->prefix, prefix != NULL ? prefix : "") != 0;
	for (i = 0; !changed && i < n; i++)
		changed = strcmp(p->items[i].name, items[i].name) != 0 ||
			  p->items[i].working != items[i].working;
	snprintf(p->prefix, sizeof(p->prefix), "%s",
	    prefix != NULL ? prefix : "");
	if (n > 0)
		memcpy(p->items, items, n * sizeof(*items));
	p->n = n;
	if (changed)
		draw(p, 1);
	pthread_mutex_unlock(&p->lock);
}

void
hd_cli_progress_hide(hd_cli_progress *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	erase(p);
	p->hidden = 1;
	pthread_mutex_unlock(&p->lock);
}

void
hd_cli_progress_show(hd_cli_progress *p)
{
	if (p == NULL)
		return;
	fflush(stdout);
	pthread_mutex_lock(&p->lock);
	p->hidden = 0;
	if (!p->dumb)
		draw(p, 0);
	pthread_mutex_unlock(&p->lock);
}

void
hd_cli_progress_stop(hd_cli_progress *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	erase(p);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p->last_key);
	free(p);
}
