/* Tests for operator/legacy.c: SchedulerProfile.spec.legacyPolicy and the upstream provider names
 * rendered through the scheduler's legacy translation, the fields that cannot go with a Policy,
 * the provider merge of spec.plugins/pluginConfig, and status.translation through the plan (a
 * translated profile loads beside default profiles: one queueSort set for all). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "operator/legacy.h"
#include "operator/plan.h"
#include "operator/render.h"
#include "operator/status.h"
#include "scheduler/config/config.h"

static cJSON *yaml(const char *text)
{
	char *err = NULL;
	cJSON *j = kube_yaml_parse_one(text, strlen(text), &err);
	if (!j)
		fail_msg("yaml: %s", err);
	return j;
}

static const char *const policy_spec =
	"schedulerName: legacy\n"
	"provider: Default\n" /* the CRD default comes along */
	"legacyPolicy:\n"
	"  kind: Policy\n"
	"  apiVersion: v1\n"
	"  predicates: [{name: GeneralPredicates}, {name: PodToleratesNodeTaints},\n"
	"    {name: zone, argument: {labelsPresence: {labels: [zone], presence: true}}}]\n"
	"  priorities: [{name: MostRequestedPriority, weight: 3}, {name: NodePreferAvoidPodsPriority, weight: 10000}]\n"
	"  extenders: [{urlPrefix: 'http://127.0.0.1:1/x', filterVerb: filter, httpTimeout: 2000000000}]\n";

static void test_legacy_policy(void **state)
{
	(void)state;
	cJSON *spec = yaml(policy_spec), *out = NULL, *tr = NULL;
	char *err = NULL;
	assert_int_equal(op_render_legacy(spec, "legacy", &out, &tr, &err), 1);
	assert_string_equal(kube_obj_get_string(out, "schedulerName"), "legacy");
	char *j = kube_json_print(kube_obj_get(tr, "plugins"));
	assert_string_equal(j, "{\"preEnqueue\":[\"SchedulingGates\"],\"queueSort\":[\"PrioritySort\"],"
			       "\"preFilter\":[\"NodeResourcesFit\",\"NodePorts\",\"NodeAffinity\"],"
			       "\"filter\":[\"NodeUnschedulable\",\"NodeResourcesFit\",\"NodeName\",\"NodePorts\",\"NodeAffinity\","
			       "\"TaintToleration\"],\"postFilter\":[\"DefaultPreemption\"],\"preScore\":[\"NodeResourcesFit\"],"
			       "\"score\":[\"NodeResourcesFit:3\"],\"bind\":[\"DefaultBinder\"]}");
	free(j);
	assert_string_equal(kube_obj_get_string(tr, "source"), "legacyPolicy");
	const cJSON *notes = kube_obj_get(tr, "notes");
	assert_int_equal(cJSON_GetArraySize(notes), 1);
	assert_non_null(strstr(cJSON_GetArrayItem(notes, 0)->valuestring, "NodePreferAvoidPods"));
	/* the Policy's extenders become the profile's own */
	j = kube_json_print(kube_obj_get(out, "extenders"));
	assert_string_equal(j, "[{\"urlPrefix\":\"http://127.0.0.1:1/x\",\"filterVerb\":\"filter\",\"httpTimeout\":\"2s\"}]");
	free(j);
	/* op_render_profile renders the same */
	cJSON *p2 = NULL;
	assert_int_equal(op_render_profile(spec, "meta", &p2, &err), 0);
	assert_true(cJSON_Compare(out, p2, 1));
	cJSON_Delete(p2);
	cJSON_Delete(out);
	cJSON_Delete(tr);
	cJSON_Delete(spec);
}

static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *want;
	} t[] = {
		{ "legacyPolicy: {}\nplugins: {score: {disabled: [{name: ImageLocality}]}}\n",
		  "spec.plugins: Forbidden: cannot be combined with spec.legacyPolicy (the Policy defines every plugin, as "
		  "upstream refused profiles beside a Policy)" },
		{ "legacyPolicy: {}\npluginConfig: []\n",
		  "spec.pluginConfig: Forbidden: cannot be combined with spec.legacyPolicy (the Policy defines every plugin, as "
		  "upstream refused profiles beside a Policy)" },
		{ "legacyPolicy: {}\nprovider: ClusterAutoscaler\n",
		  "spec.provider: Forbidden: cannot be combined with spec.legacyPolicy (the Policy defines every plugin)" },
		{ "legacyPolicy: [1]\n", "spec.legacyPolicy: Invalid value: must be an object (a Policy)" },
		{ "legacyPolicy: {priorities: [{name: ImageLocalityPriority, weight: 0}, {name: Nope, weight: 1}]}\n",
		  "spec.legacyPolicy.priorities[0].weight: priority ImageLocalityPriority should have a positive weight applied "
		  "to it or it has overflown; priorities[1].name: priority type not found for \"Nope\"" },
		{ "legacyPolicy: {extenders: [{urlPrefix: 'http://a'}]}\nextenders: [{urlPrefix: 'http://b'}]\n",
		  "spec.extenders: Forbidden: the legacyPolicy has extenders too; keep one list" },
		{ "legacyPolicy: {extenders: [{urlPrefix: 'https://a', TLSConfig: {KeyData: c2VjcmV0}}]}\n",
		  "spec.legacyPolicy.extenders[0].tlsConfig.keyData: Forbidden: a private key would be written into the "
		  "scheduler's ConfigMap; give the extender in spec.extenders with its key in a Secret" },
		{ "provider: DefaultProvider\nplugins: {multiPoint: {enabled: [{name: X}]}}\n",
		  "spec.plugins.multiPoint: Forbidden: an upstream provider lists every extension point; configure the points "
		  "themselves" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cJSON *spec = yaml(t[i].spec), *out = NULL, *tr = NULL;
		char *err = NULL;
		assert_int_equal(op_render_legacy(spec, "x", &out, &tr, &err), -1);
		assert_null(out);
		assert_null(tr);
		if (strcmp(err, t[i].want))
			fail_msg("%s\n got: %s\nwant: %s", t[i].spec, err, t[i].want);
		free(err);
		cJSON_Delete(spec);
	}
	/* neither: nothing to do */
	cJSON *spec = yaml("provider: ClusterAutoscaler\n"), *out = NULL;
	char *err = NULL;
	assert_int_equal(op_render_legacy(spec, "x", &out, NULL, &err), 0);
	assert_null(out);
	cJSON_Delete(spec);
}

