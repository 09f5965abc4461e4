/* Step 2 of scheduler/config/legacy.h: a complete v1.22-era profile as a v1 profile, and the two
 * algorithm providers (pkg/scheduler/algorithmprovider/registry.go as of v1.22) as step-1
 * profiles. What left the API is replaced by its v1 form where one exists (the score plugins by
 * NodeResourcesFit's scoringStrategy, NodeLabel by NodeAffinityArgs.addedAffinity, SelectorSpread
 * by PodTopologySpread's system defaults) and named in the notes otherwise. The rules and their
 * reasons: docs/config.md, "Legacy Policy and convert". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "scheduler/config/legacy.h"
#include "scheduler/config/legacy_internal.h"
#include "scheduler/framework/registry.h"

/* ---------- providers ---------- */

const char *const sk_provider_names[] = { "DefaultProvider", "ClusterAutoscalerProvider", NULL };

struct provider_entry {
	enum sk_ext_point ep;
	const char *plugin;
	int32_t weight; /* score only; 0 = none */
};

static const struct provider_entry default_provider[] = {
	{ SK_EP_QUEUE_SORT, "PrioritySort", 0 },
	{ SK_EP_PRE_FILTER, "NodeResourcesFit", 0 },
	{ SK_EP_PRE_FILTER, "NodePorts", 0 },
	{ SK_EP_PRE_FILTER, "PodTopologySpread", 0 },
	{ SK_EP_PRE_FILTER, "InterPodAffinity", 0 },
	{ SK_EP_PRE_FILTER, "VolumeBinding", 0 },
	{ SK_EP_PRE_FILTER, "NodeAffinity", 0 },
	{ SK_EP_FILTER, "NodeUnschedulable", 0 },
	{ SK_EP_FILTER, "NodeName", 0 },
	{ SK_EP_FILTER, "TaintToleration", 0 },
	{ SK_EP_FILTER, "NodeAffinity", 0 },
	{ SK_EP_FILTER, "NodePorts", 0 },
	{ SK_EP_FILTER, "NodeResourcesFit", 0 },
	{ SK_EP_FILTER, "VolumeRestrictions", 0 },
	{ SK_EP_FILTER, "EBSLimits", 0 },
	{ SK_EP_FILTER, "GCEPDLimits", 0 },
	{ SK_EP_FILTER, "NodeVolumeLimits", 0 },
	{ SK_EP_FILTER, "AzureDiskLimits", 0 },
	{ SK_EP_FILTER, "VolumeBinding", 0 },
	{ SK_EP_FILTER, "VolumeZone", 0 },
	{ SK_EP_FILTER, "PodTopologySpread", 0 },
	{ SK_EP_FILTER, "InterPodAffinity", 0 },
	{ SK_EP_POST_FILTER, "DefaultPreemption", 0 },
	{ SK_EP_PRE_SCORE, "InterPodAffinity", 0 },
	{ SK_EP_PRE_SCORE, "PodTopologySpread", 0 },
	{ SK_EP_PRE_SCORE, "TaintToleration", 0 },
	{ SK_EP_PRE_SCORE, "NodeAffinity", 0 },
	{ SK_EP_SCORE, "NodeResourcesBalancedAllocation", 1 },
	{ SK_EP_SCORE, "ImageLocality", 1 },
	{ SK_EP_SCORE, "InterPodAffinity", 1 },
	{ SK_EP_SCORE, "NodeResourcesLeastAllocated", 1 }, /* ClusterAutoscalerProvider: NodeResourcesMostAllocated */
	{ SK_EP_SCORE, "NodeAffinity", 1 },
	{ SK_EP_SCORE, "NodePreferAvoidPods", 10000 },
	{ SK_EP_SCORE, "PodTopologySpread", 2 },
	{ SK_EP_SCORE, "TaintToleration", 1 },
	{ SK_EP_RESERVE, "VolumeBinding", 0 },
	{ SK_EP_PRE_BIND, "VolumeBinding", 0 },
	{ SK_EP_BIND, "DefaultBinder", 0 },
};

