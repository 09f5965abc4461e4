/* Tests for sk_handle_api_get (scheduler/framework/framework.c), the daemon's env.api_get
 * (scheduler/daemon/env.c, against the in-process API server) and simulate's answers to it
 * (scheduler/simulate/node_metrics.c): the handle's checks and pass-through to env.api_get, the
 * NodeMetrics/PodMetrics lists and objects served from cluster-file objects, their defaults, and
 * the errors for invalid objects and unknown paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e/apiserver/server.h"
#include "kube/config.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "scheduler/daemon/internal.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/simulate/node_metrics.h"
#include "scheduler/simulate/simulate.h"
#include "scheduler/tests/testkit.h"

static struct sk_config cfg = { .parallelism = 1 };

struct get_rec {
	int calls;
	char path[256];
};

static int rec_api_get(void *ctx, const char *path, cJSON **out, char **err)
{
	struct get_rec *r = ctx;
	r->calls++;
	snprintf(r->path, sizeof r->path, "%s", path);
	if (strstr(path, "missing")) {
		*err = strdup("GET: not found");
		return -1;
	}
	*out = cJSON_Parse("{\"kind\":\"NodeMetricsList\",\"items\":[]}");
	return 0;
}

static struct sk_framework *mkfw(struct tk_profile *tp, const struct sk_framework_env *env)
{
	tk_reset();
	tk_profile_minimal(tp, "p1");
	char *err = NULL;
	struct sk_framework *fw = sk_framework_new(&cfg, &tp->p, env, &err);
	if (!fw)
		fail_msg("sk_framework_new: %s", err ? err : "?");
	return fw;
}

static void test_handle_without_env(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework_env env = { 0 };
	struct sk_framework *fw = mkfw(&tp, &env);
	cJSON *out = (cJSON *)&cfg; /* must be reset to NULL */
	char *err = NULL;
	assert_int_equal(sk_handle_api_get(sk_framework_handle(fw), "/apis/metrics.k8s.io/v1beta1/nodes", &out, &err),
			 -1);
	assert_null(out);
	assert_string_equal(err, "GET /apis/metrics.k8s.io/v1beta1/nodes: profile p1 has no API client");
	free(err);
	sk_framework_unref(fw);
}

static void test_handle_pass_through(void **state)
{
	(void)state;
	struct get_rec rec = { 0 };
	struct tk_profile tp;
	struct sk_framework_env env = { .ctx = &rec, .api_get = rec_api_get };
	struct sk_framework *fw = mkfw(&tp, &env);
	struct sk_handle *h = sk_framework_handle(fw);
	cJSON *out = NULL;
	char *err = NULL;

	assert_int_equal(sk_handle_api_get(h, "/apis/metrics.k8s.io/v1beta1/nodes?limit=5", &out, &err), 0);
	assert_null(err);
	assert_string_equal(rec.path, "/apis/metrics.k8s.io/v1beta1/nodes?limit=5");
	assert_string_equal(kube_obj_get_string(out, "kind"), "NodeMetricsList");
	cJSON_Delete(out);

	/* the env's error comes back as is */
	assert_int_equal(sk_handle_api_get(h, "/api/v1/missing", &out, &err), -1);
	assert_null(out);
	assert_string_equal(err, "GET: not found");
	free(err);

	/* a relative path or no out never reaches the env */
	assert_int_equal(sk_handle_api_get(h, "apis/x", &out, &err), -1);
	assert_string_equal(err, "GET apis/x: an API path starts with '/'");
	free(err);
	assert_int_equal(sk_handle_api_get(h, "/apis/x", NULL, &err), -1);
	assert_string_equal(err, "GET /apis/x: no place for the response (out is NULL)");
	free(err);
	assert_int_equal(rec.calls, 2);
	sk_framework_unref(fw);
}

