/* Tests for operator/plugins.c: SchedulerPlugin validation (a table of specs and the exact
 * messages), clashes settled by age (plugin names, file base names), in-tree shadowing, the
 * external name list and the hash of the accepted set, and the Accepted status condition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "operator/plan.h"
#include "operator/plugins.h"

/* A SchedulerPlugin object: name, creationTimestamp, generation, spec JSON. */
static cJSON *splugin(const char *name, const char *created, int gen, const char *spec)
{
	char buf[4096];
	snprintf(buf, sizeof buf,
		 "{\"apiVersion\":\"schedkit.io/v1alpha1\",\"kind\":\"SchedulerPlugin\","
		 "\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"%s\",\"generation\":%d}%s%s}",
		 name, created, gen, spec ? ",\"spec\":" : "", spec ? spec : "");
	cJSON *o = kube_json_parse(buf, strlen(buf), NULL);
	if (!o)
		fail_msg("bad JSON: %s", buf);
	return o;
}

static struct op_plugin_set build(cJSON *arr)
{
	struct op_plugin_set s;
	char *err = NULL;
	if (op_plugin_set_build(arr, &s, &err) != 0)
		fail_msg("build: %s", err ? err : "?");
	return s;
}

static const struct op_plugin_result *find(const struct op_plugin_set *s, const char *name)
{
	const struct op_plugin_result *r = op_plugin_set_find(s, name);
	if (!r)
		fail_msg("no result for %s", name);
	return r;
}

#define GOOD "{\"image\":\"example/sample:1\",\"files\":[\"/plugins/sample.so\"],\"plugins\":[\"Sample\"]}"