cJSON *sk_provider_profile(const char *provider)
{
	bool autoscaler;
	if (provider && !strcmp(provider, "DefaultProvider"))
		autoscaler = false;
	else if (provider && !strcmp(provider, "ClusterAutoscalerProvider"))
		autoscaler = true;
	else
		return NULL;
	struct legacy_profile lp;
	if (lp_init(&lp, "default-scheduler") < 0)
		return NULL;
	for (size_t i = 0; i < sizeof default_provider / sizeof default_provider[0]; i++) {
		const struct provider_entry *pe = &default_provider[i];
		const char *name = pe->plugin;
		if (autoscaler && !strcmp(name, "NodeResourcesLeastAllocated"))
			name = "NodeResourcesMostAllocated";
		if (lp_append(&lp, pe->ep, name, pe->weight ? &pe->weight : NULL) < 0) {
			lp_free(&lp);
			return NULL;
		}
	}
	return lp_take(&lp);
}

/* ---------- step 2 ---------- */

/* What a pre-v1 plugin name becomes. */
enum rename_kind {
	RN_KEEP,
	RN_FIT_STRATEGY,   /* NodeResources{Least,Most}Allocated, RequestedToCapacityRatio */
	RN_NODE_LABEL,     /* NodeLabel -> NodeAffinity + addedAffinity */
	RN_SPREAD,         /* SelectorSpread, DefaultPodTopologySpread -> PodTopologySpread (System) */
	RN_VOLUME_LIMITS,  /* EBSLimits, ... -> NodeVolumeLimits */
	RN_DROP,           /* no v1 equivalent */
};

static const struct {
	const char *name;
	enum rename_kind kind;
	const char *detail; /* strategy type, or the reason a plugin is dropped */
} renames[] = {
	{ "NodeResourcesLeastAllocated", RN_FIT_STRATEGY, "LeastAllocated" },
	{ "NodeResourcesMostAllocated", RN_FIT_STRATEGY, "MostAllocated" },
	{ "RequestedToCapacityRatio", RN_FIT_STRATEGY, "RequestedToCapacityRatio" },
	{ "NodeLabel", RN_NODE_LABEL, NULL },
	{ "SelectorSpread", RN_SPREAD, NULL },
	{ "DefaultPodTopologySpread", RN_SPREAD, NULL },
	{ "EBSLimits", RN_VOLUME_LIMITS, NULL },
	{ "GCEPDLimits", RN_VOLUME_LIMITS, NULL },
	{ "AzureDiskLimits", RN_VOLUME_LIMITS, NULL },
	{ "CinderLimits", RN_VOLUME_LIMITS, NULL },
	{ "ServiceAffinity", RN_DROP,
	  "the ServiceAffinity plugin is not in the v1 API and nothing in v1 reproduces it from the scheduler's side; "
	  "give the service's pods podAffinity (or podAntiAffinity for antiAffinityLabelsPreference) on the same "
	  "topology labels" },
	{ "NodePreferAvoidPods", RN_DROP,
	  "the NodePreferAvoidPods plugin and the node annotation scheduler.alpha.kubernetes.io/preferAvoidPods it read "
	  "are not in the v1 API; use a PreferNoSchedule taint on those nodes (TaintToleration scores it)" },
};

static int rename_of(const char *name)
{
	for (size_t i = 0; i < sizeof renames / sizeof renames[0]; i++)
		if (!strcmp(renames[i].name, name))
			return (int)i;
	return -1;
}

struct v1_state {
	const cJSON *in_config;      /* the legacy pluginConfig */
	const cJSON *strategy_entry; /* the score entry whose strategy NodeResourcesFit takes */
	struct legacy_profile out;   /* built like a legacy profile, then wrapped as v1 */
	const char *fit_strategy;    /* the old plugin whose strategy NodeResourcesFit got */
	bool noted_drop[sizeof renames / sizeof renames[0]];
	bool node_label_filter, node_label_score, spread, oom;
	struct sk_errors *notes;
};

