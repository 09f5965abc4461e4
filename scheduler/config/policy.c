/* The pre-1.23 Policy API (kind Policy, apiVersion v1) translated into the one framework profile
 * upstream v1.20-v1.22 built from it (step 1 of scheduler/config/legacy.h): decoding and
 * ValidatePolicy (pkg/scheduler/apis/config/validation/validation.go), the predicate and priority
 * producers, their order and the argument accumulation of
 * pkg/scheduler/framework/plugins/legacy_registry.go, and createFromConfig
 * (pkg/scheduler/factory.go). The result uses the plugin names of that time; legacy_v1.c turns it
 * into a v1 profile. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/object.h"
#include "scheduler/config/config.h"
#include "scheduler/config/legacy.h"
#include "scheduler/config/legacy_internal.h"

/* Which args a producer attaches (ConfigProducerArgs in legacy_registry.go). */
enum producer_args {
	PA_NONE,
	PA_NODE_LABEL,       /* NodeLabelArgs */
	PA_SERVICE_AFFINITY, /* ServiceAffinityArgs */
	PA_IPA,              /* InterPodAffinityArgs, when hardPodAffinitySymmetricWeight != 0 */
	PA_RTCR,             /* RequestedToCapacityRatioArgs */
	PA_SYSTEM_SPREAD,    /* PodTopologySpreadArgs{System}, replacing an earlier entry */
	PA_LIST_SPREAD,      /* PodTopologySpreadArgs{List}, unless an entry exists */
};

struct producer_add {
	enum sk_ext_point ep;
	const char *plugin;
};

struct producer {
	const char *key;
	struct producer_add adds[4]; /* in the producer's order; a SK_EP_SCORE add takes the weight */
	enum producer_args args;
};

#define F SK_EP_FILTER
#define PF SK_EP_PRE_FILTER
#define PS SK_EP_PRE_SCORE
#define S SK_EP_SCORE

/* Predicate producers in predicateOrdering (legacy_registry.go): they run in this order. */
static const struct producer predicates[] = {
	{ "CheckNodeUnschedulable", { { F, "NodeUnschedulable" } }, PA_NONE },
	{ "GeneralPredicates",
	  { { F, "NodeResourcesFit" }, { PF, "NodeResourcesFit" }, { F, "NodeName" }, { F, "NodePorts" } },
	  PA_NONE },
	{ "HostName", { { F, "NodeName" } }, PA_NONE },
	{ "PodFitsHostPorts", { { F, "NodePorts" }, { PF, "NodePorts" } }, PA_NONE },
	{ "MatchNodeSelector", { { F, "NodeAffinity" }, { PF, "NodeAffinity" } }, PA_NONE },
	{ "PodFitsResources", { { F, "NodeResourcesFit" }, { PF, "NodeResourcesFit" } }, PA_NONE },
	{ "NoDiskConflict", { { F, "VolumeRestrictions" } }, PA_NONE },
	{ "PodToleratesNodeTaints", { { F, "TaintToleration" } }, PA_NONE },
	{ "CheckNodeLabelPresence", { { F, "NodeLabel" } }, PA_NODE_LABEL },
	{ "CheckServiceAffinity", { { F, "ServiceAffinity" }, { PF, "ServiceAffinity" } }, PA_SERVICE_AFFINITY },
	{ "MaxEBSVolumeCount", { { F, "EBSLimits" } }, PA_NONE },
	{ "MaxGCEPDVolumeCount", { { F, "GCEPDLimits" } }, PA_NONE },
	{ "MaxCSIVolumeCountPred", { { F, "NodeVolumeLimits" } }, PA_NONE },
	{ "MaxAzureDiskVolumeCount", { { F, "AzureDiskLimits" } }, PA_NONE },
	{ "MaxCinderVolumeCount", { { F, "CinderLimits" } }, PA_NONE },
	{ "CheckVolumeBinding",
	  { { PF, "VolumeBinding" }, { F, "VolumeBinding" }, { SK_EP_RESERVE, "VolumeBinding" },
	    { SK_EP_PRE_BIND, "VolumeBinding" } },
	  PA_NONE },
	{ "NoVolumeZoneConflict", { { F, "VolumeZone" } }, PA_NONE },
	{ "EvenPodsSpread", { { PF, "PodTopologySpread" }, { F, "PodTopologySpread" } }, PA_NONE },
	{ "MatchInterPodAffinity", { { F, "InterPodAffinity" }, { PF, "InterPodAffinity" } }, PA_NONE },
};
#define NPREDICATES ((int)(sizeof predicates / sizeof predicates[0]))
/* GeneralPredicates also adds NodePorts (PreFilter) and NodeAffinity (Filter, PreFilter). */
static const struct producer_add general_more[] = { { PF, "NodePorts" }, { F, "NodeAffinity" }, { PF, "NodeAffinity" } };

