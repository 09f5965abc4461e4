/* SchedulingBasic with the seed plugins (docs/benchmarks.md): the in-process SchedulingBasic of
 * bench_schedule.c (5,000 nodes, 1,000 existing pods, 10,000 pods to place) run twice in one
 * process, first with the default profile, then with the default plugins plus LocalReplicas,
 * FitIPResource and ComputeResource loaded as modules from the plugin dir, on the same cluster:
 * nodes with a /24 podCIDR, a NodeMetricsList for every node answered by sk_handle_api_get. Prints both runs and the slowdown (goal < 15%). Env: SK_BENCH_NODES,
 * SK_BENCH_EXISTING, SK_BENCH_PODS, SK_BENCH_ROUNDS (pairs, default 3; the best of each is kept),
 * SK_BENCH_OWNERS=1 (pods owned by 10 ReplicaSets, so LocalReplicas counts replicas),
 * SK_BENCH_HOT=1 (a tenth of the nodes above the cpu threshold),
 * SK_BENCH_PLUGINS (a subset of "CLF": ComputeResource, LocalReplicas, FitIPResource; default all),
 * SK_BENCH_CR_ARGS (ComputeResourceArgs as YAML flow, default {usageThresholds: {cpu: 90, memory:
 * 90}}), SK_BENCH_NO_METRICS=1 (the metrics API answers 404),
 * SK_PLUGIN_DIR (default $SK_BIN/../lib/schedkit/plugins, else lib/schedkit/plugins). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"
#include "scheduler/backend/cache.h"
#include "scheduler/config/config.h"
#include "scheduler/framework/loader.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/schedule_one.h"

struct run {
	struct sk_cache *cache;
	struct sk_snapshot *snap;
	struct sk_scheduler *sched;
	const char *metrics;       /* NodeMetricsList text sk_handle_api_get answers */
	double *lat;
	int nlat, caplat;
	int scheduled, unschedulable, errors;
};

struct result {
	double seconds, p50_us, p99_us;
	int scheduled, unschedulable, errors;
};

static int nnodes, nexisting, npods, owners, hot;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : def;
}

static const struct sk_snapshot *r_update(void *ctx, char **err)
{
	struct run *r = ctx;
	return sk_cache_update_snapshot(r->cache, r->snap, err) == 0 ? r->snap : NULL;
}
static int r_assume(void *ctx, struct sk_pod *p, char **err) { return sk_cache_assume_pod(((struct run *)ctx)->cache, p, err); }
static int r_forget(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_forget_pod(((struct run *)ctx)->cache, p, err); }
static int r_finish(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_finish_binding(((struct run *)ctx)->cache, p, err); }
static bool r_is_assumed(void *ctx, const char *uid) { return sk_cache_is_assumed(((struct run *)ctx)->cache, uid); }
static const struct sk_snapshot *r_fw_snapshot(void *ctx) { return sk_scheduler_snapshot(((struct run *)ctx)->sched); }

static void r_observe(void *ctx, const struct sk_outcome *o)
{
	struct run *r = ctx;
	if (o->result == SK_RESULT_SCHEDULED)
		r->scheduled++;
	else if (o->result == SK_RESULT_UNSCHEDULABLE)
		r->unschedulable++;
	else
		r->errors++;
	if (r->nlat < r->caplat)
		r->lat[r->nlat++] = o->duration_s;
}

/* As the informer would confirm the binding: the assumed pod becomes bound. */
static int r_bind(void *ctx, const struct sk_pod *pod, const char *node, char **err)
{
	struct run *r = ctx;
	struct sk_pod *bound = sk_pod_with_node(pod, node);
	int rc = bound ? sk_cache_add_pod(r->cache, bound, err) : -1;
	if (rc == 0)
		sk_queue_move_all(sk_scheduler_queue(r->sched), &SK_EVENT_ASSIGNED_POD_ADD, NULL, bound);
	sk_pod_unref(bound);
	return rc;
}

