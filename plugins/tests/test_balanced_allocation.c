/* Tests for plugins/NodeResourcesBalancedAllocation against upstream's balanced_allocation_test
 * examples (pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go): real requests, the std formula, best-effort Skip (v1.33+). */
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

/* The default resources take a path of their own in score_batch (balanced_cpu_memory); ph_scores
 * checks it against score (the general loop) in every chunking. Nodes where a resource has no
 * allocatable (left out of the std) or the request exceeds it (fraction capped at 1). */
static void test_cpu_memory_edges(void **state)
{
	(void)state;
	static const struct ph_cpu_mem cases[] = {
		{ "4000m", "10000", 92 }, /* 0.25, 0.1: std 0.075 */
		{ "0", "10000", 100 },    /* memory alone: std 0 */
		{ "4000m", "0", 100 },    /* cpu alone */
		{ "0", "0", 100 },        /* nothing to compare */
		{ "500m", "10000", 55 },  /* cpu capped at 1: std 0.45 */
		{ "1000m", "1000", 100 }, /* both exactly full */
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	struct ph *h = ph_new(NULL);
	ph_set_cpu_mem_nodes(h, cases, N);
	struct sk_pod *p = pod("p", NULL, REQ("1000m", "1000"));
	int64_t got[N];
	assert_int_equal(ph_scores(h, ph_plugin(h, "NodeResourcesBalancedAllocation"), p, got), SK_SUCCESS);
	for (int i = 0; i < N; i++) {
		if (got[i] != cases[i].want) {
			print_error("node %d (cpu %s, memory %s): score %lld, want %lld\n", i, cases[i].cpu, cases[i].mem,
				    (long long)got[i], (long long)cases[i].want);
			fail();
		}
	}
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

/* balanced_allocation_test TestNodeResourcesBalancedAllocation, values only (the v1.34 formula;
 * later upstream versions changed the expected numbers together with the algorithm). */
#define CPU_AND_MEMORY REQ("1000m", "2000") "," REQ("2000m", "3000")
#define CPU_ONLY REQ("1000m", "0") "," REQ("2000m", "0")
#define MEMORY_ONLY REQ("0", "2000") "," REQ("0", "3000")
#define CPU_AND_MEMORY_AND_GPU                                                                                         \
	REQ("1000m", "2000") ",{\"resources\":{\"requests\":{\"cpu\":\"2000m\",\"memory\":\"3000\",\"nvidia.com/gpu\":\"3\"}}}"
#define GPU8 "\"nvidia.com/gpu\":\"8\""
#define THREE_RESOURCES                                                                                                \
	"- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n"                                        \
	"      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 1}]\n"

struct ba_case {
	const char *name;
	const char *profile;                 /* NULL = default args */
	const char *node_cpu[2], *node_mem[2], *node_extra[2];
	const char *existing[2];             /* containers of one pod already on node1/node2, or NULL */
	const char *pod;                     /* containers of the incoming pod */
	bool prescore;
	int64_t want[2];
};

static const struct ba_case ba_cases[] = {
	{ "resources requested, pods scheduled with resources", NULL, { "10000m", "10000m" }, { "20000", "20000" },
	  { NULL, NULL }, { CPU_ONLY, CPU_AND_MEMORY }, CPU_AND_MEMORY, true, { 82, 95 } },
	{ "resources requested, pods scheduled with resources, differently sized nodes", NULL, { "10000m", "10000m" },
	  { "20000", "50000" }, { NULL, NULL }, { CPU_ONLY, CPU_AND_MEMORY }, CPU_AND_MEMORY, true, { 82, 80 } },
	{ "nodes to reach min/max score", NULL, { "3000m", "3000m" }, { "5000", "5000" }, { NULL, NULL },
	  { CPU_ONLY, NULL }, MEMORY_ONLY, true, { 100, 50 } },
	{ "requested resources at node capacity", NULL, { "6000m", "6000m" }, { "10000", "10000" }, { NULL, NULL },
	  { CPU_ONLY, CPU_AND_MEMORY }, CPU_ONLY, true, { 50, 75 } },
	{ "include scalar resource on a node", THREE_RESOURCES, { "3500m", "3500m" }, { "40000", "40000" }, { GPU8, GPU8 },
	  { CPU_AND_MEMORY_AND_GPU, CPU_AND_MEMORY },
	  "{\"resources\":{\"requests\":{\"memory\":\"0\",\"nvidia.com/gpu\":\"1\"}}}", true, { 70, 65 } },
	{ "node without the scalar resource skips it", THREE_RESOURCES, { "3500m", "3500m" }, { "40000", "40000" },
	  { GPU8, NULL }, { NULL, NULL }, CPU_AND_MEMORY, true, { 63, 63 } },
	{ "same result if PreScore not called", NULL, { "10000m", "10000m" }, { "20000", "20000" }, { NULL, NULL },
	  { CPU_ONLY, CPU_AND_MEMORY }, CPU_AND_MEMORY, false, { 82, 95 } },
};

static void test_upstream_table(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(ba_cases) / sizeof(ba_cases[0]); c++) {
		const struct ba_case *tc = &ba_cases[c];
		struct ph *h = ph_new(tc->profile);
		struct sk_node_info *ni[2];
		for (int i = 0; i < 2; i++) {
			const char *nn = i ? "node2" : "node1";
			struct sk_node *n = node(nn, tc->node_cpu[i], tc->node_mem[i], tc->node_extra[i]);
			ni[i] = tc->existing[i] ? fx_node_info(n, pod("e", nn, tc->existing[i]), NULL) : fx_node_info(n, NULL);
		}
		ph_set_snapshot(h, fx_snapshot(ni[0], ni[1], NULL));
		struct sk_plugin *pl = ph_plugin(h, "NodeResourcesBalancedAllocation");
		struct sk_pod *p = pod("p", NULL, tc->pod);
		int64_t got[2] = { -1, -1 };
		if (tc->prescore) {
			assert_int_equal(ph_scores(h, pl, p, got), SK_SUCCESS);
		} else {
			ph_reset_state(h);
			for (int i = 0; i < 2; i++) {
				struct sk_status st = pl->desc->score(pl, h->cs, p, h->snap->nodes[i], &got[i]);
				assert_true(sk_is_success(&st));
			}
		}
		if (got[0] != tc->want[0] || got[1] != tc->want[1]) {
			print_error("case %s: got %lld/%lld, want %lld/%lld\n", tc->name, (long long)got[0], (long long)got[1],
				    (long long)tc->want[0], (long long)tc->want[1]);
			fail();
		}
		sk_pod_unref(p);
		ph_free(h);
	}
}

static void test_best_effort_without_prescore(void **state)
{
	(void)state;
	/* PreScore disabled: Score of a best-effort pod is 0 (upstream Score checks isBestEffortPod when
	 * there is no PreScore state), not the 87 the unbalanced node would otherwise get. */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL),
						    pod("e", "node1", "{\"resources\":{\"requests\":{\"cpu\":\"3000m\",\"memory\":\"5000\"}}}"),
						    NULL),
				       NULL));
	struct sk_plugin *pl = ph_plugin(h, "NodeResourcesBalancedAllocation");
	struct sk_pod *p = pod("p", NULL, "{\"name\":\"c\"}");
	int64_t s = -1;
	ph_reset_state(h);
	struct sk_status st = pl->desc->score(pl, h->cs, p, h->snap->nodes[0], &s);
	assert_true(sk_is_success(&st));
	assert_int_equal(s, 0);
	sk_pod_unref(p);
	/* a pod with requests is still scored without PreScore: 3000m+1000m / 4000m = 1, 6000/10000 -> 80 */
	p = pod("q", NULL, "{\"resources\":{\"requests\":{\"cpu\":\"1000m\",\"memory\":\"1000\"}}}");
	ph_reset_state(h);
	st = pl->desc->score(pl, h->cs, p, h->snap->nodes[0], &s);
	assert_true(sk_is_success(&st));
	assert_int_equal(s, 80);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upstream_table),
		cmocka_unit_test(test_best_effort_without_prescore),
		cmocka_unit_test(test_differently_sized_nodes),
		cmocka_unit_test(test_existing_pods_counted),
		cmocka_unit_test(test_cpu_memory_edges),
		cmocka_unit_test(test_three_resources_and_cap),
		cmocka_unit_test(test_best_effort_skipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
