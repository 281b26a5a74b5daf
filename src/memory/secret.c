/*
 * secret.c -- what a secret looks like (memory.h: hd_memory_secret), so a
 * fact that carries one is refused before it is stored.
 *  (1) Each pattern is a POSIX extended regular expression with a name
 *      the refusal shows ("an Anthropic API key (sk-ant-...)"); the
 *      refusal never shows the text that matched.
 *  (2) A key-shaped token must start a word (no letter, digit, '_' or
 *      '-' before it) and, where the pattern says so, hold a digit: the
 *      tokens the services issue are random, so "sk-learn-is-a-library"
 *      or "Bearer authentication-is-explained" are words, not keys. A
 *      first match that fails that is skipped and the search goes on
 *      after it.
 *  (3) The patterns are compiled once per process (pthread_once) and
 *      only read afterwards (regexec is safe on several threads).
 *  (4) Pure: no store, no output. Specific shapes first (sk-ant- before
 *      sk-), so the name is the most precise one.
 * Callers: memory.c (hd_memory_save), tests/unit/memory.
 */
#include <pthread.h>
#include <regex.h>
#include <string.h>

#include <huddle/memory.h>

/* a key-shaped token starts a word (2) */
#define WORD_START "(^|[^A-Za-z0-9_-])"

static const struct {
	const char *name;
	const char *re;
	int needs_digit; /* (2) */
} patterns[] = {
    {"an Anthropic API key (sk-ant-...)",
	WORD_START "sk-ant-[A-Za-z0-9_-]{16,}", 1},
    {"an OpenAI-style API key (sk-...)",
	WORD_START "sk-[A-Za-z0-9_-]{20,}", 1},
    {"a GitHub token (ghp_...)", WORD_START "gh[pousr]_[A-Za-z0-9]{30,}",
	1},
    {"a GitHub fine-grained token (github_pat_...)",
	WORD_START "github_pat_[A-Za-z0-9_]{22,}", 1},
    {"an AWS access key id (AKIA...)",
	WORD_START "(AKIA|ASIA)[A-Z0-9]{16}([^A-Za-z0-9]|$)", 1},
    {"an AWS secret access key (aws_secret_access_key=...)",
	"[Aa][Ww][Ss]_[Ss][Ee][Cc][Rr][Ee][Tt]_[Aa][Cc][Cc][Ee][Ss][Ss]_"
	"[Kk][Ee][Yy][\"' ]*[:=][\"' ]*[A-Za-z0-9/+]{40}",
	0},
    {"a Slack token (xoxb-...)", WORD_START "xox[abposr]-[A-Za-z0-9-]{10,}",
	1},
    {"a Google API key (AIza...)", WORD_START "AIza[0-9A-Za-z_-]{35}", 0},
    {"a Stripe secret key (sk_live_...)",
	WORD_START "[rs]k_(live|test)_[0-9A-Za-z]{16,}", 1},
    {"a PEM private key (-----BEGIN ... PRIVATE KEY-----)",
	"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----", 0},
    {"a bearer token (Bearer ...)",
	WORD_START "[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+[A-Za-z0-9._~+/-]{16,}", 1},
    {"a JSON Web Token (eyJ...)",
	WORD_START "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\."
		   "[A-Za-z0-9_-]{8,}",
	0},
};

#define NPATTERNS (sizeof(patterns) / sizeof(patterns[0]))

static regex_t compiled[NPATTERNS];
static int ok[NPATTERNS];
static pthread_once_t compile_once = PTHREAD_ONCE_INIT;

static void
compile(void)
{
	size_t i;

	for (i = 0; i < NPATTERNS; i++)
		ok[i] = regcomp(&compiled[i], patterns[i].re, REG_EXTENDED) == 0;
}

static int
has_digit(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] >= '0' && s[i] <= '9')
			return 1;
	return 0;
}

/* 1 when pattern i matches somewhere in text (2). */
static int
matches(size_t i, const char *text)
{
	regmatch_t m[1];
	const char *p = text;
	int flags = 0;

	while (*p != '\0' && regexec(&compiled[i], p, 1, m, flags) == 0) {
		if (!patterns[i].needs_digit ||
		    has_digit(p + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so)))
			return 1;
		/* skip this match; what follows is no longer a line start */
		p += m[0].rm_eo > m[0].rm_so ? m[0].rm_eo : m[0].rm_so + 1;
		flags = REG_NOTBOL;
	}
	return 0;
}

const char *
hd_memory_secret(const char *text)
{
	size_t i;

	pthread_once(&compile_once, compile);
	for (i = 0; i < NPATTERNS; i++)
		if (ok[i] && matches(i, text))
			return patterns[i].name;
	return NULL;
}
