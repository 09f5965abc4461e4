/* Tests for scheduler/config/config.c (+ config_decode.c, config_args.c): the upstream defaulted form of a
 * minimal config, every validation message, mergePluginSet and multiPoint expansion cases from
 * upstream's default_plugins_test / framework_test (values only), args defaults, the sha256, the
 * adaptive percentage, and sk_config_validate_file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/object.h"
#include "plugins/DefaultPreemption/default_preemption.h"
#include "scheduler/config/config.h"

#define HDR "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static struct sk_config *load(const char *text, struct sk_errors *e)
{
	return sk_config_load(text, strlen(text), e);
}

static struct sk_config *load_ok(const char *text)
{
	struct sk_errors e = { 0 };
	struct sk_config *cfg = load(text, &e);
	if (!cfg) {
		char *all = sk_errors_join(&e, "\n");
		print_error("unexpected errors:\n%s\n", all);
		free(all);
		sk_errors_free(&e);
		fail();
	}
	sk_errors_free(&e);
	return cfg;
}

/* ---------- defaults ---------- */

static const char *const default_expected_json =
	"{\"kind\":\"KubeSchedulerConfiguration\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
	"\"parallelism\":16,"
	"\"leaderElection\":{\"leaderElect\":true,\"leaseDuration\":\"15s\",\"renewDeadline\":\"10s\","
	"\"retryPeriod\":\"2s\",\"resourceLock\":\"leases\",\"resourceName\":\"kube-scheduler\","
	"\"resourceNamespace\":\"kube-system\"},"
	"\"clientConnection\":{\"kubeconfig\":\"\",\"acceptContentTypes\":\"\","
	"\"contentType\":\"application/vnd.kubernetes.protobuf\",\"qps\":50,\"burst\":100},"
	"\"enableProfiling\":true,\"enableContentionProfiling\":true,"
	"\"percentageOfNodesToScore\":0,\"podInitialBackoffSeconds\":1,\"podMaxBackoffSeconds\":10,"
	"\"profiles\":[{\"schedulerName\":\"default-scheduler\",\"plugins\":{"
	"\"preEnqueue\":{},\"queueSort\":{},\"preFilter\":{},\"filter\":{},\"postFilter\":{},\"preScore\":{},"
	"\"score\":{},\"reserve\":{},\"permit\":{},\"preBind\":{},\"bind\":{},\"postBind\":{},"
	"\"multiPoint\":{\"enabled\":["
	"{\"name\":\"SchedulingGates\"},{\"name\":\"PrioritySort\"},{\"name\":\"NodeUnschedulable\"},"
	"{\"name\":\"NodeName\"},{\"name\":\"TaintToleration\",\"weight\":3},{\"name\":\"NodeAffinity\",\"weight\":2},"
	"{\"name\":\"NodePorts\"},{\"name\":\"NodeResourcesFit\",\"weight\":1},{\"name\":\"VolumeRestrictions\"},"
	"{\"name\":\"NodeVolumeLimits\"},{\"name\":\"VolumeBinding\"},{\"name\":\"VolumeZone\"},"
	"{\"name\":\"PodTopologySpread\",\"weight\":2},{\"name\":\"InterPodAffinity\",\"weight\":2},"
	"{\"name\":\"DynamicResources\"},{\"name\":\"DefaultPreemption\"},"
	"{\"name\":\"NodeResourcesBalancedAllocation\",\"weight\":1},{\"name\":\"ImageLocality\",\"weight\":1},"
	"{\"name\":\"DefaultBinder\"}]}},"
	"\"pluginConfig\":["
	"{\"name\":\"DefaultPreemption\",\"args\":{\"kind\":\"DefaultPreemptionArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
	"\"minCandidateNodesPercentage\":10,\"minCandidateNodesAbsolute\":100}},"
	"{\"name\":\"DynamicResources\",\"args\":{\"kind\":\"DynamicResourcesArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
	"\"filterTimeout\":\"10s\"}},"
	"{\"name\":\"InterPodAffinity\",\"args\":{\"kind\":\"InterPodAffinityArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
	"\"hardPodAffinityWeight\":1,\"ignorePreferredTermsOfExistingPods\":false}},"
	"{\"name\":\"NodeAffinity\",\"args\":{\"kind\":\"NodeAffinityArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\"}},"
	"{\"name\":\"NodeResourcesBalancedAllocation\",\"args\":{\"kind\":\"NodeResourcesBalancedAllocationArgs\","
	"\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":1}]}},"
	"{\"name\":\"NodeResourcesFit\",\"args\":{\"kind\":\"NodeResourcesFitArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
	"\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":1}]}}},"
	"{\"name\":\"PodTopologySpread\",\"args\":{\"kind\":\"PodTopologySpreadArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
	"\"defaultingType\":\"System\"}},"
	"{\"name\":\"VolumeBinding\",\"args\":{\"kind\":\"VolumeBindingArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
	"\"bindTimeoutSeconds\":600}}]}]}";

static void assert_json_equal(const cJSON *got, const char *expected_text)
{
	cJSON *want = cJSON_Parse(expected_text);
	assert_non_null(want);
	if (!cJSON_Compare(got, want, 1)) {
		char *g = kube_json_print(got);
		print_error("got:  %s\nwant: %s\n", g, expected_text);
		free(g);
		cJSON_Delete(want);
		fail();
	}
	cJSON_Delete(want);
}

static void test_minimal_config_defaults(void **state)
{
	(void)state;
	struct sk_config *cfg = load_ok(HDR);
	cJSON *j = sk_config_to_json(cfg);
	assert_non_null(j);
	assert_json_equal(j, default_expected_json);

	/* the encoded form loads back to itself */
	char *text = kube_json_print(j);
	struct sk_config *again = load_ok(text);
	cJSON *j2 = sk_config_to_json(again);
	assert_true(cJSON_Compare(j, j2, 1));
	cJSON_Delete(j2);
	sk_config_free(again);
	free(text);
	cJSON_Delete(j);

	assert_int_equal(cfg->parallelism, 16);
	assert_true(cfg->leader_election.leader_elect);
	assert_int_equal(cfg->leader_election.lease_duration_ms, 15000);
	assert_int_equal(cfg->nprofiles, 1);
	assert_string_equal(cfg->profiles[0].scheduler_name, "default-scheduler");
	assert_int_equal(cfg->profiles[0].percentage_of_nodes_to_score, -1);
	sk_config_free(cfg);
}

static void test_json_input_and_sha256(void **state)
{
	(void)state;
	const char *text = "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":\"KubeSchedulerConfiguration\"}";
	struct sk_config *cfg = load_ok(text);
	/* sha256 of the exact input bytes (checked with sha256sum) */
	assert_string_equal(cfg->sha256, "b80430dcd0995cfa2747980d17c441b7190a3c60d39754fa5cd1075aa83ef85e");
	sk_config_free(cfg);
}

