/* Tests for plugins/SchedulingGates (upstream scheduling_gates_test) and its hint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

static void test_pre_enqueue(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "SchedulingGates");
	struct sk_pod *none = fx_pod("{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\"}}");
	struct sk_pod *gated = fx_pod("{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\"},\"spec\":{\"schedulingGates\":"
				      "[{\"name\":\"foo\"},{\"name\":\"bar\"}]}}");
	struct sk_status s = pl->desc->pre_enqueue(pl, none);
	assert_int_equal(s.code, SK_SUCCESS);
	s = pl->desc->pre_enqueue(pl, gated);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	char *m = ph_message(&s);
	assert_string_equal(m, "waiting for scheduling gates: [foo bar]");
	free(m);

	struct sk_event_registration regs[2];
	assert_int_equal(pl->desc->events_to_register(pl, regs, 2), 1);
	assert_int_equal(regs[0].event.resource, SK_EV_POD);
	assert_int_equal(regs[0].event.action, SK_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED);
	struct sk_pod *other = fx_pod("{\"metadata\":{\"name\":\"q\",\"uid\":\"u2\"}}");
	assert_int_equal(regs[0].hint(pl, gated, gated, none), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, gated, other, other), SK_QUEUE_SKIP);
	sk_pod_unref(other);
	sk_pod_unref(none);
	sk_pod_unref(gated);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_pre_enqueue) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
