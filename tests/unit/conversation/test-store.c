/*
 * test-store.c -- the conversation domain module's own contract
 * (conversation_store.h, cancel_requests.h), where the engine's tests
 * cannot reach it: every move of a delivery names the state it leaves
 * (a repeated or out-of-order move changes nothing), the take-over is a
 * compare-and-set on the owner seen, and the watch's lookup of cancelled
 * conversations says when more than fit were found. The flows themselves
 * (claim, reply, resume, cancel) are test-flow, test-resume and
 * test-cancel's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/cancel_requests.h>

#include "testutil.h"

static void
new_conv(hd_fixture *fx, const char *id, const char *owner)
{
	hd_convstore_new n;
	hd_err err = HD_ERR_INIT;

	memset(&n, 0, sizeof(n));
	n.id = id;
	n.team = "dev";
	n.origin = "test";
	n.message = "hello";
	n.target = "coder";
	n.max_messages = 15;
	n.created_at = 1000;
	n.owner = owner;
	n.owner_pid = 1;
	n.owner_start = 1;
	assert_hd_ok(hd_convstore_insert(fx->st, &n, &err), &err);
}

/* The state of conversation id's only delivery, and when it started. */
static void
delivery(hd_fixture *fx, const char *id, char *state, int64_t *started)
{
	hd_conversation *c = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_conversation_get(&c, fx->st, id, &err), &err);
	assert_int_equal(c->ndeliveries, 1);
	snprintf(state, 16, "%s", c->deliveries[0].state);
	*started = c->deliveries[0].started_at;
	hd_conversation_free(c);
}

static void
test_store__moves_name_the_state_they_leave(void **state)
{
	hd_fixture *fx = *state;
	hd_convstore_claim c;
	hd_err err = HD_ERR_INIT;
	char st[16];
	int64_t started, d;
	int found, busy;

	hd_fixture_team(fx, "dev", "lead", "coder", NULL);
	new_conv(fx, "c1", "e1");
	assert_hd_ok(hd_convstore_enqueue_user(
			 fx->st, "c1", "coder", "hi", 1000, 0, &err),
	    &err);
	memset(&c, 0, sizeof(c));
	/* only the owner's engine sees it */
	assert_hd_ok(
	    hd_convstore_next_queued(&found, &c, fx->st, "coder", "e2", &err),
	    &err);
	assert_int_equal(found, 0);
	assert_hd_ok(
	    hd_convstore_next_queued(&found, &c, fx->st, "coder", "e1", &err),
	    &err);
	assert_int_equal(found, 1);
	assert_string_equal(c.conversation_id, "c1");
	assert_string_equal(c.prompt, "hi");
	d = c.delivery_id;
	free(c.prompt);

	/* queued -> running once: a second start changes nothing */
	assert_hd_ok(hd_convstore_start(fx->st, d, 100, &err), &err);
	assert_hd_ok(hd_convstore_start(fx->st, d, 200, &err), &err);
	delivery(fx, "c1", st, &started);
	assert_string_equal(st, "running");
	assert_int_equal(started, 100);
	assert_hd_ok(
	    hd_convstore_agent_busy(&busy, fx->st, "coder", &err), &err);
	assert_int_equal(busy, 1);

	/* running -> queued once; cancel takes only a running one */
	assert_hd_ok(hd_convstore_requeue(fx->st, d, &err), &err);
	assert_hd_ok(hd_convstore_requeue(fx->st, d, &err), &err);
	assert_hd_ok(hd_convstore_cancel_delivery(fx->st, d, 300, &err), &err);
	delivery(fx, "c1", st, &started);
	assert_string_equal(st, "queued");
	assert_int_equal(started, 0);

	/* a running delivery blocks its agent, and says whose it is */
	assert_hd_ok(hd_convstore_start(fx->st, d, 400, &err), &err);
	memset(&c, 0, sizeof(c));
	assert_hd_ok(
	    hd_convstore_running_for(&found, &c, fx->st, "coder", &err), &err);
	assert_int_equal(found, 1);
	assert_string_equal(c.blocker, "c1");
	assert_string_equal(c.blocker_owner, "e1");
	free(c.blocker_owner);

	/* done is final: no move leaves it */
	assert_hd_ok(hd_convstore_done(fx->st, d, 500, &err), &err);
	assert_hd_ok(hd_convstore_requeue(fx->st, d, &err), &err);
	assert_hd_ok(hd_convstore_requeue_all(fx->st, "c1", &err), &err);
	assert_hd_ok(
	    hd_convstore_cancel_deliveries(fx->st, "c1", 600, &err), &err);
	delivery(fx, "c1", st, &started);
	assert_string_equal(st, "done");
	assert_hd_ok(
	    hd_convstore_agent_busy(&busy, fx->st, "coder", &err), &err);
	assert_int_equal(busy, 0);
}

