/* Tests for scheduler/api/decode.c: every decoded field, the staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests) request arithmetic,
 * hostile inputs, and the labels/resources/toleration helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/nodeselector.h"
#include "scheduler/tests/fixtures.h"
#include "schedkit/types.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static void test_pod_identity(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns1\",\"uid\":\"u-1\","
				  "\"resourceVersion\":\"42\",\"creationTimestamp\":\"2024-01-02T03:04:05Z\","
				  "\"labels\":{\"b\":\"2\",\"a\":\"1\"},"
				  "\"ownerReferences\":[{\"kind\":\"Foo\",\"uid\":\"o0\"},"
				  "{\"kind\":\"ReplicaSet\",\"uid\":\"rs-1\",\"controller\":true}]},"
				  "\"spec\":{\"nodeName\":\"n1\",\"priority\":7,\"preemptionPolicy\":\"Never\","
				  "\"schedulerName\":\"my-sched\"},"
				  "\"status\":{\"phase\":\"Running\",\"nominatedNodeName\":\"n2\"}}");
	assert_string_equal(p->ns, "ns1");
	assert_string_equal(p->name, "p1");
	assert_string_equal(p->uid, "u-1");
	assert_string_equal(p->resource_version, "42");
	assert_int_equal(p->creation_time, 1704164645);
	assert_string_equal(p->node_name, "n1");
	assert_string_equal(p->nominated_node_name, "n2");
	assert_string_equal(p->phase, "Running");
	assert_string_equal(p->scheduler_name, "my-sched");
	assert_int_equal(p->priority, 7);
	assert_true(p->preempt_never);
	assert_false(p->terminating);
	assert_string_equal(p->owner_kind, "ReplicaSet");
	assert_string_equal(p->owner_uid, "rs-1");
	assert_int_equal(p->labels.n, 2);
	assert_string_equal(p->labels.items[0].key, "a");
	assert_string_equal(sk_labels_get(&p->labels, "b"), "2");
	assert_null(sk_labels_get(&p->labels, "c"));
	char buf[512];
	assert_string_equal(sk_pod_key(p, buf, sizeof(buf)), "ns1/p1");
	sk_pod_unref(p);
}

/* JSON with a repeated key: the last value wins (as Go's decoder does), keys stay unique. */
static void test_duplicate_label_keys(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\",\"labels\":{\"b\":\"1\",\"a\":\"x\",\"b\":\"2\",\"c\":\"3\",\"b\":\"4\"}}}");
	assert_int_equal(p->labels.n, 3);
	assert_string_equal(p->labels.items[0].key, "a");
	assert_string_equal(p->labels.items[1].key, "b");
	assert_string_equal(p->labels.items[2].key, "c");
	assert_string_equal(sk_labels_get(&p->labels, "b"), "4");
	assert_null(sk_labels_get(NULL, "b"));
	assert_null(sk_labels_get(&p->labels, NULL));
	sk_pod_unref(p);
}

/* metadata.creationTimestamp: the canonical form (read without sscanf) and every other form the
 * decode accepts give timegm's seconds; out-of-range fields normalize as timegm does. */
static void test_creation_timestamps(void **state)
{
	(void)state;
	static const struct {
		const char *ts;
		long long want; /* -2: the decode fails */
	} rows[] = {
		{ "2024-01-02T03:04:05Z", 1704164645LL },
		{ "2024-02-29T23:59:59Z", 1709251199LL },
		{ "1970-01-01T00:00:00Z", 0LL },
		{ "1969-12-31T23:59:59Z", -1LL },
		{ "2000-03-01T00:00:00Z", 951868800LL },
		{ "2100-03-01T12:00:00Z", 4107585600LL },
		{ "1600-02-29T00:00:00Z", -11670998400LL },
		{ "0001-01-01T00:00:00Z", -62135596800LL },
		{ "9999-12-31T23:59:59Z", 253402300799LL },
		{ "2023-02-31T00:00:00Z", 1677801600LL }, /* day past the month's end */
		{ "2023-01-01T24:60:60Z", 1672621260LL }, /* hour, minute, second past their ranges */
		{ "2024-13-01T00:00:00Z", 1735689600LL }, /* month 13: the next January */
		{ "2024-01-02T03:04:05+01:30", 1704159245LL },
		{ "2024-01-02T03:04:05.123456Z", 1704164645LL },
		{ "2024-01-02t03:04:05Z", 1704164645LL },  /* lower-case t */
		{ " 2024-01-02T03:04:05Z", 1704164645LL }, /* what sscanf skips */
		{ "2024-1-02T03:04:05Z", 1704164645LL },   /* one-digit month */
		{ "2024-01-02T03:04:05", -2 },              /* no zone */
		{ "2024-01-02T03:04:05Zx", -2 },
		{ "2024-01-02X03:04:05Z", -2 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char json[160];
		snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"%s\"}}", rows[i].ts);
		cJSON *obj = cJSON_Parse(json);
		assert_non_null(obj);
		char *err = NULL;
		struct sk_pod *p = sk_pod_decode(obj, &err);
		cJSON_Delete(obj);
		long long got = p ? (long long)p->creation_time : -2;
		if (got != rows[i].want)
			fail_msg("%s: %lld, want %lld (%s)", rows[i].ts, got, rows[i].want, err ? err : "");
		free(err);
		sk_pod_unref(p);
	}
}

static void test_pod_defaults(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\",\"deletionTimestamp\":\"2024-01-02T03:04:05.5+01:00\"}}");
	assert_string_equal(p->ns, "default");
	assert_string_equal(p->uid, "default/p");
	assert_string_equal(p->scheduler_name, "default-scheduler");
	assert_string_equal(p->phase, "Pending");
	assert_null(p->node_name);
	assert_true(p->terminating);
	assert_false(p->preempt_never);
	assert_true(p->requests_nothing);
	assert_int_equal(p->non_zero_milli_cpu, 0); /* no containers: counts as 0 (staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)) */
	assert_int_equal(p->non_zero_memory, 0);
	assert_int_equal(p->ncontainers, 0);
	sk_pod_unref(p);
}

/* ---------- requests (staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)) ---------- */

struct req_case {
	const char *name;
	const char *spec; /* JSON of spec */
	int64_t cpu, mem, eph;
	int64_t nz_cpu, nz_mem;
	bool nothing;
};

