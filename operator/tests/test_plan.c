/* Tests for operator/plan.c: the validation mapping (Accepted/reason/message per profile), the
 * loader's exact messages, schedulerName conflicts (older keeps it; ties by name), last accepted
 * fallbacks from the annotation, errors that only show when profiles are loaded together, the
 * reserved default-scheduler name, objects being deleted, and the config/hash the plan carries. */
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
#include "scheduler/config/config.h"

static const struct op_render_opts ro = { .lease_namespace = "schedkit-system", .lease_name = "schedkit-scheduler" };

/* A SchedulerProfile object: name, creationTimestamp, generation, spec YAML (flow), optional
 * last-accepted annotation JSON. */
static cJSON *profile(const char *name, const char *created, int gen, const char *spec, const char *last)
{
	char buf[4096];
	snprintf(buf, sizeof buf,
		 "{\"apiVersion\":\"schedkit.io/v1alpha1\",\"kind\":\"SchedulerProfile\","
		 "\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"%s\",\"generation\":%d},\"spec\":%s}",
		 name, created, gen, spec ? spec : "{}");
	cJSON *o = kube_json_parse(buf, strlen(buf), NULL);
	assert_non_null(o);
	if (last) {
		cJSON *ann = cJSON_AddObjectToObject(cJSON_GetObjectItem(o, "metadata"), "annotations");
		cJSON_AddStringToObject(ann, OP_LAST_ACCEPTED_ANNOTATION, last);
	}
	return o;
}

static struct op_plan build(cJSON *arr)
{
	struct op_plan p;
	char *err = NULL;
	if (op_plan_build(arr, &ro, &p, &err) != 0)
		fail_msg("plan: %s", err ? err : "?");
	return p;
}

static const struct op_profile_result *find(const struct op_plan *p, const char *name)
{
	const struct op_profile_result *r = op_plan_find(p, name);
	if (!r)
		fail_msg("no result for %s", name);
	return r;
}

/* The loader's message for a config holding just this profile entry YAML. */
static char *loader_message(const char *profile_yaml)
{
	char buf[4096];
	snprintf(buf, sizeof buf,
		 "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n%s", profile_yaml);
	struct sk_errors e = { 0 };
	struct sk_config *cfg = sk_config_load(buf, strlen(buf), &e);
	assert_null(cfg);
	char *m = sk_errors_join(&e, "; ");
	sk_errors_free(&e);
	return m;
}

