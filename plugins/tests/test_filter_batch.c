/* filter_batch (ABI 1.3, docs/plugins.md "Batch filtering") of the in-tree plugins that have it:
 * over a table of nodes and pods, each node's result from the batch must be the one filter gives
 * for that node alone (same code, same message), nodes handed in as already rejected must be left
 * as they were, and a node with no Node object must fail as filter fails it. */
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

#define ALLOC(cpu, mem, pods, extra)                                                                           \
	"\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\",\"pods\":\"" pods "\"" extra "}}"

static const char *const node_texts[] = {
	"{\"metadata\":{\"name\":\"n0\",\"labels\":{\"zone\":\"a\"}}," ALLOC("4", "8Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"n1\",\"labels\":{\"zone\":\"a\"}},\"spec\":{\"unschedulable\":true}," ALLOC("4", "8Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"n2\",\"labels\":{\"zone\":\"a\"}},\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"x\","
	"\"effect\":\"NoSchedule\"}]}," ALLOC("4", "8Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"n3\",\"labels\":{\"zone\":\"b\"}},\"spec\":{\"taints\":[{\"key\":\"soft\",\"effect\":"
	"\"PreferNoSchedule\"}]}," ALLOC("4", "8Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"n4\",\"labels\":{\"zone\":\"b\"}}," ALLOC("100m", "8Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"n5\",\"labels\":{\"zone\":\"b\"}}," ALLOC("4", "8Gi", "1", "") "}",
	"{\"metadata\":{\"name\":\"n6\",\"labels\":{\"zone\":\"b\"}}," ALLOC("4", "1Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"n7\"}," ALLOC("4", "8Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"target\",\"labels\":{\"zone\":\"a\"}}," ALLOC("4", "8Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"n9\",\"labels\":{\"zone\":\"a\"}}," ALLOC("4", "8Gi", "110", ",\"example.com/gpu\":\"2\"") "}",
	"{\"metadata\":{\"name\":\"n10\",\"labels\":{\"zone\":\"a\"}},\"spec\":{\"taints\":[{\"key\":\"evict\",\"effect\":"
	"\"NoExecute\"}]}," ALLOC("4", "8Gi", "110", "") "}",
	"{\"metadata\":{\"name\":\"n11\",\"labels\":{\"zone\":\"b\"}},\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":"
	"\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]}," ALLOC("1", "1Gi", "110", "") "}",
	NULL, /* a node info without a Node object */
};
#define NNODES (sizeof(node_texts) / sizeof(node_texts[0]))

#define POD(name, spec) "{\"metadata\":{\"name\":\"" name "\",\"uid\":\"u-" name "\"},\"spec\":{" spec "}}"
#define CONTAINER(req) "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{" req "}}}]"

static const char *const pod_texts[] = {
	POD("plain", CONTAINER("\"cpu\":\"500m\",\"memory\":\"1Gi\"")),
	POD("big", CONTAINER("\"cpu\":\"3\",\"memory\":\"6Gi\"")),
	POD("gpu", CONTAINER("\"example.com/gpu\":\"1\"")),
	POD("named", "\"nodeName\":\"target\"," CONTAINER("\"cpu\":\"100m\"")),
	POD("tolerant", "\"tolerations\":[{\"operator\":\"Exists\"}]," CONTAINER("\"cpu\":\"200m\"")),
	POD("affinity", "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
			"\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}]}]}}},"
			CONTAINER("\"cpu\":\"100m\"")),
	POD("selector", "\"nodeSelector\":{\"zone\":\"b\"}," CONTAINER("\"cpu\":\"100m\"")),
	POD("empty", "\"containers\":[{\"name\":\"c\"}]"),
};

static const char *const plugins[] = { "NodeUnschedulable", "NodeName", "TaintToleration", "NodeResourcesFit" };

static struct sk_node_info *node_info(size_t i)
{
	if (!node_texts[i])
		return fx_node_info(NULL, NULL);
	struct sk_node *n = fx_node(node_texts[i]);
	if (!strcmp(n->name, "n5")) /* its one pod slot taken */
		return fx_node_info(n, fx_pod("{\"metadata\":{\"name\":\"there\",\"uid\":\"u-there\"},\"spec\":"
					      "{\"nodeName\":\"n5\",\"containers\":[{\"name\":\"c\"}]}}"),
				    NULL);
	return fx_node_info(n, NULL);
}

static void test_batch_equals_filter(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_node_info *nis[NNODES];
	for (size_t i = 0; i < NNODES; i++)
		nis[i] = node_info(i);
	int compared = 0, rejected = 0;
	for (size_t p = 0; p < sizeof(plugins) / sizeof(plugins[0]); p++) {
		int rejected_before = rejected;
		struct sk_plugin *pl = ph_plugin(h, plugins[p]);
		assert_non_null(pl->desc->filter_batch);
		for (size_t q = 0; q < sizeof(pod_texts) / sizeof(pod_texts[0]); q++) {
			struct sk_pod *pod = fx_pod(pod_texts[q]);
			/* node by node */
			struct sk_status one[NNODES];
			bool skipped = false;
			for (size_t i = 0; i < NNODES; i++) {
				ph_reset_state(h);
				if (pl->desc->pre_filter) {
					struct sk_prefilter_result r = { .all = true };
					struct sk_status s = pl->desc->pre_filter(pl, h->cs, pod, &r);
					free(r.names);
					skipped = s.code == SK_SKIP;
					sk_status_reset(&s);
				}
				one[i] = skipped ? sk_ok() : pl->desc->filter(pl, h->cs, pod, nis[i]);
			}
			if (skipped) { /* the framework runs neither for this pod */
				for (size_t i = 0; i < NNODES; i++)
					sk_status_reset(&one[i]);
				sk_pod_unref(pod);
				continue;
			}
			/* one batch, every fourth node handed in as rejected already */
			ph_reset_state(h);
			if (pl->desc->pre_filter) {
				struct sk_prefilter_result r = { .all = true };
				struct sk_status s = pl->desc->pre_filter(pl, h->cs, pod, &r);
				free(r.names);
				sk_status_reset(&s);
			}
			uint8_t ok[NNODES];
			struct sk_status st[NNODES];
			for (size_t i = 0; i < NNODES; i++) {
				ok[i] = i % 4 != 3;
				st[i] = sk_status(SK_WAIT, "untouched");
			}
			pl->desc->filter_batch(pl, h->cs, pod, (const struct sk_node_info *const *)nis, (int)NNODES, ok, st);
			for (size_t i = 0; i < NNODES; i++) {
				char *got = sk_status_message(&st[i]);
				if (i % 4 == 3) {
					if (ok[i] || st[i].code != SK_WAIT || strcmp(got, "untouched"))
						fail_msg("%s, pod %zu, node %zu: a rejected node was touched", plugins[p], q, i);
				} else {
					char *want = sk_status_message(&one[i]);
					bool pass = one[i].code == SK_SUCCESS;
					if (ok[i] != pass || (!pass && (st[i].code != one[i].code || strcmp(got, want))))
						fail_msg("%s, pod %zu, node %zu: batch %d %s \"%s\", filter %s \"%s\"", plugins[p],
							 q, i, ok[i], sk_code_string(st[i].code), got,
							 sk_code_string(one[i].code), want);
					if (pass && (st[i].code != SK_WAIT || strcmp(got, "untouched")))
						fail_msg("%s, pod %zu, node %zu: a passing node's status was written",
							 plugins[p], q, i);
					rejected += !pass;
					compared++;
					free(want);
				}
				free(got);
				sk_status_reset(&st[i]);
				sk_status_reset(&one[i]);
			}
			sk_pod_unref(pod);
		}
		if (rejected == rejected_before)
			fail_msg("%s rejected no node of the table", plugins[p]);
		print_message("%s: %d rejections\n", plugins[p], rejected - rejected_before);
	}
	/* the table exercises both outcomes of every plugin's batch, not only passes */
	assert_true(compared > 200);
	assert_true(rejected > 40);
	for (size_t i = 0; i < NNODES; i++)
		sk_node_info_free(nis[i]);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_equals_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
