/* What full objects on the extender wire cost (docs/benchmarks.md, "Extenders"): the kept JSON
 * of 5,000 kubelet-style nodes and 10,000 pods (scheduler/api/raw.c; bytes, and the RSS growth
 * of decoding with it), and building one ExtenderArgs body for 1,000 nodes with full Node objects
 * (nodeCacheCapable: false) and with names (true). Prints figures; asserts nothing about time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "scheduler/api/raw.h"
#include "scheduler/framework/extender_priv.h"
#include "schedkit/types.h"

#define NNODES 5000
#define NPODS 10000
#define NARGS 1000
#define ROUNDS 50

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* A node as a kubelet reports it: labels, conditions, addresses, nodeInfo, 25 images, and the
 * managedFields every object carries (dropped when kept). */
static cJSON *make_node(int i)
{
	char buf[16384];
	int off = snprintf(buf, sizeof(buf),
			   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%d\",\"uid\":\"uid-node-%d\","
			   "\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2024-05-01T10:00:00Z\",\"labels\":{"
			   "\"kubernetes.io/hostname\":\"node-%d\",\"kubernetes.io/os\":\"linux\",\"kubernetes.io/arch\":\"amd64\","
			   "\"node.kubernetes.io/instance-type\":\"m5.%dxlarge\",\"topology.kubernetes.io/region\":\"region-1\","
			   "\"topology.kubernetes.io/zone\":\"zone-%d\",\"pool\":\"pool-%d\"},"
			   "\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\",\"volumes.kubernetes.io/controller-managed-attach-detach\":\"true\"},"
			   "\"managedFields\":[{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
			   "\"time\":\"2024-05-01T10:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:conditions\":{},"
			   "\"f:images\":{},\"f:nodeInfo\":{}}}}]},"
			   "\"spec\":{\"podCIDR\":\"10.%d.%d.0/24\",\"podCIDRs\":[\"10.%d.%d.0/24\"],\"providerID\":\"aws:///zone/i-%08d\"},"
			   "\"status\":{\"capacity\":{\"cpu\":\"32\",\"memory\":\"128Gi\",\"pods\":\"110\",\"ephemeral-storage\":\"400Gi\"},"
			   "\"allocatable\":{\"cpu\":\"31500m\",\"memory\":\"125Gi\",\"ephemeral-storage\":\"380Gi\",\"pods\":\"110\"},"
			   "\"conditions\":[",
			   i, i, i, i, 1 + i % 4, i % 3, i % 20, (i / 256) % 256, i % 256, (i / 256) % 256, i % 256, i);
	static const char *const conds[] = { "MemoryPressure", "DiskPressure", "PIDPressure", "Ready" };
	for (int k = 0; k < 4; k++)
		off += snprintf(buf + off, sizeof(buf) - (size_t)off,
				"%s{\"type\":\"%s\",\"status\":\"%s\",\"lastHeartbeatTime\":\"2024-05-01T10:00:00Z\","
				"\"lastTransitionTime\":\"2024-05-01T10:00:00Z\",\"reason\":\"Kubelet%s\",\"message\":\"kubelet reports %s\"}",
				k ? "," : "", conds[k], k == 3 ? "True" : "False", conds[k], conds[k]);
	off += snprintf(buf + off, sizeof(buf) - (size_t)off,
			"],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.%d.%d\"},{\"type\":\"Hostname\",\"address\":\"node-%d\"}],"
			"\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}},\"nodeInfo\":{\"machineID\":\"%032d\","
			"\"systemUUID\":\"%032d\",\"bootID\":\"%032d\",\"kernelVersion\":\"6.1.0\",\"osImage\":\"Debian GNU/Linux 12\","
			"\"containerRuntimeVersion\":\"containerd://1.7.0\",\"kubeletVersion\":\"v1.32.0\",\"kubeProxyVersion\":\"v1.32.0\","
			"\"operatingSystem\":\"linux\",\"architecture\":\"amd64\"},\"images\":[",
			(i / 256) % 256, i % 256, i, i, i, i);
	for (int k = 0; k < 25; k++)
		off += snprintf(buf + off, sizeof(buf) - (size_t)off,
				"%s{\"names\":[\"registry.example/team-%d/image-%d@sha256:%064d\",\"registry.example/team-%d/image-%d:v%d\"],"
				"\"sizeBytes\":%d}",
				k ? "," : "", k % 5, (i + k) % 60, (i + k) % 60, k % 5, (i + k) % 60, k, 100000000 + k * 1000);
	snprintf(buf + off, sizeof(buf) - (size_t)off, "]}}");
	return cJSON_Parse(buf);
}

