/* `schedkit-scheduler convert`: an old KubeSchedulerConfiguration (v1beta1, v1beta2, v1beta3; v1
 * passes through the same renames) plus an optional Policy, written as a v1 file. Upstream removed
 * algorithmSource, the Policy API and the renamed plugins without a migration path
 * (pkg/scheduler/apis/config/v1beta1, v1beta2 defaults and conversion; docs/config.md, "Legacy
 * Policy and convert"). v1beta1 and v1beta2 profiles are merged with their version's defaults and
 * written as complete plugin sets, so their old default weights and order are kept; v1beta3
 * profiles are v1 profiles already and only lose what v1 removed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/config/config.h"
#include "scheduler/config/legacy.h"
#include "scheduler/config/legacy_internal.h"

#define V1 "kubescheduler.config.k8s.io/v1"

/* The v1beta2 default plugins (pkg/scheduler/apis/config/v1beta2/default_plugins.go as of v1.23,
 * feature gates at their defaults; later releases added PreFilter entries this build's plugins
 * do not have). */
static cJSON *v1beta2_defaults(void)
{
	static const struct {
		enum sk_ext_point ep;
		const char *plugin;
		int32_t weight;
	} t[] = {
		{ SK_EP_QUEUE_SORT, "PrioritySort", 0 },      { SK_EP_PRE_FILTER, "NodeResourcesFit", 0 },
		{ SK_EP_PRE_FILTER, "NodePorts", 0 },         { SK_EP_PRE_FILTER, "VolumeRestrictions", 0 },
		{ SK_EP_PRE_FILTER, "PodTopologySpread", 0 }, { SK_EP_PRE_FILTER, "InterPodAffinity", 0 },
		{ SK_EP_PRE_FILTER, "VolumeBinding", 0 },     { SK_EP_PRE_FILTER, "NodeAffinity", 0 },
		{ SK_EP_FILTER, "NodeUnschedulable", 0 },     { SK_EP_FILTER, "NodeName", 0 },
		{ SK_EP_FILTER, "TaintToleration", 0 },       { SK_EP_FILTER, "NodeAffinity", 0 },
		{ SK_EP_FILTER, "NodePorts", 0 },             { SK_EP_FILTER, "NodeResourcesFit", 0 },
		{ SK_EP_FILTER, "VolumeRestrictions", 0 },    { SK_EP_FILTER, "EBSLimits", 0 },
		{ SK_EP_FILTER, "GCEPDLimits", 0 },           { SK_EP_FILTER, "NodeVolumeLimits", 0 },
		{ SK_EP_FILTER, "AzureDiskLimits", 0 },       { SK_EP_FILTER, "VolumeBinding", 0 },
		{ SK_EP_FILTER, "VolumeZone", 0 },            { SK_EP_FILTER, "PodTopologySpread", 0 },
		{ SK_EP_FILTER, "InterPodAffinity", 0 },      { SK_EP_POST_FILTER, "DefaultPreemption", 0 },
		{ SK_EP_PRE_SCORE, "InterPodAffinity", 0 },   { SK_EP_PRE_SCORE, "PodTopologySpread", 0 },
		{ SK_EP_PRE_SCORE, "TaintToleration", 0 },    { SK_EP_PRE_SCORE, "NodeAffinity", 0 },
		{ SK_EP_SCORE, "NodeResourcesBalancedAllocation", 1 }, { SK_EP_SCORE, "ImageLocality", 1 },
		{ SK_EP_SCORE, "InterPodAffinity", 1 },       { SK_EP_SCORE, "NodeResourcesFit", 1 },
		{ SK_EP_SCORE, "NodeAffinity", 1 },           { SK_EP_SCORE, "PodTopologySpread", 2 },
		{ SK_EP_SCORE, "TaintToleration", 1 },        { SK_EP_RESERVE, "VolumeBinding", 0 },
		{ SK_EP_PRE_BIND, "VolumeBinding", 0 },       { SK_EP_BIND, "DefaultBinder", 0 },
	};
	struct legacy_profile lp;
	if (lp_init(&lp, "default-scheduler") < 0)
		return NULL;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (lp_append(&lp, t[i].ep, t[i].plugin, t[i].weight ? &t[i].weight : NULL) < 0) {
			lp_free(&lp);
			return NULL;
		}
	return lp_take(&lp);
}

