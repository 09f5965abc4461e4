/* test_metrics.c — schedkit-apiserver's metrics.k8s.io/v1beta1 (e2e/apiserver/metrics.c) over real
 * HTTP: the usage arithmetic (requests x schedkit.io/simulated-load + the idle base, capped at
 * capacity) written out per node and container, get/list, selectors, not-found and refused verbs,
 * discovery, the load annotation's parsing, and nothing served without the simulated kubelet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "kube/object.h"
#include "e2e/apiserver/internal.h"
#include "e2e/apiserver/server.h"

#define M "/apis/metrics.k8s.io/v1beta1"

static struct apis_server *srv;

struct body {
	char *p;
	size_t n;
};

static size_t on_data(char *p, size_t sz, size_t n, void *u)
{
	struct body *b = u;
	char *nb = realloc(b->p, b->n + sz * n + 1);
	if (!nb)
		return 0;
	memcpy(nb + b->n, p, sz * n);
	b->p = nb;
	b->n += sz * n;
	nb[b->n] = 0;
	return sz * n;
}

static cJSON *req(struct apis_server *s, const char *method, const char *path, const char *body, long *code)
{
	CURL *c = curl_easy_init();
	assert_non_null(c);
	char url[1024];
	snprintf(url, sizeof url, "%s%s", apis_server_url(s), path);
	struct body b = { 0 };
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	cJSON *j = b.p ? cJSON_Parse(b.p) : NULL;
	free(b.p);
	return j;
}

static void create(const char *path, const char *body)
{
	long code;
	cJSON_Delete(req(srv, "POST", path, body, &code));
	if (code != 201)
		fail_msg("POST %s: %ld", path, code);
}

static const char *str(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
	return cJSON_GetStringValue(b ? cJSON_GetObjectItemCaseSensitive(x, b) : x);
}

#define NODE(name, ann, cap)                                                                                   \
	"{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"disk\":\"" name "\"}" ann "},"                      \
	"\"status\":{\"capacity\":" cap ",\"allocatable\":" cap "}}"
#define POD(name, node, labels, containers)                                                                    \
	"{\"metadata\":{\"name\":\"" name "\",\"labels\":" labels "},\"spec\":{" node "\"containers\":[" containers "]}}"
#define CT(name, req) "{\"name\":\"" name "\",\"image\":\"x\",\"resources\":{\"requests\":" req "}}"

static int setup(void **state)
{
	(void)state;
	curl_global_init(CURL_GLOBAL_ALL);
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.simulate_kubelet = true;
	o.kubelet_delay_ms = 10;
	if (apis_server_start(&o, &srv) < 0)
		return -1;
	create("/api/v1/nodes", NODE("n1", ",\"annotations\":{\"schedkit.io/simulated-load\":\"2.5\"}",
				     "{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"10\"}"));
	create("/api/v1/nodes", NODE("n2", "", "{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"10\"}"));
	create("/api/v1/nodes", NODE("n3", ",\"annotations\":{\"schedkit.io/simulated-load\":\"heavy\"}",
				     "{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"10\"}"));
	create("/api/v1/namespaces/default/pods",
	       POD("p1", "\"nodeName\":\"n1\",", "{\"app\":\"web\"}",
		   CT("c1", "{\"cpu\":\"200m\",\"memory\":\"100Mi\"}") "," CT("c2", "{\"cpu\":\"100m\"}")));
	create("/api/v1/namespaces/default/pods",
	       POD("p5", "\"nodeName\":\"n1\",", "{\"app\":\"batch\"}", CT("c", "{\"cpu\":\"2\"}")));
	create("/api/v1/namespaces/default/pods",
	       POD("p2", "\"nodeName\":\"n2\",", "{\"app\":\"web\"}", CT("c", "{\"cpu\":\"1\",\"memory\":\"1Gi\"}")));
	create("/api/v1/namespaces/kube-system/pods",
	       POD("p3", "\"nodeName\":\"n3\",", "{\"app\":\"dns\"}", CT("c", "{\"cpu\":\"300m\"}")));
	create("/api/v1/namespaces/default/pods", POD("p4", "", "{\"app\":\"web\"}", CT("c", "{\"cpu\":\"1\"}")));
	/* until the simulated kubelet runs the four bound pods */
	for (int i = 0; i < 500; i++) {
		long code;
		cJSON *l = req(srv, "GET", "/api/v1/pods?fieldSelector=status.phase%3DRunning", NULL, &code);
		int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(l, "items"));
		cJSON_Delete(l);
		if (n == 4)
			return 0;
		usleep(10000);
	}
	return -1;
}