static void test_explicit_values_kept(void **state)
{
	(void)state;
	struct sk_config *cfg = load_ok(HDR "parallelism: 4\npercentageOfNodesToScore: 30\n"
					"podInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 20\n"
					"enableProfiling: false\ndelayCacheUntilActive: true\n"
					"leaderElection: {leaderElect: false, leaseDuration: 1m30s, renewDeadline: 500ms}\n"
					"clientConnection: {qps: 12.5, burst: 7, contentType: application/json}\n"
					"profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 0\n- schedulerName: b\n");
	assert_int_equal(cfg->parallelism, 4);
	assert_int_equal(cfg->percentage_of_nodes_to_score, 30);
	assert_int_equal(cfg->pod_initial_backoff_seconds, 2);
	assert_int_equal(cfg->pod_max_backoff_seconds, 20);
	assert_false(cfg->enable_profiling);
	assert_false(cfg->enable_contention_profiling_set);
	assert_true(cfg->delay_cache_until_active);
	assert_false(cfg->leader_election.leader_elect);
	assert_int_equal(cfg->leader_election.lease_duration_ms, 90000);
	assert_int_equal(cfg->leader_election.renew_deadline_ms, 500);
	assert_true(cfg->client_qps == 12.5);
	assert_int_equal(cfg->client_burst, 7);
	assert_string_equal(cfg->client_content_type, "application/json");
	assert_int_equal(cfg->nprofiles, 2);
	assert_int_equal(cfg->profiles[0].percentage_of_nodes_to_score, 0);
	assert_int_equal(cfg->profiles[1].percentage_of_nodes_to_score, -1);
	cJSON *j = sk_config_to_json(cfg);
	assert_null(cJSON_GetObjectItem(j, "enableContentionProfiling"));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "leaderElection"), "leaseDuration")->valuestring,
			    "1m30s");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "delayCacheUntilActive")));
	cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "profiles"), 0);
	assert_int_equal(cJSON_GetObjectItem(p0, "percentageOfNodesToScore")->valueint, 0);
	cJSON_Delete(j);
	sk_config_free(cfg);
}

/* ---------- validation messages ---------- */

struct error_case {
	const char *name;
	const char *body;      /* appended to HDR unless it starts with '!' */
	const char *expected;  /* one of the errors, exactly */
};

