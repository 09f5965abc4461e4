/* Tests for e2e/apiserver/patch: JSON merge patch (RFC 7386 appendix A cases), JSON patch
 * (RFC 6902 appendix A cases), strategic merge patch (cases after upstream strategicpatch tests
 * and the exact patches kubectl's client-side apply sends), and fuzz-style hostile inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e/apiserver/patch.h"

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	if (!j)
		fail_msg("bad test JSON: %s", s);
	return j;
}

static void assert_json_eq(const cJSON *got, const char *want, const char *name)
{
	cJSON *w = parse(want);
	if (!cJSON_Compare(got, w, 1)) {
		char *g = cJSON_PrintUnformatted(got);
		fail_msg("%s:\n got  %s\n want %s", name, g, want);
	}
	cJSON_Delete(w);
}

/* Like assert_json_eq but array order matters too (cJSON_Compare is order-sensitive for arrays,
 * insensitive for object keys), so this is the same check; kept for readability. */
#define assert_json_ordered assert_json_eq

/* ------------------------------------------------------------ merge patch (RFC 7386 App. A) */

static const struct {
	const char *target, *patch, *result;
} merge_cases[] = {
	{"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
	{"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
	{"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
	{"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
	{"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
	{"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
	{"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
	{"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
	{"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
	{"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
	{"{\"a\":\"foo\"}", "null", "null"},
	{"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
	{"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
	{"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
	{"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
	/* kubectl patch --type merge on a custom resource */
	{"{\"spec\":{\"size\":1,\"tags\":[\"a\"]},\"metadata\":{\"labels\":{\"x\":\"1\"}}}",
	 "{\"spec\":{\"size\":3},\"metadata\":{\"labels\":{\"x\":null,\"y\":\"2\"}}}",
	 "{\"spec\":{\"size\":3,\"tags\":[\"a\"]},\"metadata\":{\"labels\":{\"y\":\"2\"}}}"},
};

static void test_merge_patch_rfc7386(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(merge_cases) / sizeof(merge_cases[0]); i++) {
		cJSON *t = parse(merge_cases[i].target);
		cJSON *p = parse(merge_cases[i].patch);
		assert_int_equal(apis_merge_patch(&t, p), 0);
		char name[32];
		snprintf(name, sizeof(name), "merge case %zu", i);
		assert_json_eq(t, merge_cases[i].result, name);
		cJSON_Delete(t);
		cJSON_Delete(p);
	}
}

/* ------------------------------------------------------------ JSON patch (RFC 6902 App. A) */

static const struct {
	const char *doc, *ops, *result; /* result NULL: error expected, with err containing want_err */
	const char *want_err;
} json_cases[] = {
	{"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
	 "{\"baz\":\"qux\",\"foo\":\"bar\"}", NULL},
	{"{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
	 "{\"foo\":[\"bar\",\"qux\",\"baz\"]}", NULL},
	{"{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
	 "{\"foo\":\"bar\"}", NULL},
	{"{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
	 "{\"foo\":[\"bar\",\"baz\"]}", NULL},
	{"{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
	 "{\"baz\":\"boo\",\"foo\":\"bar\"}", NULL},
	{"{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
	 "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
	 "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}", NULL},
	{"{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
	 "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
	 "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}", NULL},
	{"{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
	 "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
	 "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}", NULL},
	{"{\"baz\":\"qux\"}", "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]", NULL,
	 "testing value /baz failed"},
	{"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
	 "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}", NULL},
	{"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]", NULL,
	 "missing"},
	{"{\"foo\":[\"bar\"]}", "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
	 "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}", NULL},
	{"{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]",
	 "{\"/\":9,\"~1\":10}", NULL},
	{"{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/3\",\"value\":1}]", NULL,
	 "out of bounds"},
	{"{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/01\",\"value\":1}]", NULL,
	 "out of bounds"},
	{"{\"a\":{\"b\":1}}", "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"}]",
	 "{\"a\":{\"b\":1},\"c\":{\"b\":1}}", NULL},
	{"{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b\"}]", NULL,
	 "cannot move"},
	{"{\"a\":1}", "[{\"op\":\"frob\",\"path\":\"/a\"}]", NULL, "Unexpected kind: frob"},
	{"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":2}]", NULL, "missing"},
	{"{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", NULL, "missing"},
	/* atomic: first op succeeds, second fails, document untouched */
	{"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/b\",\"value\":2},{\"op\":\"remove\",\"path\":\"/zz\"}]",
	 NULL, "missing"},
	/* kubectl patch --type json typical: metadata.finalizers removal */
	{"{\"metadata\":{\"finalizers\":[\"example.com/keep\"]}}",
	 "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]", "{\"metadata\":{}}", NULL},
	{"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"\",\"value\":{\"z\":0}}]", "{\"z\":0}", NULL},
};

static void test_json_patch_rfc6902(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
		cJSON *t = parse(json_cases[i].doc);
		cJSON *before = cJSON_Duplicate(t, 1);
		cJSON *ops = parse(json_cases[i].ops);
		char *err = NULL;
		int rc = apis_json_patch(&t, ops, &err);
		char name[32];
		snprintf(name, sizeof(name), "json case %zu", i);
		if (json_cases[i].result) {
			if (rc != 0)
				fail_msg("%s: unexpected error %s", name, err);
			assert_json_eq(t, json_cases[i].result, name);
		} else {
			assert_int_equal(rc, -1);
			assert_non_null(err);
			if (!strstr(err, json_cases[i].want_err))
				fail_msg("%s: error %s lacks %s", name, err, json_cases[i].want_err);
			assert_true(cJSON_Compare(t, before, 1)); /* untouched */
		}
		free(err);
		cJSON_Delete(t);
		cJSON_Delete(before);
		cJSON_Delete(ops);
	}
}

/* ------------------------------------------------------------ strategic merge patch */

static const struct {
	const char *name, *kind, *orig, *patch, *result; /* result NULL: error containing want_err */
	const char *want_err;
} smp_cases[] = {
	{"map merge and null delete", "ConfigMap",
	 "{\"metadata\":{\"name\":\"c\",\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"data\":{\"k\":\"v\"}}",
	 "{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"3\"}},\"data\":{\"k2\":\"v2\"}}",
	 "{\"metadata\":{\"name\":\"c\",\"labels\":{\"b\":\"2\",\"c\":\"3\"}},\"data\":{\"k\":\"v\",\"k2\":\"v2\"}}",
	 NULL},
	{"containers merged by name", "Pod",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"},{\"name\":\"b\",\"image\":\"b:1\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"b:2\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"},{\"name\":\"b\",\"image\":\"b:2\"}]}}",
	 NULL},
	{"unknown kind replaces lists", "Widget",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"b\",\"x\":1}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"b\",\"x\":1}]}}", NULL},
	{"tolerations replaced (no strategy)", "Pod",
	 "{\"spec\":{\"tolerations\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}}",
	 "{\"spec\":{\"tolerations\":[{\"key\":\"b\",\"operator\":\"Exists\"}]}}",
	 "{\"spec\":{\"tolerations\":[{\"key\":\"b\",\"operator\":\"Exists\"}]}}", NULL},
	{"$patch delete in list", "Pod",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"b\",\"$patch\":\"delete\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"c\"}]}}", NULL},
	{"$patch replace in list", "Pod",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"},{\"name\":\"b\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"$patch\":\"replace\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}", NULL},
	{"$patch replace on map", "Pod",
	 "{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{\"nodeSelector\":{\"x\":\"1\",\"y\":\"2\"}}}",
	 "{\"spec\":{\"nodeSelector\":{\"z\":\"3\",\"$patch\":\"replace\"}}}",
	 "{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{\"nodeSelector\":{\"z\":\"3\"}}}", NULL},
	{"$patch delete on map", "Pod", "{\"spec\":{\"nodeSelector\":{\"x\":\"1\"},\"a\":1}}",
	 "{\"spec\":{\"nodeSelector\":{\"$patch\":\"delete\"}}}",
	 "{\"spec\":{\"nodeSelector\":{},\"a\":1}}", NULL},
	{"bad $patch value", "Pod", "{\"spec\":{}}", "{\"spec\":{\"$patch\":\"frob\"}}", NULL,
	 "unknown patch type: frob"},
	{"$patch merge in list rejected", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
	 "{\"spec\":{\"containers\":[{\"$patch\":\"merge\"}]}}", NULL,
	 "merging lists cannot yet be specified"},
	{"missing merge key", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
	 "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}", NULL,
	 "does not contain declared merge key: name"},
	{"ports by containerPort, env by name", "Pod",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,\"name\":\"http\"}],"
	 "\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}]}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":443}],"
	 "\"env\":[{\"name\":\"B\",\"value\":\"3\"}]}]}}",
	 /* upstream puts items new to the list first when no $setElementOrder is given */
	 "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":443},"
	 "{\"containerPort\":80,\"name\":\"http\"}],\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"3\"}]}]}}",
	 NULL},
	{"finalizers merged as a set", "ConfigMap",
	 "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}", "{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}",
	 "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}", NULL},
	{"$deleteFromPrimitiveList", "ConfigMap",
	 "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}",
	 "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"b\"]}}",
	 "{\"metadata\":{\"finalizers\":[\"a\",\"c\"]}}", NULL},
	{"$deleteFromPrimitiveList plus $setElementOrder", "ConfigMap",
	 "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}",
	 "{\"metadata\":{\"$setElementOrder/finalizers\":[\"c\",\"a\",\"d\"],"
	 "\"$deleteFromPrimitiveList/finalizers\":[\"b\"],\"finalizers\":[\"d\"]}}",
	 "{\"metadata\":{\"finalizers\":[\"c\",\"a\",\"d\"]}}", NULL},
	{"ownerReferences by uid", "ReplicaSet",
	 "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\",\"name\":\"d1\"},{\"uid\":\"u2\",\"name\":\"d2\"}]}}",
	 "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u2\",\"controller\":true}]}}",
	 "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\",\"name\":\"d1\"},{\"uid\":\"u2\",\"name\":\"d2\",\"controller\":true}]}}",
	 NULL},
	{"pod status conditions by type (PatchPodStatus)", "Pod",
	 "{\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},"
	 "{\"type\":\"Ready\",\"status\":\"False\"}]}}",
	 "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"PodScheduled\"},{\"type\":\"Ready\"}],"
	 "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}],"
	 "\"nominatedNodeName\":\"n1\"}}",
	 "{\"status\":{\"phase\":\"Pending\",\"nominatedNodeName\":\"n1\",\"conditions\":[{\"type\":\"PodScheduled\","
	 "\"status\":\"False\",\"reason\":\"Unschedulable\"},{\"type\":\"Ready\",\"status\":\"False\"}]}}",
	 NULL},
	{"node addresses/conditions by type", "Node",
	 "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}],"
	 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}",
	 "{\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n1\"}],"
	 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
	 "{\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n1\"},"
	 "{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}],\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
	 NULL},
	{"node taints replaced", "Node",
	 "{\"spec\":{\"taints\":[{\"key\":\"a\",\"effect\":\"NoSchedule\"}]}}",
	 "{\"spec\":{\"taints\":[{\"key\":\"b\",\"effect\":\"NoSchedule\"}],\"unschedulable\":true}}",
	 "{\"spec\":{\"taints\":[{\"key\":\"b\",\"effect\":\"NoSchedule\"}],\"unschedulable\":true}}", NULL},
	{"service ports by port", "Service",
	 "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":8080},{\"port\":443}]}}",
	 "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":9090}]}}",
	 "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":9090},{\"port\":443}]}}", NULL},
	{"$retainKeys clears other keys (deployment strategy)", "Deployment",
	 "{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":1}}}}",
	 "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"rollingUpdate\":null,\"type\":\"Recreate\"}}}",
	 "{\"spec\":{\"strategy\":{\"type\":\"Recreate\"}}}", NULL},
	{"$retainKeys with a key not listed", "Deployment",
	 "{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\"}}}",
	 "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"rollingUpdate\":{\"maxSurge\":1}}}}", NULL,
	 "invalid patch format of retainKeys"},
	{"volumes with $retainKeys (volume source switch)", "Pod",
	 "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}},{\"name\":\"w\",\"emptyDir\":{}}]}}",
	 "{\"spec\":{\"$setElementOrder/volumes\":[{\"name\":\"v\"},{\"name\":\"w\"}],"
	 "\"volumes\":[{\"$retainKeys\":[\"configMap\",\"name\"],\"configMap\":{\"name\":\"cm\"},\"emptyDir\":null,\"name\":\"v\"}]}}",
	 "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"cm\"}},{\"name\":\"w\",\"emptyDir\":{}}]}}",
	 NULL},
	/* second `kubectl apply` of a Deployment: image change, env var B changed, OLD removed,
	 * new container added after app, label removed, replicas changed. */
	{"kubectl apply 3-way patch on a Deployment", "Deployment",
	 "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"labels\":{\"app\":\"web\",\"tier\":\"fe\"},"
	 "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"old\",\"deployment.kubernetes.io/revision\":\"1\"}},"
	 "\"spec\":{\"replicas\":1,\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"app\","
	 "\"image\":\"web:1\",\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"OLD\",\"value\":\"x\"},{\"name\":\"B\",\"value\":\"2\"}],"
	 "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}],\"terminationMessagePath\":\"/dev/termination-log\"}],"
	 "\"restartPolicy\":\"Always\"}}},\"status\":{\"replicas\":1}}",
	 "{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"new\"},\"labels\":{\"tier\":null}},"
	 "\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"app\"},{\"name\":\"sidecar\"}],"
	 "\"containers\":[{\"$setElementOrder/env\":[{\"name\":\"A\"},{\"name\":\"B\"}],\"env\":[{\"name\":\"B\",\"value\":\"3\"},"
	 "{\"$patch\":\"delete\",\"name\":\"OLD\"}],\"image\":\"web:2\",\"name\":\"app\"},{\"image\":\"side:1\",\"name\":\"sidecar\"}]}}}}",
	 "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"labels\":{\"app\":\"web\"},"
	 "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"new\",\"deployment.kubernetes.io/revision\":\"1\"}},"
	 "\"spec\":{\"replicas\":3,\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"app\","
	 "\"image\":\"web:2\",\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"3\"}],"
	 "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}],\"terminationMessagePath\":\"/dev/termination-log\"},"
	 "{\"name\":\"sidecar\",\"image\":\"side:1\"}],\"restartPolicy\":\"Always\"}}},\"status\":{\"replicas\":1}}",
	 NULL},
	{"$setElementOrder reorders containers", "Pod",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}}",
	 "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},{\"name\":\"b\"},{\"name\":\"a\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"name\":\"b\"},{\"name\":\"a\"}]}}", NULL},
	{"server-only items keep their place", "Pod",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"b\",\"x\":1},{\"name\":\"d\"}]}}",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"x\":1},{\"name\":\"d\"},{\"name\":\"c\"}]}}",
	 NULL},
	{"$setElementOrder mismatching patch order", "Pod",
	 "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
	 "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
	 "\"containers\":[{\"name\":\"b\"},{\"name\":\"a\"}]}}",
	 NULL, "doesn't match"},
	{"new key takes patch value without nulls and directives", "Pod", "{\"spec\":{}}",
	 "{\"spec\":{\"affinity\":{\"nodeAffinity\":{\"x\":null,\"y\":1}},\"containers\":[{\"name\":\"a\",\"env\":null},"
	 "{\"name\":\"b\",\"$patch\":\"delete\"}]}}",
	 "{\"spec\":{\"affinity\":{\"nodeAffinity\":{\"y\":1}},\"containers\":[{\"name\":\"a\"}]}}", NULL},
	{"type change replaces", "Pod", "{\"spec\":{\"x\":[1,2]}}", "{\"spec\":{\"x\":{\"a\":1}}}",
	 "{\"spec\":{\"x\":{\"a\":1}}}", NULL},
	{"mixed element types rejected", "ConfigMap", "{\"metadata\":{\"finalizers\":[\"a\"]}}",
	 "{\"metadata\":{\"finalizers\":[1]}}", NULL, "not identical"},
	{"top-level $patch replace", "ConfigMap", "{\"data\":{\"a\":\"1\"},\"metadata\":{\"name\":\"x\"}}",
	 "{\"$patch\":\"replace\",\"data\":{\"b\":\"2\"}}", "{\"data\":{\"b\":\"2\"}}", NULL},
	{"template containers of a StatefulSet-like workload", "ReplicaSet",
	 "{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":\"i\",\"volumeMounts\":[{\"mountPath\":\"/a\",\"name\":\"x\"}]}]}}}}",
	 "{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":\"i\",\"volumeMounts\":[{\"mountPath\":\"/b\",\"name\":\"y\"}]}]}}}}",
	 "{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":\"i\",\"volumeMounts\":[{\"mountPath\":\"/b\",\"name\":\"y\"},"
	 "{\"mountPath\":\"/a\",\"name\":\"x\"}]}]}}}}",
	 NULL},
};

