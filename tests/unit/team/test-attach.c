/*
 * test-attach.c -- attach URLs (SPEC 10.4): the URL under a base (host and
 * port, or a server's --public-url), its sig verifying for that agent and
 * no other, and the errors for an unknown agent and an overlong host.
 * The signing secret (team/attach.c (1)-(3)): made once, in the store's kv,
 * 32 random bytes differing between two fresh stores; connections racing
 * on a fresh store agree on one; an old home's HUDDLE_HOME/secret is
 * adopted (its URLs still verify, the file is left as it was) unless the
 * store already has one; a malformed file is named; a URL signed through
 * one home verifies through another home on the same database.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <huddle/attach.h>
#include <huddle/util.h>

#include "testutil.h"

static void
test_attach__url_under_a_base_carries_a_verifying_sig(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	const char *want = "https://huddle.example.test/team/mcp?roomTeamId=dev"
			   "&postAuthorAgentId=coder&sig=";
	char *url = NULL, *sig;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(hd_attach_url_base(&url, fx->st,
			 "https://huddle.example.test/team", "coder", &err),
	    &err);
	assert_memory_equal(url, want, strlen(want));
	sig = url + strlen(want);
	assert_int_equal(strlen(sig), HD_ATTACH_SIG_HEX);
	assert_int_equal(hd_attach_verify(fx->st, "dev", "coder", sig), 1);
	assert_int_equal(hd_attach_verify(fx->st, "dev", "manager", sig), 0);
	free(url);
}

static void
test_attach__host_and_port_is_the_same_url_under_http(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char *a = NULL, *b = NULL, host[400];

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(
	    hd_attach_url(&a, fx->st, "127.0.0.1", 7411, "coder", &err), &err);
	assert_hd_ok(hd_attach_url_base(&b, fx->st, "http://127.0.0.1:7411",
			 "coder", &err),
	    &err);
	assert_string_equal(a, b);
	free(a);
	free(b);
	memset(host, 'h', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	a = NULL;
	assert_int_equal(hd_attach_url(&a, fx->st, host, 1, "coder", &err),
	    HD_EINVAL);
	assert_null(a);
}

static void
test_attach__an_unknown_agent_is_named(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char *url = NULL;

	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_hd_err(hd_attach_url_base(&url, fx->st, "http://127.0.0.1:1",
			  "ghost", &err),
	    HD_ENOTFOUND, "agent \"ghost\" not found", &err);
	assert_null(url);
}

/* The kv row the secret lives in (attach.h), or NULL. */
static char *
stored_hex(hd_store *st)
{
	hd_err err = HD_ERR_INIT;
	char *v = NULL;

	assert_hd_ok(hd_store_kv_get(&v, st, "attach.secret", &err), &err);
	return v;
}

static void
hex_of(char out[2 * HD_ATTACH_KEY_LEN + 1],
    const unsigned char key[HD_ATTACH_KEY_LEN])
{
	int i;

	for (i = 0; i < HD_ATTACH_KEY_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", key[i]);
}

static int
all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

/* The sig the pre-upgrade code made with a file's key: computed here with
 * OpenSSL, not through attach.c. */
static void
old_sig(char hex[HD_ATTACH_SIG_HEX + 1], const unsigned char *key,
    const char *team, const char *agent)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	char msg[128];
	int n = snprintf(msg, sizeof(msg), "v1\x1f%s\x1f%s", team, agent);

	assert_non_null(HMAC(EVP_sha256(), key, HD_ATTACH_KEY_LEN,
	    (unsigned char *)msg, (size_t)n, mac, &len));
	assert_int_equal(len, 32);
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
}