/* Priority producers, sorted by key (AppendPriorityConfigs runs them in sort.Strings order). The
 * keys NodeLabel, RequestedToCapacityRatio and ServiceAffinity are those of the custom priorities. */
static const struct producer priorities[] = {
	{ "BalancedResourceAllocation", { { S, "NodeResourcesBalancedAllocation" } }, PA_NONE },
	{ "EvenPodsSpreadPriority", { { PS, "PodTopologySpread" }, { S, "PodTopologySpread" } }, PA_LIST_SPREAD },
	{ "ImageLocalityPriority", { { S, "ImageLocality" } }, PA_NONE },
	{ "InterPodAffinityPriority", { { PS, "InterPodAffinity" }, { S, "InterPodAffinity" } }, PA_IPA },
	{ "LeastRequestedPriority", { { S, "NodeResourcesLeastAllocated" } }, PA_NONE },
	{ "MostRequestedPriority", { { S, "NodeResourcesMostAllocated" } }, PA_NONE },
	{ "NodeAffinityPriority", { { PS, "NodeAffinity" }, { S, "NodeAffinity" } }, PA_NONE },
	{ "NodeLabel", { { S, "NodeLabel" } }, PA_NODE_LABEL },
	{ "NodePreferAvoidPodsPriority", { { S, "NodePreferAvoidPods" } }, PA_NONE },
	{ "RequestedToCapacityRatio", { { S, "RequestedToCapacityRatio" } }, PA_RTCR },
	{ "SelectorSpreadPriority", { { S, "PodTopologySpread" }, { PS, "PodTopologySpread" } }, PA_SYSTEM_SPREAD },
	{ "ServiceAffinity", { { S, "ServiceAffinity" } }, PA_SERVICE_AFFINITY },
	{ "TaintTolerationPriority", { { PS, "TaintToleration" }, { S, "TaintToleration" } }, PA_NONE },
};
#define NPRIORITIES ((int)(sizeof priorities / sizeof priorities[0]))

#undef F
#undef PF
#undef PS
#undef S

/* DefaultPredicates and DefaultPriorities of NewLegacyRegistry. */
static const char *const default_predicates[] = {
	"NoVolumeZoneConflict", "MaxEBSVolumeCount", "MaxGCEPDVolumeCount", "MaxAzureDiskVolumeCount",
	"MaxCSIVolumeCountPred", "MatchInterPodAffinity", "NoDiskConflict", "GeneralPredicates",
	"PodToleratesNodeTaints", "CheckVolumeBinding", "CheckNodeUnschedulable", "EvenPodsSpread", NULL,
};
static const struct {
	const char *key;
	int64_t weight;
} default_priorities[] = {
	{ "SelectorSpreadPriority", 1 },  { "InterPodAffinityPriority", 1 },  { "LeastRequestedPriority", 1 },
	{ "BalancedResourceAllocation", 1 }, { "NodePreferAvoidPodsPriority", 10000 }, { "NodeAffinityPriority", 1 },
	{ "TaintTolerationPriority", 1 }, { "ImageLocalityPriority", 1 },    { "EvenPodsSpreadPriority", 2 },
};

#define MAX_WEIGHT (INT64_MAX / 10) /* config.MaxWeight */

static int find_producer(const struct producer *t, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(t[i].key, key))
			return i;
	return -1;
}

/* ---------- the translation state ---------- */

struct policy_state {
	bool pred_keys[NPREDICATES];
	bool prio_set[NPRIORITIES];
	int64_t prio_weight[NPRIORITIES];
	/* accumulated custom arguments (NULL until a custom predicate/priority sets them) */
	cJSON *node_label;       /* NodeLabelArgs */
	cJSON *service_affinity; /* ServiceAffinityArgs */
	cJSON *rtcr;             /* RequestedToCapacityRatioArgs */
	int32_t hard_pod_affinity_weight;
	bool oom;
	struct sk_errors *notes; /* never NULL */
	struct sk_errors *errs;  /* the caller's */
};

/* Unknown keys are ignored, as the decoder upstream used for a Policy ignored them (its JSON
 * serializer was not strict), and named in the notes; a non-object is an error. */