static const cJSON *in_args(const struct v1_state *st, const char *name)
{
	for (const cJSON *e = cJSON_IsArray(st->in_config) ? st->in_config->child : NULL; e; e = e->next)
		if (!strcmp(kube_obj_get_string(e, "name") ? kube_obj_get_string(e, "name") : "", name))
			return cJSON_GetObjectItemCaseSensitive(e, "args");
	return NULL;
}

/* args without apiVersion/kind (old kinds carry an old apiVersion; the v1 loader knows the kind
 * from the plugin name). */
static cJSON *strip_type_meta(const cJSON *args)
{
	cJSON *c = args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
	if (c && cJSON_IsObject(c)) {
		cJSON_DeleteItemFromObjectCaseSensitive(c, "apiVersion");
		cJSON_DeleteItemFromObjectCaseSensitive(c, "kind");
	}
	return c;
}

/* The output args of name, created empty when absent (borrowed). */
static cJSON *out_args(struct v1_state *st, const char *name)
{
	const cJSON *a = lp_config_get(&st->out, name);
	if (!a) {
		cJSON *init = strip_type_meta(in_args(st, name));
		if (!init || lp_config_append(&st->out, name, init) < 0) {
			cJSON_Delete(init);
			st->oom = true;
			return NULL;
		}
		cJSON_Delete(init);
		a = lp_config_get(&st->out, name);
	}
	return (cJSON *)a;
}

static void set_item(struct v1_state *st, cJSON *obj, const char *k, cJSON *v)
{
	if (!obj || !v) {
		cJSON_Delete(v);
		st->oom = true;
		return;
	}
	if (cJSON_GetObjectItemCaseSensitive(obj, k))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, k, v);
	else
		cJSON_AddItemToObject(obj, k, v);
}

/* NodeResources{Least,Most}Allocated / RequestedToCapacityRatio at score -> NodeResourcesFit
 * (PreScore and Score) with scoringStrategy {type, resources, requestedToCapacityRatio.shape}. */
static void fit_strategy(struct v1_state *st, const cJSON *entry, const char *old, const char *type, const int32_t *weight)
{
	if (entry != st->strategy_entry) {
		sk_errors_addf(st->notes, "plugin %s: not carried over: NodeResourcesFit scores with one strategy and takes "
				      "%s's (the larger weight, the later on a tie)", old,
			       kube_obj_get_string(st->strategy_entry, "name"));
		return;
	}
	st->fit_strategy = old;
	if (lp_append(&st->out, SK_EP_PRE_SCORE, "NodeResourcesFit", NULL) < 0 ||
	    lp_append(&st->out, SK_EP_SCORE, "NodeResourcesFit", weight) < 0) {
		st->oom = true;
		return;
	}
	const cJSON *oa = in_args(st, old);
	cJSON *fit = out_args(st, "NodeResourcesFit");
	if (!fit)
		return;
	if (cJSON_GetObjectItemCaseSensitive(fit, "scoringStrategy"))
		sk_errors_addf(st->notes, "pluginConfig NodeResourcesFit: its scoringStrategy is replaced by %s's", old);
	cJSON *ss = cJSON_CreateObject();
	set_item(st, ss, "type", cJSON_CreateString(type));
	const cJSON *res = oa ? cJSON_GetObjectItemCaseSensitive(oa, "resources") : NULL;
	if (res && cJSON_IsArray(res) && cJSON_GetArraySize(res) > 0)
		set_item(st, ss, "resources", cJSON_Duplicate(res, 1));
	const cJSON *shape = oa ? cJSON_GetObjectItemCaseSensitive(oa, "shape") : NULL;
	if (!strcmp(type, "RequestedToCapacityRatio")) {
		cJSON *r = cJSON_CreateObject();
		set_item(st, r, "shape", shape ? cJSON_Duplicate(shape, 1) : cJSON_CreateArray());
		set_item(st, ss, "requestedToCapacityRatio", r);
	}
	set_item(st, fit, "scoringStrategy", ss);
}