static const struct error_case error_cases[] = {
	{ "parallelism", "parallelism: 0\n",
	  "parallelism: Invalid value: 0: should be an integer value greater than zero" },
	{ "percentage", "percentageOfNodesToScore: 110\n",
	  "percentageOfNodesToScore: Invalid value: 110: not in valid range [0-100]" },
	{ "initial backoff", "podInitialBackoffSeconds: 0\n",
	  "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0" },
	{ "max backoff", "podMaxBackoffSeconds: 0\n",
	  "podMaxBackoffSeconds: Invalid value: 0: must be greater than or equal to PodInitialBackoffSeconds" },
	{ "resource lock", "leaderElection: {resourceLock: configmaps}\n",
	  "leaderElection.resourceLock: Invalid value: \"configmaps\": resourceLock value must be \"leases\"" },
	{ "lease vs renew", "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n",
	  "leaderElection.leaseDuration: Invalid value: 10s: LeaseDuration must be greater than RenewDeadline" },
	{ "negative retry", "leaderElection: {retryPeriod: -1s}\n",
	  "leaderElection.retryPeriod: Invalid value: -1s: must be greater than zero" },
	{ "bad duration", "leaderElection: {retryPeriod: soon}\n",
	  "leaderElection.retryPeriod: Invalid value: \"soon\": invalid duration" },
	{ "burst", "clientConnection: {burst: -1}\n", "clientConnection.burst: Invalid value: -1: must be non-negative" },
	{ "duplicate scheduler name", "profiles: [{schedulerName: a}, {schedulerName: a}]\n",
	  "profiles[1].schedulerName: Duplicate value: \"profiles[0].schedulerName\"" },
	/* validation.go keeps the latest index per name: the third profile duplicates the second */
	{ "duplicate scheduler name, three profiles",
	  "profiles: [{schedulerName: a}, {schedulerName: a}, {schedulerName: a}]\n",
	  "profiles[2].schedulerName: Duplicate value: \"profiles[1].schedulerName\"" },
	/* removed names are checked at the twelve points only; in multiPoint they are unknown plugins */
	{ "removed plugin in multiPoint", "profiles: [{plugins: {multiPoint: {enabled: [{name: EBSLimits}]}}}]\n",
	  "profiles[0].plugins.multiPoint.enabled[0]: unknown plugin \"EBSLimits\"" },
	/* mergePluginSet keeps the last entry of a repeated name in the default's place and appends the
	 * earlier one (default_plugins_test "RepeatedCustomPlugin"); the framework then rejects it */
	{ "repeated multiPoint plugin",
	  "profiles: [{plugins: {multiPoint: {enabled: [{name: NodeName}, {name: TaintToleration, weight: 2}, "
	  "{name: NodePorts}, {name: TaintToleration, weight: 4}]}}}]\n",
	  "profiles[0].plugins.multiPoint.enabled[1]: plugin \"TaintToleration\" already registered as \"FilterPlugin\"" },
	{ "empty scheduler name", "profiles: [{schedulerName: ''}]\n", "profiles[0].schedulerName: Required value" },
	{ "missing name with two profiles", "profiles: [{schedulerName: a}, {}]\n",
	  "profiles[1].schedulerName: Required value" },
	{ "profile percentage", "profiles: [{percentageOfNodesToScore: 101}]\n",
	  "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]" },
	{ "unknown plugin with suggestion",
	  "profiles: [{plugins: {score: {enabled: [{name: ImageLocality}, {name: NodeResourceFit}]}}}]\n",
	  "profiles[0].plugins.score.enabled[1]: unknown plugin \"NodeResourceFit\"; did you mean \"NodeResourcesFit\"?" },
	{ "unknown plugin, case", "profiles: [{plugins: {multiPoint: {enabled: [{name: nodeaffinity}]}}}]\n",
	  "profiles[0].plugins.multiPoint.enabled[0]: unknown plugin \"nodeaffinity\"; did you mean \"NodeAffinity\"?" },
	{ "unknown plugin, no suggestion", "profiles: [{plugins: {filter: {enabled: [{name: Zzzzzzzzzzzz}]}}}]\n",
	  "profiles[0].plugins.filter.enabled[0]: unknown plugin \"Zzzzzzzzzzzz\"" },
	{ "removed plugin", "profiles: [{plugins: {filter: {enabled: [{name: EBSLimits}]}}}]\n",
	  "profiles[0].plugins.filter.enabled[0]: Invalid value: \"EBSLimits\": was invalid in version "
	  "\"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")" },
	{ "removed plugin config", "profiles: [{pluginConfig: [{name: GCEPDLimits}]}]\n",
	  "profiles[0].pluginConfig[0]: Invalid value: \"GCEPDLimits\": was invalid in version "
	  "\"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")" },
	{ "unknown top-level field", "foo: 1\n", "unknown field \"foo\"" },
	{ "unknown nested field", "profiles: [{plugins: {scores: {}}}]\n", "unknown field \"profiles[0].plugins.scores\"" },
	{ "unknown args field", "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {foo: 1}}]}]\n",
	  "unknown field \"profiles[0].pluginConfig[0].args.foo\"" },
	{ "args kind mismatch", "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {kind: NodeAffinityArgs}}]}]\n",
	  "profiles[0].pluginConfig[0].args: args were not of type NodeResourcesFitArgs, got NodeAffinityArgs" },
	{ "wrong type", "parallelism: many\n", "parallelism: Invalid type: expected integer, got string" },
	{ "api version", "!apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
	  "apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1beta3\": supported values: "
	  "\"kubescheduler.config.k8s.io/v1\" (kubescheduler.config.k8s.io/v1beta3 was removed in Kubernetes v1.29; "
	  "convert the file with \"schedkit-scheduler convert\")" },
	{ "missing kind", "!apiVersion: kubescheduler.config.k8s.io/v1\n", "kind: Required value" },
	{ "yaml syntax", "!a: [b\n", NULL },
	{ "duplicate plugin config",
	  "profiles: [{pluginConfig: [{name: NodeAffinity, args: {}}, {name: NodeAffinity, args: {}}]}]\n",
	  "profiles[0].pluginConfig[1]: Duplicate value: \"NodeAffinity\"" },
	{ "fit strategy type",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: Foo}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: \"Foo\": supported values: "
	  "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"" },
	{ "fit strategy without type",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {resources: [{name: cpu}]}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: \"\": supported values: "
	  "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"" },
	{ "fit weight",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated, "
	  "resources: [{name: cpu, weight: 101}]}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of "
	  "cpu not in valid range (0, 100]" },
	{ "fit rtc missing",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Required value: must be specified "
	  "when type is RequestedToCapacityRatio" },
	/* validateFunctionShape runs whenever requestedToCapacityRatio is set, even for another type */
	{ "fit shape checked for another type",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: LeastAllocated, "
	  "requestedToCapacityRatio: {shape: [{utilization: 0, score: 11}]}}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]" },
	{ "fit shape empty",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio, "
	  "requestedToCapacityRatio: {shape: []}}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.shape: Required value: at least one "
	  "point must be specified" },
	{ "fit shape order",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio, "
	  "requestedToCapacityRatio: {shape: [{utilization: 50, score: 1}, {utilization: 10, score: 2}]}}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.shape[1].utilization: Invalid value: "
	  "10: values must be sorted in increasing order" },
	{ "fit shape score",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio, "
	  "requestedToCapacityRatio: {shape: [{utilization: 0, score: 11}]}}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.shape[0].score: Invalid value: 11: "
	  "not in valid range [0, 10]" },
	{ "fit shape utilization",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio, "
	  "requestedToCapacityRatio: {shape: [{utilization: 101, score: 1}]}}}}]}]\n",
	  "profiles[0].pluginConfig[0].args.scoringStrategy.shape[0].utilization: Invalid "
	  "value: 101: not in valid range [0, 100]" },
	{ "fit ignored group slash",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {ignoredResourceGroups: [example.com/aaa]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group "
	  "name can't contain '/'" },
	{ "fit ignored resource name",
	  "profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {ignoredResources: ['-bad']}}]}]\n",
	  "profiles[0].pluginConfig[0].args.ignoredResources[0]: Invalid value: \"-bad\": name part must consist of "
	  "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
	  "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
	  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')" },
	{ "balanced weight",
	  "profiles: [{pluginConfig: [{name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu, weight: 2}]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1" },
	{ "balanced duplicate",
	  "profiles: [{pluginConfig: [{name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu}, {name: cpu}]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: \"cpu\"" },
	{ "node affinity args",
	  "profiles: [{pluginConfig: [{name: NodeAffinity, args: {addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
	  "{nodeSelectorTerms: [{matchExpressions: [{key: foo, operator: Foo}]}]}}}}]}]\n",
	  NULL },
	{ "preemption both zero",
	  "profiles: [{pluginConfig: [{name: DefaultPreemption, args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}}]}]\n",
	  "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time "
	  "as minCandidateNodesPercentage" },
	{ "preemption percentage",
	  "profiles: [{pluginConfig: [{name: DefaultPreemption, args: {minCandidateNodesPercentage: 101}}]}]\n",
	  "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]" },
	{ "preemption absolute",
	  "profiles: [{pluginConfig: [{name: DefaultPreemption, args: {minCandidateNodesAbsolute: -1}}]}]\n",
	  "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)" },
	{ "inter pod affinity weight",
	  "profiles: [{pluginConfig: [{name: InterPodAffinity, args: {hardPodAffinityWeight: 101}}]}]\n",
	  "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]" },
	{ "spread system with constraints",
	  "profiles: [{pluginConfig: [{name: PodTopologySpread, args: {defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
	  "whenUnsatisfiable: ScheduleAnyway}]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty" },
	{ "spread bad constraint",
	  "profiles: [{pluginConfig: [{name: PodTopologySpread, args: {defaultingType: List, defaultConstraints: "
	  "[{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: Sometimes}]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Sometimes\": "
	  "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"" },
	{ "spread max skew",
	  "profiles: [{pluginConfig: [{name: PodTopologySpread, args: {defaultingType: List, defaultConstraints: "
	  "[{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)" },
	{ "spread selector forbidden",
	  "profiles: [{pluginConfig: [{name: PodTopologySpread, args: {defaultingType: List, defaultConstraints: "
	  "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a "
	  "selector, as they deduced for each pod" },
	{ "spread duplicate",
	  "profiles: [{pluginConfig: [{name: PodTopologySpread, args: {defaultingType: List, defaultConstraints: "
	  "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, "
	  "{maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.defaultConstraints[1]: Duplicate value: \"{zone, DoNotSchedule}\"" },
	{ "spread defaulting type",
	  "profiles: [{pluginConfig: [{name: PodTopologySpread, args: {defaultingType: Auto}}]}]\n",
	  "profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: \"Auto\": supported values: \"System\", \"List\"" },
	{ "volume binding timeout",
	  "profiles: [{pluginConfig: [{name: VolumeBinding, args: {bindTimeoutSeconds: -1}}]}]\n",
	  "profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not "
	  "be a negative value" },
	{ "volume binding shape",
	  "profiles: [{pluginConfig: [{name: VolumeBinding, args: {shape: [{utilization: 0, score: 0}]}}]}]\n",
	  "profiles[0].pluginConfig[0].args.shape: Invalid value: [{\"utilization\":0,\"score\":0}]: unexpected field "
	  "`shape`, remove it or turn on the feature gate StorageCapacityScoring" },
	{ "no bind plugin", "profiles: [{plugins: {multiPoint: {disabled: [{name: DefaultBinder}]}}}]\n",
	  "profiles[0].plugins.bind: at least one bind plugin is needed for profile with scheduler name \"default-scheduler\"" },
	{ "no queue sort", "profiles: [{plugins: {queueSort: {disabled: [{name: '*'}]}}}]\n",
	  "profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler name "
	  "\"default-scheduler\", but got 0" },
	{ "queue sort differs",
	  "profiles: [{schedulerName: a}, {schedulerName: b, plugins: {queueSort: {enabled: [{name: PrioritySort}]}}}]\n",
	  "profiles[1].plugins.queueSort: Invalid value: {\"enabled\":[{\"name\":\"PrioritySort\"}]}: "
	  "queueSort must be the same for all profiles" },
	{ "two queue sorts enabled",
	  "profiles: [{plugins: {queueSort: {enabled: [{name: PrioritySort}, {name: PrioritySort}]}}}]\n",
	  "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled" },
	{ "does not extend", "profiles: [{plugins: {filter: {enabled: [{name: PrioritySort}]}}}]\n",
	  "profiles[0].plugins.filter.enabled[0]: plugin \"PrioritySort\" does not extend FilterPlugin plugin" },
	{ "duplicate at a point", "profiles: [{plugins: {filter: {enabled: [{name: NodeName}, {name: NodeName}]}}}]\n",
	  "profiles[0].plugins.filter.enabled[1]: plugin \"NodeName\" already registered as \"FilterPlugin\"" },
	{ "duplicate in multiPoint", "profiles: [{plugins: {multiPoint: {enabled: [{name: NodeName}, {name: NodeName}]}}}]\n",
	  "profiles[0].plugins.multiPoint.enabled[0]: plugin \"NodeName\" already registered as \"FilterPlugin\"" },
	{ "extender weight", "extenders: [{urlPrefix: 'http://x', prioritizeVerb: prioritize}]\n",
	  "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it" },
	{ "two binders",
	  "extenders: [{urlPrefix: 'http://x', bindVerb: bind}, {urlPrefix: 'http://y', bindVerb: bind}]\n",
	  "extenders: Invalid value: \"found 2 extenders implementing bind\": only one extender can implement bind" },
	{ "extender resource",
	  "extenders: [{urlPrefix: 'http://x', managedResources: [{name: cpu}, {name: example.com/gpu}, "
	  "{name: example.com/gpu}]}]\n",
	  "extenders[0].managedResources[0].name: Invalid value: \"cpu\": is an invalid extended resource name" },
	{ "extender duplicate resource",
	  "extenders: [{urlPrefix: 'http://x', managedResources: [{name: example.com/gpu}, {name: example.com/gpu}]}]\n",
	  "extenders[0].managedResources[1].name: Invalid value: \"example.com/gpu\": duplicate extender managed resource name" },
	{ "extender unknown field", "extenders: [{urlPrefix: 'http://x', filterverb: f}]\n",
	  "unknown field \"extenders[0].filterverb\"" },
};

/* Upstream scheduler.New: extender-managed resources with ignoredByScheduler replace
 * NodeResourcesFit's ignoredResources; without NodeResourcesFit args it is an error. */
static void test_extender_ignored_resources(void **state)
{
	(void)state;
	struct sk_config *cfg = load_ok(
		"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
		"extenders:\n- urlPrefix: http://127.0.0.1:1/x\n  filterVerb: filter\n  managedResources:\n"
		"  - {name: example.com/foo, ignoredByScheduler: true}\n  - {name: example.com/bar}\n"
		"profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
		"      ignoredResources: [example.com/old]\n"
		"- schedulerName: b\n  extenders:\n  - urlPrefix: http://127.0.0.1:1/y\n    filterVerb: filter\n"
		"    managedResources: [{name: example.com/baz, ignoredByScheduler: true}]\n");
	cJSON *json = sk_config_to_json(cfg);
	assert_non_null(json);
	const char *want[] = { "[\"example.com/foo\"]", "[\"example.com/foo\",\"example.com/baz\"]" };
	for (int i = 0; i < 2; i++) {
		const cJSON *pcs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "profiles"), i), "pluginConfig");
		const cJSON *pc, *got = NULL;
		cJSON_ArrayForEach(pc, pcs)
			if (!strcmp(cJSON_GetObjectItem(pc, "name")->valuestring, "NodeResourcesFit"))
				got = cJSON_GetObjectItem(cJSON_GetObjectItem(pc, "args"), "ignoredResources");
		assert_non_null(got);
		assert_json_equal(got, want[i]);
	}
	cJSON_Delete(json);
	sk_config_free(cfg);

	struct sk_errors e = { 0 };
	assert_null(load("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
			 "extenders:\n- urlPrefix: http://127.0.0.1:1/x\n  filterVerb: filter\n"
			 "  managedResources: [{name: example.com/foo, ignoredByScheduler: true}]\n"
			 "profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      disabled: [{name: NodeResourcesFit}]\n",
			 &e));
	char *msg = sk_errors_join(&e, "\n");
	assert_non_null(strstr(msg, "profiles[0]: can't find NodeResourcesFitArgs in plugin config"));
	free(msg);
	sk_errors_free(&e);
}

static void test_validation_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		const struct error_case *c = &error_cases[i];
		char *text = NULL;
		if (c->body[0] == '!')
			text = strdup(c->body + 1);
		else if (asprintf(&text, "%s%s", HDR, c->body) < 0)
			text = NULL;
		assert_non_null(text);
		struct sk_errors e = { 0 };
		struct sk_config *cfg = load(text, &e);
		if (cfg) {
			print_error("case %s: loaded, want error %s\n", c->name, c->expected ? c->expected : "(any)");
			sk_config_free(cfg);
			free(text);
			fail();
		}
		assert_true(e.n > 0);
		bool found = c->expected == NULL;
		for (int k = 0; k < e.n && !found; k++)
			found = strcmp(e.msgs[k], c->expected) == 0;
		if (!found) {
			char *all = sk_errors_join(&e, "\n  ");
			print_error("case %s: want\n  %s\ngot\n  %s\n", c->name, c->expected, all);
			free(all);
			sk_errors_free(&e);
			free(text);
			fail();
		}
		sk_errors_free(&e);
		free(text);
	}
}

