/*
 * mentions.h -- the pure text of conversations (SPEC 7), src/engine/
 * mentions.c: the mention-tag parser, the text a mentioned agent
 * receives, the aggregate's rendering of a reply and the routing of the
 * user's message. No database, no threads, no allocation kept between
 * calls.
 *
 * Contract:
 *  (1) Linear time on any input: brackets are matched once, up front.
 *  (2) Every result is malloc'd and the caller's (dispose as each
 *      function says, also on failure); the only error is HD_ENOMEM.
 *  (3) The same input gives the same output, byte for byte: a resumed
 *      conversation delivers exactly the text it delivered before.
 * Callers: the conversation engine (conversation.c, conv_record.c,
 * conv_files.c), `huddle ask` and the demo (hd_mentions_display), and the
 * fuzzer.
 */
#ifndef HUDDLE_MENTIONS_H
#define HUDDLE_MENTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* ---- the tag parser (pure) -------------------------------------------- */

/*
 * One tag, `[@<ids>: <body>]`. Syntax: `[@`, then one or more ids
 * separated by `,` -- an id is one or more of A-Z a-z 0-9 `_` `-`, with
 * spaces and tabs around it ignored -- then `:`, then the body up to the
 * `]` that balances the tag's `[` (brackets in between are counted). Not
 * a tag: anything else after `[@` before the `:` (`[@x no colon]`,
 * `[@: x]`, `[ @x: y]`), and a tag whose `[` never balances; scanning then
 * resumes right after its `[@`. A tag found inside another tag's body is
 * part of that body.
 */
typedef struct hd_mention_tag {
	size_t start; /* offset of its '[' */
	size_t end;   /* offset just past its ']' */
	char **ids;   /* lower-cased, as written (duplicates kept) */
	size_t nids;
	char *body; /* trimmed (ASCII whitespace) */
} hd_mention_tag;

/* One target, taken from the first tag that names it. */
typedef struct hd_mention {
	char *target; /* lower-cased id */
	char *body;   /* that tag's body */
	size_t tag;   /* index into tags */
} hd_mention;

typedef struct hd_mentions {
	hd_mention_tag *tags; /* every tag, in order */
	size_t ntags;
	hd_mention *targets; /* unique ids, in order of first appearance */
	size_t ntargets;
	/* The text with every tag's span removed, trimmed at both ends.
	 * (The pieces between tags hold no tag; joined, they may form one,
	 * which is then only text.) */
	char *shared;
} hd_mentions;

/*
 * Parse the len bytes at text. Linear in len: brackets are matched once,
 * up front. Dispose *out with hd_mentions_dispose() (also on failure).
 * Returns 0 or HD_ENOMEM.
 */
int hd_mentions_parse(
    hd_mentions *out, const char *text, size_t len, hd_err *err);
void hd_mentions_dispose(hd_mentions *m);

/*
 * The text a mentioned agent receives (SPEC 7), byte for byte:
 *   `[Message from teammate @<from>]:\n<shared>\n\n------\n\nDirected to
 *   you:\n<body>`, or without shared context (shared NULL or "")
 *   `[Message from teammate @<from>]:\n<body>`;
 * then, when others > 0, `\n\n------\n\n[<others> other teammate
 * response(s) are still being processed and will be delivered when ready.
 * Do not re-mention teammates who haven't responded yet.]`. *out is
 * malloc'd.
 */
int hd_mentions_delivery(char **out, const char *from, const char *shared,
    const char *body, int64_t others, hd_err *err);

/* text with each tag written `→ @<ids joined by ",">: <body>` (`→ @<ids>:`
 * for an empty body), for the aggregate and for `huddle ask`'s replies.
 * *out is malloc'd. */
int hd_mentions_display(char **out, const char *text, hd_err *err);

/* ---- routing the user's message (pure) -------------------------------- */

typedef struct hd_conversation_route_result {
	const char *agent; /* borrowed: the leader or a member; NULL when the
			      message needs the leader and there is none */
	size_t offset;     /* where the delivered text starts in message */
	/* Set when the message starts with `@<word> ` naming neither the
	 * team nor a member: the word (lower-cased) was not a recipient and
	 * the message goes to the leader unchanged. */
	char dropped[64];
} hd_conversation_route_result;

/*
 * Route a user message (SPEC 7): a leading `@<agent> ` (a member, matched
 * case-insensitively) goes to that agent and a leading `@<team> ` to the
 * leader, the prefix and the spaces after it stripped; anything else goes
 * to the leader as it is. members holds nmembers ids; leader may be NULL.
 */
void hd_conversation_route(hd_conversation_route_result *out,
    const char *message, const char *team, const char *const *members,
    size_t nmembers, const char *leader);

#endif