static cJSON *label_expr(const char *key, bool present)
{
	cJSON *e = cJSON_CreateObject();
	if (!e || !cJSON_AddStringToObject(e, "key", key) ||
	    !cJSON_AddStringToObject(e, "operator", present ? "Exists" : "DoesNotExist")) {
		cJSON_Delete(e);
		return NULL;
	}
	return e;
}

/* NodeLabelArgs presentLabels/absentLabels -> NodeAffinityArgs.addedAffinity required terms (each
 * existing term gets the expressions, ANDed; one term when there is none). */
static void node_label_filter(struct v1_state *st, const cJSON *nl, cJSON *added)
{
	cJSON *req = cJSON_GetObjectItemCaseSensitive(added, "requiredDuringSchedulingIgnoredDuringExecution");
	if (!req) {
		req = cJSON_AddObjectToObject(added, "requiredDuringSchedulingIgnoredDuringExecution");
		cJSON *terms = req ? cJSON_AddArrayToObject(req, "nodeSelectorTerms") : NULL;
		if (!terms || !cJSON_AddItemToArray(terms, cJSON_CreateObject())) {
			st->oom = true;
			return;
		}
	}
	cJSON *terms = cJSON_GetObjectItemCaseSensitive(req, "nodeSelectorTerms");
	for (cJSON *t = terms ? terms->child : NULL; t; t = t->next) {
		cJSON *me = cJSON_GetObjectItemCaseSensitive(t, "matchExpressions");
		if (!me && !(me = cJSON_AddArrayToObject(t, "matchExpressions"))) {
			st->oom = true;
			return;
		}
		for (int pres = 1; pres >= 0; pres--) {
			const cJSON *labels = cJSON_GetObjectItemCaseSensitive(nl, pres ? "presentLabels" : "absentLabels");
			for (const cJSON *l = labels ? labels->child : NULL; l; l = l->next)
				if (cJSON_IsString(l) && !cJSON_AddItemToArray(me, label_expr(l->valuestring, pres)))
					st->oom = true;
		}
	}
}

/* presentLabelsPreference/absentLabelsPreference -> addedAffinity preferred terms, weight 1 each. */
static void node_label_score(struct v1_state *st, const cJSON *nl, cJSON *added)
{
	cJSON *pref = cJSON_GetObjectItemCaseSensitive(added, "preferredDuringSchedulingIgnoredDuringExecution");
	if (!pref && !(pref = cJSON_AddArrayToObject(added, "preferredDuringSchedulingIgnoredDuringExecution"))) {
		st->oom = true;
		return;
	}
	for (int pres = 1; pres >= 0; pres--) {
		const cJSON *labels = cJSON_GetObjectItemCaseSensitive(nl, pres ? "presentLabelsPreference" : "absentLabelsPreference");
		for (const cJSON *l = labels ? labels->child : NULL; l; l = l->next) {
			cJSON *term = cJSON_CreateObject(), *p = term ? cJSON_AddObjectToObject(term, "preference") : NULL;
			cJSON *me = p ? cJSON_AddArrayToObject(p, "matchExpressions") : NULL;
			if (!me || !cJSON_IsString(l) || !cJSON_AddItemToArray(me, label_expr(l->valuestring, pres)) ||
			    !cJSON_AddNumberToObject(term, "weight", 1) || !cJSON_AddItemToArray(pref, term)) {
				cJSON_Delete(term);
				st->oom = st->oom || cJSON_IsString(l);
			}
		}
	}
}

