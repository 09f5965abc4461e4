/* Tests for the benchmark support code: scheduler/bench/workloads.c (every workload's objects
 * decode, init pods sit on existing nodes, the backlog is pending, each shape carries its
 * upstream template's fields) and scheduler/bench/cluster.c (a drain places pods, preempts and
 * leaves gated pods alone). No timing is checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/bench/cluster.h"
#include "scheduler/bench/workloads.h"

static cJSON *object(const struct skb_workload *w, enum skb_part part, int i)
{
	char buf[4096];
	assert_true(skb_object_json(w, &w->smoke, part, i, buf, sizeof buf) > 0);
	cJSON *o = cJSON_Parse(buf);
	assert_non_null(o);
	return o;
}

static const char *str_at(const cJSON *o, const char *const *path)
{
	for (; *path && o; path++)
		o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(*path)) : cJSON_GetObjectItemCaseSensitive(o, *path);
	return cJSON_IsString(o) ? o->valuestring : cJSON_IsNumber(o) ? "number" : o ? "present" : NULL;
}

/* Every object of every part decodes; init pods are bound to a node of the workload; the
 * backlog is pending; names are unique per part; out-of-range and short buffers are refused. */
static void test_every_workload_decodes(void **state)
{
	(void)state;
	int n;
	const struct skb_workload *all = skb_workloads(&n);
	assert_true(n >= 12);
	for (int k = 0; k < n; k++) {
		const struct skb_workload *w = &all[k];
		assert_ptr_equal(skb_workload_find(w->name), w);
		int nn = skb_part_count(w, &w->smoke, SKB_NODES);
		assert_true(nn > 0);
		char names[64][64];
		for (int i = 0; i < nn && i < 64; i++) {
			char buf[4096];
			assert_true(skb_object_json(w, &w->smoke, SKB_NODES, i, buf, sizeof buf) > 0);
			struct sk_node *node = skb_node_from_json(buf);
			assert_non_null(node);
			sk_node_unref(node);
			skb_node_name(w, i, names[i], sizeof names[i]);
		}
		for (int p = SKB_INIT; p <= SKB_MEASURE; p++)
			for (int i = 0; i < skb_part_count(w, &w->smoke, (enum skb_part)p); i++) {
				char buf[4096];
				assert_true(skb_object_json(w, &w->smoke, (enum skb_part)p, i, buf, sizeof buf) > 0);
				struct sk_pod *pod = skb_pod_from_json(buf);
				assert_non_null(pod);
				cJSON *o = cJSON_Parse(buf);
				const char *node = str_at(o, (const char *const[]){ "spec", "nodeName", NULL });
				if (p == SKB_INIT) {
					assert_non_null(node);
					bool found = false;
					for (int j = 0; j < nn; j++)
						found |= !strcmp(names[j], node);
					assert_true(found);
				} else {
					assert_null(node);
				}
				if (i > 0) {
					cJSON *prev = object(w, (enum skb_part)p, i - 1);
					assert_string_not_equal(str_at(prev, (const char *const[]){ "metadata", "name", NULL }),
								str_at(o, (const char *const[]){ "metadata", "name", NULL }));
					cJSON_Delete(prev);
				}
				cJSON_Delete(o);
				sk_pod_unref(pod);
			}
		char small[16], buf[4096];
		assert_int_equal(skb_object_json(w, &w->smoke, SKB_NODES, 0, small, sizeof small), -1);
		assert_int_equal(skb_object_json(w, &w->smoke, SKB_NODES, nn, buf, sizeof buf), -1);
		assert_int_equal(skb_object_json(w, &w->smoke, SKB_MEASURE, -1, buf, sizeof buf), -1);
	}
	assert_null(skb_workload_find("NoSuchWorkload"));
}

