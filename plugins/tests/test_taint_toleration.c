/* Tests for plugins/TaintToleration: Filter cases from upstream taint_toleration_test (with the
 * latest v1.34 reason string), the score example (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go), and the queueing hints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

static struct sk_node *tainted(const char *name, const char *taints)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"taints\":[%s]}}", name, taints);
	return fx_node(buf);
}

static struct sk_pod *tolerating(const char *tolerations)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"p\",\"uid\":\"u1\"},\"spec\":{\"tolerations\":[%s]}}",
		 tolerations);
	return fx_pod(buf);
}

struct filter_case {
	const char *name, *tolerations, *taints;
	bool fits;
};

static const struct filter_case filter_cases[] = {
	{ "no tolerations, a NoSchedule taint", "", "{\"key\":\"dedicated\",\"value\":\"user1\",\"effect\":\"NoSchedule\"}",
	  false },
	{ "toleration matches", "{\"key\":\"dedicated\",\"value\":\"user1\",\"effect\":\"NoSchedule\"}",
	  "{\"key\":\"dedicated\",\"value\":\"user1\",\"effect\":\"NoSchedule\"}", true },
	{ "toleration value differs", "{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"user2\",\"effect\":\"NoSchedule\"}",
	  "{\"key\":\"dedicated\",\"value\":\"user1\",\"effect\":\"NoSchedule\"}", false },
	{ "Exists ignores the value", "{\"key\":\"foo\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}",
	  "{\"key\":\"foo\",\"value\":\"bar\",\"effect\":\"NoSchedule\"}", true },
	{ "empty effect tolerates all effects", "{\"key\":\"foo\",\"operator\":\"Equal\",\"value\":\"bar\"}",
	  "{\"key\":\"foo\",\"value\":\"bar\",\"effect\":\"NoExecute\"}", true },
	{ "empty key with Exists tolerates everything", "{\"operator\":\"Exists\"}",
	  "{\"key\":\"a\",\"value\":\"b\",\"effect\":\"NoSchedule\"},{\"key\":\"c\",\"effect\":\"NoExecute\"}", true },
	{ "effect mismatch", "{\"key\":\"foo\",\"operator\":\"Equal\",\"value\":\"bar\",\"effect\":\"PreferNoSchedule\"}",
	  "{\"key\":\"foo\",\"value\":\"bar\",\"effect\":\"NoSchedule\"}", false },
	{ "PreferNoSchedule taints never filter", "", "{\"key\":\"foo\",\"value\":\"bar\",\"effect\":\"PreferNoSchedule\"}",
	  true },
	{ "second taint untolerated", "{\"key\":\"a\",\"operator\":\"Exists\"}",
	  "{\"key\":\"a\",\"effect\":\"NoSchedule\"},{\"key\":\"b\",\"effect\":\"NoExecute\"}", false },
};

static void test_filter(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "TaintToleration");
	for (size_t i = 0; i < sizeof(filter_cases) / sizeof(filter_cases[0]); i++) {
		const struct filter_case *c = &filter_cases[i];
		struct sk_node_info *ni = fx_node_info(tainted("n", c->taints), NULL);
		struct sk_pod *p = tolerating(c->tolerations);
		struct sk_status s = ph_filter(h, pl, p, ni);
		enum sk_code code = s.code;
		char *m = ph_message(&s);
		if (c->fits ? code != SK_SUCCESS
			    : (code != SK_UNSCHEDULABLE_AND_UNRESOLVABLE || strcmp(m, "node(s) had untolerated taint(s)"))) {
			print_error("case %s: got %s \"%s\"\n", c->name, sk_code_string(code), m);
			free(m);
			fail();
		}
		free(m);
		sk_pod_unref(p);
		sk_node_info_free(ni);
	}
	ph_free(h);
}

static void test_score(void **state)
{
	(void)state;
	/* "the more intolerable taints a node has, the lower score it gets": 100, 50, 0 */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(tainted("nodeA", ""), NULL),
				       fx_node_info(tainted("nodeB", "{\"key\":\"cpu-type\",\"value\":\"arm64\",\"effect\":\"PreferNoSchedule\"}"), NULL),
				       fx_node_info(tainted("nodeC", "{\"key\":\"cpu-type\",\"value\":\"arm64\",\"effect\":\"PreferNoSchedule\"},"
								     "{\"key\":\"disk-type\",\"value\":\"ssd\",\"effect\":\"PreferNoSchedule\"}"),
						    NULL),
				       NULL));
	struct sk_pod *p = tolerating("{\"key\":\"foo\",\"operator\":\"Equal\",\"value\":\"bar\",\"effect\":\"PreferNoSchedule\"}");
	int64_t got[3];
	ph_scores(h, ph_plugin(h, "TaintToleration"), p, got);
	assert_int_equal(got[0], 100);
	assert_int_equal(got[1], 50);
	assert_int_equal(got[2], 0);
	sk_pod_unref(p);

	/* NoSchedule tolerations do not count for scoring; a tolerated PreferNoSchedule taint is free */
	p = tolerating("{\"key\":\"cpu-type\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"},"
		       "{\"key\":\"disk-type\",\"operator\":\"Exists\"}");
	ph_scores(h, ph_plugin(h, "TaintToleration"), p, got);
	assert_int_equal(got[0], 100);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], 0);
	sk_pod_unref(p);

	/* no untolerated taints anywhere: every node 100 */
	p = tolerating("{\"operator\":\"Exists\"}");
	ph_scores(h, ph_plugin(h, "TaintToleration"), p, got);
	assert_int_equal(got[0], 100);
	assert_int_equal(got[1], 100);
	assert_int_equal(got[2], 100);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "TaintToleration");
	struct sk_event_registration regs[4];
	int n = pl->desc->events_to_register(pl, regs, 4);
	assert_int_equal(n, 2);
	assert_int_equal(regs[0].event.resource, SK_EV_NODE);
	assert_int_equal(regs[0].event.action, SK_ACT_ADD | SK_ACT_UPDATE_NODE_TAINT);
	assert_int_equal(regs[1].event.resource, SK_EV_POD);
	assert_int_equal(regs[1].event.action, SK_ACT_UPDATE_POD_TOLERATIONS);
	struct sk_pod *p = tolerating("");
	struct sk_node *bad = tainted("n", "{\"key\":\"a\",\"effect\":\"NoSchedule\"}"), *good = tainted("n", "");
	assert_int_equal(regs[0].hint(pl, p, NULL, good), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, p, NULL, bad), SK_QUEUE_SKIP);
	assert_int_equal(regs[0].hint(pl, p, bad, good), SK_QUEUE);
	assert_int_equal(regs[0].hint(pl, p, good, good), SK_QUEUE_SKIP);
	struct sk_pod *other = fx_pod("{\"metadata\":{\"name\":\"q\",\"uid\":\"u2\"}}");
	assert_int_equal(regs[1].hint(pl, p, p, p), SK_QUEUE);
	assert_int_equal(regs[1].hint(pl, p, other, other), SK_QUEUE_SKIP);
	sk_pod_unref(other);
	sk_node_unref(bad);
	sk_node_unref(good);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_score),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
