/* The in-process benchmark cluster (cluster.h): the scheduler's env callbacks over a cache and a
 * queue, with the informer's confirmations done inline. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/featuregate.h"
#include "kube/hash.h"
#include "kube/log.h"
#include "kube/metrics.h"
#include "scheduler/bench/cluster.h"
#include "scheduler/daemon/metrics_sched.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/framework/runtime.h"

static const struct sk_cluster_event node_delete = { SK_EV_NODE, SK_ACT_DELETE, "NodeDelete" };

/* SK_BENCH_METRICS=1: the daemon's metric hooks (scheduler/daemon/env.c), ctx = the cluster. */
static void m_observe(void *ctx, const char *profile, const char *point, const char *plugin, enum sk_code code,
		      double seconds)
{
	sk_sched_metrics_observe_point(((struct skb_cluster *)ctx)->metrics, profile, point, plugin, code, seconds);
}
static void m_evaluated(void *ctx, const char *profile, const char *point, const char *plugin, double n)
{
	sk_sched_metrics_plugin_evaluated(((struct skb_cluster *)ctx)->metrics, profile, point, plugin, n);
}
static void m_permit_waited(void *ctx, enum sk_code code, double seconds)
{
	sk_sched_metrics_permit_waited(((struct skb_cluster *)ctx)->metrics, code, seconds);
}
static void m_working(void *ctx, const char *operation, int delta)
{
	sk_sched_metrics_goroutines(((struct skb_cluster *)ctx)->metrics, operation, delta);
}

double skb_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long skb_vm_hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmHWM:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

int skb_env_int(const char *name, int def)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : def;
}

struct sk_config *skb_load_config(const char *text, const struct sk_config_opts *opts)
{
	struct sk_errors errs = { 0 };
	int saved_v = kube_log_verbosity;
	struct sk_config *cfg = opts ? sk_config_load_opts(text, strlen(text), opts, &errs)
				     : sk_config_load(text, strlen(text), &errs);
	kube_log_set_verbosity(saved_v);
	if (!cfg) {
		char *all = sk_errors_join(&errs, "\n");
		fprintf(stderr, "bench: config: %s\n", all ? all : "does not load");
		free(all);
	}
	sk_errors_free(&errs);
	return cfg;
}

struct sk_config *skb_default_config(void)
{
	return skb_load_config("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", NULL);
}

/* ---------- env callbacks ---------- */

static int64_t c_now(void *ctx)
{
	struct skb_cluster *c = ctx;
	if (!c->fake_clock) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	return __atomic_add_fetch(&c->clock_ns, 1000, __ATOMIC_RELAXED);
}

static const struct sk_snapshot *c_update(void *ctx, char **err)
{
	struct skb_cluster *c = ctx;
	return sk_cache_update_snapshot(c->cache, c->snap, err) == 0 ? c->snap : NULL;
}
static int c_assume(void *ctx, struct sk_pod *p, char **err) { return sk_cache_assume_pod(((struct skb_cluster *)ctx)->cache, p, err); }
static int c_forget(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_forget_pod(((struct skb_cluster *)ctx)->cache, p, err); }
static int c_finish(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_finish_binding(((struct skb_cluster *)ctx)->cache, p, err); }
static bool c_is_assumed(void *ctx, const char *uid) { return sk_cache_is_assumed(((struct skb_cluster *)ctx)->cache, uid); }
static const struct sk_snapshot *c_fw_snapshot(void *ctx) { return sk_scheduler_snapshot(((struct skb_cluster *)ctx)->sched); }

static void c_observe(void *ctx, const struct sk_outcome *o)
{
	struct skb_cluster *c = ctx;
	c->attempts++;
	if (o->result == SK_RESULT_SCHEDULED)
		c->scheduled++;
	else if (o->result == SK_RESULT_UNSCHEDULABLE)
		c->unschedulable++;
	else
		c->errors++;
	if (o->nominated_node && *o->nominated_node)
		c->nominated++;
	if (c->nlat < c->caplat)
		c->lat[c->nlat++] = o->duration_s;
}

