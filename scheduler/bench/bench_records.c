/* The cost of decision records (docs/explain.md): the in-process SchedulingBasic of
 * bench_schedule.c (5,000 nodes of 4 cpu / 32Gi / 110 pods, 1,000 existing pods, 10,000 pods of
 * 100m / 500Mi, default profile) with decisionRecords off (SK_BENCH_RECORD=0, the default) or on
 * (SK_BENCH_RECORD=1: every attempt is recorded into a store of the daemon's default bounds, as
 * the daemon's observer does). Prints pods/s, p50/p99 attempt latency, peak RSS and the store's
 * size. Compare the two with callgrind (docs/benchmarks.md): wall time on a loaded machine is
 * noise. Env: SK_BENCH_RECORD, SK_BENCH_RECORD_MIB (the store's byte bound, default 64),
 * SK_BENCH_NODES, SK_BENCH_EXISTING, SK_BENCH_PODS. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"
#include "kube/object.h"
#include "scheduler/backend/cache.h"
#include "scheduler/config/config.h"
#include "scheduler/decisions/store.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/schedule_one.h"

struct bench {
	struct sk_cache *cache;
	struct sk_snapshot *snap;
	struct sk_scheduler *sched;
	double *lat;
	int nlat, caplat;
	int scheduled, unschedulable, errors;
	struct sk_decisions *store;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long vm_hwm_kib(void)
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

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : def;
}

static const struct sk_snapshot *b_update(void *ctx, char **err)
{
	struct bench *b = ctx;
	return sk_cache_update_snapshot(b->cache, b->snap, err) == 0 ? b->snap : NULL;
}
static int b_assume(void *ctx, struct sk_pod *p, char **err) { return sk_cache_assume_pod(((struct bench *)ctx)->cache, p, err); }
static int b_forget(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_forget_pod(((struct bench *)ctx)->cache, p, err); }
static int b_finish(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_finish_binding(((struct bench *)ctx)->cache, p, err); }
static bool b_is_assumed(void *ctx, const char *uid) { return sk_cache_is_assumed(((struct bench *)ctx)->cache, uid); }

static void b_observe(void *ctx, const struct sk_outcome *o)
{
	struct bench *b = ctx;
	if (o->result == SK_RESULT_SCHEDULED)
		b->scheduled++;
	else if (o->result == SK_RESULT_UNSCHEDULABLE)
		b->unschedulable++;
	else
		b->errors++;
	if (b->nlat < b->caplat)
		b->lat[b->nlat++] = o->duration_s;
	if (o->record)
		sk_decisions_add(b->store, o);
}

static const struct sk_snapshot *b_fw_snapshot(void *ctx) { return sk_scheduler_snapshot(((struct bench *)ctx)->sched); }

/* The informer's confirmation, done inline: the assumed pod becomes bound. */
static int b_bind(void *ctx, const struct sk_pod *pod, const char *node, char **err)
{
	struct bench *b = ctx;
	struct sk_pod *bound = sk_pod_with_node(pod, node);
	int rc = bound ? sk_cache_add_pod(b->cache, bound, err) : -1;
	if (rc == 0)
		sk_queue_move_all(sk_scheduler_queue(b->sched), &SK_EVENT_ASSIGNED_POD_ADD, NULL, bound);
	sk_pod_unref(bound);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct sk_node *make_node(int i)
{
	char text[512];
	snprintf(text, sizeof text,
		 "{\"metadata\":{\"name\":\"node-%05d\",\"labels\":{\"kubernetes.io/hostname\":\"node-%05d\"}},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}", i, i);
	cJSON *o = cJSON_Parse(text);
	char *err = NULL;
	struct sk_node *n = o ? sk_node_decode(o, &err) : NULL;
	if (!n)
		fprintf(stderr, "bench: node decode: %s\n", err ? err : "?");
	free(err);
	cJSON_Delete(o);
	return n;
}

static struct sk_pod *make_pod(const char *prefix, int i, const char *node)
{
	char text[768];
	snprintf(text, sizeof text,
		 "{\"metadata\":{\"name\":\"%s-%05d\",\"namespace\":\"default\",\"uid\":\"%s-uid-%05d\"},"
		 "\"spec\":{%s%s%s\"containers\":[{\"name\":\"pause\",\"image\":\"pause:3.9\","
		 "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"}}}]}}",
		 prefix, i, prefix, i, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "");
	cJSON *o = cJSON_Parse(text);
	char *err = NULL;
	struct sk_pod *p = o ? sk_pod_decode(o, &err) : NULL;
	if (!p)
		fprintf(stderr, "bench: pod decode: %s\n", err ? err : "?");
	free(err);
	cJSON_Delete(o);
	return p;
}

