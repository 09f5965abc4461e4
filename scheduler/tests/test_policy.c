/* Tests for scheduler/config/policy.c, legacy_v1.c, legacy_profile.c and policy_merge.c: the Policy
 * translation of every upstream predicate and priority name (expected plugin sets written from
 * the tables of pkg/scheduler/framework/plugins/legacy_registry.go, not from this code), the
 * default sets, the custom arguments, ValidatePolicy's errors, the providers, the v1 form of
 * each, the extenders and --policy-config-file through the loader. */
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
#include "scheduler/config/config.h"
#include "scheduler/config/legacy.h"

/* "point:A,B=w|point:..." for the points that have plugins, in config order, then
 * "|config:Name=<args json>" per pluginConfig entry. */
static char *summary(const cJSON *profile)
{
	static const char *const points[] = { "multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
					      "score", "reserve", "permit", "preBind", "bind", "postBind", NULL };
	size_t cap = 8192, off = 0;
	char *s = calloc(1, cap);
	const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(profile, "plugins");
	for (int i = 0; points[i]; i++) {
		const cJSON *set = cJSON_GetObjectItemCaseSensitive(plugins, points[i]);
		const cJSON *en = set ? cJSON_GetObjectItemCaseSensitive(set, "enabled") : NULL;
		if (!en || !cJSON_GetArraySize(en))
			continue;
		off += (size_t)snprintf(s + off, cap - off, "%s%s:", off ? "|" : "", points[i]);
		for (const cJSON *e = en->child; e; e = e->next) {
			const cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "weight");
			off += (size_t)snprintf(s + off, cap - off, "%s%s", e == en->child ? "" : ",",
						kube_obj_get_string(e, "name"));
			if (w)
				off += (size_t)snprintf(s + off, cap - off, "=%d", (int)w->valuedouble);
		}
	}
	const cJSON *pc = cJSON_GetObjectItemCaseSensitive(profile, "pluginConfig");
	for (const cJSON *e = pc ? pc->child : NULL; e; e = e->next) {
		char *j = kube_json_print(cJSON_GetObjectItemCaseSensitive(e, "args"));
		off += (size_t)snprintf(s + off, cap - off, "|config:%s=%s", kube_obj_get_string(e, "name"), j);
		free(j);
	}
	return s;
}

static cJSON *parse(const char *text)
{
	char *err = NULL;
	cJSON *j = kube_yaml_parse_one(text, strlen(text), &err);
	if (!j)
		print_error("parse: %s\n%s\n", err, text);
	free(err);
	assert_non_null(j);
	return j;
}

/* Translates policy_json; returns the step-1 summary (or the joined errors, prefixed "ERR "). */
static char *translate(const char *policy_json, bool v1)
{
	cJSON *policy = parse(policy_json);
	cJSON *legacy = NULL, *ext = NULL;
	bool all = false;
	struct sk_errors notes = { 0 }, errs = { 0 };
	char *out;
	if (sk_policy_translate(policy, &legacy, &ext, &all, &notes, &errs) < 0) {
		char *j = sk_errors_join(&errs, "; ");
		size_t n = strlen(j) + 8;
		out = malloc(n);
		snprintf(out, n, "ERR %s", j);
		free(j);
	} else if (v1) {
		cJSON *p = sk_legacy_profile_to_v1(legacy, &notes, &errs);
		assert_non_null(p);
		out = summary(p);
		cJSON_Delete(p);
	} else {
		out = summary(legacy);
	}
	cJSON_Delete(policy);
	cJSON_Delete(legacy);
	cJSON_Delete(ext);
	sk_errors_free(&notes);
	sk_errors_free(&errs);
	return out;
}

static void expect(const char *got, const char *want, const char *what)
{
	if (strcmp(got, want)) {
		print_error("%s:\n got: %s\nwant: %s\n", what, got, want);
		fail();
	}
}

#define FIXED_HEAD "queueSort:PrioritySort|"
/* step 2: PrioritySort through multiPoint (one queueSort set for every profile), SchedulingGates */
#define V1_HEAD "multiPoint:PrioritySort|preEnqueue:SchedulingGates|"
#define MANDATORY "filter:NodeUnschedulable,"
/* The two mandatory predicates with nothing else in the filter list. */
#define ONLY_MANDATORY "filter:NodeUnschedulable,TaintToleration|postFilter:DefaultPreemption|bind:DefaultBinder"

/* ---------- every predicate name ---------- */

