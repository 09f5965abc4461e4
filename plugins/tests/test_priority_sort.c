/* Tests for plugins/PrioritySort (upstream priority_sort_test): priority first, then timestamp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

static void test_less(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "PrioritySort");
	struct sk_pod *low = fx_pod("{\"metadata\":{\"name\":\"low\"},\"spec\":{\"priority\":10}}");
	struct sk_pod *high = fx_pod("{\"metadata\":{\"name\":\"high\"},\"spec\":{\"priority\":100}}");
	struct sk_pod *nil = fx_pod("{\"metadata\":{\"name\":\"nil\"}}");
	struct sk_queued_pod a = { .pod = low, .timestamp_ns = 1 }, b = { .pod = high, .timestamp_ns = 2 };
	struct sk_queued_pod c = { .pod = low, .timestamp_ns = 3 }, d = { .pod = nil, .timestamp_ns = 0 };
	assert_false(pl->desc->less(pl, &a, &b)); /* p1.priority less than p2.priority */
	assert_true(pl->desc->less(pl, &b, &a));  /* p1.priority greater than p2.priority */
	assert_true(pl->desc->less(pl, &a, &c));  /* equal priority, p1 added earlier */
	assert_false(pl->desc->less(pl, &c, &a));
	assert_false(pl->desc->less(pl, &a, &a));
	assert_true(pl->desc->less(pl, &a, &d));  /* nil priority counts as 0 */
	sk_pod_unref(low);
	sk_pod_unref(high);
	sk_pod_unref(nil);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_less) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