static void test_valid_and_invalid(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("good", "2025-01-01T00:00:00Z", 1, "{\"provider\":\"ClusterAutoscaler\"}", NULL));
	cJSON_AddItemToArray(arr, profile("typo", "2025-01-01T00:00:01Z", 3,
					  "{\"plugins\":{\"score\":{\"enabled\":[{\"name\":\"NodeResourceFit\"}]}}}", NULL));
	cJSON_AddItemToArray(arr, profile("badargs", "2025-01-01T00:00:02Z", 1,
					  "{\"pluginConfig\":[{\"name\":\"NodeResourcesFit\",\"args\":{\"scoringStrategy\":{\"type\":\"Most\"}}}]}",
					  NULL));
	struct op_plan p = build(arr);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.nrendered, 1);
	/* results sorted by name */
	assert_string_equal(p.profiles[0].name, "badargs");
	assert_string_equal(p.profiles[1].name, "good");
	assert_string_equal(p.profiles[2].name, "typo");

	const struct op_profile_result *g = find(&p, "good");
	assert_true(g->accepted);
	assert_string_equal(g->reason, OP_REASON_ACCEPTED);
	assert_int_equal(g->source, OP_SOURCE_CURRENT);
	assert_string_equal(g->rendered_scheduler_name, "good");
	assert_int_equal(g->rendered_generation, 1);
	assert_non_null(g->last_accepted); /* first acceptance is recorded */
	assert_string_equal(g->last_accepted, "{\"generation\":1,\"spec\":{\"provider\":\"ClusterAutoscaler\"}}");

	const struct op_profile_result *t = find(&p, "typo");
	assert_false(t->accepted);
	assert_string_equal(t->reason, OP_REASON_INVALID);
	assert_int_equal(t->source, OP_SOURCE_NONE);
	assert_null(t->rendered_scheduler_name);
	assert_int_equal(t->generation, 3);
	/* the loader's exact message, for the profile rendered alone, in the spec's terms */
	char *raw = loader_message("- schedulerName: typo\n  plugins:\n    score:\n      enabled:\n      - name: NodeResourceFit\n");
	char *want = op_spec_paths(raw);
	free(raw);
	assert_string_equal(t->message, want);
	assert_string_equal(t->message,
			    "spec.plugins.score.enabled[0]: unknown plugin \"NodeResourceFit\"; did you mean \"NodeResourcesFit\"?");
	free(want);

	const struct op_profile_result *b = find(&p, "badargs");
	assert_string_equal(b->reason, OP_REASON_INVALID);
	assert_non_null(strstr(b->message, "scoringStrategy.type"));

	/* the config holds exactly the accepted profile, and loads with the same hash */
	assert_non_null(p.config_yaml);
	assert_non_null(strstr(p.config_yaml, "schedulerName: good"));
	assert_null(strstr(p.config_yaml, "typo"));
	assert_null(strstr(p.config_yaml, "badargs"));
	struct sk_errors e = { 0 };
	struct sk_config *cfg = sk_config_load(p.config_yaml, strlen(p.config_yaml), &e);
	assert_non_null(cfg);
	assert_string_equal(cfg->sha256, p.config_hash);
	assert_int_equal(cfg->nprofiles, 1);
	sk_config_free(cfg);
	sk_errors_free(&e);
	op_plan_free(&p);
	cJSON_Delete(arr);
}

static void test_conflict_older_wins(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	/* input order must not matter: newest first */
	cJSON_AddItemToArray(arr, profile("newer", "2025-02-01T00:00:00Z", 1, "{\"schedulerName\":\"shared\"}", NULL));
	cJSON_AddItemToArray(arr, profile("older", "2025-01-01T00:00:00Z", 1, "{\"schedulerName\":\"shared\"}", NULL));
	/* same timestamp: the name decides */
	cJSON_AddItemToArray(arr, profile("tie-b", "2025-03-01T00:00:00Z", 1, "{\"schedulerName\":\"tie\"}", NULL));
	cJSON_AddItemToArray(arr, profile("tie-a", "2025-03-01T00:00:00Z", 1, "{\"schedulerName\":\"tie\"}", NULL));
	struct op_plan p = build(arr);
	assert_true(find(&p, "older")->accepted);
	const struct op_profile_result *n = find(&p, "newer");
	assert_false(n->accepted);
	assert_string_equal(n->reason, OP_REASON_CONFLICT);
	assert_string_equal(n->message, "schedulerName \"shared\" is already used by SchedulerProfile \"older\", which is older");
	assert_string_equal(n->scheduler_name, "shared");
	assert_true(find(&p, "tie-a")->accepted);
	assert_string_equal(find(&p, "tie-b")->reason, OP_REASON_CONFLICT);
	assert_int_equal(p.nrendered, 2);
	assert_null(find(&p, "newer")->last_accepted);
	op_plan_free(&p);
	cJSON_Delete(arr);
}