static void test_each_predicate(void **state)
{
	(void)state;
	static const struct {
		const char *name, *want;
	} cases[] = {
		{ "CheckNodeUnschedulable", FIXED_HEAD ONLY_MANDATORY },
		{ "PodToleratesNodeTaints", FIXED_HEAD ONLY_MANDATORY },
		{ "GeneralPredicates", FIXED_HEAD "preFilter:NodeResourcesFit,NodePorts,NodeAffinity|" MANDATORY
		  "NodeResourcesFit,NodeName,NodePorts,NodeAffinity,TaintToleration|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "HostName", FIXED_HEAD MANDATORY "NodeName,TaintToleration|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "PodFitsHostPorts", FIXED_HEAD "preFilter:NodePorts|" MANDATORY
		  "NodePorts,TaintToleration|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "PodFitsPorts", FIXED_HEAD "preFilter:NodePorts|" MANDATORY
		  "NodePorts,TaintToleration|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "MatchNodeSelector", FIXED_HEAD "preFilter:NodeAffinity|" MANDATORY
		  "NodeAffinity,TaintToleration|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "PodFitsResources", FIXED_HEAD "preFilter:NodeResourcesFit|" MANDATORY
		  "NodeResourcesFit,TaintToleration|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "NoDiskConflict", FIXED_HEAD MANDATORY
		  "VolumeRestrictions,TaintToleration|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "MaxEBSVolumeCount", FIXED_HEAD MANDATORY "TaintToleration,EBSLimits|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "MaxGCEPDVolumeCount", FIXED_HEAD MANDATORY
		  "TaintToleration,GCEPDLimits|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "MaxCSIVolumeCountPred", FIXED_HEAD MANDATORY
		  "TaintToleration,NodeVolumeLimits|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "MaxAzureDiskVolumeCount", FIXED_HEAD MANDATORY
		  "TaintToleration,AzureDiskLimits|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "MaxCinderVolumeCount", FIXED_HEAD MANDATORY
		  "TaintToleration,CinderLimits|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "CheckVolumeBinding", FIXED_HEAD "preFilter:VolumeBinding|" MANDATORY
		  "TaintToleration,VolumeBinding|postFilter:DefaultPreemption|reserve:VolumeBinding|preBind:VolumeBinding|"
		  "bind:DefaultBinder" },
		{ "NoVolumeZoneConflict", FIXED_HEAD MANDATORY
		  "TaintToleration,VolumeZone|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "EvenPodsSpread", FIXED_HEAD "preFilter:PodTopologySpread|" MANDATORY
		  "TaintToleration,PodTopologySpread|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "MatchInterPodAffinity", FIXED_HEAD "preFilter:InterPodAffinity|" MANDATORY
		  "TaintToleration,InterPodAffinity|postFilter:DefaultPreemption|bind:DefaultBinder" },
		/* the two custom predicate keys named directly (no argument): their plugin, no args */
		{ "CheckNodeLabelPresence", FIXED_HEAD MANDATORY
		  "TaintToleration,NodeLabel|postFilter:DefaultPreemption|bind:DefaultBinder" },
		{ "CheckServiceAffinity", FIXED_HEAD "preFilter:ServiceAffinity|" MANDATORY
		  "TaintToleration,ServiceAffinity|postFilter:DefaultPreemption|bind:DefaultBinder" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char doc[256];
		snprintf(doc, sizeof doc, "{\"kind\":\"Policy\",\"apiVersion\":\"v1\",\"predicates\":[{\"name\":\"%s\"}],\"priorities\":[]}",
			 cases[i].name);
		char *got = translate(doc, false);
		expect(got, cases[i].want, cases[i].name);
		free(got);
	}
}

/* ---------- every priority name ---------- */

#define PRIO_HEAD FIXED_HEAD ONLY_MANDATORY_NOBIND
#define ONLY_MANDATORY_NOBIND "filter:NodeUnschedulable,TaintToleration|postFilter:DefaultPreemption|"

static void test_each_priority(void **state)
{
	(void)state;
	static const struct {
		const char *entry, *want;
	} cases[] = {
		{ "{\"name\":\"SelectorSpreadPriority\",\"weight\":3}",
		  PRIO_HEAD "preScore:PodTopologySpread|score:PodTopologySpread=3|bind:DefaultBinder|"
			    "config:PodTopologySpread={\"defaultingType\":\"System\"}" },
		{ "{\"name\":\"ServiceSpreadingPriority\",\"weight\":3}",
		  PRIO_HEAD "preScore:PodTopologySpread|score:PodTopologySpread=3|bind:DefaultBinder|"
			    "config:PodTopologySpread={\"defaultingType\":\"System\"}" },
		{ "{\"name\":\"EvenPodsSpreadPriority\",\"weight\":2}",
		  PRIO_HEAD "preScore:PodTopologySpread|score:PodTopologySpread=2|bind:DefaultBinder|"
			    "config:PodTopologySpread={\"defaultingType\":\"List\"}" },
		{ "{\"name\":\"InterPodAffinityPriority\",\"weight\":4}",
		  PRIO_HEAD "preScore:InterPodAffinity|score:InterPodAffinity=4|bind:DefaultBinder" },
		{ "{\"name\":\"LeastRequestedPriority\",\"weight\":5}",
		  PRIO_HEAD "score:NodeResourcesLeastAllocated=5|bind:DefaultBinder" },
		{ "{\"name\":\"MostRequestedPriority\",\"weight\":6}",
		  PRIO_HEAD "score:NodeResourcesMostAllocated=6|bind:DefaultBinder" },
		{ "{\"name\":\"BalancedResourceAllocation\",\"weight\":7}",
		  PRIO_HEAD "score:NodeResourcesBalancedAllocation=7|bind:DefaultBinder" },
		{ "{\"name\":\"NodePreferAvoidPodsPriority\",\"weight\":10000}",
		  PRIO_HEAD "score:NodePreferAvoidPods=10000|bind:DefaultBinder" },
		{ "{\"name\":\"NodeAffinityPriority\",\"weight\":8}",
		  PRIO_HEAD "preScore:NodeAffinity|score:NodeAffinity=8|bind:DefaultBinder" },
		{ "{\"name\":\"TaintTolerationPriority\",\"weight\":9}",
		  PRIO_HEAD "preScore:TaintToleration|score:TaintToleration=9|bind:DefaultBinder" },
		{ "{\"name\":\"ImageLocalityPriority\",\"weight\":10}",
		  PRIO_HEAD "score:ImageLocality=10|bind:DefaultBinder" },
		{ "{\"name\":\"EqualPriority\",\"weight\":1}", PRIO_HEAD "bind:DefaultBinder" },
		{ "{\"name\":\"my-ratio\",\"weight\":2,\"argument\":{\"requestedToCapacityRatioArguments\":{"
		  "\"shape\":[{\"utilization\":0,\"score\":0},{\"utilization\":100,\"score\":10}],"
		  "\"resources\":[{\"name\":\"cpu\",\"weight\":2}]}}}",
		  PRIO_HEAD "score:RequestedToCapacityRatio=2|bind:DefaultBinder|config:RequestedToCapacityRatio="
			    "{\"shape\":[{\"utilization\":0,\"score\":0},{\"utilization\":100,\"score\":10}],"
			    "\"resources\":[{\"name\":\"cpu\",\"weight\":2}]}" },
		{ "{\"name\":\"ssd\",\"weight\":2,\"argument\":{\"labelPreference\":{\"label\":\"ssd\",\"presence\":true}}},"
		  "{\"name\":\"no-spot\",\"weight\":2,\"argument\":{\"labelPreference\":{\"label\":\"spot\",\"presence\":false}}}",
		  PRIO_HEAD "score:NodeLabel=4|bind:DefaultBinder|config:NodeLabel="
			    "{\"presentLabelsPreference\":[\"ssd\"],\"absentLabelsPreference\":[\"spot\"]}" },
		{ "{\"name\":\"spread-zone\",\"weight\":3,\"argument\":{\"serviceAntiAffinity\":{\"label\":\"zone\"}}}",
		  PRIO_HEAD "score:ServiceAffinity=3|bind:DefaultBinder|config:ServiceAffinity="
			    "{\"antiAffinityLabelsPreference\":[\"zone\"]}" },
		/* both spreads land on PodTopologySpread: the larger weight, System args whatever the order */
		{ "{\"name\":\"EvenPodsSpreadPriority\",\"weight\":2},{\"name\":\"SelectorSpreadPriority\",\"weight\":1}",
		  PRIO_HEAD "preScore:PodTopologySpread|score:PodTopologySpread=2|bind:DefaultBinder|"
			    "config:PodTopologySpread={\"defaultingType\":\"System\"}" },
		/* a later entry of one key overwrites the weight */
		{ "{\"name\":\"ImageLocalityPriority\",\"weight\":1},{\"name\":\"ImageLocalityPriority\",\"weight\":7}",
		  PRIO_HEAD "score:ImageLocality=7|bind:DefaultBinder" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char doc[1024];
		snprintf(doc, sizeof doc, "{\"kind\":\"Policy\",\"apiVersion\":\"v1\",\"predicates\":[],\"priorities\":[%s]}",
			 cases[i].entry);
		char *got = translate(doc, false);
		expect(got, cases[i].want, cases[i].entry);
		free(got);
	}
}

/* Priorities run in alphabetical order of their key; hardPodAffinitySymmetricWeight reaches
 * InterPodAffinity only through its priority. */
static void test_priority_order_and_hard_weight(void **state)
{
	(void)state;
	char *got = translate("{\"kind\":\"Policy\",\"apiVersion\":\"v1\",\"predicates\":[{\"name\":\"MatchInterPodAffinity\"}],"
			      "\"priorities\":[{\"name\":\"TaintTolerationPriority\",\"weight\":1},"
			      "{\"name\":\"InterPodAffinityPriority\",\"weight\":2},{\"name\":\"BalancedResourceAllocation\",\"weight\":3}],"
			      "\"hardPodAffinitySymmetricWeight\":10}",
			      false);
	expect(got,
	       FIXED_HEAD "preFilter:InterPodAffinity|" MANDATORY "TaintToleration,InterPodAffinity|postFilter:DefaultPreemption|"
			  "preScore:InterPodAffinity,TaintToleration|score:NodeResourcesBalancedAllocation=3,InterPodAffinity=2,"
			  "TaintToleration=1|bind:DefaultBinder|config:InterPodAffinity={\"hardPodAffinityWeight\":10}",
	       "order");
	free(got);
	got = translate("{\"predicates\":[{\"name\":\"MatchInterPodAffinity\"}],\"priorities\":[],"
			"\"hardPodAffinitySymmetricWeight\":10}",
			false);
	expect(got, FIXED_HEAD "preFilter:InterPodAffinity|" MANDATORY "TaintToleration,InterPodAffinity|"
			       "postFilter:DefaultPreemption|bind:DefaultBinder", "no priority, no args");
	free(got);
}

/* Absent predicates and priorities: the default sets (NewLegacyRegistry). */
static void test_default_sets(void **state)
{
	(void)state;
	char *got = translate("{\"kind\":\"Policy\",\"apiVersion\":\"v1\"}", false);
	expect(got,
	       FIXED_HEAD "preFilter:NodeResourcesFit,NodePorts,NodeAffinity,VolumeBinding,PodTopologySpread,InterPodAffinity|"
			  "filter:NodeUnschedulable,NodeResourcesFit,NodeName,NodePorts,NodeAffinity,VolumeRestrictions,"
			  "TaintToleration,EBSLimits,GCEPDLimits,NodeVolumeLimits,AzureDiskLimits,VolumeBinding,VolumeZone,"
			  "PodTopologySpread,InterPodAffinity|postFilter:DefaultPreemption|"
			  "preScore:PodTopologySpread,InterPodAffinity,NodeAffinity,TaintToleration|"
			  "score:NodeResourcesBalancedAllocation=1,PodTopologySpread=2,ImageLocality=1,InterPodAffinity=1,"
			  "NodeResourcesLeastAllocated=1,NodeAffinity=1,NodePreferAvoidPods=10000,TaintToleration=1|"
			  "reserve:VolumeBinding|preBind:VolumeBinding|bind:DefaultBinder|"
			  "config:PodTopologySpread={\"defaultingType\":\"System\"}",
	       "defaults");
	free(got);
	/* the v1 form: the volume limits fold into NodeVolumeLimits, LeastAllocated into NodeResourcesFit,
	 * NodePreferAvoidPods goes */
	got = translate("{\"kind\":\"Policy\",\"apiVersion\":\"v1\"}", true);
	expect(got,
	       V1_HEAD
	       "preFilter:NodeResourcesFit,NodePorts,NodeAffinity,VolumeBinding,PodTopologySpread,InterPodAffinity|"
	       "filter:NodeUnschedulable,NodeResourcesFit,NodeName,NodePorts,NodeAffinity,VolumeRestrictions,"
	       "TaintToleration,NodeVolumeLimits,VolumeBinding,VolumeZone,PodTopologySpread,InterPodAffinity|"
	       "postFilter:DefaultPreemption|preScore:PodTopologySpread,InterPodAffinity,NodeAffinity,TaintToleration,"
	       "NodeResourcesFit|score:NodeResourcesBalancedAllocation=1,PodTopologySpread=2,ImageLocality=1,"
	       "InterPodAffinity=1,NodeResourcesFit=1,NodeAffinity=1,TaintToleration=1|"
	       "reserve:VolumeBinding|preBind:VolumeBinding|bind:DefaultBinder|"
	       "config:NodeResourcesFit={\"scoringStrategy\":{\"type\":\"LeastAllocated\"}}|"
	       "config:PodTopologySpread={\"defaultingType\":\"System\"}",
	       "defaults v1");
	free(got);
}

/* The example of docs/config.md ("Legacy Policy and convert"), step 1 and step 2. */
static const char *const example =
	"{\"kind\":\"Policy\",\"apiVersion\":\"v1\",\"predicates\":[{\"name\":\"GeneralPredicates\"},"
	"{\"name\":\"PodToleratesNodeTaints\"},{\"name\":\"zone-present\",\"argument\":{\"labelsPresence\":"
	"{\"labels\":[\"topology.kubernetes.io/zone\"],\"presence\":true}}}],"
	"\"priorities\":[{\"name\":\"MostRequestedPriority\",\"weight\":3},{\"name\":\"ImageLocalityPriority\",\"weight\":1},"
	"{\"name\":\"prefer-ssd\",\"weight\":2,\"argument\":{\"labelPreference\":{\"label\":\"disk-ssd\",\"presence\":true}}}],"
	"\"extenders\":[{\"urlPrefix\":\"http://127.0.0.1:8888/sched\",\"filterVerb\":\"filter\",\"prioritizeVerb\":\"prioritize\","
	"\"weight\":5,\"enableHttps\":false,\"httpTimeout\":10000000000,\"nodeCacheCapable\":true,\"ignorable\":true}],"
	"\"hardPodAffinitySymmetricWeight\":10,\"alwaysCheckAllPredicates\":false}";

static void test_example(void **state)
{
	(void)state;
	char *got = translate(example, false);
	expect(got,
	       FIXED_HEAD "preFilter:NodeResourcesFit,NodePorts,NodeAffinity|filter:NodeUnschedulable,NodeResourcesFit,"
			  "NodeName,NodePorts,NodeAffinity,TaintToleration,NodeLabel|postFilter:DefaultPreemption|"
			  "score:ImageLocality=1,NodeResourcesMostAllocated=3,NodeLabel=2|bind:DefaultBinder|"
			  "config:NodeLabel={\"presentLabels\":[\"topology.kubernetes.io/zone\"],\"presentLabelsPreference\":[\"disk-ssd\"]}",
	       "example step 1");
	free(got);
	got = translate(example, true);
	expect(got,
	       V1_HEAD
	       "preFilter:NodeResourcesFit,NodePorts,NodeAffinity|filter:NodeUnschedulable,NodeResourcesFit,"
	       "NodeName,NodePorts,NodeAffinity,TaintToleration|postFilter:DefaultPreemption|"
	       "preScore:NodeResourcesFit,NodeAffinity|score:ImageLocality=1,NodeResourcesFit=3,NodeAffinity=2|bind:DefaultBinder|"
	       "config:NodeAffinity={\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
	       "[{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"Exists\"}]}]},"
	       "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"preference\":{\"matchExpressions\":"
	       "[{\"key\":\"disk-ssd\",\"operator\":\"Exists\"}]},\"weight\":1}]}}|"
	       "config:NodeResourcesFit={\"scoringStrategy\":{\"type\":\"MostAllocated\"}}",
	       "example step 2");
	free(got);
}

/* ---------- errors (ValidatePolicy, ProcessPredicatePolicy/ProcessPriorityPolicy) ---------- */

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *doc, *want;
	} cases[] = {
		{ "{\"predicates\":[{\"name\":\"PodFitsEverything\"}]}",
		  "ERR predicates[0].name: predicate type not found for \"PodFitsEverything\"" },
		{ "{\"priorities\":[{\"name\":\"MostPods\",\"weight\":1}]}",
		  "ERR priorities[0].name: priority type not found for \"MostPods\"" },
		{ "{\"priorities\":[{\"name\":\"ImageLocalityPriority\",\"weight\":0}]}",
		  "ERR priorities[0].weight: priority ImageLocalityPriority should have a positive weight applied to it or it "
		  "has overflown" },
		{ "{\"priorities\":[{\"name\":\"ImageLocalityPriority\",\"weight\":922337203685477580}]}",
		  "ERR priorities[0].weight: priority ImageLocalityPriority should have a positive weight applied to it or it "
		  "has overflown" },
		{ "{\"priorities\":[{\"name\":\"ImageLocalityPriority\",\"weight\":3000000000}]}",
		  "ERR priorities[0].weight: Invalid value: 3000000000: the framework's score weights are int32 (upstream "
		  "truncated this weight)" },
		{ "{\"priorities\":[{\"name\":\"a\",\"weight\":1,\"argument\":{\"labelPreference\":{\"label\":\"x\"}}},"
		  "{\"name\":\"b\",\"weight\":2,\"argument\":{\"labelPreference\":{\"label\":\"y\"}}}]}",
		  "ERR priorities[1].weight: LabelPreference priority \"b\" has a different weight with \"a\"" },
		{ "{\"priorities\":[{\"name\":\"a\",\"weight\":1,\"argument\":{\"serviceAntiAffinity\":{\"label\":\"x\"}}},"
		  "{\"name\":\"b\",\"weight\":2,\"argument\":{\"serviceAntiAffinity\":{\"label\":\"y\"}}}]}",
		  "ERR priorities[1].weight: ServiceAntiAffinity priority \"b\" has a different weight with \"a\"" },
		{ "{\"priorities\":[{\"name\":\"a\",\"weight\":1,\"argument\":{\"requestedToCapacityRatioArguments\":{}}},"
		  "{\"name\":\"b\",\"weight\":1,\"argument\":{\"requestedToCapacityRatioArguments\":{}}}]}",
		  "ERR priorities[1]: priority \"b\" redeclares custom priority \"RequestedToCapacityRatio\", from: \"a\"" },
		{ "{\"priorities\":[{\"name\":\"a\",\"weight\":1,\"argument\":{}}]}",
		  "ERR priorities[0].argument: no priority arguments set for priority a" },
		{ "{\"priorities\":[{\"name\":\"a\",\"weight\":1,\"argument\":{\"labelPreference\":{\"label\":\"x\"},"
		  "\"serviceAntiAffinity\":{\"label\":\"y\"}}}]}",
		  "ERR priorities[0].argument: exactly 1 priority argument is required, numArgs: 2, priority a" },
		{ "{\"predicates\":[{\"name\":\"p\",\"argument\":{}}]}",
		  "ERR predicates[0].argument: exactly 1 predicate argument is required, numArgs: 0, predicate p" },
		{ "{\"priorities\":[{\"name\":\"NodeLabel\",\"weight\":1}]}",
		  "ERR priorities[0].name: priority \"NodeLabel\" needs an argument (labelPreference, serviceAntiAffinity or "
		  "requestedToCapacityRatioArguments)" },
		{ "{\"priorities\":[{\"name\":\"a\",\"weight\":2000000000,\"argument\":{\"labelPreference\":{\"label\":\"x\"}}},"
		  "{\"name\":\"b\",\"weight\":2000000000,\"argument\":{\"labelPreference\":{\"label\":\"y\"}}}]}",
		  "ERR priorities: the NodeLabel score weight 4000000000 (weight 2000000000 x 2 priorities) does not fit the "
		  "framework's int32 score weight" },
		{ "{\"hardPodAffinitySymmetricWeight\":101}",
		  "ERR hardPodAffinitySymmetricWeight: Invalid value: 101: not in valid range [0-100]" },
		{ "{\"kind\":\"Policies\"}", "ERR kind: Unsupported value: \"Policies\": supported values: \"Policy\"" },
		{ "{\"predicates\":[{\"name\":\"x\",\"argument\":{\"labelsPresence\":{\"labels\":\"a\"}}}]}",
		  "ERR predicates[0].argument.labelsPresence.labels: Invalid type: expected array" },
		{ "{\"extenders\":[{\"urlPrefix\":\"http://x\",\"httpTimeout\":\"5s\"}]}",
		  "ERR extenders[0].httpTimeout: Invalid type: expected integer (nanoseconds, a Go time.Duration)" },
		/* every error at once */
		{ "{\"predicates\":[{\"name\":\"A\"},{\"name\":\"B\"}],\"priorities\":[{\"name\":\"C\",\"weight\":1}]}",
		  "ERR predicates[0].name: predicate type not found for \"A\"; predicates[1].name: predicate type not found for "
		  "\"B\"; priorities[0].name: priority type not found for \"C\"" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = translate(cases[i].doc, false);
		expect(got, cases[i].want, cases[i].doc);
		free(got);
	}
}

/* A built-in predicate name wins over an argument; custom predicates accumulate labels. */
static void test_custom_predicates(void **state)
{
	(void)state;
	char *got = translate("{\"predicates\":[{\"name\":\"HostName\",\"argument\":{\"labelsPresence\":{\"labels\":[\"a\"]}}},"
			      "{\"name\":\"z\",\"argument\":{\"labelsPresence\":{\"labels\":[\"zone\"],\"presence\":true}}},"
			      "{\"name\":\"nospot\",\"argument\":{\"labelsPresence\":{\"labels\":[\"spot\",\"preempt\"],\"presence\":false}}},"
			      "{\"name\":\"svc\",\"argument\":{\"serviceAffinity\":{\"labels\":[\"region\"]}}}],\"priorities\":[]}",
			      false);
	expect(got,
	       FIXED_HEAD "preFilter:ServiceAffinity|filter:NodeUnschedulable,NodeName,TaintToleration,NodeLabel,ServiceAffinity|"
			  "postFilter:DefaultPreemption|bind:DefaultBinder|config:NodeLabel={\"presentLabels\":[\"zone\"],"
			  "\"absentLabels\":[\"spot\",\"preempt\"]}|config:ServiceAffinity={\"affinityLabels\":[\"region\"]}",
	       "custom predicates");
	free(got);
	/* v1: NodeLabel's labels become required NodeAffinity expressions, ServiceAffinity is named */
	got = translate("{\"predicates\":[{\"name\":\"nospot\",\"argument\":{\"labelsPresence\":{\"labels\":[\"spot\"],"
			"\"presence\":false}}},{\"name\":\"svc\",\"argument\":{\"serviceAffinity\":{\"labels\":[\"region\"]}}}],"
			"\"priorities\":[]}",
			true);
	expect(got,
	       V1_HEAD "preFilter:NodeAffinity|filter:NodeUnschedulable,TaintToleration,NodeAffinity|"
	       "postFilter:DefaultPreemption|bind:DefaultBinder|config:NodeAffinity={\"addedAffinity\":"
	       "{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":"
	       "[{\"key\":\"spot\",\"operator\":\"DoesNotExist\"}]}]}}}",
	       "custom predicates v1");
	free(got);
}

/* The notes name every predicate and priority with no v1 plugin, with the reason. */
static void test_notes(void **state)
{
	(void)state;
	cJSON *policy = parse("{\"predicates\":[{\"name\":\"svc\",\"argument\":{\"serviceAffinity\":{\"labels\":[\"r\"]}}},"
			      "{\"name\":\"MaxEBSVolumeCount\"}],\"priorities\":[{\"name\":\"NodePreferAvoidPodsPriority\","
			      "\"weight\":10000},{\"name\":\"LeastRequestedPriority\",\"weight\":1},{\"name\":\"MostRequestedPriority\","
			      "\"weight\":1}],\"alwaysCheckAllPredicates\":true}");
	cJSON *legacy = NULL, *ext = NULL;
	bool all = false;
	struct sk_errors notes = { 0 }, errs = { 0 };
	assert_int_equal(sk_policy_translate(policy, &legacy, &ext, &all, &notes, &errs), 0);
	assert_true(all);
	cJSON *v1 = sk_legacy_profile_to_v1(legacy, &notes, &errs);
	assert_non_null(v1);
	char *joined = sk_errors_join(&notes, "\n");
	static const char *const want[] = {
		"alwaysCheckAllPredicates: not carried over: v1 has no such option",
		"plugin ServiceAffinity: not carried over: the ServiceAffinity plugin is not in the v1 API",
		"plugin EBSLimits: not in the v1 API: in-tree volume plugins are migrated to CSI drivers",
		("plugin NodeResourcesLeastAllocated: not carried over: NodeResourcesFit scores with one strategy and takes "
		 "NodeResourcesMostAllocated's (the larger weight, the later on a tie)"),
		"plugin NodePreferAvoidPods: not carried over: the NodePreferAvoidPods plugin",
		"pluginConfig ServiceAffinity: not carried over: the plugin is not in the v1 API",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(joined, want[i])) {
			print_error("missing note \"%s\" in:\n%s\n", want[i], joined);
			fail();
		}
	assert_int_equal(notes.n, (int)(sizeof want / sizeof want[0]));
	free(joined);
	cJSON_Delete(v1);
	cJSON_Delete(legacy);
	cJSON_Delete(ext);
	cJSON_Delete(policy);
	sk_errors_free(&notes);
	sk_errors_free(&errs);
}

/* What upstream's lenient decoder ignored is ignored and named; removed predicates are skipped
 * with their reason (the "order" keys and the extender's "apiVersion" are from old published
 * examples). */
static void test_lenient(void **state)
{
	(void)state;
	cJSON *policy = parse("{\"kind\":\"Policy\",\"apiVersion\":\"v1\",\"predicates\":[{\"name\":\"PodFitsHostPorts\",\"order\":1},"
			      "{\"name\":\"CheckNodeMemoryPressure\"}],\"priorities\":[{\"name\":\"ResourceLimitsPriority\",\"weight\":1}],"
			      "\"extenders\":[{\"urlPrefix\":\"http://localhost/scheduler\",\"apiVersion\":\"v1beta1\","
			      "\"filterVerb\":\"predicates/always_true\"}],\"predicate\":[]}");
	cJSON *legacy = NULL, *ext = NULL;
	bool all = false;
	struct sk_errors notes = { 0 }, errs = { 0 };
	assert_int_equal(sk_policy_translate(policy, &legacy, &ext, &all, &notes, &errs), 0);
	char *joined = sk_errors_join(&notes, "\n");
	static const char *const want[] = {
		"unknown field \"predicate\": ignored, as upstream's decoder ignored it",
		"unknown field \"predicates[0].order\": ignored",
		"predicates[1]: predicate CheckNodeMemoryPressure: not carried over: node conditions became taints",
		"priorities[0]: priority ResourceLimitsPriority: not carried over: the alpha ResourceLimitsPriority",
		"unknown field \"extenders[0].apiVersion\": ignored",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(joined, want[i])) {
			print_error("missing note \"%s\" in:\n%s\n", want[i], joined);
			fail();
		}
	assert_int_equal(notes.n, (int)(sizeof want / sizeof want[0]));
	char *j = kube_json_print(ext);
	expect(j, "[{\"urlPrefix\":\"http://localhost/scheduler\",\"filterVerb\":\"predicates/always_true\"}]", "extender");
	free(j);
	char *sum = summary(legacy);
	expect(sum, FIXED_HEAD "preFilter:NodePorts|" MANDATORY "NodePorts,TaintToleration|postFilter:DefaultPreemption|"
			       "bind:DefaultBinder", "lenient profile");
	free(sum);
	free(joined);
	cJSON_Delete(legacy);
	cJSON_Delete(ext);
	cJSON_Delete(policy);
	sk_errors_free(&notes);
	sk_errors_free(&errs);
}

/* LegacyExtender: keys case-insensitive, enableHttps, httpTimeout in nanoseconds. */
static void test_extenders(void **state)
{
	(void)state;
	cJSON *policy = parse("{\"extenders\":[{\"URLPrefix\":\"https://e:8443\",\"FilterVerb\":\"filter\",\"BindVerb\":\"bind\","
			      "\"EnableHttps\":true,\"TLSConfig\":{\"Insecure\":true,\"CAFile\":\"/ca\"},\"HTTPTimeout\":1500000,"
			      "\"managedResources\":[{\"Name\":\"example.com/gpu\",\"IgnoredByScheduler\":true}]},"
			      "{\"urlPrefix\":\"http://f\",\"prioritizeVerb\":\"p\",\"weight\":2}]}");
	cJSON *legacy = NULL, *ext = NULL;
	bool all = false;
	struct sk_errors notes = { 0 }, errs = { 0 };
	assert_int_equal(sk_policy_translate(policy, &legacy, &ext, &all, &notes, &errs), 0);
	char *j = kube_json_print(ext);
	expect(j,
	       "[{\"urlPrefix\":\"https://e:8443\",\"filterVerb\":\"filter\",\"bindVerb\":\"bind\",\"enableHTTPS\":true,"
	       "\"tlsConfig\":{\"insecure\":true,\"caFile\":\"/ca\"},\"httpTimeout\":\"2ms\",\"managedResources\":"
	       "[{\"name\":\"example.com/gpu\",\"ignoredByScheduler\":true}]},{\"urlPrefix\":\"http://f\",\"prioritizeVerb\":\"p\","
	       "\"weight\":2}]",
	       "extenders");
	assert_int_equal(notes.n, 1); /* 1.5ms rounded up */
	free(j);
	cJSON_Delete(legacy);
	cJSON_Delete(ext);
	cJSON_Delete(policy);
	sk_errors_free(&notes);
	sk_errors_free(&errs);
}

/* ---------- providers ---------- */

static void test_providers(void **state)
{
	(void)state;
	cJSON *p = sk_provider_profile("DefaultProvider");
	char *got = summary(p);
	expect(got,
	       FIXED_HEAD "preFilter:NodeResourcesFit,NodePorts,PodTopologySpread,InterPodAffinity,VolumeBinding,NodeAffinity|"
			  "filter:NodeUnschedulable,NodeName,TaintToleration,NodeAffinity,NodePorts,NodeResourcesFit,"
			  "VolumeRestrictions,EBSLimits,GCEPDLimits,NodeVolumeLimits,AzureDiskLimits,VolumeBinding,VolumeZone,"
			  "PodTopologySpread,InterPodAffinity|postFilter:DefaultPreemption|"
			  "preScore:InterPodAffinity,PodTopologySpread,TaintToleration,NodeAffinity|"
			  "score:NodeResourcesBalancedAllocation=1,ImageLocality=1,InterPodAffinity=1,NodeResourcesLeastAllocated=1,"
			  "NodeAffinity=1,NodePreferAvoidPods=10000,PodTopologySpread=2,TaintToleration=1|"
			  "reserve:VolumeBinding|preBind:VolumeBinding|bind:DefaultBinder",
	       "DefaultProvider");
	free(got);
	cJSON_Delete(p);
	p = sk_provider_profile("ClusterAutoscalerProvider");
	struct sk_errors notes = { 0 }, errs = { 0 };
	cJSON *v1 = sk_legacy_profile_to_v1(p, &notes, &errs);
	got = summary(v1);
	expect(got,
	       V1_HEAD
	       "preFilter:NodeResourcesFit,NodePorts,PodTopologySpread,InterPodAffinity,VolumeBinding,NodeAffinity|"
	       "filter:NodeUnschedulable,NodeName,TaintToleration,NodeAffinity,NodePorts,NodeResourcesFit,"
	       "VolumeRestrictions,NodeVolumeLimits,VolumeBinding,VolumeZone,PodTopologySpread,InterPodAffinity|"
	       "postFilter:DefaultPreemption|preScore:InterPodAffinity,PodTopologySpread,TaintToleration,NodeAffinity,"
	       "NodeResourcesFit|score:NodeResourcesBalancedAllocation=1,ImageLocality=1,InterPodAffinity=1,"
	       "NodeResourcesFit=1,NodeAffinity=1,PodTopologySpread=2,TaintToleration=1|"
	       "reserve:VolumeBinding|preBind:VolumeBinding|bind:DefaultBinder|"
	       "config:NodeResourcesFit={\"scoringStrategy\":{\"type\":\"MostAllocated\"}}",
	       "ClusterAutoscalerProvider v1");
	free(got);
	assert_null(sk_provider_profile("Default"));
	cJSON_Delete(v1);
	cJSON_Delete(p);
	sk_errors_free(&notes);
	sk_errors_free(&errs);
}

/* ---------- through the loader (--policy-config-file) ---------- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_loader(void **state)
{
	(void)state;
	char path[] = "/tmp/sk-policy-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, example);
	static const char base[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 4\n";
	struct sk_config_opts co = { .policy_path = path };
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load_opts(base, sizeof base - 1, &co, &errs);
	if (!cfg) {
		char *j = sk_errors_join(&errs, "\n");
		print_error("%s\n", j);
		free(j);
		fail();
	}
	assert_int_equal(cfg->parallelism, 4);
	assert_int_equal(cfg->nprofiles, 1);
	assert_string_equal(cfg->profiles[0].scheduler_name, "default-scheduler");
	const struct sk_plugin_list *score = &cfg->profiles[0].points[SK_EP_SCORE];
	assert_int_equal(score->n, 3);
	assert_string_equal(score->items[1].desc->name, "NodeResourcesFit");
	assert_int_equal(score->items[1].weight, 3);
	assert_non_null(cfg->extenders);
	assert_int_equal(cfg->notes.n, 1);
	sk_config_free(cfg);

	/* profiles in the config too: upstream's "profiles and policy config both set" */
	static const char with_profiles[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
					    "profiles:\n- schedulerName: mine\n";
	cfg = sk_config_load_opts(with_profiles, sizeof with_profiles - 1, &co, &errs);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msgs[0], "profiles and policy config both set"));
	assert_non_null(strstr(errs.msgs[0], path));
	sk_errors_free(&errs);

	/* a bad Policy: every error, prefixed with the file */
	write_file(path, "{\"predicates\":[{\"name\":\"Nope\"}],\"priorities\":[{\"name\":\"NeverHeardOf\",\"weight\":1}]}");
	cfg = sk_config_load_opts(base, sizeof base - 1, &co, &errs);
	assert_null(cfg);
	assert_int_equal(errs.n, 2);
	assert_non_null(strstr(errs.msgs[0], "predicates[0].name: predicate type not found for \"Nope\""));
	assert_non_null(strstr(errs.msgs[1], "priorities[0].name: priority type not found for \"NeverHeardOf\""));
	sk_errors_free(&errs);

	/* --validate output: warnings for the notes */
	write_file(path, "{\"priorities\":[{\"name\":\"NodePreferAvoidPodsPriority\",\"weight\":10000}]}");
	char outp[] = "/tmp/sk-policy-out-XXXXXX";
	fd = mkstemp(outp);
	FILE *out = fdopen(fd, "w+");
	assert_int_equal(sk_config_validate_file_opts(NULL, &co, out), 0);
	rewind(out);
	char line[1024];
	bool saw = false;
	while (fgets(line, sizeof line, out))
		saw = saw || (strstr(line, "warning: policy file") && strstr(line, "NodePreferAvoidPods"));
	assert_true(saw);
	fclose(out);
	unlink(outp);

	unlink(path);
	cfg = sk_config_load_opts(base, sizeof base - 1, &co, &errs);
	assert_null(cfg);
	assert_non_null(strstr(errs.msgs[0], "failed to read policy file"));
	sk_errors_free(&errs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_predicate),
		cmocka_unit_test(test_each_priority),
		cmocka_unit_test(test_priority_order_and_hard_weight),
		cmocka_unit_test(test_default_sets),
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_custom_predicates),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_lenient),
		cmocka_unit_test(test_extenders),
		cmocka_unit_test(test_providers),
		cmocka_unit_test(test_loader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