static int check_fields(struct policy_state *st, const cJSON *obj, const char *path, const char *const *fields,
			bool type_meta, struct sk_errors *e)
{
	if (!obj || cJSON_IsNull(obj))
		return 0;
	if (!cJSON_IsObject(obj)) {
		sk_errors_addf(e, "%s: Invalid type: expected object", *path ? path : "Policy");
		return -1;
	}
	for (const cJSON *c = obj->child; c; c = c->next) {
		bool ok = type_meta && (!strcmp(c->string, "kind") || !strcmp(c->string, "apiVersion"));
		for (int i = 0; !ok && fields[i]; i++)
			ok = !strcmp(c->string, fields[i]);
		if (!ok)
			sk_errors_addf(st->notes, "unknown field \"%s%s%s\": ignored, as upstream's decoder ignored it", path,
				       *path ? "." : "", c->string);
	}
	return 0;
}

/* Predicates and priorities that upstream had removed before the Policy translation existed: a
 * v1.22 scheduler refused them ("predicate type not found"); here they are skipped with the
 * reason, since what they did is covered or gone. */
static const struct {
	const char *name, *reason;
} removed_names[] = {
	{ "CheckNodeCondition", "node conditions became taints (TaintNodesByCondition): the not-ready, unreachable and "
				"network-unavailable taints are checked by PodToleratesNodeTaints, which is always on" },
	{ "CheckNodeMemoryPressure", "node conditions became taints (TaintNodesByCondition): node.kubernetes.io/memory-pressure "
				     "is checked by PodToleratesNodeTaints, which is always on" },
	{ "CheckNodeDiskPressure", "node conditions became taints (TaintNodesByCondition): node.kubernetes.io/disk-pressure "
				   "is checked by PodToleratesNodeTaints, which is always on" },
	{ "CheckNodePIDPressure", "node conditions became taints (TaintNodesByCondition): node.kubernetes.io/pid-pressure "
				  "is checked by PodToleratesNodeTaints, which is always on" },
	{ "ResourceLimitsPriority", "the alpha ResourceLimitsPriority was removed without a successor; nothing in v1 "
				    "scores container limits" },
};

static const char *removed_reason(const char *name)
{
	for (size_t i = 0; i < sizeof removed_names / sizeof removed_names[0]; i++)
		if (!strcmp(removed_names[i].name, name))
			return removed_names[i].reason;
	return NULL;
}

static cJSON *args_array(struct policy_state *st, cJSON **args, const char *field)
{
	if (!*args && !(*args = cJSON_CreateObject())) {
		st->oom = true;
		return NULL;
	}
	cJSON *a = cJSON_GetObjectItemCaseSensitive(*args, field);
	if (!a && !(a = cJSON_AddArrayToObject(*args, field)))
		st->oom = true;
	return a;
}

static void args_append_strings(struct policy_state *st, cJSON **args, const char *field, const cJSON *labels)
{
	cJSON *a = args_array(st, args, field);
	for (const cJSON *l = labels ? labels->child : NULL; a && l; l = l->next) {
		cJSON *s = cJSON_CreateString(l->valuestring);
		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			st->oom = true;
		}
	}
}

static void args_append_string(struct policy_state *st, cJSON **args, const char *field, const char *v)
{
	cJSON *a = args_array(st, args, field);
	cJSON *s = a ? cJSON_CreateString(v) : NULL;
	if (a && (!s || !cJSON_AddItemToArray(a, s))) {
		cJSON_Delete(s);
		st->oom = true;
	}
}

/* ---------- decoding ---------- */

static const cJSON *member(const cJSON *o, const char *k)
{
	const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
	return v && !cJSON_IsNull(v) ? v : NULL;
}

/* A list of label strings at path.field (absent = empty). */
static int string_list(const cJSON *o, const char *field, const char *path, struct sk_errors *e)
{
	const cJSON *a = member(o, field);
	if (!a)
		return 0;
	if (!cJSON_IsArray(a)) {
		sk_errors_addf(e, "%s.%s: Invalid type: expected array", path, field);
		return -1;
	}
	int i = 0, rc = 0;
	for (const cJSON *l = a->child; l; l = l->next, i++)
		if (!cJSON_IsString(l)) {
			sk_errors_addf(e, "%s.%s[%d]: Invalid type: expected string", path, field, i);
			rc = -1;
		}
	return rc;
}