static const struct req_case req_cases[] = {
	{ "two containers sum", "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1000m\",\"memory\":\"2000\"}}},"
				"{\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"3000\"}}}]}",
	  3000, 5000, 0, 3000, 5000, false },
	{ "init containers: max of sum and largest init",
	  "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}],"
	  "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"512Mi\"}}},"
	  "{\"resources\":{\"requests\":{\"cpu\":\"3\",\"memory\":\"256Mi\"}}}]}",
	  3000, GI, 0, 3000, GI, false },
	{ "sidecar adds to sum and to later init needs",
	  "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
	  "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},"
	  "{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}",
	  /* sum 1+1 = 2; needs: sidecar 1, init 2+1 = 3 -> 3 */
	  3000, 0, 0, 3000, 2 * 200 * MI, false },
	{ "init before sidecar does not include it",
	  "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"3\"}}}],"
	  "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"5\"}}},"
	  "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},"
	  "{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}",
	  /* sum 3+1 = 4; needs 5, 1, 2+1 = 3 -> 5 */
	  5000, 0, 0, 5000, 2 * 200 * MI, false },
	{ "sidecars only: sum wins",
	  "{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}],"
	  "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}},"
	  "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}]}",
	  0, 3 * GI, 0, 300, 3 * GI, false },
	{ "overhead added", "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
			    "\"overhead\":{\"cpu\":\"250m\",\"memory\":\"120Mi\"}}",
	  1250, 120 * MI, 0, 1250, 320 * MI, false },
	{ "no requests: non-zero defaults per container", "{\"containers\":[{},{\"resources\":{}}]}",
	  0, 0, 0, 200, 400 * MI, true },
	{ "explicit zero keeps zero in the non-zero variant",
	  "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"0\"}}}]}", 0, 0, 0, 0, 200 * MI, true },
	{ "init container without requests gets the default",
	  "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"50m\",\"memory\":\"10Mi\"}}}],\"initContainers\":[{}]}",
	  50, 10 * MI, 0, 100, 200 * MI, false },
	{ "pod-level requests replace the aggregate for cpu and memory",
	  "{\"resources\":{\"requests\":{\"cpu\":\"2\"}},"
	  "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"ephemeral-storage\":\"1G\"}}}]}",
	  2000, GI, 1000000000, 2000, GI, false },
	/* getNonMissingContainerRequests with pod-level resources: no per-container default for a
	 * resource some container requests; the default only when nobody requests it */
	{ "pod-level cpu: memory non-zero is the real aggregate when a container requests memory",
	  "{\"resources\":{\"requests\":{\"cpu\":\"2\"}},"
	  "\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}},{}]}",
	  2000, GI, 0, 2000, GI, false },
	{ "pod-level memory: cpu nobody requests gets the per-container default",
	  "{\"resources\":{\"requests\":{\"memory\":\"1Gi\"}},\"containers\":[{},{}]}",
	  0, GI, 0, 200, GI, false },
	{ "pod-level limits only: set, no override; init container cpu counts as requested",
	  "{\"resources\":{\"limits\":{\"cpu\":\"4\"}},"
	  "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"300m\"}}}],\"containers\":[{},{}]}",
	  300, 0, 0, 300, 400 * MI, false },
	{ "rounding up: MilliValue and Value",
	  "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"0.1m\",\"memory\":\"1.5\",\"ephemeral-storage\":\"1Ki\"}}}]}",
	  1, 2, 1024, 1, 2, false },
	{ "numbers as quantities", "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":2,\"memory\":0.5}}}]}",
	  2000, 1, 0, 2000, 1, false },
	{ "no containers at all", "{}", 0, 0, 0, 0, 0, true },
};

static struct sk_pod *pod_with_spec(const char *spec)
{
	char *text = NULL;
	assert_true(asprintf(&text, "{\"metadata\":{\"name\":\"p\"},\"spec\":%s}", spec) > 0);
	struct sk_pod *p = fx_pod(text);
	free(text);
	return p;
}

static void test_requests_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(req_cases) / sizeof(req_cases[0]); i++) {
		const struct req_case *c = &req_cases[i];
		print_message("case: %s\n", c->name);
		struct sk_pod *p = pod_with_spec(c->spec);
		assert_int_equal(p->requests.milli_cpu, c->cpu);
		assert_int_equal(p->requests.memory, c->mem);
		assert_int_equal(p->requests.ephemeral_storage, c->eph);
		assert_int_equal(p->non_zero_milli_cpu, c->nz_cpu);
		assert_int_equal(p->non_zero_memory, c->nz_mem);
		assert_int_equal(p->requests_nothing, c->nothing);
		sk_pod_unref(p);
	}
}

static void test_requests_scalars(void **state)
{
	(void)state;
	struct sk_pod *p = pod_with_spec(
		"{\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"2\",\"hugepages-2Mi\":\"4Mi\","
		"\"foo\":\"7\",\"requests.example.com/x\":\"1\",\"attachable-volumes-csi-x\":\"1\"}}},"
		"{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\",\"example.com/zero\":\"0\"}}}],"
		"\"initContainers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"5\"}}}]}");
	assert_int_equal(sk_resource_scalar(&p->requests, "nvidia.com/gpu"), 5); /* max(2+1, 5) */
	assert_int_equal(sk_resource_scalar(&p->requests, "hugepages-2Mi"), 4 * MI);
	assert_int_equal(sk_resource_scalar(&p->requests, "attachable-volumes-csi-x"), 1);
	assert_int_equal(sk_resource_scalar(&p->requests, "foo"), 0);
	assert_int_equal(sk_resource_scalar(&p->requests, "requests.example.com/x"), 0);
	/* a zero scalar is still listed: upstream counts it as a requested scalar resource */
	assert_int_equal(p->requests.nscalar, 4);
	for (int i = 1; i < p->requests.nscalar; i++)
		assert_true(strcmp(p->requests.scalar[i - 1].name, p->requests.scalar[i].name) < 0);
	assert_false(p->requests_nothing);
	sk_pod_unref(p);

	p = pod_with_spec("{\"containers\":[{\"resources\":{\"requests\":{\"example.com/zero\":\"0\"}}}]}");
	assert_false(p->requests_nothing);
	sk_pod_unref(p);
}

static void test_resource_helpers(void **state)
{
	(void)state;
	struct sk_resource a = { 0 }, b = { 0 };
	struct sk_scalar bs[2] = { { sk_intern("a.io/x"), 3 }, { sk_intern("b.io/y"), 4 } };
	b.milli_cpu = 100;
	b.memory = 10;
	b.nscalar = 2;
	b.scalar = bs;
	assert_int_equal(sk_resource_add(&a, &b, 1), 0);
	assert_int_equal(sk_resource_add(&a, &b, 1), 0);
	assert_int_equal(a.milli_cpu, 200);
	assert_int_equal(sk_resource_scalar(&a, "b.io/y"), 8);
	assert_int_equal(sk_resource_add(&a, &b, -1), 0);
	assert_int_equal(a.memory, 10);
	assert_int_equal(sk_resource_scalar(&a, "a.io/x"), 3);
	struct sk_resource c;
	assert_int_equal(sk_resource_copy(&c, &a), 0);
	assert_ptr_not_equal(c.scalar, a.scalar);
	assert_int_equal(sk_resource_scalar(&c, "a.io/x"), 3);
	assert_int_equal(sk_resource_scalar(&c, "none"), 0);
	sk_resource_clear(&a);
	sk_resource_clear(&c);
	assert_int_equal(a.nscalar, 0);
	assert_null(a.scalar);
	sk_resource_clear(NULL);
}