static void test_validation_table(void **state)
{
	(void)state;
	static const struct {
		const char *name, *spec; /* spec NULL: no spec at all */
		const char *want;        /* NULL: accepted */
	} t[] = {
		{ "good", GOOD, NULL },
		{ "pull", "{\"image\":\"i\",\"imagePullPolicy\":\"Always\",\"files\":[\"/a/b.so\",\"/c/d.so\"],"
			  "\"plugins\":[\"A\",\"B\"]}", NULL },
		{ "nospec", NULL, "spec: Required value" },
		{ "noimage", "{\"files\":[\"/p/x.so\"],\"plugins\":[\"X\"]}", "spec.image: Required value" },
		{ "emptyimage", "{\"image\":\"\",\"files\":[\"/p/x.so\"],\"plugins\":[\"X\"]}", "spec.image: Required value" },
		{ "policy", "{\"image\":\"i\",\"imagePullPolicy\":\"Sometimes\",\"files\":[\"/p/x.so\"],\"plugins\":[\"X\"]}",
		  "spec.imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", "
		  "\"Never\"" },
		{ "nofiles", "{\"image\":\"i\",\"plugins\":[\"X\"]}", "spec.files: Required value" },
		{ "emptyfiles", "{\"image\":\"i\",\"files\":[],\"plugins\":[\"X\"]}",
		  "spec.files: Invalid value: must be a non-empty list of paths" },
		{ "relative", "{\"image\":\"i\",\"files\":[\"plugins/x.so\"],\"plugins\":[\"X\"]}",
		  "spec.files[0]: Invalid value: \"plugins/x.so\": must be an absolute path" },
		{ "notso", "{\"image\":\"i\",\"files\":[\"/p/x.so\",\"/p/x.a\"],\"plugins\":[\"X\"]}",
		  "spec.files[1]: Invalid value: \"/p/x.a\": must name a shared object (*.so)" },
		{ "bare", "{\"image\":\"i\",\"files\":[\"/p/.so\"],\"plugins\":[\"X\"]}",
		  "spec.files[0]: Invalid value: \"/p/.so\": must name a shared object (*.so)" },
		{ "samebase", "{\"image\":\"i\",\"files\":[\"/a/x.so\",\"/b/x.so\"],\"plugins\":[\"X\"]}",
		  "spec.files[1]: Duplicate value: \"/b/x.so\": spec.files[0] has the same base name (both would be "
		  "copied to /var/lib/schedkit/plugins/x.so)" },
		{ "noplugins", "{\"image\":\"i\",\"files\":[\"/p/x.so\"]}", "spec.plugins: Required value" },
		{ "emptyplugins", "{\"image\":\"i\",\"files\":[\"/p/x.so\"],\"plugins\":[]}",
		  "spec.plugins: Invalid value: must be a non-empty list of plugin names" },
		{ "emptyname", "{\"image\":\"i\",\"files\":[\"/p/x.so\"],\"plugins\":[\"\"]}",
		  "spec.plugins[0]: Required value: a plugin name" },
		{ "twice", "{\"image\":\"i\",\"files\":[\"/p/x.so\"],\"plugins\":[\"X\",\"X\"]}",
		  "spec.plugins[1]: Duplicate value: \"X\"" },
		{ "shadow", "{\"image\":\"i\",\"files\":[\"/p/x.so\"],\"plugins\":[\"X\",\"NodeName\"]}",
		  "spec.plugins[1]: Invalid value: \"NodeName\": shadows an in-tree plugin" },
		/* an upstream default this build lacks is reserved too */
		{ "shadow2", "{\"image\":\"i\",\"files\":[\"/p/x.so\"],\"plugins\":[\"VolumeBinding\"]}",
		  "spec.plugins[0]: Invalid value: \"VolumeBinding\": shadows an in-tree plugin" },
		{ "Upper", GOOD, "metadata.name: Invalid value: \"Upper\": must be a lowercase RFC 1123 label of at most 56 "
				 "characters (the init container is named plugin-<name>)" },
		{ "several", "{\"image\":\"\",\"files\":[\"x.so\"],\"plugins\":[\"NodeName\"]}",
		  "spec.image: Required value; spec.files[0]: Invalid value: \"x.so\": must be an absolute path; "
		  "spec.plugins[0]: Invalid value: \"NodeName\": shadows an in-tree plugin" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cJSON *arr = cJSON_CreateArray();
		cJSON_AddItemToArray(arr, splugin(t[i].name, "2025-01-01T00:00:00Z", 1, t[i].spec));
		struct op_plugin_set s = build(arr);
		const struct op_plugin_result *r = find(&s, t[i].name);
		if (t[i].want) {
			if (r->accepted || strcmp(r->message, t[i].want))
				fail_msg("case %s: accepted=%d message=\"%s\", want \"%s\"", t[i].name, r->accepted, r->message,
					 t[i].want);
			assert_string_equal(r->reason, OP_REASON_INVALID);
			assert_int_equal(s.naccepted, 0);
			assert_string_equal(s.hash, "");
			assert_null(s.external[0]);
		} else {
			if (!r->accepted)
				fail_msg("case %s: rejected: %s", t[i].name, r->message);
			assert_string_equal(r->reason, OP_REASON_ACCEPTED);
			assert_int_equal(s.naccepted, 1);
			assert_int_equal(strlen(s.hash), 64);
		}
		op_plugin_set_free(&s);
		cJSON_Delete(arr);
	}
	/* the longest usable name, and one longer */
	char long_ok[64], long_bad[64];
	memset(long_ok, 'a', 56);
	long_ok[56] = '\0';
	memset(long_bad, 'a', 57);
	long_bad[57] = '\0';
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, splugin(long_ok, "2025-01-01T00:00:00Z", 1, GOOD));
	cJSON_AddItemToArray(arr, splugin(long_bad, "2025-01-01T00:00:00Z", 1,
					  "{\"image\":\"i\",\"files\":[\"/p/y.so\"],\"plugins\":[\"Y\"]}"));
	struct op_plugin_set s = build(arr);
	assert_true(find(&s, long_ok)->accepted);
	assert_false(find(&s, long_bad)->accepted);
	op_plugin_set_free(&s);
	cJSON_Delete(arr);
}