static void
test_store__adopt_is_compare_and_set(void **state)
{
	hd_fixture *fx = *state;
	hd_convstore_foreign *l = NULL;
	hd_err err = HD_ERR_INIT;
	size_t n;
	int changed;

	hd_fixture_team(fx, "dev", "lead", "coder", NULL);
	new_conv(fx, "c1", "e1");
	/* an owner that is not the one it has: nothing changes */
	assert_hd_ok(
	    hd_convstore_adopt(&changed, fx->st, "c1", "e9", "e2", 2, 2, &err),
	    &err);
	assert_int_equal(changed, 0);
	assert_hd_ok(
	    hd_convstore_adopt(&changed, fx->st, "c1", "e1", "e2", 2, 2, &err),
	    &err);
	assert_int_equal(changed, 1);
	/* the second of two engines that saw e1 loses */
	assert_hd_ok(
	    hd_convstore_adopt(&changed, fx->st, "c1", "e1", "e3", 3, 3, &err),
	    &err);
	assert_int_equal(changed, 0);

	/* released: NULL is the owner to compare with */
	assert_hd_ok(hd_convstore_disown(fx->st, "e2", &err), &err);
	assert_hd_ok(
	    hd_convstore_foreign_list(&l, &n, fx->st, "e3", &err), &err);
	assert_int_equal(n, 1);
	assert_null(l[0].owner);
	hd_convstore_foreign_free(l, n);
	assert_hd_ok(
	    hd_convstore_adopt(&changed, fx->st, "c1", NULL, "e3", 3, 3, &err),
	    &err);
	assert_int_equal(changed, 1);
	assert_hd_ok(
	    hd_convstore_foreign_list(&l, &n, fx->st, "e3", &err), &err);
	assert_int_equal(n, 0);
	hd_convstore_foreign_free(l, n);
}

static void
test_store__cancel_requests(void **state)
{
	hd_fixture *fx = *state;
	char ids[2][HD_CONVERSATION_ID_LEN + 1],
	    all[8][HD_CONVERSATION_ID_LEN + 1];
	hd_convstore_head h;
	hd_err err = HD_ERR_INIT;
	char *by = NULL;
	size_t n;
	int more;

	hd_fixture_team(fx, "dev", "lead", "coder", NULL);
	new_conv(fx, "c1", "e1");
	new_conv(fx, "c2", "e1");
	new_conv(fx, "c3", "e1");
	assert_hd_ok(
	    hd_cancel_request_conversation(&h, fx->st, "c1", "lead", &err),
	    &err);
	free(h.owner);
	/* asking twice is asking once; the first asker stays */
	assert_hd_ok(
	    hd_cancel_request_conversation(&h, fx->st, "c1", NULL, &err), &err);
	free(h.owner);
	assert_hd_ok(
	    hd_cancel_request_conversation(&h, fx->st, "c2", NULL, &err), &err);
	assert_string_equal(h.owner, "e1");
	free(h.owner);
	assert_hd_ok(
	    hd_cancel_request_conversation(&h, fx->st, "c3", NULL, &err), &err);
	free(h.owner);
	assert_hd_ok(hd_cancel_request_by(&by, fx->st, "c1", &err), &err);
	assert_string_equal(by, "lead");
	free(by);
	assert_hd_ok(hd_cancel_request_by(&by, fx->st, "c2", &err), &err);
	assert_null(by);

	/* the watch takes what fits and is told there is more */
	assert_hd_ok(
	    hd_cancel_requests_owned(ids, 2, &n, &more, fx->st, "e1", &err),
	    &err);
	assert_int_equal(n, 2);
	assert_int_equal(more, 1);
	assert_hd_ok(
	    hd_cancel_requests_owned(all, 8, &n, &more, fx->st, "e1", &err),
	    &err);
	assert_int_equal(n, 3);
	assert_int_equal(more, 0);
	assert_hd_ok(
	    hd_cancel_requests_owned(all, 8, &n, &more, fx->st, "e2", &err),
	    &err);
	assert_int_equal(n, 0);

	/* an ended conversation is no longer the watch's, nor cancellable */
	assert_hd_ok(hd_convstore_cancelled(fx->st, "c1", "", 700, &err), &err);
	assert_hd_ok(
	    hd_cancel_requests_owned(all, 8, &n, &more, fx->st, "e1", &err),
	    &err);
	assert_int_equal(n, 2);
	assert_hd_err(
	    hd_cancel_request_conversation(&h, fx->st, "c1", NULL, &err),
	    HD_ECONFLICT, "conversation c1 already ended (cancelled)", &err);
	free(h.owner);
	hd_err_clear(&err);
	assert_hd_err(
	    hd_cancel_request_conversation(&h, fx->st, "nope", NULL, &err),
	    HD_ENOTFOUND, "conversation \"nope\" not found", &err);
	free(h.owner);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_store__moves_name_the_state_they_leave),
	    hd_fixture_test(test_store__adopt_is_compare_and_set),
	    hd_fixture_test(test_store__cancel_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
