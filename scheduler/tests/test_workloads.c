/* Tests for scheduler/api/workloads.c: helper.DefaultSelector (pkg/scheduler/framework/plugins/helper/
 * spread_test.go, TestDefaultSelector, values only) over a fixed-object lister, namespace labels and
 * namespace selection (GetNamespaceLabelsSnapshot, nsLister.List). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/selector.h"
#include "schedkit/plugin.h"
#include "scheduler/api/workloads.h"

static struct sk_pod *pod(const char *json)
{
	cJSON *o = cJSON_Parse(json);
	assert_non_null(o);
	char *err = NULL;
	struct sk_pod *p = sk_pod_decode(o, &err);
	if (!p)
		fail_msg("pod: %s", err);
	cJSON_Delete(o);
	return p;
}

#define POD(labels, owner) \
	"{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"labels\":" labels owner "},\"spec\":{}}"
#define OWNER(av, kind, name) \
	",\"ownerReferences\":[{\"apiVersion\":\"" av "\",\"kind\":\"" kind "\",\"name\":\"" name "\",\"uid\":\"u-" name "\",\"controller\":true}]"
#define OBJ(av, kind, ns, name, spec) \
	"{\"apiVersion\":\"" av "\",\"kind\":\"" kind "\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\"},\"spec\":" spec "}"

static const struct {
	const char *name, *pod, *objects;
	const char *want; /* the selector's canonical string; NULL: no selector (empty) */
} cases[] = {
	{ "no objects", POD("{\"foo\":\"bar\"}", ""), "[]", NULL },
	{ "service selector", POD("{\"foo\":\"bar\",\"baz\":\"q\"}", ""),
	  "[" OBJ("v1", "Service", "default", "s", "{\"selector\":{\"foo\":\"bar\"}}") "]", "foo=bar" },
	{ "two services merged", POD("{\"foo\":\"bar\",\"baz\":\"q\"}", ""),
	  "[" OBJ("v1", "Service", "default", "s1", "{\"selector\":{\"foo\":\"bar\"}}") ","
	  OBJ("v1", "Service", "default", "s2", "{\"selector\":{\"baz\":\"q\"}}") "]", "baz=q,foo=bar" },
	{ "service not selecting the pod", POD("{\"foo\":\"bar\"}", ""),
	  "[" OBJ("v1", "Service", "default", "s", "{\"selector\":{\"foo\":\"other\"}}") "]", NULL },
	{ "service of another namespace", POD("{\"foo\":\"bar\"}", ""),
	  "[" OBJ("v1", "Service", "ns2", "s", "{\"selector\":{\"foo\":\"bar\"}}") "]", NULL },
	{ "service without selector", POD("{\"foo\":\"bar\"}", ""), "[" OBJ("v1", "Service", "default", "s", "{}") "]", NULL },
	{ "service with an empty selector selects but adds nothing", POD("{\"foo\":\"bar\"}", ""),
	  "[" OBJ("v1", "Service", "default", "s", "{\"selector\":{}}") "]", NULL },
	{ "replication controller", POD("{\"foo\":\"bar\"}", OWNER("v1", "ReplicationController", "rc")),
	  "[" OBJ("v1", "ReplicationController", "default", "rc", "{\"selector\":{\"foo\":\"bar\"}}") "]", "foo=bar" },
	{ "replica set and service", POD("{\"foo\":\"bar\",\"tier\":\"web\"}", OWNER("apps/v1", "ReplicaSet", "rs")),
	  "[" OBJ("v1", "Service", "default", "s", "{\"selector\":{\"foo\":\"bar\"}}") ","
	  OBJ("apps/v1", "ReplicaSet", "default", "rs",
	      "{\"selector\":{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"web\",\"api\"]}]}}") "]",
	  "foo=bar,tier in (api,web)" },
	{ "replica set matchLabels", POD("{\"foo\":\"bar\"}", OWNER("apps/v1", "ReplicaSet", "rs")),
	  "[" OBJ("apps/v1", "ReplicaSet", "default", "rs", "{\"selector\":{\"matchLabels\":{\"foo\":\"bar\"}}}") "]",
	  "foo in (bar)" },
	{ "stateful set", POD("{\"app\":\"db\"}", OWNER("apps/v1", "StatefulSet", "ss")),
	  "[" OBJ("apps/v1", "StatefulSet", "default", "ss", "{\"selector\":{\"matchLabels\":{\"app\":\"db\"}}}") "]",
	  "app in (db)" },
	{ "replica set with an invalid selector is skipped", POD("{\"foo\":\"bar\"}", OWNER("apps/v1", "ReplicaSet", "rs")),
	  "[" OBJ("apps/v1", "ReplicaSet", "default", "rs",
	      "{\"selector\":{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\"}]}}") "]", NULL },
	{ "replica set without selector", POD("{\"foo\":\"bar\"}", OWNER("apps/v1", "ReplicaSet", "rs")),
	  "[" OBJ("apps/v1", "ReplicaSet", "default", "rs", "{}") "]", NULL },
	{ "owner of another api version is not a supported controller", POD("{\"foo\":\"bar\"}", OWNER("extensions/v1beta1", "ReplicaSet", "rs")),
	  "[" OBJ("apps/v1", "ReplicaSet", "default", "rs", "{\"selector\":{\"matchLabels\":{\"foo\":\"bar\"}}}") "]", NULL },
	{ "deployment owner is not supported", POD("{\"foo\":\"bar\"}", OWNER("apps/v1", "Deployment", "d")), "[]", NULL },
	{ "controller unknown to the lister", POD("{\"foo\":\"bar\"}", OWNER("apps/v1", "StatefulSet", "gone")), "[]", NULL },
	{ "controller of the same name in another namespace", POD("{\"foo\":\"bar\"}", OWNER("apps/v1", "ReplicaSet", "rs")),
	  "[" OBJ("apps/v1", "ReplicaSet", "ns2", "rs", "{\"selector\":{\"matchLabels\":{\"foo\":\"bar\"}}}") "]", NULL },
};

