/* Tests for kube/nodeselector.c: tables ported (values only) from upstream
 * component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go, plus operator cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/nodeselector.h"

static cJSON *parse(const char *json)
{
	cJSON *j = cJSON_Parse(json);
	if (!j)
		fail_msg("bad test JSON: %s", json);
	return j;
}

static const char *KEY_MSG =
	"name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
	"alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
	"'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

static void test_node_selector_match(void **state)
{
	(void)state;
	static const struct {
		const char *name, *terms, *node;
		bool match;
	} cases[] = {
		{"node matches field selector, but not labels",
		 "[{\"matchExpressions\":[{\"key\":\"label_1\",\"operator\":\"In\",\"values\":[\"label_1_val\"]}],"
		 "\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\"]}]}]",
		 "{\"metadata\":{\"name\":\"host_1\"}}", false},
		{"node matches field selector and label selector",
		 "[{\"matchExpressions\":[{\"key\":\"label_1\",\"operator\":\"In\",\"values\":[\"label_1_val\"]}],"
		 "\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\"]}]}]",
		 "{\"metadata\":{\"name\":\"host_1\",\"labels\":{\"label_1\":\"label_1_val\"}}}", true},
		{"second term matches",
		 "[{\"matchExpressions\":[{\"key\":\"label_1\",\"operator\":\"In\",\"values\":[\"label_1_val\"]}]},"
		 "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\"]}]}]",
		 "{\"metadata\":{\"name\":\"host_1\"}}", true},
		{"In matches", "[{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\",\"value2\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"foo\":\"bar\"}}}", true},
		{"Gt matches", "[{\"matchExpressions\":[{\"key\":\"kernel-version\",\"operator\":\"Gt\",\"values\":[\"0204\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"kernel-version\":\"0206\"}}}", true},
		{"Gt does not match equal", "[{\"matchExpressions\":[{\"key\":\"v\",\"operator\":\"Gt\",\"values\":[\"5\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"v\":\"5\"}}}", false},
		{"Gt non-numeric label", "[{\"matchExpressions\":[{\"key\":\"v\",\"operator\":\"Gt\",\"values\":[\"5\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"v\":\"x6\"}}}", false},
		{"Lt matches", "[{\"matchExpressions\":[{\"key\":\"v\",\"operator\":\"Lt\",\"values\":[\"5\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"v\":\"-3\"}}}", true},
		{"Lt missing label", "[{\"matchExpressions\":[{\"key\":\"v\",\"operator\":\"Lt\",\"values\":[\"5\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\"}}", false},
		{"NotIn matches", "[{\"matchExpressions\":[{\"key\":\"mem-type\",\"operator\":\"NotIn\",\"values\":[\"DDR\",\"DDR2\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"mem-type\":\"DDR3\"}}}", true},
		{"NotIn absent label", "[{\"matchExpressions\":[{\"key\":\"mem-type\",\"operator\":\"NotIn\",\"values\":[\"DDR\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\"}}", true},
		{"Exists matches", "[{\"matchExpressions\":[{\"key\":\"GPU\",\"operator\":\"Exists\"}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"GPU\":\"NVIDIA-GRID-K1\"}}}", true},
		{"DoesNotExist", "[{\"matchExpressions\":[{\"key\":\"GPU\",\"operator\":\"DoesNotExist\"}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"GPU\":\"x\"}}}", false},
		{"affinity does not match labels",
		 "[{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"value1\",\"value2\"]}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"foo\":\"bar\"}}}", false},
		{"nil terms", "null", "{\"metadata\":{\"name\":\"n\",\"labels\":{\"foo\":\"bar\"}}}", false},
		{"empty terms", "[]", "{\"metadata\":{\"name\":\"n\",\"labels\":{\"foo\":\"bar\"}}}", false},
		{"empty matchExpressions", "[{\"matchExpressions\":[]}]", "{\"metadata\":{\"name\":\"n\",\"labels\":{\"foo\":\"bar\"}}}",
		 false},
		{"empty term", "[{}]", "{\"metadata\":{\"name\":\"n\"}}", false},
		{"empty term then matching term",
		 "[{}, {\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"Exists\"}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"foo\":\"bar\"}}}", true},
		{"two expressions ANDed",
		 "[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"},{\"key\":\"b\",\"operator\":\"Exists\"}]}]",
		 "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"1\"}}}", false},
		{"matchFields NotIn", "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"NotIn\",\"values\":[\"host_1\"]}]}]",
		 "{\"metadata\":{\"name\":\"host_2\"}}", true},
		{"matchFields NotIn self", "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"NotIn\",\"values\":[\"host_1\"]}]}]",
		 "{\"metadata\":{\"name\":\"host_1\"}}", false},
		{"matchFields In other name", "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\"]}]}]",
		 "{\"metadata\":{\"name\":\"host_2\"}}", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *terms = parse(cases[i].terms), *node = parse(cases[i].node);
		struct kube_node_selector *s = NULL;
		char *err = NULL;
		if (kube_node_selector_compile(terms, NULL, 0, &s, &err) != 0)
			fail_msg("%s: %s", cases[i].name, err);
		if (kube_node_selector_matches_node(s, node) != cases[i].match)
			fail_msg("%s: want %d", cases[i].name, cases[i].match);
		assert_false(kube_node_selector_matches_node(s, NULL)); /* nil node */
		kube_node_selector_free(s);
		cJSON_Delete(terms);
		cJSON_Delete(node);
	}
}