static void node_label(struct v1_state *st, enum sk_ext_point ep, const int32_t *weight, bool had_affinity_filter)
{
	bool filter = ep == SK_EP_FILTER;
	if (filter ? st->node_label_filter : st->node_label_score)
		return;
	const cJSON *nl = in_args(st, "NodeLabel");
	if (lp_append(&st->out, filter ? SK_EP_PRE_FILTER : SK_EP_PRE_SCORE, "NodeAffinity", NULL) < 0 ||
	    lp_append(&st->out, ep, "NodeAffinity", filter ? NULL : weight) < 0) {
		st->oom = true;
		return;
	}
	cJSON *na = out_args(st, "NodeAffinity");
	cJSON *added = na ? cJSON_GetObjectItemCaseSensitive(na, "addedAffinity") : NULL;
	if (na && !added)
		added = cJSON_AddObjectToObject(na, "addedAffinity");
	if (!added) {
		st->oom = true;
		return;
	}
	if (filter) {
		st->node_label_filter = true;
		node_label_filter(st, nl, added);
		if (!had_affinity_filter)
			sk_errors_addf(st->notes, "plugin NodeLabel (filter): carried over as NodeAffinity addedAffinity; "
					      "NodeAffinity now also enforces each pod's own nodeSelector and node affinity");
	} else {
		st->node_label_score = true;
		node_label_score(st, nl, added);
		sk_errors_addf(st->notes, "plugin NodeLabel (score): approximated as NodeAffinity addedAffinity preferred "
				      "terms (weight 1 per label): NodeAffinity normalizes to the best node and adds the "
				      "pod's own preferences, where NodeLabel scored matched/total labels");
	}
}

static bool has_plugin(const cJSON *set, const char *name)
{
	const cJSON *en = set ? cJSON_GetObjectItemCaseSensitive(set, "enabled") : NULL;
	for (const cJSON *e = en ? en->child : NULL; e; e = e->next)
		if (!strcmp(kube_obj_get_string(e, "name") ? kube_obj_get_string(e, "name") : "", name))
			return true;
	return false;
}

static void convert_entry(struct v1_state *st, enum sk_ext_point ep, const cJSON *entry, const cJSON *plugins)
{
	const char *name = kube_obj_get_string(entry, "name");
	if (!name)
		return;
	int64_t w64 = 0;
	const cJSON *wj = cJSON_GetObjectItemCaseSensitive(entry, "weight");
	bool has_w = wj && kube_json_get_int64(wj, &w64) == 0;
	int32_t w = (int32_t)w64;
	const int32_t *weight = has_w ? &w : NULL;
	int r = rename_of(name);
	enum rename_kind kind = r < 0 ? RN_KEEP : renames[r].kind;
	switch (kind) {
	case RN_KEEP: {
		const struct sk_plugin_desc *d = sk_registry_lookup(name);
		if (d && !sk_desc_implements(d, ep)) { /* e.g. a PreFilter later upstream versions added */
			sk_errors_addf(st->notes, "plugin %s at %s: left out: this build's %s does not implement %s", name,
				       LP_FIELD(ep), name, LP_FIELD(ep));
			return;
		}
		if (lp_append(&st->out, ep, name, ep == SK_EP_SCORE ? weight : NULL) < 0)
			st->oom = true;
		return;
	}
	case RN_FIT_STRATEGY:
		if (ep == SK_EP_SCORE)
			fit_strategy(st, entry, name, renames[r].detail, weight);
		return;
	case RN_NODE_LABEL:
		if (ep == SK_EP_FILTER || ep == SK_EP_SCORE)
			node_label(st, ep, weight,
				   has_plugin(cJSON_GetObjectItemCaseSensitive(plugins, LP_FIELD(SK_EP_FILTER)), "NodeAffinity"));
		return;
	case RN_SPREAD:
		if (ep != SK_EP_PRE_SCORE && ep != SK_EP_SCORE)
			return;
		if (lp_append(&st->out, ep, "PodTopologySpread", ep == SK_EP_SCORE ? weight : NULL) < 0)
			st->oom = true;
		if (!st->spread) {
			st->spread = true;
			sk_errors_addf(st->notes, "plugin %s: replaced by PodTopologySpread with the system default "
					      "constraints (defaultingType System), its successor upstream", name);
			cJSON *pts = out_args(st, "PodTopologySpread");
			if (pts && !cJSON_GetObjectItemCaseSensitive(pts, "defaultingType"))
				set_item(st, pts, "defaultingType", cJSON_CreateString("System"));
		}
		return;
	case RN_VOLUME_LIMITS:
		if (ep != SK_EP_FILTER)
			return;
		if (!st->noted_drop[r])
			sk_errors_addf(st->notes, "plugin %s: not in the v1 API: in-tree volume plugins are migrated to CSI "
					      "drivers, whose attach limits NodeVolumeLimits enforces (kept in its place)", name);
		st->noted_drop[r] = true;
		if (lp_append(&st->out, ep, "NodeVolumeLimits", NULL) < 0)
			st->oom = true;
		return;
	case RN_DROP:
		if (!st->noted_drop[r])
			sk_errors_addf(st->notes, "plugin %s: not carried over: %s", name, renames[r].detail);
		st->noted_drop[r] = true;
		return;
	}
}