static struct sk_object_listers *listers_of(const char *json, cJSON **root, const cJSON ***objv)
{
	*root = cJSON_Parse(json);
	assert_true(cJSON_IsArray(*root));
	int n = cJSON_GetArraySize(*root), i = 0;
	*objv = calloc((size_t)n + 1, sizeof **objv);
	const cJSON *o;
	cJSON_ArrayForEach(o, *root)(*objv)[i++] = o;
	struct sk_object_listers *ol = malloc(sizeof *ol);
	sk_object_listers_init(ol, *objv, n);
	return ol;
}

static void test_default_selector(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *root;
		const cJSON **objv;
		struct sk_object_listers *ol = listers_of(cases[i].objects, &root, &objv);
		struct sk_pod *p = pod(cases[i].pod);
		struct kube_label_selector *s = NULL;
		assert_int_equal(sk_default_selector(&ol->listers, p, &s), 0);
		char *got = s ? kube_label_selector_string(s) : NULL;
		if ((got == NULL) != (cases[i].want == NULL) || (got && strcmp(got, cases[i].want)))
			fail_msg("%s: got %s, want %s", cases[i].name, got ? got : "(none)", cases[i].want ? cases[i].want : "(none)");
		free(got);
		kube_label_selector_free(s);
		sk_pod_unref(p);
		free(ol);
		free(objv);
		cJSON_Delete(root);
	}
	/* no listers at all */
	struct sk_pod *p = pod(POD("{\"foo\":\"bar\"}", ""));
	struct kube_label_selector *s = NULL;
	assert_int_equal(sk_default_selector(NULL, p, &s), 0);
	assert_null(s);
	sk_pod_unref(p);
}

static void test_namespaces(void **state)
{
	(void)state;
	cJSON *root;
	const cJSON **objv;
	struct sk_object_listers *ol = listers_of(
		"[{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\",\"labels\":{\"team\":\"a\",\"env\":\"prod\"}}},"
		"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-b\",\"labels\":{\"team\":\"b\",\"env\":\"prod\"}}},"
		"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"bare\"}}]",
		&root, &objv);
	struct sk_labels *l = sk_namespace_labels(&ol->listers, "team-a");
	assert_non_null(l);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->items[0].key, "env"); /* sorted */
	assert_string_equal(sk_labels_get(l, "team"), "a");
	sk_labels_free(l);
	l = sk_namespace_labels(&ol->listers, "missing"); /* unknown: an empty set, as upstream */
	assert_non_null(l);
	assert_int_equal(l->n, 0);
	sk_labels_free(l);

	static const struct {
		const char *selector;
		const char *want; /* names joined by ' ' */
	} sel_cases[] = {
		{ "env=prod", "team-a team-b" }, { "team=b", "team-b" }, { "", "team-a team-b bare" },
		{ "!team", "bare" },             { "team=c", "" },
	};
	for (size_t i = 0; i < sizeof sel_cases / sizeof sel_cases[0]; i++) {
		struct kube_label_selector *s = NULL;
		assert_int_equal(kube_label_selector_parse(sel_cases[i].selector, &s, NULL), 0);
		const char **names = NULL;
		int n = sk_namespaces_matching(&ol->listers, s, &names);
		char got[256] = "";
		for (int k = 0; k < n; k++)
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", k ? " " : "", names[k]);
		if (strcmp(got, sel_cases[i].want))
			fail_msg("selector %s: got \"%s\", want \"%s\"", sel_cases[i].selector, got, sel_cases[i].want);
		free(names);
		kube_label_selector_free(s);
	}
	free(ol);
	free(objv);
	cJSON_Delete(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_selector),
		cmocka_unit_test(test_namespaces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