static void test_node_selector_errors(void **state)
{
	(void)state;
	char want[2048];
	snprintf(want, sizeof(want),
		 "[nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{\"host_1\", \"host_2\"}: must have "
		 "one element, nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: \"invalid key\": %s]",
		 KEY_MSG);
	const char *bad =
		"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\",\"host_2\"]}]},"
		"{\"matchExpressions\":[{\"key\":\"label_1\",\"operator\":\"In\",\"values\":[\"label_1_val\"]}],"
		"\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\"]}]},"
		"{\"matchExpressions\":[{\"key\":\"invalid key\",\"operator\":\"In\",\"values\":[\"label_value\"]}]}]";
	cJSON *terms = parse(bad);
	struct kube_node_selector *s = NULL;
	char *err = NULL;
	assert_int_equal(kube_node_selector_compile(terms, NULL, 0, &s, &err), -1);
	assert_null(s);
	assert_string_equal(err, want);
	free(err);

	/* lazy: the broken terms never match, the good one still does */
	err = NULL;
	assert_int_equal(kube_node_selector_compile(terms, NULL, KUBE_NODE_SELECTOR_LAZY, &s, &err), 0);
	assert_string_equal(err, want);
	free(err);
	cJSON *node = parse("{\"metadata\":{\"name\":\"host_1\",\"labels\":{\"label_1\":\"label_1_val\"}}}");
	assert_true(kube_node_selector_matches_node(s, node));
	kube_node_selector_free(s);
	cJSON_Delete(node);
	cJSON_Delete(terms);

	static const struct {
		const char *terms, *err;
	} cases[] = {
		{"[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"},{\"key\":\"a\",\"operator\":\"Foo\"}]}]",
		 "nodeSelectorTerms[0].matchExpressions[1].operator: Unsupported value: \"Foo\""},
		{"[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}]",
		 "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string(nil): for 'in', 'notin' operators, "
		 "values set can't be empty"},
		{"[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"bar\",\"baz\"]}]}]",
		 "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{\"bar\", \"baz\"}: values set must "
		 "be empty for exists and does not exist"},
		{"[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Gt\",\"values\":[\"x\"]}]}]",
		 "nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the "
		 "value must be an integer"},
		{"[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Lt\",\"values\":[\"1\",\"2\"]}]}]",
		 "nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{\"1\", \"2\"}: for 'Gt', 'Lt' "
		 "operators, exactly one value is required"},
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"Exists\"}]}]",
		 "nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: \"Exists\": supported values: \"In\", "
		 "\"NotIn\""},
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\"}]}]",
		 "nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string(nil): must have one element"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *t = parse(cases[i].terms);
		err = NULL;
		assert_int_equal(kube_node_selector_compile(t, NULL, 0, &s, &err), -1);
		if (!err || strcmp(err, cases[i].err) != 0)
			fail_msg("case %zu: got %s\nwant %s", i, err, cases[i].err);
		free(err);
		cJSON_Delete(t);
	}

	/* object form with a path */
	cJSON *obj = parse("{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Foo\"}]}]}");
	err = NULL;
	assert_int_equal(kube_node_selector_compile_object(obj, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
							   0, &s, &err), -1);
	assert_string_equal(err, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
				 ".matchExpressions[0].operator: Unsupported value: \"Foo\"");
	free(err);
	cJSON_Delete(obj);
}

