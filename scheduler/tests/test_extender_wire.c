/* Tests for the extender wire fidelity and the preempt verb (scheduler/framework/extender_wire.c,
 * extender_preempt.c, extender_metrics.c, scheduler/api/raw.c) against the scripted fake extender
 * (fake_extender.h): full v1.Pod and v1.Node objects in both node modes (managedFields dropped,
 * an assumed copy's nodeName), interest by requests and by limits, ProcessPreemption in both node
 * modes (victims as full pods or as UIDs), vetoes, the answer's consistency errors, ignorable
 * errors, the loop over several extenders, and the metrics. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/metrics.h"
#include "scheduler/api/raw.h"
#include "scheduler/framework/extender.h"
#include "scheduler/tests/fake_extender.h"
#include "scheduler/tests/fixtures.h"

static struct fe_server *fe;
static struct sk_snapshot *snap;

/* Node n1 holds v1 (prio 1) and v2 (prio 2); n2 holds v3; n3 nothing. Full objects with status. */
static const char NODE_FMT[] =
	"{\"metadata\":{\"name\":\"%s\",\"uid\":\"node-uid-%s\",\"labels\":{\"zone\":\"a\"},"
	"\"managedFields\":[{\"manager\":\"kubelet\",\"operation\":\"Update\"}]},"
	"\"spec\":{\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"PreferNoSchedule\"}]},"
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},"
	"\"capacity\":{\"cpu\":\"4\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";

static struct sk_node *node(const char *name)
{
	char text[1024];
	snprintf(text, sizeof(text), NODE_FMT, name, name);
	return fx_node(text);
}

static struct sk_pod *victim(const char *name, const char *node_name, int prio)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},"
		 "\"spec\":{\"nodeName\":\"%s\",\"priority\":%d,\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
		 name, name, node_name, prio);
	return fx_pod(text);
}

static struct sk_pod *preemptor(void)
{
	return fx_pod("{\"metadata\":{\"name\":\"urgent\",\"namespace\":\"team\",\"uid\":\"uid-urgent\","
		      "\"annotations\":{\"a\":\"b\"},\"managedFields\":[{\"manager\":\"kubectl\"}]},"
		      "\"spec\":{\"priority\":1000,\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
		      "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}}");
}

