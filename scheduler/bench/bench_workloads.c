/* The workload suite in process (docs/benchmarks.md, "Workload suite"): for each workload of
 * workloads.h, a fresh scheduler over a cluster holding its nodes and bound init pods, a backlog
 * queued before the first attempt, then the drain timed until nothing is left to attempt (the
 * fake clock skips backoff). One table row per workload: pods/s (measured pods / drain time),
 * p50/p99 attempt latency, peak RSS (each workload runs in its own child process).
 *
 *   scheduler_bench_workloads [NAME...]   run the named workloads (default: all, or those whose
 *                                         name contains $SK_BENCH_ONLY)
 *   scheduler_bench_workloads --list      the names
 *   scheduler_bench_workloads --info NAME nodes init pre measure churn churn_every churn_per_s
 *   scheduler_bench_workloads --emit NAME nodes|init|pre|measure   its objects, one JSON per line
 *   scheduler_bench_workloads --churn NAME K   churn step K's node and pod, one JSON per line
 * Sizes: upstream's; SK_BENCH_SMOKE=1 the tiny ones; SK_BENCH_NODES, SK_BENCH_INIT, SK_BENCH_PRE,
 * SK_BENCH_PODS override one. Exit 1 when a workload did not settle (a measured pod not bound, or
 * an error). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kube/hash.h"
#include "scheduler/bench/cluster.h"
#include "scheduler/bench/workloads.h"
#include "scheduler/framework/fw_internal.h"
#include "scheduler/framework/parallel.h"

/* ---------- the preemption digest ---------- */

/* Sum over the evictions of a hash of (preemptor, node, victim): equal for equal preemption
 * decisions in any eviction order (async preemption evicts on its own threads), so two builds can
 * be compared (printed with the attempts). The framework's preempt_victim is wrapped. */
static uint64_t preempt_digest;
static int (*preempt_victim_next)(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim,
				  const char *node_name, const char *condition_message, char **err);

static int digest_preempt_victim(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim,
				 const char *node_name, const char *condition_message, char **err)
{
	uint64_t h = kube_fnv1a64(preemptor->name) * 1000003 + kube_fnv1a64(node_name ? node_name : "") * 31 +
		     kube_fnv1a64(victim->name);
	__atomic_fetch_add(&preempt_digest, h * 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED);
	return preempt_victim_next(ctx, preemptor, victim, node_name, condition_message, err);
}

static struct skb_sizes sizes_of(const struct skb_workload *w)
{
	struct skb_sizes s = skb_env_int("SK_BENCH_SMOKE", 0) ? w->smoke : w->size;
	s.nodes = skb_env_int("SK_BENCH_NODES", s.nodes);
	s.init = skb_env_int("SK_BENCH_INIT", s.init);
	s.pre = skb_env_int("SK_BENCH_PRE", s.pre);
	s.measure = skb_env_int("SK_BENCH_PODS", s.measure);
	return s;
}

static const char *part_name[] = { "nodes", "init", "pre", "measure" };

static int emit(const struct skb_workload *w, const char *part)
{
	struct skb_sizes sz = sizes_of(w);
	char buf[4096];
	for (int p = 0; p < 4; p++) {
		if (strcmp(part, part_name[p]))
			continue;
		int n = skb_part_count(w, &sz, (enum skb_part)p);
		for (int i = 0; i < n; i++) {
			if (skb_object_json(w, &sz, (enum skb_part)p, i, buf, sizeof buf) < 0)
				return 1;
			puts(buf);
		}
		return fflush(stdout) != 0;
	}
	fprintf(stderr, "scheduler_bench_workloads: unknown part %s (nodes, init, pre, measure)\n", part);
	return 2;
}

/* This process's CPU time (all threads), seconds: unlike the wall clock, hardly moved by other
 * processes wanting the cores. */
static double cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* ---------- churn during the drain ---------- */

struct churn {
	const struct skb_workload *w;
	struct skb_sizes sz;
	int since, step, deleted;
	struct sk_pod *last_pod;    /* RECREATE: the previous churn pod (queued) */
	bool have_node;
};