/* ---------- ports, images, gates, volumes ---------- */

static void test_host_ports(void **state)
{
	(void)state;
	struct sk_pod *p = pod_with_spec(
		"{\"containers\":[{\"ports\":[{\"containerPort\":80,\"hostPort\":8080},"
		"{\"containerPort\":53,\"hostPort\":53,\"protocol\":\"UDP\",\"hostIP\":\"127.0.0.1\"},"
		"{\"containerPort\":90},{\"containerPort\":91,\"hostPort\":0}]},"
		"{\"ports\":[{\"hostPort\":7000,\"protocol\":\"SCTP\",\"hostIP\":\"\"}]}],"
		"\"initContainers\":[{\"restartPolicy\":\"Always\",\"ports\":[{\"hostPort\":9000}]},"
		"{\"ports\":[{\"hostPort\":9100}]}]}");
	assert_int_equal(p->nhost_ports, 4);
	int seen = 0;
	for (int i = 0; i < p->nhost_ports; i++) {
		const struct sk_host_port *h = &p->host_ports[i];
		if (h->port == 8080) {
			assert_string_equal(h->host_ip, "0.0.0.0");
			assert_int_equal(h->protocol, SK_PROTO_TCP);
			seen |= 1;
		} else if (h->port == 53) {
			assert_string_equal(h->host_ip, "127.0.0.1");
			assert_int_equal(h->protocol, SK_PROTO_UDP);
			seen |= 2;
		} else if (h->port == 7000) {
			assert_string_equal(h->host_ip, "0.0.0.0");
			assert_int_equal(h->protocol, SK_PROTO_SCTP);
			seen |= 4;
		} else if (h->port == 9000) {
			seen |= 8;
		} else {
			fail_msg("unexpected host port %d", h->port);
		}
	}
	assert_int_equal(seen, 15);
	sk_pod_unref(p);
}

static void test_images(void **state)
{
	(void)state;
	struct sk_pod *p = pod_with_spec("{\"initContainers\":[{\"image\":\"busybox\"}],"
					 "\"containers\":[{\"image\":\"nginx\"},{\"image\":\"localhost:5000/foo\"},"
					 "{\"image\":\"repo/img:1.0\"},{\"image\":\"img@sha256:abc\"},{}]}");
	assert_int_equal(p->ncontainers, 6);
	assert_int_equal(p->nimages, 5);
	assert_string_equal(p->images[0], "busybox:latest");
	assert_string_equal(p->images[1], "nginx:latest");
	assert_string_equal(p->images[2], "localhost:5000/foo:latest");
	assert_string_equal(p->images[3], "repo/img:1.0");
	assert_string_equal(p->images[4], "img@sha256:abc");
	assert_ptr_equal(p->images[1], sk_intern("nginx:latest"));
	sk_pod_unref(p);
}

static void test_gates_volumes(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"web\"},\"spec\":{"
				  "\"schedulingGates\":[{\"name\":\"g1\"},{\"name\":\"g2\"}],"
				  "\"volumes\":[{\"name\":\"a\",\"persistentVolumeClaim\":{\"claimName\":\"data\"}},"
				  "{\"name\":\"b\",\"emptyDir\":{}},{\"name\":\"scratch\",\"ephemeral\":{}}]}}");
	assert_int_equal(p->nscheduling_gates, 2);
	assert_string_equal(p->scheduling_gates[0], "g1");
	assert_string_equal(p->scheduling_gates[1], "g2");
	assert_int_equal(p->npvcs, 2);
	assert_string_equal(p->pvc_names[0], "data");
	assert_string_equal(p->pvc_names[1], "web-scratch");
	sk_pod_unref(p);
}

/* ---------- node constraints ---------- */

static void test_node_selector_and_affinity(void **state)
{
	(void)state;
	struct sk_pod *p = pod_with_spec(
		"{\"nodeSelector\":{\"disk\":\"ssd\"},\"affinity\":{\"nodeAffinity\":{"
		"\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
		"{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]},"
		"{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n9\"]}]}]},"
		"\"preferredDuringSchedulingIgnoredDuringExecution\":["
		"{\"weight\":2,\"preference\":{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\"]}]}},"
		"{\"weight\":5,\"preference\":{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"Exists\"}]}}]}}}");
	assert_int_equal(p->node_selector.n, 1);
	assert_string_equal(sk_labels_get(&p->node_selector, "disk"), "ssd");
	assert_non_null(p->required_affinity);
	assert_non_null(p->preferred_affinity);
	struct sk_node *n1 = fx_node("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"zone\":\"a\",\"foo\":\"bar\"}}}");
	struct sk_node *n2 = fx_node("{\"metadata\":{\"name\":\"n2\",\"labels\":{\"zone\":\"c\"}}}");
	struct sk_node *n9 = fx_node("{\"metadata\":{\"name\":\"n9\"}}");
	assert_true(kube_node_selector_matches(p->required_affinity, n1->name, sk_labels_get, &n1->labels));
	assert_false(kube_node_selector_matches(p->required_affinity, n2->name, sk_labels_get, &n2->labels));
	assert_true(kube_node_selector_matches(p->required_affinity, n9->name, sk_labels_get, &n9->labels));
	assert_int_equal(kube_preferred_terms_score(p->preferred_affinity, n1->name, sk_labels_get, &n1->labels), 7);
	assert_int_equal(kube_preferred_terms_score(p->preferred_affinity, n2->name, sk_labels_get, &n2->labels), 5);
	assert_int_equal(kube_preferred_terms_score(p->preferred_affinity, n9->name, sk_labels_get, &n9->labels), 0);
	sk_node_unref(n1);
	sk_node_unref(n2);
	sk_node_unref(n9);
	sk_pod_unref(p);

	/* Lazy compile: a bad term never matches, the pod still decodes. */
	p = pod_with_spec("{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
			  "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Bogus\"}]}]}}}}");
	assert_non_null(p->required_affinity);
	struct sk_labels none = { 0 };
	assert_false(kube_node_selector_matches(p->required_affinity, "n", sk_labels_get, &none));
	sk_pod_unref(p);

	/* Empty nodeSelectorTerms match nothing. */
	p = pod_with_spec("{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{}}}}");
	assert_non_null(p->required_affinity);
	assert_false(kube_node_selector_matches(p->required_affinity, "n", sk_labels_get, &none));
	sk_pod_unref(p);
}

