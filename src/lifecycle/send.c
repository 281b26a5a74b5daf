/*
 * send.c -- hd_mailbox_send (mailbox.h): the message every surface and
 * engine sends, the mailbox's own send with the shutdown protocol's
 * reaction handed in. It lives here, above the mailbox and the board,
 * because a shutdown_response or idle message drives the shutdown
 * protocol (shutdown.c) while the mailbox knows no protocol.
 *  (1) One transaction: the checks, the row, message_sent, the sender's
 *      last activity and the reaction (hd_shutdown__on_message) commit
 *      together or not at all, as mailbox.c (5) says; a reaction that
 *      refuses (`no shutdown request "x" in team dev`) refuses the send.
 *  (2) A message of a type no protocol reacts to may skip this and call
 *      hd_mailbox__send (the board's task_update does); an idle or
 *      shutdown_response message must come through here.
 * Callers: the surfaces (the CLI's send, the mail operation of
 * src/ops/ for MCP and REST, the mail route), activity.c (the idle
 * notice) and shutdown.c (answers).
 */
#include <huddle/mailbox.h>

#include "shutdown_int.h"

int
hd_mailbox_send(
    hd_message **out, hd_store *st, const hd_message_spec *spec, hd_err *err)
{
	return hd_mailbox__send_then(
	    out, st, spec, 0, hd_shutdown__on_message, err);
}