/* Top-level fields v1 still has, copied as they are. */
static const char *const kept_fields[] = { "parallelism", "leaderElection", "clientConnection", "enableProfiling",
					   "enableContentionProfiling", "percentageOfNodesToScore",
					   "podInitialBackoffSeconds", "podMaxBackoffSeconds", "extenders",
					   "delayCacheUntilActive", NULL };

/* v1.20-v1.22 plugin names that v1 has no more, for v1beta3/v1 profiles (the older versions go
 * through sk_legacy_profile_to_v1). */
static const char *const removed_v1beta3[] = { "NodeLabel", "ServiceAffinity", "NodePreferAvoidPods", "SelectorSpread",
					       "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits",
					       "NodeResourcesLeastAllocated", "NodeResourcesMostAllocated",
					       "RequestedToCapacityRatio", NULL };

static bool in_list(const char *s, const char *const *l)
{
	for (int i = 0; s && l[i]; i++)
		if (!strcmp(s, l[i]))
			return true;
	return false;
}

/* A v1beta1/v1beta2 profile merged with base (per extension point, the old mergePluginSet) as a
 * step-1 profile. */
static cJSON *merged_profile(const cJSON *user, const cJSON *base, int pi, struct sk_errors *errs)
{
	static const char *const fields[] = { "schedulerName", "plugins", "pluginConfig", NULL };
	char path[32];
	snprintf(path, sizeof path, "profiles[%d]", pi);
	if (sk_json_check_object(user, path, fields, false, errs) < 0)
		return NULL;
	const cJSON *uplugins = cJSON_GetObjectItemCaseSensitive(user, "plugins");
	if (uplugins && cJSON_GetObjectItemCaseSensitive(uplugins, "multiPoint")) {
		sk_errors_addf(errs, "profiles[%d].plugins.multiPoint: not in this version (multiPoint came with v1beta3)", pi);
		return NULL;
	}
	cJSON *p = cJSON_CreateObject();
	const char *name = kube_obj_get_string(user, "schedulerName");
	cJSON *plugins = p ? cJSON_AddObjectToObject(p, "plugins") : NULL;
	if (!plugins || !cJSON_AddStringToObject(p, "schedulerName", name ? name : "default-scheduler")) {
		cJSON_Delete(p);
		return NULL;
	}
	const cJSON *bplugins = cJSON_GetObjectItemCaseSensitive(base, "plugins");
	for (int ep = 0; ep < SK_EP_COUNT; ep++) {
		cJSON *m = legacy_merge_plugin_set(cJSON_GetObjectItemCaseSensitive(bplugins, LP_FIELD(ep)),
						   cJSON_GetObjectItemCaseSensitive(uplugins, LP_FIELD(ep)));
		if (!m || !cJSON_AddItemToObject(plugins, LP_FIELD(ep), m)) {
			cJSON_Delete(m);
			cJSON_Delete(p);
			return NULL;
		}
	}
	const cJSON *pc = cJSON_GetObjectItemCaseSensitive(user, "pluginConfig");
	cJSON *c = pc ? cJSON_Duplicate(pc, 1) : cJSON_CreateArray();
	if (!c || !cJSON_AddItemToObject(p, "pluginConfig", c)) {
		cJSON_Delete(c);
		cJSON_Delete(p);
		return NULL;
	}
	return p;
}

static const char *strategy_of(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "NodeResourcesLeastAllocated"))
		return "LeastAllocated";
	if (!strcmp(name, "NodeResourcesMostAllocated"))
		return "MostAllocated";
	if (!strcmp(name, "RequestedToCapacityRatio"))
		return "RequestedToCapacityRatio";
	return NULL;
}