static void test_tolerations_decode(void **state)
{
	(void)state;
	struct sk_pod *p = pod_with_spec("{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"},"
					 "{\"key\":\"a\",\"value\":\"b\",\"effect\":\"NoExecute\",\"tolerationSeconds\":30},"
					 "{\"operator\":\"Exists\"},{\"key\":\"c\",\"operator\":\"Equal\",\"value\":\"d\","
					 "\"effect\":\"PreferNoSchedule\"}]}");
	assert_int_equal(p->ntolerations, 4);
	assert_string_equal(p->tolerations[0].key, "k");
	assert_int_equal(p->tolerations[0].op, SK_TOLERATION_EXISTS);
	assert_int_equal(p->tolerations[0].effect, SK_EFFECT_NO_SCHEDULE);
	assert_string_equal(p->tolerations[0].value, "");
	assert_int_equal(p->tolerations[1].op, SK_TOLERATION_EQUAL);
	assert_string_equal(p->tolerations[1].value, "b");
	assert_int_equal(p->tolerations[1].effect, SK_EFFECT_NO_EXECUTE);
	assert_string_equal(p->tolerations[2].key, "");
	assert_int_equal(p->tolerations[2].effect, SK_EFFECT_NONE);
	assert_int_equal(p->tolerations[3].effect, SK_EFFECT_PREFER_NO_SCHEDULE);
	sk_pod_unref(p);
}

