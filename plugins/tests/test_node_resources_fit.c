/* Tests for plugins/NodeResourcesFit: Filter reasons (fit_test), the three scoring strategies
 * against upstream's worked examples (least_allocated_test, most_allocated_test,
 * requested_to_capacity_ratio_test; pkg/scheduler/framework/plugins/noderesources/fit.go), CycleState use and the queueing hints. */
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
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\","
		 "\"pods\":\"32\"%s%s}}}",
		 name, cpu, mem, extra ? "," : "", extra ? extra : "");
	return fx_node(buf);
}

/* containers: a JSON array body, e.g. "{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}" */
static struct sk_pod *pod(const char *name, const char *node_name, const char *containers)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s%s%s\"containers\":[%s]}}", name,
		 node_name ? "\"nodeName\":\"" : "", node_name ? node_name : "", node_name ? "\"," : "", containers);
	return fx_pod(buf);
}

#define REQ(cpu, mem) "{\"resources\":{\"requests\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}}"
#define NOREQ "{\"name\":\"c\"}"

/* The pod of the scoring examples: 1000m/2000 + 2000m/3000 = 3000m/5000. */
#define EXAMPLE_POD REQ("1000m", "2000") "," REQ("2000m", "3000")

static void assert_scores(struct ph *h, const char *plugin, struct sk_pod *p, const int64_t *want, int n)
{
	int64_t got[16];
	ph_scores(h, ph_plugin(h, plugin), p, got);
	for (int i = 0; i < n; i++) {
		if (got[i] != want[i]) {
			print_error("node %d: score %lld, want %lld\n", i, (long long)got[i], (long long)want[i]);
			fail();
		}
	}
}

static const char *fit_args(const char *strategy_yaml)
{
	static char buf[1024];
	snprintf(buf, sizeof(buf), "- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy: %s\n",
		 strategy_yaml);
	return buf;
}

/* ---------- scoring ---------- */

static void test_least_allocated(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL),
				       fx_node_info(node("node2", "6000m", "10000", NULL), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, EXAMPLE_POD);
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 37, 50 }, 2);
	sk_pod_unref(p);
	ph_free(h);

	/* weights memory:2, cpu:1 */
	h = ph_new(fit_args("{type: LeastAllocated, resources: [{name: memory, weight: 2}, {name: cpu, weight: 1}]}"));
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL),
				       fx_node_info(node("node2", "6000m", "10000", NULL), NULL), NULL));
	p = pod("p", NULL, EXAMPLE_POD);
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 41, 50 }, 2);
	sk_pod_unref(p);
	ph_free(h);
}

/* LeastAllocated over the default cpu and memory takes a path of its own in score_batch
 * (least_allocated_cpu_memory); ph_scores checks it against score (the general loop) in every
 * chunking. Nodes where a resource has no allocatable (left out of the mean) or the request
 * exceeds it (0 for that resource). Pod 1000m / 1000. */
