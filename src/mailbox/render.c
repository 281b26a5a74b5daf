/*
 * render.c -- the pure renderer of mailbox.h: messages as
 * <teammate-message> blocks (SPEC 6). No database, no I/O, no clock (the
 * TEAM STATE block has its own renderer: src/lifecycle/state_render.c).
 *  (1) Attribute values escape & < > " (&amp; &lt; &gt; &quot;), so a
 *      value can never end its attribute or its tag.
 *  (2) In content, every "<teammate-message" and "</teammate-message"
 *      (ASCII case-insensitive) has its '<' written as "&lt;", so content
 *      can never open or close a block; nothing else in content changes.
 *  (3) Blocks are joined by one blank line and the text has no trailing
 *      newline.
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