/* The daemon's callback through its client: a list, a query passed on, a server error. */
static void test_daemon_api_get(void **state)
{
	(void)state;
	struct apis_opts ao = APIS_OPTS_DEFAULT;
	ao.simulate_kubelet = true;
	struct apis_server *api;
	assert_int_equal(apis_server_start(&ao, &api), 0);
	struct kube_config *kc = kube_config_new(apis_server_url(api));
	struct sk_daemon d = { 0 };
	assert_int_equal(kube_client_new(kc, &d.client, NULL), 0);
	kube_config_free(kc);
	cJSON *node = cJSON_Parse("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"zone\":\"a\"}},"
				  "\"status\":{\"capacity\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}");
	assert_int_equal(kube_create(d.client, "/api/v1/nodes", node, NULL, NULL), 0);
	cJSON_Delete(node);

	struct profile_ctx pc = { .d = &d, .name = "p1" };
	struct sk_framework_env env;
	sk_dm_framework_env(&pc, &env);
	assert_non_null(env.api_get);
	cJSON *out = NULL;
	char *err = NULL;
	assert_int_equal(env.api_get(env.ctx, "/apis/metrics.k8s.io/v1beta1/nodes", &out, &err), 0);
	assert_string_equal(kube_obj_get_string(out, "kind"), "NodeMetricsList");
	cJSON *items = cJSON_GetObjectItemCaseSensitive(out, "items");
	assert_int_equal(cJSON_GetArraySize(items), 1);
	/* the idle base of the local API server's simulated kubelet: 100m */
	assert_string_equal(kube_obj_get_string(cJSON_GetArrayItem(items, 0), "usage.cpu"), "100000000n");
	cJSON_Delete(out);
	/* the query reaches the server: no node matches zone=b */
	assert_int_equal(env.api_get(env.ctx, "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Db", &out, &err), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(out, "items")), 0);
	cJSON_Delete(out);
	assert_int_equal(env.api_get(env.ctx, "/apis/metrics.k8s.io/v1beta1/nodes/n9", &out, &err), -1);
	assert_null(out);
	assert_string_equal(err, "GET /apis/metrics.k8s.io/v1beta1/nodes/n9: nodemetrics.metrics.k8s.io \"n9\" not found");
	free(err);
	kube_client_free(d.client);
	apis_server_stop(api);
}

static const char CLUSTER[] =
	"kind: Node\nmetadata: {name: n1}\n"
	"---\n"
	"kind: NodeMetrics\napiVersion: metrics.k8s.io/v1beta1\n"
	"metadata: {name: n1, labels: {zone: a}}\ntimestamp: '2026-01-02T03:04:05Z'\nwindow: 10s\n"
	"usage: {cpu: 1500m, memory: 2Gi}\n"
	"---\n"
	"kind: List\nitems:\n"
	"- kind: NodeMetrics\n  metadata: {name: n2}\n  usage: {cpu: '2', memory: 100Mi}\n"
	"- kind: PodMetrics\n  metadata: {name: web-1}\n  containers: [{name: app, usage: {cpu: 10m, memory: 20Mi}}]\n"
	"- kind: PodMetrics\n  metadata: {name: db-0, namespace: data}\n"
	"  containers: [{name: db, usage: {cpu: 300m, memory: 1Gi}}]\n";

static struct sk_sim_metrics *load(const char *yaml, cJSON **docs, char **err)
{
	*docs = kube_yaml_parse(yaml, strlen(yaml), err);
	assert_non_null(*docs);
	const cJSON *objs[16];
	int n = 0;
	const cJSON *d;
	cJSON_ArrayForEach(d, *docs) {
		const cJSON *items = cJSON_GetObjectItemCaseSensitive(d, "items");
		if (items) {
			const cJSON *it;
			cJSON_ArrayForEach(it, items) objs[n++] = it;
		} else {
			objs[n++] = d;
		}
	}
	/* 2026-01-01T00:00:00Z: the defaulted timestamp */
	return sk_sim_metrics_new(objs, n, 1767225600, err);
}

static char *get(const struct sk_sim_metrics *m, const char *path, int *rc)
{
	cJSON *out = NULL;
	char *err = NULL;
	*rc = sk_sim_metrics_get(m, path, &out, &err);
	if (*rc != 0) {
		assert_null(out);
		return err;
	}
	assert_null(err);
	char *s = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	return s;
}

