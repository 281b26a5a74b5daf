/*
 * memo.c -- values derived from stored text, kept per connection.
 *
 * Why. Some rows hold JSON that a caller parses every time it reads them:
 * an exchange parses each speaker's turn state and runtime config, about
 * 28k and 26k instructions with Jansson, a tenth of a turn's engine time,
 * though a long-lived process (the server) finds them unchanged since it
 * last read or wrote them. The memo keeps the parse next to the text it
 * came from.
 *
 *  (1) A value is handed out only for the exact text it was derived from:
 *      the caller reads the text from the database every time and the memo
 *      compares it byte for byte, so a hit is what deriving again would
 *      give. Nothing is trusted that was not just read.
 *  (2) Per connection, like the statement cache: used by the connection's
 *      one thread at a time, so no lock; nothing is shared across
 *      connections or processes, and nothing global.
 *  (3) Bounded: at HD_STORE_MEMO_MAX entries the memo starts over. Values
 *      are owned by the memo and freed with their free function when
 *      replaced, dropped or closed; a value handed out is lent until the
 *      next call on the same memo.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define MEMO_SLOTS (2 * HD_STORE_MEMO_MAX) /* a power of two */

typedef struct memo_entry {
	char *key;
	char *text;
	size_t text_len;
	void *value;
	hd_store_memo_free_fn free_fn;
} memo_entry;

struct hd_store_memo {
	memo_entry slots[MEMO_SLOTS];
	size_t n;
};

/* FNV-1a: the keys are short and ours, not an attacker's. */
static size_t
memo_hash(const char *key)
{
	uint64_t h = 1469598103934665603ull;

	for (; *key != '\0'; key++) {
		h ^= (unsigned char)*key;
		h *= 1099511628211ull;
	}
	return (size_t)h;
}

/* The slot of key, or the empty slot where it would go. */
static memo_entry *
memo_slot(hd_store_memo *m, const char *key)
{
	size_t i = memo_hash(key) & (MEMO_SLOTS - 1);

	while (m->slots[i].key != NULL && strcmp(m->slots[i].key, key) != 0)
		i = (i + 1) & (MEMO_SLOTS - 1);
	return &m->slots[i];
}

static void
entry_clear(memo_entry *e)
{
	if (e->value != NULL && e->free_fn != NULL)
		e->free_fn(e->value);
	free(e->key);
	free(e->text);
	memset(e, 0, sizeof(*e));
}

static void
memo_clear(hd_store_memo *m)
{
	size_t i;

	for (i = 0; i < MEMO_SLOTS; i++)
		if (m->slots[i].key != NULL)
			entry_clear(&m->slots[i]);
	m->n = 0;
}

const void *
hd_store__memo_get(hd_store_memo *m, const char *key, const char *text)
{
	memo_entry *e;
	size_t len;

	if (m == NULL || text == NULL)
		return NULL;
	e = memo_slot(m, key);
	if (e->key == NULL)
		return NULL;
	len = strlen(text);
	return len == e->text_len && memcmp(e->text, text, len) == 0 ? e->value
								     : NULL;
}

void
hd_store__memo_put(hd_store_memo *m, const char *key, const char *text,
    void *value, hd_store_memo_free_fn free_fn)
{
	memo_entry *e, fresh;

	if (m == NULL || text == NULL) {
		if (value != NULL && free_fn != NULL)
			free_fn(value);
		return;
	}
	memset(&fresh, 0, sizeof(fresh));
	if ((fresh.key = strdup(key)) == NULL ||
	    (fresh.text = strdup(text)) == NULL) {
		free(fresh.key);
		if (value != NULL && free_fn != NULL)
			free_fn(value);
		return; /* a memo that cannot grow is only slower */
	}
	fresh.text_len = strlen(text);
	fresh.value = value;
	fresh.free_fn = free_fn;
	e = memo_slot(m, key);
	if (e->key != NULL) { /* refilled at once: no probe chain breaks */
		entry_clear(e);
		m->n--;
	} else if (m->n == HD_STORE_MEMO_MAX) { /* (3) */
		memo_clear(m);
		e = memo_slot(m, key);
	}
	*e = fresh;
	m->n++;
}

hd_store_memo *
hd_store__memo_new(void)
{
	return calloc(1, sizeof(hd_store_memo));
}

void
hd_store__memo_free(hd_store_memo *m)
{
	if (m == NULL)
		return;
	memo_clear(m);
	free(m);
}
