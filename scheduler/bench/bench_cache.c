/* Cluster-state benchmark: decode 10,000 pods and 5,000 nodes (pods/s, nodes/s), load them into
 * the cache, full and incremental snapshot updates (cost after one assume on 5,000 nodes), and
 * the peak RSS after loading (VmHWM). Prints figures; asserts nothing about time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "scheduler/backend/cache.h"
#include "schedkit/types.h"

#define NNODES 5000
#define NPODS 10000

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	long v = -1;
	size_t n = strlen(field);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* A node as a kubelet reports it: ~10 labels, allocatable, a taint on some, 25 images. */
static cJSON *make_node(int i)
{
	char buf[8192];
	int off = snprintf(buf, sizeof(buf),
			   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%d\",\"uid\":\"uid-node-%d\","
			   "\"resourceVersion\":\"%d\",\"labels\":{\"kubernetes.io/hostname\":\"node-%d\","
			   "\"kubernetes.io/os\":\"linux\",\"kubernetes.io/arch\":\"amd64\",\"beta.kubernetes.io/os\":\"linux\","
			   "\"beta.kubernetes.io/arch\":\"amd64\",\"node.kubernetes.io/instance-type\":\"m5.%dxlarge\","
			   "\"topology.kubernetes.io/region\":\"region-1\",\"topology.kubernetes.io/zone\":\"zone-%d\","
			   "\"pool\":\"pool-%d\",\"disk\":\"%s\"}},"
			   "\"spec\":{\"podCIDR\":\"10.%d.%d.0/24\"%s},"
			   "\"status\":{\"capacity\":{\"cpu\":\"32\",\"memory\":\"128Gi\",\"pods\":\"110\"},"
			   "\"allocatable\":{\"cpu\":\"31500m\",\"memory\":\"125Gi\",\"ephemeral-storage\":\"400Gi\",\"pods\":\"110\","
			   "\"hugepages-2Mi\":\"0\",\"hugepages-1Gi\":\"0\"%s},\"images\":[",
			   i, i, i, i, 1 + i % 4, i % 3, i % 20, i % 2 ? "ssd" : "hdd", (i / 256) % 256, i % 256,
			   i % 10 == 0 ? ",\"taints\":[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]" : "",
			   i % 10 == 0 ? ",\"nvidia.com/gpu\":\"8\"" : "");
	for (int k = 0; k < 25; k++)
		off += snprintf(buf + off, sizeof(buf) - (size_t)off,
				"%s{\"names\":[\"registry.example/team-%d/image-%d@sha256:%064d\",\"registry.example/team-%d/image-%d:v%d\"],"
				"\"sizeBytes\":%d}",
				k ? "," : "", k % 5, (i + k) % 60, (i + k) % 60, k % 5, (i + k) % 60, k, 100000000 + k * 1000);
	snprintf(buf + off, sizeof(buf) - (size_t)off, "]}}");
	return cJSON_Parse(buf);
}

/* A Deployment-style pod: labels, owner, 2 containers with requests and an image, tolerations,
 * a nodeSelector on some, anti-affinity on some, bound or not. */
static cJSON *make_pod(int i, const char *node)
{
	char buf[4096], nodefield[64] = "";
	if (node)
		snprintf(nodefield, sizeof(nodefield), "\"nodeName\":\"%s\",", node);
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"app-%d-%05d\",\"namespace\":\"ns-%d\","
		 "\"uid\":\"pod-uid-%d\",\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2024-05-01T10:00:00Z\","
		 "\"labels\":{\"app\":\"app-%d\",\"pod-template-hash\":\"abc%d\",\"tier\":\"%s\"},"
		 "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"app-%d-abc\","
		 "\"uid\":\"rs-uid-%d\",\"controller\":true,\"blockOwnerDeletion\":true}]},"
		 "\"spec\":{%s\"schedulerName\":\"default-scheduler\",\"priority\":0,\"restartPolicy\":\"Always\","
		 "\"containers\":[{\"name\":\"main\",\"image\":\"registry.example/team-%d/image-%d:v1\","
		 "\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"},\"limits\":{\"cpu\":\"2\",\"memory\":\"2Gi\"}},"
		 "\"ports\":[{\"containerPort\":8080,\"protocol\":\"TCP\"}]},"
		 "{\"name\":\"sidecar\",\"image\":\"registry.example/proxy\",\"resources\":{\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"}}}],"
		 "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300},"
		 "{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}]"
		 "%s%s},\"status\":{\"phase\":\"%s\"}}",
		 i % 100, i, i % 10, i, i, i % 100, i % 100, i % 3 ? "web" : "db", i % 100, i % 100, nodefield, i % 5,
		 i % 60, 100 + (i % 8) * 100, 128 + (i % 4) * 128,
		 i % 4 == 0 ? ",\"nodeSelector\":{\"disk\":\"ssd\"}" : "",
		 i % 10 == 0 ? ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
			       "\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}},\"topologyKey\":\"kubernetes.io/hostname\"}]}}"
			     : "",
		 node ? "Running" : "Pending");
	return cJSON_Parse(buf);
}