/* pluginConfig entries of plugins that are not renamed: copied without their old type meta. */
static void copy_other_args(struct v1_state *st)
{
	for (const cJSON *e = cJSON_IsArray(st->in_config) ? st->in_config->child : NULL; e; e = e->next) {
		const char *name = kube_obj_get_string(e, "name");
		if (!name)
			continue;
		int r = rename_of(name);
		if (r >= 0) {
			if (renames[r].kind == RN_FIT_STRATEGY && st->fit_strategy && !strcmp(st->fit_strategy, name))
				continue;
			if (renames[r].kind == RN_NODE_LABEL && (st->node_label_filter || st->node_label_score))
				continue;
			sk_errors_addf(st->notes, "pluginConfig %s: not carried over: the plugin is not in the v1 API%s", name,
				       renames[r].kind == RN_FIT_STRATEGY ? " and it does not score in this profile" : "");
			continue;
		}
		if (!lp_config_get(&st->out, name) && !out_args(st, name))
			return;
	}
}

/* Appends {"name": name} to arr (NULL arr: false). */
static bool add_named(cJSON *arr, const char *name)
{
	cJSON *o = arr ? cJSON_CreateObject() : NULL;
	if (!o || !cJSON_AddStringToObject(o, "name", name) || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o); /* cJSON_AddItemToArray fails only before attaching */
		return false;
	}
	return true;
}

/* The v1 plugins object: multiPoint disables every default; each point lists its plugins. A
 * queueSort of PrioritySort alone stays in multiPoint (as in v1's defaults): upstream requires the
 * same queueSort PluginSet in every profile, and a profile that names it at queueSort itself
 * would differ from the default profiles beside it. */
static cJSON *v1_plugins(struct v1_state *st)
{
	cJSON *built = cJSON_GetObjectItemCaseSensitive(st->out.root, "plugins");
	const cJSON *qs = kube_obj_get(cJSON_GetObjectItemCaseSensitive(built, LP_FIELD(SK_EP_QUEUE_SORT)), "enabled");
	bool qs_multi = cJSON_GetArraySize(qs) == 1 && !strcmp(kube_obj_get_string(qs->child, "name") ?
							      kube_obj_get_string(qs->child, "name") : "", "PrioritySort");
	cJSON *p = cJSON_CreateObject();
	cJSON *mp = p ? cJSON_AddObjectToObject(p, "multiPoint") : NULL;
	if (!mp || (qs_multi && !add_named(cJSON_AddArrayToObject(mp, "enabled"), "PrioritySort")) ||
	    !add_named(cJSON_AddArrayToObject(mp, "disabled"), "*")) {
		cJSON_Delete(p);
		return NULL;
	}
	for (int ep = 0; ep < SK_EP_COUNT; ep++) {
		cJSON *set = cJSON_GetObjectItemCaseSensitive(built, LP_FIELD(ep));
		cJSON *en = set ? cJSON_GetObjectItemCaseSensitive(set, "enabled") : NULL;
		if (!en || !cJSON_GetArraySize(en) || (ep == SK_EP_QUEUE_SORT && qs_multi))
			continue;
		cJSON *c = cJSON_Duplicate(set, 1);
		if (!c || !cJSON_AddItemToObject(p, LP_FIELD(ep), c)) {
			cJSON_Delete(c);
			cJSON_Delete(p);
			return NULL;
		}
	}
	return p;
}