static int required_string(const cJSON *o, const char *field, const char *path, const char **out, struct sk_errors *e)
{
	const cJSON *v = member(o, field);
	if (v && !cJSON_IsString(v)) {
		sk_errors_addf(e, "%s.%s: Invalid type: expected string", path, field);
		return -1;
	}
	*out = v ? v->valuestring : "";
	return 0;
}

/* One PredicatePolicy: checks it (validatePredicate), maps it to its key and accumulates its
 * custom arguments (ProcessPredicatePolicy). */
static void process_predicate(struct policy_state *st, const cJSON *p, int i, struct sk_errors *e)
{
	char path[48];
	snprintf(path, sizeof path, "predicates[%d]", i);
	static const char *const fields[] = { "name", "argument", NULL };
	static const char *const arg_fields[] = { "serviceAffinity", "labelsPresence", NULL };
	if (!cJSON_IsObject(p)) {
		sk_errors_addf(e, "%s: Invalid type: expected object", path);
		return;
	}
	const char *name;
	if (check_fields(st, p, path, fields, false, e) < 0 || required_string(p, "name", path, &name, e) < 0)
		return;
	const cJSON *arg = member(p, "argument");
	char apath[96];
	snprintf(apath, sizeof apath, "%s.argument", path);
	const cJSON *sa = NULL, *lp = NULL;
	if (arg) {
		if (check_fields(st, arg, apath, arg_fields, false, e) < 0)
			return;
		sa = member(arg, "serviceAffinity");
		lp = member(arg, "labelsPresence");
		int nargs = (sa != NULL) + (lp != NULL);
		if (nargs != 1) {
			sk_errors_addf(e, "%s: exactly 1 predicate argument is required, numArgs: %d, predicate %s", apath,
				       nargs, name);
			return;
		}
	}
	const char *key = !strcmp(name, "PodFitsPorts") ? "PodFitsHostPorts" : name; /* kept for compatibility upstream */
	int k = find_producer(predicates, NPREDICATES, key);
	if (k >= 0) { /* a built-in name wins over an argument (upstream checks it first) */
		st->pred_keys[k] = true;
		return;
	}
	const char *why = removed_reason(key);
	if (!arg && why) {
		sk_errors_addf(st->notes, "%s: predicate %s: not carried over: %s", path, key, why);
		return;
	}
	if (!arg) {
		sk_errors_addf(e, "%s.name: predicate type not found for \"%s\"", path, key);
		return;
	}
	static const char *const sa_fields[] = { "labels", NULL };
	static const char *const lp_fields[] = { "labels", "presence", NULL };
	char sub[160];
	if (sa) {
		snprintf(sub, sizeof sub, "%s.serviceAffinity", apath);
		if (check_fields(st, sa, sub, sa_fields, false, e) < 0 || string_list(sa, "labels", sub, e) < 0)
			return;
		args_append_strings(st, &st->service_affinity, "affinityLabels", member(sa, "labels"));
		st->pred_keys[find_producer(predicates, NPREDICATES, "CheckServiceAffinity")] = true;
	} else {
		snprintf(sub, sizeof sub, "%s.labelsPresence", apath);
		bool presence = false;
		if (check_fields(st, lp, sub, lp_fields, false, e) < 0 || string_list(lp, "labels", sub, e) < 0 ||
		    sk_json_bool(lp, "presence", sub, &presence, NULL, e) < 0)
			return;
		args_append_strings(st, &st->node_label, presence ? "presentLabels" : "absentLabels", member(lp, "labels"));
		st->pred_keys[find_producer(predicates, NPREDICATES, "CheckNodeLabelPresence")] = true;
	}
}