static void test_every_error_reported(void **state)
{
	(void)state;
	struct sk_errors e = { 0 };
	struct sk_config *cfg = load(HDR "parallelism: 0\npercentageOfNodesToScore: -1\npodInitialBackoffSeconds: 0\n", &e);
	assert_null(cfg);
	assert_int_equal(e.n, 3);
	sk_errors_free(&e);

	/* the NodeAffinity selector error names its full path */
	cfg = load(HDR "profiles: [{pluginConfig: [{name: NodeAffinity, args: {addedAffinity: "
		       "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: "
		       "[{key: foo, operator: Foo}]}]}}}}]}]\n",
		   &e);
	assert_null(cfg);
	assert_int_equal(e.n, 1);
	assert_non_null(strstr(e.msgs[0], "profiles[0].pluginConfig[0].args.addedAffinity."
					  "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"));
	sk_errors_free(&e);
}

/* ---------- merge and multiPoint expansion ---------- */

struct ref {
	const char *name;
	int weight;
};

static void assert_point(const struct sk_profile_config *p, enum sk_ext_point ep, const struct ref *want, int n)
{
	const struct sk_plugin_list *l = &p->points[ep];
	bool ok = l->n == n;
	for (int i = 0; ok && i < n; i++)
		ok = !strcmp(l->items[i].desc->name, want[i].name) && (ep != SK_EP_SCORE || l->items[i].weight == want[i].weight);
	if (!ok) {
		print_error("point %s: got", sk_ext_point_field(ep));
		for (int i = 0; i < l->n; i++)
			print_error(" %s/%d", l->items[i].desc->name, l->items[i].weight);
		print_error("\nwant");
		for (int i = 0; i < n; i++)
			print_error(" %s/%d", want[i].name, want[i].weight);
		print_error("\n");
		fail();
	}
}
/* The volume plugins after NodeResourcesFit at PreFilter and Filter (default_plugins.go order). */
#define NVOLUME_PLUGINS 4
#define VOLUME_PLUGINS { "VolumeRestrictions", 0 }, { "NodeVolumeLimits", 0 }, { "VolumeBinding", 0 }, { "VolumeZone", 0 },
#define POINT(p, ep, ...)                                                                                              \
	do {                                                                                                           \
		const struct ref want_[] = { __VA_ARGS__ };                                                            \
		assert_point(p, ep, want_, (int)(sizeof(want_) / sizeof(want_[0])));                                  \
	} while (0)