/* NodeResourcesFit holds one scoring strategy: of several old resource score plugins, the one
 * with the largest weight (the later one on a tie: a user's plugin comes after the defaults). */
static const cJSON *pick_strategy(const cJSON *score_set)
{
	const cJSON *en = score_set ? cJSON_GetObjectItemCaseSensitive(score_set, "enabled") : NULL;
	const cJSON *best = NULL;
	int64_t best_w = 0;
	for (const cJSON *e = cJSON_IsArray(en) ? en->child : NULL; e; e = e->next) {
		int r = rename_of(kube_obj_get_string(e, "name") ? kube_obj_get_string(e, "name") : "");
		if (r < 0 || renames[r].kind != RN_FIT_STRATEGY)
			continue;
		int64_t w = 1;
		kube_json_get_int64(cJSON_GetObjectItemCaseSensitive(e, "weight"), &w);
		if (!best || w >= best_w) {
			best = e;
			best_w = w;
		}
	}
	return best;
}

cJSON *sk_legacy_profile_to_v1(const cJSON *legacy_profile, struct sk_errors *notes, struct sk_errors *errs)
{
	struct sk_errors scratch = { 0 };
	struct v1_state st = { .notes = notes ? notes : &scratch };
	const char *name = kube_obj_get_string(legacy_profile, "schedulerName");
	const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(legacy_profile, "plugins");
	st.in_config = cJSON_GetObjectItemCaseSensitive(legacy_profile, "pluginConfig");
	if (lp_init(&st.out, name ? name : "default-scheduler") < 0) {
		sk_errors_addf(errs, "out of memory");
		return NULL;
	}
	/* SchedulingGates: no predicate or priority, but v1 pods rely on it (spec.schedulingGates);
	 * without it a gated pod would be scheduled. */
	const cJSON *pe = cJSON_GetObjectItemCaseSensitive(plugins, LP_FIELD(SK_EP_PRE_ENQUEUE));
	if (!has_plugin(pe, "SchedulingGates") && lp_append(&st.out, SK_EP_PRE_ENQUEUE, "SchedulingGates", NULL) < 0)
		st.oom = true;
	st.strategy_entry = pick_strategy(cJSON_GetObjectItemCaseSensitive(plugins, LP_FIELD(SK_EP_SCORE)));
	for (int ep = 0; ep < SK_EP_COUNT; ep++) {
		const cJSON *set = cJSON_GetObjectItemCaseSensitive(plugins, LP_FIELD(ep));
		const cJSON *en = set ? cJSON_GetObjectItemCaseSensitive(set, "enabled") : NULL;
		for (const cJSON *e = cJSON_IsArray(en) ? en->child : NULL; e; e = e->next)
			convert_entry(&st, (enum sk_ext_point)ep, e, plugins);
	}
	copy_other_args(&st);
	cJSON *out = NULL;
	if (!st.oom) {
		cJSON *p = v1_plugins(&st);
		out = p ? cJSON_CreateObject() : NULL;
		cJSON *pc = cJSON_DetachItemFromObjectCaseSensitive(st.out.root, "pluginConfig");
		if (!out || !cJSON_AddStringToObject(out, "schedulerName", name ? name : "default-scheduler") ||
		    !cJSON_AddItemToObject(out, "plugins", p)) {
			if (out && !cJSON_GetObjectItemCaseSensitive(out, "plugins"))
				cJSON_Delete(p);
			cJSON_Delete(out);
			cJSON_Delete(pc);
			out = NULL;
		} else if (cJSON_GetArraySize(pc) > 0) {
			cJSON_AddItemToObject(out, "pluginConfig", pc);
		} else {
			cJSON_Delete(pc);
		}
	}
	lp_free(&st.out);
	sk_errors_free(&scratch);
	if (!out)
		sk_errors_addf(errs, "out of memory");
	return out;
}