/* requestedToCapacityRatioArguments -> RequestedToCapacityRatioArgs{shape, resources}. */
static int decode_rtcr(struct policy_state *st, const cJSON *r, const char *path, struct sk_errors *e)
{
	static const char *const fields[] = { "shape", "resources", NULL };
	static const char *const pt_fields[] = { "utilization", "score", NULL };
	static const char *const res_fields[] = { "name", "weight", NULL };
	if (check_fields(st, r, path, fields, false, e) < 0)
		return -1;
	cJSON *args = cJSON_CreateObject();
	cJSON *shape = args ? cJSON_AddArrayToObject(args, "shape") : NULL;
	cJSON *res = shape ? cJSON_AddArrayToObject(args, "resources") : NULL;
	if (!res) {
		cJSON_Delete(args);
		st->oom = true;
		return -1;
	}
	int rc = 0, i = 0;
	const cJSON *a = member(r, "shape");
	for (const cJSON *pt = a && cJSON_IsArray(a) ? a->child : NULL; pt; pt = pt->next, i++) {
		char pp[256];
		snprintf(pp, sizeof pp, "%s.shape[%d]", path, i);
		int64_t u = 0, s = 0;
		if (!cJSON_IsObject(pt) || check_fields(st, pt, pp, pt_fields, false, e) < 0 ||
		    sk_json_int(pt, "utilization", pp, INT32_MIN, INT32_MAX, &u, NULL, e) < 0 ||
		    sk_json_int(pt, "score", pp, INT32_MIN, INT32_MAX, &s, NULL, e) < 0) {
			if (!cJSON_IsObject(pt))
				sk_errors_addf(e, "%s: Invalid type: expected object", pp);
			rc = -1;
			continue;
		}
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(shape, o) || !cJSON_AddItemToObject(o, "utilization", kube_json_create_int64(u)) ||
		    !cJSON_AddItemToObject(o, "score", kube_json_create_int64(s)))
			st->oom = true;
	}
	if (a && !cJSON_IsArray(a)) {
		sk_errors_addf(e, "%s.shape: Invalid type: expected array", path);
		rc = -1;
	}
	i = 0;
	a = member(r, "resources");
	for (const cJSON *it = a && cJSON_IsArray(a) ? a->child : NULL; it; it = it->next, i++) {
		char pp[256];
		snprintf(pp, sizeof pp, "%s.resources[%d]", path, i);
		const char *name = "";
		int64_t w = 0;
		if (!cJSON_IsObject(it) || check_fields(st, it, pp, res_fields, false, e) < 0 ||
		    required_string(it, "name", pp, &name, e) < 0 || sk_json_int(it, "weight", pp, INT64_MIN, INT64_MAX, &w, NULL, e) < 0) {
			if (!cJSON_IsObject(it))
				sk_errors_addf(e, "%s: Invalid type: expected object", pp);
			rc = -1;
			continue;
		}
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(res, o) || !cJSON_AddStringToObject(o, "name", name) ||
		    !cJSON_AddItemToObject(o, "weight", kube_json_create_int64(w)))
			st->oom = true;
	}
	if (a && !cJSON_IsArray(a)) {
		sk_errors_addf(e, "%s.resources: Invalid type: expected array", path);
		rc = -1;
	}
	if (rc < 0) {
		cJSON_Delete(args);
		return -1;
	}
	cJSON_Delete(st->rtcr);
	st->rtcr = args;
	return 0;
}

/* The custom-priority checks of ValidatePolicy (validateCustomPriorities): one
 * RequestedToCapacityRatio; one weight for all labelPreference priorities and one for all
 * serviceAntiAffinity ones. seen[] holds the index of the first of each kind (-1 = none). */
enum { CUSTOM_LABEL, CUSTOM_ANTI, CUSTOM_RTCR, NCUSTOM };
static const char *const custom_kind[NCUSTOM] = { "LabelPreference", "ServiceAntiAffinity", "RequestedToCapacityRatio" };