/* upstream TestPodMatchesNodeSelectorAndAffinityTerms (required affinity part), lazy mode */
static void test_required_affinity_lazy(void **state)
{
	(void)state;
	static const struct {
		const char *terms, *name, *labels;
		bool match;
	} cases[] = {
		{"[{\"matchExpressions\":[{\"key\":\"GPU\",\"operator\":\"Exists\"},{\"key\":\"GPU\",\"operator\":\"NotIn\",\"values\":[\"AMD\",\"INTER\"]}]}]",
		 "n", "{\"GPU\":\"NVIDIA-GRID-K1\"}", true},
		{"[{\"matchExpressions\":[{\"key\":\"GPU\",\"operator\":\"Exists\"},{\"key\":\"GPU\",\"operator\":\"In\",\"values\":[\"AMD\",\"INTER\"]}]}]",
		 "n", "{\"GPU\":\"NVIDIA-GRID-K1\"}", false},
		{"[{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\",\"value2\"]}]},"
		 "{\"matchExpressions\":[{\"key\":\"diffkey\",\"operator\":\"In\",\"values\":[\"wrong\",\"value2\"]}]}]",
		 "n", "{\"foo\":\"bar\"}", true},
		{"[{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"NotIn\",\"values\":[\"invalid value: ___@#$%^\"]}]}]",
		 "n", "{\"foo\":\"bar\"}", false},
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node_1\"]}]}]", "node_1", "{}", true},
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node_1\"]}]}]", "node_2", "{}", false},
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node_1\"]}]},"
		 "{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\"]}]}]",
		 "node_2", "{\"foo\":\"bar\"}", true},
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node_1\"]}],"
		 "\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\"]}]}]",
		 "node_2", "{\"foo\":\"bar\"}", false},
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node_1\"]}],"
		 "\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"bar\"]}]}]",
		 "node_1", "{\"foo\":\"bar\"}", true},
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node_1\"]}]},"
		 "{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\",\"values\":[\"not-match-to-bar\"]}]}]",
		 "node_2", "{\"foo\":\"bar\"}", false},
		/* a node without a name: matchFields are not evaluated (upstream extractNodeFields) */
		{"[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node_1\"]}]}]", "", "{}", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *terms = parse(cases[i].terms), *labels = parse(cases[i].labels);
		struct kube_node_selector *s = NULL;
		char *err = NULL;
		assert_int_equal(kube_node_selector_compile(terms, NULL, KUBE_NODE_SELECTOR_LAZY, &s, &err), 0);
		free(err);
		cJSON *node = cJSON_CreateObject();
		cJSON *md = cJSON_AddObjectToObject(node, "metadata");
		cJSON_AddStringToObject(md, "name", cases[i].name);
		cJSON_AddItemToObject(md, "labels", labels);
		if (kube_node_selector_matches_node(s, node) != cases[i].match)
			fail_msg("case %zu: want %d", i, cases[i].match);
		kube_node_selector_free(s);
		cJSON_Delete(node);
		cJSON_Delete(terms);
	}
}

static const char *labels_get(const void *ctx, const char *key)
{
	const char *const *kv = ctx;
	for (; kv[0]; kv += 2)
		if (strcmp(kv[0], key) == 0)
			return kv[1];
	return NULL;
}

