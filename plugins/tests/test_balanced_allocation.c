/* Tests for plugins/NodeResourcesBalancedAllocation against upstream's balanced_allocation_test
 * examples (plugins.md §9): real requests, the std formula, best-effort Skip (v1.33+). */
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

static struct sk_node *node(const char *name, const char *cpu, const char *mem, const char *extra)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"32\"%s%s}}}",
		 name, cpu, mem, extra ? "," : "", extra ? extra : "");
	return fx_node(buf);
}

static struct sk_pod *pod(const char *name, const char *node_name, const char *containers)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s%s%s\"containers\":[%s]}}", name,
		 node_name ? "\"nodeName\":\"" : "", node_name ? node_name : "", node_name ? "\"," : "", containers);
	return fx_pod(buf);
}

#define REQ(cpu, mem) "{\"resources\":{\"requests\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}}"

static void test_differently_sized_nodes(void **state)
{
	(void)state;
	/* "nothing scheduled, resources requested, differently sized nodes": 87 and 100 */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL),
				       fx_node_info(node("node2", "6000m", "10000", NULL), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, REQ("1000m", "2000") "," REQ("2000m", "3000"));
	int64_t got[2];
	assert_int_equal(ph_scores(h, ph_plugin(h, "NodeResourcesBalancedAllocation"), p, got), SK_SUCCESS);
	assert_int_equal(got[0], 87);
	assert_int_equal(got[1], 100);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_existing_pods_counted(void **state)
{
	(void)state;
	/* node 4000m/10000 holding 1000m/2000; pod 1000m/3000 -> 0.5, 0.5 -> 100 */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL),
						    pod("e", "node1", REQ("1000m", "2000")), NULL),
				       NULL));
	struct sk_pod *p = pod("p", NULL, REQ("1000m", "3000"));
	int64_t got[1];
	ph_scores(h, ph_plugin(h, "NodeResourcesBalancedAllocation"), p, got);
	assert_int_equal(got[0], 100);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_three_resources_and_cap(void **state)
{
	(void)state;
	/* three resources: population std. cpu 3/4 = .75, memory 5000/10000 = .5, foo 4/2 capped at 1:
	 * mean .75, var ((0)^2 + .25^2 + .25^2)/3 = .041666, std .2041 -> int(79.58) = 79 */
	struct ph *h = ph_new("- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n"
			      "      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: example.com/foo, weight: 1}]\n");
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", "\"example.com/foo\":\"2\""), NULL),
				       NULL));
	struct sk_pod *p = pod("p", NULL, "{\"resources\":{\"requests\":{\"cpu\":\"3000m\",\"memory\":\"5000\",\"example.com/foo\":\"4\"}}}");
	int64_t got[1];
	ph_scores(h, ph_plugin(h, "NodeResourcesBalancedAllocation"), p, got);
	assert_int_equal(got[0], 79);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_best_effort_skipped(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, "{\"name\":\"c\"}");
	int64_t got[1];
	assert_int_equal(ph_scores(h, ph_plugin(h, "NodeResourcesBalancedAllocation"), p, got), SK_SKIP);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differently_sized_nodes),
		cmocka_unit_test(test_existing_pods_counted),
		cmocka_unit_test(test_three_resources_and_cap),
		cmocka_unit_test(test_best_effort_skipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
