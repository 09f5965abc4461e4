/* Args of the upstream default plugins that are not built yet (sk_unavailable_default_plugins):
 * each gets a stub descriptor with only a name and an args decoder, so configs naming them are
 * accepted, defaulted and validated exactly as upstream, and shown in sk_config_to_json. The
 * decoded args are kept as defaulted JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "scheduler/config.h"

static void json_args_free(void *p) { cJSON_Delete(p); }
static cJSON *json_args_encode(const void *p) { return cJSON_Duplicate(p, 1); }

/* Starts a defaulted copy: {"kind", "apiVersion"} then the given fields in order. NULL on OOM. */
static cJSON *start_copy(const cJSON *json, const char *kind)
{
	cJSON *o = sk_args_json_new(kind);
	if (!o || !json || !cJSON_IsObject(json))
		return o;
	for (const cJSON *c = json->child; c; c = c->next) {
		if (!strcmp(c->string, "kind") || !strcmp(c->string, "apiVersion") || cJSON_IsNull(c))
			continue;
		cJSON *d = cJSON_Duplicate(c, 1);
		if (!d || !cJSON_AddItemToObject(o, c->string, d)) {
			cJSON_Delete(d);
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

static int set_int(cJSON *o, const char *field, int64_t v)
{
	cJSON *n = kube_json_create_int64(v);
	if (!n)
		return -1;
	if (cJSON_GetObjectItemCaseSensitive(o, field))
		return cJSON_ReplaceItemInObjectCaseSensitive(o, field, n) ? 0 : -1;
	return cJSON_AddItemToObject(o, field, n) ? 0 : -1;
}

static char *child(const char *path, const char *f) { return sk_path_child(path, f); }

/* ---------- DefaultPreemptionArgs ---------- */
static int default_preemption_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "minCandidateNodesPercentage", "minCandidateNodesAbsolute", NULL };
	int64_t pct = 10, abs_ = 100;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "DefaultPreemptionArgs", path, e) < 0 ||
	    sk_json_int(json, "minCandidateNodesPercentage", path, INT32_MIN, INT32_MAX, &pct, NULL, e) < 0 ||
	    sk_json_int(json, "minCandidateNodesAbsolute", path, INT32_MIN, INT32_MAX, &abs_, NULL, e) < 0)
		return -1;
	int rc = 0;
	char *pp = child(path, "minCandidateNodesPercentage"), *ap = child(path, "minCandidateNodesAbsolute");
	if (pct < 0 || pct > 100) {
		sk_err_invalid_int(e, pp, pct, "not in valid range [0, 100]");
		rc = -1;
	}
	if (abs_ < 0) {
		sk_err_invalid_int(e, ap, abs_, "not in valid range [0, inf)");
		rc = -1;
	}
	if (pct == 0 && abs_ == 0) {
		sk_err_invalid_int(e, pp, pct, "cannot be zero at the same time as minCandidateNodesAbsolute");
		sk_err_invalid_int(e, ap, abs_, "cannot be zero at the same time as minCandidateNodesPercentage");
		rc = -1;
	}
	free(pp);
	free(ap);
	if (rc < 0)
		return -1;
	cJSON *o = sk_args_json_new("DefaultPreemptionArgs");
	if (!o || set_int(o, "minCandidateNodesPercentage", pct) < 0 || set_int(o, "minCandidateNodesAbsolute", abs_) < 0) {
		cJSON_Delete(o);
		return -1;
	}
	*out = o;
	return 0;
}

/* ---------- InterPodAffinityArgs ---------- */
static int inter_pod_affinity_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", NULL };
	int64_t w = 1;
	bool ignore = false;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "InterPodAffinityArgs", path, e) < 0 ||
	    sk_json_int(json, "hardPodAffinityWeight", path, INT32_MIN, INT32_MAX, &w, NULL, e) < 0 ||
	    sk_json_bool(json, "ignorePreferredTermsOfExistingPods", path, &ignore, NULL, e) < 0)
		return -1;
	if (w < 0 || w > 100) {
		char *p = child(path, "hardPodAffinityWeight");
		sk_err_invalid_int(e, p, w, "not in valid range [0, 100]");
		free(p);
		return -1;
	}
	cJSON *o = sk_args_json_new("InterPodAffinityArgs");
	if (!o || set_int(o, "hardPodAffinityWeight", w) < 0 ||
	    !cJSON_AddBoolToObject(o, "ignorePreferredTermsOfExistingPods", ignore)) {
		cJSON_Delete(o);
		return -1;
	}
	*out = o;
	return 0;
}