static cJSON *plugin_config_entry(cJSON *profile, const char *name, bool create)
{
	cJSON *pc = cJSON_GetObjectItemCaseSensitive(profile, "pluginConfig");
	if (!pc && create)
		pc = cJSON_AddArrayToObject(profile, "pluginConfig");
	for (cJSON *e = pc ? pc->child : NULL; e; e = e->next)
		if (!strcmp(kube_obj_get_string(e, "name") ? kube_obj_get_string(e, "name") : "", name))
			return e;
	if (!create || !pc)
		return NULL;
	cJSON *e = cJSON_CreateObject();
	if (!e || !cJSON_AddStringToObject(e, "name", name) || !cJSON_AddObjectToObject(e, "args") ||
	    !cJSON_AddItemToArray(pc, e)) {
		cJSON_Delete(e);
		return NULL;
	}
	return e;
}

/* A score plugin of the old resource trio enabled in a v1beta3/v1 file (upstream refused those
 * names there; many published configs still have them): NodeResourcesFit with that
 * scoringStrategy. Returns true when entry was renamed in place. */
static bool strategy_entry(cJSON *profile, cJSON *entry, const char *point, int pi, bool *done, struct sk_errors *notes)
{
	const char *n = kube_obj_get_string(entry, "name");
	const char *type = strategy_of(n);
	if (!type)
		return false;
	if (*done) {
		sk_errors_addf(notes, "profiles[%d].plugins.%s: plugin %s: not carried over: NodeResourcesFit scores with one "
				      "strategy", pi, point, n);
		return false;
	}
	*done = true;
	cJSON *old = plugin_config_entry(profile, n, false);
	cJSON *fit = plugin_config_entry(profile, "NodeResourcesFit", true);
	cJSON *args = fit ? cJSON_GetObjectItemCaseSensitive(fit, "args") : NULL;
	if (!args)
		return false;
	cJSON *ss = cJSON_CreateObject();
	cJSON_AddStringToObject(ss, "type", type);
	const cJSON *oa = old ? cJSON_GetObjectItemCaseSensitive(old, "args") : NULL;
	const cJSON *res = oa ? cJSON_GetObjectItemCaseSensitive(oa, "resources") : NULL;
	if (res && cJSON_GetArraySize(res) > 0)
		cJSON_AddItemToObject(ss, "resources", cJSON_Duplicate(res, 1));
	if (!strcmp(type, "RequestedToCapacityRatio")) {
		const cJSON *shape = oa ? cJSON_GetObjectItemCaseSensitive(oa, "shape") : NULL;
		cJSON *r = cJSON_AddObjectToObject(ss, "requestedToCapacityRatio");
		cJSON_AddItemToObject(r, "shape", shape ? cJSON_Duplicate(shape, 1) : cJSON_CreateArray());
	}
	if (cJSON_GetObjectItemCaseSensitive(args, "scoringStrategy"))
		cJSON_ReplaceItemInObjectCaseSensitive(args, "scoringStrategy", ss);
	else
		cJSON_AddItemToObject(args, "scoringStrategy", ss);
	sk_errors_addf(notes, "profiles[%d].plugins.%s: plugin %s is not in this API version; carried over as "
			      "NodeResourcesFit with scoringStrategy.type %s", pi, point, n, type);
	cJSON_ReplaceItemInObjectCaseSensitive(entry, "name", cJSON_CreateString("NodeResourcesFit")); /* frees n */
	return true;
}

