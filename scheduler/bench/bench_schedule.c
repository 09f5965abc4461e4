/* In-process SchedulingBasic (upstream scheduler_perf "SchedulingBasic 5000Nodes_10000Pods"):
 * 5,000 nodes (4 cpu, 32Gi, 110 pods), 1,000 existing pods, then 10,000 pods (100m, 500Mi) to
 * place with the default profile. Runs the real scheduler over the benchmark cluster (cluster.h,
 * the shapes of workloads.c's SchedulingBasic) and prints pods/s, p50/p99 attempt latency and
 * peak RSS (VmHWM). Env: SK_BENCH_NODES, SK_BENCH_EXISTING, SK_BENCH_PODS. */
#include <stdio.h>
#include <stdlib.h>

#include "scheduler/bench/cluster.h"
#include "scheduler/bench/workloads.h"
#include "scheduler/framework/parallel.h"

int main(void)
{
	const struct skb_workload *w = skb_workload_find("SchedulingBasic");
	struct skb_sizes sz = {
		.nodes = skb_env_int("SK_BENCH_NODES", 5000), .init = skb_env_int("SK_BENCH_EXISTING", 1000),
		.measure = skb_env_int("SK_BENCH_PODS", 10000),
	};
	struct sk_config *cfg = skb_default_config();
	char *err = NULL;
	struct skb_cluster *c = cfg ? skb_cluster_new(&(struct skb_cluster_opts){ .cfg = cfg, .lat_cap = sz.measure + 1 },
						      &err)
				    : NULL;
	if (!w || !c) {
		fprintf(stderr, "bench: setup failed: %s\n", err ? err : "?");
		return 1;
	}
	double t0 = skb_now_s();
	char buf[4096];
	for (int p = SKB_NODES; p <= SKB_MEASURE; p++)
		for (int i = 0; i < skb_part_count(w, &sz, (enum skb_part)p); i++) {
			if (skb_object_json(w, &sz, (enum skb_part)p, i, buf, sizeof buf) < 0)
				return 1;
			if ((p == SKB_NODES ? skb_add_node(c, buf) : p == SKB_INIT ? skb_add_bound_pod(c, buf)
										 : skb_enqueue_pod(c, buf)) != 0)
				return 1;
		}
	double t1 = skb_now_s();
	double secs = skb_drain(c, (long)sz.measure * 50 + 1000, NULL, NULL);

	printf("SchedulingBasic in-process: %d nodes, %d existing pods, %d pods, %d worker threads\n", sz.nodes, sz.init,
	       sz.measure, sk_pool_threads(c->pool));
	printf("  setup (decode + cache + queue): %.2f s\n", t1 - t0);
	printf("  scheduled %d, unschedulable %d, errors %d in %.3f s\n", c->scheduled, c->unschedulable, c->errors, secs);
	printf("  throughput: %.0f pods/s (target >= 10000)\n", secs > 0 ? c->scheduled / secs : 0.0);
	printf("  attempt latency: p50 %.1f us, p99 %.1f us\n", skb_latency_pct(c, 0.5) * 1e6,
	       skb_latency_pct(c, 0.99) * 1e6);
	printf("  peak RSS (VmHWM): %.1f MiB (target < 256)\n", skb_vm_hwm_kib() / 1024.0);
	printf("  placements digest: %016llx\n", (unsigned long long)c->placements);
	int rc = c->scheduled == sz.measure ? 0 : 1;
	skb_cluster_free(c);
	sk_config_free(cfg);
	free(err);
	return rc;
}