static int setup(void **state)
{
	(void)state;
	fe = fe_start();
	assert_non_null(fe);
	snap = fx_snapshot(fx_node_info(node("n1"), victim("v1", "n1", 1), victim("v2", "n1", 2), NULL),
			   fx_node_info(node("n2"), victim("v3", "n2", 1), NULL), fx_node_info(node("n3"), NULL), NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sk_snapshot_free(snap);
	fe_stop(fe);
	return 0;
}

/* An extender from JSON text with "URL" replaced by the fake's URL. */
static struct sk_extender *ext(const char *text)
{
	char buf[2048];
	size_t o = 0;
	for (const char *t = text; *t && o < sizeof(buf) - 64;) {
		if (strncmp(t, "URL", 3) == 0) {
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s", fe_url(fe));
			t += 3;
		} else {
			buf[o++] = *t++;
		}
	}
	buf[o] = '\0';
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	char *err = NULL;
	struct sk_extender *e = sk_extender_new(j, "extenders[0]", &err);
	cJSON_Delete(j);
	if (!e)
		fail_msg("%s", err);
	return e;
}

static char *print(const cJSON *o) { return cJSON_PrintUnformatted(o); }

/* ---------- full objects ---------- */

static void test_full_objects_in_both_node_modes(void **state)
{
	(void)state;
	struct sk_pod *pod = preemptor();
	const struct sk_node_info *const *nodes = (const struct sk_node_info *const *)snap->nodes;
	struct sk_extender *full = ext("{\"urlPrefix\":\"URL\",\"filterVerb\":\"filter\"}");
	cJSON *args = sk_extender_args_json(full, pod, nodes, 2);
	assert_non_null(args);
	char *s = print(cJSON_GetObjectItemCaseSensitive(args, "Pod"));
	/* the whole pod (annotations, containers, resources, status), without managedFields */
	assert_string_equal(s, "{\"metadata\":{\"name\":\"urgent\",\"namespace\":\"team\",\"uid\":\"uid-urgent\","
			       "\"annotations\":{\"a\":\"b\"}},\"spec\":{\"priority\":1000,\"containers\":[{\"name\":\"c\","
			       "\"image\":\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
			       "\"status\":{\"phase\":\"Pending\"}}");
	free(s);
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(args, "Nodes"), "items");
	assert_int_equal(cJSON_GetArraySize(items), 2);
	s = print(cJSON_GetArrayItem(items, 1));
	char want[1024];
	snprintf(want, sizeof(want),
		 "{\"metadata\":{\"name\":\"n2\",\"uid\":\"node-uid-n2\",\"labels\":{\"zone\":\"a\"}},"
		 "\"spec\":{\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"PreferNoSchedule\"}]},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},"
		 "\"capacity\":{\"cpu\":\"4\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
	assert_string_equal(s, want);
	free(s);
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(args, "NodeNames")));
	assert_non_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(args, "Nodes"), "metadata"));
	cJSON_Delete(args);

	struct sk_extender *names = ext("{\"urlPrefix\":\"URL\",\"filterVerb\":\"filter\",\"nodeCacheCapable\":true}");
	args = sk_extender_args_json(names, pod, nodes, 3);
	s = print(args);
	assert_non_null(strstr(s, "\"Nodes\":null,\"NodeNames\":[\"n1\",\"n2\",\"n3\"]}"));
	assert_non_null(strstr(s, "\"annotations\":{\"a\":\"b\"}"));
	free(s);
	cJSON_Delete(args);

	/* an assumed copy carries its node; the root object is untouched */
	struct sk_pod *assumed = sk_pod_with_node(pod, "n3");
	char *a = sk_pod_raw_json(assumed);
	cJSON *aj = cJSON_Parse(a);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(aj, "spec"), "nodeName")->valuestring,
			    "n3");
	cJSON_Delete(aj);
	free(a);
	a = sk_pod_raw_json(pod);
	assert_null(strstr(a, "nodeName"));
	free(a);
	/* the kept object's size is what it costs (docs/benchmarks.md) */
	assert_true(sk_node_raw(nodes[0]->node)->len == strlen(sk_node_raw(nodes[0]->node)->json));
	assert_null(strstr(sk_node_raw(nodes[0]->node)->json, "managedFields"));
	sk_pod_unref(assumed);
	sk_extender_free(full);
	sk_extender_free(names);
	sk_pod_unref(pod);
}

/* Names that need escaping still make valid JSON (the fast path writes plain ones as they are). */
static void test_node_names_escaped(void **state)
{
	(void)state;
	static const char *const names[] = { "plain-1", "q\"uote", "back\\slash", "tab\there", "utf8-\xc3\xa9" };
	struct sk_node_info nis[5];
	const struct sk_node_info *list[5];
	struct sk_node *ns[5];
	for (int i = 0; i < 5; i++) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(cJSON_AddObjectToObject(j, "metadata"), "name", names[i]);
		ns[i] = sk_node_decode(j, NULL);
		cJSON_Delete(j);
		assert_non_null(ns[i]);
		memset(&nis[i], 0, sizeof(nis[i]));
		nis[i].node = ns[i];
		list[i] = &nis[i];
	}
	struct sk_extender *e = ext("{\"urlPrefix\":\"URL\",\"filterVerb\":\"f\",\"nodeCacheCapable\":true}");
	struct sk_pod *pod = preemptor();
	cJSON *args = sk_extender_args_json(e, pod, list, 5);
	assert_non_null(args);
	const cJSON *nn = cJSON_GetObjectItemCaseSensitive(args, "NodeNames");
	assert_int_equal(cJSON_GetArraySize(nn), 5);
	for (int i = 0; i < 5; i++)
		assert_string_equal(cJSON_GetArrayItem(nn, i)->valuestring, names[i]);
	cJSON_Delete(args);
	sk_pod_unref(pod);
	sk_extender_free(e);
	for (int i = 0; i < 5; i++)
		sk_node_unref(ns[i]);
}

/* ---------- interest ---------- */