/* metrics-server's answer, built once per run (ComputeResource reads it at init). */
static int r_api_get(void *ctx, const char *path, cJSON **out, char **err)
{
	struct run *r = ctx;
	if (!r->metrics || strcmp(path, "/apis/metrics.k8s.io/v1beta1/nodes")) {
		*err = strdup("the server could not find the requested resource");
		return -1;
	}
	*out = cJSON_Parse(r->metrics);
	return *out ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The nodes of bench_schedule.c plus a podCIDR (10.<i/256>.<i%256>.0/24: 256 addresses). */
static struct sk_node *make_node(int i)
{
	char text[640];
	snprintf(text, sizeof text,
		 "{\"metadata\":{\"name\":\"node-%05d\",\"labels\":{\"kubernetes.io/hostname\":\"node-%05d\"}},"
		 "\"spec\":{\"podCIDR\":\"10.%d.%d.0/24\"},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}",
		 i, i, i / 256, i % 256);
	cJSON *o = cJSON_Parse(text);
	char *err = NULL;
	struct sk_node *n = o ? sk_node_decode(o, &err) : NULL;
	if (!n)
		fprintf(stderr, "bench: node decode: %s\n", err ? err : "?");
	free(err);
	cJSON_Delete(o);
	return n;
}

/* The pods of bench_schedule.c; with SK_BENCH_OWNERS, pod i belongs to ReplicaSet rs-<i % 10>. */
static struct sk_pod *make_pod(const char *prefix, int i, const char *node)
{
	char text[1024], owner[256] = "";
	if (owners)
		snprintf(owner, sizeof owner,
			 ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs-%d\","
			 "\"uid\":\"%s-rs-%d\",\"controller\":true}]", i % 10, prefix, i % 10);
	snprintf(text, sizeof text,
		 "{\"metadata\":{\"name\":\"%s-%05d\",\"namespace\":\"default\",\"uid\":\"%s-uid-%05d\"%s},"
		 "\"spec\":{%s%s%s\"containers\":[{\"name\":\"pause\",\"image\":\"pause:3.9\","
		 "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"}}}]}}",
		 prefix, i, prefix, i, owner, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "");
	cJSON *o = cJSON_Parse(text);
	char *err = NULL;
	struct sk_pod *p = o ? sk_pod_decode(o, &err) : NULL;
	if (!p)
		fprintf(stderr, "bench: pod decode: %s\n", err ? err : "?");
	free(err);
	cJSON_Delete(o);
	return p;
}

/* A NodeMetricsList for every node: usage between 5% and 60% of cpu and memory (no node above the
 * 90% thresholds, as in a healthy cluster: ComputeResource's PreFilter then skips its Filter), or
 * with SK_BENCH_HOT=1 a tenth of the nodes above the cpu threshold, so Filter runs on every node
 * and rejects those. */
static char *metrics_list(void)
{
	size_t cap = (size_t)nnodes * 160 + 64, len = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	len += (size_t)snprintf(s, cap, "{\"kind\":\"NodeMetricsList\",\"apiVersion\":\"metrics.k8s.io/v1beta1\",\"items\":[");
	for (int i = 0; i < nnodes; i++) {
		int cpu = hot && i % 10 == 3 ? 3650 + i % 340 : 200 + (i * 37) % 2200;
		int mem_mi = 1600 + (i * 53) % 18000;
		len += (size_t)snprintf(s + len, cap - len, "%s{\"metadata\":{\"name\":\"node-%05d\"},\"window\":\"20s\","
					"\"usage\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"}}", i ? "," : "", i, cpu, mem_mi);
	}
	snprintf(s + len, cap - len, "]}");
	return s;
}