static void test_sim_metrics_paths(void **state)
{
	(void)state;
	cJSON *docs;
	char *err = NULL;
	struct sk_sim_metrics *m = load(CLUSTER, &docs, &err);
	if (!m)
		fail_msg("%s", err);
	cJSON_Delete(docs); /* the set keeps copies */
	assert_int_equal(sk_sim_metrics_count(m), 4);
	static const struct {
		const char *path;
		int rc;
		const char *want;
	} cases[] = {
		{ "/apis/metrics.k8s.io/v1beta1/nodes", 0,
		  "{\"kind\":\"NodeMetricsList\",\"apiVersion\":\"metrics.k8s.io/v1beta1\",\"metadata\":{},\"items\":["
		  "{\"kind\":\"NodeMetrics\",\"apiVersion\":\"metrics.k8s.io/v1beta1\",\"metadata\":{\"name\":\"n1\","
		  "\"labels\":{\"zone\":\"a\"}},\"timestamp\":\"2026-01-02T03:04:05Z\",\"window\":\"10s\","
		  "\"usage\":{\"cpu\":\"1500m\",\"memory\":\"2Gi\"}},"
		  "{\"kind\":\"NodeMetrics\",\"metadata\":{\"name\":\"n2\"},\"usage\":{\"cpu\":\"2\",\"memory\":\"100Mi\"},"
		  "\"apiVersion\":\"metrics.k8s.io/v1beta1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"window\":\"30s\"}]}" },
		{ "/apis/metrics.k8s.io/v1beta1/nodes/n2", 0,
		  "{\"kind\":\"NodeMetrics\",\"metadata\":{\"name\":\"n2\"},\"usage\":{\"cpu\":\"2\",\"memory\":\"100Mi\"},"
		  "\"apiVersion\":\"metrics.k8s.io/v1beta1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"window\":\"30s\"}" },
		{ "/apis/metrics.k8s.io/v1beta1/nodes/n3", -1,
		  "GET /apis/metrics.k8s.io/v1beta1/nodes/n3: nodemetrics.metrics.k8s.io \"n3\" not found" },
		{ "/apis/metrics.k8s.io/v1beta1/namespaces/data/pods/db-0", 0,
		  "{\"kind\":\"PodMetrics\",\"metadata\":{\"name\":\"db-0\",\"namespace\":\"data\"},\"containers\":"
		  "[{\"name\":\"db\",\"usage\":{\"cpu\":\"300m\",\"memory\":\"1Gi\"}}],\"apiVersion\":\"metrics.k8s.io/v1beta1\","
		  "\"timestamp\":\"2026-01-01T00:00:00Z\",\"window\":\"30s\"}" },
		{ "/apis/metrics.k8s.io/v1beta1/namespaces/data/pods/web-1", -1,
		  "GET /apis/metrics.k8s.io/v1beta1/namespaces/data/pods/web-1: podmetrics.metrics.k8s.io \"web-1\" not found" },
		{ "/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods", 0,
		  "{\"kind\":\"PodMetricsList\",\"apiVersion\":\"metrics.k8s.io/v1beta1\",\"metadata\":{},\"items\":[]}" },
		{ "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Da", -1,
		  "GET /apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Da: simulate serves metrics without query parameters" },
		{ "/api/v1/nodes", -1,
		  "GET /api/v1/nodes: the server could not find the requested resource (simulate serves only "
		  "metrics.k8s.io/v1beta1 nodes and pods from the cluster file)" },
		{ "/apis/metrics.k8s.io/v1beta1/nodes/n1/extra", -1,
		  "GET /apis/metrics.k8s.io/v1beta1/nodes/n1/extra: the server could not find the requested resource "
		  "(simulate serves only metrics.k8s.io/v1beta1 nodes and pods from the cluster file)" },
		{ "/apis/metrics.k8s.io/v1beta1/nodes/", -1,
		  "GET /apis/metrics.k8s.io/v1beta1/nodes/: the server could not find the requested resource "
		  "(simulate serves only metrics.k8s.io/v1beta1 nodes and pods from the cluster file)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc;
		char *got = get(m, cases[i].path, &rc);
		if (rc != cases[i].rc || strcmp(got, cases[i].want))
			fail_msg("%s: rc %d, got\n%s\nwant\n%s", cases[i].path, rc, got, cases[i].want);
		free(got);
	}
	/* every namespace */
	int rc;
	char *all = get(m, "/apis/metrics.k8s.io/v1beta1/pods", &rc);
	assert_int_equal(rc, 0);
	cJSON *list = cJSON_Parse(all);
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
	assert_int_equal(cJSON_GetArraySize(items), 2);
	assert_string_equal(kube_meta_namespace(cJSON_GetArrayItem(items, 0)), "default");
	assert_string_equal(kube_meta_namespace(cJSON_GetArrayItem(items, 1)), "data");
	cJSON_Delete(list);
	free(all);
	sk_sim_metrics_free(m);
}

static void test_sim_metrics_invalid(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{ "kind: NodeMetrics\nmetadata: {}\nusage: {cpu: 1}\n",
		  "object 1 (NodeMetrics): metadata.name: Required value" },
		{ "kind: Node\nmetadata: {name: a}\n---\nkind: NodeMetrics\nmetadata: {name: a}\n",
		  "object 2 (NodeMetrics a): usage: Required value: a map of resource name to quantity" },
		{ "kind: NodeMetrics\nmetadata: {name: a}\nusage: {cpu: lots}\n",
		  "object 1 (NodeMetrics a): usage.cpu: Invalid value: quantities must match the regular expression "
		  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" },
		{ "kind: NodeMetrics\nmetadata: {name: a}\nusage: {memory: 5}\n",
		  "object 1 (NodeMetrics a): usage.memory: Invalid value: must be a quantity string" },
		{ "kind: NodeMetrics\nmetadata: {name: a}\nusage: {}\n---\nkind: NodeMetrics\nmetadata: {name: a}\nusage: {}\n",
		  "object 2 (NodeMetrics a): duplicate NodeMetrics" },
		{ "kind: PodMetrics\nmetadata: {name: p}\n", "object 1 (PodMetrics p): containers: Required value" },
		{ "kind: PodMetrics\nmetadata: {name: p}\ncontainers: [{usage: {}}]\n",
		  "object 1 (PodMetrics p): containers[0].name: Required value" },
		{ "kind: PodMetrics\nmetadata: {name: p}\ncontainers: [{name: c, usage: {cpu: x}}]\n",
		  "object 1 (PodMetrics p): containers[0].usage.cpu: Invalid value: quantities must match the regular "
		  "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *docs;
		char *err = NULL;
		struct sk_sim_metrics *m = load(cases[i].yaml, &docs, &err);
		if (m)
			fail_msg("case %zu: accepted", i);
		if (strcmp(err, cases[i].want))
			fail_msg("case %zu: got\n%s\nwant\n%s", i, err, cases[i].want);
		free(err);
		cJSON_Delete(docs);
	}
}

/* simulate itself: NodeMetrics load without a warning, and a bad one fails the run (exit 1). */
static void test_simulate_rejects_bad_metrics(void **state)
{
	(void)state;
	static const char config[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
	struct sk_errors errs = { 0 };
	struct sk_config *c = sk_config_load(config, strlen(config), &errs);
	assert_non_null(c);
	sk_errors_free(&errs);
	static const char cluster[] = "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '5'}}\n"
				      "---\nkind: NodeMetrics\nmetadata: {name: n1}\nusage: {cpu: nope}\n";
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct sk_simulate_opts opts = { .seed = 1 };
	char *err = NULL;
	assert_int_equal(sk_simulate(c, cluster, strlen(cluster), &opts, out, &err), -1);
	fclose(out);
	assert_non_null(strstr(err, "object 2 (NodeMetrics n1): usage.cpu: Invalid value"));
	free(err);
	free(buf);
	sk_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handle_without_env),
		cmocka_unit_test(test_handle_pass_through),
		cmocka_unit_test(test_daemon_api_get),
		cmocka_unit_test(test_sim_metrics_paths),
		cmocka_unit_test(test_sim_metrics_invalid),
		cmocka_unit_test(test_simulate_rejects_bad_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
