/*
 * tls.c -- HTTPS for `huddle serve --tls-cert FILE --tls-key FILE`, so
 * agents on other machines reach the server without their bearer token
 * and signed attach URLs crossing the network in clear.
 *
 * Design:
 *  (1) libmicrohttpd speaks TLS itself (GnuTLS): the daemon gets
 *      MHD_USE_TLS and the certificate and key as PEM in memory
 *      (MHD_OPTION_HTTPS_MEM_CERT / _KEY). Connections our acceptor hands
 *      over with MHD_add_connection (server.c (11)) do the handshake like
 *      any other, on the worker that gets them, so SSE (sse.c) and
 *      deferred requests (async.c) run over TLS unchanged: they poll the
 *      socket only for the peer's hang-up, never read it.
 *  (2) The files are read and checked here, once, before anything
 *      listens, so a mistake is an error naming the file and what is wrong
 *      with it (unreadable, no PEM certificate or key in it, an encrypted
 *      key, a key that is not the certificate's, an expired certificate),
 *      not a handshake that fails later for every client. The check
 *      parses with libcrypto (already linked for the token comparison);
 *      GnuTLS then loads the same bytes. The certificate file may hold a
 *      chain (leaf first); the key is checked against the leaf.
 *  (3) A libmicrohttpd built without TLS is said so plainly
 *      (MHD_is_feature_supported) instead of failing to start.
 *  (4) Only TLS 1.2 and 1.3 are offered.
 *  (5) Without --tls-cert nothing here runs per request: the options are
 *      an empty list and the daemon is started as before (plain HTTP pays
 *      nothing for TLS being possible).
 *  (6) The key's bytes are wiped from memory when the server is freed.
 * Callers: server.c (hd_http_start, hd_http_stop).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <microhttpd.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "server_int.h"

#define TLS_FILE_MAX (1024 * 1024) /* a PEM file bigger than this is not */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* The whole of path, NUL-terminated, into *out (malloc'd). what names it
 * in the error ("certificate", "key"). */
static int
read_pem(char **out, size_t *len, const char *path, const char *what,
    hd_err *err)
{
	FILE *f;
	struct stat sb;
	char *buf;
	size_t n;

	*out = NULL;
	if ((f = fopen(path, "rbe")) == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "cannot read the TLS %s file %s: %s", what, path,
		    strerror(errno));
	if (fstat(fileno(f), &sb) != 0) {
		fclose(f);
		return hd_err_set(err, HD_EINVAL,
		    "cannot read the TLS %s file %s: %s", what, path,
		    strerror(errno));
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    sb.st_size > TLS_FILE_MAX) {
		fclose(f);
		return hd_err_set(err, HD_EINVAL,
		    "the TLS %s file %s is %s", what, path,
		    !S_ISREG(sb.st_mode) ? "not a regular file"
		    : sb.st_size <= 0	 ? "empty"
					 : "too big for a PEM file (over 1 MiB)");
	}
	if ((buf = malloc((size_t)sb.st_size + 1)) == NULL) {
		fclose(f);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	n = fread(buf, 1, (size_t)sb.st_size, f);
	fclose(f);
	if (n != (size_t)sb.st_size) {
		OPENSSL_cleanse(buf, n);
		free(buf);
		return hd_err_set(err, HD_EINVAL,
		    "cannot read the TLS %s file %s: short read", what, path);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* No passphrase is ever given: an encrypted key fails to load (2). */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* (2): the certificate and key parse, match, and the certificate is in
 * date. */
static int
check_pair(const hd_http_config *cfg, const char *cert, size_t cert_len,
    const char *key, size_t key_len, hd_err *err)
{
	BIO *b = NULL;
	X509 *x = NULL;
	EVP_PKEY *k = NULL;
	int rc = 0;

	if ((b = BIO_new_mem_buf(cert, (int)cert_len)) == NULL ||
	    (x = PEM_read_bio_X509(b, NULL, no_passphrase, NULL)) == NULL) {
		rc = hd_err_set(err, HD_EINVAL,
		    "the TLS certificate file %s holds no PEM certificate "
		    "(-----BEGIN CERTIFICATE-----)",
		    cfg->tls_cert);
		goto done;
	}
	if (X509_cmp_current_time(X509_get0_notAfter(x)) <= 0) {
		rc = hd_err_set(err, HD_EINVAL,
		    "the TLS certificate in %s has expired: make a new one",
		    cfg->tls_cert);
		goto done;
	}
	BIO_free(b);
	b = NULL;
	if (strstr(key, "ENCRYPTED") != NULL) {
		rc = hd_err_set(err, HD_EINVAL,
		    "the TLS key file %s is encrypted: huddle serve needs it "
		    "unencrypted (e.g. openssl pkey -in %s -out plain.key), "
		    "readable only by the server's user",
		    cfg->tls_key, cfg->tls_key);
		goto done;
	}
	if ((b = BIO_new_mem_buf(key, (int)key_len)) == NULL ||
	    (k = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL)) ==
		NULL) {
		rc = hd_err_set(err, HD_EINVAL,
		    "the TLS key file %s holds no PEM private key "
		    "(-----BEGIN PRIVATE KEY-----)",
		    cfg->tls_key);
		goto done;
	}
	if (X509_check_private_key(x, k) != 1)
		rc = hd_err_set(err, HD_EINVAL,
		    "the TLS key in %s is not the key of the certificate in %s",
		    cfg->tls_key, cfg->tls_cert);
done:
	if (rc < 0)
		ERR_clear_error(); /* what libcrypto queued: said above */
	EVP_PKEY_free(k);
	X509_free(x);
	BIO_free(b);
	return rc;
}

int
hd_http__tls_load(hd_http_server *srv, const hd_http_config *cfg, hd_err *err)
{
	size_t cert_len = 0, key_len = 0;
	int rc;

	if (cfg->tls_cert == NULL && cfg->tls_key == NULL)
		return 0;
	if (cfg->tls_cert == NULL || cfg->tls_key == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "TLS needs both a certificate and its key (--tls-cert and "
		    "--tls-key)");
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		return hd_err_set(err, HD_EREFUSED,
		    "this libmicrohttpd was built without TLS support "
		    "(GnuTLS), so huddle cannot serve HTTPS: install one built "
		    "with it (Debian's libmicrohttpd12 is), or serve behind a "
		    "TLS proxy");
	if ((rc = read_pem(&srv->tls_cert, &cert_len, cfg->tls_cert,
		 "certificate", err)) < 0 ||
	    (rc = read_pem(&srv->tls_key, &key_len, cfg->tls_key, "key",
		 err)) < 0)
		return rc;
	srv->tls_key_len = key_len;
	return check_pair(cfg, srv->tls_cert, cert_len, srv->tls_key, key_len,
	    err);
}

void
hd_http__tls_options(const hd_http_server *srv, struct MHD_OptionItem *opts)
{
	int n = 0;

	if (srv->tls_cert != NULL) { /* (1), (4) */
		opts[n++] = (struct MHD_OptionItem){
		    MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls_cert};
		opts[n++] = (struct MHD_OptionItem){
		    MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key};
		opts[n++] = (struct MHD_OptionItem){
		    MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES};
	}
	opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
}

void
hd_http__tls_free(hd_http_server *srv)
{
	if (srv->tls_key != NULL)
		OPENSSL_cleanse(srv->tls_key, srv->tls_key_len); /* (6) */
	free(srv->tls_key);
	free(srv->tls_cert);
	srv->tls_key = NULL;
	srv->tls_cert = NULL;
}