static int run_one(const struct sk_config *cfg, const char *metrics, struct result *res)
{
	struct run r = { .cache = sk_cache_new(0), .snap = sk_snapshot_new(), .caplat = npods, .metrics = metrics };
	r.lat = calloc((size_t)npods + 1, sizeof *r.lat);
	char *err = NULL;
	struct sk_pool *pool = sk_pool_new(cfg->parallelism, &err);
	struct sk_nominator *nom = sk_nominator_new();
	if (!r.cache || !r.snap || !r.lat || !pool || !nom) {
		fprintf(stderr, "bench: setup failed: %s\n", err ? err : "out of memory");
		return -1;
	}
	struct sk_sched_env env = {
		.ctx = &r, .update_snapshot = r_update, .assume = r_assume, .forget = r_forget,
		.finish_binding = r_finish, .is_assumed = r_is_assumed, .observe = r_observe,
		.seed = 42, .binder_threads = 0, .nominator = nom,
	};
	r.sched = sk_scheduler_new(&env, &err);
	struct sk_framework_env fenv = { .ctx = &r, .pool = pool, .nominator = nom, .snapshot = r_fw_snapshot,
					 .bind = r_bind, .api_get = r_api_get };
	struct sk_framework *fw = r.sched ? sk_framework_new(cfg, &cfg->profiles[0], &fenv, &err) : NULL;
	if (!fw || sk_scheduler_set_frameworks(r.sched, &fw, 1) != 0) {
		fprintf(stderr, "bench: scheduler: %s\n", err ? err : "?");
		return -1;
	}
	for (int i = 0; i < nnodes; i++) {
		struct sk_node *n = make_node(i);
		if (!n || sk_cache_add_node(r.cache, n, NULL) != 0)
			return -1;
		sk_node_unref(n);
	}
	char node[32];
	for (int i = 0; i < nexisting; i++) {
		snprintf(node, sizeof node, "node-%05d", i % nnodes);
		struct sk_pod *p = make_pod("existing", i, node);
		if (!p || sk_cache_add_pod(r.cache, p, NULL) != 0)
			return -1;
		sk_pod_unref(p);
	}
	struct sk_queue *q = sk_scheduler_queue(r.sched);
	for (int i = 0; i < npods; i++) {
		struct sk_pod *p = make_pod("pod", i, NULL);
		if (!p || sk_queue_add(q, p) != 0)
			return -1;
		sk_pod_unref(p);
	}
	double t1 = now_s();
	while (sk_schedule_one(r.sched, false) == 1)
		;
	sk_scheduler_wait_bindings(r.sched);
	double t2 = now_s();
	qsort(r.lat, (size_t)r.nlat, sizeof *r.lat, cmp_double);
	*res = (struct result){
		.seconds = t2 - t1,
		.p50_us = r.nlat ? r.lat[r.nlat / 2] * 1e6 : 0,
		.p99_us = r.nlat ? r.lat[(int)(r.nlat * 0.99)] * 1e6 : 0,
		.scheduled = r.scheduled, .unschedulable = r.unschedulable, .errors = r.errors,
	};
	sk_scheduler_free(r.sched);
	sk_framework_unref(fw);
	sk_pool_free(pool);
	sk_nominator_free(nom);
	sk_snapshot_free(r.snap);
	sk_cache_free(r.cache);
	free(r.lat);
	free(err);
	return 0;
}