static void test_least_allocated_cpu_memory_edges(void **state)
{
	(void)state;
	static const struct ph_cpu_mem cases[] = {
		{ "4000m", "10000", 82 }, /* (75 + 90) / 2 */
		{ "0", "10000", 90 },     /* memory alone */
		{ "4000m", "0", 75 },     /* cpu alone */
		{ "0", "0", 0 },          /* no weight at all */
		{ "500m", "10000", 45 },  /* cpu over capacity: (0 + 90) / 2 */
		{ "1000m", "1000", 0 },   /* both exactly full */
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	struct ph *h = ph_new(NULL);
	ph_set_cpu_mem_nodes(h, cases, N);
	struct sk_pod *p = pod("p", NULL, REQ("1000m", "1000"));
	int64_t want[N];
	for (int i = 0; i < N; i++)
		want[i] = cases[i].want;
	assert_scores(h, "NodeResourcesFit", p, want, N);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_least_allocated_exceeds_capacity(void **state)
{
	(void)state;
	/* "requested resources exceed node capacity": node1 holds 3000m/0, node2 3000m/5000; the pod
	 * requests 3000m/0 (memory key present, so no default). */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL),
						    pod("e1", "node1", REQ("3000m", "0")), NULL),
				       fx_node_info(node("node2", "4000m", "10000", NULL),
						    pod("e2", "node2", REQ("3000m", "5000")), NULL),
				       NULL));
	struct sk_pod *p = pod("p", NULL, REQ("3000m", "0"));
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 50, 25 }, 2);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_least_allocated_empty_pod(void **state)
{
	(void)state;
	/* a pod object with no containers counts as 0 (no defaults): empty nodes score 100 */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL),
				       fx_node_info(node("node2", "4000m", "10000", NULL), NULL), NULL));
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{}}");
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 100, 100 }, 2);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_most_allocated(void **state)
{
	(void)state;
	struct ph *h = ph_new(fit_args("{type: MostAllocated}"));
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL),
				       fx_node_info(node("node2", "6000m", "10000", NULL), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, EXAMPLE_POD);
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 62, 50 }, 2);
	sk_pod_unref(p);
	ph_free(h);

	h = ph_new(fit_args("{type: MostAllocated, resources: [{name: memory, weight: 2}, {name: cpu, weight: 1}]}"));
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL),
				       fx_node_info(node("node2", "6000m", "10000", NULL), NULL), NULL));
	p = pod("p", NULL, EXAMPLE_POD);
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 58, 50 }, 2);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_most_allocated_nonzero_defaults(void **state)
{
	(void)state;
	/* nodes 250m/1000Mi; node1 holds two pods without requests; the pod has none either:
	 * node1 cpu 300m capped -> 100, memory 600Mi/1000Mi -> 60 => 80; node2 40, 20 => 30 */
	struct ph *h = ph_new(fit_args("{type: MostAllocated}"));
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "250m", "1000Mi", NULL), pod("e1", "node1", NOREQ),
						    pod("e2", "node1", NOREQ), NULL),
				       fx_node_info(node("node2", "250m", "1000Mi", NULL), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, NOREQ);
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 80, 30 }, 2);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_most_allocated_extended(void **state)
{
	(void)state;
	const char *args = fit_args("{type: MostAllocated, resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, "
				    "{name: intel.com/foo, weight: 1}]}");
	/* a pod not requesting the extended resource is scored on cpu and memory only */
	struct ph *h = ph_new(args);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", "\"intel.com/foo\":\"4\""), NULL),
				       fx_node_info(node("node2", "4000m", "10000", "\"intel.com/foo\":\"10\""), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, REQ("2000m", "5000"));
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 50, 50 }, 2);
	sk_pod_unref(p);
	/* requesting 2 of it: (50+50+50)/3 = 50 and (50+50+20)/3 = 40 */
	p = pod("p2", NULL, "{\"resources\":{\"requests\":{\"cpu\":\"2000m\",\"memory\":\"5000\",\"intel.com/foo\":\"2\"}}}");
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 50, 40 }, 2);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_requested_to_capacity_ratio(void **state)
{
	(void)state;
	/* TestResourceBinPackingSingleExtended: foo 8 and 4, pod requests 2 -> 2 and 5 */
	struct ph *h = ph_new(fit_args("{type: RequestedToCapacityRatio, resources: [{name: intel.com/foo, weight: 1}], "
				       "requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 1}]}}"));
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", "\"intel.com/foo\":\"8\""), NULL),
				       fx_node_info(node("node2", "4000m", "10000", "\"intel.com/foo\":\"4\""), NULL), NULL));
	struct sk_pod *p = pod("p", NULL, "{\"resources\":{\"requests\":{\"intel.com/foo\":\"2\"}}}");
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 2, 5 }, 2);
	sk_pod_unref(p);
	ph_free(h);

	/* TestResourceBinPackingMultipleExtended: foo:3, bar:5 -> round(3.875)=4, round(3.125)=3 */
	h = ph_new(fit_args("{type: RequestedToCapacityRatio, resources: [{name: intel.com/foo, weight: 3}, "
			    "{name: intel.com/bar, weight: 5}], "
			    "requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 1}]}}"));
	ph_set_snapshot(h, fx_snapshot(
				   fx_node_info(node("node1", "4000m", "10000", "\"intel.com/foo\":\"8\",\"intel.com/bar\":\"4\""), NULL),
				   fx_node_info(node("node2", "4000m", "10000", "\"intel.com/foo\":\"4\",\"intel.com/bar\":\"8\""), NULL),
				   NULL));
	p = pod("p", NULL, "{\"resources\":{\"requests\":{\"intel.com/foo\":\"2\",\"intel.com/bar\":\"2\"}}}");
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 4, 3 }, 2);
	sk_pod_unref(p);
	ph_free(h);

	/* shape [{0,10},{100,0}], default resources: node1 round(37.5)=38, node2 50 */
	h = ph_new(fit_args("{type: RequestedToCapacityRatio, "
			    "requestedToCapacityRatio: {shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]}}"));
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL),
				       fx_node_info(node("node2", "6000m", "10000", NULL), NULL), NULL));
	p = pod("p", NULL, EXAMPLE_POD);
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 38, 50 }, 2);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_requested_to_capacity_ratio_existing_pods(void **state)
{
	(void)state;
	const char *one = fit_args("{type: RequestedToCapacityRatio, resources: [{name: intel.com/foo, weight: 1}], "
				   "requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 1}]}}");
	/* TestResourceBinPackingSingleExtended "on node with existing pod running": node2 (foo 4)
	 * already holds 2, so (2+2)/4 = 100 -> 10; node1 (foo 8) 2/8 = 25 -> 2 */
	struct ph *h = ph_new(one);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", "\"intel.com/foo\":\"8\""), NULL),
				       fx_node_info(node("node2", "4000m", "10000", "\"intel.com/foo\":\"4\""),
						    pod("e", "node2", "{\"resources\":{\"requests\":{\"intel.com/foo\":\"2\"}}}"),
						    NULL),
				       NULL));
	struct sk_pod *p = pod("p", NULL, "{\"resources\":{\"requests\":{\"intel.com/foo\":\"2\"}}}");
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 2, 10 }, 2);
	sk_pod_unref(p);
	/* a pod that does not request the scored resource scores 0 everywhere */
	p = pod("q", NULL, REQ("1", "1"));
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 0, 0 }, 2);
	sk_pod_unref(p);
	ph_free(h);

	/* TestResourceBinPackingMultipleExtended: node2 (foo 4, bar 8) holds foo 2 and bar 2:
	 * foo 4/4 -> 10, bar 4/8 -> 5 => round((10*3 + 5*5)/8 = 6.875) = 7; node1 round(3.875) = 4 */
	h = ph_new(fit_args("{type: RequestedToCapacityRatio, resources: [{name: intel.com/foo, weight: 3}, "
			    "{name: intel.com/bar, weight: 5}], "
			    "requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 1}]}}"));
	ph_set_snapshot(h, fx_snapshot(
				   fx_node_info(node("node1", "4000m", "10000", "\"intel.com/foo\":\"8\",\"intel.com/bar\":\"4\""), NULL),
				   fx_node_info(node("node2", "4000m", "10000", "\"intel.com/foo\":\"4\",\"intel.com/bar\":\"8\""),
						pod("e", "node2",
						    "{\"resources\":{\"requests\":{\"intel.com/foo\":\"2\",\"intel.com/bar\":\"2\"}}}"),
						NULL),
				   NULL));
	p = pod("p", NULL, "{\"resources\":{\"requests\":{\"intel.com/foo\":\"2\",\"intel.com/bar\":\"2\"}}}");
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 4, 7 }, 2);
	sk_pod_unref(p);
	ph_free(h);

	/* the shape is scaled to 0..100 before interpolating (requestedToCapacityRatioScorer then
	 * BuildBrokenLinearFunction): points {10,1},{90,9} at utilization 15 give 10 + 80*5/80 = 15,
	 * not 10 * (1 + 8*5/80 = 1) = 10 */
	h = ph_new(fit_args("{type: RequestedToCapacityRatio, resources: [{name: intel.com/foo, weight: 1}], "
			    "requestedToCapacityRatio: {shape: [{utilization: 10, score: 1}, {utilization: 90, score: 9}]}}"));
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", "\"intel.com/foo\":\"100\""), NULL),
				       fx_node_info(node("node2", "4000m", "10000", "\"intel.com/foo\":\"100\""),
						    pod("e", "node2", "{\"resources\":{\"requests\":{\"intel.com/foo\":\"85\"}}}"),
						    NULL),
				       NULL));
	p = pod("p", NULL, "{\"resources\":{\"requests\":{\"intel.com/foo\":\"15\"}}}");
	/* node2: 100/100 -> past the last point -> 90 */
	assert_scores(h, "NodeResourcesFit", p, (int64_t[]){ 15, 90 }, 2);
	sk_pod_unref(p);
	ph_free(h);
}