static void test_interest_by_requests_and_limits(void **state)
{
	(void)state;
	struct sk_extender *e =
		ext("{\"urlPrefix\":\"URL\",\"managedResources\":[{\"name\":\"example.com/fpga\"},{\"name\":\"example.com/gpu\"}]}");
	static const struct {
		const char *containers;
		bool interested;
	} cases[] = {
		{ "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"example.com/gpu\":\"1\"}}}]", true },
		{ "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"example.com/gpu\":\"1\"}}}]", true },
		{ "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"limits\":{\"example.com/fpga\":\"1\"}}}],"
		  "\"containers\":[{\"name\":\"c\"}]",
		  true },
		{ "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"example.com/fpga\":\"1\"}}}],"
		  "\"containers\":[{\"name\":\"c\"}]",
		  true },
		{ "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"example.com/other\":\"1\",\"cpu\":\"1\"},"
		  "\"requests\":{\"example.com/other\":\"1\"}}}]",
		  false },
		{ "\"containers\":[{\"name\":\"c\"}]", false },
		/* ephemeral containers are not looked at (upstream IsInterested) */
		{ "\"containers\":[{\"name\":\"c\"}],\"ephemeralContainers\":[{\"name\":\"e\",\"resources\":"
		  "{\"limits\":{\"example.com/gpu\":\"1\"}}}]",
		  false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];
		snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"p%zu\"},\"spec\":{%s}}", i, cases[i].containers);
		struct sk_pod *p = fx_pod(text);
		if (sk_extender_is_interested(e, p) != cases[i].interested)
			fail_msg("case %zu (%s): want interested=%d", i, cases[i].containers, cases[i].interested);
		sk_pod_unref(p);
	}
	sk_extender_free(e);
}

/* ---------- preempt ---------- */

/* The candidates of the dry run: n1 {v1, v2}, n2 {v3} (v2 most important first). */
static struct sk_victims *candidates(int *n)
{
	struct sk_victims *v = calloc(2, sizeof(*v));
	assert_non_null(v);
	const char *names[2] = { "n1", "n2" };
	for (int i = 0; i < 2; i++) {
		const struct sk_node_info *ni = sk_snapshot_get(snap, names[i]);
		v[i].node = ni->node->name;
		v[i].pods = calloc((size_t)ni->npods, sizeof(*v[i].pods));
		for (int k = ni->npods - 1; k >= 0; k--)
			v[i].pods[v[i].npods++] = sk_pod_ref(ni->pods[k].pod);
		v[i].num_pdb_violations = i;
	}
	*n = 2;
	return v;
}

/* "n1:v2,v1;n2:v3" */
static void victims_str(const struct sk_victims *v, int n, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s(%lld):", i ? ";" : "", v[i].node,
			 (long long)v[i].num_pdb_violations);
		for (int k = 0; k < v[i].npods; k++)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", k ? "," : "", v[i].pods[k]->name);
	}
}

static void test_preempt_wire_both_modes(void **state)
{
	(void)state;
	struct sk_pod *pod = preemptor();
	static const char *cfgs[2] = { "{\"urlPrefix\":\"URL/x\",\"preemptVerb\":\"preempt\"}",
				       "{\"urlPrefix\":\"URL/x\",\"preemptVerb\":\"preempt\",\"nodeCacheCapable\":true}" };
	for (int mode = 0; mode < 2; mode++) {
		struct sk_extender *e = ext(cfgs[mode]);
		assert_true(sk_extender_is_preempter(e));
		/* keeps n1 with one victim (v2 only), vetoes n2; lower-case keys accepted */
		fe_respond(fe, "/x/preempt", 200,
			   "{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":[{\"uid\":\"uid-v2\"}],\"numPDBViolations\":3}}}", 0);
		int n = 0;
		struct sk_victims *in = candidates(&n), *out = NULL;
		int nout = 0;
		char *err = NULL;
		fe_clear(fe);
		assert_int_equal(sk_extender_process_preemption(e, pod, snap, in, n, &out, &nout, &err), 0);
		char got[256];
		victims_str(out, nout, got, sizeof(got));
		assert_string_equal(got, "n1(3):v2");
		/* the victim is the snapshot's pod itself */
		assert_ptr_equal(out[0].pods[0], sk_snapshot_get(snap, "n1")->pods[1].pod);
		cJSON *body = fe_body(fe, "/x/preempt", -1);
		assert_non_null(body);
		const cJSON *full = cJSON_GetObjectItemCaseSensitive(body, "NodeNameToVictims");
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(body, "NodeNameToMetaVictims");
		char *s = NULL;
		if (mode == 0) {
			assert_true(cJSON_IsNull(meta));
			s = print(cJSON_GetObjectItemCaseSensitive(full, "n2"));
			assert_string_equal(s, "{\"Pods\":[{\"metadata\":{\"name\":\"v3\",\"namespace\":\"default\",\"uid\":\"uid-v3\"},"
					       "\"spec\":{\"nodeName\":\"n2\",\"priority\":1,\"containers\":[{\"name\":\"c\","
					       "\"image\":\"busybox\"}]}}],\"NumPDBViolations\":1}");
		} else {
			assert_true(cJSON_IsNull(full));
			s = print(meta);
			assert_string_equal(s, "{\"n1\":{\"Pods\":[{\"UID\":\"uid-v2\"},{\"UID\":\"uid-v1\"}],\"NumPDBViolations\":0},"
					       "\"n2\":{\"Pods\":[{\"UID\":\"uid-v3\"}],\"NumPDBViolations\":1}}");
		}
		free(s);
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(body, "Pod");
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "metadata"), "uid")->valuestring,
				    "uid-urgent");
		cJSON_Delete(body);
		sk_victims_free(in, n);
		sk_victims_free(out, nout);
		sk_extender_free(e);
	}
	sk_pod_unref(pod);
}