/* The informer's confirmation, inline: the assumed pod becomes bound. */
static int c_bind(void *ctx, const struct sk_pod *pod, const char *node, char **err)
{
	struct skb_cluster *c = ctx;
	struct sk_pod *bound = sk_pod_with_node(pod, node);
	int rc = bound ? sk_cache_add_pod(c->cache, bound, err) : -1;
	if (rc == 0)
		__atomic_fetch_add(&c->placements, kube_fnv1a64(pod->name) * 31 + kube_fnv1a64(node), __ATOMIC_RELAXED);
	if (rc == 0)
		sk_queue_move_all(sk_scheduler_queue(c->sched), &SK_EVENT_ASSIGNED_POD_ADD, NULL, bound);
	sk_pod_unref(bound);
	return rc;
}

/* The API server's answer to the failure patch, inline: when the attempt set (or cleared) the
 * nomination, the pod's status.nominatedNodeName changes and the informer's update reaches the
 * queue and the nominator as in the daemon (scheduler/daemon/handlers.c, on_pod_update: the
 * unassigned pod's sk_queue_update + sk_nominator_update). The preemptor's next attempt then
 * tries its nominated node first (pkg/scheduler/schedule_one.go, evaluateNominatedNode), as end
 * to end. The PodScheduled condition is not modelled. */
static void c_patch_failure(void *ctx, const struct sk_pod *pod, const char *reason, const char *message,
			    bool nominate, const char *nominated_node)
{
	struct skb_cluster *c = ctx;
	(void)reason;
	(void)message;
	if (!nominate)
		return;
	const char *nn = NULL; /* "" clears */
	if (nominated_node && *nominated_node && !(nn = sk_intern(nominated_node)))
		return; /* out of memory: the pod keeps its nomination, as after a failed patch */
	const char *cur = pod->nominated_node_name && *pod->nominated_node_name ? pod->nominated_node_name : NULL;
	if (nn == cur || (nn && cur && !strcmp(nn, cur)))
		return; /* nothing changes on the pod the informer would deliver */
	struct sk_pod *updated = sk_pod_with_node(pod, pod->node_name);
	if (!updated)
		return;
	updated->nominated_node_name = nn;
	sk_queue_update(sk_scheduler_queue(c->sched), pod, updated);
	sk_nominator_update(c->nom, pod, updated);
	sk_pod_unref(updated);
}

/* A victim leaves at once (no graceful deletion, no PDBs in these workloads). */
static int c_preempt_victim(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim,
			    const char *node_name, const char *condition_message, char **err)
{
	struct skb_cluster *c = ctx;
	(void)preemptor;
	(void)node_name;
	(void)condition_message;
	struct sk_pod *held = sk_pod_ref((struct sk_pod *)victim);
	int rc = sk_cache_remove_pod(c->cache, held, err);
	if (rc == 0) {
		__atomic_add_fetch(&c->victims, 1, __ATOMIC_RELAXED); /* async preemption's workers too */
		sk_queue_move_all(sk_scheduler_queue(c->sched), &SK_EVENT_ASSIGNED_POD_DELETE, held, NULL);
	}
	sk_pod_unref(held);
	return rc;
}

/* SchedulerAsyncPreemption as upstream v1.34 (on) unless SK_BENCH_ASYNC_PREEMPTION=0; every
 * other gate at its default. */
static bool c_feature_enabled(void *ctx, const char *gate)
{
	(void)ctx;
	if (!strcmp(gate, "SchedulerAsyncPreemption"))
		return skb_env_int("SK_BENCH_ASYNC_PREEMPTION", 1) != 0;
	return kube_feature_gate_enabled(NULL, gate);
}

static void c_activate(void *ctx, const struct sk_pod *pod)
{
	struct skb_cluster *c = ctx;
	char key[512];
	snprintf(key, sizeof key, "%s/%s", pod->ns, pod->name);
	char *keys[1] = { key };
	sk_queue_activate(sk_scheduler_queue(c->sched), keys, 1);
}

/* A victim is gone once the cache no longer has it (c_preempt_victim removes it at once). */
static bool c_pod_deleted(void *ctx, const struct sk_pod *pod)
{
	struct skb_cluster *c = ctx;
	struct sk_pod *p = sk_cache_get_pod(c->cache, pod->uid);
	sk_pod_unref(p);
	return p == NULL;
}

/* Asynchronous preemption may still be evicting victims when nothing is poppable: the bench sees
 * that work only through its victim count (the core does not reach into a plugin). After a
 * nomination, waits while something comes back to the queue or the count moves, and gives up
 * after 20 ms without either. True when a pod became poppable. */