static int churn_tick(struct skb_cluster *c, void *ctx)
{
	struct churn *ch = ctx;
	/* At most every tenth of the measured pods, so a small run churns too. */
	int every = ch->sz.measure / 10 < ch->w->churn_every ? ch->sz.measure / 10 : ch->w->churn_every;
	if (ch->w->churn == SKB_CHURN_NONE || ++ch->since < (every > 0 ? every : 1))
		return 0;
	ch->since = 0;
	char buf[4096];
	if (ch->w->churn == SKB_CHURN_DELETE_INIT) {
		if (ch->deleted >= ch->sz.init ||
		    skb_object_json(ch->w, &ch->sz, SKB_INIT, ch->deleted++, buf, sizeof buf) < 0)
			return 0;
		struct sk_pod *p = skb_pod_from_json(buf);
		int rc = p ? skb_remove_pod(c, p) : -1;
		sk_pod_unref(p);
		return rc != 0;
	}
	/* RECREATE: the previous node and pod go, new ones come. */
	int k = ch->step++;
	if (ch->have_node) {
		snprintf(buf, sizeof buf, "node-churn-%d", k - 1);
		if (skb_remove_node(c, buf) != 0)
			return 1;
	}
	if (ch->last_pod) {
		sk_queue_delete(sk_scheduler_queue(c->sched), ch->last_pod);
		sk_pod_unref(ch->last_pod);
		ch->last_pod = NULL;
	}
	if (skb_churn_node_json(k, buf, sizeof buf) < 0 || skb_add_node(c, buf) != 0)
		return 1;
	ch->have_node = true;
	if (skb_churn_pod_json(ch->w, k, buf, sizeof buf) < 0 || !(ch->last_pod = skb_pod_from_json(buf)))
		return 1;
	return sk_queue_add(sk_scheduler_queue(c->sched), ch->last_pod) != 0;
}

/* ---------- one workload ---------- */

static int fill(struct skb_cluster *c, const struct skb_workload *w, const struct skb_sizes *sz)
{
	char buf[4096];
	for (int p = 0; p < 4; p++)
		for (int i = 0, n = skb_part_count(w, sz, (enum skb_part)p); i < n; i++) {
			if (skb_object_json(w, sz, (enum skb_part)p, i, buf, sizeof buf) < 0)
				return -1;
			int rc = p == SKB_NODES ? skb_add_node(c, buf)
				 : p == SKB_INIT ? skb_add_bound_pod(c, buf)
						 : skb_enqueue_pod(c, buf);
			if (rc != 0)
				return -1;
		}
	return 0;
}

static int run_one(const struct skb_workload *w)
{
	struct skb_sizes sz = sizes_of(w);
	struct sk_config *cfg = skb_default_config();
	char *err = NULL;
	struct skb_cluster *c = cfg ? skb_cluster_new(&(struct skb_cluster_opts){
					      .cfg = cfg, .fake_clock = !skb_env_int("SK_BENCH_REAL_CLOCK", 0), .lat_cap = sz.pre + sz.measure * 2 + 1000 },
				      &err)
				    : NULL;
	if (!c) {
		fprintf(stderr, "bench %s: %s\n", w->name, err ? err : "setup failed");
		free(err);
		sk_config_free(cfg);
		return 1;
	}
	if (c->fw->env.preempt_victim) {
		preempt_victim_next = c->fw->env.preempt_victim;
		c->fw->env.preempt_victim = digest_preempt_victim;
	}
	double t0 = skb_now_s();
	if (fill(c, w, &sz) != 0) {
		skb_cluster_free(c);
		sk_config_free(cfg);
		return 1;
	}
	double setup = skb_now_s() - t0;
	struct churn ch = { .w = w, .sz = sz };
	long budget = 50L * (sz.pre + sz.measure) + 1000;
	double cpu0 = cpu_s();
	double secs = skb_drain(c, budget, churn_tick, &ch);
	double cpu = cpu_s() - cpu0;
	sk_pod_unref(ch.last_pod);
	bool settled = c->scheduled >= sz.measure && c->errors == 0;
	char p50[32], p99[32];
	snprintf(p50, sizeof p50, "%.1f us", skb_latency_pct(c, 0.5) * 1e6);
	snprintf(p99, sizeof p99, "%.1f us", skb_latency_pct(c, 0.99) * 1e6);
	printf("| %-24s | in-process | %5d | %5d | %5d+%-5d | %9.0f | %7.3f | %7.2f | %10s | %10s | %7.1f | %s |\n",
	       w->name, skb_part_count(w, &sz, SKB_NODES), sz.init, sz.pre, sz.measure, secs > 0 ? sz.measure / secs : 0.0,
	       secs, cpu, p50, p99, skb_vm_hwm_kib() / 1024.0, settled ? "yes" : "NO");
	printf("|   attempts %d: scheduled %d, unschedulable %d, errors %d; nominated %d, victims %d; churn steps %d, "
	       "deleted %d; setup %.2f s; %d worker threads; preemption digest %016llx, placements digest %016llx |\n",
	       c->attempts, c->scheduled, c->unschedulable, c->errors, c->nominated, c->victims, ch.step, ch.deleted,
	       setup, sk_pool_threads(c->pool), (unsigned long long)__atomic_load_n(&preempt_digest, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&c->placements, __ATOMIC_RELAXED));
	fflush(stdout);
	skb_cluster_free(c);
	sk_config_free(cfg);
	return settled ? 0 : 1;
}

