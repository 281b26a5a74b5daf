/*
 * attach.c -- signing and checking attach URLs (SPEC 10.4).
 *  (1) The secret is created once, atomically (O_CREAT|O_EXCL on a temp
 *      name, then link), so two processes racing on a fresh home agree on
 *      one secret.
 *  (2) Only validated slugs are signed or put in a URL.
 *  (3) Verification recomputes the HMAC and compares with CRYPTO_memcmp:
 *      the time taken does not depend on how much of a forged sig matched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <huddle/agent.h>
#include <huddle/attach.h>
#include <huddle/util.h>

#define SECRET_LEN 32

static int
read_secret(const char *path, unsigned char key[SECRET_LEN])
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, key, SECRET_LEN);
	close(fd);
	return n == SECRET_LEN ? 0 : -2;
}

static int
load_secret(hd_store *st, unsigned char key[SECRET_LEN], hd_err *err)
{
	char path[4096], tmp[4200];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/secret", hd_store_home(st));
	if (read_secret(path, key) == 0)
		return 0;
	if ((rc = hd_random_bytes(key, SECRET_LEN, err)) < 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return hd_err_set(err, HD_ERR, "cannot create %s: %s", tmp,
		    strerror(errno));
	if (write(fd, key, SECRET_LEN) != SECRET_LEN || fsync(fd) != 0) {
		close(fd);
		unlink(tmp);
		return hd_err_set(err, HD_ERR, "cannot write %s", tmp);
	}
	close(fd);
	/* link() fails if another process won the race: use its secret. */
	if (link(tmp, path) != 0 && errno != EEXIST) {
		unlink(tmp);
		return hd_err_set(err, HD_ERR, "cannot create %s: %s", path,
		    strerror(errno));
	}
	unlink(tmp);
	if (read_secret(path, key) != 0)
		return hd_err_set(err, HD_ERR, "%s is not a 32-byte secret", path);
	return 0;
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