static void test_conflicts_by_age(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	/* listed newest first: the order of the list must not matter */
	cJSON_AddItemToArray(arr, splugin("c-files", "2025-01-03T00:00:00Z", 1,
					  "{\"image\":\"c\",\"files\":[\"/other/sample.so\"],\"plugins\":[\"Other\"]}"));
	cJSON_AddItemToArray(arr, splugin("b-name", "2025-01-02T00:00:00Z", 1,
					  "{\"image\":\"b\",\"files\":[\"/b/b.so\"],\"plugins\":[\"Extra\",\"Sample\"]}"));
	cJSON_AddItemToArray(arr, splugin("a-old", "2025-01-01T00:00:00Z", 1, GOOD));
	/* an invalid older one claims nothing */
	cJSON_AddItemToArray(arr, splugin("0-bad", "2024-01-01T00:00:00Z", 1,
					  "{\"image\":\"\",\"files\":[\"/z/z.so\"],\"plugins\":[\"Zed\"]}"));
	cJSON_AddItemToArray(arr, splugin("d-zed", "2025-01-04T00:00:00Z", 1,
					  "{\"image\":\"d\",\"files\":[\"/z/z.so\"],\"plugins\":[\"Zed\"]}"));
	struct op_plugin_set s = build(arr);
	assert_int_equal(s.n, 5);
	/* sorted by name */
	assert_string_equal(s.items[0].name, "0-bad");
	assert_string_equal(s.items[4].name, "d-zed");
	assert_true(find(&s, "a-old")->accepted);
	const struct op_plugin_result *b = find(&s, "b-name");
	assert_false(b->accepted);
	assert_string_equal(b->reason, OP_REASON_CONFLICT);
	assert_string_equal(b->message, "plugin \"Sample\" is already provided by SchedulerPlugin \"a-old\", which is older");
	const struct op_plugin_result *c = find(&s, "c-files");
	assert_false(c->accepted);
	assert_string_equal(c->reason, OP_REASON_CONFLICT);
	assert_string_equal(c->message, "file base name \"sample.so\" is already used by SchedulerPlugin \"a-old\", which is "
					"older (both would be copied to /var/lib/schedkit/plugins/sample.so)");
	assert_string_equal(find(&s, "0-bad")->reason, OP_REASON_INVALID);
	assert_true(find(&s, "d-zed")->accepted);
	assert_int_equal(s.naccepted, 2);
	/* the names profiles may use: the accepted ones' only, sorted */
	assert_string_equal(s.external[0], "Sample");
	assert_string_equal(s.external[1], "Zed");
	assert_null(s.external[2]);
	/* what the init container needs is kept for accepted ones */
	const struct op_plugin_result *a = find(&s, "a-old");
	assert_string_equal(a->image, "example/sample:1");
	assert_null(a->pull_policy);
	assert_int_equal(a->nfiles, 1);
	assert_string_equal(a->files[0], "/plugins/sample.so");
	assert_null(b->image);
	op_plugin_set_free(&s);

	/* deleting the older one frees the name: the newer takes it over */
	cJSON *dead = cJSON_DetachItemFromArray(arr, 2);
	cJSON_AddItemToObject(cJSON_GetObjectItem(dead, "metadata"), "deletionTimestamp",
			      cJSON_CreateString("2025-02-01T00:00:00Z"));
	cJSON_AddItemToArray(arr, dead);
	s = build(arr);
	assert_int_equal(s.n, 4);
	assert_null(op_plugin_set_find(&s, "a-old"));
	assert_true(find(&s, "b-name")->accepted);
	assert_true(find(&s, "c-files")->accepted); /* sample.so is free again too */
	op_plugin_set_free(&s);
	cJSON_Delete(arr);
}