/* An upstream provider with the user's plugins merged per point and args merged by field. */
static void test_provider_merge(void **state)
{
	(void)state;
	cJSON *spec = yaml("provider: ClusterAutoscalerProvider\n"
			   "plugins: {score: {disabled: [{name: ImageLocality}], enabled: [{name: TaintToleration, weight: 5}]}}\n"
			   "pluginConfig: [{name: NodeResourcesFit, args: {ignoredResources: [example.com/foo]}},\n"
			   "  {name: InterPodAffinity, args: {hardPodAffinityWeight: 3}}]\n");
	cJSON *out = NULL, *tr = NULL;
	char *err = NULL;
	assert_int_equal(op_render_legacy(spec, "packer", &out, &tr, &err), 1);
	char *j = kube_json_print(kube_obj_get(tr, "plugins.score"));
	assert_string_equal(j, "[\"NodeResourcesBalancedAllocation:1\",\"InterPodAffinity:1\",\"NodeResourcesFit:1\","
			       "\"NodeAffinity:1\",\"PodTopologySpread:2\",\"TaintToleration:5\"]");
	free(j);
	j = kube_json_print(kube_obj_get(out, "pluginConfig"));
	assert_string_equal(j, "[{\"name\":\"NodeResourcesFit\",\"args\":{\"scoringStrategy\":{\"type\":\"MostAllocated\"},"
			       "\"ignoredResources\":[\"example.com/foo\"]}},{\"name\":\"InterPodAffinity\",\"args\":"
			       "{\"hardPodAffinityWeight\":3}}]");
	free(j);
	assert_string_equal(kube_obj_get_string(tr, "source"), "provider ClusterAutoscalerProvider");
	cJSON_Delete(out);
	cJSON_Delete(tr);
	cJSON_Delete(spec);
}

static cJSON *profile_obj(const char *name, const char *spec_yaml)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *m = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(m, "name", name);
	cJSON_AddStringToObject(m, "creationTimestamp", "2025-01-01T00:00:00Z");
	cJSON_AddNumberToObject(m, "generation", 2);
	cJSON_AddItemToObject(o, "spec", yaml(spec_yaml));
	return o;
}

/* Through the plan: accepted beside a default profile, status.translation set, the message says so. */
static void test_plan_and_status(void **state)
{
	(void)state;
	cJSON *arr = cJSON_CreateArray();
	cJSON_AddItemToArray(arr, profile_obj("legacy", policy_spec));
	cJSON_AddItemToArray(arr, profile_obj("plain", "schedulerName: plain\n"));
	struct op_render_opts ro = { 0 };
	struct op_plan plan;
	char *err = NULL;
	assert_int_equal(op_plan_build(arr, &ro, &plan, &err), 0);
	const struct op_profile_result *r = op_plan_find(&plan, "legacy");
	assert_non_null(r);
	if (!r->accepted)
		fail_msg("not accepted: %s", r->message);
	assert_non_null(strstr(r->message, "translated from legacyPolicy (plugin sets in status.translation, what did "
					   "not carry over in status.translation.notes)"));
	assert_non_null(r->translation);
	assert_true(op_plan_find(&plan, "plain")->accepted);
	assert_null(op_plan_find(&plan, "plain")->translation);
	assert_int_equal(plan.nrendered, 2);
	cJSON *st = op_status_desired(cJSON_GetArrayItem(arr, 0), r, &plan, NULL, NULL, "ns/lease", "2025-01-01T00:00:00Z");
	assert_non_null(st);
	assert_string_equal(kube_obj_get_string(st, "translation.source"), "legacyPolicy");
	cJSON_Delete(st);
	/* the configuration loads as the scheduler will load it */
	struct sk_errors e = { 0 };
	struct sk_config *cfg = sk_config_load(plan.config_yaml, strlen(plan.config_yaml), &e);
	assert_non_null(cfg);
	assert_int_equal(cfg->nprofiles, 2);
	sk_config_free(cfg);
	op_plan_free(&plan);
	cJSON_Delete(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legacy_policy),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_provider_merge),
		cmocka_unit_test(test_plan_and_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