static void test_strategic_merge_patch(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(smp_cases) / sizeof(smp_cases[0]); i++) {
		cJSON *t = parse(smp_cases[i].orig);
		cJSON *before = cJSON_Duplicate(t, 1);
		cJSON *p = parse(smp_cases[i].patch);
		cJSON *pcopy = cJSON_Duplicate(p, 1);
		char *err = NULL;
		int rc = apis_strategic_merge_patch(&t, p, smp_cases[i].kind, &err);
		if (smp_cases[i].result) {
			if (rc != 0)
				fail_msg("%s: unexpected error %s", smp_cases[i].name, err);
			assert_json_ordered(t, smp_cases[i].result, smp_cases[i].name);
		} else {
			if (rc == 0)
				fail_msg("%s: expected an error", smp_cases[i].name);
			assert_non_null(err);
			if (!strstr(err, smp_cases[i].want_err))
				fail_msg("%s: error %s lacks %s", smp_cases[i].name, err, smp_cases[i].want_err);
			assert_true(cJSON_Compare(t, before, 1));
		}
		assert_true(cJSON_Compare(p, pcopy, 1)); /* the patch is not modified */
		free(err);
		cJSON_Delete(t);
		cJSON_Delete(before);
		cJSON_Delete(p);
		cJSON_Delete(pcopy);
	}
}