/* One PriorityPolicy (ValidatePolicy's weight rule, validatePriority, ProcessPriorityPolicy). */
static void process_priority(struct policy_state *st, const cJSON *list, const cJSON *p, int i, int seen[NCUSTOM],
			     struct sk_errors *e)
{
	char path[48];
	snprintf(path, sizeof path, "priorities[%d]", i);
	static const char *const fields[] = { "name", "weight", "argument", NULL };
	static const char *const arg_fields[] = { "serviceAntiAffinity", "labelPreference", "requestedToCapacityRatioArguments",
						  NULL };
	if (!cJSON_IsObject(p)) {
		sk_errors_addf(e, "%s: Invalid type: expected object", path);
		return;
	}
	const char *name;
	int64_t weight = 0;
	if (check_fields(st, p, path, fields, false, e) < 0 || required_string(p, "name", path, &name, e) < 0 ||
	    sk_json_int(p, "weight", path, INT64_MIN, INT64_MAX, &weight, NULL, e) < 0)
		return;
	int before = e->n;
	if (weight <= 0 || weight >= MAX_WEIGHT)
		sk_errors_addf(e, "%s.weight: priority %s should have a positive weight applied to it or it has overflown", path,
			       name);
	else if (weight > INT32_MAX) /* upstream casts to int32 silently */
		sk_errors_addf(e, "%s.weight: Invalid value: %" PRId64 ": the framework's score weights are int32 (upstream "
			       "truncated this weight)", path, weight);
	const cJSON *arg = member(p, "argument");
	char apath[96];
	snprintf(apath, sizeof apath, "%s.argument", path);
	const cJSON *anti = NULL, *lpref = NULL, *rtcr = NULL;
	if (arg) {
		if (check_fields(st, arg, apath, arg_fields, false, e) < 0)
			return;
		anti = member(arg, "serviceAntiAffinity");
		lpref = member(arg, "labelPreference");
		rtcr = member(arg, "requestedToCapacityRatioArguments");
		int nargs = (anti != NULL) + (lpref != NULL) + (rtcr != NULL);
		if (nargs == 0) {
			sk_errors_addf(e, "%s: no priority arguments set for priority %s", apath, name);
			return;
		}
		if (nargs != 1) {
			sk_errors_addf(e, "%s: exactly 1 priority argument is required, numArgs: %d, priority %s", apath, nargs,
				       name);
			return;
		}
		int kind = lpref ? CUSTOM_LABEL : anti ? CUSTOM_ANTI : CUSTOM_RTCR;
		if (seen[kind] >= 0) {
			const cJSON *first = cJSON_GetArrayItem(list, seen[kind]);
			const char *fname = kube_obj_get_string(first, "name");
			int64_t fw = 0;
			kube_json_get_int64(cJSON_GetObjectItemCaseSensitive(first, "weight"), &fw);
			if (kind == CUSTOM_RTCR)
				sk_errors_addf(e, "%s: priority \"%s\" redeclares custom priority \"%s\", from: \"%s\"", path, name,
					       custom_kind[kind], fname ? fname : "");
			else if (fw != weight)
				sk_errors_addf(e, "%s.weight: %s priority \"%s\" has a different weight with \"%s\"", path,
					       custom_kind[kind], name, fname ? fname : "");
		} else {
			seen[kind] = i;
		}
	}
	if (e->n != before || !strcmp(name, "EqualPriority")) /* EqualPriority: skipped, as upstream */
		return;
	const char *key = !strcmp(name, "ServiceSpreadingPriority") ? "SelectorSpreadPriority" : name;
	int k = find_producer(priorities, NPRIORITIES, key);
	bool custom_key = k >= 0 && (!strcmp(key, "NodeLabel") || !strcmp(key, "ServiceAffinity") ||
				     !strcmp(key, "RequestedToCapacityRatio"));
	if (k < 0 || custom_key) {
		if (!arg) {
			if (custom_key) /* upstream registered these keys and crashed without their arguments */
				sk_errors_addf(e, "%s.name: priority \"%s\" needs an argument (labelPreference, serviceAntiAffinity "
					       "or requestedToCapacityRatioArguments)", path, key);
			else if (removed_reason(key))
				sk_errors_addf(st->notes, "%s: priority %s: not carried over: %s", path, key, removed_reason(key));
			else
				sk_errors_addf(e, "%s.name: priority type not found for \"%s\"", path, key);
			return;
		}
		char sub[160];
		if (anti) {
			static const char *const f[] = { "label", NULL };
			const char *label;
			snprintf(sub, sizeof sub, "%s.serviceAntiAffinity", apath);
			if (check_fields(st, anti, sub, f, false, e) < 0 || required_string(anti, "label", sub, &label, e) < 0)
				return;
			args_append_string(st, &st->service_affinity, "antiAffinityLabelsPreference", label);
			key = "ServiceAffinity";
		} else if (lpref) {
			static const char *const f[] = { "label", "presence", NULL };
			const char *label;
			bool presence = false;
			snprintf(sub, sizeof sub, "%s.labelPreference", apath);
			if (check_fields(st, lpref, sub, f, false, e) < 0 || required_string(lpref, "label", sub, &label, e) < 0 ||
			    sk_json_bool(lpref, "presence", sub, &presence, NULL, e) < 0)
				return;
			args_append_string(st, &st->node_label, presence ? "presentLabelsPreference" : "absentLabelsPreference",
					   label);
			key = "NodeLabel";
		} else {
			snprintf(sub, sizeof sub, "%s.requestedToCapacityRatioArguments", apath);
			if (decode_rtcr(st, rtcr, sub, e) < 0)
				return;
			key = "RequestedToCapacityRatio"; /* custom names are not kept (upstream #83472) */
		}
		k = find_producer(priorities, NPRIORITIES, key);
	}
	st->prio_set[k] = true;
	st->prio_weight[k] = weight; /* a later entry with the same key overwrites */
}