static int teardown(void **state)
{
	(void)state;
	apis_server_stop(srv);
	curl_global_cleanup();
	return 0;
}

/* A NodeMetrics (metadata.name) or a PodMetrics container (name) and its usage. */
static void expect_usage(const cJSON *o, const char *name, const char *cpu, const char *mem)
{
	const char *got = str(o, "metadata", "name") ? str(o, "metadata", "name") : str(o, "name", NULL);
	const char *gc = str(o, "usage", "cpu"), *gm = str(o, "usage", "memory");
	if (!got || !gc || !gm || strcmp(got, name) || strcmp(gc, cpu) || strcmp(gm, mem))
		fail_msg("%s: got %s cpu %s memory %s, want cpu %s memory %s", name, got ? got : "(none)",
			 gc ? gc : "(none)", gm ? gm : "(none)", cpu, mem);
}

static void test_node_arithmetic(void **state)
{
	(void)state;
	long code;
	cJSON *l = req(srv, "GET", M "/nodes", NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(str(l, "kind", NULL), "NodeMetricsList");
	assert_string_equal(str(l, "apiVersion", NULL), "metrics.k8s.io/v1beta1");
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(l, "items");
	assert_int_equal(cJSON_GetArraySize(items), 3);
	/* n1 (load 2.5): 100m idle + 2.5 x (200m + 100m + 2) = 5850m, capped at its 2 cores;
	 * 256Mi idle + 2.5 x 100Mi = 506Mi = 518144Ki */
	expect_usage(cJSON_GetArrayItem(items, 0), "n1", "2000000000n", "518144Ki");
	/* n2 (no annotation: 1): 100m + 1 = 1100m; 256Mi + 1Gi = 1280Mi = 1310720Ki */
	expect_usage(cJSON_GetArrayItem(items, 1), "n2", "1100000000n", "1310720Ki");
	/* n3 ("heavy" is not a decimal: 1): 100m + 300m; the idle 256Mi = 262144Ki */
	expect_usage(cJSON_GetArrayItem(items, 2), "n3", "400000000n", "262144Ki");
	const cJSON *n1 = cJSON_GetArrayItem(items, 0);
	assert_string_equal(str(n1, "window", NULL), "30s");
	time_t t;
	assert_int_equal(kube_time_parse_rfc3339(str(n1, "timestamp", NULL), &t), 0);
	assert_true(labs((long)(time(NULL) - t)) <= 5);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
				    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(n1, "metadata"), "labels"),
				    "disk")), "n1");
	cJSON_Delete(l);

	cJSON *one = req(srv, "GET", M "/nodes/n2", NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(str(one, "kind", NULL), "NodeMetrics");
	expect_usage(one, "n2", "1100000000n", "1310720Ki");
	cJSON_Delete(one);
	l = req(srv, "GET", M "/nodes?labelSelector=disk%3Dn3", NULL, &code);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(l, "items")), 1);
	expect_usage(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(l, "items"), 0), "n3", "400000000n", "262144Ki");
	cJSON_Delete(l);
	l = req(srv, "GET", M "/nodes?fieldSelector=metadata.name%3Dn1", NULL, &code);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(l, "items")), 1);
	cJSON_Delete(l);
}

static void test_pod_metrics(void **state)
{
	(void)state;
	long code;
	cJSON *p1 = req(srv, "GET", M "/namespaces/default/pods/p1", NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(str(p1, "kind", NULL), "PodMetrics");
	assert_string_equal(str(p1, "metadata", "namespace"), "default");
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(p1, "containers");
	assert_int_equal(cJSON_GetArraySize(cs), 2);
	/* 2.5 x 200m = 500m, 2.5 x 100Mi = 250Mi = 256000Ki; 2.5 x 100m = 250m, no memory request */
	expect_usage(cJSON_GetArrayItem(cs, 0), "c1", "500000000n", "256000Ki");
	expect_usage(cJSON_GetArrayItem(cs, 1), "c2", "250000000n", "0Ki");
	cJSON_Delete(p1);

	static const struct {
		const char *path;
		int n;
	} lists[] = {
		{ M "/pods", 4 },                                    /* every namespace, Running only */
		{ M "/namespaces/default/pods", 3 },
		{ M "/namespaces/kube-system/pods", 1 },
		{ M "/namespaces/default/pods?labelSelector=app%3Dweb", 2 }, /* p1, p2 (p4 is not running) */
		{ M "/pods?fieldSelector=metadata.namespace%3Dkube-system", 1 },
		{ M "/namespaces/nope/pods", 0 },
	};
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		cJSON *l = req(srv, "GET", lists[i].path, NULL, &code);
		assert_int_equal(code, 200);
		assert_string_equal(str(l, "kind", NULL), "PodMetricsList");
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(l, "items")) != lists[i].n)
			fail_msg("%s: %d items, want %d", lists[i].path,
				 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(l, "items")), lists[i].n);
		cJSON_Delete(l);
	}
}