/* A v1beta3 (or v1) profile: removed plugins dropped or renamed, old args type meta stripped. */
static cJSON *v1beta3_profile(const cJSON *user, int pi, struct sk_errors *notes)
{
	cJSON *p = cJSON_Duplicate(user, 1);
	cJSON *plugins = p ? cJSON_GetObjectItemCaseSensitive(p, "plugins") : NULL;
	bool strategy_done = false;
	for (cJSON *set = plugins ? plugins->child : NULL; set; set = set->next) {
		for (int dis = 0; dis < 2; dis++) {
			cJSON *l = cJSON_GetObjectItemCaseSensitive(set, dis ? "disabled" : "enabled");
			for (cJSON *e = l ? l->child : NULL, *next; e; e = next) {
				next = e->next;
				const char *n = kube_obj_get_string(e, "name");
				if (!in_list(n, removed_v1beta3))
					continue;
				if (!dis && (!strcmp(set->string, "score") || !strcmp(set->string, "multiPoint")) &&
				    strategy_entry(p, e, set->string, pi, &strategy_done, notes))
					continue;
				if (!dis && n && !strcmp(n, "SelectorSpread")) {
					cJSON_ReplaceItemInObjectCaseSensitive(e, "name", cJSON_CreateString("PodTopologySpread"));
					sk_errors_addf(notes, "profiles[%d].plugins.%s: SelectorSpread replaced by PodTopologySpread "
							      "(system default constraints)", pi, set->string);
					continue;
				}
				if (!dis)
					sk_errors_addf(notes, "profiles[%d].plugins.%s: plugin %s: not carried over: not in the v1 API",
						       pi, set->string, n);
				cJSON_Delete(cJSON_DetachItemViaPointer(l, e));
			}
		}
	}
	cJSON *pc = p ? cJSON_GetObjectItemCaseSensitive(p, "pluginConfig") : NULL;
	for (cJSON *e = pc ? pc->child : NULL, *next; e; e = next) {
		next = e->next;
		const char *n = kube_obj_get_string(e, "name");
		if (strategy_of(n) && strategy_done) {
			cJSON_Delete(cJSON_DetachItemViaPointer(pc, e));
			continue;
		}
		if (in_list(n, removed_v1beta3)) {
			sk_errors_addf(notes, "profiles[%d].pluginConfig %s: not carried over: the plugin is not in the v1 API", pi, n);
			cJSON_Delete(cJSON_DetachItemViaPointer(pc, e));
			continue;
		}
		cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
		if (cJSON_IsObject(a)) {
			cJSON_DeleteItemFromObjectCaseSensitive(a, "apiVersion");
			cJSON_DeleteItemFromObjectCaseSensitive(a, "kind");
		}
	}
	return p;
}

/* algorithmSource (v1beta1): the provider's profile, or (policy) the Policy's. */
static int algorithm_source(const cJSON *old, const cJSON *policy, const cJSON **src_policy, const char **provider,
			    struct sk_errors *notes, struct sk_errors *errs)
{
	const cJSON *as = cJSON_GetObjectItemCaseSensitive(old, "algorithmSource");
	*provider = "DefaultProvider";
	*src_policy = NULL;
	if (!as || cJSON_IsNull(as)) {
		if (policy)
			*src_policy = policy;
		return 0;
	}
	static const char *const as_fields[] = { "provider", "policy", NULL };
	if (sk_json_check_object(as, "algorithmSource", as_fields, false, errs) < 0)
		return -1;
	const char *prov = kube_obj_get_string(as, "provider");
	const cJSON *pol = cJSON_GetObjectItemCaseSensitive(as, "policy");
	if (prov && pol && !cJSON_IsNull(pol)) {
		sk_errors_addf(errs, "algorithmSource: only one of provider and policy may be set");
		return -1;
	}
	if (prov) {
		if (!in_list(prov, sk_provider_names)) {
			sk_err_unsupported(errs, "algorithmSource.provider", prov, sk_provider_names);
			return -1;
		}
		*provider = prov;
	}
	if (pol && !cJSON_IsNull(pol)) {
		if (!policy) {
			const char *cm = kube_obj_get_string(pol, "configMap.name");
			const char *ns = kube_obj_get_string(pol, "configMap.namespace");
			if (cm)
				sk_errors_addf(errs, "algorithmSource.policy.configMap: the Policy is the data key \"policy.cfg\" "
						     "of ConfigMap %s/%s; save it to a file and pass --policy FILE",
					       ns ? ns : "kube-system", cm);
			else
				sk_errors_addf(errs, "algorithmSource.policy: pass the Policy file with --policy FILE");
			return -1;
		}
		*src_policy = policy;
	}
	if (policy && !*src_policy)
		*src_policy = policy;
	(void)notes;
	return 0;
}