static void test_hash_and_external(void **state)
{
	(void)state;
	/* the hash depends on the accepted specs, not on JSON key order or on rejected objects */
	cJSON *a1 = cJSON_CreateArray(), *a2 = cJSON_CreateArray();
	cJSON_AddItemToArray(a1, splugin("s", "2025-01-01T00:00:00Z", 1, GOOD));
	cJSON_AddItemToArray(a2, splugin("s", "2025-01-01T00:00:00Z", 7,
					 "{\"plugins\":[\"Sample\"],\"files\":[\"/plugins/sample.so\"],\"image\":\"example/sample:1\"}"));
	cJSON_AddItemToArray(a2, splugin("t", "2025-01-01T00:00:00Z", 1, "{\"image\":\"\"}"));
	struct op_plugin_set s1 = build(a1), s2 = build(a2);
	assert_string_equal(s1.hash, s2.hash);
	op_plugin_set_free(&s2);
	/* a new image is a new hash (the Deployment must roll) */
	cJSON_Delete(cJSON_DetachItemFromArray(a2, 0));
	cJSON_AddItemToArray(a2, splugin("s", "2025-01-01T00:00:00Z", 8,
					 "{\"image\":\"example/sample:2\",\"files\":[\"/plugins/sample.so\"],\"plugins\":[\"Sample\"]}"));
	s2 = build(a2);
	assert_int_equal(strlen(s2.hash), 64);
	assert_string_not_equal(s1.hash, s2.hash);
	op_plugin_set_free(&s1);
	op_plugin_set_free(&s2);
	cJSON_Delete(a1);
	cJSON_Delete(a2);

	/* none: empty hash, empty (not NULL) list */
	struct op_plugin_set none = build(NULL);
	assert_int_equal(none.n, 0);
	assert_string_equal(none.hash, "");
	assert_non_null(none.external);
	assert_null(none.external[0]);
	op_plugin_set_free(&none);

	assert_true(op_plugin_name_in_tree("NodeResourcesFit"));
	assert_true(op_plugin_name_in_tree("DynamicResources"));
	assert_false(op_plugin_name_in_tree("Sample"));
}

static void test_status(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, splugin("ok", "2025-01-01T00:00:00Z", 3, GOOD));
	cJSON_AddItemToArray(arr, splugin("bad", "2025-01-01T00:00:00Z", 2,
					  "{\"image\":\"i\",\"files\":[\"/p/x.so\"],\"plugins\":[\"NodeName\"]}"));
	struct op_plugin_set s = build(arr);
	cJSON *st = op_plugin_status_desired(cJSON_GetArrayItem(arr, 0), find(&s, "ok"), "2025-01-01T01:00:00Z");
	assert_non_null(st);
	int64_t g;
	assert_int_equal(kube_json_get_int64(cJSON_GetObjectItem(st, "observedGeneration"), &g), 0);
	assert_int_equal(g, 3);
	const cJSON *c = kube_condition_find(cJSON_GetObjectItem(st, "conditions"), "Accepted");
	assert_non_null(c);
	assert_string_equal(kube_obj_get_string(c, "status"), "True");
	assert_string_equal(kube_obj_get_string(c, "reason"), "Accepted");
	assert_string_equal(kube_obj_get_string(c, "lastTransitionTime"), "2025-01-01T01:00:00Z");

	/* same situation later: identical status (nothing to write) */
	cJSON *obj = cJSON_Duplicate(cJSON_GetArrayItem(arr, 0), 1);
	cJSON_AddItemToObject(obj, "status", st);
	cJSON *again = op_plugin_status_desired(obj, find(&s, "ok"), "2025-01-02T00:00:00Z");
	assert_true(cJSON_Compare(again, st, 1));
	cJSON_Delete(again);
	cJSON_Delete(obj);

	cJSON *bad = op_plugin_status_desired(cJSON_GetArrayItem(arr, 1), find(&s, "bad"), "2025-01-01T01:00:00Z");
	c = kube_condition_find(cJSON_GetObjectItem(bad, "conditions"), "Accepted");
	assert_string_equal(kube_obj_get_string(c, "status"), "False");
	assert_string_equal(kube_obj_get_string(c, "reason"), "Invalid");
	assert_string_equal(kube_obj_get_string(c, "message"),
			    "spec.plugins[0]: Invalid value: \"NodeName\": shadows an in-tree plugin");
	cJSON_Delete(bad);
	op_plugin_set_free(&s);
	cJSON_Delete(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validation_table),
		cmocka_unit_test(test_conflicts_by_age),
		cmocka_unit_test(test_hash_and_external),
		cmocka_unit_test(test_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