/* ---------- producers ---------- */

static void run_producer(struct policy_state *st, const struct producer *pr, int32_t weight, bool priority,
			 struct legacy_profile *lp)
{
	int64_t n = 1; /* NodeLabel, ServiceAffinity: n * weight (all such priorities share one weight) */
	if (priority && pr->args == PA_NODE_LABEL)
		n = cJSON_GetArraySize(member(st->node_label, "presentLabelsPreference")) +
		    cJSON_GetArraySize(member(st->node_label, "absentLabelsPreference"));
	if (priority && pr->args == PA_SERVICE_AFFINITY)
		n = cJSON_GetArraySize(member(st->service_affinity, "antiAffinityLabelsPreference"));
	if ((int64_t)weight * n > INT32_MAX) { /* upstream's int32 product wrapped */
		sk_errors_addf(st->errs, "priorities: the %s score weight %" PRId64 " (weight %d x %" PRId64 " priorities) "
				      "does not fit the framework's int32 score weight", pr->adds[0].plugin, (int64_t)weight * n,
			       weight, n);
		return;
	}
	int32_t w = (int32_t)((int64_t)weight * n);
	for (int a = 0; a < 4 && pr->adds[a].plugin; a++)
		if (lp_append(lp, pr->adds[a].ep, pr->adds[a].plugin, pr->adds[a].ep == SK_EP_SCORE && priority ? &w : NULL) < 0)
			st->oom = true;
	if (!strcmp(pr->key, "GeneralPredicates"))
		for (size_t a = 0; a < sizeof general_more / sizeof general_more[0]; a++)
			if (lp_append(lp, general_more[a].ep, general_more[a].plugin, NULL) < 0)
				st->oom = true;
	int rc = 0;
	switch (pr->args) {
	case PA_NONE:
		break;
	case PA_NODE_LABEL:
		if (st->node_label)
			rc = lp_config_append(lp, "NodeLabel", st->node_label);
		break;
	case PA_SERVICE_AFFINITY:
		if (st->service_affinity)
			rc = lp_config_append(lp, "ServiceAffinity", st->service_affinity);
		break;
	case PA_IPA:
		if (st->hard_pod_affinity_weight) {
			cJSON *a = cJSON_CreateObject();
			rc = a && cJSON_AddItemToObject(a, "hardPodAffinityWeight", kube_json_create_int64(st->hard_pod_affinity_weight))
				     ? lp_config_append(lp, "InterPodAffinity", a)
				     : -1;
			cJSON_Delete(a);
		}
		break;
	case PA_RTCR:
		if (st->rtcr)
			rc = lp_config_append(lp, "RequestedToCapacityRatio", st->rtcr);
		break;
	case PA_SYSTEM_SPREAD:
	case PA_LIST_SPREAD: {
		if (pr->args == PA_LIST_SPREAD && lp_config_get(lp, "PodTopologySpread"))
			break;
		cJSON *a = cJSON_CreateObject();
		rc = a && cJSON_AddStringToObject(a, "defaultingType", pr->args == PA_SYSTEM_SPREAD ? "System" : "List")
			     ? lp_config_set(lp, "PodTopologySpread", a)
			     : -1;
		cJSON_Delete(a);
		break;
	}
	}
	if (rc < 0)
		st->oom = true;
}

static void decode_top(struct policy_state *st, const cJSON *policy, const cJSON **preds, const cJSON **prios,
		       bool *always, struct sk_errors *e)
{
	static const char *const fields[] = { "predicates", "priorities", "extenders", "hardPodAffinitySymmetricWeight",
					      "alwaysCheckAllPredicates", NULL };
	if (check_fields(st, policy, "", fields, true, e) < 0)
		return;
	const char *kind = kube_obj_get_string(policy, "kind"), *av = kube_obj_get_string(policy, "apiVersion");
	if (kind && strcmp(kind, "Policy"))
		sk_errors_addf(e, "kind: Unsupported value: \"%s\": supported values: \"Policy\"", kind);
	if (av && strcmp(av, "v1"))
		sk_errors_addf(e, "apiVersion: Unsupported value: \"%s\": supported values: \"v1\"", av);
	*preds = member(policy, "predicates");
	*prios = member(policy, "priorities");
	if (*preds && !cJSON_IsArray(*preds)) {
		sk_errors_addf(e, "predicates: Invalid type: expected array");
		*preds = NULL;
	}
	if (*prios && !cJSON_IsArray(*prios)) {
		sk_errors_addf(e, "priorities: Invalid type: expected array");
		*prios = NULL;
	}
	int64_t hw = 0;
	if (sk_json_int(policy, "hardPodAffinitySymmetricWeight", "", INT32_MIN, INT32_MAX, &hw, NULL, e) == 0 &&
	    (hw < 0 || hw > 100))
		sk_err_invalid_int(e, "hardPodAffinitySymmetricWeight", hw, "not in valid range [0-100]");
	st->hard_pod_affinity_weight = (int32_t)hw;
	sk_json_bool(policy, "alwaysCheckAllPredicates", "", always, NULL, e);
}