static void test_score_without_prescore(void **state)
{
	(void)state;
	/* PreScore disabled: Score computes the requests itself (same result) */
	struct ph *h = ph_new(NULL);
	ph_set_snapshot(h, fx_snapshot(fx_node_info(node("node1", "4000m", "10000", NULL), NULL), NULL));
	struct sk_plugin *pl = ph_plugin(h, "NodeResourcesFit");
	struct sk_pod *p = pod("p", NULL, EXAMPLE_POD);
	int64_t s = -1;
	ph_reset_state(h);
	struct sk_status st = pl->desc->score(pl, h->cs, p, h->snap->nodes[0], &s);
	assert_true(sk_is_success(&st));
	assert_int_equal(s, 37);
	/* PreFilter ran (its state is in the slot) but PreScore is disabled, as in a v1beta2 profile
	 * converted by `schedkit-scheduler convert`: the same score, not one read from PreFilter's state */
	ph_reset_state(h);
	struct sk_prefilter_result pr = { 0 };
	st = pl->desc->pre_filter(pl, h->cs, p, &pr);
	assert_true(sk_is_success(&st));
	s = -1;
	st = pl->desc->score(pl, h->cs, p, h->snap->nodes[0], &s);
	assert_true(sk_is_success(&st));
	assert_int_equal(s, 37);
	sk_pod_unref(p);
	ph_free(h);
}