static void test_last_accepted_kept(void **state)
{
	(void)state;
	const char *last = "{\"generation\":2,\"spec\":{\"percentageOfNodesToScore\":40}}";
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("p", "2025-01-01T00:00:00Z", 3, "{\"percentageOfNodesToScore\":40,\"plugins\":"
							       "{\"bind\":{\"disabled\":[{\"name\":\"*\"}]}}}",
					  last));
	struct op_plan p = build(arr);
	const struct op_profile_result *r = find(&p, "p");
	assert_false(r->accepted);
	assert_string_equal(r->reason, OP_REASON_INVALID);
	assert_string_equal(r->message, "spec.plugins.bind: at least one bind plugin is needed for profile with scheduler name \"p\"");
	assert_int_equal(r->source, OP_SOURCE_LAST_ACCEPTED);
	assert_int_equal(r->rendered_generation, 2);
	assert_string_equal(r->rendered_scheduler_name, "p");
	assert_null(r->last_accepted); /* the good version stays recorded */
	assert_int_equal(p.nrendered, 1);
	assert_non_null(strstr(p.config_yaml, "percentageOfNodesToScore: 40"));
	assert_null(strstr(p.config_yaml, "bind"));
	op_plan_free(&p);
	cJSON_Delete(arr);

	/* fixed again: current accepted, annotation unchanged when equal, updated when not */
	arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("p", "2025-01-01T00:00:00Z", 2, "{\"percentageOfNodesToScore\":40}", last));
	cJSON_AddItemToArray(arr, profile("q", "2025-01-01T00:00:00Z", 5, "{\"percentageOfNodesToScore\":41}", last));
	p = build(arr);
	assert_true(find(&p, "p")->accepted);
	assert_null(find(&p, "p")->last_accepted);
	assert_string_equal(find(&p, "q")->last_accepted, "{\"generation\":5,\"spec\":{\"percentageOfNodesToScore\":41}}");
	op_plan_free(&p);
	cJSON_Delete(arr);
}

/* A renamed profile whose new version is broken keeps running under its old name, unless another
 * profile asks for that name. */
static void test_last_accepted_other_name(void **state)
{
	(void)state;
	const char *last = "{\"generation\":1,\"spec\":{\"schedulerName\":\"old-name\"}}";
	const char *bad = "{\"schedulerName\":\"new-name\",\"pluginConfig\":[{\"name\":\"X\"},{\"name\":\"X\"}]}";
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("p", "2025-01-01T00:00:00Z", 2, bad, last));
	struct op_plan p = build(arr);
	const struct op_profile_result *r = find(&p, "p");
	assert_int_equal(r->source, OP_SOURCE_LAST_ACCEPTED);
	assert_string_equal(r->scheduler_name, "new-name");
	assert_string_equal(r->rendered_scheduler_name, "old-name");
	op_plan_free(&p);
	cJSON_Delete(arr);

	arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("p", "2025-01-01T00:00:00Z", 2, bad, last));
	cJSON_AddItemToArray(arr, profile("claimer", "2025-06-01T00:00:00Z", 1, "{\"schedulerName\":\"old-name\"}", NULL));
	p = build(arr);
	assert_int_equal(find(&p, "p")->source, OP_SOURCE_NONE);
	assert_true(find(&p, "claimer")->accepted);
	op_plan_free(&p);
	cJSON_Delete(arr);
}

/* Two profiles valid alone but not together (queueSort must match): the newer one is rejected with
 * the loader's message for the combined configuration. */
static void test_combined_error(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("a", "2025-01-01T00:00:00Z", 1, "{}", NULL));
	cJSON_AddItemToArray(arr, profile("b", "2025-01-02T00:00:00Z", 1,
					  "{\"plugins\":{\"queueSort\":{\"disabled\":[{\"name\":\"*\"}],\"enabled\":[{\"name\":"
					  "\"PrioritySort\"}]},\"multiPoint\":{\"disabled\":[{\"name\":\"PrioritySort\"}]}}}",
					  NULL));
	struct op_plan p = build(arr);
	assert_true(find(&p, "a")->accepted);
	const struct op_profile_result *b = find(&p, "b");
	assert_false(b->accepted);
	assert_string_equal(b->reason, OP_REASON_INVALID);
	assert_non_null(strstr(b->message, "must be the same for all profiles"));
	/* in the SchedulerProfile's terms, whatever the loader's index of it was */
	if (strncmp(b->message, "spec.plugins.queueSort", 22) || strstr(b->message, "profiles[1]"))
		fail_msg("b: %s", b->message);
	assert_int_equal(p.nrendered, 1);
	op_plan_free(&p);
	cJSON_Delete(arr);

	/* the older profile sorts after the newer one: the loader numbers the newer profiles[0] */
	arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("z", "2025-01-01T00:00:00Z", 1, "{}", NULL));
	cJSON_AddItemToArray(arr, profile("b", "2025-01-02T00:00:00Z", 1,
					  "{\"plugins\":{\"queueSort\":{\"disabled\":[{\"name\":\"*\"}],\"enabled\":[{\"name\":"
					  "\"PrioritySort\"}]},\"multiPoint\":{\"disabled\":[{\"name\":\"PrioritySort\"}]}}}",
					  NULL));
	p = build(arr);
	b = find(&p, "b");
	assert_false(b->accepted);
	/* the loader blames the other one (it compares with the first): named, in its terms */
	if (strncmp(b->message, "(SchedulerProfile z) spec.plugins.queueSort: Invalid value:", 59) ||
	    !strstr(b->message, "must be the same for all profiles"))
		fail_msg("b sorted first: %s", b->message);
	op_plan_free(&p);
	cJSON_Delete(arr);
}

