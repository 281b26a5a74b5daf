/*
 * render.c -- the pure renderers of mailbox.h: messages as
 * <teammate-message> blocks and the TEAM STATE block (SPEC 6). No
 * database, no I/O, no clock: "last active" is counted from the moment
 * the snapshot was read.
 *  (1) Attribute values escape & < > " (&amp; &lt; &gt; &quot;), so a
 *      value can never end its attribute or its tag.
 *  (2) In content, every "<teammate-message" and "</teammate-message"
 *      (ASCII case-insensitive) has its '<' written as "&lt;", so content
 *      can never open or close a block; nothing else in content changes.
 *  (3) Blocks are joined by one blank line and the text has no trailing
 *      newline; the TEAM STATE block ends with "====================\n".
 *  (4) Content is defanged first, exactly as the room's envelope does
 *      (hd_envelope_defang): every embedded inter-session header ('['
 *      "inter-session message" ... ']') becomes "[peer-quoted header]", so
 *      mail cannot pass itself off as a room post to the model either.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/envelope.h>

#include "mailbox_int.h"

/* A rendered mailbox holds at most what a read returns (each message
 * capped at HD_MESSAGE_MAX) grown by escaping; this cap only stops a
 * runaway caller. */
#define RENDER_MAX ((size_t)256 * 1024 * 1024)

static void
put_attr(hd_buf *b, const char *name, const char *v)
{
	const char *p;

	hd_buf_printf(b, " %s=\"", name);
	for (p = v; *p != '\0'; p++) {
		switch (*p) {
		case '&': hd_buf_puts(b, "&amp;"); break;
		case '<': hd_buf_puts(b, "&lt;"); break;
		case '>': hd_buf_puts(b, "&gt;"); break;
		case '"': hd_buf_puts(b, "&quot;"); break;
		default: hd_buf_putc(b, *p); break;
		}
	}
	hd_buf_putc(b, '"');
}

/* 1 when the '<' at p starts a block tag, opening or closing; ASCII
 * case-insensitive whatever the locale. */
static int
is_block_tag(const char *p)
{
	static const char tag[] = "teammate-message";
	size_t i;
	char c;

	p++;
	if (*p == '/')
		p++;
	for (i = 0; i < sizeof(tag) - 1; i++) {
		c = p[i]; /* the NUL ends the loop: it matches no tag char */
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != tag[i])
			return 0;
	}
	return 1;
}

/* Content defanged (4), then with block tags escaped (2). */
static int
put_content(hd_buf *b, const char *c, hd_err *err)
{
	const char *p = c, *lt;
	char *clean = NULL;
	int rc;

	if (strchr(c, '[') != NULL) {
		if ((rc = hd_envelope_defang(&clean, NULL, c, strlen(c), err)) < 0)
			return rc;
		p = clean;
	}
	while ((lt = strchr(p, '<')) != NULL) {
		hd_buf_put(b, p, (size_t)(lt - p));
		hd_buf_puts(b, is_block_tag(lt) ? "&lt;" : "<");
		p = lt + 1;
	}
	hd_buf_puts(b, p);
	free(clean);
	return 0;
}