/* ---------- filter ---------- */

struct filter_case {
	const char *name;
	const char *pod_containers;
	const char *node_extra;     /* extra allocatable */
	const char *existing;       /* containers of a pod already on the node, or NULL */
	const char *alloc_pods;     /* allocatable pods */
	const char *want;           /* reasons joined, "" = fits */
	enum sk_code code;
};

static const struct filter_case filter_cases[] = {
	{ "no resources requested always fits", NOREQ, NULL, REQ("10", "20"), "32", "", SK_SUCCESS },
	{ "too many resources fails", REQ("1", "1"), NULL, REQ("10", "20"), "32", "Insufficient cpu, Insufficient memory",
	  SK_UNSCHEDULABLE },
	{ "cpu only", REQ("1", "1"), NULL, REQ("10", "0"), "32", "Insufficient cpu", SK_UNSCHEDULABLE },
	{ "memory only", REQ("1", "1"), NULL, REQ("0", "20"), "32", "Insufficient memory", SK_UNSCHEDULABLE },
	{ "equal to free fits", REQ("5", "10"), NULL, REQ("5", "10"), "32", "", SK_SUCCESS },
	{ "too many pods even without requests", NOREQ, NULL, REQ("1", "1"), "1", "Too many pods", SK_UNSCHEDULABLE },
	/* the edges of the common case fits_request decides first */
	{ "one pod below the limit fits", REQ("1", "1"), NULL, REQ("1", "1"), "2", "", SK_SUCCESS },
	{ "one milli-cpu over free", REQ("5001m", "1"), NULL, REQ("5", "0"), "32", "Insufficient cpu", SK_UNSCHEDULABLE },
	{ "one byte over free memory", REQ("1", "11"), NULL, REQ("0", "10"), "32", "Insufficient memory",
	  SK_UNSCHEDULABLE },
	{ "zero cpu on a full node", REQ("0", "1"), NULL, REQ("10", "0"), "32", "", SK_SUCCESS },
	{ "ephemeral storage equal to free fits", "{\"resources\":{\"requests\":{\"ephemeral-storage\":\"10\"}}}",
	  "\"ephemeral-storage\":\"10\"", NULL, "32", "", SK_SUCCESS },
	{ "a scalar request that fits", "{\"resources\":{\"requests\":{\"example.com/aaa\":\"2\"}}}",
	  "\"example.com/aaa\":\"2\"", NULL, "32", "", SK_SUCCESS },
	{ "too many pods and cpu", REQ("10", "1"), NULL, REQ("1", "1"), "1", "Too many pods, Insufficient cpu",
	  SK_UNSCHEDULABLE },
	/* v1.34 (PR 131345): a request larger than the node's whole allocatable is
	 * UnschedulableAndUnresolvable, since preemption cannot make room. */
	{ "extended resource", "{\"resources\":{\"requests\":{\"example.com/aaa\":\"3\"}}}", "\"example.com/aaa\":\"2\"",
	  NULL, "32", "Insufficient example.com/aaa", SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "extended resource absent on node", "{\"resources\":{\"requests\":{\"example.com/bbb\":\"1\"}}}", NULL, NULL,
	  "32", "Insufficient example.com/bbb", SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "ephemeral storage", "{\"resources\":{\"requests\":{\"ephemeral-storage\":\"20\"}}}",
	  "\"ephemeral-storage\":\"10\"", NULL, "32", "Insufficient ephemeral-storage", SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "hugepages", "{\"resources\":{\"requests\":{\"hugepages-2Mi\":\"4Mi\"}}}", "\"hugepages-2Mi\":\"2Mi\"", NULL,
	  "32", "Insufficient hugepages-2Mi", SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	/* fit_test TestEnoughRequests, values only */
	{ "extended resource capacity enforced",
	  "{\"resources\":{\"requests\":{\"cpu\":\"1m\",\"memory\":\"1\",\"example.com/aaa\":\"10\"}}}",
	  "\"example.com/aaa\":\"5\"", NULL, "32", "Insufficient example.com/aaa", SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "extended resource allocatable enforced",
	  "{\"resources\":{\"requests\":{\"cpu\":\"1m\",\"memory\":\"1\",\"example.com/aaa\":\"1\"}}}",
	  "\"example.com/aaa\":\"5\"", "{\"resources\":{\"requests\":{\"example.com/aaa\":\"5\"}}}", "32",
	  "Insufficient example.com/aaa", SK_UNSCHEDULABLE },
	{ "hugepages allocatable enforced", "{\"resources\":{\"requests\":{\"hugepages-2Mi\":\"2Mi\"}}}",
	  "\"hugepages-2Mi\":\"4Mi\"", "{\"resources\":{\"requests\":{\"hugepages-2Mi\":\"3Mi\"}}}", "32",
	  "Insufficient hugepages-2Mi", SK_UNSCHEDULABLE },
	{ "cpu larger than the node", REQ("11", "1"), NULL, NULL, "32", "Insufficient cpu",
	  SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "memory larger than the node, cpu only used up", REQ("2", "21"), NULL, REQ("9", "0"), "32",
	  "Insufficient cpu, Insufficient memory", SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "too many pods never unresolvable", NOREQ, NULL, REQ("1", "1"), "1", "Too many pods", SK_UNSCHEDULABLE },
	/* upstream reports every insufficient resource (no cap on the reasons) */
	{ "every insufficient resource is reported",
	  "{\"resources\":{\"requests\":{\"cpu\":\"11\",\"memory\":\"21\",\"ephemeral-storage\":\"20\","
	  "\"example.com/a\":\"1\",\"example.com/b\":\"1\",\"example.com/c\":\"1\",\"example.com/d\":\"1\","
	  "\"example.com/e\":\"1\",\"example.com/f\":\"1\",\"example.com/g\":\"1\"}}}",
	  "\"ephemeral-storage\":\"10\"", NOREQ, "1",
	  "Too many pods, Insufficient cpu, Insufficient memory, Insufficient ephemeral-storage, "
	  "Insufficient example.com/a, Insufficient example.com/b, Insufficient example.com/c, Insufficient example.com/d, "
	  "Insufficient example.com/e, Insufficient example.com/f, Insufficient example.com/g",
	  SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	/* the native reasons only (no extended resource): all four inline, in upstream order */
	{ "every native reason at once", "{\"resources\":{\"requests\":{\"cpu\":\"11\",\"memory\":\"21\","
	  "\"ephemeral-storage\":\"20\"}}}", "\"ephemeral-storage\":\"10\"", NOREQ, "1",
	  "Too many pods, Insufficient cpu, Insufficient memory, Insufficient ephemeral-storage",
	  SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
	{ "memory and ephemeral storage used up, cpu fits",
	  "{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"15\",\"ephemeral-storage\":\"6\"}}}",
	  "\"ephemeral-storage\":\"10\"", "{\"resources\":{\"requests\":{\"memory\":\"10\",\"ephemeral-storage\":\"5\"}}}",
	  "32", "Insufficient memory, Insufficient ephemeral-storage", SK_UNSCHEDULABLE },
	{ "too many pods with a fitting extended resource",
	  "{\"resources\":{\"requests\":{\"cpu\":\"1\",\"example.com/aaa\":\"1\"}}}", "\"example.com/aaa\":\"2\"",
	  NOREQ, "1", "Too many pods", SK_UNSCHEDULABLE },
	{ "kubernetes.io-prefixed resource is never ignored or skipped",
	  "{\"resources\":{\"requests\":{\"kubernetes.io/something\":\"1\"}}}", NULL, NULL, "32",
	  "Insufficient kubernetes.io/something", SK_UNSCHEDULABLE_AND_UNRESOLVABLE },
};

static void test_filter_table(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeResourcesFit");
	for (size_t i = 0; i < sizeof(filter_cases) / sizeof(filter_cases[0]); i++) {
		const struct filter_case *c = &filter_cases[i];
		char nbuf[512];
		snprintf(nbuf, sizeof(nbuf),
			 "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"cpu\":\"10\",\"memory\":\"20\","
			 "\"pods\":\"%s\"%s%s}}}",
			 c->alloc_pods, c->node_extra ? "," : "", c->node_extra ? c->node_extra : "");
		struct sk_node_info *ni = c->existing ? fx_node_info(fx_node(nbuf), pod("e", "n", c->existing), NULL)
						      : fx_node_info(fx_node(nbuf), NULL);
		struct sk_pod *p = pod("p", NULL, c->pod_containers);
		struct sk_status s = ph_filter(h, pl, p, ni);
		enum sk_code code = s.code;
		/* every reason is static or interned: a failing node's status owns no memory (the
		 * seventh and later reasons of a long status live in its overflow block) */
		uint8_t owned_inline = (uint8_t)(s.owned & ((1u << SK_STATUS_MAX_REASONS) - 1));
		char *m = ph_message(&s);
		if (owned_inline) {
			print_error("case %s: reasons owned 0x%x, want none\n", c->name, owned_inline);
			free(m);
			fail();
		}
		if (code != c->code || strcmp(m, c->want)) {
			print_error("case %s: got %s \"%s\", want %s \"%s\"\n", c->name, sk_code_string(code), m,
				    sk_code_string(c->code), c->want);
			free(m);
			fail();
		}
		free(m);
		sk_pod_unref(p);
		sk_node_info_free(ni);
	}
	ph_free(h);
}

static void test_filter_ignored_resources(void **state)
{
	(void)state;
	struct ph *h = ph_new("- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
			      "      ignoredResources: [example.com/aaa]\n      ignoredResourceGroups: [example.org]\n");
	struct sk_plugin *pl = ph_plugin(h, "NodeResourcesFit");
	struct sk_node_info *ni = fx_node_info(node("n", "10", "20", NULL), NULL);
	struct sk_pod *p = pod("p", NULL,
			       "{\"resources\":{\"requests\":{\"example.com/aaa\":\"1\",\"example.org/x\":\"1\","
			       "\"example.com/bbb\":\"1\"}}}");
	struct sk_status s = ph_filter(h, pl, p, ni);
	char *m = ph_message(&s);
	assert_string_equal(m, "Insufficient example.com/bbb");
	free(m);
	sk_pod_unref(p);
	/* hugepages are not extended resources: never ignored */
	sk_node_info_free(ni);
	ph_free(h);

	h = ph_new("- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      ignoredResources: [hugepages-2Mi]\n");
	pl = ph_plugin(h, "NodeResourcesFit");
	ni = fx_node_info(node("n", "10", "20", NULL), NULL);
	p = pod("p", NULL, "{\"resources\":{\"requests\":{\"hugepages-2Mi\":\"2Mi\"}}}");
	s = ph_filter(h, pl, p, ni);
	m = ph_message(&s);
	assert_string_equal(m, "Insufficient hugepages-2Mi");
	free(m);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

static void test_filter_sidecar_requests(void **state)
{
	(void)state;
	/* A restartable init container (sidecar) runs for the pod's life: cpu need is
	 * max(1 + 2, 3 + 2) = 5 (staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)), which does not fit in the 4 free cpus; counting
	 * the sidecar as a plain init container would give max(1, 3) = 3 and fit. */
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeResourcesFit");
	struct sk_node_info *ni = fx_node_info(node("n", "10", "20", NULL), pod("e", "n", REQ("6", "0")), NULL);
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":["
				  "{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}},"
				  "{\"name\":\"init\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}],"
				  "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}");
	struct sk_status s = ph_filter(h, pl, p, ni);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	char *m = ph_message(&s);
	assert_string_equal(m, "Insufficient cpu");
	free(m);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	/* with 5 free it fits */
	ni = fx_node_info(node("n", "10", "20", NULL), pod("e", "n", REQ("5", "0")), NULL);
	p = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":["
		   "{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}},"
		   "{\"name\":\"init\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}],"
		   "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}");
	s = ph_filter(h, pl, p, ni);
	assert_int_equal(s.code, SK_SUCCESS);
	sk_status_reset(&s);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

static void test_filter_overhead_and_pod_level(void **state)
{
	(void)state;
	/* fit_test values: node 10m/20 holding 5m/5. */
	static const struct {
		const char *name, *spec; /* spec body after "containers":[1m/1] */
		enum sk_code code;
		const char *want;
	} cases[] = {
		{ "resources + pod overhead fits", "\"overhead\":{\"cpu\":\"3m\",\"memory\":\"13\"}", SK_SUCCESS, "" },
		{ "requests + overhead does not fit for memory", "\"overhead\":{\"cpu\":\"1m\",\"memory\":\"15\"}",
		  SK_UNSCHEDULABLE, "Insufficient memory" },
		{ "both pod-level and container-level resources fit",
		  "\"resources\":{\"requests\":{\"cpu\":\"1m\",\"memory\":\"2\"}}", SK_SUCCESS, "" },
		{ "pod-level cpu resource not fit", "\"resources\":{\"requests\":{\"cpu\":\"7m\",\"memory\":\"2\"}}",
		  SK_UNSCHEDULABLE, "Insufficient cpu" },
	};
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeResourcesFit");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[1024];
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[" REQ("1m", "1") "],%s}}", cases[i].spec);
		struct sk_pod *p = fx_pod(buf);
		struct sk_node_info *ni = fx_node_info(node("n", "10m", "20", NULL), pod("e", "n", REQ("5m", "5")), NULL);
		struct sk_status st = ph_filter(h, pl, p, ni);
		enum sk_code code = st.code;
		char *m = ph_message(&st);
		if (code != cases[i].code || strcmp(m, cases[i].want)) {
			print_error("case %s: got %s \"%s\"\n", cases[i].name, sk_code_string(code), m);
			free(m);
			fail();
		}
		free(m);
		sk_pod_unref(p);
		sk_node_info_free(ni);
	}
	ph_free(h);

	/* "skip checking ignored extended resource via resource groups": only the kubernetes.io/
	 * resource is checked, and a node without it can never hold the pod */
	h = ph_new("- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      ignoredResourceGroups: [example.com]\n");
	pl = ph_plugin(h, "NodeResourcesFit");
	struct sk_node_info *ni = fx_node_info(node("n", "10", "20", NULL), NULL);
	struct sk_pod *p = pod("p", NULL,
			       "{\"resources\":{\"requests\":{\"cpu\":\"1m\",\"memory\":\"1\",\"example.com/bbb\":\"1\","
			       "\"kubernetes.io/something\":\"1\"}}}");
	struct sk_status st = ph_filter(h, pl, p, ni);
	assert_int_equal(st.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	char *m = ph_message(&st);
	assert_string_equal(m, "Insufficient kubernetes.io/something");
	free(m);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

static void test_filter_without_prefilter_state(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeResourcesFit");
	struct sk_node_info *ni = fx_node_info(node("n", "10", "20", NULL), NULL);
	struct sk_pod *p = pod("p", NULL, REQ("1", "1"));
	ph_reset_state(h);
	struct sk_status s = pl->desc->filter(pl, h->cs, p, ni);
	assert_int_equal(s.code, SK_ERROR);
	char *m = ph_message(&s);
	assert_string_equal(m, "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
	free(m);
	sk_pod_unref(p);
	sk_node_info_free(ni);
	ph_free(h);
}

/* ---------- queueing hints ---------- */

static void test_hints(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "NodeResourcesFit");
	sk_hint_fn node_hint = ph_find_hint(pl, SK_EV_NODE, NULL), pod_hint = ph_find_hint(pl, SK_EV_POD, NULL);
	assert_non_null(node_hint);
	assert_non_null(pod_hint);
	struct sk_pod *p = pod("p", NULL, REQ("2", "2"));
	struct sk_node *small = node("n", "1", "10", NULL), *big = node("n", "4", "10", NULL);
	assert_int_equal(node_hint(pl, p, NULL, small), SK_QUEUE_SKIP);  /* added, too small */
	assert_int_equal(node_hint(pl, p, NULL, big), SK_QUEUE);          /* added, fits */
	assert_int_equal(node_hint(pl, p, small, big), SK_QUEUE);         /* cpu grew */
	assert_int_equal(node_hint(pl, p, big, big), SK_QUEUE_SKIP);      /* nothing grew */

	struct sk_pod *placed = pod("q", "n", REQ("1", "1")), *pending = pod("r", NULL, REQ("1", "1"));
	assert_int_equal(pod_hint(pl, p, placed, NULL), SK_QUEUE);        /* placed pod deleted */
	assert_int_equal(pod_hint(pl, p, pending, NULL), SK_QUEUE_SKIP);  /* unplaced pod deleted */
	/* a deleted pod that was only nominated held room on its node too (v1.34 isSchedulableAfterPodEvent) */
	struct sk_pod *nominated = fx_pod("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"containers\":[" REQ("1", "1")
					  "]},\"status\":{\"nominatedNodeName\":\"n\"}}");
	assert_int_equal(pod_hint(pl, p, nominated, NULL), SK_QUEUE);
	sk_pod_unref(nominated);
	struct sk_pod *smaller = pod("q", "n", REQ("500m", "1"));
	assert_int_equal(pod_hint(pl, p, placed, smaller), SK_QUEUE);     /* scaled down cpu */
	assert_int_equal(pod_hint(pl, p, placed, placed), SK_QUEUE_SKIP);
	sk_pod_unref(smaller);
	sk_pod_unref(placed);
	sk_pod_unref(pending);
	sk_node_unref(small);
	sk_node_unref(big);
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_least_allocated),
		cmocka_unit_test(test_least_allocated_exceeds_capacity),
		cmocka_unit_test(test_least_allocated_cpu_memory_edges),
		cmocka_unit_test(test_least_allocated_empty_pod),
		cmocka_unit_test(test_most_allocated),
		cmocka_unit_test(test_most_allocated_nonzero_defaults),
		cmocka_unit_test(test_most_allocated_extended),
		cmocka_unit_test(test_requested_to_capacity_ratio),
		cmocka_unit_test(test_requested_to_capacity_ratio_existing_pods),
		cmocka_unit_test(test_score_without_prescore),
		cmocka_unit_test(test_filter_table),
		cmocka_unit_test(test_filter_ignored_resources),
		cmocka_unit_test(test_filter_sidecar_requests),
		cmocka_unit_test(test_filter_overhead_and_pod_level),
		cmocka_unit_test(test_filter_without_prefilter_state),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