static void test_errors_and_discovery(void **state)
{
	(void)state;
	static const struct {
		const char *method, *path;
		long code;
		const char *message;
	} cases[] = {
		{ "GET", M "/nodes/nope", 404, "nodemetrics.metrics.k8s.io \"nope\" not found" },
		{ "GET", M "/namespaces/default/pods/p4", 404, "podmetrics.metrics.k8s.io \"p4\" not found" },
		{ "GET", M "/nodes?labelSelector=a%20b%20c", 400, NULL },
		{ "POST", M "/nodes", 405, NULL },
		{ "DELETE", M "/nodes/n1", 405, NULL },
		{ "GET", M "/watch/nodes", 405, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		long code;
		cJSON *j = req(srv, cases[i].method, cases[i].path, cases[i].method[0] == 'P' ? "{}" : NULL, &code);
		if (code != cases[i].code)
			fail_msg("%s %s: %ld, want %ld", cases[i].method, cases[i].path, code, cases[i].code);
		if (cases[i].message)
			assert_string_equal(str(j, "message", NULL), cases[i].message);
		cJSON_Delete(j);
	}
	long code;
	cJSON *d = req(srv, "GET", M, NULL, &code);
	assert_int_equal(code, 200);
	const cJSON *r;
	int n = 0;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(d, "resources")) {
		char *verbs = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(r, "verbs"));
		assert_string_equal(verbs, "[\"get\",\"list\"]");
		free(verbs);
		n++;
	}
	assert_int_equal(n, 2);
	cJSON_Delete(d);
	/* core nodes are untouched by the second "nodes" resource */
	d = req(srv, "GET", "/api/v1/nodes/n1", NULL, &code);
	assert_int_equal(code, 200);
	assert_string_equal(str(d, "kind", NULL), "Node");
	cJSON_Delete(d);
}

static void test_not_served_without_kubelet(void **state)
{
	(void)state;
	struct apis_opts o = APIS_OPTS_DEFAULT;
	struct apis_server *s;
	assert_int_equal(apis_server_start(&o, &s), 0);
	long code;
	cJSON_Delete(req(s, "GET", M "/nodes", NULL, &code));
	assert_int_equal(code, 404);
	cJSON *g = req(s, "GET", "/apis", NULL, &code);
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(g, "groups"))
		assert_string_not_equal(str(it, "name", NULL), "metrics.k8s.io");
	cJSON_Delete(g);
	apis_server_stop(s);
}

static void test_load_factor(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		double want;
	} cases[] = {
		{ "{\"schedkit.io/simulated-load\":\"1.5\"}", 1.5 },
		{ "{\"schedkit.io/simulated-load\":\"0\"}", 0 },
		{ "{\"schedkit.io/simulated-load\":\"4\"}", 4 },
		{ "{\"schedkit.io/simulated-load\":\"-1\"}", 1 },
		{ "{\"schedkit.io/simulated-load\":\"2x\"}", 1 },
		{ "{\"schedkit.io/simulated-load\":\"\"}", 1 },
		{ "{\"schedkit.io/simulated-load\":\"inf\"}", 1 },
		{ "{\"schedkit.io/simulated-load\":\"nan\"}", 1 },
		{ "{\"other\":\"3\"}", 1 },
		{ "null", 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *a = cJSON_Parse(cases[i].json);
		double got = apis_metrics_load_factor(a);
		if (got != cases[i].want)
			fail_msg("%s: %g, want %g", cases[i].json, got, cases[i].want);
		cJSON_Delete(a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_arithmetic),
		cmocka_unit_test(test_pod_metrics),
		cmocka_unit_test(test_errors_and_discovery),
		cmocka_unit_test(test_not_served_without_kubelet),
		cmocka_unit_test(test_load_factor),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
