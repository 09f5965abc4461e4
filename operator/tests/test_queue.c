/* Tests for operator/queue.c: the wrapper keeps kube_workqueue's semantics the controller relies
 * on (one queued copy per key, rate-limited requeue counting, forget, shutdown). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/queue.h"

static void test_dedup_requeue_forget(void **state)
{
	(void)state;
	struct op_queue *q = op_queue_new("test", NULL);
	assert_non_null(q);
	op_queue_add(q, "reconcile");
	op_queue_add(q, "reconcile");
	bool shutdown = true;
	char *k = op_queue_get(q, 1000000000LL, &shutdown);
	assert_non_null(k);
	assert_string_equal(k, "reconcile");
	/* only one copy was queued */
	char *none = op_queue_get(q, 1000000LL, &shutdown);
	assert_null(none);
	assert_false(shutdown);
	op_queue_add_rate_limited(q, k);
	op_queue_add_rate_limited(q, k);
	assert_int_equal(op_queue_num_requeues(q, k), 2);
	op_queue_forget(q, k);
	assert_int_equal(op_queue_num_requeues(q, k), 0);
	op_queue_done(q, k);
	free(k);
	op_queue_shut_down(q);
	k = op_queue_get(q, 1000000000LL, &shutdown);
	/* a key delayed by the rate limiter is dropped at shutdown; an immediate one may still come */
	if (k) {
		op_queue_done(q, k);
		free(k);
		k = op_queue_get(q, 1000000LL, &shutdown);
	}
	assert_null(k);
	assert_true(shutdown);
	op_queue_free(q);
	op_queue_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup_requeue_forget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
