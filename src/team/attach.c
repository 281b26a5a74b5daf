/*
 * attach.c -- signing and checking attach URLs (SPEC 10.4).
 *  (1) The secret is 32 random bytes kept in the store's kv under
 *      "attach.secret" (64 lower-case hex digits), so every node serving
 *      one database -- each with its own HUDDLE_HOME -- signs and checks
 *      with the same key: an attach URL from one node works on all.
 *  (2) It is created once: a read finds it (the usual case, no write);
 *      when it is absent, one write transaction inserts a candidate with
 *      ON CONFLICT DO NOTHING and reads back what the row then holds, so
 *      two connections (threads, processes, nodes) racing on a fresh
 *      database agree on one secret -- the first insert's.
 *  (3) A home from before the secret moved keeps HUDDLE_HOME/secret (32
 *      bytes, 0600): when the database has no secret yet, that file's
 *      bytes are the candidate, so URLs signed before the upgrade still
 *      verify. The file is only read, never written, moved or removed; a
 *      database that already has a secret ignores it. A file that is not
 *      32 bytes is an error naming it (nothing is silently replaced).
 *  (4) Only validated slugs are signed or put in a URL.
 *  (5) Verification recomputes the HMAC and compares with CRYPTO_memcmp:
 *      the time taken does not depend on how much of a forged sig matched.
 *      Key bytes are wiped (OPENSSL_cleanse) once a call is done with them.
 * Callers: the server loads the key once at start (http/server.c,
 * hd_attach_key); the engines' and `huddle attach`'s URLs (hd_attach_url*);
 * tests/unit/team/test-attach.c, tests/fuzz/fuzz-attach.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <huddle/agent.h>
#include <huddle/attach.h>
#include <huddle/util.h>

#include <store/store.h>

#define SECRET_LEN 32
#define SECRET_KEY "attach.secret"

static void
to_hex(char hex[2 * SECRET_LEN + 1], const unsigned char key[SECRET_LEN])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < SECRET_LEN; i++) {
		hex[2 * i] = digits[key[i] >> 4];
		hex[2 * i + 1] = digits[key[i] & 15];
	}
	hex[2 * SECRET_LEN] = '\0';
}

static int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The stored value into key: exactly 64 lower-case hex digits. */
static int
from_hex(unsigned char key[SECRET_LEN], const char *hex, hd_err *err)
{
	int i, hi, lo;

	if (strlen(hex) != 2 * SECRET_LEN)
		goto bad;
	for (i = 0; i < SECRET_LEN; i++) {
		if ((hi = hex_digit(hex[2 * i])) < 0 ||
		    (lo = hex_digit(hex[2 * i + 1])) < 0)
			goto bad;
		key[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
bad:
	OPENSSL_cleanse(key, SECRET_LEN);
	return hd_err_set(err, HD_ERR,
	    "the store's attach secret (kv " SECRET_KEY ") is not 64 hex "
	    "digits: the database was edited by hand; restore it");
}

/* The secret in kv into key: 1, 0 when there is none, or the error. */
static int
stored_secret(hd_store *st, unsigned char key[SECRET_LEN], hd_err *err)
{
	char *hex = NULL;
	int rc;

	if ((rc = hd_store_kv_get(&hex, st, SECRET_KEY, err)) < 0)
		return rc;
	if (hex == NULL)
		return 0;
	rc = from_hex(key, hex, err);
	OPENSSL_cleanse(hex, strlen(hex));
	free(hex);
	return rc < 0 ? rc : 1;
}

/* A pre-upgrade home's HUDDLE_HOME/secret (3): 1 with key set, 0 when
 * there is no file, or the error. */
static int
file_secret(hd_store *st, unsigned char key[SECRET_LEN], hd_err *err)
{
	char path[4096];
	unsigned char extra;
	ssize_t n;
	int fd, rc = 1;

	snprintf(path, sizeof(path), "%s/secret", hd_store_home(st));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return 0;
		return hd_err_set(err, HD_ERR, "cannot read %s: %s", path,
		    strerror(errno));
	}
	n = read(fd, key, SECRET_LEN);
	if (n != SECRET_LEN || read(fd, &extra, 1) != 0) {
		OPENSSL_cleanse(key, SECRET_LEN);
		rc = hd_err_set(err, HD_ERR,
		    "%s is not a 32-byte secret: it cannot be adopted into the "
		    "store (move it away to have a new secret made)", path);
	}
	close(fd);
	return rc;
}

typedef struct {
	unsigned char *key;
} secret_txn;

/* (2): offer a candidate, keep whichever row won, read it back. */
static int
create_txn(hd_store *st, void *payload, hd_err *err)
{
	secret_txn *t = payload;
	unsigned char cand[SECRET_LEN];
	char hex[2 * SECRET_LEN + 1];
	int rc;

	if ((rc = file_secret(st, cand, err)) < 0)
		return rc;
	if (rc == 0 && (rc = hd_random_bytes(cand, SECRET_LEN, err)) < 0)
		return rc;
	to_hex(hex, cand);
	OPENSSL_cleanse(cand, sizeof(cand));
	rc = hd_store_run(st, err,
	    "INSERT INTO kv(key, value, updated_at) VALUES (?1, ?2, ?3) "
	    "ON CONFLICT(key) DO NOTHING",
	    HD_TEXT(SECRET_KEY), HD_TEXT(hex), HD_INT(hd_now_ms()));
	OPENSSL_cleanse(hex, sizeof(hex));
	if (rc < 0)
		return rc;
	if ((rc = stored_secret(st, t->key, err)) < 0)
		return rc;
	if (rc == 0)
		return hd_err_set(err, HD_ERR,
		    "the attach secret was inserted but cannot be read back");
	return 0;
}

static int
load_secret(hd_store *st, unsigned char key[SECRET_LEN], hd_err *err)
{
	secret_txn t = {key};
	int rc;

	if ((rc = stored_secret(st, key, err)) != 0)
		return rc < 0 ? rc : 0;
	return hd_store_write(st, create_txn, &t, err);
}

/* HMAC-SHA256(key, "v1" 0x1f team 0x1f agent) as lower-case hex. */
static int
sign_with(char hex[HD_ATTACH_SIG_HEX + 1], const unsigned char *key,
    const char *team, const char *agent)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char mac[EVP_MAX_MD_SIZE];
	char msg[128];
	unsigned int maclen = 0, i;
	int n;

	n = snprintf(msg, sizeof(msg), "v1\x1f%s\x1f%s", team, agent);
	if (HMAC(EVP_sha256(), key, SECRET_LEN, (unsigned char *)msg,
		(size_t)n, mac, &maclen) == NULL ||
	    maclen != 32)
		return -1;
	for (i = 0; i < maclen; i++) {
		hex[2 * i] = digits[mac[i] >> 4];
		hex[2 * i + 1] = digits[mac[i] & 15];
	}
	hex[2 * maclen] = '\0';
	return 0;
}