static void test_preempt_answer_errors(void **state)
{
	(void)state;
	struct sk_pod *pod = preemptor();
	struct sk_extender *e = ext("{\"urlPrefix\":\"URL\",\"preemptVerb\":\"preempt\"}");
	static const struct {
		int status;
		const char *body;
		const char *want; /* substring of the error; NULL: success with `kept` */
		const char *kept;
	} cases[] = {
		{ 200, "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":\"uid-v3\"}]}}}",
		  "claims to preempt pod (UID: uid-v3) on node: n1, but the pod is not found on that node", NULL },
		{ 200, "{\"NodeNameToMetaVictims\":{\"n9\":{\"Pods\":[{\"UID\":\"uid-v3\"}]}}}",
		  "nodeinfo not found for node name \"n9\"", NULL },
		{ 200, "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":\"x\"}}}", "Pods: expected an array", NULL },
		{ 200, "[]", "expected an ExtenderPreemptionResult", NULL },
		{ 500, "{}", "failed preempt with extender at URL", NULL },
		{ 200, "{nope", "invalid JSON response", NULL },
		/* no map: every candidate vetoed */
		{ 200, "{}", NULL, "" },
		{ 200, "{\"NodeNameToMetaVictims\":null}", NULL, "" },
		/* the verb returns empty-victim nodes as they are (callExtenders judges them) */
		{ 200, "{\"NodeNameToMetaVictims\":{\"n2\":{\"Pods\":[]},\"n1\":{\"Pods\":[{\"UID\":\"uid-v1\"}]}}}", NULL,
		  "n2(0):;n1(0):v1" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fe_respond(fe, "/preempt", cases[i].status, cases[i].body, 0);
		int n = 0, nout = 0;
		struct sk_victims *in = candidates(&n), *out = NULL;
		char *err = NULL;
		int rc = sk_extender_process_preemption(e, pod, snap, in, n, &out, &nout, &err);
		if (cases[i].want) {
			if (rc != -1 || !err || !strstr(err, cases[i].want))
				fail_msg("case %zu: want error \"%s\", got rc %d \"%s\"", i, cases[i].want, rc, err ? err : "");
		} else {
			if (rc != 0)
				fail_msg("case %zu: %s", i, err ? err : "");
			char got[256];
			victims_str(out, nout, got, sizeof(got));
			assert_string_equal(got, cases[i].kept);
		}
		free(err);
		sk_victims_free(in, n);
		sk_victims_free(out, nout);
	}
	sk_extender_free(e);
	sk_pod_unref(pod);
}

/* callExtenders: order, chaining, vetoes, interest, ignorable. */
static void test_call_preempt_loop(void **state)
{
	(void)state;
	struct sk_pod *pod = preemptor();
	static const struct {
		const char *a_cfg, *b_cfg; /* extenders on /a and /b */
		int a_status;
		const char *a_body;
		int b_status;
		const char *b_body;
		int rc;
		const char *want; /* kept list, or the error substring */
		int a_calls, b_calls;
	} cases[] = {
		/* a vetoes n2, b receives only n1 and keeps it */
		{ "", "", 200, "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":\"uid-v2\"},{\"UID\":\"uid-v1\"}]}}}", 200,
		  "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":\"uid-v1\"}]}}}", 0, "n1(0):v1", 1, 1 },
		/* a vetoes everything: b is not called */
		{ "", "", 200, "{}", 200, "{}", 0, "", 1, 0 },
		/* a non-ignorable error stops it all */
		{ "", "", 500, "{}", 200, "{}", -1, "failed a with extender at URL", 1, 0 },
		/* an ignorable one is skipped: b gets the dry run's candidates */
		{ ",\"ignorable\":true", "", 500, "{}", 200,
		  "{\"NodeNameToMetaVictims\":{\"n2\":{\"Pods\":[{\"UID\":\"uid-v3\"}]}}}", 0, "n2(0):v3", 1, 1 },
		/* a node without victims: error for a non-ignorable extender */
		{ "", "", 200, "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[]}}}", 200, "{}", -1,
		  "expected at least one victim pod on node \"n1\"", 1, 0 },
		/* ... dropped for an ignorable one (which runs last: b's answer goes to it) */
		{ ",\"ignorable\":true", "", 200,
		  "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[]},\"n2\":{\"Pods\":[{\"UID\":\"uid-v3\"}]}}}", 200,
		  "{\"NodeNameToMetaVictims\":{\"n2\":{\"Pods\":[{\"UID\":\"uid-v3\"}],\"NumPDBViolations\":1}}}", 0,
		  "n2(0):v3", 1, 1 },
		/* uninterested extenders (managedResources the pod does not use) are skipped */
		{ ",\"managedResources\":[{\"name\":\"example.com/gpu\"}]", ",\"managedResources\":[{\"name\":\"example.com/fpga\"}]",
		  200, "{}", 200, "{}", 0,
		  "n1(0):v2,v1;n2(1):v3", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char a[512], b[512];
		snprintf(a, sizeof(a), "{\"urlPrefix\":\"URL\",\"preemptVerb\":\"a\"%s}", cases[i].a_cfg);
		snprintf(b, sizeof(b), "{\"urlPrefix\":\"URL\",\"preemptVerb\":\"b\"%s}", cases[i].b_cfg);
		/* ignorable ones go last, as sk_extenders_build orders them */
		struct sk_extender *list[2] = { ext(a), ext(b) };
		if (sk_extender_is_ignorable(list[0])) {
			struct sk_extender *t = list[0];
			list[0] = list[1];
			list[1] = t;
		}
		fe_clear(fe);
		fe_respond(fe, "/a", cases[i].a_status, cases[i].a_body, 0);
		fe_respond(fe, "/b", cases[i].b_status, cases[i].b_body, 0);
		int n = 0;
		struct sk_victims *v = candidates(&n);
		char *err = NULL;
		int rc = sk_extenders_call_preempt(list, 2, pod, snap, &v, &n, &err);
		if (rc != cases[i].rc)
			fail_msg("case %zu: rc %d (%s)", i, rc, err ? err : "");
		if (rc == 0) {
			char got[256];
			victims_str(v, n, got, sizeof(got));
			if (strcmp(got, cases[i].want) != 0)
				fail_msg("case %zu: kept \"%s\", want \"%s\"", i, got, cases[i].want);
		} else if (!err || !strstr(err, cases[i].want)) {
			fail_msg("case %zu: error \"%s\", want \"%s\"", i, err ? err : "", cases[i].want);
		}
		/* the ignorable case reorders: b is called first there */
		int ca = fe_count(fe, "/a"), cb = fe_count(fe, "/b");
		if (ca != cases[i].a_calls || cb != cases[i].b_calls)
			fail_msg("case %zu: calls a=%d b=%d, want %d %d", i, ca, cb, cases[i].a_calls, cases[i].b_calls);
		free(err);
		sk_victims_free(v, n);
		sk_extender_free(list[0]);
		sk_extender_free(list[1]);
	}
	sk_pod_unref(pod);
}

/* ---------- metrics ---------- */

static void test_metrics_duration_and_errors(void **state)
{
	(void)state;
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	sk_extender_metrics_register(reg);
	struct sk_extender *e = ext("{\"urlPrefix\":\"URL\",\"filterVerb\":\"f\",\"preemptVerb\":\"p\",\"httpTimeout\":\"300ms\"}");
	struct sk_pod *pod = preemptor();
	const struct sk_node_info *const *nodes = (const struct sk_node_info *const *)snap->nodes;
	struct sk_extender_filter_result r;
	char *err = NULL;
	fe_respond(fe, "/f", 200, "{\"NodeNames\":null,\"Nodes\":null}", 0);
	assert_int_equal(sk_extender_filter(e, pod, nodes, 3, &r, &err), 0);
	sk_extender_filter_result_free(&r);
	fe_respond(fe, "/f", 503, "", 0);
	assert_int_equal(sk_extender_filter(e, pod, nodes, 3, &r, &err), -1);
	free(err);
	fe_respond(fe, "/f", 200, "{\"Error\":\"no\"}", 0);
	assert_int_equal(sk_extender_filter(e, pod, nodes, 3, &r, &err), -1);
	free(err);
	fe_respond(fe, "/f", 200, "{]", 0);
	assert_int_equal(sk_extender_filter(e, pod, nodes, 3, &r, &err), -1);
	free(err);
	int n = 0, nout = 0;
	struct sk_victims *in = candidates(&n), *out = NULL;
	fe_respond(fe, "/p", 200, "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":\"zz\"}]}}}", 0);
	assert_int_equal(sk_extender_process_preemption(e, pod, snap, in, n, &out, &nout, &err), -1);
	free(err);
	sk_victims_free(in, n);
	/* last: the fake holds later requests behind a delayed reply */
	fe_respond(fe, "/f", 200, "{}", 1000);
	assert_int_equal(sk_extender_filter(e, pod, nodes, 3, &r, &err), -1);
	free(err);

	const char *url = fe_url(fe);
	struct kube_metric *d = kube_metrics_lookup(reg, "scheduler_extender_request_duration_seconds");
	assert_non_null(d);
	assert_int_equal((int)kube_metric_value(d, KUBE_LABELS(url, "filter")), 5);
	assert_int_equal((int)kube_metric_value(d, KUBE_LABELS(url, "preempt")), 1);
	/* the timed-out call lasted about the timeout */
	assert_true(kube_histogram_sum(d, KUBE_LABELS(url, "filter")) >= 0.29);
	static const char *const kinds[][3] = { { "filter", "status", "1" },   { "filter", "response", "1" },
						{ "filter", "timeout", "1" },  { "filter", "decode", "1" },
						{ "preempt", "response", "1" }, { "filter", "transport", "0" } };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		double v = kube_metrics_value(reg, "scheduler_extender_errors_total", KUBE_LABELS(url, kinds[i][0], kinds[i][1]));
		if ((int)v != atoi(kinds[i][2]))
			fail_msg("errors{%s,%s} = %g, want %s", kinds[i][0], kinds[i][1], v, kinds[i][2]);
	}
	char *text = kube_metrics_render(reg);
	assert_non_null(strstr(text, "scheduler_extender_errors_total{extender=\""));
	free(text);
	/* after unregistering nothing is recorded (the registry may go) */
	sk_extender_metrics_unregister(reg);
	struct sk_extender *dead = ext("{\"urlPrefix\":\"http://127.0.0.1:1\",\"filterVerb\":\"f\"}");
	assert_int_equal(sk_extender_filter(dead, pod, nodes, 3, &r, &err), -1);
	free(err);
	sk_extender_free(dead);
	assert_int_equal((int)kube_metrics_value(reg, "scheduler_extender_errors_total",
						 KUBE_LABELS("http://127.0.0.1:1", "filter", "transport")), 0);
	kube_metrics_registry_free(reg);
	sk_extender_free(e);
	sk_pod_unref(pod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_objects_in_both_node_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_names_escaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interest_by_requests_and_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preempt_wire_both_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preempt_answer_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_preempt_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_duration_and_errors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