static void
write_bytes(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

static void
test_attach__the_secret_is_made_once_in_the_store(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	unsigned char k1[HD_ATTACH_KEY_LEN], k2[HD_ATTACH_KEY_LEN];
	char want[2 * HD_ATTACH_KEY_LEN + 1], path[512], *v;
	struct stat sb;

	assert_null(stored_hex(fx->st));
	assert_hd_ok(hd_attach_key(k1, fx->st, &err), &err);
	assert_false(all_zero(k1, sizeof(k1)));
	v = stored_hex(fx->st);
	assert_non_null(v);
	hex_of(want, k1);
	assert_string_equal(v, want); /* 64 lower-case hex digits */
	free(v);
	assert_hd_ok(hd_attach_key(k2, fx->st, &err), &err);
	assert_memory_equal(k1, k2, sizeof(k1));
	/* nothing is written to the home any more */
	snprintf(path, sizeof(path), "%s/secret", fx->home);
	assert_int_equal(stat(path, &sb), -1);
}

static void
test_attach__two_fresh_stores_get_different_secrets(void **state)
{
	hd_fixture *fx = *state, *other;
	void *st2 = NULL;
	hd_err err = HD_ERR_INIT;
	unsigned char k1[HD_ATTACH_KEY_LEN], k2[HD_ATTACH_KEY_LEN];

	assert_int_equal(hd_fixture_setup(&st2), 0);
	other = st2;
	assert_hd_ok(hd_attach_key(k1, fx->st, &err), &err);
	assert_hd_ok(hd_attach_key(k2, other->st, &err), &err);
	assert_false(all_zero(k1, sizeof(k1)));
	assert_false(all_zero(k2, sizeof(k2)));
	assert_memory_not_equal(k1, k2, sizeof(k1));
	hd_fixture_teardown(&st2);
}

#define RACERS 4
#define RACE_ROUNDS 8

typedef struct {
	const char *home;
	pthread_barrier_t *go;
	unsigned char key[HD_ATTACH_KEY_LEN];
	int rc;
	hd_err err;
} racer;

static void *
race(void *arg)
{
	racer *r = arg;
	hd_store *st = NULL;

	r->err = (hd_err)HD_ERR_INIT;
	r->rc = hd_store_open(&st, r->home, &r->err);
	pthread_barrier_wait(r->go);
	if (r->rc == 0)
		r->rc = hd_attach_key(r->key, st, &r->err);
	hd_store_close(st);
	return NULL;
}

static void
test_attach__connections_racing_on_a_fresh_store_agree(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	pthread_barrier_t go;
	pthread_t th[RACERS];
	racer r[RACERS];
	unsigned char stored[HD_ATTACH_KEY_LEN], prev[HD_ATTACH_KEY_LEN];
	int round, i;

	memset(prev, 0, sizeof(prev));
	for (round = 0; round < RACE_ROUNDS; round++) {
		/* a fresh store again: no secret */
		assert_hd_ok(hd_store_kv_delete(fx->st, "attach.secret", 0, &err),
		    &err);
		assert_int_equal(pthread_barrier_init(&go, NULL, RACERS), 0);
		for (i = 0; i < RACERS; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			r[i].home = fx->home;
			r[i].go = &go;
			assert_int_equal(
			    pthread_create(&th[i], NULL, race, &r[i]), 0);
		}
		for (i = 0; i < RACERS; i++)
			assert_int_equal(pthread_join(th[i], NULL), 0);
		pthread_barrier_destroy(&go);
		assert_hd_ok(hd_attach_key(stored, fx->st, &err), &err);
		for (i = 0; i < RACERS; i++) {
			assert_hd_ok(r[i].rc, &r[i].err);
			assert_memory_equal(r[i].key, stored, sizeof(stored));
		}
		/* each round made a new one: not a constant */
		assert_memory_not_equal(stored, prev, sizeof(stored));
		memcpy(prev, stored, sizeof(prev));
	}
}

static void
test_attach__an_old_homes_file_secret_is_adopted(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	unsigned char file[HD_ATTACH_KEY_LEN], key[HD_ATTACH_KEY_LEN];
	char path[512], sig[HD_ATTACH_SIG_HEX + 1], want[2 * HD_ATTACH_KEY_LEN + 1];
	char *url = NULL, *v, *after;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(hd_random_bytes(file, sizeof(file), &err), &err);
	snprintf(path, sizeof(path), "%s/secret", fx->home);
	write_bytes(path, file, sizeof(file));
	/* a URL the old code signed with the file still verifies */
	old_sig(sig, file, "dev", "coder");
	assert_int_equal(hd_attach_verify(fx->st, "dev", "coder", sig), 1);
	v = stored_hex(fx->st);
	hex_of(want, file);
	assert_string_equal(v, want);
	free(v);
	assert_hd_ok(hd_attach_key(key, fx->st, &err), &err);
	assert_memory_equal(key, file, sizeof(key));
	assert_hd_ok(hd_attach_url_base(&url, fx->st, "http://127.0.0.1:1",
			 "coder", &err),
	    &err);
	assert_string_equal(strstr(url, "&sig=") + 5, sig);
	free(url);
	/* the file is left as it was */
	after = hd_read_text(path);
	assert_memory_equal(after, file, sizeof(file));
	free(after);
}

static void
test_attach__a_store_with_a_secret_ignores_the_file(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	unsigned char k1[HD_ATTACH_KEY_LEN], k2[HD_ATTACH_KEY_LEN];
	unsigned char file[HD_ATTACH_KEY_LEN];
	char path[512];

	assert_hd_ok(hd_attach_key(k1, fx->st, &err), &err);
	memset(file, 0x5a, sizeof(file));
	snprintf(path, sizeof(path), "%s/secret", fx->home);
	write_bytes(path, file, sizeof(file));
	assert_hd_ok(hd_attach_key(k2, fx->st, &err), &err);
	assert_memory_equal(k1, k2, sizeof(k1));
}

static void
test_attach__a_file_secret_of_the_wrong_size_is_named(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	unsigned char key[HD_ATTACH_KEY_LEN], big[HD_ATTACH_KEY_LEN + 1];
	char path[512];

	snprintf(path, sizeof(path), "%s/secret", fx->home);
	write_bytes(path, "short", 5);
	assert_int_equal(hd_attach_key(key, fx->st, &err), HD_ERR);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "is not a 32-byte secret"));
	assert_null(stored_hex(fx->st));
	assert_int_equal(hd_attach_verify(fx->st, "dev", "coder",
			     "00000000000000000000000000000000"
			     "00000000000000000000000000000000"),
	    0);
	memset(big, 1, sizeof(big));
	write_bytes(path, big, sizeof(big));
	err = (hd_err)HD_ERR_INIT;
	assert_int_equal(hd_attach_key(key, fx->st, &err), HD_ERR);
	assert_non_null(strstr(err.msg, "is not a 32-byte secret"));
	assert_null(stored_hex(fx->st));
}