/* Values from upstream strategicpatch patch_test.go (customStrategicMergePatchTestCaseData,
 * customStrategicMergePatchRawTestCases: original + twoWay -> modified; createStrategicMergePatch
 * TestCaseData and strategicMergePatchRawTestCases: current + threeWay -> result), applied to
 * upstream's MergeItem test type. Array order is compared exactly. */
#define MI "x-strategicpatch-test.MergeItem"
static const struct {
	const char *name, *orig, *patch, *result, *want_err;
} upstream_cases[] = {
	{"unique scalars when merging lists", "{\"mergingIntList\":[1,2]}", "{\"mergingIntList\":[2,3]}",
	 "{\"mergingIntList\":[1,2,3]}", NULL},
	{"delete map from nested map", "{\"simpleMap\":{\"key1\":1,\"key2\":1}}",
	 "{\"simpleMap\":{\"$patch\":\"delete\"}}", "{\"simpleMap\":{}}", NULL},
	{"delete all items from merging list", "{\"mergingList\":[{\"name\":1},{\"name\":2}]}",
	 "{\"mergingList\":[{\"$patch\":\"replace\"}]}", "{\"mergingList\":[]}", NULL},
	{"merge empty merging lists", "{\"mergingList\":[]}", "{\"mergingList\":[]}", "{\"mergingList\":[]}", NULL},
	{"delete all keys from map", "{\"name\":1,\"value\":1}", "{\"$patch\":\"replace\"}", "{}", NULL},
	{"add key and delete all keys from map", "{\"name\":1,\"value\":1}",
	 "{\"other\":\"a\",\"$patch\":\"replace\"}", "{\"other\":\"a\"}", NULL},
	{"retainKeys map can add a field when no retainKeys directive present",
	 "{\"retainKeysMap\":{\"name\":\"foo\"}}", "{\"retainKeysMap\":{\"value\":\"bar\"}}",
	 "{\"retainKeysMap\":{\"name\":\"foo\",\"value\":\"bar\"}}", NULL},
	{"retainKeys map can change a field when no retainKeys directive present",
	 "{\"retainKeysMap\":{\"name\":\"foo\",\"value\":\"a\"}}", "{\"retainKeysMap\":{\"value\":\"b\"}}",
	 "{\"retainKeysMap\":{\"name\":\"foo\",\"value\":\"b\"}}", NULL},
	{"retainKeys map can delete a field when no retainKeys directive present",
	 "{\"retainKeysMap\":{\"name\":\"foo\",\"value\":\"a\"}}", "{\"retainKeysMap\":{\"value\":null}}",
	 "{\"retainKeysMap\":{\"name\":\"foo\"}}", NULL},
	{"retainKeys map merge an empty map", "{\"retainKeysMap\":{\"name\":\"foo\",\"value\":\"a\"}}",
	 "{\"retainKeysMap\":{}}", "{\"retainKeysMap\":{\"name\":\"foo\",\"value\":\"a\"}}", NULL},
	{"retainKeys list can add a field when no retainKeys directive present",
	 "{\"retainKeysMergingList\":[{\"name\":\"bar\"},{\"name\":\"foo\"}]}",
	 "{\"retainKeysMergingList\":[{\"name\":\"foo\",\"value\":\"a\"}]}",
	 "{\"retainKeysMergingList\":[{\"name\":\"bar\"},{\"name\":\"foo\",\"value\":\"a\"}]}", NULL},
	{"retainKeys list can delete a field when no retainKeys directive present",
	 "{\"retainKeysMergingList\":[{\"name\":\"bar\"},{\"name\":\"foo\",\"value\":\"a\"}]}",
	 "{\"retainKeysMergingList\":[{\"name\":\"foo\",\"value\":null}]}",
	 "{\"retainKeysMergingList\":[{\"name\":\"bar\"},{\"name\":\"foo\"}]}", NULL},
	{"preserve the order from the patch in a merging list",
	 "{\"mergingList\":[{\"name\":1},{\"name\":2,\"value\":\"b\"},{\"name\":3}]}",
	 "{\"mergingList\":[{\"name\":3,\"value\":\"c\"},{\"name\":1,\"value\":\"a\"},{\"name\":2,\"other\":\"x\"}]}",
	 "{\"mergingList\":[{\"name\":3,\"value\":\"c\"},{\"name\":1,\"value\":\"a\"},{\"name\":2,\"value\":\"b\",\"other\":\"x\"}]}",
	 NULL},
	{"preserve the order from the patch in a merging list 2",
	 "{\"mergingList\":[{\"name\":1},{\"name\":2,\"value\":\"b\"},{\"name\":3}]}",
	 "{\"mergingList\":[{\"name\":3,\"value\":\"c\"},{\"name\":1,\"value\":\"a\"}]}",
	 "{\"mergingList\":[{\"name\":2,\"value\":\"b\"},{\"name\":3,\"value\":\"c\"},{\"name\":1,\"value\":\"a\"}]}", NULL},
	{"preserve the order from the patch in a merging int list", "{\"mergingIntList\":[1,2,3]}",
	 "{\"mergingIntList\":[3,1,2]}", "{\"mergingIntList\":[3,1,2]}", NULL},
	{"preserve the order from the patch in a merging int list 2", "{\"mergingIntList\":[1,2,3]}",
	 "{\"mergingIntList\":[3,1]}", "{\"mergingIntList\":[2,3,1]}", NULL},
	{"$setElementOrder contains item that is not present in the list to be merged",
	 "{\"mergingList\":[{\"name\":1},{\"name\":3}]}",
	 "{\"$setElementOrder/mergingList\":[{\"name\":3},{\"name\":2},{\"name\":1}],"
	 "\"mergingList\":[{\"name\":3,\"value\":3},{\"name\":1,\"value\":1}]}",
	 "{\"mergingList\":[{\"name\":3,\"value\":3},{\"name\":1,\"value\":1}]}", NULL},
	{"$setElementOrder contains item that is not present in the int list to be merged",
	 "{\"mergingIntList\":[1,3]}", "{\"$setElementOrder/mergingIntList\":[3,2,1]}",
	 "{\"mergingIntList\":[3,1]}", NULL},
	{"should check if order in $setElementOrder and patch list match",
	 "{\"mergingList\":[{\"name\":1},{\"name\":3},{\"name\":2}]}",
	 "{\"$setElementOrder/mergingList\":[{\"name\":1},{\"name\":2},{\"name\":3}],"
	 "\"mergingList\":[{\"name\":3,\"value\":3},{\"name\":1,\"value\":1}]}",
	 NULL, "doesn't match"},
	{"should check if order in $setElementOrder and patch int list match", "{\"mergingIntList\":[1,3,2]}",
	 "{\"$setElementOrder/mergingIntList\":[1,2,3],\"mergingIntList\":[3,1]}", NULL, "doesn't match"},
	{"missing merge key should error out", "{\"mergingList\":[{\"name\":1,\"value\":\"a\"}]}",
	 "{\"mergingList\":[{\"value\":\"b\"}]}", NULL, "does not contain declared merge key"},
	/* current + threeWay -> result */
	{"nil original", "{\"name\":1,\"other\":\"a\"}", "{\"value\":1}", "{\"name\":1,\"value\":1,\"other\":\"a\"}", NULL},
	{"add field to map with conflict", "{\"name\":\"a\",\"other\":\"a\"}", "{\"name\":1,\"value\":1}",
	 "{\"name\":1,\"value\":1,\"other\":\"a\"}", NULL},
	{"add field and delete field from map", "{\"name\":1,\"other\":\"a\"}", "{\"name\":null,\"value\":1}",
	 "{\"value\":1,\"other\":\"a\"}", NULL},
	{"delete field from nested map with conflict", "{\"simpleMap\":{\"key1\":\"a\",\"key2\":1,\"other\":\"a\"}}",
	 "{\"simpleMap\":{\"key1\":1,\"key2\":null}}", "{\"simpleMap\":{\"key1\":1,\"other\":\"a\"}}", NULL},
	{"replace list of scalars with conflict", "{\"nonMergingIntList\":[1,4]}", "{\"nonMergingIntList\":[2,3]}",
	 "{\"nonMergingIntList\":[2,3]}", NULL},
	{"delete all maps from merging list with conflict",
	 "{\"mergingList\":[{\"name\":1,\"other\":\"a\"},{\"name\":2,\"other\":\"b\"}]}",
	 "{\"mergingList\":[{\"name\":1,\"$patch\":\"delete\"},{\"name\":2,\"$patch\":\"delete\"}]}",
	 "{\"mergingList\":[]}", NULL},
	{"delete all maps from empty merging list", "{\"mergingList\":[]}",
	 "{\"mergingList\":[{\"name\":1,\"$patch\":\"delete\"},{\"name\":2,\"$patch\":\"delete\"}]}",
	 "{\"mergingList\":[]}", NULL},
	{"defined null values should propagate overwrite current fields (with conflict)",
	 "{\"name\":\"a\",\"other\":\"a\"}", "{\"name\":1,\"value\":1,\"other\":null}", "{\"name\":1,\"value\":1}", NULL},
	{"retainKeys map with no change should not be present",
	 "{\"name\":\"a\",\"other\":\"c\",\"retainKeysMap\":{\"name\":\"foo\"}}", "{\"value\":\"b\"}",
	 "{\"name\":\"a\",\"value\":\"b\",\"other\":\"c\",\"retainKeysMap\":{\"name\":\"foo\"}}", NULL},
	{"delete items in lists of scalars", "{\"mergingIntList\":[1,2,3,4]}",
	 "{\"$setElementOrder/mergingIntList\":[1,2],\"$deleteFromPrimitiveList/mergingIntList\":[3]}",
	 "{\"mergingIntList\":[1,2,4]}", NULL},
	{"delete all duplicate items in lists of scalars", "{\"mergingIntList\":[1,2,3,3,4]}",
	 "{\"$setElementOrder/mergingIntList\":[1,2],\"$deleteFromPrimitiveList/mergingIntList\":[3]}",
	 "{\"mergingIntList\":[1,2,4]}", NULL},
	{"merge lists of maps", "{\"mergingList\":[{\"name\":1,\"other\":\"a\"},{\"name\":2,\"value\":2,\"other\":\"b\"}]}",
	 "{\"$setElementOrder/mergingList\":[{\"name\":4},{\"name\":1},{\"name\":2},{\"name\":3}],"
	 "\"mergingList\":[{\"name\":4,\"value\":4},{\"name\":3,\"value\":3}]}",
	 "{\"mergingList\":[{\"name\":4,\"value\":4},{\"name\":1,\"other\":\"a\"},{\"name\":2,\"value\":2,\"other\":\"b\"},"
	 "{\"name\":3,\"value\":3}]}", NULL},
	{"merge lists of maps with conflict",
	 "{\"mergingList\":[{\"name\":1,\"other\":\"a\"},{\"name\":2,\"value\":3,\"other\":\"b\"}]}",
	 "{\"$setElementOrder/mergingList\":[{\"name\":1},{\"name\":2},{\"name\":3}],"
	 "\"mergingList\":[{\"name\":2,\"value\":2},{\"name\":3,\"value\":3}]}",
	 "{\"mergingList\":[{\"name\":1,\"other\":\"a\"},{\"name\":2,\"value\":2,\"other\":\"b\"},{\"name\":3,\"value\":3}]}", NULL},
	{"add field to map in merging list",
	 "{\"mergingList\":[{\"name\":1,\"other\":\"a\"},{\"name\":2,\"value\":2,\"other\":\"b\"}]}",
	 "{\"$setElementOrder/mergingList\":[{\"name\":1},{\"name\":2}],\"mergingList\":[{\"name\":1,\"value\":1}]}",
	 "{\"mergingList\":[{\"name\":1,\"value\":1,\"other\":\"a\"},{\"name\":2,\"value\":2,\"other\":\"b\"}]}", NULL},
	/* patchStrategy:"replace" on a map */
	{"replace strategy on a map", "{\"replacingItem\":{\"a\":1,\"b\":2}}", "{\"replacingItem\":{\"c\":3}}",
	 "{\"replacingItem\":{\"c\":3}}", NULL},
};

