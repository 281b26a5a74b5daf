/*
 * attach.c -- what the adapters' attach writers share (runtime.h,
 * hd_runtime_attacher): shell quoting and the stdio server's command line.
 * Each runtime's formats are in its own adapter file (claude.c, codex.c);
 * nothing here names a runtime. Owns no table and no state.
 *  (1) A word is printed bare only when every byte is one the shell takes
 *      literally; anything else goes in single quotes, which the shell
 *      expands nothing in.
 * Callers: claude.c, codex.c; `huddle attach` (src/cli/cmd-attach.c) for
 * its export line.
 */
#include <string.h>

#include <huddle/runtime.h>

#include "runtime_int.h"

void
hd_runtime_sh_word(hd_buf *b, const char *s)
{
	const char *p;

	if (s[0] != '\0' && strspn(s,
				"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
				"TUVWXYZ0123456789_-./:=@,+%") == strlen(s)) {
		hd_buf_puts(b, s);
		return;
	}
	hd_buf_putc(b, '\'');
	for (p = s; *p != '\0'; p++)
		if (*p == '\'')
			hd_buf_puts(b, "'\\''");
		else
			hd_buf_putc(b, *p);
	hd_buf_putc(b, '\'');
}

void
hd_runtime__attach_stdio(hd_buf *b, const hd_runtime_attach *x)
{
	hd_runtime_sh_word(b, x->exe);
	hd_buf_puts(b, " --home ");
	hd_runtime_sh_word(b, x->home);
	hd_buf_printf(b, " mcp --team %s --agent %s", x->team, x->agent);
}