static void
test_attach__a_spoiled_stored_secret_is_an_error(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	unsigned char key[HD_ATTACH_KEY_LEN];

	assert_hd_ok(hd_store_kv_put(fx->st, "attach.secret", "ABCD", &err),
	    &err);
	assert_int_equal(hd_attach_key(key, fx->st, &err), HD_ERR);
	assert_non_null(strstr(err.msg,
	    "the store's attach secret (kv attach.secret) is not 64 hex digits"));
}

/*
 * A second node: another home on the same database. With HUDDLE_STORE
 * set (PostgreSQL) every home opens the one database; on SQLite the
 * second home's huddle.db is a symbolic link to the first's, a second
 * live connection to the same file. The second home has its own file
 * secret, which must not matter: the database has one.
 */
static void
test_attach__a_url_signed_through_one_home_verifies_through_another(
    void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	const char *store = getenv("HUDDLE_STORE");
	unsigned char k1[HD_ATTACH_KEY_LEN], k2[HD_ATTACH_KEY_LEN];
	unsigned char other[HD_ATTACH_KEY_LEN];
	char home2[300], db[400], link[400], path[400];
	char *url = NULL, *sig;
	hd_store *st2 = NULL;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(hd_attach_url_base(&url, fx->st, "http://127.0.0.1:1",
			 "coder", &err),
	    &err);
	sig = strstr(url, "&sig=") + 5;
	snprintf(home2, sizeof(home2), "%s-node2", fx->home);
	assert_int_equal(mkdir(home2, 0700), 0);
	memset(other, 0x33, sizeof(other));
	snprintf(path, sizeof(path), "%s/secret", home2);
	write_bytes(path, other, sizeof(other));
	if (store == NULL || *store == '\0') {
		snprintf(db, sizeof(db), "%s/huddle.db", fx->home);
		snprintf(link, sizeof(link), "%s/huddle.db", home2);
		assert_int_equal(symlink(db, link), 0);
	}
	assert_hd_ok(hd_store_open(&st2, home2, &err), &err);
	assert_int_equal(hd_attach_verify(st2, "dev", "coder", sig), 1);
	assert_int_equal(hd_attach_verify(st2, "dev", "manager", sig), 0);
	assert_hd_ok(hd_attach_key(k1, fx->st, &err), &err);
	assert_hd_ok(hd_attach_key(k2, st2, &err), &err);
	assert_memory_equal(k1, k2, sizeof(k1));
	assert_memory_not_equal(k2, other, sizeof(k2));
	hd_store_close(st2);
	hd_rm_rf(home2);
	free(url);
}

#define T(f) cmocka_unit_test_setup_teardown(f, hd_fixture_setup, \
    hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_attach__url_under_a_base_carries_a_verifying_sig),
		T(test_attach__host_and_port_is_the_same_url_under_http),
		T(test_attach__an_unknown_agent_is_named),
		T(test_attach__the_secret_is_made_once_in_the_store),
		T(test_attach__two_fresh_stores_get_different_secrets),
		T(test_attach__connections_racing_on_a_fresh_store_agree),
		T(test_attach__an_old_homes_file_secret_is_adopted),
		T(test_attach__a_store_with_a_secret_ignores_the_file),
		T(test_attach__a_file_secret_of_the_wrong_size_is_named),
		T(test_attach__a_spoiled_stored_secret_is_an_error),
		T(test_attach__a_url_signed_through_one_home_verifies_through_another),
	};
	return cmocka_run_group_tests_name("unit/team/attach", tests, NULL,
	    NULL);
}