int
hd_attach_key(unsigned char key[HD_ATTACH_KEY_LEN], hd_store *st,
    hd_err *err)
{
	return load_secret(st, key, err);
}

int
hd_attach_sign(char hex[HD_ATTACH_SIG_HEX + 1], hd_store *st,
    const char *team, const char *agent, hd_err *err)
{
	unsigned char key[SECRET_LEN];
	int rc;

	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	if ((rc = load_secret(st, key, err)) < 0)
		return rc;
	rc = sign_with(hex, key, team, agent);
	OPENSSL_cleanse(key, sizeof(key));
	if (rc < 0)
		return hd_err_set(err, HD_ERR, "cannot compute HMAC-SHA256");
	return 0;
}

int
hd_attach_verify_key(const unsigned char key[HD_ATTACH_KEY_LEN],
    const char *team, const char *agent, const char *sig)
{
	char want[HD_ATTACH_SIG_HEX + 1];

	if (sig == NULL || strlen(sig) != HD_ATTACH_SIG_HEX ||
	    !hd_slug_ok(team) || !hd_slug_ok(agent) ||
	    sign_with(want, key, team, agent) < 0)
		return 0;
	return CRYPTO_memcmp(want, sig, HD_ATTACH_SIG_HEX) == 0;
}

int
hd_attach_verify(hd_store *st, const char *team, const char *agent,
    const char *sig)
{
	unsigned char key[SECRET_LEN];
	hd_err err = HD_ERR_INIT;
	int ok;

	if (load_secret(st, key, &err) != 0)
		return 0;
	ok = hd_attach_verify_key(key, team, agent, sig);
	OPENSSL_cleanse(key, sizeof(key));
	return ok;
}

int
hd_attach_url_base(char **out, hd_store *st, const char *base,
    const char *agent, hd_err *err)
{
	char sig[HD_ATTACH_SIG_HEX + 1];
	hd_agent *a = NULL;
	size_t n;
	int rc;

	*out = NULL;
	if ((rc = hd_agent_get(&a, st, agent, err)) < 0)
		return rc;
	if (a->team_id == NULL) {
		rc = hd_err_set(err, HD_EREFUSED, "agent %s is not in a team",
		    agent);
		goto done;
	}
	if ((rc = hd_attach_sign(sig, st, a->team_id, a->id, err)) < 0)
		goto done;
	n = strlen(base) + strlen(a->team_id) + strlen(a->id) + 160;
	if ((*out = malloc(n)) == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	snprintf(*out, n, "%s/mcp?roomTeamId=%s&postAuthorAgentId=%s&sig=%s",
	    base, a->team_id, a->id, sig);
done:
	hd_agent_free(a);
	return rc;
}

int
hd_attach_url(char **out, hd_store *st, const char *host, int port,
    const char *agent, hd_err *err)
{
	char base[300];

	if ((size_t)snprintf(base, sizeof(base), "http://%s:%d", host, port) >=
	    sizeof(base))
		return hd_err_set(err, HD_EINVAL, "host name too long: %s", host);
	return hd_attach_url_base(out, st, base, agent, err);
}