/* ---------- PodTopologySpreadArgs ---------- */
static int validate_constraint(const cJSON *c, const char *p, const cJSON *arr, int idx, struct sk_errors *e)
{
	static const char *const fields[] = { "maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector",
					      "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys",
					      NULL };
	int64_t skew = 0, min_domains = 0;
	char *key = NULL, *when = NULL;
	int rc = 0;
	if (sk_json_check_object(c, p, fields, false, e) < 0 || !cJSON_IsObject(c) ||
	    sk_json_int(c, "maxSkew", p, INT32_MIN, INT32_MAX, &skew, NULL, e) < 0 ||
	    sk_json_int(c, "minDomains", p, INT32_MIN, INT32_MAX, &min_domains, NULL, e) < 0 ||
	    sk_json_string(c, "topologyKey", p, &key, NULL, e) < 0 ||
	    sk_json_string(c, "whenUnsatisfiable", p, &when, NULL, e) < 0) {
		if (cJSON_IsNull(c))
			sk_errors_addf(e, "%s: Invalid type: expected object, got null", p);
		free(key);
		free(when);
		return -1;
	}
	char *f;
	if (skew <= 0) {
		f = child(p, "maxSkew");
		sk_err_invalid_int(e, f, skew, "not in valid range (0, inf)");
		free(f);
		rc = -1;
	}
	f = child(p, "topologyKey");
	if (!key || !*key) {
		sk_err_required(e, f, "can not be empty");
		rc = -1;
	} else if (sk_validate_label_name(e, f, key) < 0) {
		rc = -1;
	}
	free(f);
	f = child(p, "whenUnsatisfiable");
	if (!when || !*when) {
		sk_err_required(e, f, "can not be empty");
		rc = -1;
	} else if (strcmp(when, "DoNotSchedule") && strcmp(when, "ScheduleAnyway")) {
		static const char *const sup[] = { "DoNotSchedule", "ScheduleAnyway", NULL };
		sk_err_unsupported(e, f, when, sup);
		rc = -1;
	}
	free(f);
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(c, "labelSelector");
	if (sel && !cJSON_IsNull(sel)) {
		f = child(p, "labelSelector");
		sk_err_forbidden(e, f, "constraint must not define a selector, as they deduced for each pod");
		free(f);
		rc = -1;
	}
	/* validateConstraintNotRepeat: same (topologyKey, whenUnsatisfiable) as an earlier entry */
	int i = 0;
	for (const cJSON *o = arr->child; o && i < idx; o = o->next, i++) {
		const cJSON *ok = cJSON_GetObjectItemCaseSensitive(o, "topologyKey");
		const cJSON *ow = cJSON_GetObjectItemCaseSensitive(o, "whenUnsatisfiable");
		const char *oks = cJSON_IsString(ok) ? ok->valuestring : "", *ows = cJSON_IsString(ow) ? ow->valuestring : "";
		if (!strcmp(oks, key ? key : "") && !strcmp(ows, when ? when : "")) {
			char *v = NULL;
			if (asprintf(&v, "{%s, %s}", key ? key : "", when ? when : "") >= 0) {
				sk_err_duplicate(e, p, v);
				free(v);
			}
			rc = -1;
			break;
		}
	}
	free(key);
	free(when);
	return rc;
}

static int pod_topology_spread_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "defaultConstraints", "defaultingType", NULL };
	char *dtype = NULL;
	int rc = 0;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "PodTopologySpreadArgs", path, e) < 0 ||
	    sk_json_string(json, "defaultingType", path, &dtype, NULL, e) < 0) {
		free(dtype);
		return -1;
	}
	if (!dtype || !*dtype) {
		free(dtype);
		if (!(dtype = strdup("System")))
			return -1;
	}
	const cJSON *dc = json ? cJSON_GetObjectItemCaseSensitive(json, "defaultConstraints") : NULL;
	if (dc && cJSON_IsNull(dc))
		dc = NULL;
	char *dcp = child(path, "defaultConstraints"), *dtp = child(path, "defaultingType");
	if (dc && !cJSON_IsArray(dc)) {
		sk_errors_addf(e, "%s: Invalid type: expected array", dcp);
		rc = -1;
	}
	int nconstraints = dc && cJSON_IsArray(dc) ? cJSON_GetArraySize(dc) : 0;
	if (strcmp(dtype, "System") && strcmp(dtype, "List")) {
		static const char *const sup[] = { "System", "List", NULL };
		sk_err_unsupported(e, dtp, dtype, sup);
		rc = -1;
	} else if (!strcmp(dtype, "System") && nconstraints > 0) {
		sk_err_invalid_str(e, dtp, dtype, "when .defaultConstraints are not empty");
		rc = -1;
	}
	int i = 0;
	for (const cJSON *c = (dc && cJSON_IsArray(dc)) ? dc->child : NULL; c; c = c->next, i++) {
		char *p = sk_path_index(dcp, i);
		if (!p || validate_constraint(c, p, dc, i, e) < 0)
			rc = -1;
		free(p);
	}
	free(dcp);
	free(dtp);
	cJSON *o = NULL;
	if (rc == 0) {
		o = start_copy(json, "PodTopologySpreadArgs");
		if (o && nconstraints == 0)
			cJSON_DeleteItemFromObjectCaseSensitive(o, "defaultConstraints");
		if (o) {
			cJSON_DeleteItemFromObjectCaseSensitive(o, "defaultingType");
			if (!cJSON_AddStringToObject(o, "defaultingType", dtype)) {
				cJSON_Delete(o);
				o = NULL;
			}
		}
		if (!o)
			rc = -1;
	}
	free(dtype);
	if (rc < 0)
		return -1;
	*out = o;
	return 0;
}