static void test_default_profile_points(void **state)
{
	(void)state;
	struct sk_config *cfg = load_ok(HDR);
	const struct sk_profile_config *p = &cfg->profiles[0];
	/* DefaultPreemption implements PreEnqueue (asynchronous preemption), as upstream v1.34 */
	POINT(p, SK_EP_PRE_ENQUEUE, { "SchedulingGates", 0 }, { "DefaultPreemption", 0 });
	POINT(p, SK_EP_QUEUE_SORT, { "PrioritySort", 0 });
	POINT(p, SK_EP_PRE_FILTER, { "NodeAffinity", 0 }, { "NodePorts", 0 }, { "NodeResourcesFit", 0 }, VOLUME_PLUGINS
	      { "PodTopologySpread", 0 }, { "InterPodAffinity", 0 });
	POINT(p, SK_EP_FILTER, { "NodeUnschedulable", 0 }, { "NodeName", 0 }, { "TaintToleration", 0 },
	      { "NodeAffinity", 0 }, { "NodePorts", 0 }, { "NodeResourcesFit", 0 }, VOLUME_PLUGINS { "PodTopologySpread", 0 },
	      { "InterPodAffinity", 0 });
	POINT(p, SK_EP_PRE_SCORE, { "TaintToleration", 0 }, { "NodeAffinity", 0 }, { "NodeResourcesFit", 0 }, { "VolumeBinding", 0 },
	      { "PodTopologySpread", 0 }, { "InterPodAffinity", 0 }, { "NodeResourcesBalancedAllocation", 0 });
	POINT(p, SK_EP_SCORE, { "TaintToleration", 3 }, { "NodeAffinity", 2 }, { "NodeResourcesFit", 1 },
	      { "VolumeBinding", 1 }, { "PodTopologySpread", 2 }, { "InterPodAffinity", 2 }, { "NodeResourcesBalancedAllocation", 1 },
	      { "ImageLocality", 1 });
	POINT(p, SK_EP_BIND, { "DefaultBinder", 0 });
	POINT(p, SK_EP_POST_FILTER, { "DefaultPreemption", 0 });
	assert_int_equal(p->points[SK_EP_RESERVE].n, 1); /* VolumeBinding */
	/* every unavailable default is reported, in default order */
	assert_int_equal(p->nunavailable, 1);
	for (int i = 0; sk_unavailable_default_plugins[i]; i++)
		assert_string_equal(p->unavailable[i], sk_unavailable_default_plugins[i]);
	cJSON *u = sk_config_unavailable_json(cfg);
	assert_json_equal(u, "{\"default-scheduler\":[\"DynamicResources\"]}");
	cJSON_Delete(u);
	/* the framework's args view has the decoded args of the built plugins with args */
	assert_int_equal(p->nargs, 7);
	assert_non_null(sk_profile_args(p, "VolumeBinding"));
	assert_non_null(sk_profile_args(p, "NodeResourcesFit"));
	assert_non_null(sk_profile_args(p, "NodeAffinity"));
	assert_non_null(sk_profile_args(p, "NodeResourcesBalancedAllocation"));
	assert_non_null(sk_profile_args(p, "PodTopologySpread"));
	assert_non_null(sk_profile_args(p, "InterPodAffinity"));
	const struct sk_default_preemption_args *dpa = sk_profile_args(p, "DefaultPreemption");
	assert_non_null(dpa);
	assert_int_equal(dpa->min_candidate_nodes_percentage, 10);
	assert_int_equal(dpa->min_candidate_nodes_absolute, 100);
	sk_config_free(cfg);
}

