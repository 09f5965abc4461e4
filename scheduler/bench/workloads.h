/* The workload suite's shapes (upstream test/integration/scheduler_perf/<area>/performance-config.yaml
 * and its templates/): for each workload the nodes, the pods already bound ("init"), and the
 * backlog the scheduler drains: "pre" pods queued first (gated, unschedulable) and the measured
 * pods, plus the churn that runs during the drain. One definition serves the in-process run
 * (bench_workloads.c) and the end-to-end run (e2e/bench/workloads.sh, which POSTs the objects
 * `scheduler_bench_workloads --emit` prints). Objects are JSON text, one per call. */
#ifndef SKB_WORKLOADS_H
#define SKB_WORKLOADS_H

#include <stddef.h>

enum skb_part { SKB_NODES, SKB_INIT, SKB_PRE, SKB_MEASURE };

enum skb_node_kind {
	SKB_NODE_DEFAULT,      /* 4 cpu, 32Gi, 110 pods, kubernetes.io/hostname */
	SKB_NODE_ZONE1,        /* + topology.kubernetes.io/zone=zone1 */
	SKB_NODE_MOON3,        /* + zone moon-1/2/3 round robin */
	SKB_NODE_NAMED,        /* node 0 is scheduler-perf-node (pods 100000), the rest default */
};

enum skb_pod_kind {
	SKB_POD_DEFAULT,       /* 100m, 500Mi */
	SKB_POD_NODE_AFFINITY, /* required zone In [zone1, zone2] */
	SKB_POD_ANTI_AFFINITY, /* color=green, required anti-affinity on hostname */
	SKB_POD_AFFINITY,      /* color=blue, required affinity on zone */
	SKB_POD_PREF_AFFINITY, /* color=red, preferred affinity on hostname, weight 1 */
	SKB_POD_PREF_ANTI,     /* color=yellow, preferred anti-affinity on hostname, weight 1 */
	SKB_POD_SPREAD,        /* color=blue, maxSkew 5 on zone, DoNotSchedule */
	SKB_POD_LOW_PRIO,      /* 900m, 500Mi, grace 0 */
	SKB_POD_HIGH_PRIO,     /* priority 10 (class sched-perf-high), 3000m, 500Mi */
	SKB_POD_LARGE_CPU,     /* priority 10, 9 cpu: fits no node */
	SKB_POD_LIGHT,         /* no requests, grace 0 */
	SKB_POD_GATED,         /* light + schedulingGates [test.k8s.io/hold] */
	SKB_POD_DAEMONSET,     /* light + required matchFields metadata.name In [scheduler-perf-node] */
};

enum skb_churn {
	SKB_CHURN_NONE,
	/* SchedulingWithMixedChurn: every interval a node (pods 0) and an unschedulable high-priority
	 * pod are recreated (upstream also recreates a Service; the scheduler watches none). */
	SKB_CHURN_RECREATE,
	/* SchedulingWhileGated: the bound init pods are deleted one by one (AssignedPodDelete events
	 * that meet every gated pod). */
	SKB_CHURN_DELETE_INIT,
};

struct skb_sizes {
	int nodes, init, pre, measure;
};

struct skb_workload {
	const char *name;
	const char *upstream;          /* the upstream workload this follows */
	struct skb_sizes size, smoke;  /* upstream's performance size; a tiny one for the tests */
	enum skb_node_kind nodes;
	enum skb_pod_kind init, pre, measure;
	const char *init_ns, *measure_ns;
	enum skb_churn churn;
	int churn_every;               /* in-process: attempts between churn steps */
	int churn_per_s;               /* end to end: churn steps per second */
};

/* The suite, in table order; *n set to its length. */
const struct skb_workload *skb_workloads(int *n);
/* By exact name, or NULL. */
const struct skb_workload *skb_workload_find(const char *name);
/* Objects in a part (SKB_NODES counts the named node). */
int skb_part_count(const struct skb_workload *w, const struct skb_sizes *sz, enum skb_part part);
/* Object i of a part as JSON into buf; its length, or -1 when it does not fit or i is out of range. */
int skb_object_json(const struct skb_workload *w, const struct skb_sizes *sz, enum skb_part part, int i, char *buf,
		    size_t n);
/* Churn step k's node and pod (SKB_CHURN_RECREATE): node-churn-<k>, pod churn-<k>. */
int skb_churn_node_json(int k, char *buf, size_t n);
int skb_churn_pod_json(const struct skb_workload *w, int k, char *buf, size_t n);
/* The name of node i (default nodes: node-%05d; the named node: scheduler-perf-node). */
void skb_node_name(const struct skb_workload *w, int i, char *buf, size_t n);

#endif
