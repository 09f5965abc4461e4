/* Tests for the plugin API's listers (scheduler/framework/handle_listers.c): the objects a
 * handle's listers hold, by kind and namespace, and the derived helpers (default selector,
 * namespace labels and selection) as a plugin calls them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "kube/selector.h"
#include "plugins/tests/harness.h"
#include "scheduler/tests/fixtures.h"

#define OBJ(av, kind, ns, name) \
	"{\"apiVersion\":\"" av "\",\"kind\":\"" kind "\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\"}}"

static void collect(const cJSON *obj, void *u)
{
	char *names = u;
	snprintf(names + strlen(names), 256 - strlen(names), "%s%s", *names ? " " : "", kube_meta_name(obj));
}

static void test_list_and_get(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_handle *hd = ph_plugin(h, "PodTopologySpread")->handle;
	char names[256] = "";
	/* nothing held yet */
	assert_int_equal(sk_handle_list_objects(hd, "Service", NULL, collect, names), 0);
	ph_set_objects(h, "[" OBJ("v1", "Service", "default", "a") "," OBJ("v1", "Service", "other", "b") ","
			  OBJ("apps/v1", "ReplicaSet", "default", "rs") "," OBJ("apps/v1", "StatefulSet", "default", "ss") ","
			  OBJ("v1", "ReplicationController", "default", "rc") ","
			  "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"other\",\"labels\":{\"t\":\"x\"}}},"
			  OBJ("apps/v1", "Deployment", "default", "d") "]");
	static const struct {
		const char *kind, *ns, *want;
		int n;
	} cases[] = {
		{ "Service", NULL, "a b", 2 },      { "Service", "default", "a", 1 },
		{ "Service", "nowhere", "", 0 },    { "ReplicaSet", "default", "rs", 1 },
		{ "StatefulSet", NULL, "ss", 1 },   { "ReplicationController", NULL, "rc", 1 },
		{ "Namespace", "ignored", "other", 1 },
		{ "Deployment", NULL, "", -1 },     /* not a lister kind */
		{ "service", NULL, "", -1 },        /* kinds are case-sensitive */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		names[0] = '\0';
		int n = sk_handle_list_objects(hd, cases[i].kind, cases[i].ns, collect, names);
		if (n != cases[i].n || strcmp(names, cases[i].want))
			fail_msg("%s in %s: %d \"%s\", want %d \"%s\"", cases[i].kind, cases[i].ns ? cases[i].ns : "(all)", n,
				 names, cases[i].n, cases[i].want);
	}
	names[0] = '\0';
	assert_int_equal(sk_handle_get_object(hd, "Service", "other", "b", collect, names), 1);
	assert_string_equal(names, "b");
	assert_int_equal(sk_handle_get_object(hd, "Service", "default", "b", collect, names), 0);
	assert_int_equal(sk_handle_get_object(hd, "Namespace", NULL, "other", collect, names), 1);
	assert_int_equal(sk_handle_get_object(hd, "Pod", NULL, "x", collect, names), -1);
	/* the namespace helpers through the same handle */
	struct sk_labels *l = sk_handle_namespace_labels(hd, "other");
	assert_non_null(l);
	assert_string_equal(sk_labels_get(l, "t"), "x");
	sk_labels_free(l);
	struct kube_label_selector *sel = NULL;
	assert_int_equal(kube_label_selector_parse("t=x", &sel, NULL), 0);
	const char **ns = NULL;
	assert_int_equal(sk_handle_namespaces_matching(hd, sel, &ns), 1);
	assert_string_equal(ns[0], "other");
	free(ns);
	kube_label_selector_free(sel);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_and_get),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