int main(void)
{
	int nnodes = env_int("SK_BENCH_NODES", 5000), nexisting = env_int("SK_BENCH_EXISTING", 1000),
	    npods = env_int("SK_BENCH_PODS", 10000);
	static const char def[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
	struct sk_errors errs = { 0 };
	int saved_v = kube_log_verbosity;
	struct sk_config *cfg = sk_config_load(def, sizeof def - 1, &errs);
	sk_errors_free(&errs);
	kube_log_set_verbosity(saved_v);
	if (!cfg) {
		fprintf(stderr, "bench: default config does not load\n");
		return 1;
	}
	bool record = env_int("SK_BENCH_RECORD", 0) != 0;
	cfg->profiles[0].records.enabled = record;
	struct bench b = { .cache = sk_cache_new(0), .snap = sk_snapshot_new(), .caplat = npods,
			   .store = sk_decisions_new(&(struct sk_decisions_opts){
				   .max_bytes = (int64_t)env_int("SK_BENCH_RECORD_MIB", 64) << 20 }) };
	b.lat = calloc((size_t)npods + 1, sizeof *b.lat);
	char *err = NULL;
	struct sk_pool *pool = sk_pool_new(cfg->parallelism, &err);
	struct sk_nominator *nom = sk_nominator_new();
	if (!b.cache || !b.snap || !b.lat || !pool || !nom) {
		fprintf(stderr, "bench: setup failed: %s\n", err ? err : "out of memory");
		return 1;
	}
	struct sk_sched_env env = {
		.ctx = &b, .update_snapshot = b_update, .assume = b_assume, .forget = b_forget,
		.finish_binding = b_finish, .is_assumed = b_is_assumed, .observe = b_observe,
		.seed = 42, .binder_threads = 0, .nominator = nom,
	};
	b.sched = sk_scheduler_new(&env, &err);
	struct sk_framework_env fenv = { .ctx = &b, .pool = pool, .nominator = nom, .snapshot = b_fw_snapshot, .bind = b_bind };
	struct sk_framework *fw = b.sched ? sk_framework_new(cfg, &cfg->profiles[0], &fenv, &err) : NULL;
	if (!fw || sk_scheduler_set_frameworks(b.sched, &fw, 1) != 0) {
		fprintf(stderr, "bench: scheduler: %s\n", err ? err : "?");
		return 1;
	}
	double t0 = now_s();
	for (int i = 0; i < nnodes; i++) {
		struct sk_node *n = make_node(i);
		if (!n || sk_cache_add_node(b.cache, n, NULL) != 0)
			return 1;
		sk_node_unref(n);
	}
	char node[32];
	for (int i = 0; i < nexisting; i++) {
		snprintf(node, sizeof node, "node-%05d", i % nnodes);
		struct sk_pod *p = make_pod("existing", i, node);
		if (!p || sk_cache_add_pod(b.cache, p, NULL) != 0)
			return 1;
		sk_pod_unref(p);
	}
	struct sk_queue *q = sk_scheduler_queue(b.sched);
	for (int i = 0; i < npods; i++) {
		struct sk_pod *p = make_pod("pod", i, NULL);
		if (!p || sk_queue_add(q, p) != 0)
			return 1;
		sk_pod_unref(p);
	}
	double t1 = now_s();
	while (sk_schedule_one(b.sched, false) == 1)
		;
	sk_scheduler_wait_bindings(b.sched);
	double t2 = now_s();

	qsort(b.lat, (size_t)b.nlat, sizeof *b.lat, cmp_double);
	double p50 = b.nlat ? b.lat[b.nlat / 2] : 0, p99 = b.nlat ? b.lat[(int)(b.nlat * 0.99)] : 0;
	printf("SchedulingBasic in-process, decision records %s: %d nodes, %d existing pods, %d pods, %d worker threads\n",
	       record ? "on" : "off", nnodes, nexisting, npods, sk_pool_threads(pool));
	printf("  setup (decode + cache + queue): %.2f s\n", t1 - t0);
	printf("  scheduled %d, unschedulable %d, errors %d in %.3f s\n", b.scheduled, b.unschedulable, b.errors, t2 - t1);
	printf("  throughput: %.0f pods/s (target >= 10000)\n", (t2 > t1) ? b.scheduled / (t2 - t1) : 0.0);
	printf("  attempt latency: p50 %.1f us, p99 %.1f us\n", p50 * 1e6, p99 * 1e6);
	printf("  peak RSS (VmHWM): %.1f MiB (target < 256)\n", vm_hwm_kib() / 1024.0);
	struct sk_decisions_stats st;
	sk_decisions_stats(b.store, &st);
	printf("  decision records: %d kept (%.1f MiB accounted), %llu added, %llu evicted\n", st.records,
	       (double)st.bytes / (1 << 20), (unsigned long long)st.added, (unsigned long long)st.evicted);
	int rc = b.scheduled == npods ? 0 : 1;
	sk_scheduler_free(b.sched);
	sk_framework_unref(fw);
	sk_pool_free(pool);
	sk_nominator_free(nom);
	sk_snapshot_free(b.snap);
	sk_cache_free(b.cache);
	sk_config_free(cfg);
	free(b.lat);
	free(err);
	sk_decisions_free(b.store);
	return rc;
}