static cJSON *make_pod(int i)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"app-%05d\",\"namespace\":\"ns-%d\","
		 "\"uid\":\"pod-uid-%d\",\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2024-05-01T10:00:00Z\","
		 "\"labels\":{\"app\":\"app-%d\",\"pod-template-hash\":\"abc%d\"},"
		 "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"app-%d-abc\","
		 "\"uid\":\"rs-uid-%d\",\"controller\":true,\"blockOwnerDeletion\":true}],"
		 "\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"fieldsType\":\"FieldsV1\","
		 "\"fieldsV1\":{\"f:spec\":{\"f:containers\":{}}}}]},"
		 "\"spec\":{\"nodeName\":\"node-%d\",\"schedulerName\":\"default-scheduler\",\"priority\":0,\"restartPolicy\":\"Always\","
		 "\"containers\":[{\"name\":\"main\",\"image\":\"registry.example/team-%d/image-%d:v1\","
		 "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},\"limits\":{\"cpu\":\"2\",\"memory\":\"2Gi\"}},"
		 "\"ports\":[{\"containerPort\":8080,\"protocol\":\"TCP\"}]}],"
		 "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}]},"
		 "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.%d.%d\",\"startTime\":\"2024-05-01T10:00:00Z\"}}",
		 i, i % 10, i, i, i % 100, i % 100, i % 100, i, i % NNODES, i % 5, i % 60, (i / 256) % 256, i % 256);
	return cJSON_Parse(buf);
}

int main(void)
{
	static struct sk_node *nodes[NNODES];
	static struct sk_pod *pods[NPODS];
	size_t node_json = 0, node_kept = 0, pod_json = 0, pod_kept = 0;
	long rss0 = rss_kb();
	for (int i = 0; i < NNODES; i++) {
		cJSON *j = make_node(i);
		char *s = cJSON_PrintUnformatted(j);
		node_json += strlen(s);
		free(s);
		nodes[i] = sk_node_decode(j, NULL);
		cJSON_Delete(j);
		if (!nodes[i])
			return 1;
		node_kept += sk_node_raw(nodes[i])->len;
	}
	long rss1 = rss_kb();
	for (int i = 0; i < NPODS; i++) {
		cJSON *j = make_pod(i);
		char *s = cJSON_PrintUnformatted(j);
		pod_json += strlen(s);
		free(s);
		pods[i] = sk_pod_decode(j, NULL);
		cJSON_Delete(j);
		if (!pods[i])
			return 1;
		pod_kept += sk_pod_raw(pods[i])->len;
	}
	long rss2 = rss_kb();
	printf("nodes: %d, served JSON %.1f MiB (%.0f B/node), kept %.1f MiB (%.0f B/node, managedFields dropped); "
	       "RSS after decoding %ld KiB\n",
	       NNODES, node_json / 1048576.0, (double)node_json / NNODES, node_kept / 1048576.0, (double)node_kept / NNODES,
	       rss1 - rss0);
	printf("pods: %d, served JSON %.1f MiB (%.0f B/pod), kept %.1f MiB (%.0f B/pod); RSS after decoding %ld KiB\n",
	       NPODS, pod_json / 1048576.0, (double)pod_json / NPODS, pod_kept / 1048576.0, (double)pod_kept / NPODS,
	       rss2 - rss1);

	/* ExtenderArgs for 1,000 nodes */
	static struct sk_node_info nis[NARGS];
	static const struct sk_node_info *list[NARGS];
	for (int i = 0; i < NARGS; i++) {
		nis[i].node = nodes[i];
		list[i] = &nis[i];
	}
	cJSON *cfg_full = cJSON_Parse("{\"urlPrefix\":\"http://127.0.0.1:1\",\"filterVerb\":\"f\"}");
	cJSON *cfg_names = cJSON_Parse("{\"urlPrefix\":\"http://127.0.0.1:1\",\"filterVerb\":\"f\",\"nodeCacheCapable\":true}");
	struct sk_extender *full = sk_extender_new(cfg_full, NULL, NULL), *names = sk_extender_new(cfg_names, NULL, NULL);
	struct sk_extender *es[2] = { full, names };
	const char *label[2] = { "nodeCacheCapable=false (full Nodes)", "nodeCacheCapable=true (NodeNames)" };
	for (int m = 0; m < 2; m++) {
		size_t len = 0;
		double t0 = now_s();
		for (int r = 0; r < ROUNDS; r++) {
			char *b = sk_extender_args_body(es[m], pods[r], list, NARGS);
			len = strlen(b);
			free(b);
		}
		double dt = (now_s() - t0) / ROUNDS;
		printf("ExtenderArgs for %d nodes, %s: %.2f MiB, %.3f ms to build\n", NARGS, label[m], len / 1048576.0, dt * 1e3);
	}
	sk_extender_free(full);
	sk_extender_free(names);
	cJSON_Delete(cfg_full);
	cJSON_Delete(cfg_names);
	for (int i = 0; i < NPODS; i++)
		sk_pod_unref(pods[i]);
	for (int i = 0; i < NNODES; i++)
		sk_node_unref(nodes[i]);
	return 0;
}
