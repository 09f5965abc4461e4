/* Strict decoding (kube_yaml_parse_strict, kube_json_parse_strict): a key given twice is an error
 * naming the key and its line; everything else parses as the lenient functions do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"

static void test_strict_yaml(void **state)
{
	(void)state;
	static const struct {
		const char *name, *yaml;
		const char *json; /* the result, or NULL when an error is expected */
		const char *err;  /* the error, when json is NULL */
	} cases[] = {
		{ "no duplicates", "a: 1\nb: {c: 2}", "[{\"a\":1,\"b\":{\"c\":2}}]", NULL },
		{ "top-level duplicate", "a: 1\nb: 2\na: 3", NULL, "line 3 column 1: key \"a\" already set in map" },
		{ "nested duplicate", "leaderElection:\n  leaderElect: false\n  leaderElect: true\n", NULL,
		  "line 3 column 3: key \"leaderElect\" already set in map" },
		{ "duplicate in a list item", "profiles:\n- schedulerName: a\n  schedulerName: b\n", NULL,
		  "line 3 column 3: key \"schedulerName\" already set in map" },
		{ "same key in two maps is fine", "p: {a: 1}\nq: {a: 2}", "[{\"p\":{\"a\":1},\"q\":{\"a\":2}}]", NULL },
		{ "merge keys are not duplicates", "b: &b {p: 1}\nd:\n  <<: *b\n  p: 2", "[{\"b\":{\"p\":1},\"d\":{\"p\":2}}]", NULL },
		{ "canonical non-string keys collide", "1: a\n0x1: b", NULL, "line 2 column 1: key \"1\" already set in map" },
		{ "flow mapping", "m: {a: 1, a: 2}", NULL, "line 1 column 11: key \"a\" already set in map" },
		/* JSON goes through the strict JSON path, then the YAML parser reports it */
		{ "json duplicate", "{\"a\": 1,\n \"a\": 2}", NULL, "line 2 column 2: key \"a\" already set in map" },
		{ "json fine", "{\"a\": {\"a\": 1}}", "[{\"a\":{\"a\":1}}]", NULL },
		{ "second document", "a: 1\n---\nb: 1\nb: 2", NULL, "line 4 column 1: key \"b\" already set in map" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL;
		cJSON *d = kube_yaml_parse_strict(cases[i].yaml, strlen(cases[i].yaml), &err);
		if (cases[i].json) {
			if (!d)
				fail_msg("%s: %s", cases[i].name, err);
			char *got = kube_json_print(d);
			if (strcmp(got, cases[i].json))
				fail_msg("%s: got %s want %s", cases[i].name, got, cases[i].json);
			free(got);
		} else {
			if (d)
				fail_msg("%s: parsed unexpectedly", cases[i].name);
			if (!err || strcmp(err, cases[i].err))
				fail_msg("%s: error %s, want %s", cases[i].name, err ? err : "(none)", cases[i].err);
		}
		cJSON_Delete(d);
		free(err);
		/* the lenient parser accepts every case (last value wins) */
		d = kube_yaml_parse(cases[i].yaml, strlen(cases[i].yaml), NULL);
		if (!d)
			fail_msg("%s: lenient parse failed", cases[i].name);
		cJSON_Delete(d);
	}
}

static void test_strict_json(void **state)
{
	(void)state;
	static const struct {
		const char *name, *json, *err;
	} cases[] = {
		{ "fine", "{\"a\":1,\"b\":[{\"a\":2},{\"a\":3}]}", NULL },
		{ "top level", "{\"a\":1,\"a\":2}", "line 1 column 8: duplicate key \"a\"" },
		{ "nested", "{\"x\":\n  {\"k\":1,\n   \"k\":2}}", "line 3 column 4: duplicate key \"k\"" },
		{ "escaped spelling is the same key", "{\"a\":1,\"\\u0061\":2}", "line 1 column 8: duplicate key \"a\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL;
		cJSON *d = kube_json_parse_strict(cases[i].json, strlen(cases[i].json), &err);
		if (!cases[i].err && !d)
			fail_msg("%s: %s", cases[i].name, err);
		if (cases[i].err && (d || !err || strcmp(err, cases[i].err)))
			fail_msg("%s: error %s, want %s", cases[i].name, err ? err : "(none)", cases[i].err);
		cJSON_Delete(d);
		free(err);
		d = kube_json_parse(cases[i].json, strlen(cases[i].json), NULL);
		assert_non_null(d);
		cJSON_Delete(d);
	}
	char *err = NULL;
	cJSON *one = kube_yaml_parse_one_strict("a: 1\na: 1\n", 10, &err);
	assert_null(one);
	assert_string_equal(err, "line 2 column 1: key \"a\" already set in map");
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strict_yaml),
		cmocka_unit_test(test_strict_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