int sk_policy_translate(const cJSON *policy, cJSON **legacy_profile, cJSON **extenders, bool *always_check_all,
			struct sk_errors *notes, struct sk_errors *errs)
{
	*legacy_profile = NULL;
	*extenders = NULL;
	*always_check_all = false;
	int before = errs->n;
	if (!cJSON_IsObject(policy)) {
		sk_errors_addf(errs, "Policy: Invalid type: expected object");
		return -1;
	}
	struct sk_errors scratch = { 0 };
	struct policy_state st = { .notes = notes ? notes : &scratch, .errs = errs };
	const cJSON *preds = NULL, *prios = NULL;
	decode_top(&st, policy, &preds, &prios, always_check_all, errs);
	if (preds) {
		int i = 0;
		for (const cJSON *p = preds->child; p; p = p->next, i++)
			process_predicate(&st, p, i, errs);
	} else {
		for (int i = 0; default_predicates[i]; i++)
			st.pred_keys[find_producer(predicates, NPREDICATES, default_predicates[i])] = true;
	}
	if (prios) {
		int seen[NCUSTOM] = { -1, -1, -1 }, i = 0;
		for (const cJSON *p = prios->child; p; p = p->next, i++)
			process_priority(&st, prios, p, i, seen, errs);
	} else {
		for (size_t i = 0; i < sizeof default_priorities / sizeof default_priorities[0]; i++) {
			int k = find_producer(priorities, NPRIORITIES, default_priorities[i].key);
			st.prio_set[k] = true;
			st.prio_weight[k] = default_priorities[i].weight;
		}
	}
	cJSON *ext = NULL;
	if (legacy_extenders_to_v1(member(policy, "extenders"), &ext, st.notes, errs) < 0)
		st.oom = st.oom || errs->n == before;
	struct legacy_profile lp = { 0 };
	if (errs->n == before && !st.oom && lp_init(&lp, "default-scheduler") == 0) {
		/* Fixed plugins that were never predicates or priorities (createFromConfig). */
		if (lp_append(&lp, SK_EP_QUEUE_SORT, "PrioritySort", NULL) < 0 ||
		    lp_append(&lp, SK_EP_POST_FILTER, "DefaultPreemption", NULL) < 0 ||
		    lp_append(&lp, SK_EP_BIND, "DefaultBinder", NULL) < 0)
			st.oom = true;
		/* The mandatory predicates, then every producer in predicateOrdering. */
		st.pred_keys[find_producer(predicates, NPREDICATES, "PodToleratesNodeTaints")] = true;
		st.pred_keys[find_producer(predicates, NPREDICATES, "CheckNodeUnschedulable")] = true;
		for (int k = 0; k < NPREDICATES; k++)
			if (st.pred_keys[k])
				run_producer(&st, &predicates[k], 0, false, &lp);
		for (int k = 0; k < NPRIORITIES; k++)
			if (st.prio_set[k])
				run_producer(&st, &priorities[k], (int32_t)st.prio_weight[k], true, &lp);
	} else if (errs->n == before) {
		st.oom = true;
	}
	if (*always_check_all)
		sk_errors_addf(st.notes, "alwaysCheckAllPredicates: not carried over: v1 has no such option; filtering a node "
				      "stops at its first failing filter, so placements are the same and only the "
				      "reported failure reasons are fewer");
	cJSON_Delete(st.node_label);
	cJSON_Delete(st.service_affinity);
	cJSON_Delete(st.rtcr);
	sk_errors_free(&scratch);
	if (st.oom && errs->n == before)
		sk_errors_addf(errs, "Policy: out of memory");
	if (errs->n != before) {
		lp_free(&lp);
		cJSON_Delete(ext);
		return -1;
	}
	*legacy_profile = lp_take(&lp);
	*extenders = ext;
	return 0;
}
