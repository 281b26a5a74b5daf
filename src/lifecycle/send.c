/*
 * send.c -- hd_mailbox_send (mailbox.h): the message every surface and
 * engine sends, the mailbox's own send with the shutdown protocol's
 * reaction handed in (hd_shutdown__react, src/presence/shutdown.c) and,
 * for it to read the members' work, the board's hd_work (hd_board_work).
 * It lives here, above the board, because it binds that reader, while the
 * mailbox knows no protocol and the protocol knows no board.
 *  (1) One transaction: the checks, the row, message_sent, the sender's
 *      last activity and the reaction commit together or not at all, as
 *      mailbox.c (5) says; a reaction that refuses (`no shutdown request
 *      "x" in team dev`) refuses the send.
 *  (2) A message of a type no protocol reacts to may skip this and call
 *      hd_mailbox__send (the board's task_update does); an idle or
 *      shutdown_response message must come through here, or through
 *      hd_mailbox__send_then with the same reaction (src/presence/ does,
 *      with the hd_work it was handed).
 * Callers: the surfaces (the CLI's send, the mail operation of
 * src/ops/ for MCP and REST, the mail route).
 */
#include <huddle/board.h>
#include <huddle/mailbox.h>

#include <presence/presence_int.h>

int
hd_mailbox_send(
    hd_message **out, hd_store *st, const hd_message_spec *spec, hd_err *err)
{
	return hd_mailbox__send_then(
	    out, st, spec, 0, hd_shutdown__react, &hd_board_work, err);
}
