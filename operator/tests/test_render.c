/* Tests for operator/render.c: SchedulerProfile specs -> KubeSchedulerConfiguration YAML, compared
 * byte for byte with golden files (operator/tests/golden/render_*.yaml; regenerate with
 * SK_UPDATE_GOLDEN=1 and review the diff), the ClusterAutoscaler provider merge, determinism,
 * spec errors, and that every rendered golden config loads with the scheduler's loader with the
 * hash the operator computes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "operator/render.h"
#include "scheduler/config/config.h"
#include "operator/tests/golden.h"


static cJSON *yaml(const char *text)
{
	char *err = NULL;
	cJSON *o = kube_yaml_parse_one(text, strlen(text), &err);
	if (!o)
		fail_msg("bad test YAML: %s", err ? err : "?");
	return o;
}

/* Renders the specs (YAML, one per entry; name = metadata.name) into one config. */
static char *render(const char *const *specs, const char *const *names, int n)
{
	cJSON *profiles[8];
	assert_true(n <= 8);
	for (int i = 0; i < n; i++) {
		cJSON *spec = specs[i] ? yaml(specs[i]) : NULL;
		char *err = NULL;
		if (op_render_profile(spec, names[i], &profiles[i], &err) != 0)
			fail_msg("render %s: %s", names[i], err ? err : "?");
		cJSON_Delete(spec);
	}
	struct op_render_opts ro = { .lease_namespace = "schedkit-system", .lease_name = "schedkit-scheduler" };
	char *text = op_render_config((const cJSON *const *)profiles, n, &ro);
	for (int i = 0; i < n; i++)
		cJSON_Delete(profiles[i]);
	assert_non_null(text);
	return text;
}

/* The rendered text loads, and the loader's hash equals the operator's. */
static void assert_loads(const char *text)
{
	struct sk_errors e = { 0 };
	struct sk_config *cfg = sk_config_load(text, strlen(text), &e);
	if (!cfg) {
		char *all = sk_errors_join(&e, "\n");
		print_error("does not load:\n%s\n", all);
		free(all);
	}
	assert_non_null(cfg);
	char hash[65];
	op_sha256_hex(text, strlen(text), hash);
	assert_string_equal(hash, cfg->sha256);
	sk_config_free(cfg);
	sk_errors_free(&e);
}

struct golden_case {
	const char *golden;
	const char *name;
	const char *spec; /* NULL = no spec */
};

static const struct golden_case cases[] = {
	{ "render_empty.yaml", "plain", NULL },
	{ "render_scheduler_name.yaml", "obj-name", "schedulerName: custom\nprovider: Default\n" },
	{ "render_autoscaler.yaml", "bin-packing", "provider: ClusterAutoscaler\n" },
	/* the user's NodeResourcesFit args are merged over the provider's: their fields win, type added */
	{ "render_autoscaler_merge.yaml", "bin-packing",
	  "provider: ClusterAutoscaler\n"
	  "pluginConfig:\n"
	  "- name: DefaultPreemption\n  args: {minCandidateNodesAbsolute: 50}\n"
	  "- args:\n"
	  "    ignoredResources: [example.com/gpu]\n"
	  "    scoringStrategy:\n"
	  "      resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]\n"
	  "  name: NodeResourcesFit\n" },
	/* an explicit scoring type overrides the provider */
	{ "render_autoscaler_override.yaml", "bin-packing",
	  "provider: ClusterAutoscaler\n"
	  "pluginConfig:\n"
	  "- name: NodeResourcesFit\n  args: {scoringStrategy: {type: LeastAllocated}}\n" },
	{ "render_full.yaml", "full",
	  "schedulerName: full\n"
	  "percentageOfNodesToScore: 30\n"
	  "plugins:\n"
	  "  score:\n"
	  "    enabled: [{name: ImageLocality, weight: 5}]\n"
	  "    disabled: [{name: NodeResourcesBalancedAllocation}]\n"
	  "  filter:\n"
	  "    disabled: [{name: NodePorts}]\n"
	  "pluginConfig:\n"
	  "- name: NodeResourcesFit\n  args: {scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "
	  "{shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]}}}\n"
	  "extenders:\n"
	  "- urlPrefix: http://127.0.0.1:8888/sched\n"
	  "  filterVerb: filter\n"
	  "  prioritizeVerb: prioritize\n"
	  "  weight: 5\n"
	  "  httpTimeout: 10s\n"
	  "  nodeCacheCapable: true\n"
	  "  ignorable: true\n" },
};