static const char base_cfg[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
/* The profile of manifests/samples/seed-profile.yaml: ComputeResource at PreFilter, Filter, Score
 * (weight 1) and Reserve with usageThresholds 90/90; LocalReplicas and FitIPResource at PreFilter
 * and Filter. which: a subset of "CLF" (ComputeResource, LocalReplicas,
 * FitIPResource), SK_BENCH_PLUGINS, for the cost of each. */
static char *seed_config(const char *which)
{
	bool c = strchr(which, 'C'), l = strchr(which, 'L'), f = strchr(which, 'F');
	char set[160] = "";
	snprintf(set, sizeof set, "%s%s%s", c ? "{name: ComputeResource}," : "", l ? "{name: LocalReplicas}," : "",
		 f ? "{name: FitIPResource}," : "");
	if (*set)
		set[strlen(set) - 1] = '\0';
	char *text = NULL;
	if (asprintf(&text,
		     "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
		     "- schedulerName: default-scheduler\n"
		     "  plugins:\n"
		     "    preFilter: {enabled: [%s]}\n"
		     "    filter: {enabled: [%s]}\n"
		     "%s"
		     "  pluginConfig:\n"
		     "  - name: ComputeResource\n"
		     "    args: %s\n",
		     set, set,
		     c ? "    score: {enabled: [{name: ComputeResource, weight: 1}]}\n"
			 "    reserve: {enabled: [{name: ComputeResource}]}\n" : "",
		     getenv("SK_BENCH_CR_ARGS") ? getenv("SK_BENCH_CR_ARGS") : "{usageThresholds: {cpu: 90, memory: 90}}") < 0)
		return NULL;
	return text;
}

static void print_run(const char *label, const struct result *r)
{
	printf("  %-13s scheduled %d, unschedulable %d, errors %d in %.3f s: %.0f pods/s; p50 %.1f us, p99 %.1f us\n",
	       label, r->scheduled, r->unschedulable, r->errors, r->seconds,
	       r->seconds > 0 ? r->scheduled / r->seconds : 0.0, r->p50_us, r->p99_us);
}

int main(void)
{
	nnodes = env_int("SK_BENCH_NODES", 5000);
	nexisting = env_int("SK_BENCH_EXISTING", 1000);
	npods = env_int("SK_BENCH_PODS", 10000);
	owners = env_int("SK_BENCH_OWNERS", 0);
	hot = env_int("SK_BENCH_HOT", 0);
	int rounds = env_int("SK_BENCH_ROUNDS", 3);
	char dir[4096];
	const char *pd = getenv("SK_PLUGIN_DIR"), *bin = getenv("SK_BIN");
	if (pd && *pd)
		snprintf(dir, sizeof dir, "%s", pd);
	else if (bin && *bin)
		snprintf(dir, sizeof dir, "%s/../lib/schedkit/plugins", bin);
	else
		snprintf(dir, sizeof dir, "lib/schedkit/plugins");
	const char *dirs[] = { dir };
	struct sk_module_set *mods = NULL;
	char *err = NULL;
	if (sk_module_set_load(dirs, 1, &mods, &err) != 0) {
		fprintf(stderr, "bench: plugin dir %s: %s\n", dir, err ? err : "?");
		return 1;
	}
	struct sk_config_opts opts = { .modules = mods };
	struct sk_errors errs = { 0 };
	int saved_v = kube_log_verbosity;
	struct sk_config *base = sk_config_load(base_cfg, sizeof base_cfg - 1, &errs);
	const char *which = getenv("SK_BENCH_PLUGINS");
	char *seed_cfg = seed_config(which ? which : "CLF");
	struct sk_config *seed = base && seed_cfg ? sk_config_load_opts(seed_cfg, strlen(seed_cfg), &opts, &errs) : NULL;
	free(seed_cfg);
	kube_log_set_verbosity(saved_v);
	if (!base || !seed) {
		char *all = sk_errors_join(&errs, "\n");
		fprintf(stderr, "bench: config (plugin dir %s): %s\n", dir, all ? all : "?");
		return 1;
	}
	sk_errors_free(&errs);
	char *metrics = metrics_list();
	if (!metrics)
		return 1;

	printf("SchedulingBasic with the seed plugins: %d nodes, %d existing pods, %d pods%s%s, %d round(s), plugins from %s\n",
	       nnodes, nexisting, npods, owners ? " (10 ReplicaSets)" : "", hot ? ", 10% of nodes above the cpu threshold" : "",
	       rounds, dir);
	struct result best_base = { 0 }, best_seed = { 0 }, r;
	double *ratio = calloc((size_t)rounds + 1, sizeof(*ratio)), base_s = 0;
	int rc = 0;
	if (!ratio)
		return 1;
	for (int i = 0; i < rounds; i++) {
		if (run_one(base, NULL, &r) != 0)
			return 1;
		base_s = r.seconds;
		print_run("default", &r);
		if (!best_base.seconds || r.seconds < best_base.seconds)
			best_base = r;
		if (r.scheduled != npods)
			rc = 1;
		if (run_one(seed, getenv("SK_BENCH_NO_METRICS") ? NULL : metrics, &r) != 0)
			return 1;
		print_run("+seed plugins", &r);
		if (!best_seed.seconds || r.seconds < best_seed.seconds)
			best_seed = r;
		if (r.errors)
			rc = 1;
		ratio[i] = base_s > 0 ? r.seconds / base_s : 1.0;
	}
	/* Each pair ran back to back, so its ratio sees the same machine load: the median of the
	 * pairs is the figure least moved by other work on a shared machine. */
	qsort(ratio, (size_t)rounds, sizeof(*ratio), cmp_double);
	double med = rounds % 2 ? ratio[rounds / 2] : (ratio[rounds / 2 - 1] + ratio[rounds / 2]) / 2;
	double slow = best_base.seconds > 0 ? (best_seed.seconds / best_base.seconds - 1.0) * 100.0 : 0.0;
	printf("  best of %d: default %.0f pods/s, with the seed plugins %.0f pods/s: slowdown %.1f%%\n", rounds,
	       best_base.scheduled / best_base.seconds, best_seed.scheduled / best_seed.seconds, slow);
	printf("  median of the %d pairs: slowdown %.1f%% (goal < 15%%)\n", rounds, (med - 1.0) * 100.0);
	free(ratio);
	free(metrics);
	sk_config_free(seed);
	sk_config_free(base);
	sk_module_set_unref(mods);
	free(err);
	return rc;
}