static bool c_wait_async(struct skb_cluster *c)
{
	if (!c->nominated)
		return false;
	struct sk_queue *q = sk_scheduler_queue(c->sched);
	int last = __atomic_load_n(&c->victims, __ATOMIC_RELAXED), idle_us = 0;
	while (idle_us < 20000) {
		struct sk_queue_counts n;
		sk_queue_counts(q, &n);
		if (n.active + n.backoff > 0)
			return true;
		if (n.unschedulable + n.gated == 0) /* nobody waits for an eviction */
			return false;
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
		int v = __atomic_load_n(&c->victims, __ATOMIC_RELAXED);
		idle_us = v == last ? idle_us + 200 : 0;
		last = v;
	}
	return false;
}

static int c_api_get(void *ctx, const char *path, cJSON **out, char **err)
{
	struct skb_cluster *c = ctx;
	if (c->api_get)
		return c->api_get(c->api_ctx, path, out, err);
	*err = strdup("the server could not find the requested resource");
	return -1;
}

/* ---------- the cluster ---------- */

struct skb_cluster *skb_cluster_new(const struct skb_cluster_opts *o, char **err)
{
	struct skb_cluster *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->fake_clock = o->fake_clock;
	c->api_get = o->api_get;
	c->api_ctx = o->api_ctx;
	c->caplat = o->lat_cap > 0 ? o->lat_cap : 100000;
	c->lat = calloc((size_t)c->caplat, sizeof *c->lat);
	c->cache = sk_cache_new(0);
	c->snap = sk_snapshot_new();
	c->nom = sk_nominator_new();
	c->pool = sk_pool_new(o->cfg->parallelism, err);
	if (!c->lat || !c->cache || !c->snap || !c->nom || !c->pool)
		goto fail;
	bool metrics = skb_env_int("SK_BENCH_METRICS", 0) != 0;
	if (metrics && (!(c->metrics_reg = kube_metrics_registry_new()) || !(c->metrics = sk_sched_metrics_new(c->metrics_reg))))
		goto fail;
	struct sk_sched_env env = {
		.ctx = c, .update_snapshot = c_update, .assume = c_assume, .forget = c_forget,
		.finish_binding = c_finish, .is_assumed = c_is_assumed, .observe = c_observe,
		.patch_failure = c_patch_failure,
		.seed = 42, .binder_threads = 0, .nominator = c->nom,
		.queue = {
			.initial_backoff_ns = o->cfg->pod_initial_backoff_seconds * 1000000000LL,
			.max_backoff_ns = o->cfg->pod_max_backoff_seconds * 1000000000LL,
		},
	};
	if (metrics) {
		env.working = m_working;
		env.queue.moved = sk_sched_metrics_queue_moved;
		env.queue.inflight = sk_sched_metrics_queue_inflight;
		env.queue.hint_observed = sk_sched_metrics_queue_hint;
		env.queue.moved_ctx = c->metrics;
	}
	if (!(c->sched = sk_scheduler_new(&env, err)))
		goto fail;
	struct sk_framework_env fenv = {
		.ctx = c, .now_ns = c_now, .pool = c->pool, .nominator = c->nom, .snapshot = c_fw_snapshot,
		.bind = c_bind, .preempt_victim = c_preempt_victim, .api_get = c_api_get,
		.feature_enabled = c_feature_enabled, .activate = c_activate, .pod_deleted = c_pod_deleted,
	};
	if (metrics) {
		fenv.observe = m_observe;
		fenv.evaluated = m_evaluated;
		fenv.permit_waited = m_permit_waited;
		fenv.working = m_working;
	}
	if (!(c->fw = sk_framework_new(o->cfg, &o->cfg->profiles[0], &fenv, err)) ||
	    sk_scheduler_set_frameworks(c->sched, &c->fw, 1) != 0)
		goto fail;
	return c;
fail:
	if (err && !*err)
		*err = strdup("out of memory");
	skb_cluster_free(c);
	return NULL;
}

void skb_cluster_free(struct skb_cluster *c)
{
	if (!c)
		return;
	sk_scheduler_free(c->sched);
	sk_framework_unref(c->fw);
	sk_pool_free(c->pool);
	sk_nominator_free(c->nom);
	sk_snapshot_free(c->snap);
	sk_cache_free(c->cache);
	sk_sched_metrics_free(c->metrics);
	kube_metrics_registry_free(c->metrics_reg);
	free(c->lat);
	free(c);
}