/* Each workload in its own process: its peak RSS is its own. */
static int run_child(const struct skb_workload *w)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return run_one(w);
	if (pid == 0)
		_exit(run_one(w));
	int st = 0;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		if (!WIFEXITED(st))
			printf("| %-24s | in-process | crashed (signal %d) |\n", w->name, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		return 1;
	}
	return 0;
}

void skb_print_table_head(void);
void skb_print_table_head(void)
{
	printf("| workload                 | mode       | nodes |  init | pre+measured | pods/s    | drain s | CPU s   "
	       "| p50        | p99        | RSS MiB | settled |\n");
}

int main(int argc, char **argv)
{
	int n;
	const struct skb_workload *all = skb_workloads(&n);
	if (argc >= 2 && !strcmp(argv[1], "--list")) {
		for (int i = 0; i < n; i++)
			printf("%s\n", all[i].name);
		return 0;
	}
	if (argc >= 3 && (!strcmp(argv[1], "--info") || !strcmp(argv[1], "--emit") || !strcmp(argv[1], "--churn"))) {
		const struct skb_workload *w = skb_workload_find(argv[2]);
		if (!w) {
			fprintf(stderr, "scheduler_bench_workloads: unknown workload %s (--list)\n", argv[2]);
			return 2;
		}
		struct skb_sizes sz = sizes_of(w);
		if (!strcmp(argv[1], "--info")) {
			printf("%d %d %d %d %d %d %d\n", skb_part_count(w, &sz, SKB_NODES), sz.init, sz.pre, sz.measure,
			       (int)w->churn, w->churn_every, w->churn_per_s);
			return 0;
		}
		if (!strcmp(argv[1], "--emit"))
			return argc >= 4 ? emit(w, argv[3]) : 2;
		char buf[4096];
		int k = argc >= 4 ? atoi(argv[3]) : 0;
		if (skb_churn_node_json(k, buf, sizeof buf) < 0)
			return 1;
		puts(buf);
		if (skb_churn_pod_json(w, k, buf, sizeof buf) < 0)
			return 1;
		puts(buf);
		return 0;
	}
	const char *only = getenv("SK_BENCH_ONLY");
	printf("Workload suite in process (%s sizes; scheduler_perf shapes, docs/benchmarks.md)\n",
	       skb_env_int("SK_BENCH_SMOKE", 0) ? "smoke" : "upstream");
	skb_print_table_head();
	int rc = 0, ran = 0;
	for (int i = 0; i < n; i++) {
		bool named = argc < 2;
		for (int a = 1; a < argc; a++)
			named |= !strcmp(argv[a], all[i].name);
		if (!named || (argc < 2 && only && *only && !strstr(all[i].name, only)))
			continue;
		ran++;
		rc |= run_child(&all[i]);
	}
	if (!ran) {
		fprintf(stderr, "scheduler_bench_workloads: no workload selected (--list)\n");
		return 2;
	}
	return rc;
}