static void convert_top_fields(const cJSON *old, cJSON *out, const char *av, struct sk_errors *notes,
			       struct sk_errors *errs)
{
	for (const cJSON *c = old->child; c; c = c->next) {
		const char *k = c->string;
		if (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "profiles") ||
		    (!strcmp(k, "algorithmSource") && !strcmp(av, "v1beta1")))
			continue;
		if (in_list(k, kept_fields)) {
			cJSON *d = cJSON_Duplicate(c, 1);
			if (d)
				cJSON_AddItemToObject(out, k, d);
			continue;
		}
		if ((!strcmp(k, "healthzBindAddress") || !strcmp(k, "metricsBindAddress")) &&
		    (!strcmp(av, "v1beta1") || !strcmp(av, "v1beta2"))) {
			sk_errors_addf(notes, "%s: not carried over: v1 serves /healthz and /metrics on the secure port "
					      "(--secure-port, default 10259)", k);
			continue;
		}
		sk_errors_addf(errs, "unknown field \"%s\" (kubescheduler.config.k8s.io/%s)", k, av);
	}
	cJSON *le = cJSON_GetObjectItemCaseSensitive(out, "leaderElection");
	const char *lock = le ? kube_obj_get_string(le, "resourceLock") : NULL;
	if (lock && strcmp(lock, "leases")) {
		sk_errors_addf(notes, "leaderElection.resourceLock: \"%s\" became \"leases\" (v1 supports only leases; the "
				      "old and new scheduler do not see each other's lock during a rollout)", lock);
		cJSON_ReplaceItemInObjectCaseSensitive(le, "resourceLock", cJSON_CreateString("leases"));
	}
}

static bool profile_customized(const cJSON *p)
{
	const cJSON *pl = cJSON_GetObjectItemCaseSensitive(p, "plugins");
	const cJSON *pc = cJSON_GetObjectItemCaseSensitive(p, "pluginConfig");
	return (pl && !cJSON_IsNull(pl) && cJSON_GetArraySize(pl) > 0) || (pc && cJSON_GetArraySize(pc) > 0);
}

static int convert_profiles(const cJSON *old, const char *av, const cJSON *policy, cJSON *out, struct sk_errors *notes,
			    struct sk_errors *errs)
{
	const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(old, "profiles");
	if (profiles && !cJSON_IsNull(profiles) && !cJSON_IsArray(profiles)) {
		sk_errors_addf(errs, "profiles: Invalid type: expected array");
		return -1;
	}
	int n = profiles ? cJSON_GetArraySize(profiles) : 0;
	const cJSON *src_policy = policy;
	const char *provider = "DefaultProvider";
	if (!strcmp(av, "v1beta1") && algorithm_source(old, policy, &src_policy, &provider, notes, errs) < 0)
		return -1;
	if (src_policy) {
		for (int i = 0; i < n; i++)
			if (profile_customized(cJSON_GetArrayItem(profiles, i)) || n > 1) {
				sk_errors_addf(errs, "profiles and policy config both set: the Policy makes the one profile "
						     "\"default-scheduler\"");
				return -1;
			}
		return sk_policy_merge(out, src_policy, "policy", notes, errs);
	}
	cJSON *arr = cJSON_AddArrayToObject(out, "profiles");
	if (!arr)
		return -1;
	bool old_version = !strcmp(av, "v1beta1") || !strcmp(av, "v1beta2");
	cJSON *base = !old_version ? NULL : !strcmp(av, "v1beta1") ? sk_provider_profile(provider) : v1beta2_defaults();
	if (old_version && !base)
		return -1;
	cJSON *empty = cJSON_CreateObject();
	int rc = empty ? 0 : -1;
	for (int i = 0; rc == 0 && i < (n ? n : 1); i++) {
		const cJSON *p = n ? cJSON_GetArrayItem(profiles, i) : empty;
		cJSON *v1 = NULL;
		if (old_version) {
			cJSON *m = merged_profile(p, base, i, errs);
			struct sk_errors pn = { 0 };
			v1 = m ? sk_legacy_profile_to_v1(m, &pn, errs) : NULL;
			for (int k = 0; k < pn.n; k++)
				sk_errors_addf(notes, "profiles[%d]: %s", i, pn.msgs[k]);
			sk_errors_free(&pn);
			cJSON_Delete(m);
		} else {
			v1 = v1beta3_profile(p, i, notes);
		}
		if (!v1 || !cJSON_AddItemToArray(arr, v1)) {
			cJSON_Delete(v1);
			rc = -1;
		}
	}
	cJSON_Delete(empty);
	cJSON_Delete(base);
	return rc;
}