static void test_reserved_deleting_and_empty(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("default-scheduler", "2025-01-01T00:00:00Z", 1, "{}", NULL));
	cJSON *gone = profile("gone", "2025-01-01T00:00:00Z", 1, "{}", NULL);
	cJSON_AddStringToObject(cJSON_GetObjectItem(gone, "metadata"), "deletionTimestamp", "2025-01-02T00:00:00Z");
	cJSON_AddItemToArray(arr, gone);
	struct op_plan p = build(arr);
	assert_int_equal(p.n, 1);
	assert_null(op_plan_find(&p, "gone"));
	const struct op_profile_result *r = find(&p, "default-scheduler");
	assert_string_equal(r->reason, OP_REASON_INVALID);
	assert_string_equal(r->message,
			    "spec.schedulerName: Invalid value: \"default-scheduler\": reserved for the cluster's default scheduler");
	/* nothing to run: no config text, no hash */
	assert_int_equal(p.nrendered, 0);
	assert_null(p.config_yaml);
	assert_string_equal(p.config_hash, "");
	op_plan_free(&p);
	cJSON_Delete(arr);

	cJSON *empty = cJSON_CreateArray();
	p = build(empty);
	assert_int_equal(p.n, 0);
	assert_null(p.config_yaml);
	op_plan_free(&p);
	cJSON_Delete(empty);
}

/* Same input, byte-identical plan output; an unusable annotation is ignored. */
static void test_deterministic_and_bad_annotation(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("x", "2025-01-01T00:00:00Z", 1, "{\"provider\":\"ClusterAutoscaler\"}", "not json"));
	cJSON_AddItemToArray(arr, profile("y", "2025-01-01T00:00:00Z", 1, "{\"provider\":\"Bogus\"}",
					  "{\"generation\":1,\"spec\":{\"provider\":\"Bogus\"}}"));
	struct op_plan a = build(arr), b = build(arr);
	assert_string_equal(a.config_yaml, b.config_yaml);
	assert_string_equal(a.config_hash, b.config_hash);
	assert_int_equal(find(&a, "y")->source, OP_SOURCE_NONE);
	assert_non_null(find(&a, "x")->last_accepted);
	op_plan_free(&a);
	op_plan_free(&b);
	cJSON_Delete(arr);
}

static void test_validate_profile(void **state)
{
	(void)state;
	const char *ok = "{\"schedulerName\":\"v\"}", *bad = "{\"schedulerName\":\"v\",\"percentageOfNodesToScore\":101}";
	cJSON *p = kube_json_parse(ok, strlen(ok), NULL);
	char *msg = NULL, *unavail = NULL;
	assert_int_equal(op_validate_profile(p, &ro, &msg, &unavail), 0);
	assert_null(msg);
	/* whatever this build lacks is named (NULL when it has every default plugin) */
	if (unavail)
		assert_true(strlen(unavail) > 0);
	free(unavail);
	cJSON_Delete(p);
	p = kube_json_parse(bad, strlen(bad), NULL);
	assert_int_equal(op_validate_profile(p, &ro, &msg, NULL), -1);
	assert_non_null(strstr(msg, "spec.percentageOfNodesToScore"));
	free(msg);
	cJSON_Delete(p);
}