int main(void)
{
	char *err = NULL;
	/* ---- 1. Load 5,000 nodes + 10,000 bound pods into a cache, streaming (one JSON tree alive
	 * at a time), then one full snapshot: peak RSS is the cluster state's own. ---- */
	long rss0 = status_kb("VmRSS");
	struct sk_cache *cache = sk_cache_new(0);
	struct sk_snapshot *snap = sk_snapshot_new();
	for (int i = 0; i < NNODES; i++) {
		cJSON *j = make_node(i);
		struct sk_node *n = sk_node_decode(j, &err);
		cJSON_Delete(j);
		if (!n || sk_cache_add_node(cache, n, &err) != 0) {
			fprintf(stderr, "node %d: %s\n", i, err ? err : "?");
			return 1;
		}
		sk_node_unref(n);
	}
	for (int i = 0; i < NPODS; i++) {
		char node[32];
		snprintf(node, sizeof(node), "node-%d", i % NNODES);
		cJSON *j = make_pod(i, node);
		struct sk_pod *p = sk_pod_decode(j, &err);
		cJSON_Delete(j);
		if (!p || sk_cache_add_pod(cache, p, &err) != 0) {
			fprintf(stderr, "pod %d: %s\n", i, err ? err : "?");
			return 1;
		}
		sk_pod_unref(p);
	}
	double t0 = now_s();
	if (sk_cache_update_snapshot(cache, snap, &err) != 0) {
		fprintf(stderr, "snapshot: %s\n", err);
		return 1;
	}
	double full = now_s() - t0;
	long hwm = status_kb("VmHWM"), rss = status_kb("VmRSS");
	printf("cache loaded: %d nodes, %d pods; snapshot %d nodes, %d with affinity pods\n", sk_cache_node_count(cache),
	       sk_cache_pod_count(cache), snap->nnodes, snap->nhave_affinity);
	printf("rss: VmHWM %.1f MiB, VmRSS %.1f MiB (process start %.1f MiB; cache + one snapshot)\n", hwm / 1024.0,
	       rss / 1024.0, rss0 / 1024.0);
	printf("snapshot full update (5000 nodes): %.3f ms\n", full * 1e3);

	/* ---- 2. Incremental snapshot update after one assume. ---- */
	cJSON *pj = make_pod(NPODS + 1, NULL);
	struct sk_pod *pending = sk_pod_decode(pj, &err);
	cJSON_Delete(pj);
	const int iters = 2000;
	double upd = 0, assume = 0, noop = 0;
	for (int k = 0; k < iters; k++) {
		char node[32];
		snprintf(node, sizeof(node), "node-%d", (k * 7919) % NNODES);
		struct sk_pod *ap = sk_pod_with_node(pending, node);
		double a = now_s();
		sk_cache_assume_pod(cache, ap, NULL);
		double b = now_s();
		sk_cache_update_snapshot(cache, snap, NULL);
		double c = now_s();
		sk_cache_update_snapshot(cache, snap, NULL);
		double d = now_s();
		assume += b - a;
		upd += c - b;
		noop += d - c;
		sk_cache_forget_pod(cache, ap, NULL);
		sk_cache_update_snapshot(cache, snap, NULL);
		sk_pod_unref(ap);
	}
	printf("assume: %.2f us; snapshot update after one assume (5000 nodes): %.2f us; with nothing changed: %.2f us\n",
	       assume / iters * 1e6, upd / iters * 1e6, noop / iters * 1e6);
	sk_pod_unref(pending);

	/* A node status heartbeat (same object content, new decode) followed by a snapshot update. */
	double hb = 0;
	const int hb_iters = 500;
	for (int k = 0; k < hb_iters; k++) {
		cJSON *j = make_node((k * 7919) % NNODES);
		struct sk_node *n = sk_node_decode(j, NULL);
		cJSON_Delete(j);
		double a = now_s();
		sk_cache_update_node(cache, n, NULL);
		sk_cache_update_snapshot(cache, snap, NULL);
		hb += now_s() - a;
		sk_node_unref(n);
	}
	printf("node update + snapshot update (5000 nodes): %.2f us\n", hb / hb_iters * 1e6);
	sk_snapshot_free(snap);
	sk_cache_free(cache);

	/* ---- 3. Decode throughput over pre-parsed JSON trees. ---- */
	cJSON **nodes = malloc(sizeof(*nodes) * NNODES);
	cJSON **pods = malloc(sizeof(*pods) * NPODS);
	for (int i = 0; i < NNODES; i++)
		nodes[i] = make_node(i);
	for (int i = 0; i < NPODS; i++)
		pods[i] = make_pod(i, NULL);
	struct sk_node **dn = malloc(sizeof(*dn) * NNODES);
	struct sk_pod **dp = malloc(sizeof(*dp) * NPODS);
	for (int round = 0; round < 2; round++) { /* round 0 warms the intern table */
		t0 = now_s();
		for (int i = 0; i < NNODES; i++)
			dn[i] = sk_node_decode(nodes[i], NULL);
		double tn = now_s() - t0;
		t0 = now_s();
		for (int i = 0; i < NPODS; i++)
			dp[i] = sk_pod_decode(pods[i], NULL);
		double tp = now_s() - t0;
		if (round == 1)
			printf("decode: %d nodes in %.1f ms (%.0f nodes/s), %d pods in %.1f ms (%.0f pods/s)\n", NNODES,
			       tn * 1e3, NNODES / tn, NPODS, tp * 1e3, NPODS / tp);
		for (int i = 0; i < NNODES; i++)
			sk_node_unref(dn[i]);
		for (int i = 0; i < NPODS; i++)
			sk_pod_unref(dp[i]);
	}
	/* intern lookups (hits) */
	const int nlook = 1000000;
	t0 = now_s();
	const char *keep = NULL;
	for (int i = 0; i < nlook; i++)
		keep = sk_intern(i & 1 ? "kubernetes.io/hostname" : "topology.kubernetes.io/zone");
	double ti = now_s() - t0;
	printf("sk_intern hit: %.1f ns (%s)\n", ti / nlook * 1e9, keep ? "ok" : "oom");
	for (int i = 0; i < NNODES; i++)
		cJSON_Delete(nodes[i]);
	for (int i = 0; i < NPODS; i++)
		cJSON_Delete(pods[i]);
	free(nodes);
	free(pods);
	free(dn);
	free(dp);
	return 0;
}