static void test_merge_custom_score_weight(void **state)
{
	(void)state;
	/* framework_test "default plugins with customized weights": a specific score entry overrides the
	 * multiPoint one and goes first; its weight wins. */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {score: {enabled: [{name: NodeResourcesFit, weight: 5}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	POINT(p, SK_EP_SCORE, { "NodeResourcesFit", 5 }, { "TaintToleration", 3 }, { "NodeAffinity", 2 },
	      { "VolumeBinding", 1 }, { "PodTopologySpread", 2 }, { "InterPodAffinity", 2 }, { "NodeResourcesBalancedAllocation", 1 },
	      { "ImageLocality", 1 });
	sk_config_free(cfg);
}

static void test_merge_disable_all_then_enable(void **state)
{
	(void)state;
	/* score: disabled "*" skips multiPoint expansion there; enabled plugins keep their order */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {score: {disabled: [{name: '*'}], enabled: "
					    "[{name: ImageLocality, weight: 5}, {name: TaintToleration}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	POINT(p, SK_EP_SCORE, { "ImageLocality", 5 }, { "TaintToleration", 1 });
	/* the other points are untouched */
	POINT(p, SK_EP_PRE_SCORE, { "TaintToleration", 0 }, { "NodeAffinity", 0 }, { "NodeResourcesFit", 0 }, { "VolumeBinding", 0 },
	      { "PodTopologySpread", 0 }, { "InterPodAffinity", 0 }, { "NodeResourcesBalancedAllocation", 0 });
	sk_config_free(cfg);
}

static void test_merge_multipoint_replace_in_place(void **state)
{
	(void)state;
	/* default_plugins_test: a user multiPoint entry with a default's name replaces it in place
	 * (keeping the default's position); new plugins are appended. */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {enabled: [{name: TaintToleration, weight: 10}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	assert_string_equal(p->merged[SK_EP_MULTI_POINT].enabled[4].name, "TaintToleration");
	assert_int_equal(p->merged[SK_EP_MULTI_POINT].enabled[4].weight, 10);
	assert_int_equal(p->merged[SK_EP_MULTI_POINT].nenabled, 19);
	POINT(p, SK_EP_SCORE, { "TaintToleration", 10 }, { "NodeAffinity", 2 }, { "NodeResourcesFit", 1 },
	      { "VolumeBinding", 1 }, { "PodTopologySpread", 2 }, { "InterPodAffinity", 2 }, { "NodeResourcesBalancedAllocation", 1 },
	      { "ImageLocality", 1 });
	sk_config_free(cfg);
}

static void test_merge_multipoint_disable_all(void **state)
{
	(void)state;
	/* default_plugins_test "disable all default plugins, enable some": only the user's multiPoint list */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {disabled: [{name: '*'}], enabled: "
					    "[{name: PrioritySort}, {name: NodeName}, {name: DefaultBinder}, "
					    "{name: ImageLocality, weight: 3}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	const struct sk_plugin_set_config *mp = &p->merged[SK_EP_MULTI_POINT];
	assert_int_equal(mp->nenabled, 4);
	assert_int_equal(mp->ndisabled, 1);
	assert_string_equal(mp->disabled[0], "*");
	POINT(p, SK_EP_FILTER, { "NodeName", 0 });
	POINT(p, SK_EP_SCORE, { "ImageLocality", 3 });
	assert_int_equal(p->points[SK_EP_PRE_ENQUEUE].n, 0);
	assert_int_equal(p->nunavailable, 0);
	sk_config_free(cfg);
}

static void test_merge_disable_at_one_point(void **state)
{
	(void)state;
	/* a multiPoint plugin disabled for one point stays at its other points */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {filter: {disabled: [{name: NodePorts}]}, "
					    "preFilter: {disabled: [{name: NodeAffinity}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	POINT(p, SK_EP_FILTER, { "NodeUnschedulable", 0 }, { "NodeName", 0 }, { "TaintToleration", 0 },
	      { "NodeAffinity", 0 }, { "NodeResourcesFit", 0 }, VOLUME_PLUGINS { "PodTopologySpread", 0 }, { "InterPodAffinity", 0 });
	POINT(p, SK_EP_PRE_FILTER, { "NodePorts", 0 }, { "NodeResourcesFit", 0 }, VOLUME_PLUGINS { "PodTopologySpread", 0 },
	      { "InterPodAffinity", 0 });
	sk_config_free(cfg);
}

static void test_override_order(void **state)
{
	(void)state;
	/* framework_test ordering: overrides first (in the point's order), then multiPoint-only, then the rest */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {filter: {enabled: [{name: NodePorts}, {name: NodeName}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	POINT(p, SK_EP_FILTER, { "NodePorts", 0 }, { "NodeName", 0 }, { "NodeUnschedulable", 0 },
	      { "TaintToleration", 0 }, { "NodeAffinity", 0 }, { "NodeResourcesFit", 0 }, VOLUME_PLUGINS { "PodTopologySpread", 0 },
	      { "InterPodAffinity", 0 });
	sk_config_free(cfg);
}

static void test_override_only_when_in_multipoint(void **state)
{
	(void)state;
	/* framework_test "Reorder MultiPoint plugins (specified extension only takes precedence when it
	 * exists in MultiPoint)": score lists [ImageLocality, NodeAffinity, TaintToleration], multiPoint
	 * has only the last two: overrides first in the score list's order, then ImageLocality. A score
	 * entry without a weight gets 1 even though multiPoint says 3 (getScoreWeights reads the score
	 * list first and turns 0 into 1). */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {disabled: [{name: '*'}], enabled: "
					    "[{name: PrioritySort}, {name: DefaultBinder}, {name: TaintToleration, weight: 3}, "
					    "{name: NodeAffinity, weight: 2}]}, "
					    "score: {enabled: [{name: ImageLocality}, {name: NodeAffinity, weight: 4}, "
					    "{name: TaintToleration}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	POINT(p, SK_EP_SCORE, { "NodeAffinity", 4 }, { "TaintToleration", 1 }, { "ImageLocality", 1 });
	POINT(p, SK_EP_PRE_SCORE, { "TaintToleration", 0 }, { "NodeAffinity", 0 });
	sk_config_free(cfg);
}

static void test_unavailable_named_explicitly(void **state)
{
	(void)state;
	/* upstream names are accepted; not-built ones are skipped and reported */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {disabled: [{name: '*'}], enabled: "
					    "[{name: PrioritySort}, {name: DefaultBinder}]}, "
					    "postFilter: {enabled: [{name: DynamicResources}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	assert_int_equal(p->points[SK_EP_POST_FILTER].n, 0);
	assert_int_equal(p->nunavailable, 1);
	assert_string_equal(p->unavailable[0], "DynamicResources");
	/* its default args are still added (it is enabled) */
	bool found = false;
	for (int i = 0; i < p->nplugin_config; i++)
		found |= !strcmp(p->plugin_config[i].name, "DynamicResources");
	assert_true(found);
	sk_config_free(cfg);

	/* DefaultPreemption is built now: enabled at postFilter, it runs there with its args */
	cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {disabled: [{name: '*'}], enabled: "
			  "[{name: PrioritySort}, {name: DefaultBinder}]}, "
			  "postFilter: {enabled: [{name: DefaultPreemption}]}}}]\n");
	p = &cfg->profiles[0];
	POINT(p, SK_EP_POST_FILTER, { "DefaultPreemption", 0 });
	assert_int_equal(p->nunavailable, 0);
	assert_non_null(sk_profile_args(p, "DefaultPreemption"));
	sk_config_free(cfg);

	/* InterPodAffinity is built now: enabled at filter only, it runs there */
	cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {disabled: [{name: '*'}], enabled: "
			  "[{name: PrioritySort}, {name: DefaultBinder}]}, "
			  "filter: {enabled: [{name: InterPodAffinity}]}}}]\n");
	p = &cfg->profiles[0];
	POINT(p, SK_EP_FILTER, { "InterPodAffinity", 0 });
	assert_int_equal(p->nunavailable, 0);
	assert_non_null(sk_profile_args(p, "InterPodAffinity"));
	sk_config_free(cfg);
}

static struct sk_status custom_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      const struct sk_node_info *ni)
{
	(void)self;
	(void)cs;
	(void)pod;
	(void)ni;
	return sk_ok();
}
static struct sk_status custom_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *ni, int64_t *score)
{
	(void)self;
	(void)cs;
	(void)pod;
	(void)ni;
	*score = 0;
	return sk_ok();
}
static const struct sk_plugin_desc custom_plugin = {
	SK_PLUGIN_HEADER, .name = "CustomPlugin", .filter = custom_filter, .score = custom_score,
};

static void test_out_of_tree_multipoint(void **state)
{
	(void)state;
	/* default_plugins_test "enable a custom plugin": appended after the defaults at every point it
	 * implements, with its multiPoint weight */
	char *err = NULL;
	if (!sk_registry_lookup("CustomPlugin"))
		assert_int_equal(sk_registry_register(&custom_plugin, &err), 0);
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {enabled: [{name: CustomPlugin, weight: 7}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	POINT(p, SK_EP_FILTER, { "NodeUnschedulable", 0 }, { "NodeName", 0 }, { "TaintToleration", 0 },
	      { "NodeAffinity", 0 }, { "NodePorts", 0 }, { "NodeResourcesFit", 0 }, VOLUME_PLUGINS { "PodTopologySpread", 0 },
	      { "InterPodAffinity", 0 }, { "CustomPlugin", 0 });
	POINT(p, SK_EP_SCORE, { "TaintToleration", 3 }, { "NodeAffinity", 2 }, { "NodeResourcesFit", 1 },
	      { "VolumeBinding", 1 }, { "PodTopologySpread", 2 }, { "InterPodAffinity", 2 }, { "NodeResourcesBalancedAllocation", 1 },
	      { "ImageLocality", 1 }, { "CustomPlugin", 7 });
	sk_config_free(cfg);

	/* disabled at one point by name, kept at the others */
	cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {enabled: [{name: CustomPlugin}]}, "
			  "score: {disabled: [{name: CustomPlugin}]}}}]\n");
	p = &cfg->profiles[0];
	assert_string_equal(p->points[SK_EP_FILTER].items[8 + NVOLUME_PLUGINS].desc->name, "CustomPlugin");
	assert_int_equal(p->points[SK_EP_SCORE].n, 8);
	sk_config_free(cfg);
}

static void test_minimal_explicit_profile(void **state)
{
	(void)state;
	/* everything disabled through multiPoint, then the two mandatory points given explicitly */
	struct sk_config *cfg = load_ok(HDR "profiles: [{plugins: {multiPoint: {disabled: [{name: '*'}]}, "
					    "queueSort: {enabled: [{name: PrioritySort}]}, bind: {enabled: [{name: DefaultBinder}]}}}]\n");
	const struct sk_profile_config *p = &cfg->profiles[0];
	POINT(p, SK_EP_QUEUE_SORT, { "PrioritySort", 0 });
	POINT(p, SK_EP_BIND, { "DefaultBinder", 0 });
	assert_int_equal(p->points[SK_EP_FILTER].n, 0);
	assert_int_equal(p->points[SK_EP_SCORE].n, 0);
	assert_int_equal(p->nunavailable, 0);
	/* only the enabled plugins get default args: none of them has an args type */
	assert_int_equal(p->nplugin_config, 0);
	sk_config_free(cfg);
}

static void test_plugin_config_args(void **state)
{
	(void)state;
	struct sk_config *cfg = load_ok(
		HDR "profiles:\n- pluginConfig:\n"
		    "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
		    "        resources: [{name: intel.com/foo, weight: 0}]\n"
		    "        requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}\n"
		    "  - name: MyOutOfTreePlugin\n    args: {anything: [1, 2]}\n");
	cJSON *j = sk_config_to_json(cfg);
	cJSON *pcs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "profiles"), 0), "pluginConfig");
	/* user entries first, in their order, then the defaults by name */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pcs, 0), "name")->valuestring, "NodeResourcesFit");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pcs, 1), "name")->valuestring, "MyOutOfTreePlugin");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pcs, 2), "name")->valuestring, "DefaultPreemption");
	assert_json_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pcs, 0), "args"),
			  "{\"kind\":\"NodeResourcesFitArgs\",\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
			  "\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\",\"resources\":[{\"name\":\"intel.com/foo\","
			  "\"weight\":1}],\"requestedToCapacityRatio\":{\"shape\":[{\"utilization\":0,\"score\":0},"
			  "{\"utilization\":100,\"score\":10}]}}}");
	assert_json_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pcs, 1), "args"), "{\"anything\":[1,2]}");
	assert_int_equal(cJSON_GetArraySize(pcs), 9);
	cJSON_Delete(j);
	sk_config_free(cfg);
}