struct sk_node *skb_node_from_json(const char *json)
{
	cJSON *o = cJSON_Parse(json);
	char *err = NULL;
	struct sk_node *n = o ? sk_node_decode(o, &err) : NULL;
	if (!n)
		fprintf(stderr, "bench: node %.80s: %s\n", json, err ? err : "not JSON");
	free(err);
	cJSON_Delete(o);
	return n;
}

struct sk_pod *skb_pod_from_json(const char *json)
{
	cJSON *o = cJSON_Parse(json);
	char *err = NULL;
	struct sk_pod *p = o ? sk_pod_decode(o, &err) : NULL;
	if (!p)
		fprintf(stderr, "bench: pod %.80s: %s\n", json, err ? err : "not JSON");
	free(err);
	cJSON_Delete(o);
	return p;
}

static int report(int rc, const char *what, char *err)
{
	if (rc != 0)
		fprintf(stderr, "bench: %s: %s\n", what, err ? err : "failed");
	free(err);
	return rc ? -1 : 0;
}

int skb_add_node(struct skb_cluster *c, const char *json)
{
	struct sk_node *n = skb_node_from_json(json);
	char *err = NULL;
	int rc = n ? sk_cache_add_node(c->cache, n, &err) : -1;
	if (rc == 0)
		sk_queue_move_all(sk_scheduler_queue(c->sched), &SK_EVENT_NODE_ADD, NULL, n);
	sk_node_unref(n);
	return report(rc, "add node", err);
}

int skb_add_bound_pod(struct skb_cluster *c, const char *json)
{
	struct sk_pod *p = skb_pod_from_json(json);
	char *err = NULL;
	int rc = p ? sk_cache_add_pod(c->cache, p, &err) : -1;
	sk_pod_unref(p);
	return report(rc, "add bound pod", err);
}

int skb_enqueue_pod(struct skb_cluster *c, const char *json)
{
	struct sk_pod *p = skb_pod_from_json(json);
	int rc = p ? sk_queue_add(sk_scheduler_queue(c->sched), p) : -1;
	sk_pod_unref(p);
	return report(rc, "queue pod", NULL);
}

int skb_remove_pod(struct skb_cluster *c, struct sk_pod *pod)
{
	char *err = NULL;
	int rc = sk_cache_remove_pod(c->cache, pod, &err);
	if (rc == 0)
		sk_queue_move_all(sk_scheduler_queue(c->sched), &SK_EVENT_ASSIGNED_POD_DELETE, pod, NULL);
	return report(rc, "remove pod", err);
}

int skb_remove_node(struct skb_cluster *c, const char *name)
{
	char *err = NULL;
	int rc = sk_cache_remove_node(c->cache, name, &err);
	if (rc == 0)
		sk_queue_move_all(sk_scheduler_queue(c->sched), &node_delete, NULL, NULL);
	return report(rc, "remove node", err);
}

double skb_drain(struct skb_cluster *c, long budget, skb_tick_fn tick, void *tick_ctx)
{
	struct sk_queue *q = sk_scheduler_queue(c->sched);
	double t0 = skb_now_s();
	while (budget-- > 0) {
		int r = sk_schedule_one(c->sched, false);
		if (r < 0)
			break;
		if (r == 0) {
			if (c_wait_async(c)) /* victims still being evicted: their preemptors come back */
				continue;
			if (!c->fake_clock)
				break;
			struct sk_queue_counts n;
			sk_queue_counts(q, &n);
			if (n.backoff == 0 && n.active == 0)
				break;
			int64_t jump = (c->fw ? sk_framework_config(c->fw)->pod_max_backoff_seconds : 10) + 2;
			int64_t now = __atomic_add_fetch(&c->clock_ns, jump * 1000000000LL, __ATOMIC_RELAXED);
			sk_queue_flush_backoff(q, now);
			continue;
		}
		if (tick && tick(c, tick_ctx))
			break;
	}
	sk_scheduler_wait_bindings(c->sched);
	return skb_now_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double skb_latency_pct(struct skb_cluster *c, double q)
{
	if (!c->nlat)
		return 0;
	qsort(c->lat, (size_t)c->nlat, sizeof *c->lat, cmp_double);
	int i = (int)(c->nlat * q);
	return c->lat[i < c->nlat ? i : c->nlat - 1];
}
