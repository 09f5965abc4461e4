/* The in-process benchmark cluster shared by the scheduler benchmarks (bench_schedule.c,
 * bench_seed_plugins.c, bench_workloads.c): the real scheduler (schedule_one.h) over a cache,
 * snapshot, nominator and worker pool, with the informer's part played inline: a binding makes
 * the pod bound in the cache and the queue hears AssignedPodAdd; a preemption victim leaves the
 * cache at once and the queue hears AssignedPodDelete (as simulate does, scheduler/simulate/).
 * Every attempt's outcome is counted and its duration kept for the percentiles. */
#ifndef SKB_CLUSTER_H
#define SKB_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "scheduler/backend/cache.h"
#include "scheduler/config/config.h"
#include "scheduler/schedule_one.h"

struct kube_metrics_registry;
struct sk_sched_metrics;

struct skb_cluster_opts {
	const struct sk_config *cfg;  /* profile 0 is used; must outlive the cluster */
	int lat_cap;                  /* attempts whose duration is kept (0: 100,000) */
	/* sk_handle_api_get answers (NULL: the handle refuses). */
	int (*api_get)(void *ctx, const char *path, cJSON **out, char **err);
	void *api_ctx;
	/* true: a fake clock that jumps past every backoff when only backing-off pods remain, so a
	 * drain never sleeps (simulate's rule); false: CLOCK_MONOTONIC, and skb_drain stops when
	 * nothing is poppable (bench_schedule.c's loop, which never backs off). */
	bool fake_clock;
};

struct skb_cluster {
	struct sk_cache *cache;
	struct sk_snapshot *snap;
	struct sk_nominator *nom;
	struct sk_pool *pool;
	struct sk_scheduler *sched;
	struct sk_framework *fw;
	int64_t clock_ns;             /* fake clock (atomic access) */
	bool fake_clock;
	int (*api_get)(void *ctx, const char *path, cJSON **out, char **err);
	void *api_ctx;
	/* counted by every attempt's outcome */
	int attempts, scheduled, unschedulable, errors, nominated;
	int victims;                  /* pods removed by preemption */
	/* Sum over the bindings of a hash of (pod name, node): equal for equal decisions in any
	 * binding order, so two builds can be compared on the same seeds (bench_schedule.c prints it). */
	uint64_t placements;          /* atomic access */
	double *lat;
	int nlat, caplat;
	/* SK_BENCH_METRICS=1: the scheduler metrics wired as the daemon wires them (every hook of the
	 * framework, the scheduling loop and the queue), to measure what they cost; else NULL */
	struct kube_metrics_registry *metrics_reg;
	struct sk_sched_metrics *metrics;
};

/* Builds the cluster (no nodes, no pods). NULL and *err (caller frees). */
struct skb_cluster *skb_cluster_new(const struct skb_cluster_opts *o, char **err);
void skb_cluster_free(struct skb_cluster *c); /* NULL ok */

/* JSON text -> object; NULL and a message on stderr naming the text's kind. New reference. */
struct sk_node *skb_node_from_json(const char *json);
struct sk_pod *skb_pod_from_json(const char *json);
/* Decode and add: a node to the cache, a bound pod (spec.nodeName set) to the cache, a pending
 * pod to the queue. 0, or -1 with a message on stderr. */
int skb_add_node(struct skb_cluster *c, const char *json);
int skb_add_bound_pod(struct skb_cluster *c, const char *json);
int skb_enqueue_pod(struct skb_cluster *c, const char *json);
/* Removes a bound pod (as its deletion would arrive) and tells the queue. 0 or -1. */
int skb_remove_pod(struct skb_cluster *c, struct sk_pod *pod);
/* Removes a node and tells the queue. 0 or -1. */
int skb_remove_node(struct skb_cluster *c, const char *name);

/* Called after every attempt (for churn); nonzero stops the drain. */
typedef int (*skb_tick_fn)(struct skb_cluster *c, void *ctx);

/* Runs attempts until nothing is poppable (with fake_clock: nor backing off), `budget` attempts
 * ran (a guard against a requeue loop), or tick says stop. Returns the seconds it took. */
double skb_drain(struct skb_cluster *c, long budget, skb_tick_fn tick, void *tick_ctx);

/* Percentile q (0..1) of the kept attempt durations, in seconds (sorts them). */
double skb_latency_pct(struct skb_cluster *c, double q);

/* The default KubeSchedulerConfiguration (kube log verbosity kept), or NULL with a message. */
struct sk_config *skb_default_config(void);
/* Loads text (with opts, may be NULL) keeping the log verbosity; NULL with the errors on stderr. */
struct sk_config *skb_load_config(const char *text, const struct sk_config_opts *opts);

double skb_now_s(void);
long skb_vm_hwm_kib(void);   /* this process's peak RSS, -1 when unknown */
int skb_env_int(const char *name, int def);

#endif
