/*
 * test-secret.c -- the secret patterns a fact is refused for
 * (src/memory/secret.c): each pattern on a token of its shape, anywhere
 * in a text, and the near misses that must pass -- words that share a
 * prefix, tokens too short or without a digit, a prefix inside a word.
 * The tokens below are made up: the shapes of real ones, not real ones.
 */
#include <string.h>

#include <huddle/memory.h>

#include "testutil.h"

#define ANTHROPIC "an Anthropic API key (sk-ant-...)"
#define OPENAI "an OpenAI-style API key (sk-...)"
#define GITHUB "a GitHub token (ghp_...)"
#define GITHUB_PAT "a GitHub fine-grained token (github_pat_...)"
#define AWS "an AWS access key id (AKIA...)"
#define AWS_SECRET "an AWS secret access key (aws_secret_access_key=...)"
#define SLACK "a Slack token (xoxb-...)"
#define GOOGLE "a Google API key (AIza...)"
#define STRIPE "a Stripe secret key (sk_live_...)"
#define PEM "a PEM private key (-----BEGIN ... PRIVATE KEY-----)"
#define BEARER "a bearer token (Bearer ...)"
#define JWT "a JSON Web Token (eyJ...)"

static const struct {
	const char *text;
	const char *want; /* NULL: not a secret */
} cases[] = {
    /* each pattern, alone and inside a sentence */
    {"sk-ant-api03-Xy7Qm2pLk9Rt4Vn8Bc3Df6Gh", ANTHROPIC},
    {"use key sk-ant-admin01-a1b2c3d4e5f6g7h8i9 for prod", ANTHROPIC},
    {"sk-proj-4fG7hJ9kL2mN5pQ8rS1tV3wX6yZ0", OPENAI},
    {"OPENAI_API_KEY=sk-4fG7hJ9kL2mN5pQ8rS1tV3wX", OPENAI},
    {"token ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R", GITHUB},
    {"gho_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R", GITHUB},
    {"github_pat_11ABCDEFG0123456789_abcdefghijklmnop", GITHUB_PAT},
    {"aws id AKIAIOSFODNN7EXAMPLE in the config", AWS},
    {"ASIA4EXAMPLE7KEY9XYZ", AWS},
    {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	AWS_SECRET},
    {"AWS_SECRET_ACCESS_KEY: \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
	AWS_SECRET},
    {"the bot uses xoxb-1234567890-abcdefghij", SLACK},
    {"xoxp-12345-67890-abcdef", SLACK},
    {"AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", GOOGLE},
    {"stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", STRIPE},
    {"rk_test_4eC39HqLyjWDarjtT1zdp7dc", STRIPE},
    {"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
	PEM},
    {"-----BEGIN RSA PRIVATE KEY-----", PEM},
    {"here: -----BEGIN OPENSSH PRIVATE KEY-----", PEM},
    {"-----BEGIN PGP PRIVATE KEY BLOCK-----", PEM},
    {"Authorization: Bearer abc123def456ghi789jkl", BEARER},
    {"curl -H 'authorization: bearer 9f8e7d6c5b4a3f2e1d0c'", BEARER},
    {"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r",
	JWT},
    /* a first look-alike does not hide a real key after it */
    {"sk-learn-model-selection-guide then sk-4fG7hJ9kL2mN5pQ8rS1tV3wX",
	OPENAI},

    /* near misses */
    {"the staging DB is on port 5433", NULL},
    {"sk-learn-model-selection-guide is a page", NULL}, /* no digit */
    {"sk-ant-short1", NULL},				/* too short */
    {"ask-ant-api03-Xy7Qm2pLk9Rt4Vn8Bc3Df6Gh", NULL}, /* inside a word */
    {"task-4fG7hJ9kL2mN5pQ8rS1tV3wX", NULL},	     /* inside a word */
    {"ghp_short123", NULL},
    {"github_pat_short1", NULL},
    {"AKIA1234", NULL},				   /* too short */
    {"AKIAIOSFODNN7EXAMPLEX", NULL},		   /* too long */
    {"AKIAABCDEFGHIJKLMNOP", NULL},		   /* no digit */
    {"aws_secret_access_key is in the vault", NULL},
    {"xoxb-", NULL},
    {"xoxb-abcdefghijklmnop", NULL}, /* no digit */
    {"AIzaShort", NULL},
    {"sk_live_short", NULL},
    {"-----BEGIN PUBLIC KEY-----", NULL},
    {"-----BEGIN CERTIFICATE-----", NULL},
    {"the private key is in 1Password", NULL},
    {"Bearer tokens go in the Authorization header", NULL},
    {"use Bearer authentication-is-explained-here", NULL}, /* no digit */
    {"Bearer abc123", NULL},				    /* too short */
    {"eyJhbGciOi.eyJzdWIi", NULL}, /* two parts, short */
    {"", NULL},
};

static void
test_secret__each_pattern_and_its_near_misses(void **state)
{
	size_t i;
	const char *got;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = hd_memory_secret(cases[i].text);
		if ((got == NULL) != (cases[i].want == NULL) ||
		    (got != NULL && strcmp(got, cases[i].want) != 0))
			fail_msg("case %zu [%s]: got %s, want %s", i,
			    cases[i].text, got ? got : "(none)",
			    cases[i].want ? cases[i].want : "(none)");
	}
}

/* Every pattern has a case: a pattern that failed to compile would be
 * skipped silently, so each name must be answered at least once. */
static void
test_secret__every_pattern_is_live(void **state)
{
	static const char *const names[] = {ANTHROPIC, OPENAI, GITHUB,
	    GITHUB_PAT, AWS, AWS_SECRET, SLACK, GOOGLE, STRIPE, PEM, BEARER,
	    JWT, NULL};
	size_t i, j;
	int seen;

	(void)state;
	for (j = 0; names[j] != NULL; j++) {
		seen = 0;
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const char *got = hd_memory_secret(cases[i].text);

			seen |= got != NULL && strcmp(got, names[j]) == 0;
		}
		if (!seen)
			fail_msg("no case answered %s", names[j]);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_secret__each_pattern_and_its_near_misses),
	    cmocka_unit_test(test_secret__every_pattern_is_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
