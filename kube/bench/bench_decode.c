/* Decoding throughput of the kube value modules: a generated 10,000-pod PodList (~2 KB per
 * pod) through cJSON_Parse and through kube_yaml_parse (as YAML and as JSON), the printers, and
 * quantity parsing / label selector matching. Prints "name: value unit" lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "kube/object.h"
#include "kube/quantity.h"
#include "kube/selector.h"

#define PODS 10000

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static cJSON *make_container(int i, int c)
{
	char buf[128];
	cJSON *ct = cJSON_CreateObject();
	snprintf(buf, sizeof(buf), "container-%d", c);
	cJSON_AddStringToObject(ct, "name", buf);
	snprintf(buf, sizeof(buf), "registry.example.internal/team-%d/service-%d:v1.%d.%d", i % 17, i % 97, c, i % 13);
	cJSON_AddStringToObject(ct, "image", buf);
	cJSON *args = cJSON_AddArrayToObject(ct, "args");
	cJSON_AddItemToArray(args, cJSON_CreateString("--port=8080"));
	cJSON_AddItemToArray(args, cJSON_CreateString("--log-level=info"));
	cJSON *ports = cJSON_AddArrayToObject(ct, "ports");
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "name", c ? "metrics" : "http");
	cJSON_AddNumberToObject(p, "containerPort", c ? 9090 : 8080);
	cJSON_AddStringToObject(p, "protocol", "TCP");
	cJSON_AddItemToArray(ports, p);
	cJSON *env = cJSON_AddArrayToObject(ct, "env");
	static const char *names[] = {"POD_NAME", "POD_NAMESPACE", "GOMAXPROCS", "LOG_FORMAT"};
	for (int e = 0; e < 4; e++) {
		cJSON *v = cJSON_CreateObject();
		cJSON_AddStringToObject(v, "name", names[e]);
		snprintf(buf, sizeof(buf), "value-%d-%d", i, e);
		cJSON_AddStringToObject(v, "value", buf);
		cJSON_AddItemToArray(env, v);
	}
	cJSON *res = cJSON_AddObjectToObject(ct, "resources");
	cJSON *req = cJSON_AddObjectToObject(res, "requests");
	cJSON_AddStringToObject(req, "cpu", c ? "50m" : "250m");
	cJSON_AddStringToObject(req, "memory", c ? "64Mi" : "512Mi");
	cJSON *lim = cJSON_AddObjectToObject(res, "limits");
	cJSON_AddStringToObject(lim, "cpu", c ? "100m" : "1");
	cJSON_AddStringToObject(lim, "memory", c ? "128Mi" : "1Gi");
	cJSON *vm = cJSON_AddArrayToObject(ct, "volumeMounts");
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "name", "kube-api-access");
	cJSON_AddStringToObject(m, "mountPath", "/var/run/secrets/kubernetes.io/serviceaccount");
	cJSON_AddTrueToObject(m, "readOnly");
	cJSON_AddItemToArray(vm, m);
	cJSON_AddStringToObject(ct, "imagePullPolicy", "IfNotPresent");
	return ct;
}

static cJSON *make_pod(int i)
{
	char buf[160];
	cJSON *pod = cJSON_CreateObject();
	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	cJSON *md = cJSON_AddObjectToObject(pod, "metadata");
	snprintf(buf, sizeof(buf), "web-%d-7d9f8c6b5-%05d", i % 50, i);
	cJSON_AddStringToObject(md, "name", buf);
	snprintf(buf, sizeof(buf), "team-%d", i % 20);
	cJSON_AddStringToObject(md, "namespace", buf);
	snprintf(buf, sizeof(buf), "3f2b8c1e-%04x-4c1d-9e7a-%012d", i & 0xffff, i);
	cJSON_AddStringToObject(md, "uid", buf);
	snprintf(buf, sizeof(buf), "%d", 100000 + i);
	cJSON_AddStringToObject(md, "resourceVersion", buf);
	cJSON_AddStringToObject(md, "creationTimestamp", "2026-11-30T02:43:22Z");
	cJSON *labels = cJSON_AddObjectToObject(md, "labels");
	snprintf(buf, sizeof(buf), "web-%d", i % 50);
	cJSON_AddStringToObject(labels, "app", buf);
	cJSON_AddStringToObject(labels, "pod-template-hash", "7d9f8c6b5");
	cJSON_AddStringToObject(labels, "tier", i % 3 ? "frontend" : "backend");
	cJSON_AddStringToObject(labels, "app.kubernetes.io/managed-by", "schedkit-bench");
	cJSON *ann = cJSON_AddObjectToObject(md, "annotations");
	cJSON_AddStringToObject(ann, "kubectl.kubernetes.io/restartedAt", "2026-11-29T10:00:00Z");
	cJSON_AddStringToObject(ann, "prometheus.io/scrape", "true");
	cJSON *owners = cJSON_AddArrayToObject(md, "ownerReferences");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(o, "kind", "ReplicaSet");
	snprintf(buf, sizeof(buf), "web-%d-7d9f8c6b5", i % 50);
	cJSON_AddStringToObject(o, "name", buf);
	cJSON_AddStringToObject(o, "uid", "a1b2c3d4-0000-4000-8000-000000000001");
	cJSON_AddTrueToObject(o, "controller");
	cJSON_AddTrueToObject(o, "blockOwnerDeletion");
	cJSON_AddItemToArray(owners, o);
	cJSON *spec = cJSON_AddObjectToObject(pod, "spec");
	cJSON *cs = cJSON_AddArrayToObject(spec, "containers");
	cJSON_AddItemToArray(cs, make_container(i, 0));
	cJSON_AddItemToArray(cs, make_container(i, 1));
	cJSON_AddStringToObject(spec, "restartPolicy", "Always");
	cJSON_AddNumberToObject(spec, "terminationGracePeriodSeconds", 30);
	cJSON_AddStringToObject(spec, "dnsPolicy", "ClusterFirst");
	cJSON_AddStringToObject(spec, "serviceAccountName", "default");
	cJSON_AddStringToObject(spec, "schedulerName", "default-scheduler");
	snprintf(buf, sizeof(buf), "node-%03d", i % 500);
	cJSON_AddStringToObject(spec, "nodeName", buf);
	cJSON_AddNumberToObject(spec, "priority", 0);
	cJSON *tol = cJSON_AddArrayToObject(spec, "tolerations");
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "key", "node.kubernetes.io/not-ready");
	cJSON_AddStringToObject(t, "operator", "Exists");
	cJSON_AddStringToObject(t, "effect", "NoExecute");
	cJSON_AddNumberToObject(t, "tolerationSeconds", 300);
	cJSON_AddItemToArray(tol, t);
	cJSON *st = cJSON_AddObjectToObject(pod, "status");
	cJSON_AddStringToObject(st, "phase", "Running");
	cJSON_AddStringToObject(st, "qosClass", "Burstable");
	snprintf(buf, sizeof(buf), "10.%d.%d.%d", (i >> 16) & 255, (i >> 8) & 255, i & 255);
	cJSON_AddStringToObject(st, "podIP", buf);
	cJSON_AddStringToObject(st, "hostIP", "192.168.1.10");
	cJSON_AddStringToObject(st, "startTime", "2026-11-30T02:43:25Z");
	cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
	static const char *types[] = {"Initialized", "Ready", "ContainersReady", "PodScheduled"};
	for (int c = 0; c < 4; c++) {
		cJSON *cd = cJSON_CreateObject();
		cJSON_AddStringToObject(cd, "type", types[c]);
		cJSON_AddStringToObject(cd, "status", "True");
		cJSON_AddStringToObject(cd, "lastTransitionTime", "2026-11-30T02:43:25Z");
		cJSON_AddItemToArray(conds, cd);
	}
	return pod;
}

int main(void)
{
	cJSON *list = cJSON_CreateObject();
	cJSON_AddStringToObject(list, "apiVersion", "v1");
	cJSON_AddStringToObject(list, "kind", "PodList");
	cJSON_AddItemToObject(list, "metadata", cJSON_Parse("{\"resourceVersion\":\"123456\"}"));
	cJSON *items = cJSON_AddArrayToObject(list, "items");
	for (int i = 0; i < PODS; i++)
		cJSON_AddItemToArray(items, make_pod(i));
	char *json = kube_json_print(list);
	char *yaml = kube_yaml_emit(list);
	if (!json || !yaml) {
		fprintf(stderr, "bench_decode: out of memory\n");
		return 1;
	}
	size_t jlen = strlen(json), ylen = strlen(yaml);
	printf("podlist_json_size: %.1f MB (%.0f bytes/pod)\n", jlen / 1e6, (double)jlen / PODS);
	printf("podlist_yaml_size: %.1f MB\n", ylen / 1e6);

	double t0 = now();
	cJSON *a = cJSON_Parse(json);
	double t1 = now();
	printf("cjson_parse_podlist: %.0f objects/s (%.1f MB/s, %.1f ms)\n", PODS / (t1 - t0), jlen / 1e6 / (t1 - t0),
	       (t1 - t0) * 1e3);

	char *err = NULL;
	t0 = now();
	cJSON *jp = kube_json_parse(json, jlen, &err);
	t1 = now();
	if (!jp) {
		fprintf(stderr, "bench_decode: json parse: %s\n", err);
		return 1;
	}
	printf("kube_json_parse_podlist: %.0f objects/s (%.1f MB/s, %.1f ms)\n", PODS / (t1 - t0), jlen / 1e6 / (t1 - t0),
	       (t1 - t0) * 1e3);
	cJSON_Delete(jp);

	t0 = now();
	cJSON *b = kube_yaml_parse(yaml, ylen, &err);
	t1 = now();
	if (!b) {
		fprintf(stderr, "bench_decode: yaml parse: %s\n", err);
		return 1;
	}
	printf("kube_yaml_parse_podlist_yaml: %.0f objects/s (%.1f MB/s, %.1f ms)\n", PODS / (t1 - t0),
	       ylen / 1e6 / (t1 - t0), (t1 - t0) * 1e3);
	int same = cJSON_Compare(a, cJSON_GetArrayItem(b, 0), 1);

	t0 = now();
	cJSON *c = kube_yaml_parse(json, jlen, &err);
	t1 = now();
	printf("kube_yaml_parse_podlist_json (JSON fast path): %.0f objects/s (%.1f MB/s, %.1f ms)\n", PODS / (t1 - t0),
	       jlen / 1e6 / (t1 - t0), (t1 - t0) * 1e3);

	t0 = now();
	char *again = kube_json_print(a);
	t1 = now();
	printf("kube_json_print_podlist: %.0f objects/s (%.1f ms)\n", PODS / (t1 - t0), (t1 - t0) * 1e3);
	t0 = now();
	char *ya = kube_yaml_emit(a);
	t1 = now();
	printf("kube_yaml_emit_podlist: %.0f objects/s (%.1f ms)\n", PODS / (t1 - t0), (t1 - t0) * 1e3);
	printf("round_trip_equal: %s\n", same && again && strcmp(again, json) == 0 ? "yes" : "NO");

	/* quantity parsing: the strings pods actually carry */
	static const char *qs[] = {"100m", "250m", "1", "2", "500Mi", "1Gi", "1.5Gi", "64Mi", "128974848", "129e6", "0.5", "4Ki"};
	const int qn = 2000000;
	int64_t sink = 0;
	t0 = now();
	for (int i = 0; i < qn; i++) {
		struct kube_quantity q;
		if (kube_quantity_parse(qs[i % 12], &q, NULL) == 0)
			sink += kube_quantity_milli_value(&q);
	}
	t1 = now();
	printf("quantity_parse: %.2f M parses/s (%.0f ns each)\n", qn / (t1 - t0) / 1e6, (t1 - t0) / qn * 1e9);
	char qbuf[64];
	struct kube_quantity q1;
	kube_quantity_parse("1536Mi", &q1, NULL);
	t0 = now();
	for (int i = 0; i < qn; i++)
		sink += kube_quantity_format(&q1, qbuf)[0];
	t1 = now();
	printf("quantity_format: %.2f M formats/s\n", qn / (t1 - t0) / 1e6);

	/* selector matching over every pod's labels */
	struct kube_label_selector *sel;
	kube_label_selector_parse("app in (web-1,web-2,web-3),tier!=backend,app.kubernetes.io/managed-by", &sel, NULL);
	const int rounds = 50;
	long matched = 0;
	t0 = now();
	for (int r = 0; r < rounds; r++)
		for (cJSON *p = cJSON_GetObjectItem(a, "items")->child; p; p = p->next)
			matched += kube_label_selector_matches_json(sel, kube_meta_labels(p));
	t1 = now();
	printf("label_selector_match: %.2f M matches/s (%ld matched)\n", rounds * (double)PODS / (t1 - t0) / 1e6,
	       matched / rounds);
	kube_label_selector_free(sel);

	if (sink == 42)
		printf("\n");
	free(again);
	free(ya);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
	cJSON_Delete(list);
	free(json);
	free(yaml);
	return 0;
}