/* upstream staging/src/k8s.io/api/core/v1/toleration_test.go TestTolerationToleratesTaint */
static void test_toleration_tolerates(void **state)
{
	(void)state;
	struct {
		const char *desc;
		struct sk_toleration t;
		struct sk_taint taint;
		bool want;
	} cases[] = {
		{ "empty toleration key with Exists matches all keys",
		  { "", "", SK_TOLERATION_EXISTS, SK_EFFECT_NO_SCHEDULE }, { "foo", "bar", SK_EFFECT_NO_SCHEDULE }, true },
		{ "different keys", { "foo", "", SK_TOLERATION_EXISTS, SK_EFFECT_NO_SCHEDULE },
		  { "bar", "", SK_EFFECT_NO_SCHEDULE }, false },
		{ "Exists ignores value", { "foo", "", SK_TOLERATION_EXISTS, SK_EFFECT_NO_SCHEDULE },
		  { "foo", "bar", SK_EFFECT_NO_SCHEDULE }, true },
		{ "Equal same value", { "foo", "bar", SK_TOLERATION_EQUAL, SK_EFFECT_NO_SCHEDULE },
		  { "foo", "bar", SK_EFFECT_NO_SCHEDULE }, true },
		{ "Equal different value", { "foo", "value1", SK_TOLERATION_EQUAL, SK_EFFECT_NO_SCHEDULE },
		  { "foo", "value2", SK_EFFECT_NO_SCHEDULE }, false },
		{ "empty effect matches all effects", { "foo", "bar", SK_TOLERATION_EQUAL, SK_EFFECT_NONE },
		  { "foo", "bar", SK_EFFECT_NO_EXECUTE }, true },
		{ "different effects", { "foo", "bar", SK_TOLERATION_EQUAL, SK_EFFECT_NO_SCHEDULE },
		  { "foo", "bar", SK_EFFECT_PREFER_NO_SCHEDULE }, false },
		{ "empty key with Equal compares values", { "", "bar", SK_TOLERATION_EQUAL, SK_EFFECT_NONE },
		  { "foo", "bar", SK_EFFECT_NO_SCHEDULE }, true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case: %s\n", cases[i].desc);
		assert_int_equal(sk_toleration_tolerates(&cases[i].t, &cases[i].taint), cases[i].want);
	}
}

/* ---------- pod (anti-)affinity and spread ---------- */

static const char *lbl(const void *ctx, const char *key)
{
	const char *const *kv = ctx;
	for (; kv[0]; kv += 2)
		if (strcmp(kv[0], key) == 0)
			return kv[1];
	return NULL;
}

static void test_pod_affinity_terms(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod(
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"labels\":{\"app\":\"web\",\"ver\":\"v1\",\"team\":\"x\"}},"
		"\"spec\":{\"affinity\":{"
		"\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":\"zone\","
		"\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}},\"matchLabelKeys\":[\"ver\",\"absent\"],"
		"\"mismatchLabelKeys\":[\"team\"],\"namespaces\":[\"a\",\"b\"]}],"
		"\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":30,\"podAffinityTerm\":{"
		"\"topologyKey\":\"host\",\"labelSelector\":{},\"namespaceSelector\":{\"matchLabels\":{\"env\":\"prod\"}}}}]},"
		"\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":\"kubernetes.io/hostname\","
		"\"matchLabelKeys\":[\"ver\"]}],"
		"\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,\"podAffinityTerm\":{\"topologyKey\":\"z\","
		"\"labelSelector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"NotIn\",\"values\":[\"db\"]}]}}}]}}}}");
	assert_int_equal(p->naffinity, 1);
	assert_int_equal(p->npreferred_affinity, 1);
	assert_int_equal(p->nanti_affinity, 1);
	assert_int_equal(p->npreferred_anti_affinity, 1);
	const struct sk_affinity_term *t = &p->affinity[0];
	assert_string_equal(t->topology_key, "zone");
	assert_int_equal(t->nnamespaces, 2);
	assert_string_equal(t->namespaces[1], "b");
	assert_null(t->ns_selector);
	const char *m1[] = { "app", "web", "ver", "v1", "team", "y", NULL };
	const char *m2[] = { "app", "web", "ver", "v2", "team", "y", NULL };
	const char *m3[] = { "app", "web", "ver", "v1", "team", "x", NULL };
	assert_true(kube_label_selector_matches(t->selector, lbl, m1));
	assert_false(kube_label_selector_matches(t->selector, lbl, m2)); /* matchLabelKeys: ver in (v1) */
	assert_false(kube_label_selector_matches(t->selector, lbl, m3)); /* mismatchLabelKeys: team notin (x) */
	t = &p->preferred_affinity_terms[0];
	assert_int_equal(t->weight, 30);
	assert_string_equal(t->topology_key, "host");
	assert_true(kube_label_selector_is_empty(t->selector));
	assert_non_null(t->ns_selector);
	/* no labelSelector: matches nothing, matchLabelKeys not merged */
	t = &p->anti_affinity[0];
	assert_true(kube_label_selector_is_nothing(t->selector));
	assert_false(kube_label_selector_matches(t->selector, lbl, m1));
	t = &p->preferred_anti_affinity_terms[0];
	assert_int_equal(t->weight, 1);
	assert_true(kube_label_selector_matches(t->selector, lbl, m1));
	sk_pod_unref(p);
}

static void test_spread_constraints(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod(
		"{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"web\",\"rev\":\"r1\"}},\"spec\":{\"topologySpreadConstraints\":["
		"{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
		"\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}},\"matchLabelKeys\":[\"rev\"]},"
		"{\"maxSkew\":3,\"topologyKey\":\"host\",\"whenUnsatisfiable\":\"ScheduleAnyway\",\"minDomains\":4,"
		"\"nodeAffinityPolicy\":\"Ignore\",\"nodeTaintsPolicy\":\"Honor\"}]}}");
	assert_int_equal(p->nspread, 2);
	const struct sk_spread_constraint *s = &p->spread[0];
	assert_int_equal(s->max_skew, 1);
	assert_string_equal(s->topology_key, "zone");
	assert_int_equal(s->when_unsatisfiable, SK_DO_NOT_SCHEDULE);
	assert_int_equal(s->min_domains, 1);
	assert_false(s->node_affinity_policy_ignore);
	assert_false(s->node_taints_policy_honor);
	const char *r1[] = { "app", "web", "rev", "r1", NULL };
	const char *r2[] = { "app", "web", "rev", "r2", NULL };
	assert_true(kube_label_selector_matches(s->selector, lbl, r1));
	assert_false(kube_label_selector_matches(s->selector, lbl, r2));
	s = &p->spread[1];
	assert_int_equal(s->max_skew, 3);
	assert_int_equal(s->when_unsatisfiable, SK_SCHEDULE_ANYWAY);
	assert_int_equal(s->min_domains, 4);
	assert_true(s->node_affinity_policy_ignore);
	assert_true(s->node_taints_policy_honor);
	assert_true(kube_label_selector_is_nothing(s->selector));
	sk_pod_unref(p);
}

/* ---------- nodes ---------- */

/* sk_node.pod_cidr_addresses (ABI 1.1): the smallest parseable range of spec.podCIDR(s). */
static void test_pod_cidr_addresses(void **state)
{
	(void)state;
	static const struct {
		const char *name, *spec;
		int64_t want;
	} cases[] = {
		{ "no podCIDR", "{}", 0 },
		{ "/24", "{podCIDR: 10.0.1.0/24}", 256 },
		{ "/32", "{podCIDR: 10.0.0.1/32}", 1 },
		{ "/0 IPv4", "{podCIDR: 0.0.0.0/0}", (int64_t)1 << 32 },
		{ "IPv6 /120", "{podCIDR: 'fd00::/120'}", 256 },
		{ "IPv6 /64 clamps to 2^62", "{podCIDR: 'fd00:1::/64'}", (int64_t)1 << 62 },
		{ "IPv6 /128", "{podCIDR: 'fd00::1/128'}", 1 },
		{ "podCIDRs wins over podCIDR", "{podCIDR: 10.0.0.0/24, podCIDRs: [10.0.0.0/28]}", 16 },
		{ "dual stack: the smaller", "{podCIDRs: [10.0.0.0/29, 'fd00::/64']}", 8 },
		{ "dual stack, v6 smaller", "{podCIDRs: [10.0.0.0/16, 'fd00::/120']}", 256 },
		{ "an unparseable entry is skipped", "{podCIDRs: [10.0.0.0/33, 10.0.0.0/30]}", 4 },
		{ "prefix past 32", "{podCIDR: 10.0.0.0/33}", 0 },
		{ "prefix past 128", "{podCIDR: 'fd00::/129'}", 0 },
		{ "no prefix", "{podCIDR: 10.0.0.0}", 0 },
		{ "empty prefix", "{podCIDR: 10.0.0.0/}", 0 },
		{ "trailing junk", "{podCIDR: 10.0.0.0/24x}", 0 },
		{ "five-digit prefix", "{podCIDR: 10.0.0.0/00024}", 0 },
		{ "no address", "{podCIDR: /24}", 0 },
		{ "neither dots nor colons", "{podCIDR: abc/24}", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "{metadata: {name: n1}, spec: %s}", cases[i].spec);
		struct sk_node *n = fx_node(text);
		if (n->pod_cidr_addresses != cases[i].want)
			fail_msg("%s: got %lld, want %lld", cases[i].name, (long long)n->pod_cidr_addresses,
				 (long long)cases[i].want);
		sk_node_unref(n);
	}
}

static void test_node_decode(void **state)
{
	(void)state;
	struct sk_node *n = fx_node(
		"{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"9\",\"labels\":{\"topology.kubernetes.io/zone\":\"z1\","
		"\"topology.kubernetes.io/region\":\"r1\",\"kubernetes.io/hostname\":\"n1\"}},"
		"\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"k1\",\"value\":\"v1\",\"effect\":\"NoSchedule\"},"
		"{\"key\":\"k2\",\"effect\":\"PreferNoSchedule\"}]},"
		"\"status\":{\"allocatable\":{\"cpu\":\"3900m\",\"memory\":\"8Gi\",\"ephemeral-storage\":\"100Gi\","
		"\"pods\":\"110\",\"hugepages-1Gi\":\"2Gi\",\"example.com/dongle\":\"3\",\"foo\":\"1\"},"
		"\"images\":[{\"names\":[\"nginx:latest\",\"docker.io/nginx@sha256:1\"],\"sizeBytes\":12345678901},"
		"{\"names\":[\"busybox:1\"],\"sizeBytes\":1000}]}}");
	assert_string_equal(n->name, "n1");
	assert_ptr_equal(n->name, sk_intern("n1"));
	assert_string_equal(n->resource_version, "9");
	assert_int_equal(n->labels.n, 3);
	assert_true(n->unschedulable);
	assert_int_equal(n->ntaints, 2);
	assert_string_equal(n->taints[0].key, "k1");
	assert_string_equal(n->taints[0].value, "v1");
	assert_int_equal(n->taints[0].effect, SK_EFFECT_NO_SCHEDULE);
	assert_string_equal(n->taints[1].value, "");
	assert_int_equal(n->taints[1].effect, SK_EFFECT_PREFER_NO_SCHEDULE);
	assert_int_equal(n->allocatable.milli_cpu, 3900);
	assert_int_equal(n->allocatable.memory, 8 * GI);
	assert_int_equal(n->allocatable.ephemeral_storage, 100 * GI);
	assert_int_equal(n->allocatable.allowed_pod_number, 110);
	assert_int_equal(sk_resource_scalar(&n->allocatable, "hugepages-1Gi"), 2 * GI);
	assert_int_equal(sk_resource_scalar(&n->allocatable, "example.com/dongle"), 3);
	assert_int_equal(n->allocatable.nscalar, 2);
	assert_int_equal(n->nimages, 3);
	assert_string_equal(n->images[1].name, "docker.io/nginx@sha256:1");
	assert_int_equal(n->images[1].size_bytes, 12345678901LL);
	assert_int_equal(n->images[2].size_bytes, 1000);
	assert_string_equal(n->zone_key, "r1:\x01:z1");
	sk_node_unref(n);
}

static void test_zone_key(void **state)
{
	(void)state;
	struct {
		const char *labels;
		const char *want;
	} cases[] = {
		{ "{}", "" },
		{ "{\"topology.kubernetes.io/zone\":\"z\"}", ":\x01:z" },
		{ "{\"failure-domain.beta.kubernetes.io/zone\":\"old\",\"failure-domain.beta.kubernetes.io/region\":\"r\"}",
		  "r:\x01:old" },
		{ "{\"failure-domain.beta.kubernetes.io/zone\":\"old\",\"topology.kubernetes.io/zone\":\"new\"}", ":\x01:new" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"n\",\"labels\":%s}}", cases[i].labels);
		struct sk_node *n = fx_node(text);
		assert_string_equal(n->zone_key, cases[i].want);
		sk_node_unref(n);
	}
}

/* ---------- references ---------- */

static void test_pod_with_node(void **state)
{
	(void)state;
	struct sk_pod *p = pod_with_spec("{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}");
	struct sk_pod *a = sk_pod_with_node(p, "n1");
	struct sk_pod *b = sk_pod_with_node(a, "n2");
	assert_non_null(a);
	assert_string_equal(a->node_name, "n1");
	assert_string_equal(b->node_name, "n2");
	assert_null(p->node_name);
	assert_string_equal(b->uid, p->uid);
	assert_int_equal(b->requests.milli_cpu, 1000);
	sk_pod_unref(p); /* copies keep the shared memory alive */
	sk_pod_unref(a);
	assert_string_equal(b->name, "p");
	sk_pod_unref(b);
	sk_pod_unref(NULL);
	sk_node_unref(NULL);
}

/* In-place resize: status resources of running containers count (staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests) item 5). */
static void test_resize_status(void **state)
{
	(void)state;
	static const char *fmt =
		"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n\",\"containers\":["
		"{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},{\"name\":\"b\"}],"
		"\"initContainers\":[{\"name\":\"s\",\"restartPolicy\":\"Always\"},{\"name\":\"i\"}]},"
		"\"status\":{%s\"containerStatuses\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}},"
		"\"allocatedResources\":{\"cpu\":\"2\"}},{\"name\":\"b\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}],"
		"\"initContainerStatuses\":[{\"name\":\"s\",\"resources\":{\"requests\":{\"cpu\":\"300m\"}}},"
		"{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"9\"}}}]}}";
	char text[2048];
	snprintf(text, sizeof(text), fmt, "");
	struct sk_pod *p = fx_pod(text);
	/* a: max(1, 0.5, 2) = 2; b: 1Gi memory; sidecar s: 300m; non-sidecar init i: spec only (0) */
	assert_int_equal(p->requests.milli_cpu, 2300);
	assert_int_equal(p->requests.memory, GI);
	assert_int_equal(p->non_zero_milli_cpu, 2000 + 100 + 300); /* b has no cpu anywhere: default */
	sk_pod_unref(p);
	snprintf(text, sizeof(text), fmt,
		 "\"conditions\":[{\"type\":\"PodResizePending\",\"status\":\"True\",\"reason\":\"Infeasible\"}],");
	p = fx_pod(text);
	/* infeasible: a uses max(status 0.5, allocated 2) = 2 even if spec were higher; same totals here */
	assert_int_equal(p->requests.milli_cpu, 2300);
	sk_pod_unref(p);
	snprintf(text, sizeof(text), fmt, "\"resize\":\"Infeasible\",");
	char *a = strstr(text, "\"allocatedResources\":{\"cpu\":\"2\"}");
	assert_non_null(a);
	memcpy(a + strlen("\"allocatedResources\":{\"cpu\":\""), "0", 1); /* allocated 0 */
	p = fx_pod(text);
	/* a: status 500m only (spec 1 ignored while infeasible) */
	assert_int_equal(p->requests.milli_cpu, 800);
	sk_pod_unref(p);
}

/* Quantities beyond int64 saturate (upstream Value() does too) and sums never wrap. */
static void test_huge_quantities(void **state)
{
	(void)state;
	struct sk_pod *p = pod_with_spec("{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1e300\",\"memory\":\"9E\"}}},"
					 "{\"resources\":{\"requests\":{\"cpu\":\"1e300\",\"memory\":\"9E\"}}}],"
					 "\"overhead\":{\"cpu\":\"1e300\"}}");
	assert_int_equal(p->requests.milli_cpu, INT64_MAX);
	assert_int_equal(p->requests.memory, INT64_MAX);
	assert_int_equal(p->non_zero_milli_cpu, INT64_MAX);
	sk_pod_unref(p);
}

static void test_yaml_fixture(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod("metadata: {name: yp, labels: {app: web}}\n"
				  "spec:\n"
				  "  containers:\n"
				  "  - image: nginx\n"
				  "    resources: {requests: {cpu: 500m, memory: 1Gi}}\n");
	assert_string_equal(p->name, "yp");
	assert_int_equal(p->requests.milli_cpu, 500);
	assert_int_equal(p->requests.memory, GI);
	assert_string_equal(p->images[0], "nginx:latest");
	sk_pod_unref(p);
	struct sk_node *n = fx_node("{metadata: {name: n1}, status: {allocatable: {cpu: 4, memory: 8Gi, pods: 110}}}");
	assert_int_equal(n->allocatable.milli_cpu, 4000);
	assert_int_equal(n->allocatable.allowed_pod_number, 110);
	sk_node_unref(n);
}

/* ---------- hostile input ---------- */

struct bad_case {
	const char *text;
	const char *want; /* substring of the error */
};

static const struct bad_case bad_pods[] = {
	{ "[]", "must be a JSON object" },
	{ "{\"metadata\":5}", "metadata: must be an object" },
	{ "{\"spec\":{}}", "metadata: Required value" },
	{ "{\"metadata\":{\"namespace\":\"x\"}}", "metadata.name: Required value" },
	{ "{\"metadata\":{\"name\":7}}", "metadata.name: must be a string" },
	{ "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":1}}}", "metadata.labels[a]: must be a string" },
	{ "{\"metadata\":{\"name\":\"p\",\"labels\":[]}}", "metadata.labels: must be an object" },
	{ "{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"yesterday\"}}", "metadata.creationTimestamp: invalid time" },
	{ "{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[{\"controller\":\"yes\"}]}}",
	  "metadata.ownerReferences[0].controller: must be a boolean" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":[]}", "spec: must be an object" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":{}}}", "spec.containers: must be an array" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[5]}}", "spec.containers[0]: must be an object" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"abc\"}}}]}}",
	  "spec.containers[0].resources.requests[cpu]: invalid quantity \"abc\"" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":[{},{\"resources\":{\"requests\":{\"memory\":true}}}]}}",
	  "spec.initContainers[1].resources.requests[memory]: must be a quantity string" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":[]}]}}",
	  "spec.containers[0].resources: must be an object" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"overhead\":{\"cpu\":\"1x\"}}}", "spec.overhead[cpu]: invalid quantity" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resources\":{\"requests\":{\"cpu\":[]}}}}",
	  "spec.resources.requests[cpu]: must be a quantity string" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"priority\":\"x\"}}", "spec.priority: must be a 32-bit integer" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"priority\":1e12}}", "spec.priority: must be a 32-bit integer" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"priority\":1.5}}", "spec.priority: must be a 32-bit integer" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"preemptionPolicy\":\"Sometimes\"}}", "spec.preemptionPolicy: Unsupported" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"ports\":[{\"hostPort\":\"80\"}]}]}}",
	  "spec.containers[0].ports[0].hostPort: must be a 32-bit integer" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"ports\":[{\"hostPort\":80,\"protocol\":\"ICMP\"}]}]}}",
	  "spec.containers[0].ports[0].protocol: Unsupported value: \"ICMP\"" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"image\":5}]}}", "spec.containers[0].image: must be a string" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeSelector\":{\"a\":{}}}}", "spec.nodeSelector[a]: must be a string" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"tolerations\":[{\"operator\":\"Foo\"}]}}",
	  "spec.tolerations[0].operator: Unsupported value: \"Foo\"" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"tolerations\":[{\"effect\":\"Never\"}]}}",
	  "spec.tolerations[0].effect: Unsupported value" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"tolerations\":{}}}", "spec.tolerations: must be an array" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
	  "{\"nodeSelectorTerms\":{}}}}}}",
	  "nodeSelectorTerms: must be an array" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
	  "[{\"topologyKey\":\"z\",\"labelSelector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}}]}}}}",
	  "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":{\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
	  "[{\"weight\":1}]}}}}",
	  "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm: required" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
	  "[{\"labelSelector\":{},\"matchLabelKeys\":[1]}]}}}}",
	  "requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys[0]: must be a string" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"topologySpreadConstraints\":[{\"maxSkew\":1,\"whenUnsatisfiable\":\"Maybe\"}]}}",
	  "spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"topologySpreadConstraints\":[{\"maxSkew\":\"1\"}]}}",
	  "spec.topologySpreadConstraints[0].maxSkew: must be a 32-bit integer" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"schedulingGates\":[{}]}}", "spec.schedulingGates[0].name: Required value" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{}}]}}",
	  "spec.volumes[0].persistentVolumeClaim.claimName: Required value" },
	{ "{\"metadata\":{\"name\":\"p\"},\"status\":{\"phase\":3}}", "status.phase: must be a string" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"-1\"}}}]}}",
	  "spec.containers[0].resources.requests[cpu]: must be greater than or equal to 0" },
};