cJSON *sk_convert_config(const cJSON *old, const cJSON *policy, struct sk_errors *notes, struct sk_errors *errs)
{
	int before = errs->n;
	if (!cJSON_IsObject(old)) {
		sk_errors_addf(errs, "the configuration is not an object");
		return NULL;
	}
	const char *av = kube_obj_get_string(old, "apiVersion"), *kind = kube_obj_get_string(old, "kind");
	static const char *const versions[] = { "kubescheduler.config.k8s.io/v1beta1", "kubescheduler.config.k8s.io/v1beta2",
						"kubescheduler.config.k8s.io/v1beta3", V1, NULL };
	if (!kind || strcmp(kind, "KubeSchedulerConfiguration"))
		sk_errors_addf(errs, "kind: Unsupported value: \"%s\": supported values: \"KubeSchedulerConfiguration\"",
			       kind ? kind : "");
	if (!in_list(av, versions)) {
		sk_err_unsupported(errs, "apiVersion", av ? av : "", versions);
		return NULL;
	}
	if (errs->n != before)
		return NULL;
	const char *ver = strrchr(av, '/') + 1;
	cJSON *out = cJSON_CreateObject();
	if (!out || !cJSON_AddStringToObject(out, "apiVersion", V1) ||
	    !cJSON_AddStringToObject(out, "kind", "KubeSchedulerConfiguration")) {
		cJSON_Delete(out);
		sk_errors_addf(errs, "out of memory");
		return NULL;
	}
	convert_top_fields(old, out, ver, notes, errs);
	if (errs->n == before && convert_profiles(old, ver, policy, out, notes, errs) < 0 && errs->n == before)
		sk_errors_addf(errs, "out of memory");
	if (errs->n != before) {
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}

/* ---------- the subcommand ---------- */

static void convert_usage(FILE *f)
{
	fprintf(f, "Usage: schedkit-scheduler convert --config OLD.yaml [--policy POLICY.json] [--output NEW.yaml]\n"
		   "  --config FILE   a KubeSchedulerConfiguration v1beta1, v1beta2, v1beta3 (or v1)\n"
		   "  --policy FILE   a legacy Policy (kind Policy, v1): the one profile of the output; read from\n"
		   "                  algorithmSource.policy.file.path when that is set and this flag is not\n"
		   "  --output FILE   where the v1 YAML goes (default: standard output)\n"
		   "Everything not carried over exactly is listed as '# note:' lines at the top of the output\n"
		   "and on standard error; so is what --validate would refuse in the result (a 'warning:').\n");
}

static cJSON *read_doc(const char *path, FILE *errout)
{
	size_t len;
	int e;
	char *buf = kube_read_file(path, 0, &len, &e);
	if (!buf) {
		fprintf(errout, "error: cannot read \"%s\": %s\n", path, strerror(e));
		return NULL;
	}
	char *perr = NULL;
	cJSON *doc = kube_yaml_parse_one(buf, len, &perr);
	free(buf);
	if (!doc)
		fprintf(errout, "error: %s: %s\n", path, perr ? perr : "cannot parse");
	free(perr);
	return doc;
}

static int write_output(const char *out_path, FILE *out, const struct sk_errors *notes, const char *src, const cJSON *doc,
			FILE *errout)
{
	char *yaml = kube_yaml_emit(doc);
	if (!yaml) {
		fprintf(errout, "error: out of memory\n");
		return 1;
	}
	FILE *f = out_path ? fopen(out_path, "w") : out;
	if (!f) {
		fprintf(errout, "error: cannot write \"%s\": %s\n", out_path, strerror(errno));
		free(yaml);
		return 1;
	}
	fprintf(f, "# Converted by schedkit-scheduler convert from %s.\n", src);
	for (int i = 0; i < notes->n; i++)
		fprintf(f, "# note: %s\n", notes->msgs[i]);
	fputs(yaml, f);
	if (*yaml && yaml[strlen(yaml) - 1] != '\n')
		fputc('\n', f);
	free(yaml);
	int rc = 0;
	if (out_path && fclose(f) != 0) {
		fprintf(errout, "error: cannot write \"%s\": %s\n", out_path, strerror(errno));
		rc = 1;
	}
	return rc;
}

/* What this build's loader says of the result (plugins of --plugin-dir are unknown here, so an
 * out-of-tree plugin shows up too): warnings, the file is written either way. */
static void check_loads(const cJSON *doc, FILE *errout)
{
	char *text = kube_json_print(doc);
	if (!text)
		return;
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load(text, strlen(text), &errs);
	for (int i = 0; !cfg && i < errs.n; i++)
		fprintf(errout, "warning: schedkit-scheduler --validate (without --plugin-dir) will report: %s\n",
			errs.msgs[i] ? errs.msgs[i] : "out of memory");
	sk_config_free(cfg);
	sk_errors_free(&errs);
	free(text);
}

int sk_convert_main(int argc, char **argv, FILE *out, FILE *errout)
{
	const char *config_path = NULL, *policy_path = NULL, *out_path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], **dst = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			convert_usage(out);
			return 0;
		}
		static const char *const names[] = { "--config", "--policy", "--output" };
		const char **dsts[] = { &config_path, &policy_path, &out_path };
		const char *v = NULL;
		for (int k = 0; k < 3 && !dst; k++) {
			size_t l = strlen(names[k]);
			if (!strcmp(a, names[k])) {
				dst = dsts[k];
				v = i + 1 < argc ? argv[++i] : NULL;
			} else if (!strncmp(a, names[k], l) && a[l] == '=') {
				dst = dsts[k];
				v = a + l + 1;
			}
		}
		if (!dst) {
			fprintf(errout, "error: unknown flag: %s\n", a);
			convert_usage(errout);
			return 2;
		}
		if (!v || !*v) {
			fprintf(errout, "error: flag needs an argument: %s\n", a);
			return 2;
		}
		*dst = v;
	}
	if (!config_path && !policy_path) {
		fprintf(errout, "error: --config or --policy is required\n");
		convert_usage(errout);
		return 2;
	}
	static const char minimal[] = "{\"apiVersion\":\"" V1 "\",\"kind\":\"KubeSchedulerConfiguration\"}";
	char *perr = NULL;
	cJSON *old = config_path ? read_doc(config_path, errout) : kube_json_parse(minimal, sizeof minimal - 1, &perr);
	free(perr);
	if (!old)
		return 1;
	const char *file_policy = kube_obj_get_string(old, "algorithmSource.policy.file.path");
	if (!policy_path && file_policy)
		policy_path = file_policy;
	cJSON *policy = policy_path ? read_doc(policy_path, errout) : NULL;
	if (policy_path && !policy) {
		cJSON_Delete(old);
		return 1;
	}
	struct sk_errors notes = { 0 }, errs = { 0 };
	cJSON *doc = sk_convert_config(old, policy, &notes, &errs);
	int rc = 1;
	if (doc) {
		char src[1024];
		snprintf(src, sizeof src, "%s%s%s%s", config_path ? config_path : "", config_path && policy_path ? " and " : "",
			 policy_path ? "Policy " : "", policy_path ? policy_path : "");
		rc = write_output(out_path, out, &notes, src, doc, errout);
		for (int i = 0; i < notes.n; i++)
			fprintf(errout, "note: %s\n", notes.msgs[i]);
		check_loads(doc, errout);
	} else {
		for (int i = 0; i < errs.n; i++)
			fprintf(errout, "error: %s\n", errs.msgs[i] ? errs.msgs[i] : "out of memory");
	}
	cJSON_Delete(doc);
	cJSON_Delete(policy);
	cJSON_Delete(old);
	sk_errors_free(&notes);
	sk_errors_free(&errs);
	return rc;
}