static void test_fit_shape_with_other_type(void **state)
{
	(void)state;
	/* Upstream (ValidateNodeResourcesFitArgs) only validates requestedToCapacityRatio when the type is
	 * not RequestedToCapacityRatio; it does not reject it, and the shape is then unused. */
	struct sk_config *cfg = load_ok(
		HDR "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
		    "        type: MostAllocated\n"
		    "        requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}\n");
	cJSON *j = sk_config_to_json(cfg);
	cJSON *pcs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "profiles"), 0), "pluginConfig");
	cJSON *st = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(pcs, 0), "args"), "scoringStrategy");
	assert_string_equal(cJSON_GetObjectItem(st, "type")->valuestring, "MostAllocated");
	cJSON_Delete(j);
	sk_config_free(cfg);
}

static void test_fit_args_of_disabled_plugin(void **state)
{
	(void)state;
	/* validation.go looks NodeResourcesFit up under "NodeResourcesFitArgs", so its args are only
	 * validated by NewFit: a profile that does not enable the plugin loads with invalid values... */
	struct sk_config *cfg = load_ok(
		HDR "profiles:\n- plugins: {multiPoint: {disabled: [{name: NodeResourcesFit}]}}\n"
		    "  pluginConfig:\n  - name: NodeResourcesFit\n"
		    "    args: {scoringStrategy: {type: Foo, resources: [{name: cpu, weight: 200}]}}\n");
	assert_int_equal(cfg->profiles[0].points[SK_EP_FILTER].n, 7 + NVOLUME_PLUGINS);
	assert_null(sk_profile_args(&cfg->profiles[0], "NodeResourcesFit"));
	sk_config_free(cfg);

	/* ...but strict decoding still applies */
	struct sk_errors e = { 0 };
	cfg = load(HDR "profiles:\n- plugins: {multiPoint: {disabled: [{name: NodeResourcesFit}]}}\n"
		       "  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Foo}, foo: 1}\n",
		   &e);
	assert_null(cfg);
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msgs[0], "unknown field \"profiles[0].pluginConfig[0].args.foo\"");
	sk_errors_free(&e);

	/* other plugins' args are validated whether or not they are enabled (validatePluginConfig) */
	cfg = load(HDR "profiles:\n- plugins: {multiPoint: {disabled: [{name: NodeResourcesBalancedAllocation}]}}\n"
		       "  pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu, weight: 2}]}\n",
		   &e);
	assert_null(cfg);
	assert_int_equal(e.n, 1);
	assert_string_equal(e.msgs[0], "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1");
	sk_errors_free(&e);
}

static void test_rich_round_trip(void **state)
{
	(void)state;
	/* every section given: encode -> load -> encode is stable */
	struct sk_config *cfg = load_ok(
		HDR "parallelism: 8\nleaderElection: {leaderElect: true, leaseDuration: 30s, renewDeadline: 20s}\n"
		    "extenders: [{urlPrefix: 'http://e', filterVerb: filter, prioritizeVerb: prio, weight: 2, "
		    "httpTimeout: 3s, managedResources: [{name: example.com/gpu, ignoredByScheduler: true}]}]\n"
		    "profiles:\n"
		    "- schedulerName: a\n  percentageOfNodesToScore: 40\n"
		    "  plugins:\n    score: {disabled: [{name: ImageLocality}], enabled: [{name: NodeAffinity, weight: 4}]}\n"
		    "    multiPoint: {disabled: [{name: NodePorts}]}\n"
		    "  pluginConfig:\n"
		    "  - {name: DefaultPreemption, args: {minCandidateNodesPercentage: 20}}\n"
		    "  - {name: PodTopologySpread, args: {defaultingType: List, defaultConstraints: [{maxSkew: 1, "
		    "topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}}\n"
		    "  - {name: NodeResourcesFit, args: {ignoredResources: [example.com/x], scoringStrategy: {type: MostAllocated}}}\n"
		    "  - {name: NodeAffinity, args: {addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
		    "{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Exists}]}]}}}}\n"
		    "  extenders: [{urlPrefix: 'http://p', bindVerb: bind}]\n"
		    "- schedulerName: b\n");
	cJSON *j = sk_config_to_json(cfg);
	char *text = kube_json_print(j);
	struct sk_config *again = load_ok(text);
	cJSON *j2 = sk_config_to_json(again);
	if (!cJSON_Compare(j, j2, 1)) {
		char *t2 = kube_json_print(j2);
		print_error("first:  %s\nsecond: %s\n", text, t2);
		free(t2);
		fail();
	}
	assert_string_equal(cfg->profiles[0].plugin_config[0].name, "DefaultPreemption");
	POINT(&cfg->profiles[0], SK_EP_SCORE, { "NodeAffinity", 4 }, { "TaintToleration", 3 }, { "NodeResourcesFit", 1 },
	      { "VolumeBinding", 1 }, { "PodTopologySpread", 2 }, { "InterPodAffinity", 2 }, { "NodeResourcesBalancedAllocation", 1 });
	assert_int_equal(cfg->profiles[0].points[SK_EP_PRE_FILTER].n, 4 + NVOLUME_PLUGINS);
	/* the sha256 differs with the text */
	assert_string_not_equal(cfg->sha256, again->sha256);
	cJSON_Delete(j);
	cJSON_Delete(j2);
	free(text);
	sk_config_free(again);
	sk_config_free(cfg);
}

