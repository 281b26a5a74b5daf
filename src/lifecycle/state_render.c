/*
 * state_render.c -- the pure renderer of the TEAM STATE block (SPEC 6,
 * team_state.h) from a snapshot state.c read. No database, no I/O, no
 * clock: "last active" is counted from the moment the snapshot was read.
 *  (1) The block ends with "====================\n"; it is pieced, not
 *      formatted, and bounded: every field it shows is capped.
 * Callers: state.c (hd_team_state), the CLI (team state), the MCP
 * team_state tool and the REST team-state route.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/team_state.h>

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
