/* The workload suite's table and its object generators (workloads.h). Sizes are upstream's
 * "performance" workloads (test/integration/scheduler_perf/{misc,affinity,topology_spreading}/
 * performance-config.yaml); pod and node shapes are its templates/ (pod-default.yaml,
 * pod-with-pod-anti-affinity.yaml, ...). Init pods are created bound (round robin over the
 * nodes) instead of scheduled first: the run measures the drain of the backlog only. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "scheduler/bench/workloads.h"

#define NS0 "sched-0"
#define NS1 "sched-1"

static const struct skb_workload suite[] = {
	{ "SchedulingBasic", "misc SchedulingBasic/5000Nodes_10000Pods",
	  { 5000, 1000, 0, 10000 }, { 5, 5, 0, 10 },
	  SKB_NODE_DEFAULT, SKB_POD_DEFAULT, SKB_POD_DEFAULT, SKB_POD_DEFAULT, "default", "default", SKB_CHURN_NONE, 0, 0 },
	{ "NodeAffinity", "affinity SchedulingNodeAffinity/5000Nodes_10000Pods",
	  { 5000, 5000, 0, 10000 }, { 5, 5, 0, 10 },
	  SKB_NODE_ZONE1, SKB_POD_NODE_AFFINITY, SKB_POD_DEFAULT, SKB_POD_NODE_AFFINITY, "default", "default",
	  SKB_CHURN_NONE, 0, 0 },
	{ "PodAntiAffinity", "affinity SchedulingPodAntiAffinity/5000Nodes_2000Pods",
	  { 5000, 1000, 0, 2000 }, { 5, 1, 0, 4 },
	  SKB_NODE_DEFAULT, SKB_POD_ANTI_AFFINITY, SKB_POD_DEFAULT, SKB_POD_ANTI_AFFINITY, NS0, NS1, SKB_CHURN_NONE, 0, 0 },
	{ "PodAffinity", "affinity SchedulingPodAffinity/5000Nodes_5000Pods",
	  { 5000, 5000, 0, 5000 }, { 5, 5, 0, 10 },
	  SKB_NODE_ZONE1, SKB_POD_AFFINITY, SKB_POD_DEFAULT, SKB_POD_AFFINITY, NS0, NS1, SKB_CHURN_NONE, 0, 0 },
	{ "PreferredPodAffinity", "affinity SchedulingPreferredPodAffinity/5000Nodes_5000Pods",
	  { 5000, 5000, 0, 5000 }, { 5, 5, 0, 10 },
	  SKB_NODE_DEFAULT, SKB_POD_PREF_AFFINITY, SKB_POD_DEFAULT, SKB_POD_PREF_AFFINITY, NS0, NS1, SKB_CHURN_NONE, 0, 0 },
	{ "PreferredPodAntiAffinity", "affinity SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods",
	  { 5000, 5000, 0, 5000 }, { 5, 5, 0, 10 },
	  SKB_NODE_DEFAULT, SKB_POD_PREF_ANTI, SKB_POD_DEFAULT, SKB_POD_PREF_ANTI, NS0, NS1, SKB_CHURN_NONE, 0, 0 },
	{ "TopologySpreading", "topology_spreading TopologySpreading/5000Nodes_5000Pods",
	  { 5000, 5000, 0, 5000 }, { 6, 10, 0, 10 },
	  SKB_NODE_MOON3, SKB_POD_DEFAULT, SKB_POD_DEFAULT, SKB_POD_SPREAD, "default", "default", SKB_CHURN_NONE, 0, 0 },
	/* PreemptionBasic's commented-out 5000Nodes shape (20k low-priority pods, 4 per node,
	 * 3.6 of 4 cpu) with issue 15's 1,000 preemptors, each evicting 3 pods. */
	{ "Preemption", "misc PreemptionBasic (5000 nodes, 20000 init pods; 1000 preemptors)",
	  { 5000, 20000, 0, 1000 }, { 5, 20, 0, 5 },
	  SKB_NODE_DEFAULT, SKB_POD_LOW_PRIO, SKB_POD_DEFAULT, SKB_POD_HIGH_PRIO, "default", "default", SKB_CHURN_NONE, 0, 0 },
	/* Upstream injects the unschedulable pods at 5/s during the measurement; here 200 of them
	 * (5/s over the ~40 s upstream's threshold allows) wait in the backlog, ahead by priority. */
	{ "Unschedulable", "misc Unschedulable/5kNodes/100Init/10kPods",
	  { 5000, 100, 200, 10000 }, { 5, 1, 2, 10 },
	  SKB_NODE_DEFAULT, SKB_POD_DEFAULT, SKB_POD_LARGE_CPU, SKB_POD_DEFAULT, "default", "default", SKB_CHURN_NONE, 0, 0 },
	{ "SchedulingWithMixedChurn", "misc SchedulingWithMixedChurn/5000Nodes_10000Pods",
	  { 5000, 0, 0, 10000 }, { 10, 0, 0, 100 },
	  SKB_NODE_DEFAULT, SKB_POD_DEFAULT, SKB_POD_DEFAULT, SKB_POD_DEFAULT, "default", "default", SKB_CHURN_RECREATE,
	  1000, 1 },
	/* Upstream: 10k gated pods, 20k pods scheduled then deleted at 50/s while 20k more are
	 * measured. Here the 20k are the bound init pods, deleted during the drain. */
	{ "SchedulingWhileGated", "misc SchedulingWhileGated/1Node_10000GatedPods",
	  { 0, 20000, 10000, 20000 }, { 0, 10, 10, 10 },
	  SKB_NODE_NAMED, SKB_POD_LIGHT, SKB_POD_GATED, SKB_POD_LIGHT, "default", "default", SKB_CHURN_DELETE_INIT, 20, 50 },
	{ "DaemonSet", "misc SchedulingDaemonset/15000Nodes",
	  { 15000, 0, 0, 30000 }, { 5, 0, 0, 10 },
	  SKB_NODE_NAMED, SKB_POD_LIGHT, SKB_POD_DEFAULT, SKB_POD_DAEMONSET, "default", "default", SKB_CHURN_NONE, 0, 0 },
};

