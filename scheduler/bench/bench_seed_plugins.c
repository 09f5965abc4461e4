/* SchedulingBasic with the seed plugins (docs/benchmarks.md): the in-process SchedulingBasic of
 * bench_schedule.c (5,000 nodes, 1,000 existing pods, 10,000 pods to place) run twice in one
 * process, first with the default profile, then with the default plugins plus LocalReplicas,
 * FitIPResource and ComputeResource loaded as modules from the plugin dir, on the same cluster:
 * nodes with a /24 podCIDR, a NodeMetricsList for every node answered by sk_handle_api_get. Prints
 * both runs (with the process CPU time per pod), the slowdown (goal < 15%) and the median of the
 * pairs' CPU-time ratios. Env: SK_BENCH_NODES,
 * SK_BENCH_EXISTING, SK_BENCH_PODS, SK_BENCH_ROUNDS (pairs, default 3; the best of each is kept),
 * SK_BENCH_OWNERS=1 (pods owned by 10 ReplicaSets, so LocalReplicas counts replicas),
 * SK_BENCH_HOT=1 (a tenth of the nodes above the cpu threshold),
 * SK_BENCH_PLUGINS (a subset of "CLF": ComputeResource, LocalReplicas, FitIPResource; default all),
 * SK_BENCH_CR_ARGS (ComputeResourceArgs as YAML flow, default {usageThresholds: {cpu: 90, memory:
 * 90}}), SK_BENCH_NO_METRICS=1 (the metrics API answers 404),
 * SK_BENCH_RUN (default or seed: run only that profile each round, for perf stat / perf record
 * of one of them; no slowdown is printed then),
 * SK_PLUGIN_DIR (default $SK_BIN/../lib/schedkit/plugins, else lib/schedkit/plugins). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"
#include "scheduler/bench/cluster.h"
#include "scheduler/framework/loader.h"

struct result {
	double seconds, cpu_seconds, p50_us, p99_us;
	int scheduled, unschedulable, errors;
};

static int nnodes, nexisting, npods, owners, hot;

/* metrics-server's answer (ComputeResource reads it at init); ctx is the NodeMetricsList text. */
static int r_api_get(void *ctx, const char *path, cJSON **out, char **err)
{
	const char *metrics = ctx;
	if (!metrics || strcmp(path, "/apis/metrics.k8s.io/v1beta1/nodes")) {
		*err = strdup("the server could not find the requested resource");
		return -1;
	}
	*out = cJSON_Parse(metrics);
	return *out ? 0 : -1;
}

/* CPU time of the whole process (every thread): with SK_POOL_THREADS=1 the scheduling thread's,
 * which other processes' load moves far less than the wall clock (it still shares caches). */
static double process_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The nodes of bench_schedule.c plus a podCIDR (10.<i/256>.<i%256>.0/24: 256 addresses). */
static void node_json(int i, char *text, size_t n)
{
	snprintf(text, n,
		 "{\"metadata\":{\"name\":\"node-%05d\",\"labels\":{\"kubernetes.io/hostname\":\"node-%05d\"}},"
		 "\"spec\":{\"podCIDR\":\"10.%d.%d.0/24\"},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}",
		 i, i, i / 256, i % 256);
}

/* The pods of bench_schedule.c; with SK_BENCH_OWNERS, pod i belongs to ReplicaSet rs-<i % 10>. */
static void pod_json(const char *prefix, int i, const char *node, char *text, size_t n)
{
	char owner[256] = "";
	if (owners)
		snprintf(owner, sizeof owner,
			 ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs-%d\","
			 "\"uid\":\"%s-rs-%d\",\"controller\":true}]", i % 10, prefix, i % 10);
	snprintf(text, n,
		 "{\"metadata\":{\"name\":\"%s-%05d\",\"namespace\":\"default\",\"uid\":\"%s-uid-%05d\"%s},"
		 "\"spec\":{%s%s%s\"containers\":[{\"name\":\"pause\",\"image\":\"pause:3.9\","
		 "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"}}}]}}",
		 prefix, i, prefix, i, owner, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "");
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
	char *err = NULL;
	struct skb_cluster *c = skb_cluster_new(&(struct skb_cluster_opts){ .cfg = cfg, .lat_cap = npods + 1,
									    .api_get = r_api_get, .api_ctx = (void *)metrics },
						&err);
	if (!c) {
		fprintf(stderr, "bench: setup failed: %s\n", err ? err : "out of memory");
		free(err);
		return -1;
	}
	char text[1024], node[32];
	int rc = 0;
	for (int i = 0; i < nnodes && rc == 0; i++) {
		node_json(i, text, sizeof text);
		rc = skb_add_node(c, text);
	}
	for (int i = 0; i < nexisting && rc == 0; i++) {
		snprintf(node, sizeof node, "node-%05d", i % nnodes);
		pod_json("existing", i, node, text, sizeof text);
		rc = skb_add_bound_pod(c, text);
	}
	for (int i = 0; i < npods && rc == 0; i++) {
		pod_json("pod", i, NULL, text, sizeof text);
		rc = skb_enqueue_pod(c, text);
	}
	if (rc == 0) {
		double cpu0 = process_cpu_s();
		double secs = skb_drain(c, (long)npods * 50 + 1000, NULL, NULL);
		*res = (struct result){
			.seconds = secs,
			.cpu_seconds = process_cpu_s() - cpu0,
			.p50_us = skb_latency_pct(c, 0.5) * 1e6,
			.p99_us = skb_latency_pct(c, 0.99) * 1e6,
			.scheduled = c->scheduled, .unschedulable = c->unschedulable, .errors = c->errors,
		};
	}
	skb_cluster_free(c);
	return rc;
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
	printf("  %-13s scheduled %d, unschedulable %d, errors %d in %.3f s: %.0f pods/s; p50 %.1f us, p99 %.1f us; "
	       "cpu %.1f us/pod\n",
	       label, r->scheduled, r->unschedulable, r->errors, r->seconds,
	       r->seconds > 0 ? r->scheduled / r->seconds : 0.0, r->p50_us, r->p99_us,
	       r->scheduled ? r->cpu_seconds * 1e6 / r->scheduled : 0.0);
}