static const struct bad_case bad_nodes[] = {
	{ "\"node\"", "must be a JSON object" },
	{ "{\"metadata\":{}}", "metadata.name: Required value" },
	{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":[{\"key\":\"k\"}]}}", "node n: spec.taints[0].effect: Required value" },
	{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":[{\"key\":\"k\",\"effect\":\"Sometimes\"}]}}",
	  "spec.taints[0].effect: Unsupported value" },
	{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"unschedulable\":\"true\"}}", "spec.unschedulable: must be a boolean" },
	{ "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"cpu\":\"lots\"}}}", "status.allocatable[cpu]: invalid quantity" },
	{ "{\"metadata\":{\"name\":\"n\"},\"status\":{\"images\":[{\"names\":\"x\"}]}}", "status.images[0].names: must be an array" },
	{ "{\"metadata\":{\"name\":\"n\"},\"status\":{\"images\":[{\"names\":[\"x\"],\"sizeBytes\":\"big\"}]}}",
	  "status.images[0].sizeBytes: must be an integer" },
	{ "{\"metadata\":{\"name\":\"n\"},\"status\":{\"images\":[{\"names\":[null]}]}}", "status.images[0].names[0]: must be a string" },
	{ "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":null}}}", "metadata.labels[a]: must be a string" },
	{ "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"memory\":\"-1Gi\"}}}",
	  "status.allocatable[memory]: must be greater than or equal to 0" },
};