static void test_callback_matching(void **state)
{
	(void)state;
	cJSON *terms = parse("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]}]");
	struct kube_node_selector *s;
	assert_int_equal(kube_node_selector_compile(terms, NULL, 0, &s, NULL), 0);
	const char *zone_a[] = {"zone", "a", NULL}, *zone_c[] = {"zone", "c", NULL};
	assert_true(kube_node_selector_matches(s, "n1", labels_get, zone_a));
	assert_false(kube_node_selector_matches(s, "n1", labels_get, zone_c));
	kube_node_selector_free(s);
	kube_node_selector_free(NULL);
	cJSON_Delete(terms);
}

static void test_preferred_terms(void **state)
{
	(void)state;
	char want[2048];
	snprintf(want, sizeof(want),
		 "[[0].matchFields[0].values: Invalid value: []string{\"host_1\", \"host_2\"}: must have one element, "
		 "[2].matchExpressions[0].key: Invalid value: \"invalid key\": %s]",
		 KEY_MSG);
	cJSON *bad = parse(
		"[{\"weight\":1,\"preference\":{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\",\"host_2\"]}]}},"
		"{\"weight\":1,\"preference\":{\"matchExpressions\":[{\"key\":\"label_1\",\"operator\":\"In\",\"values\":[\"label_1_val\"]}],"
		"\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\"]}]}},"
		"{\"weight\":1,\"preference\":{\"matchExpressions\":[{\"key\":\"invalid key\",\"operator\":\"In\",\"values\":[\"label_value\"]}]}}]");
	struct kube_preferred_terms *p = NULL;
	char *err = NULL;
	assert_int_equal(kube_preferred_terms_compile(bad, "", 0, &p, &err), -1);
	assert_string_equal(err, want);
	free(err);
	cJSON_Delete(bad);

	static const struct {
		const char *terms, *node;
		int64_t score;
	} cases[] = {
		/* invalid field selector but no weight: error not reported */
		{"[{\"weight\":0,\"preference\":{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\",\"host_2\"]}]}}]",
		 "{\"metadata\":{\"name\":\"host_1\"}}", 0},
		/* first and third term match */
		{"[{\"weight\":5,\"preference\":{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"host_1\"]}]}},"
		 "{\"weight\":7,\"preference\":{\"matchExpressions\":[{\"key\":\"unknown_label\",\"operator\":\"In\",\"values\":[\"unknown_label_val\"]}]}},"
		 "{\"weight\":11,\"preference\":{\"matchExpressions\":[{\"key\":\"label_1\",\"operator\":\"In\",\"values\":[\"label_1_val\"]}]}}]",
		 "{\"metadata\":{\"name\":\"host_1\",\"labels\":{\"label_1\":\"label_1_val\"}}}", 16},
		/* empty preference ignored */
		{"[{\"weight\":3,\"preference\":{}}]", "{\"metadata\":{\"name\":\"host_1\"}}", 0},
		{"[]", "{\"metadata\":{\"name\":\"host_1\"}}", 0},
		{"[{\"weight\":100,\"preference\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}},"
		 "{\"weight\":50,\"preference\":{\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"DoesNotExist\"}]}}]",
		 "{\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":\"\"}}}", 150},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *t = parse(cases[i].terms), *node = parse(cases[i].node);
		err = NULL;
		if (kube_preferred_terms_compile(t, NULL, 0, &p, &err) != 0)
			fail_msg("case %zu: %s", i, err);
		assert_int_equal(kube_preferred_terms_score_node(p, node), cases[i].score);
		kube_preferred_terms_free(p);
		cJSON_Delete(t);
		cJSON_Delete(node);
	}
	kube_preferred_terms_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_selector_match),
		cmocka_unit_test(test_node_selector_errors),
		cmocka_unit_test(test_callback_matching),
		cmocka_unit_test(test_required_affinity_lazy),
		cmocka_unit_test(test_preferred_terms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