static void test_strategic_upstream_fixtures(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(upstream_cases) / sizeof(upstream_cases[0]); i++) {
		cJSON *t = parse(upstream_cases[i].orig);
		cJSON *p = parse(upstream_cases[i].patch);
		char *err = NULL;
		int rc = apis_strategic_merge_patch(&t, p, MI, &err);
		if (upstream_cases[i].result) {
			if (rc != 0)
				fail_msg("%s: unexpected error %s", upstream_cases[i].name, err);
			assert_json_ordered(t, upstream_cases[i].result, upstream_cases[i].name);
		} else {
			if (rc == 0)
				fail_msg("%s: expected an error", upstream_cases[i].name);
			if (!err || !strstr(err, upstream_cases[i].want_err))
				fail_msg("%s: error %s lacks %s", upstream_cases[i].name, err, upstream_cases[i].want_err);
		}
		free(err);
		cJSON_Delete(t);
		cJSON_Delete(p);
	}
}

static void test_strategic_kind_known(void **state)
{
	(void)state;
	assert_true(apis_strategic_kind_known("Pod"));
	assert_true(apis_strategic_kind_known("Deployment"));
	assert_true(apis_strategic_kind_known("ConfigMap"));
	assert_false(apis_strategic_kind_known("SchedulerProfile"));
	assert_false(apis_strategic_kind_known(NULL));
}