/* Each shape carries its upstream template's distinguishing field. */
static void test_shapes(void **state)
{
	(void)state;
	static const struct {
		const char *workload;
		enum skb_part part;
		const char *path[12];
		const char *want;
	} cases[] = {
		{ "SchedulingBasic", SKB_MEASURE, { "spec", "containers", "0", "resources", "requests", "cpu" }, "100m" },
		{ "NodeAffinity", SKB_NODES, { "metadata", "labels", "topology.kubernetes.io/zone" }, "zone1" },
		{ "NodeAffinity", SKB_MEASURE, { "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
						 "nodeSelectorTerms", "0", "matchExpressions", "0", "values", "1" }, "zone2" },
		{ "PodAntiAffinity", SKB_MEASURE, { "spec", "affinity", "podAntiAffinity",
						    "requiredDuringSchedulingIgnoredDuringExecution", "0", "topologyKey" },
		  "kubernetes.io/hostname" },
		{ "PodAntiAffinity", SKB_INIT, { "metadata", "namespace" }, "sched-0" },
		{ "PodAntiAffinity", SKB_MEASURE, { "metadata", "namespace" }, "sched-1" },
		{ "PodAffinity", SKB_MEASURE, { "spec", "affinity", "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
						"0", "topologyKey" }, "topology.kubernetes.io/zone" },
		{ "PreferredPodAffinity", SKB_MEASURE, { "spec", "affinity", "podAffinity",
							 "preferredDuringSchedulingIgnoredDuringExecution", "0", "podAffinityTerm",
							 "namespaces", "1" }, "sched-0" },
		{ "PreferredPodAntiAffinity", SKB_MEASURE, { "metadata", "labels", "color" }, "yellow" },
		{ "TopologySpreading", SKB_NODES, { "metadata", "labels", "topology.kubernetes.io/zone" }, "moon-1" },
		{ "TopologySpreading", SKB_MEASURE, { "spec", "topologySpreadConstraints", "0", "whenUnsatisfiable" },
		  "DoNotSchedule" },
		{ "Preemption", SKB_INIT, { "spec", "containers", "0", "resources", "requests", "cpu" }, "900m" },
		{ "Preemption", SKB_MEASURE, { "spec", "priorityClassName" }, "sched-perf-high" },
		{ "Unschedulable", SKB_PRE, { "spec", "containers", "0", "resources", "requests", "cpu" }, "9" },
		{ "SchedulingWhileGated", SKB_PRE, { "spec", "schedulingGates", "0", "name" }, "test.k8s.io/hold" },
		{ "SchedulingWhileGated", SKB_INIT, { "spec", "nodeName" }, "scheduler-perf-node" },
		{ "DaemonSet", SKB_NODES, { "metadata", "name" }, "scheduler-perf-node" },
		{ "DaemonSet", SKB_MEASURE, { "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
					      "nodeSelectorTerms", "0", "matchFields", "0", "values", "0" },
		  "scheduler-perf-node" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct skb_workload *w = skb_workload_find(cases[i].workload);
		assert_non_null(w);
		cJSON *o = object(w, cases[i].part, 0);
		const char *got = str_at(o, cases[i].path);
		if (!got || strcmp(got, cases[i].want))
			fail_msg("%s part %d: got %s, want %s", cases[i].workload, cases[i].part, got ? got : "(none)",
				 cases[i].want);
		cJSON_Delete(o);
	}
	/* Upstream's sizes for the performance runs. */
	assert_int_equal(skb_workload_find("SchedulingBasic")->size.measure, 10000);
	assert_int_equal(skb_workload_find("DaemonSet")->size.nodes, 15000);
	assert_int_equal(skb_workload_find("SchedulingWhileGated")->size.pre, 10000);
}

static const char node_fmt[] = "{\"metadata\":{\"name\":\"n%d\",\"labels\":{\"kubernetes.io/hostname\":\"n%d\"}},"
			       "\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}";

static void add_nodes(struct skb_cluster *c, int n, const char *cpu)
{
	char buf[512];
	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof buf, node_fmt, i, i, cpu);
		assert_int_equal(skb_add_node(c, buf), 0);
	}
}

static struct skb_cluster *cluster(struct sk_config *cfg)
{
	char *err = NULL;
	struct skb_cluster *c = skb_cluster_new(&(struct skb_cluster_opts){ .cfg = cfg, .fake_clock = true }, &err);
	assert_non_null(c);
	free(err);
	return c;
}

/* Drains: placement, preemption (a victim leaves, the preemptor is bound after its backoff,
 * which the fake clock skips), a gated pod never attempted, bad JSON refused. */
static void test_cluster_drain(void **state)
{
	(void)state;
	struct sk_config *cfg = skb_default_config();
	assert_non_null(cfg);

	struct skb_cluster *c = cluster(cfg);
	add_nodes(c, 3, "4");
	char buf[512];
	for (int i = 0; i < 5; i++) {
		snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"default\",\"uid\":\"u%d\"},"
			 "\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}", i, i);
		assert_int_equal(skb_enqueue_pod(c, buf), 0);
	}
	assert_int_equal(skb_enqueue_pod(c, "{\"metadata\":{\"name\":\"g\",\"namespace\":\"default\",\"uid\":\"ug\"},"
					   "\"spec\":{\"schedulingGates\":[{\"name\":\"hold\"}],\"containers\":[{}]}}"), 0);
	assert_int_equal(skb_enqueue_pod(c, "not json"), -1);
	skb_drain(c, 1000, NULL, NULL);
	assert_int_equal(c->scheduled, 5);
	assert_int_equal(c->attempts, 5);
	assert_int_equal(c->errors, 0);
	assert_true(skb_latency_pct(c, 0.99) >= skb_latency_pct(c, 0.5));
	skb_cluster_free(c);

	c = cluster(cfg);
	add_nodes(c, 1, "1");
	assert_int_equal(skb_add_bound_pod(c, "{\"metadata\":{\"name\":\"low\",\"namespace\":\"default\",\"uid\":\"ul\"},"
					      "\"spec\":{\"nodeName\":\"n0\",\"containers\":[{\"resources\":{\"requests\":"
					      "{\"cpu\":\"900m\"}}}]}}"), 0);
	assert_int_equal(skb_enqueue_pod(c, "{\"metadata\":{\"name\":\"high\",\"namespace\":\"default\",\"uid\":\"uh\"},"
					   "\"spec\":{\"priority\":10,\"containers\":[{\"resources\":{\"requests\":"
					   "{\"cpu\":\"500m\"}}}]}}"), 0);
	skb_drain(c, 1000, NULL, NULL);
	assert_int_equal(c->victims, 1);
	assert_int_equal(c->nominated, 1);
	assert_int_equal(c->scheduled, 1);
	assert_int_equal(c->unschedulable, 1);
	skb_cluster_free(c);
	sk_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_workload_decodes),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_cluster_drain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