static void test_hostile_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_pods) / sizeof(bad_pods[0]); i++) {
		char *err = fx_pod_error(bad_pods[i].text);
		print_message("pod %zu: %s\n", i, err ? err : "(decoded)");
		assert_non_null(err);
		assert_non_null(strstr(err, bad_pods[i].want));
		assert_true(strncmp(err, "pod ", 4) == 0);
		free(err);
	}
	for (size_t i = 0; i < sizeof(bad_nodes) / sizeof(bad_nodes[0]); i++) {
		char *err = fx_node_error(bad_nodes[i].text);
		print_message("node %zu: %s\n", i, err ? err : "(decoded)");
		assert_non_null(err);
		assert_non_null(strstr(err, bad_nodes[i].want));
		free(err);
	}
	/* the object is named */
	char *err = fx_pod_error("{\"metadata\":{\"name\":\"web-1\",\"namespace\":\"prod\"},\"spec\":{\"priority\":\"x\"}}");
	assert_string_equal(err, "pod prod/web-1: spec.priority: must be a 32-bit integer");
	free(err);
	/* decode with a NULL err pointer is fine */
	cJSON *j = fx_json("{\"metadata\":{}}");
	assert_null(sk_pod_decode(j, NULL));
	assert_null(sk_node_decode(j, NULL));
	assert_null(sk_pod_decode(NULL, NULL));
	cJSON_Delete(j);
}

static const char *full_pod =
	"{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\",\"labels\":{\"app\":\"web\"},"
	"\"creationTimestamp\":\"2024-01-02T03:04:05Z\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"uid\":\"r\",\"controller\":true}]},"
	"\"spec\":{\"nodeName\":\"n\",\"priority\":1,\"schedulerName\":\"s\",\"nodeSelector\":{\"a\":\"b\"},"
	"\"containers\":[{\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"example.com/x\":\"1\"}},"
	"\"ports\":[{\"hostPort\":80,\"protocol\":\"UDP\",\"hostIP\":\"1.2.3.4\"}]}],"
	"\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}],"
	"\"overhead\":{\"cpu\":\"1m\"},\"resources\":{\"requests\":{\"cpu\":\"2\"}},"
	"\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
	"[{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\",\"values\":[\"v\"]}]}]},"
	"\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,\"preference\":{\"matchExpressions\":"
	"[{\"key\":\"k\",\"operator\":\"Exists\"}]}}]},"
	"\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":\"z\",\"labelSelector\":"
	"{\"matchLabels\":{\"app\":\"web\"}},\"matchLabelKeys\":[\"app\"],\"namespaces\":[\"x\"],\"namespaceSelector\":{}}]},"
	"\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":3,\"podAffinityTerm\":"
	"{\"topologyKey\":\"z\",\"labelSelector\":{}}}]}},"
	"\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],"
	"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"z\",\"whenUnsatisfiable\":\"ScheduleAnyway\","
	"\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}},\"matchLabelKeys\":[\"app\"],\"minDomains\":2}],"
	"\"schedulingGates\":[{\"name\":\"g\"}],\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"c\"}},"
	"{\"name\":\"e\",\"ephemeral\":{}}]},"
	"\"status\":{\"phase\":\"Pending\",\"nominatedNodeName\":\"m\"}}";