/* ------------------------------------------------------------ fuzz-style */

static unsigned long long rng = 88172645463325252ULL;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

static const char *fuzz_pieces[] = {
	"{", "}", "[", "]", ",", ":", "\"name\"", "\"a\"", "\"$patch\"", "\"delete\"", "\"replace\"",
	"\"merge\"", "\"$retainKeys\"", "\"$setElementOrder/containers\"", "\"containers\"",
	"\"$deleteFromPrimitiveList/finalizers\"", "\"finalizers\"", "\"spec\"", "\"metadata\"",
	"null", "1", "true", "\"op\"", "\"add\"", "\"remove\"", "\"move\"", "\"copy\"", "\"test\"",
	"\"path\"", "\"/a\"", "\"/spec/containers/0\"", "\"/-\"", "\"from\"", "\"value\"", "\"env\"",
	"\"ports\"", "\"containerPort\"", "80", "\"~1\"", "\"\"", "\"/metadata/finalizers/-\"",
};

static char *fuzz_text(void)
{
	size_t n = 1 + rnd() % 40;
	size_t cap = 1024, len = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	for (size_t i = 0; i < n; i++) {
		const char *p = fuzz_pieces[rnd() % (sizeof(fuzz_pieces) / sizeof(fuzz_pieces[0]))];
		size_t pl = strlen(p);
		if (len + pl + 1 >= cap)
			break;
		memcpy(s + len, p, pl);
		len += pl;
	}
	s[len] = 0;
	return s;
}