/* ---------- VolumeBindingArgs ---------- */
static int volume_binding_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "bindTimeoutSeconds", "shape", NULL };
	int64_t timeout = 600;
	int rc = 0;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "VolumeBindingArgs", path, e) < 0 ||
	    sk_json_int(json, "bindTimeoutSeconds", path, INT64_MIN, INT64_MAX, &timeout, NULL, e) < 0)
		return -1;
	if (timeout < 0) {
		char *p = child(path, "bindTimeoutSeconds");
		sk_err_invalid_int(e, p, timeout, "invalid BindTimeoutSeconds, should not be a negative value");
		free(p);
		rc = -1;
	}
	/* StorageCapacityScoring is off by default in v1.34: a shape is an error. */
	const cJSON *shape = json ? cJSON_GetObjectItemCaseSensitive(json, "shape") : NULL;
	if (shape && !cJSON_IsNull(shape)) {
		char *p = child(path, "shape"), *printed = kube_json_print(shape);
		sk_err_invalid_raw(e, p, printed ? printed : "[...]",
				   "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring");
		free(printed);
		free(p);
		rc = -1;
	}
	if (rc < 0)
		return -1;
	cJSON *o = sk_args_json_new("VolumeBindingArgs");
	if (!o || set_int(o, "bindTimeoutSeconds", timeout) < 0) {
		cJSON_Delete(o);
		return -1;
	}
	*out = o;
	return 0;
}

/* ---------- DynamicResourcesArgs (v1.34: DRASchedulerFilterTimeout beta, on) ---------- */
static int dynamic_resources_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "filterTimeout", "bindingTimeout", NULL };
	char *ft = NULL;
	int64_t ms = 10000;
	int rc = 0;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "DynamicResourcesArgs", path, e) < 0 ||
	    sk_json_string(json, "filterTimeout", path, &ft, NULL, e) < 0) {
		free(ft);
		return -1;
	}
	char *fp = child(path, "filterTimeout");
	if (ft && sk_duration_parse_ms(ft, &ms) < 0) {
		sk_err_invalid_str(e, fp, ft, "invalid duration");
		rc = -1;
	} else if (ms < 0) {
		sk_err_invalid_str(e, fp, ft, "must be zero or positive");
		rc = -1;
	}
	free(fp);
	const cJSON *bt = json ? cJSON_GetObjectItemCaseSensitive(json, "bindingTimeout") : NULL;
	if (bt && !cJSON_IsNull(bt)) {
		char *bp = child(path, "bindingTimeout");
		sk_err_forbidden(e, bp, "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled");
		free(bp);
		rc = -1;
	}
	free(ft);
	if (rc < 0)
		return -1;
	char buf[48];
	sk_duration_format_ms(ms, buf);
	cJSON *o = sk_args_json_new("DynamicResourcesArgs");
	if (!o || !cJSON_AddStringToObject(o, "filterTimeout", buf)) {
		cJSON_Delete(o);
		return -1;
	}
	*out = o;
	return 0;
}

#define STUB(var, plugin_name, kind, decode)                                                                           \
	static const struct sk_plugin_desc var = {                                                                      \
		.abi_version = SK_PLUGIN_ABI_VERSION,                                                                  \
		.name = plugin_name,                                                                                   \
		.args_kind = kind,                                                                                     \
		.args_decode = decode,                                                                                 \
		.args_encode = (kind) ? json_args_encode : NULL,                                                       \
		.args_free = (kind) ? json_args_free : NULL,                                                           \
	}

STUB(stub_volume_restrictions, "VolumeRestrictions", NULL, NULL);
STUB(stub_node_volume_limits, "NodeVolumeLimits", NULL, NULL);
STUB(stub_volume_binding, "VolumeBinding", "VolumeBindingArgs", volume_binding_decode);
STUB(stub_volume_zone, "VolumeZone", NULL, NULL);
STUB(stub_pod_topology_spread, "PodTopologySpread", "PodTopologySpreadArgs", pod_topology_spread_decode);
STUB(stub_inter_pod_affinity, "InterPodAffinity", "InterPodAffinityArgs", inter_pod_affinity_decode);
STUB(stub_dynamic_resources, "DynamicResources", "DynamicResourcesArgs", dynamic_resources_decode);
STUB(stub_default_preemption, "DefaultPreemption", "DefaultPreemptionArgs", default_preemption_decode);

static const struct sk_plugin_desc *const stubs[] = {
	&stub_volume_restrictions, &stub_node_volume_limits, &stub_volume_binding,     &stub_volume_zone,
	&stub_pod_topology_spread, &stub_inter_pod_affinity, &stub_dynamic_resources, &stub_default_preemption,
	NULL,
};

const struct sk_plugin_desc *sk_unavailable_plugin_desc(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; stubs[i]; i++)
		if (!strcmp(stubs[i]->name, name))
			return sk_registry_lookup(name) ? NULL : stubs[i]; /* a real build wins */
	return NULL;
}