static const char *full_node =
	"{\"metadata\":{\"name\":\"n\",\"labels\":{\"topology.kubernetes.io/zone\":\"z\"}},"
	"\"spec\":{\"unschedulable\":false,\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoExecute\"}]},"
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"1Gi\",\"pods\":\"10\",\"example.com/x\":\"2\"},"
	"\"images\":[{\"names\":[\"a\",\"b\"],\"sizeBytes\":10}]}}";

/* Replace every value of the tree, one at a time, with each wrong-typed value; decoding must
 * either succeed or fail cleanly (ASan/UBSan catch the rest). */
static int mutate_walk(cJSON *root, cJSON *node, bool pod, int *count)
{
	static const char *replacements[] = { "null", "7", "-1", "1e300", "\"x\"", "\"\"", "true", "[]", "{}",
					      "[1,\"a\",{}]", "{\"a\":[]}" };
	int failures = 0;
	for (cJSON *child = node->child; child; child = child->next) {
		for (size_t r = 0; r < sizeof(replacements) / sizeof(replacements[0]); r++) {
			cJSON *saved = cJSON_Duplicate(child, 1);
			assert_non_null(saved);
			cJSON *rep = cJSON_Parse(replacements[r]);
			assert_non_null(rep);
			/* swap contents in place to keep the tree shape */
			cJSON tmp = *child;
			child->type = rep->type;
			child->valuestring = rep->valuestring;
			child->valuedouble = rep->valuedouble;
			child->valueint = rep->valueint;
			child->child = rep->child;
			rep->valuestring = NULL;
			rep->child = NULL;
			char *err = NULL;
			if (pod) {
				struct sk_pod *p = sk_pod_decode(root, &err);
				if (!p)
					failures++;
				sk_pod_unref(p);
			} else {
				struct sk_node *n = sk_node_decode(root, &err);
				if (!n)
					failures++;
				sk_node_unref(n);
			}
			free(err);
			(*count)++;
			/* restore */
			if (child->valuestring)
				free(child->valuestring);
			if (child->child)
				cJSON_Delete(child->child);
			child->type = tmp.type;
			child->valuestring = tmp.valuestring;
			child->valuedouble = tmp.valuedouble;
			child->valueint = tmp.valueint;
			child->child = tmp.child;
			cJSON_Delete(rep);
			cJSON_Delete(saved);
		}
		failures += mutate_walk(root, child, pod, count);
	}
	return failures;
}

/* The lookup NodeAffinity hands its node labels to, recording the key pointer it is asked for. */
struct seen_key {
	const char *key;
	const char *value;
};
static const char *record_key(const void *ctx, const char *key)
{
	struct seen_key *k = (struct seen_key *)ctx;
	k->key = key;
	return k->value;
}

/* A pod's compiled node-affinity terms carry the interned key and values (decode.c,
 * kube_node_selector_canonicalize) even when the pod is decoded before any node has the label:
 * the lookup is handed the interned key, the same pointer a node's labels hold. */
static void test_affinity_selector_interned(void **state)
{
	(void)state;
	struct sk_pod *p = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{"
				  "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":"
				  "[{\"key\":\"example.com/never-seen-before\",\"operator\":\"In\",\"values\":[\"v-unseen\"]}]}]},"
				  "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":2,\"preference\":{"
				  "\"matchExpressions\":[{\"key\":\"example.com/also-unseen\",\"operator\":\"Exists\"}]}}]}}}}");
	const char *key = sk_intern("example.com/never-seen-before"), *value = sk_intern("v-unseen");
	struct seen_key k = { .value = value };
	assert_true(kube_node_selector_matches(p->required_affinity, "n1", record_key, &k));
	assert_ptr_equal(k.key, key);
	k.value = sk_intern("other");
	assert_false(kube_node_selector_matches(p->required_affinity, "n1", record_key, &k));
	k.value = "";
	assert_int_equal(kube_preferred_terms_score(p->preferred_affinity, "n1", record_key, &k), 2);
	assert_ptr_equal(k.key, sk_intern("example.com/also-unseen"));
	sk_pod_unref(p);
}

static void test_hostile_mutations(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		cJSON *root = fx_json(k == 0 ? full_pod : full_node);
		char *err = NULL;
		if (k == 0) {
			struct sk_pod *p = sk_pod_decode(root, &err);
			assert_non_null(p);
			sk_pod_unref(p);
		} else {
			struct sk_node *n = sk_node_decode(root, &err);
			assert_non_null(n);
			sk_node_unref(n);
		}
		int count = 0;
		int failures = mutate_walk(root, root, k == 0, &count);
		print_message("%s: %d mutations, %d rejected\n", k == 0 ? "pod" : "node", count, failures);
		assert_true(count > 100);
		assert_true(failures > 0);
		cJSON_Delete(root);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_identity),
		cmocka_unit_test(test_pod_defaults),
		cmocka_unit_test(test_creation_timestamps),
		cmocka_unit_test(test_duplicate_label_keys),
		cmocka_unit_test(test_requests_table),
		cmocka_unit_test(test_requests_scalars),
		cmocka_unit_test(test_resource_helpers),
		cmocka_unit_test(test_host_ports),
		cmocka_unit_test(test_images),
		cmocka_unit_test(test_gates_volumes),
		cmocka_unit_test(test_node_selector_and_affinity),
		cmocka_unit_test(test_affinity_selector_interned),
		cmocka_unit_test(test_tolerations_decode),
		cmocka_unit_test(test_toleration_tolerates),
		cmocka_unit_test(test_pod_affinity_terms),
		cmocka_unit_test(test_spread_constraints),
		cmocka_unit_test(test_node_decode),
		cmocka_unit_test(test_pod_cidr_addresses),
		cmocka_unit_test(test_zone_key),
		cmocka_unit_test(test_pod_with_node),
		cmocka_unit_test(test_resize_status),
		cmocka_unit_test(test_huge_quantities),
		cmocka_unit_test(test_yaml_fixture),
		cmocka_unit_test(test_hostile_table),
		cmocka_unit_test(test_hostile_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