/* Builds random but valid JSON of limited depth from the vocabulary above. */
static cJSON *fuzz_value(int depth)
{
	static const char *keys[] = {"name", "a", "$patch", "$retainKeys", "$setElementOrder/containers",
				     "containers", "$deleteFromPrimitiveList/finalizers", "finalizers",
				     "spec", "metadata", "env", "ports", "containerPort", "op", "path",
				     "from", "value", "$setElementOrder/env", "conditions", "type"};
	static const char *strs[] = {"delete", "replace", "merge", "a", "b", "add", "remove", "move",
				     "copy", "test", "/a", "/spec", "/spec/containers/0", "/-", "",
				     "/metadata/finalizers/-", "/containers/1/name", "~01"};
	unsigned r = rnd() % (depth > 3 ? 4 : 7);
	switch (r) {
	case 0:
		return cJSON_CreateNull();
	case 1:
		return cJSON_CreateNumber(rnd() % 3);
	case 2:
		return cJSON_CreateBool(rnd() % 2);
	case 3:
		return cJSON_CreateString(strs[rnd() % (sizeof(strs) / sizeof(strs[0]))]);
	case 4:
	case 5: {
		cJSON *o = cJSON_CreateObject();
		int n = rnd() % 5;
		for (int i = 0; i < n; i++)
			cJSON_AddItemToObject(o, keys[rnd() % (sizeof(keys) / sizeof(keys[0]))],
					      fuzz_value(depth + 1));
		return o;
	}
	default: {
		cJSON *a = cJSON_CreateArray();
		int n = rnd() % 4;
		for (int i = 0; i < n; i++)
			cJSON_AddItemToArray(a, fuzz_value(depth + 1));
		return a;
	}
	}
}