static void test_num_feasible_nodes(void **state)
{
	(void)state;
	struct sk_config *cfg = load_ok(HDR);
	const struct {
		int32_t nodes, want;
	} cases[] = { { 0, 0 }, { 99, 99 }, { 100, 100 }, { 1000, 420 }, { 5000, 500 }, { 6000, 300 } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(sk_num_feasible_nodes_to_find(cfg, &cfg->profiles[0], cases[i].nodes), cases[i].want);
	sk_config_free(cfg);

	cfg = load_ok(HDR "percentageOfNodesToScore: 30\nprofiles: [{schedulerName: a}, "
			  "{schedulerName: b, percentageOfNodesToScore: 100}]\n");
	assert_int_equal(sk_num_feasible_nodes_to_find(cfg, &cfg->profiles[0], 1000), 300);
	assert_int_equal(sk_num_feasible_nodes_to_find(cfg, &cfg->profiles[0], 200), 100);
	assert_int_equal(sk_num_feasible_nodes_to_find(cfg, &cfg->profiles[1], 1000), 1000);
	assert_int_equal(sk_num_feasible_nodes_to_find(cfg, NULL, 1000), 300);
	sk_config_free(cfg);
}

static void test_validate_file(void **state)
{
	(void)state;
	char good[] = "/tmp/sk_cfg_goodXXXXXX", bad[] = "/tmp/sk_cfg_badXXXXXX";
	int fd = mkstemp(good);
	assert_true(fd >= 0);
	assert_true(write(fd, HDR, strlen(HDR)) == (ssize_t)strlen(HDR));
	close(fd);
	fd = mkstemp(bad);
	assert_true(fd >= 0);
	const char *b = HDR "parallelism: 0\nprofiles: [{plugins: {score: {enabled: [{name: NodeResourceFit}]}}}]\n";
	assert_true(write(fd, b, strlen(b)) == (ssize_t)strlen(b));
	close(fd);

	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_int_equal(sk_config_validate_file(good, out), 0);
	fclose(out);
	assert_non_null(strstr(buf, "warning: profile \"default-scheduler\": upstream plugins not available"));
	assert_non_null(strstr(buf, "DynamicResources"));
	assert_null(strstr(buf, "DefaultPreemption"));
	free(buf);

	out = open_memstream(&buf, &len);
	assert_int_equal(sk_config_validate_file(bad, out), 1);
	fclose(out);
	assert_string_equal(buf, "error: parallelism: Invalid value: 0: should be an integer value greater than zero\n"
				 "error: profiles[0].plugins.score.enabled[0]: unknown plugin \"NodeResourceFit\"; "
				 "did you mean \"NodeResourcesFit\"?\n");
	free(buf);

	out = open_memstream(&buf, &len);
	assert_int_equal(sk_config_validate_file("/nonexistent/config.yaml", out), 1);
	fclose(out);
	assert_string_equal(buf, "error: failed to read config file \"/nonexistent/config.yaml\": No such file or directory\n");
	free(buf);
	unlink(good);
	unlink(bad);
}

static void test_decode_helpers(void **state)
{
	(void)state;
	struct sk_errors e = { 0 };
	const char *const sup[] = { "a", "b", NULL };
	sk_err_unsupported(&e, "p.q", "c\"", sup);
	assert_string_equal(e.msgs[0], "p.q: Unsupported value: \"c\\\"\": supported values: \"a\", \"b\"");
	sk_errors_free(&e);
}

static void test_ext_point_helpers(void **state)
{
	(void)state;
	assert_string_equal(sk_ext_point_field(SK_EP_PRE_ENQUEUE), "preEnqueue");
	assert_string_equal(sk_ext_point_field(SK_EP_POST_BIND), "postBind");
	assert_string_equal(sk_ext_point_field(SK_EP_MULTI_POINT), "multiPoint");
	const struct sk_plugin_desc *fit = sk_registry_lookup("NodeResourcesFit");
	assert_true(sk_desc_implements(fit, SK_EP_PRE_FILTER));
	assert_true(sk_desc_implements(fit, SK_EP_SCORE));
	assert_false(sk_desc_implements(fit, SK_EP_BIND));
	assert_non_null(sk_unavailable_plugin_desc("DynamicResources"));
	assert_null(sk_unavailable_plugin_desc("NodeResourcesFit"));
}

/* sk_config_opts.external_plugins (the operator's mode): names provided by SchedulerPlugins are
 * accepted at every point they are enabled at, args raw; unknown names still fail. */
static void test_external_plugins(void **state)
{
	(void)state;
	static const char text[] = HDR "profiles:\n"
				       "- schedulerName: sample-scheduler\n"
				       "  plugins:\n"
				       "    preFilter: {enabled: [{name: Sample}]}\n"
				       "    filter: {enabled: [{name: Sample}]}\n"
				       "    preBind: {enabled: [{name: Sample}]}\n"
				       "    score: {enabled: [{name: Sample, weight: 3}]}\n"
				       "  pluginConfig:\n"
				       "  - name: Sample\n"
				       "    args: {nodeLabel: 'schedkit.io/sample=true', anything: [1, 2]}\n";
	struct sk_errors e = { 0 };
	assert_null(sk_config_load(text, strlen(text), &e));
	char *msg = sk_errors_join(&e, "\n");
	assert_non_null(strstr(msg, "profiles[0].plugins.preFilter.enabled[0]: unknown plugin \"Sample\""));
	free(msg);
	sk_errors_free(&e);

	const char *const external[] = { "Sample", "Other", NULL };
	struct sk_config_opts opts = { .external_plugins = external };
	struct sk_config *cfg = sk_config_load_opts(text, strlen(text), &opts, &e);
	if (!cfg)
		fail_msg("%s", e.n ? e.msgs[0] : "?");
	const struct sk_profile_config *p = &cfg->profiles[0];
	const enum sk_ext_point pts[] = { SK_EP_PRE_FILTER, SK_EP_FILTER, SK_EP_PRE_BIND, SK_EP_SCORE };
	for (size_t k = 0; k < sizeof(pts) / sizeof(pts[0]); k++) {
		bool found = false;
		for (int i = 0; i < p->points[pts[k]].n; i++)
			if (!strcmp(p->points[pts[k]].items[i].desc->name, "Sample")) {
				found = true;
				if (pts[k] == SK_EP_SCORE)
					assert_int_equal(p->points[pts[k]].items[i].weight, 3);
			}
		assert_true(found);
	}
	/* not enabled at Bind, so not there even though it "implements" every point */
	for (int i = 0; i < p->points[SK_EP_BIND].n; i++)
		assert_string_not_equal(p->points[SK_EP_BIND].items[i].desc->name, "Sample");
	/* args kept as given */
	bool raw = false;
	for (int i = 0; i < p->nplugin_config; i++)
		if (!strcmp(p->plugin_config[i].name, "Sample")) {
			assert_null(p->plugin_config[i].args);
			assert_non_null(p->plugin_config[i].raw);
			assert_non_null(cJSON_GetObjectItemCaseSensitive(p->plugin_config[i].raw, "anything"));
			raw = true;
		}
	assert_true(raw);
	/* a framework cannot be built from a name alone */
	const struct sk_plugin_desc *d = p->points[SK_EP_FILTER].items[0].desc;
	for (int i = 0; i < p->points[SK_EP_FILTER].n; i++)
		if (!strcmp(p->points[SK_EP_FILTER].items[i].desc->name, "Sample"))
			d = p->points[SK_EP_FILTER].items[i].desc;
	struct sk_plugin inst = { .desc = d };
	char *err = NULL;
	assert_int_equal(d->init(&inst, NULL, &err), -1);
	assert_non_null(strstr(err, "provided by a SchedulerPlugin"));
	free(err);
	sk_config_free(cfg);

	/* still an error: a name neither in-tree nor external */
	static const char typo[] = HDR "profiles:\n- plugins:\n    filter: {enabled: [{name: Sampel}]}\n";
	assert_null(sk_config_load_opts(typo, strlen(typo), &opts, &e));
	msg = sk_errors_join(&e, "\n");
	assert_non_null(strstr(msg, "unknown plugin \"Sampel\""));
	free(msg);
	sk_errors_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_config_defaults),
		cmocka_unit_test(test_json_input_and_sha256),
		cmocka_unit_test(test_explicit_values_kept),
		cmocka_unit_test(test_validation_errors),
		cmocka_unit_test(test_every_error_reported),
		cmocka_unit_test(test_default_profile_points),
		cmocka_unit_test(test_merge_custom_score_weight),
		cmocka_unit_test(test_merge_disable_all_then_enable),
		cmocka_unit_test(test_merge_multipoint_replace_in_place),
		cmocka_unit_test(test_merge_multipoint_disable_all),
		cmocka_unit_test(test_merge_disable_at_one_point),
		cmocka_unit_test(test_override_order),
		cmocka_unit_test(test_override_only_when_in_multipoint),
		cmocka_unit_test(test_unavailable_named_explicitly),
		cmocka_unit_test(test_out_of_tree_multipoint),
		cmocka_unit_test(test_minimal_explicit_profile),
		cmocka_unit_test(test_plugin_config_args),
		cmocka_unit_test(test_fit_shape_with_other_type),
		cmocka_unit_test(test_fit_args_of_disabled_plugin),
		cmocka_unit_test(test_rich_round_trip),
		cmocka_unit_test(test_num_feasible_nodes),
		cmocka_unit_test(test_extender_ignored_resources),
		cmocka_unit_test(test_validate_file),
		cmocka_unit_test(test_decode_helpers),
		cmocka_unit_test(test_ext_point_helpers),
		cmocka_unit_test(test_external_plugins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