int main(void)
{
	nnodes = skb_env_int("SK_BENCH_NODES", 5000);
	nexisting = skb_env_int("SK_BENCH_EXISTING", 1000);
	npods = skb_env_int("SK_BENCH_PODS", 10000);
	owners = skb_env_int("SK_BENCH_OWNERS", 0);
	hot = skb_env_int("SK_BENCH_HOT", 0);
	int rounds = skb_env_int("SK_BENCH_ROUNDS", 3);
	const char *only = getenv("SK_BENCH_RUN");
	bool run_base = !only || !*only || !strcmp(only, "default"), run_seed = !only || !*only || !strcmp(only, "seed");
	if (!run_base && !run_seed) {
		fprintf(stderr, "bench: SK_BENCH_RUN=%s: must be default or seed\n", only);
		return 1;
	}
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
	double *ratio = calloc((size_t)rounds + 1, sizeof(*ratio)), base_s = 0, base_cpu = 0;
	double *cpu_ratio = calloc((size_t)rounds + 1, sizeof(*cpu_ratio));
	int rc = 0;
	if (!ratio || !cpu_ratio)
		return 1;
	for (int i = 0; i < rounds; i++) {
		if (run_base) {
			if (run_one(base, NULL, &r) != 0)
				return 1;
			base_s = r.seconds;
			base_cpu = r.cpu_seconds;
			print_run("default", &r);
			if (!best_base.seconds || r.seconds < best_base.seconds)
				best_base = r;
			if (r.scheduled != npods)
				rc = 1;
		}
		if (!run_seed)
			continue;
		if (run_one(seed, getenv("SK_BENCH_NO_METRICS") ? NULL : metrics, &r) != 0)
			return 1;
		print_run("+seed plugins", &r);
		if (!best_seed.seconds || r.seconds < best_seed.seconds)
			best_seed = r;
		if (r.errors)
			rc = 1;
		ratio[i] = base_s > 0 ? r.seconds / base_s : 1.0;
		cpu_ratio[i] = base_cpu > 0 ? r.cpu_seconds / base_cpu : 1.0;
	}
	if (!run_base || !run_seed) {
		const struct result *b = run_base ? &best_base : &best_seed;
		printf("  best of %d: %s %.0f pods/s (SK_BENCH_RUN: no slowdown)\n", rounds, run_base ? "default" : "seed",
		       b->seconds > 0 ? b->scheduled / b->seconds : 0.0);
		goto done;
	}
	/* Each pair ran back to back, so its ratio sees the same machine load: the median of the
	 * pairs is the figure least moved by other work on a shared machine. */
	qsort(ratio, (size_t)rounds, sizeof(*ratio), cmp_double);
	double med = rounds % 2 ? ratio[rounds / 2] : (ratio[rounds / 2 - 1] + ratio[rounds / 2]) / 2;
	double slow = best_base.seconds > 0 ? (best_seed.seconds / best_base.seconds - 1.0) * 100.0 : 0.0;
	printf("  best of %d: default %.0f pods/s, with the seed plugins %.0f pods/s: slowdown %.1f%%\n", rounds,
	       best_base.scheduled / best_base.seconds, best_seed.scheduled / best_seed.seconds, slow);
	printf("  median of the %d pairs: slowdown %.1f%% (goal < 15%%)\n", rounds, (med - 1.0) * 100.0);
	qsort(cpu_ratio, (size_t)rounds, sizeof(*cpu_ratio), cmp_double);
	double cmed = rounds % 2 ? cpu_ratio[rounds / 2] : (cpu_ratio[rounds / 2 - 1] + cpu_ratio[rounds / 2]) / 2;
	printf("  median of the %d pairs, process cpu time: %+.1f%%\n", rounds, (cmed - 1.0) * 100.0);
done:
	free(ratio);
	free(cpu_ratio);
	free(metrics);
	sk_config_free(seed);
	sk_config_free(base);
	sk_module_set_unref(mods);
	free(err);
	return rc;
}