int
hd_mailbox_render(char **out, const hd_messages *msgs, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(RENDER_MAX);
	size_t i;
	int rc;

	*out = NULL;
	for (i = 0; i < msgs->n; i++) {
		const hd_message *m = &msgs->items[i];

		if (i > 0)
			hd_buf_puts(&b, "\n\n");
		hd_buf_puts(&b, "<teammate-message");
		put_attr(&b, "teammate_id", m->from_agent);
		put_attr(&b, "type", m->type);
		if (m->summary != NULL)
			put_attr(&b, "summary", m->summary);
		if (m->request_id != NULL && m->request_id[0] != '\0')
			put_attr(&b, "request_id", m->request_id);
		if (m->approve >= 0)
			put_attr(&b, "approve", m->approve ? "true" : "false");
		if (m->reason != NULL && m->reason[0] != '\0')
			put_attr(&b, "reason", m->reason);
		hd_buf_puts(&b, ">\n");
		if ((rc = put_content(&b, m->content, err)) < 0) {
			hd_buf_dispose(&b);
			return rc;
		}
		hd_buf_puts(&b, "\n</teammate-message>");
	}
	if (hd_buf_failed(&b)) {
		rc = hd_buf_error(&b, "rendered mailbox", err);
		hd_buf_dispose(&b);
		return rc;
	}
	if ((*out = hd_buf_detach(&b)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

/* "; last active just now" and the like, from ms before. */
static void
put_ago(hd_buf *b, int64_t ms)
{
	int64_t s = ms > 0 ? ms / 1000 : 0;

	hd_buf_puts(b, "; last active ");
	if (s < 60) {
		hd_buf_puts(b, "just now");
		return;
	}
	if (s < 3600) {
		hd_buf_put_i64(b, s / 60);
		hd_buf_puts(b, " min ago");
	} else if (s < 86400) {
		hd_buf_put_i64(b, s / 3600);
		hd_buf_puts(b, " h ago");
	} else {
		hd_buf_put_i64(b, s / 86400);
		hd_buf_puts(b, " d ago");
	}
}

/* What a member is doing: its status and why (an error's reason, a
 * replacement's), what it holds, when it last acted. */
static void
put_doing(hd_buf *b, const hd_team_snapshot *s, const hd_agent *a)
{
	size_t i, n = 0;

	hd_buf_puts(b, a->status);
	if (a->status_reason != NULL) {
		hd_buf_puts(b, ": ");
		hd_buf_puts(b, a->status_reason);
	}
	for (i = 0; i < s->nheld; i++) {
		const hd_held_task *t = &s->held[i];

		if (strcmp(t->owner, a->id) != 0)
			continue;
		hd_buf_puts(b, n++ == 0 ? "; holds #" : ", #");
		hd_buf_put_i64(b, t->id);
		hd_buf_puts(b, " \"");
		hd_buf_puts(b, t->subject);
		hd_buf_puts(b, "\" (");
		hd_buf_puts(b, t->status);
		hd_buf_putc(b, ')');
	}
	if (a->last_active_at > 0)
		put_ago(b, s->read_at - a->last_active_at);
}

int
hd_team_state_render(char **out, const hd_team_snapshot *s, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(0); /* bounded: every field is capped */
	const hd_team *team = s->team;
	size_t i;

	*out = NULL;
	/* pieced, not formatted: the block is on every leader turn */
	hd_buf_puts(&b, "=== TEAM STATE ===\nTeam: ");
	hd_buf_puts(&b, team->name);
	hd_buf_puts(&b, " (");
	hd_buf_puts(&b, team->id);
	hd_buf_puts(&b, ")\nStatus: ");
	hd_buf_puts(&b, team->status);
	hd_buf_puts(&b, "\nDescription: ");
	hd_buf_puts(
	    &b, team->description != NULL && team->description[0] != '\0'
		    ? team->description
		    : "N/A");
	hd_buf_puts(&b, "\n\nMembers (");
	hd_buf_put_i64(&b, (int64_t)s->members.n);
	hd_buf_puts(&b, "):\n");
	for (i = 0; i < s->members.n; i++) {
		const hd_agent *a = &s->members.items[i];
		int lead = a->is_leader ||
			   (team->leader_agent_id != NULL &&
			       strcmp(team->leader_agent_id, a->id) == 0);

		hd_buf_puts(&b, "  - ");
		hd_buf_puts(&b, a->id);
		hd_buf_puts(&b, lead ? " (Lead): " : " (Member): ");
		put_doing(&b, s, a);
		hd_buf_putc(&b, '\n');
	}
	hd_buf_puts(&b, "\nTask Counts:\n  - Pending: ");
	hd_buf_put_i64(&b, s->counts.pending);
	hd_buf_puts(&b, "\n  - In Progress: ");
	hd_buf_put_i64(&b, s->counts.claimed + s->counts.in_progress);
	hd_buf_puts(&b, "\n  - Completed: ");
	hd_buf_put_i64(&b, s->counts.completed);
	hd_buf_puts(&b, "\n====================\n");
	if (hd_buf_failed(&b)) {
		int rc = hd_buf_error(&b, "team state", err);

		hd_buf_dispose(&b);
		return rc;
	}
	if ((*out = hd_buf_detach(&b)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}