const struct skb_workload *skb_workloads(int *n)
{
	*n = (int)(sizeof suite / sizeof suite[0]);
	return suite;
}

const struct skb_workload *skb_workload_find(const char *name)
{
	for (size_t i = 0; i < sizeof suite / sizeof suite[0]; i++)
		if (!strcmp(suite[i].name, name))
			return &suite[i];
	return NULL;
}

int skb_part_count(const struct skb_workload *w, const struct skb_sizes *sz, enum skb_part part)
{
	switch (part) {
	case SKB_NODES:
		return sz->nodes + (w->nodes == SKB_NODE_NAMED);
	case SKB_INIT:
		return sz->init;
	case SKB_PRE:
		return sz->pre;
	case SKB_MEASURE:
		return sz->measure;
	}
	return 0;
}

void skb_node_name(const struct skb_workload *w, int i, char *buf, size_t n)
{
	if (w->nodes == SKB_NODE_NAMED) {
		if (i == 0) {
			snprintf(buf, n, "scheduler-perf-node");
			return;
		}
		i--;
	}
	snprintf(buf, n, "node-%05d", i);
}

static int fits(int len, size_t n) { return len < 0 || (size_t)len >= n ? -1 : len; }

static int node_json(const struct skb_workload *w, int i, char *buf, size_t n)
{
	char name[64], zone[96] = "";
	skb_node_name(w, i, name, sizeof name);
	bool named = w->nodes == SKB_NODE_NAMED && i == 0;
	if (w->nodes == SKB_NODE_ZONE1)
		snprintf(zone, sizeof zone, ",\"topology.kubernetes.io/zone\":\"zone1\"");
	else if (w->nodes == SKB_NODE_MOON3)
		snprintf(zone, sizeof zone, ",\"topology.kubernetes.io/zone\":\"moon-%d\"", i % 3 + 1);
	const char *pods = named ? "100000" : "110";
	return fits(snprintf(buf, n,
			     "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":"
			     "{\"kubernetes.io/hostname\":\"%s\"%s}},\"status\":{"
			     "\"capacity\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"%s\"},"
			     "\"allocatable\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"%s\"},"
			     "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			     name, name, zone, pods, pods), n);
}

/* Labels, spec fields before "containers", and the container's resources of a pod kind. */
struct pod_shape {
	const char *labels, *spec, *resources;
};

static struct pod_shape pod_shape(enum skb_pod_kind k)
{
	static const char std[] = "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"},"
				  "\"limits\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"}}";
	switch (k) {
	case SKB_POD_DEFAULT:
		return (struct pod_shape){ "", "", std };
	case SKB_POD_NODE_AFFINITY:
		return (struct pod_shape){ "", "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
					       "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\","
					       "\"operator\":\"In\",\"values\":[\"zone1\",\"zone2\"]}]}]}}},", std };
	case SKB_POD_ANTI_AFFINITY:
		return (struct pod_shape){ "\"color\":\"green\"",
					   "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
					   "[{\"labelSelector\":{\"matchLabels\":{\"color\":\"green\"}},"
					   "\"topologyKey\":\"kubernetes.io/hostname\",", std };
	case SKB_POD_AFFINITY:
		return (struct pod_shape){ "\"color\":\"blue\"",
					   "\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
					   "[{\"labelSelector\":{\"matchLabels\":{\"color\":\"blue\"}},"
					   "\"topologyKey\":\"topology.kubernetes.io/zone\",", std };
	case SKB_POD_PREF_AFFINITY:
		return (struct pod_shape){ "\"color\":\"red\"",
					   "\"affinity\":{\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
					   "[{\"weight\":1,\"podAffinityTerm\":{\"labelSelector\":{\"matchLabels\":{\"color\":\"red\"}},"
					   "\"topologyKey\":\"kubernetes.io/hostname\",", std };
	case SKB_POD_PREF_ANTI:
		return (struct pod_shape){ "\"color\":\"yellow\"",
					   "\"affinity\":{\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
					   "[{\"weight\":1,\"podAffinityTerm\":{\"labelSelector\":{\"matchLabels\":{\"color\":\"yellow\"}},"
					   "\"topologyKey\":\"kubernetes.io/hostname\",", std };
	case SKB_POD_SPREAD:
		return (struct pod_shape){ "\"color\":\"blue\"",
					   "\"topologySpreadConstraints\":[{\"maxSkew\":5,\"topologyKey\":\"topology.kubernetes.io/zone\","
					   "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"color\":\"blue\"}}}],",
					   std };
	case SKB_POD_LOW_PRIO:
		return (struct pod_shape){ "", "\"terminationGracePeriodSeconds\":0,",
					   "\"resources\":{\"requests\":{\"cpu\":\"900m\",\"memory\":\"500Mi\"},"
					   "\"limits\":{\"cpu\":\"900m\",\"memory\":\"500Mi\"}}" };
	case SKB_POD_HIGH_PRIO:
		return (struct pod_shape){ "", "\"priorityClassName\":\"sched-perf-high\",\"priority\":10,",
					   "\"resources\":{\"requests\":{\"cpu\":\"3000m\",\"memory\":\"500Mi\"},"
					   "\"limits\":{\"cpu\":\"3000m\",\"memory\":\"500Mi\"}}" };
	case SKB_POD_LARGE_CPU:
		return (struct pod_shape){ "", "\"priorityClassName\":\"sched-perf-high\",\"priority\":10,",
					   "\"resources\":{\"requests\":{\"cpu\":\"9\",\"memory\":\"500Mi\"}}" };
	case SKB_POD_LIGHT:
		return (struct pod_shape){ "", "\"terminationGracePeriodSeconds\":0,", NULL };
	case SKB_POD_GATED:
		return (struct pod_shape){ "", "\"schedulingGates\":[{\"name\":\"test.k8s.io/hold\"}],", NULL };
	case SKB_POD_DAEMONSET:
		return (struct pod_shape){ "", "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
					       "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
					       "\"operator\":\"In\",\"values\":[\"scheduler-perf-node\"]}]}]}}},", NULL };
	}
	return (struct pod_shape){ "", "", std };
}

