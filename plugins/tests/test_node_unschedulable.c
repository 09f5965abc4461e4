/* Tests for plugins/NodeUnschedulable (upstream node_unschedulable_test) and its hints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

#define TOLERATE "{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\"},\"spec\":{\"tolerations\":[{\"key\":\"node.kubernetes.io/unschedulable\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}}"

static void test_filter(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeUnschedulable");
	struct sk_pod *plain = fx_pod("{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\"}}"), *tol = fx_pod(TOLERATE);
	struct sk_node_info *unsched = fx_node_info(fx_node("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"unschedulable\":true}}"), NULL);
	struct sk_node_info *sched = fx_node_info(fx_node("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"unschedulable\":false}}"), NULL);
	struct sk_node_info *none = fx_node_info(NULL, NULL);

	struct sk_status s = ph_filter(h, pl, plain, unsched);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	char *m = ph_message(&s);
	assert_string_equal(m, "node(s) were unschedulable");
	free(m);
	s = ph_filter(h, pl, tol, unsched);
	assert_int_equal(s.code, SK_SUCCESS);
	s = ph_filter(h, pl, plain, sched);
	assert_int_equal(s.code, SK_SUCCESS);
	s = ph_filter(h, pl, plain, none);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	m = ph_message(&s);
	assert_string_equal(m, "node(s) had unknown conditions");
	free(m);

	struct sk_event_registration regs[4];
	int n = pl->desc->events_to_register(pl, regs, 4);
	assert_int_equal(n, 2);
	assert_int_equal(regs[0].event.action, SK_ACT_ADD | SK_ACT_UPDATE_NODE_TAINT);
	assert_int_equal(regs[0].hint(pl, plain, NULL, sched->node), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, plain, NULL, unsched->node), SK_QUEUE_SKIP);
	assert_int_equal(regs[0].hint(pl, plain, unsched->node, sched->node), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, plain, sched->node, sched->node), SK_QUEUE_SKIP);
	/* isSchedulableAfterNodeChange ignores the pod's tolerations: an unschedulable node added, or
	 * one that stays unschedulable, never queues; turning schedulable always does. */
	assert_int_equal(regs[0].hint(pl, tol, NULL, unsched->node), SK_QUEUE_SKIP);
	assert_int_equal(regs[0].hint(pl, tol, unsched->node, sched->node), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, tol, unsched->node, unsched->node), SK_QUEUE_SKIP);
	assert_int_equal(regs[1].hint(pl, plain, plain, tol), SK_QUEUE);
	assert_int_equal(regs[1].hint(pl, plain, plain, plain), SK_QUEUE_SKIP);

	sk_node_info_free(unsched);
	sk_node_info_free(sched);
	sk_node_info_free(none);
	sk_pod_unref(plain);
	sk_pod_unref(tol);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_filter) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