static void test_fuzz_never_crashes(void **state)
{
	(void)state;
	const char *kinds[] = {"Pod", "Deployment", "Node", "ConfigMap", NULL};
	for (int i = 0; i < 20000; i++) {
		cJSON *t = fuzz_value(0);
		cJSON *p = fuzz_value(0);
		char *err = NULL;
		if (apis_strategic_merge_patch(&t, p, kinds[rnd() % 5], &err) != 0)
			assert_non_null(err);
		free(err);
		err = NULL;
		if (apis_json_patch(&t, p, &err) != 0)
			assert_non_null(err);
		free(err);
		assert_int_equal(apis_merge_patch(&t, p), 0);
		cJSON_Delete(t);
		cJSON_Delete(p);
	}
	/* random text: whatever parses is fed to every patch type */
	for (int i = 0; i < 20000; i++) {
		char *s = fuzz_text();
		cJSON *p = cJSON_Parse(s);
		if (p) {
			cJSON *t = parse("{\"metadata\":{\"finalizers\":[\"a\"]},\"spec\":{\"containers\":"
					 "[{\"name\":\"a\",\"env\":[{\"name\":\"x\"}]}]}}");
			char *err = NULL;
			apis_strategic_merge_patch(&t, p, "Pod", &err);
			free(err);
			err = NULL;
			apis_json_patch(&t, p, &err);
			free(err);
			apis_merge_patch(&t, p);
			cJSON_Delete(t);
			cJSON_Delete(p);
		}
		free(s);
	}
	/* NULL and degenerate arguments */
	char *err = NULL;
	assert_int_equal(apis_json_patch(NULL, NULL, &err), -1);
	free(err);
	cJSON *t = NULL;
	cJSON *p = parse("{\"a\":1}");
	assert_int_equal(apis_strategic_merge_patch(&t, p, "Pod", NULL), 0);
	assert_json_eq(t, "{\"a\":1}", "smp into NULL");
	cJSON_Delete(t);
	cJSON_Delete(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_patch_rfc7386),
		cmocka_unit_test(test_json_patch_rfc6902),
		cmocka_unit_test(test_strategic_merge_patch),
		cmocka_unit_test(test_strategic_upstream_fixtures),
		cmocka_unit_test(test_strategic_kind_known),
		cmocka_unit_test(test_fuzz_never_crashes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