/* The pod-affinity kinds end their term inside spec: the namespaces list closes it. */
static const char *term_close(enum skb_pod_kind k)
{
	switch (k) {
	case SKB_POD_ANTI_AFFINITY:
	case SKB_POD_AFFINITY:
		return "\"namespaces\":[\"" NS1 "\",\"" NS0 "\"]}]}},";
	case SKB_POD_PREF_AFFINITY:
	case SKB_POD_PREF_ANTI:
		return "\"namespaces\":[\"" NS1 "\",\"" NS0 "\"]}}]}},";
	default:
		return "";
	}
}

static int pod_json(enum skb_pod_kind k, const char *ns, const char *prefix, int i, const char *node, char *buf,
		    size_t n)
{
	struct pod_shape s = pod_shape(k);
	char node_field[96] = "";
	if (node)
		snprintf(node_field, sizeof node_field, "\"nodeName\":\"%s\",", node);
	return fits(snprintf(buf, n,
			     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%06d\",\"namespace\":\"%s\","
			     "\"uid\":\"%s-%s-%06d\",\"labels\":{%s}},\"spec\":{%s%s%s\"containers\":[{\"name\":\"pause\","
			     "\"image\":\"registry.k8s.io/pause:3.10\"%s%s}]}}",
			     prefix, i, ns, ns, prefix, i, s.labels, node_field, s.spec, term_close(k),
			     s.resources ? "," : "", s.resources ? s.resources : ""), n);
}

int skb_object_json(const struct skb_workload *w, const struct skb_sizes *sz, enum skb_part part, int i, char *buf,
		    size_t n)
{
	if (i < 0 || i >= skb_part_count(w, sz, part))
		return -1;
	char node[64];
	switch (part) {
	case SKB_NODES:
		return node_json(w, i, buf, n);
	case SKB_INIT: {
		int nn = skb_part_count(w, sz, SKB_NODES);
		/* The named node takes the light pods of SchedulingWhileGated; others go round robin. */
		skb_node_name(w, w->nodes == SKB_NODE_NAMED ? 0 : i % (nn ? nn : 1), node, sizeof node);
		return pod_json(w->init, w->init_ns, "init", i, node, buf, n);
	}
	case SKB_PRE:
		return pod_json(w->pre, w->measure_ns, "pre", i, NULL, buf, n);
	case SKB_MEASURE:
		return pod_json(w->measure, w->measure_ns, "pod", i, NULL, buf, n);
	}
	return -1;
}

int skb_churn_node_json(int k, char *buf, size_t n)
{
	return fits(snprintf(buf, n,
			     "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-churn-%d\",\"labels\":"
			     "{\"kubernetes.io/hostname\":\"node-churn-%d\"}},\"status\":{\"capacity\":{\"pods\":\"0\"},"
			     "\"allocatable\":{\"pods\":\"0\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			     k, k), n);
}

int skb_churn_pod_json(const struct skb_workload *w, int k, char *buf, size_t n)
{
	return pod_json(SKB_POD_LARGE_CPU, w->measure_ns, "churn", k, NULL, buf, n);
}
