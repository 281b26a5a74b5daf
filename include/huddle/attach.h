/*
 * attach.h -- how an agent is attached to huddle's MCP server (SPEC 10.4).
 *
 * An attach URL binds a connection to one agent of one team:
 *   http://127.0.0.1:<port>/mcp?roomTeamId=<team>&postAuthorAgentId=<agent>&sig=<hex>
 * where sig = HMAC-SHA256(secret, "v1" 0x1f <team> 0x1f <agent>) in lower
 * case hex, and secret is 32 random bytes kept in the store (kv
 * "attach.secret"), created once on first use and shared by every node
 * serving the same database; a home's older HUDDLE_HOME/secret file is
 * adopted as that secret when the database has none (team/attach.c).
 * Signatures are compared in constant time.
 */
#ifndef HUDDLE_ATTACH_H
#define HUDDLE_ATTACH_H

#include "err.h"
#include "store.h"

#define HD_ATTACH_SIG_HEX 64

/* Compute the signature for (team, agent) into hex[65]. */
int hd_attach_sign(char hex[HD_ATTACH_SIG_HEX + 1], hd_store *st,
    const char *team, const char *agent, hd_err *err);

/* 1 when sig is the valid signature for (team, agent), else 0. Never
 * fails loudly: a missing secret or a malformed sig is simply not valid. */
int hd_attach_verify(hd_store *st, const char *team, const char *agent,
    const char *sig);

/* The signing key, for a long-lived process (the server) to load once
 * instead of reading the store for every request. */
#define HD_ATTACH_KEY_LEN 32
int hd_attach_key(unsigned char key[HD_ATTACH_KEY_LEN], hd_store *st,
    hd_err *err);

/* hd_attach_verify with a preloaded key. */
int hd_attach_verify_key(const unsigned char key[HD_ATTACH_KEY_LEN],
    const char *team, const char *agent, const char *sig);

/* The attach URL for an agent (which must exist and be in a team) on
 * host:port. *out is malloc'd. */
int hd_attach_url(char **out, hd_store *st, const char *host, int port,
    const char *agent, hd_err *err);

/* The same under a base URL ("http://host:port", or a server's
 * --public-url such as "https://huddle.example.com/team"; no trailing
 * slash): <base>/mcp?roomTeamId=...&postAuthorAgentId=...&sig=... */
int hd_attach_url_base(char **out, hd_store *st, const char *base,
    const char *agent, hd_err *err);

#endif
