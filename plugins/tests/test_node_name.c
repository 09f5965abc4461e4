/* Tests for plugins/NodeName (upstream node_name_test) and its node-add hint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

static void test_filter(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeName");
	struct sk_node_info *foo = fx_node_info(fx_node("{\"metadata\":{\"name\":\"foo\"}}"), NULL);
	struct sk_pod *none = fx_pod("{\"metadata\":{\"name\":\"p\"}}");
	struct sk_pod *to_foo = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"foo\"}}");
	struct sk_pod *to_bar = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"bar\"}}");
	struct sk_status s = ph_filter(h, pl, none, foo);
	assert_int_equal(s.code, SK_SUCCESS);
	s = ph_filter(h, pl, to_foo, foo);
	assert_int_equal(s.code, SK_SUCCESS);
	s = ph_filter(h, pl, to_bar, foo);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	char *m = ph_message(&s);
	assert_string_equal(m, "node(s) didn't match the requested node name");
	free(m);

	struct sk_event_registration regs[2];
	assert_int_equal(pl->desc->events_to_register(pl, regs, 2), 1);
	assert_int_equal(regs[0].event.action, SK_ACT_ADD);
	assert_int_equal(regs[0].hint(pl, to_foo, NULL, foo->node), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, to_bar, NULL, foo->node), SK_QUEUE_SKIP);
	assert_int_equal(regs[0].hint(pl, none, NULL, foo->node), SK_QUEUE);
	sk_pod_unref(none);
	sk_pod_unref(to_foo);
	sk_pod_unref(to_bar);
	sk_node_info_free(foo);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_filter) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