/* Plugin names provided by accepted SchedulerPlugins: accepted at any extension point with their
 * args kept raw in the rendered configuration; without them the same profile is unknown; the
 * rest of the profile is still checked by the loader. */
static void test_external_plugins(void **state)
{
	(void)state;
	static const char *const external[] = { "Sample", NULL };
	struct op_render_opts ext = ro;
	ext.external_plugins = external;
	const char *spec = "{\"plugins\":{\"preFilter\":{\"enabled\":[{\"name\":\"Sample\"}]},"
			   "\"filter\":{\"enabled\":[{\"name\":\"Sample\"}]},\"preBind\":{\"enabled\":[{\"name\":\"Sample\"}]}},"
			   "\"pluginConfig\":[{\"name\":\"Sample\",\"args\":{\"nodeLabel\":\"schedkit.io/sample=true\","
			   "\"whatever\":[1,2]}}]}";
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile("sample-scheduler", "2025-01-01T00:00:00Z", 1, spec, NULL));
	cJSON_AddItemToArray(arr, profile("broken", "2025-01-01T00:00:01Z", 1,
					  "{\"plugins\":{\"filter\":{\"enabled\":[{\"name\":\"Sample\"},"
					  "{\"name\":\"NodeResourceFit\"}]}}}",
					  NULL));

	struct op_plan p;
	char *err = NULL;
	assert_int_equal(op_plan_build(arr, &ext, &p, &err), 0);
	const struct op_profile_result *r = find(&p, "sample-scheduler");
	if (!r->accepted)
		fail_msg("sample-scheduler rejected: %s", r->message);
	/* the configuration keeps the plugin and its args exactly as given */
	assert_non_null(strstr(p.config_yaml, "name: Sample"));
	assert_non_null(strstr(p.config_yaml, "nodeLabel: schedkit.io/sample=true"));
	assert_non_null(strstr(p.config_yaml, "whatever:"));
	/* an external name does not hide the profile's other mistakes */
	r = find(&p, "broken");
	assert_false(r->accepted);
	assert_non_null(strstr(r->message, "unknown plugin \"NodeResourceFit\""));
	op_plan_free(&p);

	/* no SchedulerPlugin provides it: the loader's unknown-plugin error */
	p = build(arr);
	r = find(&p, "sample-scheduler");
	assert_false(r->accepted);
	assert_string_equal(r->reason, OP_REASON_INVALID);
	assert_non_null(strstr(r->message, "unknown plugin \"Sample\""));
	assert_null(p.config_yaml);
	op_plan_free(&p);
	cJSON_Delete(arr);
}

/* The loader's paths of a profile rendered alone, written in the SchedulerProfile's terms. */
static void test_spec_paths(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
	} t[] = {
		{ "profiles[0].plugins.bind: x", "spec.plugins.bind: x" },
		{ "profiles[0]: x; unknown field \"profiles[0].plugins.scores\"", "spec: x; unknown field \"spec.plugins.scores\"" },
		{ "no path", "no path" },
		{ "", "" },
		{ "ends profiles[0]", "ends spec" },
		{ "profiles[1].schedulerName: y", "profiles[1].schedulerName: y" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char *got = op_spec_paths(t[i].in);
		assert_string_equal(got, t[i].want);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_paths),
		cmocka_unit_test(test_valid_and_invalid),
		cmocka_unit_test(test_conflict_older_wins),
		cmocka_unit_test(test_last_accepted_kept),
		cmocka_unit_test(test_last_accepted_other_name),
		cmocka_unit_test(test_combined_error),
		cmocka_unit_test(test_reserved_deleting_and_empty),
		cmocka_unit_test(test_deterministic_and_bad_annotation),
		cmocka_unit_test(test_validate_profile),
		cmocka_unit_test(test_external_plugins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