static void test_golden(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *specs[1] = { cases[i].spec };
		const char *names[1] = { cases[i].name };
		char *text = render(specs, names, 1);
		assert_golden(cases[i].golden, text);
		assert_loads(text);
		free(text);
	}
}

/* Several profiles: sorted by schedulerName whatever the input order; byte-identical output. */
static void test_sorted_and_deterministic(void **state)
{
	(void)state;
	const char *specs[3] = { "provider: ClusterAutoscaler\n", "percentageOfNodesToScore: 100\n",
				 "schedulerName: aaa-first\n" };
	const char *names[3] = { "zeta", "mid", "zzz" };
	char *a = render(specs, names, 3);
	const char *rspecs[3] = { specs[2], specs[1], specs[0] };
	const char *rnames[3] = { names[2], names[1], names[0] };
	char *b = render(rspecs, rnames, 3);
	char *c = render(specs, names, 3);
	assert_string_equal(a, b);
	assert_string_equal(a, c);
	assert_golden("render_sorted.yaml", a);
	assert_loads(a);
	const char *p1 = strstr(a, "aaa-first"), *p2 = strstr(a, "schedulerName: mid"), *p3 = strstr(a, "zeta");
	assert_true(p1 && p2 && p3 && p1 < p2 && p2 < p3);
	free(a);
	free(b);
	free(c);
}

static void test_zero_profiles(void **state)
{
	(void)state;
	char *text = op_render_config(NULL, 0, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "profiles: []"));
	assert_non_null(strstr(text, "resourceNamespace: schedkit-system"));
	free(text);
}

static void test_spec_errors(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *want;
	} t[] = {
		{ "provider: Fancy\n", "spec.provider: Unsupported value: \"Fancy\": supported values: \"ClusterAutoscaler\", "
					"\"ClusterAutoscalerProvider\", \"Default\", \"DefaultProvider\"" },
		{ "plugins: [1]\n", "spec.plugins: Invalid value: \"array\": spec.plugins in body must be of type object" },
		{ "pluginConfig: {}\n", "spec.pluginConfig: Invalid value: \"object\": spec.pluginConfig in body must be of type array" },
		{ "percentageOfNodesToScore: 1.5\n", "spec.percentageOfNodesToScore: Invalid value: \"number\": spec.percentageOfNodesToScore in body must be of type integer" },
		{ "schedulerName: 7\n", "spec.schedulerName: Invalid value: \"number\": spec.schedulerName in body must be of type string" },
		{ "legacyPolicy: {predicates: [{name: Nope}]}\n",
		  "spec.legacyPolicy.predicates[0].name: predicate type not found for \"Nope\"" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cJSON *spec = yaml(t[i].spec), *out = NULL;
		char *err = NULL;
		assert_int_equal(op_render_profile(spec, "x", &out, &err), -1);
		assert_null(out);
		assert_non_null(err);
		assert_string_equal(err, t[i].want);
		free(err);
		cJSON_Delete(spec);
	}
	/* no name at all */
	cJSON *out = NULL;
	char *err = NULL;
	assert_int_equal(op_render_profile(NULL, "", &out, &err), -1);
	assert_string_equal(err, "spec.schedulerName: Required value");
	free(err);
}

static void test_scheduler_name(void **state)
{
	(void)state;
	cJSON *spec = yaml("schedulerName: given\n");
	assert_string_equal(op_profile_scheduler_name(spec, "meta"), "given");
	cJSON_Delete(spec);
	spec = yaml("schedulerName: ''\n");
	assert_string_equal(op_profile_scheduler_name(spec, "meta"), "meta");
	cJSON_Delete(spec);
	assert_string_equal(op_profile_scheduler_name(NULL, "meta"), "meta");
}

static void test_json_merge(void **state)
{
	(void)state;
	cJSON *base = yaml("{a: {p: 1, q: 2}, b: [1, 2], c: s}");
	cJSON *over = yaml("{a: {q: 3, r: 4}, b: [9], d: true}");
	cJSON *m = op_json_merge(base, over);
	char *s = kube_json_print(m);
	assert_string_equal(s, "{\"a\":{\"p\":1,\"q\":3,\"r\":4},\"b\":[9],\"c\":\"s\",\"d\":true}");
	free(s);
	cJSON_Delete(m);
	cJSON_Delete(base);
	cJSON_Delete(over);
}

static void test_sha256(void **state)
{
	(void)state;
	char h[65];
	op_sha256_hex("abc", 3, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_sorted_and_deterministic),
		cmocka_unit_test(test_zero_profiles),
		cmocka_unit_test(test_spec_errors),
		cmocka_unit_test(test_scheduler_name),
		cmocka_unit_test(test_json_merge),
		cmocka_unit_test(test_sha256),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
